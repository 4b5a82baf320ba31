// test_tensor_iteration_order: the order a scheduled loop nest writes its output in
// (tensor/iteration_order.h), the data behind the loop-nest pane's iteration-order picture.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <string>
#include <vector>

#include "tensor/iteration_order.h"
#include "tensor/schedule.h"

using namespace descent;
using namespace descent::tensor;
using descent::testing::lower_kernel_text;

namespace {

const char* kSmallMatmul = R"(
kernel mm(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  C[i, j] = sum(k) A[i, k] * B[k, j]
  return C
}
)";

tir::PrimFunc small_matmul(int64_t n = 8, int64_t k = 8, int64_t m = 8) {
  return lower_kernel_text(kSmallMatmul, {{n, k}, {k, m}});
}

IterationOrder order_of(const tir::PrimFunc& f) {
  IterationOrder o;
  std::string error;
  REQUIRE_MESSAGE(iteration_order(f, &o, &error), error);
  return o;
}

IterationOrder scheduled(const std::string& steps) {
  Schedule s(small_matmul());
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(steps, &error), error);
  return order_of(s.func());
}

}  // namespace

TEST_CASE("the naive nest visits the output row by row") {
  IterationOrder o = order_of(small_matmul());
  CHECK(o.buffer == "C");
  CHECK(o.rows == 8);
  CHECK(o.cols == 8);
  CHECK(o.note.empty());
  REQUIRE(o.order.size() == 64);
  for (int64_t e = 0; e < 64; ++e) CHECK(o.order[size_t(e)] == e);
  // No loop is split: one tile, named by no loop.
  CHECK(o.tiles == 1);
  CHECK(o.tile_loops.empty());
  for (int64_t t : o.tile) CHECK(t == 0);
}

TEST_CASE("a reduction reports each element's first and last write") {
  IterationOrder o = order_of(small_matmul());
  // Each C[i, j] is written by the init, then once per k: 9 stores, one after the other.
  CHECK(o.writes == 64 * 9);
  for (int64_t e = 0; e < 64; ++e) {
    CHECK(o.first[size_t(e)] == e * 9);
    CHECK(o.last[size_t(e)] == e * 9 + 8);
  }
  // With the reduction outermost, every element is revisited on every k: the init of all
  // of them comes first (at k = 0), the last writes all come in the final sweep.
  IterationOrder r = scheduled("reorder k i j");
  CHECK(r.writes == 64 * 9);
  CHECK(r.first[0] == 0);
  CHECK(r.first[1] == 2);             // init and update of C[0, 0], then C[0, 1]'s init
  CHECK(r.last[0] == 64 * 8);         // the last sweep (k = 7) starts after 64 * 2 + 64 * 6
  CHECK(r.last[63] == 64 * 9 - 1);
}

TEST_CASE("a tiled nest visits one tile at a time") {
  IterationOrder o = scheduled("split i 4\nsplit j 4\nreorder i_0 j_0 i_1 j_1 k");
  REQUIRE(o.order.size() == 64);
  // The first 16 visits are the top-left 4 x 4 tile, row by row within it.
  for (int64_t v = 0; v < 16; ++v) {
    int64_t e = o.order[size_t(v)];
    CHECK(e / 8 == v / 4);
    CHECK(e % 8 == v % 4);
  }
  // Then the tile to its right.
  CHECK(o.order[16] == 4);
  CHECK(o.tiles == 4);
  CHECK(o.tile_loops == std::vector<std::string>{"i_0", "j_0"});
  CHECK(o.tile[0] == 0);
  CHECK(o.tile[4] == 1);           // C[0, 4]
  CHECK(o.tile[4 * 8] == 2);       // C[4, 0]
  CHECK(o.tile[63] == 3);
  // `tile` is the same schedule in one step.
  CHECK(scheduled("tile i j 4 4").order == o.order);
}

TEST_CASE("splitting one loop makes bands; a split that does not divide is guarded") {
  IterationOrder o = scheduled("split i 3");  // 8 rows: i_0 in 0..3, the last band 2 rows
  CHECK(o.tile_loops == std::vector<std::string>{"i_0"});
  CHECK(o.tiles == 3);
  CHECK(o.order.size() == 64);      // every element once, none out of range
  CHECK(o.tile[2 * 8] == 0);
  CHECK(o.tile[3 * 8] == 1);
  CHECK(o.tile[7 * 8 + 7] == 2);
  for (int64_t e = 0; e < 64; ++e) CHECK(o.order[size_t(e)] == e);  // still row-major
}

TEST_CASE("other ranks are laid out on a grid and say so") {
  const char* vec = R"(
kernel twice(A: f32[n]) -> f32[n] {
  B[i] = A[i] * 2.0
  return B
}
)";
  IterationOrder o = order_of(lower_kernel_text(vec, {{5}}));
  CHECK(o.rows == 1);
  CHECK(o.cols == 5);
  CHECK(o.note == "B is 1-D: drawn as one row");
  const char* cube = R"(
kernel add3(A: f32[a, b, c]) -> f32[a, b, c] {
  B[x, y, z] = A[x, y, z] + 1.0
  return B
}
)";
  IterationOrder c = order_of(lower_kernel_text(cube, {{2, 3, 4}}));
  CHECK(c.rows == 6);
  CHECK(c.cols == 4);
  CHECK(c.note == "B is 3-D [2, 3, 4]: its leading dims are flattened into 6 rows");
  for (int64_t e = 0; e < 24; ++e) CHECK(c.order[size_t(e)] == e);
}

TEST_CASE("a nest too big to walk is refused at once, with its size") {
  IterationOrder o;
  std::string error;
  CHECK_FALSE(iteration_order(small_matmul(1024, 1024, 1024), &o, &error));
  // 1024^3 updates, 1024^2 inits, and the loop iterations around them.
  CHECK(error ==
        "the loop nest of 'mm' is too big to walk: about 2149581824 steps (loop iterations "
        "and writes of C), more than the 16777216 allowed; select the kernel with smaller dims");
  // The bound is the caller's to choose: the 8^3 nest takes 8 + 64 + 64 * 9 + 512 steps.
  CHECK(iteration_order(small_matmul(), &o, &error, 8 + 64 + 64 * 9 + 512));
  CHECK_FALSE(iteration_order(small_matmul(), &o, &error, 8 + 64 + 64 * 9 + 511));
}
