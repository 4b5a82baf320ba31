// What the lab runner's files share (not part of lab.h's API). One file per family of checks:
//   checks_program.cpp   a Descent program's output, steps, spills, kernels, words
//   checks_schedule.cpp  schedules: they run, their loop nest, their speed, search spaces
//   checks_answer.cpp    answer files: questions about a stage, computed from the Session
//   checks_cpp.cpp       C++ labs: the build, the sandbox, the trust boundary
//   grade.cpp            a class: the grade CSV, shards, merging
//   validate.cpp         lab.json's fields, their kinds and ranges
//   lab.cpp              loading, starting, checking one lab, hints, status, the list
//   watch.cpp            watch mode: when a lab's files changed (its own header, watch.h)
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "labs/runner/lab.h"
#include "pipeline/pipeline.h"

namespace descent::labs {

namespace fs = std::filesystem;

bool write_text(const fs::path& path, const std::string& text);
// A program's output for a message: quoted, newlines as \n, at most 200 characters.
std::string quoted_output(const std::string& s);
// The first n lines of text, each indented by four spaces ("    ..." when there are more).
std::string first_lines(const std::string& text, int n);

// One run of a Descent program in a fresh Session with a time limit (a watchdog sets the
// Session's interrupt flag, as Ctrl-C does).
struct Run {
  Outcome outcome;
  std::string printed;     // the first 1 MiB of what it printed
  size_t dropped = 0;      // bytes printed past that, not kept
  bool timed_out = false;
};
// `base`: the folder the program's relative load() and save() paths mean; `device`: the
// tensor device ("" for the Session's default, the reference interpreter).
Run run_program(const std::string& source, const std::string& name, const std::string& engine,
                double limit_s, const std::string& base, const std::string& device = "");
// What a failed run says to the student: the error, or that it ran too long.
std::string failure_text(const Run& r, double limit_s);

// The state of one check_lab: the lab, the work folder, the student's files, and what the
// checks share (the C++ build, done once).
struct Context {
  Context(const Lab& l, fs::path w, CheckOptions o) : lab(l), work(std::move(w)), opts(std::move(o)) {}
  const Lab& lab;
  fs::path work;
  CheckOptions opts;
  uint64_t seed = 0;  // drawn once per check_lab: every check's hidden inputs come from it
  std::map<std::string, std::string> files;  // the student's files, read once
  // Set by a check that fails for a reason other than a wrong result ("timeout", "crash",
  // "compile error", "sandbox violation"), and the figure a speed check measured.
  std::string status, measured;
  // C++ labs (checks_cpp.cpp): both builds, once per check_lab.
  bool cpp_tried = false;
  std::string cpp_student_exe, cpp_checker_exe, cpp_error, cpp_error_status;
  std::string cpp_box;      // LabReport::sandbox
  std::string cpp_box_dir;  // the folder the student's code is built and run in
  double limit_s() const { return opts.time_limit_s; }
};

// The student's file the check names (its "file", else the lab's first), read from the work
// folder; false with *why when it is missing.
bool student_file(Context& c, const Check& check, std::string* name, std::string* text, std::string* why);

// Each check: true when it passes, else *why in the student's terms.
using CheckFn = bool (*)(Context&, const Check&, std::string*);
bool check_output(Context& c, const Check& check, std::string* why);
bool check_output_close(Context& c, const Check& check, std::string* why);
bool check_reaches(Context& c, const Check& check, std::string* why);
bool check_aot_output(Context& c, const Check& check, std::string* why);
bool check_max_kernels(Context& c, const Check& check, std::string* why);
bool check_max_steps(Context& c, const Check& check, std::string* why);
bool check_no_spills(Context& c, const Check& check, std::string* why);
bool check_source_lacks(Context& c, const Check& check, std::string* why);
bool check_schedule_runs(Context& c, const Check& check, std::string* why);
bool check_speed(Context& c, const Check& check, std::string* why);
bool check_nest_equals(Context& c, const Check& check, std::string* why);
bool check_space_samples(Context& c, const Check& check, std::string* why);
bool check_space_choices(Context& c, const Check& check, std::string* why);
bool check_space_reaches(Context& c, const Check& check, std::string* why);
bool check_answer(Context& c, const Check& check, std::string* why);
bool check_cpp(Context& c, const Check& check, std::string* why);

// Removes the C++ check's folder (the end of check_lab).
void remove_cpp_box(Context& c);

// lab.json's fields, each of the kind and in the range its reader needs (validate.cpp); false
// with *error naming the field ("checks[1].max: a whole number from 0 up, not -5").
bool validate_lab_json(const nlohmann::json& j, std::string* error);

// Every check type, by the name lab.json gives it.
const std::map<std::string, CheckFn>& check_table();

}  // namespace descent::labs
