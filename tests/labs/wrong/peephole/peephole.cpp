// The most likely mistake: the patterns are right, but nothing looks at is_target, so a
// fusion can swallow an instruction that a jump lands on.
#include "peephole_lab.h"

using namespace descent::stack;

size_t fuse_at(const std::vector<Instruction>& code, size_t i, Instruction* fused) {
  size_t left = code.size() - i;
  auto at = [&](size_t k) { return k < left ? code[i + k].op : Op::HALT; };
  auto arg = [&](size_t k) { return code[i + k].arg[0]; };
  bool cmp2 = at(2) >= Op::EQ_INT && at(2) <= Op::GE_INT;
  // EQ NE LT LE GT GE: the jump is taken when the compare is false.
  static const int kNot[] = {1, 0, 5, 4, 3, 2};
  if (at(0) == Op::LOAD_LOCAL && at(1) == Op::CONST) {
    if (at(2) == Op::ADD_INT && at(3) == Op::STORE_LOCAL && arg(3) == arg(0)) {
      *fused = Instruction{Op::INC_LOCAL_INT, {arg(0), arg(1), 0}, code[i].loc};
      return 4;
    }
    if (cmp2 && at(3) == Op::JUMP_IF_FALSE) {
      int n = kNot[static_cast<int>(at(2)) - static_cast<int>(Op::EQ_INT)];
      *fused = Instruction{static_cast<Op>(static_cast<int>(Op::JUMP_IF_EQ_LOCAL_CONST_INT) + n),
                           {arg(0), arg(1), 0}, code[i].loc, code[i + 3].target};
      return 4;
    }
    if (at(2) == Op::ADD_INT || at(2) == Op::SUB_INT) {
      Op op = at(2) == Op::ADD_INT ? Op::ADD_LOCAL_CONST_INT : Op::SUB_LOCAL_CONST_INT;
      *fused = Instruction{op, {arg(0), arg(1), 0}, code[i].loc};
      return 3;
    }
  }
  if (at(0) == Op::CONST) {
    switch (at(1)) {
      case Op::ADD_INT: *fused = Instruction{Op::ADD_CONST_INT, {arg(0), 0, 0}, code[i].loc}; return 2;
      case Op::SUB_INT: *fused = Instruction{Op::SUB_CONST_INT, {arg(0), 0, 0}, code[i].loc}; return 2;
      case Op::MUL_INT: *fused = Instruction{Op::MUL_CONST_INT, {arg(0), 0, 0}, code[i].loc}; return 2;
      default: break;
    }
  }
  if (at(0) >= Op::EQ_INT && at(0) <= Op::GE_INT && at(1) == Op::JUMP_IF_FALSE) {
    int n = kNot[static_cast<int>(at(0)) - static_cast<int>(Op::EQ_INT)];
    *fused = Instruction{static_cast<Op>(static_cast<int>(Op::JUMP_IF_EQ_INT) + n), {0, 0, 0},
                         code[i].loc, code[i + 1].target};
    return 2;
  }
  return 0;
}
