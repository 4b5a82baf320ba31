// What the rules (rules.cpp) share between their files: the nests of a loop nest as the rules
// read them (rules_analyse.cpp), and a recipe's steps in their two forms. Internal to
// descent_tune.
#pragma once
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tune::rules_detail {

// A nest of loops under one root loop, as the rules see it.
struct Nest {
  std::string block;                       // the block that does the work
  std::vector<std::string> spatial;        // its loops bound to spatial iterators, outside in
  std::vector<int64_t> spatial_extent;
  std::vector<std::string> reduce;         // ... and to reduce iterators
  std::vector<int64_t> reduce_extent;
  bool reduction = false;
  bool epilogue = false;   // another block shares its innermost spatial loop (a fused relu)
  bool spatial_contiguous = false;  // some load's last index walks the innermost spatial loop
  bool reduce_contiguous = false;   // some load's last index walks the innermost reduce loop
  std::string row_operand;  // an input read along the innermost spatial loop only (matmul's B)
  // A dot's weight: read along the innermost reduce loop (its last index) and along the
  // innermost spatial loop (another index), never along the other spatial loops: nn.Linear's
  // W[j, r]. `weight_perm` re-lays it out with the spatial loop's dimension last (W_t[r, j]).
  std::string weight;
  std::string weight_perm;
  // For row_operand: the order that puts the dimension walked by the innermost reduce loop
  // last (B[r, j] -> B_t[j, r]: a narrow matmul turned into a dot per output).
  std::string row_perm;
  double iterations = 1;            // product of the extents of the block's loops
};

// One step in its two forms.
struct Step {
  std::string fixed;  // "split B.j 16" ("" = none: a step of the space only)
  std::string open;   // "split B.j ?{4,8,16}" ("" = the same as fixed; "-" = none: an
                      // earlier line of the space takes it, as one step of a group;
                      // kDefaultOnly = none: the default takes it, the space never)
};
inline const char* const kDefaultOnly = "(default only)";


// Every nest of f (one per loop under the function's body), with what the recipes need to
// know about it.
std::vector<Nest> analyse(const tir::PrimFunc& f);

// An epilogue (bias, relu, the nests after a register-tiled matmul M, elementwise over its
// output) moved into M's tile: every epilogue nest but the last inlined into the last, the
// last computed inside `tile_loop` (the loop M's writeback sits under) right after the
// writeback, M's result shrunk to the tile (`set_scope ... local`), the epilogue's loops
// vectorized and unrolled. Tried on a copy of f; empty when any step is refused.
std::vector<Step> epilogue_in_tile(const tir::PrimFunc& f, const Nest& m, const std::vector<Nest>& epilogue,
                                   const std::string& tile_loop);

}  // namespace descent::tune::rules_detail
