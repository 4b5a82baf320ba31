// Lab a64_constants: a 64-bit constant in the fewest instructions (see a64_constants_lab.h and
// README.md).
#include "a64_constants_lab.h"

using namespace descent::native::a64;

std::vector<A64Inst> build_constant(int64_t value, int reg) {
  // Always four: movz with the low 16 bits, then a movk for each other chunk. Correct for
  // every value, but 0, -1, 0xffff_0000 or 0x00ff00ff00ff00ff take one instruction.
  std::vector<A64Inst> out;
  auto u = static_cast<uint64_t>(value);
  for (int s = 0; s < 64; s += 16) {
    A64Inst i;
    i.form = s == 0 ? Form::MOVZ : Form::MOVK;
    i.r[0] = static_cast<uint8_t>(reg);
    i.imm = static_cast<int64_t>((u >> s) & 0xffff);
    i.shift = s;
    out.push_back(i);
  }
  return out;
}
