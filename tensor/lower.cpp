// Kernel (index notation) -> loop-nest IR, for one set of concrete argument shapes.
//
// The work is in two passes over each stage, in order:
//   1. infer: give every axis an extent. An axis used alone as an index (A[i, k]) takes that
//      dim's size, and every such use must agree. An axis that only appears inside compound
//      affine indices (x[i + r], x[2 * i]) takes the largest extent that keeps every one of
//      those accesses in range given the other axes' extents (conv2d: H - R + 1). A spatial
//      axis used nowhere on the right takes the declared return dim (returned stage only).
//      Then every access is checked against its buffer, so a lowered kernel never reads out
//      of range and the backends need no bounds checks.
//   2. build: one loop nest per stage (spatial loops in left-hand-side order, then reduce
//      loops in the order written), around one block named after the stage's buffer.
//
// Semantics every backend shares (the interpreter, generated C, LLVM, OpenCL):
//   - arithmetic is f32; int literals in kernel bodies are f32 constants; an axis used as a
//     value is its index converted to f32;
//   - max(a, b) is (b > a) ? b : a and min(a, b) is (b < a) ? b : a: Python's rule and the
//     scalar tier's, so max(nan, 1) is nan but max(1, nan) is 1;
//   - reductions start from 0 (sum), -inf (max), +inf (min) and fold each element e into the
//     accumulator with acc + e, max(acc, e), min(acc, e), in loop order (so a nan element is
//     skipped by max and min: (nan > acc) is false).
//
// [SECTION] index: errors and names | bind_dims | affine indices | stage analysis |
// building the IR | lower / result_shape / shapes_for.
#include "tensor/lower.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

#include "tensor/tensor.h"

namespace descent::tensor {

namespace {

// ---- errors and names -----------------------------------------------------------------------

bool fail(Diagnostic* error, SourceLoc loc, std::string message) {
  if (error) {
    error->severity = Severity::Error;
    // Lowering happens when a call supplies shapes, so its errors are run-time errors.
    error->kind = ErrorKind::Runtime;
    error->loc = loc;
    error->message = std::move(message);
  }
  return false;
}

std::string type_text(const TensorType& t) {
  std::string s = t.elem + "[";
  for (size_t i = 0; i < t.dims.size(); i++)
    s += (i ? ", " : "") + (t.dims[i].name.empty() ? std::to_string(t.dims[i].value)
                                                    : t.dims[i].name);
  return s + "]";
}

}  // namespace

// ---- bind_dims ------------------------------------------------------------------------------

bool bind_dims(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
               std::map<std::string, int64_t>* dims, Diagnostic* error) {
  if (arg_shapes.size() != kernel.params.size())
    return fail(error, kernel.loc,
                "kernel '" + kernel.name + "' takes " + std::to_string(kernel.params.size()) +
                    (kernel.params.size() == 1 ? " argument" : " arguments") + " but got " +
                    std::to_string(arg_shapes.size()));
  std::map<std::string, int64_t> bound;
  std::map<std::string, std::string> bound_by;  // dim name -> the parameter that bound it
  for (size_t p = 0; p < kernel.params.size(); p++) {
    const Param& param = kernel.params[p];
    const auto& shape = arg_shapes[p];
    std::string arg = "argument '" + param.name + "' of kernel '" + kernel.name + "'";
    if (param.type != Type::Tensor)
      return fail(error, param.loc, arg + " is not a tensor parameter");
    const auto& declared = param.tensor.dims;
    if (shape.size() != declared.size())
      return fail(error, param.loc,
                  arg + " has shape " + shape_text(shape) + " but is declared " +
                      type_text(param.tensor));
    for (size_t d = 0; d < declared.size(); d++) {
      if (shape[d] < 1)
        return fail(error, param.loc, arg + " has shape " + shape_text(shape));
      const Dim& dim = declared[d];
      if (dim.name.empty()) {
        if (dim.value != shape[d])
          return fail(error, dim.loc.valid() ? dim.loc : param.loc,
                      arg + ": dim " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                          " but is declared " + std::to_string(dim.value));
        continue;
      }
      auto it = bound.find(dim.name);
      if (it == bound.end()) {
        bound[dim.name] = shape[d];
        bound_by[dim.name] = param.name;
      } else if (it->second != shape[d]) {
        return fail(error, dim.loc.valid() ? dim.loc : param.loc,
                    arg + ": dim '" + dim.name + "' is " + std::to_string(it->second) + " in '" +
                        bound_by[dim.name] + "' but " + std::to_string(shape[d]) + " here");
      }
    }
  }
  if (dims) *dims = std::move(bound);
  return true;
}

namespace {

// Where an expression begins (a binary node's own location is its operator).
SourceLoc expr_start(const Expr& e) {
  return e.kind == ExprKind::Binary && !e.kids.empty() ? expr_start(*e.kids[0]) : e.loc;
}

// ---- affine indices ---------------------------------------------------------------------------

// An index expression as constant + sum(coef * axis). Sema only lets affine forms through;
// the lowering still checks, since it must never trust its input to stay in range.
struct Affine {
  __int128 constant = 0;
  std::map<std::string, __int128> coef;
};

constexpr __int128 kIndexLimit = __int128(1) << 62;  // far past any buffer; no overflow below

bool affine(const Expr& e, Affine* out, Diagnostic* error) {
  auto too_big = [&] { return fail(error, e.loc, "index expression is too large"); };
  switch (e.kind) {
    case ExprKind::IntLit:
      out->constant = e.int_value;
      return true;
    case ExprKind::Axis:
      out->coef[e.text] = 1;
      return true;
    case ExprKind::Unary:
      if (e.unary_op != UnaryOp::Neg || e.kids.size() != 1) break;
      if (!affine(*e.kids[0], out, error)) return false;
      out->constant = -out->constant;
      for (auto& [a, c] : out->coef) c = -c;
      return true;
    case ExprKind::Binary: {
      if (e.kids.size() != 2) break;
      Affine a, b;
      if (!affine(*e.kids[0], &a, error) || !affine(*e.kids[1], &b, error)) return false;
      if (e.binary_op == BinaryOp::Add || e.binary_op == BinaryOp::Sub) {
        __int128 sign = e.binary_op == BinaryOp::Add ? 1 : -1;
        *out = a;
        out->constant += sign * b.constant;
        for (auto& [ax, c] : b.coef) out->coef[ax] += sign * c;
      } else if (e.binary_op == BinaryOp::Mul && (a.coef.empty() || b.coef.empty())) {
        const Affine& k = a.coef.empty() ? a : b;
        const Affine& x = a.coef.empty() ? b : a;
        *out = x;
        out->constant *= k.constant;
        for (auto& [ax, c] : out->coef) c *= k.constant;
      } else {
        break;
      }
      if (out->constant > kIndexLimit || out->constant < -kIndexLimit) return too_big();
      for (auto it = out->coef.begin(); it != out->coef.end();) {
        if (it->second > kIndexLimit || it->second < -kIndexLimit) return too_big();
        it = it->second == 0 ? out->coef.erase(it) : std::next(it);
      }
      return true;
    }
    default:
      break;
  }
  return fail(error, e.loc,
              "an index must be an affine expression of axes and int literals (+, -, and * by "
              "a literal)");
}

// ---- stage analysis ---------------------------------------------------------------------------

struct BufferInfo {
  std::vector<int64_t> shape;
  int index = -1;  // in PrimFunc::buffers
};

// One buffer access A[e0, e1, ...] of a stage's right-hand side.
struct Access {
  const Expr* expr;
  std::string buffer;
  std::vector<Affine> index;
};

struct Analysis {
  const KernelDecl& k;
  std::map<std::string, int64_t> dims;
  std::map<std::string, BufferInfo> buffers;
  std::vector<std::map<std::string, int64_t>> extents;  // per stage: axis -> extent
  std::vector<const Expr*> reduce;                       // per stage: its Reduce, or null
  Diagnostic* error;

  Analysis(const KernelDecl& kernel, Diagnostic* err) : k(kernel), error(err) {}

  bool axes_in_scope(const Expr& e, const KernelStage& st,
                     const std::vector<std::string>& reduce_axes) {
    if (e.kind == ExprKind::Axis && !e.dim_value &&
        std::find(st.indices.begin(), st.indices.end(), e.text) == st.indices.end() &&
        std::find(reduce_axes.begin(), reduce_axes.end(), e.text) == reduce_axes.end())
      return fail(error, e.loc, "unknown axis '" + e.text + "'");
    for (const auto& kid : e.kids)
      if (!axes_in_scope(*kid, st, reduce_axes)) return false;
    return true;
  }

  bool collect(const Expr& e, const KernelStage& st, std::vector<Access>& out,
               const Expr** red, std::vector<std::string>& reduce_axes) {
    switch (e.kind) {
      case ExprKind::Index: {
        auto it = buffers.find(e.text);
        if (it == buffers.end())
          return fail(error, e.loc, e.text == st.target
                                        ? "stage '" + st.target + "' reads the buffer it writes"
                                        : "unknown buffer '" + e.text + "'");
        if (e.kids.size() != it->second.shape.size())
          return fail(error, e.loc, "'" + e.text + "' has " +
                                        std::to_string(it->second.shape.size()) +
                                        " dimensions, but is indexed with " +
                                        std::to_string(e.kids.size()));
        Access a{&e, e.text, {}};
        for (const auto& kid : e.kids) {
          Affine f;
          if (!affine(*kid, &f, error) || !axes_in_scope(*kid, st, reduce_axes)) return false;
          a.index.push_back(std::move(f));
        }
        out.push_back(std::move(a));
        return true;
      }
      case ExprKind::Reduce:
        if (*red)
          return fail(error, e.loc,
                      "stage '" + st.target + "' has more than one reduction; compute each in "
                      "a stage of its own");
        if (e.kids.size() != 1) return fail(error, e.loc, "malformed reduction");
        if (e.text != "sum" && e.text != "max" && e.text != "min")
          return fail(error, e.loc, "unknown reduction '" + e.text + "'");
        *red = &e;
        for (const auto& a : e.axes) {
          if (std::find(st.indices.begin(), st.indices.end(), a) != st.indices.end() ||
              std::find(reduce_axes.begin(), reduce_axes.end(), a) != reduce_axes.end())
            return fail(error, e.loc, "reduce axis '" + a + "' shadows an axis of the same name");
          reduce_axes.push_back(a);
        }
        return collect(*e.kids[0], st, out, red, reduce_axes);
      case ExprKind::FloatLit:
      case ExprKind::IntLit:
        return true;
      case ExprKind::Axis:
        if (e.dim_value) return true;  // a named dim's size: a constant
        if (std::find(st.indices.begin(), st.indices.end(), e.text) == st.indices.end() &&
            std::find(reduce_axes.begin(), reduce_axes.end(), e.text) == reduce_axes.end())
          return fail(error, e.loc, "unknown axis '" + e.text + "'");
        return true;
      case ExprKind::Unary:
      case ExprKind::Binary:
      case ExprKind::Call:
        for (const auto& kid : e.kids)
          if (!collect(*kid, st, out, red, reduce_axes)) return false;
        return true;
      default:
        return fail(error, e.loc, "only numbers, axes, buffer elements and arithmetic can "
                                  "appear in a kernel");
    }
  }

  // The largest extent of axis `a` that keeps index `f` within [0, size), given the extents
  // already known; false when another axis of `f` has no extent yet.
  bool bound_for(const std::string& a, const Affine& f, int64_t size,
                 const std::map<std::string, int64_t>& ext, __int128* limit) const {
    __int128 lo = f.constant, hi = f.constant;
    for (const auto& [ax, c] : f.coef) {
      if (ax == a) continue;
      auto it = ext.find(ax);
      if (it == ext.end()) return false;
      __int128 span = c * (it->second - 1);
      (span < 0 ? lo : hi) += span;
    }
    __int128 c = f.coef.at(a);
    // Need lo + min(0, c*(E-1)) >= 0 and hi + max(0, c*(E-1)) <= size - 1.
    if (lo < 0 || hi > size - 1) {
      *limit = 0;
    } else if (c > 0) {
      *limit = (__int128(size - 1) - hi) / c + 1;
    } else {
      *limit = lo / (-c) + 1;
    }
    return true;
  }

  bool stage(size_t s) {
    const KernelStage& st = k.stages[s];
    if (buffers.count(st.target))
      return fail(error, st.loc, "buffer '" + st.target + "' is already defined");
    if (!st.value) return fail(error, st.loc, "stage '" + st.target + "' has no value");
    std::vector<Access> accesses;
    const Expr* red = nullptr;
    std::vector<std::string> reduce_axes;
    if (!collect(*st.value, st, accesses, &red, reduce_axes)) return false;
    reduce.push_back(red);

    // Whole-index uses fix extents and must agree.
    std::map<std::string, int64_t> ext;
    std::map<std::string, std::string> ext_from;
    for (const auto& acc : accesses) {
      const auto& shape = buffers[acc.buffer].shape;
      for (size_t d = 0; d < acc.index.size(); d++) {
        const Expr& ix = *acc.expr->kids[d];
        if (ix.kind != ExprKind::Axis) continue;
        auto it = ext.find(ix.text);
        if (it == ext.end()) {
          ext[ix.text] = shape[d];
          ext_from[ix.text] = acc.buffer;
        } else if (it->second != shape[d]) {
          return fail(error, acc.expr->loc,
                      "axis '" + ix.text + "' has extent " + std::to_string(it->second) +
                          " in " + ext_from[ix.text] + " but " + std::to_string(shape[d]) +
                          " in " + acc.buffer);
        }
      }
    }

    // Spatial axes used nowhere on the right: the declared return dim, returned stage only.
    std::vector<std::string> all = st.indices;
    all.insert(all.end(), reduce_axes.begin(), reduce_axes.end());
    auto used = [&](const std::string& a) {
      for (const auto& acc : accesses)
        for (const auto& f : acc.index)
          if (f.coef.count(a)) return true;
      return false;
    };
    for (size_t i = 0; i < st.indices.size(); i++) {
      const std::string& a = st.indices[i];
      if (ext.count(a) || used(a)) continue;
      SourceLoc loc = i < st.index_locs.size() ? st.index_locs[i] : st.loc;
      if (st.target != k.result || !k.has_return_type ||
          k.return_type.dims.size() != st.indices.size())
        return fail(error, loc,
                    "axis '" + a + "' of '" + st.target + "' is not used on the right-hand "
                    "side, so its extent is unknown");
      const Dim& dim = k.return_type.dims[i];
      if (dim.name.empty()) {
        ext[a] = dim.value;
      } else if (dims.count(dim.name)) {
        ext[a] = dims[dim.name];
      } else {
        return fail(error, dim.loc.valid() ? dim.loc : loc,
                    "dim '" + dim.name + "' of the return type is not bound by any argument, "
                    "so axis '" + a + "' has no extent");
      }
      if (ext[a] < 1)
        return fail(error, loc, "axis '" + a + "' has extent " + std::to_string(ext[a]));
    }
    for (const auto& a : reduce_axes)
      if (!ext.count(a) && !used(a))
        return fail(error, red->loc, "reduce axis '" + a + "' is not used, so its extent is "
                                     "unknown");

    // Axes in compound indices only: the largest extent every access allows. Each round
    // settles the axes whose accesses mention no other unsettled axis.
    for (bool progress = true; progress;) {
      progress = false;
      for (const auto& a : all) {
        if (ext.count(a)) continue;
        __int128 best = std::numeric_limits<int64_t>::max();
        bool ready = true;
        const Access* tightest = nullptr;
        size_t tight_dim = 0;
        for (const auto& acc : accesses)
          for (size_t d = 0; d < acc.index.size() && ready; d++) {
            if (!acc.index[d].coef.count(a)) continue;
            __int128 limit;
            if (!bound_for(a, acc.index[d], buffers[acc.buffer].shape[d], ext, &limit)) {
              ready = false;
              break;
            }
            if (limit < best) {
              best = limit;
              tightest = &acc;
              tight_dim = d;
            }
          }
        if (!ready) continue;
        if (best < 1)
          return fail(error, tightest->expr->loc,
                      "axis '" + a + "' has no valid extent: '" + tightest->buffer +
                          "' has size " +
                          std::to_string(buffers[tightest->buffer].shape[tight_dim]) +
                          " along dim " + std::to_string(tight_dim) +
                          ", too small for this index");
        ext[a] = int64_t(best);
        progress = true;
      }
    }
    for (const auto& a : all)
      if (!ext.count(a))
        return fail(error, st.loc,
                    "cannot infer the extent of axis '" + a + "' of stage '" + st.target +
                        "': it only appears together with other axes of unknown extent");

    // Every access in range, now that every extent is known.
    for (const auto& acc : accesses) {
      const auto& shape = buffers[acc.buffer].shape;
      for (size_t d = 0; d < acc.index.size(); d++) {
        __int128 lo = acc.index[d].constant, hi = lo;
        for (const auto& [ax, c] : acc.index[d].coef) {
          __int128 span = c * (ext[ax] - 1);
          (span < 0 ? lo : hi) += span;
        }
        if (lo < 0 || hi > shape[d] - 1)
          return fail(error, expr_start(*acc.expr->kids[d]),
                      "index " + std::to_string(d) + " of '" + acc.buffer + "' ranges over [" +
                          std::to_string(int64_t(lo)) + ", " + std::to_string(int64_t(hi)) +
                          "] but its size is " + std::to_string(shape[d]));
      }
    }

    std::vector<int64_t> shape;
    for (const auto& a : st.indices) shape.push_back(ext[a]);
    std::string why;
    if (!check_shape(shape, &why))
      return fail(error, st.loc, "buffer '" + st.target + "': " + why);
    buffers[st.target] = BufferInfo{shape, -1};
    extents.push_back(std::move(ext));
    return true;
  }

  bool run(const std::vector<std::vector<int64_t>>& arg_shapes) {
    if (!bind_dims(k, arg_shapes, &dims, error)) return false;
    for (size_t p = 0; p < k.params.size(); p++) {
      if (buffers.count(k.params[p].name))
        return fail(error, k.params[p].loc, "duplicate parameter '" + k.params[p].name + "'");
      buffers[k.params[p].name] = BufferInfo{arg_shapes[p], -1};
    }
    if (k.stages.empty()) return fail(error, k.loc, "kernel '" + k.name + "' has no stages");
    for (size_t s = 0; s < k.stages.size(); s++)
      if (!stage(s)) return false;
    bool returned = false;
    for (const auto& st : k.stages) returned = returned || st.target == k.result;
    if (!returned)
      return fail(error, k.result_loc, "kernel '" + k.name + "' returns '" + k.result +
                                           "', which no stage computes");
    if (k.has_return_type) {
      const auto& computed = buffers[k.result].shape;
      std::vector<int64_t> declared;
      bool known = true;
      for (const auto& d : k.return_type.dims) {
        if (d.name.empty()) declared.push_back(d.value);
        else if (dims.count(d.name)) declared.push_back(dims[d.name]);
        else known = false;  // a dim named only in the return type: whatever is computed
      }
      std::string decl = "f32" + shape_text(declared);
      if (!known) decl = type_text(k.return_type);
      bool same = computed.size() == k.return_type.dims.size();
      for (size_t i = 0; same && i < computed.size(); i++) {
        const Dim& d = k.return_type.dims[i];
        if (d.name.empty() ? d.value != computed[i]
                           : dims.count(d.name) && dims[d.name] != computed[i])
          same = false;
      }
      if (!same)
        return fail(error, k.return_type.loc.valid() ? k.return_type.loc : k.result_loc,
                    "kernel '" + k.name + "' declares " + decl + " but computes " +
                        shape_text(computed));
    }
    return true;
  }
};

// ---- building the IR ----------------------------------------------------------------------

struct Builder {
  const KernelDecl& k;
  Analysis& an;
  tir::PrimFunc& f;
  std::map<std::string, std::string> iter_of;  // axis -> block iteration variable, this stage
  Diagnostic* error;

  std::string fresh_buffer(const std::string& base) {
    std::set<std::string> taken;
    for (const auto& p : k.params) taken.insert(p.name);
    for (const auto& s : k.stages) taken.insert(s.target);
    for (const auto& b : f.buffers) taken.insert(b.name);
    std::string name = base;
    for (int n = 1; taken.count(name); n++) name = base + std::to_string(n);
    return name;
  }

  tir::ExprPtr index(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return tir::int_imm(e.int_value);
      case ExprKind::Axis: return tir::var(iter_of.at(e.text));
      case ExprKind::Unary: return tir::unary(tir::Op::Neg, index(*e.kids[0]));
      default: break;
    }
    tir::Op op = e.binary_op == BinaryOp::Add   ? tir::Op::Add
                 : e.binary_op == BinaryOp::Sub ? tir::Op::Sub
                                                : tir::Op::Mul;
    return tir::binary(op, index(*e.kids[0]), index(*e.kids[1]));
  }

  // The right-hand side as f32; `acc` replaces the stage's Reduce node when it is nested.
  tir::ExprPtr value(const Expr& e, const tir::Expr* acc) {
    switch (e.kind) {
      case ExprKind::FloatLit: return tir::float_imm(float(e.float_value));
      case ExprKind::IntLit: return tir::float_imm(float(e.int_value));
      case ExprKind::Axis:
        if (e.dim_value) return tir::float_imm(float(an.dims.at(e.text)));
        return tir::var(iter_of.at(e.text));
      case ExprKind::Index: {
        std::vector<tir::ExprPtr> ix;
        for (const auto& kid : e.kids) ix.push_back(index(*kid));
        return tir::load(an.buffers.at(e.text).index, std::move(ix));
      }
      case ExprKind::Unary: return tir::unary(tir::Op::Neg, value(*e.kids[0], acc));
      case ExprKind::Binary: {
        if (is_kernel_comparison(e.binary_op)) {  // a mask: select(a OP b, 1.0, 0.0)
          static const tir::Op cmp[] = {tir::Op::Eq, tir::Op::Ne, tir::Op::Lt,
                                        tir::Op::Le, tir::Op::Gt, tir::Op::Ge};
          tir::Op op = cmp[int(e.binary_op) - int(BinaryOp::Eq)];
          return tir::select(tir::binary(op, value(*e.kids[0], acc), value(*e.kids[1], acc)),
                             tir::float_imm(1), tir::float_imm(0));
        }
        tir::Op op = e.binary_op == BinaryOp::Add   ? tir::Op::Add
                     : e.binary_op == BinaryOp::Sub ? tir::Op::Sub
                     : e.binary_op == BinaryOp::Mul ? tir::Op::Mul
                                                    : tir::Op::Div;
        return tir::binary(op, value(*e.kids[0], acc), value(*e.kids[1], acc));
      }
      case ExprKind::Call: {
        Builtin b = e.builtin != Builtin::None ? e.builtin : builtin_by_name(e.text);
        if (b == Builtin::Max || b == Builtin::Min)
          return tir::binary(b == Builtin::Max ? tir::Op::Max : tir::Op::Min,
                             value(*e.kids[0], acc), value(*e.kids[1], acc));
        tir::Op op = b == Builtin::Exp   ? tir::Op::Exp
                     : b == Builtin::Log ? tir::Op::Log
                     : b == Builtin::Sqrt ? tir::Op::Sqrt
                                          : tir::Op::Abs;
        return tir::unary(op, value(*e.kids[0], acc));
      }
      case ExprKind::Reduce:
        return tir::clone(*acc);
      default:
        return tir::float_imm(0);  // unreachable: the analysis rejected every other kind
    }
  }

  bool check_call(const Expr& e) {
    if (e.kind == ExprKind::Call) {
      Builtin b = e.builtin != Builtin::None ? e.builtin : builtin_by_name(e.text);
      size_t want = (b == Builtin::Max || b == Builtin::Min) ? 2
                    : (b == Builtin::Exp || b == Builtin::Log || b == Builtin::Sqrt ||
                       b == Builtin::Abs) ? 1 : 0;
      if (want == 0)
        return fail(error, e.loc, "'" + e.text + "' cannot be called in a kernel (only max, "
                                  "min, exp, log, sqrt and abs)");
      if (e.kids.size() != want)
        return fail(error, e.loc, "'" + e.text + "' expects " + std::to_string(want) +
                                      (want == 1 ? " argument" : " arguments") + ", got " +
                                      std::to_string(e.kids.size()));
    }
    if ((e.kind == ExprKind::Unary && e.unary_op != UnaryOp::Neg) ||
        (e.kind == ExprKind::Binary && e.binary_op != BinaryOp::Add &&
         e.binary_op != BinaryOp::Sub && e.binary_op != BinaryOp::Mul &&
         e.binary_op != BinaryOp::Div && !is_kernel_comparison(e.binary_op)))
      return fail(error, e.loc, "operator is not supported in kernels");
    if (e.kind == ExprKind::Index) return true;  // indices were checked as affine forms
    for (const auto& kid : e.kids)
      if (!check_call(*kid)) return false;
    return true;
  }

  int add_buffer(const std::string& name, std::vector<int64_t> shape, tir::BufferRole role) {
    f.buffers.push_back({name, std::move(shape), tir::Scope::Global, role});
    return int(f.buffers.size()) - 1;
  }

  std::vector<tir::ExprPtr> target_indices(const KernelStage& st) {
    std::vector<tir::ExprPtr> v;
    for (const auto& a : st.indices) v.push_back(tir::var(iter_of.at(a)));
    return v;
  }

  tir::StmtPtr make_block(const std::string& name, const KernelStage& st,
                          const std::vector<std::string>& reduce_axes,
                          const std::map<std::string, int64_t>& ext) {
    auto b = std::make_unique<tir::Stmt>(tir::StmtKind::Block);
    b->name = name;
    auto add = [&](const std::string& a, tir::IterKind kind) {
      tir::IterVar v;
      v.name = iter_of.at(a);
      v.extent = ext.at(a);
      v.kind = kind;
      v.binding = tir::var(a);
      b->iters.push_back(std::move(v));
    };
    for (const auto& a : st.indices) add(a, tir::IterKind::Spatial);
    for (const auto& a : reduce_axes) add(a, tir::IterKind::Reduce);
    return b;
  }

  static tir::StmtPtr nest(const std::vector<std::string>& axes,
                           const std::map<std::string, int64_t>& ext, tir::StmtPtr body) {
    for (size_t i = axes.size(); i-- > 0;) body = tir::make_for(axes[i], ext.at(axes[i]), std::move(body));
    return body;
  }

  bool stage(size_t s, std::vector<tir::StmtPtr>& out) {
    const KernelStage& st = k.stages[s];
    if (!check_call(*st.value)) return false;
    const auto& ext = an.extents[s];
    const Expr* red = an.reduce[s];
    std::vector<std::string> reduce_axes = red ? red->axes : std::vector<std::string>{};

    // Block iteration variables are "v" + axis, made unique against every axis name.
    iter_of.clear();
    std::set<std::string> names(st.indices.begin(), st.indices.end());
    names.insert(reduce_axes.begin(), reduce_axes.end());
    for (const auto& a : names) {
      std::string v = "v" + a;
      while (names.count(v)) v = "v" + v;
      iter_of[a] = v;
    }

    bool returned = st.target == k.result;
    std::vector<int64_t> shape = an.buffers.at(st.target).shape;
    if (!red) {
      int t = add_buffer(st.target, shape,
                         returned ? tir::BufferRole::Output : tir::BufferRole::Temp);
      an.buffers[st.target].index = t;
      auto b = make_block(st.target, st, {}, ext);
      b->body = tir::make_store(t, target_indices(st), value(*st.value, nullptr));
      out.push_back(nest(st.indices, ext, std::move(b)));
      return true;
    }

    // A reduction: init with the identity, then fold each element in.
    tir::Op combine = red->text == "sum" ? tir::Op::Add
                      : red->text == "max" ? tir::Op::Max : tir::Op::Min;
    double identity = red->text == "sum" ? 0.0
                      : red->text == "max" ? -std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::infinity();
    bool nested = red != st.value.get();
    std::string acc_name = nested ? fresh_buffer(st.target + "_acc") : st.target;
    int acc = add_buffer(acc_name, shape,
                         !nested && returned ? tir::BufferRole::Output : tir::BufferRole::Temp);
    auto rb = make_block(acc_name, st, reduce_axes, ext);
    rb->init = tir::make_store(acc, target_indices(st), tir::float_imm(identity));
    rb->body = tir::make_store(
        acc, target_indices(st),
        tir::binary(combine, tir::load(acc, target_indices(st)), value(*red->kids[0], nullptr)));
    tir::StmtPtr reduce_nest = nest(reduce_axes, ext, std::move(rb));
    if (!nested) {
      an.buffers[st.target].index = acc;
      out.push_back(nest(st.indices, ext, std::move(reduce_nest)));
      return true;
    }

    // Nested: the rest of the expression runs inside the same spatial loops, right after
    // the reduce loops have finished this element (the seed notes' hand-fused linear_relu).
    int t = add_buffer(st.target, shape,
                       returned ? tir::BufferRole::Output : tir::BufferRole::Temp);
    an.buffers[st.target].index = t;
    tir::ExprPtr acc_load = tir::load(acc, target_indices(st));
    auto b = make_block(st.target, st, {}, ext);
    b->body = tir::make_store(t, target_indices(st), value(*st.value, acc_load.get()));
    std::vector<tir::StmtPtr> both;
    both.push_back(std::move(reduce_nest));
    both.push_back(std::move(b));
    out.push_back(nest(st.indices, ext, tir::make_seq(std::move(both))));
    return true;
  }
};

}  // namespace

// ---- lower / result_shape / shapes_for -------------------------------------------------------

bool result_shape(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
                  std::vector<int64_t>* shape, Diagnostic* error) {
  Analysis an(kernel, error);
  if (!an.run(arg_shapes)) return false;
  if (shape) *shape = an.buffers.at(kernel.result).shape;
  return true;
}

bool lower(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
           tir::PrimFunc* out, Diagnostic* error) {
  Analysis an(kernel, error);
  if (!an.run(arg_shapes)) return false;
  tir::PrimFunc f;
  f.name = kernel.name;
  for (size_t p = 0; p < kernel.params.size(); p++) {
    f.buffers.push_back(
        {kernel.params[p].name, arg_shapes[p], tir::Scope::Global, tir::BufferRole::Input});
    f.params.push_back(int(p));
    an.buffers[kernel.params[p].name].index = int(p);
  }
  Builder b{kernel, an, f, {}, error};
  std::vector<tir::StmtPtr> stages;
  for (size_t s = 0; s < kernel.stages.size(); s++)
    if (!b.stage(s, stages)) return false;
  f.output = an.buffers.at(kernel.result).index;
  f.body = stages.size() == 1 ? std::move(stages[0]) : tir::make_seq(std::move(stages));
  if (out) *out = std::move(f);
  return true;
}

std::vector<std::vector<int64_t>> shapes_for(const KernelDecl& kernel,
                                             const std::map<std::string, int64_t>& dims,
                                             int64_t default_dim) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& p : kernel.params) {
    std::vector<int64_t> shape;
    for (const auto& d : p.tensor.dims) {
      if (d.name.empty()) {
        shape.push_back(d.value);
        continue;
      }
      auto it = dims.find(d.name);
      shape.push_back(it != dims.end() ? it->second : default_dim);
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::vector<std::string> dim_names(const KernelDecl& kernel) {
  std::vector<std::string> names;
  for (const auto& p : kernel.params)
    for (const auto& d : p.tensor.dims)
      if (!d.name.empty() && std::find(names.begin(), names.end(), d.name) == names.end())
        names.push_back(d.name);
  return names;
}

}  // namespace descent::tensor
