// `descent bench`: time the workloads on every engine and against the baselines (Lua, Python,
// C, OpenBLAS, NumPy, ONNX Runtime), then print the tables and write the files asked for.
// bench/ measures; this file shows progress on the terminal, prints and picks the exit code.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "apps/cli_internal.h"
#include "bench/bench.h"
#include "bench/plot.h"
#include "lang/text.h"

namespace descent::cli {
namespace {

struct BenchArgs {
  bench::BenchOptions options;
  bool quick = false;
  std::string plot_file, plot_metric = "gflops";
  // --suite and --repeats: whether the command line gave them (if not, the classroom defaults).
  CLI::Option* suite_opt = nullptr;
  CLI::Option* repeats_opt = nullptr;
};

int bench_command(Session& session, const BenchArgs& a) {
  bench::BenchOptions bopts = a.options;
  std::string plot_file = a.plot_file, plot_metric = a.plot_metric;
  bopts.quick = a.quick;
  bopts.interrupt = &session.interrupt_flag();
  // Classroom defaults: everything, and few enough runs to finish in minutes. An explicit
  // --repeats is taken as given (no time budget per cell).
  if (a.suite_opt->count() == 0) bopts.suite = "all";
  if (a.repeats_opt->count() == 0) {
    bopts.repeats = 3;
    bopts.cell_budget_s = 3.0;
  }
  if (!plot_file.empty() && plot_metric != "gflops" && plot_metric != "time") {
    fmt::print(stderr, "error: unknown plot metric '{}' (metrics: gflops, time)\n", plot_metric);
    return kUsageError;
  }
  // The progress bar ("[====>   ] 7/40 ...") redraws one line on a terminal; a log (not a
  // tty) gets every update on its own line.
  bool tty = isatty(STDERR_FILENO);
  bool bar_shown = false;
  bopts.progress = [tty, &bar_shown](std::string_view line) {
    bool bar = !line.empty() && line[0] == '[';
    if (tty && bar_shown) fmt::print(stderr, "\r\033[K");
    if (tty && bar) fmt::print(stderr, "{}", line);
    else fmt::print(stderr, "{}\n", line);
    bar_shown = tty && bar;
    std::fflush(stderr);
  };
  std::string error;
  auto records = bench::run_benchmarks(bopts, &error);
  if (bar_shown) fmt::print(stderr, "\r\033[K");
  bool interrupted = error == "interrupted";
  if (!error.empty() && records.empty() && !interrupted) {
    fmt::print(stderr, "error: {}\n", error);
    return kUsageError;
  }
  std::vector<bench::BenchRecord> program_records, tensor_records, model_records, tune_records,
      analysis_records, train_records, isa_records;
  for (auto& r : records)
    (r.suite == "tensor"     ? tensor_records
     : r.suite == "model"    ? model_records
     : r.suite == "tune"     ? tune_records
     : r.suite == "train"    ? train_records
     : r.suite == "analysis" ? analysis_records
     : r.suite == "isa"      ? isa_records
                             : program_records)
        .push_back(r);
  if (!program_records.empty())
    fmt::print("{}\n{}", bench::format_table(program_records),
               bench::format_summary(program_records));
  if (!tensor_records.empty())
    fmt::print("{}{}", program_records.empty() ? "" : "\n",
               bench::format_tensor_table(tensor_records));
  if (!model_records.empty())
    fmt::print("{}{}", program_records.empty() && tensor_records.empty() ? "" : "\n",
               bench::format_model_table(model_records));
  if (!tune_records.empty()) fmt::print("{}", bench::format_tune_table(tune_records));
  if (!train_records.empty()) fmt::print("{}", bench::format_train_table(train_records));
  if (!analysis_records.empty()) fmt::print("{}", bench::format_analysis_table(analysis_records));
  if (!isa_records.empty()) fmt::print("{}", bench::format_isa_table(isa_records));
  if (interrupted) {
    // Ctrl-C: show what finished, write no file (a partial run must not replace an earlier
    // complete one), and exit as a shell expects of a command stopped by SIGINT.
    std::vector<std::string> unwritten;
    for (const std::string* f : {&bopts.csv, &bopts.json, &plot_file})
      if (!f->empty()) unwritten.push_back(*f);
    fmt::print(stderr, "error: interrupted: {}{}\n",
               records.empty() ? "no cell finished" : "the results above are partial",
               unwritten.empty() ? "" : "; not written: " + join(unwritten, ", "));
    return kInterrupted;
  }
  if (!error.empty()) fmt::print(stderr, "error: {}\n", error);
  if (!plot_file.empty()) {
    bench::PlotOptions popts;
    popts.metric = plot_metric;
    std::string plot_error;
    if (!bench::write_plot(records, plot_file, popts, &plot_error)) {
      fmt::print(stderr, "error: {}\n", plot_error);
      return 1;
    }
    fmt::print(stderr, "wrote {}\n", plot_file);
  }
  return bench::all_ok(records) ? 0 : 1;
}

}  // namespace

Subcommand add_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  bench::BenchOptions& bopts = a->options;
  auto* benchcmd = app.add_subcommand(
      "bench", "time workloads on every engine (and Lua, Python, OpenBLAS); with no options, "
               "everything at classroom sizes (a few minutes)");
  a->suite_opt = benchcmd->add_option("--suite", bopts.suite, "vm (engines vs Lua/Python/C), tensor (kernels on CPU and OpenCL vs OpenBLAS), model (MLPs vs NumPy and ONNX Runtime), tune (the auto-tuner from naive nests; minutes: not in all), train (an epoch of MLP training vs NumPy, PyTorch and tinygrad; not in all), analysis (abstract interpretation per domain against the front end; not in all), startup (`descent run` of print(1) per engine against lua5.4 and python3, whole processes; not in all), or all (default)");
  benchcmd->add_option("--trials", bopts.tune_trials, "tune suite: candidates measured per search (default 200; 4 with --quick)");
  benchcmd->add_option("--threads", bopts.threads, "tensor and tune suites: thread counts to run at (repeatable; default 1 and 2)");
  benchcmd->add_option("--csv", bopts.csv, "also write the records as CSV");
  benchcmd->add_option("--json", bopts.json, "also write the records as JSON");
  a->repeats_opt = benchcmd->add_option("--repeats", bopts.repeats, "runs per cell; the median is reported (default 3, fewer for tensor cells slower than 1 s)");
  benchcmd->add_option("--plot", a->plot_file, "also draw the tensor results as a bar chart (PNG) for a slide");
  benchcmd->add_option("--plot-metric", a->plot_metric, "what the bars show: gflops (default) or time");
  benchcmd->add_option("--engine", bopts.engines, "only these engines or baselines (repeatable)");
  benchcmd->add_option("--workload", bopts.workloads, "only these workloads (repeatable)");
  benchcmd->add_flag("--quick", a->quick, "small sizes that finish in seconds");
  return {benchcmd, [a](Session& s) { return bench_command(s, *a); }};
}

}  // namespace descent::cli
