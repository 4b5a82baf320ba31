// The fixpoint solver (analysis/analysis.h): abstract states flow through each function's
// control-flow graph until nothing changes, function summaries flow between functions until
// nothing changes, and a last pass over the final states collects the facts and alarms.
//
// A state is one abstract value per variable of the graph (a function's locals and hidden
// loop variables; at top level the globals). A variable not yet assigned holds bottom; the
// whole state is "unreachable" when no execution gets there. An expression whose value is
// bottom (a call that never returns, an error on every path) makes the rest unreachable.
#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "analysis/analysis.h"
#include "lang/runtime_errors.h"

namespace descent::analysis {

const char* alarm_kind_name(Alarm::Kind k) {
  switch (k) {
    case Alarm::Kind::DivisionByZero: return runtime_error_message(RuntimeError::DivisionByZero);
    case Alarm::Kind::InvalidConversion: return runtime_error_message(RuntimeError::InvalidConversion);
    case Alarm::Kind::EndlessRecursion: return "endless recursion";
    case Alarm::Kind::ConditionAlways: return "constant condition";
    case Alarm::Kind::Unreachable: return "unreachable code";
    case Alarm::Kind::ConstantValue: return "constant value";
    case Alarm::Kind::MayWrap: return "wrap-around";
  }
  return "?";
}

namespace {

struct State {
  bool reachable = false;
  std::vector<AbsVal> vars;
};

// How many times a summary may grow by join before it widens: enough for a handful of call
// sites, few enough that a recursion's shrinking argument widens soon.
constexpr int kSummaryJoins = 10;
// Interprocedural rounds before giving up on precision: every summary is widened from then
// on, and the rounds stop once they stop changing (they must: widening).
constexpr int kMaxRounds = 200;
// Conditions taller than this are not used to narrow variables (a 10,000-term && chain would
// cost its size at each of its levels); they still cut a path they make impossible.
constexpr uint32_t kRefineHeight = 64;
// Narrowing passes after each function's ascending fixpoint.
constexpr int kNarrowPasses = 3;

bool is_tracked(Type t) { return t == Type::Int || t == Type::Float || t == Type::Bool; }

bool is_literal(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return true;
    case ExprKind::Promote:
    case ExprKind::Unary: return is_literal(*e.kids[0]);
    default: return false;
  }
}

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

class Solver {
 public:
  Solver(const Program& program, const Module& module, const Options& options, Result* out)
      : program_(program), module_(module), opts_(options), lat_(options.domain), r_(*out) {
    r_.domain = options.domain;
    r_.cfg = build_cfg(program, module);
    r_.lattice_ = std::make_shared<Lattice>(options.domain);
  }

  void run() {
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
  std::vector<bool> may_return_;  // some call of it returns (its exit is reachable)
  std::vector<AbsVal> globals_;  // what functions read: every value top-level code assigns
  std::vector<int> global_joins_;
  bool summaries_changed_ = false;
  bool widen_summaries_ = false;
  std::vector<std::vector<State>> in_;  // [function][block] entry states

  // While reporting (the last pass), effects become alarms and facts.
  bool reporting_ = false;
  int fn_ = 0;  // the function being analysed

  std::vector<bool> assigned_;  // globals the analysed input assigns (at top level)

  void mark_assigned(const Block& b) {
    for (const auto& s : b) {
      if ((s->kind == StmtKind::Assign || s->kind == StmtKind::For) && s->storage == Storage::Global &&
          s->slot >= 0 && size_t(s->slot) < assigned_.size())
        assigned_[size_t(s->slot)] = size_t(s->slot) >= opts_.first_new_global;
      mark_assigned(s->body);
      mark_assigned(s->else_body);
    }
  }

  const FunctionCfg& F() const { return r_.cfg.functions[size_t(fn_)]; }

  // ---- summaries ----
  // Grows a summary by v; widens after kSummaryJoins growths. Marks a change.
  void grow(AbsVal& summary, int& joins, const AbsVal& v) {
    if (v.type == Type::Unknown || v.is_bottom() || lat_.leq(v, summary)) return;
    AbsVal next = lat_.join(summary, v);
    if (joins >= kSummaryJoins || widen_summaries_) next = lat_.widen(summary, next);
    ++joins;
    summary = next;
    summaries_changed_ = true;
  }

  // ---- expressions ----
  // One alarm per kind and place; one wrap-around note per line (a long sum would note
  // every partial sum).
  std::set<std::tuple<int, uint32_t, uint32_t>> alarmed_;
  void alarm(Alarm::Kind kind, bool definite, SourceLoc loc, std::string message) {
    if (!reporting_) return;
    uint32_t col = kind == Alarm::Kind::MayWrap ? 0 : loc.col;
    if (!alarmed_.insert({int(kind), loc.line, col}).second) return;
    r_.alarms.push_back({kind, definite, loc, std::move(message)});
  }

  // Quoted source of an expression for a message: short, and only built when reported.
  static std::string quote(const Expr& e) { return "'" + expr_text(e, 60) + "'"; }

  void effects(const Effects& fx, SourceLoc loc, const Expr& e) {
    if (!reporting_ || !(fx.div_zero_may || fx.conversion_may || fx.may_wrap)) return;
    effects(fx, loc, quote(e));
  }

  void effects(const Effects& fx, SourceLoc loc, const std::string& what) {
    if (fx.div_zero_may)
      alarm(Alarm::Kind::DivisionByZero, fx.div_zero_must, loc,
            fx.div_zero_must ? "division by zero: the divisor of " + what + " is always 0"
                             : "possible division by zero: the divisor of " + what + " may be 0");
    if (fx.conversion_may)
      alarm(Alarm::Kind::InvalidConversion, fx.conversion_must, loc,
            fx.conversion_must ? "invalid conversion: " + what + " is always nan or out of int's range"
                               : "possible invalid conversion: " + what + " may be nan or out of int's range");
    // Only the interval domains keep bounds a wrap can lose; in the others every partial
    // sum of unknowns "may wrap", which says nothing.
    if (fx.may_wrap && (lat_.domain() == Domain::Intervals || lat_.domain() == Domain::Product))
      alarm(Alarm::Kind::MayWrap, false, loc,
            what + " may wrap around (int arithmetic is modulo 2^64): an interval that would leave int's range becomes the whole type");
  }

  AbsVal read_var(const Expr& e, const State& s) {
    if (!is_tracked(e.type)) return AbsVal{};
    if (e.storage == Storage::Local) return s.vars[size_t(e.slot)];
    // At top level the graph's first variables are the globals, in slot order (cfg.cpp).
    if (fn_ == 0 && e.slot >= 0 && size_t(e.slot) < s.vars.size()) return s.vars[size_t(e.slot)];
    return e.slot >= 0 && size_t(e.slot) < globals_.size() ? globals_[size_t(e.slot)] : lat_.top(e.type);
  }

  AbsVal eval(const Expr& e, const State& s) {
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

  AbsVal binary(const Expr& e, const State& s) {
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

  AbsVal call(const Expr& e, const State& s) {
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

  std::map<const Expr*, size_t> mul_index_;  // muls_ by expression
  void note_mul(const Expr& e, const AbsVal& a, const AbsVal& b) {
    auto it = mul_index_.find(&e);
    if (it == mul_index_.end()) return;
    auto& m = r_.muls_[it->second];
    m.reached = m.reached || (!a.is_bottom() && !b.is_bottom());
    m.left = lat_.join(m.left, a);
    m.right = lat_.join(m.right, b);
  }

  // ---- conditions ----
  // The state in which `cond` evaluates to `truth`: variables compared with something are
  // narrowed to the values that make the comparison come out so.
  State refine(const State& s, const Expr& cond, bool truth) {
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
  int local_index(const Expr& e) const {
    const Expr* x = &e;
    if (x->kind != ExprKind::Var || !is_tracked(x->type)) return -1;
    if (x->storage == Storage::Local) return x->slot;
    return fn_ == 0 ? x->slot : -1;
  }

  // No execution gets here: no variables at all (states are copied a lot; an unreachable
  // one costs nothing).
  static State unreachable() { return State{}; }

  // Sets one variable in place; a bottom value means no execution continues.
  static void put(State& s, int v, const AbsVal& value) {
    if (value.type != Type::Unknown && value.is_bottom()) s = unreachable();
    else s.vars[size_t(v)] = value;
  }
  static State set_var(State s, int v, const AbsVal& value) {
    put(s, v, value);
    return s;
  }

  void join_into(State& a, const State& b) const {
    for (size_t i = 0; i < a.vars.size(); ++i) a.vars[i] = lat_.join(a.vars[i], b.vars[i]);
  }

  State join_states(const State& a, const State& b) const {
    if (!a.reachable) return b;
    if (!b.reachable) return a;
    State r = a;
    for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.join(a.vars[i], b.vars[i]);
    return r;
  }

  bool state_leq(const State& a, const State& b) const {
    if (!a.reachable) return true;
    if (!b.reachable) return false;
    for (size_t i = 0; i < a.vars.size(); ++i)
      if (!lat_.leq(a.vars[i], b.vars[i])) return false;
    return true;
  }

  State widen_states(const State& old, const State& next) const {
    if (!old.reachable) return next;
    if (!next.reachable) return old;
    State r = old;
    for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.widen(old.vars[i], next.vars[i]);
    return r;
  }

  State narrow_states(const State& old, const State& next) const {
    if (!old.reachable || !next.reachable) return next;
    State r = old;
    for (size_t i = 0; i < r.vars.size(); ++i) r.vars[i] = lat_.narrow(old.vars[i], next.vars[i]);
    return r;
  }

  // ---- instructions ----
  void record(const Stmt* s, const AbsVal& v) {
    if (!reporting_ || !s) return;
    auto it = r_.stmt_values_.find(s);
    if (it == r_.stmt_values_.end()) r_.stmt_values_[s] = v;
    else it->second = lat_.join(it->second, v);
  }

  // Runs one instruction on s, in place.
  void exec(const Instr& in, State& s) {
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
          if (reporting_ && (fx.div_zero_may || fx.may_wrap))
            effects(fx, st.op_loc, "'" + st.name + " " + op_symbol(st.assign_op) + "= " + expr_text(*in.expr, 60) + "'");
        }
        if (!is_tracked(st.var_type)) v = AbsVal{};
        if (v.type != Type::Unknown && v.is_bottom()) {
          s = unreachable();
          return;
        }
        if (in.var < 0) return;
        record(&st, v);
        if (reporting_ && v.type != Type::Unknown && v.hull.is_point() && mentions_variable(*in.expr) &&
            !is_literal(*in.expr))
          alarm(Alarm::Kind::ConstantValue, true, st.loc,
                st.name + " is always " + lat_.show(v).substr(2) +
                    " here: a constant the AST's fold_constants pass (literals only) cannot see");
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
  std::vector<State> transfer(const BasicBlock& b, const State& entry) {
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
        if (reporting_ && !is_literal(*b.cond) && (c.signs == kTrue || c.signs == kFalse))
          alarm(Alarm::Kind::ConditionAlways, true, b.cond->loc,
                "the condition " + quote(*b.cond) + " is always " + (c.signs == kTrue ? "true" : "false"));
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

  // The state at a function's entry: parameters from the summary, the rest unassigned.
  State entry_state(int f) {
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

  static State unreachable_of(const FunctionCfg&) { return State{}; }

  std::vector<std::string> describe(const State& s) const {
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
  size_t traced_facts_ = 0;
  void trace(int block, const char* phase, bool changed, const State& s) {
    if (reporting_) return;
    if (r_.trace.size() >= opts_.max_trace || traced_facts_ > 1'000'000) {
      r_.trace_truncated = true;
      return;
    }
    r_.trace.push_back({fn_, block, phase, changed, describe(s)});
    traced_facts_ += r_.trace.back().state.size();
  }

  // Reverse post-order of the reachable part of the graph, then the blocks no edge reaches.
  std::vector<int> order() const {
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
  void solve(int f) {
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

  std::vector<std::vector<State>> outs_;         // [block][succ]: what it hands each successor
  std::vector<std::vector<char>> loop_members_;  // [head][block]

  // The state a block's predecessors hand it now.
  State gather(int b) const {
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

  void set_in(int b, State s, const char* phase) {
    auto& in = in_[size_t(fn_)];
    bool changed = !(state_leq(s, in[size_t(b)]) && state_leq(in[size_t(b)], s));
    in[size_t(b)] = std::move(s);
    if (changed) trace(b, phase, true, in[size_t(b)]);
    outs_[size_t(b)] = transfer(F().blocks[size_t(b)], in[size_t(b)]);
  }

  // Blocks in reverse post-order; a loop head (other than `head`, the loop being solved)
  // takes its members with it as one component.
  void solve_list(const std::vector<int>& list, int head) {
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

  void solve_loop(int h, const std::vector<int>& body) {
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

  // ---- the last pass: facts and alarms from the final states ----
  void report() {
    reporting_ = true;
    const auto& fns = r_.cfg.functions;
    // Multiplication sites, for the syntactic / semantic comparison.
    for (const auto& g : fns) {
      std::function<void(const Expr&)> find = [&](const Expr& e) {
        if (e.kind == ExprKind::Binary && e.binary_op == BinaryOp::Mul) {
          mul_index_[&e] = r_.muls_.size();
          r_.muls_.push_back({&e, g.fn, false, AbsVal{}, AbsVal{}});
        }
        for (const auto& k : e.kids)
          if (k) find(*k);
      };
      std::function<void(const Block&)> walk = [&](const Block& body) {
        for (const auto& s : body) {
          if (s->kind == StmtKind::FnDecl) continue;
          if (s->expr) find(*s->expr);
          if (s->expr2) find(*s->expr2);
          walk(s->body);
          walk(s->else_body);
        }
      };
      walk(g.fn ? g.fn->body : program_.body);
    }
    r_.block_states.assign(fns.size(), {});
    for (size_t f = 0; f < fns.size(); ++f) {
      fn_ = int(f);
      const auto& blocks = F().blocks;
      auto& in = in_[f];
      if (in.size() != blocks.size()) in.assign(blocks.size(), unreachable());
      for (size_t b = 0; b < blocks.size(); ++b) {
        r_.block_states[f].push_back(describe(in[b]));
        transfer(blocks[b], in[b]);
      }
      report_unreachable(int(f));
      if (F().fn) {
        report_recursion(int(f));
      }
    }
    collect_facts();
    std::stable_sort(r_.alarms.begin(), r_.alarms.end(), [](const Alarm& a, const Alarm& b) {
      return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
    });
  }

  static bool has_code(const BasicBlock& b) {
    return !b.instrs.empty() || b.term == TermKind::Return || b.term == TermKind::Branch ||
           b.term == TermKind::LoopTest;
  }

  void report_unreachable(int f) {
    const auto& blocks = F().blocks;
    const auto& in = in_[size_t(f)];
    if (!in[0].reachable) return;  // a function nobody calls: not "dead code" inside it
    for (const auto& b : blocks) {
      if (in[size_t(b.id)].reachable || !has_code(b)) continue;
      // Report where a dead region starts: no predecessor is dead code itself.
      bool starts = true;
      for (int p : b.preds)
        if (!in[size_t(p)].reachable && has_code(blocks[size_t(p)])) starts = false;
      if (!starts) continue;
      SourceLoc loc = !b.instrs.empty() ? b.instrs[0].loc : b.term_stmt ? b.term_stmt->loc : b.loc;
      if (!loc.valid()) continue;
      alarm(Alarm::Kind::Unreachable, true, loc, "unreachable code: no execution gets here");
    }
  }

  // The user functions called anywhere in function f's graph.
  std::set<int> callees(int f) const {
    std::set<int> out;
    std::function<void(const Expr&)> find = [&](const Expr& e) {
      if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.kernel < 0 && e.slot >= 0 &&
          size_t(e.slot) < module_.functions.size()) {
        int g = r_.cfg.function_index(module_.functions[size_t(e.slot)].decl);
        if (g >= 0) out.insert(g);
      }
      for (const auto& k : e.kids)
        if (k) find(*k);
    };
    for (const auto& b : r_.cfg.functions[size_t(f)].blocks) {
      for (const auto& in : b.instrs) {
        if (in.expr) find(*in.expr);
        if (in.expr2) find(*in.expr2);
      }
      if (b.cond) find(*b.cond);
    }
    return out;
  }

  bool calls_reach(int from, int to) const {
    std::set<int> seen;
    std::vector<int> todo{from};
    while (!todo.empty()) {
      int g = todo.back();
      todo.pop_back();
      if (!seen.insert(g).second) continue;
      for (int h : callees(g)) {
        if (h == to) return true;
        todo.push_back(h);
      }
    }
    return false;
  }

  // A function that is called but can never return, and at a point it reaches calls itself
  // (directly or through others that never return either): every call nests another one
  // until the stack overflows.
  void report_recursion(int f) {
    const FunctionCfg& g = F();
    if (!called_[size_t(f)] || !in_[size_t(f)][0].reachable || may_return_[size_t(f)]) return;
    for (const auto& b : g.blocks) {
      if (!in_[size_t(f)][size_t(b.id)].reachable) continue;
      const Expr* site = nullptr;
      std::string via;
      std::function<void(const Expr&)> find = [&](const Expr& e) {
        if (site) return;
        for (const auto& k : e.kids)
          if (k) find(*k);
        if (site || e.kind != ExprKind::Call || e.builtin != Builtin::None || e.kernel >= 0 || e.slot < 0 ||
            size_t(e.slot) >= module_.functions.size())
          return;
        int h = r_.cfg.function_index(module_.functions[size_t(e.slot)].decl);
        if (h >= 0 && !may_return_[size_t(h)] && (h == f || calls_reach(h, f))) {
          site = &e;
          via = h == f ? "itself" : r_.cfg.functions[size_t(h)].name + ", which calls " + g.name + " again";
        }
      };
      for (const auto& in : b.instrs) {
        if (in.expr) find(*in.expr);
        if (in.expr2) find(*in.expr2);
      }
      if (b.cond) find(*b.cond);
      if (site) {
        alarm(Alarm::Kind::EndlessRecursion, true, site->loc,
              "endless recursion: " + g.name + " never returns, and every call of it reaches this "
              "call of " + via + " (stack overflow)");
        return;
      }
    }
  }

  // Whether an instruction of a reachable block comes after one that stops every execution
  // (its predecessor in the block left the state unreachable).
  bool dead_before(const FunctionCfg& g, size_t b, const Instr& target) {
    State s = in_[size_t(fn_)][b];
    for (const auto& in : g.blocks[b].instrs) {
      if (&in == &target) return !s.reachable;
      exec(in, s);
    }
    return false;
  }

  void collect_facts() {
    std::set<uint32_t> unreachable_lines;
    auto add = [&](uint32_t line, std::string fact) {
      auto& v = r_.facts_[line];
      if (std::find(v.begin(), v.end(), fact) == v.end()) v.push_back(std::move(fact));
    };
    const SourceFile* here = program_.source.get();
    auto in_file = [&](SourceLoc loc) { return loc.valid() && (loc.file == nullptr || loc.file == here); };
    for (size_t f = 0; f < r_.cfg.functions.size(); ++f) {
      fn_ = int(f);
      const FunctionCfg& g = F();
      if (g.fn && in_file(g.fn->loc)) {
        if (!called_[f] || !in_[f][0].reachable) {
          add(g.fn->loc.line, g.name + " is never called");
        } else {
          for (int p = 0; p < g.num_params; ++p)
            if (is_tracked(g.vars[size_t(p)].type))
              add(g.fn->loc.line, lat_.describe(g.vars[size_t(p)].name, params_[f][size_t(p)]));
          if (is_tracked(g.fn->return_type))
            add(g.fn->loc.line, ret_[f].is_bottom() ? "never returns" : lat_.describe("result", ret_[f]));
        }
      }
      for (size_t b = 0; b < g.blocks.size(); ++b) {
        for (const auto& in : g.blocks[b].instrs) {
          if ((in.kind != InstrKind::Assign && in.kind != InstrKind::LoopBind) || !in.stmt || in.var < 0) continue;
          if (!in_file(in.loc)) continue;
          auto it = r_.stmt_values_.find(in.stmt);
          const std::string& name = g.vars[size_t(in.var)].name;
          if (!in_[f][b].reachable || it == r_.stmt_values_.end()) {
            // Reached, yet no value: its right side fails (or never returns) every time.
            if (in_[f][b].reachable && !dead_before(g, b, in)) add(in.loc.line, name + ": never assigned (fails or never returns here)");
            else unreachable_lines.insert(in.loc.line);
            continue;
          }
          if (it->second.type == Type::Unknown) continue;
          add(in.loc.line, lat_.describe(name, it->second));
        }
      }
    }
    for (uint32_t line : unreachable_lines)
      if (!r_.facts_.count(line)) add(line, "unreachable");
  }
};

// ---- Result ------------------------------------------------------------------------------------

std::vector<std::string> Result::facts_at_line(uint32_t line) const {
  auto it = facts_.find(line);
  return it == facts_.end() ? std::vector<std::string>{} : it->second;
}

bool Result::admits(const Stmt* s, Value v) const {
  auto it = stmt_values_.find(s);
  if (it == stmt_values_.end()) return false;
  return lattice_->contains(it->second, v);
}

std::string Result::fact_for(const Stmt* s) const {
  auto it = stmt_values_.find(s);
  if (it == stmt_values_.end()) return "";
  return lattice_->show(it->second);
}

std::string Result::multiplication_report() const {
  std::string out;
  for (const auto& g : cfg.functions) {
    std::vector<const MulSite*> sites;
    for (const auto& m : muls_)
      if (m.fn == g.fn) sites.push_back(&m);
    std::string who = g.fn ? "fn " + g.name : "the top level";
    if (sites.empty()) {
      out += who + ": no multiplication (syntactic and semantic agree)\n";
      continue;
    }
    out += who + ": syntactically multiplies: its tree has " + std::to_string(sites.size()) + " '*'\n";
    bool any = false;
    for (const auto* m : sites) {
      std::string where = "  line " + std::to_string(m->expr->loc.line) + ", " + expr_text(*m->expr, 60) + ": ";
      if (!m->reached) {
        out += where + "never runs (the analysis finds it unreachable)\n";
        continue;
      }
      auto is_one = [&](const AbsVal& v) {
        return v.hull.is_point() && ((v.type == Type::Int && v.hull.lo == 1) || (v.type == Type::Float && v.hull.flo == 1.0));
      };
      if (is_one(m->left) || is_one(m->right)) {
        out += where + "runs, but one side is always 1: it changes nothing\n";
        continue;
      }
      any = true;
      auto operand = [&](const Expr& k, const AbsVal& v) {
        return is_literal(k) ? expr_text(k) : lattice_->describe(expr_text(k, 40), v);
      };
      out += where + "runs, with " + operand(*m->expr->kids[0], m->left) + " and " +
             operand(*m->expr->kids[1], m->right) + "\n";
    }
    out += std::string("  semantically: ") + (any ? "it multiplies" : "it never really multiplies") + "\n";
  }
  return out;
}

Result analyze(const Program& program, const Module& module, const Options& options) {
  Result r;
  Solver(program, module, options, &r).run();
  return r;
}

}  // namespace descent::analysis
