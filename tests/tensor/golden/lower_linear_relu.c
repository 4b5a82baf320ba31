#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline float ds_max(float a, float b) { return b > a ? b : a; }

void linear_relu(const float* restrict x, const float* restrict w, float* restrict out) {
  float* restrict out_acc = calloc(200, sizeof(float));  /* 1 x 200 */
  if (!out_acc) goto done;
  for (int64_t i = 0; i < 1; i++) {
    for (int64_t j = 0; j < 200; j++) {
      for (int64_t k = 0; k < 3072; k++) {
        /* block out_acc */
        if (k == 0) {
          out_acc[i * 200 + j] = 0.0f;
        }
        out_acc[i * 200 + j] = out_acc[i * 200 + j] + x[i * 3072 + k] * w[j * 3072 + k];
      }
      /* block out */
      out[i * 200 + j] = ds_max(out_acc[i * 200 + j], 0.0f);
    }
  }
done:
  free(out_acc);
}
