// The tune suite of `descent bench`: what the auto-tuner (tune/, docs/tuning.md) buys, in one
// run. Each workload is a kernel searched from its naive loop nest by the evolutionary
// strategy with the XGBoost cost model, with every yardstick measured by the same measurer
// in the same run (tune/measure.h: built once, checked against the reference interpreter,
// the median of `repeats` timed runs):
//
//   <device>-naive    the loop nest as lowered (what the search starts from)
//   <device>-default  the rule-based default schedule (what a kernel nobody scheduled runs)
//   <device>-sched    the hand schedule shipped in bench/schedules (the tensor suite's column)
//   <device>-tuned    the best the search found in `tune_trials` measured candidates (never
//                     slower than the default: the default is a candidate too)
//
// and one workload, "strategies", that compares the strategies themselves: over five seeds,
// how many measured trials the evolutionary strategy needs to reach the best the random
// strategy found in all of its trials.
//
// Why not in "all": a search measures hundreds of candidates, minutes per workload at full
// scale. The classroom run stays short; this suite is run on purpose.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "bench/bench.h"
#include "bench/internal.h"
#include "bench/roofline.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/launch.h"
#include "tensor/tir.h"

namespace descent::bench {

namespace {
namespace fs = std::filesystem;
using Dims = std::map<std::string, int64_t>;

struct TuneWorkload {
  std::string name, kernel, title;
  Dims dims, quick_dims;
  std::string device;  // where it is tuned
  std::string hand;    // the schedule file stem in bench/schedules ("" when there is none)
  // A kernel of its own (not the prelude's): its source at full and at quick scale.
  std::string source, quick_source;
};

Dims cube(int64_t s) { return {{"n", s}, {"k", s}, {"m", s}}; }

// A 3x3 convolution, 'valid' positions only (the shape ONNX import gives a Conv node): the
// output size is the input's minus 2, which a signature cannot compute, so the shapes are
// written out.
std::string conv_source(int64_t channels, int64_t size) {
  return fmt::format(
      "# A 3x3 convolution over {0} channels of {1}x{1} pixels, {0} output channels.\n"
      "kernel conv2d(x: f32[{0}, {1}, {1}], f: f32[{0}, {0}, 3, 3]) -> f32[{0}, {2}, {2}] {{\n"
      "  out[o, i, j] = sum(c, r, s) x[c, i + r, j + s] * f[o, c, r, s]\n"
      "  return out\n"
      "}}\n",
      channels, size, size - 2);
}

const std::vector<TuneWorkload>& all_workloads() {
  static const std::vector<TuneWorkload> w = {
      {"matmul_1024", "matmul", "C = A B, 1024^3 (compute bound)", cube(1024), cube(256), "cpu",
       "matmul", "", ""},
      {"linear_relu", "linear_relu", "relu(x w^T), x 1 x 3072, w 200 x 3072",
       {{"n", 1}, {"k", 3072}, {"m", 200}}, {{"n", 1}, {"k", 256}, {"m", 40}}, "cpu", "linear_relu",
       "", ""},
      {"softmax_1024", "softmax", "row softmax, 1024 x 1024", {{"n", 1024}, {"m", 1024}},
       {{"n", 16}, {"m", 64}}, "cpu", "softmax", "", ""},
      // Small enough (19 MFLOP) for every candidate to be checked against the interpreter
      // at full size: its shapes are fixed, so there is no smaller size to check at.
      {"conv2d", "conv2d", "3x3 convolution, 32 channels, 34 x 34 -> 32 x 32", {}, {}, "cpu", "",
       conv_source(32, 34), conv_source(4, 10)},
      {"linear_relu_opencl", "linear_relu", "relu(x w^T) on OpenCL, x 1 x 3072, w 200 x 3072",
       {{"n", 1}, {"k", 3072}, {"m", 200}}, {{"n", 1}, {"k", 256}, {"m", 40}}, "opencl",
       "linear_relu", "", ""},
      // The strategies compared: a kernel small enough for ten searches.
      {"strategies", "matmul", "random vs evolutionary search, matmul 256^3, 5 seeds", cube(256),
       cube(64), "cpu", "", "", ""},
  };
  return w;
}

int trials_of(const BenchOptions& o) { return o.tune_trials > 0 ? o.tune_trials : o.quick ? 4 : 200; }
int strategy_trials(const BenchOptions& o) {
  return o.tune_trials > 0 ? std::max(2, o.tune_trials / 3) : o.quick ? 4 : 64;
}

class TuneSuite {
 public:
  explicit TuneSuite(const BenchOptions& o) : o_(o) {}
  std::vector<BenchRecord> run(std::string* error);

 private:
  void say(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }
  BenchRecord record(const TuneWorkload& w, const std::string& engine, int threads) const {
    BenchRecord r;
    r.suite = "tune";
    r.workload = w.name;
    r.engine = engine;
    r.kind = "descent";
    r.scale = o_.quick ? "quick" : "full";
    r.threads = threads;
    r.compile_s = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  // Times and rates of a record measured at `seconds` (0: it failed with `problem`).
  void finish(BenchRecord* r, double seconds, double flops, double bytes, const std::string& problem) {
    r->runs = seconds > 0 ? o_.repeats : 0;
    r->median_s = r->min_s = r->max_s = seconds;
    r->cpu_s = std::numeric_limits<double>::quiet_NaN();
    r->checksum_ok = seconds > 0;
    r->note = seconds > 0 ? "" : problem;
    if (seconds <= 0) return;
    r->gflops = flops / seconds / 1e9;
    r->gbs = bytes / seconds / 1e9;
    // The roof is the CPU's: only for the cpu device at a known thread count.
    if (r->threads > 0 && bytes > 0 && r->engine.rfind("cpu-", 0) == 0) {
      if (!roofs_.count(r->threads)) {
        roofs_[r->threads] = measure_roofline(r->threads);
        say(fmt::format("roofline at {} thread{}: {}", r->threads, r->threads == 1 ? "" : "s",
                        format_roofline(roofs_[r->threads])));
      }
      const Roofline& roof = roofs_[r->threads];
      double attainable = roof.attainable_gflops(flops / bytes, bytes);
      if (attainable > 0) {
        r->roof_fraction = r->gflops / attainable;
        r->roof_level = roof.level_for(bytes).name;
      }
    }
  }
  bool prepare(Session& s, const TuneWorkload& w, std::string* error) const;
  Session::TuneRequest request(const TuneWorkload& w) const;
  void tune_cells(const TuneWorkload& w, int threads, std::vector<BenchRecord>* out);
  void strategy_cells(const TuneWorkload& w, std::vector<BenchRecord>* out);

  const BenchOptions& o_;
  std::map<int, Roofline> roofs_;
};

bool TuneSuite::prepare(Session& s, const TuneWorkload& w, std::string* error) const {
  if (w.source.empty()) return true;
  Outcome out = s.compile(o_.quick ? w.quick_source : w.source, w.name + ".ds");
  if (out.status != Outcome::Ok) *error = out.message;
  return out.status == Outcome::Ok;
}

Session::TuneRequest TuneSuite::request(const TuneWorkload& w) const {
  Session::TuneRequest req;
  req.kernel = w.kernel;
  req.dims = o_.quick ? w.quick_dims : w.dims;
  req.device = w.device;
  req.strategy = "evolutionary";
  req.trials = trials_of(o_);
  req.seed = 1;
  req.repeats = o_.repeats;
  return req;
}

// One search, and its four records: naive, default, the hand schedule, tuned.
void TuneSuite::tune_cells(const TuneWorkload& w, int threads, std::vector<BenchRecord>* out) {
  const std::string d = w.device;
  std::vector<BenchRecord> rs = {record(w, d + "-naive", threads), record(w, d + "-default", threads),
                                 record(w, d + "-sched", threads), record(w, d + "-tuned", threads)};
  auto fail_all = [&](const std::string& why, bool skip) {
    for (auto& r : rs) {
      r.note = why;
      r.skipped = skip;
    }
    out->insert(out->end(), rs.begin(), rs.end());
  };
  std::string error;
  tensor::Backend* backend = tensor::find_backend(d);
  if (!backend || !backend->open(&error)) {
    fail_all("device " + d + " is not available here: " + error, true);
    return;
  }
  Session s;
  if (threads > 0) s.set_threads(threads);
  if (!prepare(s, w, &error)) {
    fail_all(error, false);
    return;
  }
  Session::TuneRequest req = request(w);
  std::string hand_path;
  if (!w.hand.empty()) {
    hand_path = (fs::path(o_.schedules_dir.empty() ? schedules_dir() : o_.schedules_dir) /
                 (w.hand + backend->schedule_suffix()))
                    .string();
    std::string text;
    if (read_file(hand_path, &text, &error)) req.compare.push_back({"hand", text});
  }
  std::string at = threads > 0 ? fmt::format(" ({} thread{})", threads, threads == 1 ? "" : "s") : "";
  int seen = 0;
  Session::TuneReport rep = s.tune(req, [&](const std::string& line) {
    if (interrupted()) s.interrupt_flag() = true;  // Ctrl-C stops the search, not just the suite
    if (line.rfind("  #", 0) == 0 && line.rfind("  #db", 0) != 0)
      say(fmt::format("{} {}{}: candidate {}", progress_bar(size_t(++seen), size_t(req.trials)),
                      w.name, at, seen));
  });
  if (!rep.ok || rep.tasks.empty()) {
    fail_all(rep.error.empty() ? "the search stopped before it measured anything" : rep.error, false);
    return;
  }
  const Session::TuneTask& t = rep.tasks.front();
  // The compulsory traffic, for the roofline (as the tensor suite counts it).
  double bytes = 0;
  {
    tir::PrimFunc f;
    std::string e;
    if (s.lower_kernel(w.kernel, req.dims, "", &f, &e)) bytes = tensor::kernel_cost(f).bytes;
  }
  finish(&rs[0], t.naive_seconds, t.flops, bytes, t.naive_error);
  finish(&rs[1], t.default_seconds, t.flops, bytes, "the rules have no default schedule for it");
  if (t.compared.empty()) {
    rs[2].skipped = true;
    rs[2].note = w.hand.empty() ? "no hand schedule for this workload" : "no schedule file " + hand_path;
  } else {
    finish(&rs[2], t.compared.front().seconds, t.flops, bytes, hand_path + ": " + t.compared.front().error);
  }
  finish(&rs[3], t.best_seconds, t.flops, bytes, "no candidate built and matched the reference");
  int measured = 0;
  for (const auto& c : t.result.candidates) measured += c.from_database ? 0 : 1;
  rs[3].trials = measured;
  rs[3].search_s = t.search_seconds;
  if (t.best_is_default) rs[3].note = "the default schedule: no candidate beat it";
  // Ratios against the hand schedule where there is one, else against the default.
  const BenchRecord& base = rs[2].checksum_ok ? rs[2] : rs[1];
  for (auto& r : rs) {
    r.baseline = base.engine;
    if (r.checksum_ok && base.checksum_ok) r.ratio_vs_baseline = r.median_s / base.median_s;
  }
  out->insert(out->end(), rs.begin(), rs.end());
}

// Random against evolutionary over five seeds (two quick): the trials the evolutionary
// search needs to come within 2% of the best the random search found in all of its trials
// (timings of separate searches differ by noise of about that much).
void TuneSuite::strategy_cells(const TuneWorkload& w, std::vector<BenchRecord>* out) {
  const int seeds = o_.quick ? 2 : 5, trials = strategy_trials(o_);
  std::vector<double> random_best, evo_best, needed;
  std::string problem;
  for (int seed = 1; seed <= seeds && !interrupted(); ++seed) {
    double best[2] = {0, 0};
    std::vector<double> evo_curve;
    for (int which = 0; which < 2 && !interrupted(); ++which) {
      Session s;  // a fresh one: no records carried from the other search
      s.set_threads(o_.threads.empty() ? 0 : o_.threads.back());
      Session::TuneRequest req = request(w);
      req.strategy = which == 0 ? "random" : "evolutionary";
      req.trials = trials;
      req.seed = uint64_t(seed);
      int seen = 0;
      Session::TuneReport rep = s.tune(req, [&](const std::string& line) {
        if (interrupted()) s.interrupt_flag() = true;
        if (line.rfind("  #", 0) == 0 && line.rfind("  #db", 0) != 0)
          say(fmt::format("{} strategies: {} seed {}: candidate {}",
                          progress_bar(size_t(++seen), size_t(trials)), req.strategy, seed, seen));
      });
      if (!rep.ok || rep.tasks.empty()) {
        problem = rep.error;
        continue;
      }
      const tune::SearchResult& sr = rep.tasks.front().result;
      if (sr.best >= 0) best[which] = sr.candidates[size_t(sr.best)].seconds;
      // The curve over measured candidates only (a database record is not a trial).
      if (which == 1)
        for (size_t i = 0; i < sr.candidates.size() && i < sr.best_so_far.size(); ++i)
          if (!sr.candidates[i].from_database) evo_curve.push_back(sr.best_so_far[i]);
    }
    if (best[0] <= 0 || best[1] <= 0) continue;
    random_best.push_back(best[0]);
    evo_best.push_back(best[1]);
    double reach = double(trials) + 1;  // not reached within its trials
    for (size_t i = 0; i < evo_curve.size(); ++i)
      if (evo_curve[i] > 0 && evo_curve[i] <= best[0] * 1.02) {
        reach = double(i + 1);
        break;
      }
    needed.push_back(reach);
  }
  BenchRecord r = record(w, "cpu-random", o_.threads.empty() ? 0 : o_.threads.back());
  BenchRecord e = record(w, "cpu-evolutionary", r.threads);
  auto fill = [&](BenchRecord* x, const std::vector<double>& bests, double trials_value) {
    x->runs = int(bests.size());
    x->runs_s = bests;
    x->checksum_ok = !bests.empty();
    x->note = bests.empty() ? (problem.empty() ? "no search finished" : problem) : "";
    if (bests.empty()) return;
    x->median_s = median_of(bests);
    x->min_s = *std::min_element(bests.begin(), bests.end());
    x->max_s = *std::max_element(bests.begin(), bests.end());
    x->trials = int(std::lround(trials_value));
  };
  fill(&r, random_best, trials);
  fill(&e, evo_best, needed.empty() ? 0 : median_of(needed));
  r.baseline = e.baseline = "cpu-random";
  if (r.checksum_ok) r.ratio_vs_baseline = 1;
  if (e.checksum_ok && r.checksum_ok) e.ratio_vs_baseline = e.median_s / r.median_s;
  out->push_back(r);
  out->push_back(e);
}

std::vector<BenchRecord> TuneSuite::run(std::string* error) {
  for (const auto& name : o_.workloads) {
    auto names = tune_workloads();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      *error = fmt::format("no workload '{}' in suite 'tune' (workloads: {})", name, join(names));
      return {};
    }
  }
  if (o_.repeats < 1) {
    *error = "repeats must be at least 1";
    return {};
  }
  if (o_.tune_trials < 0) {
    *error = "trials must be at least 1 (0: the default)";
    return {};
  }
  if (o_.threads.empty()) {
    *error = "no thread counts to run at";
    return {};
  }
  for (int t : o_.threads)
    if (t < 1 || t > 256) {
      *error = fmt::format("thread counts must be 1..256, not {}", t);
      return {};
    }
  say(fmt::format("tune suite: {} trials per search ({} per strategy run), {} timed runs per candidate",
                  trials_of(o_), strategy_trials(o_), o_.repeats));
  std::vector<BenchRecord> records;
  register_tensor_backends();  // as a Session would: the suite may run before any is made
  for (const auto& w : all_workloads()) {
    if (interrupted()) break;
    if (!o_.workloads.empty() &&
        std::find(o_.workloads.begin(), o_.workloads.end(), w.name) == o_.workloads.end())
      continue;
    if (w.name == "strategies") {
      strategy_cells(w, &records);
    } else if (tensor::Backend* b = tensor::find_backend(w.device); b && b->host_threads()) {
      for (int t : o_.threads) {
        if (interrupted()) break;
        tune_cells(w, t, &records);
      }
    } else {
      tune_cells(w, 0, &records);
    }
  }
  if (interrupted()) *error = "interrupted";
  return records;
}

}  // namespace

std::vector<std::string> tune_workloads() {
  std::vector<std::string> out;
  for (const auto& w : all_workloads()) out.push_back(w.name);
  return out;
}

std::vector<BenchRecord> run_tune_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  TuneSuite suite(o);
  auto records = suite.run(error);
  write_outputs(o, records, error);
  return records;
}

std::string format_tune_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"workload", "engine", "threads", "median", "GFLOP/s",
                                                 "% roof", "time/base", "trials", "search", "check"}};
  auto num = [](double v, const char* f) {
    return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(f), v);
  };
  for (const auto& r : records) {
    if (r.suite != "tune") continue;
    rows.push_back({r.workload, r.engine, r.threads ? std::to_string(r.threads) : "-",
                    r.runs ? seconds_text(r.median_s) : "-", num(r.gflops, "{:.2f}"),
                    num(r.roof_fraction * 100, "{:.0f}%") +
                        (std::isnan(r.roof_fraction) ? "" : " " + r.roof_level),
                    num(r.ratio_vs_baseline, "{:.2f}"), r.trials ? std::to_string(r.trials) : "-",
                    std::isnan(r.search_s) ? "-" : fmt::format("{:.1f} s", r.search_s),
                    r.skipped ? "skipped" : r.checksum_ok ? "ok" : "FAILED"});
  }
  std::string s = render(rows, 2);
  s += "time/base: median / the hand schedule's (cpu-sched, opencl-sched), else the default's;\n"
       "  strategies: the median over seeds of each strategy's best, over random's\n"
       "trials: candidates measured (strategies: cpu-random's per seed; cpu-evolutionary's, the\n"
       "  median trials it needed to come within 2% of random's best, trials + 1 if never)\n";
  for (const auto& r : records)
    if (r.suite == "tune" && !r.note.empty())
      s += fmt::format("{} on {}{}: {}\n", r.workload, r.engine,
                       r.threads ? fmt::format(" ({} thread{})", r.threads, r.threads == 1 ? "" : "s") : "",
                       r.note);
  return s;
}

}  // namespace descent::bench
