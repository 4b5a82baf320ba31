// Abstract interpretation: what a program computes, found without running it.
//
//   ProgramCfg cfg = build_cfg(program, module);        // analysis/cfg.h
//   Result r = analyze(program, module, {Domain::Intervals});
//   r.facts_at_line(3)   -> {"i in [0, 9]"}
//   r.alarms             -> division by zero (definite / possible), ...
//
// The analysis runs every function of the program over abstract values (analysis/value.h)
// instead of numbers: each basic block's entry state is the join of what its predecessors
// hand it, loop heads widen so that a counter that keeps growing reaches a fixpoint at once,
// and a narrowing pass then wins back the bounds the loop tests imply. Functions are
// analysed once for all their calls (context-insensitive): a function's parameters hold the
// join of the arguments of every call, its result the join of every return; recursion
// iterates these summaries to a fixpoint too (widened after a few rounds).
//
// Soundness is the contract: every value the AST walker computes at a program point lies
// inside the analysed fact for that point (Result::admits; tests/analysis checks it on
// thousands of random programs). Precision is what the domains trade: constants know one
// value or nothing, signs know < 0 / = 0 / > 0, intervals know bounds, the product knows both.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/cfg.h"
#include "analysis/value.h"
#include "lang/ast.h"
#include "lang/module.h"

namespace descent::analysis {

struct Options {
  Domain domain = Domain::Product;
  size_t max_trace = 5000;  // solver steps kept for stepping through (the visualizer)
  // Globals with a smaller index existed before this input (a REPL's earlier lines): they
  // may hold any value when it starts. The others are this input's own, unassigned at first.
  size_t first_new_global = 0;
  // Loop unrolling (Eva's slevel, Astrée's loop unrolling): a loop is first run iteration by
  // iteration, each iteration's state apart, for up to this many iterations; a loop that
  // finishes within them needs no widening (its facts are the join of what each iteration
  // did). A loop still running after them is widened from the join of the states seen. 0: off.
  int unroll = 64;
  // Widening with thresholds: a bound that moves jumps to the next of the program's own
  // constants (and their neighbours) before it jumps to the type's end.
  bool thresholds = true;
  // Calls analysed in their caller's state (Eva's default): each call of a function with
  // different argument values is a context of its own, its facts the join over the contexts
  // that ran; recursion is followed that many calls deep, then it and anything past the
  // budget uses the function's summary (its arguments joined over every call). false: every
  // call uses the summary (the classic interprocedural analysis of the lessons).
  bool contexts = true;
  // Polled as the solver works (a Session passes its Ctrl-C flag): once set, the analysis
  // stops and its Result says interrupted, with no facts. A deep nest can take seconds.
  const std::atomic<bool>* interrupt = nullptr;
};

// How the solver treated one loop, for `--explain`: unrolled (and in how many iterations), or
// widened (with which thresholds) and narrowed.
struct LoopNote {
  int function = 0;  // index into the graph's functions
  int head = 0;      // the loop head's block
  uint32_t line = 0;
  int unrolled = 0;         // the most iterations one run of the loop took while unrolled
  bool widened = false;     // it was widened (unrolling ran out, or was off)
  std::vector<std::string> thresholds;  // the bounds widening stopped at (program constants)
  bool narrowed = false;    // narrowing won back a bound
};

// What the facts say may go wrong. Errors are the language's runtime errors; warnings are
// facts a programmer would want to know; notes explain a loss of precision.
struct Alarm {
  enum class Kind : uint8_t {
    DivisionByZero,     // error: int / or % by a divisor that may be / is 0
    InvalidConversion,  // error: int() of a float that may be / is nan or out of range
    EndlessRecursion,   // error: a function that never returns calls itself: stack overflow
    ConditionAlways,    // warning: an if/while condition that is always true or always false
    Unreachable,        // warning: code no execution reaches
    ConstantValue,      // warning: an assignment whose value is always the same (a fold the
                        //   AST pass, which folds literals only, cannot see)
    MayWrap,            // note: int arithmetic that may wrap around (its bounds are lost)
  };
  Kind kind;
  bool definite = false;  // errors: happens every time the line runs; warnings: proven
  SourceLoc loc;
  std::string message;
  bool is_error() const { return kind <= Kind::EndlessRecursion; }
};
const char* alarm_kind_name(Alarm::Kind k);  // "division by zero", ...

// One step of the solver, for watching it work: a block was (re)computed.
struct SolverStep {
  int function = 0;           // index into the graph's functions
  int block = 0;
  std::string phase;          // "ascending", "unrolling", "widening", "narrowing"
  int iteration = 0;          // unrolling: which iteration of the loop (1, 2, ...)
  bool changed = false;       // the block's entry state grew (or shrank when narrowing)
  std::vector<std::string> state;  // its entry state: one fact per variable with a value
};

// A fact as data, for tools that compare one analysis with another (the Eva side by side):
// the value a statement gives its variable (an assignment's after it, a loop variable's at an
// iteration's start), or a parameter's over every call.
struct StmtFact {
  uint32_t line = 0, col = 0;
  std::string function;  // "<script>" or the function's name
  std::string var;
  AbsVal value;
  bool param = false;  // a parameter, on its function's `fn` line
};

class Result {
 public:
  Domain domain = Domain::Product;
  ProgramCfg cfg;
  std::vector<Alarm> alarms;  // by line
  // Entry state of every block, [function][block], one fact per variable ("unreachable" alone
  // when no execution gets there).
  std::vector<std::vector<std::vector<std::string>>> block_states;
  // The solver's steps in the last interprocedural round (the one whose function summaries
  // stayed the same, so its steps end exactly at block_states), entry blocks first.
  std::vector<SolverStep> trace;
  bool trace_truncated = false;
  int rounds = 0;  // interprocedural rounds until the summaries stopped changing
  // Options::interrupt was set before the fixpoint: nothing else here holds.
  bool interrupted = false;
  std::vector<LoopNote> loops;  // every loop the last round solved, by function and head
  // [function]: the calling contexts it was analysed in (Options::contexts), 0 where its
  // summary was used (the top level, recursion past the limit), -1 for a function nothing
  // calls (analysed once, with any argument).
  std::vector<int> contexts;
  std::vector<int64_t> thresholds;  // the widening thresholds the program's constants gave

  // The facts that hold after the statements of a line (of the analysed input's file):
  // assigned variables, loop variables at the start of each iteration, a function's
  // parameters and result on its `fn` line.
  std::vector<std::string> facts_at_line(uint32_t line) const;
  const std::map<uint32_t, std::vector<std::string>>& facts() const { return facts_; }
  // The same facts as values (what facts() prints), in the order of the source.
  const std::vector<StmtFact>& stmt_facts() const { return stmt_facts_; }
  const Lattice& lattice() const { return *lattice_; }

  // Soundness: whether the value `v` that statement `s` gives its variable is admitted by
  // the fact for `s` (Assign: after it; For: the loop variable at an iteration's start).
  // False for a statement the analysis thinks unreachable.
  bool admits(const Stmt* s, Value v) const;
  // The fact for one statement, as text ("" when it has none).
  std::string fact_for(const Stmt* s) const;

  // "Does this function multiply?" answered twice (the seed's example): syntactically (a
  // `*` in its tree) and semantically (a multiplication that runs, with what it multiplies).
  std::string multiplication_report() const;

 private:
  friend class Solver;
  std::map<uint32_t, std::vector<std::string>> facts_;
  std::map<const Stmt*, AbsVal> stmt_values_;
  std::vector<StmtFact> stmt_facts_;
  struct MulSite {
    const Expr* expr;
    const FnDecl* fn;
    bool reached = false;
    AbsVal left, right;
  };
  std::vector<MulSite> muls_;
  std::shared_ptr<const Lattice> lattice_;
};

// Analyses a checked program (its top-level code and every function it can call). Never
// fails: input that did not check has no Program to give.
Result analyze(const Program& program, const Module& module, const Options& options = {});

// The report `descent dump --stage analysis` prints: the source, each line followed by the
// facts after it, then the alarms (file:line:col: error (definite): ...).
std::string format_report(const Result& result, const SourceFile& source);
std::string format_alarms(const Result& result, const SourceFile& source);
// The control-flow graph with each block's entry state (the fixpoint the solver reached).
std::string format_block_states(const Result& result);
// How each loop was solved (unrolled, widened at which thresholds, narrowed): `--explain`.
std::string format_explain(const Result& result);

}  // namespace descent::analysis
