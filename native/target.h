// What the native backend needs to know about a machine, in one place (issue 38): the
// register file and calling convention the allocator uses, the pattern table and reduction
// the selector uses, and the few rewrites legalisation makes for it. The DAG builder, the
// combine, the tree-covering dynamic programme, the list scheduler and linear scan are shared;
// a target is this description (LLVM's per-target TableGen files, lcc's machine descriptions,
// Cranelift's ISLE rules per ISA play the same part).
//
//   x86-64   x86.h (instructions, encoder), isel.cpp (patterns), frame.cpp/emit.cpp (code)
//   aarch64  a64.h (instructions, encoder), a64_isel.cpp (patterns), a64_frame.cpp/a64_emit.cpp
//            (code), a64_runtime.cpp/a64_engine.cpp (run under qemu-aarch64)
//
// docs/native.md ("Two targets") shows the two side by side.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace descent::native {

struct Pattern;

enum class Arch : uint8_t { X86_64, AArch64 };

// The registers linear scan hands out and the convention around calls. Register numbers
// are the machine's own (rax = 0 ... r15 = 15; x0 ... x30); floats have their own file.
struct RegisterFile {
  std::vector<int> caller_saved;  // GPRs a call may overwrite, tried first (no save needed)
  std::vector<int> callee_saved;  // GPRs a call keeps: for values live across calls (saved by
                                  // the prologue when used)
  std::vector<int> fprs;          // float registers the allocator may use
  std::vector<int> fprs_callee_saved;  // those of fprs a call keeps (none on x86-64)
  std::vector<int> int_args;      // integer arguments, in order (hints for the allocator)
  int float_args = 0;             // float arguments go in fpr 0, 1, ... this many
  std::vector<int> reserved;      // never allocated, with why (reserved_why, same order)
  std::vector<std::string> reserved_why;
};

struct Target {
  Arch arch;
  const char* name;       // "x86-64", "aarch64"
  const char* abi;        // "System V AMD64", "AAPCS64"
  RegisterFile regs;
  bool two_address;       // x86's `add r, r` overwrites its first operand
  bool can_emit;          // has an emitter (the asm stage and running): both do
  const char* (*gpr)(int r);   // a GPR's name
  std::string (*fpr)(int r);   // a float register's name
};

const Target& x86_64_target();
const Target& aarch64_target();
// By name ("x86-64" or "x86_64", "aarch64" or "arm64"); nullptr when unknown.
const Target* find_target(std::string_view name);
std::string target_names();  // "x86-64, aarch64"

// The selector's pattern table of a target (isel.cpp, a64_isel.cpp).
const std::vector<Pattern>& patterns(const Target& t);

}  // namespace descent::native
