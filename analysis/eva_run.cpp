// Running Frama-C's Eva on a C twin (analysis/eva.h): the twin goes to a fresh temporary folder,
// frama-c runs there under a deadline (proc::run), once from main and once from each function
// main never reaches, and everything it printed is kept as a log that parse_eva_log reads back.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "analysis/eva.h"
#include "proc/process.h"

namespace descent::analysis {
namespace fs = std::filesystem;

std::vector<std::string> eva_arguments(const EvaOptions& o, const std::string& entry, bool lib_entry) {
  // -machdep x86_64: long is 64-bit, as on the machines Descent runs on. -warn-special-float
  // none: Descent's floats are IEEE doubles, inf and nan included, as in C with no alarm.
  std::vector<std::string> a = {"-eva", "-eva-msg-key=-summary", "-machdep", "x86_64",
                                "-warn-special-float", "none"};
  if (o.unroll_recursive_calls > 0) {
    a.push_back("-eva-unroll-recursive-calls");
    a.push_back(std::to_string(o.unroll_recursive_calls));
  }
  if (entry != "main") {
    a.push_back("-main");
    a.push_back(entry);
    if (lib_entry) a.push_back("-lib-entry");
  }
  a.insert(a.end(), o.extra_args.begin(), o.extra_args.end());
  return a;
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

// A folder of our own under $TMPDIR (or /tmp), "" when none can be made.
std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/descent-eva-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  return ::mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

}  // namespace

EvaRun run_eva(const CTwin& twin, const EvaOptions& options) {
  EvaRun run;
  run.twin_hash = twin_hash(twin);
  std::string path = proc::find_on_path(options.frama_c);
  if (path.empty()) {
    run.message = options.frama_c == "frama-c"
                      ? "frama-c not found: apt-get install frama-c-base (Frama-C with its Eva plug-in)"
                      : "frama-c not found ('" + options.frama_c + "' is not an executable): apt-get install frama-c-base";
    return run;
  }
  std::string dir = options.keep_dir;
  std::error_code ec;
  if (dir.empty()) dir = make_temp_dir();
  else fs::create_directories(dir, ec);
  if (dir.empty() || !fs::is_directory(dir, ec) || !write_text(fs::path(dir) / "twin.c", twin.text)) {
    run.message = "could not write the C twin to a temporary folder (" + (dir.empty() ? std::string("$TMPDIR") : dir) + ")";
    if (options.keep_dir.empty() && !dir.empty()) fs::remove_all(dir, ec);
    return run;
  }

  run.log = "# Frama-C Eva on the C twin of " + twin.file_name + " (descent analyze --compare-eva)\n";
  run.log += "# twin " + run.twin_hash + "\n";
  run.log += "# frama-c " + joined(eva_arguments(options, "main", false)) + " twin.c\n";
  // Entries: main, then each function main does not reach that no earlier entry reached.
  std::vector<std::string> entries{"main"};
  std::set<std::string> covered;
  for (const auto& f : twin.reachable_from("main")) covered.insert(f);
  for (const auto& f : twin.uncalled) {
    if (covered.count(f)) continue;
    entries.push_back(f);
    for (const auto& g : twin.reachable_from(f)) covered.insert(g);
  }
  run.available = true;
  for (const auto& entry : entries) {
    bool lib = entry != "main";
    proc::Options o;
    o.argv = {path};
    for (auto& a : eva_arguments(options, entry, lib)) o.argv.push_back(a);
    // Frama-C reads paths against $PWD (the caller's), not the working folder: the twin goes
    // by its full path, and the folder is taken out of what Frama-C says about it.
    o.argv.push_back((fs::path(dir) / "twin.c").string());
    o.cwd = dir;
    o.limits.wall_s = options.time_limit_s;
    o.limits.output_cap = 32u << 20;
    proc::Result r = proc::run(o);
    if (!r.started) {
      run.available = false;
      run.message = "frama-c did not start: " + r.problem;
      break;
    }
    std::string text = r.out + r.err;
    for (size_t at; (at = text.find(dir + "/")) != std::string::npos;) text.erase(at, dir.size() + 1);
    run.log += "=== eva from " + entry + (lib ? " (-lib-entry: every argument and global unknown)" : "") + " ===\n";
    run.log += compact_eva_output(text);
    if (!options.keep_dir.empty()) write_text(fs::path(dir) / ("eva_" + entry + ".txt"), text);
    EvaOutput out = parse_eva_output(text);
    out.entry = entry;
    if (r.timed_out)
      out.problems.push_back("frama-c ran past " + std::to_string(int(options.time_limit_s)) + " s and was stopped");
    else if (!out.finished && !r.ok)
      out.problems.push_back("frama-c failed (" + (r.problem.empty() ? "exit " + std::to_string(r.exit_code) : r.problem) + ")");
    run.outputs.push_back(std::move(out));
  }
  if (options.keep_dir.empty()) fs::remove_all(dir, ec);
  else write_text(fs::path(dir) / "eva.log", run.log);
  return run;
}

}  // namespace descent::analysis
