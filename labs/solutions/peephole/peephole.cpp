// Lab peephole: superinstructions as a peephole pass.
#include "peephole_lab.h"

using namespace descent::stack;

namespace {

// code[i .. i+n) exists and no jump lands strictly inside it.
bool window(const std::vector<Instruction>& code, size_t i, size_t n) {
  if (i + n > code.size()) return false;
  for (size_t k = i + 1; k < i + n; ++k)
    if (code[k].is_target) return false;
  return true;
}

bool is_int_compare(Op op) { return op >= Op::EQ_INT && op <= Op::GE_INT; }

// The compare that is true exactly when `op` is false (EQ NE LT LE GT GE, in enum order).
int negated(Op op) {
  static const int kNegated[] = {1, 0, 5, 4, 3, 2};
  return kNegated[static_cast<int>(op) - static_cast<int>(Op::EQ_INT)];
}

}  // namespace

size_t fuse_at(const std::vector<Instruction>& code, size_t i, Instruction* fused) {
  auto op = [&](size_t k) { return code[i + k].op; };
  if (window(code, i, 4) && op(0) == Op::LOAD_LOCAL && op(1) == Op::CONST && op(2) == Op::ADD_INT &&
      op(3) == Op::STORE_LOCAL && code[i + 3].arg[0] == code[i].arg[0]) {
    fused->op = Op::INC_LOCAL_INT;
    fused->arg[0] = code[i].arg[0];
    fused->arg[1] = code[i + 1].arg[0];
    return 4;
  }
  if (window(code, i, 4) && op(0) == Op::LOAD_LOCAL && op(1) == Op::CONST && is_int_compare(op(2)) &&
      op(3) == Op::JUMP_IF_FALSE) {
    fused->op = static_cast<Op>(static_cast<int>(Op::JUMP_IF_EQ_LOCAL_CONST_INT) + negated(op(2)));
    fused->arg[0] = code[i].arg[0];
    fused->arg[1] = code[i + 1].arg[0];
    fused->target = code[i + 3].target;
    return 4;
  }
  if (window(code, i, 3) && op(0) == Op::LOAD_LOCAL && op(1) == Op::CONST &&
      (op(2) == Op::ADD_INT || op(2) == Op::SUB_INT)) {
    fused->op = op(2) == Op::ADD_INT ? Op::ADD_LOCAL_CONST_INT : Op::SUB_LOCAL_CONST_INT;
    fused->arg[0] = code[i].arg[0];
    fused->arg[1] = code[i + 1].arg[0];
    return 3;
  }
  if (window(code, i, 2) && op(0) == Op::CONST &&
      (op(1) == Op::ADD_INT || op(1) == Op::SUB_INT || op(1) == Op::MUL_INT)) {
    fused->op = op(1) == Op::ADD_INT ? Op::ADD_CONST_INT
                : op(1) == Op::SUB_INT ? Op::SUB_CONST_INT
                                       : Op::MUL_CONST_INT;
    fused->arg[0] = code[i].arg[0];
    return 2;
  }
  if (window(code, i, 2) && is_int_compare(op(0)) && op(1) == Op::JUMP_IF_FALSE) {
    fused->op = static_cast<Op>(static_cast<int>(Op::JUMP_IF_EQ_INT) + negated(op(0)));
    fused->target = code[i + 1].target;
    return 2;
  }
  return 0;
}
