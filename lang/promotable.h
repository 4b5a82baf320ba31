// Which top-level variables of one input an engine may keep in registers (issue 34:
// top-level loops as fast as functions): the register VM (vm/reg_compiler.cpp) and the JIT
// (llvm_backend/codegen_functions.cpp) use the same answer. docs/register_vm.md, "Top-level
// variables in registers", shows the code this gives.
//
// Top-level variables are globals (G[x]): every read is a GETGLOBAL and every write a
// SETGLOBAL (in the JIT, a load and a store of a global that a runtime call may change), so a
// loop written at top level, as students write them, ran 1.1-2.5x slower than the same loop
// in a function. Within one input, a global that no function mentions can live in a register
// like a local and go back to its global when that becomes observable: at the end of the
// input and when the run fails (an error, Ctrl-C); functions never see it, so calls need not.
// Kept to:
//   - int, float and bool (a tensor global is a root of the collector: it stays put);
//   - used inside a top-level loop (elsewhere a register buys nothing);
//   - no read needs the run-time "assigned yet?" check (check_defined): every read is of a
//     value this input or an earlier one certainly assigned.
// The register is loaded from the global at entry, so until the input writes it, it holds
// what the global holds. What a register cannot hold is the global's "assigned" mark, which
// a later input's checked read consults: the register VM stores to the global at the first
// assignment on each path (docs/register_vm.md); the JIT keeps storing the mark itself.
#pragma once
#include <vector>

#include "lang/module.h"

namespace descent {

// The globals of p's top-level code that can live in registers, by global index.
std::vector<int> promotable_globals(const Program& p, const Module& m);

}  // namespace descent
