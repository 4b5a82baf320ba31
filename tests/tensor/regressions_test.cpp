// test_tensor_regressions: one case per bug the seeded random schedules
// (random_schedule_test.cpp) found, each the shortest schedule that showed it, asserting the
// fixed behaviour: either the steps keep the kernel's result (in the interpreter and, where
// the bug was in the backend, in compiled CPU code) or a step is refused with its reason.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <memory>
#include <string>
#include <vector>

#include "cpu/cpu.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;
using namespace descent::cpu;
using descent::testing::lower_kernel_text;

namespace {

// The random test's kernels, with its shapes.
const char* kMatmul = R"(kernel matmul(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  C[i, j] = sum(r) A[i, r] * B[r, j]
  return C
})";
const char* kLinearRelu = R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
})";
const char* kSoftmax = R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
})";
const char* kAdd = R"(kernel add(a: f32[n, m], b: f32[n, m]) -> f32[n, m] {
  out[i, j] = a[i, j] + b[i, j]
  return out
})";
const char* kConv2d = R"(kernel conv2d(x: f32[10, 12], k: f32[3, 3]) -> f32[8, 10] {
  out[i, j] = sum(p, q) x[i + p, j + q] * k[p, q]
  return out
})";

struct Case {
  tir::PrimFunc original;
  Schedule sched;
  std::vector<Tensor> inputs;
  std::vector<const Tensor*> args;
  Tensor expected;

  Case(const char* src, const std::vector<std::vector<int64_t>>& shapes)
      : original(lower_kernel_text(src, shapes)), sched(original) {
    std::string error;
    inputs.resize(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      REQUIRE(rand(shapes[i], int64_t(i + 1), &inputs[i], &error));
      args.push_back(&inputs[i]);
    }
    REQUIRE_MESSAGE(tir::interpret(original, args, &expected, &error), error);
  }

  // Applies the steps; all must be accepted.
  void apply(const std::vector<std::string>& steps) {
    for (const std::string& st : steps) {
      std::string error;
      INFO(st);
      REQUIRE_MESSAGE(sched.apply(st, &error), error);
    }
  }

  // The refusal message of one more step ("" when it is accepted); the function must not
  // change when it is refused.
  std::string refusal(const std::string& step) {
    std::string before = tir::print_script(sched.func());
    std::string error;
    if (sched.apply(step, &error)) return "";
    CHECK(tir::print_script(sched.func()) == before);
    return error;
  }

  // The scheduled function is well formed and computes the original's result, in the
  // interpreter and (cpu) in compiled code with two threads.
  void check_result(bool cpu) {
    std::string why;
    REQUIRE_MESSAGE(tir::verify(sched.func(), &why), why);
    Tensor got;
    REQUIRE_MESSAGE(tir::interpret(sched.func(), args, &got, &why), why);
    CHECK_MESSAGE(allclose(expected, got, 1e-4, &why), why);
    if (!cpu) return;
    CpuOptions options;
    options.threads = 2;
    std::unique_ptr<CpuKernel> k;
    REQUIRE_MESSAGE(compile_cpu(sched.func(), options, &k, &why), why);
    Tensor compiled;
    REQUIRE_MESSAGE(k->run(args, &compiled, &why), why);
    CHECK_MESSAGE(allclose(expected, compiled, 1e-4, &why), why);
  }
};

Case matmul() { return Case(kMatmul, {{16, 24}, {24, 20}}); }
Case linear_relu() { return Case(kLinearRelu, {{2, 40}, {12, 40}}); }
Case softmax() { return Case(kSoftmax, {{6, 10}}); }
Case add() { return Case(kAdd, {{10, 14}, {10, 14}}); }
Case conv2d() { return Case(kConv2d, {{10, 12}, {3, 3}}); }

}  // namespace

// ---- 1. CPU backend: a parallel loop and a function-level local buffer -----------------------

TEST_CASE("parallel loop writing a local buffer that the nest after it reads (CPU)") {
  // C_local has no Allocate, so it is one buffer for the whole function; the outlined
  // parallel body used to get its own zeroed copy, and the writeback read zeros.
  Case c = matmul();
  c.apply({"cache_write C local", "parallel i"});
  c.check_result(true);
}

TEST_CASE("parallel loop reading a local buffer filled before it (CPU)") {
  Case c = add();
  c.apply({"cache_read out a local", "parallel j"});
  c.check_result(true);
}

TEST_CASE("a local buffer allocated inside the parallel loop stays private per iteration (CPU)") {
  // compute_at compacts C_local into an Allocate inside i: each thread needs its own.
  Case c = matmul();
  c.apply({"cache_write C local", "reverse_compute_at C_writeback C.i", "parallel C.i"});
  CHECK(tir::print_script(c.sched.func()).find("T.alloc_buffer((1, 20)") != std::string::npos);
  c.check_result(true);
}

// ---- 2. decompose_reduction above a loop that repeats the reduction -------------------------

TEST_CASE("decompose_reduction refuses to hoist the init out of a loop that repeats the reduction") {
  Case c = softmax();
  c.apply({"compute_at s out.j"});
  CHECK(c.refusal("decompose_reduction s s.j") ==
        "cannot decompose_reduction 's' at 's.j': loop 'j' feeds none of its axes, so it "
        "repeats the reduction; the init would run only once for all the repeats (decompose "
        "at a loop inside 'j')");
  // Inside the repeating loop the init runs before each repeat: accepted and correct.
  c.apply({"decompose_reduction s ax0"});
  c.check_result(false);

  Case d = softmax();
  d.apply({"reverse_compute_at s e.j", "rfactor s e.j"});
  CHECK(d.refusal("decompose_reduction s e.j") ==
        "cannot decompose_reduction 's' at 'e.j': loop 'j' feeds none of its axes, so it "
        "repeats the reduction; the init would run only once for all the repeats (decompose "
        "at a loop inside 'j')");
  d.apply({"decompose_reduction s rf"});
  d.check_result(false);
}

TEST_CASE("decompose_reduction refuses loops that reach one element twice (a sliding window)") {
  // The hand-built nest: for i in 0..4: for a in 0..3: for k in 0..5:
  //   S(vs = i + a, vk = k) — each element of S is recomputed by up to three i's.
  tir::PrimFunc f;
  f.name = "window";
  f.buffers = {{"A", {5}, tir::Scope::Global, tir::BufferRole::Input},
               {"S", {6}, tir::Scope::Global, tir::BufferRole::Output}};
  f.params = {0};
  f.output = 1;
  auto b = std::make_unique<tir::Stmt>(tir::StmtKind::Block);
  b->name = "S";
  b->iters.push_back({"vs", 6, tir::IterKind::Spatial,
                      tir::binary(tir::Op::Add, tir::var("i"), tir::var("a"))});
  b->iters.push_back({"vk", 5, tir::IterKind::Reduce, tir::var("k")});
  std::vector<tir::ExprPtr> at, self, in;
  at.push_back(tir::var("vs"));
  self.push_back(tir::var("vs"));
  in.push_back(tir::var("vk"));
  std::vector<tir::ExprPtr> init_at;
  init_at.push_back(tir::var("vs"));
  b->init = tir::make_store(1, std::move(init_at), tir::float_imm(0));
  b->body = tir::make_store(1, std::move(at),
                            tir::binary(tir::Op::Add, tir::load(1, std::move(self)),
                                        tir::load(0, std::move(in))));
  f.body = tir::make_for(
      "i", 4, tir::make_for("a", 3, tir::make_for("k", 5, std::move(b))));
  std::string why;
  REQUIRE_MESSAGE(tir::verify(f, &why), why);
  tir::PrimFunc g = f;
  std::string error;
  CHECK_FALSE(sched::decompose_reduction(g, "S", "i", &error));
  CHECK(error ==
        "cannot decompose_reduction 'S' at 'i': loops 'i' and 'a' reach the same element of "
        "'S' more than once, so its reduction repeats; the init would run only once for all the "
        "repeats");
  CHECK(tir::print_script(g) == tir::print_script(f));
  // At k only one (i, a) is in flight: fine.
  CHECK(sched::decompose_reduction(g, "S", "k", &error));
}

TEST_CASE("rfactor of a compacted accumulator keeps the partial sums in its allocation") {
  // C_local is compacted per iteration of j_1 and indexed relative to it. rfactor used to put
  // the partial sums in a global C_local_rf indexed the same way: one buffer for every j_1,
  // whose init decompose_reduction then hoisted out of j_1, summing twelve columns into one
  // (and a parallel loop would have raced on it). Now C_local_rf is local and allocated next
  // to C_local, and an init cannot leave that allocation.
  Case c = matmul();
  c.apply({"tile j r 12 8", "reorder j_1 r_0 r_1", "cache_write C local",
           "reverse_compute_at C_writeback j_1", "rfactor C r_0"});
  std::string text = tir::print_script(c.sched.func());
  CHECK(text.find("C_local_rf = T.alloc_buffer((1, 1, 3), \"float32\", scope=\"local\")") !=
        std::string::npos);
  c.check_result(true);
  CHECK(c.refusal("decompose_reduction C_rf j_1") ==
        "cannot decompose_reduction 'C_rf' at 'j_1': it accumulates in 'C_local_rf', which is "
        "allocated inside 'j_1': the init cannot move above that");
  CHECK(c.refusal("decompose_reduction C_rf i") ==
        "cannot decompose_reduction 'C_rf' at 'i': it accumulates in 'C_local_rf', which is "
        "allocated inside 'j_1': the init cannot move above that");
  c.apply({"decompose_reduction C_rf r_0", "parallel i"});
  c.check_result(true);
}

// ---- 3. rfactor of a split reduce loop, then compute_at -------------------------------------

TEST_CASE("rfactor gives each remaining reduce loop a dense axis, so compute_at stays inside") {
  // rfactor used to leave vr = reduce(24, r_0 * 24): a domain of 24 for one value, which
  // compute_at rebuilt as a 24-iteration loop, reading A[vi, vr + vr_1] past the end.
  Case c = matmul();
  c.apply({"split r 24", "rfactor C r_1"});
  std::string text = tir::print_script(c.sched.func());
  CHECK(text.find("vi, vj, vr_1, vr_0 = T.axis.remap(\"SSSR\", [i, j, r_1, r_0])") !=
        std::string::npos);
  CHECK(text.find("A[vi, vr_0 * 24 + vr_1]") != std::string::npos);
  c.apply({"compute_at C_rf C.i"});
  c.check_result(true);

  Case d = linear_relu();
  d.apply({"split r 12", "rfactor out_acc r_1", "compute_at out_acc_rf rf"});
  d.check_result(true);
}

TEST_CASE("rfactor with a split that does not divide keeps its guard through compute_at") {
  // 24 = 5 * 5 - 1: the partial sums must skip vr_0 * 5 + vr_1 = 24, a condition on two
  // of the block's axes at once. A loop predicate (r_0 * 5 + r_1 < 24) would not survive
  // compute_at, which rebuilds the loops from the axes, so rfactor guards the update itself.
  Case c = matmul();
  c.apply({"split r 5", "rfactor C r_1", "compute_at C_rf C.i"});
  CHECK(tir::print_script(c.sched.func()).find("if vr_0 * 5 + vr_1 < 24:") != std::string::npos);
  c.check_result(true);

  Case d = matmul();  // the outer piece factored: vr = vr_1 + vr_0 * 5
  d.apply({"split r 5", "rfactor C r_0", "compute_at C_rf C.j"});
  d.check_result(true);

  Case e = conv2d();  // one of two reduce axes, the other kept as it is
  e.apply({"split q 2", "rfactor out q_1", "compute_at out_rf out.i"});
  e.check_result(false);
}

// ---- 4. blocks moved or inlined away from a compacted buffer -------------------------------

TEST_CASE("compute_inline refuses to carry reads of a compacted buffer into another nest") {
  Case c = add();
  c.apply({"cache_read out b local", "cache_write out shared", "reverse_compute_at out b_local.ax1"});
  CHECK(c.refusal("compute_inline out") ==
        "cannot compute_inline 'out': its value uses the loop 'ax0', which does not enclose "
        "'out_writeback'");
  c.check_result(false);
}

TEST_CASE("compute_at refuses to move a block out of the allocation of a buffer it reads") {
  Case c = add();
  c.apply({"cache_read out b local", "reverse_compute_at out ax0", "cache_write out local"});
  CHECK(c.refusal("compute_at out out_writeback.ax1") ==
        "cannot compute_at 'out' at 'out_writeback.ax1': block 'out' would read 'b_local' "
        "outside its allocation (under loop 'ax0')");
  c.check_result(false);
}

TEST_CASE("tir::verify: an access outside its buffer's Allocate") {
  // for i in 0..4: { allocate T: T[0] = A[i] }  ;  Y[0] = T[0]   (the second is outside)
  tir::PrimFunc f;
  f.name = "escape";
  f.buffers = {{"A", {4}, tir::Scope::Global, tir::BufferRole::Input},
               {"Y", {1}, tir::Scope::Global, tir::BufferRole::Output},
               {"T", {1}, tir::Scope::Local, tir::BufferRole::Temp}};
  f.params = {0};
  f.output = 1;
  auto index = [](tir::ExprPtr e) {
    std::vector<tir::ExprPtr> v;
    v.push_back(std::move(e));
    return v;
  };
  auto alloc = std::make_unique<tir::Stmt>(tir::StmtKind::Allocate);
  alloc->buffer = 2;
  alloc->body = tir::make_store(2, index(tir::int_imm(0)), tir::load(0, index(tir::var("i"))));
  std::vector<tir::StmtPtr> seq;
  seq.push_back(tir::make_for("i", 4, std::move(alloc)));
  seq.push_back(tir::make_store(1, index(tir::int_imm(0)), tir::load(2, index(tir::int_imm(0)))));
  f.body = tir::make_seq(std::move(seq));
  std::string why;
  CHECK_FALSE(tir::verify(f, &why));
  CHECK(why == "load of 'T' outside its allocation (in function 'escape')");
  // Inside it, the same load is fine.
  f.body->stmts.pop_back();
  CHECK(tir::verify(f, &why));
}

// ---- found by the 20000-schedule run after the fixes above ----------------------------------

TEST_CASE("reverse_compute_at refuses a strided producer region") {
  // Under j_1 (after reorder j_1 j_0) out writes every other column, j_0 * 2 + j_1; the
  // writeback used to copy the whole box [j_1, j_1 + 12], zeros included, over finished
  // columns.
  Case c = add();
  c.apply({"split j 2", "cache_write out local", "reorder j_1 j_0"});
  CHECK(c.refusal("reverse_compute_at out_writeback j_1") ==
        "cannot reverse_compute_at 'out_writeback' at 'j_1': the elements of 'out_local' "
        "written in one iteration of 'j_1' do not form a box (dimension 1 is strided)");
  c.check_result(false);
}

TEST_CASE("reverse_compute_at skips the iterations its producer's predicate skips") {
  // The split of a split overshoots (i_1_0 * 2 + i_1_1 reaches 5 of 5): out skips those
  // iterations, and the writeback moved under j must skip them too instead of copying an
  // unwritten out_shared over row i_0 * 5 + 5.
  Case c = add();
  c.apply({"split i 5", "tile i_0 i_1 2 2", "cache_write out shared",
           "reverse_compute_at out_writeback j"});
  CHECK(tir::print_script(c.sched.func()).find("T.where(i_1_0 * 2 + i_1_1 < 5") !=
        std::string::npos);
  c.check_result(true);
}

TEST_CASE("compute_at refuses to run a block where its compacted input holds other elements") {
  // B_shared holds one element per iteration of r; C_rf moved under rf (inside r) would
  // read all 24 of them from that one-element box.
  Case c = matmul();
  c.apply({"cache_read C B shared", "compute_at B_shared r", "rfactor C r"});
  CHECK(c.refusal("compute_at C_rf rf") ==
        "cannot compute_at 'C_rf' at 'rf': block 'C_rf' would access 'B_shared' outside the "
        "part of it allocated per iteration of 'r'");
  c.check_result(false);
}

TEST_CASE("rfactor's guard survives fuse and compute_at") {
  Case c = matmul();  // 24 = 2 * 22 - 20
  c.apply({"tile j r 17 22", "rfactor C r_1", "fuse r_0 C_rf.j_1", "compute_at C_rf C.j_0"});
  c.check_result(true);

  Case d = conv2d();  // the remaining reduce loop split again before the move
  d.apply({"split p 2", "rfactor out p_0", "split p_1 2", "compute_at out_rf rf"});
  d.check_result(false);
}

TEST_CASE("rfactor of a split of a split: the guard keeps the duplicate steps out") {
  // r = r_out * 3 + r_in, r_in split by 2 (r_in_0 * 2 + r_in_1 < 3): r_in = 3 would be the
  // next r_out's first step. Guarding only the end (< 24) let C_rf count it twice once
  // compute_at rebuilt the loops from the axes.
  Case c = matmul();
  c.apply({"split r 3 as r_out r_in", "tile r_out r_in 2 2", "rfactor C r_in_0"});
  CHECK(tir::print_script(c.sched.func()).find("if vr_in_0 * 2 + vr_in_1 < 3 and ") !=
        std::string::npos);
  c.apply({"compute_at C_rf C.j"});
  c.check_result(true);
}
