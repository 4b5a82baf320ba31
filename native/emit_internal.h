// Private to emission (emit.cpp, frame.cpp): nothing else includes this.
//
// emit() (backend.h) is one Emitter object per function, spread over two files by concern:
//   emit.cpp    the instructions: one machine instruction at a time in x86's two-address
//               forms, with reloads and spills around spilled operands; then the bytes
//   frame.cpp   the frame: its layout, prologue and epilogue, the System V calling convention
//               (arguments, parameters, parallel moves), the out-of-line stubs and the
//               slow-path trampoline they call
// Both put instructions through the small builders and location helpers below. Everything here
// is x86-64's (its registers, Forms, System V); a second target would have an emitter of its
// own beside this one, sharing only backend.h's machine instructions and allocation.
#pragma once
#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "native/backend.h"

namespace descent::native::emit_internal {

constexpr int RAX = 0, RCX = 1, RDX = 2, RSP = 4, RBP = 5, RSI = 6, RDI = 7, R8 = 8, R9 = 9,
              R11 = 11, R14 = 14, R15 = 15;
constexpr int XMM0 = 0, XMM1 = 1;
const int kIntArgs[] = {RDI, RSI, RDX, RCX, R8, R9};

inline bool fits8(int64_t v) { return v >= -128 && v <= 127; }
inline bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

class Emitter {
 public:
  Emitter(const Function& f, const MFunction& m, const Allocation& a, bool top,
          const std::vector<int>& site_ids, int string_base, Emitted& out)
      : f_(f), m_(m), a_(a), top_(top), site_ids_(site_ids), string_base_(string_base), out_(out) {}

  // Lays out the frame, then emits the prologue, every block in order, and the stubs.
  void run();

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

  // ---- the frame, calls and stubs (frame.cpp) ----
  void lay_out_frame();  // saved_ and frame_bytes_
  void prologue();
  void epilogue();
  using Move = RegMove;
  void parallel(std::vector<Move> moves, bool xmm);
  int place_args(const std::vector<int>& args, int64_t leading_int, bool has_leading);
  void after_call(int pop, int def);
  int stub_for(int site, bool returns);
  int site_id(int site) const { return site_ids_[static_cast<size_t>(site)]; }
  void stub(const Stub& s);
  void args(const MInst& mi);  // MOp::ARGS: the parameters

  // ---- one machine instruction (emit.cpp) ----
  void two_address(Form op, const MInst& mi, bool commutative);
  void two_address_f(Form op, int def, int a, int b, bool commutative);
  void one_operand(const MInst& mi, const std::function<void(int)>& body);
  void inst(const MInst& mi);
  void setcc(Cond c, int d);
  void mi_cmp_byte(int base, int index) { mem_imm(Form::CMP8_MI, base, index, 0); }
  void result_from(int def, int reg);
  std::string m_fn_name(int fn) const { return "function " + std::to_string(fn); }

  const Function& f_;
  const MFunction& m_;
  const Allocation& a_;
  bool top_;
  const std::vector<int>& site_ids_;
  int string_base_;  // -1: print's strings by address (the engine); else numbered (image.h)
  Emitted& out_;
  std::vector<int> saved_;  // pushed after rbp, in order (frame.cpp draws the frame)
  int frame_bytes_ = 0;     // the spill slots and padding below them
  int next_block_ = 0;
  std::vector<Stub> stubs_;
};

}  // namespace descent::native::emit_internal
