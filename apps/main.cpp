// descent: the command-line front end. With no subcommand it starts the REPL; `run` and
// `dump` give a file to the pipeline. Everything shown comes from descent::Session; this
// file only parses arguments, reads files, talks to the terminal and picks exit codes.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <filesystem>

#include "apps/repl.h"
#include "lang/text.h"
#include "bench/bench.h"
#include "bench/plot.h"
#include "importer/onnx_import.h"
#include "labs/runner/lab.h"
#include "proc/process.h"
#include "tune/search.h"

// libedit's readline-compatible interface; it is a C header.
#include <editline/readline.h>

using namespace descent;

namespace {

constexpr int kUsageError = 64;  // EX_USAGE: the command line itself was wrong
constexpr int kInterrupted = 130;  // 128 + SIGINT: what a shell reports for Ctrl-C

std::atomic<bool>* g_interrupt = nullptr;
volatile sig_atomic_t g_sigint = 0;

void on_sigint(int) {
  g_sigint = 1;
  if (g_interrupt) g_interrupt->store(true);
}

// descent::read_file, saying why on stderr when it cannot.
bool read_or_say(const std::string& path, std::string* text) {
  std::string error;
  if (read_file(path, text, &error)) return true;
  fmt::print(stderr, "error: {}\n", error);
  return false;
}

// ---- the REPL on a terminal ----
Repl* g_repl = nullptr;

std::string g_before;  // the line before the word being completed

char* completion_generator(const char* text, int state) {
  static std::vector<std::string> matches;
  static size_t next;
  if (state == 0) {
    matches = g_repl->complete(g_before, text);
    next = 0;
  }
  if (next >= matches.size()) return nullptr;
  return strdup(matches[next++].c_str());
}

char** completer(const char* text, int start, int) {
  rl_attempted_completion_over = 1;
  g_before.assign(rl_line_buffer, size_t(start));
  char** m = rl_completion_matches(text, completion_generator);
  // "fib(" is a call being typed: no space after it.
  size_t n = m && m[0] ? std::strlen(m[0]) : 0;
  rl_completion_append_character = n && m[0][n - 1] == '(' ? '\0' : ' ';
  return m;
}

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.descent_history" : std::string();
}

int repl(Session& session) {
  Repl r(session, std::cout, std::cerr);
  g_repl = &r;
  bool tty = isatty(STDIN_FILENO);
  if (!tty) {
    // Scripted use: no prompts, no history; each line goes straight in.
    std::string line;
    while (std::getline(std::cin, line))
      if (!r.feed(line)) break;
    return 0;
  }
  fmt::print("Descent {} - type :help for commands, Ctrl-D to leave\n", "0.1");
  std::string hist = history_path();
  using_history();
  if (!hist.empty()) read_history(hist.c_str());
  rl_attempted_completion_function = completer;
  rl_basic_word_break_characters = const_cast<char*>(" \t\n()[]{},;+-*/%=<>!&|");
  while (true) {
    g_sigint = 0;
    char* raw = readline(r.prompt());
    if (!raw) {
      // Ctrl-C at the prompt abandons the line being typed; Ctrl-D leaves.
      if (g_sigint) {
        r.cancel_input();
        std::cout << '\n';
        continue;
      }
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (g_sigint) {  // Ctrl-C while typing: drop what was typed
      r.cancel_input();
      continue;
    }
    if (!line.empty()) {
      add_history(line.c_str());
      if (!hist.empty()) write_history(hist.c_str());
    }
    if (!r.feed(line)) break;
  }
  std::cout << '\n';
  return 0;
}

int kernel_command(Session& session, const std::string& file, const std::string& name,
                   const std::string& schedule_file, const std::string& backend,
                   const std::string& dump, const std::vector<std::string>& dim_args, bool check,
                   int threads, int repeats, uint64_t seed) {
  std::map<std::string, int64_t> dims;
  if (std::string error; !Session::parse_dims(dim_args, &dims, &error)) {
    fmt::print(stderr, "error: --dim: {}\n", error);
    return kUsageError;
  }
  auto devices = Session::devices();
  if (std::find(devices.begin(), devices.end(), backend) == devices.end()) {
    fmt::print(stderr, "error: unknown backend '{}' (backends: {})\n", backend, join(devices));
    return kUsageError;
  }
  if (repeats < 1) {
    fmt::print(stderr, "error: --repeats must be at least 1\n");
    return kUsageError;
  }
  std::string text;
  if (!read_or_say(file, &text)) return 2;
  // Views (the kernel's graph too) need only the compiled file, not a run of it.
  std::string device_error;
  if (dump.empty() && !session.set_device(backend, &device_error)) {
    fmt::print(stderr, "error: {}\n", device_error);
    return 1;
  }
  session.set_threads(threads);
  Outcome o = session.compile(std::move(text), file);
  if (o.status != Outcome::Ok) {
    fmt::print(stderr, "{}", o.message);
    return o.exit_code();
  }
  std::string error;
  if (!session.select_kernel(name, dims, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  std::string source;  // where the schedule came from when no file gave one
  if (!schedule_file.empty()) {
    std::string sched;
    if (!read_or_say(schedule_file, &sched)) return 2;
    if (!session.schedule_text(sched, &error)) {
      fmt::print(stderr, "{}: error: {}\n", schedule_file, error);
      return 2;
    }
  } else if (!session.schedule_automatically(backend, &source, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  if (!dump.empty()) {
    StageResult r = session.kernel_view(dump);
    if (!r.ok) {
      fmt::print(stderr, "error: {}\n", r.text);
      return kUsageError;
    }
    fmt::print("{}", r.text);
    return 0;
  }
  Session::KernelRun r = session.run_kernel(backend, check, seed, repeats);
  if (!r.ok) {
    fmt::print(stderr, "error: kernel '{}' on {}: {}\n", name, backend, r.error);
    return 1;
  }
  std::string shape;
  for (auto d : r.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  fmt::print("{} on {}{}: output [{}], sum {:.6g}, {:.3f} ms", name, backend,
             source.empty() ? "" : " (" + source + " schedule)", shape, r.checksum, r.seconds * 1e3);
  // The interpreter compiles nothing; the others say what their build cost.
  if (backend != "ref") fmt::print(" kernel time (build {:.1f} ms)", r.compile_seconds * 1e3);
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
                      t.flops, &t.result});
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

// `descent lab ...`'s options beyond the lab's name and folder.
struct LabArgs {
  std::vector<std::string> grade_dirs, merge_files;
  std::string csv_file, merge_out, shard, sandbox = "auto";
  double time_limit_s = 10;
  uint64_t seed = 0;
  int jobs = 0;
};

bool write_whole_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

// `descent lab grade -j N`: N shards of the class graded by N processes of this program at
// once (each a `descent lab grade --shard K/N`), merged as `descent lab merge` would.
int grade_in_processes(const LabArgs& a, int jobs, std::string* csv) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string tmpl = (std::filesystem::temp_directory_path() / "descent-grade-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    fmt::print(stderr, "error: cannot make a temporary folder for the shards\n");
    return 2;
  }
  std::filesystem::path tmp = buf.data();
  std::vector<proc::Result> results(size_t(jobs), proc::Result{});
  std::vector<std::thread> threads;
  for (int k = 0; k < jobs; ++k)
    threads.emplace_back([&, k] {
      proc::Options o;
      o.argv = {self, "lab", "grade"};
      o.argv.insert(o.argv.end(), a.grade_dirs.begin(), a.grade_dirs.end());
      o.argv.insert(o.argv.end(), {"--shard", fmt::format("{}/{}", k, jobs), "-j", "1", "--csv",
                                   (tmp / fmt::format("shard-{}.csv", k)).string(), "--sandbox", a.sandbox,
                                   "--time-limit", fmt::format("{}", a.time_limit_s)});
      if (a.seed) o.argv.insert(o.argv.end(), {"--seed", std::to_string(a.seed)});
      o.limits.output_cap = 1 << 20;
      o.interrupt = g_interrupt;
      results[size_t(k)] = proc::run(o);
    });
  for (auto& t : threads) t.join();
  std::vector<std::string> texts;
  int rc = 0;
  for (int k = 0; k < jobs; ++k) {
    std::string text, why;
    if (!results[size_t(k)].ok || !read_file((tmp / fmt::format("shard-{}.csv", k)).string(), &text, &why)) {
      fmt::print(stderr, "error: shard {}/{} failed: {}{}\n", k, jobs, results[size_t(k)].problem,
                 results[size_t(k)].err.empty() ? "" : "\n" + results[size_t(k)].err);
      rc = 2;
    }
    texts.push_back(text);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  if (rc) return rc;
  std::string error;
  if (!labs::merge_grade_csvs(texts, csv, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  return 0;
}

// `descent lab ...`: the runner's library does the work; this prints and sets exit codes.
int lab_command(CLI::App* list, CLI::App* start, CLI::App* check, CLI::App* hint, CLI::App* watch,
                CLI::App* grade, CLI::App* merge, const std::string& name, const std::string& dir,
                const LabArgs& args, Session& session) {
  if (*merge) {
    std::vector<std::string> texts;
    for (const auto& f : args.merge_files) {
      std::string text, why;
      if (!read_file(f, &text, &why)) {
        fmt::print(stderr, "error: {}\n", why);
        return 2;
      }
      texts.push_back(text);
    }
    std::string csv, error;
    if (!labs::merge_grade_csvs(texts, &csv, &error)) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    if (!write_whole_file(args.merge_out, csv)) {
      fmt::print(stderr, "error: {}: cannot write: {}\n", args.merge_out, std::strerror(errno));
      return 2;
    }
    fmt::print("merged {} file{} into {}\n", texts.size(), texts.size() == 1 ? "" : "s", args.merge_out);
    return 0;
  }
  std::vector<labs::Lab> all;
  std::string error;
  if (!labs::load_labs(labs::default_labs_dir(), &all, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  if (*list) {
    fmt::print("{}", labs::format_list(all, dir.empty() ? "descent-labs" : dir));
    return 0;
  }
  labs::CheckOptions copts;
  copts.time_limit_s = args.time_limit_s;
  copts.sandbox = args.sandbox;
  copts.seed = args.seed;
  if (args.sandbox != "auto" && args.sandbox != "bwrap" && args.sandbox != "none") {
    fmt::print(stderr, "error: --sandbox {}: the choices are auto, bwrap and none\n", args.sandbox);
    return 2;
  }
  if (*grade) {
    labs::GradeOptions g;
    g.check = copts;
    g.check.speed_tries = 3;  // a failing speed check is measured again before it costs points
    if (!args.shard.empty()) {
      int i = -1, n = 0;
      char slash = 0;
      std::istringstream in(args.shard);
      if (!(in >> i >> slash >> n) || slash != '/' || n < 1 || i < 0 || i >= n || !in.eof()) {
        fmt::print(stderr, "error: --shard {}: write I/N with 0 <= I < N (a job array's index and size)\n", args.shard);
        return 2;
      }
      g.shard_index = i;
      g.shard_count = n;
    }
    int jobs = args.jobs > 0 ? args.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
    jobs = std::min<int>(jobs, int(labs::shard_of(args.grade_dirs, g.shard_index, g.shard_count).size()));
    std::string csv;
    if (jobs > 1 && args.shard.empty()) {
      if (int rc = grade_in_processes(args, jobs, &csv)) return rc;
    } else {
      csv = labs::grade_csv(all, args.grade_dirs, g);
    }
    if (args.csv_file.empty()) {
      fmt::print("{}", csv);
    } else {
      if (!write_whole_file(args.csv_file, csv)) {
        fmt::print(stderr, "error: {}: cannot write: {}\n", args.csv_file, std::strerror(errno));
        return 2;
      }
      size_t n = labs::shard_of(args.grade_dirs, g.shard_index, g.shard_count).size();
      fmt::print("graded {} student folder{} into {}\n", n, n == 1 ? "" : "s", args.csv_file);
    }
    return 0;
  }
  const labs::Lab* lab = nullptr;
  if (!labs::find_lab(all, name, &lab, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  std::string work = dir.empty() ? labs::default_work_dir(*lab) : dir;
  if (*start) {
    std::string message;
    if (!labs::start_lab(*lab, work, &message, &error)) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    fmt::print("{}", message);
    return 0;
  }
  if (*hint) {
    std::string text = labs::next_hint(*lab, work, &error);
    if (text.empty()) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    fmt::print("{}", text);
    return 0;
  }
  auto run_check = [&]() {
    labs::LabReport r = labs::check_lab(*lab, work, copts);
    if (!r.setup_error.empty()) {
      fmt::print(stderr, "error: {}\n", r.setup_error);
      return 2;
    }
    fmt::print("{}", labs::format_report(r));
    std::fflush(stdout);
    return r.passed() ? 0 : 1;
  };
  if (*check) return run_check();
  (void)watch;
  // Watch: check now, then again whenever a file of the lab in the work folder changes
  // (polled twice a second), until Ctrl-C.
  auto stamp = [&]() {
    std::string s;
    for (const auto& f : lab->files) {
      std::error_code ec;
      auto t = std::filesystem::last_write_time(std::filesystem::path(work) / f, ec);
      s += ec ? "-" : std::to_string(t.time_since_epoch().count());
      s += ";";
    }
    return s;
  };
  std::string seen = stamp();
  int rc = run_check();
  if (rc == 2) return rc;
  fmt::print("watching {} for changes (Ctrl-C stops)\n", work);
  std::fflush(stdout);
  while (!session.interrupt_flag().load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::string now = stamp();
    if (now == seen) continue;
    seen = now;
    fmt::print("\n--- {} changed: checking again ---\n", work);
    rc = run_check();
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Descent: one small program taken down every tier of a compiler.\n"
               "With no subcommand, starts the REPL."};
  app.require_subcommand(0, 1);

  std::string file, engine = "ast", stage, format = "text";
  bool time = false;

  auto* run = app.add_subcommand("run", "compile and run a .ds program");
  run->add_option("FILE", file, "the program")->required();
  run->add_option("--engine", engine, "which engine runs it: " + join(Session::engines()) + " (default ast)");
  run->add_flag("--time", time, "report compile and run time on stderr, stage by stage and kernel by kernel");
  std::string debug_level = "0";
  run->add_option("--debug", debug_level,
                  "kernel launch log on stderr: 1 a summary, 2 a line per launch (name, device, "
                  "time, GFLOP/s, GB/s); 0 off (default)");
  bool trace = false;
  int registers = 16;
  run->add_flag("--trace", trace, "print every instruction the VM executes (stack, reg) on stderr");
  auto* run_registers = run->add_option("--registers", registers, "register file size for --engine reg (3..250)");
  std::string run_device = "ref", tensor_limit;
  int run_threads = 0;
  run->add_option("--device", run_device, "where tensor kernels run: " + join(Session::devices()) + " (default ref), as :device");
  run->add_option("--threads", run_threads, "threads for the cpu device's parallel loops (default: all)");
  run->add_option("--tensor-limit", tensor_limit, "the largest one tensor may be, e.g. 512M, 2G (default: half the memory)");

  std::string stage_help = "one of:";
  for (auto& s : Session::stages()) stage_help += std::string(" ") + s.name;
  auto* dump = app.add_subcommand("dump", "show one stage of a program (tokens, AST, ...)");
  dump->add_option("FILE", file, "the program")->required();
  dump->add_option("--stage", stage, stage_help)->required();
  dump->add_option("--format", format, "text (default), sexpr or dot (tree stages)");
  dump->add_option("--registers", registers, "register file size for reg-alloc and live (3..250)");
  int opt = 2;
  std::string target;
  dump->add_option("-O", opt, "optimisation level 0..3 of the LLVM stages (default 2)");
  std::vector<std::string> diff_pair;
  dump->add_option("--diff", diff_pair, "with --stage passes: the IR diff between two passes (names from the list)")
      ->expected(2);
  dump->add_option("--target", target, "triple or alias for asm/mir: x86-64, aarch64, riscv64, wasm32");
  std::string dump_function;
  bool no_encodings = false, directives = false;
  dump->add_option("--function", dump_function, "code stages: only this function's code (like dis.dis(fib))");
  dump->add_flag("--no-encodings", no_encodings, "asm: without each instruction's encoded bytes");
  dump->add_flag("--directives", directives, "asm: keep the assembler directives (.text, .p2align, .cfi_*, .loc, ...)");
  std::string domain = "intervals";
  std::vector<std::string> domain_names;
  for (auto d : analysis::all_domains()) domain_names.push_back(analysis::domain_name(d));
  dump->add_option("--domain", domain, "analysis: the abstract domain, " + join(domain_names) + " (default intervals)");
  run->add_option("-O", opt, "optimisation level 0..3 for --engine jit (default 2)");

  std::string output;
  auto* build = app.add_subcommand("build", "compile a program to an object file (link: cc F.o -lm)");
  build->add_option("FILE", file, "the program")->required();
  build->add_option("-o", output, "the object file to write")->required();
  build->add_option("-O", opt, "optimisation level 0..3 (default 2)");
  build->add_option("--target", target, "triple or alias: x86-64, aarch64, riscv64, wasm32 (default: this machine)");

  // descent kernel FILE NAME: one kernel's loop nest, scheduled, shown, run and checked.
  std::string kernel_name, schedule_file, backend = "cpu", kernel_dump;
  std::vector<std::string> dim_args;
  bool check = false;
  int threads = 0, kernel_repeats = 1;
  uint64_t seed = 1;
  auto* kernelcmd = app.add_subcommand("kernel", "lower one kernel to a loop nest, schedule it, run it");
  kernelcmd->add_option("FILE", file, "the .ds file that defines the kernel (or uses the prelude's)")->required();
  kernelcmd->add_option("NAME", kernel_name, "the kernel")->required();
  kernelcmd->add_option("--schedule", schedule_file, "a schedule file (one step per line; docs/tensor.md)");
  std::vector<std::string> device_help, view_names = {"graph"};
  for (const auto& [name, what] : Session::device_descriptions())
    device_help.push_back(name + (name == "cpu" ? " (default)" : "") + ": " + what);
  for (const auto& v : Session::kernel_views()) view_names.push_back(v.name);
  kernelcmd->add_option("--backend", backend, "where the kernel runs; " + join(device_help, "; "));
  kernelcmd->add_option("--dump", kernel_dump, "show instead of running: " + join(view_names));

  auto* devicescmd = app.add_subcommand("devices", "list the tensor devices: ref, cpu, and the OpenCL platforms and devices (or why there are none)");
  kernelcmd->add_flag("--check", check, "also run the reference interpreter on the same inputs; fail if they differ");
  kernelcmd->add_option("--dim", dim_args, "bind a named dim, e.g. --dim n=1024 (others default to 64)");
  kernelcmd->add_option("--threads", threads, "threads for parallel loops (default: all)");
  kernelcmd->add_option("--repeats", kernel_repeats, "timed runs; the median is reported (default 1)");
  kernelcmd->add_option("--seed", seed, "seed of the random inputs (default 1)");
  std::string tuned_db;
  bool no_default_schedule = false;
  for (auto* c : {kernelcmd, run}) {
    c->add_option("--tuned", tuned_db, "a tuning database (descent tune --db): kernels nobody scheduled use its best records");
    c->add_flag("--no-default-schedule", no_default_schedule, "kernels nobody scheduled run as lowered (the naive loop nest), not with the rule-based default schedule");
  }

  // descent tune FILE [KERNEL]: search schedules, measured on a device (docs/tuning.md).
  Session::TuneRequest treq;
  TuneFiles tfiles;
  auto* tunecmd = app.add_subcommand("tune", "search a kernel's schedule (or those of every kernel a program runs), measuring each candidate on a device");
  tunecmd->add_option("FILE", file, "the .ds file (a program to run, or one that defines the kernel)")->required();
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

  bench::BenchOptions bopts;
  bool quick = false;
  std::string plot_file, plot_metric = "gflops";
  auto* benchcmd = app.add_subcommand(
      "bench", "time workloads on every engine (and Lua, Python, OpenBLAS); with no options, "
               "everything at classroom sizes (a few minutes)");
  auto* suite_opt = benchcmd->add_option("--suite", bopts.suite, "vm (engines vs Lua/Python/C), tensor (kernels on CPU and OpenCL vs OpenBLAS), model (MLPs vs NumPy and ONNX Runtime), tune (the auto-tuner from naive nests; minutes: not in all), analysis (abstract interpretation per domain against the front end; not in all), or all (default)");
  benchcmd->add_option("--trials", bopts.tune_trials, "tune suite: candidates measured per search (default 200; 4 with --quick)");
  benchcmd->add_option("--threads", bopts.threads, "tensor and tune suites: thread counts to run at (repeatable; default 1 and 2)");
  benchcmd->add_option("--csv", bopts.csv, "also write the records as CSV");
  benchcmd->add_option("--json", bopts.json, "also write the records as JSON");
  auto* repeats_opt = benchcmd->add_option("--repeats", bopts.repeats, "runs per cell; the median is reported (default 3, fewer for tensor cells slower than 1 s)");
  benchcmd->add_option("--plot", plot_file, "also draw the tensor results as a bar chart (PNG) for a slide");
  benchcmd->add_option("--plot-metric", plot_metric, "what the bars show: gflops (default) or time");
  benchcmd->add_option("--engine", bopts.engines, "only these engines or baselines (repeatable)");
  benchcmd->add_option("--workload", bopts.workloads, "only these workloads (repeatable)");
  benchcmd->add_flag("--quick", quick, "small sizes that finish in seconds");

  // descent import model.onnx -o DIR: a Descent program and .npy weights from an ONNX file.
  importer::ImportOptions iopts;
  std::string onnx_file;
  auto* importcmd = app.add_subcommand(
      "import", "turn an ONNX model (torch.onnx.export) into a Descent program and .npy weights");
  importcmd->add_option("MODEL", onnx_file, "the .onnx file")->required();
  importcmd->add_option("-o", iopts.out_dir, "the folder to write model.ds and the weights to")->required();
  importcmd->add_option("--input", iopts.input_npy, "a .npy input for the program to run the model on (default: random)");
  importcmd->add_option("--batch", iopts.batch, "the random input's batch size when the model's batch is symbolic (default 1)");

  // descent lab list|start|check|hint|watch|grade: the guided labs (docs/labs.md).
  std::string lab_name, lab_dir;
  LabArgs lab_args;
  auto* labcmd = app.add_subcommand("lab", "guided labs: list, start, check, hint, watch, grade, merge (docs/labs.md)");
  labcmd->require_subcommand(1);
  auto* lab_list = labcmd->add_subcommand("list", "every lab, in order, with its status");
  lab_list->add_option("--dir", lab_dir, "the folder the work folders are in (default descent-labs)");
  auto* lab_start = labcmd->add_subcommand("start", "copy a lab's starter files into a work folder");
  auto* lab_check = labcmd->add_subcommand("check", "run every check of a lab on your work (exit 0: all pass, 1: some fail, 2: set-up error)");
  auto* lab_hint = labcmd->add_subcommand("hint", "the next hint");
  auto* lab_watch = labcmd->add_subcommand("watch", "check again whenever a file of the lab changes (Ctrl-C stops)");
  for (auto* c : {lab_start, lab_check, lab_hint, lab_watch}) {
    c->add_option("NAME", lab_name, "the lab")->required();
    c->add_option("--dir", lab_dir, "the work folder (default descent-labs/NAME)");
  }
  auto* lab_grade = labcmd->add_subcommand("grade", "check many students' folders (each holding one folder per lab) for a teacher");
  lab_grade->add_option("DIRS", lab_args.grade_dirs, "the students' folders")->required();
  lab_grade->add_option("--csv", lab_args.csv_file, "write the grades here (default: stdout)");
  lab_grade->add_option("-j,--jobs", lab_args.jobs, "students graded at once, each shard by a process of its own (default: the core count)");
  lab_grade->add_option("--shard", lab_args.shard, "I/N: grade only the students whose place (by folder name) is I modulo N, for a job array");
  for (auto* c : {lab_check, lab_watch, lab_grade}) {
    c->add_option("--sandbox", lab_args.sandbox, "C++ labs: auto (bubblewrap when it works), bwrap, none")->capture_default_str();
    c->add_option("--time-limit", lab_args.time_limit_s, "seconds each run of the student's code may take")->capture_default_str();
    c->add_option("--seed", lab_args.seed, "the hidden inputs' seed (default: drawn for each run)");
  }
  auto* lab_merge = labcmd->add_subcommand("merge", "merge the CSVs of `lab grade --shard` runs into one");
  lab_merge->add_option("CSVS", lab_args.merge_files, "the shards' CSV files")->required();
  lab_merge->add_option("-o", lab_args.merge_out, "the merged CSV")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; every real mistake is a usage error
    // (2 for `descent lab`, as its checks' exit codes say).
    int code = app.exit(e);
    if (code != 0 && argc > 1 && std::string(argv[1]) == "lab") return 2;
    return code == 0 ? 0 : kUsageError;
  }

  Session session;
  g_interrupt = &session.interrupt_flag();
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  // At a terminal, Ctrl-C must wake libedit's read so the prompt can drop the line; when
  // reading a pipe, the read should simply resume (a stray Ctrl-C must not end the input).
  sa.sa_flags = isatty(STDIN_FILENO) ? 0 : SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);

  if (!session.set_opt_level(opt)) {
    fmt::print(stderr, "error: -O takes 0, 1, 2 or 3\n");
    return kUsageError;
  }
  if (std::string error; !target.empty() && !session.set_target(target, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return kUsageError;
  }
  if (*build) {
    std::string text;
    if (!read_or_say(file, &text)) return 2;
    Outcome o = session.compile(std::move(text), file);
    if (o.status != Outcome::Ok) {
      fmt::print(stderr, "{}", o.message);
      return o.exit_code();
    }
    std::string error;
    if (!session.build_object(output, &error)) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    return 0;
  }
  if (!session.set_num_registers(registers)) {
    fmt::print(stderr, "error: --registers must be 3 to 250\n");
    return kUsageError;
  }
  if (*run) {
    if (!session.set_engine(engine)) {
      fmt::print(stderr, "error: unknown engine '{}' (engines: {})\n", engine, join(Session::engines()));
      return kUsageError;
    }
    std::string error;
    if (!session.set_device(run_device, &error)) {
      fmt::print(stderr, "error: --device: {}\n", error);
      return kUsageError;
    }
    session.set_threads(run_threads);
    if (no_default_schedule) session.set_default_schedules(false);
    if (!tuned_db.empty()) session.set_tuning_database(tuned_db);
    for (const auto& p : session.tuning_problems()) fmt::print(stderr, "warning: {}\n", p);
    if (!tensor_limit.empty() && !session.set_tensor_limit(tensor_limit, &error)) {
      fmt::print(stderr, "error: --tensor-limit: {}\n", error);
      return kUsageError;
    }
    std::string text;
    if (!read_or_say(file, &text)) return 2;
    RunOptions opts;
    int debug = 0;
    std::string debug_error;
    if (!parse_debug_level(debug_level, &debug, &debug_error)) {
      fmt::print(stderr, "error: --debug: {}\n", debug_error);
      return kUsageError;
    }
    // Launch lines on stderr, after the program output before them (flushed first).
    LaunchLog log(debug, [](std::string_view s) {
      std::fflush(stdout);
      std::fwrite(s.data(), 1, s.size(), stderr);
    });
    opts.out = [&log, trace](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      // Trace lines go to stderr unbuffered; flushed, the output keeps its place among them
      // when both are piped into one stream.
      if (trace) std::fflush(stdout);
      log.output(s);
    };
    if (debug >= 2) session.set_launch_observer([&log](const tensor::LaunchRecord& r) { log.launch(r); });
    if (trace) opts.trace = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stderr); };
    // Options the chosen engine would ignore: say so rather than print nothing.
    if (trace && !Session::engine_traces(engine))
      fmt::print(stderr, "note: the {} engine does not trace; --trace needs --engine stack or --engine reg\n", engine);
    if (run_registers->count() && engine != "reg")
      fmt::print(stderr, "note: --registers sizes the register VM's file; it has no effect without --engine reg\n");
    Outcome o = session.submit(std::move(text), file, opts);
    std::fflush(stdout);
    log.finish(o);
    if (!o.note.empty()) fmt::print(stderr, "note: {}\n", o.note);
    for (const auto& n : o.notes) fmt::print(stderr, "note: {}\n", n);
    if (o.status != Outcome::Ok) fmt::print(stderr, "{}", o.message);
    if (time) fmt::print(stderr, "{}", timing_report(o, session.engine()));
    return o.exit_code();
  }
  if (*devicescmd) {
    std::string text = Session::describe_devices();
    if (!text.empty() && text.back() != '\n') text += '\n';
    fmt::print("{}", text);
    return 0;
  }
  if (*kernelcmd) {
    if (no_default_schedule) session.set_default_schedules(false);
    if (!tuned_db.empty()) session.set_tuning_database(tuned_db);
    for (const auto& p : session.tuning_problems()) fmt::print(stderr, "warning: {}\n", p);
    return kernel_command(session, file, kernel_name, schedule_file, backend, kernel_dump,
                          dim_args, check, threads, kernel_repeats, seed);
  }
  if (*tunecmd) return tune_command(session, file, treq, tfiles);
  if (*labcmd) return lab_command(lab_list, lab_start, lab_check, lab_hint, lab_watch, lab_grade, lab_merge,
                                   lab_name, lab_dir, lab_args, session);
  if (*importcmd) {
    importer::ImportResult r;
    std::string error;
    if (!importer::import_onnx_file(onnx_file, iopts, &r, &error)) {
      fmt::print(stderr, "error: {}\n", error);
      return 1;
    }
    fmt::print("{}", importer::format_import_summary(r));
    fmt::print("run it: descent run {} --device cpu\n", r.files.back());
    return 0;
  }
  if (*benchcmd) {
    bopts.quick = quick;
    bopts.interrupt = &session.interrupt_flag();
    // Classroom defaults: everything, and few enough runs to finish in minutes. An explicit
    // --repeats is taken as given (no time budget per cell).
    if (suite_opt->count() == 0) bopts.suite = "all";
    if (repeats_opt->count() == 0) {
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
        analysis_records;
    for (auto& r : records)
      (r.suite == "tensor"     ? tensor_records
       : r.suite == "model"    ? model_records
       : r.suite == "tune"     ? tune_records
       : r.suite == "analysis" ? analysis_records
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
    if (!analysis_records.empty()) fmt::print("{}", bench::format_analysis_table(analysis_records));
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
  if (*dump) {
    Format f;
    if (format == "text") f = Format::Text;
    else if (format == "sexpr") f = Format::Sexpr;
    else if (format == "dot") f = Format::Dot;
    else {
      fmt::print(stderr, "error: unknown format '{}' (formats: text, sexpr, dot)\n", format);
      return kUsageError;
    }
    bool known = false;
    for (auto& s : Session::stages()) known |= stage == s.name;
    if (!known) {
      fmt::print(stderr, "error: unknown stage '{}' ({})\n", stage, stage_help);
      return kUsageError;
    }
    analysis::Domain d;
    if (!analysis::parse_domain(domain, &d)) {
      fmt::print(stderr, "error: unknown domain '{}' (domains: {})\n", domain, join(domain_names));
      return kUsageError;
    }
    session.set_analysis_domain(d);
    std::string text;
    if (!read_or_say(file, &text)) return 2;
    Outcome o = session.compile(std::move(text), file);
    // Tokens exist even for a program that does not compile; other stages need a clean one.
    if (o.status != Outcome::Ok && stage != "tokens") {
      fmt::print(stderr, "{}", o.message);
      return o.exit_code();
    }
    // The tensor graph exists once the program's code has run (kernel calls build it
    // lazily, printing evaluates it): run it, its output unwanted in a dump.
    if (stage == "graph") {
      RunOptions quiet;
      quiet.out = [](std::string_view) {};
      o = session.run(quiet);
      if (o.status != Outcome::Ok) {
        fmt::print(stderr, "{}", o.message);
        return o.exit_code();
      }
    }
    session.set_asm_options({!no_encodings, directives});
    StageResult r = diff_pair.size() == 2 ? session.diff_passes(diff_pair[0], diff_pair[1])
                                          : session.stage(stage, f, dump_function);
    if (!r.ok) {
      fmt::print(stderr, "error: {}\n", r.text);
      return 2;
    }
    fmt::print("{}", r.text);
    return 0;
  }
  return repl(session);
}
