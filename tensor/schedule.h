// Schedules: transformations of one PrimFunc's loops that never change its result.
//
// A schedule is text, one step per line ('#' starts a comment), so it can live in a file,
// be typed at the REPL, be printed back as a trace and be replayed (docs/tensor.md is the
// reference). Loops are named by their variable ("i", "k_1"); where two nests share a name
// (mm_relu's stages both have "i"), "C.i" names the loop "i" above block "C".
//
//   split LOOP FACTOR [as OUTER INNER]     i -> i_0 (ceil(E/F)) , i_1 (F); a predicate
//                                          guards the block when F does not divide E
//   tile LOOP1 LOOP2 F1 F2                 split both, then reorder to i_0 j_0 i_1 j_1
//   reorder LOOP LOOP ...                  the loops (one perfect nest) take this order
//   fuse LOOP1 LOOP2 [as NAME]             two adjacent nested loops -> one (i_j_fused)
//   fission LOOP                           the loops from LOOP down to a sequence of
//                                          statements, copied once per statement: one nest
//                                          each (loop distribution; fused kernels' epilogues)
//   blockize LOOP                          the tile under LOOP (a perfect nest around one
//                                          block) becomes one block over the tile: BLOCK_o,
//                                          whose variables say which tile (TVM's blockize)
//   tensorize LOOP|BLOCK_o INTRINSIC       the tile under LOOP (i < M, j < N around a block
//                                          doing C[i, j] += A[i] * B[j]) becomes the
//                                          intrinsic's implementation (cpu.fma_8x16: i
//                                          unrolled, j one vector of fused multiply-adds)
//   unroll LOOP | vectorize LOOP | parallel LOOP
//   bind LOOP group.x|group.y|group.z|local.x|local.y|local.z
//   compute_at BLOCK LOOP                  move a producer block under a consumer's loop
//   reverse_compute_at BLOCK LOOP          move a consumer block under a producer's loop
//   compute_inline BLOCK                   substitute an elementwise producer into its readers
//   cache_read BLOCK BUFFER local|shared   stage BUFFER into a copy read by BLOCK
//   cache_write BLOCK local|shared         BLOCK accumulates in a copy, written back after
//   set_scope BUFFER local|shared          an intermediate moved out of global memory, then
//                                          shrunk to the box one loop iteration touches
//   decompose_reduction BLOCK LOOP         hoist BLOCK's init into its own block before LOOP
//   rfactor BLOCK LOOP                     LOOP (a reduce loop) becomes a spatial axis of a
//                                          partial-sum block BLOCK_rf; BLOCK then reduces it
//                                          (so the partial sums can be vectorized/parallel)
//   online_softmax BLOCK                   the max BLOCK, the exponentials and the sums that
//                                          follow become one pass with a running maximum
//                                          (the online softmax; flash attention's step)
//   merge LOOP1 LOOP2                      two neighbouring loops of one length become one
//                                          (sibling loop fusion, Halide's compute_with)
//
// Every primitive checks its preconditions and on failure leaves the function unchanged and
// explains, naming the loop or block and the reason, e.g.
//   "cannot vectorize 'k': it carries the reduction of block 'Y' (reduce axis vk)".
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/tir.h"

namespace descent::tensor {

// ---- The primitives, on a PrimFunc in place (unchanged when they return false) --------
// names: optional custom names for the new loops (empty = defaults).
namespace sched {
bool split(tir::PrimFunc& f, const std::string& loop, int64_t factor,
           const std::vector<std::string>& names, std::string* error);
bool tile(tir::PrimFunc& f, const std::string& loop1, const std::string& loop2, int64_t f1,
          int64_t f2, std::string* error);
bool reorder(tir::PrimFunc& f, const std::vector<std::string>& loops, std::string* error);
bool fuse(tir::PrimFunc& f, const std::string& loop1, const std::string& loop2,
          const std::string& name, std::string* error);
bool fission(tir::PrimFunc& f, const std::string& loop, std::string* error);
// The tile under LOOP wrapped in a block BLOCK_o whose iteration variables choose the tile;
// the inner block's bindings become BLOCK_o's variable * tile extent + the position inside.
bool blockize(tir::PrimFunc& f, const std::string& loop, std::string* error);
// A tensor intrinsic: a description (what a tile computes) paired with an implementation
// (how the device does it), as TVM's TensorIntrin. tensorize/schedule/tensorize.cpp has them.
struct TensorIntrin {
  std::string name;            // "cpu.fma_8x16"
  std::string device;          // the device it was written for ("cpu", "opencl")
  int64_t m = 0, n = 0;        // the tile: i < m, j < n
  std::string description;     // in words, with the index pattern
  std::string implementation;  // in words
};
const std::vector<TensorIntrin>& tensor_intrinsics();
const TensorIntrin* find_intrinsic(const std::string& name);  // null when unknown
// The tile under LOOP (two loops around one block), or the tile a blockized block BLOCK_o
// holds, replaced by the intrinsic's implementation when it matches the description; else
// refused with the part that differs. A blockized block is folded back into its tile.
bool tensorize(tir::PrimFunc& f, const std::string& loop, const std::string& intrinsic,
               std::string* error);
bool unroll(tir::PrimFunc& f, const std::string& loop, std::string* error);
bool vectorize(tir::PrimFunc& f, const std::string& loop, std::string* error);
bool parallel(tir::PrimFunc& f, const std::string& loop, std::string* error);
bool bind(tir::PrimFunc& f, const std::string& loop, const std::string& tag, std::string* error);
bool compute_at(tir::PrimFunc& f, const std::string& block, const std::string& loop,
                std::string* error);
bool reverse_compute_at(tir::PrimFunc& f, const std::string& block, const std::string& loop,
                        std::string* error);
bool compute_inline(tir::PrimFunc& f, const std::string& block, std::string* error);
bool cache_read(tir::PrimFunc& f, const std::string& block, const std::string& buffer,
                tir::Scope scope, std::string* error);
bool cache_write(tir::PrimFunc& f, const std::string& block, tir::Scope scope,
                 std::string* error);
bool decompose_reduction(tir::PrimFunc& f, const std::string& block, const std::string& loop,
                         std::string* error);
// A Temp buffer (an intermediate) moved to local or shared memory, then compacted
// (compact_buffers): under one loop it shrinks to what one iteration touches (TVM's set_scope).
bool set_scope(tir::PrimFunc& f, const std::string& buffer, tir::Scope scope, std::string* error);
// The buffer re-laid out: new dimension d is old dimension perm[d] ("transform_layout W 1 0"
// stores W[j, r] as W_t[r, j]). An intermediate is re-indexed in place, for free; an input
// gets a re-laid-out copy, made by a nest at the start of the kernel (which
// hoist_layout_prologues can move out). The output's layout is the caller's: refused.
bool transform_layout(tir::PrimFunc& f, const std::string& buffer, const std::vector<int>& perm,
                      std::string* error);
bool rfactor(tir::PrimFunc& f, const std::string& block, const std::string& loop,
             std::string* error);
// Flash attention's steps (online.cpp). online_softmax: the max reduction BLOCK, the
// exponentials p = exp(x - BLOCK) in the loop after it and the sums over p in the loops after
// that become one loop with a running maximum, each sum rescaled by exp(old max - new max)
// as the maximum grows (BLOCK_init, BLOCK_scale). merge: two neighbouring loops of one length
// become one, when every buffer they share is touched at element j in iteration j.
bool online_softmax(tir::PrimFunc& f, const std::string& block, std::string* error);
bool merge(tir::PrimFunc& f, const std::string& loop1, const std::string& loop2,
           std::string* error);
// Shrinks every Local/Shared staging buffer whose accesses all lie under one loop to the box
// they touch in one iteration of the innermost such loop, allocated (tir::StmtKind::Allocate)
// at the start of that loop's body; accesses become relative to the box. compute_at and
// reverse_compute_at run it; returns how many buffers it compacted.
int compact_buffers(tir::PrimFunc& f);

// Finding loops by name: "i" (must be unique in the function) or "BLOCK.i" (the loop i
// that encloses block BLOCK). Null with *error listing what exists when not found or
// ambiguous ("loop 'i' is ambiguous: C.i, Y.i").
struct LoopRef {
  tir::Stmt* loop = nullptr;
  tir::Stmt* parent = nullptr;  // the statement holding it (For, Seq, Block, ...) or null at the root
};
LoopRef find_loop(tir::PrimFunc& f, const std::string& name, std::string* error);
// Every loop name as schedules can address it, in program order ("i", "C.i", ...).
std::vector<std::string> loop_names(const tir::PrimFunc& f);
std::vector<std::string> block_names(const tir::PrimFunc& f);
// The loops around block BLOCK, outermost first, each as a schedule step can name it: its
// variable where that is unique in the function, else "BLOCK.var" (TVM's get_loops). False
// with *error listing the blocks when there is no such block.
bool block_loops(const tir::PrimFunc& f, const std::string& block, std::vector<std::string>* out,
                 std::string* error);

// Replaces loop variable `name` by `with` in everything under `s`: block bindings and
// predicates, If conditions, loose Store indices/values (simplified afterwards). Public
// because the OpenCL backend uses it to unroll a loop (one body copy per value); the other
// helpers the primitives share are private to tensor/ (tensor/schedule/internal.h).
void substitute_loop_var(tir::Stmt* s, const std::string& name, const tir::Expr& with);
}  // namespace sched

// ---- What a step made -----------------------------------------------------------------
// As TVM's primitives return handles to the loops and blocks they create, a step says what
// it made: `split i 4` made i_0 and i_1, `rfactor C r_0` made block C_rf. Each name is the
// one a later step uses (loop_names/block_names), in program order.
struct StepResult {
  std::string canonical;            // the step as the trace keeps it ("split i 4")
  std::vector<std::string> loops;   // loops it made
  std::vector<std::string> blocks;  // blocks it made
};

// Where a schedule text stopped: its line (from 1), the step as written and why.
struct StepFailure {
  size_t line = 0;
  std::string step;
  std::string why;
};

// The steps of a schedule text, one per line with its line number (from 1); blank lines
// and '#' comments are skipped. The one reading of schedule text: Schedule::apply_text and
// the graph runtime both take their steps from it.
struct StepLine {
  size_t line;
  std::string step;
};
std::vector<StepLine> schedule_lines(std::string_view text);

// ---- Layout copies outside the kernel ------------------------------------------------
// A copy that re-lays out inputs (transform_layout's nest, or any leading nest that reads
// only inputs and writes one global temp) as a function of its own. f loses the nest and
// gains the copy as an extra input, after the caller's arguments, so whoever runs f computes
// the copy with `func` and passes it: once per weight tensor, not once per launch.
struct LayoutPrologue {
  std::string buffer;                         // the copy's name in f ("W_t")
  std::vector<int> inputs;                    // which of f's original arguments it reads
  std::shared_ptr<const tir::PrimFunc> func;  // those arguments -> the copy
};
// Moves f's leading input copies out, in order; empty (f unchanged) when it has none.
std::vector<LayoutPrologue> hoist_layout_prologues(tir::PrimFunc& f);

// Does f write every element of `buffer` (a global temp or the output) before any statement
// reads it? Then a backend may hand the kernel that buffer as it is (memory reused from the
// last launch) instead of zero-filling it first, as the interpreter's "allocated at entry"
// would. Conservative: true only when the first block to touch the buffer (in program order)
// stores to it at indices that are distinct spatial iteration variables spanning its whole
// shape, reading it at most at those same indices and only after its init did the same.
bool defined_before_read(const tir::PrimFunc& f, int buffer);

// ---- A schedule with history --------------------------------------------------------
class Schedule {
 public:
  explicit Schedule(tir::PrimFunc original);

  const tir::PrimFunc& func() const { return states_[current_]; }
  const tir::PrimFunc& original() const { return states_[0]; }

  // One step ("split i 32"). On error the schedule is unchanged and *error explains;
  // *made (may be null) says what the step made.
  bool apply(std::string_view step, std::string* error, StepResult* made = nullptr);
  // Several lines; stops at the first failing line ("line 3: cannot ...") and keeps the
  // steps before it. *failure (may be null) gets the line, the step and the reason apart.
  bool apply_text(std::string_view text, std::string* error, StepFailure* failure = nullptr);
  bool undo();  // false when there is nothing to undo
  bool redo();  // false when there is nothing to redo
  // The steps in effect, in canonical form, one per line: applying trace() to original()
  // gives func() again.
  std::string trace() const;
  const std::vector<std::string>& steps() const { return steps_; }  // first current_ of them
  size_t num_applied() const { return current_; }
  bool can_redo() const { return current_ + 1 < states_.size(); }

 private:
  std::vector<tir::PrimFunc> states_;  // states_[0] = original; states_[k] after k steps
  std::vector<std::string> steps_;     // steps_[k] produced states_[k + 1]
  size_t current_ = 0;
};

// The primitives' names as steps start ("split", "tile", ...), for completion and help.
std::vector<std::string> schedule_primitives();

// Parses and applies one step to f (what Schedule::apply does, without history). On
// success *canonical is the normalised step text. apply_step_result also says what the
// step made (a little dearer: it compares the loops and blocks before and after).
bool apply_step(tir::PrimFunc& f, std::string_view step, std::string* canonical,
                std::string* error);
bool apply_step_result(tir::PrimFunc& f, std::string_view step, StepResult* made,
                       std::string* error);

}  // namespace descent::tensor
