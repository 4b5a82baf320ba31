// Host operations (host_ops.h): shape rules and one loop per builtin.
#include "tensor/host_ops.h"

#include <cmath>
#include <cstring>

namespace descent::tensor {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t d = from; d < dims.size() && d < to; ++d) p *= dims[d];
  return p;
}

bool fail(const std::string& message, std::string* error) {
  *error = message;
  return false;
}

// argmax's axis, negative counting from the end as in NumPy (-1: the last).
bool resolve_axis(const std::vector<int64_t>& shape, int64_t axis, size_t* out, std::string* error) {
  int64_t rank = int64_t(shape.size());
  if (axis < -rank || axis >= rank)
    return fail("argmax: axis " + std::to_string(axis) + " is out of range for a tensor of shape " +
                    shape_text(shape) + " (axes 0.." + std::to_string(rank - 1) +
                    ", or -1 for the last)",
                error);
  *out = size_t(axis < 0 ? axis + rank : axis);
  return true;
}

}  // namespace

bool host_op_shape(Builtin which, const std::vector<std::vector<int64_t>>& shapes,
                   const std::vector<int64_t>& ints, std::vector<int64_t>* shape,
                   std::string* error) {
  const char* name = builtin_name(which);
  size_t want_tensors = which == Builtin::Eq ? 2 : 1;
  if (shapes.size() != want_tensors)
    return fail(std::string(name) + " expects " + std::to_string(want_tensors) + " tensor" +
                    (want_tensors == 1 ? "" : "s"),
                error);
  const std::vector<int64_t>& x = shapes[0];
  switch (which) {
    case Builtin::Argmax: {
      size_t axis = 0;
      if (ints.size() != 1) return fail("argmax expects one axis", error);
      if (!resolve_axis(x, ints[0], &axis, error)) return false;
      // Indices are f32 values: above 2^24 two of them would read as the same float.
      if (x[axis] > (int64_t(1) << 24))
        return fail("argmax: axis " + std::to_string(axis) + " has " + std::to_string(x[axis]) +
                        " elements; indices above 2^24 are not exact as f32",
                    error);
      *shape = x;
      shape->erase(shape->begin() + std::ptrdiff_t(axis));
      if (shape->empty()) *shape = {1};  // a tensor has at least one dim
      return true;
    }
    case Builtin::Reshape:
      if (product(ints) != product(x))
        return fail("reshape: " + shape_text(x) + " has " + std::to_string(product(x)) +
                        " elements, but " + shape_text(ints) + " has " +
                        std::to_string(product(ints)) + " (the product of the dims must match)",
                    error);
      *shape = ints;
      return true;
    case Builtin::Flatten:
      *shape = {x[0], product(x, 1)};
      return true;
    case Builtin::Rows: {
      if (ints.size() != 2) return fail("rows expects a start and a count", error);
      int64_t start = ints[0], count = ints[1];
      if (count < 1) return fail("rows: the count must be at least 1, got " + std::to_string(count), error);
      if (start < 0 || start > x[0] - count)
        return fail("rows: rows " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
                        " are out of range for a tensor of " + std::to_string(x[0]) +
                        " rows (shape " + shape_text(x) + ")",
                    error);
      *shape = x;
      (*shape)[0] = count;
      return true;
    }
    case Builtin::Eq:
      if (shapes[0] != shapes[1])
        return fail("eq: the shapes differ: " + shape_text(shapes[0]) + " and " +
                        shape_text(shapes[1]) + " (no broadcasting; reshape one of them)",
                    error);
      *shape = x;
      return true;
    default: return fail(std::string("'") + name + "' is not a host operation", error);
  }
}

bool run_host_op(Builtin which, const std::vector<const Tensor*>& args,
                 const std::vector<int64_t>& ints, const std::vector<int64_t>& shape, Tensor* out) {
  const Tensor& x = *args[0];
  out->shape = shape;
  out->data = AlignedFloats(size_t(product(shape)));
  if (out->data.size() != size_t(product(shape))) return false;
  float* dst = out->data.data();
  const float* src = x.data.data();
  switch (which) {
    case Builtin::Argmax: {
      // x viewed as [outer, n, inner]: one index per (outer, inner), the first of the
      // largest values; a nan counts as larger than everything (NumPy's rule).
      int64_t rank = int64_t(x.shape.size());
      size_t axis = size_t(ints[0] < 0 ? ints[0] + rank : ints[0]);
      int64_t n = x.shape[axis], inner = product(x.shape, axis + 1);
      int64_t outer = product(x.shape, 0, axis);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
          const float* row = src + o * n * inner + in;
          int64_t best = 0;
          for (int64_t c = 1; c < n && !std::isnan(row[best * inner]); ++c)
            if (std::isnan(row[c * inner]) || row[c * inner] > row[best * inner]) best = c;
          dst[o * inner + in] = float(best);
        }
      return true;
    }
    case Builtin::Reshape:
    case Builtin::Flatten:  // the same elements in the same (C) order
      std::memcpy(dst, src, out->data.size() * sizeof(float));
      return true;
    case Builtin::Rows:
      std::memcpy(dst, src + ints[0] * product(x.shape, 1), out->data.size() * sizeof(float));
      return true;
    case Builtin::Eq: {
      const float* b = args[1]->data.data();
      for (size_t i = 0; i < out->data.size(); ++i) dst[i] = src[i] == b[i] ? 1.0f : 0.0f;
      return true;
    }
    default: return false;
  }
}

}  // namespace descent::tensor
