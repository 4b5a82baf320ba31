// Semantic analysis, statements: conditions, loops, assignments, returns, and definite
// assignment.
//
// Definite assignment is a small data-flow analysis done while walking: `flow_` says which
// variables surely hold a value at this point. An if joins the states of its two branches
// (a variable set in only one is not surely set); a loop body may run zero times, so what
// it sets does not count afterwards, except after "while true", which ends only through a
// break. A variable's type is fixed by its first assignment in text order.
#include "lang/sema_internal.h"

namespace descent::sema_internal {

void Checker::block(Block& b) {
  for (auto& s : b) stmt(*s);
}

void Checker::stmt(Stmt& s) {
  switch (s.kind) {
    case StmtKind::Expr: {
      Type t = expr(s.expr);
      if (t == Type::Str) error(s.expr->loc, "strings can only be printed");
      break;
    }
    case StmtKind::Assign: assign(s); break;
    case StmtKind::If: {
      condition(s.expr);
      Flow in = flow_;
      block(s.body);
      Flow then_flow = flow_;
      flow_ = in;
      block(s.else_body);
      flow_ = join(then_flow, flow_);
      break;
    }
    case StmtKind::While: {
      condition(s.expr);
      Flow in = flow_;
      breaks_.emplace_back();
      ++loop_depth_;
      block(s.body);
      --loop_depth_;
      // "while true" ends only through a break: after it, what every break had.
      bool forever = s.expr->kind == ExprKind::BoolLit && s.expr->bool_value;
      if (forever) {
        Flow out;
        out.set = in.set;
        out.reachable = false;
        for (auto& f : breaks_.back()) out = join(out, f);
        flow_ = out;
      } else {
        flow_ = in;
      }
      breaks_.pop_back();
      break;
    }
    case StmtKind::For: {
      for (ExprPtr* bound : {&s.expr, &s.expr2}) {
        Type t = value(*bound);
        if (t != Type::Unknown && t != Type::Int)
          error(expr_start(**bound), std::string("range bound must be int, got ") + type_name(t));
      }
      if (!resolve_target(s, s.op_loc)) {
        body_of_loop(s.body, true);
        break;
      }
      Type& vt = var_type(s);
      char& first = first_seen(s);
      if (!first) {
        first = 1;
        if (vt == Type::Unknown) set_var_type(s, Type::Int);
      } else if (vt != Type::Unknown && vt != Type::Int) {
        error(s.op_loc, "loop variable '" + s.name + "' must be int, got " + type_name(vt));
      }
      s.var_type = Type::Int;
      Flow in = flow_;
      flow_.set[s.slot] = true;
      body_of_loop(s.body, false);
      flow_ = in;  // the range may be empty: the variable is not surely set afterwards
      break;
    }
    case StmtKind::Break:
    case StmtKind::Continue:
      if (loop_depth_ == 0) {
        error(s.loc, s.kind == StmtKind::Break ? "'break' outside a loop"
                                               : "'continue' outside a loop");
      } else if (s.kind == StmtKind::Break) {
        breaks_.back().push_back(flow_);
      }
      flow_.reachable = false;
      break;
    case StmtKind::Return: ret(s); break;
    case StmtKind::FnDecl: break;  // bodies are checked by check_function()
    case StmtKind::KernelDecl: break;  // checked once, after the passes (KernelChecker)
  }
}

void Checker::body_of_loop(Block& b, bool discard) {
  Flow in = flow_;
  breaks_.emplace_back();
  ++loop_depth_;
  block(b);
  --loop_depth_;
  breaks_.pop_back();
  if (discard) flow_ = in;
}

void Checker::condition(ExprPtr& e) {
  Type t = value(e);
  if (t != Type::Unknown && t != Type::Bool)
    error(expr_start(*e), std::string("condition must be bool, got ") + type_name(t));
}

void Checker::assign(Stmt& s) {
  if (!resolve_target(s, s.loc)) {
    expr(s.expr);
    return;
  }
  Type& vt = var_type(s);
  if (s.has_op) {
    if (flow_.reachable && !flow_.set[s.slot]) error(s.loc, "undefined variable '" + s.name + "'");
    Type rt = value(s.expr);
    if (vt != Type::Unknown && rt != Type::Unknown) {
      if (!is_numeric(vt) || !is_numeric(rt)) {
        error(s.op_loc, std::string("invalid operands to '") + op_symbol(s.assign_op) + "=': " +
                            type_name(vt) + " and " + type_name(rt));
      } else if (vt == Type::Int && rt == Type::Float) {
        error(s.loc, "cannot assign float to int variable '" + s.name + "'");
      } else {
        coerce(s.expr, vt);
      }
    }
  } else {
    Type rt = value(s.expr);
    char& first = first_seen(s);
    if (!first) {
      first = 1;
      if (vt == Type::Unknown && rt != Type::Unknown) set_var_type(s, rt);
    } else if (vt != Type::Unknown && rt != Type::Unknown && vt != rt &&
               !(vt == Type::Float && rt == Type::Int)) {
      error(s.loc, std::string("cannot assign ") + type_name(rt) + " to " + type_name(vt) +
                       " variable '" + s.name + "'");
    }
    coerce(s.expr, var_type(s));
  }
  s.var_type = var_type(s);
  if (s.slot >= 0 && static_cast<size_t>(s.slot) < flow_.set.size()) flow_.set[s.slot] = true;
}

void Checker::ret(Stmt& s) {
  // The returned value is read before control leaves: check it while still reachable.
  struct Leave {
    Flow& f;
    ~Leave() { f.reachable = false; }
  } leave{flow_};
  if (!fn_) {
    error(s.loc, "'return' outside a function");
    if (s.expr) expr(s.expr);
    return;
  }
  s.fn_index = fn_index_;
  const FunctionInfo& info = m_.functions[fn_index_];
  bool inferring = fn_->declared_return == Type::Unknown;
  if (!s.expr) {
    ret_any_void_ = true;
    if (info.ret != Type::Void && info.ret != Type::Unknown) {
      if (inferring)
        error(s.loc, "'" + info.name + "' returns both a value and nothing");
      else
        error(s.loc, "'" + info.name + "' must return " + type_name(info.ret) + ", got nothing");
    }
    return;
  }
  Type t = value(s.expr);
  ret_any_value_ = true;
  if (t != Type::Unknown) {
    if (ret_seen_value_ == Type::Unknown)
      ret_seen_value_ = t;
    else if (is_numeric(ret_seen_value_) && is_numeric(t) && t != ret_seen_value_)
      ret_seen_value_ = Type::Float;
  }
  Type r = info.ret;
  if (r == Type::Unknown || t == Type::Unknown || r == Type::Void) return;
  if (r == Type::Tensor && t == Type::Tensor && fn_->declared_return == Type::Tensor)
    check_returned_shape(*s.expr);
  if (r == Type::Float && t == Type::Int) {
    coerce(s.expr, r);
  } else if (r != t) {
    error(expr_start(*s.expr),
          "'" + info.name + "' must return " + type_name(r) + ", got " + type_name(t));
  }
}

}  // namespace descent::sema_internal
