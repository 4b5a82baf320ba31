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
// loops forever fails its check ("stopped after 10 s"), it does not hang the runner. The
// library never prints.
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
  std::string reason;    // why it failed (the input, the expected and the got), "" when passed
};

struct LabReport {
  std::string lab;
  std::string setup_error;   // the work folder or a file is missing: nothing was checked
  std::vector<CheckResult> checks;
  int points = 0, max_points = 0;
  bool passed() const { return setup_error.empty() && !checks.empty() && points == max_points; }
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
// `time_limit_s` bounds each run of the student's program.
LabReport check_lab(const Lab& lab, const std::string& work_dir, double time_limit_s = 10);
std::string format_report(const LabReport& report);
// The next hint (remembered per work folder: each call gives the following one, then the
// last again). "" with *error when the lab has none.
std::string next_hint(const Lab& lab, const std::string& work_dir, std::string* error);
// "not started" (no work folder), "failing", "passed" (from the last check), or "started".
std::string lab_status(const Lab& lab, const std::string& work_dir);
// The `descent lab list` table: order, tier, title, status, and a progress line. The work
// folders are under `work_root` (./descent-labs).
std::string format_list(const std::vector<Lab>& labs, const std::string& work_root);
// `descent lab grade`: every lab found in each student folder (a folder holding one work
// folder per lab, as `start` makes them), checked; CSV with one row per student and lab:
// student,lab,points,max_points,passed,<check 1>,<check 2>,... (the points of each check).
std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs);

}  // namespace descent::labs
