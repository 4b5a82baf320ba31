// The lab runner (lab.h): loading labs, starting them, checking one lab, hints, status, the
// list. The checks themselves are in checks_*.cpp, grading a class in grade.cpp (internal.h).
#include "labs/runner/lab.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <random>

#include "labs/runner/internal.h"
#include "lang/text.h"
#include "lang/watchdog.h"

namespace descent::labs {

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

std::string quoted_output(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else out += c;
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out + "\"";
}

// `base`: the folder the program's relative load() and save() paths mean (the work folder,
// where `start` copied the lab's data files).
Run run_program(const std::string& source, const std::string& name, const std::string& engine,
                double limit_s, const std::string& base, const std::string& device) {
  Run r;
  Session s;
  s.set_engine(engine);
  s.set_file_base(base);
  s.set_saves_allowed(false);  // the checker's files stay as the lab wrote them
  if (!device.empty() && !s.set_device(device, &r.outcome.message)) {
    r.outcome.status = Outcome::RuntimeError;  // no such device here (opencl without a driver)
    return r;
  }
  RunOptions opts;
  opts.out = [&r](std::string_view t) {
    if (r.printed.size() < (1u << 20)) r.printed += t;
    else r.dropped += t.size();
  };
  {
    Watchdog dog(limit_s, [&s] { s.interrupt_flag() = true; });
    r.outcome = s.submit(source, name, opts);
    r.timed_out = dog.fired();
  }
  return r;
}

// What a failed run says to the student: the error, or that it ran too long.
std::string failure_text(const Run& r, double limit_s) {
  if (r.timed_out) return fmt::format("it was stopped after {:g} s (an endless loop?)", limit_s);
  std::string m = r.outcome.message;
  while (!m.empty() && m.back() == '\n') m.pop_back();
  return m;
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  int i = 0;
  for (const auto& line : split_lines(text)) {
    if (i++ == n) {
      out += "    ...\n";
      break;
    }
    out += "    " + line + "\n";
  }
  return out;
}

bool student_file(Context& c, const Check& check, std::string* name, std::string* text,
                  std::string* why) {
  *name = check.spec.value("file", c.lab.files.empty() ? "" : c.lab.files[0]);
  auto it = c.files.find(*name);
  if (it == c.files.end()) {
    *why = fmt::format("{} is missing from {}", *name, c.work.string());
    return false;
  }
  *text = it->second;
  return true;
}

const std::map<std::string, CheckFn>& check_table() {
  static const std::map<std::string, CheckFn> t = {
      {"output", check_output},           {"max_steps", check_max_steps},
      {"no_spills", check_no_spills},     {"schedule_runs", check_schedule_runs},
      {"nest_equals", check_nest_equals}, {"source_lacks", check_source_lacks},
      {"answer", check_answer},           {"output_close", check_output_close},
      {"cpp", check_cpp},                 {"max_kernels", check_max_kernels},
      {"aot_output", check_aot_output},   {"speed", check_speed},
      {"space_samples", check_space_samples}, {"space_choices", check_space_choices},
      {"space_reaches", check_space_reaches}, {"reaches", check_reaches}};
  return t;
}

namespace {

// The files a lab's messages and starters name besides the student's own (the kernel or
// program a lab is about, its data): `start` copies them into the work folder, so every
// command a message suggests works from there. The checks read the lab's copies.
std::vector<std::string> lab_extras(const Lab& lab) {
  std::vector<std::string> out;
  std::error_code ec;
  if (lab.spec.contains("program") || fs::exists(fs::path(lab.dir) / "program.ds", ec)) {
    std::string program = lab.spec.value("program", "program.ds");
    if (fs::exists(fs::path(lab.dir) / program, ec)) out.push_back(program);
  }
  for (const auto& f : lab.spec.value("data", std::vector<std::string>{})) out.push_back(f);
  for (const auto& f : lab.spec.value("extras", std::vector<std::string>{})) out.push_back(f);
  return out;
}

bool has_answer_checks(const Lab& lab) {
  for (const auto& c : lab.checks)
    if (c.type == "answer") return true;
  return false;
}

int count_lines(const fs::path& file) {
  std::string text, why;
  if (!read_file(file.string(), &text, &why)) return 0;
  int n = 0;
  for (const auto& l : split_lines(text)) n += !l.empty() && l[0] != '#';
  return n;
}

std::string now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The attempt log of an answer lab: one line per `check`, with the time, every answer given
// and the points it earned. What a teacher reads to tell a student who worked from one who
// tried every number (docs/labs.md "Grading").
void log_attempt(const Context& c, const LabReport& r) {
  fs::path log = c.work / ".descent-lab-attempts";
  bool fresh = !fs::exists(log);
  std::ofstream f(log, std::ios::app);
  if (fresh) f << "# time\tanswers\tpoints (one line per `descent lab check`)\n";
  std::string answers;
  for (const auto& [name, text] : c.files)
    for (const auto& line : split_lines(text)) {
      std::string l = line.substr(0, line.find('#'));
      if (l.find(':') == std::string::npos) continue;
      while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
      answers += (answers.empty() ? "" : "; ") + l;
    }
  f << now_text() << "\t" << answers << "\t" << r.points << "/" << r.max_points << "\n";
}

}  // namespace

std::string default_labs_dir() {
  const char* env = std::getenv("DESCENT_LABS_DIR");
  return env ? env : DESCENT_LABS_SOURCE_DIR;
}

bool load_labs(const std::string& root, std::vector<Lab>* out, std::string* error) {
  out->clear();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    *error = fmt::format("{}: no labs folder here", root);
    return false;
  }
  for (const auto& e : fs::directory_iterator(root, ec)) {
    fs::path json = e.path() / "lab.json";
    if (!e.is_directory() || !fs::exists(json)) continue;
    std::string text;
    if (!read_file(json.string(), &text, error)) return false;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      *error = json.string() + ": not valid JSON";
      return false;
    }
    Lab lab;
    lab.name = e.path().filename().string();
    lab.dir = e.path().string();
    lab.spec = j;
    try {
      lab.title = j.at("title").get<std::string>();
      lab.tier = j.at("tier").get<std::string>();
      lab.kind = j.value("kind", "program");
      lab.order = j.at("order").get<int>();
      lab.concepts = j.value("concepts", std::vector<std::string>{});
      lab.files = j.at("files").get<std::vector<std::string>>();
      lab.hints = j.value("hints", std::vector<std::string>{});
      std::string why;
      if (!validate_lab_json(j, &why)) {
        *error = fmt::format("{}: {}", json.string(), why);
        return false;
      }
      for (const auto& c : j.at("checks")) {
        Check check;
        check.name = c.at("name").get<std::string>();
        check.type = c.at("type").get<std::string>();
        check.points = c.value("points", 1);
        check.spec = c;
        if (!check_table().count(check.type)) {
          *error = fmt::format("{}: check '{}' has an unknown type '{}'", json.string(), check.name, check.type);
          return false;
        }
        lab.checks.push_back(std::move(check));
      }
    } catch (const nlohmann::json::exception& ex) {
      *error = fmt::format("{}: {}", json.string(), ex.what());
      return false;
    }
    out->push_back(std::move(lab));
  }
  std::sort(out->begin(), out->end(), [](const Lab& a, const Lab& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return true;
}

bool find_lab(const std::vector<Lab>& labs, const std::string& name, const Lab** out,
              std::string* error) {
  std::vector<std::string> names;
  for (const auto& l : labs) {
    if (l.name == name) {
      *out = &l;
      return true;
    }
    names.push_back(l.name);
  }
  std::string near = closest_name(name, names);
  *error = fmt::format("no lab '{}'{} (labs: {})", name, near.empty() ? "" : "; did you mean '" + near + "'?",
                       join(names));
  return false;
}

std::string default_work_dir(const Lab& lab) { return (fs::path("descent-labs") / lab.name).string(); }

bool start_lab(const Lab& lab, const std::string& work_dir, std::string* message, std::string* error) {
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) {
    *error = fmt::format("{}: cannot create the folder: {}", work_dir, ec.message());
    return false;
  }
  std::vector<std::string> copied, kept;
  for (const auto& f : lab.files) {
    fs::path from = fs::path(lab.dir) / "starter" / f, to = fs::path(work_dir) / f;
    if (fs::exists(to)) {
      kept.push_back(f);  // the student's work: never overwritten
      continue;
    }
    fs::copy_file(from, to, ec);
    if (ec) {
      *error = fmt::format("{}: cannot copy the starter: {}", from.string(), ec.message());
      return false;
    }
    copied.push_back(f);
  }
  // The lab's program and data: the messages' commands and the programs' load() use them
  // from the work folder.
  for (const auto& f : lab_extras(lab)) {
    fs::path from = fs::path(lab.dir) / f, to = fs::path(work_dir) / fs::path(f).filename();
    if (fs::exists(to)) continue;
    fs::copy_file(from, to, ec);
    if (ec) {
      *error = fmt::format("{}: cannot copy the lab's file: {}", from.string(), ec.message());
      return false;
    }
    copied.push_back(to.filename().string());
  }
  std::string m = fmt::format("lab {}: {} ({})\n", lab.name, lab.title, lab.tier);
  if (!copied.empty()) m += fmt::format("copied {} into {}\n", join(copied), work_dir);
  if (!kept.empty()) m += fmt::format("kept your {} (already in {})\n", join(kept), work_dir);
  m += fmt::format("read {}/README.md, edit the file{} in {}, then:\n  descent lab check {}{}\n",
                   lab.dir, lab.files.size() == 1 ? "" : "s", work_dir, lab.name,
                   work_dir == default_work_dir(lab) ? "" : " --dir " + work_dir);
  *message = m;
  return true;
}

LabReport check_lab(const Lab& lab, const std::string& work_dir, double time_limit_s) {
  CheckOptions o;
  o.time_limit_s = time_limit_s;
  return check_lab(lab, work_dir, o);
}

LabReport check_lab(const Lab& lab, const std::string& work_dir, const CheckOptions& options) {
  LabReport r;
  r.lab = lab.name;
  Context c(lab, work_dir, options);
  // The hidden inputs' seed: drawn for this run unless the caller fixed it (tests, replays).
  c.seed = options.seed;
  while (c.seed == 0) c.seed = std::random_device{}() % 1000000007u;
  r.seed = c.seed;
  std::error_code ec;
  if (!fs::is_directory(work_dir, ec)) {
    r.setup_error = fmt::format("{}: no such folder; `descent lab start {}` makes it", work_dir, lab.name);
    return r;
  }
  for (const auto& f : lab.files) {
    std::string text, why;
    if (read_file((fs::path(work_dir) / f).string(), &text, &why)) c.files[f] = text;
  }
  for (const auto& check : lab.checks) {
    CheckResult cr;
    cr.name = check.name;
    cr.max_points = check.points;
    std::string why;
    int tries = check.type == "speed" ? std::max(1, options.speed_tries) : 1;
    for (int t = 0; t < tries; ++t) {
      c.status.clear();
      c.measured.clear();
      why.clear();
      try {
        cr.passed = check_table().at(check.type)(c, check, &why);
      } catch (const std::exception& ex) {
        cr.passed = false;
        why = std::string("the check itself failed: ") + ex.what();
        c.status = "error";
      }
      if (cr.passed) break;
    }
    cr.status = cr.passed ? "pass" : c.status.empty() ? "fail" : c.status;
    cr.points = cr.passed ? check.points : 0;
    cr.reason = cr.passed ? "" : why;
    cr.measured = c.measured;
    r.points += cr.points;
    r.max_points += cr.max_points;
    r.checks.push_back(std::move(cr));
  }
  remove_cpp_box(c);
  r.sandbox = c.cpp_box;
  {
    std::string text, why;
    if (read_file((fs::path(work_dir) / ".descent-lab-hints").string(), &text, &why))
      r.hints_taken = int(std::strtol(text.c_str(), nullptr, 10));
  }
  if (has_answer_checks(lab)) {
    if (options.log_attempts) log_attempt(c, r);
    r.attempts = count_lines(fs::path(work_dir) / ".descent-lab-attempts");
  }
  write_text(fs::path(work_dir) / ".descent-lab-status", r.passed() ? "passed\n" : "failing\n");
  return r;
}

std::string format_report(const LabReport& r) {
  if (!r.setup_error.empty()) return "error: " + r.setup_error + "\n";
  std::string s;
  for (const auto& c : r.checks) {
    std::string kind = c.status == "fail" || c.status == "pass" ? "" : " [" + c.status + "]";
    s += fmt::format("{} {} ({}/{}){}\n", c.passed ? "pass" : "FAIL", c.name, c.points, c.max_points, kind);
    if (!c.passed) s += "    " + c.reason + "\n";
    else if (!c.measured.empty()) s += "    " + c.measured + "\n";
  }
  if (r.sandbox.rfind("none", 0) == 0 && r.sandbox != "none")
    s += fmt::format("note: your code ran without a sandbox ({})\n", r.sandbox.substr(6));
  s += fmt::format("{}: {}/{} points{}\n", r.lab, r.points, r.max_points,
                   r.passed() ? ", every check passes" : "");
  return s;
}

std::string next_hint(const Lab& lab, const std::string& work_dir, std::string* error) {
  if (lab.hints.empty()) {
    *error = fmt::format("lab {} has no hints", lab.name);
    return "";
  }
  fs::path state = fs::path(work_dir) / ".descent-lab-hints";
  size_t used = 0;
  std::string text, why;
  if (read_file(state.string(), &text, &why)) used = std::strtoul(text.c_str(), nullptr, 10);
  size_t i = std::min(used, lab.hints.size() - 1);
  std::error_code ec;
  if (fs::is_directory(work_dir, ec)) write_text(state, std::to_string(i + 1) + "\n");
  return fmt::format("hint {} of {}: {}\n", i + 1, lab.hints.size(), lab.hints[i]);
}

std::string lab_status(const Lab& lab, const std::string& work_dir) {
  std::error_code ec;
  if (!fs::is_directory(work_dir, ec)) return "not started";
  fs::path verdict = fs::path(work_dir) / ".descent-lab-status";
  std::string text, why;
  if (!read_file(verdict.string(), &text, &why)) return "started";
  // A verdict older than the student's files is about another version of them.
  auto checked = fs::last_write_time(verdict, ec);
  for (const auto& f : lab.files) {
    std::error_code e2;
    auto t = fs::last_write_time(fs::path(work_dir) / f, e2);
    if (!ec && !e2 && t > checked) return "edited";
  }
  return text.rfind("passed", 0) == 0 ? "passed" : "failing";
}

std::string format_list(const std::vector<Lab>& labs, const std::string& work_root) {
  std::string s;
  size_t wn = 4, wt = 4;
  for (const auto& l : labs) {
    wn = std::max(wn, l.name.size());
    wt = std::max(wt, l.tier.size());
  }
  int passed = 0;
  s += fmt::format("  #  {:<{}}  {:<{}}  {:<11}  {}\n", "lab", wn, "tier", wt, "status", "title");
  for (const auto& l : labs) {
    std::string status = lab_status(l, (fs::path(work_root) / l.name).string());
    passed += status == "passed";
    s += fmt::format("{:>3}  {:<{}}  {:<{}}  {:<11}  {}\n", l.order, l.name, wn, l.tier, wt, status, l.title);
  }
  s += fmt::format("{} of {} labs passed\n", passed, labs.size());
  return s;
}

}  // namespace descent::labs
