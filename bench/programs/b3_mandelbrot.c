/* B3 twin of b3_mandelbrot.ds: Mandelbrot escape counts on a W x H grid over
 * [-2, 1] x [-1, 1], at most MAX_ITER iterations per point, summed: 13428357 for
 * 600 x 400 and 200 iterations.
 * The C baseline of the JIT's speed target: build with `clang -O2`. The operations and
 * their order are the .ds program's, so the doubles (and the sum) are bit-for-bit the same;
 * FP_CONTRACT OFF keeps a compiler targeting FMA hardware from fusing a*b+c (gcc ignores the
 * pragma: do not build this twin with gcc -march=native).
 * Usage: ./b3_mandelbrot [W H MAX_ITER]   (default 600 400 200) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static int64_t mandelbrot(int64_t w, int64_t h, int64_t max_iter) {
  int64_t total = 0;
  for (int64_t py = 0; py < h; py++) {
    double cy = -1.0 + 2.0 * (double)py / (double)h;
    for (int64_t px = 0; px < w; px++) {
      double cx = -2.0 + 3.0 * (double)px / (double)w;
      double zx = 0.0;
      double zy = 0.0;
      int64_t it = 0;
      while (it < max_iter && zx * zx + zy * zy <= 4.0) {
        double t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        it += 1;
      }
      total += it;
    }
  }
  return total;
}

int main(int argc, char** argv) {
  int64_t w = argc > 1 ? strtoll(argv[1], NULL, 10) : 600;
  int64_t h = argc > 2 ? strtoll(argv[2], NULL, 10) : 400;
  int64_t max_iter = argc > 3 ? strtoll(argv[3], NULL, 10) : 200;
  printf("%" PRId64 "\n", mandelbrot(w, h, max_iter));
  return 0;
}
