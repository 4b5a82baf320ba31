/* B2 twin of b2_sum_squares.ds: sum = (sum + i*i) % 1000003 for i in 0..100,000,000,
 * which gives 954980.
 * The C baseline of the JIT's speed target: build with `clang -O2`.
 * Usage: ./b2_sum_squares [N]   (default 100000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t sum_squares(int64_t n) {
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    sum = (sum + i * i) % 1000003;
  }
  return sum;
}

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 100000000;
  printf("%" PRId64 "\n", sum_squares(n));
  return 0;
}
