#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void linear(const float* restrict x, const float* restrict w, float* restrict out) {
  for (int64_t i = 0; i < 1; i++) {
    for (int64_t j = 0; j < 200; j++) {
      for (int64_t r = 0; r < 3072; r++) {
        /* block out */
        if (r == 0) {
          out[i * 200 + j] = 0.0f;
        }
        out[i * 200 + j] = out[i * 200 + j] + x[i * 3072 + r] * w[j * 3072 + r];
      }
    }
  }
}
