// Kernel (index notation, lang/ast.h KernelDecl) -> loop-nest IR (tir.h PrimFunc).
//
// Each statement `T[i, j] = value` becomes one stage: a perfect loop nest over its spatial
// axes (extents from T's shape) then its reduce axes (extents from the buffers they index),
// around one Block. A Reduce node (`sum(k) e`, `max(k) e`, `min(k) e`) gives the block an
// init (0, -inf, +inf) and an update `T[...] = T[...] + e` (or max/min). A reduction nested
// inside a larger expression (`out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)`) lowers to
// two blocks: the reduction into a temp buffer named `out_acc`, then the rest of the
// expression, placed inside the same spatial loops after the reduce loop (the hand-fused
// linear_relu of the seed notes).
//
// Shapes are concrete: lowering binds named dims from the argument shapes (a dim named twice
// must agree), infers every intermediate buffer's shape from the extents of its axes, and
// checks the declared return shape. Errors carry the location of the offending name.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/source.h"
#include "tensor/tir.h"

namespace descent::tensor {

// Binds the kernel's named dims from argument shapes. Fails on rank or size mismatch, e.g.
// "argument 'w' of kernel 'linear': dim 'k' is 3072 in 'x' but 2048 here".
bool bind_dims(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
               std::map<std::string, int64_t>* dims, Diagnostic* error);

// The output shape a call with these argument shapes produces (without lowering).
bool result_shape(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
                  std::vector<int64_t>* shape, Diagnostic* error);

bool lower(const KernelDecl& kernel, const std::vector<std::vector<int64_t>>& arg_shapes,
           tir::PrimFunc* out, Diagnostic* error);

// Argument shapes for looking at a kernel without calling it (`descent kernel FILE NAME`):
// concrete dims as written, named dims from `dims` (e.g. {"n": 1024}), others default_dim.
std::vector<std::vector<int64_t>> shapes_for(const KernelDecl& kernel,
                                             const std::map<std::string, int64_t>& dims,
                                             int64_t default_dim = 64);
// The kernel's named dims, in the order its parameters first write them ("n", "k", "m"
// for matmul): the names shapes_for takes.
std::vector<std::string> dim_names(const KernelDecl& kernel);

}  // namespace descent::tensor
