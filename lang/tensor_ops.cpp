#include "lang/tensor_ops.h"

#include <algorithm>

#include "lang/tensor_checks.h"

namespace descent {
namespace {

bool is_tensor_builtin(Builtin b) { return b >= Builtin::Zeros && b <= Builtin::SumAll; }

bool failed(TensorFailure* fail, SourceLoc loc, std::string message) {
  *fail = TensorFailure{loc, std::move(message)};
  return false;
}

// t[i, j] (a float) or s[i] (an int): rank and bounds are checked before asking the runtime.
bool element(TensorRuntime& r, const Expr& e, const Value* in, Value* out, TensorFailure* fail) {
  int64_t h = in[0].i;
  std::vector<int64_t> index;
  for (size_t i = 0; i < e.kids.size(); ++i) index.push_back(in[1 + i].i);
  const std::vector<int64_t>& dims = e.type == Type::Int ? r.shape_dims(h) : r.tensor_dims(h);
  std::string err;
  if (e.type == Type::Int) {
    err = check_shape_index(index[0], dims.size());
    if (!err.empty()) return failed(fail, e.kids[0]->loc, err);
    *out = Value::of_int(dims[static_cast<size_t>(index[0])]);
    return true;
  }
  int blame = check_element_index(dims, index, e.text, &err);
  if (blame == 0) return failed(fail, e.loc, err);
  if (blame > 0) return failed(fail, e.kids[size_t(blame - 1)]->loc, err);
  double v;
  if (!r.element(h, index, &v, &err)) return failed(fail, e.loc, err);
  *out = Value::of_float(v);
  return true;
}

bool builtin(TensorRuntime& r, const Expr& e, const Value* in, Value* out, TensorFailure* fail) {
  int64_t t = 0;
  std::string err;
  bool ok = true;
  switch (e.builtin) {
    case Builtin::Zeros:
    case Builtin::Ones: ok = r.create(e.builtin, r.shape_dims(in[0].i), {}, &t, &err); break;
    case Builtin::Rand: ok = r.create(e.builtin, r.shape_dims(in[0].i), {in[1].i}, &t, &err); break;
    case Builtin::Full:
      ok = r.create(e.builtin, r.shape_dims(in[0].i), {full_value_bits(in[1].f)}, &t, &err);
      break;
    case Builtin::Arange:
      if (in[0].i < 1) return failed(fail, e.loc, check_arange(in[0].i));
      ok = r.create(e.builtin, {in[0].i}, {}, &t, &err);
      break;
    case Builtin::Load: ok = r.load(e.kids[0]->text, &t, &err); break;
    case Builtin::Save: ok = r.save(in[0].i, e.kids[1]->text, &err); break;
    case Builtin::Argmax: case Builtin::Reshape: case Builtin::Flatten: case Builtin::Rows:
    case Builtin::Eq: case Builtin::Grad: case Builtin::Param: {
      // Tensors and ints apart, as TensorRuntime::host_op takes them (a shape: its dims).
      std::vector<int64_t> tensors, ints;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        Type k = e.kids[i]->type;
        if (k == Type::Tensor) tensors.push_back(in[i].i);
        else if (k == Type::Shape) ints = r.shape_dims(in[i].i);
        else ints.push_back(in[i].i);
      }
      if (e.builtin == Builtin::Argmax && ints.empty()) ints.push_back(-1);  // the last axis
      ok = r.host_op(e.builtin, tensors, ints, &t, &err);
      break;
    }
    default: {  // mean, sum_all
      double v = 0;
      if (!(e.builtin == Builtin::Mean ? r.mean(in[0].i, &v, &err) : r.sum_all(in[0].i, &v, &err)))
        return failed(fail, e.loc, err);
      *out = Value::of_float(v);
      return true;
    }
  }
  if (!ok) return failed(fail, e.loc, err);
  *out = Value::of_int(t);
  return true;
}

}  // namespace

bool is_tensor_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::List: case ExprKind::Index: case ExprKind::Field: return true;
    case ExprKind::Call: return e.kernel >= 0 || is_tensor_builtin(e.builtin);
    default: return false;
  }
}

size_t tensor_operand_count(const Expr& e) {
  if (e.kind == ExprKind::Index) return 1 + e.kids.size();
  if (e.kind == ExprKind::Call && e.builtin == Builtin::Load) return 0;
  if (e.kind == ExprKind::Call && e.builtin == Builtin::Save) return 1;
  return e.kids.size();
}

bool check_shape_dim(const Expr& dim, int64_t d, TensorFailure* fail) {
  std::string why = check_shape_dim(d);
  return why.empty() || failed(fail, dim.loc, why);
}

bool tensor_expr(TensorRuntime* rt, const Module& m, const Expr& e, const Value* in, Value* out,
                 TensorFailure* fail) {
  if (!rt) return failed(fail, e.loc, "tensor code needs a tensor runtime");
  TensorRuntime& r = *rt;
  switch (e.kind) {
    case ExprKind::List: {
      std::vector<int64_t> dims;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (!check_shape_dim(*e.kids[i], in[i].i, fail)) return false;
        dims.push_back(in[i].i);
      }
      *out = Value::of_int(r.make_shape(dims));
      return true;
    }
    case ExprKind::Index: return element(r, e, in, out, fail);
    case ExprKind::Field: *out = Value::of_int(r.make_shape(r.tensor_dims(in[0].i))); return true;
    default: break;
  }
  if (e.kernel < 0) return builtin(r, e, in, out, fail);
  std::vector<int64_t> args;
  for (size_t i = 0; i < e.kids.size(); ++i) args.push_back(in[i].i);
  int64_t t;
  std::string err;
  if (!r.call_kernel(*m.kernels[static_cast<size_t>(e.kernel)].decl, args, &t, &err))
    return failed(fail, e.loc, err);
  *out = Value::of_int(t);
  return true;
}

bool show_value(TensorRuntime* rt, Value v, Type t, SourceLoc loc, std::string* out,
                TensorFailure* fail) {
  if (t != Type::Shape && t != Type::Tensor) {
    *out = format_value(v, t);
    return true;
  }
  if (!rt) return failed(fail, loc, "tensor code needs a tensor runtime");
  if (t == Type::Shape) {
    *out = format_shape(rt->shape_dims(v.i));
    return true;
  }
  std::string err;
  if (!rt->format(v.i, out, &err)) return failed(fail, loc, err);
  return true;
}

bool has_tensor_signature(const FnDecl& fn) {
  if (fn.declared_return == Type::Tensor) return true;
  for (const Param& p : fn.params)
    if (p.type == Type::Tensor) return true;
  return false;
}

bool check_tensor_args(TensorRuntime* rt, const Expr& call, const FnDecl& fn, const Value* args,
                       DimBindings* bound, TensorFailure* fail) {
  bound->clear();
  for (size_t i = 0; i < fn.params.size() && i < call.kids.size(); ++i) {
    const Param& p = fn.params[i];
    if (p.type != Type::Tensor) continue;
    if (!rt) return failed(fail, call.loc, "tensor code needs a tensor runtime");
    const std::vector<int64_t>& dims = rt->tensor_dims(args[i].i);
    if (!fits_declared(p.tensor, dims, *bound))
      return failed(fail, call.kids[i]->loc,
                    "argument '" + p.name + "' of '" + fn.name + "' must have shape " +
                        declared_shape(p.tensor) + ", got " + format_shape(dims));
  }
  return true;
}

bool check_tensor_result(TensorRuntime* rt, const FnDecl& fn, Value ret, SourceLoc ret_loc,
                         DimBindings bound, TensorFailure* fail) {
  if (!rt) return failed(fail, ret_loc, "tensor code needs a tensor runtime");
  const std::vector<int64_t>& dims = rt->tensor_dims(ret.i);
  if (!fits_declared(fn.return_tensor, dims, bound))
    return failed(fail, ret_loc,
                  "'" + fn.name + "' must return a tensor of shape " +
                      declared_shape(fn.return_tensor) + ", got " + format_shape(dims));
  return true;
}

void global_tensor_roots(const Module& m, const GlobalStore& g, std::vector<int64_t>* roots) {
  for (size_t i = 0; i < m.globals.size() && i < g.values.size(); ++i)
    if (m.globals[i].type == Type::Tensor && g.defined[i]) roots->push_back(g.values[i].i);
}

}  // namespace descent

namespace descent {

std::string tensor_site_text(const TensorSite& s, const Module* m) {
  auto fn_name = [&](int32_t f) {
    return m && f >= 0 && static_cast<size_t>(f) < m->functions.size() ? m->functions[f].name
                                                                       : "f" + std::to_string(f);
  };
  const Expr& e = *s.expr;
  std::string n = std::to_string(s.operands);
  switch (s.step) {
    case TensorStep::Dim: return "check dim";
    case TensorStep::Args: return "check args " + fn_name(s.fn) + " " + n;
    case TensorStep::Result: return "check result " + fn_name(s.fn);
    case TensorStep::Expr: break;
  }
  switch (e.kind) {
    case ExprKind::List: return "shape " + n;
    case ExprKind::Index: return (e.type == Type::Int ? "dim " : "index ") + e.text + " " +
                                 std::to_string(e.kids.size());
    case ExprKind::Field: return "." + e.text;
    default: break;
  }
  if (e.kernel >= 0) return "kernel " + e.text + " " + n;
  std::string b = builtin_name(e.builtin);
  if (e.builtin == Builtin::Load) return b + " \"" + e.kids[0]->text + "\"";
  if (e.builtin == Builtin::Save) return b + " \"" + e.kids[1]->text + "\"";
  return b;
}

}  // namespace descent
