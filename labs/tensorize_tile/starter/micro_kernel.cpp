// Lab tensorize_tile: your tensor intrinsic, a description paired with an implementation, and
// the schedule that tensorizes the lab's matmul with it. tile_lab.h says what each part is;
// the README walks through them. Replace the three TODOs.
#include <cstdint>
#include <string>

#include "tile_lab.h"

namespace {

// The implementation: what the description says, on the tile whose first elements A, B and C
// point at (row-major; lda, ldb and ldc are the whole matrices' row lengths).
void mk_4x8(const float* A, const float* B, float* C, int64_t lda, int64_t ldb, int64_t ldc) {
  // TODO: the register-blocked micro-kernel: C's 4 x 8 tile held in variables across the
  // 64 steps of k, each step adding A's column times B's row; C written back once.
  (void)A, (void)B, (void)C, (void)lda, (void)ldb, (void)ldc;
}

}  // namespace

TensorIntrin tile_intrinsic() {
  TensorIntrin t;
  t.name = "mk_4x8";
  t.m = 4;  // i < 4
  t.n = 8;  // j < 8
  t.k = 64; // k < 64
  t.statement = "";  // TODO: the statement the loops i, j, k run, in the loop nests' notation
  t.implementation = mk_4x8;
  return t;
}

std::string tile_schedule() {
  // TODO: after the tiles are made, hoist C's init out of them, blockize the tile and
  // tensorize the block blockize made with mk_4x8.
  return R"(
split i 4
split j 8
split k 64
reorder i_0 j_0 k_0 i_1 j_1 k_1
)";
}
