// The LLVM tier's views for the Session, as plain strings: the one place that chains
// codegen -> optimize -> target for a view, so front ends (and pipeline.cpp) need no LLVM
// headers. Each returns "" (or false) and sets *error when it cannot produce the view.
#pragma once
#include <string>

#include "lang/module.h"

namespace descent::llvmbe {

// Which machine-code view: the assembly with each instruction's encoded bytes, or the
// machine IR after instruction selection or after register allocation.
enum class MachineView { Asm, MirAfterIsel, MirAfterRegalloc };

// The last input lowered for `target` (a triple or an alias; "" = this machine), optimised
// at opt_level, shown as `view`.
std::string machine_code(const Program& program, const Module& module, const std::string& target,
                         int opt_level, MachineView view, std::string* error);

// The same for a scope (the REPL's view of what ran, or one function).
std::string machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                         int opt_level, MachineView view, std::string* error);

// `descent build`: a standalone object (with main() and its runtime) that links with
// `cc prog.o -lm` and behaves like `descent run`.
bool build_object(const Program& program, const Module& module, const std::string& target,
                  int opt_level, const std::string& path, std::string* error);

}  // namespace descent::llvmbe
