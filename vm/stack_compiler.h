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
#include <functional>
#include <vector>

#include "lang/module.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

// ---- An extension point: if and while compiled by someone else ----
// The guided lab stack_if_while (labs/stack_if_while) has the student write the code of
// `if` and `while`; CompileHooks::control_flow is how that code gets into the real compiler.
// When it is set, the compiler hands it every If and While statement, with an Emitter that
// writes into the chunk being compiled; everything else (conditions' values, blocks,
// break/continue, the stack-depth bookkeeping) stays the compiler's. Unset (the default),
// the compiler uses its own code; the only cost is one test per If/While at compile time.

// The jumps that `break` and `continue` statements of one loop emitted, still unpatched.
struct LoopJumps {
  std::vector<size_t> breaks, continues;
};

class Emitter {
 public:
  virtual ~Emitter() = default;
  // The offset the next instruction will have.
  virtual size_t here() const = 0;
  // Code that pushes the value of e (one value: a condition pushes a bool).
  virtual void expr(const Expr& e) = 0;
  // Code for a block's statements; its break and continue statements jump to a placeholder
  // recorded for the innermost loop begun with begin_loop.
  virtual void block(const Block& b) = 0;
  // A forward jump whose offset is a placeholder: op is one of the J-format jumps (JUMP,
  // JUMP_IF_FALSE, ...; anything else is not emitted and returns SIZE_MAX). Returns the
  // jump's offset, for patch_jump.
  virtual size_t emit_jump(Op op, SourceLoc loc) = 0;
  // Makes the jump emitted at `at` land at here() (its offset counts from the jump's end).
  virtual void patch_jump(size_t at) = 0;
  // LOOP back to `target` (an earlier here()): the back-edge that checks for interrupts.
  virtual void emit_loop(size_t target, SourceLoc loc) = 0;
  // A loop's body is about to be compiled: break/continue from now on belong to it.
  virtual void begin_loop() = 0;
  // The body is done: returns its break and continue jumps, which the caller patches.
  virtual LoopJumps end_loop() = 0;
};

struct CompileHooks {
  // Called for each If and While statement (s.kind says which); it must emit the whole
  // statement through e, leaving the operand stack as it found it.
  std::function<void(const Stmt& s, Emitter& e)> control_flow;
};

// The top-level code of one program (its FnDecl statements are skipped). With echo, each
// top-level expression statement whose type is not Void ends in ECHO instead of POP.
Chunk compile_script(const Program& program, const Module& module, bool echo,
                     const CompileHooks* hooks = nullptr);

// One function's body.
Chunk compile_function(const FnDecl& fn, const Module& module, const CompileHooks* hooks = nullptr);

// The script and every function the program declares (for dumps; the engine compiles
// functions one at a time, from the Module, and caches them).
StackProgram compile_stack(const Program& program, const Module& module, bool echo,
                           const CompileHooks* hooks = nullptr);

}  // namespace descent::stack
