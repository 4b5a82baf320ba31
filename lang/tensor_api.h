// The seam between scalar code and the tensor layer.
//
// The lang library sits below tensor/ (DESIGN.md: dependencies point one way), so the AST
// walker cannot call the tensor library directly. Instead it talks to this interface, which
// the tensor layer implements (tensor/runtime.h: GraphRuntime) and the Session hands to the
// engine in RunOptions. Tensor and Shape values are int64 handles into the runtime; the
// runtime owns the data, so a tensor held in a REPL global outlives the line that made it.
//
// Every call that can fail returns false and sets *error to a one-line message without a
// location ("shape mismatch: ..."); the engine adds the location of the expression.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lang/ast.h"

namespace descent {

// full(shape, value)'s value as TensorRuntime::create takes it, and back.
inline int64_t full_value_bits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}
inline double full_value(int64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

class TensorRuntime {
 public:
  virtual ~TensorRuntime() = default;

  // Shapes: [1, 3072] and t.shape are Shape values.
  virtual int64_t make_shape(const std::vector<int64_t>& dims) = 0;
  virtual const std::vector<int64_t>& shape_dims(int64_t shape_handle) const = 0;

  // zeros(shape), ones(shape), rand(shape, seed), arange(n), full(shape, value).
  // Zeros/Ones: args = {}; Rand: args = {seed}; Arange: dims = {n}, args = {};
  // Full: args = {full_value_bits(value)} (the double's bits: args are int64).
  virtual bool create(Builtin which, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& args, int64_t* tensor, std::string* error) = 0;
  // Calls a kernel: adds a node to the dataflow graph; checks shapes now (named dims bind
  // here) but computes nothing until a value is needed.
  virtual bool call_kernel(const KernelDecl& kernel, const std::vector<int64_t>& args,
                           int64_t* tensor, std::string* error) = 0;
  // The shape of a tensor (known without evaluating it).
  virtual const std::vector<int64_t>& tensor_dims(int64_t tensor) const = 0;
  // These need the value: they evaluate the pending graph first.
  virtual bool element(int64_t tensor, const std::vector<int64_t>& index, double* out,
                       std::string* error) = 0;
  virtual bool sum_all(int64_t tensor, double* out, std::string* error) = 0;
  // print(t): the shape and a few values, e.g. "tensor([2, 3], [0.1, 0.2, ..., 0.6])".
  virtual bool format(int64_t tensor, std::string* out, std::string* error) = 0;
  virtual bool load(const std::string& path, int64_t* tensor, std::string* error) = 0;
  // The host operations a classifier needs, which kernels cannot express (docs/tensor.md,
  // "Host operations"): a new tensor made now from the arguments' values, which are
  // evaluated first. Shapes are checked before anything is evaluated.
  //   argmax(t[, axis])    tensors = {t},    ints = {axis} (negative counts from the end)
  //   reshape(t, shape)    tensors = {t},    ints = the new dims
  //   flatten(t)           tensors = {t},    ints = {}
  //   rows(t, start, n)    tensors = {t},    ints = {start, n}
  //   eq(a, b)             tensors = {a, b}, ints = {}
  virtual bool host_op(Builtin which, const std::vector<int64_t>& tensors,
                       const std::vector<int64_t>& ints, int64_t* tensor, std::string* error) {
    (void)tensors, (void)ints, (void)tensor;
    *error = std::string("'") + builtin_name(which) + "' is not supported by this tensor runtime";
    return false;
  }
  // mean(t): the average of every element, a float (sum_all's sum over the count).
  virtual bool mean(int64_t tensor, double* out, std::string* error) {
    (void)tensor, (void)out;
    *error = "'mean' is not supported by this tensor runtime";
    return false;
  }
  virtual bool save(int64_t tensor, const std::string& path, std::string* error) = 0;

  // ---- Lifetime: mark and sweep at the engine's safe points ----
  // Handles are plain numbers in the engines' variables, so the runtime cannot see when the
  // last one goes; the engine tells it, at a safe point: a moment when no tensor is held
  // anywhere but in variables (between two statements). collect(roots, from) frees every
  // tensor whose handle is >= `from` and that neither a root nor a pending computation a root
  // needs refers to. `from` is the handle count when the innermost active call began
  // (next_handle() then): a caller mid-expression may hold older temporaries, e.g. the
  // result of f in `add(f(a), g(b))` while g runs, but never a newer one.
  // wants_collect() says that enough was allocated since the last collection to be worth
  // it; engines check it at every safe point and collect at the end of a run.
  virtual bool wants_collect() const { return false; }
  virtual int64_t next_handle() const { return 0; }
  virtual void collect(const std::vector<int64_t>& roots, int64_t from) {
    (void)roots;
    (void)from;
  }
};

// How print shows a Shape: "[1, 200]".
std::string format_shape(const std::vector<int64_t>& dims);

}  // namespace descent
