// Lab linear_scan: linear-scan register allocation (Poletto & Sarkar 1999).
#include <algorithm>

#include "linear_scan_lab.h"

using namespace descent;

void linear_scan(std::vector<LiveInterval>& intervals, int num_registers) {
  std::vector<size_t> active;  // intervals holding a register, sorted by end
  std::vector<bool> free_reg(static_cast<size_t>(num_registers), true);
  auto by_end = [&](size_t a, size_t b) { return intervals[a].end < intervals[b].end; };
  for (size_t i = 0; i < intervals.size(); ++i) {
    LiveInterval& cur = intervals[i];
    // Expire: an interval that ended before this one starts gives its register back.
    while (!active.empty() && intervals[active.front()].end < cur.start) {
      free_reg[static_cast<size_t>(intervals[active.front()].reg)] = true;
      active.erase(active.begin());
    }
    auto r = std::find(free_reg.begin(), free_reg.end(), true);
    if (r != free_reg.end()) {
      *r = false;
      cur.reg = static_cast<int>(r - free_reg.begin());
      active.insert(std::upper_bound(active.begin(), active.end(), i, by_end), i);
      continue;
    }
    // Every register is taken: spill whichever ends furthest, this one or an active one.
    if (!active.empty() && intervals[active.back()].end > cur.end) {
      LiveInterval& victim = intervals[active.back()];
      active.pop_back();
      cur.reg = victim.reg;
      victim.reg = -1;
      active.insert(std::upper_bound(active.begin(), active.end(), i, by_end), i);
    } else {
      cur.reg = -1;
    }
  }
}
