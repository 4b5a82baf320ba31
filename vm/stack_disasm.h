// The stack bytecode's printer, in the style of clox's debug.c and Python's dis: one line per
// instruction with `>>` if some jump lands on it (as dis marks jump targets), its offset,
// its source line (only where it changes; `|` below the first instruction of a line), the
// opcode, and its operands resolved to what they name, then the raw operand encoding as a
// comment:
//
//      0010    2 LOAD_GLOBAL                x                ; g0
//      0015    | CONST                      10               ; k1
//      0020    | ADD_INT
//      0031    | JUMP_IF_GE_LOCAL_CONST_INT n, 2, -> 0047    ; l0 k0 +11
//      ...
//   >> 0047    4 HALT
//
// The same per-instruction printer is used by dumps, the REPL and the VM's trace; the trace
// prints instructions as they run, so it has no `>>` column.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "lang/module.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

// One row of a listing: a header or blank row (pc -1, no loc) or an instruction at byte
// offset pc of `function`. The text views are these rows, each followed by a newline, so a
// front end that points at rows and the text can never disagree.
struct DisasmLine {
  std::string function;
  int pc = -1;
  std::string text;
  SourceLoc loc;
};

// The jump-target column of a listing row (both VMs' listings): `>> ` on an instruction a
// jump, branch or loop lands on, spaces elsewhere, so the offsets stay in one column.
inline constexpr const char* kTargetMark = ">> ";
inline constexpr const char* kNoMark = "   ";

// One instruction without the jump-target column (no trailing newline); *next (if not null) gets the next one's offset.
std::string disassemble_instruction(const Chunk& chunk, size_t offset, const Module& module,
                                    size_t* next = nullptr);

// A header line ("== fib ==  locals n  stack 3") and every instruction, each ending in '\n'.
std::string disassemble(const Chunk& chunk, const Module& module);
void disassemble_rows(const Chunk& chunk, const Module& module, std::vector<DisasmLine>& rows);

// A whole compiled program: the script, then each function, separated by blank lines.
std::string disassemble(const StackProgram& program, const Module& module);
std::vector<DisasmLine> disassemble_rows(const StackProgram& program, const Module& module);

// The rows' texts, each followed by '\n'.
std::string join_rows(const std::vector<DisasmLine>& rows);

// The `stack` stage of a checked program: its top-level code and every function it declares,
// as the compiler emits them, or (fused) after the fuse_superinstructions pass, which is
// the code the VM runs. echo: compile top-level expression statements for the REPL (ECHO).
std::string dump_stack(const Program& program, const Module& module, bool echo = false,
                       bool fused = false);
std::vector<DisasmLine> dump_stack_rows(const Program& program, const Module& module,
                                        bool echo = false, bool fused = false);
// The same for any scope: its script (if any), then its functions, separated by blank lines.
std::string dump_stack(const CodeScope& scope, const Module& module, bool fused = false);
std::vector<DisasmLine> dump_stack_rows(const CodeScope& scope, const Module& module,
                                        bool fused = false);

// How constant k of the chunk prints ("15", "2.5", "true").
std::string constant_text(const Chunk& chunk, uint32_t k);

}  // namespace descent::stack
