// test_tensor_schedule_text: the schedule text syntax (tokens, comments, errors with line
// numbers, usage lines), the canonical trace and its replay, and undo/redo history.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <memory>

#include "lang/text.h"
#include "tensor/lower.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;
using descent::testing::lower_kernel_text;

namespace {

using descent::testing::kMatmul;
using descent::testing::kMmRelu;

tir::PrimFunc matmul() { return lower_kernel_text(kMatmul); }
tir::PrimFunc mm_relu() { return lower_kernel_text(kMmRelu); }

std::string script(const tir::PrimFunc& f) { return tir::print_script(f); }

// The printed function after applying `text` to f with apply_step line by line.
std::string by_steps(tir::PrimFunc f, const std::vector<std::string>& steps) {
  for (const std::string& s : steps) {
    std::string error;
    REQUIRE_MESSAGE(apply_step(f, s, nullptr, &error), error);
  }
  return script(f);
}

// The error of one step on f.
std::string step_error(const tir::PrimFunc& f, const std::string& step) {
  tir::PrimFunc g = f;
  std::string error;
  CHECK_FALSE(apply_step(g, step, nullptr, &error));
  CHECK(script(g) == script(f));
  return error;
}

const char* kPrimitiveList =
    "split, tile, reorder, fuse, fission, unroll, vectorize, parallel, bind, compute_at, "
    "reverse_compute_at, compute_inline, cache_read, cache_write, set_scope, decompose_reduction, transform_layout, rfactor, online_softmax, merge, blockize, tensorize";

}  // namespace

TEST_CASE("steps: spaces, tabs and commas separate; '#' starts a comment") {
  tir::PrimFunc f = matmul();
  std::string want = by_steps(f, {"split i 32", "reorder j i_1 k"});
  tir::PrimFunc g = f;
  std::string canonical, error;
  REQUIRE(apply_step(g, "  split\ti,32   # the rows", &canonical, &error));
  CHECK(canonical == "split i 32");
  REQUIRE(apply_step(g, "reorder j, i_1, k", &canonical, &error));
  CHECK(canonical == "reorder j i_1 k");
  CHECK(script(g) == want);
}

TEST_CASE("steps: empty, unknown, wrong argument count, bad numbers and scopes") {
  tir::PrimFunc f = matmul();
  CHECK(step_error(f, "") == "empty schedule step");
  CHECK(step_error(f, "   # only a comment") == "empty schedule step");
  CHECK(step_error(f, "spilt i 32") ==
        std::string("unknown schedule primitive 'spilt' (primitives: ") + kPrimitiveList + ")");
  CHECK(step_error(f, "split i") == "usage: split LOOP FACTOR [as OUTER INNER]");
  CHECK(step_error(f, "split i 4 a") == "usage: split LOOP FACTOR [as OUTER INNER]");
  CHECK(step_error(f, "split i 4 to a b") == "usage: split LOOP FACTOR [as OUTER INNER]");
  CHECK(step_error(f, "split i 4 as a b c") == "usage: split LOOP FACTOR [as OUTER INNER]");
  CHECK(step_error(f, "tile i j 4") == "usage: tile LOOP1 LOOP2 FACTOR1 FACTOR2");
  CHECK(step_error(f, "reorder i") == "usage: reorder LOOP LOOP ...");
  CHECK(step_error(f, "fuse i") == "usage: fuse LOOP1 LOOP2 [as NAME]");
  CHECK(step_error(f, "fuse i j ij") == "usage: fuse LOOP1 LOOP2 [as NAME]");
  CHECK(step_error(f, "fuse i j to ij") == "usage: fuse LOOP1 LOOP2 [as NAME]");
  CHECK(step_error(f, "unroll") == "usage: unroll LOOP");
  CHECK(step_error(f, "vectorize i j") == "usage: vectorize LOOP");
  CHECK(step_error(f, "parallel") == "usage: parallel LOOP");
  CHECK(step_error(f, "bind i") ==
        "usage: bind LOOP group.x|group.y|group.z|local.x|local.y|local.z");
  CHECK(step_error(f, "compute_at C") == "usage: compute_at BLOCK LOOP");
  CHECK(step_error(f, "reverse_compute_at C") == "usage: reverse_compute_at BLOCK LOOP");
  CHECK(step_error(f, "compute_inline") == "usage: compute_inline BLOCK");
  CHECK(step_error(f, "cache_read C A") == "usage: cache_read BLOCK BUFFER local|shared");
  CHECK(step_error(f, "cache_write C") == "usage: cache_write BLOCK local|shared");
  CHECK(step_error(f, "decompose_reduction C") == "usage: decompose_reduction BLOCK LOOP");
  CHECK(step_error(f, "rfactor C k j") == "usage: rfactor BLOCK LOOP");

  CHECK(step_error(f, "split i x") == "split: factor 'x' is not an integer");
  CHECK(step_error(f, "split i 4x") == "split: factor '4x' is not an integer");
  CHECK(step_error(f, "split i 99999999999999999999") ==
        "split: factor '99999999999999999999' is not an integer");
  CHECK(step_error(f, "split i +4") == "split: factor '+4' is not an integer");
  CHECK(step_error(f, "tile i j 4 y") == "tile: factor 'y' is not an integer");
  CHECK(step_error(f, "cache_write C register") ==
        "cache_write: scope 'register' must be local or shared");
  CHECK(step_error(f, "cache_read C A global") ==
        "cache_read: scope 'global' must be local or shared");
}

TEST_CASE("apply_text: blank and comment lines skipped, errors carry the line number") {
  Schedule s(matmul());
  std::string error;
  const char* text =
      "# tile the output\n"
      "split i 32\n"
      "\n"
      "split j 32   # columns\n"
      "reorder i_0 j_0 i_1 j_1\n"
      "vectorize j_1\n"
      "parallel i_0\n";
  CHECK_FALSE(s.apply_text(text, &error));
  CHECK(error ==
        "line 6: cannot vectorize 'j_1': it is not innermost (loop 'k' is inside it)");
  // The steps before the failing line stay applied.
  CHECK(s.num_applied() == 3);
  CHECK(s.trace() == "split i 32\nsplit j 32\nreorder i_0 j_0 i_1 j_1\n");
  CHECK(s.apply_text("parallel i_0\r\nunroll k", &error) == false);
  CHECK(error == "line 2: cannot unroll 'k': extent 128 > 64; split it first");
  CHECK(s.num_applied() == 4);
  // No trailing newline, commas, Windows line ends.
  CHECK(s.apply_text("split k 8\r\nreorder k_0, k_1, j_1\r\nunroll k_1", &error));
  CHECK(s.num_applied() == 7);
}

TEST_CASE("trace: canonical steps that replay to the same function") {
  tir::PrimFunc f = mm_relu();
  Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text("split Y.i,32   # rows\n"
                               "split\tY.j 16 as jo ji\n"
                               "reorder  i_0 jo i_1 ji\n"
                               "parallel Y.i_0\n"
                               "fuse C.i C.j\n"
                               "split i_j_fused 64\n"
                               "parallel i_j_fused_0\n",
                               &error),
               error);
  CHECK(s.trace() ==
        "split Y.i 32\n"
        "split Y.j 16 as jo ji\n"
        "reorder i_0 jo i_1 ji\n"
        "parallel Y.i_0\n"
        "fuse C.i C.j\n"
        "split i_j_fused 64\n"
        "parallel i_j_fused_0\n");
  CHECK(s.steps().size() == 7);
  Schedule replay(s.original());
  REQUIRE_MESSAGE(replay.apply_text(s.trace(), &error), error);
  CHECK(script(replay.func()) == script(s.func()));
  CHECK(replay.trace() == s.trace());
  CHECK(script(s.original()) == script(f));

  // And the result computes what the original computes.
  REQUIRE(tir::verify(s.func(), &error));
  std::vector<Tensor> in(2);
  REQUIRE(rand({128, 128}, 1, &in[0], &error));
  REQUIRE(rand({128, 128}, 2, &in[1], &error));
  Tensor want, got;
  REQUIRE(tir::interpret(f, {&in[0], &in[1]}, &want, &error));
  REQUIRE(tir::interpret(s.func(), {&in[0], &in[1]}, &got, &error));
  std::string why;
  CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
}

TEST_CASE("undo and redo walk the history; a new step drops the redo tail") {
  tir::PrimFunc f = matmul();
  Schedule s(f);
  CHECK_FALSE(s.undo());
  CHECK_FALSE(s.redo());
  CHECK(s.trace() == "");
  std::string error;
  REQUIRE(s.apply("split i 32", &error));
  std::string after1 = script(s.func());
  REQUIRE(s.apply("split j 16", &error));
  std::string after2 = script(s.func());
  REQUIRE(s.apply("reorder i_0 j_0 i_1 j_1", &error));
  std::string after3 = script(s.func());
  CHECK(after1 != after2);
  CHECK(after2 != after3);

  CHECK(s.undo());
  CHECK(s.undo());
  CHECK(s.num_applied() == 1);
  CHECK(script(s.func()) == after1);
  CHECK(s.trace() == "split i 32\n");
  CHECK(s.redo());
  CHECK(script(s.func()) == after2);
  CHECK(s.trace() == "split i 32\nsplit j 16\n");
  CHECK(s.redo());
  CHECK(script(s.func()) == after3);
  CHECK_FALSE(s.redo());

  CHECK(s.undo());
  CHECK(s.undo());
  CHECK(s.undo());
  CHECK_FALSE(s.undo());
  CHECK(script(s.func()) == script(f));
  CHECK(s.redo());
  // A failing step changes nothing, not even the redo tail.
  CHECK_FALSE(s.apply("split q 4", &error));
  CHECK(error == "no loop 'q' (loops: i_0, i_1, j, k)");
  CHECK(s.num_applied() == 1);
  CHECK(s.redo());
  CHECK(script(s.func()) == after2);
  CHECK(s.undo());
  // A new step after undo forgets the undone ones.
  REQUIRE(s.apply("split k 4", &error));
  CHECK_FALSE(s.redo());
  CHECK(s.num_applied() == 2);
  CHECK(s.trace() == "split i 32\nsplit k 4\n");
  CHECK(s.steps().size() == 2);
  // The original is never touched.
  CHECK(script(s.original()) == script(f));
}

TEST_CASE("block primitives are reachable from the text syntax") {
  // Helper files own these primitives' details; here: the text reaches them, their
  // canonical form is the step, a success computes the same numbers, a refusal changes
  // nothing.
  tir::PrimFunc f = mm_relu();
  std::vector<Tensor> in(2);
  std::string error;
  REQUIRE(rand({128, 128}, 5, &in[0], &error));
  REQUIRE(rand({128, 128}, 6, &in[1], &error));
  Tensor want;
  REQUIRE(tir::interpret(f, {&in[0], &in[1]}, &want, &error));
  struct Case {
    const char* step;
    bool works;
  };
  const Case cases[] = {
      {"decompose_reduction Y k", true}, {"reverse_compute_at C Y.j", true},
      {"cache_write Y local", true},     {"cache_read Y A shared", true},
      {"rfactor Y k", true},             {"compute_at Y C.i", true},
      {"compute_inline Y", false},       {"compute_inline Nope", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.step);
    tir::PrimFunc g = f;
    std::string canonical;
    bool ok = apply_step(g, c.step, &canonical, &error);
    CHECK_MESSAGE(ok == c.works, error);
    if (ok) {
      CHECK(canonical == c.step);
      REQUIRE_MESSAGE(tir::verify(g, &error), error);
      Tensor got;
      REQUIRE_MESSAGE(tir::interpret(g, {&in[0], &in[1]}, &got, &error), error);
      std::string why;
      CHECK_MESSAGE(allclose(want, got, 1e-4, &why), why);
    } else {
      CHECK(error.find(c.step + std::string(c.step).find(' ') + 1) != std::string::npos);
      CHECK(script(g) == script(f));
    }
  }
  Schedule s(f);
  CHECK_FALSE(s.apply("compute_inline Nope", &error));
  CHECK(error == "no block 'Nope' (blocks: Y, C)");
  CHECK(s.num_applied() == 0);
  // A whole fused schedule through the history: the graph's linear+relu fusion.
  REQUIRE_MESSAGE(s.apply_text("reverse_compute_at C Y.j\ndecompose_reduction Y k\n", &error),
                  error);
  CHECK(s.trace() == "reverse_compute_at C Y.j\ndecompose_reduction Y k\n");
  Schedule replay(f);
  REQUIRE_MESSAGE(replay.apply_text(s.trace(), &error), error);
  CHECK(script(replay.func()) == script(s.func()));
}

TEST_CASE("a step says which loops and blocks it made, in program order, as steps name them") {
  struct Case {
    std::vector<std::string> before;  // applied first
    const char* step;
    std::vector<std::string> loops, blocks;
  };
  const Case cases[] = {
      {{}, "split i 32", {"i_0", "i_1"}, {}},
      {{}, "split i 32 as io ii", {"io", "ii"}, {}},
      {{}, "tile i j 8 16", {"i_0", "j_0", "i_1", "j_1"}, {}},
      {{}, "fuse i j", {"i_j_fused"}, {}},
      {{"split i 32", "fuse i_1 j"}, "fuse i_0 i_1_j_fused as ij", {"ij"}, {}},
      {{}, "reorder j i", {}, {}},
      {{}, "parallel i", {}, {}},
      // C_rf takes over the nest i, j, k; C sums the partials in a new one.
      {{}, "rfactor C k", {"C.i", "C.j", "rf"}, {"C_rf"}},
      {{}, "cache_write C local", {"ax0", "ax1"}, {"C_writeback"}},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.step));
    Schedule s(matmul());
    std::string error;
    for (const auto& b : c.before) REQUIRE_MESSAGE(s.apply(b, &error), error);
    StepResult made;
    REQUIRE_MESSAGE(s.apply(c.step, &error, &made), error);
    CHECK(made.canonical == s.steps().back());
    CHECK(join(made.loops, " ") == join(c.loops, " "));
    CHECK(join(made.blocks, " ") == join(c.blocks, " "));
  }
  // Two nests with a loop `i` each are "Y.i" and "C.i"; splitting Y's leaves C's the only
  // `i`, now named "i": the same loop under a shorter name, not one the step made.
  Schedule s(mm_relu());
  std::string error;
  StepResult made;
  REQUIRE_MESSAGE(s.apply("split Y.i 4", &error, &made), error);
  CHECK(join(made.loops, " ") == "i_0 i_1");
  CHECK(made.blocks.empty());
  // A refused step makes nothing and leaves the history as it was.
  StepResult none;
  CHECK_FALSE(s.apply("split nope 4", &error, &none));
  CHECK(none.loops.empty());
  CHECK(s.num_applied() == 1);
}

TEST_CASE("schedule_lines: the one reading of schedule text, with line numbers") {
  auto lines = schedule_lines("# head\nsplit i 4  # why\n\n  reorder i_0, j\r\n#\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].line == 2);
  CHECK(lines[0].step == "split i 4");
  CHECK(lines[1].line == 4);
  CHECK(lines[1].step == "reorder i_0, j");
  Schedule s(matmul());
  std::string error;
  StepFailure failed;
  CHECK_FALSE(s.apply_text("split i 4\n\nvectorize nope\n", &error, &failed));
  CHECK(failed.line == 3);
  CHECK(failed.step == "vectorize nope");
  CHECK(error == "line 3: " + failed.why);
}
