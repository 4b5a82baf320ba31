// Stage 7 on AArch64: emission. Machine instructions over allocated locations become A64
// instructions, then words (a64.h's encoder). The frame, AAPCS64 and the stubs are
// a64_frame.cpp's; the A64Emitter both use is a64_emit_internal.h.
//
// Beside emit.cpp (x86-64) the differences are the lesson of a second target:
//   - three-address forms: `add x0, x1, x2` is what selection wrote, so no copy comes first
//     and nothing special happens when the result shares a register with an operand;
//   - a constant is built 16 bits at a time (movz/movn, then movk), or in one orr when it is a
//     logical immediate; add/sub/cmp take 12 bits, so larger ones go through x17;
//   - sdiv does not trap (the checks for zero are selection's; INT_MIN / -1 gives INT_MIN, as
//     the language says), and fcvtzs saturates, so int(nan) and out-of-range are compares;
//   - conditions are flags read by b.cond, csel and csinc (cset), as on x86; after fcmp one
//     condition decides every comparison, nan included (a64_isel.cpp's float_cond).
#include <climits>
#include <string>

#include "native/a64_emit_internal.h"

namespace descent::native {

namespace a64_emit {

void A64Emitter::run() {
  size_t nb = m_.blocks.size();
  out_.labels_at.assign(nb, -1);
  lay_out_frame();
  prologue();
  for (size_t b = 0; b < nb; ++b) {
    out_.labels_at[b] = static_cast<int>(out_.insts.size());
    next_block_ = static_cast<int>(b) + 1;
    for (const MInst& mi : m_.blocks[b].code) inst(mi);
  }
  for (size_t i = 0; i < stubs_.size(); ++i) stub(stubs_[i]);
}

// ---- constants, immediates, addresses ----
void A64Emitter::mov_imm(int reg, int64_t v, std::string c) {
  // a64::materialize, or the lab's builder (labs/a64_constants) when one is given.
  std::vector<A64Inst> seq = constants_ ? (*constants_)(v, reg) : a64::materialize(v, reg);
  for (size_t i = 0; i < seq.size(); ++i) put(seq[i], i == 0 ? c : "");
}

void A64Emitter::add_imm(int d, int n, int64_t k) {
  if (k >= 0 && k < 4096) {
    rri(Form::ADD_RRI, d, n, k);
  } else if (k < 0 && k > -4096) {
    rri(Form::SUB_RRI, d, n, -k);
  } else {
    mov_imm(X17, k, "an immediate wider than 12 bits");
    rrr(Form::ADD_RRR, d, n, X17);
  }
}

void A64Emitter::mem_any(Form f, int t, int base, int64_t offset, std::string c) {
  bool byte = f == Form::LDRB || f == Form::STRB;
  bool fits = byte ? offset >= 0 && offset < 4096 : offset >= 0 && offset <= 32760 && offset % 8 == 0;
  if (fits) {
    mem(f, t, base, offset, std::move(c));
    return;
  }
  if (base == SP || t == X17) {
    fail("a frame or global offset too large for the AArch64 emitter (" + std::to_string(offset) + ")");
    return;
  }
  mov_imm(X17, offset, "an offset wider than the load's field");
  rrr(Form::ADD_RRR, X17, base, X17);
  mem(f, t, X17, 0, std::move(c));
}

// ---- one machine instruction ----
void A64Emitter::binary(Form f, const MInst& mi) {
  int a = use_x(mi.uses[0], X16), b = use_x(mi.uses[1], X17);
  int d = def_reg(mi.def, X16);
  rrr(f, d, a, b);
  finish(mi.def, d);
}
void A64Emitter::binary_f(Form f, const MInst& mi) {
  int a = use_d(mi.uses[0], D30), b = use_d(mi.uses[1], D31);
  int d = def_reg(mi.def, D30);
  rrr(f, d, a, b);
  finish(mi.def, d);
}
void A64Emitter::unary_f(Form f, const MInst& mi) {
  int a = use_d(mi.uses[0], D30);
  int d = def_reg(mi.def, D30);
  rr(f, d, a);
  finish(mi.def, d);
}

// int(x): fcvtzs saturates (nan gives 0), so the language's checks come first: nan, then
// -2^63 <= x < 2^63 (the doubles that truncate into an int64).
void A64Emitter::fconvert_check(const MInst& mi) {
  int x = use_d(mi.uses[0], D30);
  int fail_at = stub_for(mi.site, false);
  rr(Form::FCMP, x, x, "nan?");
  bcc(Cond::vs, fail_at);
  mov_imm(X17, static_cast<int64_t>(0x43E0000000000000ull), "2^63");
  rr(Form::FMOV_DX, D31, X17);
  rr(Form::FCMP, x, D31);
  bcc(Cond::ge, fail_at, "too large");
  mov_imm(X17, static_cast<int64_t>(0xC3E0000000000000ull), "-2^63");
  rr(Form::FMOV_DX, D31, X17);
  rr(Form::FCMP, x, D31);
  bcc(Cond::lt, fail_at, "too small");
  int d = def_reg(mi.def, X16);
  rr(Form::FCVTZS, d, x);
  finish(mi.def, d);
}

void A64Emitter::inst(const MInst& mi) {
  switch (mi.op) {
    case MOp::MOV:
    case MOp::FMOV:
      if (unused(mi.def)) return;
      if (is_f(mi.def)) {
        int d = def_reg(mi.def, D30);
        load_d(d, mi.uses[0]);
        finish(mi.def, d);
      } else {
        int d = def_reg(mi.def, X16);
        load_x(d, mi.uses[0]);
        finish(mi.def, d);
      }
      return;
    case MOp::MOVI: {
      int d = def_reg(mi.def, X16);
      mov_imm(d, mi.imm);
      finish(mi.def, d);
      return;
    }
    case MOp::FMOVI: {
      int d = def_reg(mi.def, D30);
      mov_imm(X16, mi.imm, "the double's bits");
      rr(Form::FMOV_DX, d, X16);
      finish(mi.def, d);
      return;
    }
    case MOp::ADD: binary(Form::ADD_RRR, mi); return;
    case MOp::SUB: binary(Form::SUB_RRR, mi); return;
    case MOp::AND: binary(Form::AND_RRR, mi); return;
    case MOp::MULHS: binary(Form::SMULH, mi); return;
    case MOp::SDIVSAFE: binary(Form::SDIV, mi); return;  // never traps: INT_MIN / -1 = INT_MIN
    case MOp::IMUL: {
      int a = use_x(mi.uses[0], X16), b = use_x(mi.uses[1], X17);
      int d = def_reg(mi.def, X16);
      put(make(Form::MADD, {d, a, b, ZR}), "mul");
      finish(mi.def, d);
      return;
    }
    case MOp::MADD:
    case MOp::MSUB: {
      // d = c +- a * b. With all three spilled, the link register (saved by the prologue) is the
      // third scratch.
      int a = use_x(mi.uses[0], X16), b = use_x(mi.uses[1], X17), c = use_x(mi.uses[2], LR);
      int d = def_reg(mi.def, X16);
      put(make(mi.op == MOp::MADD ? Form::MADD : Form::MSUB, {d, a, b, c}));
      finish(mi.def, d);
      return;
    }
    case MOp::SREMSAFE: {
      // a - (a / b) * b: the quotient needs a register that is neither a nor b.
      int a = use_x(mi.uses[0], X16), b = use_x(mi.uses[1], X17);
      int d = def_reg(mi.def, X16);
      int q = (d != a && d != b) ? d : LR;
      rrr(Form::SDIV, q, a, b);
      put(make(Form::MSUB, {d, q, b, a}), "the remainder: a - q * b");
      finish(mi.def, d);
      return;
    }
    case MOp::ADDI:
    case MOp::SUBI: {
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, X16);
      add_imm(d, a, mi.op == MOp::ADDI ? mi.imm : -mi.imm);
      finish(mi.def, d);
      return;
    }
    case MOp::ANDI:
    case MOp::XORI: {
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, X16);
      uint32_t field = 0;
      bool and_op = mi.op == MOp::ANDI;
      if (a64::encode_logical_imm(static_cast<uint64_t>(mi.imm), &field)) {
        rri(and_op ? Form::AND_RRI : Form::EOR_RRI, d, a, mi.imm);
      } else {
        mov_imm(X17, mi.imm, "not a logical immediate");
        rrr(and_op ? Form::AND_RRR : Form::EOR_RRR, d, a, X17);
      }
      finish(mi.def, d);
      return;
    }
    case MOp::SHLI:
    case MOp::SARI:
    case MOp::SHRI: {
      // lsl #s is ubfm #(64-s)%64, #(63-s); lsr #s is ubfm #s, #63; asr #s is sbfm #s, #63.
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, X16);
      int s = static_cast<int>(mi.imm & 63);
      A64Inst i = make(mi.op == MOp::SARI ? Form::SBFM : Form::UBFM, {d, a});
      i.imm = mi.op == MOp::SHLI ? (64 - s) % 64 : s;
      i.shift = mi.op == MOp::SHLI ? 63 - s : 63;
      put(i, mi.op == MOp::SHLI ? "lsl #" + std::to_string(s) : (mi.op == MOp::SARI ? "asr #" : "lsr #") + std::to_string(s));
      finish(mi.def, d);
      return;
    }
    case MOp::NEG: {
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, X16);
      rrr(Form::SUB_RRR, d, ZR, a, "neg");
      finish(mi.def, d);
      return;
    }
    case MOp::ABS: {
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, X16);
      ri(Form::CMP_RI, a, 0);
      csel(Form::CSNEG, d, a, a, Cond::ge);  // a >= 0 ? a : -a (INT_MIN stays)
      finish(mi.def, d);
      return;
    }
    case MOp::SMIN:
    case MOp::SMAX: {
      // min(a, b) = b < a ? b : a, which for ints is a <= b ? a : b.
      int a = use_x(mi.uses[0], X16), b = use_x(mi.uses[1], X17);
      int d = def_reg(mi.def, X16);
      rr(Form::CMP_RR, a, b);
      csel(Form::CSEL, d, a, b, mi.op == MOp::SMIN ? Cond::le : Cond::ge);
      finish(mi.def, d);
      return;
    }
    case MOp::CMP: {
      int a = use_x(mi.uses[0], X16);
      rr(Form::CMP_RR, a, use_x(mi.uses[1], X17));
      return;
    }
    case MOp::TEST:
    case MOp::CMPI: {
      int a = use_x(mi.uses[0], X16);
      int64_t k = mi.op == MOp::TEST ? 0 : mi.imm;
      if (k >= 0 && k < 4096) {
        ri(Form::CMP_RI, a, k);
      } else if (k < 0 && k > -4096) {
        ri(Form::CMN_RI, a, -k, "cmp with a negative immediate");
      } else {
        mov_imm(X17, k);
        rr(Form::CMP_RR, a, X17);
      }
      return;
    }
    case MOp::UCOMI: {
      int a = use_d(mi.uses[0], D30);
      rr(Form::FCMP, a, use_d(mi.uses[1], D31));
      return;
    }
    case MOp::SETCC: {
      int d = def_reg(mi.def, X16);
      csel(Form::CSINC, d, ZR, ZR, a64::invert(static_cast<Cond>(mi.cc)));  // cset d, cc
      finish(mi.def, d);
      return;
    }
    case MOp::CMOV: {
      int t = use_x(mi.uses[0], X16), e = use_x(mi.uses[1], X17);
      int d = def_reg(mi.def, X16);
      csel(Form::CSEL, d, t, e, static_cast<Cond>(mi.cc));
      finish(mi.def, d);
      return;
    }
    case MOp::DIVCHECK: {
      int l = stub_for(mi.site, false);
      if (mi.imm) branch(l, "division by zero");
      else cb(Form::CBZ, use_x(mi.uses[0], X16), l, "division by zero?");
      return;
    }
    case MOp::FADD: binary_f(Form::FADD, mi); return;
    case MOp::FSUB: binary_f(Form::FSUB, mi); return;
    case MOp::FMUL: binary_f(Form::FMUL, mi); return;
    case MOp::FDIV: binary_f(Form::FDIV, mi); return;
    case MOp::FMIN:
    case MOp::FMAX: {
      // b < a ? b : a (min) and b > a ? b : a (max): mi and gt are false with a nan.
      int a = use_d(mi.uses[0], D30), b = use_d(mi.uses[1], D31);
      int d = def_reg(mi.def, D30);
      rr(Form::FCMP, b, a);
      csel(Form::FCSEL, d, b, a, mi.op == MOp::FMIN ? Cond::mi : Cond::gt);
      finish(mi.def, d);
      return;
    }
    case MOp::FSQRT: unary_f(Form::FSQRT, mi); return;
    case MOp::FNEG: unary_f(Form::FNEG, mi); return;
    case MOp::FABS: unary_f(Form::FABS, mi); return;
    case MOp::CVTSI2SD: {
      int a = use_x(mi.uses[0], X16);
      int d = def_reg(mi.def, D30);
      rr(Form::SCVTF, d, a);
      finish(mi.def, d);
      return;
    }
    case MOp::CVTTSD2SI: fconvert_check(mi); return;
    case MOp::LDG:
    case MOp::LDGCHK: {
      if (mi.op == MOp::LDGCHK) {
        mem(Form::LDR_UI, X16, X28, kCtxDefined, "assigned yet?");
        mem_any(Form::LDRB, X16, X16, mi.aux);
        cb(Form::CBZ, X16, stub_for(mi.site, false));
      }
      mem(Form::LDR_UI, X16, X28, kCtxGlobals, "the globals");
      bool f = is_f(mi.def);
      int d = def_reg(mi.def, f ? D30 : X16);  // x16 (not x17: a far global's address goes there)
      mem_any(f ? Form::LDR_D : Form::LDR_UI, d, X16, 8 * static_cast<int64_t>(mi.aux),
              "global " + std::to_string(mi.aux));
      finish(mi.def, d);
      return;
    }
    case MOp::STG: {
      int v = mi.uses[0];
      bool f = is_f(v);
      // x16 holds the base: a spilled value comes through d30 or through x30 (saved).
      int src = f ? use_d(v, D30) : use_x(v, LR);
      mem(Form::LDR_UI, X16, X28, kCtxGlobals, "the globals");
      mem_any(f ? Form::STR_D : Form::STR_UI, src, X16, 8 * static_cast<int64_t>(mi.aux),
              "global " + std::to_string(mi.aux));
      mem(Form::LDR_UI, X16, X28, kCtxDefined);
      mov_imm(LR, 1);
      mem_any(Form::STRB, LR, X16, mi.aux, "now assigned");
      return;
    }
    case MOp::CALL:
      place_args(mi.uses, 0, false);
      call_ctx(kCtxTable + 8 * mi.aux, "function " + std::to_string(mi.aux));
      after_call(mi.def);
      return;
    case MOp::CALLH: {
      auto h = static_cast<Helper>(mi.aux);
      bool leading = h == Helper::PrintStr || h == Helper::Math;
      int64_t lead = h == Helper::PrintStr ? string_base_ + mi.imm : mi.imm;
      place_args(mi.uses, lead, leading);
      call_ctx(kCtxHelpers + 8 * static_cast<int>(h), helper_name(h));
      after_call(mi.def);
      return;
    }
    case MOp::CALLCHECK: {
      int slow = stub_for(mi.site, true);
      mem(Form::LDR_UI, X16, X28, kCtxCallLimit, "depth >= limit: too deep, or watched");
      rr(Form::CMP_RR, X27, X16);
      bcc(Cond::ge, slow);
      place(stubs_.back().back);
      return;
    }
    case MOp::TICK: {
      int slow = stub_for(mi.site, true);
      mem(Form::LDR_UI, X16, X28, kCtxPoll, "loop back-edge: interrupted?");
      mem(Form::LDRB, X16, X16, 0);
      cb(Form::CBNZ, X16, slow);
      place(stubs_.back().back);
      return;
    }
    case MOp::JMP:
      if (mi.target != next_block_) branch(mi.target);
      return;
    case MOp::JCC: bcc(static_cast<Cond>(mi.cc), mi.target); return;
    case MOp::CBZ:
    case MOp::CBNZ:
      cb(mi.op == MOp::CBZ ? Form::CBZ : Form::CBNZ, use_x(mi.uses[0], X16), mi.target);
      return;
    case MOp::RET:
      if (!mi.uses.empty()) {
        if (is_f(mi.uses[0])) load_d(D0, mi.uses[0]);
        else load_x(X0, mi.uses[0]);
      }
      epilogue();
      return;
    case MOp::HALT: epilogue(); return;
    case MOp::ARGS: args(mi); return;
    default:
      fail(std::string("no AArch64 instruction for the machine operation ") + mop_name(mi.op));
      return;
  }
}

}  // namespace a64_emit

A64Emitted emit_a64(const Function& f, const MFunction& m, const Allocation& a, bool top_level,
                    const std::vector<int>& site_ids, int string_base, const ConstantBuilder* constants) {
  A64Emitted e;
  a64_emit::A64Emitter(f, m, a, top_level, site_ids, string_base, constants, e).run();
  // Every instruction is four bytes: a branch's offset is the distance in instructions.
  for (size_t i = 0; i < e.insts.size(); ++i) {
    a64::A64Inst& inst = e.insts[i];
    if (e.label_of[i] >= 0) {
      int at = e.labels_at[static_cast<size_t>(e.label_of[i])];
      inst.offset = 4 * (static_cast<int64_t>(at) - static_cast<int64_t>(i));
    }
    std::string why;
    if (!a64::valid(inst, &why) && e.error.empty())
      e.error = "instruction " + std::to_string(i) + " (" + a64::format(inst) + "): " + why;
    a64::encode(inst, e.bytes);
  }
  return e;
}

}  // namespace descent::native
