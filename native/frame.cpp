// Stage 7, the frame: what emission puts around a function's instructions. The prologue and
// epilogue, the System V calling convention (arguments in rdi, rsi, rdx, rcx, r8, r9 and
// xmm0-7, the rest on the stack, the result in rax or xmm0) with parallel moves, and
// out-of-line stubs for the slow paths and errors, with the trampoline they call. Apart from
// emit.cpp because it is the ABI's half of emission: what a function owes its caller and the
// runtime, whatever its instructions compute.
//
// The frame (rbp-based, rsp 16-byte aligned at every call):
//     [rbp + 16 + 8k]  the k-th stack argument
//     [rbp + 8]        the return address
//     [rbp]            the caller's rbp
//     [rbp - 8 ...]    the saved callee-saved registers (and r15 in top-level code)
//     below            spill slots, then padding to 16 bytes
#include <algorithm>
#include <iterator>

#include "native/backend.h"
#include "native/emit_internal.h"

namespace descent::native {

namespace emit_internal {

void Emitter::lay_out_frame() {
  saved_ = a_.callee_saved;
  if (top_) saved_.insert(saved_.begin(), {R15, R14});
  int slots = a_.num_slots;
  int pushed = static_cast<int>(saved_.size());
  if ((pushed + slots) % 2) ++slots;  // rsp stays 16-aligned
  frame_bytes_ = 8 * slots;
}

// ---- prologue and epilogue ----
void Emitter::prologue() {
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
void Emitter::epilogue() {
  if (!top_) ri(Form::SUB_RI8, R14, 1, "epilogue");
  rm(Form::LEA_RM, RSP, RBP, -8 * static_cast<int32_t>(saved_.size()), top_ ? "epilogue" : "");
  for (size_t i = saved_.size(); i-- > 0;) r(Form::POP_R, saved_[i]);
  r(Form::POP_R, RBP);
  put(X86Inst{}, "");  // RET
}

// ---- parallel moves (System V argument registers) ----
void Emitter::parallel(std::vector<Move> moves, bool xmm) {
  // A cycle goes through r11, a GPR even for xmm moves (movq).
  for (const RegMove& mv : sequence_moves(moves)) {
    if (mv.dst == kSpare) rr(xmm ? Form::MOVQ_RX : Form::MOV_RR, R11, mv.src, "break a cycle");
    else if (mv.src == kSpare) rr(xmm ? Form::MOVQ_XR : Form::MOV_RR, mv.dst, R11);
    else rr(xmm ? Form::MOVAPD_XX : Form::MOV_RR, mv.dst, mv.src);
  }
}

// Arguments into place for a call; returns the stack bytes to pop afterwards.
int Emitter::place_args(const std::vector<int>& args, int64_t leading_int, bool has_leading) {
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
void Emitter::after_call(int pop, int def) {
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

int Emitter::stub_for(int site, bool returns) {
  int l = new_label();
  int back = -1;
  if (returns) {
    back = new_label();
  }
  stubs_.push_back(Stub{l, back, site});
  return l;
}

void Emitter::stub(const Stub& s) {
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

// The parameters, from where the ABI put them to where the allocator wants them.
void Emitter::args(const MInst& mi) {
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

}  // namespace emit_internal

using namespace emit_internal;

// A move waits while its destination is still the source of another; when every move waits,
// they form a cycle: one destination's value is saved in the spare, its readers read the
// spare instead, and that destination is free to be written.
std::vector<RegMove> sequence_moves(std::vector<RegMove> moves) {
  std::vector<RegMove> out;
  moves.erase(std::remove_if(moves.begin(), moves.end(), [](const RegMove& mv) { return mv.dst == mv.src; }),
              moves.end());
  while (!moves.empty()) {
    bool progress = false;
    for (size_t i = 0; i < moves.size(); ++i) {
      bool blocked = false;
      for (size_t j = 0; j < moves.size(); ++j)
        if (j != i && moves[j].src == moves[i].dst) blocked = true;
      if (blocked) continue;
      out.push_back(moves[i]);
      moves.erase(moves.begin() + static_cast<long>(i));
      progress = true;
      break;
    }
    if (progress) continue;
    int d = moves[0].dst;
    out.push_back({kSpare, d});
    for (RegMove& mv : moves)
      if (mv.src == d) mv.src = kSpare;
  }
  return out;
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
