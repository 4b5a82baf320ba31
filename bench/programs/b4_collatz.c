/* B4 twin of b4_collatz.ds: total Collatz steps (n -> n/2 if even, 3n+1 if odd, until 1)
 * for n in 1..1,000,000 inclusive: 131434424.
 * The C baseline of the JIT's speed target: build with `clang -O2`.
 * Usage: ./b4_collatz [N]   (default 1000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t collatz_total(int64_t limit) {
  int64_t total = 0;
  for (int64_t n = 1; n < limit + 1; n++) {
    int64_t m = n;
    while (m != 1) {
      if (m % 2 == 0) {
        m = m / 2;
      } else {
        m = 3 * m + 1;
      }
      total += 1;
    }
  }
  return total;
}

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 1000000;
  printf("%" PRId64 "\n", collatz_total(n));
  return 0;
}
