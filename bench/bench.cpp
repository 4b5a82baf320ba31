#include "bench/bench.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "lang/text.h"
#include "bench/internal.h"
#include "proc/process.h"
#include "pipeline/pipeline.h"

extern char** environ;

#ifndef DESCENT_BENCH_PROGRAMS_DIR
#define DESCENT_BENCH_PROGRAMS_DIR "bench/programs"
#endif

namespace descent::bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- the suites ------------------------------------------------------------------------

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = {
      {"vm", "b1_fib", "recursive fib(32)",
       "calls: ~7 million calls and returns, frame set-up and argument passing",
       {{"N", 32, 20}}, "2178309", "6765"},
      {"vm", "b2_sum_squares", "sum = (sum + i*i) % 1000003, 100 million iterations",
       "the dispatch loop: integer *, +, % and a local store per iteration, no calls",
       {{"N", 100000000, 100000}}, "954980", "368001"},
      {"vm", "b3_mandelbrot", "Mandelbrot 600x400, at most 200 iterations",
       "float arithmetic, nested loops and a short-circuit && condition",
       {{"W", 600, 60}, {"H", 400, 40}, {"MAX_ITER", 200, 200}}, "13428357", "136029"},
      {"vm", "b4_collatz", "total Collatz steps for n in 1..1,000,000",
       "branchy integer code: a data-dependent while loop with if/else, % and /",
       {{"N", 1000000, 10000}}, "131434424", "849666"},
      {"vm", "b2_top", "B2 written at top level (no function): 100 million iterations",
       "the same loop on top-level variables: as fast as B2 where they live in registers",
       {{"N", 100000000, 100000}}, "954980", "368001"},
      {"vm", "b3_top", "B3 written at top level (no function)",
       "the same loops on top-level variables",
       {{"W", 600, 60}, {"H", 400, 40}, {"MAX_ITER", 200, 200}}, "13428357", "136029"},
  };
  return all;
}

std::vector<std::string> suites() {
  std::vector<std::string> s;
  for (const auto& w : workloads())
    if (std::find(s.begin(), s.end(), w.suite) == s.end()) s.push_back(w.suite);
  s.push_back("tensor");
  s.push_back("model");
  s.push_back("tune");
  s.push_back("train");
  s.push_back("analysis");
  s.push_back("isa");
  s.push_back("startup");
  return s;
}

std::vector<Baseline> default_baselines() {
  return {
      {"lua5.4", "lua", "lua5.4", {}, {"{tool}", "{src}"}, {"{tool}", "-e", ""}},
      {"python3", "py", "python3", {}, {"{tool}", "{src}"}, {"{tool}", "-c", "pass"}},
      // The C twins compiled with clang -O2: the bar the JIT is measured against.
      {"clang-O2", "c", "clang-15", {"{tool}", "-O2", "-o", "{exe}", "{src}", "-lm"}, {"{exe}"}, {"true"}},
  };
}

std::string default_programs_dir() {
  if (const char* env = std::getenv("DESCENT_BENCH_DIR"); env && *env) return env;
  return DESCENT_BENCH_PROGRAMS_DIR;
}

std::string host_description() {
  std::string model;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 1);
      break;
    }
  }
  auto b = model.find_first_not_of(" \t");
  model = b == std::string::npos ? "unknown CPU" : model.substr(b);
  unsigned n = std::thread::hardware_concurrency();
  return fmt::format("{}, {} logical CPU{}", model, n, n == 1 ? "" : "s");
}

// ---- small helpers -----------------------------------------------------------------------

namespace {

std::string trim_right(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string clip(std::string s, size_t n = 200) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool interrupted(const BenchOptions& o) { return o.interrupt && o.interrupt->load(); }


}  // namespace

// Sets each parameter's top-level line `NAME = <int>` (anything after the number, such as a
// comment, is kept) to the scale's value. Line numbers do not change, so diagnostics still
// point into the file as written.
bool apply_params(std::string* source, const Workload& w, bool quick, std::string* error) {
  for (const Param& p : w.params) {
    bool found = false;
    size_t pos = 0;
    while (pos < source->size() && !found) {
      size_t eol = source->find('\n', pos);
      if (eol == std::string::npos) eol = source->size();
      std::string_view line(source->data() + pos, eol - pos);
      size_t i = 0;
      if (line.substr(0, p.name.size()) == p.name) {
        i = p.name.size();
        while (i < line.size() && line[i] == ' ') ++i;
        if (i < line.size() && line[i] == '=' && (i + 1 >= line.size() || line[i + 1] != '=')) {
          ++i;
          while (i < line.size() && line[i] == ' ') ++i;
          size_t d = i;
          if (d < line.size() && line[d] == '-') ++d;
          size_t digits = d;
          while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
          if (d > digits) {
            source->replace(pos + i, d - i, std::to_string(quick ? p.quick : p.full));
            found = true;
          }
        }
      }
      pos = eol + 1;
    }
    if (!found) {
      *error = fmt::format("{}.ds has no top-level line '{} = <int>' for the bench parameter {}",
                           w.name, p.name, p.name);
      return false;
    }
  }
  return true;
}

std::string find_on_path(const std::string& tool) { return proc::find_on_path(tool); }

std::string substitute(std::string arg, const std::map<std::string, std::string>& vars) {
  for (const auto& [key, value] : vars) {
    std::string pat = "{" + key + "}";
    for (size_t at = arg.find(pat); at != std::string::npos; at = arg.find(pat, at + value.size()))
      arg.replace(at, pat.size(), value);
  }
  return arg;
}

namespace {
double cpu_of(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

ProcResult run_process(const std::vector<std::string>& argv, const std::atomic<bool>* interrupt) {
  // proc::run (proc/process.h) with no limits but the interrupt; 1 MiB of each stream kept.
  proc::Options o;
  o.argv = argv;
  o.interrupt = interrupt;
  o.limits.output_cap = 1u << 20;
  proc::Result p = proc::run(o);
  ProcResult r;
  r.ok = p.ok;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  r.seconds = p.seconds;
  r.cpu_seconds = p.cpu_seconds;
  r.was_interrupted = p.interrupted;
  if (!p.started) {
    r.problem = fmt::format("cannot start {}: {}", argv.empty() ? "" : argv[0], p.problem);
  } else if (p.exit_code == 127 && r.out.empty() && r.err.find("cannot start the program") != std::string::npos) {
    r.problem = fmt::format("cannot start {}: no such program", argv[0]);
  } else if (p.signal) {
    r.problem = fmt::format("killed by signal {}", p.signal);
  } else {
    r.problem = p.problem;
  }
  if (!r.ok && !r.was_interrupted && !r.err.empty()) r.problem += ": " + clip(trim_right(r.err));
  return r;
}

namespace {

// One timed run of one cell.
struct Sample {
  bool ok = false;        // ran to completion and printed the expected checksum
  double seconds = 0;     // what the record's median is over
  double cpu_seconds = 0;  // user + system CPU time of the same run
  double compile_s = 0;   // Descent only
  uint64_t steps = 0;     // Descent only
  std::string output;     // stdout, trimmed
  std::string problem;    // why !ok
  bool was_interrupted = false;
};

// Something that can run a workload: a Descent engine in-process, or a baseline's tool.
// prepare() runs once per workload (untimed); run() is one timed run.
class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  virtual std::string kind() const = 0;
  virtual bool prepare(const Workload& w, std::string* problem) = 0;
  virtual Sample run() = 0;
};

class DescentTarget : public Target {
 public:
  DescentTarget(std::string engine, std::string dir, bool quick, const std::atomic<bool>* intr)
      : engine_(std::move(engine)), dir_(std::move(dir)), quick_(quick), interrupt_(intr) {}
  std::string name() const override { return engine_; }
  std::string kind() const override { return "descent"; }
  bool prepare(const Workload& w, std::string* problem) override {
    path_ = (fs::path(dir_) / (w.name + ".ds")).string();
    if (!read_file(path_, &source_, problem)) return false;
    return apply_params(&source_, w, quick_, problem);
  }
  Sample run() override {
    Sample s;
    Session session;  // fresh per run: no globals or functions left from the run before
    // "jit-O0": the JIT without LLVM's optimisations, the yardstick of the native backend
    // (a compiler without an optimiser of its own).
    bool o0 = engine_ == "jit-O0";
    if (o0) session.set_opt_level(0);
    if (!session.set_engine(o0 ? "jit" : engine_)) {
      s.problem = fmt::format("no engine '{}'", engine_);
      return s;
    }
    std::string out;
    RunOptions ro;
    ro.out = [&out](std::string_view text) { out += text; };
    ro.interrupt = interrupt_;
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    Outcome o = session.submit(source_, path_, ro);
    getrusage(RUSAGE_SELF, &after);
    s.cpu_seconds = cpu_of(after) - cpu_of(before);
    s.compile_s = o.compile_seconds;
    s.seconds = o.compile_seconds + o.run_seconds;
    s.steps = o.steps;
    s.output = trim_right(out);
    if (o.status != Outcome::Ok) {
      s.was_interrupted = interrupt_ && interrupt_->load();
      s.problem = clip(trim_right(o.message));
      return s;
    }
    s.ok = true;
    return s;
  }

 private:
  std::string engine_, dir_;
  bool quick_;
  const std::atomic<bool>* interrupt_;
  std::string path_, source_;
};

class ExternalTarget : public Target {
 public:
  ExternalTarget(Baseline b, std::string tool_path, std::string dir, bool quick,
                 const std::atomic<bool>* intr)
      : b_(std::move(b)), tool_(std::move(tool_path)), dir_(std::move(dir)), quick_(quick),
        interrupt_(intr) {}
  ~ExternalTarget() override {
    std::error_code ec;
    if (!scratch_.empty()) fs::remove_all(scratch_, ec);
  }
  std::string name() const override { return b_.name; }
  std::string kind() const override { return "external"; }
  bool prepare(const Workload& w, std::string* problem) override {
    std::error_code ec;
    fs::path rel = fs::path(dir_) / (w.name + "." + b_.extension);
    fs::path abs = fs::absolute(rel, ec);
    std::string src = (ec ? rel : abs).string();
    std::map<std::string, std::string> vars = {{"tool", tool_}, {"src", src}};
    if (!b_.build.empty()) {
      if (scratch_.empty()) {
        fs::path tmp = fs::temp_directory_path(ec);
        std::string tmpl = ((ec ? fs::path("/tmp") : tmp) / "descent-bench-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
          *problem = fmt::format("cannot make a scratch directory: {}", std::strerror(errno));
          return false;
        }
        scratch_ = tmpl;
      }
      vars["exe"] = (fs::path(scratch_) / w.name).string();
      std::vector<std::string> argv;
      for (const auto& a : b_.build) argv.push_back(substitute(a, vars));
      argv[0] = find_on_path(argv[0]);
      if (argv[0].empty()) {
        *problem = fmt::format("build tool '{}' not found", b_.build[0]);
        return false;
      }
      ProcResult r = run_process(argv, interrupt_);
      if (!r.ok) {
        *problem = "build failed: " + r.problem;
        return false;
      }
    }
    argv_.clear();
    for (const auto& a : b_.run) argv_.push_back(substitute(a, vars));
    if (!argv_.empty() && argv_[0].find('/') == std::string::npos)
      argv_[0] = find_on_path(argv_[0]);
    if (argv_.empty() || argv_[0].empty()) {
      *problem = fmt::format("no command to run for {}", b_.name);
      return false;
    }
    for (const Param& p : w.params) argv_.push_back(std::to_string(quick_ ? p.quick : p.full));
    return true;
  }
  Sample run() override {
    Sample s;
    ProcResult r = run_process(argv_, interrupt_);
    s.seconds = r.seconds;
    s.cpu_seconds = r.cpu_seconds;
    s.output = trim_right(r.out);
    s.was_interrupted = r.was_interrupted;
    s.ok = r.ok;
    s.problem = r.problem;
    return s;
  }

 private:
  Baseline b_;
  std::string tool_, dir_;
  bool quick_;
  const std::atomic<bool>* interrupt_;
  std::string scratch_;
  std::vector<std::string> argv_;
};

}  // namespace

// ---- the runner --------------------------------------------------------------------------

namespace {
std::vector<BenchRecord> run_program_benchmarks(const BenchOptions& o, std::string* error);
}

std::vector<BenchRecord> run_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch_error;
  if (!error) error = &scratch_error;
  error->clear();
  auto names = suites();
  if (o.suite != "all" && !contains(names, o.suite)) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    *error = fmt::format("unknown suite '{}' (suites: {}, all)", o.suite, list);
    return {};
  }
  if (o.suite == "tensor") return run_tensor_benchmarks(o, error);
  if (o.suite == "model") return run_model_benchmarks(o, error);
  if (o.suite == "tune") return run_tune_benchmarks(o, error);
  if (o.suite == "train") return run_train_benchmarks(o, error);
  if (o.suite == "analysis") return run_analysis_benchmarks(o, error);
  if (o.suite == "isa") return run_isa_benchmarks(o, error);
  if (o.suite == "startup") return run_startup_benchmarks(o, error);
  if (o.suite != "all") return run_program_benchmarks(o, error);
  // "all": the program suites, then the tensor suite, then the model suite; each keeps only
  // its own workloads.
  BenchOptions vm = o, tensor = o, model = o;
  vm.csv = vm.json = tensor.csv = tensor.json = model.csv = model.json = "";
  auto tnames = tensor_workloads(), mnames = model_workloads();
  vm.workloads.clear();
  tensor.workloads.clear();
  model.workloads.clear();
  for (const auto& w : o.workloads)
    (contains(tnames, w) ? tensor : contains(mnames, w) ? model : vm).workloads.push_back(w);
  std::vector<BenchRecord> records;
  if (o.workloads.empty() || !vm.workloads.empty()) records = run_program_benchmarks(vm, error);
  if (error->empty() && (o.workloads.empty() || !tensor.workloads.empty())) {
    tensor.engines.clear();  // engine names differ between the suites
    auto more = run_tensor_benchmarks(tensor, error);
    records.insert(records.end(), more.begin(), more.end());
  }
  if (error->empty() && (o.workloads.empty() || !model.workloads.empty())) {
    model.engines.clear();
    auto more = run_model_benchmarks(model, error);
    records.insert(records.end(), more.begin(), more.end());
  }
  write_outputs(o, records, error);
  return records;
}

namespace {
std::vector<BenchRecord> run_program_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch_error;
  if (!error) error = &scratch_error;
  error->clear();
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };

  // Which workloads.
  std::vector<const Workload*> chosen;
  for (const auto& w : workloads())
    if ((o.suite == "all" || w.suite == o.suite) &&
        (o.workloads.empty() || contains(o.workloads, w.name)))
      chosen.push_back(&w);
  for (const auto& name : o.workloads) {
    bool known = false;
    for (const auto* w : chosen) known |= w->name == name;
    if (!known) {
      *error = fmt::format("no workload '{}' in suite '{}'", name, o.suite);
      return {};
    }
  }
  if (o.repeats < 1) {
    *error = "repeats must be at least 1";
    return {};
  }
  std::string dir = o.programs_dir.empty() ? default_programs_dir() : o.programs_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = fmt::format("no benchmark programs directory '{}' (set DESCENT_BENCH_DIR)", dir);
    return {};
  }

  // Which engines: the Session's, and the JIT at -O0 beside the JIT.
  auto engines = Session::engines();
  if (auto jit = std::find(engines.begin(), engines.end(), "jit"); jit != engines.end())
    engines.insert(jit + 1, "jit-O0");
  for (const auto& e : o.engines) {
    bool known = contains(engines, e);
    for (const auto& b : o.baselines) known |= b.name == e;
    if (!known) {
      std::vector<std::string> all = engines;
      for (const auto& b : o.baselines) all.push_back(b.name);
      *error = fmt::format("unknown engine '{}' (engines: {})", e, join(all));
      return {};
    }
  }
  auto wanted = [&](const std::string& e) { return o.engines.empty() || contains(o.engines, e); };
  std::vector<std::string> descent_engines;
  for (const auto& e : engines)
    if (wanted(e)) descent_engines.push_back(e);
  std::vector<std::pair<Baseline, std::string>> externals;  // with the tool's resolved path
  for (const auto& b : o.baselines) {
    if (!wanted(b.name)) continue;
    std::string tool = find_on_path(b.tool);
    if (tool.empty())
      say(fmt::format("note: {} not found on PATH; skipping its twins", b.tool));
    else
      externals.emplace_back(b, tool);
  }
  auto nan = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, double> startup;  // baseline name -> median do-nothing run
  for (const auto& [b, tool] : externals) {
    if (b.startup.empty() || chosen.empty()) continue;
    std::vector<std::string> argv;
    for (const auto& a : b.startup) argv.push_back(substitute(a, {{"tool", tool}}));
    if (argv[0].find('/') == std::string::npos) argv[0] = find_on_path(argv[0]);
    std::vector<double> times;
    for (int k = 0; k < o.repeats && !argv[0].empty() && !interrupted(o); ++k) {
      ProcResult p = run_process(argv, o.interrupt);
      if (!p.ok) break;
      times.push_back(p.seconds);
    }
    startup[b.name] = static_cast<int>(times.size()) == o.repeats ? median_of(times) : nan;
    say(fmt::format("{} ({}): start-up {}", b.name, tool, seconds_text(startup[b.name], 1)));
  }

  // The cells, in run order: per workload, the Descent engines then the baselines.
  struct Cell {
    const Workload* w;
    std::unique_ptr<Target> target;
  };
  std::vector<Cell> cells;
  for (const auto* w : chosen) {
    for (const auto& e : descent_engines)
      cells.push_back({w, std::make_unique<DescentTarget>(e, dir, o.quick, o.interrupt)});
    for (const auto& [b, tool] : externals) {
      fs::path twin = fs::path(dir) / (w->name + "." + b.extension);
      if (!fs::exists(twin, ec)) {
        say(fmt::format("note: no {} twin of {} ({} is missing); skipping", b.name, w->name,
                        twin.filename().string()));
        continue;
      }
      cells.push_back({w, std::make_unique<ExternalTarget>(b, tool, dir, o.quick, o.interrupt)});
    }
  }

  std::vector<BenchRecord> records;
  const std::string scale = o.quick ? "quick" : "full";
  const int width = static_cast<int>(std::to_string(cells.size()).size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const Workload& w = *cells[i].w;
    Target& t = *cells[i].target;
    std::string tag = fmt::format("[{:>{}}/{}] {}/{} on {}", i + 1, width, cells.size(), w.suite,
                                  w.name, t.name());
    say(fmt::format("{}: {} run{}{} ...", tag, o.repeats, o.repeats == 1 ? "" : "s",
                    o.warmup ? fmt::format(" after {} warm-up", o.warmup) : ""));
    BenchRecord r;
    r.suite = w.suite;
    r.workload = w.name;
    r.engine = t.name();
    r.kind = t.kind();
    r.scale = scale;
    r.baseline = o.baseline;
    r.expected = o.quick ? w.expected_quick : w.expected;
    if (auto it = startup.find(r.engine); it != startup.end() && r.kind == "external")
      r.startup_s = it->second;

    std::string problem;
    bool ok = t.prepare(w, &problem);
    std::vector<double> compile_times, cpu_times;
    bool stop = false;
    for (int k = 0; ok && k < o.warmup + o.repeats; ++k) {
      if (interrupted(o)) {
        stop = true;
        break;
      }
      Sample s = t.run();
      r.output = clip(s.output);
      if (s.was_interrupted || interrupted(o)) {
        stop = true;
        break;
      }
      if (!s.ok) {
        ok = false;
        problem = s.problem;
      } else if (s.output != r.expected) {
        ok = false;
        problem = fmt::format("printed '{}', expected '{}'", clip(s.output, 60), r.expected);
      }
      if (k < o.warmup && ok) continue;
      r.runs_s.push_back(s.seconds);
      compile_times.push_back(s.compile_s);
      cpu_times.push_back(s.cpu_seconds);
      r.steps = s.steps;
    }
    if (stop) {
      *error = "interrupted";
      say(tag + ": interrupted");
      break;
    }
    r.runs = static_cast<int>(r.runs_s.size());
    if (!r.runs_s.empty()) {
      r.median_s = median_of(r.runs_s);
      r.min_s = *std::min_element(r.runs_s.begin(), r.runs_s.end());
      r.max_s = *std::max_element(r.runs_s.begin(), r.runs_s.end());
      if (r.kind == "descent") r.compile_s = median_of(compile_times);
      r.cpu_s = median_of(cpu_times);
    }
    r.checksum_ok = ok;
    r.note = ok ? "" : problem;
    say(ok ? fmt::format("{}: median {} (min {}), ok", tag, seconds_text(r.median_s, 1),
                         seconds_text(r.min_s, 1))
           : fmt::format("{}: FAILED: {}", tag, problem));
    records.push_back(std::move(r));
  }

  // Ratios against the baseline engine of the same workload, measured in this call.
  for (auto& r : records) {
    for (const auto& b : records)
      if (b.workload == r.workload && b.suite == r.suite && b.engine == o.baseline &&
          b.checksum_ok && r.checksum_ok && b.median_s > 0)
        r.ratio_vs_baseline = r.median_s / b.median_s;
  }

  write_outputs(o, records, error);
  return records;
}
}  // namespace

bool all_ok(const std::vector<BenchRecord>& records) {
  if (records.empty()) return false;
  for (const auto& r : records)
    if (!r.checksum_ok && !r.skipped) return false;
  return true;
}

}  // namespace descent::bench
