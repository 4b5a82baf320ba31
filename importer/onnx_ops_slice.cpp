// ONNX ops that pick or join parts of tensors: Slice, Split, Concat and Gather. A kernel's
// indices are affine in its axes, so a slice is one generated kernel whose index says where
// it starts and its stride (x[i0, 2 + i1 * 3]). An index that comes from data (an embedding's
// token ids) or a join of several tensors cannot be written that way: those sum over the
// axis with a mask that picks the one element wanted, out[t, j] = sum(r) (ids[t] == r) *
// table[r, j], which costs the axis's length per element (fine for the small vocabularies
// and joins of the models Descent imports; an index from data in the kernel language would
// remove it).
#include <fmt/format.h>

#include <algorithm>

#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {
namespace {

// An index `start + i * step` as kernel text (no negative literal: the language's affine
// indices multiply by a literal, and a negative one is written as a subtraction).
std::string affine_index(int64_t start, const std::string& i, int64_t step) {
  std::string term = step == 1 || step == -1 ? i : fmt::format("{} * {}", i, step < 0 ? -step : step);
  if (start == 0 && step > 0) return term;
  return fmt::format("{} {} {}", start, step < 0 ? "-" : "+", term);
}

// The text of a kernel taking x[start + i * step] along every dim (start 0, step 1 where a
// dim is whole), out's dims `out`. An axis used only inside an index expression gets the
// largest extent that keeps the access in range (the rest of x), so the kernel also takes
// zeros of the sliced dims' lengths, `z`, whose whole indices fix them; *zeros is the call's
// argument for it ("zeros([2, 5])").
std::string slice_text(const Shape& xs, const std::vector<int64_t>& start,
                       const std::vector<int64_t>& step, const Shape& out, const std::string& what,
                       std::string* zeros) {
  const size_t rank = xs.size();
  auto dims = numbered("d", rank), idx = numbered("i", rank);
  std::vector<std::string> in_dims, out_dims, in_idx, z_dims, z_idx;
  for (size_t d = 0; d < rank; ++d) {
    bool whole = start[d] == 0 && step[d] == 1 && out[d] == xs[d];
    in_dims.push_back(dims[d]);
    out_dims.push_back(whole ? dims[d] : std::to_string(out[d].value));
    in_idx.push_back(whole ? idx[d] : affine_index(start[d], idx[d], step[d]));
    if (!whole) {
      z_dims.push_back(std::to_string(out[d].value));
      z_idx.push_back(idx[d]);
      // A whole index elsewhere would fix the axis to x's size: write it as i + 0.
      if (in_idx.back() == idx[d]) in_idx.back() += " + 0";
    }
  }
  *zeros = "zeros([" + join(z_dims) + "])";
  return fmt::format("# ONNX {}: out[{}] = x[{}] (z, zeros, gives the sliced axes their lengths).\n"
                     "kernel NAME(x: f32[{}], z: f32[{}]) -> f32[{}] {{\n"
                     "  out[{}] = x[{}] + z[{}]\n  return out\n}}\n",
                     what, join(idx), join(in_idx), join(in_dims), join(z_dims), join(out_dims),
                     join(idx), join(in_idx), join(z_idx));
}

}  // namespace

bool Importer::slice(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  const size_t rank = x.shape.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset_ < 10) {
    starts = attr_ints(n, "starts");
    ends = attr_ints(n, "ends");
    axes = attr_ints(n, "axes");
  } else {
    if (!const_ints(n, 1, &starts) || !const_ints(n, 2, &ends)) return false;
    if (n.input_size() > 3 && !n.input(3).empty() && !const_ints(n, 3, &axes)) return false;
    if (n.input_size() > 4 && !n.input(4).empty() && !const_ints(n, 4, &steps)) return false;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return node_fail(n, "starts, ends, axes and steps must have one entry each per sliced axis");
  std::vector<int64_t> start(rank, 0), step(rank, 1);
  Shape y = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + int64_t(rank) : axes[i];
    if (a < 0 || a >= int64_t(rank))
      return node_fail(n, fmt::format("axis {} is out of range for {}", axes[i], shape_str(x.shape)));
    const Dim& dim = x.shape[size_t(a)];
    int64_t s = starts[i], e = ends[i], st = steps[i];
    if (st == 0) return node_fail(n, "a step is 0");
    if (dim.symbolic) {
      // All of the batch (0 to the end, step 1: what x[:, ...] exports) is the batch.
      if (s == 0 && st == 1 && e >= (int64_t(1) << 31)) continue;
      return node_fail(n, "slicing the batch dim n is not supported (only all of it)");
    }
    const int64_t size = dim.value;
    if (s < 0) s += size;
    if (e < 0) e += size;
    s = st > 0 ? std::clamp<int64_t>(s, 0, size) : std::clamp<int64_t>(s, 0, size - 1);
    e = st > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
    int64_t len = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
    if (len <= 0)
      return node_fail(n, fmt::format("the slice of axis {} is empty; Descent tensors have no empty dims", a));
    start[size_t(a)] = s;
    step[size_t(a)] = st;
    y[size_t(a)] = {len, false};
  }
  if (y == x.shape && std::all_of(step.begin(), step.end(), [](int64_t v) { return v == 1; })) {
    alias(n, x, "(no code: all of the tensor)");
    return true;
  }
  std::string zeros, k = kernel(fmt::format("slice_{}d", rank), slice_text(x.shape, start, step, y, "Slice", &zeros));
  emit(n, y, fmt::format("{}({}, {})", k, expr(x), zeros));
  return true;
}

// Split along an axis into parts of the given sizes (the second input from opset 13, the
// attribute before, or equal parts): one slice kernel per part.
bool Importer::split(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  const int64_t rank = int64_t(x.shape.size());
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return node_fail(n, fmt::format("axis {} is out of range for {}", attr_int(n, "axis", 0), shape_str(x.shape)));
  const Dim& dim = x.shape[size_t(axis)];
  if (dim.symbolic) return node_fail(n, "splitting the batch dim n is not supported");
  std::vector<int64_t> sizes = attr_ints(n, "split");
  if (n.input_size() > 1 && !n.input(1).empty() && !const_ints(n, 1, &sizes)) return false;
  const int64_t parts = n.output_size();
  if (sizes.empty()) {
    if (dim.value % parts != 0)
      return node_fail(n, fmt::format("dim {} of {} does not split into {} equal parts", axis,
                                      shape_str(x.shape), parts));
    sizes.assign(size_t(parts), dim.value / parts);
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s > 0 ? s : 0;
  if (int64_t(sizes.size()) != parts || total != dim.value ||
      std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s <= 0; }))
    return node_fail(n, fmt::format("the sizes {} do not split dim {} ({}) into {} parts",
                                    tensor::shape_text(sizes), axis, dim.value, parts));
  std::vector<int64_t> start(size_t(rank), 0), step(size_t(rank), 1);
  for (int64_t k = 0, at = 0; k < parts; at += sizes[size_t(k)], ++k) {
    if (n.output(int(k)).empty()) continue;
    Shape y = x.shape;
    y[size_t(axis)] = {sizes[size_t(k)], false};
    start[size_t(axis)] = at;
    std::string zeros, kn = kernel(fmt::format("slice_{}d", rank),
                                   slice_text(x.shape, start, step, y, fmt::format("Split, part {}", k + 1), &zeros));
    emit(n, y, fmt::format("{}({}, {})", kn, expr(x), zeros), int(k));
  }
  return true;
}

// Concat along an axis: out's element j along it is the one input whose range holds j, at
// j minus the lengths before it; each input contributes through a mask that is 1 there.
bool Importer::concat(const onnx::NodeProto& n) {
  std::vector<Value> xs(size_t(n.input_size()));
  for (int i = 0; i < n.input_size(); ++i)
    if (!input(n, i, &xs[size_t(i)])) return false;
  const size_t rank = xs[0].shape.size();
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank))
    return node_fail(n, fmt::format("axis {} is out of range for {}", attr_int(n, "axis", 0), shape_str(xs[0].shape)));
  const size_t a = size_t(axis);
  Shape y = xs[0].shape;
  int64_t total = 0;
  for (const Value& v : xs) {
    bool same = v.shape.size() == rank;
    for (size_t d = 0; same && d < rank; ++d) same = d == a || v.shape[d] == y[d];
    if (!same || v.shape[a].symbolic)
      return node_fail(n, fmt::format("{} and {} do not join along axis {} (the other dims must "
                                      "be equal, the axis not the batch)", shape_str(xs[0].shape),
                                      shape_str(v.shape), axis));
    total += v.shape[a].value;
  }
  if (xs.size() == 1) {
    alias(n, xs[0], "(no code: one input)");
    return true;
  }
  y[a] = {total, false};
  auto dims = numbered("d", rank), idx = numbered("i", rank);
  std::vector<std::string> params, terms, args, out_dims = dims;
  out_dims[a] = std::to_string(total);
  int64_t offset = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    std::vector<std::string> in_dims = dims, in_idx = idx;
    in_dims[a] = std::to_string(xs[k].shape[a].value);
    std::string r = "r" + std::to_string(k);
    in_idx[a] = r;
    std::string name = "x" + std::to_string(k);
    params.push_back(fmt::format("{}: f32[{}]", name, join(in_dims)));
    std::string at = offset == 0 ? r : fmt::format("{} + {}", r, offset);
    terms.push_back(fmt::format("  p{}[{}] = (sum({}) ({} == {}) * {}[{}]) + z[{}]\n", k, join(idx), r, at,
                                idx[a], name, join(in_idx), idx[a]));
    args.push_back(expr(xs[k]));
    offset += xs[k].shape[a].value;
  }
  // One stage per input (a stage holds one reduction); z, zeros as long as the result's
  // axis, gives that axis its extent in them (an axis needs a whole index somewhere).
  std::vector<std::string> parts;
  for (size_t k = 0; k < xs.size(); ++k) parts.push_back(fmt::format("p{}[{}]", k, join(idx)));
  std::string text = fmt::format(
      "# ONNX Concat along axis {}: each input's elements where its range of the axis is\n"
      "# (z: zeros as long as the result's axis).\n"
      "kernel NAME({}, z: f32[{}]) -> f32[{}] {{\n{}  out[{}] = {}\n  return out\n}}\n",
      axis, join(params), total, join(out_dims), join(terms, ""), join(idx), join(parts, " + "));
  std::string k = kernel(fmt::format("concat_{}d", rank), text);
  emit(n, y, fmt::format("{}({}, zeros([{}]))", k, join(args), total));
  return true;
}

// Gather along an axis: a constant scalar index is a slice that drops the axis; constant
// index tensors and the model's integer input (token ids, an embedding's lookup) pick by mask.
bool Importer::gather(const onnx::NodeProto& n) {
  Value x, ind;
  if (!input(n, 0, &x) || !input(n, 1, &ind)) return false;
  const size_t rank = x.shape.size();
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank))
    return node_fail(n, fmt::format("axis {} is out of range for {}", attr_int(n, "axis", 0), shape_str(x.shape)));
  const size_t a = size_t(axis);
  const Dim& dim = x.shape[a];
  auto dims = numbered("d", rank), idx = numbered("i", rank);
  if (ind.constant) {
    if (ind.constant->is_float)
      return node_fail(n, "the indices must be integers");
    std::vector<int64_t> ks = ind.constant->ints;
    for (int64_t& k : ks) {
      if (dim.symbolic) return node_fail(n, "picking from the batch dim n by a constant index is not supported");
      if (k < 0) k += dim.value;
      if (k < 0 || k >= dim.value)
        return node_fail(n, fmt::format("index {} is out of range for dim {} of {}", k, axis, shape_str(x.shape)));
    }
    if (ind.constant->dims.empty()) {
      // One index: x[..., k, ...], the axis gone.
      std::vector<std::string> in_idx = idx, out_idx = idx, out_dims = dims;
      in_idx[a] = std::to_string(ks[0]);
      out_idx.erase(out_idx.begin() + long(a));
      out_dims.erase(out_dims.begin() + long(a));
      Shape y = x.shape;
      y.erase(y.begin() + long(a));
      if (y.empty()) return node_fail(n, "picking one element of a vector leaves a scalar, which Descent lacks");
      std::string text = fmt::format(
          "# ONNX Gather of one index along axis {}: out[{}] = x[{}].\n"
          "kernel NAME(x: f32[{}]) -> f32[{}] {{\n  out[{}] = x[{}]\n  return out\n}}\n",
          axis, join(out_idx), join(in_idx), join(dims), join(out_dims), join(out_idx), join(in_idx));
      std::string k = kernel(fmt::format("pick_{}d", rank), text);
      emit(n, y, fmt::format("{}({})", k, expr(x)));
      return true;
    }
  } else if (n.input(1) != int_input_) {
    return node_fail(n, fmt::format("the indices '{}' are computed; Descent gathers by constant "
                                    "indices or by the model's integer input (token ids)", n.input(1)));
  }
  // out[pre, j..., post] = sum(r) (ind[j...] == r) * x[pre, r, post]
  const size_t ir = ind.shape.size();
  Shape y(x.shape.begin(), x.shape.begin() + long(a));
  y.insert(y.end(), ind.shape.begin(), ind.shape.end());
  y.insert(y.end(), x.shape.begin() + long(a) + 1, x.shape.end());
  std::vector<std::string> ind_dims, ind_idx, out_idx, out_dims, in_idx = idx;
  for (size_t d = 0; d < ir; ++d) {
    ind_dims.push_back("e" + std::to_string(d));
    ind_idx.push_back("j" + std::to_string(d));
  }
  in_idx[a] = "r";
  for (size_t d = 0; d < rank; ++d) {
    if (d == a) {
      out_idx.insert(out_idx.end(), ind_idx.begin(), ind_idx.end());
      out_dims.insert(out_dims.end(), ind_dims.begin(), ind_dims.end());
    } else {
      out_idx.push_back(idx[d]);
      out_dims.push_back(dims[d]);
    }
  }
  std::string ind_expr;
  if (ind.constant) {
    // The indices as f32 values, a weight like any other (negative ones already wrapped).
    tensor::Tensor t;
    std::string why;
    if (!tensor::zeros(ind.constant->dims, &t, &why)) return node_fail(n, why);
    for (size_t i = 0; i < t.data.size(); ++i) {
      int64_t k = ind.constant->ints[i];
      t.data[i] = float(k < 0 ? k + dim.value : k);
    }
    ind_expr = weight(*ind.constant, &t, "_f32", "the indices as f32");
  } else {
    ind_expr = expr(ind);
  }
  std::string text = fmt::format(
      "# ONNX Gather along axis {}: the element of x at the index ind holds. An index from data\n"
      "# cannot be a kernel's index (indices are affine in the axes), so the axis is summed with\n"
      "# a mask that is 1 at that index only; an index out of range picks nothing (0.0).\n"
      "kernel NAME(x: f32[{}], ind: f32[{}]) -> f32[{}] {{\n"
      "  out[{}] = sum(r) (ind[{}] == r) * x[{}]\n  return out\n}}\n",
      axis, join(dims), join(ind_dims), join(out_dims), join(out_idx), join(ind_idx), join(in_idx));
  std::string k = kernel(fmt::format("gather_{}d", rank), text);
  emit(n, y, fmt::format("{}({}, {})", k, expr(x), ind_expr));
  return true;
}

}  // namespace descent::importer::onnx_internal
