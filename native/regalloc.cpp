// Stage 6: linear-scan register allocation onto a target's registers (Poletto & Sarkar);
// which registers, and which a call keeps, come from the target (target.h). The comments
// below speak of x86-64; AArch64's file is larger (16 GPRs a call may overwrite, 8 it keeps,
// and floats in d8-d15 survive calls).
//
// Liveness over the blocks gives each virtual register one interval (the hull of where it is
// live, as the register VM's allocator does); then one pass over the intervals by start hands
// out registers and, when none is free, spills whichever interval ends last.
//
// What the real machine adds to the register VM's version:
//   - two register classes: integers in GPRs, floats in xmm registers;
//   - calls: the System V ABI lets a callee overwrite rax, rcx, rdx, rsi, rdi, r8-r11 and
//     every xmm register, so a value live across a call goes to a callee-saved register
//     (rbx, r12, r13; the prologue saves the ones used) or, for floats, to the stack;
//   - reserved registers: rsp and rbp (the frame), r15 (the runtime context), r14 (the call
//     depth), and the
//     scratch registers the emitter needs for spilled operands and fixed-register
//     instructions: rax, rdx (idiv's dividend and results), r11, xmm0 and xmm1.
#include <algorithm>
#include <cstdint>

#include "native/backend.h"

namespace descent::native {

namespace {

constexpr int kMaxRegs = 32;  // per class, on either target

bool has(const std::vector<int>& set, int r) { return std::find(set.begin(), set.end(), r) != set.end(); }

VT f_vt(const MFunction& f, int v) { return f.vt[static_cast<size_t>(v)]; }

bool is_call(MOp op) { return op == MOp::CALL || op == MOp::CALLH; }

void defs_of(const MInst& m, std::vector<int>& out) {
  out.clear();
  if (m.def >= 0) out.push_back(m.def);
  for (int p : m.params) out.push_back(p);
}

}  // namespace

Allocation allocate(const MFunction& f, const std::vector<std::vector<int>>& succs, const RegisterFile& regs) {
  Allocation a;
  size_t nv = f.vt.size(), nb = f.blocks.size();
  // Positions: instruction k of the linear order reads at 2k and writes at 2k + 1.
  std::vector<int> first(nb), last(nb);
  int k = 0;
  for (size_t b = 0; b < nb; ++b) {
    first[b] = k;
    k += static_cast<int>(f.blocks[b].code.size());
    last[b] = k;  // one past
  }
  a.positions = first;
  // Liveness (backward dataflow over the blocks), as bit sets.
  std::vector<Bits> use(nb, Bits(nv)), def = use, in, out;
  std::vector<int> ds;
  for (size_t b = 0; b < nb; ++b)
    for (const MInst& m : f.blocks[b].code) {
      for (int u : m.uses)
        if (!def[b].test(static_cast<size_t>(u))) use[b].set(static_cast<size_t>(u));
      defs_of(m, ds);
      for (int d : ds) def[b].set(static_cast<size_t>(d));
    }
  solve_liveness(use, def, succs, nv, &in, &out);
  // Intervals: hulls.
  std::vector<int> lo(nv, INT32_MAX), hi(nv, -1);
  auto extend = [&](int v, int p) {
    auto i = static_cast<size_t>(v);
    lo[i] = std::min(lo[i], p);
    hi[i] = std::max(hi[i], p);
  };
  std::vector<int> calls;
  for (size_t b = 0; b < nb; ++b) {
    in[b].each([&](size_t v) { extend(static_cast<int>(v), 2 * first[b]); });
    out[b].each([&](size_t v) { extend(static_cast<int>(v), 2 * last[b] - 1); });
    int pos = first[b];
    for (const MInst& m : f.blocks[b].code) {
      for (int u : m.uses) extend(u, 2 * pos);
      defs_of(m, ds);
      for (int d : ds) extend(d, 2 * pos + 1);
      if (is_call(m.op)) calls.push_back(pos);
      ++pos;
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    if (hi[v] < 0) continue;
    Interval iv;
    iv.vreg = static_cast<int>(v);
    iv.start = lo[v];
    iv.end = hi[v];
    iv.vt = f.vt[v];
    // The first call after the interval starts (calls are in order): live past it?
    auto c = std::upper_bound(calls.begin(), calls.end(), iv.start / 2);
    iv.crosses_call = c != calls.end() && iv.end > 2 * *c + 1;
    a.intervals.push_back(iv);
  }
  std::sort(a.intervals.begin(), a.intervals.end(), [](const Interval& x, const Interval& y) {
    return x.start != y.start ? x.start < y.start : x.vreg < y.vreg;
  });
  // Hints: a value that arrives in an argument register, or is passed as a call's argument,
  // would rather live in that register: then the moves around the call vanish (the first
  // such use decides).
  std::vector<int> hint(nv, -1);
  const std::vector<int>& int_args = regs.int_args;
  auto hint_args = [&](const std::vector<int>& vs, int first_int) {
    int ni = first_int, nf = 0;
    for (int v : vs) {
      bool fl = f_vt(f, v) == VT::F64;
      int& k = fl ? nf : ni;
      if (fl ? k < regs.float_args : k < static_cast<int>(int_args.size())) {
        int r = fl ? k : int_args[static_cast<size_t>(k)];
        if (hint[static_cast<size_t>(v)] < 0) hint[static_cast<size_t>(v)] = r;
      }
      ++k;
    }
  };
  for (const MBlock& blk : f.blocks)
    for (const MInst& m : blk.code) {
      if (m.op == MOp::ARGS) hint_args(m.params, 0);
      if (m.op == MOp::CALL) hint_args(m.uses, 0);
      if (m.op == MOp::CALLH)
        hint_args(m.uses, static_cast<Helper>(m.aux) == Helper::PrintStr || static_cast<Helper>(m.aux) == Helper::Math);
    }
  // The scan.
  std::vector<Interval*> active;  // holding a register
  std::vector<bool> gpr_free(kMaxRegs, false), xmm_free(kMaxRegs, false);
  for (int r : regs.caller_saved) gpr_free[static_cast<size_t>(r)] = true;
  for (int r : regs.callee_saved) gpr_free[static_cast<size_t>(r)] = true;
  for (int r : regs.fprs) xmm_free[static_cast<size_t>(r)] = true;
  // A value live across a call needs a register the call keeps (x86-64 keeps no float
  // register: such floats go to the stack).
  auto allowed = [&](const Interval& iv, int r) {
    if (iv.vt == VT::F64) return has(regs.fprs, r) && (!iv.crosses_call || has(regs.fprs_callee_saved, r));
    if (!iv.crosses_call) return true;
    return has(regs.callee_saved, r);
  };
  auto spill = [&](Interval& iv) { iv.loc = Loc{-1, a.num_slots++}; };
  std::vector<bool> callee_used(kMaxRegs, false), fpr_callee_used(kMaxRegs, false);
  for (Interval& iv : a.intervals) {
    // Expire the intervals that ended before this one starts.
    for (auto it = active.begin(); it != active.end();) {
      if ((*it)->end < iv.start) {
        ((*it)->vt == VT::F64 ? xmm_free : gpr_free)[static_cast<size_t>((*it)->loc.reg)] = true;
        it = active.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<bool>& free = iv.vt == VT::F64 ? xmm_free : gpr_free;
    int reg = -1;
    int h = hint[static_cast<size_t>(iv.vreg)];
    if (h >= 0 && free[static_cast<size_t>(h)] && allowed(iv, h)) reg = h;
    if (reg >= 0) {
    } else if (iv.vt == VT::F64) {
      for (int r : regs.fprs)
        if (reg < 0 && free[static_cast<size_t>(r)] && allowed(iv, r)) reg = r;
    } else {
      // Caller-saved first: they cost no save in the prologue.
      if (!iv.crosses_call)
        for (int r : regs.caller_saved)
          if (reg < 0 && free[static_cast<size_t>(r)]) reg = r;
      for (int r : regs.callee_saved)
        if (reg < 0 && free[static_cast<size_t>(r)]) reg = r;
    }
    if (reg < 0) {
      // Spill whichever ends last: this one, or an active one whose register it may use.
      Interval* victim = nullptr;
      for (Interval* o : active)
        if (o->vt == iv.vt && allowed(iv, o->loc.reg) && (!victim || o->end > victim->end)) victim = o;
      if (victim && victim->end > iv.end) {
        reg = victim->loc.reg;
        spill(*victim);
        active.erase(std::find(active.begin(), active.end(), victim));
      } else {
        spill(iv);
        continue;
      }
    }
    free[static_cast<size_t>(reg)] = false;
    iv.loc = Loc{reg, -1};
    if (iv.vt != VT::F64 && has(regs.callee_saved, reg)) callee_used[static_cast<size_t>(reg)] = true;
    if (iv.vt == VT::F64 && has(regs.fprs_callee_saved, reg)) fpr_callee_used[static_cast<size_t>(reg)] = true;
    active.push_back(&iv);
  }
  a.loc.assign(nv, Loc{});
  for (const Interval& iv : a.intervals) a.loc[static_cast<size_t>(iv.vreg)] = iv.loc;
  for (int r : regs.callee_saved)
    if (callee_used[static_cast<size_t>(r)]) a.callee_saved.push_back(r);
  for (int r : regs.fprs_callee_saved)
    if (fpr_callee_used[static_cast<size_t>(r)]) a.fpr_callee_saved.push_back(r);
  return a;
}

}  // namespace descent::native
