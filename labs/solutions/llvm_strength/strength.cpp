// Lab llvm_strength, the reference solution: mul by 2^k -> shl; sdiv by 2^k -> a biased
// arithmetic shift, rounding toward zero as LANGUAGE.md's `/` does.
#include "strength_lab.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>

namespace {

// The constant operand as 2^k, or -1 when it is not a power of two (as an unsigned number).
int log2_of(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c && c->getValue().isPowerOf2() ? static_cast<int>(c->getValue().exactLogBase2()) : -1;
}

// The replacement for `bo`, or null to leave it alone.
llvm::Value* reduce(llvm::BinaryOperator& bo) {
  llvm::IRBuilder<> b(&bo);
  llvm::Value* x = bo.getOperand(0);
  llvm::Value* y = bo.getOperand(1);
  if (bo.getOpcode() == llvm::Instruction::Mul) {
    if (int k = log2_of(y); k >= 0) return b.CreateShl(x, k, bo.getName());
    if (int k = log2_of(x); k >= 0) return b.CreateShl(y, k, bo.getName());
    return nullptr;
  }
  if (bo.getOpcode() == llvm::Instruction::SDiv) {
    int k = log2_of(y);
    unsigned bits = x->getType()->getIntegerBitWidth();
    // 2^(bits-1) is negative as a signed divisor; sdiv by 1 needs no shift (and the bias
    // below would shift by `bits`, which is poison).
    if (k < 1 || k >= static_cast<int>(bits) - 1) return nullptr;
    // An arithmetic shift rounds toward minus infinity; adding 2^k - 1 to a negative
    // dividend first makes it round toward zero: -7 / 2 = (-7 + 1) >> 1 = -3.
    llvm::Value* sign = b.CreateAShr(x, bits - 1, "sign");             // -1 or 0
    llvm::Value* bias = b.CreateLShr(sign, bits - k, "bias");          // 2^k - 1 or 0
    llvm::Value* biased = b.CreateAdd(x, bias, "biased");
    return b.CreateAShr(biased, k, bo.getName());
  }
  return nullptr;
}

}  // namespace

llvm::PreservedAnalyses StrengthReducePass::run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
  bool changed = false;
  for (llvm::BasicBlock& block : f)
    for (llvm::Instruction& inst : llvm::make_early_inc_range(block)) {
      auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
      if (!bo || !bo->getType()->isIntegerTy()) continue;
      if (llvm::Value* v = reduce(*bo)) {
        bo->replaceAllUsesWith(v);
        bo->eraseFromParent();
        changed = true;
      }
    }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}
