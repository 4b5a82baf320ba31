// The fixpoint solver (analysis/analysis.h): abstract states flow through each function's
// control-flow graph until nothing changes, function summaries flow between functions until
// nothing changes, and a last pass over the final states collects the facts and alarms.
//
// This file is the driver: the interprocedural rounds, the summaries, and one function's
// fixpoint, loop by loop, with widening and narrowing. What a block does to a state is
// solver_transfer.cpp; the last pass is solver_facts.cpp (the map: solver_internal.h).
#include <algorithm>
#include <functional>

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
// Narrowing passes after each function's ascending fixpoint.
constexpr int kNarrowPasses = 3;

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
  called_[0] = true;
  for (int round = 0; round < kMaxRounds; ++round) {
    // The trace keeps the last round only: the one whose summaries no longer changed, so
    // its steps reach exactly the states reported (earlier rounds start from smaller ones).
    r_.trace.clear();
    r_.trace_truncated = false;
    traced_facts_ = 0;
    summaries_changed_ = false;
    widen_summaries_ = round >= kMaxRounds / 2;
    for (size_t f = 0; f < fns.size(); ++f) {
      solve(int(f));
      const auto& exit_in = in_[f][size_t(fns[f].exit)];
      if (exit_in.reachable && !may_return_[f]) {
        may_return_[f] = true;
        summaries_changed_ = true;
      }
    }
    r_.rounds = round + 1;
    if (!summaries_changed_) break;
  }
  report();
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

State Solver::widen_states(const State& old, const State& next) const {
  if (!old.reachable) return next;
  if (!next.reachable) return old;
  State r = old;
  for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.widen(old.vars[i], next.vars[i]);
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
State Solver::entry_state(int f) {
  State s;
  const FunctionCfg& g = r_.cfg.functions[size_t(f)];
  s.vars.resize(g.vars.size());
  s.reachable = called_[size_t(f)];
  for (size_t i = 0; i < g.vars.size(); ++i) {
    Type t = g.vars[i].type;
    if (!is_tracked(t)) continue;
    if (f == 0 && g.vars[i].storage == Storage::Global)
      s.vars[i] = assigned_[size_t(g.vars[i].slot)] ? lat_.bottom(t) : lat_.top(t);
    else if (int(i) < g.num_params) s.vars[i] = params_[size_t(f)][i];
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
  if (reporting_) return;
  if (r_.trace.size() >= opts_.max_trace || traced_facts_ > 1'000'000) {
    r_.trace_truncated = true;
    return;
  }
  r_.trace.push_back({fn_, block, phase, changed, describe(s)});
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
void Solver::solve(int f) {
  fn_ = f;
  const auto& blocks = F().blocks;
  auto& in = in_[size_t(f)];
  in.assign(blocks.size(), unreachable());
  outs_.assign(blocks.size(), {});
  for (size_t b = 0; b < blocks.size(); ++b) outs_[b].assign(blocks[b].succs.size(), unreachable());
  in[0] = entry_state(f);
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

// The state a block's predecessors hand it now.
State Solver::gather(int b) const {
  State s = unreachable();
  for (int p : F().blocks[size_t(b)].preds) {
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

void Solver::set_in(int b, State s, const char* phase) {
  auto& in = in_[size_t(fn_)];
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

void Solver::solve_loop(int h, const std::vector<int>& body) {
  auto& in = in_[size_t(fn_)];
  // Ascending, widening at the head from the second visit on.
  for (int visit = 0;; ++visit) {
    State next = gather(h);
    if (visit > 0) {
      if (state_leq(next, in[size_t(h)])) break;
      next = widen_states(in[size_t(h)], join_states(in[size_t(h)], next));
      set_in(h, next, "widening");
    } else {
      set_in(h, next, "ascending");
    }
    solve_list(body, h);
  }
  // Narrowing: the head may only win back the bounds widening threw to infinity.
  for (int pass = 0; pass < kNarrowPasses; ++pass) {
    State next = narrow_states(in[size_t(h)], gather(h));
    if (state_leq(in[size_t(h)], next) && state_leq(next, in[size_t(h)])) break;
    set_in(h, next, "narrowing");
    solve_list(body, h);
  }
}

Result analyze(const Program& program, const Module& module, const Options& options) {
  Result r;
  Solver(program, module, options, &r).run();
  return r;
}

}  // namespace descent::analysis
