// transform_layout and the copies that leave their kernel (issue 34): a buffer re-laid out
// computes the same as the nest as lowered (interpreter and CPU), an input's copy is a nest
// of its own that hoist_layout_prologues moves out, the graph runtime makes that copy once
// per weight tensor, and the default schedule of a batched `linear` takes this route.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "pipeline/pipeline.h"
#include "session_util.h"
#include "tensor/backend.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tests/tensor/kernel_util.h"

using namespace descent;
using namespace descent::tensor;
using descent::testing::contains;
using descent::testing::lower_kernel_text;
using descent::testing::printed_by;

namespace {

// nn.Linear's layout: W[out, in], contiguous along the reduction.
tir::PrimFunc linear(int n, int k, int m) {
  return lower_kernel_text("kernel linear(X: f32[" + std::to_string(n) + ", " + std::to_string(k) +
                           "], W: f32[" + std::to_string(m) + ", " + std::to_string(k) +
                           "]) -> f32[" + std::to_string(n) + ", " + std::to_string(m) +
                           "] {\n  Y[i, j] = sum(r) X[i, r] * W[j, r]\n  return Y\n}\n");
}

// The number a `print(sum_all(...))` printed. Sums on the cpu add in another order than the
// interpreter (vector lanes, tiles), so results are compared to a relative tolerance.
double printed_value(const std::string& text) { return std::stod(text); }
bool close(double a, double b) { return std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b)); }

Tensor seeded(const std::vector<int64_t>& shape, int64_t seed) {
  Tensor t;
  std::string error;
  REQUIRE(tensor::rand(shape, seed, &t, &error));
  return t;
}

Tensor interpreted(const tir::PrimFunc& f, const std::vector<const Tensor*>& args) {
  Tensor out;
  std::string error;
  REQUIRE_MESSAGE(tir::interpret(f, args, &out, &error), error);
  return out;
}

tir::PrimFunc scheduled(const tir::PrimFunc& f, const std::string& text) {
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(text, &error), error);
  return s.func();
}

}  // namespace

TEST_CASE("transform_layout: an input gets a re-laid-out copy, read with permuted indices") {
  tir::PrimFunc f = linear(6, 10, 4);
  tir::PrimFunc g = scheduled(f, "transform_layout W 1 0\n");
  int wt = g.find_buffer("W_t");
  REQUIRE(wt >= 0);
  CHECK(g.buffers[size_t(wt)].shape == std::vector<int64_t>{10, 4});
  CHECK(g.buffers.size() == f.buffers.size() + 1);
  std::string text = tir::print_script(g);
  CHECK(contains(text, "W_t[v0, v1] = W[v1, v0]"));  // the copy, over the new shape
  CHECK(contains(text, "W_t[vr, vj]"));              // the nest reads the copy
  Tensor x = seeded({6, 10}, 1), w = seeded({4, 10}, 2);
  Tensor want = interpreted(f, {&x, &w}), got = interpreted(g, {&x, &w});
  CHECK(got.data.size() == want.data.size());
  for (size_t i = 0; i < want.data.size(); ++i) CHECK(got.data[i] == want.data[i]);

  // The compiled copy computes the same, vectorized along the new contiguous axis.
  Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  tir::PrimFunc h = scheduled(g, "vectorize W_t.ax1\nparallel Y.i\n");
  std::unique_ptr<CompiledKernel> k;
  std::string error;
  REQUIRE_MESSAGE(cpu->compile(h, BackendOptions{}, &k, &error), error);
  Tensor out;
  REQUIRE_MESSAGE(k->run({&x, &w}, &out, nullptr, &error), error);
  REQUIRE(tensor::allclose(out, want, 1e-5, &error));
}

TEST_CASE("transform_layout: an intermediate is re-indexed in place, with no copy") {
  tir::PrimFunc f = lower_kernel_text(descent::testing::kMmRelu);
  tir::PrimFunc g = scheduled(f, "transform_layout Y 1 0\n");
  CHECK(g.buffers.size() == f.buffers.size());
  std::string text = tir::print_script(g);
  CHECK(contains(text, "Y[vj, vi] = Y[vj, vi] +"));
  CHECK(contains(text, "max(Y[vj, vi]"));
  Tensor a = seeded({128, 128}, 3), b = seeded({128, 128}, 4);
  Tensor want = interpreted(f, {&a, &b}), got = interpreted(g, {&a, &b});
  for (size_t i = 0; i < want.data.size(); ++i) CHECK(got.data[i] == want.data[i]);
}

TEST_CASE("transform_layout: what it refuses, and the function left as it was") {
  tir::PrimFunc f = linear(4, 8, 4);
  auto refused = [&](const std::string& step) {
    Schedule s(f);
    std::string error;
    std::string before = tir::print_script(s.func());
    CHECK_FALSE(s.apply(step, &error));
    CHECK(tir::print_script(s.func()) == before);
    return error;
  };
  CHECK(contains(refused("transform_layout W 0 1"), "keeps every axis in place"));
  CHECK(contains(refused("transform_layout W 1 1"), "is not a permutation of 0..1"));
  CHECK(contains(refused("transform_layout W 2 0 1"), "needs 2 axis numbers"));
  CHECK(contains(refused("transform_layout Y 1 0"), "the kernel's result"));
  CHECK(contains(refused("transform_layout Q 1 0"), "no buffer 'Q' (buffers: X, W, Y)"));
  CHECK(contains(refused("transform_layout W one 0"), "is not an integer"));
  CHECK(contains(refused("transform_layout W"), "usage: transform_layout BUFFER AXIS AXIS"));
}

TEST_CASE("hoist_layout_prologues: the copy becomes a function, and the kernel takes it") {
  tir::PrimFunc f = linear(5, 12, 6);
  tir::PrimFunc g = scheduled(f, "transform_layout W 1 0\nvectorize W_t.ax1\n");
  std::vector<LayoutPrologue> packs = hoist_layout_prologues(g);
  REQUIRE(packs.size() == 1);
  CHECK(packs[0].buffer == "W_t");
  CHECK(packs[0].inputs == std::vector<int>{1});  // reads argument 2, W
  CHECK(g.params.size() == 3);
  CHECK(g.buffers[size_t(g.params[2])].name == "W_t");
  std::string error;
  REQUIRE_MESSAGE(tir::verify(g, &error), error);
  REQUIRE_MESSAGE(tir::verify(*packs[0].func, &error), error);
  CHECK_FALSE(contains(tir::print_script(g), "W_t[v0, v1] = W[v1, v0]"));
  Tensor x = seeded({5, 12}, 5), w = seeded({6, 12}, 6);
  Tensor wt = interpreted(*packs[0].func, {&w});
  CHECK(wt.shape == std::vector<int64_t>{12, 6});
  CHECK(wt.data[size_t(1 * 6 + 2)] == w.data[size_t(2 * 12 + 1)]);  // W_t[1, 2] = W[2, 1]
  Tensor want = interpreted(f, {&x, &w}), got = interpreted(g, {&x, &w, &wt});
  for (size_t i = 0; i < want.data.size(); ++i) CHECK(got.data[i] == want.data[i]);
  // A nest that is not a leading input copy stays: nothing to hoist.
  tir::PrimFunc plain = linear(5, 12, 6);
  CHECK(hoist_layout_prologues(plain).empty());
  CHECK(plain.params.size() == 2);
  // Leading nests that compute from the inputs (the prelude sigmoid's exps) are the kernel's
  // own work, not copies to make once per tensor; and a hoisted copy must not make the next
  // nest, which reads it, look like a prologue (that read a missing input before).
  tir::PrimFunc sig = lower_kernel_text(
      "kernel s(x: f32[3, 4], d: f32[4, 3]) -> f32[3, 4] {\n"
      "  c[i, j] = d[j, i]\n  t[i, j] = c[i, j] * x[i, j]\n  e[i, j] = exp(x[i, j])\n"
      "  out[i, j] = e[i, j] + t[i, j]\n  return out\n}\n");
  std::vector<LayoutPrologue> one = hoist_layout_prologues(sig);
  REQUIRE(one.size() == 1);
  CHECK(one[0].buffer == "c");
  CHECK(sig.params.size() == 3);
}

TEST_CASE("the runtime makes a weight's copy once per weight tensor, and a new tensor again") {
  Session s;
  REQUIRE(s.set_device("cpu"));
  const char* setup = "x = rand([16, 32], 1)\nw = rand([8, 32], 2)\n";
  printed_by(s, setup);
  std::string error;
  Session::ScheduleId id = s.open_schedule("linear", {{"n", 16}, {"k", 32}, {"m", 8}}, false, &error);
  REQUIRE_MESSAGE(id != 0, error);
  REQUIRE_MESSAGE(s.use_schedule(id, &error), error);
  REQUIRE_MESSAGE(s.schedule_step("transform_layout w 1 0", &error), error);
  REQUIRE_MESSAGE(s.install_schedule(id, &error), error);
  printed_by(s, "print(sum_all(linear(x, w)))\n");
  CHECK(s.tensors().packings() == 1);
  StageResult g = s.graph_view("executed", Format::Text);
  REQUIRE(g.ok);
  CHECK(contains(g.text, "[w_t: made once per tensor]"));
  bool pack_launch = false;
  for (const LaunchRecord& r : s.tensors().launches()) pack_launch |= r.kernel == "linear.w_t";
  CHECK(pack_launch);
  // The same weights, new activations: no new copy.
  std::string second = printed_by(s, "x = rand([16, 32], 3)\nprint(sum_all(linear(x, w)))\n");
  CHECK(s.tensors().packings() == 1);
  // New weights: a new copy, and the result is the new weights'.
  std::string third = printed_by(s, "w = rand([8, 32], 4)\nprint(sum_all(linear(x, w)))\n");
  CHECK(s.tensors().packings() == 2);
  Session ref;
  printed_by(ref, "x = rand([16, 32], 3)\nw = rand([8, 32], 4)\n");
  std::string want = printed_by(ref, "print(sum_all(linear(x, w)))\n");
  CHECK(close(printed_value(third), printed_value(want)));
  CHECK_FALSE(close(printed_value(third), printed_value(second)));  // not the old copy's
}

TEST_CASE("the default schedule runs a batched linear as a matmul over its weights re-laid out") {
  Session s;
  REQUIRE(s.set_device("cpu"));
  printed_by(s, "x = rand([64, 96], 1)\nw = rand([32, 96], 2)\n");
  std::string got = printed_by(s, "print(sum_all(linear(x, w)))\n");
  CHECK(s.tensors().packings() == 1);
  bool default_schedule = false;
  for (const LaunchRecord& r : s.tensors().launches())
    default_schedule |= r.kernel == "linear" && r.schedule == "default";
  CHECK(default_schedule);
  Session ref;
  printed_by(ref, "x = rand([64, 96], 1)\nw = rand([32, 96], 2)\n");
  std::string want = printed_by(ref, "print(sum_all(linear(x, w)))\n");
  CHECK(close(printed_value(got), printed_value(want)));
  // One row: a dot per output stays the better recipe (no copy).
  Session one;
  REQUIRE(one.set_device("cpu"));
  printed_by(one, "x = rand([1, 96], 1)\nw = rand([32, 96], 2)\nprint(sum_all(linear(x, w)))\n");
  CHECK(one.tensors().packings() == 0);
}
