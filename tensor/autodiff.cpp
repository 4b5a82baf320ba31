// Adjoint kernels derived from index notation (autodiff.h has the rules).
//
// The derivation works on a small expression tree of its own (AE below), not on the AST: it
// builds many new expressions, renames axes in them and prints them back as Descent source,
// and a tree of shared immutable nodes makes that cheap and keeps the AST untouched. The
// printed kernel is then parsed and checked like any user kernel, so what runs is exactly
// the text a student reads.
#include "tensor/autodiff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"

namespace descent::tensor {

const KernelDecl* Adjoint::kernel() const {
  if (!program || program->body.empty() || !program->body[0]->kernel) return nullptr;
  return program->body[0]->kernel.get();
}

namespace {

// ---- The expression tree ------------------------------------------------------------------

enum class K { Num, Axis, Load, Neg, Bin, Call, Reduce };
struct AE;
using AP = std::shared_ptr<const AE>;
struct AE {
  K k = K::Num;
  double num = 0;
  std::string name;               // Axis: the axis; Load: the buffer; Call: the function;
                                  // Reduce: "sum", "max" or "min"
  BinaryOp op = BinaryOp::Add;    // Bin: + - * / or a comparison (a 0/1 mask)
  std::vector<AP> kids;           // Load: the indices; Neg: 1; Bin: 2; Call: args; Reduce: body
  std::vector<std::string> axes;  // Reduce: its axes
  SourceLoc loc;                  // Load: the access in the forward kernel (for refusals)
};

AP make(K k, std::string name = {}, std::vector<AP> kids = {}) {
  auto e = std::make_shared<AE>();
  e->k = k;
  e->name = std::move(name);
  e->kids = std::move(kids);
  return e;
}
AP num(double v) {
  auto e = std::make_shared<AE>();
  e->num = v;
  return e;
}
AP axis(const std::string& a) { return make(K::Axis, a); }
AP load(const std::string& buf, const std::vector<std::string>& idx) {
  std::vector<AP> kids;
  for (const auto& a : idx) kids.push_back(axis(a));
  return make(K::Load, buf, std::move(kids));
}
AP raw_bin(BinaryOp op, AP a, AP b) {
  auto e = std::make_shared<AE>();
  e->k = K::Bin;
  e->op = op;
  e->kids = {std::move(a), std::move(b)};
  return e;
}
bool is_num(const AP& e, double v) { return e->k == K::Num && e->num == v; }

// The constructors the derivation uses fold the zeros and ones the chain rule produces, so
// relu's gradient prints as `dout[i, j] * (x[i, j] >= 0.0)`, not `dout[i, j] * (1.0 * ...)`.
AP neg(AP a) {
  if (a->k == K::Num) return num(-a->num);
  if (a->k == K::Neg) return a->kids[0];
  return make(K::Neg, {}, {std::move(a)});
}
AP add(AP a, AP b) {
  if (is_num(a, 0)) return b;
  if (is_num(b, 0)) return a;
  if (a->k == K::Num && b->k == K::Num) return num(a->num + b->num);
  if (b->k == K::Neg) return raw_bin(BinaryOp::Sub, std::move(a), b->kids[0]);
  return raw_bin(BinaryOp::Add, std::move(a), std::move(b));
}
AP sub(AP a, AP b) {
  if (is_num(b, 0)) return a;
  if (is_num(a, 0)) return neg(std::move(b));
  if (a->k == K::Num && b->k == K::Num) return num(a->num - b->num);
  return raw_bin(BinaryOp::Sub, std::move(a), std::move(b));
}
AP mul(AP a, AP b) {
  if (is_num(a, 0) || is_num(b, 0)) return num(0);
  if (is_num(a, 1)) return b;
  if (is_num(b, 1)) return a;
  if (is_num(a, -1)) return neg(std::move(b));
  if (is_num(b, -1)) return neg(std::move(a));
  if (a->k == K::Num && b->k == K::Num) return num(a->num * b->num);
  if (b->k == K::Bin && b->op == BinaryOp::Div && is_num(b->kids[0], 1))  // a * (1 / c): a / c
    return raw_bin(BinaryOp::Div, std::move(a), b->kids[1]);
  return raw_bin(BinaryOp::Mul, std::move(a), std::move(b));
}
AP div(AP a, AP b) {
  if (is_num(a, 0)) return num(0);
  if (is_num(b, 1)) return a;
  return raw_bin(BinaryOp::Div, std::move(a), std::move(b));
}
AP cmp(BinaryOp op, AP a, AP b) { return raw_bin(op, std::move(a), std::move(b)); }
AP call(const std::string& f, std::vector<AP> args) { return make(K::Call, f, std::move(args)); }

// ---- Printing as Descent source -------------------------------------------------------------

std::string number(double v, bool index) {
  if (index) return std::to_string(static_cast<int64_t>(v));
  char buf[40];
  for (int p = 1; p <= 17; ++p) {  // the shortest text that reads back as the same double
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// Binding power, as the parser's: 1 + -, 2 * /, 3 unary minus, 4 atoms. A comparison prints
// in parentheses always (a mask reads best that way); a reduction binds loosest of all.
int prec(const AE& e) {
  switch (e.k) {
    case K::Num: return e.num < 0 ? 3 : 4;
    case K::Neg: return 3;
    case K::Bin:
      if (is_kernel_comparison(e.op)) return 4;
      return e.op == BinaryOp::Mul || e.op == BinaryOp::Div ? 2 : 1;
    case K::Reduce: return 0;
    default: return 4;
  }
}

std::string print(const AE& e, bool index = false);
std::string wrap(const AE& e, int at_least, bool index) {
  std::string s = print(e, index);
  return prec(e) < at_least ? "(" + s + ")" : s;
}
std::string print(const AE& e, bool index) {
  switch (e.k) {
    case K::Num: return number(e.num, index);
    case K::Axis: return e.name;
    case K::Load: {
      std::string s = e.name + "[";
      for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + print(*e.kids[i], true);
      return s + "]";
    }
    case K::Neg: return "-" + wrap(*e.kids[0], 4, index);
    case K::Bin: {
      if (is_kernel_comparison(e.op))
        return "(" + print(*e.kids[0], index) + " " + op_symbol(e.op) + " " +
               print(*e.kids[1], index) + ")";
      int p = prec(e);
      bool left_assoc = e.op == BinaryOp::Sub || e.op == BinaryOp::Div;
      return wrap(*e.kids[0], p, index) + " " + op_symbol(e.op) + " " +
             wrap(*e.kids[1], left_assoc ? p + 1 : p, index);
    }
    case K::Call: {
      std::string s = e.name + "(";
      for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + print(*e.kids[i]);
      return s + ")";
    }
    case K::Reduce: {
      std::string s = e.name + "(";
      for (size_t i = 0; i < e.axes.size(); ++i) s += (i ? ", " : "") + e.axes[i];
      const AE& body = *e.kids[0];
      bool minus = body.k == K::Neg || (body.k == K::Num && body.num < 0);
      return s + ") " + (minus ? "(" + print(body) + ")" : print(body));
    }
  }
  return "?";
}

// ---- From the AST ---------------------------------------------------------------------------

AP from_ast(const Expr& e, bool index) {
  switch (e.kind) {
    case ExprKind::IntLit: return num(static_cast<double>(e.int_value));
    case ExprKind::FloatLit: return num(e.float_value);
    case ExprKind::Axis: return axis(e.text);
    case ExprKind::Index: {
      std::vector<AP> idx;
      for (const auto& k : e.kids) idx.push_back(from_ast(*k, true));
      auto l = std::make_shared<AE>(*make(K::Load, e.text, std::move(idx)));
      l->loc = e.loc;
      return l;
    }
    case ExprKind::Unary: return make(K::Neg, {}, {from_ast(*e.kids[0], index)});
    case ExprKind::Binary:
      return raw_bin(e.binary_op, from_ast(*e.kids[0], index), from_ast(*e.kids[1], index));
    case ExprKind::Call: {
      std::vector<AP> args;
      for (const auto& k : e.kids) args.push_back(from_ast(*k, false));
      return call(builtin_name(e.builtin), std::move(args));
    }
    case ExprKind::Reduce: {
      auto r = std::make_shared<AE>(*make(K::Reduce, e.text, {from_ast(*e.kids[0], false)}));
      r->axes = e.axes;
      r->loc = e.loc;
      return r;
    }
    default: return num(0);  // sema admits nothing else in a kernel
  }
}

// Every node of the tree, preorder (index subtrees included).
void walk(const AP& e, const std::function<void(const AP&)>& f) {
  f(e);
  for (const auto& k : e->kids) walk(k, f);
}

// The tree with `from` replaced by `to` (pointer identity).
AP replace(const AP& e, const AE* from, const AP& to) {
  if (e.get() == from) return to;
  bool changed = false;
  std::vector<AP> kids;
  for (const auto& k : e->kids) {
    kids.push_back(replace(k, from, to));
    changed |= kids.back() != k;
  }
  if (!changed) return e;
  auto c = std::make_shared<AE>(*e);
  c->kids = std::move(kids);
  return c;
}

// Axes renamed all at once (a -> b and b -> a swap them).
AP rename(const AP& e, const std::map<std::string, std::string>& to) {
  if (e->k == K::Axis) {
    auto it = to.find(e->name);
    return it == to.end() ? e : axis(it->second);
  }
  auto c = std::make_shared<AE>(*e);
  for (auto& k : c->kids) k = rename(k, to);
  for (auto& a : c->axes) {
    auto it = to.find(a);
    if (it != to.end()) a = it->second;
  }
  return c;
}

// Axes the expression uses as a whole index of some access: those have an extent there.
std::set<std::string> whole_axes(const AP& e) {
  std::set<std::string> out;
  walk(e, [&](const AP& n) {
    if (n->k == K::Load)
      for (const auto& i : n->kids)
        if (i->k == K::Axis) out.insert(i->name);
  });
  return out;
}

// ---- The derivation -------------------------------------------------------------------------

// One stage in the normal form: T[idx] = body, or T[idx] = red(raxes) body.
struct Stage {
  std::string target;
  std::vector<std::string> idx;
  std::string red;  // "", "sum", "max", "min"
  std::vector<std::string> raxes;
  AP body;
};

std::string stage_text(const Stage& s) {
  std::string t = "  " + s.target + "[";
  for (size_t i = 0; i < s.idx.size(); ++i) t += (i ? ", " : "") + s.idx[i];
  t += "] = ";
  if (s.red.empty()) return t + print(*s.body);
  auto r = std::make_shared<AE>(*make(K::Reduce, s.red, {s.body}));
  r->axes = s.raxes;
  return t + print(*r);
}

// One occurrence's share of a buffer's gradient: dX[ix] += sum(sum_axes) factor.
struct Contribution {
  std::vector<std::string> ix;
  std::vector<std::string> sum_axes;
  AP factor;
};

// A buffer's gradient, once all its contributions are in: a stage's buffer, or (when it is
// elementwise and some axis would have no extent as a stage of its own) an expression over
// `axes` substituted wherever it is used.
struct Gradient {
  std::string buffer;  // non-empty: materialized
  std::vector<std::string> axes;
  AP expr;
  AP at(const std::vector<std::string>& idx) const {
    if (!buffer.empty()) return load(buffer, idx);
    std::map<std::string, std::string> to;
    for (size_t i = 0; i < axes.size(); ++i) to[axes[i]] = idx[i];
    return rename(expr, to);
  }
};

class Deriver {
 public:
  explicit Deriver(const KernelDecl& k) : k_(k) {}

  bool run(Diagnostic* error) {
    error_ = error;
    reserve_names();
    if (!normalize() || !shapes()) return false;
    dout_ = fresh("d" + k_.result);
    grads_[k_.result] = Gradient{dout_, result_idx(), nullptr};
    for (size_t s = forward_.size(); s-- > 0;) {
      const Stage& st = forward_[s];
      if (st.target != k_.result) {
        if (!contributions_.count(st.target)) continue;  // the result does not use it
        grads_[st.target] = finish(st.target, st.idx, false);
      }
      if (!differentiate(st)) return false;
    }
    for (size_t p = 0; p < k_.params.size(); ++p) {
      const Param& prm = k_.params[p];
      std::vector<std::string> idx;
      auto it = contributions_.find(prm.name);
      if (it != contributions_.end()) {
        idx = it->second[0].ix;
      } else {
        for (size_t d = 0; d < prm.tensor.dims.size(); ++d) idx.push_back(fresh("i" + std::to_string(d)));
      }
      param_grads_.push_back(finish(prm.name, idx, true).buffer);
    }
    return true;
  }

  bool emit(size_t p, Adjoint* out) {
    const Param& prm = k_.params[p];
    out->param = p;
    out->name = k_.name + "_d" + prm.name;
    out->zero = !contributions_.count(prm.name);
    // The stages dp needs, found backwards from it through the buffers each reads.
    std::set<std::string> need{param_grads_[p]};
    std::set<std::string> reads, named;  // named: axes and dims used as values (`* m`)
    for (size_t i = all_.size(); i-- > 0;) {
      if (!need.count(all_[i].target)) continue;
      walk(all_[i].body, [&](const AP& n) {
        if (n->k == K::Load) (is_param(n->name) ? reads : need).insert(n->name);
        if (n->k == K::Axis) named.insert(n->name);
      });
    }
    // Parameters: those read, then any that binds a dim of dp's type nothing else binds.
    std::set<std::string> bound;
    for (const auto& d : result_dims_) bound.insert(d);
    for (size_t q = 0; q < k_.params.size(); ++q)
      if (reads.count(k_.params[q].name))
        for (const auto& d : k_.params[q].tensor.dims) bound.insert(dim_text(d));
    for (const auto& d : prm.tensor.dims)
      if (!d.name.empty() && !bound.count(d.name)) {
        reads.insert(prm.name);
        for (const auto& dd : prm.tensor.dims) bound.insert(dim_text(dd));
      }
    // A dim used as a value (`x[i] * m`, m a dim of another parameter) needs a parameter that
    // binds it, read or not.
    for (const auto& name : named)
      for (size_t q = 0; q < k_.params.size() && !bound.count(name); ++q)
        for (const auto& d : k_.params[q].tensor.dims)
          if (d.name == name) {
            reads.insert(k_.params[q].name);
            for (const auto& dd : k_.params[q].tensor.dims) bound.insert(dim_text(dd));
          }
    std::string text = "kernel " + out->name + "(";
    out->inputs.clear();
    for (size_t q = 0; q < k_.params.size(); ++q) {
      if (!reads.count(k_.params[q].name)) continue;
      out->inputs.push_back(q);
      text += k_.params[q].name + ": " + type_text(k_.params[q].tensor.dims) + ", ";
    }
    text += dout_ + ": f32[" + join(result_dims_) + "]) -> " + type_text(prm.tensor.dims) + " {\n";
    for (const Stage& s : all_)
      if (need.count(s.target)) text += stage_text(s) + "\n";
    text += "  return " + param_grads_[p] + "\n}\n";
    out->source = text;
    // What runs is the text: parse and check it as any kernel.
    auto file = std::make_shared<SourceFile>(out->name + " (derived)", text);
    std::vector<Diagnostic> diags;
    auto program = std::make_shared<Program>(parse(file, diags));
    Module module;
    if (diags.empty()) check(*program, module, {}, diags);
    if (!diags.empty() || program->body.empty() || !program->body[0]->kernel) {
      return fail(k_.loc, "the derived adjoint " + out->name + " does not check (" +
                              (diags.empty() ? std::string("no kernel") : diags[0].message) +
                              "): its source is\n" + text);
    }
    out->program = std::move(program);
    return true;
  }

 private:
  bool fail(SourceLoc loc, std::string message) {
    error_->loc = loc;
    error_->message = std::move(message);
    return false;
  }

  bool is_param(const std::string& name) const {
    for (const auto& p : k_.params)
      if (p.name == name) return true;
    return false;
  }

  void reserve_names() {
    taken_.insert(k_.name);
    for (const auto& p : k_.params) {
      taken_.insert(p.name);
      for (const auto& d : p.tensor.dims) taken_.insert(d.name);
    }
    for (const auto& st : k_.stages) {
      taken_.insert(st.target);
      for (const auto& i : st.indices) taken_.insert(i);
      walk(from_ast(*st.value, false), [&](const AP& n) {
        if (n->k == K::Axis) taken_.insert(n->name);
        for (const auto& a : n->axes) taken_.insert(a);
      });
    }
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int n = 2; taken_.count(name); ++n) name = base + "_" + std::to_string(n);
    taken_.insert(name);
    return name;
  }

  // Every stage elementwise or one top-level reduction: a reduction nested in an expression
  // (linear_relu's max(sum(r) ..., 0.0)) becomes a stage `out_acc` of its own first.
  bool normalize() {
    for (const auto& st : k_.stages) {
      AP v = from_ast(*st.value, false);
      if (v->k == K::Reduce) {
        forward_.push_back(Stage{st.target, st.indices, v->name, v->axes, v->kids[0]});
        continue;
      }
      const AE* inner = nullptr;
      walk(v, [&](const AP& n) { if (n->k == K::Reduce && !inner) inner = n.get(); });
      if (inner) {
        std::string acc = fresh(st.target + "_acc");
        forward_.push_back(Stage{acc, st.indices, inner->name, inner->axes, inner->kids[0]});
        v = replace(v, inner, load(acc, st.indices));
      }
      forward_.push_back(Stage{st.target, st.indices, "", {}, v});
    }
    all_ = forward_;
    return true;
  }

  std::vector<std::string> result_idx() const {
    for (const auto& s : forward_)
      if (s.target == k_.result) return s.idx;
    return {};
  }

  static std::string dim_text(const Dim& d) { return d.name.empty() ? std::to_string(d.value) : d.name; }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }
  static std::string type_text(const std::vector<Dim>& dims) {
    std::vector<std::string> t;
    for (const auto& d : dims) t.push_back(dim_text(d));
    return "f32[" + join(t) + "]";
  }

  // The result's dims named by the parameters' dims (or the declared return type), for
  // dout's type: each axis's extent comes from an access that uses it whole.
  bool shapes() {
    std::map<std::string, std::vector<std::string>> dims;
    for (const auto& p : k_.params)
      for (const auto& d : p.tensor.dims) dims[p.name].push_back(dim_text(d));
    for (const Stage& s : forward_) {
      std::vector<std::string> out;
      for (size_t a = 0; a < s.idx.size(); ++a) {
        std::string found;
        walk(s.body, [&](const AP& n) {
          if (n->k != K::Load || !found.empty() || !dims.count(n->name)) return;
          for (size_t i = 0; i < n->kids.size(); ++i)
            if (n->kids[i]->k == K::Axis && n->kids[i]->name == s.idx[a] &&
                i < dims[n->name].size())
              found = dims[n->name][i];
        });
        if (s.target == k_.result && k_.has_return_type) found = dim_text(k_.return_type.dims[a]);
        if (found.empty() && s.target == k_.result)
          return fail(k_.result_loc, "cannot name the shape of '" + s.target + "' for its "
                      "gradient: axis '" + s.idx[a] + "' takes its extent from no parameter "
                      "(declare the kernel's return type)");
        out.push_back(found);
      }
      dims[s.target] = out;
    }
    result_dims_ = dims[k_.result];
    return true;
  }

  // d(e)/d(occurrence), by the chain rule. `root`/`root_value`: the stage's whole body and
  // the buffer holding it, so exp's and sqrt's derivatives reuse the value the stage stored.
  AP diff(const AP& e, const AE* occ, const AE* root, const AP& root_value) {
    auto d = [&](const AP& x) { return diff(x, occ, root, root_value); };
    switch (e->k) {
      case K::Num: case K::Axis: case K::Reduce: return num(0);
      case K::Load: return num(e.get() == occ ? 1 : 0);
      case K::Neg: return neg(d(e->kids[0]));
      case K::Bin: {
        const AP& a = e->kids[0];
        const AP& b = e->kids[1];
        switch (e->op) {
          case BinaryOp::Add: return add(d(a), d(b));
          case BinaryOp::Sub: return sub(d(a), d(b));
          case BinaryOp::Mul: return add(mul(d(a), b), mul(a, d(b)));
          case BinaryOp::Div:
            return add(div(d(a), b), mul(d(b), neg(div(a, mul(b, b)))));
          default: return num(0);  // a mask is constant where it is differentiable
        }
      }
      case K::Call: {
        const AP& u = e->kids[0];
        AP self = e.get() == root ? root_value : e;
        if (e->name == "exp") return mul(d(u), self);
        if (e->name == "log") return div(d(u), u);
        if (e->name == "sqrt") return div(d(u), mul(num(2), self));
        if (e->name == "abs")
          return mul(d(u), sub(cmp(BinaryOp::Gt, u, num(0)), cmp(BinaryOp::Lt, u, num(0))));
        const AP& b = e->kids[1];
        // max(a, b) is `b > a ? b : a`: the gradient goes to the operand it selected.
        if (e->name == "max")
          return add(mul(d(u), cmp(BinaryOp::Ge, u, b)), mul(d(b), cmp(BinaryOp::Gt, b, u)));
        if (e->name == "min")
          return add(mul(d(u), cmp(BinaryOp::Le, u, b)), mul(d(b), cmp(BinaryOp::Lt, b, u)));
        return num(0);
      }
    }
    return num(0);
  }

  bool differentiate(const Stage& st) {
    AP dt = grads_.at(st.target).at(st.idx);
    AP value = load(st.target, st.idx);
    if (st.red == "max" || st.red == "min")  // only the selected elements pass it on
      dt = mul(dt, cmp(BinaryOp::Eq, st.body, value));
    std::vector<const AE*> occurrences;
    walk(st.body, [&](const AP& n) { if (n->k == K::Load) occurrences.push_back(n.get()); });
    std::vector<std::string> axes = st.idx;
    axes.insert(axes.end(), st.raxes.begin(), st.raxes.end());
    for (const AE* occ : occurrences) {
      AP partial = diff(st.body, occ, st.red.empty() ? st.body.get() : nullptr, value);
      if (is_num(partial, 0)) continue;
      std::vector<std::string> ix;
      for (const AP& i : occ->kids) {
        std::string what = print(*occ);
        if (i->k != K::Axis)
          return fail(occ->loc, "cannot differentiate through '" + what + "': an index that is "
                      "not a single axis (" + print(*i, true) + ") would scatter the gradient, "
                      "which adjoint kernels do not do yet");
        for (const auto& seen : ix)
          if (seen == i->name)
            return fail(occ->loc, "cannot differentiate through '" + what + "': axis '" +
                        seen + "' indexes it twice (a diagonal)");
        ix.push_back(i->name);
      }
      std::vector<std::string> summed;
      for (const auto& a : axes)
        if (std::find(ix.begin(), ix.end(), a) == ix.end()) summed.push_back(a);
      contributions_[occ->name].push_back(Contribution{ix, summed, mul(dt, partial)});
    }
    return true;
  }

  // A buffer's gradient from its contributions, renamed onto the axes `idx`.
  Gradient finish(const std::string& x, const std::vector<std::string>& idx, bool param) {
    static const std::vector<Contribution> none;
    auto found = contributions_.find(x);
    const std::vector<Contribution>& list = found == contributions_.end() ? none : found->second;
    std::string name = fresh("d" + x);
    std::set<std::string> own(idx.begin(), idx.end());
    AP sum = num(0);
    for (size_t c = 0; c < list.size(); ++c) {
      std::map<std::string, std::string> to;
      for (size_t i = 0; i < idx.size(); ++i) to[list[c].ix[i]] = idx[i];
      std::vector<std::string> summed;
      for (const auto& a : list[c].sum_axes) {
        std::string b = own.count(a) ? fresh(a + "_") : a;
        to[a] = b;
        summed.push_back(b);
      }
      AP f = rename(list[c].factor, to);
      if (summed.empty()) {
        sum = add(sum, f);
      } else if (list.size() == 1) {
        all_.push_back(Stage{name, idx, "sum", summed, f});
        return Gradient{name, idx, nullptr};
      } else {
        std::string part = fresh(name + "_" + std::to_string(c + 1));
        all_.push_back(Stage{part, idx, "sum", summed, f});
        sum = add(sum, load(part, idx));
      }
    }
    std::set<std::string> whole = whole_axes(sum);
    bool every = true;
    for (const auto& a : idx) every &= whole.count(a) > 0;
    if (!param && !every) return Gradient{"", idx, sum};
    all_.push_back(Stage{name, idx, "", {}, sum});
    return Gradient{name, idx, nullptr};
  }

  const KernelDecl& k_;
  Diagnostic* error_ = nullptr;
  std::set<std::string> taken_;
  std::vector<Stage> forward_;  // the kernel's stages in normal form
  std::vector<Stage> all_;      // forward_, then every gradient stage in the order made
  std::vector<std::string> result_dims_;
  std::string dout_;
  std::map<std::string, Gradient> grads_;
  std::map<std::string, std::vector<Contribution>> contributions_;
  std::vector<std::string> param_grads_;  // per parameter: its gradient's stage
};

}  // namespace

bool derive_adjoints(const KernelDecl& kernel, std::vector<Adjoint>* out, Diagnostic* error) {
  Deriver d(kernel);
  if (!d.run(error)) return false;
  std::vector<Adjoint> all(kernel.params.size());
  for (size_t p = 0; p < kernel.params.size(); ++p)
    if (!d.emit(p, &all[p])) return false;
  *out = std::move(all);
  return true;
}

bool derive_adjoint(const KernelDecl& kernel, size_t param, Adjoint* out, Diagnostic* error) {
  if (param >= kernel.params.size()) {
    error->loc = kernel.loc;
    error->message = "kernel '" + kernel.name + "' has no parameter #" + std::to_string(param);
    return false;
  }
  Deriver d(kernel);
  return d.run(error) && d.emit(param, out);
}

std::string adjoints_to_text(const KernelDecl& kernel, const std::vector<Adjoint>& adjoints) {
  std::string out = "# The adjoints of kernel '" + kernel.name + "': given the gradient of a loss "
                    "with respect to\n# its result ('" + kernel.result + "'), each computes the "
                    "gradient with respect to one parameter.\n";
  for (const Adjoint& a : adjoints) {
    out += "\n# d/d" + kernel.params[a.param].name;
    if (a.zero) out += ": '" + kernel.name + "' does not depend on it";
    out += "\n" + a.source;
  }
  return out;
}

}  // namespace descent::tensor
