#include "lang/fold.h"

#include "lang/value.h"

namespace descent {
namespace {

bool is_const(const Expr& e) {
  return e.kind == ExprKind::IntLit || e.kind == ExprKind::FloatLit || e.kind == ExprKind::BoolLit;
}

Value const_value(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return Value::of_int(e.int_value);
    case ExprKind::FloatLit: return Value::of_float(e.float_value);
    default: return Value::of_bool(e.bool_value);
  }
}

ExprPtr make_const(Value v, Type t, SourceLoc loc) {
  ExprKind k = t == Type::Int ? ExprKind::IntLit : t == Type::Float ? ExprKind::FloatLit : ExprKind::BoolLit;
  auto e = std::make_unique<Expr>(k, loc);
  e->type = t;
  // Read only the member the type says the union holds.
  if (t == Type::Int) e->int_value = v.i;
  else if (t == Type::Float) e->float_value = v.f;
  else e->bool_value = v.b;
  return e;
}

class Folder {
 public:
  int count = 0;

  void block(Block& b) {
    for (auto& s : b) stmt(*s);
  }

  void stmt(Stmt& s) {
    if (s.expr) expr(s.expr);
    if (s.expr2) expr(s.expr2);
    block(s.body);
    block(s.else_body);
    if (s.fn) block(s.fn->body);
  }

  void expr(ExprPtr& e) {
    for (auto& k : e->kids)
      if (!(e->kind == ExprKind::Call && e->builtin == Builtin::Print && k->kind == ExprKind::StrLit))
        expr(k);
    ExprPtr folded = fold(*e);
    if (folded) {
      e = std::move(folded);
      ++count;
    }
  }

 private:
  ExprPtr fold(Expr& e) {
    switch (e.kind) {
      case ExprKind::Promote:
        if (e.kids[0]->kind != ExprKind::IntLit) return nullptr;
        return make_const(Value::of_float(static_cast<double>(e.kids[0]->int_value)), Type::Float, e.loc);
      case ExprKind::Unary: {
        if (!is_const(*e.kids[0])) return nullptr;
        Value v = const_value(*e.kids[0]);
        if (e.unary_op == UnaryOp::Not) return make_const(Value::of_bool(!v.b), Type::Bool, e.loc);
        if (e.type == Type::Int) return make_const(Value::of_int(wrap_neg(v.i)), Type::Int, e.loc);
        return make_const(Value::of_float(-v.f), Type::Float, e.loc);
      }
      case ExprKind::Binary: {
        Expr& a = *e.kids[0];
        if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) {
          // Only the left side decides: "true && x" is x, "false && x" is false.
          if (a.kind != ExprKind::BoolLit) return nullptr;
          bool decides = (e.binary_op == BinaryOp::And) != a.bool_value;
          if (decides) return make_const(Value::of_bool(a.bool_value), Type::Bool, e.loc);
          return std::move(e.kids[1]);
        }
        if (!is_const(a) || !is_const(*e.kids[1])) return nullptr;
        Value out;
        if (!apply_binary(e.binary_op, e.operand_type, const_value(a), const_value(*e.kids[1]), &out))
          return nullptr;  // division by zero stays a run-time error
        return make_const(out, e.type, e.loc);
      }
      case ExprKind::Call: {
        // Tensor builtins make or read tensors at run time: nothing to fold (kernel bodies
        // are never visited at all, see stmt()).
        if (e.builtin == Builtin::None || e.builtin == Builtin::Print || e.builtin >= Builtin::Zeros)
          return nullptr;
        for (auto& k : e.kids)
          if (!is_const(*k)) return nullptr;
        Value x = const_value(*e.kids[0]);
        switch (e.builtin) {
          case Builtin::ToFloat: return make_const(x, Type::Float, e.loc);
          case Builtin::ToInt: {
            if (e.kids[0]->type == Type::Int) return make_const(x, Type::Int, e.loc);
            int64_t i;
            if (!float_to_int(x.f, &i)) return nullptr;  // "invalid conversion" at run time
            return make_const(Value::of_int(i), Type::Int, e.loc);
          }
          case Builtin::Abs:
            if (e.type == Type::Int) return make_const(Value::of_int(x.i < 0 ? wrap_neg(x.i) : x.i), Type::Int, e.loc);
            return make_const(Value::of_float(std::fabs(x.f)), Type::Float, e.loc);
          case Builtin::Min:
          case Builtin::Max: {
            Value y = const_value(*e.kids[1]);
            bool mn = e.builtin == Builtin::Min;
            Value r = e.type == Type::Int ? (mn ? int_min(x, y) : int_max(x, y))
                                          : (mn ? float_min(x, y) : float_max(x, y));
            return make_const(r, e.type, e.loc);
          }
          default: return make_const(Value::of_float(call_math(e.builtin, x.f)), Type::Float, e.loc);
        }
      }
      default: return nullptr;
    }
  }
};

}  // namespace

int fold_constants(Program& program) {
  Folder f;
  f.block(program.body);
  return f.count;
}

}  // namespace descent
