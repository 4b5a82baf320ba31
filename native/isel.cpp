// Stage 4 on x86-64: instruction selection's pattern table and what each pattern emits
// (the dynamic programme that picks the cheapest cover is shared: isel_internal.h).
//
// So `if a < b` costs cmp + jl (brcond(flags) over flags <- setcc(reg, reg): 2) rather than
// cmp, setl, movzx, test, jne (5), and `x + 5` uses add's imm32 form rather than loading 5
// into a register first: the table only states costs; the cover finds the cheapest.
#include "native/isel_internal.h"

namespace descent::native {

using namespace isel;

namespace {

bool float_cc_one_flag(const Block&, const Node& n) {
  auto c = static_cast<CC>(n.aux);
  return c != CC::eq && c != CC::ne;
}
bool float_cc_two_flags(const Block&, const Node& n) { return !float_cc_one_flag({}, n); }

#define P(id, name, res, node, shape, cost, emits) {name, #res, NK::node, shape, cost, emits}
// The pattern table. The first column is the pattern's name as the isel view shows it
// (LLVM's opcode names where one instruction is meant); `cost` counts instructions.
const std::vector<PatternDef>& table() {
  static const std::vector<PatternDef> t = {
      {P(0, "IMM32", imm, Const, "const", 0, "(an operand)"), kImm, {}},
      {P(1, "MOV64ri32", reg, Const, "const", 1, "mov r, imm32"), kReg, {}},
      {P(2, "MOV64ri", reg, Imm64, "imm64", 1, "movabs r, imm64"), kReg, {}},
      {P(3, "FCONST", freg, FLoadConst, "fconst.bits", 2, "movabs r11, bits; movq x, r11"), kFreg, {}},
      {P(4, "ADD64rr", reg, Add, "add(reg, reg)", 1, "add r, r"), kReg, {kReg, kReg}},
      {P(5, "ADD64ri32", reg, Add, "add(reg, imm)", 1, "add r, imm32"), kReg, {kReg, kImm}},
      {P(6, "SUB64rr", reg, Sub, "sub(reg, reg)", 1, "sub r, r"), kReg, {kReg, kReg}},
      {P(7, "SUB64ri32", reg, Sub, "sub(reg, imm)", 1, "sub r, imm32"), kReg, {kReg, kImm}},
      {P(8, "IMUL64rr", reg, Mul, "mul(reg, reg)", 1, "imul r, r"), kReg, {kReg, kReg}},
      {P(9, "IMUL64rri32", reg, Mul, "mul(reg, imm)", 1, "imul r, r, imm32"), kReg, {kReg, kImm}},
      {P(10, "AND64rr", reg, And, "and(reg, reg)", 1, "and r, r"), kReg, {kReg, kReg}},
      {P(11, "AND64ri32", reg, And, "and(reg, imm)", 1, "and r, imm32"), kReg, {kReg, kImm}},
      {P(12, "SHL64ri", reg, Shl, "shl(reg, imm)", 1, "shl r, imm8"), kReg, {kReg, kImm}},
      {P(13, "SAR64ri", reg, Sra, "sra(reg, imm)", 1, "sar r, imm8"), kReg, {kReg, kImm}},
      {P(14, "SHR64ri", reg, Srl, "srl(reg, imm)", 1, "shr r, imm8"), kReg, {kReg, kImm}},
      {P(15, "NEG64r", reg, Neg, "neg(reg)", 1, "neg r"), kReg, {kReg}},
      {P(16, "XOR64ri8", reg, Not, "not(reg)", 1, "xor r, 1"), kReg, {kReg}},
      {P(17, "ABS", reg, Abs, "abs(reg)", 3, "mov; neg; cmovs"), kReg, {kReg}},
      {P(18, "SMIN", reg, SMin, "smin(reg, reg)", 3, "mov; cmp; cmovl"), kReg, {kReg, kReg}},
      {P(19, "SMAX", reg, SMax, "smax(reg, reg)", 3, "mov; cmp; cmovg"), kReg, {kReg, kReg}},
      {P(20, "CMP64rr", flags, SetCC, "setcc(reg, reg)", 1, "cmp r, r"), kFlags, {kReg, kReg}},
      {P(21, "CMP64ri32", flags, SetCC, "setcc(reg, imm)", 1, "cmp r, imm32"), kFlags, {kReg, kImm}},
      {P(22, "UCOMISDrr", flags, FSetCC, "fsetcc(freg, freg)", 1, "ucomisd x, x"), kFlags, {kFreg, kFreg},
       false, float_cc_one_flag},
      {P(23, "FSETCC", reg, FSetCC, "fsetcc(freg, freg) eq/ne", 4, "ucomisd; sete; setnp; and"), kReg,
       {kFreg, kFreg}, false, float_cc_two_flags},
      {P(24, "TEST64rr", flags, Not, "not(reg)", 1, "test r, r (e)"), kFlags, {kReg}},
      {P(25, "CMOV64rr", reg, Select, "select(flags, reg, reg)", 2, "mov r, f; cmovcc r, t"), kReg,
       {kFlags, kReg, kReg}},
      {P(26, "ADDSDrr", freg, FAdd, "fadd(freg, freg)", 1, "addsd x, x"), kFreg, {kFreg, kFreg}},
      {P(27, "SUBSDrr", freg, FSub, "fsub(freg, freg)", 1, "subsd x, x"), kFreg, {kFreg, kFreg}},
      {P(28, "MULSDrr", freg, FMul, "fmul(freg, freg)", 1, "mulsd x, x"), kFreg, {kFreg, kFreg}},
      {P(29, "DIVSDrr", freg, FDiv, "fdiv(freg, freg)", 1, "divsd x, x"), kFreg, {kFreg, kFreg}},
      {P(30, "MINSDrr", freg, FMin, "fmin(freg, freg)", 1, "minsd x, x"), kFreg, {kFreg, kFreg}},
      {P(31, "MAXSDrr", freg, FMax, "fmax(freg, freg)", 1, "maxsd x, x"), kFreg, {kFreg, kFreg}},
      {P(32, "SQRTSDr", freg, FSqrt, "fsqrt(freg)", 1, "sqrtsd x, x"), kFreg, {kFreg}},
      {P(33, "FNEG", freg, FNeg, "fneg(freg)", 3, "movabs r11, sign; movq; xorpd"), kFreg, {kFreg}},
      {P(34, "FABS", freg, FAbs, "fabs(freg)", 3, "movabs r11, ~sign; movq; andpd"), kFreg, {kFreg}},
      {P(35, "CVTSI2SD64rr", freg, IToF, "sitofp(reg)", 1, "cvtsi2sd x, r"), kFreg, {kReg}},
      {P(36, "CVTTSD2SI.chk", reg, FToI, "fptosi(freg)", 4, "cvttsd2si; cmp INT_MIN; checks"), kReg, {kFreg}},
      {P(37, "LIBCALL", freg, LibCall, "libcall(freg...)", 1, "call helper"), kFreg, {}, true},
      {P(38, "IDIV", reg, X86Div, "x86.idiv(reg, reg)", 4, "mov rax; cqo; idiv; mov"), kReg, {kReg, kReg}},
      {P(39, "IREM", reg, X86Rem, "x86.irem(reg, reg)", 4, "mov rax; cqo; idiv; mov rdx"), kReg, {kReg, kReg}},
      {P(40, "SDIV.safe", reg, SDivSafe, "sdiv.safe(reg, reg)", 7, "cmp -1; je; cqo; idiv / neg"), kReg,
       {kReg, kReg}},
      {P(41, "SREM.safe", reg, SRemSafe, "srem.safe(reg, reg)", 7, "cmp -1; je; cqo; idiv / 0"), kReg,
       {kReg, kReg}},
      {P(42, "DIVCHECK", stmt, DivCheck, "divcheck(reg)", 2, "test r, r; jz error"), kStmt, {kReg}},
      {P(43, "DIVCHECK.0", stmt, DivCheck, "divcheck(imm)", 1, "jmp error"), kStmt, {kImm}},
      {P(44, "LOADG", reg, Global, "global", 2, "mov r11, [r15+G]; mov r, [r11+8i]"), kReg, {}, false,
       int_global},
      {P(45, "LOADG.f", freg, Global, "global", 2, "mov r11, [r15+G]; movsd x, [r11+8i]"), kFreg, {},
       false, float_global},
      {P(46, "LOADG.chk", reg, GlobalChk, "global.chk", 4, "cmp byte [D+i], 0; je error; load"), kReg,
       {}, false, int_global},
      {P(47, "LOADG.chk.f", freg, GlobalChk, "global.chk", 4, "cmp byte [D+i], 0; je error; load"),
       kFreg, {}, false, float_global},
      {P(48, "STOREG", stmt, SetGlobal, "setglobal(reg)", 4, "mov [r11+8i], r; mov byte [D+i], 1"), kStmt,
       {kReg}},
      {P(49, "STOREG.f", stmt, SetGlobal, "setglobal(freg)", 4, "movsd [r11+8i], x; mov byte [D+i], 1"),
       kStmt, {kFreg}},
      {P(50, "COPY", stmt, SetReg, "setreg(reg)", 1, "mov v, r"), kStmt, {kReg}},
      {P(51, "COPY.f", stmt, SetReg, "setreg(freg)", 1, "movapd v, x"), kStmt, {kFreg}},
      {P(52, "CALL", reg, Call, "call(...)", 1, "call [r15+8f]"), kReg, {}, true, int_value},
      {P(53, "CALL.f", freg, Call, "call(...)", 1, "call [r15+8f]"), kFreg, {}, true, float_value},
      {P(54, "CALL.void", stmt, Call, "call(...)", 1, "call [r15+8f]"), kStmt, {}, true, void_value},
      {P(55, "PRINT", stmt, Print, "print(...)", 1, "call helpers"), kStmt, {}, true},
      {P(56, "ECHO", stmt, Echo, "echo(reg)", 2, "call helpers"), kStmt, {kReg}},
      {P(57, "ECHO.f", stmt, Echo, "echo(freg)", 2, "call helpers"), kStmt, {kFreg}},
      {P(58, "CALLCHECK", stmt, CallCheck, "callcheck", 2, "cmp r14, [r15+limit]; jge slow"), kStmt, {}},
      {P(59, "TICK", stmt, Tick, "tick", 3, "mov r11, [poll]; cmp byte [r11], 0; jne slow"), kStmt, {}},
      {P(60, "JMP_4", stmt, Br, "br", 1, "jmp L"), kStmt, {}},
      {P(61, "JCC_4", stmt, BrCond, "brcond(flags)", 1, "jcc L"), kStmt, {kFlags}},
      {P(62, "RET", stmt, Ret, "ret(reg)", 1, "mov rax, r; epilogue"), kStmt, {kReg}},
      {P(63, "RET.f", stmt, Ret, "ret(freg)", 1, "movapd xmm0, x; epilogue"), kStmt, {kFreg}},
      {P(64, "RET.void", stmt, Ret, "ret", 1, "epilogue"), kStmt, {}, false, no_operand},
      {P(65, "HALT", stmt, Halt, "halt", 1, "epilogue"), kStmt, {}},
      {P(66, "IMUL64r.hi", reg, MulHS, "mulhs(reg, reg)", 3, "mov rax, a; imul b; mov r, rdx"), kReg,
       {kReg, kReg}},
      {P(67, "SETCC", reg, SetCC, "flags -> reg", 2, "setcc r8; movzx r, r8"), kReg, {}},  // chain rule
      {P(68, "TEST.reg", flags, Const, "reg -> flags", 1, "test r, r (ne)"), kFlags, {}},  // chain rule
      {P(69, "MOV.imm", reg, Const, "imm -> reg", 1, "mov r, imm32"), kReg, {}},          // chain rule
  };
  return t;
}
#undef P
constexpr int kSetccRule = 67, kTestRule = 68, kMovImmRule = 69;

// The x86 condition for a comparison's CC once its operands are in cmp order.
Cond int_cond(CC c) {
  switch (c) {
    case CC::eq: return Cond::e;
    case CC::ne: return Cond::ne;
    case CC::lt: return Cond::l;
    case CC::le: return Cond::le;
    case CC::gt: return Cond::g;
    case CC::ge: return Cond::ge;
    default: return Cond::e;
  }
}
// ucomisd sets CF and ZF like an unsigned compare and both (plus PF) for unordered, so the
// "above" conditions are false with a nan: a > b is ucomisd a, b; ja. `swap`: compare b, a.
Cond float_cond(CC c, bool* swap) {
  switch (c) {
    case CC::gt: *swap = false; return Cond::a;
    case CC::ge: *swap = false; return Cond::ae;
    case CC::lt: *swap = true; return Cond::a;
    case CC::le: *swap = true; return Cond::ae;
    case CC::nlt: *swap = true; return Cond::be;
    case CC::nle: *swap = true; return Cond::b;
    case CC::ngt: *swap = false; return Cond::be;
    case CC::nge: *swap = false; return Cond::b;
    default: *swap = false; return Cond::e;
  }
}

class X86Selector : public Selector {
 public:
  X86Selector(const Function& f, MFunction& out, const Table& t) : Selector(f, out, t) {}

 private:
  int reduce_rule(int r, int id, const Node& n, int dest, int64_t* imm) override {
    switch (r) {
      case 0:
        *imm = n.imm;
        return -1;
      case 1:
      case 2:
      case kMovImmRule: {
        int d = out(dest, VT::I64);
        emit(MOp::MOVI, d, {}, r, id).imm = n.imm;
        return d;
      }
      case 3: {
        int d = out(dest, VT::F64);
        emit(MOp::FMOVI, d, {}, r, id).imm = n.imm;
        return d;
      }
      case 4: case 6: case 8: case 10: {
        int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
        MOp op = r == 4 ? MOp::ADD : r == 6 ? MOp::SUB : r == 8 ? MOp::IMUL : MOp::AND;
        int d = out(dest, VT::I64);
        emit(op, d, {a, b}, r, id);
        return d;
      }
      case 5: case 7: case 9: case 11: case 12: case 13: case 14: {
        int64_t k = 0;
        int a = kid(id, 0, kReg);
        kid(id, 1, kImm, &k);
        static const MOp ops_ri[] = {MOp::ADDI, MOp::MOV, MOp::SUBI, MOp::MOV, MOp::IMULI,
                                     MOp::MOV, MOp::ANDI, MOp::SHLI, MOp::SARI, MOp::SHRI};
        int d = out(dest, VT::I64);
        emit(ops_ri[r - 5], d, {a}, r, id).imm = k;
        return d;
      }
      case 15: case 17: {
        int a = kid(id, 0, kReg);
        int d = out(dest, VT::I64);
        emit(r == 15 ? MOp::NEG : MOp::ABS, d, {a}, r, id);
        return d;
      }
      case 16: {
        int a = kid(id, 0, kReg);
        int d = out(dest, VT::I64);
        emit(MOp::XORI, d, {a}, r, id).imm = 1;
        return d;
      }
      case 18: case 19: {
        int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
        int d = out(dest, VT::I64);
        emit(r == 18 ? MOp::SMIN : MOp::SMAX, d, {a, b}, r, id);
        return d;
      }
      case 20: {
        int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
        emit(MOp::CMP, -1, {a, b}, r, id);
        flags_cc_ = static_cast<int>(int_cond(static_cast<CC>(n.aux)));
        return -1;
      }
      case 21: {
        int64_t k = 0;
        int a = kid(id, 0, kReg);
        kid(id, 1, kImm, &k);
        emit(MOp::CMPI, -1, {a}, r, id).imm = k;
        flags_cc_ = static_cast<int>(int_cond(static_cast<CC>(n.aux)));
        return -1;
      }
      case 22: {
        int a = kid(id, 0, kFreg), b = kid(id, 1, kFreg);
        bool swap = false;
        flags_cc_ = static_cast<int>(float_cond(static_cast<CC>(n.aux), &swap));
        emit(MOp::UCOMI, -1, swap ? std::vector<int>{b, a} : std::vector<int>{a, b}, r, id);
        return -1;
      }
      case 23: {
        int a = kid(id, 0, kFreg), b = kid(id, 1, kFreg);
        int d = out(dest, VT::I64);
        emit(MOp::FSETCC, d, {a, b}, r, id).cc = n.aux;
        return d;
      }
      case 24: {
        int a = kid(id, 0, kReg);
        emit(MOp::TEST, -1, {a}, r, id);
        flags_cc_ = static_cast<int>(Cond::e);
        return -1;
      }
      case kTestRule: {
        int a = reduce(id, kReg);
        emit(MOp::TEST, -1, {a}, r, id);
        flags_cc_ = static_cast<int>(Cond::ne);
        return -1;
      }
      case kSetccRule: {
        // Temporarily label as flags and emit that cover, then setcc.
        reduce(id, kFlags);
        int d = out(dest, VT::I64);
        emit(MOp::SETCC, d, {}, r, id).cc = static_cast<int>(flags_cc_);
        return d;
      }
      case 25: {
        // Operands first, the flags last: nothing may come between cmp and cmov.
        int t = kid(id, 1, kReg), e = kid(id, 2, kReg);
        kid(id, 0, kFlags);
        int d = out(dest, VT::I64);
        emit(MOp::CMOV, d, {t, e}, r, id).cc = static_cast<int>(flags_cc_);
        return d;
      }
      case 26: case 27: case 28: case 29: case 30: case 31: {
        int a = kid(id, 0, kFreg), b = kid(id, 1, kFreg);
        static const MOp fops[] = {MOp::FADD, MOp::FSUB, MOp::FMUL, MOp::FDIV, MOp::FMIN, MOp::FMAX};
        int d = out(dest, VT::F64);
        emit(fops[r - 26], d, {a, b}, r, id);
        return d;
      }
      case 32: case 33: case 34: {
        int a = kid(id, 0, kFreg);
        int d = out(dest, VT::F64);
        emit(r == 32 ? MOp::FSQRT : r == 33 ? MOp::FNEG : MOp::FABS, d, {a}, r, id);
        return d;
      }
      case 35: {
        int a = kid(id, 0, kReg);
        int d = out(dest, VT::F64);
        emit(MOp::CVTSI2SD, d, {a}, r, id);
        return d;
      }
      case 36: {
        int a = kid(id, 0, kFreg);
        int d = out(dest, VT::I64);
        emit(MOp::CVTTSD2SI, d, {a}, r, id).site = n.site;
        return d;
      }
      case 37: {
        std::vector<int> args;
        for (size_t k = 0; k < n.ops.size(); ++k) args.push_back(kid(id, k, kFreg));
        int d = out(dest, VT::F64);
        MInst& m = emit(MOp::CALLH, d, args, r, id);
        m.aux = static_cast<int>(n.aux < 0 ? Helper::Fmod : Helper::Math);
        m.imm = n.aux;
        return d;
      }
      case 66: {
        int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
        int d = out(dest, VT::I64);
        emit(MOp::MULHS, d, {a, b}, r, id);
        return d;
      }
      case 38: case 39: case 40: case 41: {
        int a = kid(id, 0, kReg), b = kid(id, 1, kReg);
        static const MOp dops[] = {MOp::IDIV, MOp::IREM, MOp::SDIVSAFE, MOp::SREMSAFE};
        int d = out(dest, VT::I64);
        emit(dops[r - 38], d, {a, b}, r, id);
        return d;
      }
      case 42: {
        int a = kid(id, 0, kReg);
        emit(MOp::DIVCHECK, -1, {a}, r, id).site = n.site;
        return -1;
      }
      case 43: {
        int64_t k = 0;
        kid(id, 0, kImm, &k);
        if (k != 0) return -1;  // never zero: nothing to check
        // Division by the constant 0: the check always fails.
        MInst& m = emit(MOp::DIVCHECK, -1, {}, r, id);
        m.site = n.site;
        m.imm = 1;
        return -1;
      }
      case 44: case 45: case 46: case 47: {
        int d = out(dest, n.type);
        MInst& m = emit(r >= 46 ? MOp::LDGCHK : MOp::LDG, d, {}, r, id);
        m.aux = n.aux;
        m.site = n.site;
        return d;
      }
      case 48: case 49: {
        int a = kid(id, 0, r == 48 ? kReg : kFreg);
        emit(MOp::STG, -1, {a}, r, id).aux = n.aux;
        return -1;
      }
      case 50: case 51:
        reduce(n.ops[0], r == 50 ? kReg : kFreg, n.aux);
        return -1;
      case 52: case 53: case 54: {
        std::vector<int> args;
        for (size_t k = 0; k < n.ops.size(); ++k)
          args.push_back(kid(id, k, blk_->nodes[static_cast<size_t>(n.ops[k])].type == VT::F64 ? kFreg : kReg));
        int d = r == 54 ? -1 : out(dest, n.type);
        emit(MOp::CALL, d, args, r, id).aux = n.aux;
        return d;
      }
      case 55: {
        std::vector<int> args;
        for (size_t k = 0; k < n.ops.size(); ++k)
          args.push_back(kid(id, k, blk_->nodes[static_cast<size_t>(n.ops[k])].type == VT::F64 ? kFreg : kReg));
        print_calls(n, args, r, id);
        return -1;
      }
      case 56: case 57: {
        int a = kid(id, 0, r == 56 ? kReg : kFreg);
        auto t = static_cast<Type>(n.aux);
        Helper h = t == Type::Float ? Helper::PrintFloat : t == Type::Bool ? Helper::PrintBool : Helper::PrintInt;
        emit(MOp::CALLH, -1, {a}, r, id).aux = static_cast<int>(h);
        emit(MOp::CALLH, -1, {}, r, id).aux = static_cast<int>(Helper::PrintEnd);
        return -1;
      }
      case 58: emit(MOp::CALLCHECK, -1, {}, r, id).site = n.site; return -1;
      case 59: emit(MOp::TICK, -1, {}, r, id).site = n.site; return -1;
      case 60: emit(MOp::JMP, -1, {}, r, id).target = n.aux; return -1;
      case 61: {
        kid(id, 0, kFlags);
        MInst& m = emit(MOp::JCC, -1, {}, r, id);
        m.cc = static_cast<int>(flags_cc_);
        m.target = n.aux;
        return -1;
      }
      case 62: case 63: emit(MOp::RET, -1, {kid(id, 0, r == 62 ? kReg : kFreg)}, r, id); return -1;
      case 64: emit(MOp::RET, -1, {}, r, id); return -1;
      case 65: emit(MOp::HALT, -1, {}, r, id); return -1;
      default: return -1;
    }
  }
};

const Table& x86_table() {
  static const Table t = {&table(), kSetccRule, kSetccRule, kTestRule, kMovImmRule};
  return t;
}

}  // namespace

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = pattern_list(table());
  return p;
}

void select(const Function& f, MFunction& out) {
  out = MFunction{};
  X86Selector(f, out, x86_table()).run();
}

}  // namespace descent::native
