#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline float ds_max(float a, float b) { return b > a ? b : a; }

void relu(const float* restrict x, float* restrict out) {
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 8; j++) {
      /* block out */
      out[i * 8 + j] = ds_max(x[i * 8 + j], 0.0f);
    }
  }
}
