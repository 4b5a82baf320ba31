// Lab llvm_strength: the pass you write (in strength.cpp), and what the checker does with it.
//
// The checker lowers each program to LLVM IR with Descent's own codegen
// (llvm_backend/codegen.h), runs your pass on every function through the new pass manager
// (a FunctionPassManager), verifies the module (llvm::verifyModule), then looks at the IR
// and runs it on the JIT at -O0 (llvm_backend/jit.h: set_ir_transform), so nothing but
// your pass changes it, comparing what it prints with the AST walker.
#pragma once
#include <llvm/IR/Function.h>
#include <llvm/IR/PassManager.h>

// Write StrengthReducePass::run in strength.cpp. In every basic block of `f`:
//   mul i64 %x, C  and  mul i64 C, %x   where C is 2^k (C->getValue().isPowerOf2(),
//       k = exactLogBase2(); 1 and 2^63 = -9223372036854775808 count too)
//       -> shl i64 %x, k
//   sdiv i64 %x, C                       where C is 2^k with 1 <= k <= 62 (2, 4, ..., 2^62)
//       -> shifts and adds that give the same quotient for every %x, negative ones included
//          (LANGUAGE.md: `/` truncates toward zero: -7 / 2 is -3)
// Replace every use of the old instruction with the new value, then erase the old one.
// Leave everything else as it is (a negative C, sdiv by 1, by -4 or by 2^63, any other
// instruction). Return llvm::PreservedAnalyses::none() if you changed anything, and
// llvm::PreservedAnalyses::all() if you did not.
struct StrengthReducePass : llvm::PassInfoMixin<StrengthReducePass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};
