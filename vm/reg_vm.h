// The register VM: runs register bytecode (reg_code.h) produced by compile_reg_* and
// allocate_registers. Engine name "reg".
//
// One dispatch loop (reg_vm.cpp, RegVM::execute) in the style of Lua's lvm.c: vmcase /
// vmbreak macros over computed goto (GCC/Clang) or a switch (DESCENT_REG_SWITCH=1 or other
// compilers). Frames live in one preallocated value stack, each a window of
// frame_size() values right after its caller's; calls copy arguments into the callee's
// parameter locations, so no value moves on return except the result.
//
// Compiled functions are cached per Module function index and version (a REPL redefinition
// recompiles); each input's top-level code is compiled on every run.
#pragma once
#include <memory>

#include "lang/engine.h"
#include "vm/reg_alloc.h"

namespace descent {

// num_registers: the register file every function is allocated for (clamped to
// [kMinRegisters, kMaxRegisters]). 0 runs the VIRTUAL code unallocated (one frame slot per
// virtual register): the same VM, useful to check the allocator against. `assign` replaces
// the allocator's register assignment (reg_alloc.h; null: its own linear scan).
std::unique_ptr<Engine> make_reg_vm(int num_registers = kDefaultRegisters,
                                    RegisterAssigner assign = {});

}  // namespace descent
