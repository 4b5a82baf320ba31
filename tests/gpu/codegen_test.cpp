// test_gpu_codegen: loop nests -> OpenCL C. Golden source for a few PrimFuncs (DESCENT_UPDATE_GOLDEN=1
// rewrites tests/gpu/golden/*.cl), and every generated program run on the first OpenCL device
// (PoCL in CI) against the reference interpreter (tensor::allclose, rtol 1e-4).
#include <doctest/doctest.h>

#include "tests/golden.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "gpu/opencl_codegen.h"
#include "gpu/opencl_run.h"
#include "gpu/runtime.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "cpu/cpu.h"
#include "tensor/lower.h"
#include "tests/tensor/kernel_util.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using descent::tensor::Tensor;

namespace {

tir::PrimFunc lowered(const std::string& text, const std::vector<std::vector<int64_t>>& shapes) {
  return testing::lower_kernel_text(text, shapes);
}

tir::PrimFunc scheduled(tir::PrimFunc f, const char* text) {
  tensor::Schedule s(std::move(f));
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(text, &error), error);
  return s.func();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  descent::testing::check_golden_file("gpu/golden/" + name, actual);
}

gpu::Context& context() {
  std::string error;
  gpu::Context* c = gpu::default_context(&error);
  REQUIRE_MESSAGE(c != nullptr, error);
  return *c;
}

// Runs f on OpenCL and in the interpreter on the same inputs (random unless given); they
// must agree.
gpu::Timing check_against_interpreter(const tir::PrimFunc& f, int64_t seed = 7,
                                      std::vector<Tensor> inputs = {}) {
  std::string error;
  if (inputs.empty())
    for (int p : f.params) {
      Tensor t;
      REQUIRE(tensor::rand(f.buffers[size_t(p)].shape, seed++, &t, &error));
      inputs.push_back(std::move(t));
    }
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) args.push_back(&t);
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(f, args, &want, &error), error);
  gpu::Timing timing;
  INFO(gpu::print_opencl(f));
  REQUIRE_MESSAGE(gpu::run_opencl(f, context(), args, &got, &timing, &error), error);
  std::string why;
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
  if (std::getenv("DESCENT_GPU_DUMP")) std::printf("%s\n", gpu::print_opencl(f).c_str());
  if (std::getenv("DESCENT_GPU_TIMING"))
    std::printf("%-28s build %8.4f s  upload %8.6f s  kernel %8.6f s  download %8.6f s\n",
                f.name.c_str(), timing.build_s, timing.upload_s, timing.kernel_s, timing.download_s);
  return timing;
}

const char* kAdd = R"(kernel add(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = a[i] + b[i]
  return c
}
)";

const char* kMatmul = R"(kernel matmul(A: f32[m, k], B: f32[k, n]) -> f32[m, n] {
  Y[i, j] = sum(r) A[i, r] * B[r, j]
  return Y
}
)";

const char* kMmRelu = R"(kernel mm_relu(A: f32[n, n], B: f32[n, n]) -> f32[n, n] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
)";

const char* kSoftmax = R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
}
)";

const char* kLinearRelu = R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)";

// The textbook tiled matmul: 16 x 16 work-groups, A and B tiles staged in __local memory,
// copied cooperatively (each work-item copies one element of each tile).
const char* kSharedMatmul = R"(
  split i 16
  split j 16
  split r 16
  reorder i_0 j_0 r_0 i_1 j_1 r_1
  bind i_0 group.x
  bind j_0 group.y
  bind i_1 local.x
  bind j_1 local.y
  cache_read Y A shared
  compute_at A_shared r_0
  cache_read Y B shared
  compute_at B_shared r_0
  bind A_shared.ax0 local.x
  bind A_shared.ax1 local.y
  bind B_shared.ax0 local.x
  bind B_shared.ax1 local.y
)";

const char* kMmReluBound = R"(
  split Y.i 8
  split Y.j 8
  bind Y.i_0 group.x
  bind Y.j_0 group.y
  bind Y.i_1 local.x
  bind Y.j_1 local.y
  split C.i 4
  bind C.i_0 group.x
  bind C.i_1 local.x
  split C.j 4
  vectorize C.j_1
)";

// ---- hand-built loop nests (for what schedules do not produce) ----

using tir::ExprPtr;
using tir::StmtPtr;

ExprPtr v(const char* name) { return tir::var(name); }
ExprPtr c(int64_t x) { return tir::int_imm(x); }
template <class... E>
std::vector<ExprPtr> idx(E... e) {
  std::vector<ExprPtr> out;
  (out.push_back(std::move(e)), ...);
  return out;
}

StmtPtr bound(const char* var, int64_t extent, const char* tag, StmtPtr body) {
  StmtPtr s = tir::make_for(var, extent, std::move(body), tir::ForKind::Bound);
  s->thread_tag = tag;
  return s;
}

tir::Buffer buffer(const char* name, std::vector<int64_t> shape, tir::BufferRole role) {
  tir::Buffer b;
  b.name = name;
  b.shape = std::move(shape);
  b.role = role;
  return b;
}

template <class... S>
StmtPtr seq(S... s) {
  std::vector<StmtPtr> v;
  (v.push_back(std::move(s)), ...);
  return tir::make_seq(std::move(v));
}

// x: [4, 8] -> t = 2x in one nest bound to local.x (8), then out[g, j] = t[g, j] + t[g, (j+1)%8]
// in a nest bound to local.x (4) x serial 2: work-items read what others wrote (a barrier
// with a global fence), and the second nest is shorter than the launch (a guard).
tir::PrimFunc neighbours() {
  tir::PrimFunc f;
  f.name = "neighbours";
  f.buffers = {buffer("x", {4, 8}, tir::BufferRole::Input), buffer("out", {4, 8}, tir::BufferRole::Output),
               buffer("t", {4, 8}, tir::BufferRole::Temp)};
  f.params = {0};
  f.output = 1;
  StmtPtr first = bound("a", 8, "local.x",
                        tir::make_store(2, idx(v("g"), v("a")),
                                        tir::binary(tir::Op::Mul, tir::load(0, idx(v("g"), v("a"))),
                                                    tir::float_imm(2))));
  ExprPtr j = tir::binary(tir::Op::Add, tir::binary(tir::Op::Mul, v("b"), c(2)), v("c"));
  ExprPtr next = tir::binary(tir::Op::Mod, tir::binary(tir::Op::Add, tir::clone(*j), c(1)), c(8));
  StmtPtr second = bound(
      "b", 4, "local.x",
      tir::make_for("c", 2,
                    tir::make_store(1, idx(v("g"), tir::clone(*j)),
                                    tir::binary(tir::Op::Add, tir::load(2, idx(v("g"), tir::clone(*j))),
                                                tir::load(2, idx(v("g"), std::move(next)))))));
  f.body = bound("g", 4, "group.x", seq(std::move(first), std::move(second)));
  return f;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// ---- golden OpenCL C --------------------------------------------------------------------

TEST_CASE("golden: add split 64 and bound to group.x / local.x, with the tail guarded") {
  tir::PrimFunc f = scheduled(lowered(kAdd, {{1000}, {1000}}), R"(
    split i 64
    bind i_0 group.x
    bind i_1 local.x
  )");
  check_golden("add_bind.cl", gpu::print_opencl(f));
  gpu::OpenCLProgram p;
  std::string error;
  REQUIRE(gpu::generate_opencl(f, &p, &error));
  REQUIRE(p.kernels.size() == 1);
  CHECK(gpu::describe_launch(p.kernels[0]) == "kernel add: global (1024) local (64) = 16 work-groups of 64 work-items");
  CHECK(p.params == std::vector<int>{0, 1, 2});
  CHECK(p.scratch.empty());
}

TEST_CASE("golden: naive matmul runs as one work-item") {
  tir::PrimFunc f = lowered(kMatmul, {{64, 48}, {48, 32}});
  check_golden("matmul_naive.cl", gpu::print_opencl(f));
  gpu::OpenCLProgram p;
  std::string error;
  REQUIRE(gpu::generate_opencl(f, &p, &error));
  CHECK(gpu::describe_launch(p.kernels[0]) == "kernel matmul: global (1) local (1) = 1 work-group of 1 work-item");
}

TEST_CASE("golden: matmul with A and B tiles staged in __local memory") {
  tir::PrimFunc f = scheduled(lowered(kMatmul, {{64, 48}, {48, 32}}), kSharedMatmul);
  std::string src = gpu::print_opencl(f);
  check_golden("matmul_shared.cl", src);
  // One barrier after the two copies, one before the next iteration overwrites the tiles.
  CHECK(count(src, "barrier(") == 2);
}

TEST_CASE("golden: mm_relu as two kernels, the second vectorized") {
  tir::PrimFunc f = scheduled(lowered(kMmRelu, {{64, 64}, {64, 64}}), kMmReluBound);
  check_golden("mm_relu_two_kernels.cl", gpu::print_opencl(f));
  gpu::OpenCLProgram p;
  std::string error;
  REQUIRE(gpu::generate_opencl(f, &p, &error));
  REQUIRE(p.kernels.size() == 2);
  CHECK(p.kernels[0].name == "mm_relu_0");
  CHECK(p.kernels[1].name == "mm_relu_1");
  CHECK(p.scratch.size() == 1);  // Y, written by the first kernel, read by the second
}

// ---- numeric agreement with the interpreter -------------------------------------------------

TEST_CASE("add: bound, with a guarded tail, vectorized, single work-item") {
  check_against_interpreter(lowered(kAdd, {{1000}, {1000}}));
  check_against_interpreter(scheduled(lowered(kAdd, {{1000}, {1000}}), "split i 64\nbind i_0 group.x\nbind i_1 local.x"));
  tir::PrimFunc vec = scheduled(lowered(kAdd, {{4096}, {4096}}), R"(
    split i 64
    bind i_0 group.x
    split i_1 4
    bind i_1_0 local.x
    vectorize i_1_1
  )");
  CHECK(gpu::print_opencl(vec).find(
            "vstore4(vload4(0, a + (i_0 * 64 + i_1_0 * 4)) + vload4(0, b + (i_0 * 64 + i_1_0 * 4)), 0, "
            "c + (i_0 * 64 + i_1_0 * 4));") != std::string::npos);
  check_against_interpreter(vec);
}

TEST_CASE("matmul: naive, bound, shared tiles (serial and cooperative copies), register accumulators") {
  tir::PrimFunc m = lowered(kMatmul, {{64, 48}, {48, 32}});
  check_against_interpreter(m);
  check_against_interpreter(scheduled(m, R"(
    split i 16
    split j 8
    reorder i_0 j_0 i_1 j_1 r
    bind i_0 group.x
    bind j_0 group.y
    bind i_1 local.x
    bind j_1 local.y
  )"));
  // The copy stays a serial loop nest: work-item (0, 0) copies the tile alone (a guarded
  // store) while the others wait at the barrier.
  tir::PrimFunc serial_copy = scheduled(m, R"(
    split i 16
    split j 16
    split r 16
    reorder i_0 j_0 r_0 i_1 j_1 r_1
    bind i_0 group.x
    bind j_0 group.y
    bind i_1 local.x
    bind j_1 local.y
    cache_read Y A shared
    compute_at A_shared r_0
  )");
  std::string src = gpu::print_opencl(serial_copy);
  CHECK(src.find("if (get_local_id(0) == 0 && get_local_id(1) == 0) A_shared[") != std::string::npos);
  CHECK(count(src, "barrier(") == 2);
  check_against_interpreter(serial_copy);
  check_against_interpreter(scheduled(m, kSharedMatmul));
  // cache_write local under the thread loops: one private accumulator per work-item.
  tir::PrimFunc acc = scheduled(m, R"(
    split i 16
    split j 8
    reorder i_0 j_0 i_1 j_1 r
    bind i_0 group.x
    bind j_0 group.y
    bind i_1 local.x
    bind j_1 local.y
    cache_write Y local
    reverse_compute_at Y_writeback j_1
  )");
  src = gpu::print_opencl(acc);
  CHECK(src.find("float Y_local[1] = {0};  // local: private to the work-item") != std::string::npos);
  CHECK(count(src, "barrier(") == 0);
  check_against_interpreter(acc);
  // Sizes the tiles do not divide: predicates in every block.
  check_against_interpreter(scheduled(lowered(kMatmul, {{30, 20}, {20, 19}}), R"(
    split i 8
    split j 8
    bind i_0 group.x
    bind j_0 group.y
    bind i_1 local.x
    bind j_1 local.y
  )"));
}

TEST_CASE("staging buffers: shared inside thread loops is private, shared for the whole function is global") {
  tir::PrimFunc m = lowered(kMatmul, {{32, 24}, {24, 16}});
  // compute_at under the thread loops: in the IR each work-item has its own copy.
  tir::PrimFunc per_item = scheduled(m, R"(
    split i 8
    split j 8
    reorder i_0 j_0 i_1 j_1 r
    bind i_0 group.x
    bind j_0 group.y
    bind i_1 local.x
    bind j_1 local.y
    cache_read Y A shared
    compute_at A_shared j_1
  )");
  std::string src = gpu::print_opencl(per_item);
  CHECK(src.find("__local") == std::string::npos);
  CHECK(src.find("float A_shared[24] = {0};  // shared in the IR, private here") != std::string::npos);
  check_against_interpreter(per_item);
  // No compute_at: the copy is its own nest (its own kernel) into a __global scratch buffer.
  tir::PrimFunc whole = scheduled(m, R"(
    split i 8
    bind i_0 group.x
    bind i_1 local.x
    cache_read Y A shared
  )");
  gpu::OpenCLProgram p;
  std::string error;
  REQUIRE(gpu::generate_opencl(whole, &p, &error));
  CHECK(p.kernels.size() == 2);
  REQUIRE(p.scratch.size() == 1);
  CHECK(whole.buffers[size_t(p.scratch[0])].name == "A_shared");
  check_against_interpreter(whole);
}

TEST_CASE("max, min, exp, log, sqrt, abs, select and nan, scalar and vectorized") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x, y;
  std::string error;
  REQUIRE(tensor::rand({64}, 3, &x, &error));
  REQUIRE(tensor::rand({64}, 4, &y, &error));
  x.data[0] = nan;
  y.data[1] = nan;
  x.data[2] = nan;
  y.data[2] = nan;
  const char* kernels[] = {
      "kernel f(a: f32[n], b: f32[n]) -> f32[n] { c[i] = max(a[i], b[i]); return c }",
      "kernel f(a: f32[n], b: f32[n]) -> f32[n] { c[i] = min(a[i], b[i]); return c }",
      "kernel f(a: f32[n], b: f32[n]) -> f32[n] { c[i] = exp(a[i]) + log(abs(b[i])) * sqrt(abs(a[i])); return c }",
      "kernel f(a: f32[n], b: f32[n]) -> f32[n] { c[i] = max(a[i], 0.0) - min(0.5, b[i]) / 3.0; return c }",
  };
  for (const char* k : kernels) {
    CAPTURE(k);
    tir::PrimFunc f = lowered(std::string(k) + "\n", {{64}, {64}});
    check_against_interpreter(f, 0, {x, y});
    tir::PrimFunc vec = scheduled(f, "split i 4\nbind i_0 group.x\nvectorize i_1");
    CHECK(gpu::print_opencl(vec).find("vstore4(") != std::string::npos);
    check_against_interpreter(vec, 0, {x, y});
  }
  // max keeps the interpreter's nan rule: max(nan, y) = nan, max(x, nan) = x.
  tir::PrimFunc f = scheduled(lowered(std::string(kernels[0]) + "\n", {{64}, {64}}), "split i 4\nbind i_0 group.x\nvectorize i_1");
  Tensor got;
  REQUIRE(gpu::run_opencl(f, context(), {&x, &y}, &got, nullptr, &error));
  CHECK(std::isnan(got.data[0]));
  CHECK(got.data[1] == x.data[1]);
  CHECK(std::isnan(got.data[2]));
}

TEST_CASE("unroll, parallel and a vectorized loop that is not contiguous") {
  tir::PrimFunc f = scheduled(lowered(kMatmul, {{32, 16}, {16, 32}}), R"(
    split i 4
    split j 8
    split r 4
    reorder j_0 i_0 j_1 r_0 r_1 i_1
    bind j_0 group.x
    bind j_1 local.x
    unroll r_1
    vectorize i_1
    parallel i_0
  )");
  std::string src = gpu::print_opencl(f);
  // Four copies of the body, r_1 replaced by 0..3: straight-line code, no loop.
  CHECK(src.find("// unrolled r_1: the body for r_1 = 0..3") != std::string::npos);
  CHECK(src.find("#pragma unroll") == std::string::npos);
  CHECK(src.find("r_0 * 4 + 3]") != std::string::npos);
  CHECK(src.find("// parallel i_0: serial inside one work-item") != std::string::npos);
  CHECK(src.find("// vectorize i_1: the store to 'Y' is not contiguous in the lane; a scalar loop") != std::string::npos);
  check_against_interpreter(f);
}

TEST_CASE("unroll: long loops and loops that allocate are left to #pragma unroll") {
  tir::PrimFunc longer = scheduled(lowered(kMatmul, {{8, 128}, {128, 8}}), R"(
    split r 64
    bind i group.x
    unroll r_1
  )");
  std::string src = gpu::print_opencl(longer);
  CHECK(src.find("// unroll r_1: 64 iterations are more than 32 copies of the body; left to the OpenCL compiler\n"
                 "      #pragma unroll\n"
                 "      for (int r_1 = 0; r_1 < 64; ++r_1) {") != std::string::npos);
  check_against_interpreter(longer);
  // The accumulator is allocated inside j: copies of the body would declare it twice.
  tir::PrimFunc allocates = scheduled(lowered(kMatmul, {{8, 16}, {16, 8}}), R"(
    cache_write Y local
    reverse_compute_at Y_writeback j
    unroll j
  )");
  src = gpu::print_opencl(allocates);
  CHECK(src.find("// unroll j: its body allocates, binds or synchronises; left to the OpenCL compiler") != std::string::npos);
  check_against_interpreter(allocates);
}

TEST_CASE("golden: a 4 x 16 register block, private accumulators as float16 values") {
  tir::PrimFunc f = scheduled(lowered(kMatmul, {{16, 32}, {32, 64}}), R"(
    tile i j 4 16
    reorder i_0 j_0 r i_1 j_1
    cache_write Y local
    reverse_compute_at Y_writeback j_0
    decompose_reduction Y r
    bind i_0 group.y
    bind j_0 local.x
    vectorize Y.j_1
    vectorize Y_init.j_1
    vectorize Y_writeback.ax1
    unroll Y.i_1
    unroll Y_init.i_1
    unroll Y_writeback.ax0
  )");
  std::string src = gpu::print_opencl(f);
  check_golden("matmul_register_block.cl", src);
  // Every access to Y_local is a whole float16 at a constant index: no vload16 from it.
  CHECK(src.find("float16 Y_local[4] = {0};") != std::string::npos);
  CHECK(src.find("Y_local[3] = Y_local[3] + ") != std::string::npos);
  CHECK(src.find("vload16(0, Y_local") == std::string::npos);
  CHECK(count(src, "vstore16(Y_local[") == 4);
  check_against_interpreter(f);
}

TEST_CASE("a private array also read lane by lane stays a float array") {
  // The writeback is not vectorized: it reads Y_local one float at a time, so the array
  // cannot be one of float16s, and the vectorized update goes through vload16/vstore16.
  tir::PrimFunc f = scheduled(lowered(kMatmul, {{8, 16}, {16, 32}}), R"(
    split j 16
    reorder i j_0 r j_1
    cache_write Y local
    reverse_compute_at Y_writeback j_0
    decompose_reduction Y r
    bind i group.x
    vectorize Y.j_1
  )");
  std::string src = gpu::print_opencl(f);
  CHECK(src.find("float Y_local[16] = {0};") != std::string::npos);
  CHECK(src.find("vstore16(vload16(0, Y_local) + ") != std::string::npos);
  check_against_interpreter(f);
}

TEST_CASE("several stages: mm_relu, softmax, linear_relu") {
  tir::PrimFunc mm = lowered(kMmRelu, {{64, 64}, {64, 64}});
  check_against_interpreter(mm);
  check_against_interpreter(scheduled(mm, kMmReluBound));
  tir::PrimFunc sm = lowered(kSoftmax, {{8, 40}});
  check_against_interpreter(sm);
  check_against_interpreter(scheduled(sm, R"(
    bind mx.i group.x
    bind e.i group.x
    bind s.i group.x
    bind out.i group.x
    bind out.j local.x
  )"));
  tir::PrimFunc lr = lowered(kLinearRelu, {{4, 96}, {20, 96}});
  check_against_interpreter(lr);
  check_against_interpreter(scheduled(lr, R"(
    bind i group.x
    bind j local.x
  )"));
}

TEST_CASE("work-items read what others wrote: a barrier with a global fence, a guarded nest") {
  tir::PrimFunc f = neighbours();
  std::string src = gpu::print_opencl(f);
  CHECK(src.find("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // wait for the statements above") !=
        std::string::npos);
  CHECK(src.find("if (b < 4) {  // 8 work-items in this dimension for 4 iterations") != std::string::npos);
  check_against_interpreter(f);
}

// ---- errors -----------------------------------------------------------------------------

TEST_CASE("errors: unknown tag, a tag bound twice, a barrier not every work-item reaches") {
  std::string error;
  gpu::OpenCLProgram p;
  tir::PrimFunc f = neighbours();
  f.body->thread_tag = "warp.x";
  CHECK_FALSE(gpu::generate_opencl(f, &p, &error));
  CHECK(error == "loop 'g' is bound to unknown thread tag 'warp.x' (expected group.x|y|z or local.x|y|z)");

  f = neighbours();
  f.body->thread_tag = "local.x";
  CHECK_FALSE(gpu::generate_opencl(f, &p, &error));
  CHECK(error == "loop 'a' is bound to local.x inside another loop bound to local.x");

  // The guarded nest (4 of 8 work-items) would need a barrier inside it: impossible.
  f = neighbours();
  tir::Stmt* second = f.body->body->stmts[1].get();
  tir::Stmt* c_loop = second->body.get();
  std::vector<tir::StmtPtr> inner;
  inner.push_back(std::move(c_loop->body));
  inner.push_back(std::make_unique<tir::Stmt>(tir::StmtKind::Barrier));
  c_loop->body = tir::make_seq(std::move(inner));
  CHECK_FALSE(gpu::generate_opencl(f, &p, &error));
  CHECK(error ==
        "cannot generate OpenCL for 'neighbours': kernel 'neighbours' needs a barrier (from the loop nest) "
        "inside loop 'b', which is bound to fewer work-items than the launch has: not every work-item "
        "would reach it");

  // A malformed function is refused, not compiled.
  f = neighbours();
  f.output = 7;
  CHECK_FALSE(gpu::generate_opencl(f, &p, &error));
  CHECK(error == "cannot generate OpenCL for 'neighbours': function 'neighbours' has no output buffer");
  CHECK(gpu::print_opencl(f) == "error: " + error + "\n");
}

TEST_CASE("errors: argument shapes, a work-group larger than the device allows") {
  gpu::Context& ctx = context();
  tir::PrimFunc f = lowered(kAdd, {{16}, {16}});
  Tensor a, b, out;
  std::string error;
  REQUIRE(tensor::rand({16}, 1, &a, &error));
  REQUIRE(tensor::rand({17}, 1, &b, &error));
  CHECK_FALSE(gpu::run_opencl(f, ctx, {&a, &b}, &out, nullptr, &error));
  CHECK(error == "argument 2 ('b') has shape [17] but the kernel was generated for [16]");
  CHECK_FALSE(gpu::run_opencl(f, ctx, {&a}, &out, nullptr, &error));
  CHECK(error == "kernel 'add' takes 2 arguments, got 1");

  int64_t too_many = ctx.device().max_work_group_size * 2;
  tir::PrimFunc big = scheduled(lowered(kAdd, {{2 * too_many}, {2 * too_many}}),
                                ("split i " + std::to_string(too_many) + "\nbind i_0 group.x\nbind i_1 local.x").c_str());
  REQUIRE(tensor::rand({2 * too_many}, 1, &a, &error));
  REQUIRE(tensor::rand({2 * too_many}, 2, &b, &error));
  CHECK_FALSE(gpu::run_opencl(big, ctx, {&a, &b}, &out, nullptr, &error));
  CHECK(error == "cannot launch kernel 'add' on '" + ctx.device().name + "': work-group (" +
                     std::to_string(too_many) + ") (" + std::to_string(too_many) +
                     " work-items) exceeds the device's maximum work-group size " +
                     std::to_string(ctx.device().max_work_group_size) +
                     " (CL_INVALID_WORK_GROUP_SIZE); bind shorter loops to local.*");
}

TEST_CASE("timing: the build is cached, the kernel time is measured apart from transfers") {
  tir::PrimFunc f = scheduled(lowered(kMatmul, {{128, 128}, {128, 128}}), kSharedMatmul);
  gpu::Context& ctx = context();
  size_t before = ctx.builds();
  gpu::Timing first = check_against_interpreter(f, 11);
  gpu::Timing second = check_against_interpreter(f, 12);
  CHECK(ctx.builds() <= before + 1);
  CHECK(second.build_s == 0.0);
  CHECK(first.kernel_s > 0.0);
  CHECK(second.kernel_s > 0.0);
  CHECK(second.upload_s > 0.0);
  CHECK(second.download_s > 0.0);
}

// The CPU backend and PoCL both use libLLVM-15 in this process: JIT, OpenCL build, JIT again.
TEST_CASE("one process: LLVM JIT, an OpenCL build, LLVM JIT again") {
  tir::PrimFunc f = lowered(kMatmul, {{24, 16}, {16, 8}});
  Tensor a, b, want, got;
  std::string error;
  REQUIRE(tensor::rand({24, 16}, 3, &a, &error));
  REQUIRE(tensor::rand({16, 8}, 4, &b, &error));
  REQUIRE(tir::interpret(f, {&a, &b}, &want, &error));
  std::string why;
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    std::unique_ptr<cpu::CpuKernel> k;
    REQUIRE_MESSAGE(cpu::compile_cpu(f, {}, &k, &error), error);
    REQUIRE_MESSAGE(k->run({&a, &b}, &got, &error), error);
    CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
    // A source unique to this round, so PoCL really compiles it.
    tir::PrimFunc g = f;
    g.name = "matmul_round" + std::to_string(round);
    gpu::Timing t;
    REQUIRE_MESSAGE(gpu::run_opencl(g, context(), {&a, &b}, &got, &t, &error), error);
    CHECK(t.build_s > 0.0);
    CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
  }
  std::unique_ptr<cpu::CpuKernel> k;
  REQUIRE_MESSAGE(cpu::compile_cpu(f, {}, &k, &error), error);
  REQUIRE_MESSAGE(k->run({&a, &b}, &got, &error), error);
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
}

// ---- the prelude's kernels and the benchmark's CPU schedules --------------------------------

namespace {

std::vector<tir::PrimFunc> prelude_kernels(const std::map<std::string, int64_t>& dims) {
  auto p = testing::parse_and_check(read_file(DESCENT_SOURCE_DIR "/tensor/prelude.ds"), "prelude.ds");
  std::vector<tir::PrimFunc> out;
  for (auto& s : p->program->body) {
    if (s->kind != StmtKind::KernelDecl) continue;
    tir::PrimFunc f;
    Diagnostic d;
    REQUIRE_MESSAGE(tensor::lower(*s->kernel, tensor::shapes_for(*s->kernel, dims, 24), &f, &d), d.message);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

TEST_CASE("every prelude kernel, as lowered, on OpenCL") {
  std::vector<tir::PrimFunc> kernels = prelude_kernels({{"n", 6}, {"m", 20}, {"k", 36}});
  CHECK(kernels.size() >= 9);  // transpose included
  for (const tir::PrimFunc& f : kernels) {
    CAPTURE(f.name);
    check_against_interpreter(f);
  }
}

TEST_CASE("the CPU benchmark schedules run on OpenCL too (as one work-item)") {
  struct Case {
    const char* kernel;
    const char* schedule;
    std::map<std::string, int64_t> dims;
  };
  for (const Case& c : {Case{"matmul", "matmul.sched", {{"n", 64}, {"k", 48}, {"m", 96}}},
                        Case{"linear_relu", "linear_relu.sched", {{"n", 1}, {"k", 96}, {"m", 20}}}}) {
    CAPTURE(c.kernel);
    tir::PrimFunc f;
    for (tir::PrimFunc& k : prelude_kernels(c.dims))
      if (k.name == c.kernel) f = k;
    REQUIRE(f.body);
    tir::PrimFunc s = scheduled(f, read_file(std::string(DESCENT_SOURCE_DIR "/bench/schedules/") + c.schedule).c_str());
    // 32 lanes is wider than OpenCL's widest vector: those loops stay scalar loops.
    CHECK(gpu::print_opencl(s).find("32 lanes is not an OpenCL vector width (2, 4, 8, 16); a scalar loop") !=
          std::string::npos);
    check_against_interpreter(s);
  }
}

// bench/schedules/*.opencl.sched: what the OpenCL columns of `descent bench --suite tensor`
// replay, at sizes small enough for a test (the files' splits divide these dims).
TEST_CASE("the OpenCL benchmark schedules: matmul's register block and vector add") {
  std::string dir = DESCENT_SOURCE_DIR "/bench/schedules/";
  tir::PrimFunc mm;
  for (tir::PrimFunc& k : prelude_kernels({{"n", 64}, {"k", 40}, {"m", 256}}))
    if (k.name == "matmul") mm = k;
  REQUIRE(mm.body);
  tir::PrimFunc s = scheduled(mm, read_file(dir + "matmul.opencl.sched").c_str());
  std::string src = gpu::print_opencl(s);
  CHECK(src.find("float16 C_local[16] = {0};") != std::string::npos);
  CHECK(src.find("C_local[15] = C_local[15] + ") != std::string::npos);
  CHECK(src.find("#pragma unroll") == std::string::npos);
  CHECK(src.find("barrier(") == std::string::npos);
  CHECK(count(src, "vstore16(C_local[") == 16);
  gpu::OpenCLProgram p;
  std::string error;
  REQUIRE(gpu::generate_opencl(s, &p, &error));
  REQUIRE(p.kernels.size() == 1);
  CHECK(gpu::describe_launch(p.kernels[0]) == "kernel matmul: global (16, 4) local (8, 1) = 8 work-groups of 8 work-items");
  check_against_interpreter(s);

  for (int64_t m : {int64_t(8192), int64_t(4000), int64_t(1100)}) {
    CAPTURE(m);
    tir::PrimFunc add;
    for (tir::PrimFunc& k : prelude_kernels({{"n", 1}, {"m", m}}))
      if (k.name == "add") add = k;
    REQUIRE(add.body);
    tir::PrimFunc v = scheduled(add, read_file(dir + "vector_add.opencl.sched").c_str());
    src = gpu::print_opencl(v);
    // 4000 leaves the last group partly idle (guarded); 1100 is not a multiple of 16, so the
    // guarded lanes stay a scalar loop. Both still correct.
    CHECK((src.find("vstore16(vload16(0, a + ") != std::string::npos) == (m % 16 == 0));
    check_against_interpreter(v);
  }
}

TEST_CASE("the OpenCL benchmark schedules: linear_relu and softmax") {
  std::string dir = DESCENT_SOURCE_DIR "/bench/schedules/";
  for (const char* name : {"linear_relu", "softmax"}) {
    CAPTURE(name);
    tir::PrimFunc f;
    for (tir::PrimFunc& k : prelude_kernels({{"n", 3}, {"k", 96}, {"m", 40}}))
      if (k.name == name) f = k;
    REQUIRE(f.body);
    tir::PrimFunc s = scheduled(f, read_file(dir + name + ".opencl.sched").c_str());
    gpu::OpenCLProgram p;
    std::string error;
    REQUIRE_MESSAGE(gpu::generate_opencl(s, &p, &error), error);
    // Each is one kernel: linear_relu's rows of w and softmax's rows are independent.
    CHECK(p.kernels.size() == 1);
    check_against_interpreter(s);
  }
}
