// fuse_superinstructions: the stack VM's peephole pass.
//
// The compiler (stack_compiler.h) translates the tree directly, one plain instruction per
// operation: `x + 10` is LOAD x, CONST 10, ADD_INT. Most of a bytecode VM's time goes into
// dispatching instructions, so this pass rewrites common short sequences into one
// instruction (a superinstruction) that does the same work:
//
//   CONST k; ADD_INT                        ->  ADD_CONST_INT k          (also - * / % and floats)
//   CONST k; LOAD x; MUL_INT                ->  LOAD x; MUL_CONST_INT k  (+ and * commute)
//   LOAD_LOCAL l; ADD_CONST_INT k           ->  ADD_LOCAL_CONST_INT l, k (also SUB)
//   ADD_LOCAL_CONST_INT l, k; STORE_LOCAL l ->  INC_LOCAL_INT l, k       (x += k, x -= k)
//   LOAD_LOCAL l; LOAD v; ADD_INT; STORE_LOCAL l -> LOAD v; ADD_TO_LOCAL_INT l   (x += v)
//   LT_INT; JUMP_IF_FALSE j                 ->  JUMP_IF_GE_INT j         (fused compare-jump)
//   LOAD_LOCAL l; CONST k; JUMP_IF_GE_INT j ->  JUMP_IF_GE_LOCAL_CONST_INT l, k, j
//
// Each rule is a named rewrite applied over the whole chunk in this order. A sequence is only
// fused when no jump lands inside it, and no rule ever fuses an instruction that can fail
// (int division by a constant is fused only when the constant is not 0), so errors keep
// their instruction and location. Jump offsets and the line table are rebuilt afterwards.
#pragma once
#include <functional>
#include <vector>

#include "vm/stack_chunk.h"

namespace descent::stack {

// An instruction taken out of the byte string, with its jump target as an instruction index
// so that rewrites can move code around freely; the pass turns it back into offsets.
struct Instruction {
  Op op = Op::HALT;
  uint32_t arg[3] = {0, 0, 0};  // the operands; a jump's offset operand is unused here
  SourceLoc loc;
  size_t target = 0;       // jumps: the index of the instruction it lands on
  bool is_target = false;  // some jump lands here: nothing may be fused across it
};

// What a rule that matched at code[i] puts in its place.
struct Rewrite {
  std::vector<Instruction> out;
  size_t used = 0;  // how many instructions of the input it replaces
};

// A peephole rule: looks at code[i...] and, when it matches, fills the rewrite and returns
// true. A rule must itself refuse a window with a jump target after its first instruction
// (code[k].is_target). A jump in `out` keeps `target` as an index into `code`.
using PeepholeRule =
    std::function<bool(Chunk& chunk, const std::vector<Instruction>& code, size_t i, Rewrite& r)>;

// Rewrites the chunk in place; returns how many superinstructions it made.
int fuse_superinstructions(Chunk& chunk);

// Every chunk of a compiled program; returns the total.
int fuse_superinstructions(StackProgram& program);

// One rule instead of the pass's own (labs/peephole plugs a student's rule in here): decodes
// the chunk, offers the rule each position left to right (after a match, the position after
// the instructions it replaced), re-links the jumps and encodes. Returns how many rewrites.
int apply_peephole_rule(Chunk& chunk, const PeepholeRule& rule);

}  // namespace descent::stack
