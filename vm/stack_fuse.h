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
#include "vm/stack_chunk.h"

namespace descent::stack {

// Rewrites the chunk in place; returns how many superinstructions it made.
int fuse_superinstructions(Chunk& chunk);

// Every chunk of a compiled program; returns the total.
int fuse_superinstructions(StackProgram& program);

}  // namespace descent::stack
