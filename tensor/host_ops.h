// Host operations: the tensor builtins a classifier needs that a kernel cannot express.
//
// A kernel's result has the rank its return type says, its indices are affine in its axes,
// and its body computes floats with + - * / max min exp log sqrt abs. So these are not
// kernels (docs/tensor.md, "Host operations"):
//   argmax(t, axis)      an index, found by comparing (no comparison or select in a kernel)
//   reshape(t, shape)    the same data under another shape (flat index -> index: / and %)
//   flatten(t)           reshape to [d0, d1 * d2 * ...], the batch dim kept (ONNX Flatten)
//   rows(t, start, n)    rows start .. start+n-1 of dim 0 (an offset is a scalar argument)
//   eq(a, b)             1.0 where a == b, else 0.0 (exact float equality)
// They run on the host, on computed tensors, in one plain loop each; transpose is a prelude
// kernel. Shapes are checked first, from the arguments' shapes alone, so a wrong call is an
// error before its arguments are computed.
#pragma once
#include <string>
#include <vector>

#include "lang/ast.h"
#include "tensor/tensor.h"

namespace descent::tensor {

// The result's shape for arguments of `shapes` (ints as TensorRuntime::host_op takes them),
// or false with a message naming the builtin, e.g. "reshape: [4, 10] has 40 elements, ...".
bool host_op_shape(Builtin which, const std::vector<std::vector<int64_t>>& shapes,
                   const std::vector<int64_t>& ints, std::vector<int64_t>* shape,
                   std::string* error);
// Computes it into *out (shape: what host_op_shape gave for these arguments); false only
// when the result could not be allocated.
bool run_host_op(Builtin which, const std::vector<const Tensor*>& args,
                 const std::vector<int64_t>& ints, const std::vector<int64_t>& shape, Tensor* out);

}  // namespace descent::tensor
