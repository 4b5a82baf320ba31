// CPU code generation, expressions: every value as Uniform, Affine or Vector (see Val).
//
// Outside a vectorized loop every value is Uniform, a plain scalar. Inside one, a value
// keeps the cheapest shape that describes its lanes: integer + and * by a constant keep
// Affine values Affine (so indices stay "base + lane"), and anything else widens to a
// <W x T> vector. Float semantics (min, max, comparisons with nan) match every other backend.
#include <llvm/IR/Intrinsics.h>

#include "cpu/codegen_internal.h"
#include "cpu/vector_math.h"

namespace descent::cpu::codegen_internal {

llvm::Type* Codegen::vec(llvm::Type* t) {
  return llvm::FixedVectorType::get(t, static_cast<unsigned>(lanes_));
}

// The value as a <W x T> vector (Affine: base + <0, s, 2s, ...>).
llvm::Value* Codegen::widen(const Val& x) {
  if (x.shape == Val::Vector) return x.v;
  llvm::Value* splat = b_.CreateVectorSplat(static_cast<unsigned>(lanes_), x.v);
  if (x.shape == Val::Uniform) return splat;
  std::vector<llvm::Constant*> steps;
  for (int64_t l = 0; l < lanes_; ++l) steps.push_back(b_.getInt64(x.stride * l));
  return b_.CreateAdd(splat, llvm::ConstantVector::get(steps));
}

// Lane l's value as a scalar.
llvm::Value* Codegen::lane(const Val& x, int64_t l) {
  if (x.shape == Val::Uniform) return x.v;
  if (x.shape == Val::Affine) return b_.CreateAdd(x.v, b_.getInt64(x.stride * l));
  return b_.CreateExtractElement(x.v, static_cast<uint64_t>(l));
}

bool Codegen::is_float(llvm::Value* v) { return v->getType()->getScalarType()->isFloatTy(); }

bool Codegen::is_bool(llvm::Value* v) { return v->getType()->getScalarType()->isIntegerTy(1); }

llvm::Value* Codegen::to_bool(llvm::Value* v) {
  if (is_bool(v)) return v;
  if (is_float(v)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

// As f32 (Int and Bool operands of float arithmetic, values stored to buffers).
Val Codegen::to_float(const Val& x) {
  if (is_float(x.v)) return x;
  llvm::Value* v = x.shape == Val::Affine ? widen(x) : x.v;
  llvm::Type* t = v->getType()->isVectorTy() ? vec(f32_) : f32_;
  Val r{is_bool(v) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t),
        v->getType()->isVectorTy() ? Val::Vector : Val::Uniform, 0};
  return r;
}

Val Codegen::eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntImm: return uniform(b_.getInt64(static_cast<uint64_t>(e.ival)));
    case ExprKind::FloatImm:
      return uniform(llvm::ConstantFP::get(f32_, static_cast<double>(static_cast<float>(e.fval))));
    case ExprKind::Var: {
      auto it = env_.find(e.name);
      if (it == env_.end()) {
        fail("variable '" + e.name + "' is not bound here");
        return uniform(b_.getInt64(0));
      }
      return it->second;
    }
    case ExprKind::Load: return emit_load(e);
    case ExprKind::Binary:
      if (e.args.size() != 2 || !e.args[0] || !e.args[1]) break;
      return binary(e.op, eval(*e.args[0]), eval(*e.args[1]));
    case ExprKind::Unary:
      if (e.args.size() != 1 || !e.args[0]) break;
      return unary(e.op, eval(*e.args[0]));
    case ExprKind::Select: {
      if (e.args.size() != 3 || !e.args[0] || !e.args[1] || !e.args[2]) break;
      Val c = eval(*e.args[0]), a = eval(*e.args[1]), b = eval(*e.args[2]);
      if (is_float(a.v) != is_float(b.v)) {
        a = to_float(a);
        b = to_float(b);
      }
      llvm::Value* cond = to_bool(c.shape == Val::Uniform ? c.v : widen(c));
      if (a.shape == Val::Uniform && b.shape == Val::Uniform && c.shape == Val::Uniform)
        return uniform(b_.CreateSelect(cond, a.v, b.v));
      return Val{b_.CreateSelect(cond, widen(a), widen(b)), Val::Vector, 0};
    }
    case ExprKind::Fma: {
      // llvm.fma: one vfmadd per vector (or scalar) with a single rounding, whatever the
      // fast-math flags say: what a tensor intrinsic's implementation asks for.
      if (e.args.size() != 3 || !e.args[0] || !e.args[1] || !e.args[2]) break;
      Val a = to_float(eval(*e.args[0])), b = to_float(eval(*e.args[1])), c = to_float(eval(*e.args[2]));
      if (a.shape == Val::Uniform && b.shape == Val::Uniform && c.shape == Val::Uniform)
        return uniform(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32_}, {a.v, b.v, c.v}));
      llvm::Value* va = widen(a);
      return Val{b_.CreateIntrinsic(llvm::Intrinsic::fma, {va->getType()}, {va, widen(b), widen(c)}),
                 Val::Vector, 0};
    }
  }
  fail("malformed expression (" + std::string(e.kind == ExprKind::Select ? "select" : "operator") +
       " with missing operands)");
  return uniform(b_.getInt64(0));
}

// Integer + and * by a constant keep Affine values Affine; everything else widens.
Val Codegen::binary(Op op, Val a, Val b) {
  const bool fl = is_float(a.v) || is_float(b.v);
  if (fl && op != Op::And && op != Op::Or) {
    a = to_float(a);
    b = to_float(b);
  } else if (!fl && !is_bool(a.v) && !is_bool(b.v)) {
    if (auto r = affine_binary(op, a, b); r.v) return r;
  }
  const bool scalar = a.shape == Val::Uniform && b.shape == Val::Uniform;
  llvm::Value* x = scalar ? a.v : widen(a);
  llvm::Value* y = scalar ? b.v : widen(b);
  if (op == Op::And || op == Op::Or) {
    x = to_bool(x);
    y = to_bool(y);
  }
  llvm::Value* r = fl ? float_op(op, x, y) : int_op(op, x, y);
  return Val{r, scalar ? Val::Uniform : Val::Vector, 0};
}

Val Codegen::affine_binary(Op op, const Val& a, const Val& b) {
  if (a.shape == Val::Vector || b.shape == Val::Vector) return {};
  if (a.shape == Val::Uniform && b.shape == Val::Uniform) return {};
  auto make = [&](llvm::Value* base, int64_t stride) {
    return stride == 0 ? uniform(base) : Val{base, Val::Affine, stride};
  };
  switch (op) {
    case Op::Add: return make(b_.CreateAdd(a.v, b.v), a.stride + b.stride);
    case Op::Sub: return make(b_.CreateSub(a.v, b.v), a.stride - b.stride);
    case Op::Mul: {
      const Val& k = a.shape == Val::Uniform ? a : b;
      const Val& x = a.shape == Val::Uniform ? b : a;
      if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(k.v))
        return make(b_.CreateMul(x.v, c), x.stride * c->getSExtValue());
      return {};
    }
    default: return {};
  }
}

llvm::Value* Codegen::int_op(Op op, llvm::Value* x, llvm::Value* y) {
  switch (op) {
    case Op::Add: return b_.CreateAdd(x, y);
    case Op::Sub: return b_.CreateSub(x, y);
    case Op::Mul: return b_.CreateMul(x, y);
    case Op::Div:
    case Op::Mod: {
      // Index math never divides by zero in a verified function; if it did, 0 rather
      // than a SIGFPE that would take the whole process down.
      llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
      llvm::Value* is_zero = b_.CreateICmpEQ(y, zero);
      llvm::Value* safe = b_.CreateSelect(is_zero, llvm::ConstantInt::get(y->getType(), 1), y);
      llvm::Value* r = op == Op::Div ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
      return b_.CreateSelect(is_zero, zero, r);
    }
    case Op::Min: return b_.CreateSelect(b_.CreateICmpSLT(y, x), y, x);
    case Op::Max: return b_.CreateSelect(b_.CreateICmpSGT(y, x), y, x);
    case Op::Lt: return b_.CreateICmpSLT(x, y);
    case Op::Le: return b_.CreateICmpSLE(x, y);
    case Op::Gt: return b_.CreateICmpSGT(x, y);
    case Op::Ge: return b_.CreateICmpSGE(x, y);
    case Op::Eq: return b_.CreateICmpEQ(x, y);
    case Op::Ne: return b_.CreateICmpNE(x, y);
    case Op::And: return b_.CreateAnd(x, y);
    case Op::Or: return b_.CreateOr(x, y);
    default: break;
  }
  fail(std::string("operator '") + tir::op_name(op) + "' is not a binary operator");
  return x;
}

// f32 semantics shared by every backend: max(a, b) = (b > a) ? b : a and min likewise
// (so max(nan, 1) is 1 and max(1, nan) is 1... but max(nan, nan) is nan, as in Python).
llvm::Value* Codegen::float_op(Op op, llvm::Value* x, llvm::Value* y) {
  switch (op) {
    case Op::Add: return b_.CreateFAdd(x, y);
    case Op::Sub: return b_.CreateFSub(x, y);
    case Op::Mul: return b_.CreateFMul(x, y);
    case Op::Div: return b_.CreateFDiv(x, y);
    case Op::Mod: return b_.CreateFRem(x, y);
    case Op::Min: return b_.CreateSelect(b_.CreateFCmpOLT(y, x), y, x);
    case Op::Max: return b_.CreateSelect(b_.CreateFCmpOGT(y, x), y, x);
    case Op::Lt: return b_.CreateFCmpOLT(x, y);
    case Op::Le: return b_.CreateFCmpOLE(x, y);
    case Op::Gt: return b_.CreateFCmpOGT(x, y);
    case Op::Ge: return b_.CreateFCmpOGE(x, y);
    case Op::Eq: return b_.CreateFCmpOEQ(x, y);
    case Op::Ne: return b_.CreateFCmpUNE(x, y);
    default: break;
  }
  fail(std::string("operator '") + tir::op_name(op) + "' is not a binary operator on f32");
  return x;
}

Val Codegen::unary(Op op, Val a) {
  if (op == Op::Neg && !is_float(a.v) && !is_bool(a.v)) {
    if (a.shape == Val::Vector) return Val{b_.CreateNeg(a.v), Val::Vector, 0};
    return Val{b_.CreateNeg(a.v), a.shape, -a.stride};
  }
  if (op == Op::Abs && !is_float(a.v) && !is_bool(a.v)) {  // |index|: stays an integer
    llvm::Value* x = a.shape == Val::Uniform ? a.v : widen(a);
    llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
    return Val{b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateNeg(x), x),
               a.shape == Val::Uniform ? Val::Uniform : Val::Vector, 0};
  }
  a = to_float(a);
  llvm::Value* x = a.v;
  llvm::Value* r = nullptr;
  switch (op) {
    case Op::Neg: r = b_.CreateFNeg(x); break;
    case Op::Exp:
      // A vector exp is written out (vector_math.cpp): llvm.exp on <W x float> would become
      // W calls to expf. A scalar one stays libm's expf (glibc's is within 0.502 ulp), which
      // the reference interpreter calls too, so scalar code matches the oracle bit for bit.
      r = x->getType()->isVectorTy() ? emit_exp(b_, x, options_.target.avx512)
                                     : b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
      break;
    case Op::Log: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x); break;
    case Op::Sqrt: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); break;
    case Op::Abs: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
    default:
      fail(std::string("operator '") + tir::op_name(op) + "' is not a unary operator");
      r = x;
  }
  return Val{r, a.shape, 0};
}

}  // namespace descent::cpu::codegen_internal
