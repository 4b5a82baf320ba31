// `descent lab ...`: the guided labs from the command line (docs/labs.md). The runner's library
// (labs/runner/lab.h) loads, starts, checks, hints and grades, and labs/runner/watch.h says
// when watch mode should check again; this file prints, sets exit codes, and runs the shards of
// `lab grade -j N` as processes of this program.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/cli_internal.h"
#include "labs/runner/lab.h"
#include "labs/runner/watch.h"
#include "lang/text.h"
#include "proc/process.h"

namespace descent::cli {
namespace {

// `descent lab ...`'s options, and its subcommands (to see which one the command line named).
struct LabArgs {
  std::string name, dir;  // the lab, and its work folder (or, for list, where they are)
  std::vector<std::string> grade_dirs, merge_files;
  std::string csv_file, merge_out, shard, sandbox = "auto";
  double time_limit_s = 10;
  uint64_t seed = 0;
  int jobs = 0;
  CLI::App *list = nullptr, *start = nullptr, *check = nullptr, *hint = nullptr, *watch = nullptr,
           *grade = nullptr, *merge = nullptr;
};

bool write_whole_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

// `descent lab grade -j N`: N shards of the class graded by N processes of this program at
// once (each a `descent lab grade --shard K/N`), merged as `descent lab merge` would.
int grade_in_processes(const LabArgs& a, int jobs, const std::atomic<bool>* interrupt, std::string* csv) {
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
      o.interrupt = interrupt;
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

// `descent lab merge CSVS -o OUT`: the shards' CSVs as one.
int merge_csvs(const LabArgs& args) {
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

// `descent lab grade DIRS`: a class, or one shard of it, in this process or in -j processes.
int grade_class(const std::vector<labs::Lab>& all, const LabArgs& args,
                const labs::CheckOptions& copts, Session& session) {
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
    if (int rc = grade_in_processes(args, jobs, &session.interrupt_flag(), &csv)) return rc;
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

// `descent lab check` once, or `descent lab watch`: check now, then again whenever a file of
// the lab in the work folder changes (labs::LabWatch), until Ctrl-C.
int check_or_watch(const labs::Lab& lab, const std::string& work, const labs::CheckOptions& copts,
                   bool watch, Session& session) {
  auto run_check = [&]() {
    labs::LabReport r = labs::check_lab(lab, work, copts);
    if (!r.setup_error.empty()) {
      fmt::print(stderr, "error: {}\n", r.setup_error);
      return 2;
    }
    fmt::print("{}", labs::format_report(r));
    std::fflush(stdout);
    return r.passed() ? 0 : 1;
  };
  if (!watch) return run_check();
  labs::LabWatch watcher(lab, work);  // the files as they are before this first check
  int rc = run_check();
  if (rc == 2) return rc;
  fmt::print("watching {} for changes (Ctrl-C stops)\n", work);
  std::fflush(stdout);
  while (watcher.wait_for_change(session.interrupt_flag())) {
    fmt::print("\n--- {} changed: checking again ---\n", work);
    rc = run_check();
  }
  return rc;
}

// `descent lab ...`: the runner's library does the work; this prints and sets exit codes.
int lab_command(Session& session, const LabArgs& args) {
  if (*args.merge) return merge_csvs(args);
  std::vector<labs::Lab> all;
  std::string error;
  if (!labs::load_labs(labs::default_labs_dir(), &all, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  if (*args.list) {
    fmt::print("{}", labs::format_list(all, args.dir.empty() ? "descent-labs" : args.dir));
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
  if (*args.grade) return grade_class(all, args, copts, session);
  const labs::Lab* lab = nullptr;
  if (!labs::find_lab(all, args.name, &lab, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return 2;
  }
  std::string work = args.dir.empty() ? labs::default_work_dir(*lab) : args.dir;
  if (*args.start) {
    std::string message;
    if (!labs::start_lab(*lab, work, &message, &error)) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    fmt::print("{}", message);
    return 0;
  }
  if (*args.hint) {
    std::string text = labs::next_hint(*lab, work, &error);
    if (text.empty()) {
      fmt::print(stderr, "error: {}\n", error);
      return 2;
    }
    fmt::print("{}", text);
    return 0;
  }
  return check_or_watch(*lab, work, copts, bool(*args.watch), session);
}

}  // namespace

// descent lab list|start|check|hint|watch|grade|merge: the guided labs (docs/labs.md).
Subcommand add_lab(CLI::App& app) {
  auto a = std::make_shared<LabArgs>();
  auto* labcmd = app.add_subcommand("lab", "guided labs: list, start, check, hint, watch, grade, merge (docs/labs.md)");
  labcmd->require_subcommand(1);
  a->list = labcmd->add_subcommand("list", "every lab, in order, with its status");
  a->list->add_option("--dir", a->dir, "the folder the work folders are in (default descent-labs)");
  a->start = labcmd->add_subcommand("start", "copy a lab's starter files into a work folder");
  a->check = labcmd->add_subcommand("check", "run every check of a lab on your work (exit 0: all pass, 1: some fail, 2: set-up error)");
  a->hint = labcmd->add_subcommand("hint", "the next hint");
  a->watch = labcmd->add_subcommand("watch", "check again whenever a file of the lab changes (Ctrl-C stops)");
  for (auto* c : {a->start, a->check, a->hint, a->watch}) {
    c->add_option("NAME", a->name, "the lab")->required();
    c->add_option("--dir", a->dir, "the work folder (default descent-labs/NAME)");
  }
  a->grade = labcmd->add_subcommand("grade", "check many students' folders (each holding one folder per lab) for a teacher");
  a->grade->add_option("DIRS", a->grade_dirs, "the students' folders")->required();
  a->grade->add_option("--csv", a->csv_file, "write the grades here (default: stdout)");
  a->grade->add_option("-j,--jobs", a->jobs, "students graded at once, each shard by a process of its own (default: the core count)");
  a->grade->add_option("--shard", a->shard, "I/N: grade only the students whose place (by folder name) is I modulo N, for a job array");
  for (auto* c : {a->check, a->watch, a->grade}) {
    c->add_option("--sandbox", a->sandbox, "C++ labs: auto (bubblewrap when it works), bwrap, none")->capture_default_str();
    c->add_option("--time-limit", a->time_limit_s, "seconds each run of the student's code may take")->capture_default_str();
    c->add_option("--seed", a->seed, "the hidden inputs' seed (default: drawn for each run)");
  }
  a->merge = labcmd->add_subcommand("merge", "merge the CSVs of `lab grade --shard` runs into one");
  a->merge->add_option("CSVS", a->merge_files, "the shards' CSV files")->required();
  a->merge->add_option("-o", a->merge_out, "the merged CSV")->required();
  return {labcmd, [a](Session& s) { return lab_command(s, *a); }};
}

}  // namespace descent::cli
