// Lab tensorize_tile, a reference solution: a 4 x 8 x 64 register-blocked micro-kernel (the
// inner kernel of a BLAS, BLIS's "microkernel"), its description, and the schedule that
// blockizes matmul's 4 x 8 x 64 tile and tensorizes it.
#include <cstdint>
#include <cstring>
#include <string>

#include "tile_lab.h"

namespace {

// Eight floats as one value (GCC's and Clang's vector extension): the compiler turns + and *
// on it into SIMD instructions whatever the target's vector width (two SSE registers on any
// x86-64, one AVX register where the flags allow it), without intrinsics tied to one ISA.
typedef float v8 __attribute__((vector_size(32)));

// C[i, j] += A[i, k] * B[k, j] over the 4 x 8 x 64 tile. The 4 x 8 accumulators are four v8
// variables: loaded once, updated 64 times in registers (the point of register blocking: C
// goes to memory once per tile, not once per step of k), stored once. Each step of k reads
// one row of B (a vector) and one column of A (four floats, each broadcast across the row).
void mk_4x8(const float* A, const float* B, float* C, int64_t lda, int64_t ldb, int64_t ldc) {
  v8 c0, c1, c2, c3;
  std::memcpy(&c0, C + 0 * ldc, sizeof c0);  // memcpy: a row of C need not be aligned
  std::memcpy(&c1, C + 1 * ldc, sizeof c1);
  std::memcpy(&c2, C + 2 * ldc, sizeof c2);
  std::memcpy(&c3, C + 3 * ldc, sizeof c3);
  for (int64_t k = 0; k < 64; ++k) {
    v8 b;
    std::memcpy(&b, B + k * ldb, sizeof b);
    c0 += A[0 * lda + k] * b;
    c1 += A[1 * lda + k] * b;
    c2 += A[2 * lda + k] * b;
    c3 += A[3 * lda + k] * b;
  }
  std::memcpy(C + 0 * ldc, &c0, sizeof c0);
  std::memcpy(C + 1 * ldc, &c1, sizeof c1);
  std::memcpy(C + 2 * ldc, &c2, sizeof c2);
  std::memcpy(C + 3 * ldc, &c3, sizeof c3);
}

}  // namespace

TensorIntrin tile_intrinsic() {
  TensorIntrin t;
  t.name = "mk_4x8";
  t.m = 4;
  t.n = 8;
  t.k = 64;
  t.statement = "C[i, j] += A[i, k] * B[k, j]";
  t.implementation = mk_4x8;
  return t;
}

// The tiles: 4 rows of C by 8 columns, 64 steps of k, with the tile's loops innermost. C's
// init leaves the tile (the description only accumulates) to just above k_0, so each tile of
// C is zeroed once before its 64-step slices of k add up. blockize wraps the tile in block
// C_o, and tensorize replaces C_o with one call of mk_4x8.
std::string tile_schedule() {
  return R"(
split i 4
split j 8
split k 64
reorder i_0 j_0 k_0 i_1 j_1 k_1
decompose_reduction C k_0
blockize C.i_1
tensorize C_o mk_4x8
)";
}
