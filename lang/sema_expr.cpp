// Semantic analysis, expressions: the type of every scalar expression.
//
// Each node gets its type (and operators their operand type), so no engine has to work
// it out again. The one implicit conversion, int to float, is made explicit here: a
// Promote node is wrapped around the int side (coerce()), so the walker, the bytecode
// compilers and LLVM codegen all see the same conversion at the same place.
#include "lang/sema_internal.h"

namespace descent::sema_internal {

// Wraps an int expression in a Promote node where a float is wanted.
void Checker::coerce(ExprPtr& e, Type want) {
  if (want != Type::Float || e->type != Type::Int) return;
  auto p = std::make_unique<Expr>(ExprKind::Promote, e->loc);
  p->type = Type::Float;
  p->height = e->height + 1;
  p->kids.push_back(std::move(e));
  e = std::move(p);
}

// An expression used as a value: not a string, not a call that returns nothing.
Type Checker::value(ExprPtr& e) {
  Type t = expr(e);
  if (t == Type::Str) {
    error(e->loc, "strings can only be printed");
    return Type::Unknown;
  }
  if (t == Type::Void) {
    error(e->loc, "'" + e->text + "' does not return a value");
    return Type::Unknown;
  }
  return t;
}

Type Checker::expr(ExprPtr& ep) {
  Expr& e = *ep;
  switch (e.kind) {
    case ExprKind::IntLit: return e.type = Type::Int;
    case ExprKind::FloatLit: return e.type = Type::Float;
    case ExprKind::BoolLit: return e.type = Type::Bool;
    case ExprKind::StrLit: return e.type = Type::Str;
    case ExprKind::Promote: {
      // Re-checking a tree from an earlier pass: a promotion made on a guessed type is
      // dropped when the guess changed (the caller promotes again if still needed).
      Type t = expr(e.kids[0]);
      if (t != Type::Int) {
        ExprPtr kid = std::move(e.kids[0]);
        ep = std::move(kid);
        return t;
      }
      return e.type = Type::Float;
    }
    case ExprKind::Var: return e.type = variable(e);
    case ExprKind::Unary: {
      Type t = value(e.kids[0]);
      e.operand_type = t;
      if (t == Type::Unknown) return e.type = Type::Unknown;
      if (is_tensor_type(t)) return e.type = not_on_tensors(e.loc, op_symbol(e.unary_op), t);
      bool ok = e.unary_op == UnaryOp::Neg ? is_numeric(t) : t == Type::Bool;
      if (!ok) {
        error(e.loc, std::string("invalid operand to '") + op_symbol(e.unary_op) + "': " +
                         type_name(t));
        return e.type = Type::Unknown;
      }
      return e.type = t;
    }
    case ExprKind::Binary: return e.type = binary(e);
    case ExprKind::Call: return e.type = call(e);
    case ExprKind::List: return e.type = shape_literal(e);
    case ExprKind::Index: return e.type = element(e);
    case ExprKind::Field: return e.type = field(e);
    case ExprKind::Reduce:
    case ExprKind::Axis:
      // The parser makes these only inside kernels; a tree built by hand may not.
      error(e.loc, "reductions and index variables exist only inside kernels");
      return e.type = Type::Unknown;
  }
  return Type::Unknown;
}

Type Checker::binary(Expr& e) {
  Type a = value(e.kids[0]);
  Type b = value(e.kids[1]);
  if (a == Type::Unknown || b == Type::Unknown) return Type::Unknown;
  if (is_tensor_type(a) || is_tensor_type(b))
    return not_on_tensors(e.loc, op_symbol(e.binary_op), is_tensor_type(a) ? a : b);
  auto bad = [&] {
    error(e.loc, std::string("invalid operands to '") + op_symbol(e.binary_op) + "': " +
                     type_name(a) + " and " + type_name(b));
    return Type::Unknown;
  };
  switch (e.binary_op) {
    case BinaryOp::And:
    case BinaryOp::Or:
      if (a != Type::Bool || b != Type::Bool) return bad();
      e.operand_type = Type::Bool;
      return Type::Bool;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (a == Type::Bool && b == Type::Bool) {
        e.operand_type = Type::Bool;
        return Type::Bool;
      }
      [[fallthrough]];
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      if (!is_numeric(a) || !is_numeric(b)) return bad();
      e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
      coerce(e.kids[0], e.operand_type);
      coerce(e.kids[1], e.operand_type);
      return Type::Bool;
    default:
      if (!is_numeric(a) || !is_numeric(b)) return bad();
      e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
      coerce(e.kids[0], e.operand_type);
      coerce(e.kids[1], e.operand_type);
      return e.operand_type;
  }
}

bool Checker::arity(Expr& e, size_t want) {
  if (e.kids.size() == want) return true;
  error(e.loc, "'" + e.text + "' expects " + plural(want, "argument") + ", got " +
                   std::to_string(e.kids.size()));
  for (auto& k : e.kids) expr(k);
  return false;
}

Type Checker::call(Expr& e) {
  e.builtin = builtin_by_name(e.text);
  if (e.builtin == Builtin::Print) {
    for (auto& k : e.kids) {
      Type t = expr(k);
      if (t == Type::Void) error(k->loc, "'" + k->text + "' does not return a value");
    }
    return Type::Void;
  }
  if (is_tensor_builtin(e.builtin)) return tensor_builtin(e);
  if (e.builtin != Builtin::None) return builtin(e);
  int ki = m_.find_kernel(e.text);
  if (ki >= 0) return kernel_call(e, ki);
  int fi = m_.find_function(e.text);
  if (fi < 0) {
    bool is_var = (fn_ && locals_.count(e.text)) || m_.find_global(e.text) >= 0;
    error(e.loc, is_var ? "'" + e.text + "' is not a function"
                        : "undefined function '" + e.text + "'" + callable_guess(e.text));
    for (auto& k : e.kids) expr(k);
    return Type::Unknown;
  }
  e.slot = fi;
  const FunctionInfo& f = m_.functions[fi];
  if (!arity(e, f.params.size())) return f.ret;
  for (size_t i = 0; i < e.kids.size(); ++i) {
    Type t = value(e.kids[i]);
    Type want = f.params[i];
    if (t == Type::Unknown) continue;
    if (want == Type::Float && t == Type::Int) {
      coerce(e.kids[i], want);
    } else if (t != want) {
      error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                        "' must be " + type_name(want) + ", got " + type_name(t));
    }
  }
  return f.ret;
}

Type Checker::builtin(Expr& e) {
  size_t n = (e.builtin == Builtin::Min || e.builtin == Builtin::Max) ? 2 : 1;
  if (!arity(e, n)) return Type::Unknown;
  bool float_only = e.builtin != Builtin::Abs && e.builtin != Builtin::Min &&
                    e.builtin != Builtin::Max && e.builtin != Builtin::ToFloat &&
                    e.builtin != Builtin::ToInt;
  bool unknown = false, any_float = false;
  for (size_t i = 0; i < n; ++i) {
    Type t = value(e.kids[i]);
    if (t == Type::Unknown) {
      unknown = true;
    } else if (!is_numeric(t)) {
      error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                        "' must be " + (float_only ? "float" : "int or float") +
                                        ", got " + type_name(t));
      unknown = true;
    } else if (t == Type::Float) {
      any_float = true;
    }
  }
  switch (e.builtin) {
    case Builtin::ToInt: return Type::Int;
    case Builtin::ToFloat: coerce(e.kids[0], Type::Float); return Type::Float;
    case Builtin::Abs: return unknown ? Type::Unknown : e.kids[0]->type;
    case Builtin::Min:
    case Builtin::Max: {
      if (unknown) return Type::Unknown;
      Type t = any_float ? Type::Float : Type::Int;
      coerce(e.kids[0], t);
      coerce(e.kids[1], t);
      e.operand_type = t;
      return t;
    }
    default: coerce(e.kids[0], Type::Float); return Type::Float;
  }
}

}  // namespace descent::sema_internal
