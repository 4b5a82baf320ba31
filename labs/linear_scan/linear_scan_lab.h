// Lab linear_scan: the function you write (in linear_scan.cpp), and what the checker does
// with it.
//
// The checker compiles each function of a program to the register VM's virtual code
// (vm/reg_compiler.h), computes its live intervals with the project's liveness analysis
// (compute_live_intervals in vm/reg_alloc.h), and hands them to your linear_scan. Then
// allocate_registers (vm/reg_alloc.h) gives each spilled interval a frame slot, rewrites the
// code with your registers and RELOAD/SPILL around the spilled values, and the REAL register
// VM (vm/reg_vm.h) runs it: the program must print what the AST walker prints.
#pragma once
#include <vector>

#include "vm/reg_alloc.h"

// `intervals` is one function's live intervals, sorted by start (then by vreg). Each has
// start and end (inclusive positions: instruction pc reads its operands at 2*pc and writes
// its result at 2*pc+1), and reg == -1. Give every interval a register in
// [0, num_registers), or leave reg at -1 to spill it. Two intervals that overlap
// (descent::overlaps(a, b)) must never get the same register. Spill as little as you can:
// when all registers are taken, spill whichever interval ends furthest (Poletto & Sarkar).
// allocate_registers calls this with the whole register file and, if anything spilled,
// again with two registers fewer (it keeps two as scratch registers for the reloads).
void linear_scan(std::vector<descent::LiveInterval>& intervals, int num_registers);
