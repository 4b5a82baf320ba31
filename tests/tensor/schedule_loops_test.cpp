// test_tensor_schedule_loops: the loop primitives (split, tile, reorder, fuse, unroll,
// vectorize, parallel, bind) and loop addressing. Each transform is checked three ways: the
// printed loop nest against a golden file, tir::verify, and the reference interpreter giving
// the same numbers before and after on random inputs. Every refusal is checked word for word.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include "tests/golden.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/schedule/internal.h"  // the tree helpers tested below
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;
using descent::testing::lower_kernel_text;

namespace {

using descent::testing::kMatmul;
using descent::testing::kMmRelu;

// Extents that no power of two divides, to exercise split predicates.
const char* kAdd = R"(
kernel add(a: f32[n, m], b: f32[n, m]) -> f32[n, m] {
  out[i, j] = a[i, j] + b[i, j]
  return out
}
)";

tir::PrimFunc matmul() { return lower_kernel_text(kMatmul); }
tir::PrimFunc mm_relu() { return lower_kernel_text(kMmRelu); }
tir::PrimFunc add_100x30() { return lower_kernel_text(kAdd, {{100, 30}, {100, 30}}); }
tir::PrimFunc linear_relu_func();

// Interprets both functions on the same random inputs and compares the outputs.
void check_same_result(const tir::PrimFunc& before, const tir::PrimFunc& after) {
  std::string error;
  REQUIRE_MESSAGE(tir::verify(after, &error), error);
  std::vector<Tensor> inputs(before.params.size());
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < before.params.size(); ++i) {
    REQUIRE(rand(before.buffers[before.params[i]].shape, 17 + int64_t(i), &inputs[i], &error));
    args.push_back(&inputs[i]);
  }
  Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(before, args, &want, &error), error);
  REQUIRE_MESSAGE(tir::interpret(after, args, &got, &error), error);
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
}

// Compares against tests/tensor/golden/NAME.tir; DESCENT_UPDATE_GOLDEN=1 rewrites it.
void check_golden(const std::string& name, const std::string& text) {
  descent::testing::check_golden_file("tensor/golden/" + name + ".tir", text);
}

// Applies a schedule text; the transformed function must match the golden and compute
// what the original computes.
tir::PrimFunc scheduled(const tir::PrimFunc& f, const char* text, const char* golden) {
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(text, &error), error);
  check_golden(golden, tir::print_script(s.func()));
  check_same_result(f, s.func());
  return s.func();
}

// The error a step produces on f, checking that f is left exactly as it was.
std::string refusal(const tir::PrimFunc& f, const char* step) {
  tir::PrimFunc g = f;
  std::string error;
  CHECK_FALSE(apply_step(g, step, nullptr, &error));
  CHECK(tir::print_script(g) == tir::print_script(f));
  return error;
}

}  // namespace

// The hand-fused linear_relu: loops i, j hold the reduce loop r and then block out, so the
// nest below j is not perfect.
const char* kLinearRelu = R"(
kernel linear_relu(x: f32[4, 64], w: f32[32, 64]) -> f32[4, 32] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)";

// ---- Addressing loops ----------------------------------------------------------------

TEST_CASE("loop and block names: unique names stay short, shared ones are qualified") {
  tir::PrimFunc f = mm_relu();
  CHECK(sched::loop_names(f) == std::vector<std::string>{"Y.i", "Y.j", "k", "C.i", "C.j"});
  CHECK(sched::block_names(f) == std::vector<std::string>{"Y", "C"});
  CHECK(sched::loop_names(matmul()) == std::vector<std::string>{"i", "j", "k"});
}

TEST_CASE("find_loop: plain, qualified, ambiguous and missing names") {
  tir::PrimFunc f = mm_relu();
  std::string error;
  sched::LoopRef k = sched::find_loop(f, "k", &error);
  REQUIRE(k.loop);
  CHECK(k.loop->var == "k");
  CHECK(k.loop->extent == 128);
  REQUIRE(k.parent);
  CHECK(k.parent->var == "j");

  sched::LoopRef ci = sched::find_loop(f, "C.i", &error);
  REQUIRE(ci.loop);
  CHECK(ci.loop->var == "i");
  CHECK(sched::contains(ci.loop, tir::find_block(f, "C")));
  CHECK_FALSE(sched::contains(ci.loop, tir::find_block(f, "Y")));

  CHECK_FALSE(sched::find_loop(f, "i", &error).loop);
  CHECK(error == "loop 'i' is ambiguous: C.i, Y.i");
  CHECK_FALSE(sched::find_loop(f, "x", &error).loop);
  CHECK(error == "no loop 'x' (loops: Y.i, Y.j, k, C.i, C.j)");
  CHECK_FALSE(sched::find_loop(f, "C.k", &error).loop);
  CHECK(error == "block 'C' is not inside a loop 'k' (its loops: i, j)");
  CHECK_FALSE(sched::find_loop(f, "D.i", &error).loop);
  CHECK(error == "no block 'D' (blocks: Y, C)");
}

TEST_CASE("helpers: loops_above, only_child, is_perfect_chain, replace_stmt") {
  tir::PrimFunc f = linear_relu_func();
  tir::Stmt* acc = tir::find_block(f, "out_acc");
  tir::Stmt* out = tir::find_block(f, "out");
  REQUIRE(acc);
  REQUIRE(out);
  std::vector<tir::Stmt*> above = sched::loops_above(f, acc);
  REQUIRE(above.size() == 3);
  CHECK(above[0]->var == "i");
  CHECK(above[2]->var == "r");
  CHECK(sched::loops_above(f, out).size() == 2);
  CHECK(sched::is_perfect_chain({above[0], above[1]}));
  CHECK_FALSE(sched::is_perfect_chain(above));  // j holds r's nest and block out
  CHECK(sched::only_child(above[1]) == nullptr);
  CHECK(sched::parent_of(f, above[2]) != nullptr);
  CHECK(sched::fresh_loop_name(f, above[2], "j") == "j_1");
  CHECK(sched::fresh_loop_name(f, out, "r") == "r");  // r is not on out's path

  // Replacing a statement through its slot hands the old one back.
  tir::StmtPtr* slot = sched::slot_of(f, above[2]);
  REQUIRE(slot);
  CHECK(slot->get() == above[2]);
  tir::StmtPtr old = sched::replace_stmt(f, above[2], tir::make_for("w", 1, nullptr));
  CHECK(old.get() == above[2]);
  CHECK(sched::find_loop(f, "w", nullptr).loop != nullptr);
  CHECK(sched::replace_stmt(f, above[2], nullptr) == nullptr);  // no longer in f
}

// ---- split ---------------------------------------------------------------------------

TEST_CASE("split: a dividing factor gives i_0 * 32 + i_1 bindings") {
  tir::PrimFunc g = scheduled(matmul(), "split i 32", "sched_split_matmul");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"i_0", "i_1", "j", "k"});
}

TEST_CASE("split: a factor that does not divide guards every block with a predicate") {
  tir::PrimFunc g = scheduled(add_100x30(), "split i 32\nsplit j 7", "sched_split_pred_add");
  REQUIRE(tir::find_block(g, "out"));
  CHECK(tir::find_block(g, "out")->predicate);
}

TEST_CASE("split: custom names, repeated splits, and per-nest defaults") {
  tir::PrimFunc g = scheduled(matmul(), "split k 16 as ko ki\nsplit i 32\nsplit i_1 8",
                              "sched_split_names_matmul");
  CHECK(sched::loop_names(g) ==
        std::vector<std::string>{"i_0", "i_1_0", "i_1_1", "j", "ko", "ki"});
  // Y's and C's nests each get their own i_0 / i_1: names need only be unique on a path.
  tir::PrimFunc h = scheduled(mm_relu(), "split Y.i 32\nsplit C.i 32", "sched_split_mm_relu");
  CHECK(sched::loop_names(h) == std::vector<std::string>{"Y.i_0", "Y.i_1", "Y.j", "k", "C.i_0",
                                                         "C.i_1", "C.j"});
  // A default name taken on the path moves on: splitting the inner i of "i_1, i" gives
  // i_0 and i_1_1.
  tir::PrimFunc m =
      scheduled(matmul(), "split i 32 as i_1 i\nsplit i 4", "sched_split_taken_matmul");
  CHECK(sched::loop_names(m) == std::vector<std::string>{"i_1", "i_0", "i_1_1", "j", "k"});
  m = scheduled(matmul(), "split j 32 as j_0 j_1\nsplit i 4 as ii i_0x\nsplit k 8\nsplit k_1 2",
                "sched_split_deep_matmul");
  CHECK(sched::loop_names(m) ==
        std::vector<std::string>{"ii", "i_0x", "j_0", "j_1", "k_0", "k_1_0", "k_1_1"});
}

TEST_CASE("split and reorder above two blocks: both get the guard, the nest moves as one") {
  // linear_relu's j holds the reduction nest and the relu block: splitting j by 5 (32 is
  // not a multiple) guards both blocks; i and j still form a perfect pair to reorder.
  tir::PrimFunc g = scheduled(linear_relu_func(), "split j 5\nreorder j_0 i\nparallel j_0",
                              "sched_split_two_blocks_linear_relu");
  CHECK(tir::find_block(g, "out_acc")->predicate);
  CHECK(tir::find_block(g, "out")->predicate);
}

TEST_CASE("split: a factor equal to the extent and a factor of 1 are allowed") {
  scheduled(matmul(), "split i 128\nsplit j 1", "sched_split_edge_matmul");
}

TEST_CASE("split: refusals") {
  tir::PrimFunc f = matmul();
  CHECK(refusal(f, "split i 0") == "cannot split 'i': factor 0 must be at least 1");
  CHECK(refusal(f, "split i -4") == "cannot split 'i': factor -4 must be at least 1");
  CHECK(refusal(f, "split i 200") ==
        "cannot split 'i': factor 200 exceeds the extent 128 of loop 'i'");
  CHECK(refusal(f, "split i 32 as j x") ==
        "cannot split 'i': the name 'j' is already used by a loop on this path");
  CHECK(refusal(f, "split i 32 as a a") ==
        "cannot split 'i': the two new loops need different names");
  CHECK(refusal(f, "split i 32 as 1a b") == "cannot split 'i': '1a' is not a valid loop name");
  CHECK(refusal(f, "split q 2") == "no loop 'q' (loops: i, j, k)");
  CHECK(refusal(mm_relu(), "split i 2") == "loop 'i' is ambiguous: C.i, Y.i");
  Schedule s(f);
  REQUIRE(s.apply("parallel i", nullptr));
  tir::PrimFunc p = s.func();
  CHECK(refusal(p, "split i 4") == "cannot split 'i': it is already parallel");
}

// ---- tile / reorder ------------------------------------------------------------------

TEST_CASE("tile: split both loops and reorder to i_0 j_0 i_1 j_1") {
  tir::PrimFunc g = scheduled(matmul(), "tile i j 32 16", "sched_tile_matmul");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"i_0", "j_0", "i_1", "j_1", "k"});
  // The same nest by hand.
  Schedule s(matmul());
  std::string error;
  REQUIRE_MESSAGE(s.apply_text("split i 32\nsplit j 16\nreorder i_0 j_0 i_1 j_1", &error), error);
  CHECK(tir::print_script(s.func()) == tir::print_script(g));
  // Non-dividing factors keep the guard through the reorder.
  scheduled(add_100x30(), "tile i j 8 8", "sched_tile_pred_add");
}

TEST_CASE("reorder: named loops permute in their positions, others stay") {
  tir::PrimFunc g = scheduled(matmul(), "reorder k i", "sched_reorder_matmul");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"k", "j", "i"});
  g = scheduled(matmul(), "split j 16\nreorder k j_1\nreorder j_0 i",
                "sched_reorder_split_matmul");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"j_0", "i", "k", "j_1"});
  // Inside one stage of mm_relu, qualified names.
  scheduled(mm_relu(), "reorder Y.j Y.i\nreorder C.j C.i", "sched_reorder_mm_relu");
}

TEST_CASE("tile and reorder: refusals") {
  tir::PrimFunc f = matmul();
  CHECK(refusal(f, "tile i k 4 4") ==
        "cannot tile 'i' and 'k': 'k' must be the only statement in the body of 'i'");
  CHECK(refusal(f, "tile i j 0 4") == "cannot split 'i': factor 0 must be at least 1");
  CHECK(refusal(f, "reorder i i") == "cannot reorder i, i: loop 'i' appears twice");
  CHECK(refusal(f, "reorder i q") == "no loop 'q' (loops: i, j, k)");
  CHECK(refusal(mm_relu(), "reorder Y.i C.j") ==
        "cannot reorder Y.i, C.j: they are not nested in one another");
  CHECK(refusal(linear_relu_func(), "reorder r i") ==
        "cannot reorder r, i: they are not one perfect nest (the body of 'j' is not a single "
        "loop)");
  Schedule s(f);
  REQUIRE(s.apply_text("split i 8\nsplit j 8\nreorder i_0 j_0 i_1 j_1\nbind i_0 group.x\n"
                       "bind i_1 local.x",
                       nullptr));
  tir::PrimFunc b = s.func();
  CHECK(refusal(b, "reorder i_1 i_0") ==
        "cannot reorder i_1, i_0: loop 'i_1' bound to local.x would not be inside a loop bound "
        "to group.*");
}

TEST_CASE("reorder keeps the order of loops that mix spatial and reduce axes") {
  // Fusing conv2d's j (spatial) with p (reduce) makes a loop that feeds both vj and vp.
  // Running its pieces in another order would visit vp = 1 before vp = 0 for some vj, and
  // the init (run at vp == vq == 0) would wipe the partial sum.
  tir::PrimFunc f = lower_kernel_text(R"(
kernel conv2d(x: f32[10, 12], k: f32[3, 3]) -> f32[8, 10] {
  out[i, j] = sum(p, q) x[i + p, j + q] * k[p, q]
  return out
}
)");
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text("fuse j p\nreorder q j_p_fused\nsplit j_p_fused 2\n"
                               "split j_p_fused_0 5",
                               &error),
                  error);
  tir::PrimFunc g = s.func();
  check_same_result(f, g);
  CHECK(refusal(g, "tile j_p_fused_0_0 j_p_fused_0_1 2 3") ==
        "cannot tile 'j_p_fused_0_0' and 'j_p_fused_0_1': loops 'j_p_fused_0_0_1' and "
        "'j_p_fused_0_1_0' each feed both a spatial and a reduce axis of block 'out'; their "
        "order decides where its init runs");
  CHECK(refusal(g, "reorder j_p_fused_1 j_p_fused_0_0") ==
        "cannot reorder j_p_fused_1, j_p_fused_0_0: loops 'j_p_fused_0_0' and 'j_p_fused_1' "
        "each feed both a spatial and a reduce axis of block 'out'; their order decides where "
        "its init runs");
  // Pure loops still move freely around them.
  REQUIRE_MESSAGE(s.apply_text("reorder j_p_fused_0_0 q i", &error), error);
  check_same_result(f, s.func());
}

// ---- fuse ----------------------------------------------------------------------------

TEST_CASE("fuse: i, j -> i_j_fused with / and % bindings") {
  tir::PrimFunc g = scheduled(matmul(), "fuse i j", "sched_fuse_matmul");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"i_j_fused", "k"});
  CHECK(sched::find_loop(g, "i_j_fused", nullptr).loop->extent == 128 * 128);
  g = scheduled(add_100x30(), "split j 7\nfuse i j_0 as row\nparallel row", "sched_fuse_pred_add");
  CHECK(sched::loop_names(g) == std::vector<std::string>{"row", "j_1"});
  // A name may be reused for the fused loop.
  scheduled(mm_relu(), "fuse C.i C.j as i", "sched_fuse_mm_relu");
}

TEST_CASE("fuse: refusals") {
  tir::PrimFunc f = matmul();
  CHECK(refusal(f, "fuse i k") ==
        "cannot fuse 'i' and 'k': 'k' must be the only statement in the body of 'i'");
  CHECK(refusal(f, "fuse j i") ==
        "cannot fuse 'j' and 'i': 'i' must be the only statement in the body of 'j'");
  CHECK(refusal(f, "fuse i i") == "cannot fuse 'i' and 'i': a loop cannot be fused with itself");
  CHECK(refusal(f, "fuse i j as k") ==
        "cannot fuse 'i' and 'j': the name 'k' is already used by a loop on this path");
  Schedule s(f);
  REQUIRE(s.apply("parallel i", nullptr));
  tir::PrimFunc p = s.func();
  CHECK(refusal(p, "fuse i j") == "cannot fuse 'i' and 'j': 'i' is parallel");
}

// ---- unroll / vectorize / parallel / bind ----------------------------------------------

TEST_CASE("annotations: parallel, vectorize, unroll on a tiled matmul") {
  scheduled(matmul(),
            "parallel i\n"
            "split j 16\n"
            "split k 4\n"
            "reorder k_0 k_1 j_1\n"
            "unroll k_1\n"
            "vectorize j_1\n",
            "sched_annotate_matmul");
  // mm_relu: the relu stage vectorizes directly once split.
  scheduled(mm_relu(), "split C.j 8\nvectorize j_1\nparallel C.i\nparallel Y.i",
            "sched_annotate_mm_relu");
}

TEST_CASE("bind: an OpenCL-style grid of work-groups and work-items") {
  scheduled(matmul(),
            "tile i j 8 16\n"
            "bind i_0 group.y\n"
            "bind j_0 group.x\n"
            "bind i_1 local.y\n"
            "bind j_1 local.x\n",
            "sched_bind_matmul");
}

TEST_CASE("unroll, vectorize, parallel, bind: refusals") {
  tir::PrimFunc f = matmul();
  CHECK(refusal(f, "unroll k") == "cannot unroll 'k': extent 128 > 64; split it first");
  CHECK(refusal(f, "vectorize j") ==
        "cannot vectorize 'j': it is not innermost (loop 'k' is inside it)");
  CHECK(refusal(mm_relu(), "vectorize C.j") ==
        "cannot vectorize 'C.j': extent 128 > 64; split it first");
  Schedule s(f);
  REQUIRE(s.apply("split k 16", nullptr));
  tir::PrimFunc k16 = s.func();
  CHECK(refusal(k16, "vectorize k_1") ==
        "cannot vectorize 'k_1': it carries the reduction of block 'C' (reduce axis vk); use "
        "rfactor C k_1 first");
  CHECK(refusal(f, "parallel k") ==
        "cannot parallelize 'k': it carries the reduction of block 'C' (reduce axis vk); use "
        "rfactor C k first");
  CHECK(refusal(mm_relu(), "parallel k") ==
        "cannot parallelize 'k': it carries the reduction of block 'Y' (reduce axis vk); use "
        "rfactor Y k first");
  CHECK(refusal(f, "bind k group.x") ==
        "cannot bind 'k' to group.x: it carries the reduction of block 'C' (reduce axis vk); "
        "use rfactor C k first");
  CHECK(refusal(f, "bind i warp.x") ==
        "cannot bind 'i' to 'warp.x': the thread tags are group.x, group.y, group.z, local.x, "
        "local.y, local.z");
  CHECK(refusal(f, "bind j local.x") ==
        "cannot bind 'j' to local.x: a local.* loop must be inside a loop bound to group.*");

  Schedule p(f);
  REQUIRE(p.apply("parallel i", nullptr));
  tir::PrimFunc pi = p.func();
  CHECK(refusal(pi, "parallel j") == "cannot parallelize 'j': it is inside parallel loop 'i'");
  CHECK(refusal(pi, "parallel i") == "cannot parallelize 'i': it is already parallel");
  CHECK(refusal(pi, "unroll i") == "cannot unroll 'i': it is already parallel");
  CHECK(refusal(pi, "bind i group.x") == "cannot bind 'i': it is already parallel");
  Schedule pj(f);
  REQUIRE(pj.apply("parallel j", nullptr));
  tir::PrimFunc pjf = pj.func();
  CHECK(refusal(pjf, "parallel i") == "cannot parallelize 'i': it contains parallel loop 'j'");

  Schedule b(f);
  REQUIRE(b.apply("bind i group.x", nullptr));
  tir::PrimFunc bi = b.func();
  CHECK(refusal(bi, "bind j group.x") ==
        "cannot bind 'j' to group.x: loop 'i' around it is already bound to group.x");
  CHECK(refusal(bi, "vectorize i") == "cannot vectorize 'i': it is already bound to group.x");
  REQUIRE(b.apply("bind j local.x", nullptr));
  tir::PrimFunc bj = b.func();
  CHECK(refusal(bj, "bind i group.y") == "cannot bind 'i': it is already bound to group.x");
  CHECK(b.apply("split j 4", nullptr) == false);
}

// ---- Bad input never crashes -----------------------------------------------------------

TEST_CASE("every primitive on every loop of a small mm_relu either works or explains") {
  tir::PrimFunc f = lower_kernel_text(R"(
kernel mm_relu(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
)",
                              {{12, 10}, {10, 9}});
  std::vector<std::string> steps;
  for (const std::string& a : sched::loop_names(f)) {
    for (const char* p : {"split ", "unroll ", "vectorize ", "parallel "})
      steps.push_back(p + a + (std::string(p) == "split " ? " 4" : ""));
    for (const char* tag : {" group.x", " local.z", " thread.q"})
      steps.push_back("bind " + a + tag);
    steps.push_back("split " + a + " 12");
    for (const std::string& b : sched::loop_names(f)) {
      steps.push_back("fuse " + a + " " + b);
      steps.push_back("reorder " + a + " " + b);
      steps.push_back("tile " + a + " " + b + " 4 5");
    }
  }
  int worked = 0;
  for (const std::string& step : steps) {
    tir::PrimFunc g = f;
    std::string error;
    if (apply_step(g, step, nullptr, &error)) {
      ++worked;
      check_same_result(f, g);
    } else {
      CHECK_MESSAGE(!error.empty(), step);
      CHECK(tir::print_script(g) == tir::print_script(f));
    }
  }
  CHECK(worked > 20);
}

namespace {
tir::PrimFunc linear_relu_func() { return lower_kernel_text(kLinearRelu); }
}  // namespace

// ---- fission ----------------------------------------------------------------------------

TEST_CASE("fission: a fused epilogue gets a nest of its own, and the result is the same") {
  // linear_relu lowers to one nest: the reduction and the relu share the loops i and j.
  tir::PrimFunc f = lower_kernel_text(R"(
kernel linear_relu(x: f32[6, 20], w: f32[5, 20]) -> f32[6, 5] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)");
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply("fission out_acc.i", &error), error);
  std::string text = tir::print_script(s.func());
  INFO(text);
  // Two nests, each with its own i and j; the blocks are addressed through them.
  CHECK(text.find("for i, j, r in T.grid(6, 5, 20):") != std::string::npos);
  CHECK(text.find("for i, j in T.grid(6, 5):") != std::string::npos);
  check_same_result(f, s.func());
  // Now the reduction can be reordered and tiled alone, which the epilogue prevented.
  CHECK_FALSE(Schedule(f).apply("reorder out_acc.r out_acc.j", &error));
  REQUIRE_MESSAGE(s.apply("reorder out_acc.r out_acc.j", &error), error);
  check_same_result(f, s.func());
  CHECK(s.trace() == "fission out_acc.i\nreorder out_acc.r out_acc.j\n");
}

TEST_CASE("fission: refusals say why, and leave the function as it was") {
  std::string error;
  // Nothing to separate below a loop whose body is one nest.
  tir::PrimFunc mm = matmul();
  CHECK_FALSE(sched::fission(mm, "i", &error));
  CHECK(error == "cannot fission 'i': below it is a single statement, not a sequence of them "
                 "(nothing to separate)");
  // The row sum computed under out.j is written at every j but read at every j too: after
  // fission each part would see the other's later iterations of j.
  tir::PrimFunc sm = lower_kernel_text(R"(
kernel softmax(x: f32[4, 6]) -> f32[4, 6] {
  mx[i] = max(c) x[i, c]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(c) e[i, c]
  out[i, j] = e[i, j] / s[i]
  return out
}
)");
  Schedule s(sm);
  REQUIRE_MESSAGE(s.apply("compute_at s out.j", &error), error);
  std::string before = tir::print_script(s.func());
  CHECK_FALSE(s.apply("fission out.i", &error));
  CHECK(error == "cannot fission 'out.i': 's' is written in one part and used in another across "
                 "iterations of 'j' (each part would see the other's later iterations)");
  CHECK(tir::print_script(s.func()) == before);
  // Under out.i alone (compute_at s out.i), each row's sum belongs to its i: legal.
  Schedule t(sm);
  REQUIRE(t.apply("compute_at s out.i", &error));
  REQUIRE_MESSAGE(t.apply("fission out.i", &error), error);
  check_same_result(sm, t.func());
  // A bound loop is a kernel's work-item index: not copied.
  tir::PrimFunc lr = lower_kernel_text(R"(
kernel linear_relu(x: f32[6, 20], w: f32[5, 20]) -> f32[6, 5] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)");
  Schedule b(lr);
  REQUIRE(b.apply("bind i group.x", &error));
  CHECK_FALSE(b.apply("fission i", &error));
  CHECK(error == "cannot fission 'i': 'i' is bound to group.x");
}

TEST_CASE("separated_by: blocks of their own per iteration, and outer loops that move accesses unlike") {
  using descent::tensor::sched::Touch;
  using descent::tensor::sched::separated_by;
  auto idx = [](tir::ExprPtr e) {
    std::vector<tir::ExprPtr> v;
    v.push_back(std::move(e));
    return v;
  };
  auto var = [](const char* n) { return tir::var(n); };
  auto k = [](int64_t v) { return tir::int_imm(v); };
  auto add = [](tir::ExprPtr a, tir::ExprPtr b) { return tir::binary(tir::Op::Add, std::move(a), std::move(b)); };
  auto mul = [](tir::ExprPtr a, tir::ExprPtr b) { return tir::binary(tir::Op::Mul, std::move(a), std::move(b)); };
  tir::StmtPtr loop = tir::make_for("j_0", 4, nullptr);
  // e[j_0 * 4 + j_1] written, e[j_0 * 4 + c_1] read, j_1 and c_1 in 0..4: blocks of their own.
  Touch w{0, true, idx(add(mul(var("j_0"), k(4)), var("j_1"))), {{"j_1", 4}}};
  Touch r{0, false, idx(add(mul(var("j_0"), k(4)), var("c_1"))), {{"c_1", 4}}};
  CHECK(separated_by({&w, &r}, *loop, {}));
  // Read 5 wide: iteration 0 reaches element 4, which iteration 1 writes.
  Touch wide{0, false, idx(add(mul(var("j_0"), k(4)), var("c_1"))), {{"c_1", 5}}};
  CHECK_FALSE(separated_by({&w, &wide}, *loop, {}));
  // An outer loop i moving the two accesses alike (both + 16 i): still separated for every i.
  Touch wi{0, true, idx(add(mul(var("i"), k(16)), add(mul(var("j_0"), k(4)), var("j_1")))), {{"j_1", 4}}};
  Touch ri{0, false, idx(add(mul(var("i"), k(16)), add(mul(var("j_0"), k(4)), var("c_1")))), {{"c_1", 4}}};
  CHECK(separated_by({&wi, &ri}, *loop, {"i"}));
  // ... and unlike (i + j_0 against 2 i + j_0): at i = 0 separated, at i = 1 iteration 0
  // reads what iteration 1 writes. Refused.
  Touch a{0, true, idx(add(var("i"), var("j_0"))), {}};
  Touch b{0, false, idx(add(mul(var("i"), k(2)), var("j_0"))), {}};
  CHECK_FALSE(separated_by({&a, &b}, *loop, {"i"}));
  // A variable bound by no loop it knows, or an index that is not affine: refused.
  Touch stray{0, false, idx(add(var("j_0"), var("q"))), {}};
  CHECK_FALSE(separated_by({&w, &stray}, *loop, {}));
  Touch square{0, false, idx(mul(var("j_0"), var("j_0"))), {}};
  CHECK_FALSE(separated_by({&w, &square}, *loop, {}));
}
