// Stage 4 on AArch64: the second target's pattern table and what each pattern emits (the
// dynamic programme that picks the cheapest cover is shared: isel_internal.h).
//
// What the table says differently from x86-64's (isel.cpp), and what the cover then finds:
//   - constants cost what building them costs: one movz or movn for a single 16-bit chunk,
//     one orr for a logical immediate (a rotated run of ones, repeated), else one movz and a
//     movk per further chunk;
//   - add/sub/cmp take 12-bit immediates (a negative one flips add into sub, cmp into cmn);
//     and takes a logical immediate; anything else is a register;
//   - a product used once inside an add or a sub is not computed apart: `a * b + c` is one
//     madd, `c - a * b` one msub (the prod nonterminal carries the product's two registers);
//   - a branch on a 0/1 in a register, or on its negation, is one cbnz or cbz, where x86-64
//     needs test + jne (the zero nonterminal carries not(reg) up to the branch);
//   - every float comparison is one fcmp whose flags one condition reads, nan included (ne
//     and the n* forms hold for a nan, the rest do not), so no comparison needs two flags;
//   - sdiv does not trap: the only division check left is the one for zero (legalize.cpp).
// Emission (prologue, the bytes through a64.h's encoder) is not written yet: the views run
// as far as register allocation.
#include "native/a64.h"
#include "native/isel_internal.h"

namespace descent::native {

using namespace isel;

namespace {

// The Const operand k of n, if any.
const Node* const_op(const Block& b, const Node& n, size_t k) {
  if (k >= n.ops.size()) return nullptr;
  const Node& c = b.nodes[static_cast<size_t>(n.ops[k])];
  return c.kind == NK::Const ? &c : nullptr;
}
bool imm12(const Block& b, const Node& n) {
  const Node* c = const_op(b, n, 1);
  return c && c->imm >= 0 && c->imm < 4096;
}
bool neg_imm12(const Block& b, const Node& n) {
  const Node* c = const_op(b, n, 1);
  return c && c->imm < 0 && c->imm > -4096;
}
bool logical_imm(const Block& b, const Node& n) {
  const Node* c = const_op(b, n, 1);
  uint32_t bits = 0;
  return c && a64::encode_logical_imm(static_cast<uint64_t>(c->imm), &bits);
}

// The instructions a constant takes: movz + a movk per further non-zero 16-bit chunk, or
// movn + a movk per further chunk that is not 0xffff, whichever is fewer.
int chunks(int64_t v) {
  auto u = static_cast<uint64_t>(v);
  int zero = 0, ones = 0;
  for (int s = 0; s < 64; s += 16) {
    uint64_t c = (u >> s) & 0xffff;
    zero += c != 0;
    ones += c != 0xffff;
  }
  return std::max(1, std::min(zero, ones));
}
bool one_chunk(const Block&, const Node& n) { return chunks(n.imm) == 1; }
bool is_logical(const Block&, const Node& n) {
  uint32_t bits = 0;
  return a64::encode_logical_imm(static_cast<uint64_t>(n.imm), &bits);
}
bool two_chunks(const Block&, const Node& n) { return chunks(n.imm) == 2; }
bool three_chunks(const Block&, const Node& n) { return chunks(n.imm) == 3; }
bool four_chunks(const Block&, const Node& n) { return chunks(n.imm) == 4; }


#define P(name, res, node, shape, cost, emits) {name, #res, NK::node, shape, cost, emits}
// The pattern table. Names are LLVM's AArch64 opcode names where one instruction is meant.
const std::vector<PatternDef>& table() {
  static const std::vector<PatternDef> t = {
      {P("IMM", imm, Const, "const", 0, "(an operand, if the instruction's field takes it)"), kImm, {}},
      {P("MOVZXi", reg, Const, "const", 1, "movz x, #imm16, lsl #s"), kReg, {}, false, one_chunk},
      {P("ORRXri", reg, Const, "const", 1, "orr x, xzr, #logical"), kReg, {}, false, is_logical},
      {P("MOVZ+MOVK", reg, Const, "const", 2, "movz (or movn); movk"), kReg, {}, false, two_chunks},
      {P("MOVZ+2MOVK", reg, Const, "const", 3, "movz (or movn); movk; movk"), kReg, {}, false, three_chunks},
      {P("MOVZ+3MOVK", reg, Const, "const", 4, "movz; movk; movk; movk"), kReg, {}, false, four_chunks},
      {P("FMOVDi.gpr", freg, FLoadConst, "fconst.bits", 2, "mov x16, bits; fmov d, x16"), kFreg, {}},
      {P("ADDXrr", reg, Add, "add(reg, reg)", 1, "add x, x, x"), kReg, {kReg, kReg}},
      {P("ADDXri", reg, Add, "add(reg, imm)", 1, "add x, x, #imm12"), kReg, {kReg, kImm}, false, imm12},
      {P("SUBXri.neg", reg, Add, "add(reg, -imm)", 1, "sub x, x, #imm12"), kReg, {kReg, kImm}, false, neg_imm12},
      {P("SUBXrr", reg, Sub, "sub(reg, reg)", 1, "sub x, x, x"), kReg, {kReg, kReg}},
      {P("SUBXri", reg, Sub, "sub(reg, imm)", 1, "sub x, x, #imm12"), kReg, {kReg, kImm}, false, imm12},
      {P("ADDXri.neg", reg, Sub, "sub(reg, -imm)", 1, "add x, x, #imm12"), kReg, {kReg, kImm}, false, neg_imm12},
      {P("MADDXrrr", reg, Add, "add(prod, reg)", 1, "madd x, a, b, c"), kReg, {kProd, kReg}},
      {P("MADDXrrr.r", reg, Add, "add(reg, prod)", 1, "madd x, a, b, c"), kReg, {kReg, kProd}},
      {P("MSUBXrrr", reg, Sub, "sub(reg, prod)", 1, "msub x, a, b, c"), kReg, {kReg, kProd}},
      {P("MUL.prod", prod, Mul, "mul(reg, reg)", 0, "(madd's or msub's a * b)"), kProd, {kReg, kReg}},
      {P("MULXrr", reg, Mul, "mul(reg, reg)", 1, "mul x, x, x (madd with xzr)"), kReg, {kReg, kReg}},
      {P("ANDXrr", reg, And, "and(reg, reg)", 1, "and x, x, x"), kReg, {kReg, kReg}},
      {P("ANDXri", reg, And, "and(reg, imm)", 1, "and x, x, #logical"), kReg, {kReg, kImm}, false, logical_imm},
      {P("LSLXri", reg, Shl, "shl(reg, imm)", 1, "lsl x, x, #imm (ubfm)"), kReg, {kReg, kImm}},
      {P("ASRXri", reg, Sra, "sra(reg, imm)", 1, "asr x, x, #imm (sbfm)"), kReg, {kReg, kImm}},
      {P("LSRXri", reg, Srl, "srl(reg, imm)", 1, "lsr x, x, #imm (ubfm)"), kReg, {kReg, kImm}},
      {P("NEGXr", reg, Neg, "neg(reg)", 1, "neg x, x (sub from xzr)"), kReg, {kReg}},
      {P("EORXri", reg, Not, "not(reg)", 1, "eor x, x, #1"), kReg, {kReg}},
      {P("ABS", reg, Abs, "abs(reg)", 2, "cmp x, #0; cneg x, x, lt"), kReg, {kReg}},
      {P("SMIN", reg, SMin, "smin(reg, reg)", 2, "cmp a, b; csel x, a, b, lt"), kReg, {kReg, kReg}},
      {P("SMAX", reg, SMax, "smax(reg, reg)", 2, "cmp a, b; csel x, a, b, gt"), kReg, {kReg, kReg}},
      {P("SUBSXrr", flags, SetCC, "setcc(reg, reg)", 1, "cmp x, x"), kFlags, {kReg, kReg}},
      {P("SUBSXri", flags, SetCC, "setcc(reg, imm)", 1, "cmp x, #imm12"), kFlags, {kReg, kImm}, false, imm12},
      {P("ADDSXri", flags, SetCC, "setcc(reg, -imm)", 1, "cmn x, #imm12"), kFlags, {kReg, kImm}, false, neg_imm12},
      {P("FCMPDrr", flags, FSetCC, "fsetcc(freg, freg)", 1, "fcmp d, d"), kFlags, {kFreg, kFreg}},
      {P("CSELXr", reg, Select, "select(flags, reg, reg)", 1, "csel x, t, f, cc"), kReg, {kFlags, kReg, kReg}},
      {P("FADDDrr", freg, FAdd, "fadd(freg, freg)", 1, "fadd d, d, d"), kFreg, {kFreg, kFreg}},
      {P("FSUBDrr", freg, FSub, "fsub(freg, freg)", 1, "fsub d, d, d"), kFreg, {kFreg, kFreg}},
      {P("FMULDrr", freg, FMul, "fmul(freg, freg)", 1, "fmul d, d, d"), kFreg, {kFreg, kFreg}},
      {P("FDIVDrr", freg, FDiv, "fdiv(freg, freg)", 1, "fdiv d, d, d"), kFreg, {kFreg, kFreg}},
      // Not fmin/fmax: they give nan when either operand is one, where the language's min(a, b)
      // is "b < a ? b : a" (a nan b gives a back).
      {P("FCSEL.min", freg, FMin, "fmin(freg, freg)", 2, "fcmp b, a; fcsel d, b, a, mi"), kFreg, {kFreg, kFreg}},
      {P("FCSEL.max", freg, FMax, "fmax(freg, freg)", 2, "fcmp b, a; fcsel d, b, a, gt"), kFreg, {kFreg, kFreg}},
      {P("FSQRTDr", freg, FSqrt, "fsqrt(freg)", 1, "fsqrt d, d"), kFreg, {kFreg}},
      {P("FNEGDr", freg, FNeg, "fneg(freg)", 1, "fneg d, d"), kFreg, {kFreg}},
      {P("FABSDr", freg, FAbs, "fabs(freg)", 1, "fabs d, d"), kFreg, {kFreg}},
      {P("SCVTFUXDri", freg, IToF, "sitofp(reg)", 1, "scvtf d, x"), kFreg, {kReg}},
      {P("FCVTZS.chk", reg, FToI, "fptosi(freg)", 4, "fcmp d, d; b.vs error; range checks; fcvtzs x, d"), kReg,
       {kFreg}},
      {P("LIBCALL", freg, LibCall, "libcall(freg...)", 2, "ldr x16, [x28, #helper]; blr x16"), kFreg, {}, true},
      {P("SMULHrr", reg, MulHS, "mulhs(reg, reg)", 1, "smulh x, x, x"), kReg, {kReg, kReg}},
      {P("SDIVXr", reg, SDivSafe, "sdiv.safe(reg, reg)", 1, "sdiv x, x, x"), kReg, {kReg, kReg}},
      {P("SREM", reg, SRemSafe, "srem.safe(reg, reg)", 2, "sdiv x16, a, b; msub x, x16, b, a"), kReg,
       {kReg, kReg}},
      {P("CBZ.divcheck", stmt, DivCheck, "divcheck(reg)", 1, "cbz x, error"), kStmt, {kReg}},
      {P("B.divcheck", stmt, DivCheck, "divcheck(imm)", 1, "b error"), kStmt, {kImm}},
      {P("LDRXui.g", reg, Global, "global", 2, "ldr x16, [x28]; ldr x, [x16, #8i]"), kReg, {}, false, int_global},
      {P("LDRDui.g", freg, Global, "global", 2, "ldr x16, [x28]; ldr d, [x16, #8i]"), kFreg, {}, false,
       float_global},
      {P("LDRXui.g.chk", reg, GlobalChk, "global.chk", 4, "ldrb w16, [D, #i]; cbz w16, error; load"), kReg, {},
       false, int_global},
      {P("LDRDui.g.chk", freg, GlobalChk, "global.chk", 4, "ldrb w16, [D, #i]; cbz w16, error; load"), kFreg,
       {}, false, float_global},
      {P("STRXui.g", stmt, SetGlobal, "setglobal(reg)", 4, "str x, [x16, #8i]; strb (1), [D, #i]"), kStmt,
       {kReg}},
      {P("STRDui.g", stmt, SetGlobal, "setglobal(freg)", 4, "str d, [x16, #8i]; strb (1), [D, #i]"), kStmt,
       {kFreg}},
      {P("COPY", stmt, SetReg, "setreg(reg)", 1, "mov x, x"), kStmt, {kReg}},
      {P("COPY.f", stmt, SetReg, "setreg(freg)", 1, "fmov d, d"), kStmt, {kFreg}},
      {P("BLR", reg, Call, "call(...)", 2, "ldr x16, [x28, #8f]; blr x16"), kReg, {}, true, int_value},
      {P("BLR.f", freg, Call, "call(...)", 2, "ldr x16, [x28, #8f]; blr x16"), kFreg, {}, true, float_value},
      {P("BLR.void", stmt, Call, "call(...)", 2, "ldr x16, [x28, #8f]; blr x16"), kStmt, {}, true, void_value},
      {P("PRINT", stmt, Print, "print(...)", 2, "blr helpers"), kStmt, {}, true},
      {P("ECHO", stmt, Echo, "echo(reg)", 2, "blr helpers"), kStmt, {kReg}},
      {P("ECHO.f", stmt, Echo, "echo(freg)", 2, "blr helpers"), kStmt, {kFreg}},
      {P("CALLCHECK", stmt, CallCheck, "callcheck", 3, "ldr x16, [x28, #limit]; cmp x27, x16; b.ge slow"), kStmt,
       {}},
      {P("TICK", stmt, Tick, "tick", 3, "ldr x16, [x28, #poll]; ldrb w16, [x16]; cbnz w16, slow"), kStmt, {}},
      {P("B", stmt, Br, "br", 1, "b L"), kStmt, {}},
      {P("Bcc", stmt, BrCond, "brcond(flags)", 1, "b.cc L"), kStmt, {kFlags}},
      {P("CBNZX", stmt, BrCond, "brcond(reg)", 1, "cbnz x, L"), kStmt, {kReg}},
      {P("NOT.zero", zero, Not, "not(reg)", 0, "(cbz's operand)"), kZero, {kReg}},
      {P("CBZX", stmt, BrCond, "brcond(zero)", 1, "cbz x, L"), kStmt, {kZero}},
      {P("RET", stmt, Ret, "ret(reg)", 1, "mov x0, x; epilogue"), kStmt, {kReg}},
      {P("RET.f", stmt, Ret, "ret(freg)", 1, "fmov d0, d; epilogue"), kStmt, {kFreg}},
      {P("RET.void", stmt, Ret, "ret", 1, "epilogue"), kStmt, {}, false, no_operand},
      {P("HALT", stmt, Halt, "halt", 1, "epilogue"), kStmt, {}},
      // Chain rules (from here on: never matched against a node).
      {P("CSINCXr", reg, SetCC, "flags -> reg", 1, "cset x, cc (csinc x, xzr, xzr, !cc)"), kReg, {}},
      {P("SUBSXri.0", flags, Const, "reg -> flags", 1, "cmp x, #0 (ne)"), kFlags, {}},
  };
  return t;
}
#undef P

int rule(const char* name) {
  const auto& t = table();
  for (size_t r = 0; r < t.size(); ++r)
    if (std::string(t[r].p.name) == name) return static_cast<int>(r);
  return -1;
}

using a64::Cond;

Cond int_cond(CC c) {
  switch (c) {
    case CC::eq: return Cond::eq;
    case CC::ne: return Cond::ne;
    case CC::lt: return Cond::lt;
    case CC::le: return Cond::le;
    case CC::gt: return Cond::gt;
    case CC::ge: return Cond::ge;
    default: return Cond::eq;
  }
}
// After fcmp, an unordered pair sets C and V (N = Z = 0): gt/ge/eq and mi/ls are false, ne and
// their negations true; so each CC, nan included, is one condition.
Cond float_cond(CC c) {
  switch (c) {
    case CC::eq: return Cond::eq;
    case CC::ne: return Cond::ne;
    case CC::gt: return Cond::gt;
    case CC::ge: return Cond::ge;
    case CC::lt: return Cond::mi;
    case CC::le: return Cond::ls;
    case CC::nlt: return Cond::pl;
    case CC::nle: return Cond::hi;
    case CC::ngt: return Cond::le;
    case CC::nge: return Cond::lt;
  }
  return Cond::eq;
}

class A64Selector : public Selector {
 public:
  A64Selector(const Function& f, MFunction& out, const Table& t) : Selector(f, out, t) {}

 private:
  int prod_a_ = -1, prod_b_ = -1;  // MUL.prod's registers (NOT.zero's in prod_a_), for the
                                   // instruction above it

  int reduce_rule(int r, int id, const Node& n, int dest, int64_t* imm) override {
    const std::string name = r >= 0 ? table()[static_cast<size_t>(r)].p.name : "";
    auto un = [&](MOp op, VT vt, NT kid_nt) {
      int a = kid(id, 0, kid_nt);
      int d = out(dest, vt);
      emit(op, d, {a}, r, id);
      return d;
    };
    auto bin = [&](MOp op, VT vt, NT kid_nt) {
      int a = kid(id, 0, kid_nt), b = kid(id, 1, kid_nt);
      int d = out(dest, vt);
      emit(op, d, {a, b}, r, id);
      return d;
    };
    auto bin_imm = [&](MOp op, int64_t sign) {
      int64_t k = 0;
      int a = kid(id, 0, kReg);
      kid(id, 1, kImm, &k);
      int d = out(dest, VT::I64);
      emit(op, d, {a}, r, id).imm = sign * k;
      return d;
    };
    auto flags = [&](MOp op, int64_t sign, Cond c) {
      if (op == MOp::CMP) {
        emit(op, -1, {kid(id, 0, kReg), kid(id, 1, kReg)}, r, id);
      } else {
        int64_t k = 0;
        int a = kid(id, 0, kReg);
        kid(id, 1, kImm, &k);
        emit(op, -1, {a}, r, id).imm = sign * k;  // cmn x, #k is cmp x, #-k
      }
      flags_cc_ = static_cast<int>(c);
      return -1;
    };
    if (name == "IMM") { *imm = n.imm; return -1; }
    if (name == "MOVZXi" || name == "ORRXri" || name.rfind("MOVZ+", 0) == 0) {
      int d = out(dest, VT::I64);
      emit(MOp::MOVI, d, {}, r, id).imm = n.imm;
      return d;
    }
    if (name == "FMOVDi.gpr") {
      int d = out(dest, VT::F64);
      emit(MOp::FMOVI, d, {}, r, id).imm = n.imm;
      return d;
    }
    if (name == "ADDXrr") return bin(MOp::ADD, VT::I64, kReg);
    if (name == "SUBXrr") return bin(MOp::SUB, VT::I64, kReg);
    if (name == "MULXrr") return bin(MOp::IMUL, VT::I64, kReg);
    if (name == "ANDXrr") return bin(MOp::AND, VT::I64, kReg);
    if (name == "SMULHrr") return bin(MOp::MULHS, VT::I64, kReg);
    if (name == "SDIVXr") return bin(MOp::SDIVSAFE, VT::I64, kReg);
    if (name == "SREM") return bin(MOp::SREMSAFE, VT::I64, kReg);
    if (name == "SMIN") return bin(MOp::SMIN, VT::I64, kReg);
    if (name == "SMAX") return bin(MOp::SMAX, VT::I64, kReg);
    if (name == "ADDXri") return bin_imm(MOp::ADDI, 1);
    if (name == "SUBXri.neg") return bin_imm(MOp::SUBI, -1);
    if (name == "SUBXri") return bin_imm(MOp::SUBI, 1);
    if (name == "ADDXri.neg") return bin_imm(MOp::ADDI, -1);
    if (name == "ANDXri") return bin_imm(MOp::ANDI, 1);
    if (name == "LSLXri") return bin_imm(MOp::SHLI, 1);
    if (name == "ASRXri") return bin_imm(MOp::SARI, 1);
    if (name == "LSRXri") return bin_imm(MOp::SHRI, 1);
    if (name == "MUL.prod") {
      // Both operands first: one of them may hold a madd of its own, whose MUL.prod sets
      // these members while it is reduced.
      int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
      prod_a_ = a;
      prod_b_ = b;
      return -1;
    }
    if (name == "MADDXrrr" || name == "MADDXrrr.r" || name == "MSUBXrrr") {
      // madd d, a, b, c = c + a * b; msub d, a, b, c = c - a * b. The addend first, then the
      // product's operands (kid order is the order of evaluation).
      bool prod_first = name == "MADDXrrr";
      int c = -1;
      if (!prod_first) c = kid(id, 0, kReg);
      kid(id, prod_first ? 0 : 1, kProd);
      int a = prod_a_, b = prod_b_;
      if (prod_first) c = kid(id, 1, kReg);
      int d = out(dest, VT::I64);
      emit(name == "MSUBXrrr" ? MOp::MSUB : MOp::MADD, d, {a, b, c}, r, id);
      return d;
    }
    if (name == "NEGXr") return un(MOp::NEG, VT::I64, kReg);
    if (name == "ABS") return un(MOp::ABS, VT::I64, kReg);
    if (name == "EORXri") {
      int d = un(MOp::XORI, VT::I64, kReg);
      code_->back().imm = 1;
      return d;
    }
    if (name == "SUBSXrr") return flags(MOp::CMP, 1, int_cond(static_cast<CC>(n.aux)));
    if (name == "SUBSXri") return flags(MOp::CMPI, 1, int_cond(static_cast<CC>(n.aux)));
    if (name == "ADDSXri") return flags(MOp::CMPI, 1, int_cond(static_cast<CC>(n.aux)));
    if (name == "FCMPDrr") {
      int a = kid(id, 0, kFreg), b = kid(id, 1, kFreg);
      emit(MOp::UCOMI, -1, {a, b}, r, id);
      flags_cc_ = static_cast<int>(float_cond(static_cast<CC>(n.aux)));
      return -1;
    }
    if (name == "SUBSXri.0") {  // a 0/1 into flags
      int a = reduce(id, kReg);
      emit(MOp::CMPI, -1, {a}, r, id).imm = 0;
      flags_cc_ = static_cast<int>(Cond::ne);
      return -1;
    }
    if (name == "CSINCXr") {  // flags into a 0/1
      reduce(id, kFlags);
      int d = out(dest, VT::I64);
      emit(MOp::SETCC, d, {}, r, id).cc = flags_cc_;
      return d;
    }
    if (name == "CSELXr") {
      int t = kid(id, 1, kReg), e = kid(id, 2, kReg);
      kid(id, 0, kFlags);
      int d = out(dest, VT::I64);
      emit(MOp::CMOV, d, {t, e}, r, id).cc = flags_cc_;
      return d;
    }
    static const std::pair<const char*, MOp> fbin[] = {{"FADDDrr", MOp::FADD}, {"FSUBDrr", MOp::FSUB},
                                                      {"FMULDrr", MOp::FMUL}, {"FDIVDrr", MOp::FDIV},
                                                      {"FCSEL.min", MOp::FMIN}, {"FCSEL.max", MOp::FMAX}};
    for (const auto& [fname, op] : fbin)
      if (name == fname) return bin(op, VT::F64, kFreg);
    if (name == "FSQRTDr") return un(MOp::FSQRT, VT::F64, kFreg);
    if (name == "FNEGDr") return un(MOp::FNEG, VT::F64, kFreg);
    if (name == "FABSDr") return un(MOp::FABS, VT::F64, kFreg);
    if (name == "SCVTFUXDri") return un(MOp::CVTSI2SD, VT::F64, kReg);
    if (name == "FCVTZS.chk") {
      int d = un(MOp::CVTTSD2SI, VT::I64, kFreg);
      code_->back().site = n.site;
      return d;
    }
    if (name == "LIBCALL") {
      std::vector<int> args;
      for (size_t k = 0; k < n.ops.size(); ++k) args.push_back(kid(id, k, kFreg));
      int d = out(dest, VT::F64);
      MInst& m = emit(MOp::CALLH, d, args, r, id);
      m.aux = static_cast<int>(n.aux < 0 ? Helper::Fmod : Helper::Math);
      m.imm = n.aux;
      return d;
    }
    if (name == "CBZ.divcheck") {
      emit(MOp::DIVCHECK, -1, {kid(id, 0, kReg)}, r, id).site = n.site;
      return -1;
    }
    if (name == "B.divcheck") {
      int64_t k = 0;
      kid(id, 0, kImm, &k);
      if (k != 0) return -1;
      MInst& m = emit(MOp::DIVCHECK, -1, {}, r, id);
      m.site = n.site;
      m.imm = 1;
      return -1;
    }
    if (name.rfind("LDR", 0) == 0) {
      int d = out(dest, n.type);
      MInst& m = emit(name.find(".chk") != std::string::npos ? MOp::LDGCHK : MOp::LDG, d, {}, r, id);
      m.aux = n.aux;
      m.site = n.site;
      return d;
    }
    if (name == "STRXui.g" || name == "STRDui.g") {
      int a = kid(id, 0, name == "STRXui.g" ? kReg : kFreg);
      emit(MOp::STG, -1, {a}, r, id).aux = n.aux;
      return -1;
    }
    if (name == "COPY" || name == "COPY.f") {
      reduce(n.ops[0], name == "COPY" ? kReg : kFreg, n.aux);
      return -1;
    }
    if (name.rfind("BLR", 0) == 0) {
      std::vector<int> args;
      for (size_t k = 0; k < n.ops.size(); ++k)
        args.push_back(kid(id, k, blk_->nodes[static_cast<size_t>(n.ops[k])].type == VT::F64 ? kFreg : kReg));
      int d = name == "BLR.void" ? -1 : out(dest, n.type);
      emit(MOp::CALL, d, args, r, id).aux = n.aux;
      return d;
    }
    if (name == "PRINT") {
      std::vector<int> args;
      for (size_t k = 0; k < n.ops.size(); ++k)
        args.push_back(kid(id, k, blk_->nodes[static_cast<size_t>(n.ops[k])].type == VT::F64 ? kFreg : kReg));
      print_calls(n, args, r, id);
      return -1;
    }
    if (name == "ECHO" || name == "ECHO.f") {
      int a = kid(id, 0, name == "ECHO" ? kReg : kFreg);
      auto t = static_cast<Type>(n.aux);
      Helper h = t == Type::Float ? Helper::PrintFloat : t == Type::Bool ? Helper::PrintBool : Helper::PrintInt;
      emit(MOp::CALLH, -1, {a}, r, id).aux = static_cast<int>(h);
      emit(MOp::CALLH, -1, {}, r, id).aux = static_cast<int>(Helper::PrintEnd);
      return -1;
    }
    if (name == "CALLCHECK") { emit(MOp::CALLCHECK, -1, {}, r, id).site = n.site; return -1; }
    if (name == "TICK") { emit(MOp::TICK, -1, {}, r, id).site = n.site; return -1; }
    if (name == "B") { emit(MOp::JMP, -1, {}, r, id).target = n.aux; return -1; }
    if (name == "Bcc") {
      kid(id, 0, kFlags);
      MInst& m = emit(MOp::JCC, -1, {}, r, id);
      m.cc = flags_cc_;
      m.target = n.aux;
      return -1;
    }
    if (name == "NOT.zero") {
      prod_a_ = kid(id, 0, kReg);
      return -1;
    }
    if (name == "CBZX") {
      kid(id, 0, kZero);
      MInst& m = emit(MOp::CBZ, -1, {prod_a_}, r, id);
      m.target = n.aux;
      return -1;
    }
    if (name == "CBNZX") {
      MInst& m = emit(MOp::CBNZ, -1, {kid(id, 0, kReg)}, r, id);
      m.target = n.aux;
      return -1;
    }
    if (name == "RET" || name == "RET.f") {
      emit(MOp::RET, -1, {kid(id, 0, name == "RET" ? kReg : kFreg)}, r, id);
      return -1;
    }
    if (name == "RET.void") { emit(MOp::RET, -1, {}, r, id); return -1; }
    if (name == "HALT") { emit(MOp::HALT, -1, {}, r, id); return -1; }
    return -1;
  }
};

const Table& a64_table() {
  static const Table t = {&table(), rule("CSINCXr"), rule("CSINCXr"), rule("SUBSXri.0"), -1};
  return t;
}

}  // namespace

const std::vector<Pattern>& a64_patterns() {
  static const std::vector<Pattern> p = pattern_list(table());
  return p;
}

void select_a64(const Function& f, MFunction& out) {
  out = MFunction{};
  A64Selector(f, out, a64_table()).run();
}

}  // namespace descent::native
