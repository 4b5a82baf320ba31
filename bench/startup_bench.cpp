// The start-up suite of `descent bench` (issue 34): how long `descent run` of a one-line
// program takes as a whole process, per engine, against lua5.4 and python3 doing the same in
// the same run. What a student feels on every run of a small exercise, and where a compiler's
// libraries show: before plugins/ (docs/architecture.md) every run paid for loading LLVM,
// protobuf, XGBoost and OpenBLAS whether it used them or not.
//
// Each cell spawns the program `repeats` times (at least 11) and keeps the median wall time
// of the whole process; the check is that it printed 1. The ratio is against python3's median.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bench/bench.h"
#include "bench/internal.h"

namespace descent::bench {

namespace fs = std::filesystem;

namespace {

// The `descent` binary: this process when it is one (`descent bench`), else the one the build
// made (the visualizer and the Python module run the suite too).
std::string descent_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "descent") return self.string();
  return DESCENT_BENCH_DESCENT_BIN;
}

struct Column {
  std::string engine;             // "ast", ..., "lua5.4", "python3"
  std::vector<std::string> argv;  // {file} is the program's path
};

}  // namespace

std::vector<BenchRecord> run_startup_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  for (const auto& w : o.workloads)
    if (w != "print1") {
      *error = "unknown workload '" + w + "' in the startup suite (workloads: print1)";
      return {};
    }
  fs::path dir = fs::temp_directory_path() / fmt::format("descent-startup-{}", ::getpid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string file = (dir / "print1.ds").string();
  std::ofstream(file) << "print(1)\n";
  const std::string descent = descent_executable();
  std::vector<Column> columns;
  for (const char* e : {"ast", "stack", "reg", "native", "jit"})
    columns.push_back({e, {descent, "run", file, "--engine", e}});
  columns.push_back({"lua5.4", {find_on_path("lua5.4"), "-e", "print(1)"}});
  // The interpreter itself, not a wrapper in front of it: pyenv's `python3` on PATH is a bash
  // script that starts pyenv first (100 ms and more), which is not what python3 costs.
  std::string python = find_on_path("python3");
  if (!python.empty()) {
    ProcResult where = run_process({python, "-c", "import sys; print(sys.executable)"}, o.interrupt);
    std::string exe = where.ok ? where.out.substr(0, where.out.find('\n')) : "";
    if (!exe.empty() && fs::exists(exe)) python = exe;
  }
  columns.push_back({"python3", {python, "-c", "print(1)"}});
  const int repeats = std::max(o.repeats, o.quick ? 3 : 11);
  std::vector<BenchRecord> records;
  for (const Column& c : columns) {
    if (!o.engines.empty() && std::find(o.engines.begin(), o.engines.end(), c.engine) == o.engines.end())
      continue;
    if (o.interrupt && o.interrupt->load()) {
      *error = "interrupted";
      break;
    }
    if (o.progress) o.progress("startup print1 on " + c.engine);
    BenchRecord r;
    r.suite = "startup";
    r.workload = "print1";
    r.engine = c.engine;
    r.kind = c.engine == "lua5.4" || c.engine == "python3" ? "external" : "descent";
    r.scale = o.quick ? "quick" : "full";
    r.expected = "1";
    r.baseline = "python3";
    if (c.argv[0].empty()) {
      r.note = c.engine + " is not on PATH";
      r.skipped = true;
      records.push_back(r);
      continue;
    }
    std::vector<double> cpu;
    bool ok = true;
    run_process(c.argv, o.interrupt);  // untimed: the page cache warms
    for (int k = 0; k < repeats && ok; ++k) {
      ProcResult p = run_process(c.argv, o.interrupt);
      ok = p.ok && p.out == "1\n";
      if (!ok) r.note = p.ok ? "printed '" + p.out + "', not 1" : p.problem;
      r.output = p.out.substr(0, p.out.find('\n'));
      r.runs_s.push_back(p.seconds);
      cpu.push_back(p.cpu_seconds);
    }
    r.runs = int(r.runs_s.size());
    r.median_s = median_of(r.runs_s);
    r.cpu_s = median_of(cpu);
    r.min_s = *std::min_element(r.runs_s.begin(), r.runs_s.end());
    r.max_s = *std::max_element(r.runs_s.begin(), r.runs_s.end());
    r.checksum_ok = ok;
    records.push_back(r);
  }
  fs::remove_all(dir, ec);
  double base = 0;
  for (const auto& r : records)
    if (r.engine == "python3" && r.checksum_ok) base = r.median_s;
  for (auto& r : records)
    if (base > 0 && r.runs > 0) r.ratio_vs_baseline = r.median_s / base;
  write_outputs(o, records, error);
  return records;
}

}  // namespace descent::bench
