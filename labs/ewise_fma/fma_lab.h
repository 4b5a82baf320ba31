// Lab ewise_fma: the graph pass you write (in fma.cpp), and what the checker does with it.
//
// The checker runs small Descent programs against the tensor runtime with its own passes
// off, takes the graph an evaluation builds (tensor/graph.h: one Node per tensor, kernels
// already lowered to loop nests), calls fuse_ewise_fma on it, and executes the graph before
// and after your pass on the reference interpreter: every output must come out the same.
#pragma once
#include "tensor/graph.h"

// The seed notes' EwiseFMA rewrite: add(mul(x, y), z) becomes ewise_fma(x, y, z).
//
// Return a copy of `g` in which every Kernel node A labelled "add" that has an input M
// that qualifies is replaced. M qualifies when
//   - M is a Kernel node labelled "mul",
//   - A is M's only consumer: no other node lists M's id in its inputs, and A lists it once,
//   - M is not a graph output (g.outputs does not hold M's id).
// When both of A's inputs qualify, take the first. The replacement:
//   - keeps A's id, A's position in g.nodes and A's shape (its consumers and g.outputs
//     still name it), and is a Kernel labelled "ewise_fma" with kernel = nullptr;
//   - its func is M's loop nest and A's fused into one PrimFunc: tensor::fuse_funcs
//     (graph.h) does that, named "ewise_fma", with "mul" as the name of the temporary;
//     its inputs are the argument node ids fuse_funcs gives back (x, y, then z);
//   - M is removed from the nodes.
// Everything else stays as it is. Nodes stay in topological order (a node's inputs before
// it), as every pass must keep them.
//
// `stats` may be null. When it is not, set stats->name = "fuse_ewise_fma",
// stats->changed (did the graph change?) and stats->summary, one line for the views:
// what was fused ("fused %3 mul + %4 add -> ewise_fma"), or "nothing to fuse".
descent::tensor::Graph fuse_ewise_fma(const descent::tensor::Graph& g,
                                      descent::tensor::PassStats* stats);
