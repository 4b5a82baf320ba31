// Semantic analysis, kernels: the body of a kernel is index notation, a small language of
// its own, so it gets a small checker of its own that shares no scopes or flow with Checker.
//
// The static rules of index notation (LANGUAGE.md, tensor layer). Shapes are not known
// until a call binds the named dims, so what is checked here is everything that does not
// depend on them: names, ranks, the form of index expressions, and that every axis gets an
// extent from somewhere (the lowering then computes it).
#include <algorithm>
#include <map>
#include <set>

#include "lang/sema_internal.h"

namespace descent::sema_internal {

namespace {

class KernelChecker {
 public:
  using ErrorFn = std::function<void(SourceLoc, std::string)>;
  KernelChecker(KernelDecl& k, ErrorFn error) : k_(k), error_(std::move(error)) {}

  void run() {
    for (const auto& p : k_.params) {
      if (buffers_.count(p.name)) {
        error_(p.loc, "duplicate parameter '" + p.name + "'");
        continue;
      }
      if (p.type != Type::Tensor) {
        error_(p.loc, "kernel parameter '" + p.name + "' must be a tensor, e.g. " + p.name +
                          ": f32[n]");
        continue;
      }
      element_type(p.tensor);
      buffers_[p.name] = Buffer{p.tensor.dims.size(), true};
      for (const Dim& d : p.tensor.dims)
        if (!d.name.empty()) dims_.insert(d.name);
    }
    if (k_.has_return_type) element_type(k_.return_type);
    for (auto& st : k_.stages) stage(st);
    auto it = buffers_.find(k_.result);
    if (it == buffers_.end()) {
      error_(k_.result_loc, "unknown buffer '" + k_.result + "'");
    } else if (it->second.is_param) {
      error_(k_.result_loc, "'" + k_.result + "' is a parameter; a kernel returns a buffer one "
                            "of its stages computes");
    } else if (k_.has_return_type && it->second.rank != k_.return_type.dims.size()) {
      error_(k_.result_loc, "kernel '" + k_.name + "' returns " +
                                plural(k_.return_type.dims.size(), "dimension") + ", but '" +
                                k_.result + "' has " + plural(it->second.rank, "dimension"));
    }
  }

 private:
  struct Buffer {
    size_t rank = 0;
    bool is_param = false;
  };

  void element_type(const TensorType& t) {
    if (t.elem != "f32") error_(t.loc, t.elem + " tensors are not supported yet (use f32)");
  }

  void stage(KernelStage& st) {
    auto it = buffers_.find(st.target);
    if (it != buffers_.end()) {
      error_(st.loc, it->second.is_param
                         ? "'" + st.target + "' is a parameter; a stage must define a new buffer"
                         : "buffer '" + st.target + "' is already defined");
    }
    spatial_ = st.indices;
    reduce_.clear();
    whole_.clear();
    if (st.value) value(st.value);
    // Spatial extents come from an access that uses the axis as a whole index, or, for the
    // returned stage, from the declared return type.
    bool from_return = k_.has_return_type && st.target == k_.result;
    for (size_t i = 0; i < st.indices.size(); ++i) {
      if (whole_.count(st.indices[i]) || from_return) continue;
      error_(st.index_locs[i], "axis '" + st.indices[i] + "' of '" + st.target +
                                   "' is never a whole index of a buffer, so its extent is "
                                   "unknown (use it alone, as in x[" + st.indices[i] +
                                   "], or declare the kernel's return type)");
    }
    // Defined after its value is checked: a stage cannot read the buffer it writes.
    if (it == buffers_.end()) buffers_[st.target] = Buffer{st.indices.size(), false};
  }

  bool in_scope(const std::string& axis) const {
    return std::find(spatial_.begin(), spatial_.end(), axis) != spatial_.end() ||
           std::find(reduce_.begin(), reduce_.end(), axis) != reduce_.end();
  }

  void unknown_name(const Expr& e) {
    if (buffers_.count(e.text))
      error_(e.loc, "buffer '" + e.text + "' must be indexed, as in " + e.text + "[i]");
    else
      error_(e.loc, "unknown axis '" + e.text + "'");
  }

  // A value: f32 arithmetic on buffer elements, axes and literals.
  void value(ExprPtr& ep) {
    Expr& e = *ep;
    e.type = Type::Float;
    switch (e.kind) {
      case ExprKind::IntLit:
        // Kernel literals are f32: rewrite the node rather than wrap it, so the lowering
        // sees one kind of constant.
        e.kind = ExprKind::FloatLit;
        e.float_value = static_cast<double>(e.int_value);
        return;
      case ExprKind::FloatLit: return;
      case ExprKind::Axis:
        // A named dim of the parameters' types, where no axis has that name, is its size:
        // a mean divides by it (`sum(j) x[i, j] / d`).
        e.dim_value = !in_scope(e.text) && dims_.count(e.text) && !buffers_.count(e.text);
        if (!in_scope(e.text) && !e.dim_value) unknown_name(e);
        return;
      case ExprKind::Index: access(e); return;
      case ExprKind::Unary:
        if (e.unary_op != UnaryOp::Neg)
          error_(e.loc, std::string("operator '") + op_symbol(e.unary_op) +
                            "' is not supported in kernels");
        e.operand_type = Type::Float;
        value(e.kids[0]);
        return;
      case ExprKind::Binary:
        // Arithmetic, and comparisons as masks: `x[i] > 0.0` is 1.0 where it holds and 0.0
        // elsewhere (NumPy's `(x > 0)` in arithmetic), so `dy[i] * (x[i] > 0.0)` is relu's
        // gradient. && and || and % stay scalar-only.
        if (e.binary_op != BinaryOp::Add && e.binary_op != BinaryOp::Sub &&
            e.binary_op != BinaryOp::Mul && e.binary_op != BinaryOp::Div &&
            !is_kernel_comparison(e.binary_op))
          error_(e.loc, std::string("operator '") + op_symbol(e.binary_op) +
                            "' is not supported in kernels");
        e.operand_type = Type::Float;
        value(e.kids[0]);
        value(e.kids[1]);
        return;
      case ExprKind::Call: call(e); return;
      case ExprKind::Reduce: reduce(e); return;
      default:
        e.type = Type::Unknown;
        error_(e.loc, "only numbers, axes, buffer elements and arithmetic can appear in a kernel");
        return;
    }
  }

  void call(Expr& e) {
    Builtin b = builtin_by_name(e.text);
    size_t want = 0;
    switch (b) {
      case Builtin::Max: case Builtin::Min: want = 2; break;
      case Builtin::Exp: case Builtin::Log: case Builtin::Sqrt: case Builtin::Abs: want = 1; break;
      default:
        error_(e.loc, "'" + e.text + "' cannot be called in a kernel (only max, min, exp, log, "
                      "sqrt and abs)");
        break;
    }
    e.builtin = b;
    e.operand_type = Type::Float;
    if (want && e.kids.size() != want)
      error_(e.loc, "'" + e.text + "' expects " + plural(want, "argument") + ", got " +
                        std::to_string(e.kids.size()));
    // The arguments are checked either way: their errors are independent, and their
    // accesses give axes their extents.
    for (auto& k : e.kids) value(k);
  }

  void reduce(Expr& e) {
    size_t before = reduce_.size();
    for (const auto& a : e.axes) {
      if (in_scope(a)) {
        error_(e.loc, "reduce axis '" + a + "' shadows an axis of the same name");
        continue;
      }
      reduce_.push_back(a);
    }
    std::set<std::string> outer_whole;
    outer_whole.swap(whole_);
    value(e.kids[0]);
    for (size_t i = before; i < reduce_.size(); ++i)
      if (!whole_.count(reduce_[i]))
        error_(e.loc, "reduce axis '" + reduce_[i] + "' is never a whole index of a buffer, so "
                      "its extent is unknown (use it alone, as in x[" + reduce_[i] + "])");
    whole_.insert(outer_whole.begin(), outer_whole.end());
    reduce_.resize(before);
  }

  void access(Expr& e) {
    auto it = buffers_.find(e.text);
    if (it == buffers_.end()) {
      error_(e.loc, "unknown buffer '" + e.text + "'");
      return;
    }
    if (it->second.rank != e.kids.size()) {
      error_(e.loc, "'" + e.text + "' has " + plural(it->second.rank, "dimension") +
                        ", but is indexed with " + std::to_string(e.kids.size()));
      return;
    }
    for (auto& k : e.kids) {
      if (k->kind == ExprKind::Axis && in_scope(k->text)) whole_.insert(k->text);
      if (!affine(*k)) {
        error_(expr_start(*k), "an index must be an affine expression of axes and int literals "
                       "(+, -, and * by a literal)");
      }
    }
  }

  // Index expressions: axes and int literals with + and -, * where one side is a literal,
  // and unary minus. Reports unknown axes itself; returns false for any other form.
  bool affine(Expr& e) {
    e.type = Type::Int;
    switch (e.kind) {
      case ExprKind::IntLit: return true;
      case ExprKind::Axis:
        if (!in_scope(e.text)) unknown_name(e);
        return true;
      case ExprKind::Unary: return e.unary_op == UnaryOp::Neg && affine(*e.kids[0]);
      case ExprKind::Binary: {
        e.operand_type = Type::Int;
        bool ok = affine(*e.kids[0]) & affine(*e.kids[1]);
        if (e.binary_op == BinaryOp::Mul)
          return ok && (e.kids[0]->kind == ExprKind::IntLit || e.kids[1]->kind == ExprKind::IntLit);
        return ok && (e.binary_op == BinaryOp::Add || e.binary_op == BinaryOp::Sub);
      }
      default: return false;
    }
  }

  KernelDecl& k_;
  ErrorFn error_;
  std::map<std::string, Buffer> buffers_;
  std::set<std::string> dims_;  // the named dims of the parameters' types (n, d)
  std::vector<std::string> spatial_, reduce_;  // the axes in scope
  std::set<std::string> whole_;  // axes seen as a whole index of an access, in this scope
};

}  // namespace

void check_kernel(KernelDecl& kernel, const std::function<void(SourceLoc, std::string)>& error) {
  KernelChecker(kernel, error).run();
}

}  // namespace descent::sema_internal
