// LLVM IR from the AST, expressions: operators, calls and builtins.
//
// The semantics are those of lang/value.h, spelled out in IR: int arithmetic wraps (no
// nsw/nuw), division checks for zero and never traps, comparisons of floats follow IEEE
// (nan != nan), && and || evaluate their right side only when it decides. A call first
// compares %depth with the runtime's limit, the one check that catches both deep recursion
// and a request to stop.
#include <llvm/IR/Intrinsics.h>

#include "llvm_backend/codegen_internal.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe::codegen_internal {

llvm::Value* Lowering::expr(const Expr& e) {
  locate(e.loc);
  switch (e.kind) {
    case ExprKind::IntLit: return b_.getInt64(static_cast<uint64_t>(e.int_value));
    case ExprKind::FloatLit: return llvm::ConstantFP::get(b_.getDoubleTy(), e.float_value);
    case ExprKind::BoolLit: return b_.getInt1(e.bool_value);
    case ExprKind::StrLit: return nullptr;  // only ever a print argument
    case ExprKind::List: case ExprKind::Index: case ExprKind::Field: return tensor_expr(e);
    // Only inside kernels, which the tensor runtime runs: sema keeps them out of code.
    case ExprKind::Reduce: case ExprKind::Axis: return b_.getInt64(0);
    case ExprKind::Promote: return b_.CreateSIToFP(expr(*e.kids[0]), b_.getDoubleTy(), "tofloat");
    case ExprKind::Var:
      if (e.check_defined) {
        GlobalVars g = global(e.slot);
        llvm::Value* d = b_.CreateLoad(b_.getInt8Ty(), g.defined, e.text + ".defined");
        check(b_.CreateICmpEQ(d, b_.getInt8(0), e.text + ".undefined"),
              RtError::UndefinedVariable, e.loc, e.text + ".ok", e.text);
      }
      return load_var(e.storage, e.slot, e.text);
    case ExprKind::Unary: {
      llvm::Value* v = expr(*e.kids[0]);
      if (e.unary_op == UnaryOp::Not) return b_.CreateNot(v, "not");
      if (e.type == Type::Float) return b_.CreateFNeg(v, "neg");
      return b_.CreateNeg(v, "neg");  // sub 0, v: wraps, INT_MIN stays INT_MIN
    }
    case ExprKind::Binary:
      if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) return logic(e);
      {
        llvm::Value* a = expr(*e.kids[0]);
        llvm::Value* b = expr(*e.kids[1]);
        return arith(e.binary_op, e.operand_type, a, b, e.loc);
      }
    case ExprKind::Call: return e.builtin == Builtin::None ? call(e) : builtin(e);
  }
  return nullptr;
}

// a && b, a || b: b is evaluated only when it decides.
llvm::Value* Lowering::logic(const Expr& e) {
  bool is_and = e.binary_op == BinaryOp::And;
  const char* name = is_and ? "and" : "or";
  llvm::Value* a = expr(*e.kids[0]);
  llvm::BasicBlock* a_end = b_.GetInsertBlock();
  llvm::BasicBlock* rhs = block(llvm::Twine(name) + ".rhs");
  llvm::BasicBlock* end = block(llvm::Twine(name) + ".end");
  if (is_and) b_.CreateCondBr(a, rhs, end);
  else b_.CreateCondBr(a, end, rhs);
  enter(rhs);
  llvm::Value* bv = expr(*e.kids[1]);
  llvm::BasicBlock* b_end = b_.GetInsertBlock();
  b_.CreateBr(end);
  enter(end);
  llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), 2, name);
  phi->addIncoming(b_.getInt1(!is_and), a_end);
  phi->addIncoming(bv, b_end);
  return phi;
}

// One binary operator on two values of type t (lang/value.h's apply_binary, in IR).
llvm::Value* Lowering::arith(BinaryOp op, Type t, llvm::Value* a, llvm::Value* b, SourceLoc loc) {
  using P = llvm::CmpInst::Predicate;
  if (t == Type::Float) {
    switch (op) {
      case BinaryOp::Add: return b_.CreateFAdd(a, b, "add");
      case BinaryOp::Sub: return b_.CreateFSub(a, b, "sub");
      case BinaryOp::Mul: return b_.CreateFMul(a, b, "mul");
      case BinaryOp::Div: return b_.CreateFDiv(a, b, "div");  // IEEE: inf/nan, no error
      case BinaryOp::Mod: return b_.CreateFRem(a, b, "rem");  // C's fmod
      case BinaryOp::Eq: return b_.CreateFCmp(P::FCMP_OEQ, a, b, "eq");
      case BinaryOp::Ne: return b_.CreateFCmp(P::FCMP_UNE, a, b, "ne");  // nan != nan
      case BinaryOp::Lt: return b_.CreateFCmp(P::FCMP_OLT, a, b, "lt");
      case BinaryOp::Le: return b_.CreateFCmp(P::FCMP_OLE, a, b, "le");
      case BinaryOp::Gt: return b_.CreateFCmp(P::FCMP_OGT, a, b, "gt");
      case BinaryOp::Ge: return b_.CreateFCmp(P::FCMP_OGE, a, b, "ge");
      default: break;
    }
  } else {
    switch (op) {
      case BinaryOp::Add: return b_.CreateAdd(a, b, "add");  // no nsw/nuw: wraps
      case BinaryOp::Sub: return b_.CreateSub(a, b, "sub");
      case BinaryOp::Mul: return b_.CreateMul(a, b, "mul");
      case BinaryOp::Div: return divide(a, b, loc, true);
      case BinaryOp::Mod: return divide(a, b, loc, false);
      case BinaryOp::Eq: return b_.CreateICmp(P::ICMP_EQ, a, b, "eq");  // ints and bools
      case BinaryOp::Ne: return b_.CreateICmp(P::ICMP_NE, a, b, "ne");
      case BinaryOp::Lt: return b_.CreateICmp(P::ICMP_SLT, a, b, "lt");
      case BinaryOp::Le: return b_.CreateICmp(P::ICMP_SLE, a, b, "le");
      case BinaryOp::Gt: return b_.CreateICmp(P::ICMP_SGT, a, b, "gt");
      case BinaryOp::Ge: return b_.CreateICmp(P::ICMP_SGE, a, b, "ge");
      default: break;
    }
  }
  return llvm::PoisonValue::get(a->getType());
}

// a / b and a % b on ints: b == 0 is "division by zero"; b == -1 divides by 1 instead
// (sdiv INT_MIN, -1 is undefined in LLVM, as in C) and negates for `/`: INT_MIN / -1 is
// INT_MIN, INT_MIN % -1 is 0, with no trap.
llvm::Value* Lowering::divide(llvm::Value* a, llvm::Value* b, SourceLoc loc, bool div) {
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(b); k && k->isZero()) {
    b_.CreateBr(error_block(RtError::DivisionByZero, loc));
    enter(block("never"));  // what follows cannot run; it only has to be well formed
    return llvm::PoisonValue::get(a->getType());
  }
  check(b_.CreateICmpEQ(b, b_.getInt64(0), "is.zero"), RtError::DivisionByZero, loc,
        div ? "div.ok" : "rem.ok");
  llvm::Value* minus_one = b_.CreateICmpEQ(b, b_.getInt64(-1), "is.minus.one");
  llvm::Value* divisor = b_.CreateSelect(minus_one, b_.getInt64(1), b, "divisor");
  if (!div) return b_.CreateSRem(a, divisor, "rem");  // a % 1 == 0
  llvm::Value* q = b_.CreateSDiv(a, divisor, "quot");
  return b_.CreateSelect(minus_one, b_.CreateNeg(a, "neg"), q, "div");
}

llvm::Value* Lowering::call(const Expr& e) {
  if (e.kernel >= 0) return kernel_call(e);
  // One compare does both call checks: %depth >= descent_rt_call_limit, which is 10,000
  // unless the runtime watches every call (then 0). descent_rt_call_check ticks (interrupt,
  // step limit) and raises "stack overflow" at 10,000, in the walker's order; all before
  // the arguments are evaluated.
  llvm::Value* limit = load_watch(rt::kCallLimit, b_.getInt32Ty(), "call.limit");
  llvm::Value* slow_path = b_.CreateICmpSGE(st_->depth, limit, "call.watched");
  llvm::BasicBlock* slow = block("call.check");
  llvm::BasicBlock* ok = block("call.ok");
  b_.CreateCondBr(slow_path, slow, ok);
  enter(slow);
  b_.CreateCall(runtime(rt::kCallCheck),
                {st_->depth, b_.getInt32(input_of(e.loc)), b_.getInt32(e.loc.line),
                 b_.getInt32(e.loc.col)});
  b_.CreateBr(ok);
  enter(ok);
  add_site(RtError::StackOverflow, e.loc, "");
  std::vector<llvm::Value*> args;
  for (const auto& k : e.kids) args.push_back(expr(*k));
  check_tensor_args(e, args);
  args.push_back(st_->depth_next);
  llvm::Function* f = function(e.slot);
  bool is_void = f->getReturnType()->isVoidTy();
  if (spec_.through_slot && spec_.through_slot(e.slot)) {
    // The slot is written by another thread when the faster tier is ready: an acquire load
    // (a plain mov on x86-64, ldar on AArch64), so the call sees the old address or the new,
    // never half, and the new code's constants and GOT as they were linked.
    std::string name = slot_symbol(f->getName().str());
    auto* ptr = llvm::PointerType::getUnqual(c_);
    auto* slot = llvm::cast<llvm::GlobalVariable>(m_.getOrInsertGlobal(name, ptr));
    llvm::LoadInst* target = b_.CreateLoad(ptr, slot, "callee");
    target->setAtomic(llvm::AtomicOrdering::Acquire);
    target->setAlignment(llvm::Align(8));
    return b_.CreateCall(f->getFunctionType(), target, args, is_void ? "" : e.text);
  }
  return b_.CreateCall(f, args, is_void ? "" : e.text);
}

void Lowering::print_value(llvm::Value* v, Type t, SourceLoc loc) {
  switch (t) {
    case Type::Tensor: b_.CreateCall(tensor_helper(rt::kPrintTensor), {site(loc), v}); break;
    case Type::Shape: b_.CreateCall(tensor_helper(rt::kPrintShape), {site(loc), v}); break;
    case Type::Int: b_.CreateCall(runtime(rt::kPrintInt), {v}); break;
    case Type::Float: b_.CreateCall(runtime(rt::kPrintFloat), {v}); break;
    case Type::Bool:
      b_.CreateCall(runtime(rt::kPrintBool), {b_.CreateZExt(v, b_.getInt32Ty())});
      break;
    default: break;
  }
}

llvm::Value* Lowering::math(llvm::Intrinsic::ID id, llvm::Value* v, const char* name) {
  return b_.CreateUnaryIntrinsic(id, v, nullptr, name);
}

llvm::Value* Lowering::builtin(const Expr& e) {
  switch (e.builtin) {
    case Builtin::Print: {
      // Every argument first (one may print), then the line.
      std::vector<llvm::Value*> vals;
      for (const auto& k : e.kids) vals.push_back(k->kind == ExprKind::StrLit ? nullptr : expr(*k));
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (i) b_.CreateCall(runtime(rt::kPrintSpace));
        const Expr& k = *e.kids[i];
        if (k.kind == ExprKind::StrLit)
          b_.CreateCall(runtime(rt::kPrintStr), {b_.CreateGlobalStringPtr(k.text, ".str")});
        else
          print_value(vals[i], k.type, k.loc);
      }
      b_.CreateCall(runtime(rt::kPrintEnd));
      return nullptr;
    }
    case Builtin::ToFloat: {
      llvm::Value* v = expr(*e.kids[0]);
      if (e.kids[0]->type == Type::Int) v = b_.CreateSIToFP(v, b_.getDoubleTy(), "tofloat");
      return v;
    }
    case Builtin::ToInt: {
      llvm::Value* v = expr(*e.kids[0]);
      if (e.kids[0]->type == Type::Int) return v;
      // In range iff -2^63 <= v < 2^63 (both exact doubles); nan fails both compares.
      llvm::Value* lo = b_.CreateFCmpOGE(v, llvm::ConstantFP::get(b_.getDoubleTy(), -9223372036854775808.0));
      llvm::Value* hi = b_.CreateFCmpOLT(v, llvm::ConstantFP::get(b_.getDoubleTy(), 9223372036854775808.0));
      llvm::Value* ok = b_.CreateAnd(lo, hi, "in.range");
      check(b_.CreateNot(ok, "out.of.range"), RtError::InvalidConversion, e.loc, "conv.ok");
      return b_.CreateFPToSI(v, b_.getInt64Ty(), "int");
    }
    case Builtin::Abs: {
      llvm::Value* v = expr(*e.kids[0]);
      if (e.type == Type::Int)  // abs(INT_MIN) wraps to INT_MIN: not poison
        return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v, b_.getFalse(), nullptr, "abs");
      return math(llvm::Intrinsic::fabs, v, "abs");
    }
    case Builtin::Min:
    case Builtin::Max: {
      // The first argument unless the second is strictly smaller (larger): a nan decides
      // the same way as on every engine (value.h's int_min/float_min).
      llvm::Value* a = expr(*e.kids[0]);
      llvm::Value* b = expr(*e.kids[1]);
      bool mn = e.builtin == Builtin::Min;
      const char* name = mn ? "min" : "max";
      llvm::Value* pick;
      if (e.type == Type::Float) pick = mn ? b_.CreateFCmpOLT(b, a) : b_.CreateFCmpOGT(b, a);
      else pick = mn ? b_.CreateICmpSLT(b, a) : b_.CreateICmpSGT(b, a);
      return b_.CreateSelect(pick, b, a, name);
    }
    case Builtin::Sqrt: return math(llvm::Intrinsic::sqrt, expr(*e.kids[0]), "sqrt");
    case Builtin::Exp: return math(llvm::Intrinsic::exp, expr(*e.kids[0]), "exp");
    case Builtin::Log: return math(llvm::Intrinsic::log, expr(*e.kids[0]), "log");
    case Builtin::Sin: return math(llvm::Intrinsic::sin, expr(*e.kids[0]), "sin");
    case Builtin::Cos: return math(llvm::Intrinsic::cos, expr(*e.kids[0]), "cos");
    case Builtin::Floor: return math(llvm::Intrinsic::floor, expr(*e.kids[0]), "floor");
    case Builtin::None: break;
    case Builtin::Zeros: case Builtin::Ones: case Builtin::Rand: case Builtin::Arange:
    case Builtin::Load: case Builtin::Save: case Builtin::SumAll: case Builtin::Argmax:
    case Builtin::Reshape: case Builtin::Flatten: case Builtin::Rows: case Builtin::Eq:
    case Builtin::Mean: case Builtin::Grad: case Builtin::Param: case Builtin::Full:
      return tensor_builtin(e);
  }
  return nullptr;
}

}  // namespace descent::llvmbe::codegen_internal
