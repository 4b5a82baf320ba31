#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline float ds_max(float a, float b) { return b > a ? b : a; }

void mm_relu(const float* restrict A, const float* restrict B, float* restrict C) {
  float* restrict Y = calloc(16384, sizeof(float));  /* 128 x 128 */
  if (!Y) goto done;
  for (int64_t i = 0; i < 128; i++) {
    for (int64_t j = 0; j < 128; j++) {
      for (int64_t k = 0; k < 128; k++) {
        /* block Y */
        if (k == 0) {
          Y[i * 128 + j] = 0.0f;
        }
        Y[i * 128 + j] = Y[i * 128 + j] + A[i * 128 + k] * B[k * 128 + j];
      }
    }
  }
  for (int64_t i = 0; i < 128; i++) {
    for (int64_t j = 0; j < 128; j++) {
      /* block C */
      C[i * 128 + j] = ds_max(Y[i * 128 + j], 0.0f);
    }
  }
done:
  free(Y);
}
