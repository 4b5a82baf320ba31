// Constant folding. An exporter computes a Reshape's target shape with small graphs of their
// own (torch.onnx.export: Shape -> Gather -> Unsqueeze -> Concat, with Cast and Div for a head
// size), and a causal mask from a buffer (Slice -> Equal -> Cast -> Where's condition). Every
// node whose inputs are all constants is computed here, at import time, into a constant; so is
// Shape, whose output the inferred shapes fix. What is left for the ops' readers is data.
//
// Shapes may hold the symbolic batch: Shape of the input gives [n, 32], and the n travels
// through Gather, Unsqueeze, Concat and Cast as an entry that stands for it, until Reshape
// writes it as `batch`. Arithmetic on it (n * 4) is refused: a dim is n or a number.
#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "importer/onnx_internal.h"

namespace descent::importer::onnx_internal {
namespace {

// A constant's values while folding: any rank, in C order, as doubles (int64 shapes, f32
// values and bools all fit exactly).
struct Folded {
  enum Kind { Float, Int, Bool } kind = Float;
  std::vector<int64_t> dims;   // empty: a scalar
  std::vector<double> v;
  std::vector<bool> batch;     // Int: the entries that are the batch n (empty: none)
  bool is_batch(size_t i) const { return i < batch.size() && batch[i]; }
  bool any_batch() const {
    for (bool b : batch)
      if (b) return true;
    return false;
  }
};

int64_t count_of(const std::vector<int64_t>& dims) {
  int64_t c = 1;
  for (int64_t d : dims) c *= d;
  return c;
}

Folded from_constant(const Constant& c) {
  Folded f;
  if (!c.is_float) {
    f.kind = Folded::Int;
    f.dims = c.dims;
    f.v.assign(c.ints.begin(), c.ints.end());
    f.batch = c.batch;
    return f;
  }
  f.kind = c.is_bool ? Folded::Bool : Folded::Float;
  if (!c.scalar) f.dims = c.data.shape;
  f.v.assign(c.data.data.data(), c.data.data.data() + c.data.data.size());
  return f;
}

// The flat index of `at` (an index into `out`'s dims) in a tensor of `dims` broadcast to them.
int64_t broadcast_index(const std::vector<int64_t>& at, const std::vector<int64_t>& dims) {
  int64_t idx = 0;
  size_t off = at.size() - dims.size();
  for (size_t d = 0; d < dims.size(); ++d) idx = idx * dims[d] + (dims[d] == 1 ? 0 : at[off + d]);
  return idx;
}

// Calls f with each index of `dims` in C order.
void each_index(const std::vector<int64_t>& dims, const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> at(dims.size(), 0);
  int64_t total = count_of(dims);
  for (int64_t k = 0; k < total; ++k) {
    f(at);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
}

std::string ints_text(const std::vector<int64_t>& v) {
  std::vector<std::string> parts;
  for (int64_t x : v) parts.push_back(std::to_string(x));
  return "[" + join(parts) + "]";
}

// What a folded value is, for the summary: its entries when it is a small shape.
std::string describe(const Folded& f) {
  if (f.kind == Folded::Int && f.v.size() <= 8) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < f.v.size(); ++i)
      parts.push_back(f.is_batch(i) ? "n" : std::to_string(int64_t(f.v[i])));
    return "(folded at import: " + (f.dims.empty() ? parts[0] : "[" + join(parts) + "]") + ")";
  }
  return "(folded at import)";
}

const char* const kFoldable[] = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast",
                                 "Slice", "Range", "Equal", "Less", "Greater", "Add", "Sub",
                                 "Mul", "Div", "Pow", "Sqrt", "Where", "Reshape",
                                 "ConstantOfShape"};

}  // namespace

bool Importer::const_ints(const onnx::NodeProto& n, int i, std::vector<int64_t>* out) {
  Value v;
  if (!input(n, i, &v)) return false;
  if (!v.constant || v.constant->is_float)
    return node_fail(n, fmt::format("input {} ('{}') must be a constant int64 tensor (an "
                                    "initializer, a Constant node, or computed from them)",
                                    i + 1, n.input(i)));
  for (bool b : v.constant->batch)
    if (b)
      return node_fail(n, fmt::format("input {} ('{}') holds the batch n; it must be numbers",
                                      i + 1, n.input(i)));
  *out = v.constant->ints;
  return true;
}

bool Importer::fold(const onnx::NodeProto& n, bool* done) {
  *done = false;
  const std::string& op = n.op_type();
  bool foldable = false;
  for (const char* f : kFoldable) foldable = foldable || op == f;
  if (!foldable) return true;
  std::vector<Folded> in(size_t(n.input_size()));
  std::vector<bool> present(size_t(n.input_size()), false);
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) continue;
    Value v;
    if (!input(n, i, &v)) return false;
    if (op == "Shape" && i == 0) {
      // Its output is the inferred shape: the batch an entry of its own.
      Folded& f = in[0];
      f.kind = Folded::Int;
      f.dims = {int64_t(v.shape.size())};
      for (const Dim& d : v.shape) {
        f.v.push_back(double(d.value));
        f.batch.push_back(d.symbolic);
      }
      present[0] = true;
      continue;
    }
    if (!v.constant) return true;  // data: the op's reader computes it
    in[size_t(i)] = from_constant(*v.constant);
    present[size_t(i)] = true;
  }
  auto refuse_batch = [&](const Folded& f) {
    if (f.any_batch())
      return node_fail(n, "it computes with the batch n, and Descent keeps the batch a dim of "
                          "its own (a shape entry is n or a number)");
    return true;
  };
  auto axis_of = [&](int64_t a, size_t rank, int64_t* out) {
    if (a < 0) a += int64_t(rank);
    if (a < 0 || a >= int64_t(rank))
      return node_fail(n, fmt::format("axis {} is out of range for rank {}", a, rank));
    *out = a;
    return true;
  };
  Folded r;
  if (op == "Shape") {
    r = in[0];
    int64_t rank = int64_t(r.v.size()), start = attr_int(n, "start", 0), end = attr_int(n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    r.v = std::vector<double>(r.v.begin() + start, r.v.begin() + end);
    r.batch = std::vector<bool>(r.batch.begin() + start, r.batch.begin() + end);
    r.dims = {end - start};
    if (r.v.empty()) return node_fail(n, "the shape it takes is empty");
  } else if (op == "Cast") {
    int64_t to = attr_int(n, "to", 1);
    r = in[0];
    if (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE) {
      if (!refuse_batch(r)) return false;
      if (r.kind != Folded::Float) r.kind = Folded::Float;
      for (double& x : r.v) x = double(float(x));
    } else if (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32) {
      if (r.kind != Folded::Int) r.batch.clear();
      r.kind = Folded::Int;
      for (double& x : r.v) x = std::trunc(x);
    } else if (to == onnx::TensorProto::BOOL) {
      if (!refuse_batch(r)) return false;
      r.kind = Folded::Bool;
      for (double& x : r.v) x = x != 0 ? 1 : 0;
    } else {
      return node_fail(n, fmt::format("a cast to ONNX type {} is not supported (float, int64, "
                                      "int32 and bool are)", to));
    }
  } else if (op == "Gather") {
    const Folded &x = in[0], &idx = in[1];
    if (!refuse_batch(idx)) return false;
    int64_t axis = 0;
    if (!axis_of(attr_int(n, "axis", 0), x.dims.size(), &axis)) return false;
    int64_t size = x.dims[size_t(axis)];
    r.kind = x.kind;
    r.dims.assign(x.dims.begin(), x.dims.begin() + axis);
    r.dims.insert(r.dims.end(), idx.dims.begin(), idx.dims.end());
    r.dims.insert(r.dims.end(), x.dims.begin() + axis + 1, x.dims.end());
    int64_t outer = count_of({x.dims.begin(), x.dims.begin() + axis});
    int64_t inner = count_of({x.dims.begin() + axis + 1, x.dims.end()});
    for (int64_t o = 0; o < outer; ++o)
      for (double di : idx.v) {
        int64_t k = int64_t(di) < 0 ? int64_t(di) + size : int64_t(di);
        if (k < 0 || k >= size)
          return node_fail(n, fmt::format("index {} is out of range for a dim of {}", int64_t(di), size));
        for (int64_t j = 0; j < inner; ++j) {
          size_t from = size_t((o * size + k) * inner + j);
          r.v.push_back(x.v[from]);
          if (x.kind == Folded::Int) r.batch.push_back(x.is_batch(from));
        }
      }
  } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") {
    r = in[0];
    if (op == "Reshape") {
      if (!refuse_batch(in[1])) return false;
      std::vector<int64_t> want;
      for (size_t i = 0; i < in[1].v.size(); ++i) {
        int64_t w = int64_t(in[1].v[i]);
        want.push_back(w == 0 && i < r.dims.size() ? r.dims[i] : w);
      }
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] == -1) infer = int64_t(i);
        else known *= want[i];
      }
      if (infer >= 0 && known > 0) want[size_t(infer)] = count_of(r.dims) / known;
      if (count_of(want) != count_of(r.dims))
        return node_fail(n, fmt::format("cannot reshape {} into {}", ints_text(r.dims), ints_text(want)));
      r.dims = want;
    } else {
      std::vector<int64_t> axes = attr_ints(n, "axes");
      if (present.size() > 1 && present[1]) {
        if (!refuse_batch(in[1])) return false;
        axes.assign(in[1].v.begin(), in[1].v.end());
      }
      if (op == "Unsqueeze") {
        size_t rank = r.dims.size() + axes.size();
        std::vector<bool> added(rank, false);
        for (int64_t a : axes) {
          int64_t k = 0;
          if (!axis_of(a, rank, &k)) return false;
          added[size_t(k)] = true;
        }
        std::vector<int64_t> dims;
        for (size_t d = 0, from = 0; d < rank; ++d) dims.push_back(added[d] ? 1 : r.dims[from++]);
        r.dims = dims;
      } else {
        std::vector<bool> drop(r.dims.size(), axes.empty());
        for (int64_t a : axes) {
          int64_t k = 0;
          if (!axis_of(a, r.dims.size(), &k)) return false;
          drop[size_t(k)] = true;
        }
        std::vector<int64_t> dims;
        for (size_t d = 0; d < r.dims.size(); ++d)
          if (!drop[d] || r.dims[d] != 1) dims.push_back(r.dims[d]);
        r.dims = dims;
      }
    }
  } else if (op == "Concat") {
    int64_t axis = 0;
    if (!axis_of(attr_int(n, "axis", 0), in[0].dims.size(), &axis)) return false;
    r.kind = in[0].kind;
    r.dims = in[0].dims;
    r.dims[size_t(axis)] = 0;
    for (const Folded& f : in) r.dims[size_t(axis)] += f.dims.size() == r.dims.size() ? f.dims[size_t(axis)] : 0;
    int64_t outer = count_of({r.dims.begin(), r.dims.begin() + axis});
    for (int64_t o = 0; o < outer; ++o)
      for (const Folded& f : in) {
        if (f.dims.size() != r.dims.size())
          return node_fail(n, "its inputs' ranks differ");
        int64_t block = count_of({f.dims.begin() + axis, f.dims.end()});
        for (int64_t j = 0; j < block; ++j) {
          r.v.push_back(f.v[size_t(o * block + j)]);
          if (r.kind == Folded::Int) r.batch.push_back(f.is_batch(size_t(o * block + j)));
        }
      }
  } else if (op == "Slice") {
    const Folded& x = in[0];
    size_t rank = x.dims.size();
    std::vector<int64_t> start(rank, 0), end = x.dims, step(rank, 1);
    for (int i = 1; i < 5 && i < n.input_size(); ++i)
      if (present[size_t(i)] && !refuse_batch(in[size_t(i)])) return false;
    std::vector<int64_t> axes;
    if (present.size() > 3 && present[3]) axes.assign(in[3].v.begin(), in[3].v.end());
    else for (size_t i = 0; i < in[1].v.size(); ++i) axes.push_back(int64_t(i));
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = 0;
      if (!axis_of(axes[i], rank, &a)) return false;
      int64_t dim = x.dims[size_t(a)], s = int64_t(in[1].v[i]), e = int64_t(std::clamp(in[2].v[i], -9.0e18, 9.0e18));
      int64_t st = present.size() > 4 && present[4] ? int64_t(in[4].v[i]) : 1;
      if (st == 0) return node_fail(n, "a step is 0");
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      s = st > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      e = st > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
      start[size_t(a)] = s;
      end[size_t(a)] = e;
      step[size_t(a)] = st;
    }
    r.kind = x.kind;
    for (size_t d = 0; d < rank; ++d) {
      int64_t len = step[d] > 0 ? (end[d] - start[d] + step[d] - 1) / step[d] : (start[d] - end[d] - step[d] - 1) / -step[d];
      r.dims.push_back(std::max<int64_t>(len, 0));
    }
    if (count_of(r.dims) == 0) return node_fail(n, "the slice is empty; Descent tensors have no empty dims");
    each_index(r.dims, [&](const std::vector<int64_t>& at) {
      int64_t from = 0;
      for (size_t d = 0; d < rank; ++d) from = from * x.dims[d] + start[d] + at[d] * step[d];
      r.v.push_back(x.v[size_t(from)]);
      if (x.kind == Folded::Int) r.batch.push_back(x.is_batch(size_t(from)));
    });
  } else if (op == "Range") {
    for (const Folded& f : in)
      if (!refuse_batch(f)) return false;
    double start = in[0].v[0], limit = in[1].v[0], delta = in[2].v[0];
    if (delta == 0) return node_fail(n, "its delta is 0");
    r.kind = in[0].kind;
    for (double x = start; delta > 0 ? x < limit : x > limit; x += delta) r.v.push_back(x);
    if (r.v.empty()) return node_fail(n, "the range is empty; Descent tensors have no empty dims");
    r.dims = {int64_t(r.v.size())};
  } else if (op == "ConstantOfShape") {
    if (!refuse_batch(in[0])) return false;
    r.kind = Folded::Float;
    double value = 0;
    if (const auto* a = find_attr(n, "value")) {
      Constant c;
      if (!read_tensor(a->t(), label(n) + ": its value", &c)) return false;
      Folded f = from_constant(c);
      r.kind = f.kind;
      value = f.v.at(0);
    }
    r.dims.assign(in[0].v.begin(), in[0].v.end());
    if (count_of(r.dims) <= 0) return node_fail(n, "the shape is empty");
    r.v.assign(size_t(count_of(r.dims)), value);
  } else {
    // Elementwise, with NumPy broadcasting: Add ... Where, Sqrt.
    std::vector<const Folded*> args;
    for (const Folded& f : in) args.push_back(&f);
    for (const Folded* f : args) r.dims.resize(std::max(r.dims.size(), f->dims.size()), 1);
    for (const Folded* f : args)
      for (size_t d = 0; d < f->dims.size(); ++d) {
        int64_t& o = r.dims[r.dims.size() - f->dims.size() + d];
        int64_t k = f->dims[d];
        if (o != k && o != 1 && k != 1)
          return node_fail(n, "its inputs' shapes do not broadcast");
        if (o == 1) o = k;
      }
    bool ints = true;
    for (const Folded* f : args) ints = ints && f->kind == Folded::Int;
    const bool compare = op == "Equal" || op == "Less" || op == "Greater";
    r.kind = op == "Where" ? args[1]->kind : compare ? Folded::Bool : args[0]->kind;
    bool failed = false;
    each_index(r.dims, [&](const std::vector<int64_t>& at) {
      std::vector<double> a;
      std::vector<bool> batch;
      for (const Folded* f : args) {
        size_t k = size_t(broadcast_index(at, f->dims));
        a.push_back(f->v[k]);
        batch.push_back(f->is_batch(k));
      }
      double y = 0;
      bool keep_batch = false;
      if (op == "Where") {
        keep_batch = batch[a[0] != 0 ? 1 : 2];
      } else if (batch[0] || (batch.size() > 1 && batch[1])) {
        // n * 1, n / 1, n + 0 and n - 0 are n; anything else made of n is refused.
        bool n0 = batch[0];
        double other = a[n0 ? 1 : 0];
        keep_batch = (op == "Mul" && other == 1) || (op == "Add" && other == 0) ||
                     (n0 && op == "Div" && other == 1) || (n0 && op == "Sub" && other == 0);
        if (!keep_batch) failed = true;
      }
      if (op == "Add") y = a[0] + a[1];
      else if (op == "Sub") y = a[0] - a[1];
      else if (op == "Mul") y = a[0] * a[1];
      else if (op == "Div") y = ints ? (a[1] == 0 ? 0 : std::trunc(a[0] / a[1])) : a[0] / a[1];
      else if (op == "Pow") y = std::pow(a[0], a[1]);
      else if (op == "Sqrt") y = std::sqrt(a[0]);
      else if (op == "Equal") y = a[0] == a[1];
      else if (op == "Less") y = a[0] < a[1];
      else if (op == "Greater") y = a[0] > a[1];
      else y = a[0] != 0 ? a[1] : a[2];  // Where
      if (keep_batch) y = 0;  // the entry is n, whatever its number
      if (r.kind == Folded::Float) y = double(float(y));
      r.v.push_back(y);
      if (r.kind == Folded::Int) r.batch.push_back(keep_batch);
    });
    if (failed) return refuse_batch(Folded{Folded::Int, {}, {}, {true}});
  }

  // The result as a constant of the import: what later nodes read.
  Constant c;
  c.onnx_name = n.output(0);
  if (r.kind == Folded::Int) {
    c.is_float = false;
    c.dims = r.dims;
    for (double x : r.v) c.ints.push_back(int64_t(x));
    if (r.any_batch()) c.batch = r.batch;
  } else {
    c.is_bool = r.kind == Folded::Bool;
    c.scalar = r.dims.empty();
    std::string why;
    if (count_of(r.dims) > tensor::kMaxElements ||
        !tensor::zeros(r.dims.empty() ? std::vector<int64_t>{1} : r.dims, &c.data, &why))
      return node_fail(n, "its folded value is too large: " + why);
    for (size_t i = 0; i < r.v.size(); ++i) c.data.data[i] = float(r.v[i]);
  }
  const Constant* k = add_constant(std::move(c));
  alias(n, Value{"", constant_shape(*k), k}, describe(r));
  *done = true;
  return true;
}

// Shape, Cast, Range and ConstantOfShape make shapes and masks: fold() computes them when
// their inputs are constants. On data a Cast to float is the identity and a Cast to bool a
// mask (x != 0); the rest would need integer tensors, which Descent does not have.
bool Importer::only_folded(const onnx::NodeProto& n) {
  Value x;
  if (!input(n, 0, &x)) return false;
  int64_t to = attr_int(n, "to", 0);
  if (n.op_type() == "Cast" && to == onnx::TensorProto::FLOAT) {
    // Descent's tensors are f32: a mask (0.0 and 1.0) or a float is already one.
    alias(n, x, "(no code: the same tensor)");
    return true;
  }
  if (n.op_type() == "Cast" && to == onnx::TensorProto::BOOL) {
    emit(n, x.shape, fmt::format("{}({})", elementwise_kernel("nonzero", x.shape.size()), expr(x)));
    return true;
  }
  return node_fail(n, fmt::format("it computes on data ('{}'); Descent computes {} only on "
                                  "constants, at import time", n.input(0), n.op_type()));
}

}  // namespace descent::importer::onnx_internal
