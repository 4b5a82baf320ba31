// Private to AArch64 emission (a64_emit.cpp, a64_frame.cpp): nothing else includes this.
//
// emit_a64() (backend.h) is one A64Emitter per function, the second target's counterpart of
// emit_internal.h's Emitter, split the same way:
//   a64_emit.cpp    the instructions, three-address as selection made them (no copy before an
//                   operation, unlike x86's two-address forms), reloads and spills around
//                   spilled operands; then the words
//   a64_frame.cpp   the frame (x29/x30 pair, callee-saved x19-x28 and d8-d15, spill slots and
//                   the outgoing argument area addressed from sp), AAPCS64 arguments and results
//                   with parallel moves, and the out-of-line stubs
//
// Scratch registers (never allocated, target.cpp): x16 and x17 (the linker's IP0/IP1, which
// AAPCS64 lets any call overwrite) for reloads, addresses and constants; x30, the link
// register, once the prologue has saved it (the one instruction that needs three: madd with
// all three operands spilled); d30 and d31 for floats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "native/a64.h"
#include "native/backend.h"

namespace descent::native::a64_emit {

using a64::A64Inst;
using a64::Cond;
using a64::Form;

constexpr int X0 = 0, X16 = 16, X17 = 17, X27 = 27, X28 = 28, FP = 29, LR = 30, SP = 31, ZR = 31;
constexpr int D0 = 0, D30 = 30, D31 = 31;

class A64Emitter {
 public:
  A64Emitter(const Function& f, const MFunction& m, const Allocation& a, bool top,
             const std::vector<int>& site_ids, int string_base, const ConstantBuilder* constants, A64Emitted& out)
      : f_(f), m_(m), a_(a), top_(top), site_ids_(site_ids), string_base_(string_base), constants_(constants),
        out_(out) {}

  void run();

 private:
  struct Stub {
    int label;
    int back;  // -1: an error (never returns)
    int site;
  };

  // ---- instructions ----
  A64Inst& put(A64Inst i, std::string comment = "", int label = -1) {
    out_.insts.push_back(i);
    out_.comments.push_back(std::move(comment));
    out_.label_of.push_back(label);
    return out_.insts.back();
  }
  static A64Inst make(Form f, std::initializer_list<int> regs) {
    A64Inst i;
    i.form = f;
    int k = 0;
    for (int r : regs) i.r[k++] = static_cast<uint8_t>(r);
    return i;
  }
  void rrr(Form f, int d, int n, int m, std::string c = "") { put(make(f, {d, n, m}), std::move(c)); }
  void rr(Form f, int d, int n, std::string c = "") { put(make(f, {d, n}), std::move(c)); }
  void rri(Form f, int d, int n, int64_t imm, std::string c = "") {
    A64Inst i = make(f, {d, n});
    i.imm = imm;
    put(i, std::move(c));
  }
  void ri(Form f, int n, int64_t imm, std::string c = "") {
    A64Inst i = make(f, {n});
    i.imm = imm;
    put(i, std::move(c));
  }
  // A load or store of register t at [base + offset].
  void mem(Form f, int t, int base, int64_t offset, std::string c = "") {
    A64Inst i = make(f, {t, base});
    i.offset = offset;
    put(i, std::move(c));
  }
  void csel(Form f, int d, int n, int m, Cond cc) {
    A64Inst i = make(f, {d, n, m});
    i.cc = cc;
    put(i);
  }
  void branch(int label, std::string c = "") { put(make(Form::B, {}), std::move(c), label); }
  void bcc(Cond cc, int label, std::string c = "") {
    A64Inst i = make(Form::BCC, {});
    i.cc = cc;
    put(i, std::move(c), label);
  }
  void cb(Form f, int reg, int label, std::string c = "") { put(make(f, {reg}), std::move(c), label); }
  int new_label() {
    out_.labels_at.push_back(-1);
    return static_cast<int>(out_.labels_at.size()) - 1;
  }
  void place(int label) { out_.labels_at[static_cast<size_t>(label)] = static_cast<int>(out_.insts.size()); }
  void mov_imm(int reg, int64_t v, std::string c = "");
  void mov(int d, int n) {
    if (d != n) rrr(Form::ORR_RRR, d, ZR, n);
  }
  void fmov(int d, int n) {
    if (d != n) rr(Form::FMOV_DD, d, n);
  }
  // d = n + k for any k (sub for a negative one; through x17 when it has more than 12 bits).
  void add_imm(int d, int n, int64_t k);
  // A load or store at [base + offset] for any offset: through x17 when it does not fit the
  // form's field.
  void mem_any(Form f, int t, int base, int64_t offset, std::string c = "");
  void fail(const std::string& why) {
    if (out_.error.empty()) out_.error = why;
  }

  // ---- locations ----
  const Loc& loc(int v) const { return a_.loc[static_cast<size_t>(v)]; }
  bool is_f(int v) const { return m_.vt[static_cast<size_t>(v)] == VT::F64; }
  bool unused(int v) const { return loc(v).reg < 0 && loc(v).slot < 0; }
  int64_t slot_offset(int slot) const { return out_bytes_ + 8 * static_cast<int64_t>(slot); }
  std::string vname(int v) const { return "v" + std::to_string(v); }
  int use_x(int v, int scratch) {
    const Loc& l = loc(v);
    if (l.reg >= 0) return l.reg;
    mem_any(Form::LDR_UI, scratch, SP, slot_offset(l.slot), "reload " + vname(v));
    return scratch;
  }
  int use_d(int v, int scratch) {
    const Loc& l = loc(v);
    if (l.reg >= 0) return l.reg;
    mem_any(Form::LDR_D, scratch, SP, slot_offset(l.slot), "reload " + vname(v));
    return scratch;
  }
  int def_reg(int v, int scratch) const { return loc(v).reg >= 0 ? loc(v).reg : scratch; }
  void finish(int v, int reg) {
    const Loc& l = loc(v);
    if (l.reg >= 0 || l.slot < 0) return;
    mem_any(is_f(v) ? Form::STR_D : Form::STR_UI, reg, SP, slot_offset(l.slot), "spill " + vname(v));
  }
  void load_x(int reg, int v) {
    const Loc& l = loc(v);
    if (l.reg >= 0) mov(reg, l.reg);
    else mem_any(Form::LDR_UI, reg, SP, slot_offset(l.slot), "reload " + vname(v));
  }
  void load_d(int reg, int v) {
    const Loc& l = loc(v);
    if (l.reg >= 0) fmov(reg, l.reg);
    else mem_any(Form::LDR_D, reg, SP, slot_offset(l.slot), "reload " + vname(v));
  }

  // ---- the frame, calls and stubs (a64_frame.cpp) ----
  void lay_out_frame();
  void prologue();
  void epilogue();
  using Move = RegMove;
  void parallel(std::vector<Move> moves, bool fp);
  void place_args(const std::vector<int>& args, int64_t leading, bool has_leading);
  void after_call(int def);
  void call_ctx(int offset, const std::string& what);  // ldr x16, [x28, #offset]; blr x16
  int stub_for(int site, bool returns);
  int site_id(int site) const { return site_ids_[static_cast<size_t>(site)]; }
  void stub(const Stub& s);
  void args(const MInst& mi);

  // ---- one machine instruction (a64_emit.cpp) ----
  void inst(const MInst& mi);
  void binary(Form f, const MInst& mi);
  void binary_f(Form f, const MInst& mi);
  void unary_f(Form f, const MInst& mi);
  void fconvert_check(const MInst& mi);

  const Function& f_;
  const MFunction& m_;
  const Allocation& a_;
  bool top_;
  const std::vector<int>& site_ids_;
  int string_base_;
  const ConstantBuilder* constants_;  // null: a64::materialize
  A64Emitted& out_;
  std::vector<int> saved_x_, saved_d_;  // callee-saved registers the prologue stores
  int64_t out_bytes_ = 0;               // the outgoing stack arguments, at [sp]
  int64_t save_base_ = 0;               // where the saved registers start, from sp
  int64_t frame_bytes_ = 0;             // below the x29/x30 pair, 16-aligned
  int next_block_ = 0;
  std::vector<Stub> stubs_;
};

}  // namespace descent::native::a64_emit
