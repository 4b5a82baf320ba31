// fuse_reg_superinstructions: the register VM's peephole pass, run on allocated code (and on
// the virtual code when the VM runs it unallocated), after allocate_registers.
//
// The compiler and the allocator emit plain three-address code; this pass rewrites short
// sequences that recursive code executes all the time into one instruction each, so they
// cost one dispatch instead of two (Lua's OP_ADDI and clox's fused calls in spirit):
//
//   subk_int rT, rS, k;  call1 rD, F(rT)   ->  call1_subi rD, F(rS - K)   (also addk_int)
//   jgek_int rA, k, ->+2; return rR        ->  retltk_int rA, k, rR        (the 6 int jXXk)
//   add_int  rT, rB, rC; return rT         ->  return_add_int rB, rC
//   addk_int rT, rB, k;  return rT         ->  return_addk_int rB, k
//
// In fib that is 4 instructions instead of 8, and 4 dispatches per call instead of 7 (1
// instead of 2 for the calls that return n). A pair is fused only when no jump lands on its
// second instruction, and a call's argument temporary rT only when it is not read afterwards
// (a liveness query over the code being fused, loops included; or rT is the call's own
// result register). The call forms keep the argument register and the constant in the
// 16-bit C field (register in the low byte, the constant's magnitude in the high byte), so
// they apply when the register is below 256 and the constant is an int in -255..255: any
// register file works, a larger one simply fuses less. Nothing fused can fail except the
// call itself, so every error (a call's `stack overflow` or `interrupted`) keeps its
// location, and a fused call checks the interrupt and the depth exactly where CALL1 does,
// before its argument is computed. Float compares are not fused into returns: negating one
// is not exact (nan).
#pragma once
#include "vm/reg_code.h"

namespace descent {

// Rewrites f in place (jump targets and the location table follow); returns how many
// pairs it fused.
int fuse_reg_superinstructions(RegFunction& f);

}  // namespace descent
