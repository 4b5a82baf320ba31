// ONNX ops that normalise or reduce along axes: Softmax (the prelude's softmax along a
// matrix's rows, softmax3 along the last axis of a rank-3 tensor, a kernel generated per
// (rank, axis) otherwise), LayerNormalization (the prelude's layer_norm over a matrix's rows,
// a generated kernel over the last axis at other ranks) and ReduceMean (a generated kernel).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

namespace {

// `idx` with entry k replaced by `with`, or removed when `with` is empty, as "[..]".
std::string index_with(std::vector<std::string> idx, size_t k, const std::string& with) {
  if (with.empty()) idx.erase(idx.begin() + long(k));
  else idx[k] = with;
  return "[" + join(idx) + "]";
}

}  // namespace

bool Importer::softmax(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  // Before opset 13 the default axis was 1 and the input was seen as 2-D around it (a softmax
  // over all the dims from the axis on); from 13 the default is -1, one axis.
  int64_t axis = attr_int(n, "axis", opset_ < 13 ? 1 : -1);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return node_fail(n, fmt::format("axis {} is out of range for {}", axis, shape_str(x.shape)));
  if (opset_ < 13 && a != rank - 1)
    return node_fail(n, fmt::format("before opset 13 a softmax over several dims (axis {} of {}) is "
                                    "not supported; only over the last", axis, shape_str(x.shape)));
  if (rank == 2 && a == 1) {
    emit(n, x.shape, fmt::format("softmax({})", expr(x)));
    return true;
  }
  // Attention's scores [heads, s, t], along the last axis.
  if (rank == 3 && a == 2) {
    emit(n, x.shape, fmt::format("softmax3({})", expr(x)));
    return true;
  }
  // Any other (rank, axis): the row max, the exponentials, their sum and the quotient, as
  // the prelude's softmax does along its rows.
  auto dims = numbered("d", size_t(rank)), idx = numbered("i", size_t(rank));
  std::string all = "[" + join(idx) + "]", rest = index_with(idx, size_t(a), ""),
              along = index_with(idx, size_t(a), "c");
  std::string text = fmt::format(
      "# ONNX Softmax along axis {0} of a rank-{1} tensor: exp(x - the max along the axis),\n"
      "# divided by its sum along the axis.\n"
      "kernel NAME(x: f32[{2}]) -> f32[{2}] {{\n"
      "  mx{3} = max(c) x{4}\n  e{5} = exp(x{5} - mx{3})\n  s{3} = sum(c) e{4}\n"
      "  out{5} = e{5} / s{3}\n  return out\n}}\n",
      a, rank, join(dims), rest, along, all);
  std::string k = kernel(fmt::format("softmax_{}d_axis{}", rank, a), text);
  emit(n, x.shape, fmt::format("{}({})", k, expr(x)));
  return true;
}

bool Importer::layer_norm(const onnx::NodeProto& n) {
  Value x, scale, bias;
  if (!input(n, 0, &x) || !input(n, 1, &scale)) return false;
  bool has_bias = n.input_size() > 2 && !n.input(2).empty();
  if (has_bias && !input(n, 2, &bias)) return false;
  int64_t axis = attr_int(n, "axis", -1);
  float epsilon = attr_float(n, "epsilon", 1e-5f);
  const size_t rank = x.shape.size();
  if (rank < 2 || (axis != int64_t(rank) - 1 && axis != -1))
    return node_fail(n, fmt::format("only a layer norm over the last axis is supported (input {}, "
                                    "axis {})", shape_str(x.shape), axis));
  // The prelude's layer_norm adds 1e-5 to the variance, the op's default (and PyTorch's);
  // the generated kernels do the same.
  if (epsilon != 1e-5f)
    return node_fail(n, fmt::format("epsilon {} is not the prelude layer_norm's 1e-05", epsilon));
  Dim cols = x.shape.back();
  if (scale.shape.size() != 1 || !(scale.shape[0] == cols) ||
      (has_bias && (bias.shape.size() != 1 || !(bias.shape[0] == cols))))
    return node_fail(n, fmt::format("scale {} and bias {} must be [{}], one per column",
                                    shape_str(scale.shape), has_bias ? shape_str(bias.shape) : "(none)",
                                    shape_str({cols})));
  std::string b = has_bias ? expr(bias) : "zeros(" + shape_str({cols}) + ")";
  if (rank == 2) {
    emit(n, x.shape, fmt::format("layer_norm({}, {}, {})", expr(x), expr(scale), b));
    return true;
  }
  // Other ranks: the prelude's layer_norm with the leading dims kept (a [batch, s, d]
  // activation normalised per token), rather than reshaped around it.
  auto dims = numbered("d", rank), idx = numbered("i", rank);
  std::string last = dims.back(), all = "[" + join(idx) + "]", row = index_with(idx, rank - 1, ""),
              along = index_with(idx, rank - 1, "j");
  std::string text = fmt::format(
      "# ONNX LayerNormalization over the last axis of a rank-{0} tensor, as the prelude's\n"
      "# layer_norm does over a matrix's rows (epsilon 1e-5).\n"
      "kernel NAME(x: f32[{1}], gamma: f32[{2}], beta: f32[{2}]) -> f32[{1}] {{\n"
      "  mu{3} = sum(j) x{4} / {2}\n"
      "  var{3} = sum(j) (x{4} - mu{3}) * (x{4} - mu{3}) / {2}\n"
      "  out{5} = (x{5} - mu{3}) / sqrt(var{3} + 0.00001) * gamma[{6}] + beta[{6}]\n"
      "  return out\n}}\n",
      rank, join(dims), last, row, along, all, idx.back());
  std::string k = kernel(fmt::format("layer_norm_{}d", rank), text);
  emit(n, x.shape, fmt::format("{}({}, {}, {})", k, expr(x), expr(scale), b));
  return true;
}

// ReduceMean over constant axes (the attribute, or from opset 18 the second input), the
// reduced dims kept as 1 (keepdims, the default) or dropped.
bool Importer::reduce_mean(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (n.input_size() > 1 && !n.input(1).empty() && !const_ints(n, 1, &axes)) return false;
  const size_t rank = x.shape.size();
  bool keep = attr_int(n, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes", 0) != 0) {
      alias(n, x, "(no code: no axes, the same tensor)");
      return true;
    }
    for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    int64_t k = a < 0 ? a + int64_t(rank) : a;
    if (k < 0 || k >= int64_t(rank))
      return node_fail(n, fmt::format("axis {} is out of range for {}", a, shape_str(x.shape)));
    reduced[size_t(k)] = true;
  }
  auto dims = numbered("d", rank), idx = numbered("i", rank);
  std::vector<std::string> in_idx, out_idx, out_dims, sums, divisors;
  Shape y;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      sums.push_back("r" + std::to_string(d));
      in_idx.push_back(sums.back());
      divisors.push_back(dims[d]);
      if (keep) {
        // A kept dim of size 1: an axis of the result whose extent the return type gives.
        out_idx.push_back(idx[d]);
        out_dims.push_back("1");
        y.push_back({1, false});
      }
    } else {
      in_idx.push_back(idx[d]);
      out_idx.push_back(idx[d]);
      out_dims.push_back(dims[d]);
      y.push_back(x.shape[d]);
    }
  }
  if (y.empty())
    return node_fail(n, "a mean of every element to a scalar (keepdims = 0) is not supported; "
                        "Descent's tensors have at least one dim");
  std::string text = fmt::format(
      "# ONNX ReduceMean over the dims {}: their sum over their count.\n"
      "kernel NAME(x: f32[{}]) -> f32[{}] {{\n  out[{}] = (sum({}) x[{}]) / ({})\n  return out\n}}\n",
      join(divisors), join(dims), join(out_dims), join(out_idx), join(sums), join(in_idx),
      join(divisors, " * "));
  std::string k = kernel(fmt::format("mean_{}d", rank), text);
  emit(n, y, fmt::format("{}({})", k, expr(x)));
  return true;
}

}  // namespace descent::importer::onnx_internal
