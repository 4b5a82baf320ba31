// exp as IR, the way vector math libraries (SLEEF, MLAS, Highway) compute it. See vector_math.h.
//
// The idea: write x = n ln2 + r with n an integer and |r| <= ln2 / 2. Then
//   e^x = 2^n * e^r,
// and each factor is easy. e^r on a small interval is a short polynomial; 2^n is a float
// whose exponent field is n + 127 and whose mantissa is zero, built with integer operations.
//
// Step by step (every operation is lane-wise, so the same code serves float and <W x float>):
//  1. Clamp x to [-104, 104]. Beyond that the answer is 0 or inf anyway, and the clamp keeps
//     n small enough for the exponent arithmetic. The clamp is select(x > lo, x, lo), which
//     x86 does in one vmaxps, and which also sends nan to -104: no nan reaches the integer
//     steps (a float -> int conversion of nan is poison in LLVM). Nan is put back at the end.
//  2. n = round(x / ln2), by the "magic number" trick: adding 1.5 * 2^23 to a float of
//     magnitude < 2^22 pushes its fraction bits out of the mantissa, rounding to nearest
//     even; the sum's low mantissa bits are then n itself (an integer subtraction of the
//     magic's bits reads it out) and subtracting the magic as a float gives n as a float.
//     No rounding instruction or float -> int conversion needed.
//  3. r = x - n ln2, in two steps (Cody and Waite): ln2 = ln2_hi + ln2_lo, where ln2_hi =
//     22713 / 2^15 has only 15 significant bits, so n * ln2_hi is exact for |n| < 512 and
//     x - n * ln2_hi loses nothing (the two are close); then n * ln2_lo, a tiny correction, is
//     subtracted. With a one-constant ln2 the rounding error of ln2 itself, times n (up to
//     150), would swamp r's last bits.
//  4. e^r = 1 + r + r^2 (c2 + c3 r + ... + c7 r^5), by Horner's rule with fused multiply-adds.
//     The coefficients are SLEEF's xexpf (Boost Software License): a minimax fit, i.e.
//     nudged away from the Taylor values 1/k! to spread the error evenly over the interval.
//     Adding the 1 last keeps the small terms' bits until the final rounding.
//  5. Multiply by 2^n. 2^n as bits is (n + 127) << 23, but only for -126 <= n <= 127, and n
//     reaches +-150 near the ends of the range. So multiply by 2^(n/2) and then by 2^(n - n/2):
//     each factor is a normal float, the first product is exact, and the second rounds once,
//     to inf above the largest float and to a correctly rounded subnormal (or 0) below the
//     smallest normal. Gradual underflow is therefore right without any special case.
//  6. nan in, nan out.
// With AVX-512 (`scalef`), steps 5 and 6 are one instruction: vscalefps computes y * 2^n from
// n as a float with a single rounding (gradual underflow and overflow to inf included, the
// same result as the two exact-then-once products), so no exponent bits are built. Clamping
// so that nan passes through (select(x < lo, lo, x)) then lets nan flow to the end by itself:
// 15 vector operations instead of 25, the same bits out.
// The error: at most 0.99 ulp against the exact e^x, measured over all 2^32 floats by
// emulating these steps in C++ with fmaf (tests/tensor/vector_math_test.cpp checks a sweep
// of them through the backend).
#include "cpu/vector_math.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <vector>

namespace descent::cpu {

llvm::Value* emit_exp(llvm::IRBuilderBase& b, llvm::Value* x, bool scalef) {
  // Every rounding below is placed by hand (the magic number of step 2 relies on t - magic
  // being rounded as written), so none of the caller's fast-math flags apply here.
  llvm::IRBuilderBase::FastMathFlagGuard keep_callers_flags(b);
  b.clearFastMathFlags();
  llvm::Type* ft = x->getType();  // float or <W x float>
  llvm::Type* it = ft->getWithNewType(b.getInt32Ty());
  auto f = [&](double c) { return llvm::ConstantFP::get(ft, c); };
  auto i = [&](uint64_t c) { return llvm::ConstantInt::get(it, c); };
  // fmuladd, not fma: a fused operation wherever the machine has FMA (what the accuracy above
  // was measured with), and a multiply and an add, not a libm call per lane, where it has not.
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ft}, {a, m, c});
  };

  // vscalefps takes 16 lanes (its 256- and 128-bit forms need AVX512VL: not asked for); a
  // wider vector (a loop vectorized 64 wide) goes through it 16 lanes at a time.
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(ft);
  scalef = scalef && vt && vt->getNumElements() % 16 == 0;

  // 1. clamp (nan -> -104; with scalef nan stays nan: no integer step follows)
  llvm::Value* lo = f(-104.0);
  llvm::Value* hi = f(104.0);
  llvm::Value* xc = scalef ? b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x)
                           : b.CreateSelect(b.CreateFCmpOGT(x, lo), x, lo);
  xc = scalef ? b.CreateSelect(b.CreateFCmpOGT(xc, hi), hi, xc)
              : b.CreateSelect(b.CreateFCmpOLT(xc, hi), xc, hi);

  // 2. n = round(x log2(e)), as an i32 and as a float
  const double magic = 12582912.0;  // 1.5 * 2^23
  llvm::Value* t = fmuladd(xc, f(1.44269504088896341), f(magic));
  llvm::Value* nf = b.CreateFSub(t, f(magic));

  // 3. r = x - n ln2 (Cody-Waite: ln2_hi + ln2_lo)
  llvm::Value* r = fmuladd(nf, f(-0.693145751953125), xc);
  r = fmuladd(nf, f(-1.428606765330187045e-06), r);

  // 4. e^r = 1 + (r + r^2 p(r))
  static const double c[] = {0.000198527617612853646278381, 0.00139304355252534151077271,
                             0.00833336077630519866943359,  0.0416664853692054748535156,
                             0.166666671633720397949219,    0.5};
  llvm::Value* p = f(c[0]);
  for (size_t k = 1; k < sizeof c / sizeof c[0]; ++k) p = fmuladd(p, r, f(c[k]));
  llvm::Value* y = b.CreateFAdd(fmuladd(b.CreateFMul(r, r), p, r), f(1.0));

  // 5. with scalef: y * 2^n in one rounding (mask all ones, the current rounding mode)
  if (scalef) {
    auto* v16 = llvm::FixedVectorType::get(b.getFloatTy(), 16);
    auto scale16 = [&](llvm::Value* y16, llvm::Value* n16) -> llvm::Value* {
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                               {y16, n16, llvm::Constant::getNullValue(v16), b.getInt16(0xFFFF),
                                b.getInt32(4)});
    };
    const unsigned lanes = vt->getNumElements();
    if (lanes == 16) return scale16(y, nf);
    llvm::Value* out = llvm::PoisonValue::get(ft);
    for (unsigned c = 0; c < lanes / 16; ++c) {
      std::vector<int> part, back(lanes);
      for (unsigned l = 0; l < 16; ++l) part.push_back(int(c * 16 + l));
      llvm::Value* r = scale16(b.CreateShuffleVector(y, part), b.CreateShuffleVector(nf, part));
      // Widen the 16 lanes back to `lanes` (the rest undefined), then blend them into place.
      for (unsigned l = 0; l < lanes; ++l) back[l] = l < 16 ? int(l) : -1;
      llvm::Value* wide = b.CreateShuffleVector(r, back);
      std::vector<int> blend(lanes);
      for (unsigned l = 0; l < lanes; ++l)
        blend[l] = l >= c * 16 && l < c * 16 + 16 ? int(lanes + l - c * 16) : int(l);
      out = b.CreateShuffleVector(out, wide, blend);
    }
    return out;
  }

  // 5. y * 2^(n >> 1) * 2^(n - (n >> 1)), each factor built from exponent bits
  llvm::Value* n = b.CreateSub(b.CreateBitCast(t, it), i(0x4B400000));  // magic's bits
  auto pow2 = [&](llvm::Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, i(127)), i(23)), ft);
  };
  llvm::Value* n1 = b.CreateAShr(n, i(1));
  y = b.CreateFMul(y, pow2(n1));
  y = b.CreateFMul(y, pow2(b.CreateSub(n, n1)));

  // 6. nan stays nan
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

}  // namespace descent::cpu
