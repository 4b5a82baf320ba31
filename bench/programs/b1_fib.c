/* B1 twin of b1_fib.ds: recursive Fibonacci, fib(32) = 2178309.
 * The C baseline of the JIT's speed target: build with `clang -O2 -o b1_fib b1_fib.c`.
 * Usage: ./b1_fib [N]   (default 32) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t fib(int64_t n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 32;
  printf("%" PRId64 "\n", fib(n));
  return 0;
}
