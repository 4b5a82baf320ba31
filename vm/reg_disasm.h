// Printing register bytecode: the disassembler (used by the `reg` and `reg-alloc` stage
// views, the fused code's view, the trace and golden tests) and the `live` view of the
// allocator's intervals.
//
//   fn fib(n: int) -> int  [virtual: 6 registers]
//      0000    12  jgek_int    v0, k0, ->2       ; 2
//      0001     |  return      v0
//   >> 0002    13  subk_int    v1, v0, k1        ; 1
//
// Columns: `>>` where some jump or branch lands (as Python's dis marks jump targets),
// instruction index, source line ('|' when the same as the line above), opcode
// name as in reg_code.h, operands (v = virtual register, r = register, s = spill slot,
// k = constant, g = global, ->N = jump target), then a comment with constants' values and
// globals' names.
#pragma once
#include <string>
#include <vector>

#include "lang/module.h"
#include "vm/reg_alloc.h"
#include "vm/reg_code.h"

namespace descent {

// One instruction without its index and line ("add_int     r1, r0, k2   ; 10"): the part
// the trace prints too. The Module supplies global and function names (may be null).
std::string disassemble_instr(const RegFunction& f, int pc, const Module* module);

// A frame location as the disassembler names it: v3 (virtual), r3 or s0 (allocated).
std::string location_name(const RegFunction& f, int loc);

// One row of a listing: a header, blank or error row (pc -1, no loc) or instruction pc of
// `function`. The text views are these rows, each followed by a newline, so a front end
// that points at rows and the text can never disagree.
struct RegDisasmLine {
  std::string function;
  int pc = -1;
  std::string text;
  SourceLoc loc;
};
// The rows' texts, each followed by '\n'.
std::string join_rows(const std::vector<RegDisasmLine>& rows);

// The header line and every instruction of f.
std::string disassemble(const RegFunction& f, const Module* module);
void disassemble_rows(const RegFunction& f, const Module* module,
                      std::vector<RegDisasmLine>& rows);

// One compiled body in its three forms, and the allocator's intervals (over virt's code).
struct RegUnit {
  RegFunction virt;
  RegFunction alloc;  // after allocate_registers
  RegFunction fused;  // after fuse_reg_superinstructions too: what the VM runs
  std::vector<LiveInterval> intervals;
  int fusions = 0;    // pairs fuse_reg_superinstructions fused
  std::string error;  // set (and the rest empty) when the body could not be compiled
};

// The top-level code of `program`, then every function it declares, in source order.
std::vector<RegUnit> compile_reg_units(const Program& program, const Module& module,
                                       int num_registers = kDefaultRegisters, bool echo = false);
// The script of a scope (if any), then its functions.
std::vector<RegUnit> compile_reg_units(const CodeScope& scope, const Module& module,
                                       int num_registers = kDefaultRegisters);

// One line for the allocate_registers pass: "9 intervals in 2 bodies, 3 spilled (3 registers)".
std::string summarize_allocation(const std::vector<RegUnit>& units);

// One line for the fuse_reg_superinstructions pass: "fused 3 instruction pairs in 2 bodies".
std::string summarize_fusion(const std::vector<RegUnit>& units);

// Which form of the code a view shows: the stages `reg` and `reg-alloc`, and the code after
// fuse_reg_superinstructions, which is what the VM runs (for a `reg-fused` stage).
enum class RegForm { Virtual, Allocated, Fused };
std::string dump_reg(const Program& program, const Module& module, RegForm form,
                     int num_registers = kDefaultRegisters, bool echo = false);
std::vector<RegDisasmLine> dump_reg_rows(const Program& program, const Module& module,
                                         RegForm form, int num_registers = kDefaultRegisters,
                                         bool echo = false);
std::vector<RegDisasmLine> dump_reg_rows(const CodeScope& scope, const Module& module,
                                         RegForm form, int num_registers = kDefaultRegisters);
std::string dump_reg(const CodeScope& scope, const Module& module, RegForm form,
                     int num_registers = kDefaultRegisters);
// The same with allocated = false: `reg`, true: `reg-alloc`.
std::string dump_reg(const Program& program, const Module& module, bool allocated,
                     int num_registers = kDefaultRegisters, bool echo = false);

// The `live` view: each body's virtual code, then its live intervals and assignments.
std::string dump_live(const Program& program, const Module& module,
                      int num_registers = kDefaultRegisters, bool echo = false);
std::string dump_live(const CodeScope& scope, const Module& module,
                      int num_registers = kDefaultRegisters);

}  // namespace descent
