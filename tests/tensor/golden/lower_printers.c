#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void rowsum(const float* restrict A, float* restrict s) {
  #pragma omp parallel for
  for (int64_t i_0 = 0; i_0 < 2; i_0++) {
    #pragma omp simd
    for (int64_t i_1 = 0; i_1 < 4; i_1++) {
      {
        float acc[1] = {0};  /* local */
        for (int64_t k_0 = 0; k_0 < 4; k_0++) {
          /* #pragma unroll: fully unrolled */
          for (int64_t k_1 = 0; k_1 < 2; k_1++) {
            /* block acc */
            if (i_0 * 4 + i_1 < 7) {
              if (k_0 * 2 + k_1 == 0) {
                acc[0] = 0.0f;
              }
              acc[0] = acc[0] + A[(i_0 * 4 + i_1) * 8 + k_0 * 2 + k_1];
            }
          }
        }
        /* barrier(CLK_LOCAL_MEM_FENCE) */
        for (int64_t t = 0; t < 1; t++) {  /* OpenCL: t = get_local_id(0) */
          if (i_0 * 4 + i_1 < 7) {
            s[i_0 * 4 + i_1] = acc[0];
          }
        }
      }
    }
  }
}
