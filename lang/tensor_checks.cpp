#include "lang/tensor_checks.h"

#include <algorithm>

#include "lang/tensor_api.h"

namespace descent {

bool fits_declared(const TensorType& declared, const std::vector<int64_t>& dims, BoundDims& bound) {
  if (dims.size() != declared.dims.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dim& want = declared.dims[d];
    if (want.name.empty()) {
      if (want.value != dims[d]) return false;
      continue;
    }
    auto it = std::find_if(bound.begin(), bound.end(),
                           [&](const auto& b) { return b.first == want.name; });
    if (it == bound.end()) bound.emplace_back(want.name, dims[d]);
    else if (it->second != dims[d]) return false;
  }
  return true;
}

std::string declared_shape(const TensorType& t) {
  std::string out = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    out += t.dims[i].name.empty() ? std::to_string(t.dims[i].value) : t.dims[i].name;
  }
  return out + "]";
}

int check_tensor_args(TensorRuntime& rt, const FnDecl& fn, const std::vector<int64_t>& args,
                      BoundDims* bound, std::string* message) {
  for (size_t i = 0; i < fn.params.size() && i < args.size(); ++i) {
    const Param& p = fn.params[i];
    if (p.type != Type::Tensor) continue;
    const std::vector<int64_t>& dims = rt.tensor_dims(args[i]);
    if (!fits_declared(p.tensor, dims, *bound)) {
      *message = "argument '" + p.name + "' of '" + fn.name + "' must have shape " +
                 declared_shape(p.tensor) + ", got " + format_shape(dims);
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool check_tensor_result(TensorRuntime& rt, const FnDecl& fn, int64_t result, BoundDims bound,
                         std::string* message) {
  const std::vector<int64_t>& dims = rt.tensor_dims(result);
  if (fits_declared(fn.return_tensor, dims, bound)) return true;
  *message = "'" + fn.name + "' must return a tensor of shape " +
             declared_shape(fn.return_tensor) + ", got " + format_shape(dims);
  return false;
}

int check_element_index(const std::vector<int64_t>& dims, const std::vector<int64_t>& index,
                        const std::string& name, std::string* message) {
  if (index.size() != dims.size()) {
    *message = "'" + name + "' has " + std::to_string(dims.size()) +
               " dimensions, but is indexed with " + std::to_string(index.size());
    return 0;
  }
  for (size_t d = 0; d < dims.size(); ++d)
    if (index[d] < 0 || index[d] >= dims[d]) {
      *message = "index " + std::to_string(index[d]) + " out of range for dim " +
                 std::to_string(d) + " of size " + std::to_string(dims[d]);
      return static_cast<int>(d) + 1;
    }
  return -1;
}

std::string check_shape_index(int64_t index, size_t rank) {
  if (index >= 0 && static_cast<size_t>(index) < rank) return "";
  return "index " + std::to_string(index) + " out of range for a shape of " +
         std::to_string(rank) + " dimensions";
}

std::string check_shape_dim(int64_t dim) {
  if (dim >= 1) return "";
  return "shape dimensions must be at least 1, got " + std::to_string(dim);
}

std::string check_arange(int64_t n) {
  if (n >= 1) return "";
  return "arange(n) needs n >= 1, got " + std::to_string(n);
}

}  // namespace descent
