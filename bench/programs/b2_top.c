/* B2 at top level (twin of b2_top.ds): C has no top-level statements, so this is main's loop.
 * Usage: ./b2_top [N]   (default 100000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 100000000;
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) total = (total + i * i) % 1000003;
  printf("%" PRId64 "\n", total);
  return 0;
}
