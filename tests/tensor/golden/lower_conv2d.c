#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void conv2d(const float* restrict x, const float* restrict k, float* restrict out) {
  for (int64_t i = 0; i < 6; i++) {
    for (int64_t j = 0; j < 6; j++) {
      for (int64_t p = 0; p < 3; p++) {
        for (int64_t q = 0; q < 3; q++) {
          /* block out */
          if (p == 0 && q == 0) {
            out[i * 6 + j] = 0.0f;
          }
          out[i * 6 + j] = out[i * 6 + j] + x[(i + p) * 8 + j + q] * k[p * 3 + q];
        }
      }
    }
  }
}
