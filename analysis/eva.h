// Frama-C's Eva beside Descent's analysis (issue 37): run Eva on a program's C twin
// (analysis/c_twin.h), read what it says, and compare it with Descent's facts statement by
// statement.
//
//   CTwin twin;   make_c_twin(program, module, &twin, &error);
//   EvaRun eva = run_eva(twin, {});             // or parse_eva_log(recorded text)
//   if (!eva.available) -> eva.message          // "frama-c not found: apt-get install frama-c-base"
//   EvaComparison c = compare_with_eva(result, twin, eva);
//   format_eva_comparison(c, source)            // facts side by side, alarms, counts
//
// What is compared. Descent's fact for a statement (StmtFact: the value an assignment gives its
// variable, a loop variable at an iteration's start, a parameter over every call) is the join
// over every execution of that statement; so is the join of every value Eva prints for the
// Frama_C_show_each call the twin put after it (Eva prints one line each time it analyses the
// call: loop iterations, calls). Each is a set of numbers; one is at least as precise as the
// other when its set lies inside the other's. Eva prints floats with 12 significant digits, so
// float bounds are compared with a relative tolerance of 1e-11.
//
// Functions the top-level code never calls are run by Eva from their own entry with every
// argument and global unknown (-main f -lib-entry): its facts and alarms there hold "if called
// with any argument". Frama-C 25 analyses recursion only by unrolling it
// (-eva-unroll-recursive-calls, which runs_eva passes); past that depth it guesses and says so.
//
// The library never prints and never fails for want of Frama-C: run_eva says why it did not run.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/c_twin.h"

namespace descent::analysis {

// One value as Eva prints it: {700}, {0; 20; 40}, [0..2147483640],0%20, [--..--], {1.25},
// [1.25 .. 3.125], [-inf .. inf] ∪ {NaN}, NaN.
struct EvaValue {
  enum class Kind : uint8_t { Bottom, Int, Float };
  Kind kind = Kind::Bottom;
  // Int: the values listed (`set`, sorted) when Eva lists them; otherwise every value of
  // [lo, hi] that is rem modulo mod ("--" bounds are int64's ends).
  std::vector<int64_t> set;
  int64_t lo = 0, hi = -1;
  uint64_t mod = 1;
  int64_t rem = 0;
  // Float: [flo, fhi] (no number when flo > fhi: only NaN) and whether NaN is possible.
  double flo = 1, fhi = 0;
  bool nan = false;
};
bool parse_eva_value(std::string_view text, EvaValue* out);
std::string eva_value_text(const EvaValue& v);  // in Eva's own syntax
// Both values' sets, as Eva would join them (a set of at most 8 values stays a set).
EvaValue eva_join(const EvaValue& a, const EvaValue& b);

// "[eva] twin.c:LINE: Frama_C_show_each_X: VALUE"
struct EvaShow {
  uint32_t c_line = 0;
  std::string probe;  // "Frama_C_show_each_X"
  EvaValue value;
};
// "[eva:alarm] twin.c:LINE: Warning: division by zero. assert ..."
struct EvaAlarm {
  uint32_t c_line = 0;
  std::string kind;  // Eva's words up to the first '.': "division by zero", "signed overflow"
  std::string text;  // the whole message (with its assertion)
};

// What one run of `frama-c -eva` printed, read.
struct EvaOutput {
  std::string entry = "main";  // the C function it started from
  bool finished = false;       // "[eva] done for function ENTRY"
  std::vector<EvaShow> shows;
  std::vector<EvaAlarm> alarms;
  std::vector<std::string> problems;  // Eva's user errors and aborts, in its words
};
EvaOutput parse_eva_output(const std::string& text, const std::string& c_file = "twin.c");
// Only the messages parse_eva_output reads, each once (recorded logs stay small).
std::string compact_eva_output(const std::string& text);

struct EvaOptions {
  std::string frama_c = "frama-c";  // a name on $PATH, or a path
  double time_limit_s = 120;        // per run of frama-c
  int unroll_recursive_calls = 32;  // Frama-C 25 stops at a recursive call without it
  std::vector<std::string> extra_args;  // after the defaults, e.g. {"-eva-slevel", "100"}
  std::string keep_dir;             // non-empty: write the twin, the log and each run's whole output
                                    // there (eva.log, eva_ENTRY.txt), and keep them
};

// Every run for one twin: from main, then from each function main never reaches.
struct EvaRun {
  bool available = false;  // frama-c ran (or a recorded log was read)
  std::string message;     // why it did not, or what went wrong ("" when all went well)
  std::vector<EvaOutput> outputs;
  std::string twin_hash;   // the twin the log is of (twin_hash())
  std::string log;         // the record: a header, then each run's output (compacted) as a section
};
// The command line of one run (without the program's path, which is argv[0]).
std::vector<std::string> eva_arguments(const EvaOptions& options, const std::string& entry, bool lib_entry);
EvaRun run_eva(const CTwin& twin, const EvaOptions& options = {});
// A log written by run_eva (EvaRun::log) read back: how CI compares without Frama-C.
EvaRun parse_eva_log(const std::string& log);

// ---- the comparison ---------------------------------------------------------------------------

enum class Verdict : uint8_t {
  Same,          // the same set of values (both unreachable included)
  DescentMore,   // Descent's set lies strictly inside Eva's (Descent proves it unreachable, say)
  EvaMore,       // Eva's lies strictly inside Descent's
  Incomparable,  // neither contains the other
  NotAnalysed,   // Descent has no fact in the whole function: one it does not analyse
  NoEva,         // Eva has no value and did not finish the run that would have given one
};
const char* verdict_name(Verdict v);  // "same", "Descent more precise", ...

// Whether every value of `d` is one of `e` (and the converse), Descent's concretisation being
// its hull, signs, congruence and set together (value.h).
bool descent_within_eva(const AbsVal& d, const EvaValue& e);
bool eva_within_descent(const EvaValue& e, const AbsVal& d);
Verdict compare_values(const AbsVal& d, const EvaValue& e);

struct FactRow {
  TwinSite site;
  bool descent_has = false, eva_has = false;  // false: that tool says no execution gets there
  AbsVal descent;
  EvaValue eva;
  std::string descent_text, eva_text;
  Verdict verdict = Verdict::Same;
  bool if_called = false;  // in a function the script never calls (Eva: from its own entry)
};

// The alarms of one Descent line. Errors are the language's runtime errors (division by zero,
// invalid conversion, endless recursion); Eva's signed overflow is Descent's wrap-around note.
struct AlarmRow {
  uint32_t line = 0;  // 0: Eva's, in the twin's helpers
  std::vector<std::string> descent, eva;
  bool descent_error = false, eva_error = false;
  bool descent_wrap = false, eva_overflow = false;
  bool if_called = false;
};

struct EvaCounts {
  int facts = 0, same = 0, descent_more = 0, eva_more = 0, incomparable = 0, not_analysed = 0, no_eva = 0;
  // Lines with an error alarm, in code the script runs; and in functions it never calls.
  int descent_errors = 0, eva_errors = 0, both_errors = 0;
  int descent_errors_uncalled = 0, eva_errors_uncalled = 0;
  int descent_wraps = 0, eva_overflows = 0;  // lines
  int eva_other = 0;                          // Eva's other alarms (lines)
  // Programs where Eva said it had to guess (a recursion deeper than it unrolls: "Recursive
  // call to f without a specification"), or stopped: its facts there are not all sound.
  int eva_problems = 0;
  // False alarms, where the program was run to its end (count_false_alarms): lines in code it
  // runs whose alarm the run proves wrong (it did not fail there). Descent's error alarms;
  // Eva's error alarms, and its signed-overflow alarms on lines where Descent proves no
  // wrap-around (there C cannot overflow either; where both flag it, neither is counted).
  int runs = 0, descent_false = 0, eva_false = 0;
  int descent_at_least() const { return same + descent_more; }
  EvaCounts& operator+=(const EvaCounts& o);
};

struct EvaComparison {
  Domain domain = Domain::Product;
  std::vector<FactRow> facts;
  std::vector<AlarmRow> alarms;
  EvaCounts counts;
  std::vector<std::string> notes;  // Eva's problems, a stale record, ...
};
EvaComparison compare_with_eva(const Result& result, const CTwin& twin, const EvaRun& eva);
// The program (it reads no input: one run is every run) ran to its end, failing at
// `failing_line` (0: it did not fail): counts the false alarms into c->counts.
void count_false_alarms(EvaComparison* c, uint32_t failing_line);

// The whole side by side for one analysed program: its twin (false with *error when the program
// has none), Eva's runs on it (or `recorded`, a log run_eva wrote, when given), the comparison.
struct EvaSideBySide {
  CTwin twin;
  EvaRun eva;
  EvaComparison comparison;
};
bool eva_side_by_side(const Result& result, const EvaOptions& options, const std::string* recorded,
                      EvaSideBySide* out, std::string* error);

// The facts line by line (the source line, then each variable's two facts and the verdict),
// the alarms of each, then the counts.
std::string format_eva_comparison(const EvaComparison& c, const SourceFile& source);
std::string format_eva_counts(const EvaCounts& c);  // the counts in words, a few lines
// A table of per-program counts and their totals.
std::string format_eva_totals(const std::vector<std::pair<std::string, EvaCounts>>& rows);

}  // namespace descent::analysis
