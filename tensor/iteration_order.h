// The order in which a loop nest writes its output: the picture Halide's trace
// visualisations draw, as data (the loop-nest pane colours a grid with it).
//
//   tensor::IterationOrder o;
//   if (!tensor::iteration_order(sched.func(), &o, &error)) ...   // e.g. a nest too big to walk
//   o.order[0], o.order[1], ...    // the elements in the order they are first written
//
// The walk follows the loops in program order (as the reference interpreter runs them:
// parallel, vectorized and bound loops serially, iteration 0 first) and evaluates only loop
// indices, block bindings, predicates and store indices, never a tensor value. A "step" is
// one store to the output buffer. When the schedule splits loops, the elements are grouped
// into tiles: the elements written during one iteration of the innermost loop that has
// another loop under it moving the same output dimension (i_0 above i_1 after a split).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tensor {

struct IterationOrder {
  std::string buffer;            // the output buffer: "C"
  std::vector<int64_t> shape;    // its shape
  // The grid the elements are laid out on, row-major: rank 2 as is; [n] as one row;
  // higher ranks with their leading dims flattened into rows ([2, 4, 8] is 8 rows of 8).
  int64_t rows = 1, cols = 1;
  std::string note;              // how a rank other than 2 was laid out, or ""
  int64_t writes = 0;            // steps: stores to the output the nest executes
  // One entry per element (rows * cols), row-major:
  std::vector<int64_t> first;    // the step of its first write; -1: never written
  std::vector<int64_t> last;     // the step of its last write (later than first: a reduction)
  std::vector<int64_t> tile;     // the tile of its first write, numbered in visit order
  int64_t tiles = 1;             // 1 when no loop is split
  std::vector<std::string> tile_loops;  // the loops that number the tiles ("i_0 j_0"), or none
  // Element indices in order of first write (never-written ones left out).
  std::vector<int64_t> order;
};

// The walk's bound: loop iterations plus output stores it would visit. Above it,
// iteration_order fails at once (before walking) rather than keep a front end waiting.
inline constexpr int64_t kIterationOrderMaxSteps = int64_t(1) << 24;

// False with *error when the nest is bigger than max_steps (the message gives its size), or
// when an index depends on something but loop variables (a malformed function).
bool iteration_order(const tir::PrimFunc& f, IterationOrder* out, std::string* error,
                     int64_t max_steps = kIterationOrderMaxSteps);

}  // namespace descent::tensor
