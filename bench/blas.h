// The yardsticks of the tensor benchmarks: OpenBLAS, a tuned BLAS on the same inputs and the
// same thread count, and where BLAS has nothing to offer (vector add, softmax) the plain C++
// loops a programmer writes in five minutes ("cpp").
//
//   blas_set_threads(4);
//   blas_sgemm(M, N, K, a, b, c);   // c[M, N] = a[M, K] * b[K, N], all row-major, contiguous
//
// When the build found no OpenBLAS, the same functions run plain loops and
// blas_description() says so; results are the same, only the speed differs.
#pragma once
#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace descent::bench {

// True when linked against OpenBLAS (false: the plain-loop stand-in).
bool blas_available();
// Threads OpenBLAS may use from now on (<= 0: one per hardware thread).
void blas_set_threads(int threads);
// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64; running its Zen kernels"
// (openblas_get_config() and openblas_get_corename(), plus "(forced by OPENBLAS_CORETYPE=X)"
// when the environment chose the kernels).
std::string blas_description();

// C = A * B for row-major contiguous A [m, k], B [k, n], C [m, n] (C is overwritten).
void blas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
// y = W x for row-major W [m, k], i.e. y[j] = sum_r w[j, r] * x[r]: `linear` with one input
// row (the kernel's out[0, j] = sum(r) x[0, r] * w[j, r]).
void blas_sgemv(int64_t m, int64_t k, const float* w, const float* x, float* y);

// The same on tensors, with shapes checked: a [m, k] x b [k, n] -> [m, n], and
// linear(x [1, k], w [m, k]) -> [1, m]. False with *error on a shape mismatch or on sizes
// beyond BLAS's 32-bit int dimensions.
bool blas_matmul(const tensor::Tensor& a, const tensor::Tensor& b, tensor::Tensor* out,
                 std::string* error);
bool blas_linear(const tensor::Tensor& x, const tensor::Tensor& w, tensor::Tensor* out,
                 std::string* error);

// The "cpp" column: c = a + b and the prelude's stable row softmax (its four passes fused
// per row), split over `threads` by rows. *out is reshaped; its buffer is reused when the
// size matches.
void cpp_add(const tensor::Tensor& a, const tensor::Tensor& b, tensor::Tensor* c, int threads);
void cpp_softmax(const tensor::Tensor& x, tensor::Tensor* out, int threads);
// The prelude's layer norm, row by row (mean, variance, then each element scaled).
void cpp_layer_norm(const tensor::Tensor& x, const tensor::Tensor& gamma, const tensor::Tensor& beta,
                    tensor::Tensor* out, int threads);

}  // namespace descent::bench
