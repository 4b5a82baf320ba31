// The C twin of a checked program (analysis/c_twin.h): one pass over the tree, one line of C
// per statement (so Eva's alarms map back by line), and a Frama_C_show_each_<var> call after
// each assignment, at each iteration's start and at each function's entry.
//
// The body is written first (it decides which helpers, math functions and probes are used),
// then the prelude that declares them; the sites' C lines are shifted by the prelude's length.
#include "analysis/c_twin.h"

#include "analysis/cfg.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace descent::analysis {
namespace {

// Names a Descent identifier may not keep in C: keywords, what the twin itself declares, and
// the C library's names (compilers and Eva know them as builtins: a Descent `fn pow` must not
// be taken for C's).
const std::set<std::string>& reserved() {
  static const std::set<std::string> r = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "typedef", "union", "unsigned", "void", "volatile", "while", "asm", "typeof",
      "_Bool", "_Complex", "_Imaginary", "main", "int64_t", "uint64_t", "INT64_MIN",
      "INT64_MAX", "INT64_C", "NULL", "errno", "assert", "bool", "true", "false",
      // <math.h>
      "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acosh",
      "asinh", "atanh", "exp", "exp2", "expm1", "log", "log10", "log2", "log1p", "logb", "pow",
      "sqrt", "cbrt", "hypot", "ceil", "floor", "fabs", "fmod", "round", "trunc", "rint",
      "nearbyint", "lround", "llround", "lrint", "llrint", "frexp", "ldexp", "modf", "fmin",
      "fmax", "fdim", "fma", "nan", "isnan", "isinf", "isfinite", "signbit", "copysign", "erf",
      "erfc", "tgamma", "lgamma", "gamma", "remainder", "remquo", "scalbn", "scalbln", "ilogb",
      "nextafter", "nexttoward", "j0", "j1", "jn", "y0", "y1", "yn", "sqrtf", "expf", "logf",
      "powf", "fabsf", "floorf", "ceilf", "sinf", "cosf", "fmodf", "roundf",
      // <stdlib.h>, <stdio.h>, <string.h> and the like
      "abs", "labs", "llabs", "div", "ldiv", "exit", "abort", "atexit", "malloc", "calloc",
      "realloc", "free", "atoi", "atol", "atof", "strtol", "strtod", "rand", "srand", "qsort",
      "bsearch", "getenv", "system", "printf", "fprintf", "sprintf", "snprintf", "puts",
      "putchar", "scanf", "fopen", "fclose", "memcpy", "memmove", "memset", "memcmp", "strlen",
      "strcmp", "strcpy", "strcat", "time", "clock", "signal", "raise", "setjmp", "longjmp",
      "alloca", "index", "stdin", "stdout", "stderr"};
  return r;
}

bool reserved_name(const std::string& s) {
  return reserved().count(s) || s.rfind("Frama_C", 0) == 0 || s.rfind("descent_", 0) == 0 ||
         s.rfind("__", 0) == 0 || (s.size() > 1 && s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z');
}

// A scope's C names: a Descent name keeps its spelling unless C or the twin needs it.
class Names {
 public:
  explicit Names(const std::set<std::string>& taken = {}) : taken_(taken) {}
  std::string fresh(const std::string& base) {
    std::string s = base;
    for (int k = 1; reserved_name(s) || taken_.count(s); ++k)
      s = base + (k == 1 ? "_" : "_" + std::to_string(k));
    taken_.insert(s);
    return s;
  }
  const std::set<std::string>& taken() const { return taken_; }

 private:
  std::set<std::string> taken_;
};

const char* c_type(Type t) {
  switch (t) {
    case Type::Int: return "int64_t";
    case Type::Float: return "double";
    case Type::Bool: return "int";
    default: return nullptr;
  }
}

const char* use_helper(Type t) {
  return t == Type::Float ? "descent_use_float" : t == Type::Bool ? "descent_use_bool" : "descent_use_int";
}

std::string paren(std::string s, int prec, int outer) { return prec < outer ? "(" + s + ")" : s; }

// An int expression C would compute in (32-bit) int: literals and their negations.
bool literal_only(const Expr& e) {
  if (e.kind == ExprKind::IntLit) return true;
  return e.kind == ExprKind::Unary && !e.kids.empty() && literal_only(*e.kids[0]);
}

// Calls f on every expression node of a block's statements (not of the functions it declares).
template <class F>
void each_expr(const Expr& e, const F& f) {
  f(e);
  for (const auto& k : e.kids)
    if (k) each_expr(*k, f);
}
template <class F>
void each_expr(const Block& body, const F& f) {
  for (const auto& s : body) {
    if (s->kind == StmtKind::FnDecl) continue;
    for (const Expr* e : {s->expr.get(), s->expr2.get()})
      if (e) each_expr(*e, f);
    each_expr(s->body, f);
    each_expr(s->else_body, f);
  }
}

// The user functions a block calls (function indexes of the Module), in order.
void calls_in(const Block& body, std::vector<int>* out) {
  each_expr(body, [&](const Expr& e) {
    if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.kernel < 0 && e.slot >= 0) out->push_back(e.slot);
  });
}

// The globals (by slot) a block reads.
void globals_read(const Block& body, std::set<int>* out) {
  each_expr(body, [&](const Expr& e) {
    if (e.kind == ExprKind::Var && e.storage == Storage::Global) out->insert(e.slot);
  });
}

class Writer {
 public:
  Writer(const Program& p, const Module& m, CTwin* out) : p_(p), m_(m), out_(out) {}

  bool write(std::string* error) {
    collect_functions();
    name_file_scope();
    for (const FnDecl* fn : fns_) function(*fn);
    script();
    if (!error_.empty()) {
      *error = error_;
      return false;
    }
    assemble();
    return true;
  }

 private:
  struct Line {
    std::string text;
    uint32_t dline = 0;
    std::string fn;  // the C function
  };
  const Program& p_;
  const Module& m_;
  CTwin* out_;
  std::string error_;
  std::vector<Line> body_;
  std::vector<TwinSite> sites_;          // c_line: index into body_ (fixed in assemble)
  std::vector<const FnDecl*> fns_;       // emitted, in order
  std::map<const FnDecl*, std::string> fn_c_;
  std::map<const FnDecl*, std::string> signatures_;  // as the definitions write them
  std::vector<std::string> global_c_;    // by global slot
  std::set<int> statics_;                // globals some function reads: file scope
  Names file_names_;
  Names* scope_ = nullptr;               // the current function's names
  std::vector<std::string> local_c_;     // the current function's locals, by slot
  std::string fn_name_ = "<script>";     // the current function, in Descent's words
  std::string c_fn_;                     // ... and in C's
  int indent_ = 0;
  std::set<std::string> helpers_;        // used helpers and math functions
  std::map<std::string, Type> probes_;   // probe name -> its argument's type
  std::map<std::pair<std::string, Type>, std::string> probe_of_;

  void fail(SourceLoc loc, const std::string& what) {
    if (!error_.empty()) return;
    error_ = (loc.valid() ? "line " + std::to_string(loc.line) + ": " : std::string()) + what +
             " has no C twin (the comparison with Eva covers scalar programs)";
  }
  void emit(const std::string& text, uint32_t dline) {
    body_.push_back({std::string(size_t(indent_) * 2, ' ') + text, dline, c_fn_});
  }

  // ---- which functions, and their names --------------------------------------------------

  void collect_functions() {
    std::vector<int> todo;
    std::set<const FnDecl*> seen;
    auto add = [&](const FnDecl* fn) {
      if (fn && seen.insert(fn).second) {
        fns_.push_back(fn);
        calls_in(fn->body, &todo);
      }
    };
    for (const auto& s : p_.body) {
      if (s->kind == StmtKind::FnDecl && s->fn) add(s->fn.get());
      if (s->kind == StmtKind::KernelDecl) fail(s->loc, "a kernel");
    }
    calls_in(p_.body, &todo);
    for (size_t i = 0; i < todo.size(); ++i)
      if (todo[i] >= 0 && size_t(todo[i]) < m_.functions.size()) add(m_.functions[size_t(todo[i])].decl);
  }

  void name_file_scope() {
    for (const FnDecl* fn : fns_) fn_c_[fn] = file_names_.fresh(fn->name);
    for (const FnDecl* fn : fns_) globals_read(fn->body, &statics_);
    for (const auto& g : m_.globals) global_c_.push_back(file_names_.fresh(g.name));
    // Calls, for which entry reaches which function.
    auto callees = [&](const Block& body) {
      std::vector<int> idx;
      calls_in(body, &idx);
      std::vector<std::string> names;
      std::set<std::string> seen;
      for (int i : idx)
        if (i >= 0 && size_t(i) < m_.functions.size() && fn_c_.count(m_.functions[size_t(i)].decl)) {
          const std::string& c = fn_c_[m_.functions[size_t(i)].decl];
          if (seen.insert(c).second) names.push_back(c);
        }
      return names;
    };
    out_->calls.push_back({"main", callees(p_.body)});
    for (const FnDecl* fn : fns_) {
      out_->functions.push_back({fn->name, fn_c_[fn]});
      out_->calls.push_back({fn_c_[fn], callees(fn->body)});
    }
    auto from_main = out_->reachable_from("main");
    std::set<std::string> reached(from_main.begin(), from_main.end());
    for (const FnDecl* fn : fns_)
      if (!reached.count(fn_c_[fn])) out_->uncalled.push_back(fn_c_[fn]);
  }

  std::string var_c(Storage storage, int slot, SourceLoc loc) {
    if (storage == Storage::Global && slot >= 0 && size_t(slot) < global_c_.size()) return global_c_[size_t(slot)];
    if (storage == Storage::Local && slot >= 0 && size_t(slot) < local_c_.size()) return local_c_[size_t(slot)];
    fail(loc, "a variable the twin cannot place");
    return "0";
  }

  // ---- probes --------------------------------------------------------------------------------

  void probe(const std::string& c_var, const std::string& var, Type t, SourceLoc loc, bool param) {
    std::string& name = probe_of_[{c_var, t}];
    if (name.empty()) {
      name = "Frama_C_show_each_" + c_var;
      if (probes_.count(name)) name += std::string("_") + type_name(t);
      probes_[name] = t;
    }
    TwinSite site;
    site.c_line = uint32_t(body_.size());
    site.line = loc.line;
    site.col = loc.col;
    site.function = fn_name_;
    site.var = var;
    site.type = t;
    site.param = param;
    site.probe = name;
    sites_.push_back(site);
    emit(name + "(" + c_var + ");", loc.line);
  }

  // ---- expressions --------------------------------------------------------------------------

  bool scalar(const Expr& e) {
    if (c_type(e.type)) return true;
    fail(e.loc, std::string("a value of type ") + type_name(e.type) + " ('" + expr_text(e, 40) + "')");
    return false;
  }

  std::string int_lit(int64_t v) {
    if (v == INT64_MIN) return "INT64_MIN";
    return std::to_string(v);
  }

  std::string float_lit(double v) {
    if (std::isnan(v)) return "(0.0 / 0.0)";
    if (std::isinf(v)) return v > 0 ? "(1.0 / 0.0)" : "(-1.0 / 0.0)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }

  std::string expr(const Expr& e, int outer) {
    switch (e.kind) {
      case ExprKind::IntLit: return paren(int_lit(e.int_value), e.int_value < 0 ? 7 : 8, outer);
      case ExprKind::FloatLit: return paren(float_lit(e.float_value), e.float_value < 0 ? 7 : 8, outer);
      case ExprKind::BoolLit: return e.bool_value ? "1" : "0";
      case ExprKind::Var:
        if (!scalar(e)) return "0";
        return var_c(e.storage, e.slot, e.loc);
      case ExprKind::Promote: return paren("(double)" + expr(*e.kids[0], 8), 7, outer);
      case ExprKind::Unary: {
        std::string k = expr(*e.kids[0], 7);
        if (!k.empty() && k[0] == '-') k = "(" + k + ")";
        return paren(std::string(e.unary_op == UnaryOp::Neg ? "-" : "!") + k, 7, outer);
      }
      case ExprKind::Binary: return binary(e, outer);
      case ExprKind::Call: return call(e, outer);
      case ExprKind::StrLit: fail(e.loc, "a string outside print's arguments"); return "0";
      default: fail(e.loc, "tensor code ('" + expr_text(e, 40) + "')"); return "0";
    }
  }

  std::string binary(const Expr& e, int outer) {
    const Expr& a = *e.kids[0];
    const Expr& b = *e.kids[1];
    if (e.binary_op == BinaryOp::Mod && e.operand_type == Type::Float) {
      helpers_.insert("fmod");
      return "fmod(" + expr(a, 0) + ", " + expr(b, 0) + ")";
    }
    int p = binary_precedence(e.binary_op);
    // Parentheses C compilers ask for though C's precedence agrees: && inside ||, a comparison
    // inside == or !=.
    auto side = [&](const Expr& k, int at) {
      bool ask = k.kind == ExprKind::Binary &&
                 ((e.binary_op == BinaryOp::Or && k.binary_op == BinaryOp::And) ||
                  (p == 3 && (binary_precedence(k.binary_op) == 3 || binary_precedence(k.binary_op) == 4)));
      return ask ? "(" + expr(k, 0) + ")" : expr(k, at);
    };
    std::string left = side(a, p);
    // Two int literals: C would compute in 32-bit int; the twin's ints are 64-bit.
    if (e.operand_type == Type::Int && literal_only(a) && literal_only(b)) left = "(int64_t)" + expr(a, 8);
    return paren(left + " " + op_symbol(e.binary_op) + " " + side(b, p + 1), p, outer);
  }

  std::string args(const Expr& e) {
    std::string s;
    for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + expr(*e.kids[i], 0);
    return s;
  }

  std::string call(const Expr& e, int outer) {
    if (e.kernel >= 0) {
      fail(e.loc, "a kernel call ('" + e.text + "')");
      return "0";
    }
    if (e.builtin == Builtin::None) {
      const FnDecl* fn = e.slot >= 0 && size_t(e.slot) < m_.functions.size() ? m_.functions[size_t(e.slot)].decl : nullptr;
      if (!fn || !fn_c_.count(fn)) {
        fail(e.loc, "a call of a function the twin does not have ('" + e.text + "')");
        return "0";
      }
      return fn_c_[fn] + "(" + args(e) + ")";
    }
    bool is_int = e.type == Type::Int;
    switch (e.builtin) {
      case Builtin::Sqrt: case Builtin::Exp: case Builtin::Log: case Builtin::Sin:
      case Builtin::Cos: case Builtin::Floor:
        helpers_.insert(builtin_name(e.builtin));
        return std::string(builtin_name(e.builtin)) + "(" + args(e) + ")";
      case Builtin::Abs:
        helpers_.insert(is_int ? "descent_abs" : "fabs");
        return std::string(is_int ? "descent_abs" : "fabs") + "(" + args(e) + ")";
      case Builtin::Min:
      case Builtin::Max: {
        std::string h = std::string(is_int ? "descent_" : "descent_f") + (e.builtin == Builtin::Min ? "min" : "max");
        helpers_.insert(h);
        return h + "(" + args(e) + ")";
      }
      case Builtin::ToFloat: return expr(*e.kids[0], outer);  // sema promoted its argument
      case Builtin::ToInt:
        if (e.kids[0]->type == Type::Int) return expr(*e.kids[0], outer);
        return paren("(int64_t)" + expr(*e.kids[0], 8), 7, outer);
      case Builtin::Print: fail(e.loc, "print inside an expression"); return "0";
      default: fail(e.loc, std::string("the builtin '") + builtin_name(e.builtin) + "'"); return "0";
    }
  }

  // ---- statements --------------------------------------------------------------------------

  void block(const Block& body) {
    ++indent_;
    for (const auto& s : body) stmt(*s);
    --indent_;
  }

  void stmt(const Stmt& s) {
    uint32_t L = s.loc.line;
    switch (s.kind) {
      case StmtKind::Expr: {
        const Expr& e = *s.expr;
        if (e.kind == ExprKind::Call && e.builtin == Builtin::Print) {
          for (const auto& k : e.kids)
            if (k->kind != ExprKind::StrLit && scalar(*k)) {
              helpers_.insert(use_helper(k->type));
              emit(std::string(use_helper(k->type)) + "(" + expr(*k, 0) + ");", L);
            }
          return;
        }
        if (e.type == Type::Void) {
          emit(expr(e, 0) + ";", L);
        } else if (scalar(e)) {
          helpers_.insert(use_helper(e.type));
          emit(std::string(use_helper(e.type)) + "(" + expr(e, 0) + ");", L);
        }
        return;
      }
      case StmtKind::Assign: {
        if (!c_type(s.var_type)) {
          fail(s.loc, std::string("a variable of type ") + type_name(s.var_type) + " ('" + s.name + "')");
          return;
        }
        std::string v = var_c(s.storage, s.slot, s.loc);
        std::string rhs = expr(*s.expr, 0);
        if (!s.has_op) emit(v + " = " + rhs + ";", L);
        else if (s.assign_op == BinaryOp::Mod && s.var_type == Type::Float) {
          helpers_.insert("fmod");
          emit(v + " = fmod(" + v + ", " + rhs + ");", L);
        } else {
          emit(v + " " + op_symbol(s.assign_op) + "= " + rhs + ";", L);
        }
        probe(v, s.name, s.var_type, s.loc, false);
        return;
      }
      case StmtKind::If: {
        emit("if (" + expr(*s.expr, 0) + ") {", L);
        block(s.body);
        if (s.has_else) {
          emit("} else {", L);
          block(s.else_body);
        }
        emit("}", 0);
        return;
      }
      case StmtKind::While:
        emit("while (" + expr(*s.expr, 0) + ") {", L);
        block(s.body);
        emit("}", 0);
        return;
      case StmtKind::For: {
        std::string v = var_c(s.storage, s.slot, s.loc);
        std::string next = scope_->fresh(v + "_next"), end = scope_->fresh(v + "_end");
        emit("for (int64_t " + next + " = " + expr(*s.expr, 0) + ", " + end + " = " + expr(*s.expr2, 0) + "; " +
                 next + " < " + end + "; " + next + "++) {",
             L);
        ++indent_;
        emit(v + " = " + next + ";", L);
        probe(v, s.name, Type::Int, s.loc, false);
        --indent_;
        block(s.body);
        emit("}", 0);
        return;
      }
      case StmtKind::Break: emit("break;", L); return;
      case StmtKind::Continue: emit("continue;", L); return;
      case StmtKind::Return:
        if (fn_name_ == "<script>") emit("return 0;", L);
        else if (s.expr && s.expr->type != Type::Void) emit("return " + expr(*s.expr, 0) + ";", L);
        else emit("return;", L);
        return;
      case StmtKind::FnDecl: return;
      case StmtKind::KernelDecl: fail(s.loc, "a kernel"); return;
    }
  }

  // ---- functions and the script ------------------------------------------------------------

  std::string signature(const FnDecl& fn) {
    const char* ret = fn.return_type == Type::Void ? "void" : c_type(fn.return_type);
    if (!ret) {
      fail(fn.loc, std::string("a function returning ") + type_name(fn.return_type) + " ('" + fn.name + "')");
      ret = "void";
    }
    std::string s = std::string(ret) + " " + fn_c_[&fn] + "(";
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const char* t = c_type(fn.params[i].type);
      if (!t) fail(fn.params[i].loc, std::string("a parameter of type ") + type_name(fn.params[i].type));
      s += (i ? ", " : "") + std::string(t ? t : "int") + " " + (i < local_c_.size() ? local_c_[i] : fn.params[i].name);
    }
    return s + (fn.params.empty() ? "void)" : ")");
  }

  void function(const FnDecl& fn) {
    Names names(file_names_.taken());
    scope_ = &names;
    fn_name_ = fn.name;
    c_fn_ = fn_c_[&fn];
    local_c_.clear();
    for (const auto& n : fn.local_names) local_c_.push_back(names.fresh(n));
    signatures_[&fn] = signature(fn);
    emit(signatures_[&fn] + " {", fn.loc.line);
    indent_ = 1;
    for (size_t i = fn.params.size(); i < fn.local_names.size(); ++i) {
      Type t = i < fn.local_types.size() ? fn.local_types[i] : Type::Unknown;
      if (!c_type(t)) {
        fail(fn.loc, std::string("a local of type ") + type_name(t) + " ('" + fn.local_names[i] + "')");
        continue;
      }
      emit(std::string(c_type(t)) + " " + local_c_[i] + ";", fn.loc.line);
    }
    for (size_t i = 0; i < fn.params.size() && i < local_c_.size(); ++i)
      if (c_type(fn.params[i].type)) probe(local_c_[i], fn.params[i].name, fn.params[i].type, fn.loc, true);
    indent_ = 0;
    block(fn.body);
    emit("}", 0);
    emit("", 0);
    scope_ = nullptr;
  }

  void script() {
    Names names(file_names_.taken());
    scope_ = &names;
    fn_name_ = "<script>";
    c_fn_ = "main";
    local_c_.clear();
    emit("int main(void) {", 0);
    indent_ = 1;
    for (size_t g = 0; g < m_.globals.size(); ++g) {
      if (statics_.count(int(g))) continue;
      const char* t = c_type(m_.globals[g].type);
      if (t) emit(std::string(t) + " " + global_c_[g] + ";", 0);
    }
    indent_ = 0;
    block(p_.body);
    indent_ = 1;
    emit("return 0;", 0);
    indent_ = 0;
    emit("}", 0);
    scope_ = nullptr;
  }

  // ---- the prelude, then the body ------------------------------------------------------------

  void assemble() {
    std::vector<std::string> pre;
    out_->file_name = p_.source ? p_.source->name() : "<input>";
    // The file's name without its folder: the twin is the same wherever the program lies (a
    // recorded Eva log names the twin it is of by a hash of its text).
    std::string name = out_->file_name.substr(out_->file_name.rfind('/') + 1);
    pre.push_back("/* C twin of " + name + ", for Frama-C's Eva (descent analyze --compare-eva).");
    pre.push_back(" *");
    pre.push_back(" * int is int64_t, float is double, bool is int (0 or 1). Descent's int arithmetic");
    pre.push_back(" * wraps around (modulo 2^64); C leaves signed overflow undefined, so where Descent");
    pre.push_back(" * wraps Eva reports a signed-overflow alarm and goes on with the values that did not.");
    pre.push_back(" * print is dropped: descent_use_*() receives its arguments, which are still evaluated.");
    pre.push_back(" * Frama_C_show_each_X(x) after each assignment, at each iteration's start (the loop");
    pre.push_back(" * variable) and on entry to each function (its parameters) asks Eva for the value. */");
    pre.push_back("#include <stdint.h>");
    pre.push_back("");
    static const std::vector<std::pair<std::string, std::string>> helpers = {
        {"sqrt", "double sqrt(double);"}, {"exp", "double exp(double);"},
        {"log", "double log(double);"}, {"sin", "double sin(double);"},
        {"cos", "double cos(double);"}, {"floor", "double floor(double);"},
        {"fabs", "double fabs(double);"}, {"fmod", "double fmod(double, double);"},
        {"descent_min", "static int64_t descent_min(int64_t a, int64_t b) { return b < a ? b : a; }"},
        {"descent_max", "static int64_t descent_max(int64_t a, int64_t b) { return b > a ? b : a; }"},
        {"descent_abs", "static int64_t descent_abs(int64_t a) { return a < 0 ? -a : a; }"},
        {"descent_fmin", "static double descent_fmin(double a, double b) { return b < a ? b : a; }"},
        {"descent_fmax", "static double descent_fmax(double a, double b) { return b > a ? b : a; }"},
        {"descent_use_int", "static void descent_use_int(int64_t v) { (void)v; }"},
        {"descent_use_float", "static void descent_use_float(double v) { (void)v; }"},
        {"descent_use_bool", "static void descent_use_bool(int v) { (void)v; }"},
    };
    bool any = false;
    for (const auto& [h, decl] : helpers)
      if (helpers_.count(h)) {
        pre.push_back(decl);
        any = true;
      }
    if (any) pre.push_back("");
    for (const auto& [probe, t] : probes_) pre.push_back("void " + probe + "(" + c_type(t) + ");");
    if (!probes_.empty()) pre.push_back("");
    bool statics = false;
    for (size_t g = 0; g < m_.globals.size(); ++g)
      if (statics_.count(int(g)) && c_type(m_.globals[g].type)) {
        pre.push_back(std::string("static ") + c_type(m_.globals[g].type) + " " + global_c_[g] + ";");
        statics = true;
      }
    if (statics) pre.push_back("");
    for (const FnDecl* fn : fns_) {
      pre.push_back(signatures_[fn] + ";");
    }
    if (!fns_.empty()) pre.push_back("");

    out_->descent_line.assign(1, 0);
    out_->c_function.assign(1, "");
    out_->text.clear();
    for (const auto& l : pre) {
      out_->text += l + "\n";
      out_->descent_line.push_back(0);
      out_->c_function.push_back("");
    }
    uint32_t offset = uint32_t(pre.size());
    for (const auto& l : body_) {
      out_->text += l.text + "\n";
      out_->descent_line.push_back(l.dline);
      out_->c_function.push_back(l.fn);
    }
    for (auto& s : sites_) s.c_line += offset + 1;
    out_->sites = std::move(sites_);
  }
};

}  // namespace

std::string CTwin::descent_name(const std::string& c_name) const {
  if (c_name == "main") return "<script>";
  for (const auto& [d, c] : functions)
    if (c == c_name) return d;
  return "";
}

std::vector<std::string> CTwin::reachable_from(const std::string& entry) const {
  std::vector<std::string> out{entry};
  std::set<std::string> seen{entry};
  for (size_t i = 0; i < out.size(); ++i)
    for (const auto& [caller, callees] : calls)
      if (caller == out[i])
        for (const auto& c : callees)
          if (seen.insert(c).second) out.push_back(c);
  return out;
}

bool make_c_twin(const Program& program, const Module& module, CTwin* out, std::string* error) {
  *out = CTwin{};
  if (program.uses_tensors) {
    *error = "tensor code has no C twin (the comparison with Eva covers scalar programs)";
    return false;
  }
  return Writer(program, module, out).write(error);
}

std::string twin_hash(const CTwin& twin) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : twin.text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace descent::analysis
