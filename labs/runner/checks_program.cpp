// The checks of Descent programs (internal.h): what a program prints, on which engines and
// built ahead of time; how many VM instructions, kernels and spills it takes; which words it
// may not use.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "labs/runner/internal.h"

#include "lang/text.h"
#include "proc/process.h"

#include <unistd.h>

#include <random>

namespace descent::labs {
namespace {

// Numbers within a relative tolerance, every other word exactly: two correct programs may
// round differently in the last bits of a float.
bool outputs_close(const std::string& got, const std::string& want, double rtol, std::string* where) {
  std::regex word("[^\\s,\\[\\]()]+|[,\\[\\]()]");
  auto words = [&](const std::string& text) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
      out.push_back(it->str());
    return out;
  };
  auto a = words(got), b = words(want);
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] == b[i]) continue;
    char* end_a = nullptr;
    char* end_b = nullptr;
    double x = std::strtod(a[i].c_str(), &end_a), y = std::strtod(b[i].c_str(), &end_b);
    bool numbers = *end_a == '\0' && *end_b == '\0' && !a[i].empty() && !b[i].empty();
    if (numbers && std::fabs(x - y) <= rtol * std::max({1.0, std::fabs(x), std::fabs(y)})) continue;
    *where = fmt::format("'{}' where the reference prints '{}'", a[i], b[i]);
    return false;
  }
  if (a.size() != b.size()) {
    *where = fmt::format("{} words where the reference prints {}", a.size(), b.size());
    return false;
  }
  return true;
}

}  // namespace

// The lab's driver with its hidden inputs filled in: each {name} of the driver's text
// becomes a number drawn from the check's seed in the range "hidden" gives it ([lo, hi]).
// *shown: "n = 237", for a message after the run (the next run draws others).
bool hidden_driver(const Context& c, const Check& check, std::string* driver, std::string* shown,
                   std::string* why) {
  if (!read_file((fs::path(c.lab.dir) / check.spec.value("driver", "")).string(), driver, why)) return false;
  std::mt19937_64 rng(c.seed * 7919 + std::hash<std::string>{}(check.name));
  std::vector<std::string> parts;
  const nlohmann::json hidden = check.spec.value("hidden", nlohmann::json::object());
  for (const auto& [name, range] : hidden.items()) {
    int64_t lo = range.at(0).get<int64_t>(), hi = range.at(1).get<int64_t>();
    int64_t v = lo + int64_t(rng() % uint64_t(hi - lo + 1));
    std::string key = "{" + name + "}", value = std::to_string(v);
    for (size_t at = driver->find(key); at != std::string::npos; at = driver->find(key, at + value.size()))
      driver->replace(at, key.size(), value);
    parts.push_back(name + " = " + value);
  }
  *shown = join(parts, ", ");
  return true;
}

// What the program prints on each engine: `expect`, or (with a "driver") what the lab's
// reference prints with the same driver appended, on inputs drawn at check time that the
// student never sees: a program that prints the answer without computing it fails.
bool check_output(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string expect = check.spec.value("expect", ""), driver, shown;
  if (check.spec.contains("driver")) {
    if (!hidden_driver(c, check, &driver, &shown, why)) return false;
    std::string reference;
    if (!read_file((fs::path(c.lab.dir) / check.spec.value("reference", "")).string(), &reference, why)) return false;
    Run want = run_program(reference + "\n" + driver, "reference", "ast", 10 * c.limit_s(), c.lab.dir);
    if (want.outcome.status != Outcome::Ok || want.timed_out) {
      *why = "the lab's reference does not run: " + failure_text(want, 10 * c.limit_s());
      c.status = "error";
      return false;
    }
    expect = want.printed;
    source += "\n" + driver;
  }
  std::string with = shown.empty() ? "" : " with the checker's inputs (" + shown + ")";
  std::vector<std::string> engines = check.spec.value("engines", std::vector<std::string>{"ast"});
  for (const auto& engine : engines) {
    Run r = run_program(source, name, engine, c.limit_s(), c.work.string());
    if (r.outcome.status != Outcome::Ok || r.timed_out) {
      if (r.timed_out) c.status = "timeout";
      *why = fmt::format("on the {} engine{}: {}", engine, with, failure_text(r, c.limit_s()));
      return false;
    }
    if (r.printed != expect) {
      *why = fmt::format("on the {} engine{} it printed {}; the lab expects {}", engine, with,
                         quoted_output(r.printed), quoted_output(expect));
      return false;
    }
  }
  return true;
}

// The student's file with the lab's driver appended, against the lab's reference with the
// same driver (run on ast): numbers to a relative tolerance.
bool check_output_close(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string driver, reference;
  if (check.spec.contains("append") &&
      !read_file((fs::path(c.lab.dir) / check.spec.value("append", "")).string(), &driver, why))
    return false;
  if (!read_file((fs::path(c.lab.dir) / check.spec.value("reference", "")).string(), &reference, why))
    return false;
  // The reference reads its data from the lab's folder (reference_dir in it), never from the
  // student's: what it compares against cannot be edited away.
  std::string ref_base = (fs::path(c.lab.dir) / check.spec.value("reference_dir", "")).string();
  Run want = run_program(reference + "\n" + driver, "reference", "ast", c.limit_s(), ref_base);
  if (want.outcome.status != Outcome::Ok) {
    *why = "the lab's reference does not run: " + want.outcome.message;
    return false;
  }
  double rtol = check.spec.value("rtol", 1e-4);
  for (const auto& engine : check.spec.value("engines", std::vector<std::string>{"ast"})) {
    Run r = run_program(source + "\n" + driver, name, engine, c.limit_s(), c.work.string());
    if (r.outcome.status != Outcome::Ok || r.timed_out) {
      if (r.timed_out) c.status = "timeout";
      *why = fmt::format("on the {} engine: {}", engine, failure_text(r, c.limit_s()));
      return false;
    }
    std::string where;
    if (!outputs_close(r.printed, want.printed, rtol, &where)) {
      *why = fmt::format("on the {} engine it printed {}: {}", engine, quoted_output(r.printed), where);
      return false;
    }
  }
  return true;
}



// Ahead of time: the student's program built into an object file (`descent build`), linked
// with the system's C compiler (`cc prog.o -lm`) and run as a program of its own, in a child
// process with the time limit; what it prints must be `expect`.
bool check_aot_output(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  Session s;
  Outcome o = s.compile(source, name);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return false;
  }
  fs::path dir = c.work / ".descent-lab-build";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string object = (dir / "aot.o").string(), exe = (dir / "aot").string();
  if (!s.build_object(object, why)) return false;
  std::string cc = proc::find_on_path("cc");
  if (cc.empty()) {
    *why = "no C compiler `cc` on PATH to link the object with (Debian: apt-get install gcc)";
    return false;
  }
  proc::Options link;
  link.argv = {cc, object, "-lm", "-o", exe};
  link.limits.wall_s = 120;
  proc::Result linked = proc::run(link);
  if (!linked.ok) {
    *why = "cc could not link the object: " + first_lines(linked.err + linked.problem, 10);
    return false;
  }
  // The program is the student's, compiled by Descent: it runs under the same limits as any
  // student code (no sandbox: Descent's language cannot open files or start processes).
  proc::Options run;
  run.argv = {exe};
  run.limits.wall_s = c.limit_s();
  run.limits.cpu_s = c.limit_s() + 1;
  run.limits.file_size = uint64_t(64) << 20;
  run.limits.output_cap = 64 * 1024;
  proc::Result r = proc::run(run);
  if (r.timed_out) {
    *why = fmt::format("the built program was stopped after {:g} s (an endless loop?)", c.limit_s());
    c.status = "timeout";
    return false;
  }
  std::string expect = check.spec.value("expect", "");
  if (!r.ok && r.out.empty()) {
    *why = "the built program failed: " + first_lines(r.err + r.problem, 5);
    c.status = "crash";
    return false;
  }
  if (r.out != expect) {
    *why = fmt::format("built with `descent build` and run, it printed {}; the lab expects {}",
                       quoted_output(r.out), quoted_output(expect));
    return false;
  }
  return true;
}

namespace {

// A folder of its own holding fresh copies of the lab's data files (lab.json's "data", by
// file name, as `start` lays them out), removed when it goes out of scope: a program run
// against it reads the lab's files, never ones the student changed in the work folder.
class LabData {
 public:
  explicit LabData(const Context& c) {
    std::error_code ec;
    static std::atomic<int> serial{0};  // two checks in one process never share a folder
    dir_ = fs::temp_directory_path(ec) /
           fmt::format("descent-lab-data-{}-{}-{}", ::getpid(), c.seed, serial++);
    fs::remove_all(dir_, ec);
    ok_ = fs::create_directories(dir_, ec);
    for (const auto& f : c.lab.spec.value("data", std::vector<std::string>{}))
      ok_ = ok_ && fs::copy_file(fs::path(c.lab.dir) / f, dir_ / fs::path(f).filename(), ec);
  }
  ~LabData() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  bool ok() const { return ok_; }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
  bool ok_ = false;
};

}  // namespace

// The student's file with the lab's driver appended, run once on `engine` and `device` within
// `seconds`, its load() paths meaning fresh copies of the lab's data: the last word the
// driver prints (its last line, after everything the student's code printed) must be a
// number of at least `at_least`. For a result the student chooses how to reach (a trained
// network's held-out accuracy), not one fixed answer.
bool check_reaches(Context& c, const Check& check, std::string* why) {
  std::string name, source, driver;
  if (!student_file(c, check, &name, &source, why)) return false;
  if (!read_file((fs::path(c.lab.dir) / check.spec.value("append", "")).string(), &driver, why)) return false;
  std::string engine = check.spec.value("engine", "ast"), device = check.spec.value("device", "");
  double limit = check.spec.value("seconds", c.limit_s()), at_least = check.spec.value("at_least", 0.0);
  std::string where = fmt::format("on the {} engine{}", engine, device.empty() ? "" : " and the " + device + " device");
  LabData data(c);
  if (!data.ok()) {
    *why = "the checker could not copy the lab's data into " + data.path();
    c.status = "error";
    return false;
  }
  Run r = run_program(source + "\n" + driver, name, engine, limit, data.path(), device);
  if (r.outcome.status != Outcome::Ok || r.timed_out) {
    if (r.timed_out) c.status = "timeout";
    *why = r.timed_out ? fmt::format("{}, it was stopped after {:g} s, the lab's limit (fewer epochs?)", where, limit)
                       : fmt::format("{}: {}", where, failure_text(r, limit));
    return false;
  }
  // What was printed past the first MiB is not kept, so the last line kept could be the
  // student's own, written to look like the driver's: refused rather than read.
  if (r.dropped > 0) {
    *why = fmt::format("{} it printed more than 1 MiB (the driver's line must come last, and "
                       "would not be kept); print less", where);
    return false;
  }
  std::vector<std::string> lines = split_lines(r.printed);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string last = lines.empty() ? "" : lines.back();
  std::string word = last.substr(last.find_last_of(' ') == std::string::npos ? 0 : last.find_last_of(' ') + 1);
  char* end = nullptr;
  double got = std::strtod(word.c_str(), &end);
  if (word.empty() || *end != '\0' || !std::isfinite(got)) {
    *why = fmt::format("{}, the driver's last line was {}, not a number", where, quoted_output(last));
    return false;
  }
  c.measured = "the driver printed " + quoted_output(last);
  if (got >= at_least) return true;
  *why = fmt::format("{} its last line was {}; the lab asks for at least {:g}", where, quoted_output(last), at_least);
  return false;
}

// The student's file (with the lab's driver appended) run once: it may launch at most `max`
// kernels. A kernel the graph passes could not fuse into its neighbour is one more launch
// (one more pass over memory), so this checks the shape of the program, not its values.
bool check_max_kernels(Context& c, const Check& check, std::string* why) {
  std::string name, source, driver;
  if (!student_file(c, check, &name, &source, why)) return false;
  if (check.spec.contains("append") &&
      !read_file((fs::path(c.lab.dir) / check.spec.value("append", "")).string(), &driver, why))
    return false;
  size_t max = check.spec.value("max", size_t(1));
  Run r = run_program(source + "\n" + driver, name, "ast", c.limit_s(), c.work.string());
  if (r.outcome.status != Outcome::Ok || r.timed_out) {
      if (r.timed_out) c.status = "timeout";
    *why = failure_text(r, c.limit_s());
    return false;
  }
  if (r.outcome.launches.size() <= max) return true;
  std::vector<std::string> names;
  for (const auto& l : r.outcome.launches) names.push_back(l.kernel);
  *why = fmt::format("it launched {} kernels ({}); the lab allows {}", names.size(), join(names), max);
  return false;
}

bool check_max_steps(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  std::string engine = check.spec.value("engine", "stack");
  uint64_t max = check.spec.value("max", uint64_t(0));
  Run r = run_program(source, name, engine, c.limit_s(), c.work.string());
  if (r.outcome.status != Outcome::Ok || r.timed_out) {
      if (r.timed_out) c.status = "timeout";
    *why = fmt::format("on the {} engine: {}", engine, failure_text(r, c.limit_s()));
    return false;
  }
  if (r.outcome.steps > max) {
    *why = fmt::format("the {} VM executed {} instructions; the budget is {} (`descent run {} "
                       "--engine {} --trace` shows each one)",
                       engine, r.outcome.steps, max, name, engine);
    return false;
  }
  return true;
}

bool check_no_spills(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  int registers = check.spec.value("registers", 4);
  Session s;
  s.set_num_registers(registers);
  Outcome o = s.compile(source, name);
  if (o.status != Outcome::Ok) {
    *why = o.message;
    return false;
  }
  for (const auto& f : s.live_ranges()) {
    for (const auto& r : f.ranges) {
      if (!r.spilled) continue;
      *why = fmt::format("with {} registers, {} in {} spills to {} (live from instruction {} to "
                         "{}; `descent dump {} --stage live --registers {}` draws them all)",
                         registers, r.value, f.function, r.location, r.start, r.end, name, registers);
      return false;
    }
  }
  return true;
}


bool check_source_lacks(Context& c, const Check& check, std::string* why) {
  std::string name, source;
  if (!student_file(c, check, &name, &source, why)) return false;
  // Comments do not count: a student may write about what the lab rules out.
  std::string code;
  for (const auto& line : split_lines(source)) code += line.substr(0, line.find('#')) + "\n";
  for (const auto& word : check.spec.value("words", std::vector<std::string>{})) {
    std::regex re("\\b" + word + "\\b");
    if (std::regex_search(code, re)) {
      *why = fmt::format("{} uses '{}', which this lab rules out", name, word);
      return false;
    }
  }
  return true;
}


}  // namespace descent::labs
