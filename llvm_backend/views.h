// The LLVM tier's views for the Session, as plain strings: the one place that chains
// codegen -> optimize -> target for a view, so front ends (and pipeline.cpp) need no LLVM
// headers. Each returns "" (or false) and sets *error when it cannot produce the view.
#pragma once
#include <string>

#include "lang/module.h"
#include "llvm_backend/listing.h"

namespace descent::llvmbe {

// Which machine-code view: the assembly with each instruction's encoded bytes, or the
// machine IR after instruction selection or after register allocation.
enum class MachineView { Asm, MirAfterIsel, MirAfterRegalloc };

// What the assembly keeps (the MIR views ignore it): each instruction's encoded bytes
// (`llc -show-mc-encoding`), and the assembler directives (listing.h's asm_listing).
struct AsmOptions {
  bool encodings = true;
  bool directives = false;
};

// The last input lowered for `target` (a triple or an alias; "" = this machine), optimised
// at opt_level, shown as `view`. The assembly's lines carry source lines (its IR is
// generated with line tables); the MIR's do not (all 0: MIR would print a debug-location
// on every instruction).
Listing machine_code(const Program& program, const Module& module, const std::string& target,
                     int opt_level, MachineView view, const AsmOptions& options,
                     std::string* error);

// The same for a scope (the REPL's view of what ran, or one function).
Listing machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                     int opt_level, MachineView view, const AsmOptions& options,
                     std::string* error);

// The IR views of a scope ("llvm": as generated, "llvm-opt": after the -O pipeline), the
// text of passes.h's dump_llvm, with each instruction's source line.
Listing ir_code(const CodeScope& scope, const Module& module, int opt_level, bool optimized,
                std::string* error);

// `descent build`: a standalone object (with main() and its runtime) that links with
// `cc prog.o -lm` and behaves like `descent run`.
bool build_object(const Program& program, const Module& module, const std::string& target,
                  int opt_level, const std::string& path, std::string* error);

}  // namespace descent::llvmbe
