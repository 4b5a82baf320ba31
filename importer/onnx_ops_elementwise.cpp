// ONNX elementwise ops of one input: Relu, Sigmoid, Tanh, Sqrt, Erf. On matrices the first
// three are the prelude's relu, sigmoid and tanh; otherwise a kernel is generated once per
// (op, rank). (The ops of two and three inputs, with broadcasting: onnx_ops_broadcast.cpp.)
#include <fmt/format.h>

#include <algorithm>
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
  } else if (op == "sqrt") {
    doc = "sqrt(x), element by element (ONNX Sqrt)";
    body = fmt::format("sqrt(x{})", ix);
  } else if (op == "nonzero") {
    doc = "1.0 where x is not 0, else 0.0: ONNX Cast to bool, as Descent's masks are";
    body = fmt::format("(x{} != 0.0)", ix);
  } else {  // erf
    // The prelude's gelu_erf's form of erf, in the same two pieces.
    doc = "erf(x), element by element (ONNX Erf). The kernel language has no erf: this is\n"
          "# Abramowitz and Stegun's 7.1.26, erf(z) = 1 - t (a1 + t (a2 + ... t a5)) exp(-z^2)\n"
          "# with t = 1 / (1 + p z) for z >= 0 (within 1.5e-7 of erf), and erf(-z) = -erf(z):\n"
          "# each piece sees z >= 0 only (the prelude's gelu_erf does the same)";
    auto piece = [&](const char* t, const char* z) {
      return fmt::format("  {0}{2} = 1.0 / (1.0 + 0.3275911 * {1}{2})\n"
                         "  e{1}{2} = {0}{2} * (0.254829592 + {0}{2} * (-0.284496736 + {0}{2} * "
                         "(1.421413741 + {0}{2} * (-1.453152027 + {0}{2} * 1.061405429)))) * "
                         "exp(-{1}{2} * {1}{2})\n", t, z, ix);
    };
    std::string stages = fmt::format("  zp{0} = max(x{0}, 0.0)\n  zn{0} = max(-x{0}, 0.0)\n", ix) +
                         piece("tp", "zp") + piece("tn", "zn");
    body = fmt::format("(x{0} >= 0.0) * (1.0 - ezp{0}) - (x{0} < 0.0) * (1.0 - ezn{0})", ix);
    kernels_.push_back(fmt::format("# {}.\nkernel {}({}) -> f32[{}] {{\n{}  out{} = {}\n  return out\n}}\n",
                                   doc, name, params, d, stages, ix, body));
    return name;
  }
  kernels_.push_back(fmt::format("# {}.\nkernel {}({}) -> f32[{}] {{\n  out{} = {}\n  return out\n}}\n",
                                 doc, name, params, d, ix, body));
  return name;
}

bool Importer::unary(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  std::string op = n.op_type();
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
  // On matrices the prelude has relu, sigmoid and tanh (its sigmoid and tanh in two pieces
  // that never overflow); otherwise a generated kernel.
  bool prelude = x.shape.size() == 2 && (op == "relu" || op == "sigmoid" || op == "tanh");
  std::string k = prelude ? op : elementwise_kernel(op, x.shape.size());
  emit(n, x.shape, fmt::format("{}({})", k, expr(x)));
  return true;
}

}  // namespace descent::importer::onnx_internal
