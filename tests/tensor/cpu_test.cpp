// The CPU backend against the reference interpreter: every loop kind and construct the code
// generator treats specially, on hand-built loop nests (so each test isolates one thing),
// then scheduled matmuls built with the schedule primitives.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <sched.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "cpu/cpu.h"
#include "cpu/thread_pool.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

// The lang AST has its own ExprPtr/Stmt, so only the tir names are brought in.
using namespace descent::tir;
namespace tensor = descent::tensor;
namespace cpu = descent::cpu;
using descent::tensor::Tensor;

namespace {

ExprPtr v(const char* name) { return var(name); }
ExprPtr i(int64_t x) { return int_imm(x); }
ExprPtr add(ExprPtr a, ExprPtr b) { return binary(Op::Add, std::move(a), std::move(b)); }
ExprPtr mul(ExprPtr a, ExprPtr b) { return binary(Op::Mul, std::move(a), std::move(b)); }
template <class... E>
std::vector<ExprPtr> idx(E... e) {
  std::vector<ExprPtr> out;
  (out.push_back(std::move(e)), ...);
  return out;
}

IterVar iter(const char* name, int64_t extent, IterKind kind, ExprPtr binding) {
  IterVar it;
  it.name = name;
  it.extent = extent;
  it.kind = kind;
  it.binding = std::move(binding);
  return it;
}

StmtPtr block(const char* name, std::vector<IterVar> iters, StmtPtr body, StmtPtr init = nullptr,
              ExprPtr predicate = nullptr) {
  auto b = std::make_unique<Stmt>(StmtKind::Block);
  b->name = name;
  b->iters = std::move(iters);
  b->body = std::move(body);
  b->init = std::move(init);
  b->predicate = std::move(predicate);
  return b;
}

Buffer buffer(const char* name, std::vector<int64_t> shape, BufferRole role,
              Scope scope = Scope::Global) {
  Buffer b;
  b.name = name;
  b.shape = std::move(shape);
  b.role = role;
  b.scope = scope;
  return b;
}

// Y = A @ B (A: MxK, B: KxN), loops i, j, k, block Y(vi, vj, vk).
PrimFunc matmul(int64_t m, int64_t n, int64_t k) {
  PrimFunc f;
  f.name = "mm";
  f.buffers = {buffer("A", {m, k}, BufferRole::Input), buffer("B", {k, n}, BufferRole::Input),
               buffer("Y", {m, n}, BufferRole::Output)};
  f.params = {0, 1};
  f.output = 2;
  std::vector<IterVar> iters;
  iters.push_back(iter("vi", m, IterKind::Spatial, v("i")));
  iters.push_back(iter("vj", n, IterKind::Spatial, v("j")));
  iters.push_back(iter("vk", k, IterKind::Reduce, v("k")));
  auto body = make_store(2, idx(v("vi"), v("vj")),
                         add(load(2, idx(v("vi"), v("vj"))),
                             mul(load(0, idx(v("vi"), v("vk"))), load(1, idx(v("vk"), v("vj"))))));
  auto init = make_store(2, idx(v("vi"), v("vj")), float_imm(0));
  f.body = make_for("i", m, make_for("j", n, make_for("k", k,
                    block("Y", std::move(iters), std::move(body), std::move(init)))));
  return f;
}

std::vector<Tensor> random_inputs(const PrimFunc& f, int64_t seed) {
  std::vector<Tensor> out;
  for (int p : f.params) {
    Tensor t;
    std::string error;
    REQUIRE(tensor::rand(f.buffers[static_cast<size_t>(p)].shape, seed++, &t, &error));
    out.push_back(std::move(t));
  }
  return out;
}

// Compiles f, runs it and the interpreter on the same inputs, and requires agreement.
// Returns the optimised IR for further checks.
std::string check_against_interpreter(const PrimFunc& f, int threads = 1,
                                      std::vector<Tensor> inputs = {}) {
  if (inputs.empty()) inputs = random_inputs(f, 7);
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) args.push_back(&t);
  std::string error;
  Tensor want;
  REQUIRE_MESSAGE(interpret(f, args, &want, &error), error);
  cpu::CpuOptions options;
  options.threads = threads;
  std::unique_ptr<cpu::CpuKernel> kernel;
  REQUIRE_MESSAGE(cpu::compile_cpu(f, options, &kernel, &error), error);
  Tensor got;
  REQUIRE_MESSAGE(kernel->run(args, &got, &error), error);
  std::string why;
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
  // Bit-exact repeatability: a second run gives the same result.
  Tensor again;
  REQUIRE(kernel->run(args, &again, &error));
  CHECK(tensor::allclose(got, again, 0, &why));
  return kernel->llvm_ir();
}

// Splits loop `loop` of f's only nest by hand is tedious; the schedule primitives do it.
PrimFunc scheduled(PrimFunc f, const char* text) {
  tensor::Schedule s(std::move(f));
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(text, &error), error);
  return s.func();
}


}  // namespace

TEST_CASE("serial matmul equals the interpreter") {
  check_against_interpreter(matmul(17, 23, 9));
}

TEST_CASE("unrolled loops equal the interpreter") {
  PrimFunc f = matmul(8, 6, 5);
  f.body->body->for_kind = ForKind::Unrolled;        // j
  f.body->body->body->for_kind = ForKind::Unrolled;  // k
  std::string ir = check_against_interpreter(f);
  CHECK(ir.find("define void @mm(") != std::string::npos);
}

TEST_CASE("a vectorized contiguous loop becomes <16 x float> loads and FMAs") {
  // j split 4 x 16 by hand: vj = j_0 * 16 + j_1, j_1 vectorized, k outside j_1.
  PrimFunc f = matmul(5, 64, 7);
  std::vector<IterVar> iters;
  iters.push_back(iter("vi", 5, IterKind::Spatial, v("i")));
  iters.push_back(iter("vj", 64, IterKind::Spatial, add(mul(v("j_0"), i(16)), v("j_1"))));
  iters.push_back(iter("vk", 7, IterKind::Reduce, v("k")));
  Stmt* y = find_block(f, "Y");
  auto body = std::move(y->body);
  auto init = std::move(y->init);
  f.body = make_for("i", 5, make_for("j_0", 4, make_for("k", 7, make_for("j_1", 16,
                    block("Y", std::move(iters), std::move(body), std::move(init)),
                    ForKind::Vectorized))));
  std::string ir = check_against_interpreter(f);
  CHECK(ir.find("<16 x float>") != std::string::npos);
  CHECK((ir.find("fmul contract <16 x float>") != std::string::npos ||
         ir.find("llvm.fma.v16f32") != std::string::npos ||
         ir.find("llvm.fmuladd.v16f32") != std::string::npos));
  CHECK(ir.find("descent.notes") == std::string::npos);  // no scalar fallback
  // A[i, k] is the same in every lane: one scalar load, splatted.
  std::string before;
  std::string error;
  REQUIRE(cpu::emit_cpu_llvm(f, cpu::CpuOptions{}, false, &before, &error));
  CHECK(before.find("load <16 x float>") != std::string::npos);
  CHECK(before.find("store <16 x float>") != std::string::npos);
  CHECK(before.find("load float, ptr") != std::string::npos);
}

// out[i, j] = x[i, j] op y[...] for elementwise tests; j vectorized.
PrimFunc elementwise(int64_t m, int64_t n, ExprPtr value, std::vector<Buffer> inputs,
                     ForKind j_kind = ForKind::Vectorized) {
  PrimFunc f;
  f.name = "ew";
  f.buffers = std::move(inputs);
  for (size_t b = 0; b < f.buffers.size(); ++b) f.params.push_back(static_cast<int>(b));
  f.buffers.push_back(buffer("out", {m, n}, BufferRole::Output));
  f.output = static_cast<int>(f.buffers.size()) - 1;
  std::vector<IterVar> iters;
  iters.push_back(iter("vi", m, IterKind::Spatial, v("i")));
  iters.push_back(iter("vj", n, IterKind::Spatial, v("j")));
  f.body = make_for("i", m, make_for("j", n,
                    block("out", std::move(iters), make_store(f.output, idx(v("vi"), v("vj")),
                                                              std::move(value))),
                    j_kind));
  return f;
}

TEST_CASE("vectorized broadcast and gather loads") {
  SUBCASE("broadcast: x[i] + y[j]") {
    PrimFunc f = elementwise(3, 16, add(load(0, idx(v("vi"))), load(1, idx(v("vj")))),
                             {buffer("x", {3}, BufferRole::Input), buffer("y", {16}, BufferRole::Input)});
    std::string ir = check_against_interpreter(f);
    CHECK(ir.find("<16 x float>") != std::string::npos);
  }
  SUBCASE("gather: A[j, i] (stride 5 across lanes)") {
    PrimFunc f = elementwise(5, 8, mul(load(0, idx(v("vj"), v("vi"))), float_imm(2)),
                             {buffer("A", {8, 5}, BufferRole::Input)});
    check_against_interpreter(f);
  }
  SUBCASE("scatter: out[j, i] is a strided store") {
    PrimFunc f;
    f.name = "transpose";
    f.buffers = {buffer("A", {4, 8}, BufferRole::Input), buffer("out", {8, 4}, BufferRole::Output)};
    f.params = {0};
    f.output = 1;
    std::vector<IterVar> iters;
    iters.push_back(iter("vi", 4, IterKind::Spatial, v("i")));
    iters.push_back(iter("vj", 8, IterKind::Spatial, v("j")));
    f.body = make_for("i", 4, make_for("j", 8, block("out", std::move(iters),
                      make_store(1, idx(v("vj"), v("vi")), load(0, idx(v("vi"), v("vj"))))),
                      ForKind::Vectorized));
    check_against_interpreter(f);
  }
  SUBCASE("non-affine indices (div/mod of a fused loop) fall back to scalar code") {
    // for f in vectorized(24): out[f / 6, f % 6] = A[f / 6, f % 6] * 2
    PrimFunc f;
    f.name = "fused";
    f.buffers = {buffer("A", {4, 6}, BufferRole::Input), buffer("out", {4, 6}, BufferRole::Output)};
    f.params = {0};
    f.output = 1;
    std::vector<IterVar> iters;
    iters.push_back(iter("vi", 4, IterKind::Spatial, binary(Op::Div, v("f"), i(6))));
    iters.push_back(iter("vj", 6, IterKind::Spatial, binary(Op::Mod, v("f"), i(6))));
    f.body = make_for("f", 24, block("out", std::move(iters),
                      make_store(1, idx(v("vi"), v("vj")),
                                 mul(load(0, idx(v("vi"), v("vj"))), float_imm(2)))),
                      ForKind::Vectorized);
    std::string ir = check_against_interpreter(f);
    CHECK(ir.find("loop 'f': the store to 'out' has an index that is not affine in the lane; "
                  "emitted as scalar code") != std::string::npos);
  }
  SUBCASE("a vectorized loop longer than 64 lanes runs in chunks") {
    PrimFunc f = elementwise(2, 192, add(load(0, idx(v("vi"), v("vj"))), float_imm(1)),
                             {buffer("x", {2, 192}, BufferRole::Input)});
    std::string ir = check_against_interpreter(f);
    CHECK(ir.find("<64 x float>") != std::string::npos);
  }
  SUBCASE("a prime extent over 64 is a serial loop") {
    PrimFunc f = elementwise(2, 67, add(load(0, idx(v("vi"), v("vj"))), float_imm(1)),
                             {buffer("x", {2, 67}, BufferRole::Input)});
    std::string ir = check_against_interpreter(f);
    CHECK(ir.find("loop 'j': no vector width divides its extent 67") != std::string::npos);
  }
}

TEST_CASE("parallel loops with 1 and 2 threads") {
  PrimFunc f = matmul(33, 20, 11);
  f.body->for_kind = ForKind::Parallel;  // i
  std::string one = check_against_interpreter(f, 1);
  CHECK(one.find("descent_parallel_for") == std::string::npos);  // 1 thread: a plain loop
  std::string two = check_against_interpreter(f, 2);
  CHECK(two.find("call void @descent_parallel_for") != std::string::npos);
  CHECK(two.find("define internal void @mm_par_0(ptr") != std::string::npos);
  SUBCASE("a parallel loop inside a serial one, vectorized inside") {
    PrimFunc g = matmul(6, 32, 4);
    g.body->body->for_kind = ForKind::Parallel;  // j
    std::swap(g.body->body->body->var, g.body->body->var);  // loops i, k, j: j innermost
    // vj/vk bindings use names, so swapping the loop variables swaps the loops.
    g.body->body->for_kind = ForKind::Serial;
    g.body->body->body->for_kind = ForKind::Parallel;
    std::swap(g.body->body->extent, g.body->body->body->extent);
    check_against_interpreter(g, 2);
  }
}

TEST_CASE("the thread pool covers every iteration once") {
  std::vector<int> hits(1000, 0);
  auto body = [](void* ctx, int64_t lo, int64_t hi) {
    auto* h = static_cast<std::vector<int>*>(ctx);
    for (int64_t k = lo; k < hi; ++k) (*h)[static_cast<size_t>(k)] += 1;
  };
  for (int threads : {1, 2, 3, 7}) cpu::parallel_for(body, &hits, 1000, threads);
  for (int h : hits) REQUIRE(h == 4);
  cpu::parallel_for(body, &hits, 0, 2);  // nothing to do
  CHECK(hits[0] == 4);
  CHECK(cpu::hardware_threads() >= 1);
}

TEST_CASE("the thread pool: every extent and thread count, back to back, and from two callers") {
  // Chunks come from one shared counter: small extents (fewer iterations than chunks), odd
  // ones, and jobs posted while a worker may still be finishing the last are each covered
  // exactly once.
  auto body = [](void* ctx, int64_t lo, int64_t hi) {
    auto* h = static_cast<std::vector<std::atomic<int>>*>(ctx);
    for (int64_t k = lo; k < hi; ++k) (*h)[static_cast<size_t>(k)].fetch_add(1);
  };
  for (int threads : {2, 3, 8})
    for (int64_t extent : {1, 2, 3, 7, 8, 9, 63, 64, 65, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(extent));
      for (int round = 0; round < 50; ++round) cpu::parallel_for(body, &hits, extent, threads);
      for (auto& h : hits) REQUIRE(h.load() == 50);
    }
  // Jobs of different sizes back to back: a worker still holding the last job's counter
  // must never take a chunk of a job that has fewer (once a phantom chunk ran past the end
  // and left the caller waiting for ever).
  {
    std::vector<std::atomic<int>> hits(64);
    const int64_t extents[] = {64, 1, 33, 2, 64, 5, 17, 3};
    int expect[64] = {};
    for (int round = 0; round < 20000; ++round) {
      int64_t extent = extents[round % 8];
      cpu::parallel_for(body, &hits, extent, 2 + round % 3);
      for (int64_t k = 0; k < extent; ++k) ++expect[k];
    }
    for (size_t k = 0; k < 64; ++k) REQUIRE(hits[k].load() == expect[k]);
  }
  // Two threads calling at once are served one after the other.
  std::vector<std::atomic<int>> a(777), b(333);
  std::thread other([&] {
    for (int round = 0; round < 200; ++round) cpu::parallel_for(body, &b, 333, 2);
  });
  for (int round = 0; round < 200; ++round) cpu::parallel_for(body, &a, 777, 2);
  other.join();
  for (auto& h : a) REQUIRE(h.load() == 200);
  for (auto& h : b) REQUIRE(h.load() == 200);
}

TEST_CASE("the default thread count follows the affinity mask, not the machine's CPU count") {
  // As `taskset -c 0 descent ...` does: a thread allowed one CPU gets one thread, so its
  // parallel loops run inline instead of waiting for a worker on a CPU it may not use.
  int seen = 0;
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) seen = cpu::hardware_threads();
  });
  pinned.join();
  CHECK(seen == 1);
  cpu_set_t all;
  REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0);
  CHECK(cpu::hardware_threads() <= CPU_COUNT(&all));
}

TEST_CASE("local buffers inside an Allocate, and the init of a split reduction") {
  // for i: alloc Y_local[1, 8]; for j, k_0, k_1: Y_local[0, j] += A[i, k] * B[k, j]
  //        (init when k_0*3 + k_1 == 0); for j: Y[i, j] = Y_local[0, j]
  PrimFunc f = matmul(4, 8, 6);
  f.buffers.push_back(buffer("Y_local", {1, 8}, BufferRole::Temp, Scope::Local));
  const int local = 3;
  std::vector<IterVar> iters;
  iters.push_back(iter("vi", 4, IterKind::Spatial, v("i")));
  iters.push_back(iter("vj", 8, IterKind::Spatial, v("j")));
  iters.push_back(iter("vk", 6, IterKind::Reduce, add(mul(v("k_0"), i(3)), v("k_1"))));
  auto body = make_store(local, idx(i(0), v("vj")),
                         add(load(local, idx(i(0), v("vj"))),
                             mul(load(0, idx(v("vi"), v("vk"))), load(1, idx(v("vk"), v("vj"))))));
  auto init = make_store(local, idx(i(0), v("vj")), float_imm(0));
  std::vector<IterVar> wb;
  wb.push_back(iter("vi", 4, IterKind::Spatial, v("i")));
  wb.push_back(iter("vj", 8, IterKind::Spatial, v("j")));
  std::vector<StmtPtr> seq;
  seq.push_back(make_for("j", 8, make_for("k_0", 2, make_for("k_1", 3,
                block("Y_local", std::move(iters), std::move(body), std::move(init)),
                ForKind::Unrolled))));
  seq.push_back(make_for("j", 8, block("Y", std::move(wb),
                make_store(2, idx(v("vi"), v("vj")), load(local, idx(i(0), v("vj"))))),
                ForKind::Vectorized));
  auto alloc = std::make_unique<Stmt>(StmtKind::Allocate);
  alloc->buffer = local;
  alloc->body = make_seq(std::move(seq));
  f.body = make_for("i", 4, std::move(alloc), ForKind::Parallel);
  check_against_interpreter(f, 1);
  check_against_interpreter(f, 2);
}

TEST_CASE("loops the vector form must not take: a vectorized reduction, per-thread locals") {
  SUBCASE("k vectorized: every lane updates Y[i, j], so the loop runs as scalar code") {
    PrimFunc f = matmul(3, 5, 8);
    f.body->body->body->for_kind = ForKind::Vectorized;  // k
    std::string ir = check_against_interpreter(f);
    CHECK(ir.find("loop 'k': block 'Y': its init condition differs between lanes; emitted as "
                  "scalar code") != std::string::npos);
  }
  SUBCASE("a Local buffer allocated inside a parallel loop is private to each iteration") {
    // for i in parallel: alloc tmp; for j: tmp[0, j] = A[i, j] * 2;  for j: out[i, j] = tmp[0, j] + 1
    // Without the Allocate, tmp would live for the whole function and be shared by the
    // threads (the IR's rule, see cpu/codegen_loops.cpp): a race, which this case once had.
    PrimFunc f;
    f.name = "private";
    f.buffers = {buffer("A", {64, 16}, BufferRole::Input), buffer("out", {64, 16}, BufferRole::Output),
                 buffer("tmp", {1, 16}, BufferRole::Temp, Scope::Local)};
    f.params = {0};
    f.output = 1;
    std::vector<IterVar> a, b;
    a.push_back(iter("vi", 64, IterKind::Spatial, v("i")));
    a.push_back(iter("vj", 16, IterKind::Spatial, v("j")));
    b.push_back(iter("vi", 64, IterKind::Spatial, v("i")));
    b.push_back(iter("vj", 16, IterKind::Spatial, v("j")));
    std::vector<StmtPtr> seq;
    seq.push_back(make_for("j", 16, block("tmp", std::move(a),
                  make_store(2, idx(i(0), v("vj")), mul(load(0, idx(v("vi"), v("vj"))), float_imm(2))))));
    seq.push_back(make_for("j", 16, block("out", std::move(b),
                  make_store(1, idx(v("vi"), v("vj")), add(load(2, idx(i(0), v("vj"))), float_imm(1)))),
                  ForKind::Vectorized));
    auto alloc = std::make_unique<Stmt>(StmtKind::Allocate);
    alloc->buffer = 2;
    alloc->body = make_seq(std::move(seq));
    f.body = make_for("i", 64, std::move(alloc), ForKind::Parallel);
    for (int run = 0; run < 8; ++run) check_against_interpreter(f, 2);
  }
}

TEST_CASE("block predicates, if statements and lane-varying predicates") {
  // i split 3 x 4 over an extent of 10: T.where(i_0 * 4 + i_1 < 10).
  auto make = [](ForKind inner) {
    PrimFunc f;
    f.name = "pred";
    f.buffers = {buffer("x", {10}, BufferRole::Input), buffer("out", {10}, BufferRole::Output)};
    f.params = {0};
    f.output = 1;
    std::vector<IterVar> iters;
    iters.push_back(iter("vi", 10, IterKind::Spatial, add(mul(v("i_0"), i(4)), v("i_1"))));
    auto pred = binary(Op::Lt, add(mul(v("i_0"), i(4)), v("i_1")), i(10));
    f.body = make_for("i_0", 3, make_for("i_1", 4, block("out", std::move(iters),
                      make_store(1, idx(v("vi")), unary(Op::Exp, load(0, idx(v("vi"))))),
                      nullptr, std::move(pred)), inner));
    return f;
  };
  check_against_interpreter(make(ForKind::Serial));
  check_against_interpreter(make(ForKind::Unrolled));
  std::string ir = check_against_interpreter(make(ForKind::Vectorized));
  CHECK(ir.find("loop 'i_1': the out.where condition differs between lanes; emitted as scalar "
                "code") != std::string::npos);
  SUBCASE("an If statement") {
    PrimFunc f = make(ForKind::Serial);
    Stmt* b = find_block(f, "out");
    ExprPtr cond = std::move(b->predicate);
    StmtPtr moved = clone(*b);
    f.body->body->body = make_if(std::move(cond), std::move(moved));
    check_against_interpreter(f);
  }
}

TEST_CASE("max, min, exp, log, sqrt, abs, select and nan") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x, y;
  std::string error;
  REQUIRE(tensor::rand({2, 16}, 3, &x, &error));
  REQUIRE(tensor::rand({2, 16}, 4, &y, &error));
  x.data[0] = nan;
  y.data[1] = nan;
  x.data[2] = nan;
  y.data[2] = nan;
  std::vector<Buffer> ins = {buffer("x", {2, 16}, BufferRole::Input),
                             buffer("y", {2, 16}, BufferRole::Input)};
  auto X = [] { return load(0, idx(v("vi"), v("vj"))); };
  auto Y = [] { return load(1, idx(v("vi"), v("vj"))); };
  for (ForKind kind : {ForKind::Serial, ForKind::Vectorized}) {
    CAPTURE(for_kind_name(kind));
    Tensor got_max;
    {
      PrimFunc f = elementwise(2, 16, binary(Op::Max, X(), Y()), ins, kind);
      check_against_interpreter(f, 1, {x, y});
      std::unique_ptr<cpu::CpuKernel> k;
      REQUIRE(cpu::compile_cpu(f, {}, &k, &error));
      REQUIRE(k->run({&x, &y}, &got_max, &error));
      CHECK(std::isnan(got_max.data[0]));  // max(nan, y) = (y > nan) ? y : nan = nan
      CHECK(got_max.data[1] == x.data[1]);  // max(x, nan) = (nan > x) ? nan : x = x
      CHECK(std::isnan(got_max.data[2]));
    }
    check_against_interpreter(elementwise(2, 16, binary(Op::Min, X(), Y()), ins, kind), 1, {x, y});
    check_against_interpreter(elementwise(2, 16, unary(Op::Exp, X()), ins, kind), 1, {x, y});
    check_against_interpreter(elementwise(2, 16, unary(Op::Log, unary(Op::Abs, X())), ins, kind), 1, {x, y});
    check_against_interpreter(elementwise(2, 16, unary(Op::Sqrt, unary(Op::Abs, Y())), ins, kind), 1, {x, y});
    check_against_interpreter(
        elementwise(2, 16, select(binary(Op::Gt, X(), float_imm(0)), X(), unary(Op::Neg, Y())), ins, kind),
        1, {x, y});
    check_against_interpreter(  // index math in a value: vi * 16 + vj as f32
        elementwise(2, 16, add(X(), add(mul(v("vi"), i(16)), v("vj"))), ins, kind), 1, {x, y});
  }
}

TEST_CASE("errors: shapes at run time, malformed loop nests at compile time") {
  PrimFunc f = matmul(4, 4, 4);
  std::unique_ptr<cpu::CpuKernel> kernel;
  std::string error;
  REQUIRE(cpu::compile_cpu(f, {}, &kernel, &error));
  Tensor a, b, out;
  REQUIRE(tensor::rand({4, 4}, 1, &a, &error));
  REQUIRE(tensor::rand({4, 5}, 1, &b, &error));
  CHECK_FALSE(kernel->run({&a, &b}, &out, &error));
  CHECK(error == "argument 2 ('B') has shape [4, 5] but the kernel was compiled for [4, 4]");
  CHECK_FALSE(kernel->run({&a}, &out, &error));
  CHECK(error == "expected 2 arguments, got 1");

  PrimFunc bad = matmul(4, 4, 4);
  find_block(bad, "Y")->iters[0].binding = var("nowhere");
  CHECK_FALSE(cpu::compile_cpu(bad, {}, &kernel, &error));
  CHECK(error.rfind("cpu: the loop nest of 'mm' is malformed: ", 0) == 0);
  std::string ir;
  CHECK_FALSE(cpu::emit_cpu_llvm(bad, {}, false, &ir, &error));
}

TEST_CASE("emit_cpu_llvm: the IR before and after optimisation") {
  PrimFunc f = matmul(4, 4, 4);
  std::string before, after, error;
  REQUIRE(cpu::emit_cpu_llvm(f, {}, false, &before, &error));
  REQUIRE(cpu::emit_cpu_llvm(f, {}, true, &after, &error));
  CHECK(before.find("define void @mm(ptr %args)") != std::string::npos);
  CHECK(before.find("i.loop:") != std::string::npos);
  CHECK(before.find("Y.init.then:") != std::string::npos);
  CHECK(before != after);
}

TEST_CASE("scheduled matmul: the bench schedule's structure on a small problem") {
  // tile + packed B panel (cache_read + compute_at) + register accumulators (cache_write +
  // reverse_compute_at + decompose_reduction), vectorized, unrolled and parallel.
  PrimFunc f = scheduled(matmul(64, 96, 40), R"(
    tile i j 8 32
    reorder j_0 i_0 k i_1 j_1
    cache_write Y local
    reverse_compute_at Y_writeback i_0
    decompose_reduction Y k
    cache_read Y B local
    compute_at B_local j_0
    vectorize B_local.ax1
    vectorize Y.j_1
    vectorize Y_init.j_1
    vectorize Y_writeback.ax1
    unroll Y.i_1
    unroll Y_init.i_1
    unroll Y_writeback.ax0
    parallel j_0
  )");
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    std::string ir = check_against_interpreter(f, threads);
    CHECK(ir.find("<32 x float>") != std::string::npos);
    CHECK(ir.find("descent.notes") == std::string::npos);
    // The accumulators live in registers: SROA promoted Y_local (no alloca is left).
    CHECK(ir.find("Y_local = alloca") == std::string::npos);
    CHECK(ir.find("fmul contract <32 x float>") != std::string::npos);
  }
}

TEST_CASE("scheduled matmul: split reduction and a non-dividing tile") {
  // 30 is not a multiple of 8: the tile leaves a predicate T.where(i_0 * 8 + i_1 < 30).
  PrimFunc f = scheduled(matmul(30, 32, 12), R"(
    tile i j 8 16
    split k 4
    reorder i_0 j_0 k_0 i_1 k_1 j_1
    vectorize j_1
    unroll k_1
  )");
  // The predicate does not depend on j_1, so the vector form stays.
  std::string ir = check_against_interpreter(f);
  CHECK(ir.find("descent.notes") == std::string::npos);
  CHECK(ir.find("<16 x float>") != std::string::npos);
}

// The schedules `descent bench --suite tensor` replays (bench/schedules/*.sched), on the
// prelude's kernels lowered from source at small sizes: they must stay valid and correct.
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The prelude's kernel `name`, lowered for these argument shapes.
PrimFunc lower_prelude(const std::string& name, const std::vector<std::vector<int64_t>>& shapes) {
  return descent::testing::lower_kernel_text(slurp(DESCENT_SOURCE_DIR "/tensor/prelude.ds"), shapes,
                                             name, "prelude.ds");
}

}  // namespace

TEST_CASE("bench/schedules/matmul.sched on the prelude's matmul") {
  PrimFunc f = lower_prelude("matmul", {{64, 48}, {48, 96}});
  tensor::Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(slurp(DESCENT_SOURCE_DIR "/bench/schedules/matmul.sched"), &error),
                  error);
  for (int threads : {1, 2}) {
    std::string ir = check_against_interpreter(s.func(), threads);
    CHECK(ir.find("<32 x float>") != std::string::npos);
    CHECK(ir.find("descent.notes") == std::string::npos);
  }
}

TEST_CASE("bench/schedules/linear_relu.sched on the prelude's linear_relu") {
  PrimFunc f = lower_prelude("linear_relu", {{1, 96}, {20, 96}});
  tensor::Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(
      s.apply_text(slurp(DESCENT_SOURCE_DIR "/bench/schedules/linear_relu.sched"), &error), error);
  for (int threads : {1, 2}) {
    std::string ir = check_against_interpreter(s.func(), threads);
    CHECK(ir.find("<32 x float>") != std::string::npos);
  }
}

namespace {

// Y[vi] = A[vi] for vi < `written` of Y's `size` elements: the rest of Y is never written,
// so it must read as the zeros the interpreter allocates it with.
PrimFunc partial_copy(int64_t size, int64_t written) {
  PrimFunc f;
  f.name = "partial";
  f.buffers = {buffer("A", {size}, BufferRole::Input), buffer("Y", {size}, BufferRole::Output)};
  f.params = {0};
  f.output = 1;
  std::vector<IterVar> iters;
  iters.push_back(iter("vi", written, IterKind::Spatial, v("i")));
  f.body = make_for("i", written, block("Y", std::move(iters), make_store(1, idx(v("vi")), load(0, idx(v("vi"))))));
  return f;
}

}  // namespace

TEST_CASE("defined_before_read: what a kernel overwrites whole, and what it must find zeroed") {
  PrimFunc mm = matmul(4, 8, 3);
  CHECK(tensor::defined_before_read(mm, mm.output));  // its init writes each Y before the sum reads it
  PrimFunc no_init = mm;
  no_init.body->body->body->body->init.reset();  // i / j / k / block: a sum onto whatever Y held
  CHECK_FALSE(tensor::defined_before_read(no_init, no_init.output));
  PrimFunc full = partial_copy(8, 8), half = partial_copy(8, 4);
  CHECK(tensor::defined_before_read(full, full.output));
  CHECK_FALSE(tensor::defined_before_read(half, half.output));  // Y[4..7] never written
  // A fused kernel: its intermediate Y is written whole before C reads it, and stays so
  // through a schedule that tiles, caches and decomposes the reduction.
  PrimFunc fused = descent::testing::lower_kernel_text(descent::testing::kMmRelu);
  int y = fused.find_buffer("Y");
  REQUIRE(y >= 0);
  CHECK(tensor::defined_before_read(fused, y));
  CHECK(tensor::defined_before_read(fused, fused.output));
  PrimFunc tiled = scheduled(fused, "tile Y.i Y.j 4 16\nreorder Y.i_0 Y.j_0 Y.k Y.i_1 Y.j_1\n"
                                    "cache_write Y local\nreverse_compute_at Y_writeback Y.j_0\n"
                                    "decompose_reduction Y Y.k\n");
  CHECK(tensor::defined_before_read(tiled, tiled.find_buffer("Y")));
  CHECK(tensor::defined_before_read(tiled, tiled.output));
  // The consumer first: C reads Y before anything wrote it.
  PrimFunc backwards = fused;
  std::swap(backwards.body->stmts[0], backwards.body->stmts[1]);
  CHECK_FALSE(tensor::defined_before_read(backwards, y));
}

TEST_CASE("outputs in recycled memory: cleared where the kernel does not write, never stale") {
  // A kernel that writes all of a [1024] output leaves it holding data when it is freed; the
  // next [1024] output reuses that storage. A kernel writing half of it must still show
  // zeros in the other half, as the interpreter does.
  PrimFunc full = partial_copy(1024, 1024), half = partial_copy(1024, 512);
  tensor::release_kept_storage();  // a full pool (after other tests) would keep nothing more
  cpu::CpuOptions options;
  std::unique_ptr<cpu::CpuKernel> k_full, k_half;
  std::string error;
  REQUIRE_MESSAGE(cpu::compile_cpu(full, options, &k_full, &error), error);
  REQUIRE_MESSAGE(cpu::compile_cpu(half, options, &k_half, &error), error);
  Tensor a;
  REQUIRE(tensor::full({1024}, 7.0f, &a, &error));
  for (int round = 0; round < 3; ++round) {
    {
      Tensor sevens;
      REQUIRE(k_full->run({&a}, &sevens, &error));
      CHECK(sevens.data[1000] == 7.0f);
    }  // freed: its storage waits for the next [1024]
    uint64_t reused = tensor::storage_stats().reused;
    Tensor got;
    REQUIRE(k_half->run({&a}, &got, &error));
    CHECK(tensor::storage_stats().reused > reused);  // it did get the sevens' storage
    CHECK(got.data[0] == 7.0f);
    CHECK(got.data[511] == 7.0f);
    CHECK(got.data[512] == 0.0f);
    CHECK(got.data[1023] == 0.0f);
  }
  check_against_interpreter(half);
}

TEST_CASE("comparisons as 0/1 masks equal the interpreter, vectorized and not") {
  PrimFunc f = descent::testing::lower_kernel_text(R"(kernel m(a: f32[n, k], b: f32[n, k]) -> f32[n, k] {
  c[i, j] = (a[i, j] < b[i, j]) + 2.0 * (a[i, j] <= 0.0) + 4.0 * (a[i, j] == a[i, j]) + 8.0 * (b[i, j] != 0.5) + 16.0 * (a[i, j] >= b[i, j]) + 32.0 * (a[i, j] > -0.25)
  return c
}
)", {{8, 32}, {8, 32}});
  check_against_interpreter(f);
  check_against_interpreter(scheduled(f, "split c.j 16\nvectorize c.j_1\n"));
}
