// The `allocate_registers` pass: virtual registers -> a register file of fixed size.
//
// 1. compute_live_intervals: a liveness dataflow over the basic blocks of the virtual code
//    (live-in/live-out sets iterated to a fixed point, so a value used around a loop's
//    back-edge stays live through the whole loop), then one interval per virtual register:
//    the hull of every position where it is live.
// 2. Linear scan (Poletto & Sarkar 1999): walk the intervals by start; expire the ones that
//    ended; give the new one a free register, or, when none is left, spill whichever of it
//    and the active intervals ends last. A spilled value lives in a frame slot for its whole
//    interval: every use is preceded by RELOAD into a scratch register and every definition
//    followed by SPILL.
// 3. Two registers are reserved as scratch for those reloads only when something spills, so
//    any file of 3 or more registers works (one allocatable register, two scratch).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vm/reg_code.h"

namespace descent {

constexpr int kDefaultRegisters = 16;  // the default register file
constexpr int kMinRegisters = 3;       // 1 allocatable + 2 scratch
constexpr int kMaxRegisters = 4096;

// Positions count two per instruction: instruction pc reads its operands at 2*pc and
// writes its result at 2*pc+1. So a value last read by pc and one first written by pc do
// not overlap (they may share a register), while a value live across pc does.
struct LiveInterval {
  int vreg = 0;
  int start = 0, end = 0;  // first and last position where the value is live (inclusive)
  Type type = Type::Unknown;
  int reg = -1;   // allocated register, or -1 when spilled
  int slot = -1;  // spill slot index when spilled (frame offset num_regs + slot)
  int first_pc() const { return start / 2; }
  int last_pc() const { return end / 2; }
  bool spilled() const { return reg < 0; }
};

// Whether two intervals are live at some common position.
inline bool overlaps(const LiveInterval& a, const LiveInterval& b) {
  return a.start <= b.end && b.start <= a.end;
}

// Live intervals of a function's virtual code, sorted by start (then vreg); registers that
// are never live (an unused parameter) have none. reg/slot are left unassigned.
std::vector<LiveInterval> compute_live_intervals(const RegFunction& virt);

// Step 2 on its own, replaceable (labs/linear_scan plugs a student's linear scan in here):
// given intervals sorted by start (then vreg), set each one's reg to a register in
// [0, num_registers), or to -1 to spill it. Slots are assigned afterwards. An assigner must
// never give two overlapping intervals one register (the code would be wrong, silently); a
// register outside [0, num_registers) is taken as a spill, so the code stays well-formed.
using RegisterAssigner =
    std::function<void(std::vector<LiveInterval>& intervals, int num_registers)>;

// The project's own assigner: Poletto & Sarkar's linear scan, spilling whichever interval
// ends last.
void linear_scan_assign(std::vector<LiveInterval>& intervals, int num_registers);

// Rewrites f (virtual code) in place into allocated code for a file of num_registers
// (clamped to [kMinRegisters, kMaxRegisters]) and returns the intervals with their
// assignments (positions refer to the virtual code). `assign` (null: linear_scan_assign)
// is called with the whole file, then, when something spilled, again with two registers
// fewer (the scratch registers of step 3).
std::vector<LiveInterval> allocate_registers(RegFunction& f, int num_registers = kDefaultRegisters,
                                             const RegisterAssigner& assign = {});

// Liveness of any form of the code (virtual registers, or an allocated frame's locations),
// for passes that run after allocation (fuse_reg_superinstructions).
class Liveness {
 public:
  explicit Liveness(const RegFunction& f);  // f must outlive this
  ~Liveness();
  // Whether the value in loc after instruction pc executes may still be read.
  bool live_after(int pc, int loc) const;

 private:
  struct Blocks;
  const RegFunction& f_;
  std::unique_ptr<Blocks> b_;
};

// A table with one bar per interval across the instructions of the virtual code:
//   v0  n  int  [0..7]  r0  |========|     ('=' in a register, '~' in a spill slot)
std::string print_live_intervals(const RegFunction& virt, const std::vector<LiveInterval>& iv);

}  // namespace descent
