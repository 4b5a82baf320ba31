// compile_stack: the checked AST -> stack bytecode (vm/stack_chunk.h).
//
// One pass over the tree, emitting as it goes (clox's compiler, minus the parsing): an
// expression leaves its value on the operand stack, a statement leaves the stack as it found
// it. Sema has already decided every type, slot and callee, so the compiler only picks
// opcodes: typed arithmetic, LOAD_GLOBAL_CHECKED where sema set check_defined, conditions
// and && / || as jumps, FOR_PREP/FOR_LOOP for ranges, PRECALL where the walker's order of
// checks needs it. The code is the plain translation, one instruction per operation (the
// `stack` stage); fuse_superinstructions (vm/stack_fuse.h) then makes the code the VM runs.
//
// The input must have passed check(); the compiler does not report errors.
#pragma once
#include "lang/module.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

// The top-level code of one program (its FnDecl statements are skipped). With echo, each
// top-level expression statement whose type is not Void ends in ECHO instead of POP.
Chunk compile_script(const Program& program, const Module& module, bool echo);

// One function's body.
Chunk compile_function(const FnDecl& fn, const Module& module);

// The script and every function the program declares (for dumps; the engine compiles
// functions one at a time, from the Module, and caches them).
StackProgram compile_stack(const Program& program, const Module& module, bool echo);

}  // namespace descent::stack
