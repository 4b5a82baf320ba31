// Stage 7: emission. Machine instructions over allocated locations become x86-64
// instructions: the prologue and epilogue, two-address forms (x86's `add rax, rcx` writes its
// first operand), loads and stores around spilled operands, the System V calling convention
// (arguments in rdi, rsi, rdx, rcx, r8, r9 and xmm0-7, the rest on the stack, the result in
// rax or xmm0) with parallel moves, and out-of-line stubs for the slow paths and errors.
//
// The frame (rbp-based, rsp 16-byte aligned at every call):
//     [rbp + 16 + 8k]  the k-th stack argument
//     [rbp + 8]        the return address
//     [rbp]            the caller's rbp
//     [rbp - 8 ...]    the saved callee-saved registers (and r15 in top-level code)
//     below            spill slots, then padding to 16 bytes
#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <iterator>

#include "lang/value.h"
#include "native/backend.h"

namespace descent::native {

namespace {

constexpr int RAX = 0, RCX = 1, RDX = 2, RSP = 4, RBP = 5, RSI = 6, RDI = 7, R8 = 8, R9 = 9,
              R11 = 11, R14 = 14, R15 = 15;
constexpr int XMM0 = 0, XMM1 = 1;
const int kIntArgs[] = {RDI, RSI, RDX, RCX, R8, R9};

X86Inst form_only(Form f) {
  X86Inst i;
  i.form = f;
  return i;
}

bool fits8(int64_t v) { return v >= -128 && v <= 127; }
bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

class Emitter {
 public:
  Emitter(const Function& f, const MFunction& m, const Allocation& a, bool top,
          const std::vector<int>& site_ids, Emitted& out)
      : f_(f), m_(m), a_(a), top_(top), site_ids_(site_ids), out_(out) {}

  void run() {
    size_t nb = m_.blocks.size();
    out_.labels_at.assign(nb, -1);
    saved_ = a_.callee_saved;
    if (top_) saved_.insert(saved_.begin(), {R15, R14});
    int slots = a_.num_slots;
    int pushed = static_cast<int>(saved_.size());
    if ((pushed + slots) % 2) ++slots;  // rsp stays 16-aligned
    frame_bytes_ = 8 * slots;
    prologue();
    for (size_t b = 0; b < nb; ++b) {
      out_.labels_at[b] = static_cast<int>(out_.insts.size());
      next_block_ = static_cast<int>(b) + 1;
      for (const MInst& mi : m_.blocks[b].code) inst(mi);
    }
    for (const Stub& s : stubs_) stub(s);
  }

 private:
  struct Stub {
    int label;
    int back;  // -1: an error (never returns)
    int site;
  };

  // ---- instructions ----
  X86Inst& put(X86Inst i, std::string comment = "") {
    out_.insts.push_back(i);
    out_.comments.push_back(std::move(comment));
    return out_.insts.back();
  }
  void rr(Form f, int a, int b, std::string c = "") {
    X86Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(a);
    i.r[1] = static_cast<uint8_t>(b);
    put(i, std::move(c));
  }
  void r(Form f, int a, std::string c = "") { rr(f, a, 0, std::move(c)); }
  void ri(Form f, int a, int64_t imm, std::string c = "") {
    X86Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(a);
    i.imm = imm;
    put(i, std::move(c));
  }
  void rri(Form f, int a, int b, int64_t imm) {
    X86Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(a);
    i.r[1] = static_cast<uint8_t>(b);
    i.imm = imm;
    put(i);
  }
  void rm(Form f, int a, int base, int32_t disp, std::string c = "") {
    X86Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(a);
    i.mem = Mem{static_cast<uint8_t>(base), disp};
    put(i, std::move(c));
  }
  void mem_imm(Form f, int base, int32_t disp, int64_t imm, std::string c = "") {
    X86Inst i;
    i.form = f;
    i.mem = Mem{static_cast<uint8_t>(base), disp};
    i.imm = imm;
    put(i, std::move(c));
  }
  void m(Form f, int base, int32_t disp, std::string c = "") { mem_imm(f, base, disp, 0, std::move(c)); }
  void jump(Form f, int label, Cond cc = Cond::e) {
    X86Inst i;
    i.form = f;
    i.label = label;
    i.cc = cc;
    put(i);
  }
  int new_label() {
    out_.labels_at.push_back(-1);
    return static_cast<int>(out_.labels_at.size()) - 1;
  }
  void place(int label) { out_.labels_at[static_cast<size_t>(label)] = static_cast<int>(out_.insts.size()); }
  void mov_imm(int reg, int64_t v, std::string c = "") {
    if (fits32(v)) ri(Form::MOV_RI32, reg, v, std::move(c));
    else ri(Form::MOV_RI64, reg, v, std::move(c));
  }
  void alu_imm(Form f8, Form f32, int reg, int64_t v) {
    if (fits8(v)) ri(f8, reg, v);
    else ri(f32, reg, v);
  }

  // ---- locations ----
  const Loc& loc(int v) const { return a_.loc[static_cast<size_t>(v)]; }
  bool is_f(int v) const { return m_.vt[static_cast<size_t>(v)] == VT::F64; }
  int32_t slot_disp(int slot) const {
    return -8 * static_cast<int32_t>(saved_.size()) - 8 * (slot + 1);
  }
  std::string vname(int v) const { return "v" + std::to_string(v); }
  // The register holding v's value: its own, or `scratch` after a reload.
  int use_gpr(int v, int scratch) {
    const Loc& l = loc(v);
    if (l.reg >= 0) return l.reg;
    rm(Form::MOV_RM, scratch, RBP, slot_disp(l.slot), "reload " + vname(v));
    return scratch;
  }
  int use_xmm(int v, int scratch) {
    const Loc& l = loc(v);
    if (l.reg >= 0) return l.reg;
    rm(Form::MOVSD_XM, scratch, RBP, slot_disp(l.slot), "reload " + vname(v));
    return scratch;
  }
  // Where to compute v: its register, or the scratch register (then finish() stores it).
  int def_reg(int v, int scratch) const {
    const Loc& l = loc(v);
    return l.reg >= 0 ? l.reg : scratch;
  }
  void finish(int v, int reg) {
    const Loc& l = loc(v);
    if (l.reg >= 0) return;
    if (l.slot < 0) return;  // never read
    rm(is_f(v) ? Form::MOVSD_MX : Form::MOV_MR, reg, RBP, slot_disp(l.slot), "spill " + vname(v));
  }
  // reg := v (any location).
  void load_gpr(int reg, int v) {
    const Loc& l = loc(v);
    if (l.reg >= 0) {
      if (l.reg != reg) rr(Form::MOV_RR, reg, l.reg);
    } else {
      rm(Form::MOV_RM, reg, RBP, slot_disp(l.slot), "reload " + vname(v));
    }
  }
  void load_xmm(int reg, int v) {
    const Loc& l = loc(v);
    if (l.reg >= 0) {
      if (l.reg != reg) rr(Form::MOVAPD_XX, reg, l.reg);
    } else {
      rm(Form::MOVSD_XM, reg, RBP, slot_disp(l.slot), "reload " + vname(v));
    }
  }

  // ---- prologue and epilogue ----
  void prologue() {
    r(Form::PUSH_R, RBP, "prologue");
    rr(Form::MOV_RR, RBP, RSP);
    for (int s : saved_) r(Form::PUSH_R, s, "save callee-saved");
    if (top_) {
      rr(Form::MOV_RR, R15, RDI, "r15 = the runtime context");
      ri(Form::MOV_RI32, R14, 0, "r14 = the call depth");
    }
    if (frame_bytes_) alu_imm(Form::SUB_RI8, Form::SUB_RI32, RSP, frame_bytes_);
    if (!top_) ri(Form::ADD_RI8, R14, 1, "one frame deeper");
  }
  void epilogue() {
    if (!top_) ri(Form::SUB_RI8, R14, 1, "epilogue");
    rm(Form::LEA_RM, RSP, RBP, -8 * static_cast<int32_t>(saved_.size()), top_ ? "epilogue" : "");
    for (size_t i = saved_.size(); i-- > 0;) r(Form::POP_R, saved_[i]);
    r(Form::POP_R, RBP);
    put(X86Inst{}, "");  // RET
  }

  // ---- parallel moves (System V argument registers) ----
  struct Move {
    int dst;  // a register
    int src;  // a register
  };
  // Moves registers into registers as if all at once: a move waits while its destination
  // is still the source of another; a cycle is broken through r11.
  void parallel(std::vector<Move> moves, bool xmm) {
    constexpr int kSaved = -1;  // "the value saved in r11"
    moves.erase(std::remove_if(moves.begin(), moves.end(), [](const Move& mv) { return mv.dst == mv.src; }),
                moves.end());
    while (!moves.empty()) {
      bool progress = false;
      for (size_t i = 0; i < moves.size(); ++i) {
        bool blocked = false;
        for (size_t j = 0; j < moves.size(); ++j)
          if (j != i && moves[j].src == moves[i].dst) blocked = true;
        if (blocked) continue;
        if (moves[i].src == kSaved) rr(xmm ? Form::MOVQ_XR : Form::MOV_RR, moves[i].dst, R11);
        else rr(xmm ? Form::MOVAPD_XX : Form::MOV_RR, moves[i].dst, moves[i].src);
        moves.erase(moves.begin() + static_cast<long>(i));
        progress = true;
        break;
      }
      if (progress) continue;
      // Every move waits for another: a cycle. Save one destination's value in r11; its
      // readers read r11 instead, and that destination is free to be written.
      int d = moves[0].dst;
      rr(xmm ? Form::MOVQ_RX : Form::MOV_RR, R11, d, "break a cycle");
      for (Move& mv : moves)
        if (mv.src == d) mv.src = kSaved;
    }
  }

  // Arguments into place for a call; returns the stack bytes to pop afterwards.
  int place_args(const std::vector<int>& args, int64_t leading_int, bool has_leading) {
    std::vector<int> ints, floats, stack;
    for (int v : args) {
      auto& cls = is_f(v) ? floats : ints;
      size_t limit = is_f(v) ? 8 : 6 - (has_leading ? 1 : 0);
      if (cls.size() < limit) cls.push_back(v);
      else stack.push_back(v);
    }
    int pad = static_cast<int>(stack.size() % 2) * 8;
    if (pad) ri(Form::SUB_RI8, RSP, 8, "align the stack arguments");
    for (size_t i = stack.size(); i-- > 0;) {
      int v = stack[i];
      if (is_f(v)) {
        int x = use_xmm(v, XMM0);
        rr(Form::MOVQ_RX, RAX, x);
        r(Form::PUSH_R, RAX, "stack argument");
      } else {
        r(Form::PUSH_R, use_gpr(v, RAX), "stack argument");
      }
    }
    size_t first = has_leading ? 1 : 0;
    std::vector<Move> g, x;
    std::vector<std::pair<int, int>> gmem, xmem;  // (dst, vreg) loads after the moves
    for (size_t i = 0; i < ints.size(); ++i) {
      int dst = kIntArgs[i + first];
      if (loc(ints[i]).reg >= 0) g.push_back({dst, loc(ints[i]).reg});
      else gmem.push_back({dst, ints[i]});
    }
    for (size_t i = 0; i < floats.size(); ++i) {
      if (loc(floats[i]).reg >= 0) x.push_back({static_cast<int>(i), loc(floats[i]).reg});
      else xmem.push_back({static_cast<int>(i), floats[i]});
    }
    parallel(g, false);
    parallel(x, true);
    for (auto [dst, v] : gmem) load_gpr(dst, v);
    for (auto [dst, v] : xmem) load_xmm(dst, v);
    if (has_leading) mov_imm(RDI, leading_int);
    return 8 * static_cast<int>(stack.size()) + pad;
  }
  void after_call(int pop, int def) {
    if (pop) alu_imm(Form::ADD_RI8, Form::ADD_RI32, RSP, pop);
    if (def < 0 || (loc(def).reg < 0 && loc(def).slot < 0)) return;
    if (is_f(def)) {
      int d = def_reg(def, XMM0);
      if (d != XMM0) rr(Form::MOVAPD_XX, d, XMM0, "the result");
      finish(def, XMM0);
    } else {
      int d = def_reg(def, RAX);
      if (d != RAX) rr(Form::MOV_RR, d, RAX, "the result");
      finish(def, RAX);
    }
  }

  int stub_for(int site, bool returns) {
    int l = new_label();
    int back = -1;
    if (returns) {
      back = new_label();
    }
    stubs_.push_back(Stub{l, back, site});
    return l;
  }
  int site_id(int site) const { return site_ids_[static_cast<size_t>(site)]; }

  void stub(const Stub& s) {
    place(s.label);
    if (s.back >= 0) {
      mov_imm(R11, site_id(s.site), "slow path: save everything, ask the runtime");
      m(Form::CALL_M, R15, kCtxSlow);
      jump(Form::JMP_L, s.back);
    } else {
      mov_imm(RDI, site_id(s.site), "runtime error");
      m(Form::CALL_M, R15, kCtxFail);
    }
  }

  // ---- one machine instruction ----
  void two_address(Form op, const MInst& mi, bool commutative) {
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
  void two_address_f(Form op, int def, int a, int b, bool commutative) {
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
  void one_operand(const MInst& mi, const std::function<void(int)>& body) {
    int d = def_reg(mi.def, RAX);
    load_gpr(d, mi.uses[0]);
    body(d);
    finish(mi.def, d);
  }

  void inst(const MInst& mi) {
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
        if (h == Helper::PrintStr)
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

  void setcc(Cond c, int d) {
    X86Inst s;
    s.form = Form::SETCC_R;
    s.cc = c;
    s.r[0] = static_cast<uint8_t>(d);
    put(s);
    rr(Form::MOVZX_RR8, d, d);
  }
  void mi_cmp_byte(int base, int index) { mem_imm(Form::CMP8_MI, base, index, 0); }
  void result_from(int def, int reg) {
    const Loc& l = loc(def);
    if (l.reg >= 0) rr(Form::MOV_RR, l.reg, reg);
    else if (l.slot >= 0) rm(Form::MOV_MR, reg, RBP, slot_disp(l.slot), "spill " + vname(def));
  }
  std::string m_fn_name(int fn) const { return "function " + std::to_string(fn); }

  // The parameters, from where the ABI put them to where the allocator wants them.
  void args(const MInst& mi) {
    std::vector<int> ints, floats;
    std::vector<std::pair<int, int>> stack;  // (vreg, k): [rbp + 16 + 8k]
    int k = 0;
    for (int p : mi.params) {
      auto& cls = is_f(p) ? floats : ints;
      if (cls.size() < (is_f(p) ? 8u : 6u)) cls.push_back(p);
      else stack.push_back({p, k++});
    }
    // Stores to spill slots first (they only read), then register moves, then loads.
    std::vector<Move> g, x;
    for (size_t i = 0; i < ints.size(); ++i) {
      const Loc& l = loc(ints[i]);
      if (l.reg >= 0) g.push_back({l.reg, kIntArgs[i]});
      else if (l.slot >= 0) rm(Form::MOV_MR, kIntArgs[i], RBP, slot_disp(l.slot), "parameter " + vname(ints[i]));
    }
    for (size_t i = 0; i < floats.size(); ++i) {
      const Loc& l = loc(floats[i]);
      if (l.reg >= 0) x.push_back({l.reg, static_cast<int>(i)});
      else if (l.slot >= 0) rm(Form::MOVSD_MX, static_cast<int>(i), RBP, slot_disp(l.slot), "parameter " + vname(floats[i]));
    }
    parallel(g, false);
    parallel(x, true);
    for (auto [v, at] : stack) {
      const Loc& l = loc(v);
      if (l.reg < 0 && l.slot < 0) continue;
      if (is_f(v)) {
        int d = def_reg(v, XMM0);
        rm(Form::MOVSD_XM, d, RBP, 16 + 8 * at, "stack parameter " + vname(v));
        finish(v, d);
      } else {
        int d = def_reg(v, RAX);
        rm(Form::MOV_RM, d, RBP, 16 + 8 * at, "stack parameter " + vname(v));
        finish(v, d);
      }
    }
  }


  const Function& f_;
  const MFunction& m_;
  const Allocation& a_;
  bool top_;
  const std::vector<int>& site_ids_;
  Emitted& out_;
  std::vector<int> saved_;
  int frame_bytes_ = 0;
  int next_block_ = 0;
  std::vector<Stub> stubs_;
};

}  // namespace

Emitted emit(const Function& f, const MFunction& m, const Allocation& a, bool top_level,
             const std::vector<int>& site_ids) {
  Emitted e;
  Emitter(f, m, a, top_level, site_ids, e).run();
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

std::vector<X86Inst> slow_trampoline() {
  // Entered by `call` from a stub, with rsp 16-aligned before that call and the site in r11.
  std::vector<X86Inst> v;
  auto add = [&](Form f, int r0 = 0, int r1 = 0, Mem m = {}, int64_t imm = 0) {
    X86Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(r0);
    i.r[1] = static_cast<uint8_t>(r1);
    i.mem = m;
    i.imm = imm;
    v.push_back(i);
  };
  const int saved[] = {RAX, RCX, RDX, RSI, RDI, R8, R9, 10, R11};  // 9 pushes + return address
  for (int r : saved) add(Form::PUSH_R, r);
  add(Form::SUB_RI32, RSP, 0, {}, 128);
  for (int x = 0; x < 16; ++x) add(Form::MOVSD_MX, x, 0, Mem{RSP, 8 * x});
  add(Form::MOV_MR, R14, 0, Mem{R15, kCtxDepth});  // the depth, for the runtime
  add(Form::MOV_RR, RDI, R11);
  add(Form::CALL_M, 0, 0, Mem{R15, kCtxSlowHelper});
  for (int x = 0; x < 16; ++x) add(Form::MOVSD_XM, x, 0, Mem{RSP, 8 * x});
  add(Form::ADD_RI32, RSP, 0, {}, 128);
  for (size_t i = std::size(saved); i-- > 0;) add(Form::POP_R, saved[i]);
  add(Form::RET);
  return v;
}

}  // namespace descent::native
