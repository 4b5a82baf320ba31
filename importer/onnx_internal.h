// Private to the ONNX importer (importer/onnx_*.cpp): nothing else includes this.
//
// translate_onnx() (onnx_import.h) is one Importer object walking a model. Its methods are
// spread over files by concern, one file per family of ops:
//   onnx_import.cpp           the walk: the model, its initializers and its one input, each
//                             node in order (dispatched through op_table()), the ops that make
//                             no code (Constant, Identity, Dropout), the program's text; and
//                             the entry points of onnx_import.h
//   onnx_fold.cpp             constant folding: a node whose inputs are all constants (and
//                             Shape, whose output the inferred shapes fix) is computed at
//                             import time, so a shape computed by Shape/Gather/Concat/... is a
//                             constant by the time Reshape reads it
//   onnx_ops_elementwise.cpp  Relu, Sigmoid, Tanh, Sqrt, Erf, and kernels for ranks the
//                             prelude lacks
//   onnx_ops_broadcast.cpp    Add, Sub, Mul, Div, Pow, Equal, Less, Where: NumPy broadcasting
//   onnx_ops_matmul.cpp       Gemm and MatMul
//   onnx_ops_normalize.cpp    Softmax, LayerNormalization, ReduceMean
//   onnx_ops_shape.cpp        Flatten, Reshape, Transpose, Unsqueeze, Squeeze
//   onnx_ops_slice.cpp        Slice, Split, Concat, Gather
//   onnx_ops_conv.cpp         Conv, MaxPool, AveragePool
// Writing ONNX (onnx_write.cpp) needs none of this. A new op is a reader declared below with
// its family, its body in that family's file, and a row in op_table() and in docs/models.md's
// table (a test keeps the two equal).
#pragma once
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "importer/onnx_import.h"
#include "lang/text.h"
#include "tensor/tensor.h"

namespace descent::importer::onnx_internal {

// A dim of an inferred shape: a number, or the model's one symbolic dim (the batch), which
// the program calls `n`.
struct Dim {
  int64_t value = 0;
  bool symbolic = false;
  bool operator==(const Dim& o) const { return symbolic == o.symbolic && (symbolic || value == o.value); }
};
using Shape = std::vector<Dim>;

inline std::string dim_text(const Dim& d) { return d.symbolic ? "n" : std::to_string(d.value); }
inline std::string shape_str(const Shape& s) {
  std::vector<std::string> parts;
  for (const Dim& d : s) parts.push_back(dim_text(d));
  return "[" + join(parts) + "]";
}
inline bool concrete(const Shape& s) {
  return std::none_of(s.begin(), s.end(), [](const Dim& d) { return d.symbolic; });
}
inline Shape concrete_shape(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back({d, false});
  return s;
}

// A constant of the file: an initializer, a Constant node's value, or a folded node's.
struct Constant {
  std::string onnx_name;
  bool is_float = true;          // float32 data (a weight; or a bool, is_bool); else int64
  bool is_bool = false;          // bool data, held as 0.0 and 1.0 in `data`
  tensor::Tensor data;           // float32: shape and values (a scalar has shape [1])
  bool scalar = false;           // rank 0 in the file
  std::vector<int64_t> ints;     // int64 values (int32 data widened)
  std::vector<int64_t> dims;     // int64 constants' dims
  // int64 entries that stand for the symbolic batch n (a shape computed from the input's
  // by Shape): empty when none does.
  std::vector<bool> batch;
};

// A constant's ONNX shape (a scalar has rank 0).
inline Shape constant_shape(const Constant& c) {
  if (!c.is_float) return concrete_shape(c.dims);
  return c.scalar ? Shape{} : concrete_shape(c.data.shape);
}

// An ONNX value during the import.
struct Value {
  std::string var;               // the Descent variable that holds it ("" for a constant
                                 // not yet loaded)
  Shape shape;
  const Constant* constant = nullptr;  // set for initializers and Constant outputs
};

// Identifiers from ONNX names ("/fc1/Gemm_output_0", "0.weight", "input.1"): every run of
// characters an identifier cannot hold becomes one '_', a leading digit gets a letter, and a
// name already taken or reserved gets a number.
class Names {
 public:
  // `global`: the name is a top-level variable, which must not be the run section's x or y
  // (a local may: inside `model` it hides nothing the model reads).
  std::string make(std::string_view hint, std::string_view fallback, bool global = false);
  // A generated kernel's name: true and taken when no variable has it (or is reserved), so
  // a variable made later cannot hide the kernel either.
  bool claim(const std::string& name);

 private:
  std::set<std::string> taken_;
};

// One import: the state of the walk over one model's graph, and one reader per op.
class Importer {
 public:
  Importer(const std::string& source, const ImportOptions& o, ImportResult* out, std::string* error)
      : source_(source), options_(o), out_(out), error_(error) {}

  bool run(const onnx::ModelProto& model);

 private:
  // ---- errors -------------------------------------------------------------------------------
  bool fail(const std::string& message) {
    *error_ = source_ + ": " + message;
    return false;
  }
  // A node's name, or "#3" (its position) for an unnamed one.
  std::string node_name(const onnx::NodeProto& node) const;
  std::string label(const onnx::NodeProto& node) const;  // "node 'fc1' (Gemm)"
  bool node_fail(const onnx::NodeProto& node, const std::string& message) {
    return fail(label(node) + ": " + message);
  }

  // ---- constants ----------------------------------------------------------------------------
  bool read_tensor(const onnx::TensorProto& t, const std::string& what, Constant* c);
  const Constant* add_constant(Constant c) {
    constants_.push_back(std::make_unique<Constant>(std::move(c)));
    return constants_.back().get();
  }
  // The Descent global holding a float constant (loaded on first use); `data` replaces the
  // file's values when the node folded something into them, under a new variable.
  // `suffix` names the folded variant ("_scaled"), `note` says what was folded.
  std::string weight(const Constant& c, const tensor::Tensor* folded = nullptr,
                     std::string_view suffix = "", std::string_view note = "");

  // ---- the walk (onnx_import.cpp) -----------------------------------------------------------
  bool node(const onnx::NodeProto& n);
  bool input(const onnx::NodeProto& n, int i, Value* v);
  // The Descent expression of a value: its variable, or a constant's global.
  std::string expr(const Value& v) { return v.constant ? weight(*v.constant) : v.var; }
  void emit(const onnx::NodeProto& n, const Shape& shape, const std::string& code, int output = 0);
  // A node that makes no code: its output is its input, or a constant.
  void alias(const onnx::NodeProto& n, const Value& v, const std::string& note);
  // A generated kernel, added once: `text` is its definition with NAME where its name goes;
  // the same text asked for again gets the same kernel. The name is `base`, or base_2, ...
  std::string kernel(const std::string& base, const std::string& text);
  // reshape(x, [dims]): the batch written `batch` (the program reads it from the input).
  std::string reshape_code(const std::string& x, const Shape& y);
  // A shape's dims multiplied out: "32", or "batch * 4" when the batch is one of them.
  std::string product_code(const Shape& s);
  std::vector<std::string> dims_code(const Shape& s);  // each dim: a number, or "batch"
  bool constant(const onnx::NodeProto& n);
  bool passthrough(const onnx::NodeProto& n);  // Identity, Dropout at inference

  // ---- constant folding (onnx_fold.cpp) ----------------------------------------------------
  // Computes `n` at import time when it folds (every input a constant, or Shape): *done then.
  bool fold(const onnx::NodeProto& n, bool* done);
  bool only_folded(const onnx::NodeProto& n);  // Shape, Cast, Range, ...: nothing else to do

  // ---- the ops, one family per file (onnx_ops_*.cpp) ----------------------------------------
  std::string elementwise_kernel(const std::string& op, size_t rank);  // elementwise
  bool unary(const onnx::NodeProto& n);
  bool binary(const onnx::NodeProto& n);                               // broadcast
  bool where(const onnx::NodeProto& n);
  // A kernel generated for `ins` broadcast together: body() gets each operand's element (or
  // its value, for a constant of one element) and returns the result's.
  bool broadcast(const onnx::NodeProto& n, const std::string& base, const std::string& doc,
                 const std::vector<Value>& ins,
                 const std::function<std::string(const std::vector<std::string>&)>& body);
  bool gemm(const onnx::NodeProto& n);                                 // matmul
  bool matmul(const onnx::NodeProto& n);
  bool softmax(const onnx::NodeProto& n);                              // normalize
  bool layer_norm(const onnx::NodeProto& n);
  bool reduce_mean(const onnx::NodeProto& n);
  bool transpose(const onnx::NodeProto& n);                            // shape
  bool flatten(const onnx::NodeProto& n);
  bool reshape(const onnx::NodeProto& n);
  bool unsqueeze(const onnx::NodeProto& n);                            // and Squeeze
  bool slice(const onnx::NodeProto& n);                                // slice
  bool split(const onnx::NodeProto& n);
  bool concat(const onnx::NodeProto& n);
  bool gather(const onnx::NodeProto& n);
  bool conv(const onnx::NodeProto& n);                                 // conv
  bool pool(const onnx::NodeProto& n);                                 // MaxPool, AveragePool
  // A padded copy of x (rows and columns of an [N, C, H, W] tensor), `fill` outside.
  std::string pad_code(const Value& x, int64_t top, int64_t left, int64_t bottom, int64_t right,
                       float fill, Shape* padded);
  // The ints of a constant input (a shape, axes, starts), or a refusal naming it.
  bool const_ints(const onnx::NodeProto& n, int i, std::vector<int64_t>* out);

 public:
  // The ops the importer reads, one row each, in the order docs/models.md's table lists
  // them: dispatch, the refusal's list and supported_onnx_ops() all read it.
  struct OpEntry {
    const char* op;
    bool (Importer::*read)(const onnx::NodeProto&);
    bool extra_outputs = false;  // its other outputs may be there (Dropout's mask): unused
  };
  static const std::vector<OpEntry>& op_table();

 private:
  std::string source_;
  const ImportOptions& options_;
  ImportResult* out_;
  std::string* error_;
  int node_index_ = 0;
  int64_t opset_ = 0;
  Names names_;
  std::map<std::string, Value> values_;           // ONNX value name -> what holds it
  std::vector<std::unique_ptr<Constant>> constants_;
  std::map<std::string, std::string> loaded_;     // constant name + suffix -> global variable
  std::vector<std::string> kernels_;              // generated kernel definitions, in order
  std::set<std::string> kernel_names_;
  std::map<std::string, std::string> kernel_texts_;  // a generated kernel's text -> its name
  std::string int_input_;                         // the input, when it holds integer ids
  std::vector<std::string> globals_;              // load lines
  std::vector<std::string> body_;                 // the model's lines
  size_t symbol_index_ = 0;                       // which of the input's dims is the batch
  bool body_uses_batch_ = false;
  int conv_count_ = 0;
  const onnx::GraphProto* graph_ = nullptr;
};

// Names for a generated kernel's axes and dims: numbered("i", 3) is i0, i1, i2.
inline std::vector<std::string> numbered(const char* prefix, size_t rank) {
  std::vector<std::string> v;
  for (size_t d = 0; d < rank; ++d) v.push_back(prefix + std::to_string(d));
  return v;
}

// ---- attributes ----------------------------------------------------------------------------

inline const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
inline int64_t attr_int(const onnx::NodeProto& n, std::string_view name, int64_t fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}
inline float attr_float(const onnx::NodeProto& n, std::string_view name, float fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : fallback;
}
inline std::vector<int64_t> attr_ints(const onnx::NodeProto& n, std::string_view name) {
  const auto* a = find_attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

}  // namespace descent::importer::onnx_internal
