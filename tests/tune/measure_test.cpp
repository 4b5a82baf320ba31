// The real measurer (tune/measure.h), the features and the XGBoost cost model, and tuning
// through the Session. Times are measured here but never compared with a number: the tests
// assert what was checked, what failed and why, and what the runtime then runs.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "pipeline/pipeline.h"
#include "tensor/schedule.h"
#include "tests/tune/tune_util.h"
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/features.h"
#include "tune/measure.h"
#include "tune/rules.h"

using namespace descent;
using namespace descent::tune;
using descent::testing::matmul;
using descent::testing::parsed;
namespace fs = std::filesystem;

namespace {

tir::PrimFunc scheduled(const tir::PrimFunc& f, const std::string& trace) {
  tensor::Schedule s(f);
  std::string error;
  REQUIRE_MESSAGE(s.apply_text(trace, &error), error);
  return s.func();
}

fs::path scratch_file(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("descent-measure-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::remove(dir / name);
  return dir / name;
}

// The kernel's own launch; any other must be the copy of its weights that the default
// schedule's layout step makes (transform_layout, made once per weight tensor).
const tensor::LaunchRecord& kernel_launch(const Outcome& o, const std::string& name) {
  const tensor::LaunchRecord* found = nullptr;
  for (const tensor::LaunchRecord& l : o.launches) {
    if (l.kernel != name) {
      CHECK(l.kernel == name + ".w_t");
      continue;
    }
    REQUIRE(found == nullptr);
    found = &l;
  }
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("the measurer checks each candidate against the interpreter before timing it") {
  tir::PrimFunc f = matmul(32);
  MeasureOptions o;
  o.repeats = 3;
  BackendMeasurer m(f, o);
  std::string error;
  REQUIRE_MESSAGE(m.open(&error), error);
  double seconds = 0;
  std::string trace = "split j 16\nreorder i j_0 r j_1\nvectorize j_1\n";
  CHECK_MESSAGE(m.measure(scheduled(f, trace), trace, &seconds, &error), error);
  CHECK(seconds > 0);
  CHECK(m.last_check() == "at the tuning size");
  // A loop nest that computes something else (the transpose's product) is refused, never timed.
  Session s;
  tir::PrimFunc other;
  REQUIRE(s.lower_kernel("linear", {{"n", 32}, {"k", 32}, {"m", 32}}, "", &other, &error));
  CHECK_FALSE(m.measure(other, "", &seconds, &error));
  CHECK(error.find("computes something else than the reference interpreter") != std::string::npos);
  // An unknown device is an error of open(), with the devices listed.
  MeasureOptions bad;
  bad.device = "tpu";
  BackendMeasurer nowhere(f, bad);
  CHECK_FALSE(nowhere.open(&error));
  CHECK(error.find("unknown device 'tpu'") != std::string::npos);
}

TEST_CASE("the measurer checks a kernel too big to interpret at a smaller size") {
  Session s;
  std::string error;
  tir::PrimFunc f;
  std::map<std::string, int64_t> dims = {{"n", 64}, {"k", 64}, {"m", 64}};
  REQUIRE(s.lower_kernel("matmul", dims, "", &f, &error));
  MeasureOptions o;
  o.repeats = 1;
  o.check_flops = 2 * 16 * 16 * 16;  // the interpreter only at dims / 4
  int asked = 0;
  BackendMeasurer m(f, o, [&](int shrink, tir::PrimFunc* out) {
    ++asked;
    std::map<std::string, int64_t> smaller;
    for (const auto& [k, v] : dims) smaller[k] = v >> shrink;
    std::string why;
    return s.lower_kernel("matmul", smaller, "", out, &why);
  });
  REQUIRE(m.open(&error));
  double seconds = 0;
  std::string trace = "tile i j 4 8\n";
  CHECK_MESSAGE(m.measure(scheduled(f, trace), trace, &seconds, &error), error);
  CHECK(m.last_check() == "at dims / 4");
  CHECK(asked >= 2);
  // A schedule whose factors fit no smaller size is checked at the tuning size against the
  // unscheduled nest compiled by the cpu backend, whose own answer the interpreter checked
  // at as many sampled output elements as check_flops allows (64 of them, 128 flops each).
  std::string wide = "split i 64\n";
  CHECK_MESSAGE(m.measure(scheduled(f, wide), wide, &seconds, &error), error);
  CHECK(m.last_check() ==
        "against the compiled unscheduled nest (itself checked against the interpreter at 64 "
        "output elements)");
  // Still checked by the smaller size where it fits, after that.
  CHECK_MESSAGE(m.measure(scheduled(f, trace), trace, &seconds, &error), error);
  CHECK(m.last_check() == "at dims / 4");
}

TEST_CASE("a kernel too big to interpret with no smaller size is checked against its compiled nest") {
  // A kernel with literal shapes has no dims to halve: this measurer has no SmallLowering,
  // and the interpreter's budget is far below the kernel. Nothing here was measured before.
  tir::PrimFunc f = matmul(64);
  MeasureOptions o;
  o.repeats = 1;
  o.check_flops = 1e4;
  BackendMeasurer m(f, o);
  std::string error;
  REQUIRE(m.open(&error));
  double seconds = 0;
  std::string trace = "split j 16\nreorder i j_0 r j_1\nvectorize j_1\n";
  CHECK_MESSAGE(m.measure(scheduled(f, trace), trace, &seconds, &error), error);
  CHECK(seconds > 0);
  CHECK(m.last_check().rfind("against the compiled unscheduled nest (itself checked against the "
                             "interpreter at ", 0) == 0);
  // The unscheduled nest itself passes (it is what the tuner times as "as lowered").
  CHECK_MESSAGE(m.measure(f, "", &seconds, &error), error);
  // A nest that computes the product with B transposed is refused, never timed.
  Session s;
  tir::PrimFunc other;
  REQUIRE(s.lower_kernel("linear", {{"n", 64}, {"k", 64}, {"m", 64}}, "", &other, &error));
  seconds = 0;
  CHECK_FALSE(m.measure(other, "", &seconds, &error));
  CHECK(error.find("computes something else than the unscheduled nest (checked against the "
                   "compiled unscheduled nest") != std::string::npos);
  CHECK(seconds == 0);
  // With no budget for even one sampled element, the compiled nest is the check alone.
  MeasureOptions none = o;
  none.check_flops = 1;
  BackendMeasurer bare(f, none);
  REQUIRE(bare.open(&error));
  CHECK_MESSAGE(bare.measure(scheduled(f, trace), trace, &seconds, &error), error);
  CHECK(bare.last_check() == "against the compiled unscheduled nest");
}

TEST_CASE("a sampled nest computes the elements it names exactly as the whole nest does") {
  // The check of the compiled reference is only as good as this rewrite: every sampled
  // element must be the interpreter's own answer, on one-stage and many-stage kernels,
  // square and not, bit for bit (the same interpreter, the same order of operations).
  Session s;
  struct Kernel {
    std::string name;
    std::map<std::string, int64_t> dims;
  };
  for (const Kernel& k : std::vector<Kernel>{{"matmul", {{"n", 24}, {"k", 16}, {"m", 40}}},
                                             {"linear_relu", {{"n", 8}, {"k", 16}, {"m", 24}}},
                                             {"transpose", {{"n", 12}, {"m", 20}}},
                                             {"softmax", {{"n", 6}, {"m", 33}}}}) {
    CAPTURE(k.name);
    tir::PrimFunc f;
    std::string error;
    REQUIRE_MESSAGE(s.lower_kernel(k.name, k.dims, "", &f, &error), error);
    std::vector<tensor::Tensor> inputs(f.params.size());
    std::vector<const tensor::Tensor*> args;
    for (size_t i = 0; i < f.params.size(); ++i) {
      REQUIRE(tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(i + 1), &inputs[i], &error));
      args.push_back(&inputs[i]);
    }
    tensor::Tensor whole, some;
    REQUIRE_MESSAGE(tir::interpret(f, args, &whole, &error), error);
    SampledNest sampled;
    REQUIRE(sampled_nest(f, 50, &sampled));
    REQUIRE(sampled.flat.size() == 50);
    CHECK(sampled.flops <= tensor::kernel_cost(f).flops);
    REQUIRE_MESSAGE(tir::interpret(sampled.func, args, &some, &error), error);
    std::set<int64_t> distinct(sampled.flat.begin(), sampled.flat.end());
    CHECK(distinct.size() == 50);  // never one element twice
    for (int64_t at : sampled.flat) CHECK(some.data[size_t(at)] == whole.data[size_t(at)]);
    // A scheduled nest is not what it rewrites: it says so rather than guess.
    tensor::Schedule sch(f);
    if (sch.apply_text("fuse i j\n", &error))
      CHECK_FALSE(sampled_nest(sch.func(), 50, &sampled));
  }
}

TEST_CASE("whole-program tuning tunes a kernel with literal shapes too big to interpret") {
  // 2 * 256^3 = 33.5 MFLOP: just above the interpreter's budget (MeasureOptions::check_flops),
  // and no dims to lower it smaller. Before issue 34 every candidate failed.
  Session s;
  REQUIRE(s.set_device("cpu"));
  RunOptions opts;
  opts.out = [](std::string_view) {};
  const char* program =
      "kernel gemm(A: f32[256, 256], B: f32[256, 256]) -> f32[256, 256] {\n"
      "  C[i, j] = sum(r) A[i, r] * B[r, j]\n"
      "  return C\n"
      "}\n"
      "print(sum_all(gemm(rand([256, 256], 1), rand([256, 256], 2))))\n";
  Outcome o = s.submit(program, "gemm.ds", opts);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  Session::TuneRequest all;
  all.strategy = "random";
  all.trials = 3;
  all.repeats = 1;
  std::vector<std::string> lines;
  Session::TuneReport r = s.tune(all, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.tasks.size() == 1);
  const Session::TuneTask& t = r.tasks[0];
  CHECK(t.kernel == "gemm");
  // The report says which oracle judged the candidates.
  bool said = false;
  for (const auto& l : lines) said |= l.rfind("  checked against the compiled unscheduled nest (", 0) == 0;
  CHECK(said);
  CHECK(t.flops > 3e7);
  CHECK_MESSAGE(t.naive_error.empty(), t.naive_error);
  CHECK(t.naive_seconds > 0);
  int ok = 0;
  for (const auto& c : t.result.candidates) {
    ok += c.ok;
    CHECK_MESSAGE(c.error.find("could not be checked") == std::string::npos, c.error);
  }
  CHECK(ok > 0);
  CHECK(t.best_seconds > 0);
}

TEST_CASE("the measurer stops a run past its time limit and records why") {
  tir::PrimFunc f = matmul(256);  // about 20 ms as lowered; the limit is 1 ms
  MeasureOptions o;
  o.repeats = 1;
  o.time_limit_s = 0.001;
  o.check_flops = 1e9;
  BackendMeasurer m(f, o);
  std::string error;
  REQUIRE(m.open(&error));
  double seconds = 0;
  CHECK_FALSE(m.measure(f, "", &seconds, &error));
  CHECK(error.find("stopped after") != std::string::npos);
}

TEST_CASE("a batch built ahead on a second thread gives each candidate its own result") {
  tir::PrimFunc f = matmul(32);
  std::vector<std::string> traces = {"split i 4\n", "tile i j 8 8\nvectorize j_1\n", "unroll i\n",
                                     "split j 16\nvectorize j_1\n"};
  std::vector<tir::PrimFunc> funcs;
  std::vector<MeasureItem> items(traces.size());
  for (const auto& t : traces) {
    std::string error;
    tensor::Schedule s(f);
    bool ok = s.apply_text(t, &error);
    funcs.push_back(ok ? s.func() : f);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].func = &funcs[i];
    items[i].trace = &traces[i];
  }
  MeasureOptions o;
  o.repeats = 1;
  BackendMeasurer m(f, o);
  std::string error;
  REQUIRE(m.open(&error));
  std::vector<size_t> heard;
  m.measure_batch(items, [&](size_t k) {
    heard.push_back(k);
    return k < 2;  // stop after the third
  });
  CHECK(heard == std::vector<size_t>{0, 1, 2});
  CHECK(items[0].measured);
  CHECK(items[2].measured);
  CHECK_FALSE(items[3].measured);  // built ahead, never run
  // "unroll i" of 32 iterations is legal; each measured one was checked and timed.
  for (size_t k = 0; k < 3; ++k) {
    CHECK_MESSAGE(items[k].ok, items[k].error);
    CHECK(items[k].seconds > 0);
  }
}

TEST_CASE("features: one number per name, and the schedule moves the ones it should") {
  tir::PrimFunc f = matmul(64);
  std::vector<float> plain = features(f);
  REQUIRE(plain.size() == feature_names().size());
  auto at = [&](const std::vector<float>& v, const std::string& name) {
    auto it = std::find(feature_names().begin(), feature_names().end(), name);
    REQUIRE(it != feature_names().end());
    return v[size_t(it - feature_names().begin())];
  };
  std::vector<float> vec = features(scheduled(f, "split j 16\nreorder i j_0 r j_1\nvectorize j_1\nparallel i\n"));
  CHECK(at(plain, "vector lanes") == 0);
  CHECK(at(vec, "vector lanes") == 16);
  CHECK(at(plain, "log2 parallel extent") == 0);
  CHECK(at(vec, "log2 parallel extent") > 5.9f);
  // The same work either way.
  CHECK(at(plain, "log2 flops") == at(vec, "log2 flops"));
  // Matmul's innermost loop r walks A with stride 1 and B with stride 64 as lowered; after
  // the reorder, j_1 walks B and C with stride 1.
  CHECK(at(vec, "stride-1 share") > at(plain, "stride-1 share"));
  // The register tile: spatial iterations inside the reduction loop.
  std::vector<float> tiled = features(scheduled(f, "tile i j 8 16\nreorder i_0 j_0 r i_1 j_1\n"));
  CHECK(at(tiled, "log2 register tile") > 6.9f);
  CHECK(features(f) == plain);  // deterministic
}

TEST_CASE("the XGBoost model learns an ordering from features and says so by rank") {
  std::unique_ptr<CostModel> model = make_cost_model("xgboost");
  REQUIRE(model);
  CHECK(make_cost_model("oracle") == nullptr);
  tir::PrimFunc f = matmul(64);
  // A made-up cost: wider vectors and more threads are faster; the model sees only the nests.
  std::vector<tir::PrimFunc> nests;
  std::vector<double> seconds;
  for (int v : {1, 2, 4, 8, 16})
    for (bool par : {false, true}) {
      std::string trace = "split j " + std::to_string(v) + "\nreorder i j_0 r j_1\n";
      if (v > 1) trace += "vectorize j_1\n";
      if (par) trace += "parallel i\n";
      nests.push_back(scheduled(f, trace));
      seconds.push_back(1.0 / (double(v) * (par ? 2 : 1)));
    }
  std::vector<const tir::PrimFunc*> ptrs;
  for (const auto& n : nests) ptrs.push_back(&n);
  std::string error;
  REQUIRE_MESSAGE(model->fit(ptrs, seconds, &error), error);
  std::vector<double> scores = model->predict(ptrs);
  std::vector<double> speed;
  for (double s : seconds) speed.push_back(1 / s);
  CHECK(spearman(scores, speed) > 0.9);
  // An empty fit is an error, not a crash.
  CHECK_FALSE(model->fit({}, {}, &error));
}

TEST_CASE("spearman: ranks with ties") {
  CHECK(spearman({1, 2, 3}, {10, 20, 30}) == doctest::Approx(1.0));
  CHECK(spearman({1, 2, 3}, {30, 20, 10}) == doctest::Approx(-1.0));
  CHECK(spearman({1, 1, 2}, {5, 5, 9}) == doctest::Approx(1.0));
  CHECK(spearman({1}, {2}) == 0);
}

TEST_CASE("tuning through the Session: records, resumption, and the kernel runs tuned after") {
  fs::path db = scratch_file("tune.jsonl");
  Session s;
  Session::TuneRequest req;
  req.kernel = "matmul";
  req.dims = {{"n", 32}, {"k", 32}, {"m", 32}};
  req.strategy = "random";
  req.trials = 5;
  req.repeats = 1;
  req.database = db.string();
  std::vector<std::string> lines;
  Session::TuneReport r = s.tune(req, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.tasks.size() == 1);
  const Session::TuneTask& t = r.tasks[0];
  CHECK(t.shape == "32x32 32x32");
  CHECK(t.naive_seconds > 0);
  CHECK(t.default_seconds > 0);
  CHECK(t.best_seconds > 0);
  CHECK(t.best_seconds <= t.default_seconds);
  CHECK(!lines.empty());
  // Every candidate and the default schedule are in the file.
  Database d = load_database(db.string());
  CHECK(d.problems.empty());
  size_t measured = 0;
  for (const auto& c : t.result.candidates) measured += !c.from_database;
  CHECK(d.records.size() == measured + 1);
  for (const auto& rec : d.records) {
    CHECK(rec.kernel == "matmul");
    CHECK(rec.device == "cpu");
    if (rec.ok) CHECK(rec.features.size() == feature_names().size());
  }
  // A second job resumes: the traces measured before are not measured again.
  Session again;
  again.set_tuning_database(db.string());
  CHECK(again.tuning_records() == d.records.size());
  std::vector<std::string> lines2;
  Session::TuneReport r2 = again.tune(req, [&](const std::string& l) { lines2.push_back(l); });
  REQUIRE_MESSAGE(r2.ok, r2.error);
  int reused = 0;
  for (const auto& c : r2.tasks[0].result.candidates) reused += c.from_database;
  CHECK(reused > 0);
  // Issue 32: the default schedule too is measured once per kernel, shape and device; a
  // second job takes its time from the database and does not append it again.
  REQUIRE(!lines2.empty());
  CHECK(lines2[0].find("(from the database)") != std::string::npos);
  CHECK(r2.tasks[0].default_seconds == t.default_seconds);
  int defaults = 0;
  for (const auto& rec : load_database(db.string()).records) defaults += rec.trace == t.default_trace;
  CHECK(defaults == 1);
  // The kernel now runs with its tuned record on cpu; on ref it runs as lowered.
  REQUIRE(s.set_device("cpu"));
  RunOptions opts;
  opts.out = [](std::string_view) {};
  Outcome o = s.submit("print(sum_all(matmul(rand([32, 32], 1), rand([32, 32], 2))))", "t.ds", opts);
  REQUIRE(o.status == Outcome::Ok);
  REQUIRE(o.launches.size() == 1);
  CHECK(o.launches[0].schedule == "tuned");
  // Errors: an unknown strategy, a missing kernel, a dim it lacks, tuning for the oracle.
  Session::TuneRequest bad = req;
  bad.strategy = "anneal";
  CHECK(s.tune(bad).error == "unknown strategy 'anneal' (strategies: random, ga, beam, evolutionary)");
  bad = req;
  bad.kernel = "nope";
  CHECK(s.tune(bad).error == "no kernel named 'nope'");
  bad = req;
  bad.dims["q"] = 4;
  CHECK(s.tune(bad).error == "kernel 'matmul' has no dim 'q'");
  bad = req;
  bad.device = "ref";
  CHECK(s.tune(bad).error.find("the reference interpreter is the oracle") == 0);
}

TEST_CASE("a tuned record that no longer applies is skipped for the next one, and said so once") {
  // Issue 32: such a record was skipped without a word (and the kernel fell back to the
  // defaults even when a slower record still applied).
  fs::path db = scratch_file("stale.jsonl");
  {
    std::ofstream out(db);
    out << "{\"kernel\":\"matmul\",\"shape\":\"32x32 32x32\",\"device\":\"cpu\",\"ok\":true,"
           "\"seconds\":0.00001,\"trace\":\"split nosuchloop 4\\n\"}\n";
    out << "{\"kernel\":\"matmul\",\"shape\":\"32x32 32x32\",\"device\":\"cpu\",\"ok\":true,"
           "\"seconds\":0.001,\"trace\":\"split i 8\\n\"}\n";
  }
  Session s;
  s.set_tuning_database(db.string());
  CHECK(s.tuning_problems().empty());
  REQUIRE(s.set_device("cpu"));
  RunOptions opts;
  opts.out = [](std::string_view) {};
  const char* program = "print(sum_all(matmul(rand([32, 32], 1), rand([32, 32], 2))))";
  Outcome o = s.submit(program, "t.ds", opts);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  REQUIRE(o.launches.size() == 1);
  CHECK(o.launches[0].schedule == "tuned");  // the slower record, which applies
  REQUIRE(o.notes.size() == 1);
  CHECK(o.notes[0].rfind(db.string() + ":1: the tuned record for matmul 32x32 32x32 on cpu no longer applies (", 0) == 0);
  CHECK(o.notes[0].find("nosuchloop") != std::string::npos);
  o = s.submit(program, "t.ds", opts);
  CHECK(o.notes.empty());  // once
}

TEST_CASE("kernels nobody scheduled run with the default schedule on cpu, as lowered when off") {
  Session s;
  REQUIRE(s.set_device("cpu"));
  RunOptions opts;
  std::string out;
  opts.out = [&](std::string_view v) { out += v; };
  const char* program =
      "y = relu(linear(rand([4, 256], 1), rand([64, 256], 2)))\nprint(sum_all(y) > 0.0)\n";
  Outcome o = s.submit(program, "t.ds", opts);
  REQUIRE(o.status == Outcome::Ok);
  CHECK(kernel_launch(o, "linear_relu").schedule == "default");  // fused, then scheduled
  s.set_default_schedules(false);
  o = s.submit(program, "t.ds", opts);
  REQUIRE(o.launches.size() == 1);  // as lowered: no layout step, no copy
  CHECK(o.launches[0].schedule == "");
  // The reference interpreter never gets one.
  s.set_default_schedules(true);
  REQUIRE(s.set_device("ref"));
  o = s.submit(program, "t.ds", opts);
  REQUIRE(o.launches.size() == 1);  // as lowered: no layout step, no copy
  CHECK(o.launches[0].schedule == "");
  // A whole-program tuning job tunes what ran: the fused kernel, at its shapes.
  REQUIRE(s.set_device("cpu"));
  Session::TuneRequest all;
  all.strategy = "random";
  all.trials = 2;
  all.repeats = 1;
  Session::TuneReport r = s.tune(all);
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.tasks.size() == 1);
  CHECK(r.tasks[0].kernel == "linear_relu");
  CHECK(r.tasks[0].shape == "4x256 64x256");
  // From now on the tuned record schedules it, defaults on or off.
  s.set_default_schedules(false);
  o = s.submit(program, "t.ds", opts);
  CHECK(kernel_launch(o, "linear_relu").schedule == "tuned");
}

TEST_CASE("tuning for OpenCL: candidates built and checked on the OpenCL device") {
  tensor::Backend* b = tensor::find_backend("opencl");
  std::string why;
  if (!b || !b->open(&why)) {
    // CI has PoCL; a machine without any OpenCL gets the open() error as the job's error.
    Session s;
    Session::TuneRequest req;
    req.kernel = "add";
    req.device = "opencl";
    Session::TuneReport r = s.tune(req);
    CHECK_FALSE(r.ok);
    CHECK(!r.error.empty());
    return;
  }
  Session s;
  Session::TuneRequest req;
  req.kernel = "matmul";
  req.dims = {{"n", 32}, {"k", 32}, {"m", 32}};
  req.device = "opencl";
  req.strategy = "random";
  req.trials = 3;
  req.repeats = 1;
  Session::TuneReport r = s.tune(req);
  REQUIRE_MESSAGE(r.ok, r.error);
  const Session::TuneTask& t = r.tasks[0];
  CHECK(t.naive_seconds > 0);
  CHECK(t.default_seconds > 0);
  CHECK(t.default_trace.find("bind") != std::string::npos);
  int ok = 0;
  for (const auto& c : t.result.candidates) ok += c.ok;
  CHECK(ok > 0);
}

TEST_CASE("an interrupted tuning job keeps what it measured and says so") {
  fs::path db = scratch_file("interrupted.jsonl");
  Session s;
  Session::TuneRequest req;
  req.kernel = "matmul";
  req.dims = {{"n", 32}, {"k", 32}, {"m", 32}};
  req.strategy = "random";
  req.trials = 20;
  req.repeats = 1;
  req.database = db.string();
  int candidates = 0;
  Session::TuneReport r = s.tune(req, [&](const std::string& line) {
    if (line.rfind("  #", 0) == 0 && ++candidates == 3) s.interrupt_flag() = true;  // Ctrl-C
  });
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.tasks.size() == 1);
  CHECK(r.tasks[0].result.interrupted);
  CHECK(r.tasks[0].result.candidates.size() < 20);
  // Every candidate measured before the interrupt is in the database (and the default).
  CHECK(load_database(db.string()).records.size() >= 3);
  // A space that does not parse is an error naming the line.
  s.interrupt_flag() = false;
  Session::TuneRequest bad = req;
  bad.space = "split i ?\nmaybe 2 unroll i_1\n";
  Session::TuneReport e = s.tune(bad);
  CHECK_FALSE(e.ok);
  CHECK(e.error.rfind("the space: line 2:", 0) == 0);
}
