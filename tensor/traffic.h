// The bytes a loop nest moves between main memory and one cache, counted from the nest
// itself: what flash attention saves, as a number a student can check by hand.
//
// kernel_cost (tensor/launch.h) counts compulsory traffic only: each input read once, the
// output written once. A loop order decides how much more is moved, and an intermediate
// buffer in global memory (attention's [h, s, t] scores) is written and read back in full.
// The model here is the ideal cache of C bytes that textbooks use for loop nests:
//
//   A loop whose whole run touches at most C bytes of global buffers (its footprint: per
//   buffer, the box of elements its accesses reach, 4 bytes each) moves each of those bytes
//   once. A loop that touches more runs its body `extent` times, and each run moves what the
//   body moves, except that a buffer the body reads at the same elements in every iteration
//   (invariant in the loop) stays in the cache when the body's footprint fits, and moves once.
//   A sequence of statements that touches more than C moves what each moves (a buffer one
//   writes and the next reads goes out to memory and back). Local and shared buffers (registers, a
//   work-group's memory) move nothing: that is the point of moving a buffer there.
//
// It ignores cache lines, associativity and prefetching, so it is an estimate of the order of
// magnitude and of what changes between two schedules, not a measurement. At C = the last
// cache level it predicts the DRAM traffic of a nest that streams; at C = a GPU's on-chip
// memory per block it is FlashAttention's argument (Dao et al., Theorem 2).
#pragma once
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tensor {

struct BufferTraffic {
  std::string name;
  tir::BufferRole role = tir::BufferRole::Temp;
  double size_bytes = 0;  // the buffer itself
  double moved_bytes = 0;  // what the nest moves of it under the model
};

struct Traffic {
  double cache_bytes = 0;
  std::vector<BufferTraffic> buffers;  // the global buffers, in the function's order
  double moved_bytes() const;          // all of them together
  // Global intermediates: buffers of the nest's own that live in memory (what fusion removes).
  double intermediate_bytes() const;
};

// The model above for f (as scheduled) and a cache of `cache_bytes` (> 0).
Traffic data_movement(const tir::PrimFunc& f, double cache_bytes);

// A short table: one row per buffer (name, role, size, moved) and the total, sizes in KiB/MiB.
std::string format_traffic(const Traffic& t);

}  // namespace descent::tensor
