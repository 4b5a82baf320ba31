// Semantic analysis, tensors in ordinary code: shapes, indexing, .shape, the tensor
// builtins and calls to kernels; and which functions touch tensors at all.
//
// Tensor values are opaque to the scalar language: no operator works on them (the prelude
// has add and mul), only builtins and kernels. Only the ast engine runs tensor code, so the
// checker also marks which functions and inputs use tensors, for the compiled engines to
// leave out and the Session to route.
#include <algorithm>

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
    // The axis is optional: argmax(logits) is along the last axis, the class per row.
    case Builtin::Argmax: want = {Type::Tensor, Type::Int}; break;
    case Builtin::Reshape: want = {Type::Tensor, Type::Shape}; break;
    case Builtin::Flatten: want = {Type::Tensor}; break;
    case Builtin::Rows: want = {Type::Tensor, Type::Int, Type::Int}; break;
    case Builtin::Eq: want = {Type::Tensor, Type::Tensor}; break;
    // grad(loss, x): d sum(loss) / dx, shaped like x; param(t): t computed now, as a
    // parameter with no history (docs/training.md).
    case Builtin::Grad: want = {Type::Tensor, Type::Tensor}; break;
    case Builtin::Param: want = {Type::Tensor}; break;
    case Builtin::Full: want = {Type::Shape, Type::Float}; break;
    default: want = {Type::Tensor}; ret = Type::Float; break;  // mean, sum_all
  }
  if (e.builtin == Builtin::Argmax && e.kids.size() != 2) {
    if (e.kids.size() != 1) {
      error(e.loc, "'argmax' expects 1 or 2 arguments (a tensor, then an axis), got " +
                       std::to_string(e.kids.size()));
      for (auto& k : e.kids) expr(k);
      return ret;
    }
    want.pop_back();
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

// ---- declared shapes of functions: what sema can know of a tensor's shape -------------------
// A tensor parameter the function never assigns has its declared shape; a kernel's or a
// function's declared result follows from its arguments' shapes (named dims bound by them).
// Anything else (rand's shape is a run-time value, a reassigned variable) is unknown here,
// and the walker checks it when the function returns.
namespace {
bool assigns(const Block& b, const std::string& name) {
  for (const auto& s : b) {
    if (s->kind == StmtKind::Assign && s->name == name) return true;
    if (assigns(s->body, name) || assigns(s->else_body, name)) return true;
  }
  return false;
}

// Binds each named dim of `params` to the dim the argument has there; nullopt where an
// argument's shape is unknown or does not fit (a run-time error then says how).
std::optional<std::vector<Dim>> result_of(
    const std::vector<Param>& params, const std::vector<std::optional<std::vector<Dim>>>& args,
    const TensorType& result) {
  std::vector<std::pair<std::string, Dim>> bound;
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    if (params[i].type != Type::Tensor) continue;
    if (!args[i] || args[i]->size() != params[i].tensor.dims.size()) return std::nullopt;
    for (size_t d = 0; d < args[i]->size(); ++d) {
      const Dim& want = params[i].tensor.dims[d];
      if (want.name.empty()) continue;
      bound.emplace_back(want.name, (*args[i])[d]);
    }
  }
  std::vector<Dim> out;
  for (const Dim& d : result.dims) {
    if (d.name.empty()) {
      out.push_back(d);
      continue;
    }
    auto it = std::find_if(bound.begin(), bound.end(), [&](const auto& b) { return b.first == d.name; });
    if (it == bound.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

std::string dims_text(const std::vector<Dim>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + (dims[i].name.empty() ? std::to_string(dims[i].value) : dims[i].name);
  return out + "]";
}
}  // namespace

std::optional<std::vector<Dim>> Checker::static_shape(const Expr& e) const {
  if (e.type != Type::Tensor) return std::nullopt;
  if (e.kind == ExprKind::Var && e.storage == Storage::Local && fn_ && e.slot >= 0 &&
      size_t(e.slot) < fn_->params.size()) {
    const Param& p = fn_->params[size_t(e.slot)];
    if (p.type == Type::Tensor && !assigns(fn_->body, p.name)) return p.tensor.dims;
    return std::nullopt;
  }
  if (e.kind != ExprKind::Call || e.builtin != Builtin::None) return std::nullopt;
  std::vector<std::optional<std::vector<Dim>>> args;
  for (const auto& k : e.kids) args.push_back(static_shape(*k));
  if (e.kernel >= 0 && size_t(e.kernel) < m_.kernels.size()) {
    const KernelDecl* k = m_.kernels[size_t(e.kernel)].decl;
    if (!k || !k->has_return_type) return std::nullopt;
    return result_of(k->params, args, k->return_type);
  }
  if (e.slot >= 0 && size_t(e.slot) < m_.functions.size()) {
    const FnDecl* f = m_.functions[size_t(e.slot)].decl;
    if (!f || f->declared_return != Type::Tensor) return std::nullopt;
    return result_of(f->params, args, f->return_tensor);
  }
  return std::nullopt;
}

// fn f(x: f32[1, 4]) -> f32[1, 3] { return relu(x) }: an error here, at the returned value,
// where its shape is known to differ from the declared one (a number against another
// number, or a different rank); a dim named on either side may still match at run time.
void Checker::check_returned_shape(const Expr& value) {
  std::optional<std::vector<Dim>> got = static_shape(value);
  if (!got) return;
  const std::vector<Dim>& want = fn_->return_tensor.dims;
  bool differs = got->size() != want.size();
  for (size_t d = 0; !differs && d < want.size(); ++d)
    differs = want[d].name.empty() && (*got)[d].name.empty() && want[d].value != (*got)[d].value;
  if (differs)
    error(expr_start(value), "'" + fn_->name + "' must return a tensor of shape " +
                                 dims_text(want) + ", got " + dims_text(*got));
}

}  // namespace descent::sema_internal
