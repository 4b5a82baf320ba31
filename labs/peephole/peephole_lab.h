// Lab peephole: the function you write (in peephole.cpp), and what the checker does with it.
//
// The checker compiles each program for the stack VM (vm/stack_compiler.h), then runs a
// peephole pass over every chunk (stack::apply_peephole_rule, vm/stack_fuse.h): it decodes
// the bytecode into a vector of Instruction (a jump's target as an instruction index, and
// is_target set on every instruction some jump lands on), calls your fuse_at at each
// position from left to right (after a fusion, at the first instruction after the ones it
// replaced), then re-links the jumps and encodes the result. The REAL stack VM runs it: the
// program must print what the AST walker prints, in fewer instructions.
#pragma once
#include <cstddef>
#include <vector>

#include "vm/stack_fuse.h"

// If one of these patterns starts at code[i], set *fused to the single instruction that
// replaces its n instructions code[i .. i+n) and return n; otherwise return 0 (nothing
// changes). Try the longer patterns first: they include the shorter ones.
//
//   1. LOAD_LOCAL l; CONST k; ADD_INT; STORE_LOCAL l  ->  INC_LOCAL_INT l, k   (x = x + k;
//      the two locals must be the same slot)
//   2. LOAD_LOCAL l; CONST k; ADD_INT  ->  ADD_LOCAL_CONST_INT l, k   (SUB_INT: SUB_LOCAL_CONST_INT)
//   3. CONST k; ADD_INT  ->  ADD_CONST_INT k   (SUB_INT: SUB_CONST_INT, MUL_INT: MUL_CONST_INT)
//   4. LOAD_LOCAL l; CONST k; LT_INT; JUMP_IF_FALSE j  ->  JUMP_IF_GE_LOCAL_CONST_INT l, k, j
//      (any of EQ NE LT LE GT GE _INT: the fused jump is taken when the compare is FALSE, so
//      it tests the opposite: EQ <-> NE, LT <-> GE, LE <-> GT)
//   5. LT_INT; JUMP_IF_FALSE j  ->  JUMP_IF_GE_INT j   (the same six compares, negated)
//
// Operands are in arg[0], arg[1], arg[2], in the order the opcode's format lists them
// (vm/stack_chunk.h: LK is l, k). A jump's destination is `target` (an index into code):
// a fused jump lands where the JUMP_IF_FALSE it replaces lands. *fused starts as an empty
// Instruction with code[i]'s source location.
//
// A jump may land on the FIRST instruction of a pattern (it then lands on the fused one),
// but never on a later one: if code[i+1 .. i+n) has an instruction with is_target set, that
// pattern does not apply (the jump would land in the middle of your fused instruction).
size_t fuse_at(const std::vector<descent::stack::Instruction>& code, size_t i,
               descent::stack::Instruction* fused);
