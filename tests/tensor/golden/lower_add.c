#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void add(const float* restrict a, const float* restrict b, float* restrict c) {
  for (int64_t i = 0; i < 128; i++) {
    /* block c */
    c[i] = a[i] + b[i];
  }
}
