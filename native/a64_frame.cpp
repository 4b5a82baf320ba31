// Stage 7 on AArch64, the frame: the prologue and epilogue, AAPCS64 arguments (x0-x7 and d0-d7,
// the rest in 8-byte stack slots in argument order; results in x0 or d0) with parallel moves,
// and the out-of-line stubs. The counterpart of frame.cpp; what differs is the machine's:
//   - the return address is in x30, not on the stack: the prologue stores it with x29 as a
//     pair, and a function that calls nothing would not need to (this one always does);
//   - sp must stay 16-aligned and is not pushed and popped: the whole frame, the outgoing
//     stack arguments included, is made once, so every slot is [sp + a constant] throughout;
//   - AAPCS64 keeps only the low 64 bits of d8-d15, which is all a double uses.
//
// The frame, from high addresses to low:
//     [x29 + 16 + 8k]   the k-th stack argument this function was given
//     [x29]             the caller's x29, then x30 (the return address)
//     [sp + save_base]  the callee-saved registers this function uses (x27/x28 in top-level code)
//     [sp + out_bytes]  spill slots
//     [sp]              the outgoing stack arguments of the widest call
#include <algorithm>

#include "native/a64_emit_internal.h"

namespace descent::native {

namespace a64_emit {

namespace {
int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }
}  // namespace

void A64Emitter::lay_out_frame() {
  saved_x_ = a_.callee_saved;
  if (top_) saved_x_.insert(saved_x_.begin(), {X28, X27});
  saved_d_ = a_.fpr_callee_saved;
  // The widest call's stack arguments.
  int64_t widest = 0;
  for (const MBlock& b : m_.blocks)
    for (const MInst& mi : b.code) {
      if (mi.op != MOp::CALL && mi.op != MOp::CALLH) continue;
      int ints = mi.op == MOp::CALLH && (static_cast<Helper>(mi.aux) == Helper::PrintStr ||
                                         static_cast<Helper>(mi.aux) == Helper::Math);
      int floats = 0, stack = 0;
      for (int v : mi.uses) {
        int& n = is_f(v) ? floats : ints;
        if (n < 8) ++n;
        else ++stack;
      }
      widest = std::max<int64_t>(widest, stack);
    }
  out_bytes_ = round16(8 * widest);
  save_base_ = out_bytes_ + 8 * static_cast<int64_t>(a_.num_slots);
  frame_bytes_ = round16(save_base_ + 8 * static_cast<int64_t>(saved_x_.size() + saved_d_.size()));
}

// ---- prologue and epilogue ----
void A64Emitter::prologue() {
  A64Inst pair = make(Form::STP_PRE, {FP, LR, SP});
  pair.offset = -16;
  put(pair, "prologue: save the caller's frame pointer and our return address");
  rri(Form::ADD_RRI, FP, SP, 0, "x29 = this frame");
  for (int64_t left = frame_bytes_; left > 0; left -= 4080)
    rri(Form::SUB_RRI, SP, SP, std::min<int64_t>(left, 4080), "spill slots, saved registers, stack arguments");
  int64_t at = save_base_;
  for (int r : saved_x_) {
    mem_any(Form::STR_UI, r, SP, at, "save callee-saved");
    at += 8;
  }
  for (int d : saved_d_) {
    mem_any(Form::STR_D, d, SP, at, "save callee-saved (low half of a q register)");
    at += 8;
  }
  if (top_) {
    mov(X28, X0);
    out_.comments.back() = "x28 = the runtime context";
    mov_imm(X27, 0, "x27 = the call depth");
  } else {
    rri(Form::ADD_RRI, X27, X27, 1, "one frame deeper");
  }
}

void A64Emitter::epilogue() {
  if (!top_) rri(Form::SUB_RRI, X27, X27, 1, "epilogue");
  int64_t at = save_base_;
  for (int r : saved_x_) {
    mem_any(Form::LDR_UI, r, SP, at, "restore callee-saved");
    at += 8;
  }
  for (int d : saved_d_) {
    mem_any(Form::LDR_D, d, SP, at, "restore callee-saved");
    at += 8;
  }
  rri(Form::ADD_RRI, SP, FP, 0, "sp = x29: the frame is gone");
  A64Inst pair = make(Form::LDP_POST, {FP, LR, SP});
  pair.offset = 16;
  put(pair);
  put(make(Form::RET, {LR}));
}

// ---- parallel moves ----
// sequence_moves (frame.cpp) orders them; a cycle goes through x17 (d31 for floats).
void A64Emitter::parallel(std::vector<Move> moves, bool fp) {
  const int spare = fp ? D31 : X17;
  for (const RegMove& mv : sequence_moves(moves)) {
    int dst = mv.dst == kSpare ? spare : mv.dst, src = mv.src == kSpare ? spare : mv.src;
    if (fp) fmov(dst, src);
    else mov(dst, src);
    if (mv.dst == kSpare) out_.comments.back() = "break a cycle";
  }
}

void A64Emitter::place_args(const std::vector<int>& args, int64_t leading, bool has_leading) {
  std::vector<int> ints, floats, stack;
  for (int v : args) {
    auto& cls = is_f(v) ? floats : ints;
    size_t limit = is_f(v) ? 8 : 8 - (has_leading ? 1 : 0);
    if (cls.size() < limit) cls.push_back(v);
    else stack.push_back(v);
  }
  // Stack arguments first: they only read (through x16 or d30).
  for (size_t k = 0; k < stack.size(); ++k) {
    int v = stack[k];
    if (is_f(v)) mem_any(Form::STR_D, use_d(v, D30), SP, 8 * static_cast<int64_t>(k), "stack argument");
    else mem_any(Form::STR_UI, use_x(v, X16), SP, 8 * static_cast<int64_t>(k), "stack argument");
  }
  size_t first = has_leading ? 1 : 0;
  std::vector<Move> g, x;
  std::vector<std::pair<int, int>> gmem, xmem;
  for (size_t i = 0; i < ints.size(); ++i) {
    int dst = static_cast<int>(i + first);
    if (loc(ints[i]).reg >= 0) g.push_back({dst, loc(ints[i]).reg});
    else gmem.push_back({dst, ints[i]});
  }
  for (size_t i = 0; i < floats.size(); ++i) {
    if (loc(floats[i]).reg >= 0) x.push_back({static_cast<int>(i), loc(floats[i]).reg});
    else xmem.push_back({static_cast<int>(i), floats[i]});
  }
  parallel(g, false);
  parallel(x, true);
  for (auto [dst, v] : gmem) load_x(dst, v);
  for (auto [dst, v] : xmem) load_d(dst, v);
  if (has_leading) mov_imm(X0, leading);
}

void A64Emitter::after_call(int def) {
  if (def < 0 || unused(def)) return;
  if (is_f(def)) {
    int d = def_reg(def, D0);
    fmov(d, D0);
    finish(def, D0);
  } else {
    int d = def_reg(def, X0);
    mov(d, X0);
    finish(def, X0);
  }
}

void A64Emitter::call_ctx(int offset, const std::string& what) {
  mem(Form::LDR_UI, X16, X28, offset, what);
  put(make(Form::BLR, {X16}));
}

int A64Emitter::stub_for(int site, bool returns) {
  int l = new_label();
  int back = returns ? new_label() : -1;
  stubs_.push_back(Stub{l, back, site});
  return l;
}

void A64Emitter::stub(const Stub& s) {
  place(s.label);
  if (s.back >= 0) {
    // The trampoline (the runner's) saves every caller-saved register around the helper.
    mov_imm(X16, site_id(s.site), "slow path: save everything, ask the runtime");
    mem(Form::LDR_UI, X17, X28, kCtxSlow);
    put(make(Form::BLR, {X17}));
    branch(s.back);
  } else {
    mov_imm(X0, site_id(s.site), "runtime error");
    call_ctx(kCtxFail, "");
  }
}

// The parameters, from where AAPCS64 put them to where the allocator wants them.
void A64Emitter::args(const MInst& mi) {
  std::vector<int> ints, floats;
  std::vector<std::pair<int, int>> stack;  // (vreg, k): [x29 + 16 + 8k]
  int k = 0;
  for (int p : mi.params) {
    auto& cls = is_f(p) ? floats : ints;
    if (cls.size() < 8u) cls.push_back(p);
    else stack.push_back({p, k++});
  }
  std::vector<Move> g, x;
  for (size_t i = 0; i < ints.size(); ++i) {
    const Loc& l = loc(ints[i]);
    if (l.reg >= 0) g.push_back({l.reg, static_cast<int>(i)});
    else if (l.slot >= 0)
      mem_any(Form::STR_UI, static_cast<int>(i), SP, slot_offset(l.slot), "parameter " + vname(ints[i]));
  }
  for (size_t i = 0; i < floats.size(); ++i) {
    const Loc& l = loc(floats[i]);
    if (l.reg >= 0) x.push_back({l.reg, static_cast<int>(i)});
    else if (l.slot >= 0)
      mem_any(Form::STR_D, static_cast<int>(i), SP, slot_offset(l.slot), "parameter " + vname(floats[i]));
  }
  parallel(g, false);
  parallel(x, true);
  for (auto [v, at] : stack) {
    if (unused(v)) continue;
    bool f = is_f(v);
    int d = def_reg(v, f ? D30 : X16);
    mem_any(f ? Form::LDR_D : Form::LDR_UI, d, FP, 16 + 8 * static_cast<int64_t>(at), "stack parameter " + vname(v));
    finish(v, d);
  }
}

}  // namespace a64_emit

}  // namespace descent::native
