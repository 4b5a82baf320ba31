// test_tensor_flash: flash attention as schedule steps (online_softmax and merge, with the
// ordinary primitives around them). The prelude's attention kernels, scheduled step by
// step, must give the unscheduled nest's result on the reference interpreter and on every
// device; the steps must say why when the nest is not in the shape they need.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/backend.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/traffic.h"
#include "tune/rules.h"
#include "tests/tensor/kernel_util.h"

using namespace descent;
using namespace descent::testing;

namespace {

// Every later stage moved under the scores' loop `at`, and the row's buffers out of memory.
std::string stages_under(const std::string& at) {
  std::string out;
  for (const char* b : {"mx", "p", "l", "out_acc", "out"})
    out += std::string("reverse_compute_at ") + b + " " + at + "\n";
  for (const char* b : {"sc", "sc_acc", "p", "mx", "l", "out_acc"})
    out += std::string("set_scope ") + b + " local\n";
  return out;
}
// Rows together (every stage under the row loop g, i), their buffers out of memory, the
// sum over v with its row loop outside: the shape online_softmax needs.
const std::string kRows = stages_under("sc_acc.i") + "reorder out_acc.j out_acc.c\n";
const std::string kOnline = "online_softmax mx";
// The flash tile: four query rows at a time (the row loop split, every stage under i_0),
// each stage's column loop outside its rows, so that one key's and one value's row serve
// four queries before the next is read.
const std::string kTiledRows = "split sc_acc.i 4\n" + stages_under("sc_acc.i_0");
const std::string kTiledColumns = R"(
reorder sc_acc.j sc_acc.i_1
reorder mx.j mx.i
reorder p.j p.i
reorder l.j l.i
reorder out_acc.j out_acc.i out_acc.c
)";
const std::string kMerge = "merge sc.j mx.j";

tir::PrimFunc lower_prelude(const std::string& name, int64_t h, int64_t s, int64_t t, int64_t d,
                            int64_t e) {
  std::vector<std::vector<int64_t>> shapes = {{h, s, d}, {h, t, d}, {h, t, e}};
  return lower_kernel_text(std::string(tensor::prelude_source()), shapes, name, "prelude.ds");
}

tensor::Tensor interpret(const tir::PrimFunc& f, const std::vector<tensor::Tensor>& in) {
  tensor::Tensor out;
  std::string error;
  REQUIRE_MESSAGE(tir::interpret(f, pointers(in), &out, &error), error);
  return out;
}

void check_close(const tensor::Tensor& want, const tensor::Tensor& got, const std::string& what) {
  std::string why;
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-5, &why), what << ": " << why);
}

// f on `device`; false (and a message) when the device cannot open here: a machine without
// an OpenCL platform runs the other devices.
bool run_on(const std::string& device, const tir::PrimFunc& f, const std::vector<tensor::Tensor>& in,
            tensor::Tensor* out) {
  tensor::Backend* b = tensor::find_backend(device);
  std::string error;
  if (!b || !b->open(&error)) {
    MESSAGE(device << " cannot open here: " << error);
    return false;
  }
  std::unique_ptr<tensor::CompiledKernel> k;
  tensor::BackendOptions opts;
  opts.threads = 2;
  REQUIRE_MESSAGE(b->compile(f, opts, &k, &error), device << ": " << error);
  REQUIRE_MESSAGE(k->run(pointers(in), out, nullptr, &error), device << ": " << error);
  return true;
}

// The scheduled nest on every registered device against the unscheduled nest on ref.
void check_everywhere(const tir::PrimFunc& original, const tir::PrimFunc& scheduled,
                      const std::string& what) {
  auto in = inputs_for(original);
  // Scores of a few units apart, so the maximum really matters (exp would not overflow
  // without it at this scale, but a wrong rescaling shows).
  for (auto& t : in)
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] *= 3;
  tensor::Tensor want = interpret(original, in);
  check_close(want, interpret(scheduled, in), what + " on ref");
  for (const std::string& device : tensor::backend_names()) {
    tensor::Tensor got;
    if (device != "ref" && run_on(device, scheduled, in, &got))
      check_close(want, got, what + " on " + device);
  }
}

tensor::Schedule scheduled(const tir::PrimFunc& f, const std::string& text) {
  tensor::Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(text, &error), error);
  return s;
}

std::string refusal(const tir::PrimFunc& f, const std::string& before, const std::string& step) {
  tensor::Schedule s = scheduled(f, before);
  std::string printed = tir::print_script(s.func()), error;
  CHECK_FALSE(s.apply(step, &error));
  CHECK(tir::print_script(s.func()) == printed);  // a refused step changes nothing
  return error;
}

const tir::Buffer& buffer(const tir::PrimFunc& f, const std::string& name) {
  for (const auto& b : f.buffers)
    if (b.name == name) return b;
  FAIL("no buffer " << name);
  return f.buffers[0];
}

int64_t elements(const tir::Buffer& b) {
  int64_t n = 1;
  for (int64_t d : b.shape) n *= d;
  return n;
}

}  // namespace

TEST_CASE("each flash step keeps attention's result, on every device") {
  // Odd sizes: nothing divides, s != t, d != e.
  for (const char* name : {"attention", "causal_attention"}) {
    bool causal = std::string(name) == "causal_attention";
    tir::PrimFunc f = lower_prelude(name, 2, 7, causal ? 7 : 9, 5, 3);
    std::string steps;
    for (const std::string& step : {kRows, kOnline, kMerge}) {
      steps += step + "\n";
      CAPTURE(steps);
      check_everywhere(f, scheduled(f, steps).func(), std::string(name) + " after\n" + steps);
    }
  }
}

TEST_CASE("online_softmax makes one pass: a running maximum, and the sums rescaled") {
  tir::PrimFunc f = lower_prelude("attention", 1, 4, 6, 3, 2);
  tensor::Schedule s = scheduled(f, kRows);
  tensor::StepResult made;
  std::string error;
  REQUIRE_MESSAGE(s.apply(kOnline, &error, &made), error);
  CHECK(made.blocks == std::vector<std::string>{"mx_init", "mx_scale"});
  std::string text = tir::print_script(s.func());
  CAPTURE(text);
  // One loop over the row (j) holds the max, the exponentials and both sums.
  std::vector<std::string> row;
  CHECK(tensor::sched::block_loops(s.func(), "l", &row, &error));
  std::vector<std::string> out_acc;
  CHECK(tensor::sched::block_loops(s.func(), "out_acc", &out_acc, &error));
  std::vector<std::string> mx;
  CHECK(tensor::sched::block_loops(s.func(), "mx", &mx, &error));
  CHECK(row.size() == 3);  // g, i, j
  CHECK(mx.size() == 3);
  CHECK(out_acc.size() == 4);  // and its own loop over v's columns inside
  // Exactly one loop over j inside the row's loop: the scores' and the pass's.
  size_t loops_over_j = 0;
  for (size_t at = text.find("for j in"); at != std::string::npos; at = text.find("for j in", at + 1))
    ++loops_over_j;
  CHECK(loops_over_j == 2);
  // Each sum is rescaled by exp(old max - new max) before its term is added.
  CHECK(text.find("l[vg - g, vi - i] = l[vg - g, vi - i] * mx_scale[") != std::string::npos);
  CHECK(text.find("out_acc[vg - g, vi - i, vc] = out_acc[vg - g, vi - i, vc] * mx_scale[") !=
        std::string::npos);
  // p is one element now: the row of exponentials is never stored.
  CHECK(elements(buffer(s.func(), "p")) == 1);
  CHECK(elements(buffer(s.func(), "sc")) == 6);  // the scores still are, until merge
  REQUIRE_MESSAGE(s.apply(kMerge, &error), error);
  CHECK(elements(buffer(s.func(), "sc")) == 1);
  CHECK(elements(buffer(s.func(), "sc_acc")) == 1);
  text = tir::print_script(s.func());
  CHECK(text.find("for j in") == text.rfind("for j in"));  // one pass over the row
  // The trace replays to the same nest.
  tensor::Schedule again(f);
  REQUIRE_MESSAGE(again.apply_text(s.trace(), &error), error);
  CHECK(tir::print_script(again.func()) == tir::print_script(s.func()));
}

TEST_CASE("online_softmax and merge refuse what they cannot do, and say why") {
  tir::PrimFunc f = lower_prelude("attention", 1, 4, 6, 3, 2);
  // Unfused: the max and the exponentials are separate nests.
  CHECK(refusal(f, "", kOnline).find("nothing follows its loop 'j'") != std::string::npos);
  // The sum over v with its column loop outside its row loop.
  std::string rows_c_outer = kRows;
  rows_c_outer.erase(rows_c_outer.find("reorder out_acc.j out_acc.c"));
  CHECK(refusal(f, rows_c_outer, kOnline).find("reorder out_acc.j out_acc.c") != std::string::npos);
  // Not a max reduction.
  CHECK(refusal(f, kRows, "online_softmax l").find("not a max reduction") != std::string::npos);
  CHECK(refusal(f, kRows, "online_softmax nope").find("no block 'nope'") != std::string::npos);
  // merge: the max needs every score of the row before the exponentials start.
  std::string why = refusal(f, kRows, "merge mx.j p.j");
  CHECK_MESSAGE(why.find("'mx' is not touched at one slice per iteration") != std::string::npos, why);
  // merge: not neighbours.
  CHECK(refusal(f, kRows, "merge sc.j l.j").find("not neighbours") != std::string::npos);
  // The exponentials read by something that is not a sum over the row.
  constexpr const char* kAlsoP = R"(
kernel att_p(q: f32[s, d], k: f32[t, d]) -> f32[s, t] {
  sc[i, j] = sum(c) q[i, c] * k[j, c]
  mx[i] = max(j) sc[i, j]
  p[i, j] = exp(sc[i, j] - mx[i])
  l[i] = sum(j) p[i, j]
  w[i, j] = p[i, j] / l[i]
  return w
}
)";
  tir::PrimFunc g = lower_kernel_text(kAlsoP, {{4, 3}, {6, 3}});
  why = refusal(g,
                "reverse_compute_at mx sc.i\nreverse_compute_at p sc.i\nreverse_compute_at l sc.i\n",
                kOnline);
  CHECK_MESSAGE(why.find("block 'w' also reads 'p'") != std::string::npos, why);
}

TEST_CASE("merge joins loops split alike when each iteration touches a block of its own") {
  // Softmax's exponentials and their sum, each split by 4 (the sum's partials in 4 lanes):
  // iteration j_0 writes e[i, 4 j_0 .. 4 j_0 + 3] and the sum reads the same four, though
  // the index expressions differ (j_1 against c_1).
  tir::PrimFunc f = lower_kernel_text(std::string(tensor::prelude_source()), {{3, 16}}, "softmax",
                                      "prelude.ds");
  const std::string rows = "compute_at s out.i\ncompute_at e out.i\ncompute_at mx out.i\n";
  const std::string split = rows + "split e.j 4\nsplit s.c 4\nrfactor s s.c_1\n";
  tensor::Schedule s = scheduled(f, split + "merge e.j_0 s_rf.c_0\ndecompose_reduction s_rf e.j_0\n"
                                            "vectorize e.j_1\nvectorize s_rf.c_1\n");
  check_everywhere(f, s.func(), "softmax, exp and sum merged");
  std::string text = tir::print_script(s.func());
  CHECK(text.find("for c_0 in") == std::string::npos);  // the sum's loop is the exp's now
  // Blocks of different widths: iteration j_0 writes 4 elements, the sum's reads 8.
  std::string why = refusal(f, rows + "split e.j 4\nsplit s.c 8\nrfactor s s.c_1\n",
                            "merge e.j_0 s_rf.c_0");
  CHECK_MESSAGE(why.find("lengths differ") != std::string::npos, why);
  // A sum over the row backwards: iteration 0 reads the last block, which iteration 3 writes.
  // (x[i, c] gives c its extent.)
  constexpr const char* kBackwards = R"(
kernel back(x: f32[n, 16]) -> f32[n] {
  e[i, j] = x[i, j] * 2.0
  s[i] = sum(c) e[i, 15 - c] + 0.0 * x[i, c]
  return s
}
)";
  tir::PrimFunc g = lower_kernel_text(kBackwards, {{2, 16}});
  why = refusal(g, "compute_at e s.i\nsplit e.j 4\nsplit s.c 4\nrfactor s s.c_1\n",
                "merge e.j_0 s_rf.c_0");
  CHECK_MESSAGE(why.find("'e' is not touched at one slice per iteration") != std::string::npos, why);
}

TEST_CASE("flash tiling: a block of query rows per pass") {
  for (const char* name : {"attention", "causal_attention"}) {
    bool causal = std::string(name) == "causal_attention";
    tir::PrimFunc f = lower_prelude(name, 2, 7, causal ? 7 : 5, 3, 2);
    std::string steps = kTiledRows + kTiledColumns + kOnline + "\n";
    check_everywhere(f, scheduled(f, steps).func(), std::string(name) + " online, tiled");
    steps += std::string(kMerge) + "\n";
    tensor::Schedule s = scheduled(f, steps);
    check_everywhere(f, s.func(), std::string(name) + " flash, tiled");
    // A tile of the scores is four rows by one column; a key's row serves four queries.
    CHECK(elements(buffer(s.func(), "sc")) == 4);
    CHECK(elements(buffer(s.func(), "p")) == 4);
  }
}

namespace {
double moved(const tensor::Traffic& t, const std::string& name) {
  for (const auto& b : t.buffers)
    if (b.name == name) return b.moved_bytes;
  return -1;  // not a global buffer
}
}  // namespace

TEST_CASE("the traffic model: what each version of attention moves") {
  // One head, 64 queries and keys of 16 numbers: q, k, v and out are 4 KiB each.
  tir::PrimFunc f = lower_prelude("attention", 1, 64, 64, 16, 16);
  const double kib = 1024;
  SUBCASE("a cache that holds everything moves each global buffer once") {
    tensor::Traffic t = tensor::data_movement(f, 1 << 30);
    double sizes = 0;
    for (const auto& b : t.buffers) {
      CHECK(b.moved_bytes == b.size_bytes);
      sizes += b.size_bytes;
    }
    CHECK(t.moved_bytes() == sizes);
    // The unfused nest keeps sc_acc, sc and p ([1, 64, 64], 16 KiB each) in memory.
    CHECK(t.intermediate_bytes() == 3 * 16 * kib + 4 * kib + 2 * 256);  // and out_acc, mx, l
    tensor::Traffic flash = tensor::data_movement(
        scheduled(f, kRows + kOnline + "\n" + kMerge).func(), 1 << 30);
    CHECK(flash.intermediate_bytes() == 0);
    CHECK(flash.moved_bytes() == 4 * 4 * kib);  // q, k, v, out: compulsory traffic only
    CHECK(moved(flash, "sc") == -1);           // no longer in memory at all
  }
  SUBCASE("a small cache: rows fused read k per query row, the tile per four rows") {
    // 2 KiB: a tile's rows of q and one row each of k and v fit, all of k does not.
    tensor::Traffic rows = tensor::data_movement(
        scheduled(f, kRows + kOnline + "\n" + kMerge).func(), 2 * kib);
    tensor::Traffic tiled = tensor::data_movement(
        scheduled(f, kTiledRows + kTiledColumns + kOnline + "\n" + kMerge).func(),
        2 * kib);
    CAPTURE(tensor::format_traffic(rows));
    CAPTURE(tensor::format_traffic(tiled));
    CHECK(moved(rows, "k") == 64 * 4 * kib);   // once per query row
    CHECK(moved(tiled, "k") == 16 * 4 * kib);  // once per tile of 4 rows
    CHECK(moved(tiled, "v") == 16 * 4 * kib);
    CHECK(moved(tiled, "q") == 4 * kib);       // each tile of q stays while k and v stream by
    CHECK(moved(tiled, "out") == 4 * kib);
    // Unfused, the scores go to memory and back: more than either fused version.
    tensor::Traffic unfused = tensor::data_movement(f, 2 * kib);
    CHECK(unfused.moved_bytes() > rows.moved_bytes());
    CHECK(moved(unfused, "p") >= 3 * 16 * kib);  // written, then read by two sums
  }
}

TEST_CASE("examples/flash_attention*.sched: the whole road, vectors and work-groups included") {
  for (const char* file : {"flash_attention.sched", "flash_attention_opencl.sched"}) {
    std::ifstream in(std::string(DESCENT_SOURCE_DIR) + "/examples/" + file);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    for (const char* name : {"attention", "causal_attention"}) {
      bool causal = std::string(name) == "causal_attention";
      // 72 rows: the 64-row tile leaves a remainder (a predicate on every stage).
      tir::PrimFunc f = lower_prelude(name, 2, 72, causal ? 72 : 24, 8, 16);
      tensor::Schedule s = scheduled(f, text.str());
      std::string where = std::string(file) + " on " + name;
      if (std::string(file).find("opencl") == std::string::npos) {
        check_everywhere(f, s.func(), where);
      } else {  // bound loops run on opencl alone
        auto in_t = inputs_for(f);
        tensor::Tensor got;
        if (run_on("opencl", s.func(), in_t, &got)) check_close(interpret(f, in_t), got, where);
      }
    }
  }
}

TEST_CASE("the opencl default schedule of attention is the flash schedule; cpu's is not") {
  for (const char* name : {"attention", "causal_attention"}) {
    bool causal = std::string(name) == "causal_attention";
    tir::PrimFunc f = lower_prelude(name, 2, 70, causal ? 70 : 33, 8, 16);
    tune::RuleTarget gpu;
    gpu.device = "opencl";
    tune::RuleSchedule d = tune::default_schedule(f, gpu);
    CAPTURE(d.trace);
    CHECK(d.trace.find("online_softmax mx\nmerge sc_acc.j mx.j\n") != std::string::npos);
    CHECK(d.trace.find("bind sc_acc.i_0 group.y") != std::string::npos);
    CHECK(d.notes.back().find("attention's pattern") != std::string::npos);
    check_close(interpret(f, inputs_for(f)), interpret(d.func, inputs_for(f)), name);
    auto in = inputs_for(f);
    tensor::Tensor got;
    if (run_on("opencl", d.func, in, &got)) check_close(interpret(f, in), got, std::string(name) + " on opencl");
    tune::RuleTarget cpu;
    CHECK(tune::default_schedule(f, cpu).trace.find("online_softmax") == std::string::npos);
  }
  // softmax3 has the max, the exponentials and a sum, but its output reads the exponentials
  // again: no flash schedule (the per-nest recipes instead).
  tir::PrimFunc sm = lower_kernel_text(std::string(tensor::prelude_source()), {{2, 8, 8}}, "softmax3",
                                       "prelude.ds");
  CHECK(tune::flash_schedule(sm, nullptr).empty());
}
