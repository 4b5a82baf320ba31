// descent_import: ONNX models -> a Descent program and .npy weights (`descent import`).
//
// A framework exports a trained model as an ONNX graph (PyTorch: torch.onnx.export): nodes
// that name an operator (Gemm, Relu, Conv, ...), and initializers, the weights. Importing
// turns it into what a student could have written by hand: one `fn model(...)` whose body
// is one line per ONNX node, calling the prelude's kernels (linear, bias_add, relu, softmax,
// ...) where they fit and small generated kernels where they do not (sigmoid, tanh, conv),
// with every weight in a .npy file beside it. From then on it is an ordinary program: the
// graph passes fuse it, schedules transform its kernels, every engine and device runs it.
//
//   ImportOptions o;
//   o.out_dir = "out";                        // model.ds and the .npy files go here
//   ImportResult r;
//   std::string error;
//   if (!import_onnx_file("mnist.onnx", o, &r, &error)) ...  // error names the node and op
//
// Supported (docs/models.md has the table): Gemm, MatMul, elementwise ops with NumPy
// broadcasting (Add, Sub, Mul, Div, Pow, Equal, Less, Greater, Where), Relu, Sigmoid, Tanh,
// Sqrt, Erf, Softmax, LayerNormalization, ReduceMean, Flatten, Transpose, Reshape, Unsqueeze,
// Squeeze, Slice, Split, Concat, Gather (constant indices, or integer token ids as the model's
// input), Conv (pads, strides, dilations, groups), MaxPool, AveragePool, Constant, Identity
// and Dropout (inference: the identity); Shape, Cast, Range and ConstantOfShape, with every
// node whose inputs are constants, are folded at import time, so a shape an exporter computes
// is a constant by the time Reshape reads it. Shapes are inferred at import time; the graph
// input's batch dim may be symbolic (a dim_param), and stays a named dim (`n`) in the
// program, so one import runs at any batch size. Anything else is an error naming the node
// and its op type, never a program that computes something else.
//
// The library reads the file with the protobuf classes of Debian's libonnx-dev (onnx.proto
// 1.12); it never prints and never exits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace descent::importer {

struct ImportOptions {
  std::string out_dir;         // where model.ds and the .npy files are written
  // The folder the program's load("...") paths start with. Empty: out_dir as given, which
  // makes the paths right when the program runs from the folder `descent import` ran in.
  std::string load_dir;
  std::string program_file = "model.ds";
  // An input to run the model on: copied to out_dir/input.npy and loaded by the program.
  // Empty: the program makes a random input (rand, seed 1) of the input's shape.
  std::string input_npy;
  // The batch size of that random input when the model's batch dim is symbolic.
  int64_t batch = 1;
};

// One imported weight: its .npy file name (in out_dir) and its data.
struct Weight {
  std::string file;            // "fc1_weight.npy"
  std::string onnx_name;       // "fc1.weight"
  tensor::Tensor data;
};

// One line of the import summary: which Descent code an ONNX node became.
struct NodeRecord {
  std::string node;            // the ONNX node's name ("/fc1/Gemm"), or "#3" when unnamed
  std::string op;              // its op type ("Gemm")
  std::string descent;         // the Descent expression it became ("bias_add(linear(x, w), b)")
  std::string shape;           // its output's shape, as inferred ("[n, 128]")
};

struct ImportResult {
  std::string program;                // the Descent source of model.ds
  std::vector<Weight> weights;        // the initializers (and float Constant nodes)
  std::vector<NodeRecord> nodes;      // in ONNX's node order
  std::string input_name, output_name;  // the graph's input and output, as in ONNX
  std::string input_shape, output_shape;  // "[n, 784]", "[n, 10]"
  std::string producer;               // "pytorch 2.1.0", or "" when the file does not say
  int64_t opset = 0;                  // the default domain's opset version
  std::vector<std::string> files;     // what import_onnx_file wrote, in order
};

// The ONNX ops the importer reads, in the order docs/models.md's table lists them (the
// importer's op table: a refusal lists them too).
std::vector<std::string> supported_onnx_ops();

// Translates an ONNX model held in memory. `source_name` is what messages and the program's
// header call the model ("mnist.onnx"). Writes nothing. False with *error ("mnist.onnx: node
// 'pool1' (MaxPool): ...") when the bytes are not an ONNX model or use what is unsupported.
bool translate_onnx(const std::string& bytes, const std::string& source_name,
                    const ImportOptions& options, ImportResult* out, std::string* error);

// Reads `path`, translates it, and writes out_dir/model.ds and one .npy per weight (and
// input.npy when options.input_npy is set), creating out_dir when missing.
bool import_onnx_file(const std::string& path, const ImportOptions& options, ImportResult* out,
                      std::string* error);

// The summary `descent import` prints: the model, one line per node, the files written.
std::string format_import_summary(const ImportResult& r);

// An MLP as ONNX bytes, written the way torch.onnx.export writes nn.Sequential(Linear, ReLU,
// ..., Linear): Gemm (transB = 1) per layer with a Relu between layers, input "input" of
// shape [batch_size, in] with a symbolic batch, output "logits". weights[i] is [out, in]
// (nn.Linear's layout), biases[i] is [out]. The benchmark hands it to ONNX Runtime; tests
// import it back. Empty string and *error when the shapes do not chain.
std::string mlp_onnx_bytes(const std::vector<tensor::Tensor>& weights,
                           const std::vector<tensor::Tensor>& biases, std::string* error);

}  // namespace descent::importer
