#include "vm/reg_alloc.h"

#include <algorithm>
#include <cstdio>

namespace descent {
namespace {

// A set of virtual registers.
struct Bits {
  std::vector<uint64_t> w;
  explicit Bits(int n = 0) : w(static_cast<size_t>((n + 63) / 64), 0) {}
  bool get(int i) const { return (w[static_cast<size_t>(i) / 64] >> (i % 64)) & 1; }
  void set(int i) { w[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64); }
  void reset(int i) { w[static_cast<size_t>(i) / 64] &= ~(uint64_t{1} << (i % 64)); }
  template <class F>
  void each(F f) const {
    for (size_t k = 0; k < w.size(); ++k)
      for (uint64_t x = w[k]; x; x &= x - 1)
        f(static_cast<int>(k * 64 + static_cast<size_t>(__builtin_ctzll(x))));
  }
};

struct BasicBlock {
  int first = 0, last = 0;  // instruction range, inclusive
  std::vector<int> succ;
  Bits use, def, in, out;
};

std::vector<BasicBlock> basic_blocks(const RegFunction& f) {
  int n = static_cast<int>(f.code.size());
  std::vector<char> leader(static_cast<size_t>(n) + 1, 0);
  leader[0] = 1;
  for (int pc = 0; pc < n; ++pc) {
    Op op = f.code[static_cast<size_t>(pc)].op;
    if (is_jump(op)) leader[f.code[static_cast<size_t>(pc)].c] = 1;
    if (is_jump(op) || !falls_through(op)) leader[static_cast<size_t>(pc) + 1] = 1;
  }
  std::vector<BasicBlock> blocks;
  std::vector<int> block_of(static_cast<size_t>(n) + 1, -1);
  for (int pc = 0; pc < n; ++pc) {
    if (leader[static_cast<size_t>(pc)]) {
      blocks.emplace_back();
      blocks.back().first = pc;
    }
    blocks.back().last = pc;
    block_of[static_cast<size_t>(pc)] = static_cast<int>(blocks.size()) - 1;
  }
  for (auto& b : blocks) {
    const Instr& in = f.code[static_cast<size_t>(b.last)];
    if (is_jump(in.op) && in.c < n) b.succ.push_back(block_of[in.c]);
    if (falls_through(in.op) && b.last + 1 < n)
      b.succ.push_back(block_of[static_cast<size_t>(b.last) + 1]);
  }
  return blocks;
}

// The basic blocks of f with their live-in and live-out sets over nloc locations (virtual
// registers, or the frame locations of allocated code).
std::vector<BasicBlock> solve_liveness(const RegFunction& f, int nloc) {
  std::vector<BasicBlock> blocks = basic_blocks(f);
  std::vector<int> uses, defs;
  for (auto& b : blocks) {
    b.use = b.def = b.in = b.out = Bits(nloc);
    for (int pc = b.first; pc <= b.last; ++pc) {
      uses.clear();
      defs.clear();
      instr_uses(f, pc, uses);
      instr_defs(f, pc, defs);
      for (int v : uses)
        if (!b.def.get(v)) b.use.set(v);
      for (int v : defs) b.def.set(v);
    }
  }
  // Backward dataflow: out = union of the successors' in; in = use + (out - def).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = blocks.size(); i-- > 0;) {
      BasicBlock& b = blocks[i];
      for (int s : b.succ)
        for (size_t k = 0; k < b.out.w.size(); ++k)
          b.out.w[k] |= blocks[static_cast<size_t>(s)].in.w[k];
      for (size_t k = 0; k < b.in.w.size(); ++k) {
        uint64_t in = b.use.w[k] | (b.out.w[k] & ~b.def.w[k]);
        if (in != b.in.w[k]) {
          b.in.w[k] = in;
          changed = true;
        }
      }
    }
  }
  return blocks;
}

}  // namespace

struct Liveness::Blocks {
  std::vector<BasicBlock> blocks;
  std::vector<int> block_of;  // per instruction
};

Liveness::Liveness(const RegFunction& f) : f_(f), b_(std::make_unique<Blocks>()) {
  b_->blocks = solve_liveness(f, f.frame_size());
  b_->block_of.assign(f.code.size(), 0);
  for (size_t i = 0; i < b_->blocks.size(); ++i)
    for (int pc = b_->blocks[i].first; pc <= b_->blocks[i].last; ++pc)
      b_->block_of[static_cast<size_t>(pc)] = static_cast<int>(i);
}

Liveness::~Liveness() = default;

bool Liveness::live_after(int pc, int loc) const {
  if (loc < 0 || loc >= f_.frame_size()) return true;  // not a location this code tracks
  const BasicBlock& b = b_->blocks[static_cast<size_t>(b_->block_of[static_cast<size_t>(pc)])];
  std::vector<int> uses, defs;
  for (int at = pc + 1; at <= b.last; ++at) {
    uses.clear();
    defs.clear();
    instr_uses(f_, at, uses);
    if (std::find(uses.begin(), uses.end(), loc) != uses.end()) return true;
    instr_defs(f_, at, defs);
    if (std::find(defs.begin(), defs.end(), loc) != defs.end()) return false;
  }
  return b.out.get(loc);
}

std::vector<LiveInterval> compute_live_intervals(const RegFunction& f) {
  int nv = f.num_vregs;
  std::vector<BasicBlock> blocks = solve_liveness(f, nv);
  std::vector<int> uses, defs;
  // Each interval is the hull of the positions where its register is live.
  std::vector<int> lo(static_cast<size_t>(nv), -1), hi(static_cast<size_t>(nv), -1);
  auto touch = [&](int v, int pos) {
    size_t i = static_cast<size_t>(v);
    if (lo[i] < 0 || pos < lo[i]) lo[i] = pos;
    if (pos > hi[i]) hi[i] = pos;
  };
  for (const auto& b : blocks) {
    Bits live = b.out;
    live.each([&](int v) { touch(v, 2 * b.last + 1); });
    for (int pc = b.last; pc >= b.first; --pc) {
      defs.clear();
      uses.clear();
      instr_defs(f, pc, defs);
      instr_uses(f, pc, uses);
      for (int v : defs) {
        touch(v, 2 * pc + 1);
        live.reset(v);
      }
      for (int v : uses) {
        touch(v, 2 * pc);
        live.set(v);
      }
    }
    live.each([&](int v) { touch(v, 2 * b.first); });
  }
  std::vector<LiveInterval> out;
  for (int v = 0; v < nv; ++v) {
    if (lo[static_cast<size_t>(v)] < 0) continue;
    LiveInterval iv;
    iv.vreg = v;
    iv.start = lo[static_cast<size_t>(v)];
    iv.end = hi[static_cast<size_t>(v)];
    iv.type = v < static_cast<int>(f.vreg_types.size()) ? f.vreg_types[static_cast<size_t>(v)]
                                                        : Type::Unknown;
    out.push_back(iv);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LiveInterval& a, const LiveInterval& b) { return a.start < b.start; });
  return out;
}

namespace {

}  // namespace

void linear_scan_assign(std::vector<LiveInterval>& iv, int nregs) {
  std::vector<size_t> active;  // indices into iv, sorted by end
  std::vector<char> used(static_cast<size_t>(std::max(nregs, 1)), 0);
  auto add_active = [&](size_t i) {
    auto at = std::upper_bound(active.begin(), active.end(), i,
                               [&](size_t x, size_t y) { return iv[x].end < iv[y].end; });
    active.insert(at, i);
  };
  for (size_t i = 0; i < iv.size(); ++i) {
    iv[i].reg = -1;
    // Expire intervals that ended before this one starts.
    while (!active.empty() && iv[active.front()].end < iv[i].start) {
      used[static_cast<size_t>(iv[active.front()].reg)] = 0;
      active.erase(active.begin());
    }
    if (static_cast<int>(active.size()) < nregs) {
      int r = 0;
      while (used[static_cast<size_t>(r)]) ++r;
      used[static_cast<size_t>(r)] = 1;
      iv[i].reg = r;
      add_active(i);
      continue;
    }
    // No register left: spill whichever interval ends last.
    if (!active.empty() && iv[active.back()].end > iv[i].end) {
      size_t s = active.back();
      active.pop_back();
      iv[i].reg = iv[s].reg;
      iv[s].reg = -1;
      add_active(i);
    }
  }
}

namespace {

// Runs `assign` (with nregs allocatable registers) and returns whether anything spilled; a
// register out of range counts as a spill (see RegisterAssigner).
bool assign_with(const RegisterAssigner& assign, std::vector<LiveInterval>& iv, int nregs) {
  for (auto& x : iv) x.reg = -1, x.slot = -1;
  if (assign)
    assign(iv, nregs);
  else
    linear_scan_assign(iv, nregs);
  bool spilled = false;
  for (auto& x : iv) {
    if (x.reg >= nregs || x.reg < 0) x.reg = -1;
    spilled = spilled || x.reg < 0;
  }
  return spilled;
}

// Spill slots for the spilled intervals: greedy interval colouring, reusing a slot whose
// previous occupant has ended. Returns the number of slots.
int assign_slots(std::vector<LiveInterval>& iv) {
  std::vector<int> slot_end;  // per slot: end of its last occupant
  for (auto& x : iv) {
    if (!x.spilled()) continue;
    size_t s = 0;
    while (s < slot_end.size() && slot_end[s] >= x.start) ++s;
    if (s == slot_end.size()) slot_end.push_back(0);
    slot_end[s] = x.end;
    x.slot = static_cast<int>(s);
  }
  return static_cast<int>(slot_end.size());
}

}  // namespace

std::vector<LiveInterval> allocate_registers(RegFunction& f, int num_registers,
                                             const RegisterAssigner& assign) {
  int n = std::clamp(num_registers, kMinRegisters, kMaxRegisters);
  std::vector<LiveInterval> iv = compute_live_intervals(f);
  // First try the whole file; only if something spills, keep two registers as scratch.
  bool spills = assign_with(assign, iv, n);
  if (spills) assign_with(assign, iv, n - 2);
  int nslots = assign_slots(iv);
  int nregs = 0;
  for (const auto& x : iv) nregs = std::max(nregs, x.reg + 1);
  if (spills) nregs = n;
  const uint16_t scratch[2] = {static_cast<uint16_t>(n - 2), static_cast<uint16_t>(n - 1)};

  // Where each virtual register lives: a register, or a spill slot's frame offset.
  size_t nv = static_cast<size_t>(f.num_vregs);
  std::vector<int> reg_of(nv, -1), off_of(nv, -1);
  for (const auto& x : iv) {
    if (x.spilled())
      off_of[static_cast<size_t>(x.vreg)] = nregs + x.slot;
    else
      reg_of[static_cast<size_t>(x.vreg)] = x.reg;
  }
  auto location = [&](int v) {
    size_t i = static_cast<size_t>(v);
    return static_cast<uint16_t>(reg_of[i] >= 0 ? reg_of[i] : std::max(off_of[i], 0));
  };

  std::vector<Instr> code;
  std::vector<SourceLoc> locs;
  std::vector<int> new_pc(f.code.size() + 1, 0);
  std::vector<char> remap;  // per new instruction: its Target is still an old pc
  struct Tramp {
    int branch;  // new pc of the branch whose taken edge needs the spill
    uint16_t reg, off;
    int old_target;
  };
  std::vector<Tramp> tramps;
  auto put = [&](Instr in, SourceLoc loc, bool old_target) {
    code.push_back(in);
    locs.push_back(loc);
    remap.push_back(old_target ? 1 : 0);
  };

  for (size_t pc = 0; pc < f.code.size(); ++pc) {
    new_pc[pc] = static_cast<int>(code.size());
    Instr in = f.code[pc];
    SourceLoc loc = f.locs[pc];
    const OpInfo& info = op_info(in.op);
    int nscratch = 0;
    int reloaded[2] = {-1, -1};
    auto use = [&](uint16_t v) -> uint16_t {
      if (reg_of[v] >= 0) return static_cast<uint16_t>(reg_of[v]);
      for (int k = 0; k < nscratch; ++k)
        if (reloaded[k] == v) return scratch[k];
      uint16_t s = scratch[nscratch];
      reloaded[nscratch++] = v;
      put(Instr{Op::RELOAD, s, static_cast<uint16_t>(off_of[v]), 0}, loc, false);
      return s;
    };
    int spill_off = -1;
    uint16_t spill_reg = 0;
    auto def = [&](uint16_t v, uint16_t in_reg) -> uint16_t {
      if (reg_of[v] >= 0) return static_cast<uint16_t>(reg_of[v]);
      spill_off = off_of[v];
      spill_reg = in_reg;
      return in_reg;
    };
    uint16_t* fields[3] = {&in.a, &in.b, &in.c};
    Arg roles[3] = {info.a, info.b, info.c};
    for (int k = 0; k < 3; ++k) {
      if (roles[k] == Arg::Use) *fields[k] = use(*fields[k]);
      if (roles[k] == Arg::UseDef) *fields[k] = def(*fields[k], use(*fields[k]));
    }
    for (int k = 0; k < 3; ++k)
      if (roles[k] == Arg::Def) *fields[k] = def(*fields[k], scratch[0]);
    if (uint16_t* l = location_list(f, in)) {
      for (int k = 0; k < l[0]; ++k) l[1 + k] = location(l[1 + k]);
    } else if (in.op == Op::PRINT) {
      uint16_t* l = &f.lists[in.a];
      for (int k = 0; k < l[0]; ++k)
        if (l[1 + 2 * k] != kPrintStr) l[2 + 2 * k] = location(l[2 + 2 * k]);
    }
    // A copy that allocation turned into `move rX, rX` disappears.
    if (in.op == Op::MOVE && in.a == in.b && spill_off < 0) continue;
    put(in, loc, is_jump(in.op));
    if (spill_off >= 0) {
      Instr sp{Op::SPILL, spill_reg, static_cast<uint16_t>(spill_off), 0};
      // A branch that writes a spilled register (FORLOOP) spills on both edges: after it
      // for the fall-through, and in a trampoline for the taken edge.
      if (is_jump(in.op))
        tramps.push_back(Tramp{static_cast<int>(code.size()) - 1, spill_reg,
                               static_cast<uint16_t>(spill_off), in.c});
      if (falls_through(in.op)) put(sp, loc, false);
    }
  }
  new_pc[f.code.size()] = static_cast<int>(code.size());
  for (const auto& t : tramps) {
    SourceLoc loc = locs[static_cast<size_t>(t.branch)];
    code[static_cast<size_t>(t.branch)].c = static_cast<uint16_t>(code.size());
    remap[static_cast<size_t>(t.branch)] = 0;
    put(Instr{Op::SPILL, t.reg, t.off, 0}, loc, false);
    put(Instr{Op::JMP, 0, 0, static_cast<uint16_t>(t.old_target)}, loc, true);
  }
  for (size_t i = 0; i < code.size(); ++i)
    if (remap[i]) code[i].c = static_cast<uint16_t>(new_pc[code[i].c]);

  // Parameters arrive where their intervals live. One whose incoming value is never read
  // (unused, or assigned before any read: its interval starts later) may share its
  // location with a live parameter, so it lands somewhere harmless instead: a register
  // not live on entry, or one extra slot.
  std::vector<int> entry_start(nv, -1);
  for (const auto& x : iv) entry_start[static_cast<size_t>(x.vreg)] = x.start;
  std::vector<uint16_t> params;
  int discard = -1;
  for (size_t p = 0; p < f.param_types.size(); ++p) {
    if (entry_start[p] == 0) {
      params.push_back(location(static_cast<int>(p)));
      continue;
    }
    if (discard < 0) discard = spills ? scratch[0] : -1;
    for (int r = 0; r < nregs && discard < 0; ++r) {
      bool busy = false;
      for (const auto& x : iv) busy = busy || (x.reg == r && x.start == 0);
      if (!busy) discard = r;
    }
    if (discard < 0) discard = nregs + nslots++;
    params.push_back(static_cast<uint16_t>(discard));
  }

  f.code = std::move(code);
  f.locs = std::move(locs);
  f.param_locs = std::move(params);
  f.allocated = true;
  f.file_size = n;
  f.num_regs = nregs;
  f.num_slots = nslots;
  return iv;
}

std::string print_live_intervals(const RegFunction& f, const std::vector<LiveInterval>& iv) {
  int n = static_cast<int>(f.code.size());
  int scale = std::max(1, (n + 79) / 80);  // instructions per column
  int cols = (n + scale - 1) / scale;
  size_t name_w = 4;
  for (const auto& x : iv)
    if (static_cast<size_t>(x.vreg) < f.vreg_names.size())
      name_w = std::max(name_w, f.vreg_names[static_cast<size_t>(x.vreg)].size());
  char buf[160];
  std::string out;
  auto pad = [](std::string s, size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
  };
  // Two header rows of instruction numbers (tens, units), or the scale.
  std::string head = pad("", 6 + name_w + 1 + 6 + 12 + 5) + " ";
  std::string tens = head, units = head;
  for (int c = 0; c < cols; ++c) {
    int pc = c * scale;
    tens += pc % 10 == 0 || c == 0 ? static_cast<char>('0' + (pc / 10) % 10) : ' ';
    units += static_cast<char>('0' + pc % 10);
  }
  if (scale > 1) out += "(one column per " + std::to_string(scale) + " instructions)\n";
  out += tens + "\n" + units + "\n";
  for (const auto& x : iv) {
    std::string name = static_cast<size_t>(x.vreg) < f.vreg_names.size()
                           ? f.vreg_names[static_cast<size_t>(x.vreg)]
                           : "";
    std::snprintf(buf, sizeof buf, "v%-4d ", x.vreg);
    std::string line = buf + pad(name, name_w) + " " + pad(type_name(x.type), 6);
    std::snprintf(buf, sizeof buf, "[%d..%d]", x.first_pc(), x.last_pc());
    line += pad(buf, 12);
    if (x.spilled())
      std::snprintf(buf, sizeof buf, "s%d", x.slot);
    else
      std::snprintf(buf, sizeof buf, "r%d", x.reg);
    line += pad(buf, 5) + "|";
    for (int c = 0; c < cols; ++c) {
      // Live somewhere in the column's instructions [c*scale, (c+1)*scale).
      int lo = 2 * c * scale, hi = 2 * (c + 1) * scale - 1;
      bool live = x.start <= hi && x.end >= lo;
      line += live ? (x.spilled() ? '~' : '=') : '.';
    }
    out += line + "|\n";
  }
  return out;
}

}  // namespace descent
