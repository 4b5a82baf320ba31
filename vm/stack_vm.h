// The stack VM: runs the bytecode of vm/stack_chunk.h.
//
// Each run compiles the program's top-level code (compile_script) and any function of the
// Module that is new or was redefined since the last run (cached by function index and
// version), fuses superinstructions into both (vm/stack_fuse.h), then executes the script in
// one dispatch loop (computed goto, or a switch when built with DESCENT_STACK_SWITCH) over a
// value stack preallocated for deep recursion. With options.trace set, a separate
// instantiation of the same loop reports every instruction (vm/stack_trace.h); the untraced
// loop has no trace code at all.
#pragma once
#include <functional>
#include <memory>

#include "lang/engine.h"
#include "vm/stack_chunk.h"
#include "vm/stack_compiler.h"

namespace descent {

// Engine::name() is "stack". superinstructions: run the fuse_superinstructions pass on the
// compiled code (the default; off runs the compiler's plain code, e.g. to compare traces).
// hooks: handed to the compiler for every chunk (stack_compiler.h; the lab stack_if_while
// compiles if and while through them); none by default.
std::unique_ptr<Engine> make_stack_vm(bool superinstructions = true,
                                      stack::CompileHooks hooks = {});

// The same VM with `pass` run on every compiled chunk instead of fuse_superinstructions (the
// peephole lab runs a student's rule this way, through stack::apply_peephole_rule).
std::unique_ptr<Engine> make_stack_vm_with_pass(std::function<void(stack::Chunk&)> pass);

}  // namespace descent
