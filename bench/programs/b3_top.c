/* B3 at top level (twin of b3_top.ds): main's loops.
 * Usage: ./b3_top [W H MAX_ITER]   (default 600 400 200) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int64_t w = argc > 1 ? strtoll(argv[1], NULL, 10) : 600;
  int64_t h = argc > 2 ? strtoll(argv[2], NULL, 10) : 400;
  int64_t max_iter = argc > 3 ? strtoll(argv[3], NULL, 10) : 200;
  int64_t total = 0;
  for (int64_t py = 0; py < h; py++) {
    double cy = -1.0 + 2.0 * (double)py / (double)h;
    for (int64_t px = 0; px < w; px++) {
      double cx = -2.0 + 3.0 * (double)px / (double)w;
      double zx = 0.0, zy = 0.0;
      int64_t it = 0;
      while (it < max_iter && zx * zx + zy * zy <= 4.0) {
        double t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        it++;
      }
      total += it;
    }
  }
  printf("%" PRId64 "\n", total);
  return 0;
}
