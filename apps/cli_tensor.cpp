// `descent kernel`, `descent devices`, `descent tune` and `descent import`: the tensor tier
// from the command line. One kernel scheduled, shown, run and checked; the devices it can run
// on; the tuner's search over its schedules; an ONNX model turned into a Descent program.
// Apart from main.cpp so that each subcommand's options sit beside what is done with them.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "apps/cli_internal.h"
#include "apps/repl.h"
#include "bench/bench.h"
#include "bench/plot.h"
#include "importer/onnx_import.h"
#include "plugins/import_lazy.h"  // importer/ through libdescent_import.so, opened on first use
#include "lang/text.h"
#include "tune/search.h"

namespace descent::cli {
namespace {

// ---- descent kernel FILE NAME: one kernel's loop nest, scheduled, shown, run and checked ----
struct KernelArgs {
  std::string file, name, schedule_file, backend = "cpu", dump, cache;
  std::vector<std::string> dims;
  bool check = false;
  int threads = 0, repeats = 1;
  uint64_t seed = 1;
  TunedOptions tuned;
};

int kernel_command(Session& session, const KernelArgs& a) {
  if (!apply_tuned_options(session, a.tuned)) return kUsageError;
  std::map<std::string, int64_t> dims;
  if (std::string error; !Session::parse_dims(a.dims, &dims, &error)) {
    fmt::print(stderr, "error: --dim: {}\n", error);
    return kUsageError;
  }
  auto devices = Session::devices();
  if (std::find(devices.begin(), devices.end(), a.backend) == devices.end()) {
    fmt::print(stderr, "error: unknown backend '{}' (backends: {})\n", a.backend, join(devices));
    return kUsageError;
  }
  if (a.repeats < 1) {
    fmt::print(stderr, "error: --repeats must be at least 1\n");
    return kUsageError;
  }
  if (!a.cache.empty()) {
    uint64_t bytes = 0;
    if (!parse_bytes(a.cache, &bytes) || bytes == 0) {
      fmt::print(stderr, "error: --cache '{}' is not a size (e.g. 32K, 1M)\n", a.cache);
      return kUsageError;
    }
    session.set_traffic_cache(double(bytes));
  }
  std::string text;
  if (!read_or_say(a.file, &text)) return 2;
  // Views (the kernel's graph too) need only the compiled file, not a run of it.
  std::string device_error;
  if (a.dump.empty() && !session.set_device(a.backend, &device_error)) {
    fmt::print(stderr, "error: {}\n", device_error);
    return 1;
  }
  session.set_threads(a.threads);
  Outcome o = session.compile(std::move(text), a.file);
  if (o.status != Outcome::Ok) {
    fmt::print(stderr, "{}", o.message);
    return o.exit_code();
  }
  std::string error;
  if (!session.select_kernel(a.name, dims, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  std::string source;  // where the schedule came from when no file gave one
  if (!a.schedule_file.empty()) {
    std::string sched;
    if (!read_or_say(a.schedule_file, &sched)) return 2;
    if (!session.schedule_text(sched, &error)) {
      fmt::print(stderr, "{}: error: {}\n", a.schedule_file, error);
      return 2;
    }
  } else if (!session.schedule_automatically(a.backend, &source, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  if (!a.dump.empty()) {
    StageResult r = session.kernel_view(a.dump);
    if (!r.ok) {
      fmt::print(stderr, "error: {}\n", r.text);
      return kUsageError;
    }
    fmt::print("{}", r.text);
    return 0;
  }
  Session::KernelRun r = session.run_kernel(a.backend, a.check, a.seed, a.repeats);
  if (!r.ok) {
    fmt::print(stderr, "error: kernel '{}' on {}: {}\n", a.name, a.backend, r.error);
    return 1;
  }
  std::string shape;
  for (auto d : r.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  // Four significant figures below a millisecond (0.0026 ms, not 0.003): small kernels are
  // what students compare schedules on.
  const double ms = r.seconds * 1e3;
  fmt::print("{} on {}{}: output [{}], sum {:.6g}, {:.{}f} ms", a.name, a.backend,
             source.empty() ? "" : " (" + source + " schedule)", shape, r.checksum, ms,
             ms >= 1 || ms == 0 ? 3 : std::clamp(3 - int(std::floor(std::log10(ms))), 4, 7));
  // The interpreter compiles nothing; the others say what their build cost.
  if (a.backend != "ref") fmt::print(" kernel time (build {:.1f} ms)", r.compile_seconds * 1e3);
  if (r.checked) fmt::print("; matches the reference interpreter");
  fmt::print("\n");
  return 0;
}

// `descent tune FILE [KERNEL]`: the Session searches and measures; this prints.
// What `descent tune` takes beyond the Session's request: files to read and to write.
struct TuneFiles {
  std::vector<std::string> dims, compare;
  std::string space, csv, json, plot;
  bool no_overlap = false;
  int threads = 0;
};

// Written beside and renamed over `path`, so a failed write never leaves half a file.
bool write_or_say(const std::string& path, const std::string& text) {
  std::string temp = path + ".partial";
  {
    std::ofstream out(temp, std::ios::binary);
    out << text;
    if (!out.flush()) {
      fmt::print(stderr, "error: cannot write '{}'\n", path);
      std::remove(temp.c_str());
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    fmt::print(stderr, "error: cannot write '{}': {}\n", path, ec.message());
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

// Where the best schedule of a kernel at a shape goes beside the database:
// tune.jsonl -> tune.matmul.64x64_64x64.sched (a kernel launched at two shapes gets two).
std::string best_schedule_path(const std::string& database, const std::string& kernel,
                               const std::string& shape) {
  std::filesystem::path p(database);
  std::string stem = p.extension() == ".jsonl" || p.extension() == ".json" ? p.stem().string()
                                                                           : p.filename().string();
  std::string safe;
  for (char c : kernel + "." + shape)
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ? c : '_';
  return (p.parent_path() / (stem + "." + safe + ".sched")).string();
}

int tune_command(Session& session, const std::string& file, Session::TuneRequest request,
                 const TuneFiles& files) {
  if (std::string error; !Session::parse_dims(files.dims, &request.dims, &error)) {
    fmt::print(stderr, "error: --dim: {}\n", error);
    return kUsageError;
  }
  if (files.threads < 0) {
    fmt::print(stderr, "error: --threads must be at least 0 (0: every hardware thread)\n");
    return kUsageError;
  }
  session.set_threads(files.threads);
  if (!files.space.empty() && !read_or_say(files.space, &request.space)) return 2;
  for (const auto& path : files.compare) {
    std::string text;
    if (!read_or_say(path, &text)) return 2;
    request.compare.push_back({path, text});
  }
  request.overlap_builds = !files.no_overlap;
  std::string text;
  if (!read_or_say(file, &text)) return 2;
  if (request.kernel.empty()) {
    // Every kernel the program launches: run it on the device (its output is not the point).
    std::string error;
    if (!session.set_device(request.device, &error)) {
      fmt::print(stderr, "error: --device: {}\n", error);
      return kUsageError;
    }
    RunOptions opts;
    opts.out = [](std::string_view) {};
    Outcome o = session.submit(std::move(text), file, opts);
    if (o.status != Outcome::Ok) {
      fmt::print(stderr, "{}", o.message);
      return o.exit_code();
    }
  } else {
    Outcome o = session.compile(std::move(text), file);
    if (o.status != Outcome::Ok) {
      fmt::print(stderr, "{}", o.message);
      return o.exit_code();
    }
  }
  if (!request.database.empty()) {
    session.set_tuning_database(request.database);
    for (const auto& p : session.tuning_problems()) fmt::print(stderr, "warning: {}\n", p);
  }
  Session::TuneReport r = session.tune(request, [](const std::string& line) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  });
  if (!r.ok) {
    fmt::print(stderr, "error: {}\n", r.error);
    return session.interrupt_flag().load() ? kInterrupted : 2;
  }
  fmt::print("{}", tune_report(r, request));
  // What the run produced besides the table: the best schedules beside the database, the
  // candidates as CSV and JSON, the plot. Written after an interrupt too (they hold what
  // was measured).
  int status = 0;
  if (!r.database.empty())
    for (const auto& t : r.tasks) {
      if (t.best_trace.empty() || t.best_seconds <= 0) continue;
      std::string path = best_schedule_path(r.database, t.kernel, t.shape);
      // The best record known for the kernel: this search's, the default, or an earlier job's.
      std::string text = fmt::format("# the best schedule known for {} ({}) on {}: {:.4g} ms{}\n{}",
                                     t.kernel, t.shape, request.device, t.best_seconds * 1e3,
                                     t.best_is_default ? " (the default schedule)" : "", t.best_trace);
      if (!text.empty() && text.back() != '\n') text += '\n';
      if (write_or_say(path, text)) fmt::print(stderr, "wrote {}\n", path);
      else status = 2;
    }
  if (!files.csv.empty() && !write_or_say(files.csv, Session::tune_csv(r, request))) status = 2;
  if (!files.json.empty() && !write_or_say(files.json, Session::tune_json(r, request))) status = 2;
  if (!files.plot.empty()) {
    std::vector<bench::TunePlotRun> runs;
    for (const auto& t : r.tasks)
      runs.push_back({r.tasks.size() > 1 ? t.kernel + " " + request.strategy : request.strategy,
                      t.flops, &t.result, t.naive_seconds, t.default_seconds});
    bench::Image img;
    std::string error;
    std::string title = fmt::format("descent tune: {} on {}, {} trials", request.kernel.empty() ? file : request.kernel,
                                    request.device, request.trials);
    std::vector<bench::XYPanel> panels = bench::tune_panels(runs);
    if (panels.empty()) {
      fmt::print(stderr, "note: --plot: no candidate ran, so there is nothing to draw\n");
    } else if (!bench::render_panels(title, bench::host_description(), panels, 1600, 900, &img, &error) ||
               !bench::write_png(img, files.plot, &error)) {
      fmt::print(stderr, "error: --plot: {}\n", error);
      status = 2;
    } else {
      fmt::print(stderr, "wrote {}\n", files.plot);
    }
  }
  if (session.interrupt_flag().load()) {
    fmt::print(stderr, "error: interrupted: the results above are partial (every measured candidate is in the database)\n");
    return kInterrupted;
  }
  return status;
}

// ---- descent import model.onnx -o DIR: a Descent program and .npy weights from an ONNX file ----
struct ImportArgs {
  importer::ImportOptions options;
  std::string onnx_file;
};

int import_model(const ImportArgs& a) {
  importer::ImportResult r;
  std::string error;
  if (!import_plugin::import_onnx_file(a.onnx_file, a.options, &r, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 1;
  }
  fmt::print("{}", import_plugin::format_import_summary(r));
  fmt::print("run it: descent run {} --device cpu\n", r.files.back());
  return 0;
}

}  // namespace
void add_tuned_options(CLI::App* command, TunedOptions* options) {
  command->add_option("--tuned", options->database, "a tuning database (descent tune --db): kernels nobody scheduled use its best records");
  command->add_flag("--no-default-schedule", options->no_default_schedule, "kernels nobody scheduled run as lowered (the naive loop nest), not with the rule-based default schedule");
}

bool apply_tuned_options(Session& session, const TunedOptions& options) {
  if (options.no_default_schedule) session.set_default_schedules(false);
  std::string error;
  if (!options.database.empty() && !session.read_tuning_database(options.database, &error)) {
    fmt::print(stderr, "error: --tuned: {}\n", error);
    return false;
  }
  for (const auto& p : session.tuning_problems()) fmt::print(stderr, "warning: {}\n", p);
  return true;
}

Subcommand add_kernel(CLI::App& app) {
  auto a = std::make_shared<KernelArgs>();
  auto* kernel = app.add_subcommand("kernel", "lower one kernel to a loop nest, schedule it, run it");
  kernel->add_option("FILE", a->file, "the .ds file that defines the kernel (or uses the prelude's)")->required();
  kernel->add_option("NAME", a->name, "the kernel")->required();
  kernel->add_option("--schedule", a->schedule_file, "a schedule file (one step per line; docs/tensor.md)");
  std::vector<std::string> device_help, view_names = {"graph"};
  for (const auto& [name, what] : Session::device_descriptions())
    device_help.push_back(name + (name == "cpu" ? " (default)" : "") + ": " + what);
  for (const auto& v : Session::kernel_views()) view_names.push_back(v.name);
  kernel->add_option("--backend", a->backend, "where the kernel runs; " + join(device_help, "; "));
  kernel->add_option("--dump", a->dump, "show instead of running: " + join(view_names));
  kernel->add_flag("--check", a->check, "also run the reference interpreter on the same inputs; fail if they differ");
  kernel->add_option("--dim", a->dims, "bind a named dim, e.g. --dim n=1024 (others default to 64)");
  kernel->add_option("--cache", a->cache, "the cache the traffic view models, e.g. 32K or 1M (default 1M)");
  kernel->add_option("--threads", a->threads, "threads for parallel loops (default: all)");
  kernel->add_option("--repeats", a->repeats, "timed runs; the median is reported (default 1)");
  kernel->add_option("--seed", a->seed, "seed of the random inputs (default 1)");
  add_tuned_options(kernel, &a->tuned);
  return {kernel, [a](Session& s) { return kernel_command(s, *a); }};
}

Subcommand add_devices(CLI::App& app) {
  auto* devices = app.add_subcommand("devices", "list the tensor devices: ref, cpu, and the OpenCL platforms and devices (or why there are none)");
  return {devices, [](Session&) {
            std::string text = Session::describe_devices();
            if (!text.empty() && text.back() != '\n') text += '\n';
            fmt::print("{}", text);
            return 0;
          }};
}

// descent tune FILE [KERNEL]: search schedules, measured on a device (docs/tuning.md).
Subcommand add_tune(CLI::App& app) {
  struct TuneArgs {
    std::string file;
    Session::TuneRequest request;
    TuneFiles files;
  };
  auto a = std::make_shared<TuneArgs>();
  Session::TuneRequest& treq = a->request;
  TuneFiles& tfiles = a->files;
  auto* tunecmd = app.add_subcommand("tune", "search a kernel's schedule (or those of every kernel a program runs), measuring each candidate on a device");
  tunecmd->add_option("FILE", a->file, "the .ds file (a program to run, or one that defines the kernel)")->required();
  tunecmd->add_option("KERNEL", treq.kernel, "the kernel to tune (default: every kernel FILE launches when run)");
  tunecmd->add_option("--dim", tfiles.dims, "bind a named dim of KERNEL, e.g. --dim n=1024 (others default to 64)");
  tunecmd->add_option("--device", treq.device, "where candidates run: cpu (default) or opencl");
  tunecmd->add_option("--strategy", treq.strategy,
                      tune::strategy_help() + " (default: evolutionary, with the XGBoost cost model)");
  tunecmd->add_option("--trials", treq.trials, "candidates measured per kernel (default 32)");
  tunecmd->add_option("--seed", treq.seed, "seed of the search (default 1)");
  tunecmd->add_option("--space", tfiles.space, "a search space file (docs/tuning.md); default: built from rules");
  tunecmd->add_option("--db", treq.database, "the tuning database (JSON Lines) to resume from and append to");
  tunecmd->add_option("--repeats", treq.repeats, "timed runs per candidate; the median counts (default 5)");
  tunecmd->add_option("--time-limit", treq.time_limit_s, "seconds a candidate's run may take (default 10)");
  tunecmd->add_flag("--no-overlap", tfiles.no_overlap, "build each candidate only after the last one ran (cleaner timings, longer jobs)");
  tunecmd->add_option("--threads", tfiles.threads, "threads of the cpu kernels' parallel loops (default 0: every hardware thread)");
  tunecmd->add_option("--compare", tfiles.compare, "a schedule file to measure beside the search, the same way (repeatable)");
  tunecmd->add_option("--csv", tfiles.csv, "also write every candidate as CSV");
  tunecmd->add_option("--json", tfiles.json, "also write the whole report as JSON");
  tunecmd->add_option("--plot", tfiles.plot, "also draw best-so-far and the cost model's predictions (PNG)");
  return {tunecmd, [a](Session& s) { return tune_command(s, a->file, a->request, a->files); }};
}

Subcommand add_import(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  auto* import = app.add_subcommand(
      "import", "turn an ONNX model (torch.onnx.export) into a Descent program and .npy weights");
  import->add_option("MODEL", a->onnx_file, "the .onnx file")->required();
  import->add_option("-o", a->options.out_dir, "the folder to write model.ds and the weights to")->required();
  import->add_option("--input", a->options.input_npy, "a .npy input for the program to run the model on (default: random)");
  import->add_option("--batch", a->options.batch, "the random input's batch size when the model's batch is symbolic (default 1)");
  return {import, [a](Session&) { return import_model(*a); }};
}

}  // namespace descent::cli
