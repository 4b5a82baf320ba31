// Lab linear_scan: linear-scan register allocation (see linear_scan_lab.h and README.md).
#include "linear_scan_lab.h"

using namespace descent;

void linear_scan(std::vector<LiveInterval>& intervals, int num_registers) {
  (void)num_registers;
  // Every interval stays spilled (reg == -1): the code is correct, but every use of every
  // value is a RELOAD from the frame. Give registers out instead.
  for (auto& iv : intervals) iv.reg = -1;
}
