// ONNX elementwise ops of two and three inputs, with NumPy's broadcasting at any rank: Add,
// Sub, Mul, Div, Pow, Equal, Less, Greater and Where. Two matrices of one shape are the
// prelude's add and mul, a row vector added to every row its bias_add; every other pattern
// gets a kernel generated once per (op, shapes) whose indices say the broadcast: a [d2] bias
// added to a [d0, d1, d2] tensor reads b[i2], a [1, d1, 1] operand reads c[0, i1, 0]. A
// constant of one element (a scale, GELU's 0.5, a mask's -inf) is written into the kernel's
// text instead of being an operand.
#include <fmt/format.h>

#include <algorithm>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {
namespace {

// A constant of one element, as kernel text; "" when `v` is not one. Infinities become f32's
// largest value: in a mask's arithmetic (where(c, x, -inf) as c * x + (1 - c) * -inf) an
// infinity times 0 would be nan, and exp(-3.4e38) is 0 as exp(-inf) is.
std::string literal(const Value& v, std::string* note) {
  if (!v.constant || !v.constant->is_float || v.constant->data.data.size() != 1) return "";
  float x = v.constant->data.data[0];
  if (std::isinf(x)) {
    *note = fmt::format("{} written as {}3.4028235e+38, the largest f32 (0 * inf would be nan)",
                        x > 0 ? "inf" : "-inf", x > 0 ? "" : "-");
    x = x > 0 ? FLT_MAX : -FLT_MAX;
  }
  std::string s = tensor::format_f32(x);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return x < 0 ? "(" + s + ")" : s;
}

}  // namespace

bool Importer::binary(const onnx::NodeProto& n) {
  Value a, b;
  if (!input(n, 0, &a) || !input(n, 1, &b)) return false;
  const std::string& op = n.op_type();
  if (op == "Add" || op == "Mul") {
    // Matrices: the prelude's kernels, which the graph passes know how to fuse.
    if (a.shape == b.shape && a.shape.size() == 2) {
      emit(n, a.shape, fmt::format("{}({}, {})", op == "Add" ? "add" : "mul", expr(a), expr(b)));
      return true;
    }
    // A row vector added to every row of a matrix (a bias), in either order.
    if (op == "Add" && b.shape.size() == 2 && a.shape.size() != 2) std::swap(a, b);
    Dim cols = a.shape.size() == 2 ? a.shape[1] : Dim{};
    bool vec = b.shape.size() == 1 && b.shape[0] == cols;
    bool row = b.shape.size() == 2 && b.shape[0] == Dim{1, false} && b.shape[1] == cols && !cols.symbolic;
    if (op == "Add" && a.shape.size() == 2 && (vec || row) && !(b.constant && b.constant->data.data.size() == 1)) {
      std::string eb;
      if (vec) {
        eb = expr(b);
      } else if (b.constant) {
        tensor::Tensor v = b.constant->data;
        v.shape = {cols.value};
        eb = weight(*b.constant, &v, "_row", "as [N]");
      } else {
        eb = fmt::format("reshape({}, [{}])", b.var, cols.value);
      }
      emit(n, a.shape, fmt::format("bias_add({}, {})", expr(a), eb));
      return true;
    }
  }
  if (op == "Pow") {
    std::string note, e = literal(b, &note);
    if (e.empty())
      return node_fail(n, "the exponent must be a constant (one number)");
    float p = b.constant->data.data[0];
    if (p != 2.0f && p != 3.0f && p != 0.5f && p != 1.0f)
      return node_fail(n, fmt::format("exponent {} is not supported (2, 3, 0.5 and 1 are: x * x, "
                                      "x * x * x, sqrt(x), x)", tensor::format_f32(p)));
    const char* form = p == 2.0f ? "{0} * {0}" : p == 3.0f ? "{0} * {0} * {0}" : p == 0.5f ? "sqrt({0})" : "{0}";
    return broadcast(n, "pow", fmt::format("x ** {}", tensor::format_f32(p)), {a},
                     [form](const std::vector<std::string>& x) { return fmt::format(fmt::runtime(form), x[0]); });
  }
  const char* sym = op == "Add" ? "+" : op == "Sub" ? "-" : op == "Mul" ? "*" : op == "Div" ? "/"
                    : op == "Equal" ? "==" : op == "Less" ? "<" : ">";
  bool compare = op == "Equal" || op == "Less" || op == "Greater";
  std::string doc = compare ? fmt::format("a {} b as a mask: 1.0 where it holds, else 0.0", sym)
                            : fmt::format("a {} b", sym);
  std::string base = op;
  std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return std::tolower(c); });
  return broadcast(n, base, doc, {a, b}, [sym, compare](const std::vector<std::string>& x) {
    return compare ? fmt::format("({} {} {})", x[0], sym, x[1]) : fmt::format("{} {} {}", x[0], sym, x[1]);
  });
}

// Where(c, x, y): x where c holds, else y. Descent's masks are 0.0 and 1.0, so it is the
// mask's arithmetic, c * x + (1 - c) * y, written with comparisons so that any nonzero c
// counts as true, as ONNX's bool does.
bool Importer::where(const onnx::NodeProto& n) {
  Value c, x, y;
  if (!input(n, 0, &c) || !input(n, 1, &x) || !input(n, 2, &y)) return false;
  return broadcast(n, "where", "x where c is not 0, else y", {c, x, y}, [](const std::vector<std::string>& v) {
    return fmt::format("({0} != 0.0) * {1} + ({0} == 0.0) * {2}", v[0], v[1], v[2]);
  });
}

bool Importer::broadcast(const onnx::NodeProto& n, const std::string& base, const std::string& doc,
                         const std::vector<Value>& ins,
                         const std::function<std::string(const std::vector<std::string>&)>& body) {
  // The result's shape: NumPy's rule, from the last dim back.
  Shape out;
  for (const Value& v : ins) out.resize(std::max(out.size(), v.shape.size()), Dim{1, false});
  for (const Value& v : ins) {
    for (size_t d = 0; d < v.shape.size(); ++d) {
      Dim& o = out[out.size() - v.shape.size() + d];
      const Dim& k = v.shape[d];
      if (o == k || k == Dim{1, false}) continue;
      if (!(o == Dim{1, false})) {
        std::vector<std::string> shapes;
        for (const Value& w : ins) shapes.push_back(shape_str(w.shape));
        return node_fail(n, fmt::format("the shapes {} do not broadcast (each dim must be equal, "
                                        "or 1 in one of them)", join(shapes, " and ")));
      }
      o = k;
    }
  }
  const size_t rank = out.size();
  const char* names[] = {"a", "b", "c"};
  if (ins.size() == 3) names[0] = "c", names[1] = "x", names[2] = "y";
  std::vector<std::string> params, args, texts, notes;
  std::vector<bool> bound(rank, false);
  for (size_t k = 0; k < ins.size(); ++k) {
    const Value& v = ins[k];
    std::string note, lit = literal(v, &note);
    if (!note.empty()) notes.push_back(note);
    if (!lit.empty()) {
      texts.push_back(lit);
      continue;
    }
    if (v.constant && !v.constant->is_float)
      return node_fail(n, fmt::format("input {} is an int64 constant; Descent computes on f32", k + 1));
    std::vector<std::string> dims, idx;
    for (size_t d = 0; d < v.shape.size(); ++d) {
      size_t od = rank - v.shape.size() + d;
      if (v.shape[d] == Dim{1, false} && !(out[od] == Dim{1, false})) {
        dims.push_back("1");  // broadcast along this dim: always element 0
        idx.push_back("0");
      } else {
        dims.push_back("d" + std::to_string(od));
        idx.push_back("i" + std::to_string(od));
        bound[od] = true;
      }
    }
    params.push_back(fmt::format("{}: f32[{}]", names[k], join(dims)));
    texts.push_back(fmt::format("{}[{}]", names[k], join(idx)));
    args.push_back(expr(v));
  }
  if (params.empty())  // constants only: fold() computes those
    return node_fail(n, "internal: no operand is data");
  std::vector<std::string> out_dims, out_idx;
  for (size_t d = 0; d < rank; ++d) {
    out_dims.push_back(bound[d] ? "d" + std::to_string(d) : "1");
    out_idx.push_back("i" + std::to_string(d));
  }
  std::string comment = fmt::format("# ONNX {} with NumPy broadcasting: {}.", n.op_type(), doc);
  for (const auto& note : notes) comment += "\n# " + note + ".";
  std::string text = fmt::format("{}\nkernel NAME({}) -> f32[{}] {{\n  out[{}] = {}\n  return out\n}}\n",
                                 comment, join(params), join(out_dims), join(out_idx), body(texts));
  std::string k = kernel(fmt::format("{}_{}d", base, rank), text);
  emit(n, out, fmt::format("{}({})", k, join(args)));
  return true;
}

}  // namespace descent::importer::onnx_internal
