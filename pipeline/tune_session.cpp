// The Session's tuning half (issue 17, docs/tuning.md): the scheduler the graph runtime asks
// for the kernels nobody scheduled (the tuning database's best record, else the default
// rules), and tuning jobs: a kernel, or every kernel a program launched, searched and
// measured on a device. Every front end (`descent tune`, the REPL's :tune, the visualizer's
// tuner pane) goes through these.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <utility>

#include "lang/text.h"
#include "pipeline/open_schedule.h"
#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/launch.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/features.h"
#include "tune/measure.h"
#include "tune/rules.h"
#include "tune/space.h"

namespace descent {

namespace {
// The rules' view of a device: its name and its vector width (tensor::Backend::vector_lanes).
tune::RuleTarget rule_target(const std::string& device) {
  tune::RuleTarget t;
  t.device = device;
  tensor::Backend* b = tensor::find_backend(device);
  std::string why;
  if (b && b->open(&why)) t.vector_lanes = b->vector_lanes();
  return t;
}
}  // namespace

// What the runtime's scheduler knows: the database's records and whether defaults are on.
// Shared with the runtime (which holds it as its AutoScheduler) and changed only between
// runs, from the Session's thread.
struct Session::AutoScheduling : tensor::AutoScheduler {
  bool defaults = true;
  tune::Database db;
  // Records skipped while choosing, for the front end to hear after the run (Outcome::notes).
  mutable std::mutex mu;
  mutable std::set<std::string> told;
  mutable std::vector<std::string> untold;
  std::vector<std::string> take_notes() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(untold, {});
  }

  // The trace for a nest and where it comes from; "" when none applies.
  std::string choose(const std::string& label, const tir::PrimFunc& f, const std::string& device,
                     std::string* source, std::vector<std::string>* notes,
                     tir::PrimFunc* scheduled) const {
    source->clear();
    if (device == "ref") return "";
    // The fastest record that still applies; each one that no longer does (the kernel was
    // redefined since it was measured) is skipped, and said so, once per session.
    std::string shape = tune::shape_key(f);
    for (const tune::Record* r : tune::ranked_records(db, label, shape, device)) {
      tensor::Schedule s(f);
      std::string why;
      if (s.apply_text(r->trace, &why)) {
        *source = "tuned";
        if (scheduled) *scheduled = s.func();
        return r->trace;
      }
      std::string note = fmt::format("{}: the tuned record for {} {} on {} no longer applies "
                                     "({}): skipped", tune::record_place(*r), label, shape,
                                     device, why);
      if (notes) notes->push_back(note);
      std::lock_guard<std::mutex> lock(mu);
      if (told.insert(note).second) untold.push_back(note);
    }
    if (!defaults) return "";
    tune::RuleSchedule rs = tune::default_schedule(f, rule_target(device));
    if (notes) *notes = rs.notes;
    if (rs.trace.empty()) return "";
    *source = "default";
    if (scheduled) *scheduled = std::move(rs.func);
    return rs.trace;
  }

  bool schedule(const std::string& label, const tir::PrimFunc& f, const std::string& device,
                tir::PrimFunc* out, std::string* source) override {
    return !choose(label, f, device, source, nullptr, out).empty();
  }
};

void Session::install_auto_scheduler() {
  if (!auto_) auto_ = std::make_shared<AutoScheduling>();
  auto_->defaults = default_schedules_;
  tensors_->set_auto_scheduler(auto_);
}

void Session::set_default_schedules(bool on) {
  default_schedules_ = on;
  install_auto_scheduler();
}

void Session::set_tuning_database(const std::string& path) {
  if (!auto_) install_auto_scheduler();
  tuning_path_ = path;
  auto_->db = path.empty() ? tune::Database{} : tune::load_database(path);
  install_auto_scheduler();
}

bool Session::read_tuning_database(const std::string& path, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || !std::ifstream(path)) {
    *error = "no tuning database at '" + path + "'" +
             (std::filesystem::exists(path, ec) ? " (not a readable file)"
                                                : " (descent tune --db " + path + " writes one)");
    return false;
  }
  set_tuning_database(path);
  return true;
}

const std::vector<std::string>& Session::tuning_problems() const {
  static const std::vector<std::string> none;
  return auto_ ? auto_->db.problems : none;
}

std::vector<std::string> Session::take_tuning_notes() {
  return auto_ ? auto_->take_notes() : std::vector<std::string>{};
}

size_t Session::tuning_records() const { return auto_ ? auto_->db.records.size() : 0; }

std::string Session::automatic_schedule(const std::string& kernel, const tir::PrimFunc& f,
                                        const std::string& device, std::string* source,
                                        std::vector<std::string>* notes) const {
  AutoScheduling fallback;
  fallback.defaults = default_schedules_;
  const AutoScheduling& a = auto_ ? *auto_ : fallback;
  return a.choose(kernel, f, device, source, notes, nullptr);
}

bool Session::schedule_automatically(const std::string& device, std::string* source,
                                     std::string* error) {
  const OpenSchedule* s = schedule_or_error(0, error);
  if (!s) return false;
  std::string trace = automatic_schedule(s->kernel, s->schedule.original(), device, source);
  if (trace.empty()) return true;
  return schedule_text(trace, error);
}

namespace {

// The candidates' loop nests as a table row, for progress lines.
std::string ms(double s) { return s > 0 ? fmt::format("{:.4g} ms", s * 1e3) : std::string("-"); }

// A trace on one line, its steps joined by "; " (the CSV's form and the live table's).
std::string one_line(const std::string& trace) { return join(split_lines(trace), "; "); }

// The same, cut to `width` characters with "..." (a row of the live table).
std::string trace_summary(const std::string& trace, size_t width) {
  std::string out = one_line(trace);
  if (out.size() > width) out = out.substr(0, width - 3) + "...";
  return out;
}

}  // namespace

Session::TuneReport Session::tune(const TuneRequest& request,
                                  const std::function<void(const std::string&)>& progress,
                                  const std::function<void(const tune::Candidate&)>& observe) {
  TuneReport report;
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const std::vector<std::string> strategies = tune::strategies();
  if (std::find(strategies.begin(), strategies.end(), request.strategy) == strategies.end()) {
    std::string known;
    for (const auto& s : strategies) known += (known.empty() ? "" : ", ") + s;
    report.error = "unknown strategy '" + request.strategy + "' (strategies: " + known + ")";
    return report;
  }
  if (request.trials < 1) {
    report.error = "the number of trials must be at least 1";
    return report;
  }
  if (request.device == "ref") {
    report.error = "the reference interpreter is the oracle, not a device to tune for (devices: cpu, opencl)";
    return report;
  }
  // The tasks: one named kernel, or every kernel the last run launched.
  struct Task {
    std::string kernel;
    tir::PrimFunc func;
    bool named = false;
  };
  std::vector<Task> tasks;
  if (!request.kernel.empty()) {
    Task t;
    t.kernel = request.kernel;
    t.named = true;
    int k = module_.find_kernel(request.kernel);
    if (k < 0) {
      report.error = "no kernel named '" + request.kernel + "'";
      return report;
    }
    std::vector<std::string> names = tensor::dim_names(*module_.kernels[size_t(k)].decl);
    for (const auto& [dim, value] : request.dims)
      if (std::find(names.begin(), names.end(), dim) == names.end()) {
        report.error = "kernel '" + request.kernel + "' has no dim '" + dim + "'";
        return report;
      }
    if (!lower_kernel(request.kernel, request.dims, "", &t.func, &report.error)) return report;
    tasks.push_back(std::move(t));
  } else {
    for (const auto& kt : tensors_->kernel_tasks()) tasks.push_back({kt.label, *kt.func, false});
    if (tasks.empty()) {
      report.error = "no kernel has run yet: run a program that calls kernels first, or name one";
      return report;
    }
    if (!request.space.empty() && tasks.size() > 1) {
      report.error = "a hand-written space is for one kernel: name it";
      return report;
    }
  }
  std::string dbpath = request.database.empty() ? tuning_path_ : request.database;
  report.database = dbpath;
  if (!auto_) install_auto_scheduler();
  if (!request.database.empty() && request.database != tuning_path_) {
    // Records already in that file resume the search; they join the session's own.
    tune::Database extra = tune::load_database(request.database);
    for (auto& r : extra.records) auto_->db.records.push_back(std::move(r));
  }
  interrupt_ = false;
  for (Task& task : tasks) {
    TuneTask out;
    out.kernel = task.kernel;
    out.shape = tune::shape_key(task.func);
    out.flops = tensor::kernel_cost(task.func).flops;
    out.space = request.space.empty() ? tune::rule_space(task.func, rule_target(request.device))
                                      : request.space;
    tune::Space space;
    if (!tune::parse_space(out.space, &space, &report.error)) {
      report.error = "the space: " + report.error;
      return report;
    }
    tune::MeasureOptions mo;
    mo.device = request.device;
    mo.repeats = request.repeats;
    mo.time_limit_s = request.time_limit_s;
    mo.threads = threads_;
    mo.overlap_builds = request.overlap_builds;
    mo.interrupt = &interrupt_;
    tune::SmallLowering small;
    if (task.named) {
      int k = module_.find_kernel(task.kernel);
      std::vector<std::string> names = tensor::dim_names(*module_.kernels[size_t(k)].decl);
      small = [this, names, name = task.kernel, dims = request.dims](int shrink, tir::PrimFunc* f) {
        std::map<std::string, int64_t> smaller;
        bool any = false;
        for (const auto& n : names) {
          int64_t v = dims.count(n) ? dims.at(n) : 64;
          if (v % (int64_t(1) << shrink) == 0 && (v >> shrink) >= 1) {
            v >>= shrink;
            any = true;
          }
          smaller[n] = v;
        }
        std::string error;
        return any && lower_kernel(name, smaller, "", f, &error);
      };
    }
    tune::BackendMeasurer measurer(task.func, mo, small);
    if (!measurer.open(&report.error)) return report;
    // What the database already measured for this kernel, shape and device: each trace is
    // measured once (docs/tuning.md), the default schedule's too.
    std::map<std::string, double> known;
    for (const auto& r : auto_->db.records)
      if (r.ok && r.kernel == out.kernel && r.shape == out.shape && r.device == request.device &&
          !known.count(r.trace))
        known[r.trace] = r.seconds;
    // The two yardsticks, measured the same way: the nest as lowered, and the defaults.
    bool default_known = false;
    {
      std::string err;
      if (!measurer.measure(task.func, "", &out.naive_seconds, &err)) out.naive_error = err;
      tune::RuleSchedule d = tune::default_schedule(task.func, rule_target(request.device));
      out.default_trace = d.trace;
      out.default_notes = d.notes;
      auto it = known.find(d.trace);
      if (!d.trace.empty() && it != known.end()) {
        out.default_seconds = it->second;
        default_known = true;
      } else if (!d.trace.empty() && !measurer.measure(d.func, d.trace, &out.default_seconds, &err)) {
        out.default_seconds = 0;
      }
    }
    for (const auto& [name, text] : request.compare) {
      Compared c{name, text, 0, ""};
      tensor::Schedule s(task.func);
      if (!s.apply_text(text, &c.error)) c.error = "does not apply: " + c.error;
      else if (!measurer.measure(s.func(), text, &c.seconds, &c.error)) c.seconds = 0;
      out.compared.push_back(std::move(c));
    }
    say(fmt::format("{} {}: as lowered {}, default schedule {}{}", out.kernel, out.shape,
                    ms(out.naive_seconds), ms(out.default_seconds),
                    default_known ? " (from the database)" : ""));
    for (const auto& c : out.compared)
      say(fmt::format("  {}: {}", c.name, c.error.empty() ? ms(c.seconds) : c.error));
    for (const auto& note : out.default_notes) say("  rules: " + note);
    // Which oracle judged them, where it is not the interpreter at this size (measure.h).
    if (!measurer.last_check().empty() && measurer.last_check() != "at the tuning size")
      say("  checked " + measurer.last_check());
    // The default schedule is a record like any candidate: a tuned kernel is never slower
    // than its default (when the search finds nothing better, the default is the best).
    std::string append_error;
    auto keep = [&](tune::Record r) {
      if (!dbpath.empty() && append_error.empty() && !tune::append_record(dbpath, r, &append_error))
        say("warning: " + append_error + " (the records are kept in this session)");
      auto_->db.records.push_back(std::move(r));
    };
    if (out.default_seconds > 0 && !default_known) {
      keep({out.kernel, out.shape, request.device, true, out.default_seconds, out.default_trace,
            {}, "", tune::features(tune::default_schedule(task.func, rule_target(request.device)).func)});
      known[out.default_trace] = out.default_seconds;
    }
    std::unique_ptr<tune::CostModel> model = tune::make_cost_model("xgboost");
    tune::SearchOptions so;
    so.strategy = request.strategy;
    so.trials = request.trials;
    so.seed = request.seed;
    so.interrupt = &interrupt_;
    so.known = &known;
    so.model = model.get();
    double best_so_far = 0;
    int measured = 0;
    auto search_start = std::chrono::steady_clock::now();
    out.result = tune::search(space, task.func, measurer, so, [&](const tune::Candidate& c) {
      if (!c.from_database) {
        tune::Record r;
        r.kernel = out.kernel;
        r.shape = out.shape;
        r.device = request.device;
        r.ok = c.ok;
        r.seconds = c.seconds;
        r.trace = c.trace;
        r.decisions = c.decisions;
        r.error = c.error;
        if (c.ok) {
          tensor::Schedule s(task.func);
          std::string why;
          if (s.apply_text(c.trace, &why)) r.features = tune::features(s.func());
        }
        keep(std::move(r));
      }
      // A live table row: trial, time, rate, best so far, the model's score, the trace.
      if (c.ok && (best_so_far <= 0 || c.seconds < best_so_far)) best_so_far = c.seconds;
      // Candidates from the database are not trials: only measured ones are counted.
      if (!c.from_database) ++measured;
      // Every field at a fixed width, the trial number's as wide as "48/48", so the columns do
      // not shift when the count reaches two digits.
      int trial_width = 2 * int(std::to_string(request.trials).size()) + 1;
      std::string line = fmt::format(
          "  #{:<{}}",
          c.from_database ? std::string("db") : fmt::format("{}/{}", measured, request.trials),
          std::max(trial_width, 4));
      if (c.ok)
        line += fmt::format(" {:>12} {:>7} GFLOP/s", ms(c.seconds),
                            fmt::format("{:.3g}", out.flops / c.seconds / 1e9));
      else
        line += " failed: " + c.error.substr(0, c.error.find('\n'));
      line += fmt::format("  best {:>12}", ms(best_so_far));
      if (c.has_prediction) line += fmt::format("  model {:.3g}", c.predicted);
      if (c.ok) line += "  " + trace_summary(c.trace, 72);
      say(line);
      if (observe) observe(c);
    });
    out.search_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count();
    const tune::SearchResult& sr = out.result;
    out.best_seconds = out.default_seconds;
    out.best_trace = out.default_trace;
    out.best_is_default = out.default_seconds > 0;
    if (sr.best >= 0 && (out.best_seconds <= 0 || sr.candidates[size_t(sr.best)].seconds < out.best_seconds)) {
      out.best_seconds = sr.candidates[size_t(sr.best)].seconds;
      out.best_trace = sr.candidates[size_t(sr.best)].trace;
      out.best_is_default = false;
    }
    // A record of an earlier job (the database it resumed from) may still be the fastest:
    // the kernel runs the best record, so the report names it.
    for (const auto& r : auto_->db.records)
      if (r.ok && r.seconds > 0 && r.kernel == out.kernel && r.shape == out.shape &&
          r.device == request.device && (out.best_seconds <= 0 || r.seconds < out.best_seconds)) {
        out.best_seconds = r.seconds;
        out.best_trace = r.trace;
        out.best_is_default = r.trace == out.default_trace;
      }
    if (out.best_seconds <= 0) out.best_trace.clear();  // nothing ran: no schedule to offer
    if (!out.result.error.empty()) {
      report.error = out.result.error;
      return report;
    }
    report.tasks.push_back(std::move(out));
    if (interrupt_) break;
  }
  // The new records schedule the kernels from now on (plans made before are forgotten).
  install_auto_scheduler();
  report.ok = true;
  return report;
}

std::string Session::tune_csv(const TuneReport& report, const TuneRequest& request) {
  std::string out =
      "kernel,shape,device,strategy,trial,ok,seconds,gflops,predicted,from_database,trace,error\n";
  for (const auto& t : report.tasks)
    for (const auto& c : t.result.candidates) {
      std::string rate = c.ok && c.seconds > 0 ? fmt::format("{:.6g}", t.flops / c.seconds / 1e9) : "";
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(t.kernel),
                         csv_field(t.shape), request.device, request.strategy, c.trial + 1,
                         c.ok ? "true" : "false", c.ok ? fmt::format("{:.9g}", c.seconds) : "",
                         rate, c.has_prediction ? fmt::format("{:.6g}", c.predicted) : "",
                         c.from_database ? "true" : "false", csv_field(one_line(c.trace)),
                         csv_field(c.error.substr(0, c.error.find('\n'))));
    }
  return out;
}

std::string Session::tune_json(const TuneReport& report, const TuneRequest& request) {
  using nlohmann::json;
  json tasks = json::array();
  for (const auto& t : report.tasks) {
    json cands = json::array(), compared = json::array();
    for (const auto& c : t.result.candidates)
      cands.push_back({{"trial", c.trial + 1},
                       {"ok", c.ok},
                       {"seconds", c.ok ? json(c.seconds) : json(nullptr)},
                       {"predicted", c.has_prediction ? json(c.predicted) : json(nullptr)},
                       {"from_database", c.from_database},
                       {"trace", c.trace},
                       {"decisions", c.decisions},
                       {"error", c.error}});
    for (const auto& c : t.compared)
      compared.push_back({{"name", c.name},
                          {"seconds", c.seconds > 0 ? json(c.seconds) : json(nullptr)},
                          {"error", c.error}});
    auto secs = [](double v) { return v > 0 ? json(v) : json(nullptr); };
    tasks.push_back({{"kernel", t.kernel},
                     {"shape", t.shape},
                     {"space", t.space},
                     {"flops", t.flops},
                     {"naive_s", secs(t.naive_seconds)},
                     {"default_s", secs(t.default_seconds)},
                     {"best_s", secs(t.best_seconds)},
                     {"best_trace", t.best_trace},
                     {"best_is_default", t.best_is_default},
                     {"search_s", t.search_seconds},
                     {"rank_correlation", t.result.rank_correlation},
                     {"ranked", t.result.ranked},
                     {"compared", compared},
                     {"candidates", cands},
                     {"best_so_far", t.result.best_so_far}});
  }
  json doc = {{"schema", "descent-tune/1"},
              {"device", request.device},
              {"strategy", request.strategy},
              {"trials", request.trials},
              {"seed", request.seed},
              {"tasks", tasks}};
  // Invalid UTF-8 (a file name, a compiler's message) is replaced, never thrown on.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace descent
