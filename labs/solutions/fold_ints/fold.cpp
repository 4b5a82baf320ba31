// Reference solution: the arithmetic in uint64_t, where wrapping around is defined (in int64_t
// an overflow is undefined behaviour, which a compiler may assume never happens).
#include <cstdint>

#include "fold_lab.h"

using namespace descent;

ExprPtr fold_int_binary(const Expr& e) {
  if (e.kind != ExprKind::Binary || e.kids.size() != 2) return nullptr;
  const Expr& a = *e.kids[0];
  const Expr& b = *e.kids[1];
  if (a.kind != ExprKind::IntLit || b.kind != ExprKind::IntLit) return nullptr;
  uint64_t x = uint64_t(a.int_value), y = uint64_t(b.int_value), r;
  switch (e.binary_op) {
    case BinaryOp::Add: r = x + y; break;
    case BinaryOp::Sub: r = x - y; break;
    case BinaryOp::Mul: r = x * y; break;
    default: return nullptr;
  }
  auto out = std::make_unique<Expr>(ExprKind::IntLit, e.loc);
  out->type = Type::Int;
  out->int_value = int64_t(r);
  return out;
}
