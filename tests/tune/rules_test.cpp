// The rule-based scheduler (tune/rules.h): every prelude kernel gets a default schedule that
// applies, is recognised as the nest shape it is, and computes what the unscheduled kernel
// computes (the reference interpreter's answer, compared on the cpu backend and, where a
// device opens, OpenCL); the rule-built spaces parse and their samples compute the same.
#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <random>

#include "tensor/backend.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tests/tune/tune_util.h"
#include "tune/rules.h"

using namespace descent;
using namespace descent::testing;

namespace {

tir::PrimFunc lowered(const std::string& kernel, const std::map<std::string, int64_t>& dims) {
  Session s;
  tir::PrimFunc f;
  std::string error;
  REQUIRE_MESSAGE(s.lower_kernel(kernel, dims, "", &f, &error), error);
  return f;
}

// f and g (scheduled) on the same seeded inputs: g on `device`, f on the interpreter.
void same_result(const tir::PrimFunc& f, const tir::PrimFunc& g, const std::string& device) {
  std::vector<tensor::Tensor> inputs(f.params.size());
  std::string error;
  for (size_t p = 0; p < f.params.size(); ++p)
    REQUIRE(tensor::rand(f.buffers[size_t(f.params[p])].shape, int64_t(100 + p), &inputs[p], &error));
  std::vector<const tensor::Tensor*> args;
  for (const auto& t : inputs) args.push_back(&t);
  tensor::Tensor want, got;
  REQUIRE_MESSAGE(tir::interpret(f, args, &want, &error), error);
  tensor::Backend* b = tensor::find_backend(device);
  REQUIRE(b);
  std::unique_ptr<tensor::CompiledKernel> k;
  REQUIRE_MESSAGE(b->compile(g, {}, &k, &error), error);
  REQUIRE_MESSAGE(k->run(args, &got, nullptr, &error), error);
  std::string why;
  REQUIRE_MESSAGE(tensor::allclose(got, want, 1e-4, &why), why);
}

struct Case {
  const char* kernel;
  std::map<std::string, int64_t> dims;
  const char* shape;  // the rules' name for the nest
  bool scheduled = true;  // false: too small or too odd for any rule to apply
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"matmul", {{"n", 64}, {"k", 64}, {"m", 64}}, "nest C: matmul"},
      {"matmul", {{"n", 48}, {"k", 20}, {"m", 96}}, "nest C: matmul"},
      {"linear", {{"n", 1}, {"k", 256}, {"m", 40}}, "nest out: dot"},
      // A batch: the weights re-laid out, a matmul's register tile.
      {"linear", {{"n", 8}, {"k", 64}, {"m", 16}}, "nest out: dot with a batch: w re-laid out, then a matmul"},
      // Fission gives the relu a nest of its own first.
      {"linear_relu", {{"n", 4}, {"k", 128}, {"m", 24}},
       "nest out_acc: dot with a batch: w re-laid out, then a matmul"},
      // Outputs narrower than a vector with a batch: a tile of rows, each row one vector.
      {"matmul", {{"n", 64}, {"k", 128}, {"m", 10}}, "nest C: matmul"},
      {"linear", {{"n", 64}, {"k", 128}, {"m", 10}}, "nest out: dot with a batch: w re-laid out, then a matmul"},
      // ... and with too few rows to tile: B re-laid out the other way, a dot per output.
      {"matmul", {{"n", 2}, {"k", 128}, {"m", 10}},
       "nest C: matmul narrower than a vector: B re-laid out, then a dot"},
      // One row: the relu stays in the reduction's loops (nothing to reorder around it).
      {"linear_relu", {{"n", 1}, {"k", 128}, {"m", 24}}, "nest out_acc: dot with an epilogue"},
      {"add", {{"n", 4}, {"m", 80}}, "nest out: elementwise"},
      {"relu", {{"n", 3}, {"m", 7}}, "nest out: elementwise", false},
      {"bias_add", {{"n", 2}, {"m", 48}}, "nest out: elementwise"},
      // Each row's max and sum computed inside the row loop of the last nest.
      {"softmax", {{"n", 5}, {"m", 32}}, "rows fused: every nest under out.i"},
      {"transpose", {{"n", 16}, {"m", 32}}, "nest out: elementwise"},
      // Rank 3: per head, the scores q . k^T are the linear family with a batch axis in
      // front; k re-laid out [g, c, j] per head, then a matmul (a dot per score ran 12x
      // slower). A plain batched matmul gets the matmul recipe; softmax along the last of
      // three axes has its rows fused under the row loop inside the batch's.
      {"attention", {{"h", 2}, {"s", 32}, {"t", 32}, {"d", 16}, {"e", 16}},
       "nest sc_acc: dot with a batch: k re-laid out, then a matmul"},
      {"bmm", {{"b", 2}, {"n", 16}, {"k", 16}, {"m", 32}}, "nest C: matmul"},
      {"softmax3", {{"b", 2}, {"n", 4}, {"m", 32}}, "rows fused: every nest under out.i"},
      // Long rows: four vectors of partial sums, folded to one (several_partial_sums).
      {"softmax", {{"n", 3}, {"m", 1024}}, "rows fused: every nest under out.i"},
      // var reads its row's mean mu[i]: a value per row, not an operand read along the row.
      {"layer_norm", {{"n", 3}, {"d", 256}}, "rows fused: every nest under out.i"},
  };
  return all;
}

}  // namespace

TEST_CASE("default schedules: every prelude kernel, recognised and computing the same on cpu") {
  for (const Case& c : cases()) {
    INFO(c.kernel);
    tir::PrimFunc f = lowered(c.kernel, c.dims);
    tune::RuleSchedule s = tune::default_schedule(f, {});
    std::string notes;
    for (const auto& n : s.notes) notes += n + "\n";
    INFO("trace:\n", s.trace, "notes:\n", notes);
    REQUIRE(!s.notes.empty());
    CHECK(s.notes[0] == c.shape);
    CHECK(s.trace.empty() == !c.scheduled);
    // The trace replays on the unscheduled kernel to the same loop nest.
    tensor::Schedule replayed(f);
    std::string error;
    REQUIRE_MESSAGE(replayed.apply_text(s.trace, &error), error);
    CHECK(tir::print_script(replayed.func()) == tir::print_script(s.func));
    same_result(f, s.func, "cpu");
  }
}

TEST_CASE("default schedules: a long row's reductions keep four vectors of partial sums") {
  // Softmax's max and sum, layer norm's mean and variance: 64 lanes (four independent
  // chains), then a second rfactor folds them into one vector before the scalar tail.
  tune::RuleSchedule sm = tune::default_schedule(lowered("softmax", {{"n", 8}, {"m", 1024}}), {});
  for (const char* step : {"split mx.c 64\nrfactor mx mx.c_1\n", "split mx.rf 16\nrfactor mx mx.rf_1\n"
                           "vectorize mx_rf_1.rf_1\n", "split s.c 64\n", "vectorize s_rf_1.rf_1\n"})
    CHECK_MESSAGE(sm.trace.find(step) != std::string::npos, step, "\nin:\n", sm.trace);
  for (const auto& n : sm.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // The exponentials and their sum in one loop over the row, the exponentials 64 wide.
  CHECK(sm.trace.find("split e.j 64\nsplit s.c 64\nrfactor s s.c_1\nmerge e.j_0 s_rf.c_0\n"
                      "decompose_reduction s_rf e.j_0\nvectorize e.j_1\n") != std::string::npos);
  CHECK(std::find(sm.notes.begin(), sm.notes.end(), "nests e and s: one loop over the row") != sm.notes.end());
  same_result(lowered("softmax", {{"n", 8}, {"m", 1024}}), sm.func, "cpu");
  tune::RuleSchedule ln = tune::default_schedule(lowered("layer_norm", {{"n", 8}, {"d", 1024}}), {});
  CHECK(ln.trace.rfind("compute_at var out.i\ncompute_at mu out.i\n", 0) == 0);
  for (const char* step : {"split mu.j 64\n", "split var.j 64\n", "vectorize var_rf_1.rf_1\n",
                           "set_scope var_rf local\n", "vectorize out.j_1\n"})
    CHECK_MESSAGE(ln.trace.find(step) != std::string::npos, step, "\nin:\n", ln.trace);
  for (const auto& n : ln.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // The space keeps the one-vector recipe, its width open; the fold is the default's alone.
  std::string space = tune::rule_space(lowered("softmax", {{"n", 8}, {"m", 1024}}), {});
  CHECK(space.find("split mx.c ?{16,") != std::string::npos);
  CHECK(space.find("split e.j ?{") != std::string::npos);  // each nest's own recipe
  CHECK(space.find("merge") == std::string::npos);
  CHECK(space.find("rfactor mx mx.c_1") != std::string::npos);
  CHECK(space.find("mx.rf") == std::string::npos);
  // Short rows (under 16 vectors) keep one vector of partial sums.
  tune::RuleSchedule small = tune::default_schedule(lowered("softmax", {{"n", 8}, {"m", 128}}), {});
  CHECK(small.trace.find("split mx.c 16\n") != std::string::npos);
  CHECK(small.trace.find("mx.rf") == std::string::npos);
}

TEST_CASE("default schedules: matmul gets the register tile, linear the vector partial sums") {
  tune::RuleSchedule mm = tune::default_schedule(lowered("matmul", {{"n", 256}, {"k", 256}, {"m", 256}}), {});
  CHECK(mm.trace ==
        "tile C.i C.j 8 32\nsplit C.r 4\nreorder C.i_0 C.j_0 C.r_0 C.r_1 C.i_1 C.j_1\ncache_write C local\n"
        "reverse_compute_at C_writeback C.j_0\ndecompose_reduction C C.r_0\nvectorize C.j_1\n"
        "vectorize C_init.j_1\nvectorize C_writeback.ax1\nunroll C.i_1\nunroll C_init.i_1\n"
        "unroll C_writeback.ax0\ntensorize C.i_1 cpu.fma_8x32\nunroll C.r_1\nparallel C.i_0\n");
  for (const auto& n : mm.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // A fused epilogue with a batch: fission first, then the weights re-laid out (MLAS's
  // packing), and every step of the matmul recipe applies: no buffer of partial sums.
  tune::RuleSchedule lr = tune::default_schedule(lowered("linear_relu", {{"n", 64}, {"k", 784}, {"m", 128}}), {});
  CHECK(lr.trace.rfind("fission out_acc.i\ntransform_layout w 1 0\n", 0) == 0);
  CHECK(lr.trace.find("tile out_acc.i out_acc.j 8 32") != std::string::npos);
  CHECK(lr.trace.find("rfactor") == std::string::npos);
  for (const auto& n : lr.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // Rows 4 KiB apart: the default packs B's panel and walks column panels outermost.
  tune::RuleSchedule big = tune::default_schedule(lowered("matmul", {{"n", 256}, {"k", 256}, {"m", 1024}}), {});
  CHECK(big.trace.find("reorder C.j_0 C.i_0 C.r_0 C.r_1 C.i_1 C.j_1") != std::string::npos);
  CHECK(big.trace.find("cache_read C B local\ncompute_at B_local C.j_0\nvectorize B_local.ax1") !=
        std::string::npos);
  CHECK(big.trace.find("parallel C.j_0") != std::string::npos);
  for (const auto& n : big.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  tune::RuleSchedule lin = tune::default_schedule(lowered("linear", {{"n", 1}, {"k", 784}, {"m", 128}}), {});
  CHECK(lin.trace ==
        "split out.r 16\nrfactor out out.r_1\ndecompose_reduction out_rf out_rf.r_0\n"
        "vectorize out_rf.r_1\nvectorize out_rf_init.r_1\n");
  // Too little work for the threads: a 1 x 128 output of 784-long dots stays on one.
  CHECK(lin.trace.find("parallel") == std::string::npos);
  // Softmax: the row's max, exponentials and sum inside out's row loop, each vectorized,
  // one parallel loop over the rows.
  tune::RuleSchedule sm = tune::default_schedule(lowered("softmax", {{"n", 256}, {"m", 1024}}), {});
  CHECK(sm.trace.rfind("compute_at s out.i\ncompute_at e out.i\ncompute_at mx out.i\n", 0) == 0);
  CHECK(sm.trace.find("vectorize e.j_1") != std::string::npos);
  CHECK(sm.trace.find("rfactor s s.c_1") != std::string::npos);
  CHECK(sm.trace.find("parallel out.i\n") + 15 == sm.trace.size());  // the last step
  for (const auto& n : sm.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // The reference interpreter has no default schedule: it runs the loop nest as written.
  CHECK(tune::default_schedule(lowered("matmul", {{"n", 8}, {"k", 8}, {"m", 8}}), {.device = "ref"}).trace.empty());
}

TEST_CASE("default schedules: an epilogue goes into the register tile, narrow outputs get a row tile") {
  // linear_relu with a batch: after the matmul's tile, the relu (a nest of its own after
  // fission) is computed inside the tile loop, and the tile's result never leaves it.
  tir::PrimFunc lr_f = lowered("linear_relu", {{"n", 64}, {"k", 784}, {"m", 128}});
  tune::RuleSchedule lr = tune::default_schedule(lr_f, {});
  INFO(lr.trace);
  CHECK(lr.trace.find("parallel out_acc.i_0\nreverse_compute_at out out_acc.j_0\nset_scope out_acc local\n"
                      "unroll out.i\nvectorize out.j\n") != std::string::npos);
  CHECK(std::find(lr.notes.begin(), lr.notes.end(), "nest out_acc: the nests after it inside its register tile") !=
        lr.notes.end());
  for (const auto& n : lr.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
  // No whole-tensor buffer is left for the accumulator: out_acc is the tile's size, local.
  for (const tir::Buffer& b : lr.func.buffers)
    if (b.name == "out_acc") {
      CHECK(b.scope == tir::Scope::Local);
      CHECK(b.shape == std::vector<int64_t>{8, 32});
    }
  same_result(lr_f, lr.func, "cpu");
  // In the space the tile's loop order is a decision: each order's group of steps moves the
  // relu under the loop that order writes the tile back under.
  std::string space = tune::rule_space(lr_f, {});
  INFO(space);
  CHECK(space.find("reverse_compute_at out_acc_writeback out_acc.j_0 ; reverse_compute_at out out_acc.j_0 ; "
                   "set_scope out_acc local | ") != std::string::npos);
  CHECK(space.find("reverse_compute_at out_acc_writeback out_acc.i_0 ; reverse_compute_at out out_acc.i_0 ; "
                   "set_scope out_acc local\n") != std::string::npos);
  CHECK(space.find("split out.j") == std::string::npos);  // the relu's own nest is gone
  tune::Space parsed_space = parsed(space);
  for (int order = 0; order < 2; ++order) {
    CAPTURE(order);
    // w_t's split, the tile (8 x 32), the order, no packing, both unrolls, parallel, unroll out.i
    tune::Sample sample = tune::replay(parsed_space, lr_f, {2, 2, 3, order, 0, 1, 1, 0, 1});
    REQUIRE_MESSAGE(sample.ok, sample.error);
    CHECK(sample.trace.find(order == 0 ? "reverse_compute_at out out_acc.j_0" : "reverse_compute_at out out_acc.i_0") !=
          std::string::npos);
    same_result(lr_f, sample.func, "cpu");
  }
  // A chain (bias, then relu: the MLP's fused linear_bias_add_relu) is inlined into its last
  // nest first.
  Session sess;
  RunOptions quiet;
  quiet.out = [](std::string_view) {};
  REQUIRE(sess.submit("kernel lbr(x: f32[16, 64], w: f32[64, 32], b: f32[32]) -> f32[16, 32] {\n"
                      "  Y[i, j] = sum(k) x[i, k] * w[k, j]\n  Z[i, j] = Y[i, j] + b[j]\n"
                      "  C[i, j] = max(Z[i, j], 0.0)\n  return C\n}\n",
                      "lbr.ds", quiet)
              .status == Outcome::Ok);
  tir::PrimFunc chain;
  std::string error;
  REQUIRE_MESSAGE(sess.lower_kernel("lbr", {}, "", &chain, &error), error);
  tune::RuleSchedule mm = tune::default_schedule(chain, {});
  CHECK(mm.trace.find("compute_inline Z\nreverse_compute_at C Y.j_0\nset_scope Y local\n") != std::string::npos);
  same_result(chain, mm.func, "cpu");
  // An intermediate read twice is not inlined (its work would be repeated in the
  // expression): the epilogue stays in nests of its own. An epilogue that reads the tile
  // transposed goes in, its 32-long loop not unrolled.
  REQUIRE(sess.submit("kernel twice(x: f32[16, 64], w: f32[64, 32], b: f32[32]) -> f32[16, 32] {\n"
                      "  Y[i, j] = sum(k) x[i, k] * w[k, j]\n  Z[i, j] = Y[i, j] + b[j]\n"
                      "  C[i, j] = Z[i, j] * Z[i, j]\n  return C\n}\n"
                      "kernel flip(x: f32[32, 64], w: f32[64, 32]) -> f32[32, 32] {\n"
                      "  Y[i, j] = sum(k) x[i, k] * w[k, j]\n  C[i, j] = Y[j, i] + 1.0\n  return C\n}\n",
                      "more.ds", quiet)
              .status == Outcome::Ok);
  tir::PrimFunc twice, flip;
  REQUIRE_MESSAGE(sess.lower_kernel("twice", {}, "", &twice, &error), error);
  REQUIRE_MESSAGE(sess.lower_kernel("flip", {}, "", &flip, &error), error);
  tune::RuleSchedule tw = tune::default_schedule(twice, {});
  CHECK(tw.trace.find("compute_inline") == std::string::npos);
  CHECK(tw.trace.find("set_scope Y") == std::string::npos);
  same_result(twice, tw.func, "cpu");
  tune::RuleSchedule fl = tune::default_schedule(flip, {});
  INFO(fl.trace);
  CHECK(fl.trace.find("reverse_compute_at C Y.j_0\nset_scope Y local\nvectorize C.j\n") != std::string::npos);
  CHECK(fl.trace.find("unroll C.i") == std::string::npos);
  same_result(flip, fl.func, "cpu");
  // A batch of matrices: the tile is written back over the buffer's last two dimensions (ax1,
  // ax2), and no step of the recipe is refused, wide or narrow.
  for (int64_t m : {32, 10}) {
    CAPTURE(m);
    tir::PrimFunc bf = lowered("bmm", {{"b", 2}, {"n", 16}, {"k", 20}, {"m", m}});
    tune::RuleSchedule bs = tune::default_schedule(bf, {});
    INFO(bs.trace);
    CHECK(bs.trace.find("vectorize C_writeback.ax2\n") != std::string::npos);
    CHECK(bs.trace.find("unroll C_writeback.ax1\n") != std::string::npos);
    for (const auto& n : bs.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
    same_result(bf, bs.func, "cpu");
  }
  // Ten outputs per row, 64 rows: a tile of 8 rows, each row's ten outputs one vector; the
  // matmul reads B as it is, the linear re-lays out w to w_t[r, j] first.
  tir::PrimFunc narrow = lowered("matmul", {{"n", 64}, {"k", 128}, {"m", 10}});
  tune::RuleSchedule nm = tune::default_schedule(narrow, {});
  CHECK(nm.trace.rfind("split C.i 8\nreorder C.i_0 C.r C.i_1 C.j\ncache_write C local\n", 0) == 0);
  CHECK(nm.trace.find("vectorize C.j\n") != std::string::npos);
  CHECK(nm.trace.find("transform_layout") == std::string::npos);
  CHECK(nm.trace.find("rfactor") == std::string::npos);
  same_result(narrow, nm.func, "cpu");
  tir::PrimFunc nl_f = lowered("linear", {{"n", 64}, {"k", 128}, {"m", 10}});
  tune::RuleSchedule nl = tune::default_schedule(nl_f, {});
  CHECK(nl.trace.rfind("transform_layout w 1 0\nsplit out.i 8\n", 0) == 0);
  same_result(nl_f, nl.func, "cpu");
  for (const auto& n : nl.notes) CHECK_MESSAGE(n.rfind("skipped", 0) != 0, n);
}

TEST_CASE("default schedules for OpenCL bind every nest and compute the same") {
  tensor::Backend* b = tensor::find_backend("opencl");
  std::string why;
  if (!b || !b->open(&why)) {
    MESSAGE("no OpenCL device (", why, "): the OpenCL schedules are checked on the reference only");
  }
  for (const Case& c : cases()) {
    INFO(c.kernel);
    tir::PrimFunc f = lowered(c.kernel, c.dims);
    tune::RuleSchedule s = tune::default_schedule(f, {.device = "opencl"});
    INFO("trace:\n", s.trace);
    CHECK(s.trace.find("bind") != std::string::npos);
    if (b && b->open(&why)) same_result(f, s.func, "opencl");
    else same_result(f, s.func, "ref");
  }
}

TEST_CASE("rule-built spaces parse, and their samples compute what the kernel computes") {
  std::mt19937_64 rng(7);
  for (const Case& c : cases()) {
    INFO(c.kernel);
    tir::PrimFunc f = lowered(c.kernel, c.dims);
    std::string text = tune::rule_space(f, {});
    INFO("space:\n", text);
    tune::Space space = parsed(text);
    int ok = 0;
    for (int k = 0; k < 6; ++k) {
      tune::Sample s = tune::sample(space, f, rng);
      if (!s.ok) continue;
      ++ok;
      same_result(f, s.func, "cpu");
    }
    CHECK(ok > 0);
  }
}

TEST_CASE("the matmul space holds both loop orders and packing, each a group of steps") {
  tir::PrimFunc f = lowered("matmul", {{"n", 256}, {"k", 256}, {"m", 256}});
  tune::RuleTarget t;
  t.device = "cpu";
  t.vector_lanes = 8;
  std::string text = tune::rule_space(f, t);
  INFO(text);
  CHECK(text.find("one_of reorder C.i_0 C.j_0 C.r_0 C.r_1 C.i_1 C.j_1 ; cache_write C local ; "
                  "reverse_compute_at C_writeback C.j_0 | reorder C.j_0 C.i_0") != std::string::npos);
  CHECK(text.find("maybe 0.5 cache_read C B local ; compute_at B_local C.j_0") != std::string::npos);
  CHECK(text.find("one_of parallel C.i_0 | parallel C.j_0") != std::string::npos);
  // The default schedule is unchanged by the space's extra choices: no packing in it.
  CHECK(tune::default_schedule(f, t).trace.find("cache_read") == std::string::npos);
  // Every combination of order and packing applies and computes the matmul.
  tune::Space space = parsed(text);
  for (int order = 0; order < 2; ++order)
    for (int pack = 0; pack < 2; ++pack) {
      // tile (2 decisions), order, pack, unroll i_1, unroll r_1, parallel
      tune::Sample s = tune::replay(space, f, {2, 1, order, pack, 1, 1, order});
      REQUIRE_MESSAGE(s.ok, s.error);
      same_result(f, s.func, "cpu");
    }
}

TEST_CASE("the space offers no vector width wider than the loop it splits") {
  // A 12-wide row: 16 would be refused in every sample that drew it.
  std::string add = tune::rule_space(lowered("add", {{"n", 4}, {"m", 12}}), {});
  INFO(add);
  CHECK(add.find("split out.j ?{4,8}\n") != std::string::npos);
  // A 16-wide matmul: its tile's columns go up to 16, not 32.
  std::string mm = tune::rule_space(lowered("matmul", {{"n", 32}, {"k", 32}, {"m", 16}}), {});
  INFO(mm);
  CHECK(mm.find("tile C.i C.j ?{2,4,8} ?{4,8,16}\n") != std::string::npos);
}

TEST_CASE("a dot whose reduction only 2 divides still gets a space that parses") {
  // k = 50: the default splits it by 2; the space's list starts with that width.
  tir::PrimFunc f = lowered("linear", {{"n", 1}, {"k", 50}, {"m", 8}});
  for (const char* device : {"cpu", "opencl"}) {
    tune::RuleTarget t;
    t.device = device;
    t.vector_lanes = 8;
    std::string text = tune::rule_space(f, t);
    INFO(device << ":\n" << text);
    CHECK(text.find("?{2}") != std::string::npos);
    tune::Space space = parsed(text);
    CHECK(tune::replay(space, f, {}).ok);
  }
}
