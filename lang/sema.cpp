#include "lang/sema.h"

#include <algorithm>
#include <functional>

namespace descent {
namespace {

bool is_numeric(Type t) { return t == Type::Int || t == Type::Float; }

// The leftmost position of an expression, for messages about a whole expression.
SourceLoc expr_start(const Expr& e) {
  const Expr* p = &e;
  while ((p->kind == ExprKind::Binary || p->kind == ExprKind::Promote) && !p->kids.empty())
    p = p->kids[0].get();
  return p->loc;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Definite-assignment state: which variables surely hold a value here. Code after a
// return/break/continue is unreachable, and an unreachable state joins as "everything".
struct Flow {
  std::vector<bool> set;
  bool reachable = true;
};

Flow join(const Flow& a, const Flow& b) {
  if (!a.reachable) return b;
  if (!b.reachable) return a;
  Flow out = a;
  for (size_t i = 0; i < out.set.size(); ++i) out.set[i] = a.set[i] && b.set[i];
  return out;
}

class Checker {
 public:
  Checker(Program& p, Module& m, const std::vector<uint8_t>& defined, std::vector<Diagnostic>& d)
      : prog_(p), m_(m), defined_(defined), diags_(d) {}

  bool run() {
    size_t before = diags_.size();
    declare_functions();
    declare_globals();
    // Return types and global types may depend on each other (a function returns a
    // global, a global is set from a call), so check quietly until nothing new is learnt,
    // then once more reporting errors.
    int limit = static_cast<int>(new_functions_.size() + new_globals_.size()) * 2 + 4;
    quiet_ = true;
    for (int i = 0; i < limit; ++i) {
      std::vector<Type> before = environment();
      pass();
      if (environment() == before) break;
    }
    quiet_ = false;
    pass();
    for (int fi : new_functions_) {
      const FunctionInfo& f = m_.functions[fi];
      auto it = redefined_.find(fi);
      if (it != redefined_.end() && (it->second.params != f.params || it->second.ret != f.ret))
        error(f.decl->loc, "cannot redefine '" + f.name + "' with a different signature");
    }
    std::stable_sort(diags_.begin() + static_cast<long>(before), diags_.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return a.loc.line != b.loc.line ? a.loc.line < b.loc.line
                                                       : a.loc.col < b.loc.col;
                     });
    return diags_.size() == before;
  }

 private:
  void error(SourceLoc loc, std::string msg) {
    if (quiet_) return;
    diags_.push_back(Diagnostic{Severity::Error, ErrorKind::Compile, loc, std::move(msg)});
  }

  bool is_function_name(const std::string& name) const {
    return builtin_by_name(name) != Builtin::None || m_.find_function(name) >= 0;
  }

  // ---- declarations ----
  void declare_functions() {
    for (auto& s : prog_.body) {
      if (s->kind != StmtKind::FnDecl) continue;
      FnDecl& fn = *s->fn;
      if (builtin_by_name(fn.name) != Builtin::None) {
        error(fn.loc, "function '" + fn.name + "' is already defined");
        continue;
      }
      if (m_.find_global(fn.name) >= 0) {
        error(fn.loc, "'" + fn.name + "' is already a variable");
        continue;
      }
      FunctionInfo info;
      info.name = fn.name;
      for (auto& p : fn.params) info.params.push_back(p.type);
      info.ret = fn.declared_return;
      info.decl = &fn;
      int idx = m_.find_function(fn.name);
      if (idx >= 0) {
        bool this_unit = std::find(new_functions_.begin(), new_functions_.end(), idx) !=
                         new_functions_.end();
        if (this_unit) {
          error(fn.loc, "function '" + fn.name + "' is already defined");
          continue;
        }
        redefined_[idx] = m_.functions[idx];  // a REPL redefinition: same signature required
        info.version = m_.functions[idx].version + 1;
        m_.functions[idx] = info;
      } else {
        idx = static_cast<int>(m_.functions.size());
        m_.functions.push_back(info);
        m_.function_index[fn.name] = idx;
      }
      fn.index = idx;
      new_functions_.push_back(idx);
    }
  }

  // Every name assigned at top level (also inside top-level if/while/for) is a global.
  void declare_globals() {
    std::function<void(Block&)> walk = [&](Block& b) {
      for (auto& s : b) {
        if (s->kind == StmtKind::Assign || s->kind == StmtKind::For) {
          if (!is_function_name(s->name) && m_.find_global(s->name) < 0) {
            m_.global_index[s->name] = static_cast<int>(m_.globals.size());
            new_globals_.push_back(static_cast<int>(m_.globals.size()));
            m_.globals.push_back(GlobalInfo{s->name, Type::Unknown});
          }
        }
        walk(s->body);
        walk(s->else_body);
      }
    };
    walk(prog_.body);
  }

  // What one pass learns and the next one uses: inferred return types and the types of
  // this input's globals. The quiet passes stop when it no longer changes.
  std::vector<Type> environment() const {
    std::vector<Type> env;
    for (int fi : new_functions_) env.push_back(m_.functions[fi].ret);
    for (int gi : new_globals_) env.push_back(m_.globals[gi].type);
    return env;
  }

  // ---- one pass over the whole unit ----
  void pass() {
    // A global's type comes from its first assignment, whose value may involve a return
    // type only guessed in an earlier pass: recompute it every pass rather than keep a guess.
    for (int gi : new_globals_) m_.globals[gi].type = Type::Unknown;
    global_first_seen_.assign(m_.globals.size(), 0);
    for (size_t i = 0; i < m_.globals.size(); ++i)
      global_first_seen_[i] = m_.globals[i].type != Type::Unknown;
    // Top level first, so function bodies see this pass's global types.
    // Flow tracks globals there; earlier inputs' globals count if they already ran.
    fn_ = nullptr;
    flow_ = Flow{};
    flow_.set.assign(m_.globals.size(), false);
    for (size_t i = 0; i < defined_.size() && i < flow_.set.size(); ++i) flow_.set[i] = defined_[i];
    loop_depth_ = 0;
    block(prog_.body);
    for (int fi : new_functions_) check_function(fi);
  }

  void check_function(int fi) {
    FunctionInfo& info = m_.functions[fi];
    FnDecl& fn = const_cast<FnDecl&>(*info.decl);
    fn_ = &fn;
    fn_index_ = fi;
    locals_.clear();
    local_types_.clear();
    local_names_.clear();
    for (auto& p : fn.params) {
      if (locals_.count(p.name)) {
        error(p.loc, "duplicate parameter '" + p.name + "'");
        continue;
      }
      if (is_function_name(p.name)) {
        error(p.loc, "cannot assign to function '" + p.name + "'");
        continue;
      }
      add_local(p.name, p.type);
    }
    size_t nparams = local_names_.size();
    // Python's rule: every name assigned anywhere in the body is a local of the function.
    std::function<void(Block&)> walk = [&](Block& b) {
      for (auto& s : b) {
        if ((s->kind == StmtKind::Assign || s->kind == StmtKind::For) && !locals_.count(s->name) &&
            !is_function_name(s->name))
          add_local(s->name, Type::Unknown);
        walk(s->body);
        walk(s->else_body);
      }
    };
    walk(fn.body);
    local_first_seen_.assign(local_names_.size(), 0);
    for (size_t i = 0; i < nparams; ++i) local_first_seen_[i] = 1;

    flow_ = Flow{};
    flow_.set.assign(local_names_.size(), false);
    for (size_t i = 0; i < nparams; ++i) flow_.set[i] = true;
    loop_depth_ = 0;
    ret_seen_value_ = Type::Unknown;
    ret_any_value_ = false;
    ret_any_void_ = false;
    block(fn.body);

    if (fn.declared_return == Type::Unknown) {
      // Inference: the join of every returned value's type (int with float is float).
      Type inferred = ret_any_value_ ? ret_seen_value_ : Type::Void;
      info.ret = inferred;
      if (!quiet_ && ret_any_value_ && inferred == Type::Unknown)
        error(fn.loc, "cannot infer the return type of '" + fn.name + "'; annotate it with '-> int'");
    }
    if (info.ret != Type::Void && info.ret != Type::Unknown && flow_.reachable)
      error(fn.loc, "function '" + fn.name + "' may end without returning a value");
    fn.return_type = info.ret;
    fn.local_names = local_names_;
    fn.local_types = local_types_;
    fn_ = nullptr;
  }

  void add_local(const std::string& name, Type t) {
    locals_[name] = static_cast<int>(local_names_.size());
    local_names_.push_back(name);
    local_types_.push_back(t);
  }

  // ---- statements ----
  void block(Block& b) {
    for (auto& s : b) stmt(*s);
  }

  void stmt(Stmt& s) {
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
    }
  }

  void body_of_loop(Block& b, bool discard) {
    Flow in = flow_;
    breaks_.emplace_back();
    ++loop_depth_;
    block(b);
    --loop_depth_;
    breaks_.pop_back();
    if (discard) flow_ = in;
  }

  void condition(ExprPtr& e) {
    Type t = value(e);
    if (t != Type::Unknown && t != Type::Bool)
      error(expr_start(*e), std::string("condition must be bool, got ") + type_name(t));
  }

  // Decides where an assigned name lives. False when it cannot be assigned at all.
  bool resolve_target(Stmt& s, SourceLoc loc) {
    if (is_function_name(s.name)) {
      error(loc, "cannot assign to function '" + s.name + "'");
      return false;
    }
    if (fn_) {
      s.storage = Storage::Local;
      s.slot = locals_.at(s.name);
    } else {
      s.storage = Storage::Global;
      s.slot = m_.find_global(s.name);
    }
    return true;
  }
  Type& var_type(const Stmt& s) {
    return s.storage == Storage::Local ? local_types_[s.slot] : m_.globals[s.slot].type;
  }
  void set_var_type(const Stmt& s, Type t) { var_type(s) = t; }
  // Whether a variable's first assignment (in text order) was already met in this pass:
  // only that one fixes the variable's type.
  char& first_seen(const Stmt& s) {
    return s.storage == Storage::Local ? local_first_seen_[s.slot] : global_first_seen_[s.slot];
  }

  void assign(Stmt& s) {
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

  void ret(Stmt& s) {
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
    if (r == Type::Float && t == Type::Int) {
      coerce(s.expr, r);
    } else if (r != t) {
      error(expr_start(*s.expr),
            "'" + info.name + "' must return " + type_name(r) + ", got " + type_name(t));
    }
  }

  // ---- expressions ----
  // Wraps an int expression in a Promote node where a float is wanted.
  void coerce(ExprPtr& e, Type want) {
    if (want != Type::Float || e->type != Type::Int) return;
    auto p = std::make_unique<Expr>(ExprKind::Promote, e->loc);
    p->type = Type::Float;
    p->height = e->height + 1;
    p->kids.push_back(std::move(e));
    e = std::move(p);
  }

  // An expression used as a value: not a string, not a call that returns nothing.
  Type value(ExprPtr& e) {
    Type t = expr(e);
    if (t == Type::Str) {
      error(e->loc, "strings can only be printed");
      return Type::Unknown;
    }
    if (t == Type::Void) {
      error(e->loc, "'" + e->text + "' does not return a value");
      return Type::Unknown;
    }
    return t;
  }

  Type expr(ExprPtr& ep) {
    Expr& e = *ep;
    switch (e.kind) {
      case ExprKind::IntLit: return e.type = Type::Int;
      case ExprKind::FloatLit: return e.type = Type::Float;
      case ExprKind::BoolLit: return e.type = Type::Bool;
      case ExprKind::StrLit: return e.type = Type::Str;
      case ExprKind::Promote: {
        // Re-checking a tree from an earlier pass: a promotion made on a guessed type is
        // dropped when the guess changed (the caller promotes again if still needed).
        Type t = expr(e.kids[0]);
        if (t != Type::Int) {
          ExprPtr kid = std::move(e.kids[0]);
          ep = std::move(kid);
          return t;
        }
        return e.type = Type::Float;
      }
      case ExprKind::Var: return e.type = variable(e);
      case ExprKind::Unary: {
        Type t = value(e.kids[0]);
        e.operand_type = t;
        if (t == Type::Unknown) return e.type = Type::Unknown;
        bool ok = e.unary_op == UnaryOp::Neg ? is_numeric(t) : t == Type::Bool;
        if (!ok) {
          error(e.loc, std::string("invalid operand to '") + op_symbol(e.unary_op) + "': " +
                           type_name(t));
          return e.type = Type::Unknown;
        }
        return e.type = t;
      }
      case ExprKind::Binary: return e.type = binary(e);
      case ExprKind::Call: return e.type = call(e);
    }
    return Type::Unknown;
  }

  Type variable(Expr& e) {
    if (fn_) {
      auto it = locals_.find(e.text);
      if (it != locals_.end()) {
        e.storage = Storage::Local;
        e.slot = it->second;
        if (flow_.reachable && !flow_.set[e.slot]) {
          error(e.loc, "undefined variable '" + e.text + "'");
          return Type::Unknown;
        }
        return local_types_[e.slot];
      }
    }
    int g = m_.find_global(e.text);
    if (g >= 0) {
      e.storage = Storage::Global;
      e.slot = g;
      if (fn_) {
        e.check_defined = true;  // the function may run before the global is assigned
      } else if (flow_.reachable && !flow_.set[g]) {
        error(e.loc, "undefined variable '" + e.text + "'");
        return Type::Unknown;
      }
      return m_.globals[g].type;
    }
    if (is_function_name(e.text))
      error(e.loc, "'" + e.text + "' is a function, not a variable");
    else
      error(e.loc, "undefined variable '" + e.text + "'");
    return Type::Unknown;
  }

  Type binary(Expr& e) {
    Type a = value(e.kids[0]);
    Type b = value(e.kids[1]);
    if (a == Type::Unknown || b == Type::Unknown) return Type::Unknown;
    auto bad = [&] {
      error(e.loc, std::string("invalid operands to '") + op_symbol(e.binary_op) + "': " +
                       type_name(a) + " and " + type_name(b));
      return Type::Unknown;
    };
    switch (e.binary_op) {
      case BinaryOp::And:
      case BinaryOp::Or:
        if (a != Type::Bool || b != Type::Bool) return bad();
        e.operand_type = Type::Bool;
        return Type::Bool;
      case BinaryOp::Eq:
      case BinaryOp::Ne:
        if (a == Type::Bool && b == Type::Bool) {
          e.operand_type = Type::Bool;
          return Type::Bool;
        }
        [[fallthrough]];
      case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
        if (!is_numeric(a) || !is_numeric(b)) return bad();
        e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
        coerce(e.kids[0], e.operand_type);
        coerce(e.kids[1], e.operand_type);
        return Type::Bool;
      default:
        if (!is_numeric(a) || !is_numeric(b)) return bad();
        e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
        coerce(e.kids[0], e.operand_type);
        coerce(e.kids[1], e.operand_type);
        return e.operand_type;
    }
  }

  bool arity(Expr& e, size_t want) {
    if (e.kids.size() == want) return true;
    error(e.loc, "'" + e.text + "' expects " + plural(want, "argument") + ", got " +
                     std::to_string(e.kids.size()));
    for (auto& k : e.kids) expr(k);
    return false;
  }

  Type call(Expr& e) {
    e.builtin = builtin_by_name(e.text);
    if (e.builtin == Builtin::Print) {
      for (auto& k : e.kids) {
        Type t = expr(k);
        if (t == Type::Void) error(k->loc, "'" + k->text + "' does not return a value");
      }
      return Type::Void;
    }
    if (e.builtin != Builtin::None) return builtin(e);
    int fi = m_.find_function(e.text);
    if (fi < 0) {
      bool is_var = (fn_ && locals_.count(e.text)) || m_.find_global(e.text) >= 0;
      error(e.loc, is_var ? "'" + e.text + "' is not a function"
                          : "undefined function '" + e.text + "'");
      for (auto& k : e.kids) expr(k);
      return Type::Unknown;
    }
    e.slot = fi;
    const FunctionInfo& f = m_.functions[fi];
    if (!arity(e, f.params.size())) return f.ret;
    for (size_t i = 0; i < e.kids.size(); ++i) {
      Type t = value(e.kids[i]);
      Type want = f.params[i];
      if (t == Type::Unknown) continue;
      if (want == Type::Float && t == Type::Int) {
        coerce(e.kids[i], want);
      } else if (t != want) {
        error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                          "' must be " + type_name(want) + ", got " + type_name(t));
      }
    }
    return f.ret;
  }

  Type builtin(Expr& e) {
    size_t n = (e.builtin == Builtin::Min || e.builtin == Builtin::Max) ? 2 : 1;
    if (!arity(e, n)) return Type::Unknown;
    bool float_only = e.builtin != Builtin::Abs && e.builtin != Builtin::Min &&
                      e.builtin != Builtin::Max && e.builtin != Builtin::ToFloat &&
                      e.builtin != Builtin::ToInt;
    bool unknown = false, any_float = false;
    for (size_t i = 0; i < n; ++i) {
      Type t = value(e.kids[i]);
      if (t == Type::Unknown) {
        unknown = true;
      } else if (!is_numeric(t)) {
        error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                          "' must be " + (float_only ? "float" : "int or float") +
                                          ", got " + type_name(t));
        unknown = true;
      } else if (t == Type::Float) {
        any_float = true;
      }
    }
    switch (e.builtin) {
      case Builtin::ToInt: return Type::Int;
      case Builtin::ToFloat: coerce(e.kids[0], Type::Float); return Type::Float;
      case Builtin::Abs: return unknown ? Type::Unknown : e.kids[0]->type;
      case Builtin::Min:
      case Builtin::Max: {
        if (unknown) return Type::Unknown;
        Type t = any_float ? Type::Float : Type::Int;
        coerce(e.kids[0], t);
        coerce(e.kids[1], t);
        e.operand_type = t;
        return t;
      }
      default: coerce(e.kids[0], Type::Float); return Type::Float;
    }
  }

  Program& prog_;
  Module& m_;
  const std::vector<uint8_t>& defined_;
  std::vector<Diagnostic>& diags_;
  bool quiet_ = false;
  std::vector<int> new_functions_, new_globals_;
  std::unordered_map<int, FunctionInfo> redefined_;

  FnDecl* fn_ = nullptr;  // the function being checked, or null at top level
  int fn_index_ = -1;
  std::unordered_map<std::string, int> locals_;
  std::vector<std::string> local_names_;
  std::vector<Type> local_types_;
  Flow flow_;
  std::vector<std::vector<Flow>> breaks_;  // per enclosing loop: the states at its breaks
  int loop_depth_ = 0;
  Type ret_seen_value_ = Type::Unknown;
  bool ret_any_value_ = false, ret_any_void_ = false;

  std::vector<char> local_first_seen_, global_first_seen_;
};

}  // namespace

bool check(Program& program, Module& module, const std::vector<uint8_t>& defined,
           std::vector<Diagnostic>& diags) {
  Module saved_globals_functions;
  saved_globals_functions.globals = module.globals;
  saved_globals_functions.global_index = module.global_index;
  saved_globals_functions.functions = module.functions;
  saved_globals_functions.function_index = module.function_index;
  Checker c(program, module, defined, diags);
  if (c.run()) return true;
  module.globals = std::move(saved_globals_functions.globals);
  module.global_index = std::move(saved_globals_functions.global_index);
  module.functions = std::move(saved_globals_functions.functions);
  module.function_index = std::move(saved_globals_functions.function_index);
  return false;
}

}  // namespace descent
