// Semantic analysis, tensors in ordinary code: shapes, indexing, .shape, the tensor
// builtins and calls to kernels; and which functions touch tensors at all.
//
// Tensor values are opaque to the scalar language: no operator works on them (the prelude
// has add and mul), only builtins and kernels. Only the ast engine runs tensor code, so the
// checker also marks which functions and inputs use tensors, for the compiled engines to
// leave out and the Session to route.
#include "lang/sema_internal.h"

namespace descent::sema_internal {

bool Checker::touches(const Expr& e) const {
  if (is_tensor_type(e.type) || e.kernel >= 0 || is_tensor_builtin(e.builtin)) return true;
  if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.slot >= 0 &&
      static_cast<size_t>(e.slot) < m_.functions.size()) {
    const FnDecl* d = m_.functions[e.slot].decl;
    if (d && d->uses_tensors) return true;
  }
  for (const auto& k : e.kids)
    if (touches(*k)) return true;
  return false;
}

bool Checker::touches(const Block& b) const {
  for (const auto& s : b) {
    if (s->kind == StmtKind::FnDecl || s->kind == StmtKind::KernelDecl) continue;
    if (is_tensor_type(s->var_type)) return true;
    if ((s->expr && touches(*s->expr)) || (s->expr2 && touches(*s->expr2))) return true;
    if (touches(s->body) || touches(s->else_body)) return true;
  }
  return false;
}

void Checker::mark_tensor_users() {
  for (int fi : new_functions_) {
    FnDecl& fn = const_cast<FnDecl&>(*m_.functions[fi].decl);
    fn.uses_tensors = is_tensor_type(fn.return_type);
    for (Type t : fn.local_types) fn.uses_tensors = fn.uses_tensors || is_tensor_type(t);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int fi : new_functions_) {
      FnDecl& fn = const_cast<FnDecl&>(*m_.functions[fi].decl);
      if (!fn.uses_tensors && touches(fn.body)) fn.uses_tensors = changed = true;
    }
  }
  prog_.uses_tensors = touches(prog_.body);
}

Type Checker::not_on_tensors(SourceLoc loc, const char* op, Type t) {
  std::string msg = std::string("operator '") + op + "' is not defined on " +
                    (t == Type::Tensor ? "tensors" : "shapes");
  std::string sym = op;
  if (t == Type::Tensor && (sym == "+" || sym == "*"))
    msg += std::string(" (use the prelude's ") + (sym == "+" ? "add" : "mul") + "(a, b))";
  error(loc, msg);
  return Type::Unknown;
}

// f(a, b) where f is a kernel: every argument a tensor; shapes are checked when it runs.
Type Checker::kernel_call(Expr& e, int ki) {
  e.kernel = ki;
  const KernelDecl& k = *m_.kernels[ki].decl;
  if (!arity(e, k.params.size())) return Type::Tensor;
  for (size_t i = 0; i < e.kids.size(); ++i) {
    Type t = value(e.kids[i]);
    if (t != Type::Unknown && t != Type::Tensor)
      error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                        "' must be tensor, got " + type_name(t));
  }
  return Type::Tensor;
}

Type Checker::tensor_builtin(Expr& e) {
  std::vector<Type> want;
  Type ret = Type::Tensor;
  switch (e.builtin) {
    case Builtin::Zeros: case Builtin::Ones: want = {Type::Shape}; break;
    case Builtin::Rand: want = {Type::Shape, Type::Int}; break;
    case Builtin::Arange: want = {Type::Int}; break;
    case Builtin::Load: want = {Type::Str}; break;
    case Builtin::Save: want = {Type::Tensor, Type::Str}; ret = Type::Void; break;
    default: want = {Type::Tensor}; ret = Type::Float; break;  // sum_all
  }
  if (!arity(e, want.size())) return ret;
  for (size_t i = 0; i < want.size(); ++i) {
    // A file name is the one place besides print where a string literal may appear.
    Type t = want[i] == Type::Str ? expr(e.kids[i]) : value(e.kids[i]);
    if (t == Type::Unknown || t == want[i]) continue;
    std::string msg = "argument " + std::to_string(i + 1) + " of '" + e.text + "' must be " +
                      type_name(want[i]) + ", got " + type_name(t);
    if (want[i] == Type::Shape && t == Type::Int) msg += " (a shape is a list, e.g. [2, 3])";
    error(expr_start(*e.kids[i]), msg);
  }
  return ret;
}

// [2, 3]: a shape, every dimension an int.
Type Checker::shape_literal(Expr& e) {
  if (e.kids.empty()) error(e.loc, "a shape needs at least one dimension");
  bool ok = !e.kids.empty();
  for (auto& k : e.kids) {
    Type t = value(k);
    if (t == Type::Unknown) {
      ok = false;
    } else if (t != Type::Int) {
      error(expr_start(*k), std::string("shape dimensions must be int, got ") + type_name(t));
      ok = false;
    }
  }
  return ok ? Type::Shape : Type::Unknown;
}

// t[i, j] reads one element of a tensor (a float); s[i] one dimension of a shape (an int).
Type Checker::element(Expr& e) {
  Type vt = variable(e);
  bool ok = true;
  for (auto& k : e.kids) {
    Type t = value(k);
    if (t == Type::Unknown) {
      ok = false;
    } else if (t != Type::Int) {
      error(expr_start(*k), std::string("index must be int, got ") + type_name(t));
      ok = false;
    }
  }
  if (vt == Type::Unknown) return Type::Unknown;
  if (vt == Type::Tensor) return ok ? Type::Float : Type::Unknown;
  if (vt == Type::Shape) {
    if (e.kids.size() != 1) {
      error(e.loc, "a shape takes one index, got " + std::to_string(e.kids.size()));
      return Type::Unknown;
    }
    return ok ? Type::Int : Type::Unknown;
  }
  error(e.loc, "'" + e.text + "' is " + (vt == Type::Int ? "an " : "a ") + type_name(vt) +
                   "; only tensors and shapes can be indexed");
  return Type::Unknown;
}

// t.shape
Type Checker::field(Expr& e) {
  Type t = value(e.kids[0]);
  if (e.text != "shape") {
    error(e.loc, "unknown field '" + e.text + "' (tensors have only .shape)");
    return Type::Unknown;
  }
  if (t == Type::Unknown) return Type::Unknown;
  if (t != Type::Tensor) {
    error(e.loc, std::string("'.shape' needs a tensor, got ") + type_name(t));
    return Type::Unknown;
  }
  return Type::Shape;
}

}  // namespace descent::sema_internal
