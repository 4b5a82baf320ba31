// ONNX elementwise ops: Add, Relu, Sigmoid, Tanh. On matrices they are the prelude's add,
// relu, sigmoid and tanh; at other ranks a kernel is generated once per (op, rank). Add also takes a row vector added to every row (a bias).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

// A kernel for an elementwise op at a rank the prelude does not cover (the prelude's are
// for matrices), generated once per (op, rank).
std::string Importer::elementwise_kernel(const std::string& op, size_t rank) {
  std::string name = fmt::format("{}_{}d", op, rank);
  if (kernel_names_.count(name)) return name;
  kernel_names_.insert(name);
  std::vector<std::string> dims, idx;
  for (size_t i = 0; i < rank; ++i) {
    dims.push_back("d" + std::to_string(i));
    idx.push_back("i" + std::to_string(i));
  }
  std::string d = join(dims), ix = "[" + join(idx) + "]";
  std::string doc, params = fmt::format("x: f32[{}]", d), body;
  if (op == "relu") {
    doc = "relu(x) = max(x, 0), element by element";
    body = fmt::format("max(x{}, 0.0)", ix);
  } else if (op == "sigmoid") {
    doc = "sigmoid(x) = 1 / (1 + exp(-x)), element by element (ONNX Sigmoid). For x below\n"
          "# about -88, exp(-x) is inf in f32 and the result is 0, as it should be";
    body = fmt::format("1.0 / (1.0 + exp(-x{}))", ix);
  } else if (op == "tanh") {
    doc = "tanh(x) = 1 - 2 / (exp(2x) + 1), element by element (ONNX Tanh). Written this way\n"
          "# rather than (e^2x - 1) / (e^2x + 1), which is inf / inf = nan for x above about 44";
    body = fmt::format("1.0 - 2.0 / (exp(2.0 * x{}) + 1.0)", ix);
  } else {  // add
    doc = "a + b, element by element; both must have the same shape";
    params = fmt::format("a: f32[{0}], b: f32[{0}]", d);
    body = fmt::format("a{0} + b{0}", ix);
  }
  kernels_.push_back(fmt::format("# {}.\nkernel {}({}) -> f32[{}] {{\n  out{} = {}\n  return out\n}}\n",
                                 doc, name, params, d, ix, body));
  return name;
}

bool Importer::unary(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  std::string op = n.op_type() == "Relu" ? "relu" : n.op_type() == "Sigmoid" ? "sigmoid" : "tanh";
  // On matrices the prelude has all three (its sigmoid and tanh in two pieces that never
  // overflow); at other ranks a generated kernel.
  std::string k = x.shape.size() == 2 ? op : elementwise_kernel(op, x.shape.size());
  emit(n, x.shape, fmt::format("{}({})", k, expr(x)));
  return true;
}

bool Importer::add(const onnx::NodeProto& n) {
  Value a, b;
  if (!input(n, 0, &a) || !input(n, 1, &b)) return false;
  if (a.shape == b.shape) {
    std::string k = a.shape.size() == 2 ? "add" : elementwise_kernel("add", a.shape.size());
    emit(n, a.shape, fmt::format("{}({}, {})", k, expr(a), expr(b)));
    return true;
  }
  // A row vector added to every row of a matrix (a bias), in either order.
  if (b.shape.size() == 2 && a.shape.size() != 2) std::swap(a, b);
  if (a.shape.size() == 2) {
    Dim cols = a.shape[1];
    bool vec = b.shape.size() == 1 && b.shape[0] == cols;
    bool row = b.shape.size() == 2 && b.shape[0] == Dim{1, false} && b.shape[1] == cols;
    if (vec || (row && !cols.symbolic)) {
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
  return node_fail(n, fmt::format("adding {} and {} needs broadcasting Descent does not import "
                                  "(same shapes, or a row vector [N] or [1, N] added to every "
                                  "row of an [M, N] matrix)", shape_str(a.shape), shape_str(b.shape)));
}

}  // namespace descent::importer::onnx_internal
