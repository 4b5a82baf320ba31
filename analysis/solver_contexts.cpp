// Calls analysed in their caller's state (issue 37; Eva's default, the "call strings" of the
// textbooks with the argument values as the string).
//
// The classic interprocedural analysis (Options::contexts false) gives each function one
// summary: its parameters are the join of the arguments of every call, and every call gets
// the same result back. `max_of_three(1, 5, 3)` and `max_of_three(9, 2, 4)` then both see
// a, b, c in [1, 9] and both return [1, 9]. Here a call instead solves the callee afresh
// from the arguments it is given, and remembers the answer for those argument values (this
// round): the same call again, say in the next iteration of a loop, costs a lookup. The
// callee's facts and alarms are then the join over the contexts that ran, so a division
// that only one caller can make fail is an alarm, and one no caller reaches is not.
//
// Recursion is followed call by call (factorial(10) runs ten contexts, as Eva's
// -eva-unroll-recursive-calls does) up to kContextDepth nested calls; a call that comes
// back to a context still being solved (the same argument values: f(n) calling f(n - 1)
// with n unknown), one past the depth, or past the work budget, falls back to the summary,
// and from then on that function is also solved with its summary every round and reported
// from it (sound for every call, contexts or not).
#include <algorithm>

#include "analysis/solver_internal.h"

namespace descent::analysis {

using namespace solver_internal;

namespace {

// Nested calls in context (a recursion's depth): Eva's recursion unrolling default in the
// corpus (tests/analysis/corpus/README.md) is 32.
constexpr int kContextDepth = 32;
// Block transfers all contexts of one round may spend; past it, calls use summaries.
constexpr size_t kContextWork = 20'000;
// States kept for the report over all contexts of a round; past it, the summary.
constexpr size_t kContextStates = 20'000;

}  // namespace

bool Solver::summary_solved(int f) const {
  return f == 0 || !opts_.contexts || fallback_[size_t(f)] || uncalled_[size_t(f)];
}

bool Solver::call_in_context(int f, const std::vector<AbsVal>& args, AbsVal* result, bool* returns) {
  auto same_args = [&](const Context& c) {
    if (c.args.size() != args.size()) return false;
    for (size_t i = 0; i < args.size(); ++i)
      if (!lat_.equal(c.args[i], args[i])) return false;
    return true;
  };
  for (const Context& c : contexts_[size_t(f)])
    if (same_args(c)) {
      if (!c.done) return false;  // a call back into itself with the same values
      *result = c.ret;
      *returns = c.returns;
      return true;
    }
  if (ctx_depth_ >= kContextDepth || ctx_work_ >= kContextWork || ctx_states_ >= kContextStates) return false;

  contexts_[size_t(f)].push_back({});
  Context& c = contexts_[size_t(f)].back();  // a deque: stays put while nested calls add more
  c.args = args;
  // The caller's solve is suspended: keep what belongs to it (the current function's edges,
  // loops and memo, and f's own states, which the caller may be: recursion).
  const int saved_fn = fn_, saved_iteration = iteration_;
  const bool saved_reporting = reporting_;
  auto saved_outs = std::move(outs_);
  auto saved_members = std::move(loop_members_);
  auto saved_solved = std::move(solved_from_);
  auto saved_in = std::move(in_[size_t(f)]);
  auto saved_iters = std::move(iter_states_[size_t(f)]);
  reporting_ = false;
  iteration_ = 0;
  ++ctx_depth_;
  solve(f, &args);

  const FunctionCfg& g = F();
  const auto& in = in_[size_t(f)];
  c.returns = in[size_t(g.exit)].reachable;
  const Type rt = g.fn ? g.fn->return_type : Type::Void;
  c.ret = is_tracked(rt) ? lat_.bottom(rt) : AbsVal{};
  for (const auto& b : g.blocks) {
    // The value returned, from the final states (the fixpoint's, or each unrolled
    // iteration's when the return is inside a loop that finished).
    if (b.term != TermKind::Return || !b.cond || !is_tracked(rt)) continue;
    auto it = iter_states_[size_t(f)].find(b.id);
    std::vector<State> runs = it != iter_states_[size_t(f)].end() ? it->second : std::vector<State>{in[size_t(b.id)]};
    for (State st : runs) {
      if (!st.reachable) continue;
      for (const auto& instr : b.instrs) exec(instr, st);
      if (!st.reachable) continue;
      AbsVal v = eval(*b.cond, st);
      if (rt == Type::Float && v.type == Type::Int) v = lat_.promote(v);
      c.ret = lat_.join(c.ret, v);
    }
  }
  for (const auto& b : g.blocks) {
    auto it = iter_states_[size_t(f)].find(b.id);
    if (it != iter_states_[size_t(f)].end()) {
      ctx_states_ += it->second.size();
      c.states[b.id] = std::move(it->second);
    } else if (in[size_t(b.id)].reachable) {
      ++ctx_states_;
      c.states[b.id] = {in[size_t(b.id)]};
      c.states[b.id].back().iteration = 0;  // not an unrolled iteration's
    }
  }
  c.done = true;

  --ctx_depth_;
  in_[size_t(f)] = std::move(saved_in);
  iter_states_[size_t(f)] = std::move(saved_iters);
  outs_ = std::move(saved_outs);
  loop_members_ = std::move(saved_members);
  solved_from_ = std::move(saved_solved);
  fn_ = saved_fn;
  iteration_ = saved_iteration;
  reporting_ = saved_reporting;
  *result = c.ret;
  *returns = c.returns;
  return true;
}

// Before the last pass: a function solved only in contexts gets, as its states, what its
// contexts saw (each block: the join for the picture, every context's states apart for the
// facts and alarms), and its fn line the join of their arguments and results.
void Solver::prepare_context_report() {
  const auto& fns = r_.cfg.functions;
  by_contexts_.assign(fns.size(), false);
  shown_params_ = params_;
  shown_ret_ = ret_;
  r_.contexts.assign(fns.size(), 0);
  for (size_t f = 1; f < fns.size(); ++f) {
    if (uncalled_[f]) r_.contexts[f] = -1;
    if (summary_solved(int(f))) continue;
    by_contexts_[f] = true;
    const FunctionCfg& g = fns[f];
    auto& in = in_[f];
    in.assign(g.blocks.size(), unreachable());
    iter_states_[f].clear();
    bool returns = false;
    for (int p = 0; p < g.num_params; ++p) shown_params_[f][size_t(p)] = lat_.bottom(g.vars[size_t(p)].type);
    shown_ret_[f] = g.fn && is_tracked(g.fn->return_type) ? lat_.bottom(g.fn->return_type) : AbsVal{};
    for (const Context& c : contexts_[f]) {
      if (!c.done) continue;
      ++r_.contexts[f];
      returns = returns || c.returns;
      for (size_t p = 0; p < c.args.size() && p < shown_params_[f].size(); ++p)
        shown_params_[f][p] = lat_.join(shown_params_[f][p], c.args[p]);
      if (c.returns) shown_ret_[f] = lat_.join(shown_ret_[f], c.ret);
      for (const auto& [b, states] : c.states) {
        auto& list = iter_states_[f][b];
        for (const State& st : states) {
          join_into_reachable(in[size_t(b)], st);
          list.push_back(st);
        }
      }
    }
    may_return_[f] = returns;
  }
}

}  // namespace descent::analysis
