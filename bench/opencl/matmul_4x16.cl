// The hand-written yardstick for Descent's scheduled OpenCL matmul (issue 6, "Speed"):
// C = A B for row-major f32 matrices, A is n x k, B is k x m, C is n x m.
//
// Each work-item computes one 4 x 16 block of C. Why that shape on a CPU device such as
// PoCL: the 4 accumulators are float16 vectors (one AVX-512 register each), so every step of
// r is one 16-float row of B loaded once and reused by 4 FMAs, each with one element of A
// broadcast to all lanes. Four independent FMA chains per work-item, and PoCL runs the
// work-items of a group as a loop around this body, so the registers stay this kernel's.
//
// Launch: global (m / 16, n / 4), any local size that divides it; n % 4 == 0, m % 16 == 0.
__kernel void matmul_4x16(__global const float* restrict A, __global const float* restrict B,
                          __global float* restrict C, int n, int k, int m) {
  const int j = get_global_id(0) * 16;  // first column of the block
  const int i = get_global_id(1) * 4;   // first row of the block
  if (i >= n || j >= m) return;
  float16 c0 = (float16)(0.0f), c1 = (float16)(0.0f), c2 = (float16)(0.0f), c3 = (float16)(0.0f);
  __global const float* a = A + i * k;
  for (int r = 0; r < k; ++r) {
    const float16 b = vload16(0, B + r * m + j);  // one row segment of B, reused 4 times
    c0 = fma((float16)(a[r]), b, c0);
    c1 = fma((float16)(a[k + r]), b, c1);
    c2 = fma((float16)(a[2 * k + r]), b, c2);
    c3 = fma((float16)(a[3 * k + r]), b, c3);
  }
  vstore16(c0, 0, C + (i + 0) * m + j);
  vstore16(c1, 0, C + (i + 1) * m + j);
  vstore16(c2, 0, C + (i + 2) * m + j);
  vstore16(c3, 0, C + (i + 3) * m + j);
}
