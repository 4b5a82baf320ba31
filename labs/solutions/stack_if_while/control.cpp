// Lab stack_if_while: a reference solution.
#include "control_lab.h"

using namespace descent;
using stack::Emitter;
using stack::Op;

// if c { A } else { B }:   [c] JUMP_IF_FALSE -> else   A   JUMP -> end   else: B   end:
void compile_if(const Stmt& s, Emitter& e) {
  e.expr(*s.expr);
  size_t to_else = e.emit_jump(Op::JUMP_IF_FALSE, s.loc);
  e.block(s.body);
  if (!s.has_else) {
    e.patch_jump(to_else);
    return;
  }
  size_t to_end = e.emit_jump(Op::JUMP, s.loc);  // emitted before to_else is patched:
  e.patch_jump(to_else);                         // the else-body starts after it
  e.block(s.else_body);
  e.patch_jump(to_end);
}

// while c { A }:   start: [c] JUMP_IF_FALSE -> exit   A   LOOP -> start   exit:
void compile_while(const Stmt& s, Emitter& e) {
  size_t start = e.here();  // before the condition: it is tested again every round
  e.expr(*s.expr);
  size_t exit = e.emit_jump(Op::JUMP_IF_FALSE, s.loc);
  e.begin_loop();
  e.block(s.body);
  stack::LoopJumps jumps = e.end_loop();
  for (size_t c : jumps.continues) e.patch_jump(c);  // continue goes through the LOOP
  e.emit_loop(start, s.loc);
  e.patch_jump(exit);
  for (size_t b : jumps.breaks) e.patch_jump(b);
}
