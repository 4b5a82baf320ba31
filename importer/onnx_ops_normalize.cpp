// ONNX ops that normalise along an axis: Softmax (the prelude's softmax along a matrix's
// rows, softmax3 along the last axis of a rank-3 tensor) and LayerNormalization (the
// prelude's layer_norm, over a matrix's rows).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

bool Importer::softmax(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  // Before opset 13 the default axis was 1 and the input was seen as 2-D around it; from 13
  // the default is -1. For a matrix and the rows' axis both mean the prelude's softmax.
  int64_t axis = attr_int(n, "axis", opset_ < 13 ? 1 : -1);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  // Attention's scores [heads, s, t], along the last axis (opset 13 and later: before, the
  // input was coerced to 2-D around the axis, another computation).
  if (rank == 3 && (axis == 2 || axis == -1) && opset_ >= 13) {
    emit(n, x.shape, fmt::format("softmax3({})", expr(x)));
    return true;
  }
  if (rank != 2 || (axis != 1 && axis != -1))
    return node_fail(n, fmt::format("only a softmax along the rows of a matrix, or the last axis "
                                    "of a rank-3 tensor, is supported (input {}, axis {})",
                                    shape_str(x.shape), axis));
  emit(n, x.shape, fmt::format("softmax({})", expr(x)));
  return true;
}

bool Importer::layer_norm(const onnx::NodeProto& n) {
  Value x, scale, bias;
  if (!input(n, 0, &x) || !input(n, 1, &scale)) return false;
  bool has_bias = n.input_size() > 2 && !n.input(2).empty();
  if (has_bias && !input(n, 2, &bias)) return false;
  int64_t axis = attr_int(n, "axis", -1);
  float epsilon = attr_float(n, "epsilon", 1e-5f);
  if (x.shape.size() != 2 || (axis != 1 && axis != -1))
    return node_fail(n, fmt::format("only a layer norm over the rows of a matrix is supported "
                                    "(input {}, axis {})", shape_str(x.shape), axis));
  // The prelude's layer_norm adds 1e-5 to the variance, the op's default (and PyTorch's).
  if (epsilon != 1e-5f)
    return node_fail(n, fmt::format("epsilon {} is not the prelude layer_norm's 1e-05", epsilon));
  Dim cols = x.shape[1];
  if (scale.shape.size() != 1 || !(scale.shape[0] == cols) ||
      (has_bias && (bias.shape.size() != 1 || !(bias.shape[0] == cols))))
    return node_fail(n, fmt::format("scale {} and bias {} must be [{}], one per column",
                                    shape_str(scale.shape), has_bias ? shape_str(bias.shape) : "(none)",
                                    shape_str({cols})));
  std::string b = has_bias ? expr(bias) : "zeros(" + shape_str({cols}) + ")";
  emit(n, x.shape, fmt::format("layer_norm({}, {}, {})", expr(x), expr(scale), b));
  return true;
}

}  // namespace descent::importer::onnx_internal
