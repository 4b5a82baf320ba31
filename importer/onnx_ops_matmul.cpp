// ONNX matrix products: Gemm (a layer: nn.Linear exports as Gemm with transB = 1) and MatMul.
// Gemm's alpha and beta fold into the weights at import time, so the program calls the
// prelude's plain linear, matmul, bias_add and add.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

bool Importer::gemm(const onnx::NodeProto& n) {
  // Y = alpha * A' B' + beta * C, where A' is A or its transpose (transA), B' likewise.
  Value a, b;
  if (!input(n, 0, &a) || !input(n, 1, &b)) return false;
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return node_fail(n, fmt::format("A and B must be matrices; they are {} and {}",
                                    shape_str(a.shape), shape_str(b.shape)));
  bool trans_a = attr_int(n, "transA", 0) != 0, trans_b = attr_int(n, "transB", 0) != 0;
  float alpha = attr_float(n, "alpha", 1.0f), beta = attr_float(n, "beta", 1.0f);
  Dim m = trans_a ? a.shape[1] : a.shape[0], ka = trans_a ? a.shape[0] : a.shape[1];
  Dim kb = trans_b ? b.shape[1] : b.shape[0], nn = trans_b ? b.shape[0] : b.shape[1];
  if (!(ka == kb))
    return node_fail(n, fmt::format("A' is [{}, {}] and B' is [{}, {}]: the inner dims differ",
                                    dim_text(m), dim_text(ka), dim_text(kb), dim_text(nn)));
  std::string ea = expr(a);
  if (trans_a) ea = fmt::format("transpose({})", ea);
  std::string eb;
  if (alpha != 1.0f) {
    // alpha folds into B's values at import time when B is a weight: the kernels stay plain.
    if (!b.constant)
      return node_fail(n, fmt::format("alpha = {} needs B to be a weight (an initializer); here "
                                      "B is computed", alpha));
    tensor::Tensor scaled = b.constant->data;
    for (size_t i = 0; i < scaled.data.size(); ++i) scaled.data[i] *= alpha;
    eb = weight(*b.constant, &scaled, "_scaled", fmt::format("times alpha = {}", tensor::format_f32(alpha)));
  } else {
    eb = expr(b);
  }
  // nn.Linear's layout (B is [out, in], transB = 1) is the prelude's linear; otherwise matmul.
  std::string code = trans_b ? fmt::format("linear({}, {})", ea, eb) : fmt::format("matmul({}, {})", ea, eb);
  Shape y = {m, nn};
  if (n.input_size() > 2 && !n.input(2).empty()) {
    Value c;
    if (!input(n, 2, &c)) return false;
    if (c.constant) {
      // beta folds into C, and C broadcasts the ONNX way: a scalar, [N] or [1, N] is one
      // bias per column (bias_add), [M, N] a whole matrix (add).
      tensor::Tensor cv = c.constant->data;
      for (size_t i = 0; i < cv.data.size(); ++i) cv.data[i] *= beta;
      std::string suffix = beta != 1.0f ? "_scaled" : "";
      std::string note = beta != 1.0f ? fmt::format("times beta = {}", tensor::format_f32(beta)) : "";
      const std::vector<int64_t> cs = cv.shape;  // a copy: cv.shape changes below
      bool row = (cs.size() == 1 && !nn.symbolic && cs[0] == nn.value) ||
                 (cs.size() == 2 && cs[0] == 1 && !nn.symbolic && cs[1] == nn.value);
      bool one = cv.data.size() == 1 && !nn.symbolic;
      if (one && !row) {
        // A scalar bias: the same value for every column.
        tensor::Tensor full;
        std::string why;
        if (!tensor::full({nn.value}, cv.data[0], &full, &why)) return node_fail(n, why);
        code = fmt::format("bias_add({}, {})", code,
                           weight(*c.constant, &full, suffix + "_row", note + (note.empty() ? "" : ", ") + "one per column"));
      } else if (row) {
        cv.shape = {nn.value};
        code = fmt::format("bias_add({}, {})", code,
                           weight(*c.constant, &cv, cs.size() == 2 ? suffix + "_row" : suffix,
                                  note + (cs.size() == 2 ? std::string(note.empty() ? "" : ", ") + "as [N]" : "")));
      } else if (concrete_shape(cs) == y) {
        code = fmt::format("add({}, {})", code, weight(*c.constant, &cv, suffix, note));
      } else {
        return node_fail(n, fmt::format("C of shape {} does not broadcast to Y {} the ways "
                                        "Descent imports (a scalar, [N], [1, N] or [M, N])",
                                        tensor::shape_text(cs), shape_str(y)));
      }
    } else {
      if (beta != 1.0f)
        return node_fail(n, fmt::format("beta = {} needs C to be a weight (an initializer)", beta));
      if (c.shape.size() == 1 && c.shape[0] == nn) code = fmt::format("bias_add({}, {})", code, c.var);
      else if (c.shape == y) code = fmt::format("add({}, {})", code, c.var);
      else
        return node_fail(n, fmt::format("a computed C must be [N] or [M, N] ({} or {}); it is {}",
                                        shape_str({nn}), shape_str(y), shape_str(c.shape)));
    }
  }
  emit(n, y, code);
  return true;
}

// MatMul with NumPy's matmul rules where Descent has a kernel for them: two matrices
// (matmul); a batch of matrices times one matrix (every row of the batch through one
// matmul, reshaped around it); two batches with the same batch dims (bmm, on [batch, n, k]
// after flattening the batch dims when there are several: attention's Q K^T per head).
bool Importer::matmul(const onnx::NodeProto& n) {
  Value a, b;
  if (!input(n, 0, &a) || !input(n, 1, &b)) return false;
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra < 2 || rb < 2)
    return node_fail(n, fmt::format("a vector operand ({} times {}) is not supported; both must be "
                                    "at least 2-D", shape_str(a.shape), shape_str(b.shape)));
  if (!(a.shape[ra - 1] == b.shape[rb - 2]))
    return node_fail(n, fmt::format("{} times {}: the inner dims differ", shape_str(a.shape),
                                    shape_str(b.shape)));
  const Dim rows = a.shape[ra - 2], inner = a.shape[ra - 1], cols = b.shape[rb - 1];
  if (ra == 2 && rb == 2) {
    emit(n, {rows, cols}, fmt::format("matmul({}, {})", expr(a), expr(b)));
    return true;
  }
  Shape lead_a(a.shape.begin(), a.shape.end() - 2), lead_b(b.shape.begin(), b.shape.end() - 2);
  Shape y = ra >= rb ? lead_a : lead_b;
  y.push_back(rows);
  y.push_back(cols);
  // The batch dims multiply out into one ("batch * 4" when the batch is among them); only
  // the matrices' own dims must be numbers.
  if (rows.symbolic || inner.symbolic || cols.symbolic)
    return node_fail(n, fmt::format("{} times {}: the batch n as a matrix dim is not supported",
                                    shape_str(a.shape), shape_str(b.shape)));
  if (rb == 2) {
    Shape flat = lead_a;
    flat.push_back(rows);
    emit(n, y, fmt::format("reshape(matmul(reshape({}, [{}, {}]), {}), [{}])", expr(a),
                           product_code(flat), inner.value, expr(b), join(dims_code(y))));
    return true;
  }
  if (!(lead_a == lead_b))
    return node_fail(n, fmt::format("{} times {}: batch dims that differ (broadcasting) are not "
                                    "supported", shape_str(a.shape), shape_str(b.shape)));
  if (ra == 3) {
    emit(n, y, fmt::format("bmm({}, {})", expr(a), expr(b)));
    return true;
  }
  std::string batch = product_code(lead_a);
  emit(n, y, fmt::format("reshape(bmm(reshape({}, [{}, {}, {}]), reshape({}, [{}, {}, {}])), [{}])",
                         expr(a), batch, rows.value, inner.value, expr(b), batch, inner.value,
                         cols.value, join(dims_code(y))));
  return true;
}

}  // namespace descent::importer::onnx_internal
