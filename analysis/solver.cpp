// The fixpoint solver (analysis/analysis.h): abstract states flow through each function's
// control-flow graph until nothing changes, function summaries flow between functions until
// nothing changes, and a last pass over the final states collects the facts and alarms.
//
// This file is the driver: the interprocedural rounds, the summaries, and one function's
// fixpoint, loop by loop, with widening and narrowing. What a block does to a state is
// solver_transfer.cpp; the last pass is solver_facts.cpp (the map: solver_internal.h).
#include <algorithm>
#include <functional>
#include <set>

#include "analysis/solver_internal.h"

namespace descent::analysis {

using namespace solver_internal;

namespace {

// How many times a summary may grow by join before it widens: enough for a handful of call
// sites, few enough that a recursion's shrinking argument widens soon.
constexpr int kSummaryJoins = 10;
// Interprocedural rounds before giving up on precision: every summary is widened from then
// on, and the rounds stop once they stop changing (they must: widening).
constexpr int kMaxRounds = 200;
// Widening steps at one loop head that may stop at program constants (thresholds) before
// widening jumps past them all: each rung costs a pass over the loop, nests multiply them.
constexpr int kThresholdSteps = 8;
// Narrowing passes after each function's ascending fixpoint.
constexpr int kNarrowPasses = 3;
// Block transfers one analysis may spend unrolling loops, over all its functions and rounds
// (a loop nest of unknown trip counts would otherwise cost unroll^depth each round); past
// it, loops are widened at once. A classroom program's loops take a few thousand; a block
// of a function with more than 32 variables counts once per 32 of them (set_in).
constexpr size_t kUnrollWork = 5'000;
// States an unrolled loop keeps for the report, over all its blocks and iterations.
constexpr size_t kKeptStates = 4'096;

}  // namespace

Solver::Solver(const Program& program, const Module& module, const Options& options, Result* out)
    : program_(program), module_(module), opts_(options), lat_(options.domain), r_(*out) {
  r_.domain = options.domain;
  r_.cfg = build_cfg(program, module);
  r_.lattice_ = std::make_shared<Lattice>(options.domain);
}

void Solver::run() {
  const auto& fns = r_.cfg.functions;
  params_.assign(fns.size(), {});
  param_joins_.assign(fns.size(), 0);
  ret_.assign(fns.size(), AbsVal{});
  ret_joins_.assign(fns.size(), 0);
  called_.assign(fns.size(), false);
  may_return_.assign(fns.size(), false);
  uncalled_.assign(fns.size(), false);
  fallback_.assign(fns.size(), false);
  contexts_.assign(fns.size(), {});
  for (size_t f = 0; f < fns.size(); ++f) {
    ret_[f] = fns[f].fn ? lat_.bottom(fns[f].fn->return_type) : AbsVal{};
    for (int p = 0; p < fns[f].num_params; ++p) params_[f].push_back(lat_.bottom(fns[f].vars[size_t(p)].type));
  }
  globals_.assign(module_.globals.size(), AbsVal{});
  global_joins_.assign(module_.globals.size(), 0);
  assigned_.assign(module_.globals.size(), false);
  mark_assigned(program_.body);
  for (size_t g = 0; g < module_.globals.size(); ++g) {
    Type t = module_.globals[g].type;
    // Globals this input assigns start unassigned; earlier inputs' (a REPL) could be anything.
    globals_[g] = assigned_[g] ? lat_.bottom(t) : lat_.top(t);
  }
  in_.assign(fns.size(), {});
  iter_states_.assign(fns.size(), {});
  called_[0] = true;
  if (opts_.thresholds) {
    r_.thresholds = program_thresholds();
    lat_.set_thresholds(r_.thresholds);
  }
  // The rounds run until the summaries settle; then the input's functions that nothing
  // called are given unknown arguments ("if called with any argument") and they run again.
  for (int pass = 0; pass < 2; ++pass) {
    run_rounds();
    if (pass == 1 || !call_the_uncalled()) break;
  }
  report();
}

// Widening thresholds: every int constant of the program with its neighbours (a loop that
// runs while k < 100 stops at 99 or 100; one that runs while k <= 100 at 101) and its
// negation, at most kMaxThresholds of them (the smallest in size first).
std::vector<int64_t> Solver::program_thresholds() const {
  constexpr size_t kMaxThresholds = 256;
  std::set<int64_t> found{-1, 0, 1};
  std::function<void(const Expr&)> find = [&](const Expr& e) {
    if (e.kind == ExprKind::IntLit && e.int_value > INT64_MIN + 1 && e.int_value < INT64_MAX) {
      for (int64_t c : {e.int_value, -e.int_value})
        for (int64_t d : {c - 1, c, c + 1}) found.insert(d);
    }
    for (const auto& k : e.kids)
      if (k) find(*k);
  };
  std::function<void(const Block&)> walk = [&](const Block& body) {
    for (const auto& st : body) {
      if (st->expr) find(*st->expr);
      if (st->expr2) find(*st->expr2);
      walk(st->body);
      walk(st->else_body);
    }
  };
  walk(program_.body);
  for (const auto& g : r_.cfg.functions)
    if (g.fn) walk(g.fn->body);
  std::vector<int64_t> out(found.begin(), found.end());
  if (out.size() > kMaxThresholds) {
    std::stable_sort(out.begin(), out.end(), [](int64_t a, int64_t b) {
      return (a < 0 ? -(a + 1) : a) < (b < 0 ? -(b + 1) : b);
    });
    out.resize(kMaxThresholds);
  }
  return out;
}

void Solver::run_rounds() {
  const auto& fns = r_.cfg.functions;
  for (int round = 0; round < kMaxRounds; ++round) {
    // The trace keeps the last round only: the one whose summaries no longer changed, so
    // its steps reach exactly the states reported (earlier rounds start from smaller ones).
    r_.trace.clear();
    r_.loops.clear();
    r_.trace_truncated = false;
    traced_facts_ = 0;
    summaries_changed_ = false;
    widen_summaries_ = round >= kMaxRounds / 2;
    for (auto& c : contexts_) c.clear();  // calls in context are solved afresh each round
    ctx_work_ = ctx_states_ = 0;
    for (size_t f = 0; f < fns.size(); ++f) {
      if (!summary_solved(int(f))) {  // its calls solve it, in context
        in_[f].assign(fns[f].blocks.size(), unreachable());
        continue;
      }
      solve(int(f));
      const auto& exit_in = in_[f][size_t(fns[f].exit)];
      if (exit_in.reachable && !may_return_[f]) {
        may_return_[f] = true;
        summaries_changed_ = true;
      }
    }
    ++r_.rounds;
    if (!summaries_changed_) break;
  }
}

// Gives each function this input declares and nothing called unknown arguments; false when
// there is none.
bool Solver::call_the_uncalled() {
  bool any = false;
  for (const auto& st : program_.body) {
    if (st->kind != StmtKind::FnDecl || !st->fn) continue;
    int f = r_.cfg.function_index(st->fn.get());
    if (f <= 0 || called_[size_t(f)]) continue;
    const FunctionCfg& g = r_.cfg.functions[size_t(f)];
    for (int p = 0; p < g.num_params; ++p) params_[size_t(f)][size_t(p)] = lat_.top(g.vars[size_t(p)].type);
    called_[size_t(f)] = true;
    uncalled_[size_t(f)] = true;
    any = true;
  }
  return any;
}

void Solver::mark_assigned(const Block& b) {
  for (const auto& s : b) {
    if ((s->kind == StmtKind::Assign || s->kind == StmtKind::For) && s->storage == Storage::Global &&
        s->slot >= 0 && size_t(s->slot) < assigned_.size())
      assigned_[size_t(s->slot)] = size_t(s->slot) >= opts_.first_new_global;
    mark_assigned(s->body);
    mark_assigned(s->else_body);
  }
}

// ---- summaries ----

// Grows a summary by v; widens after kSummaryJoins growths. Marks a change.
void Solver::grow(AbsVal& summary, int& joins, const AbsVal& v) {
  if (v.type == Type::Unknown || v.is_bottom() || lat_.leq(v, summary)) return;
  AbsVal next = lat_.join(summary, v);
  if (joins >= kSummaryJoins || widen_summaries_) next = lat_.widen(summary, next);
  ++joins;
  summary = next;
  summaries_changed_ = true;
}

// ---- states ----

void Solver::join_into(State& a, const State& b) const {
  for (size_t i = 0; i < a.vars.size(); ++i) a.vars[i] = lat_.join(a.vars[i], b.vars[i]);
}

void Solver::join_into_reachable(State& a, const State& b) const {
  if (!b.reachable) return;
  if (!a.reachable) a = b;
  else join_into(a, b);
}

State Solver::join_states(const State& a, const State& b) const {
  if (!a.reachable) return b;
  if (!b.reachable) return a;
  State r = a;
  for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.join(a.vars[i], b.vars[i]);
  return r;
}

bool Solver::state_leq(const State& a, const State& b) const {
  if (!a.reachable) return true;
  if (!b.reachable) return false;
  for (size_t i = 0; i < a.vars.size(); ++i)
    if (!lat_.leq(a.vars[i], b.vars[i])) return false;
  return true;
}

State Solver::widen_states(const State& old, const State& next, bool thresholds) const {
  if (!old.reachable) return next;
  if (!next.reachable) return old;
  State r = old;
  for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.widen(old.vars[i], next.vars[i], thresholds);
  return r;
}

State Solver::narrow_states(const State& old, const State& next) const {
  if (!old.reachable || !next.reachable) return next;
  State r = old;
  for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.narrow(old.vars[i], next.vars[i]);
  return r;
}

// ---- one function's fixpoint ----

// The state at a function's entry: parameters from the summary, the rest unassigned.
// A function's entry: its parameters are the call's arguments (in context) or the summary's.
State Solver::entry_state(int f, const std::vector<AbsVal>* args) {
  State s;
  const FunctionCfg& g = r_.cfg.functions[size_t(f)];
  s.vars.resize(g.vars.size());
  s.reachable = called_[size_t(f)] || args;
  for (size_t i = 0; i < g.vars.size(); ++i) {
    Type t = g.vars[i].type;
    if (!is_tracked(t)) continue;
    if (f == 0 && g.vars[i].storage == Storage::Global)
      s.vars[i] = assigned_[size_t(g.vars[i].slot)] ? lat_.bottom(t) : lat_.top(t);
    else if (int(i) < g.num_params)
      s.vars[i] = !args ? params_[size_t(f)][i] : i < args->size() ? (*args)[i] : lat_.top(t);
    else s.vars[i] = lat_.bottom(t);
    if (int(i) < g.num_params && s.vars[i].is_bottom()) s.reachable = false;
  }
  if (f == 0) s.reachable = true;
  if (!s.reachable) return unreachable_of(g);
  return s;
}

std::vector<std::string> Solver::describe(const State& s) const {
  if (!s.reachable) return {"unreachable"};
  std::vector<std::string> out;
  for (size_t i = 0; i < s.vars.size(); ++i) {
    const AbsVal& v = s.vars[i];
    if (v.type == Type::Unknown || v.is_bottom()) continue;
    out.push_back(lat_.describe(F().vars[i].name, v));
  }
  return out;
}

// The steps are for watching a classroom program: a huge one stops being traced after
// max_trace steps or a million facts, whichever comes first.
void Solver::trace(int block, const char* phase, bool changed, const State& s) {
  if (reporting_ || in_report_) return;
  if (r_.trace.size() >= opts_.max_trace || traced_facts_ > 1'000'000) {
    r_.trace_truncated = true;
    return;
  }
  r_.trace.push_back({fn_, block, phase, iteration_, changed, describe(s)});
  traced_facts_ += r_.trace.back().state.size();
}

// Reverse post-order of the reachable part of the graph, then the blocks no edge reaches.
std::vector<int> Solver::order() const {
  const auto& blocks = F().blocks;
  std::vector<int> post;
  std::vector<char> seen(blocks.size(), 0);
  std::function<void(int)> dfs = [&](int b) {
    seen[size_t(b)] = 1;
    for (int s : blocks[size_t(b)].succs)
      if (!seen[size_t(s)]) dfs(s);
    post.push_back(b);
  };
  dfs(0);
  std::reverse(post.begin(), post.end());
  for (size_t b = 0; b < blocks.size(); ++b)
    if (!seen[b]) post.push_back(int(b));
  return post;
}

// One function's fixpoint, loop by loop (Bourdoncle's recursive strategy): a loop is
// iterated, widening at its head, until its head is stable, then narrowed, and only then
// does the code after it run; an inner loop is solved afresh on every iteration of the
// outer one. So the code after `while k < 100 { k += 1 }` sees k = 100, not the k >= 100
// the widening alone gives.
void Solver::solve(int f, const std::vector<AbsVal>* args) {
  fn_ = f;
  const auto& blocks = F().blocks;
  auto& in = in_[size_t(f)];
  in.assign(blocks.size(), unreachable());
  outs_.assign(blocks.size(), {});
  for (size_t b = 0; b < blocks.size(); ++b) outs_[b].assign(blocks[b].succs.size(), unreachable());
  in[0] = entry_state(f, args);
  iter_states_[size_t(f)].clear();
  solved_from_.assign(blocks.size(), std::nullopt);
  if (!in[0].reachable) return;
  trace(0, "ascending", true, in[0]);
  // Loop members: the head and every block that reaches one of its back edges (edges
  // from blocks built after the head, cfg.cpp) without passing through the head.
  loop_members_.assign(blocks.size(), {});
  for (const auto& h : blocks) {
    if (!h.loop_head) continue;
    std::vector<char>& m = loop_members_[size_t(h.id)];
    m.assign(blocks.size(), 0);
    m[size_t(h.id)] = 1;
    std::vector<int> todo;
    for (int p : h.preds)
      if (p > h.id) todo.push_back(p);
    while (!todo.empty()) {
      int b = todo.back();
      todo.pop_back();
      if (m[size_t(b)]) continue;
      m[size_t(b)] = 1;
      for (int p : blocks[size_t(b)].preds) todo.push_back(p);
    }
  }
  solve_list(order(), -1);
}

// The state a block's predecessors hand it now. For a loop head, `from` may pick the
// predecessors inside the loop (its back edges, 1) or outside it (-1) alone.
State Solver::gather(int b, int from) const {
  State s = unreachable();
  for (int p : F().blocks[size_t(b)].preds) {
    if (from != 0 && bool(loop_members_[size_t(b)][size_t(p)]) != (from > 0)) continue;
    const auto& succs = F().blocks[size_t(p)].succs;
    for (size_t k = 0; k < succs.size(); ++k) {
      if (succs[k] != b) continue;
      const State& o = outs_[size_t(p)][k];
      if (!s.reachable) s = o;  // the first reachable one: a copy, no join
      else if (o.reachable) join_into(s, o);
    }
  }
  return s;
}

// Thrown by set_in when Options::interrupt is set; analyze() catches it.
struct Interrupted {};

void Solver::set_in(int b, State s, const char* phase) {
  if (opts_.interrupt && (++polls_ & 255) == 0 && opts_.interrupt->load(std::memory_order_relaxed))
    throw Interrupted{};
  auto& in = in_[size_t(fn_)];
  // The unrolling budget counts the transfers unrolling makes (an inner loop's blocks once
  // per iteration that runs them, not again for each enclosing loop); a state of more than
  // 32 variables costs one unit per 32.
  if (iteration_ > 0 && s.reachable) unroll_work_ += 1 + s.vars.size() / 32;
  if (ctx_depth_ > 0) ++ctx_work_;
  bool changed = !(state_leq(s, in[size_t(b)]) && state_leq(in[size_t(b)], s));
  in[size_t(b)] = std::move(s);
  if (changed) trace(b, phase, true, in[size_t(b)]);
  outs_[size_t(b)] = transfer(F().blocks[size_t(b)], in[size_t(b)]);
}

// Blocks in reverse post-order; a loop head (other than `head`, the loop being solved)
// takes its members with it as one component.
void Solver::solve_list(const std::vector<int>& list, int head) {
  std::vector<char> done(F().blocks.size(), 0);
  for (int b : list) {
    if (done[size_t(b)]) continue;
    done[size_t(b)] = 1;
    if (F().blocks[size_t(b)].loop_head && b != head) {
      std::vector<int> body;
      for (int x : list)
        if (x != b && loop_members_[size_t(b)][size_t(x)]) {
          body.push_back(x);
          done[size_t(x)] = 1;
        }
      solve_loop(b, body);
      continue;
    }
    if (b == 0) set_in(0, in_[size_t(fn_)][0], "ascending");
    else set_in(b, gather(b), "ascending");
  }
}

LoopNote& Solver::loop_note(int h) {
  for (auto& n : r_.loops)
    if (n.function == fn_ && n.head == h) return n;
  const auto& b = F().blocks[size_t(h)];
  uint32_t line = b.term_stmt ? b.term_stmt->loc.line : b.loc.line;
  r_.loops.push_back({fn_, h, line, 0, false, {}, false});
  return r_.loops.back();
}

void Solver::solve_loop(int h, const std::vector<int>& body) {
  auto& in = in_[size_t(fn_)];
  // An inner loop is solved again on each visit of the outer one; when what enters it has
  // not changed, its blocks still hold the answer (a nest of depth d costs d passes, not
  // d^2). Not inside an unrolled iteration (while the budget lasts): that one keeps each
  // iteration's states apart for the report and the outer loop clears them per iteration.
  State entry = gather(h, -1);
  const std::optional<State>& last = solved_from_[size_t(h)];
  if (last && (iteration_ == 0 || unroll_work_ >= kUnrollWork) && state_leq(entry, *last) &&
      state_leq(*last, entry))
    return;
  solved_from_[size_t(h)].reset();
  bool unrolled = unroll_loop(h, body);
  // Unrolling leaves each inner loop's blocks holding the join over the iterations, not
  // what the inner loop's last solve gave: those entries no longer hold.
  for (int b : body)
    if (F().blocks[size_t(b)].loop_head) solved_from_[size_t(b)].reset();
  if (unrolled) {
    solved_from_[size_t(h)] = std::move(entry);
    return;
  }
  // Ascending, widening at the head from the second visit on.
  for (int visit = 0;; ++visit) {
    State next = gather(h);
    if (visit > 0) {
      if (state_leq(next, in[size_t(h)])) break;
      State joined = join_states(in[size_t(h)], next);
      // The thresholds are a ladder: a loop still climbing after kThresholdSteps rungs
      // (a nest testing x against many constants) widens plainly from then on.
      next = widen_states(in[size_t(h)], joined, visit <= kThresholdSteps);
      LoopNote& note = loop_note(h);
      note.widened = true;
      // The bounds widening stopped at a program constant (a threshold), for --explain.
      for (size_t v = 0; v < next.vars.size(); ++v) {
        const AbsVal& w = next.vars[v];
        if (w.type != Type::Int || w.is_bottom() || lat_.equal(w, joined.vars[v])) continue;
        for (int64_t bound : {w.hull.lo, w.hull.hi}) {
          bool moved = bound == w.hull.lo ? bound != joined.vars[v].hull.lo : bound != joined.vars[v].hull.hi;
          if (!moved || !lat_.is_threshold(bound)) continue;
          std::string t = F().vars[v].name + " <= " + int_bound_text(bound);
          if (bound == w.hull.lo) t = F().vars[v].name + " >= " + int_bound_text(bound);
          if (std::find(note.thresholds.begin(), note.thresholds.end(), t) == note.thresholds.end())
            note.thresholds.push_back(t);
        }
      }
      set_in(h, next, "widening");
    } else {
      set_in(h, next, "ascending");
    }
    solve_list(body, h);
  }
  // Narrowing: the loop is stable, so running it once more from the head's state can only
  // keep or shrink it; the head takes what that gives (a few passes: each is sound).
  for (int pass = 0; pass < kNarrowPasses; ++pass) {
    State next = narrow_states(in[size_t(h)], gather(h));
    if (state_leq(in[size_t(h)], next) && state_leq(next, in[size_t(h)])) break;
    loop_note(h).narrowed = true;
    set_in(h, next, "narrowing");
    solve_list(body, h);
  }
  solved_from_[size_t(h)] = std::move(entry);
}

// Runs the loop iteration by iteration: the head takes exactly what the previous iteration's
// back edges hand it (never joined with the iterations before), so `for i in 0..10` runs with
// i = 0, then 1, ... and a sum keeps its exact value. The blocks' states are then the join of
// every iteration's, and what leaves the loop the join of what each iteration handed out.
// Gives up (false) when the loop is still running after opts_.unroll iterations, or the
// function's unrolling budget is spent: the caller then widens, starting from those joins.
bool Solver::unroll_loop(int h, const std::vector<int>& body) {
  if (opts_.unroll <= 0 || unroll_work_ >= kUnrollWork) return false;
  auto& in = in_[size_t(fn_)];
  std::vector<int> members = body;
  members.push_back(h);
  std::vector<State> in_join(members.size(), unreachable());
  auto& lists = iter_states_[size_t(fn_)];
  std::vector<std::vector<State>> mine(members.size());  // each member's state per iteration
  size_t kept = 0;
  std::vector<std::vector<State>> outs_join(members.size());
  for (size_t m = 0; m < members.size(); ++m)
    outs_join[m].assign(F().blocks[size_t(members[m])].succs.size(), unreachable());
  // Back edges still hold what an earlier run of this loop left there (an inner loop is run
  // again on each iteration of the outer one): the first iteration starts from outside only.
  State cur = gather(h, -1);
  const uint32_t loop_line = loop_note(h).line;
  int saved_iteration = iteration_;
  bool finished = false;
  int k = 0;
  for (; k < opts_.unroll && unroll_work_ < kUnrollWork; ++k) {
    iteration_ = k + 1;
    for (int b : members) lists.erase(b);  // an inner loop unrolled in this iteration sets them
    set_in(h, cur, "unrolling");
    solve_list(body, h);
    for (size_t m = 0; m < members.size(); ++m) {
      int b = members[size_t(m)];
      // Past kKeptStates the report will use the join anyway: stop copying (a deep nest
      // would otherwise copy each inner loop's states once per enclosing level).
      auto inner = lists.find(b);
      if (inner != lists.end()) {
        kept += inner->second.size();
        // Moved: this loop's own list replaces the inner one at the end (or drops it).
        if (kept <= kKeptStates)
          mine[m].insert(mine[m].end(), std::make_move_iterator(inner->second.begin()),
                         std::make_move_iterator(inner->second.end()));
        inner->second.clear();
      } else if (in[size_t(b)].reachable) {
        ++kept;
        if (kept <= kKeptStates) {
          mine[m].push_back(in[size_t(b)]);
          mine[m].back().iteration = k + 1;
          mine[m].back().loop_line = loop_line;
        }
      }
      join_into_reachable(in_join[m], in[size_t(b)]);
      for (size_t e = 0; e < outs_join[m].size(); ++e) join_into_reachable(outs_join[m][e], outs_[size_t(b)][e]);
    }
    cur = gather(h, 1);
    if (!cur.reachable) {
      finished = true;
      ++k;
      break;
    }
  }
  iteration_ = saved_iteration;
  for (size_t m = 0; m < members.size(); ++m) {
    in[size_t(members[m])] = std::move(in_join[m]);
    outs_[size_t(members[m])] = std::move(outs_join[m]);
    // The report runs each iteration's state apart, when the loop finished and the states
    // are few enough to keep; otherwise their join.
    if (finished && kept <= kKeptStates) lists[members[m]] = std::move(mine[m]);
    else lists.erase(members[m]);
  }
  LoopNote& note = loop_note(h);
  note.unrolled = std::max(note.unrolled, k);
  return finished;
}

Result analyze(const Program& program, const Module& module, const Options& options) {
  Result r;
  try {
    Solver(program, module, options, &r).run();
  } catch (const Interrupted&) {
    Result stopped;
    stopped.domain = options.domain;
    stopped.interrupted = true;
    return stopped;
  }
  return r;
}

}  // namespace descent::analysis
