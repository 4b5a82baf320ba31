// ONNX ops that normalise along an axis: Softmax (the prelude's, along a matrix's rows).
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
  if (rank != 2 || (axis != 1 && axis != -1))
    return node_fail(n, fmt::format("only a softmax along the rows of a matrix is supported "
                                    "(input {}, axis {})", shape_str(x.shape), axis));
  emit(n, x.shape, fmt::format("softmax({})", expr(x)));
  return true;
}

}  // namespace descent::importer::onnx_internal
