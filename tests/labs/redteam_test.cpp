// The red team (issue 31): adversarial submissions kept in tests/labs/redteam/, each checked
// as a student's work on the checks it attacks (manifest.json). Each must earn 0 points on
// them with a status the manifest allows, leave nothing outside its folder (the harness cache
// unchanged, no file beside the work folder or in the shared /tmp), and finish within
// (checks x time limit) plus the time to build it. A class made of all of them is graded
// with the same guarantees, and an answer lab brute-forced in a loop leaves an attempt log.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "labs/runner/lab.h"
#include "lang/text.h"

using namespace descent;
using namespace descent::labs;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const fs::path kRedTeam = fs::path(DESCENT_TESTS_DIR) / "labs" / "redteam";
constexpr double kLimit = 2.0;           // seconds per run of the student's code
constexpr double kBuildAllowance = 90;   // compiling and linking one submission, on a busy machine

// A root of our own for everything: the students' folders, and the harness cache (so the
// test sees exactly what its checks put there).
fs::path root() {
  static fs::path r = [] {
    fs::path p = fs::temp_directory_path() / ("descent-redteam-" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p / "cache");
    ::setenv("DESCENT_LABS_CACHE", (p / "cache").c_str(), 1);
    return p;
  }();
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<Lab> all_labs() {
  std::vector<Lab> labs;
  std::string error;
  REQUIRE_MESSAGE(load_labs(default_labs_dir(), &labs, &error), error);
  return labs;
}

// The lab with only the checks a submission attacks (their "case", or their name).
Lab only(const Lab& lab, const std::vector<std::string>& names) {
  Lab out = lab;
  out.checks.clear();
  for (const auto& c : lab.checks) {
    std::string key = c.spec.value("case", c.name);
    if (std::find(names.begin(), names.end(), key) != names.end()) out.checks.push_back(c);
  }
  REQUIRE_MESSAGE(out.checks.size() == names.size(), "a manifest check is not in lab " << lab.name);
  return out;
}

// The submission's text with the test's paths filled in.
std::string submission(const std::string& file, const fs::path& other, const fs::path& outside) {
  std::string text = slurp(kRedTeam / file);
  std::map<std::string, std::string> vars = {{"@SOURCE_ROOT@", fs::path(DESCENT_TESTS_DIR).parent_path().string()},
                                             {"@OTHER@", other.string()},
                                             {"@OUTSIDE@", outside.string()},
                                             {"@CACHE@", (root() / "cache").string()}};
  for (const auto& [k, v] : vars)
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + v.size())) text.replace(at, k.size(), v);
  return text;
}

// What the cache holds: name -> content, to see that no check changed it.
std::map<std::string, std::string> cache_contents() {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root() / "cache", ec))
    if (e.is_regular_file()) out[e.path().filename().string()] = slurp(e.path());
  return out;
}

struct Entry {
  std::string file, lab, as;
  std::vector<std::string> checks, status, sandboxed_status;
};

std::vector<Entry> manifest() {
  nlohmann::json j = nlohmann::json::parse(slurp(kRedTeam / "manifest.json"));
  std::vector<Entry> out;
  for (const auto& s : j.at("submissions"))
    out.push_back({s.at("file"), s.at("lab"), s.at("as"), s.at("checks"), s.at("status"),
                   s.value("sandboxed_status", std::vector<std::string>{})});
  return out;
}

const Lab& find(const std::vector<Lab>& labs, const std::string& name) {
  for (const auto& l : labs)
    if (l.name == name) return l;
  FAIL("no lab " << name);
  return labs[0];
}

// Another student's folder, which the red team tries to read.
fs::path other_student() {
  fs::path p = root() / "other-student" / "stack_ops";
  fs::create_directories(p);
  std::ofstream(p / "ops.cpp") << "// another student's work\n";
  return p;
}

}  // namespace

TEST_CASE("the red team: every adversarial submission earns 0 on what it attacks, alone in its folder, in time") {
  auto labs = all_labs();
  auto entries = manifest();
  REQUIRE(entries.size() >= 12);
  fs::path other = other_student();
  // The harness cache filled first, by a plain check of each lab the red team attacks (so the
  // attacks on it have something to spoil).
  std::set<std::string> warmed;
  for (const auto& e : entries) {
    if (!warmed.insert(e.lab).second) continue;
    const Lab& lab = find(labs, e.lab);
    fs::path work = root() / "warm" / lab.name;
    fs::create_directories(work);
    for (const auto& f : lab.files) fs::copy_file(fs::path(lab.dir) / "starter" / f, work / f);
    CheckOptions o;
    o.time_limit_s = 30;
    o.seed = 7;
    check_lab(only(lab, e.checks), work.string(), o);
  }
  auto cache_before = cache_contents();
  for (const auto& e : entries) {
    CAPTURE(e.file);
    const Lab lab = only(find(labs, e.lab), e.checks);
    fs::path student = root() / "class" / fs::path(e.file).stem();
    fs::path work = student / lab.name, outside = student / "outside";
    fs::create_directories(work);
    fs::create_directories(outside);
    std::ofstream(work / e.as) << submission(e.file, other, outside);
    fs::remove("/tmp/descent-redteam-pwned.txt");
    CheckOptions o;
    o.time_limit_s = kLimit;
    o.seed = 11;
    auto t0 = Clock::now();
    LabReport r = check_lab(lab, work.string(), o);
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    INFO(format_report(r));
    INFO("graded in ", seconds, " s (a status off the manifest's list on a loaded machine: a timeout?)");
    CHECK(r.setup_error.empty());
    CHECK(r.points == 0);
    bool sandboxed = r.sandbox == "bwrap";
    for (const auto& c : r.checks) {
      CAPTURE(c.name);
      CHECK(!c.passed);
      const auto& allowed = sandboxed && !e.sandboxed_status.empty() ? e.sandboxed_status : e.status;
      CHECK_MESSAGE(std::find(allowed.begin(), allowed.end(), c.status) != allowed.end(), "status " << c.status);
      // A flood of output is counted, not kept: the report stays readable.
      CHECK(c.reason.size() < 4096);
    }
    // Within (checks x time limit) plus the build: nothing it left running kept the runner.
    CHECK(seconds < double(lab.checks.size()) * (kLimit + 1) + kBuildAllowance);
    // Nothing outside its folder.
    CHECK(!fs::exists(outside / "pwned.txt"));
    if (sandboxed) CHECK(!fs::exists("/tmp/descent-redteam-pwned.txt"));
    CHECK(cache_contents() == cache_before);
  }
}

TEST_CASE("the red team as a class: graded within (checks x time limit) plus the builds, every row at 0") {
  auto labs = all_labs();
  auto entries = manifest();
  fs::path other = other_student();
  fs::path klass = root() / "whole-class";
  std::vector<std::string> students;
  std::vector<Lab> graded;
  std::set<std::string> seen;
  size_t checks = 0;
  for (const auto& e : entries) {
    const Lab& full = find(labs, e.lab);
    fs::path student = klass / fs::path(e.file).stem();
    fs::create_directories(student / full.name);
    fs::create_directories(student / "outside");
    std::ofstream(student / full.name / e.as) << submission(e.file, other, student / "outside");
    students.push_back(student.string());
    if (seen.insert(e.lab).second) graded.push_back(only(full, e.checks));
    checks += e.checks.size();
  }
  // One check per lab graded (the first the manifest names), every student's folder.
  for (auto& l : graded) l.checks.resize(1);
  GradeOptions g;
  g.check.time_limit_s = kLimit;
  g.check.seed = 5;
  auto t0 = Clock::now();
  std::string csv = grade_csv(graded, students, g);
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(csv);
  CHECK(seconds < double(students.size()) * (kLimit + 1 + kBuildAllowance / 3) + 30);
  int rows = 0;
  for (const auto& line : split_lines(csv)) {
    if (line.empty() || line.rfind("student,", 0) == 0) continue;
    ++rows;
    // student,lab,check,points,...: every row 0 points (fields may be quoted, with commas).
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) fields.emplace_back();
      else fields.back() += ch;
    }
    REQUIRE(fields.size() == 12);
    CHECK(fields[3] == "0");
  }
  CHECK(rows >= int(students.size()));
  (void)checks;
}

TEST_CASE("brute force on an answer lab: every try is in the attempt log, and grading shows the count") {
  auto labs = all_labs();
  const Lab& lab = find(labs, "read_ir");
  fs::path student = root() / "bruteforce", work = student / "read_ir";
  fs::create_directories(work);
  std::string starter = slurp(fs::path(lab.dir) / "starter" / lab.files[0]);
  CheckOptions o;
  o.seed = 3;
  int tries = 0;
  for (int guess = 0; guess < 12; ++guess, ++tries) {
    std::ofstream(work / lab.files[0]) << starter << "\njump_target: " << guess << "\n";
    check_lab(lab, work.string(), o);
  }
  LabReport r = check_lab(lab, work.string(), o);
  ++tries;
  CHECK(r.attempts == tries);
  std::string log = slurp(work / ".descent-lab-attempts");
  CHECK(log.find("jump_target: 0\t") != std::string::npos);
  CHECK(log.find("jump_target: 11\t") != std::string::npos);
  // The grade CSV carries the count; grading itself is not an attempt.
  std::string csv = grade_csv({lab}, {student.string()}, GradeOptions{});
  CHECK(csv.find(fmt::format(",{},", tries)) != std::string::npos);
  CHECK(check_lab(lab, work.string(), o).attempts == tries + 1);
}

TEST_CASE("without bubblewrap (--sandbox none) the limits, the include check and the leftover sweep still hold") {
  auto labs = all_labs();
  fs::path other = other_student();
  const Lab lab = only(find(labs, "stack_ops"), {"compares"});
  for (const auto& [file, status] : std::vector<std::pair<std::string, std::string>>{
           {"include_solution_absolute.cpp", "sandbox violation"},
           {"forged_pass.cpp", "crash"},
           {"fork_setsid_sleep.cpp", "fail"}}) {
    CAPTURE(file);
    fs::path student = root() / "unsandboxed" / fs::path(file).stem(), work = student / "stack_ops";
    fs::create_directories(work);
    std::ofstream(work / "ops.cpp") << submission(file, other, student);
    CheckOptions o;
    o.time_limit_s = kLimit;
    o.seed = 13;
    o.sandbox = "none";
    auto t0 = Clock::now();
    LabReport r = check_lab(lab, work.string(), o);
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    INFO(format_report(r));
    CHECK(r.sandbox == "none");
    CHECK(r.points == 0);
    REQUIRE(r.checks.size() == 1);
    CHECK(r.checks[0].status == status);
    CHECK(seconds < kLimit + 1 + kBuildAllowance);
  }
  // The five children that left the process group did not outlive their check.
  CHECK(std::system("pgrep -f 'harness observe compares 1[3] ' > /dev/null") != 0);
}
