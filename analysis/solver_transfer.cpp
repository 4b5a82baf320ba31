// The solver's transfer functions (analysis/solver_internal.h): what one basic block does to
// an abstract state. Expressions are evaluated over the domain's values (value.h); a branch's
// condition narrows the variables it compares on each way out; instructions assign, and a
// block's terminator hands each successor its state. The driver (solver.cpp) runs these to a
// fixpoint and does not need to know what any of them mean, so they live apart from it.
#include <string>
#include <vector>

#include "analysis/solver_internal.h"

namespace descent::analysis {

using namespace solver_internal;

namespace {

// Conditions taller than this are not used to narrow variables (a 10,000-term && chain would
// cost its size at each of its levels); they still cut a path they make impossible.
constexpr uint32_t kRefineHeight = 64;

bool mentions_variable(const Expr& e) {
  if (e.kind == ExprKind::Var || e.kind == ExprKind::Call) return true;
  for (const auto& k : e.kids)
    if (k && mentions_variable(*k)) return true;
  return false;
}

BinaryOp negate(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt: return BinaryOp::Ge;
    case BinaryOp::Le: return BinaryOp::Gt;
    case BinaryOp::Gt: return BinaryOp::Le;
    case BinaryOp::Ge: return BinaryOp::Lt;
    case BinaryOp::Eq: return BinaryOp::Ne;
    case BinaryOp::Ne: return BinaryOp::Eq;
    default: return op;
  }
}

BinaryOp flip(BinaryOp op) {  // a op b  <=>  b flip(op) a
  switch (op) {
    case BinaryOp::Lt: return BinaryOp::Gt;
    case BinaryOp::Le: return BinaryOp::Ge;
    case BinaryOp::Gt: return BinaryOp::Lt;
    case BinaryOp::Ge: return BinaryOp::Le;
    default: return op;
  }
}

}  // namespace

bool solver_internal::is_literal(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return true;
    case ExprKind::Promote:
    case ExprKind::Unary: return is_literal(*e.kids[0]);
    default: return false;
  }
}

// ---- expressions ----

AbsVal Solver::read_var(const Expr& e, const State& s) {
  if (!is_tracked(e.type)) return AbsVal{};
  if (e.storage == Storage::Local) return s.vars[size_t(e.slot)];
  // At top level the graph's first variables are the globals, in slot order (cfg.cpp).
  if (fn_ == 0 && e.slot >= 0 && size_t(e.slot) < s.vars.size()) return s.vars[size_t(e.slot)];
  return e.slot >= 0 && size_t(e.slot) < globals_.size() ? globals_[size_t(e.slot)] : lat_.top(e.type);
}

AbsVal Solver::eval(const Expr& e, const State& s) {
  switch (e.kind) {
    case ExprKind::IntLit: return lat_.constant(Type::Int, Value::of_int(e.int_value));
    case ExprKind::FloatLit: return lat_.constant(Type::Float, Value::of_float(e.float_value));
    case ExprKind::BoolLit: return lat_.constant(Type::Bool, Value::of_bool(e.bool_value));
    case ExprKind::StrLit: return AbsVal{};
    case ExprKind::Promote: return lat_.promote(eval(*e.kids[0], s));
    case ExprKind::Var: return read_var(e, s);
    case ExprKind::Unary: {
      AbsVal a = eval(*e.kids[0], s);
      return is_tracked(e.type) ? lat_.unary(e.unary_op, a) : AbsVal{};
    }
    case ExprKind::Binary: return binary(e, s);
    case ExprKind::Call: return call(e, s);
    default: {
      // Tensor expressions: their scalar parts still run (calls in an index).
      for (const auto& k : e.kids)
        if (k) eval(*k, s);
      return is_tracked(e.type) ? lat_.top(e.type) : AbsVal{};
    }
  }
}

AbsVal Solver::binary(const Expr& e, const State& s) {
  if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) {
    bool is_and = e.binary_op == BinaryOp::And;
    AbsVal l = eval(*e.kids[0], s);
    if (l.is_bottom()) return l;
    uint8_t decides = is_and ? kFalse : kTrue;  // the left value that skips the right
    if (l.signs == decides) return l;
    // The right side runs when the left did not decide: in the state that says so (for a
    // left side of bounded size: refining costs its size, at every level of a chain).
    State rest = e.kids[0]->height <= kRefineHeight ? refine(s, *e.kids[0], is_and) : s;
    AbsVal r = rest.reachable ? eval(*e.kids[1], rest) : lat_.bottom(Type::Bool);
    if (!(l.signs & decides)) return r;
    return lat_.join(lat_.constant(Type::Bool, Value::of_bool(!is_and)), r);
  }
  AbsVal a = eval(*e.kids[0], s);
  AbsVal b = eval(*e.kids[1], s);
  Effects fx;
  AbsVal v = lat_.binary(e.binary_op, e.operand_type, a, b, &fx);
  effects(fx, e.loc, e);
  if (e.binary_op == BinaryOp::Mul && reporting_) note_mul(e, a, b);
  return v;
}

AbsVal Solver::call(const Expr& e, const State& s) {
  std::vector<AbsVal> args;
  for (const auto& k : e.kids) args.push_back(eval(*k, s));
  for (const auto& a : args)
    if (a.type != Type::Unknown && a.is_bottom()) return is_tracked(e.type) ? lat_.bottom(e.type) : a;
  if (e.builtin != Builtin::None) {
    if (e.builtin == Builtin::Print) return AbsVal{};
    Effects fx;
    AbsVal v = lat_.builtin(e.builtin, e.type, args, &fx);
    effects(fx, e.loc, e);
    return is_tracked(e.type) ? v : AbsVal{};
  }
  if (e.kernel >= 0) return AbsVal{};
  const FnDecl* fn = e.slot >= 0 && size_t(e.slot) < module_.functions.size()
                         ? module_.functions[size_t(e.slot)].decl : nullptr;
  int fi = r_.cfg.function_index(fn);
  if (fi < 0) return is_tracked(e.type) ? lat_.top(e.type) : AbsVal{};
  if (!called_[size_t(fi)]) {
    called_[size_t(fi)] = true;
    summaries_changed_ = true;
  }
  for (size_t p = 0; p < args.size() && p < params_[size_t(fi)].size(); ++p)
    grow(params_[size_t(fi)][p], param_joins_[size_t(fi)], args[p]);
  if (opts_.contexts && fi > 0) {
    AbsVal v;
    bool returns = false;
    if (call_in_context(fi, args, &v, &returns)) {
      if (returns) return is_tracked(e.type) ? v : AbsVal{};
      AbsVal none;  // as below: no context of it returns
      none.type = is_tracked(e.type) ? e.type : Type::Void;
      none.hull = Interval::empty(is_tracked(e.type) ? e.type : Type::Int);
      return none;
    }
    // Recursion past the limit, or the budget spent: the summary, from now on every round.
    if (!fallback_[size_t(fi)]) {
      fallback_[size_t(fi)] = true;
      summaries_changed_ = true;
    }
  }
  // A call whose function never returns (so far) produces no value: what follows is
  // unreachable through it. (A void one says so with a bottom of type Void.)
  if (!may_return_[size_t(fi)]) {
    AbsVal none;
    none.type = is_tracked(e.type) ? e.type : Type::Void;
    none.hull = Interval::empty(is_tracked(e.type) ? e.type : Type::Int);
    return none;
  }
  if (!is_tracked(e.type)) return AbsVal{};
  return ret_[size_t(fi)];
}

// ---- conditions ----

// The state in which `cond` evaluates to `truth`: variables compared with something are
// narrowed to the values that make the comparison come out so.
State Solver::refine(const State& s, const Expr& cond, bool truth) {
  if (!s.reachable) return s;
  switch (cond.height <= kRefineHeight ? cond.kind : ExprKind::StrLit /* too big: no narrowing */) {
    case ExprKind::BoolLit:
      if (cond.bool_value != truth) return unreachable();
      return s;
    case ExprKind::Unary:
      if (cond.unary_op == UnaryOp::Not) return refine(s, *cond.kids[0], !truth);
      break;
    case ExprKind::Var: {
      int v = local_index(cond);
      if (v >= 0) return set_var(s, v, lat_.meet(s.vars[size_t(v)], lat_.constant(Type::Bool, Value::of_bool(truth))));
      break;
    }
    case ExprKind::Binary: {
      BinaryOp op = cond.binary_op;
      if (op == BinaryOp::And || op == BinaryOp::Or) {
        bool both = (op == BinaryOp::And) == truth;  // both sides must come out `truth`
        State first = refine(s, *cond.kids[0], truth);
        if (both) return refine(first, *cond.kids[1], truth);
        State second = refine(refine(s, *cond.kids[0], !truth), *cond.kids[1], truth);
        return join_states(first, second);
      }
      if (op < BinaryOp::Eq || op > BinaryOp::Ge) break;
      Type t = cond.operand_type;
      // !(a < b) is a >= b only without nan.
      if (!truth && t == Type::Float && op != BinaryOp::Eq && op != BinaryOp::Ne) break;
      if (!truth && t == Type::Float && op == BinaryOp::Eq) break;
      BinaryOp holds = truth ? op : negate(op);
      State out = s;
      AbsVal a = eval(*cond.kids[0], s), b = eval(*cond.kids[1], s);
      int va = local_index(*cond.kids[0]), vb = local_index(*cond.kids[1]);
      if (va >= 0) out = set_var(out, va, lat_.refine(holds, t, out.vars[size_t(va)], b));
      if (vb >= 0 && out.reachable) out = set_var(out, vb, lat_.refine(flip(holds), t, out.vars[size_t(vb)], a));
      if (!out.reachable) return out;
      // Nothing to narrow: still, a comparison that cannot come out so cuts the path.
      AbsVal v = lat_.binary(holds, t, a, b, nullptr);
      if (!(v.signs & kTrue) && !v.is_bottom()) return unreachable();
      return out;
    }
    default: break;
  }
  AbsVal v = eval(cond, s);
  if (v.type == Type::Bool && !(v.signs & (truth ? kTrue : kFalse))) return unreachable();
  return s;
}

// The variable index a bare variable expression names in the current graph, when the
// state tracks it (locals; globals at top level only), else -1.
int Solver::local_index(const Expr& e) const {
  const Expr* x = &e;
  if (x->kind != ExprKind::Var || !is_tracked(x->type)) return -1;
  if (x->storage == Storage::Local) return x->slot;
  return fn_ == 0 ? x->slot : -1;
}

// ---- instructions ----

// Runs one instruction on s, in place.
void Solver::exec(const Instr& in, State& s) {
  if (!s.reachable) return;
  const auto& vars = F().vars;
  switch (in.kind) {
    case InstrKind::Eval: {
      AbsVal v = eval(*in.expr, s);
      if (v.type != Type::Unknown && v.is_bottom()) s = unreachable();
      return;
    }
    case InstrKind::Assign: {
      const Stmt& st = *in.stmt;
      AbsVal v = eval(*in.expr, s);
      if (st.has_op && in.var >= 0) {
        Effects fx;
        v = lat_.binary(st.assign_op, st.var_type, s.vars[size_t(in.var)], v, &fx);
        if (reporting_)
          effects(fx, st.op_loc, "'" + st.name + " " + op_symbol(st.assign_op) + "= " + expr_text(*in.expr, 60) + "'");
      }
      if (!is_tracked(st.var_type)) v = AbsVal{};
      if (v.type != Type::Unknown && v.is_bottom()) {
        s = unreachable();
        return;
      }
      if (in.var < 0) return;
      record(&st, v);
      // Whether it is always the same value is decided once every run of it is recorded.
      if (reporting_ && v.type != Type::Unknown && mentions_variable(*in.expr) && !is_literal(*in.expr))
        constant_candidates_[&st] = fn_;
      if (vars[size_t(in.var)].storage == Storage::Global && fn_ == 0)
        grow(globals_[size_t(vars[size_t(in.var)].slot)], global_joins_[size_t(vars[size_t(in.var)].slot)], v);
      put(s, in.var, v);
      return;
    }
    case InstrKind::LoopInit: {
      AbsVal lo = eval(*in.expr, s);
      AbsVal hi = eval(*in.expr2, s);
      if (lo.is_bottom() || hi.is_bottom()) {
        s = unreachable();
        return;
      }
      put(s, in.var, lo);
      put(s, in.var2, hi);
      return;
    }
    case InstrKind::LoopBind: {
      AbsVal v = s.vars[size_t(in.var2)];
      record(in.stmt, v);
      if (in.var < 0) return;
      if (vars[size_t(in.var)].storage == Storage::Global && fn_ == 0)
        grow(globals_[size_t(vars[size_t(in.var)].slot)], global_joins_[size_t(vars[size_t(in.var)].slot)], v);
      put(s, in.var, v);
      return;
    }
    case InstrKind::LoopStep: {
      // i.next + 1 never wraps: the loop test kept i.next below i.end.
      AbsVal one = lat_.constant(Type::Int, Value::of_int(1));
      put(s, in.var, lat_.binary(BinaryOp::Add, Type::Int, s.vars[size_t(in.var)], one, nullptr));
      return;
    }
  }
}

// The states a block hands each successor (same order as succs).
std::vector<State> Solver::transfer(const BasicBlock& b, const State& entry) {
  State s = entry;
  for (const auto& in : b.instrs) exec(in, s);
  std::vector<State> out(b.succs.size(), unreachable());
  if (!s.reachable) return out;
  switch (b.term) {
    case TermKind::Jump:
      if (!out.empty()) out[0] = std::move(s);
      break;
    case TermKind::Branch: {
      AbsVal c = eval(*b.cond, s);
      if (c.is_bottom()) break;
      if (reporting_ && !is_literal(*b.cond)) {
        auto& seen = conditions_[b.cond];
        seen.first |= c.signs;
        seen.second = fn_;
      }
      out[0] = (c.signs & kTrue) ? refine(s, *b.cond, true) : unreachable();
      out[1] = (c.signs & kFalse) ? refine(s, *b.cond, false) : unreachable();
      break;
    }
    case TermKind::LoopTest: {
      const AbsVal& next = s.vars[size_t(b.var)];
      const AbsVal& end = s.vars[size_t(b.var2)];
      State body = set_var(s, b.var, lat_.refine(BinaryOp::Lt, Type::Int, next, end));
      if (body.reachable) body = set_var(body, b.var2, lat_.refine(BinaryOp::Gt, Type::Int, end, next));
      State done = set_var(s, b.var, lat_.refine(BinaryOp::Ge, Type::Int, next, end));
      if (done.reachable) done = set_var(done, b.var2, lat_.refine(BinaryOp::Le, Type::Int, end, next));
      out[0] = body;
      out[1] = done;
      break;
    }
    case TermKind::Return: {
      if (F().fn && F().fn->return_type != Type::Void && b.cond) {
        AbsVal v = eval(*b.cond, s);
        if (F().fn->return_type == Type::Float && v.type == Type::Int) v = lat_.promote(v);
        if (v.type != Type::Unknown && v.is_bottom()) break;
        grow(ret_[size_t(fn_)], ret_joins_[size_t(fn_)], v);
      } else if (b.cond) {
        AbsVal v = eval(*b.cond, s);
        if (v.type != Type::Unknown && v.is_bottom()) break;
      }
      if (!out.empty()) out[0] = s;
      break;
    }
    case TermKind::Exit: break;
  }
  return out;
}

}  // namespace descent::analysis
