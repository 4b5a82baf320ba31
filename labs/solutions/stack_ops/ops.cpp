// Lab stack_ops: a reference solution.
#include <cstdint>

#include "ops_lab.h"

using namespace descent;
using stack::Op;

size_t execute_op(Op op, const stack::Chunk& chunk, size_t pc, std::vector<Value>& stack) {
  size_t next = pc + stack::instruction_length(op);
  // Where a jump lands: its offset counts from the end of the instruction, that is from next.
  auto target = [&] { return static_cast<size_t>(static_cast<int64_t>(next) + static_cast<int32_t>(chunk.operand(pc, 0))); };
  // A comparison: pop b (the top), replace a with the bool. C++'s float operators already
  // follow IEEE-754: every comparison with nan is false except !=, and -0.0 == 0.0.
  auto compare = [&](auto cmp) {
    Value b = stack.back();
    stack.pop_back();
    stack.back() = Value::of_bool(cmp(stack.back(), b));
    return next;
  };
  switch (op) {
    case Op::EQ_INT: return compare([](Value a, Value b) { return a.i == b.i; });
    case Op::NE_INT: return compare([](Value a, Value b) { return a.i != b.i; });
    case Op::LT_INT: return compare([](Value a, Value b) { return a.i < b.i; });
    case Op::LE_INT: return compare([](Value a, Value b) { return a.i <= b.i; });
    case Op::GT_INT: return compare([](Value a, Value b) { return a.i > b.i; });
    case Op::GE_INT: return compare([](Value a, Value b) { return a.i >= b.i; });
    case Op::EQ_FLOAT: return compare([](Value a, Value b) { return a.f == b.f; });
    case Op::NE_FLOAT: return compare([](Value a, Value b) { return a.f != b.f; });
    case Op::LT_FLOAT: return compare([](Value a, Value b) { return a.f < b.f; });
    case Op::LE_FLOAT: return compare([](Value a, Value b) { return a.f <= b.f; });
    case Op::GT_FLOAT: return compare([](Value a, Value b) { return a.f > b.f; });
    case Op::GE_FLOAT: return compare([](Value a, Value b) { return a.f >= b.f; });
    case Op::EQ_BOOL: return compare([](Value a, Value b) { return a.b == b.b; });
    case Op::NE_BOOL: return compare([](Value a, Value b) { return a.b != b.b; });
    case Op::NOT: stack.back() = Value::of_bool(!stack.back().b); return next;
    case Op::JUMP:
    case Op::LOOP: return target();  // the checker's VM does LOOP's interrupt check
    case Op::JUMP_IF_FALSE: {
      bool v = stack.back().b;
      stack.pop_back();
      return v ? next : target();
    }
    case Op::JUMP_IF_TRUE: {
      bool v = stack.back().b;
      stack.pop_back();
      return v ? target() : next;
    }
    // && and || as values: the operand that decides stays on the stack as the result.
    case Op::JUMP_IF_FALSE_OR_POP:
      if (!stack.back().b) return target();
      stack.pop_back();
      return next;
    case Op::JUMP_IF_TRUE_OR_POP:
      if (stack.back().b) return target();
      stack.pop_back();
      return next;
    default: return next;
  }
}
