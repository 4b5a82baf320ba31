// descent_labs: guided labs (`descent lab ...`, docs/labs.md).
//
// A lab is a folder labs/NAME/ holding README.md (what to do and why), lab.json (its order,
// tier, title, the files the student edits, graded hints, and the checks), and starter/
// (the files as the student first gets them). The reference solution is kept apart, in
// labs/solutions/NAME/, so a teacher can remove it before handing the folder out.
//
//   std::vector<Lab> labs;
//   load_labs(default_labs_dir(), &labs, &error);
//   start_lab(lab, "descent-labs/stack_budget", &message, &error);   // copies the starter
//   LabReport r = check_lab(lab, "descent-labs/stack_budget");       // every check, points
//   fmt::print("{}", format_report(r));
//
// Checks run through the Session like everything else (the REPL's compile and run, the
// register allocator's live ranges, a kernel's scheduled loop nest), so a lab stays true
// when the compiler under it changes. Student programs run with a time limit: a program that
// loops forever fails its check ("stopped after 10 s"), it does not hang the runner. C++
// submissions run sandboxed (proc/process.h) and are judged by a checker process that never
// holds them (labs/cpp_common/observe.h). The library never prints.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace descent::labs {

struct Check {
  std::string name;      // what it checks, in the student's words
  std::string type;      // "output", "max_steps", "no_spills", "schedule_runs", "nest_equals",
                         // "space_samples", "cpp", ... (docs/labs.md lists them all)
  int points = 1;
  nlohmann::json spec;   // the check's own fields (file, engine, max, ...)
};

struct Lab {
  std::string name;      // the folder's name: "stack_budget"
  std::string dir;       // its path
  std::string title, tier, kind;  // kind: "program" (a Descent program, or answers about
                                  // one), "schedule", "space" (a search space, tune/space.h), "cpp"
  int order = 0;
  std::vector<std::string> concepts;  // which of DESIGN.md's concepts it exercises
  std::vector<std::string> files;     // what the student edits (in starter/ and the work folder)
  std::vector<std::string> hints;     // graded: the first is a nudge, the last nearly the answer
  std::vector<Check> checks;
  nlohmann::json spec;   // the whole lab.json
};

struct CheckResult {
  std::string name;
  bool passed = false;
  int points = 0, max_points = 0;
  // "pass", "fail" (a wrong result), "timeout", "crash", "compile error", "sandbox violation"
  // (the sandbox refused what the code tried), "error" (the lab itself could not check).
  std::string status;
  std::string reason;    // why it failed (the input, the expected and the got), "" when passed
  std::string measured;  // what a speed check measured ("2.31x the reference"), else ""
};

struct LabReport {
  std::string lab;
  std::string setup_error;   // the work folder or a file is missing: nothing was checked
  std::vector<CheckResult> checks;
  int points = 0, max_points = 0;
  uint64_t seed = 0;         // the hidden inputs of this run came from it
  // How the student's code ran: "bwrap" (bubblewrap's sandbox), "none" (asked for none), or
  // "none: WHY" (auto, and bubblewrap does not work here); "" when no student code ran in a
  // process of its own (Descent programs, schedules and answers run inside the Session).
  std::string sandbox;
  int hints_taken = 0;       // from the work folder's hint counter
  int attempts = 0;          // answer labs: answers checked so far (the attempt log)
  bool passed() const { return setup_error.empty() && !checks.empty() && points == max_points; }
};

// How a lab is checked.
struct CheckOptions {
  double time_limit_s = 10;      // each run of the student's code
  std::string sandbox = "auto";  // C++ labs: "auto" (bubblewrap when it works), "bwrap", "none"
  uint64_t seed = 0;             // the hidden inputs' seed; 0: drawn at random for this run
  int speed_tries = 1;           // a failing speed check is measured again, up to this many times
  bool log_attempts = true;      // answer labs: append each checked answer to the attempt log
};

// $DESCENT_LABS_DIR, else this source tree's labs/.
std::string default_labs_dir();
// Every lab under `root`, in order. False with *error for a lab.json that does not parse or
// lacks what a lab needs (the error names the file).
bool load_labs(const std::string& root, std::vector<Lab>* out, std::string* error);
// The lab called `name`; an unknown name says which labs there are (and the nearest one).
bool find_lab(const std::vector<Lab>& labs, const std::string& name, const Lab** out,
              std::string* error);
// The folder a lab is worked in when the student gives none: ./descent-labs/NAME.
std::string default_work_dir(const Lab& lab);
// Copies the starter files into `work_dir` (created). Refuses to overwrite a file that is
// there, so a second `start` never loses the student's work. *message says what to do next.
bool start_lab(const Lab& lab, const std::string& work_dir, std::string* message,
               std::string* error);
// Runs every check on the files in `work_dir`; remembers the verdict there (for `list`).
// C++ labs: the student's code runs in a process of its own, sandboxed and limited, that
// only computes; a checker process built without it decides (docs/labs.md "How a C++ lab is
// graded").
LabReport check_lab(const Lab& lab, const std::string& work_dir, const CheckOptions& options);
LabReport check_lab(const Lab& lab, const std::string& work_dir, double time_limit_s = 10);
std::string format_report(const LabReport& report);
// The next hint (remembered per work folder: each call gives the following one, then the
// last again). "" with *error when the lab has none.
std::string next_hint(const Lab& lab, const std::string& work_dir, std::string* error);
// "not started" (no work folder), "failing", "passed" (from the last check), "edited" (a
// file changed since the last check: its verdict is about an older version), or "started".
std::string lab_status(const Lab& lab, const std::string& work_dir);
// The `descent lab list` table: order, tier, title, status, and a progress line. The work
// folders are under `work_root` (./descent-labs).
std::string format_list(const std::vector<Lab>& labs, const std::string& work_root);
// `descent lab grade`: every lab found in each student folder (a folder holding one work
// folder per lab, as `start` makes them), checked. The CSV has one row per check and one
// "total" row per lab (grade_csv_header() names the columns); a folder with no lab in it is
// one row saying so. Students are graded in the order of their folders' names; with
// `shard_count` > 1 only those whose place in that order is `shard_index` modulo the count
// (a job array's share), so merging every shard gives the whole class's CSV.
struct GradeOptions {
  CheckOptions check;
  int shard_index = 0, shard_count = 1;
};
std::string grade_csv_header();
std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs,
                      const GradeOptions& options);
std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs);
// The students of `student_dirs` that shard I of N grades (by folder name, as grade_csv).
std::vector<std::string> shard_of(const std::vector<std::string>& student_dirs, int index, int count);
// `descent lab merge`: CSVs that grade_csv wrote for shards of one class, as one CSV in the
// order a single run writes. False with *error for a file that is not such a CSV, or a
// student graded in two of them.
bool merge_grade_csvs(const std::vector<std::string>& csv_texts, std::string* out, std::string* error);

}  // namespace descent::labs
