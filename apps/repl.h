// The REPL's logic, apart from the terminal: it takes lines and writes to two streams, so
// the same code serves an interactive terminal (main.cpp adds libedit on top) and tests
// that pipe lines in. Everything it shows comes from the pipeline's Session.
#pragma once
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"

namespace descent {

// ---- The launch log and the time breakdown, as the REPL and `descent run` print them ----
// "[launch 1] matmul on cpu (host CPU): 0.0123 ms, 1.23 GFLOP/s, 4.56 GB/s, compiled in 45.6 ms"
std::string launch_line(const tensor::LaunchRecord& r, size_t number);
// `:debug 1`: one line for the input's launches ("" when there were none).
std::string launch_summary(const tensor::LaunchTotals& totals);
// `:debug N` / `--debug N`: "0" or "off", "1", "2"; false with *error for anything else.
bool parse_debug_level(const std::string& word, int* level, std::string* error);
// `:time`: the engine's line, then each stage of Outcome::stages and each kernel launch.
std::string timing_report(const Outcome& o, const std::string& engine);
// A tuning job's result as a table (`descent tune`, `:tune`): per kernel, the nest as
// lowered, the default schedule and the best found, then the best schedules and the cost
// model's rank correlation.
std::string tune_report(const Session::TuneReport& r, const Session::TuneRequest& request);

// Writes launch lines (debug level 2) or the summary (1) beside a program's output without
// breaking one of its lines: a launch while the output is mid-line (print("x", t) writes
// "x " before t is computed) waits for the end of that line.
class LaunchLog {
 public:
  LaunchLog(int level, std::function<void(std::string_view)> write) : level_(level), write_(std::move(write)) {}
  void output(std::string_view text);           // the program's output, as it is written
  void launch(const tensor::LaunchRecord& r);   // Session::set_launch_observer's callback
  void finish(const Outcome& o);                // after the input: what waits, the summary

 private:
  int level_;
  std::function<void(std::string_view)> write_;
  bool mid_line_ = false;
  std::string waiting_;
  size_t count_ = 0;
};

class Repl {
 public:
  Repl(Session& session, std::ostream& out, std::ostream& err);

  // Feeds one line. Returns false when the user asked to quit.
  bool feed(const std::string& line);
  // True while an open ( [ { asks for more lines before the input can be compiled.
  bool continuing() const { return !buffer_.empty(); }
  // Drops a half-typed multi-line input (Ctrl-C at a continuation prompt).
  void cancel_input() { buffer_.clear(); }
  const char* prompt() const { return continuing() ? "   ...> " : "descent> "; }
  // Stops every program this REPL runs (inputs, :load, :compare) after `steps` steps of its
  // engine with "interrupted" (0: no limit). The fuzzer (fuzz/fuzz_repl.cpp) sets it so a
  // generated `while true {}` ends deterministically instead of hanging.
  void set_step_limit(uint64_t steps) { step_limit_ = steps; }

  // One : command. The table of them (command_table()) is the one list: :help prints it,
  // command() dispatches through it and completion offers its names.
  struct Call {
    const std::vector<std::string>& words;  // words[0]: the command as typed
    const std::string& line;                // the whole line, from the ':'
  };
  struct Command {
    const char* name;  // ":ast"
    const char* args;  // for :help: "[sexpr|dot]"
    const char* help;  // one line for :help
    void (*run)(Repl& repl, const Call& call);
    // What completes as the command's next word, given the words before it (words[0]: the
    // command): stages, engines, a view's keywords and then function names, ...; or null.
    std::vector<std::string> (*arguments)(const Session& session,
                                          const std::vector<std::string>& words) = nullptr;
    std::vector<const char*> aliases = {};  // other spellings, not listed (":q")
  };
  // The table's rows are in repl.cpp; a handler longer than a line is a member function
  // below, in the file of its concern.
  static const std::vector<Command>& command_table();
  // The schedule commands (:kernel, :schedules, :sched, the kernel views): repl_kernel.cpp.
  static std::vector<Command> kernel_commands();

  // The : commands' names, in the table's order.
  static std::vector<std::string> commands();
  // Completions for a word being typed: commands after ':', otherwise names and keywords
  // (a function, kernel or builtin with its '(': "fi" -> "fib(").
  std::vector<std::string> complete(const std::string& prefix) const;
  // The same with the line before the word (`before`): the words after a command complete
  // as that command's arguments and nothing else (":stage as" -> "asm", "ast", "ast-folded";
  // ":device o" -> "opencl"; ":reg alloc f" -> "fib"), so the candidates are a function
  // of the command being completed, testable without a terminal.
  std::vector<std::string> complete(const std::string& before, const std::string& prefix) const;

 private:
  // A member function as the table's handler: handled_by<&Repl::tune_command>.
  template <void (Repl::*handler)(const Call&)>
  static void handled_by(Repl& repl, const Call& call) {
    (repl.*handler)(call);
  }

  // repl.cpp: input, dispatch, :help.
  bool command(const std::string& line);
  void submit(const std::string& text, const std::string& name);
  static std::string usage(const std::string& command);  // the table's args text
  void help_command(const Call& c);

  // repl_scalar.cpp: views of the last input down the scalar tiers.
  void show_stage(const std::string& stage, Format format, const std::string& function = "");
  void show_formatted(const Call& c, const std::string& stage);  // :ast, :folded, :cfg
  // A code view's words after the command: at most one of `keywords` (returned; "" if none)
  // and at most one other word, a function (*function). "?" after saying the usage.
  std::string code_args(const Call& c, const std::vector<std::string>& keywords,
                        std::string* function);
  void reg_command(const Call& c);
  void native_command(const Call& c);
  void analyze_command(const Call& c);
  void show_passes(bool llvm);
  void diff_command(const Call& c);
  void show_machine(const Call& c, std::string stage, const std::vector<std::string>& keywords);
  void run_for_target(const std::string& target);
  void stage_command(const Call& c);

  // repl_session.cpp: the session's settings, :load and :compare.
  void registers_command(const Call& c);
  void trace_command(const Call& c);
  void note_untraced();  // a note when tracing is on and the engine does not trace
  void compare();
  void opt_command(const Call& c);
  void engine_command(const Call& c);
  void debug_command(const Call& c);
  void load_command(const Call& c);
  void device_command(const Call& c);

  // repl_kernel.cpp: kernels, their schedules, the tensor graph, tuning.
  void show_kernel(const std::string& view);
  void graph_command(const Call& c);
  void tune_command(const Call& c);
  void defaults_command(const Call& c);
  void tuned_command(const Call& c);
  void run_command(const Call& c);

  Session& session_;
  std::ostream& out_;
  std::ostream& err_;
  std::string buffer_;
  bool time_ = false;
  int debug_ = 0;  // :debug: 0 off, 1 a launch summary per input, 2 every kernel launch
  bool trace_ = false;
  int entry_ = 0;
  bool quit_ = false;  // :quit ran
  uint64_t step_limit_ = 0;  // RunOptions::step_limit of every run
  std::string noted_engine_;  // the engine for which the "tensor code runs on ast" note was shown
};

}  // namespace descent
