// The dataflow graph of tensor code, and the passes that rewrite it before anything runs.
//
// Calling a kernel in Descent computes nothing: it adds a node to a graph (runtime.h). Only
// when a value is needed (print, sum_all, t[i, j], save) does the runtime cut out the part of
// the graph that value depends on, rewrite it with the passes below and execute it. Seeing
// the whole chain first is what lets a compiler do what the MLC course does by hand:
// `relu(linear(x, w))` is two loop nests in the program but one (the seed notes'
// linear_relu) on the machine, and `add(ones(s), ones(s))` is a constant before it runs.
//
// A node is a tensor: where it comes from (a constant, data fed in, or a kernel call) and
// its shape, always known. Nodes are kept in topological order (inputs before their users),
// so every pass and the executor are one forward or backward sweep.
//
//   %0 = const ones  [2, 2]
//   %1 = input rand  [1, 3072]
//   %3 = relu(%2)  [1, 200]
//
// Passes are free functions `Graph pass(const Graph&, PassStats*)` with a name, so the REPL
// and the GUI can show the graph before and after each one. None may change a result.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::tensor {

enum class NodeKind : uint8_t {
  Constant,  // value known when the program is compiled: zeros/ones/arange/full, or folded
  Input,     // data fed in: rand, load, or a tensor an earlier evaluation already computed
  Kernel,    // a kernel call: `func` applied to the `inputs` nodes
};
const char* node_kind_name(NodeKind k);  // "const", "input", "kernel"

struct Node {
  int64_t id = -1;                 // stable across passes: the runtime's tensor handle
  NodeKind kind = NodeKind::Input;
  // Constant/Input: how it was made ("ones", "rand", "load", "add" once folded);
  // Kernel: the kernel's name, or the fused name ("linear_relu").
  std::string label;
  std::vector<int64_t> inputs;     // Kernel: argument node ids, in parameter order
  const KernelDecl* kernel = nullptr;  // Kernel: the declaration called (null once fused)
  uint32_t version = 0;            // Kernel: the declaration's version in the Module
  std::shared_ptr<const tir::PrimFunc> func;  // Kernel: the lowered (and scheduled) loop nest
  // Kernel: where func's schedule came from: "" (none: the nest as lowered), "user" (the
  // user's schedule for the kernel, or for one of the kernels fused into it), "tuned" (the
  // tuning database's best record), "default" (the rule-based scheduler).
  std::string schedule;
  std::vector<int64_t> shape;      // always known, even before the value
  std::shared_ptr<const Tensor> value;  // Constant/Input: the data; Kernel: once executed
  // Kernel: re-laid-out copies of inputs that func takes as extra arguments, after the
  // inputs' (tensor/schedule.h, hoist_layout_prologues): the runtime computes each once per
  // input tensor and keeps it while that tensor lives (a layer's weights, packed once).
  std::vector<LayoutPrologue> packs;
  // Training (runtime_grad.cpp): a node grad() made, part of the backward pass (the views
  // colour it); and a node that depends on a tensor grad() differentiated or assign()
  // updated, which keeps what it read while it lives (the tape), computed or not.
  bool backward = false;
  bool tape = false;
  // Input made by a host operation (reshape, rows, ...): the tensors it was made from. The
  // gradient does not flow through a host operation; grad says so rather than give zeros.
  std::vector<int64_t> made_from;
};

// The bytes a node's f32 value takes, from its shape (known before the value is).
inline uint64_t bytes_of(const Node& n) {
  uint64_t b = sizeof(float);
  for (int64_t d : n.shape) b *= uint64_t(d > 0 ? d : 0);
  return b;
}

struct Graph {
  std::vector<Node> nodes;        // topological order: a node's inputs come before it
  std::vector<int64_t> outputs;   // the node ids someone asked for; passes keep these

  // Index into nodes of the node with this id; -1 if absent.
  int index_of(int64_t id) const;
  const Node* find(int64_t id) const;
  int num_kernels() const;
};

// ---- Printers -------------------------------------------------------------------------

// One node per line, outputs marked:
//   %0 = input rand  [1, 3072]
//   %1 = input rand  [200, 3072]
//   %3 = linear_relu(%0, %1)  [1, 200]  -> output
std::string graph_to_text(const Graph& g);
// Graphviz: kernel nodes are boxes, constants and inputs ellipses (constants grey); every
// edge is labelled with the shape of the tensor it carries.
std::string graph_to_dot(const Graph& g, const std::string& title = "graph");

// ---- Passes ---------------------------------------------------------------------------

struct PassStats {
  std::string name;      // the pass's name, e.g. "fuse_elementwise"
  bool changed = false;  // did the graph change?
  std::string summary;   // one line for the views: "fused linear + relu -> linear_relu"
  std::string error;     // non-empty when the pass met a node it could not handle (the
                         // graph it returns is then the input graph, unchanged)
};

// A Kernel node whose inputs are all Constant is evaluated now, with the reference
// interpreter, and becomes a Constant holding its value.
Graph fold_constants(const Graph& g, PassStats* stats);

// A Kernel node P whose only consumer is an elementwise kernel E (one block, no reduce
// axes, the same output shape as P) merges with E into one Kernel node: P's loop nest and
// E's concatenated, P's output a Temp buffer between them, then E's block moved inside P's
// innermost spatial loop with reverse_compute_at, so each element is consumed as soon as
// it is produced. linear followed by relu becomes the seed notes' linear_relu. A P that is
// a graph output is never fused away (its value must exist). Chains fuse repeatedly:
// linear, bias_add, relu -> linear_bias_add_relu.
Graph fuse_elementwise(const Graph& g, PassStats* stats);

// Nodes from which no output can be reached are removed.
Graph eliminate_dead_code(const Graph& g, PassStats* stats);

// The pipeline the runtime runs, in order, by name (the keys the REPL and GUI use).
struct GraphPass {
  const char* name;
  Graph (*run)(const Graph&, PassStats*);
};
const std::vector<GraphPass>& graph_passes();

// The fusion step on its own, for tests and the labs. P's loop nest, then E's, in one
// PrimFunc named `name`; E's parameters whose node is `producer_id` read P's output, which
// becomes a Temp buffer called `temp_name`, and E's parameters fed by a node P already
// takes share P's buffer. *inputs receives the fused function's argument node ids, in
// parameter order. *moved says whether E's block could be moved inside P's loops (when it
// cannot, the plain concatenation is kept: slower, same result).
bool fuse_funcs(const tir::PrimFunc& producer, const std::vector<int64_t>& producer_inputs,
                int64_t producer_id, const tir::PrimFunc& consumer,
                const std::vector<int64_t>& consumer_inputs, const std::string& name,
                const std::string& temp_name, tir::PrimFunc* out, std::vector<int64_t>* inputs,
                bool* moved, std::string* error);

}  // namespace descent::tensor
