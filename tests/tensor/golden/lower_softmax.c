#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline float ds_max(float a, float b) { return b > a ? b : a; }

void softmax(const float* restrict x, float* restrict out) {
  float* restrict mx = calloc(4, sizeof(float));  /* 4 */
  float* restrict e = calloc(40, sizeof(float));  /* 4 x 10 */
  float* restrict s = calloc(4, sizeof(float));  /* 4 */
  if (!mx || !e || !s) goto done;
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 10; j++) {
      /* block mx */
      if (j == 0) {
        mx[i] = -INFINITY;
      }
      mx[i] = ds_max(mx[i], x[i * 10 + j]);
    }
  }
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 10; j++) {
      /* block e */
      e[i * 10 + j] = expf(x[i * 10 + j] - mx[i]);
    }
  }
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 10; j++) {
      /* block s */
      if (j == 0) {
        s[i] = 0.0f;
      }
      s[i] = s[i] + e[i * 10 + j];
    }
  }
  for (int64_t i = 0; i < 4; i++) {
    for (int64_t j = 0; j < 10; j++) {
      /* block out */
      out[i * 10 + j] = e[i * 10 + j] / s[i];
    }
  }
done:
  free(mx);
  free(e);
  free(s);
}
