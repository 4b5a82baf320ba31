// Lab stack_if_while: the two functions you write (in control.cpp), and what the checker
// does with them.
//
// The checker runs Descent programs on the real stack VM (vm/stack_vm.h), whose compiler
// (vm/stack_compiler.h) hands every `if` and `while` statement to your functions through its
// control-flow hook: you emit their code through an Emitter, which writes into the chunk
// being compiled. Everything else (expressions, the statements of a block, break and
// continue) the compiler still compiles itself. Then it compares what each program prints
// with what the AST walker prints, and reads the shape of your code.
#pragma once
#include "lang/ast.h"
#include "vm/stack_compiler.h"

// The Emitter (vm/stack_compiler.h), in short:
//   e.here()                  the offset the next instruction gets
//   e.expr(cond)              code that pushes cond's value (a bool)
//   e.block(body)             the code of a block's statements
//   e.emit_jump(op, loc)      a jump (JUMP, JUMP_IF_FALSE, ...) with a placeholder offset;
//                             returns its offset, to patch
//   e.patch_jump(at)          the jump at `at` now lands at e.here()
//   e.emit_loop(target, loc)  LOOP back to an earlier offset (the back-edge; it checks for
//                             interrupts, so `while true {}` can be stopped)
//   e.begin_loop()            break/continue compiled from now on belong to this loop
//   e.end_loop()              ends it: returns its break and continue jumps, to patch

// s.kind == StmtKind::If: `if s.expr { s.body }`, and when s.has_else, `else { s.else_body }`.
// `else if c { ... }` is an else_body holding one If statement: e.block(s.else_body) compiles
// it by calling compile_if again. Emit: the condition, a JUMP_IF_FALSE over the then-body,
// and only when there is an else, a JUMP from the end of the then-body over the else-body.
void compile_if(const descent::Stmt& s, descent::stack::Emitter& e);

// s.kind == StmtKind::While: `while s.expr { s.body }`. Emit: the condition, a JUMP_IF_FALSE
// out of the loop, the body, and one LOOP back to the condition. `continue` must reach the
// LOOP (so it tests the condition again, through the interrupt check); `break` must land
// after the loop.
void compile_while(const descent::Stmt& s, descent::stack::Emitter& e);
