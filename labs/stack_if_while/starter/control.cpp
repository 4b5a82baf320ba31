// Lab stack_if_while: the code of if and while (see control_lab.h and README.md).
#include "control_lab.h"

using namespace descent;
using stack::Emitter;
using stack::Op;

void compile_if(const Stmt& s, Emitter& e) {
  // An if without else, as an example:   [cond] JUMP_IF_FALSE -> end   then-body   end:
  e.expr(*s.expr);
  size_t to_end = e.emit_jump(Op::JUMP_IF_FALSE, s.loc);
  e.block(s.body);
  e.patch_jump(to_end);
  // TODO: when s.has_else, jump over s.else_body at the end of the then-body (and make the
  // JUMP_IF_FALSE land on the else-body instead).
}

void compile_while(const Stmt& s, Emitter& e) {
  (void)s;
  (void)e;
  // TODO:  start: [cond] JUMP_IF_FALSE -> exit   body   LOOP -> start   exit:
  // with begin_loop/end_loop around the body, continue patched to the LOOP, break to exit.
}
