// Schedules from rules (issue 17, docs/tuning.md section 4): what a kernel gets when nobody
// wrote or tuned a schedule for it, and the search space the tuner builds for it.
//
// The rules read each loop nest the way a person does before scheduling it (tinygrad's
// hand-coded optimisations and TVM's DLight are the same idea): which block does the work,
// which of its loops are spatial and which reduce, and which axis the loads walk
// contiguously. Three shapes of nest get three recipes:
//
//   elementwise   (add, relu, bias_add, e = exp(x - mx))
//                 vectors across the innermost loop, the outer loop to the threads
//   dot           (linear: out[i, j] = sum(r) x[i, r] * w[j, r]: r is contiguous in every
//                 load, j in none) rfactor the reduction into vector lanes of partial sums
//   matmul        (C[i, j] = sum(r) A[i, r] * B[r, j]: j is contiguous in B and C)
//                 a register tile of C (tile, reorder r outside the tile, accumulate in a
//                 local copy, vectorize j, unroll i), the row blocks to the threads; the
//                 elementwise nests after it (a bias, a relu) moved into the tile; rows too
//                 narrow for a tile's width (10 classes) a tile of rows, each one vector
//
// The nests are read in rules_analyse.cpp (rules_internal.h).
// For OpenCL the same nests are bound to work-groups and work-items instead of threads; a
// kernel with attention's pattern gets the flash schedule instead (rules_flash.cpp).
// Every step goes through the schedule primitives, which refuse what is not legal, so a rule
// can never change what a kernel computes: a refused step is skipped and noted, and the
// kernel keeps the steps that applied.
#pragma once
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tune {

struct RuleTarget {
  std::string device = "cpu";  // "cpu": host threads and LLVM vectors; "opencl": work-groups
  int vector_lanes = 16;       // floats per vector (AVX-512; LLVM splits them for AVX2)
};

struct RuleSchedule {
  std::string trace;               // the steps that applied, one per line (replayable)
  std::vector<std::string> notes;  // what the rules saw, and each step a primitive refused
  tir::PrimFunc func;              // f with the trace applied
};

// The default schedule: deterministic, no search, no measurement. A device the rules do not
// know (the reference interpreter) gets an empty trace.
RuleSchedule default_schedule(const tir::PrimFunc& f, const RuleTarget& target);

// The flash-attention schedule (rules_flash.cpp) when f has attention's pattern (scores, a
// row max, exponentials, sums over them: online_softmax and merge accept it), for opencl:
// tiles of query rows, one pass per tile, a work-group per tile. Empty when f has no such
// pattern; *notes (may be null) gets a line saying what it found.
std::string flash_schedule(const tir::PrimFunc& f, std::vector<std::string>* notes);

// A search space (tune/space.h syntax) for f from the same rules, with the tile sizes, the
// vector widths and the optional steps left open. Its first sample with every decision 0 is
// not the default schedule; the default schedule is one point of it, but for the steps
// only the default takes (a tensorize, four vectors of partial sums).
std::string rule_space(const tir::PrimFunc& f, const RuleTarget& target);

}  // namespace descent::tune
