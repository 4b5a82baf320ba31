// ONNX ops that change a tensor's shape and not its values: Flatten, Reshape, Unsqueeze,
// Squeeze and Transpose. Shapes are inferred here at import time, and the symbolic batch must
// stay a dim of its own, so one import runs at any batch size.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {

bool Importer::flatten(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank)
    return node_fail(n, fmt::format("axis {} is out of range for {}", attr_int(n, "axis", 1), shape_str(x.shape)));
  Shape outer(x.shape.begin(), x.shape.begin() + axis), inner(x.shape.begin() + axis, x.shape.end());
  if (!concrete(inner))
    return node_fail(n, "the batch dim must stay first (it cannot be flattened into the rows)");
  int64_t cols = 1;
  for (const Dim& d : inner) cols *= d.value;
  if (axis == 1) {
    // Keep the first dim (the batch), merge the rest: the flatten builtin, which needs no
    // sizes, so a symbolic batch stays symbolic.
    Shape y = {x.shape[0], {cols, false}};
    emit(n, y, rank == 2 ? expr(x) : fmt::format("flatten({})", expr(x)));
    return true;
  }
  if (!concrete(outer))
    return node_fail(n, "flattening the batch dim together with others needs a fixed batch size");
  int64_t rows = 1;
  for (const Dim& d : outer) rows *= d.value;
  emit(n, {{rows, false}, {cols, false}}, fmt::format("reshape({}, [{}, {}])", expr(x), rows, cols));
  return true;
}

namespace {
std::string join_ints(const std::vector<int64_t>& v) {
  std::vector<std::string> parts;
  for (int64_t x : v) parts.push_back(std::to_string(x));
  return join(parts);
}
}  // namespace

// Transpose: output dim d is input dim perm[d] (default: reversed). A matrix's transpose is
// the prelude's; other ranks get a kernel generated once per permutation, whose indices say
// the move: transpose_0213(x)[i0, i1, i2, i3] = x[i0, i2, i1, i3] (a head split's swap).
bool Importer::transpose(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  const size_t rank = x.shape.size();
  std::vector<int64_t> perm = attr_ints(n, "perm");
  if (perm.empty())
    for (size_t d = 0; d < rank; ++d) perm.push_back(int64_t(rank - 1 - d));
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && size_t(p) < rank && !seen[size_t(p)];
    if (ok) seen[size_t(p)] = true;
  }
  if (!ok)
    return node_fail(n, fmt::format("perm [{}] is not a permutation of the {} dims of {}",
                                    join_ints(perm), rank, shape_str(x.shape)));
  Shape y;
  for (int64_t p : perm) y.push_back(x.shape[size_t(p)]);
  bool identity = true;
  for (size_t d = 0; d < rank; ++d) identity = identity && perm[d] == int64_t(d);
  if (identity) {
    alias(n, x, "(no code: the same tensor)");
    return true;
  }
  if (rank == 2) {
    emit(n, y, fmt::format("transpose({})", expr(x)));
    return true;
  }
  std::string name = "transpose_";
  for (int64_t p : perm) name += std::to_string(p);
  if (!kernel_names_.count(name)) {
    kernel_names_.insert(name);
    std::vector<std::string> dims, out_dims, out_idx, in_idx(rank);
    for (size_t d = 0; d < rank; ++d) dims.push_back("d" + std::to_string(d));
    for (size_t d = 0; d < rank; ++d) {
      out_dims.push_back(dims[size_t(perm[d])]);
      out_idx.push_back("i" + std::to_string(d));
      in_idx[size_t(perm[d])] = "i" + std::to_string(d);
    }
    kernels_.push_back(fmt::format(
        "# ONNX Transpose with perm [{}]: output dim d is input dim perm[d].\n"
        "kernel {}(x: f32[{}]) -> f32[{}] {{\n  out[{}] = x[{}]\n  return out\n}}\n",
        join_ints(perm), name, join(dims), join(out_dims), join(out_idx), join(in_idx)));
  }
  emit(n, y, fmt::format("{}({})", name, expr(x)));
  return true;
}

bool Importer::reshape(const onnx::NodeProto& n) {
  Value x, s;
  if (!input(n, 0, &x) || !input(n, 1, &s)) return false;
  if (!s.constant || s.constant->is_float || s.constant->dims.size() != 1)
    return node_fail(n, fmt::format("the shape '{}' must be a constant 1-D int64 tensor (an "
                                    "initializer, a Constant node, or computed from them and "
                                    "static shapes)", n.input(1)));
  const std::vector<int64_t>& want = s.constant->ints;
  // Entries computed from the input's shape (Shape -> Gather -> Concat) may be the batch.
  auto is_batch = [&](size_t i) { return i < s.constant->batch.size() && s.constant->batch[i]; };
  bool allow_zero = attr_int(n, "allowzero", 0) != 0;
  // numel(x) = (n or 1) * known; the result's dims are filled in below, -1 last.
  bool x_symbolic = !concrete(x.shape);
  int64_t known = 1;
  for (const Dim& d : x.shape)
    if (!d.symbolic) known *= d.value;
  Shape y;
  int infer = -1;
  bool y_symbolic = false;
  int64_t y_known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t w = want[i];
    if (is_batch(i)) {
      y.push_back({0, true});
    } else if (w == 0 && !allow_zero) {
      if (i >= x.shape.size())
        return node_fail(n, fmt::format("shape entry {} is 0 (copy the input's dim) but the "
                                        "input {} has no dim {}", i, shape_str(x.shape), i));
      y.push_back(x.shape[i]);
    } else if (w == -1) {
      if (infer >= 0) return node_fail(n, "the shape has more than one -1");
      infer = static_cast<int>(i);
      y.push_back({0, false});
      continue;
    } else if (w <= 0) {
      return node_fail(n, fmt::format("shape entry {} is {}", i, w));
    } else {
      y.push_back({w, false});
    }
    if (y.back().symbolic) y_symbolic = true;
    else y_known *= y.back().value;
  }
  if (infer >= 0) {
    if (known % y_known != 0)
      return node_fail(n, fmt::format("cannot reshape {} into {}", shape_str(x.shape),
                                      tensor::shape_text(want)));
    int64_t v = known / y_known;
    if (x_symbolic && !y_symbolic) {
      if (v != 1)
        return node_fail(n, fmt::format("the -1 would be n * {}: Descent keeps the batch as a "
                                        "dim of its own", v));
      y[infer] = {0, true};
      y_symbolic = true;
    } else {
      y[infer] = {v, false};
      y_known *= v;
    }
  }
  int batches = 0;
  for (const Dim& d : y) batches += d.symbolic;
  if (batches > 1)
    return node_fail(n, fmt::format("the shape {} names the batch n twice", shape_str(y)));
  if (x_symbolic != y_symbolic || y_known != known)
    return node_fail(n, fmt::format("cannot reshape {} into {}", shape_str(x.shape), shape_str(y)));
  if (y == x.shape) {
    alias(n, x, "(no code: the same shape)");
    return true;
  }
  emit(n, y, reshape_code(expr(x), y));
  return true;
}

// Unsqueeze inserts dims of size 1, Squeeze removes them (all of them when no axes are
// given): the same elements in the same order, so a reshape. The axes are an attribute
// before opset 13 and a constant input from 13 on.
bool Importer::unsqueeze(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  bool add = n.op_type() == "Unsqueeze";
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (n.input_size() > 1 && !n.input(1).empty() && !const_ints(n, 1, &axes)) return false;
  const int64_t rank = int64_t(x.shape.size()) + (add ? int64_t(axes.size()) : 0);
  std::vector<bool> marked(size_t(rank), false);
  for (int64_t a : axes) {
    int64_t k = a < 0 ? a + rank : a;
    if (k < 0 || k >= rank || marked[size_t(k)])
      return node_fail(n, fmt::format("axis {} is out of range, or repeated, for {}", a, shape_str(x.shape)));
    marked[size_t(k)] = true;
  }
  Shape y;
  if (add) {
    for (size_t d = 0, from = 0; d < size_t(rank); ++d) y.push_back(marked[d] ? Dim{1, false} : x.shape[from++]);
  } else {
    for (size_t d = 0; d < x.shape.size(); ++d) {
      bool one = x.shape[d] == Dim{1, false};
      if (marked[d] && !one)
        return node_fail(n, fmt::format("dim {} of {} is not 1", d, shape_str(x.shape)));
      if (!(axes.empty() ? one : marked[d])) y.push_back(x.shape[d]);
    }
    if (y.empty())
      return node_fail(n, fmt::format("squeezing {} leaves a scalar; Descent's tensors have at least "
                                      "one dim", shape_str(x.shape)));
  }
  emit(n, y, reshape_code(expr(x), y));
  return true;
}

}  // namespace descent::importer::onnx_internal
