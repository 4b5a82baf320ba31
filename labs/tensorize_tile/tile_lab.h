// Lab tensorize_tile: the tensor intrinsic you register (in micro_kernel.cpp) and the schedule
// that tensorizes matmul with it.
//
// As TVM's TensorIntrin pairs two PrimFuncs, an intrinsic here is a description (what one
// call computes, written as the loops of a tile and the one statement they run) and an
// implementation (a C++ function that computes exactly that, faster). The checker matches the
// description against the tile your schedule blockizes, then runs matmul with one call of your
// implementation per tile, on shapes drawn at check time.
#pragma once
#include <cstdint>
#include <string>

// The implementation's fixed signature. A, B and C point at the tile's first element of each
// matrix, and the matrices are row-major: the element X[r, c] of the description's statement
// is X[r * ldX + c] here (so lda, ldb and ldc are the lengths of the whole matrices' rows,
// not the tile's). The call accumulates into C: it adds to what is there, and it writes no
// element of C outside the tile.
using TileImplementation = void (*)(const float* A, const float* B, float* C, int64_t lda,
                                    int64_t ldb, int64_t ldc);

struct TensorIntrin {
  // The name a schedule's tensorize step uses: `tensorize C_o mk_4x8`. Letters, digits, '_'.
  std::string name;

  // The description: the loops `for i < m, j < n, k < k` around one statement, in the
  // notation of the loop nests, with an accumulation: "X[.., ..] += Y[.., ..] * Z[.., ..]",
  // each index one of the loops i, j, k. The buffers are the matmul's (C, A, B). Like TVM's
  // description it is of fixed size: every call computes one whole m x n x k tile.
  int64_t m = 0, n = 0, k = 0;
  std::string statement;

  // The implementation: computes the description at the pointers it is given.
  TileImplementation implementation = nullptr;
};

// Your registration: the description and the implementation, paired.
TensorIntrin tile_intrinsic();

// Your schedule of the lab's matmul (C[i, j] = sum(k) A[i, k] * B[k, j], loops i, j, k, block
// C), one step per line as in a .sched file. Its last step tensorizes with your intrinsic.
std::string tile_schedule();
