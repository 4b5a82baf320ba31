// Integer index arithmetic of the loop-nest IR, written once.
//
// Every reader of a loop nest that needs the value of an index, a loop binding or a predicate
// (the reference interpreter, the iteration-order walk, the tuner's cost features, the
// cost-model lab's helpers, and simplify's constant folding) computes it with these two
// functions, so they cannot disagree on what `i_0 * 4 + i_1`, `x / 0` or `min(a, b)` is. The
// semantics are the backends': 64-bit integers, `/` and `%` truncate as in C (operands are
// never negative in the index math schedules make), min and max pick the first operand on a
// tie.
//
// The interpreter keeps its own walk over a prepared form of the nest (variables resolved to
// slots, tensor/interp.cpp), because a map lookup per variable per iteration would make the
// oracle several times slower; it calls int_arith for the arithmetic itself.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "tensor/tir.h"

namespace descent::tir {

// a op b for the integer operators (Add ... Max). False, *r untouched, for a division or
// remainder by zero and for an operator that is not integer arithmetic.
inline bool int_arith(Op op, int64_t a, int64_t b, int64_t* r) {
  switch (op) {
    case Op::Add: *r = a + b; return true;
    case Op::Sub: *r = a - b; return true;
    case Op::Mul: *r = a * b; return true;
    case Op::Div:
    case Op::Mod:
      if (b == 0) return false;
      *r = op == Op::Div ? a / b : a % b;
      return true;
    case Op::Min: *r = b < a ? b : a; return true;
    case Op::Max: *r = b > a ? b : a; return true;
    default: return false;
  }
}

// a op b for the comparisons and logical operators (Lt ... Or), as 0 or 1. False for others.
inline bool int_compare(Op op, int64_t a, int64_t b, int64_t* r) {
  switch (op) {
    case Op::Lt: *r = a < b; return true;
    case Op::Le: *r = a <= b; return true;
    case Op::Gt: *r = a > b; return true;
    case Op::Ge: *r = a >= b; return true;
    case Op::Eq: *r = a == b; return true;
    case Op::Ne: *r = a != b; return true;
    case Op::And: *r = a && b; return true;
    case Op::Or: *r = a || b; return true;
    default: return false;
  }
}

// Why an index expression has no value.
enum class IndexFault : uint8_t {
  None,
  Unbound,     // a variable the lookup does not know
  DivByZero,   // `/` or `%` by zero
  NeedsData,   // a Load, a float, or an operator that is not index arithmetic
};

// The value of an integer expression: IntImm, Var (through lookup(name, &value), which
// returns false for an unbound name), Select, Neg, Abs, integer arithmetic and comparisons.
// On a fault, *fault (first one only) and *at (the subexpression) are set and 0 is returned;
// the caller words the message, since only it knows what the expression was for.
template <class Lookup>
int64_t eval_index(const Expr& e, Lookup&& lookup, IndexFault* fault, const Expr** at) {
  auto fail = [&](IndexFault f) -> int64_t {
    if (*fault == IndexFault::None) {
      *fault = f;
      if (at) *at = &e;
    }
    return 0;
  };
  if (*fault != IndexFault::None) return 0;
  auto arg = [&](size_t i) { return eval_index(*e.args[i], lookup, fault, at); };
  switch (e.kind) {
    case ExprKind::IntImm: return e.ival;
    case ExprKind::Var: {
      int64_t v = 0;
      return lookup(e.name, &v) ? v : fail(IndexFault::Unbound);
    }
    case ExprKind::Select: return arg(0) ? arg(1) : arg(2);
    case ExprKind::Unary: {
      if (e.op != Op::Neg && e.op != Op::Abs) return fail(IndexFault::NeedsData);
      int64_t a = arg(0);
      if (e.op == Op::Neg) return -a;
      return a < 0 ? -a : a;
    }
    case ExprKind::Binary: {
      int64_t a = arg(0), b = arg(1), r = 0;
      if (*fault != IndexFault::None) return 0;
      if (int_arith(e.op, a, b, &r) || int_compare(e.op, a, b, &r)) return r;
      return fail(e.op == Op::Div || e.op == Op::Mod ? IndexFault::DivByZero
                                                     : IndexFault::NeedsData);
    }
    case ExprKind::Load:
    case ExprKind::Fma:
    case ExprKind::FloatImm: break;
  }
  return fail(IndexFault::NeedsData);
}

// The estimate form the cost features use (tune/features.cpp, the cost_features lab): the
// variables in `at` set, every other one 0 (so value(v = 1) - value(v = 0) is v's stride in
// affine index math), and 0 for the whole expression on a fault. Features are estimates,
// never errors.
inline int64_t eval_index_at(const Expr& e, const std::map<std::string, int64_t>& at) {
  auto lookup = [&](const std::string& name, int64_t* v) {
    auto it = at.find(name);
    *v = it == at.end() ? 0 : it->second;
    return true;
  };
  IndexFault fault = IndexFault::None;
  int64_t v = eval_index(e, lookup, &fault, nullptr);
  return fault == IndexFault::None ? v : 0;
}

}  // namespace descent::tir
