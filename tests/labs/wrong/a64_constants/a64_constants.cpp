// Lab a64_constants, a likely mistake: movn given the chunk itself, not its complement (movn
// writes ~(imm << s), so every value built from ones comes out wrong).
#include "a64_constants_lab.h"

using namespace descent::native::a64;

namespace {
A64Inst make(Form f, int reg, int64_t imm, int shift) {
  A64Inst i;
  i.form = f;
  i.r[0] = static_cast<uint8_t>(reg);
  i.r[1] = 31;  // xzr, for orr
  i.imm = imm;
  i.shift = shift;
  return i;
}
}  // namespace

std::vector<A64Inst> build_constant(int64_t value, int reg) {
  auto u = static_cast<uint64_t>(value);
  int zeros = 0, ones = 0;
  for (int s = 0; s < 64; s += 16) {
    uint64_t c = (u >> s) & 0xffff;
    zeros += c == 0;
    ones += c == 0xffff;
  }
  uint32_t field = 0;
  if (zeros < 3 && ones < 3 && encode_logical_imm(u, &field)) return {make(Form::ORR_RRI, reg, value, 0)};
  bool from_ones = ones > zeros;
  uint64_t fill = from_ones ? 0xffff : 0;
  std::vector<A64Inst> out;
  for (int s = 0; s < 64; s += 16) {
    uint64_t c = (u >> s) & 0xffff;
    if (c == fill) continue;
    if (out.empty()) out.push_back(make(from_ones ? Form::MOVN : Form::MOVZ, reg, int64_t(c), s));
    else out.push_back(make(Form::MOVK, reg, int64_t(c), s));
  }
  if (out.empty()) out.push_back(make(from_ones ? Form::MOVN : Form::MOVZ, reg, 0, 0));
  return out;
}
