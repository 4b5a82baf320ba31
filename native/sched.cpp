// Stage 5: list scheduling inside each block.
//
// Between two calls (and the other instructions that reach outside the function: checks that
// may fail, global loads and stores, divisions), instructions may run in any order that
// keeps each value's definition before its uses and each register's old value read before
// it is overwritten. The list scheduler picks, cycle by cycle, the ready instruction with the
// longest latency-weighted path to the end of its region (its "height"), so a slow multiply
// or division starts early and the instructions that do not need it fill the wait. An
// instruction that sets the flags stays glued to the one that reads them.
//
// An out-of-order x86 core reorders again by itself, so the gain here is small: the stage is
// here because every in-order core needs it, and because its view shows the dependences.
#include <algorithm>
#include <string>

#include "native/backend.h"

namespace descent::native {

namespace {

int latency(MOp op) {
  switch (op) {
    case MOp::IMUL: case MOp::IMULI: case MOp::MULHS: case MOp::MADD: case MOp::MSUB: return 3;
    case MOp::IDIV: case MOp::IREM: case MOp::SDIVSAFE: case MOp::SREMSAFE: return 25;
    case MOp::FADD: case MOp::FSUB: case MOp::FMUL: case MOp::CVTSI2SD: case MOp::CVTTSD2SI:
    case MOp::FMIN: case MOp::FMAX: return 4;
    case MOp::FDIV: return 14;
    case MOp::FSQRT: return 18;
    case MOp::LDG: case MOp::LDGCHK: return 4;
    default: return 1;
  }
}

constexpr int kWindow = 64;

bool sets_flags_for_next(MOp op) {
  return op == MOp::CMP || op == MOp::CMPI || op == MOp::TEST || op == MOp::UCOMI;
}

// Ends a scheduling region: nothing moves across it.
bool is_barrier(MOp op) {
  switch (op) {
    case MOp::CALL: case MOp::CALLH: case MOp::CALLCHECK: case MOp::TICK: case MOp::ARGS:
    case MOp::JMP: case MOp::JCC: case MOp::RET: case MOp::HALT: case MOp::CBNZ: case MOp::CBZ:
      return true;
    default: return false;
  }
}
// Keeps its order relative to the others of its kind.
bool is_ordered(MOp op) {
  switch (op) {
    case MOp::LDG: case MOp::LDGCHK: case MOp::STG: case MOp::DIVCHECK: case MOp::CVTTSD2SI:
    case MOp::IDIV: case MOp::IREM: case MOp::SDIVSAFE: case MOp::SREMSAFE:
      return true;
    default: return false;
  }
}

struct Unit {
  std::vector<int> insts;  // indices into the region's code (1, or 2 when glued)
  std::vector<int> succs;
  int preds = 0;
  int height = 0;
  int lat = 1;
  int earliest = 0;
};

bool touches(const MInst& m, int v, bool as_def) {
  if (as_def) return m.def == v;
  return std::find(m.uses.begin(), m.uses.end(), v) != m.uses.end();
}

// Schedules code[lo, hi) (no barriers inside); returns the new order and logs moves.
std::vector<MInst> schedule_region(std::vector<MInst>& code, int lo, int hi, int block,
                                   std::vector<std::string>* log) {
  std::vector<Unit> units;
  for (int i = lo; i < hi; ++i) {
    Unit u;
    u.insts.push_back(i);
    if (sets_flags_for_next(code[static_cast<size_t>(i)].op) && i + 1 < hi) u.insts.push_back(++i);
    for (int k : u.insts) u.lat = std::max(u.lat, latency(code[static_cast<size_t>(k)].op));
    units.push_back(u);
  }
  size_t n = units.size();
  auto dep = [&](const Unit& a, const Unit& b) {
    for (int i : a.insts)
      for (int j : b.insts) {
        const MInst& x = code[static_cast<size_t>(i)];
        const MInst& y = code[static_cast<size_t>(j)];
        if (x.def >= 0 && (touches(y, x.def, false) || y.def == x.def)) return true;  // RAW, WAW
        if (y.def >= 0 && touches(x, y.def, false)) return true;                        // WAR
        if (is_ordered(x.op) && is_ordered(y.op)) return true;
      }
    return false;
  };
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b)
      if (dep(units[a], units[b])) {
        units[a].succs.push_back(static_cast<int>(b));
        ++units[b].preds;
      }
  for (size_t a = n; a-- > 0;) {
    int h = 0;
    for (int s : units[a].succs) h = std::max(h, units[static_cast<size_t>(s)].height);
    units[a].height = h + units[a].lat;
  }
  std::vector<int> ready;
  for (size_t a = 0; a < n; ++a)
    if (units[a].preds == 0) ready.push_back(static_cast<int>(a));
  std::vector<MInst> out;
  int cycle = 0;
  int position = 0;
  while (!ready.empty()) {
    // The highest unit that can start now; if none can, the one that can start first.
    auto best = ready.end();
    for (auto it = ready.begin(); it != ready.end(); ++it) {
      const Unit& u = units[static_cast<size_t>(*it)];
      if (u.earliest > cycle) continue;
      if (best == ready.end() || u.height > units[static_cast<size_t>(*best)].height ||
          (u.height == units[static_cast<size_t>(*best)].height && *it < *best))
        best = it;
    }
    if (best == ready.end()) {
      best = std::min_element(ready.begin(), ready.end(), [&](int a, int b) {
        return units[static_cast<size_t>(a)].earliest < units[static_cast<size_t>(b)].earliest;
      });
      cycle = units[static_cast<size_t>(*best)].earliest;
    }
    int u = *best;
    ready.erase(best);
    Unit& un = units[static_cast<size_t>(u)];
    if (log && u != position)
      log->push_back("b" + std::to_string(block) + ": " + mop_name(code[static_cast<size_t>(un.insts[0])].op) +
                     " (height " + std::to_string(un.height) + ") moved from " + std::to_string(u) +
                     " to " + std::to_string(position) + " of its region, cycle " + std::to_string(cycle));
    ++position;
    for (int k : un.insts) out.push_back(code[static_cast<size_t>(k)]);
    for (int s : un.succs) {
      Unit& su = units[static_cast<size_t>(s)];
      su.earliest = std::max(su.earliest, cycle + un.lat);
      if (--su.preds == 0) ready.push_back(s);
    }
    ++cycle;
  }
  return out;
}

}  // namespace

void schedule(MFunction& f, std::vector<std::string>* log) {
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    std::vector<MInst>& code = f.blocks[b].code;
    std::vector<MInst> out;
    int lo = 0;
    int n = static_cast<int>(code.size());
    for (int i = 0; i <= n; ++i) {
      // A flags setter glued to a branch belongs with the branch (a barrier).
      // A region also ends after kWindow instructions: the dependence graph is quadratic in a
      // region's length, and a window this wide already holds every latency there is to hide.
      bool window = i < n && i - lo >= kWindow && !sets_flags_for_next(code[static_cast<size_t>(i) - 1].op);
      bool barrier = i == n || window || is_barrier(code[static_cast<size_t>(i)].op) ||
                     (sets_flags_for_next(code[static_cast<size_t>(i)].op) && i + 1 < n &&
                      is_barrier(code[static_cast<size_t>(i) + 1].op));
      if (!barrier) continue;
      std::vector<MInst> part = schedule_region(code, lo, i, static_cast<int>(b), log);
      out.insert(out.end(), part.begin(), part.end());
      if (i < n) {
        out.push_back(code[static_cast<size_t>(i)]);
        if (sets_flags_for_next(code[static_cast<size_t>(i)].op)) out.push_back(code[static_cast<size_t>(++i)]);
      }
      lo = i + 1;
    }
    code = std::move(out);
  }
}

}  // namespace descent::native
