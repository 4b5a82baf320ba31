// Stage 7: emission. Machine instructions over allocated locations become x86-64
// instructions: two-address forms (x86's `add rax, rcx` writes its first operand), loads and
// stores around spilled operands, and then the bytes (assemble). The frame, the prologue and
// epilogue, the calling convention and the out-of-line stubs are frame.cpp's; the Emitter
// both use is emit_internal.h.
#include <climits>
#include <cstring>
#include <functional>

#include "lang/value.h"
#include "native/backend.h"
#include "native/emit_internal.h"

namespace descent::native {

namespace emit_internal {

namespace {

X86Inst form_only(Form f) {
  X86Inst i;
  i.form = f;
  return i;
}

}  // namespace

void Emitter::run() {
  size_t nb = m_.blocks.size();
  out_.labels_at.assign(nb, -1);
  lay_out_frame();
  prologue();
  for (size_t b = 0; b < nb; ++b) {
    out_.labels_at[b] = static_cast<int>(out_.insts.size());
    next_block_ = static_cast<int>(b) + 1;
    for (const MInst& mi : m_.blocks[b].code) inst(mi);
  }
  for (const Stub& s : stubs_) stub(s);
}

// ---- one machine instruction ----
void Emitter::two_address(Form op, const MInst& mi, bool commutative) {
  int d = def_reg(mi.def, RAX);
  int a = mi.uses[0], b = mi.uses[1];
  if (loc(b).reg >= 0 && loc(b).reg == d && loc(a).reg != d) {
    if (commutative) {
      rr(op, d, use_gpr(a, R11));
    } else {
      rr(Form::MOV_RR, R11, d);
      load_gpr(d, a);
      rr(op, d, R11);
    }
  } else {
    load_gpr(d, a);
    rr(op, d, use_gpr(b, R11));
  }
  finish(mi.def, d);
}

void Emitter::two_address_f(Form op, int def, int a, int b, bool commutative) {
  int d = def_reg(def, XMM0);
  if (loc(b).reg >= 0 && loc(b).reg == d && loc(a).reg != d) {
    if (commutative) {
      rr(op, d, use_xmm(a, XMM1));
    } else {
      rr(Form::MOVAPD_XX, XMM1, d);
      load_xmm(d, a);
      rr(op, d, XMM1);
    }
  } else {
    load_xmm(d, a);
    rr(op, d, use_xmm(b, XMM1));
  }
  finish(def, d);
}

void Emitter::one_operand(const MInst& mi, const std::function<void(int)>& body) {
  int d = def_reg(mi.def, RAX);
  load_gpr(d, mi.uses[0]);
  body(d);
  finish(mi.def, d);
}

void Emitter::inst(const MInst& mi) {
  switch (mi.op) {
    case MOp::MOV:
      if (loc(mi.def).reg < 0 && loc(mi.def).slot < 0) return;
      if (is_f(mi.def)) {
        int d = def_reg(mi.def, XMM0);
        load_xmm(d, mi.uses[0]);
        finish(mi.def, d);
      } else {
        int d = def_reg(mi.def, RAX);
        load_gpr(d, mi.uses[0]);
        finish(mi.def, d);
      }
      return;
    case MOp::FMOV: {
      int d = def_reg(mi.def, XMM0);
      load_xmm(d, mi.uses[0]);
      finish(mi.def, d);
      return;
    }
    case MOp::MOVI: {
      int d = def_reg(mi.def, RAX);
      mov_imm(d, mi.imm);
      finish(mi.def, d);
      return;
    }
    case MOp::FMOVI: {
      int d = def_reg(mi.def, XMM0);
      mov_imm(R11, mi.imm, "the double's bits");
      rr(Form::MOVQ_XR, d, R11);
      finish(mi.def, d);
      return;
    }
    case MOp::ADD: two_address(Form::ADD_RR, mi, true); return;
    case MOp::SUB: two_address(Form::SUB_RR, mi, false); return;
    case MOp::IMUL: two_address(Form::IMUL_RR, mi, true); return;
    case MOp::AND: two_address(Form::AND_RR, mi, true); return;
    case MOp::ADDI:
      one_operand(mi, [&](int d) { alu_imm(Form::ADD_RI8, Form::ADD_RI32, d, mi.imm); });
      return;
    case MOp::SUBI:
      one_operand(mi, [&](int d) { alu_imm(Form::SUB_RI8, Form::SUB_RI32, d, mi.imm); });
      return;
    case MOp::ANDI:
      one_operand(mi, [&](int d) { alu_imm(Form::AND_RI8, Form::AND_RI32, d, mi.imm); });
      return;
    case MOp::XORI: one_operand(mi, [&](int d) { ri(Form::XOR_RI8, d, mi.imm); }); return;
    case MOp::SHLI: one_operand(mi, [&](int d) { ri(Form::SHL_RI, d, mi.imm); }); return;
    case MOp::SARI: one_operand(mi, [&](int d) { ri(Form::SAR_RI, d, mi.imm); }); return;
    case MOp::SHRI: one_operand(mi, [&](int d) { ri(Form::SHR_RI, d, mi.imm); }); return;
    case MOp::NEG: one_operand(mi, [&](int d) { r(Form::NEG_R, d); }); return;
    case MOp::IMULI: {
      int d = def_reg(mi.def, RAX);
      int a = use_gpr(mi.uses[0], R11);
      rri(fits8(mi.imm) ? Form::IMUL_RRI8 : Form::IMUL_RRI32, d, a, mi.imm);
      finish(mi.def, d);
      return;
    }
    case MOp::ABS: {
      int d = def_reg(mi.def, RAX);
      load_gpr(R11, mi.uses[0]);
      rr(Form::MOV_RR, d, R11);
      r(Form::NEG_R, d);
      X86Inst c;
      c.form = Form::CMOVCC_RR;
      c.cc = Cond::s;  // -x < 0: x was positive (or INT_MIN, which stays)
      c.r[0] = static_cast<uint8_t>(d);
      c.r[1] = R11;
      put(c);
      finish(mi.def, d);
      return;
    }
    case MOp::SMIN:
    case MOp::SMAX: {
      // min(a, b) = b < a ? b : a (the first unless the second is smaller)
      int d = def_reg(mi.def, RAX);
      load_gpr(R11, mi.uses[1]);
      load_gpr(d, mi.uses[0]);
      rr(Form::CMP_RR, R11, d);
      X86Inst c;
      c.form = Form::CMOVCC_RR;
      c.cc = mi.op == MOp::SMIN ? Cond::l : Cond::g;
      c.r[0] = static_cast<uint8_t>(d);
      c.r[1] = R11;
      put(c);
      finish(mi.def, d);
      return;
    }
    case MOp::CMP: {
      int a = use_gpr(mi.uses[0], RAX);
      rr(Form::CMP_RR, a, use_gpr(mi.uses[1], R11));
      return;
    }
    case MOp::CMPI: {
      int a = use_gpr(mi.uses[0], RAX);
      alu_imm(Form::CMP_RI8, Form::CMP_RI32, a, mi.imm);
      return;
    }
    case MOp::TEST: {
      int a = use_gpr(mi.uses[0], RAX);
      rr(Form::TEST_RR, a, a);
      return;
    }
    case MOp::UCOMI: {
      int a = use_xmm(mi.uses[0], XMM0);
      rr(Form::UCOMISD_XX, a, use_xmm(mi.uses[1], XMM1));
      return;
    }
    case MOp::SETCC: {
      int d = def_reg(mi.def, RAX);
      setcc(static_cast<Cond>(mi.cc), d);
      finish(mi.def, d);
      return;
    }
    case MOp::CMOV: {
      int d = def_reg(mi.def, RAX);
      int t = mi.uses[0], e = mi.uses[1];
      X86Inst c;
      c.form = Form::CMOVCC_RR;
      c.r[0] = static_cast<uint8_t>(d);
      if (loc(t).reg >= 0 && loc(t).reg == d) {
        c.cc = negate(static_cast<Cond>(mi.cc));
        c.r[1] = static_cast<uint8_t>(use_gpr(e, R11));
      } else {
        int tr = use_gpr(t, R11);
        load_gpr(d, e);
        c.cc = static_cast<Cond>(mi.cc);
        c.r[1] = static_cast<uint8_t>(tr);
      }
      put(c);
      finish(mi.def, d);
      return;
    }
    case MOp::IDIV:
    case MOp::IREM: {
      load_gpr(RAX, mi.uses[0]);
      int b = use_gpr(mi.uses[1], R11);
      put(form_only(Form::CQO), "sign-extend rax into rdx");
      r(Form::IDIV_R, b);
      result_from(mi.def, mi.op == MOp::IDIV ? RAX : RDX);
      return;
    }
    case MOp::MULHS: {
      load_gpr(RAX, mi.uses[0]);
      r(Form::IMUL_R, use_gpr(mi.uses[1], R11), "rdx:rax = rax * r");
      result_from(mi.def, RDX);
      return;
    }
    case MOp::SDIVSAFE:
    case MOp::SREMSAFE: {
      // x / -1 would trap in idiv when x is INT_MIN; the language says -x (and x % -1 = 0).
      bool div = mi.op == MOp::SDIVSAFE;
      int b = use_gpr(mi.uses[1], R11);
      int minus1 = new_label(), done = new_label();
      ri(Form::CMP_RI8, b, -1, "idiv traps on INT_MIN / -1");
      jump(Form::JCC_L, minus1, Cond::e);
      load_gpr(RAX, mi.uses[0]);
      put(form_only(Form::CQO));
      r(Form::IDIV_R, b);
      if (!div) rr(Form::MOV_RR, RAX, RDX);
      jump(Form::JMP_L, done);
      place(minus1);
      if (div) {
        load_gpr(RAX, mi.uses[0]);
        r(Form::NEG_R, RAX);
      } else {
        ri(Form::MOV_RI32, RAX, 0);
      }
      place(done);
      result_from(mi.def, RAX);
      return;
    }
    case MOp::DIVCHECK: {
      int l = stub_for(mi.site, false);
      if (mi.imm) {
        jump(Form::JMP_L, l);
        return;
      }
      int a = use_gpr(mi.uses[0], R11);
      rr(Form::TEST_RR, a, a, "division by zero?");
      jump(Form::JCC_L, l, Cond::e);
      return;
    }
    case MOp::FADD: two_address_f(Form::ADDSD_XX, mi.def, mi.uses[0], mi.uses[1], true); return;
    case MOp::FSUB: two_address_f(Form::SUBSD_XX, mi.def, mi.uses[0], mi.uses[1], false); return;
    case MOp::FMUL: two_address_f(Form::MULSD_XX, mi.def, mi.uses[0], mi.uses[1], true); return;
    case MOp::FDIV: two_address_f(Form::DIVSD_XX, mi.def, mi.uses[0], mi.uses[1], false); return;
    // minsd d, s gives d < s ? d : s; min(a, b) is b < a ? b : a: so d = b, s = a.
    case MOp::FMIN: two_address_f(Form::MINSD_XX, mi.def, mi.uses[1], mi.uses[0], false); return;
    case MOp::FMAX: two_address_f(Form::MAXSD_XX, mi.def, mi.uses[1], mi.uses[0], false); return;
    case MOp::FSQRT: {
      int d = def_reg(mi.def, XMM0);
      rr(Form::SQRTSD_XX, d, use_xmm(mi.uses[0], XMM1));
      finish(mi.def, d);
      return;
    }
    case MOp::FNEG:
    case MOp::FABS: {
      int d = def_reg(mi.def, XMM0);
      bool neg = mi.op == MOp::FNEG;
      mov_imm(R11, neg ? INT64_MIN : INT64_MAX, neg ? "the sign bit" : "all but the sign bit");
      rr(Form::MOVQ_XR, XMM1, R11);
      load_xmm(d, mi.uses[0]);
      rr(neg ? Form::XORPD_XX : Form::ANDPD_XX, d, XMM1);
      finish(mi.def, d);
      return;
    }
    case MOp::FSETCC: {
      // == needs ZF set and PF clear (unordered sets both); != either.
      int d = def_reg(mi.def, RAX);
      int a = use_xmm(mi.uses[0], XMM0);
      rr(Form::UCOMISD_XX, a, use_xmm(mi.uses[1], XMM1));
      bool eq = static_cast<CC>(mi.cc) == CC::eq;
      setcc(eq ? Cond::e : Cond::ne, d);
      setcc(eq ? Cond::np : Cond::p, R11);
      rr(eq ? Form::AND_RR : Form::OR_RR, d, R11);
      finish(mi.def, d);
      return;
    }
    case MOp::CVTSI2SD: {
      int d = def_reg(mi.def, XMM0);
      rr(Form::CVTSI2SD_XR, d, use_gpr(mi.uses[0], R11));
      finish(mi.def, d);
      return;
    }
    case MOp::CVTTSD2SI: {
      // cvttsd2si gives INT_MIN for nan and out-of-range values; INT_MIN is also the right
      // answer for exactly -2^63, so only then look at the operand.
      int d = def_reg(mi.def, RAX);
      int x = use_xmm(mi.uses[0], XMM0);
      rr(Form::CVTTSD2SI_RX, d, x);
      int ok = new_label(), fail = stub_for(mi.site, false);
      mov_imm(R11, INT64_MIN);
      rr(Form::CMP_RR, d, R11, "nan or out of range?");
      jump(Form::JCC_L, ok, Cond::ne);
      mov_imm(R11, static_cast<int64_t>(0xC3E0000000000000ull), "-2^63");
      rr(Form::MOVQ_XR, XMM1, R11);
      rr(Form::UCOMISD_XX, x, XMM1);
      jump(Form::JCC_L, fail, Cond::ne);
      jump(Form::JCC_L, fail, Cond::p);
      place(ok);
      finish(mi.def, d);
      return;
    }
    case MOp::LDG:
    case MOp::LDGCHK: {
      if (mi.op == MOp::LDGCHK) {
        rm(Form::MOV_RM, R11, R15, kCtxDefined, "assigned yet?");
        mi_cmp_byte(R11, mi.aux);
        jump(Form::JCC_L, stub_for(mi.site, false), Cond::e);
      }
      rm(Form::MOV_RM, R11, R15, kCtxGlobals, "the globals");
      if (is_f(mi.def)) {
        int d = def_reg(mi.def, XMM0);
        rm(Form::MOVSD_XM, d, R11, 8 * mi.aux, "global " + std::to_string(mi.aux));
        finish(mi.def, d);
      } else {
        int d = def_reg(mi.def, RAX);
        rm(Form::MOV_RM, d, R11, 8 * mi.aux, "global " + std::to_string(mi.aux));
        finish(mi.def, d);
      }
      return;
    }
    case MOp::STG: {
      int v = mi.uses[0];
      int src = is_f(v) ? use_xmm(v, XMM0) : use_gpr(v, RAX);
      rm(Form::MOV_RM, R11, R15, kCtxGlobals, "the globals");
      X86Inst s;
      s.form = is_f(v) ? Form::MOVSD_MX : Form::MOV_MR;
      s.mem = Mem{R11, 8 * mi.aux};
      s.r[0] = static_cast<uint8_t>(src);
      put(s, "global " + std::to_string(mi.aux));
      rm(Form::MOV_RM, R11, R15, kCtxDefined);
      mem_imm(Form::MOV8_MI, R11, mi.aux, 1, "now assigned");
      return;
    }
    case MOp::CALL: {
      int pop = place_args(mi.uses, 0, false);
      m(Form::CALL_M, R15, kCtxTable + 8 * mi.aux, m_fn_name(mi.aux));
      after_call(pop, mi.def);
      return;
    }
    case MOp::CALLH: {
      auto h = static_cast<Helper>(mi.aux);
      bool leading = h == Helper::PrintStr || h == Helper::Math;
      int64_t lead = mi.imm;
      // print's string: its address in this process, or its number in a program image's
      // table (image.h), which runs in a process of its own.
      if (h == Helper::PrintStr && string_base_ >= 0)
        lead = string_base_ + mi.imm;
      else if (h == Helper::PrintStr)
        lead = static_cast<int64_t>(
            reinterpret_cast<uintptr_t>(f_.src->strings[static_cast<size_t>(mi.imm)].c_str()));
      int pop = place_args(mi.uses, lead, leading);
      m(Form::CALL_M, R15, kCtxHelpers + 8 * static_cast<int>(h), helper_name(h));
      after_call(pop, mi.def);
      return;
    }
    case MOp::CALLCHECK: {
      int slow = stub_for(mi.site, true);
      rm(Form::CMP_RM, R14, R15, kCtxCallLimit, "depth >= limit: too deep, or watched");
      jump(Form::JCC_L, slow, Cond::ge);
      place(stubs_.back().back);
      return;
    }
    case MOp::TICK: {
      int slow = stub_for(mi.site, true);
      rm(Form::MOV_RM, R11, R15, kCtxPoll, "loop back-edge: interrupted?");
      mem_imm(Form::CMP8_MI, R11, 0, 0);
      jump(Form::JCC_L, slow, Cond::ne);
      place(stubs_.back().back);
      return;
    }
    case MOp::JMP:
      if (mi.target != next_block_) jump(Form::JMP_L, mi.target);
      return;
    case MOp::JCC:
      jump(Form::JCC_L, mi.target, static_cast<Cond>(mi.cc));
      return;
    case MOp::RET:
      if (!mi.uses.empty()) {
        if (is_f(mi.uses[0])) load_xmm(XMM0, mi.uses[0]);
        else load_gpr(RAX, mi.uses[0]);
      }
      epilogue();
      return;
    case MOp::HALT: epilogue(); return;
    case MOp::ARGS: args(mi); return;
    default: return;
  }
}

void Emitter::setcc(Cond c, int d) {
  X86Inst s;
  s.form = Form::SETCC_R;
  s.cc = c;
  s.r[0] = static_cast<uint8_t>(d);
  put(s);
  rr(Form::MOVZX_RR8, d, d);
}

void Emitter::result_from(int def, int reg) {
  const Loc& l = loc(def);
  if (l.reg >= 0) rr(Form::MOV_RR, l.reg, reg);
  else if (l.slot >= 0) rm(Form::MOV_MR, reg, RBP, slot_disp(l.slot), "spill " + vname(def));
}

}  // namespace emit_internal

Emitted emit(const Function& f, const MFunction& m, const Allocation& a, bool top_level,
             const std::vector<int>& site_ids, int string_base) {
  Emitted e;
  emit_internal::Emitter(f, m, a, top_level, site_ids, string_base, e).run();
  assemble(e);
  return e;
}

void assemble(Emitted& e) {
  e.bytes.clear();
  e.offsets.assign(e.insts.size(), 0);
  e.sizes.assign(e.insts.size(), 0);
  std::vector<std::pair<int, int>> fixups;  // (rel32 offset, label)
  for (size_t i = 0; i < e.insts.size(); ++i) {
    e.offsets[i] = static_cast<int>(e.bytes.size());
    int at = -1;
    encode(e.insts[i], e.bytes, &at);
    e.sizes[i] = static_cast<int>(e.bytes.size()) - e.offsets[i];
    if (at >= 0) fixups.push_back({at, e.insts[i].label});
  }
  for (auto [at, label] : fixups) {
    int idx = e.labels_at[static_cast<size_t>(label)];
    int target = idx < static_cast<int>(e.insts.size()) ? e.offsets[static_cast<size_t>(idx)]
                                                         : static_cast<int>(e.bytes.size());
    int32_t rel = target - (at + 4);
    std::memcpy(e.bytes.data() + at, &rel, 4);
  }
}

}  // namespace descent::native
