// The most likely mistake: when every register is taken, spill the NEW interval, always.
// The code stays correct, but a value that lives across the whole function keeps its
// register while many short ones go to the frame: more spills than Poletto & Sarkar's rule.
#include <algorithm>

#include "linear_scan_lab.h"

using namespace descent;

void linear_scan(std::vector<LiveInterval>& intervals, int num_registers) {
  std::vector<size_t> active;
  std::vector<bool> free_reg(static_cast<size_t>(num_registers), true);
  for (size_t i = 0; i < intervals.size(); ++i) {
    LiveInterval& cur = intervals[i];
    for (size_t k = 0; k < active.size();) {
      if (intervals[active[k]].end < cur.start) {
        free_reg[static_cast<size_t>(intervals[active[k]].reg)] = true;
        active.erase(active.begin() + static_cast<long>(k));
      } else {
        ++k;
      }
    }
    auto r = std::find(free_reg.begin(), free_reg.end(), true);
    if (r == free_reg.end()) {
      cur.reg = -1;
      continue;
    }
    *r = false;
    cur.reg = static_cast<int>(r - free_reg.begin());
    active.push_back(i);
  }
}
