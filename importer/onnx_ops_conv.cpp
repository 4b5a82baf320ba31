// ONNX convolution and pooling on [N, C, H, W] images: Conv (pads, strides, dilations,
// groups), MaxPool and AveragePool (kernel_shape, strides, pads; count_include_pad), each a
// kernel generated per node whose shapes the weights and attributes fix.
//
// Padding: a kernel reads only in range (its indices are affine in its axes, and the
// reference interpreter checks every access), so a padded input is made first, by kernels
// that place x's rows (then columns) inside a larger tensor with a mask, out[h] = sum(u)
// (u + top == h) * x[u] plus the fill outside (0 for Conv and AveragePool, f32's lowest for
// MaxPool). That costs the image's height (then width) per element: fine for the small
// images the test models hold.
#include <fmt/format.h>

#include <algorithm>

#include <cfloat>
#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {
namespace {

// The window attributes of Conv and the pools, checked, with the output size.
struct Window {
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  int64_t oh = 0, ow = 0;
  // The padded input's size the windows read: the last window's end (rows past it, which
  // no window reaches, are cut off, so the kernel's inferred extents are the window's).
  int64_t ph() const { return sh * (oh - 1) + dh * (kh - 1) + 1; }
  int64_t pw() const { return sw * (ow - 1) + dw * (kw - 1) + 1; }
};

std::string fill_text(float fill) {
  return fill == 0.0f ? "" : fmt::format("(-{})", tensor::format_f32(-fill));
}

}  // namespace

std::string Importer::pad_code(const Value& x, int64_t top, int64_t left, int64_t bottom,
                               int64_t right, float fill, Shape* padded) {
  std::string code = expr(x);
  *padded = x.shape;
  // One pass per image axis (2: rows, 3: columns) whose size changes.
  for (int axis = 2; axis <= 3; ++axis) {
    int64_t before = axis == 2 ? top : left, after = axis == 2 ? bottom : right;
    int64_t size = (*padded)[size_t(axis)].value, out = before + size + after;
    if (before == 0 && after == 0) continue;
    std::vector<std::string> in_dims = {"d0", "d1", "d2", "d3"}, out_dims = in_dims,
                             out_idx = {"i0", "i1", "i2", "i3"}, in_idx = out_idx;
    in_dims[size_t(axis)] = std::to_string(size);
    out_dims[size_t(axis)] = std::to_string(out);
    out_idx[size_t(axis)] = "h";
    in_idx[size_t(axis)] = "u";
    std::string at = before == 0 ? "u" : fmt::format("u + {}", before);
    std::string body = fmt::format("(sum(u) ({} == h) * x[{}])", at, join(in_idx));
    // Outside x's range the fill: (h < top) + (h >= top + size) is 1 there, 0 inside.
    std::vector<std::string> outside;
    if (before > 0) outside.push_back(fmt::format("(h < {})", before));
    if (after > 0) outside.push_back(fmt::format("(h >= {})", before + size));
    if (fill != 0.0f && !outside.empty())
      body += fmt::format(" + ({}) * {}", join(outside, " + "), fill_text(fill));
    std::string text = fmt::format(
        "# {} {} before and {} after dim {} of an [N, C, H, W] tensor{}{}: x's element u\n"
        "# lands at u + {} (a mask picks it: an index is affine in the axes and reads only in range).\n"
        "kernel NAME(x: f32[{}]) -> f32[{}] {{\n  out[{}] = {}\n  return out\n}}\n",
        after < 0 ? "Padding (or cutting)" : "Padding", before, after, axis,
        fill == 0.0f ? ", zeros outside" : ", f32's lowest outside", after < 0 ? " (a negative count cuts)" : "",
        before, join(in_dims), join(out_dims), join(out_idx), body);
    code = fmt::format("{}({})", kernel(axis == 2 ? "pad_rows" : "pad_cols", text), code);
    (*padded)[size_t(axis)] = {out, false};
  }
  return code;
}

namespace {

// Reads kernel_shape (or the weights' kh, kw), strides, dilations, pads and auto_pad for an
// image of h x w; false with *why when they are not what a 2-D window takes.
bool read_window(const onnx::NodeProto& n, int64_t h, int64_t w, int64_t kh, int64_t kw,
                 Window* win, std::string* why) {
  std::vector<int64_t> k = attr_ints(n, "kernel_shape");
  if (!k.empty() && (k.size() != 2 || (kh > 0 && (k[0] != kh || k[1] != kw)))) {
    *why = fmt::format("kernel_shape {} does not fit a 2-D window", tensor::shape_text(k));
    return false;
  }
  win->kh = k.empty() ? kh : k[0];
  win->kw = k.empty() ? kw : k[1];
  auto pair = [&](const char* name, int64_t* a, int64_t* b) {
    std::vector<int64_t> v = attr_ints(n, name);
    if (v.empty()) return true;
    if (v.size() != 2 || v[0] < 1 || v[1] < 1) {
      *why = fmt::format("{} {} must be two numbers of at least 1", name, tensor::shape_text(v));
      return false;
    }
    *a = v[0];
    *b = v[1];
    return true;
  };
  if (!pair("strides", &win->sh, &win->sw) || !pair("dilations", &win->dh, &win->dw)) return false;
  std::vector<int64_t> pads = attr_ints(n, "pads");
  if (!pads.empty()) {
    if (pads.size() != 4 || std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
      *why = fmt::format("pads {} must be four numbers of at least 0 (top, left, bottom, right)",
                         tensor::shape_text(pads));
      return false;
    }
    win->top = pads[0], win->left = pads[1], win->bottom = pads[2], win->right = pads[3];
  }
  int64_t eh = win->dh * (win->kh - 1) + 1, ew = win->dw * (win->kw - 1) + 1;
  if (const auto* ap = find_attr(n, "auto_pad"); ap && ap->s() != "NOTSET" && ap->s() != "VALID") {
    if (ap->s() != "SAME_UPPER" && ap->s() != "SAME_LOWER") {
      *why = "auto_pad " + ap->s() + " is not an ONNX auto_pad";
      return false;
    }
    // SAME: the output is ceil(size / stride), the padding split with the extra one after
    // (SAME_UPPER) or before (SAME_LOWER).
    auto same = [&](int64_t size, int64_t s, int64_t e, int64_t* a, int64_t* b) {
      int64_t total = std::max<int64_t>(((size + s - 1) / s - 1) * s + e - size, 0);
      *a = ap->s() == "SAME_UPPER" ? total / 2 : total - total / 2;
      *b = total - *a;
    };
    same(h, win->sh, eh, &win->top, &win->bottom);
    same(w, win->sw, ew, &win->left, &win->right);
  }
  win->oh = (h + win->top + win->bottom - eh) / win->sh + 1;
  win->ow = (w + win->left + win->right - ew) / win->sw + 1;
  if (h + win->top + win->bottom < eh || w + win->left + win->right < ew) {
    *why = fmt::format("the {}x{} window is larger than the padded {}x{} image", eh, ew,
                       h + win->top + win->bottom, w + win->left + win->right);
    return false;
  }
  return true;
}

// "i * 2 + r * 3" for an output index i, a window index r, a stride and a dilation.
std::string window_index(const char* i, int64_t s, const char* r, int64_t d) {
  std::string a = s == 1 ? i : fmt::format("{} * {}", i, s), b = d == 1 ? r : fmt::format("{} * {}", r, d);
  return a + " + " + b;
}

}  // namespace

bool Importer::conv(const onnx::NodeProto& n) {
  Value x, w;
  if (!input(n, 0, &x) || !input(n, 1, &w)) return false;
  if (x.shape.size() != 4 || w.shape.size() != 4)
    return node_fail(n, fmt::format("only 2-D convolutions are supported (X [N, C, H, W], W [M, "
                                    "C, kH, kW]); here X is {} and W is {}",
                                    shape_str(x.shape), shape_str(w.shape)));
  if (!concrete(w.shape) || !concrete({x.shape[1], x.shape[2], x.shape[3]}))
    return node_fail(n, "only the batch dim may be symbolic");
  const int64_t groups = attr_int(n, "group", 1);
  const int64_t c = x.shape[1].value, m = w.shape[0].value, cg = w.shape[1].value;
  if (groups < 1 || c % groups != 0 || m % groups != 0 || cg * groups != c)
    return node_fail(n, fmt::format("X has {} channels and W {} per group, which {} group{} do not "
                                    "fit", c, cg, groups, groups == 1 ? "" : "s"));
  Window win;
  std::string why;
  if (!read_window(n, x.shape[2].value, x.shape[3].value, w.shape[2].value, w.shape[3].value, &win, &why))
    return node_fail(n, why);
  Shape padded;
  std::string xin = pad_code(x, win.top, win.left, win.ph() - x.shape[2].value - win.top,
                             win.pw() - x.shape[3].value - win.left, 0.0f, &padded);
  bool bias = n.input_size() > 2 && !n.input(2).empty();
  Value b;
  if (bias) {
    if (!input(n, 2, &b)) return false;
    if (b.shape.size() != 1 || !(b.shape[0] == w.shape[0]))
      return node_fail(n, fmt::format("the bias is {}; it must be {}", shape_str(b.shape), shape_str({w.shape[0]})));
  }
  Shape y = {x.shape[0], w.shape[0], {win.oh, false}, {win.ow, false}};
  std::string name = fmt::format("conv2d_{}", ++conv_count_);
  kernel_names_.insert(name);
  std::string rows = window_index("i", win.sh, "r", win.dh), cols = window_index("j", win.sw, "s", win.dw);
  std::string about = fmt::format(
      "# ONNX Conv {}: output channel m at (i, j) is the sum over the input channels c\n"
      "# and the {}x{} window (r, s) of x times the filter{}.\n"
      "# Stride {}x{}, dilation {}x{}, padding (top, left, bottom, right) {}, {}, {}, {}{}.\n",
      label(n).substr(5), win.kh, win.kw, bias ? ", plus the channel's bias" : "", win.sh, win.sw,
      win.dh, win.dw, win.top, win.left, win.bottom, win.right,
      win.top + win.left + win.bottom + win.right ? " (x arrives padded)" : "");
  if (groups == 1) {
    std::string body = fmt::format("sum(c, r, s) x[b, c, {}, {}] * k[m, c, r, s]", rows, cols);
    kernels_.push_back(fmt::format(
        "{}kernel {}(x: f32{}, k: f32{}{}) -> f32{} {{\n  out[b, m, i, j] = {}{}\n  return out\n}}\n",
        about, name, shape_str(padded), shape_str(w.shape),
        bias ? fmt::format(", bias: f32{}", shape_str(b.shape)) : "", shape_str(y),
        bias ? "bias[m] + " : "", body));
    emit(n, y, bias ? fmt::format("{}({}, {}, {})", name, xin, expr(w), expr(b))
                    : fmt::format("{}({}, {})", name, xin, expr(w)));
    return true;
  }
  // Groups: channel g * cg + c of x feeds the filters of group g only. The output channel
  // m = g * mg + q is not affine in one axis, so the kernel writes [N, G, mg, OH, OW], with
  // the weights seen as [G, mg, cg, kh, kw] (a view of the file's, made at import), and a
  // reshape merges G and mg.
  if (!w.constant || (bias && !b.constant))
    return node_fail(n, "a grouped convolution needs its weights (and bias) to be initializers");
  const int64_t mg = m / groups;
  tensor::Tensor wg = w.constant->data;
  wg.shape = {groups, mg, cg, w.shape[2].value, w.shape[3].value};
  std::string ew = weight(*w.constant, &wg, "_grouped", fmt::format("as [{}, {}, ...]: per group", groups, mg));
  std::string eb;
  if (bias) {
    tensor::Tensor bg = b.constant->data;
    bg.shape = {groups, mg};
    eb = weight(*b.constant, &bg, "_grouped", fmt::format("as [{}, {}]", groups, mg));
  }
  Shape y5 = {x.shape[0], {groups, false}, {mg, false}, {win.oh, false}, {win.ow, false}};
  std::string body = fmt::format("sum(c, r, s) x[b, g * {} + c, {}, {}] * k[g, q, c, r, s]", cg, rows, cols);
  kernels_.push_back(fmt::format(
      "{}# {} groups of {} channels: the result is [N, groups, {}, OH, OW], reshaped after.\n"
      "kernel {}(x: f32{}, k: f32{}{}) -> f32{} {{\n  out[b, g, q, i, j] = {}{}\n  return out\n}}\n",
      about, groups, cg, mg, name, shape_str(padded), tensor::shape_text(wg.shape),
      bias ? fmt::format(", bias: f32[{}, {}]", groups, mg) : "", shape_str(y5),
      bias ? "bias[g, q] + " : "", body));
  std::string call = bias ? fmt::format("{}({}, {}, {})", name, xin, ew, eb) : fmt::format("{}({}, {})", name, xin, ew);
  emit(n, y, reshape_code(call, y));
  return true;
}

// MaxPool and AveragePool: the max (or mean) of each window. AveragePool divides by the
// count of the window's elements inside the image (count_include_pad = 0, the default): a
// constant per output position, computed here, or by the window's size when the padding
// counts.
bool Importer::pool(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  const bool max = n.op_type() == "MaxPool";
  if (x.shape.size() != 4 || !concrete({x.shape[1], x.shape[2], x.shape[3]}))
    return node_fail(n, fmt::format("only 2-D pooling of [N, C, H, W] is supported, only the batch "
                                    "symbolic; here X is {}", shape_str(x.shape)));
  if (attr_int(n, "ceil_mode", 0) != 0)
    return node_fail(n, "ceil_mode = 1 (a last window that runs past the image) is not supported");
  if (attr_int(n, "storage_order", 0) != 0)
    return node_fail(n, "storage_order = 1 is not supported");
  Window win;
  std::string why;
  if (attr_ints(n, "kernel_shape").size() != 2) return node_fail(n, "kernel_shape must give a 2-D window");
  if (!read_window(n, x.shape[2].value, x.shape[3].value, 0, 0, &win, &why)) return node_fail(n, why);
  const int64_t h = x.shape[2].value, w = x.shape[3].value;
  Shape padded;
  std::string xin = pad_code(x, win.top, win.left, win.ph() - h - win.top, win.pw() - w - win.left,
                             max ? -FLT_MAX : 0.0f, &padded);
  Shape y = {x.shape[0], x.shape[1], {win.oh, false}, {win.ow, false}};
  std::string rows = window_index("i", win.sh, "r", win.dh), cols = window_index("j", win.sw, "s", win.dw);
  std::string about = fmt::format(
      "# ONNX {} {}: the {} of each {}x{} window, stride {}x{}, padding (top, left, bottom,\n"
      "# right) {}, {}, {}, {}{}.\n",
      n.op_type(), label(n).substr(5), max ? "max" : "mean", win.kh, win.kw, win.sh, win.sw,
      win.top, win.left, win.bottom, win.right,
      win.top + win.left + win.bottom + win.right ? (max ? " (x arrives padded with f32's lowest)" : " (x arrives padded with zeros)") : "");
  std::string name = fmt::format("{}_{}", max ? "maxpool" : "avgpool", ++conv_count_);
  kernel_names_.insert(name);
  // A reduce axis takes its extent from a whole index: `window`, zeros of the window's
  // shape, gives r and s theirs (adding 0.0 changes no value).
  about += "# window: zeros [kh, kw], whose indices give the window its size.\n";
  std::string window = fmt::format("zeros([{}, {}])", win.kh, win.kw);
  if (max) {
    kernels_.push_back(fmt::format(
        "{}kernel {}(x: f32{}, window: f32[{}, {}]) -> f32{} {{\n"
        "  out[b, c, i, j] = max(r, s) x[b, c, {}, {}] + window[r, s]\n  return out\n}}\n",
        about, name, shape_str(padded), win.kh, win.kw, shape_str(y), rows, cols));
    emit(n, y, fmt::format("{}({}, {})", name, xin, window));
    return true;
  }
  // The divisor per output position: the window's elements inside the image.
  bool include = attr_int(n, "count_include_pad", 0) != 0;
  tensor::Tensor count;
  if (!tensor::zeros({win.oh, win.ow}, &count, &why)) return node_fail(n, why);
  for (int64_t i = 0; i < win.oh; ++i)
    for (int64_t j = 0; j < win.ow; ++j) {
      int64_t inside = 0;
      for (int64_t r = 0; r < win.kh; ++r)
        for (int64_t s = 0; s < win.kw; ++s) {
          int64_t u = i * win.sh + r * win.dh - win.top, v = j * win.sw + s * win.dw - win.left;
          inside += include || (u >= 0 && u < h && v >= 0 && v < w);
        }
      count.data[size_t(i * win.ow + j)] = float(inside);
    }
  Constant cc;
  cc.onnx_name = n.output(0) + "_count";
  cc.data = count;
  std::string counts = weight(*add_constant(std::move(cc)), nullptr, "", "the window's elements inside the image");
  kernels_.push_back(fmt::format(
      "{}kernel {}(x: f32{}, window: f32[{}, {}], count: f32[{}, {}]) -> f32{} {{\n"
      "  out[b, c, i, j] = (sum(r, s) x[b, c, {}, {}] + window[r, s]) / count[i, j]\n  return out\n}}\n",
      about, name, shape_str(padded), win.kh, win.kw, win.oh, win.ow, shape_str(y), rows, cols));
  emit(n, y, fmt::format("{}({}, {}, {})", name, xin, window, counts));
  return true;
}

}  // namespace descent::importer::onnx_internal
