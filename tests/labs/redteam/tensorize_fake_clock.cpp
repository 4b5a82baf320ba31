// Red team: a slow implementation (the description's own loops) in a run whose clock is
// rewritten: clock_gettime, which steady_clock and every libc timer call, says that no time
// passes. A harness that timed with a library clock would see the tensorized matmul take no
// time at all; the lab's times with the processor's counter, so this earns 0 on speed.
#include <time.h>

#include <cstdint>
#include <string>

#include "tile_lab.h"

extern "C" int clock_gettime(clockid_t, struct timespec* ts) {
  static long fake = 0;
  ts->tv_sec = 0;
  ts->tv_nsec = ++fake;
  return 0;
}

namespace {

void mk_4x8(const float* A, const float* B, float* C, int64_t lda, int64_t ldb, int64_t ldc) {
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j)
      for (int64_t k = 0; k < 64; ++k) C[i * ldc + j] += A[i * lda + k] * B[k * ldb + j];
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
