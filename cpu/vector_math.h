// Math functions the CPU code generator writes out as plain LLVM IR, so that they vectorize.
//
// Why: LLVM has an intrinsic for exp, but for a <16 x float> it can only call libm's expf
// sixteen times, one lane at a time (unless a vector math library is plugged in, which the JIT
// does not have). A loop whose body holds an exp then runs at scalar speed however well it is
// scheduled. Written as IR, exp is twenty-odd vector instructions: range reduction, a
// polynomial and some exponent-bit arithmetic, as SLEEF and MLAS do it.
#pragma once
#include <llvm/IR/IRBuilder.h>

namespace descent::cpu {

// e^x for x of type float or <W x float>, as straight-line IR built with b (no calls, no
// branches). Within 1 ulp of the exact e^x for every float input (0.99 ulp at worst, found
// by emulating the steps on all 2^32 bit patterns; tests/tensor/vector_math_test.cpp sweeps a
// stride of them through the real backend), so at most one float away from expf's correctly
// rounded result; subnormal results are rounded once, as expf rounds them. Special cases as
// expf: nan -> nan, +inf -> +inf, -inf -> +0, overflow -> +inf, underflow -> +0. On a
// machine without FMA (llvm.fmuladd is then a multiply and an add) the same emulation, on
// every 7th pattern, stays within 0.96 ulp.
// `scalef`: the machine has AVX-512F; a <16 x float> then scales by 2^n with one vscalefps
// (vector_math.cpp, step 5): the same bits in fewer instructions.
llvm::Value* emit_exp(llvm::IRBuilderBase& b, llvm::Value* x, bool scalef = false);

}  // namespace descent::cpu
