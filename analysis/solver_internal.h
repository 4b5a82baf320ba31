// Private to the fixpoint solver (analysis/solver*.cpp): nothing outside them includes this.
//
// analyze() (analysis.h) is one Solver object run over a program's control-flow graphs. Its
// methods are spread over files by concern:
//   solver.cpp           the driver: interprocedural rounds and function summaries, and one
//                        function's fixpoint, loop by loop, with widening and narrowing
//   solver_transfer.cpp  what a block does to a state: expressions, conditions (which narrow
//                        the variables they compare), instructions and terminators
//   solver_facts.cpp     the last pass: the alarms and facts the final states imply, and the
//                        Result's questions about them
//   solver_contexts.cpp  calls solved in their caller's state (each argument tuple once per
//                        round), with the summaries as the fallback
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analysis.h"

namespace descent::analysis {

namespace solver_internal {

// A state is one abstract value per variable of the graph (a function's locals and hidden
// loop variables; at top level the globals). A variable not yet assigned holds bottom; the
// whole state is "unreachable" when no execution gets there. An expression whose value is
// bottom (a call that never returns, an error on every path) makes the rest unreachable.
struct State {
  bool reachable = false;
  std::vector<AbsVal> vars;
  // An unrolled iteration's state kept for the report (iter_states_): which iteration of the
  // loop on which line, for the wrap-around note. Set where such a list is made; elsewhere
  // whatever a copy carried, never read.
  int iteration = 0;
  uint32_t loop_line = 0;
};

inline bool is_tracked(Type t) { return t == Type::Int || t == Type::Float || t == Type::Bool; }
bool is_literal(const Expr& e);  // a literal, maybe negated or promoted (solver_transfer.cpp)

}  // namespace solver_internal

class Solver {
 public:
  using State = solver_internal::State;

  Solver(const Program& program, const Module& module, const Options& options, Result* out);
  void run();

 private:
  const Program& program_;
  const Module& module_;
  Options opts_;
  Lattice lat_;
  Result& r_;

  std::vector<std::vector<AbsVal>> params_;
  std::vector<int> param_joins_;
  std::vector<AbsVal> ret_;
  std::vector<int> ret_joins_;
  std::vector<bool> called_;
  std::vector<bool> may_return_;
  // Calls in context (solver_contexts.cpp): per function, each argument tuple analysed this
  // round (a deque: entries stay put while a recursive call adds more).
  struct Context {
    bool done = false;  // false while it is being solved (a call back to it falls back)
    std::vector<AbsVal> args;
    AbsVal ret;
    bool returns = false;
      std::map<int, std::vector<State>> states;  // each block's states, for the report
  };
  std::vector<std::deque<Context>> contexts_;
  std::vector<bool> fallback_;    // some call of it used the summary (sticky over rounds)
  std::vector<bool> by_contexts_; // reported from its live contexts (report() decides)
  std::vector<std::vector<AbsVal>> shown_params_;  // what its fn line says: params_ or the
  std::vector<AbsVal> shown_ret_;                  //   contexts' join
  bool in_report_ = false;  // report() is running (sub-solves then trace nothing)
  const State* reported_ = nullptr;  // the state report() runs now (its iteration, if any)
  int ctx_depth_ = 0;
  size_t ctx_work_ = 0;     // block transfers spent in contexts this round (capped)
  size_t ctx_states_ = 0;   // states the contexts of this round keep for the report
  std::vector<bool> uncalled_;    // nothing calls it: analysed with unknown arguments  // some call of it returns (its exit is reachable)
  std::vector<AbsVal> globals_;  // what functions read: every value top-level code assigns
  std::vector<int> global_joins_;
  bool summaries_changed_ = false;
  bool widen_summaries_ = false;
  std::vector<std::vector<State>> in_;  // [function][block] entry states

  // While reporting (the last pass), effects become alarms and facts.
  bool reporting_ = false;
  int fn_ = 0;  // the function being analysed

  std::vector<bool> assigned_;  // globals the analysed input assigns (at top level)

  size_t unroll_work_ = 0;  // block transfers spent unrolling in this solve (capped)
  size_t polls_ = 0;        // set_in calls, to poll Options::interrupt every so many
  int iteration_ = 0;       // the unrolled iteration being traced (0: none)
  size_t traced_facts_ = 0;  // facts in r_.trace this round (trace() stops at a million)
  std::vector<std::vector<State>> outs_;         // [block][succ]: what it hands each successor
  std::vector<std::vector<char>> loop_members_;  // [head][block]
  // [head]: the state from outside the loop its blocks' states were last solved from (and
  // still hold); the same entry again needs no new solve (solve_loop). An outer loop's
  // bookkeeping that rewrites the blocks clears it.
  std::vector<std::optional<State>> solved_from_;

  // One alarm per kind and place; one wrap-around note per line (a long sum would note
  // every partial sum).
  std::set<std::tuple<int, uint32_t, uint32_t>> alarmed_;
  // Places where an operation ran at least once without failing for sure: an error alarm
  // there is "possible", even if another run (an unrolled iteration) fails every time.
  std::set<std::pair<uint32_t, uint32_t>> not_must_;
  std::map<std::tuple<int, uint32_t, uint32_t>, std::string> alarm_what_;  // quoted operation
  // Warnings decided from every run of the place (unrolled iterations report apart): the
  // truth values a condition took, and assignments that read a variable.
  std::map<const Expr*, std::pair<uint8_t, int>> conditions_;  // truths seen, the function
  std::map<const Stmt*, int> constant_candidates_;             // the statement's function
  // [function][block]: the entry state of each iteration, for the blocks of a loop that
  // unrolling finished; the report runs each (more precise than their join).
  std::vector<std::map<int, std::vector<State>>> iter_states_;
  std::map<const Expr*, size_t> mul_index_;  // muls_ by expression

  const FunctionCfg& F() const { return r_.cfg.functions[size_t(fn_)]; }

  // ---- the driver (solver.cpp) ----
  void mark_assigned(const Block& b);
  void run_rounds();
  bool call_the_uncalled();
  std::vector<int64_t> program_thresholds() const;
  void grow(AbsVal& summary, int& joins, const AbsVal& v);
  State entry_state(int f, const std::vector<AbsVal>* args = nullptr);
  std::vector<std::string> describe(const State& s) const;
  void trace(int block, const char* phase, bool changed, const State& s);
  std::vector<int> order() const;
  void solve(int f, const std::vector<AbsVal>* args = nullptr);
  bool summary_solved(int f) const;  // solve(f) runs each round (else only its contexts)
  // ---- calls in context (solver_contexts.cpp) ----
  bool call_in_context(int f, const std::vector<AbsVal>& args, AbsVal* result, bool* returns);
  void prepare_context_report();
  State gather(int b, int from = 0) const;
  void set_in(int b, State s, const char* phase);
  void solve_list(const std::vector<int>& list, int head);
  void solve_loop(int h, const std::vector<int>& body);
  bool unroll_loop(int h, const std::vector<int>& body);
  LoopNote& loop_note(int h);

  // States, joined and compared variable by variable (solver.cpp).
  void join_into(State& a, const State& b) const;
  void join_into_reachable(State& a, const State& b) const;  // a may be unreachable
  State join_states(const State& a, const State& b) const;
  bool state_leq(const State& a, const State& b) const;
  State widen_states(const State& old, const State& next, bool thresholds = true) const;
  State narrow_states(const State& old, const State& next) const;

  // No execution gets here: no variables at all (states are copied a lot; an unreachable
  // one costs nothing).
  static State unreachable() { return State{}; }
  static State unreachable_of(const FunctionCfg&) { return State{}; }

  // Sets one variable in place; a bottom value means no execution continues.
  static void put(State& s, int v, const AbsVal& value) {
    if (value.type != Type::Unknown && value.is_bottom()) s = unreachable();
    else s.vars[size_t(v)] = value;
  }
  static State set_var(State s, int v, const AbsVal& value) {
    put(s, v, value);
    return s;
  }

  // ---- transfer functions (solver_transfer.cpp) ----
  AbsVal read_var(const Expr& e, const State& s);
  AbsVal eval(const Expr& e, const State& s);
  AbsVal binary(const Expr& e, const State& s);
  AbsVal call(const Expr& e, const State& s);
  State refine(const State& s, const Expr& cond, bool truth);
  int local_index(const Expr& e) const;
  void exec(const Instr& in, State& s);
  std::vector<State> transfer(const BasicBlock& b, const State& entry);

  // ---- alarms and facts (solver_facts.cpp) ----
  // What the transfer functions report; all do nothing until the last pass.
  void alarm(Alarm::Kind kind, bool definite, SourceLoc loc, std::string message);
  static std::string error_message(Alarm::Kind kind, bool definite, const std::string& what);
  void settle_alarms();  // the deferred warnings, and errors downgraded to possible
  static std::string quote(const Expr& e);
  void effects(const Effects& fx, SourceLoc loc, const Expr& e);
  void effects(const Effects& fx, SourceLoc loc, const std::string& what);
  void record(const Stmt* s, const AbsVal& v);
  void note_mul(const Expr& e, const AbsVal& a, const AbsVal& b);
  // The last pass.
  void report();
  static bool has_code(const BasicBlock& b);
  void report_unreachable(int f);
  std::set<int> callees(int f) const;
  bool calls_reach(int from, int to) const;
  void report_recursion(int f);
  bool dead_before(const FunctionCfg& g, size_t b, const Instr& target);
  void collect_facts();
};

}  // namespace descent::analysis
