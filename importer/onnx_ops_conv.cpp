// ONNX convolution: Conv (2-D, one group, stride 1, no padding), as one generated kernel per
// node whose shapes the weights fix.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

bool Importer::conv(const onnx::NodeProto& n) {
  Value x, w;
  if (!input(n, 0, &x) || !input(n, 1, &w)) return false;
  if (x.shape.size() != 4 || w.shape.size() != 4)
    return node_fail(n, fmt::format("only 2-D convolutions are supported (X [N, C, H, W], W [M, "
                                    "C, kH, kW]); here X is {} and W is {}",
                                    shape_str(x.shape), shape_str(w.shape)));
  if (attr_int(n, "group", 1) != 1) return node_fail(n, "grouped convolutions (group > 1) are not supported");
  for (const char* a : {"strides", "dilations"})
    for (int64_t v : attr_ints(n, a))
      if (v != 1) return node_fail(n, fmt::format("{} other than 1 are not supported ({} = {})", a, a,
                                                  tensor::shape_text(attr_ints(n, a))));
  for (int64_t v : attr_ints(n, "pads"))
    if (v != 0) return node_fail(n, fmt::format("padding is not supported (pads = {}); only 'valid' "
                                                "convolutions", tensor::shape_text(attr_ints(n, "pads"))));
  if (const auto* ap = find_attr(n, "auto_pad"); ap && ap->s() != "NOTSET" && ap->s() != "VALID")
    return node_fail(n, fmt::format("auto_pad = {} pads the input, which is not supported", ap->s()));
  if (!concrete(w.shape) || !concrete({x.shape[1], x.shape[2], x.shape[3]}))
    return node_fail(n, "only the batch dim may be symbolic");
  if (!(x.shape[1] == w.shape[1]))
    return node_fail(n, fmt::format("X has {} channels but W expects {}", dim_text(x.shape[1]),
                                    dim_text(w.shape[1])));
  int64_t oh = x.shape[2].value - w.shape[2].value + 1, ow = x.shape[3].value - w.shape[3].value + 1;
  if (oh < 1 || ow < 1)
    return node_fail(n, fmt::format("the kernel {} is larger than the image {}", shape_str(w.shape),
                                    shape_str(x.shape)));
  Shape y = {x.shape[0], w.shape[0], {oh, false}, {ow, false}};
  bool bias = n.input_size() > 2 && !n.input(2).empty();
  Value b;
  if (bias) {
    if (!input(n, 2, &b)) return false;
    if (b.shape.size() != 1 || !(b.shape[0] == w.shape[0]))
      return node_fail(n, fmt::format("the bias is {}; it must be {}", shape_str(b.shape), shape_str({w.shape[0]})));
  }
  // One kernel per convolution: its shapes are fixed by the weights (the output size is
  // H - kH + 1, which a kernel's signature cannot compute), the batch stays a named dim.
  std::string name = fmt::format("conv2d_{}", ++conv_count_);
  kernel_names_.insert(name);
  std::string body = "sum(c, r, s) x[b, c, i + r, j + s] * k[m, c, r, s]";
  kernels_.push_back(fmt::format(
      "# ONNX Conv {}: output channel m at (i, j) is the sum over the input channels c\n"
      "# and the {}x{} window (r, s) of x times the filter{}.\n"
      "# No padding, stride 1: only the 'valid' positions, where the window fits.\n"
      "kernel {}(x: f32{}, k: f32{}{}) -> f32{} {{\n  out[b, m, i, j] = {}{}\n  return out\n}}\n",
      label(n).substr(5), w.shape[2].value, w.shape[3].value, bias ? ", plus the channel's bias" : "",
      name, shape_str(x.shape), shape_str(w.shape), bias ? fmt::format(", bias: f32{}", shape_str(b.shape)) : "",
      shape_str(y), bias ? "bias[m] + " : "", body));
  emit(n, y, bias ? fmt::format("{}({}, {}, {})", name, expr(x), expr(w), expr(b))
                  : fmt::format("{}({}, {})", name, expr(x), expr(w)));
  return true;
}

}  // namespace descent::importer::onnx_internal
