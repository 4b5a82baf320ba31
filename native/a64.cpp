// The A64 encoder (a64.h): each form's fixed bits from the table, then its operands placed in
// the fields the Arm ARM gives for that encoding class. Register fields are five bits at
// fixed places: Rd/Rt at 0, Rn at 5, Rm at 16, Ra/Rt2 at 10.
#include "native/a64.h"

#include <bit>
#include <string>

namespace descent::native::a64 {

namespace {

const FormInfo kForms[] = {
#define DESCENT_A64_INFO(name, mn, llvm, word, a, b, c, d) {mn, llvm, word, {Kind::a, Kind::b, Kind::c, Kind::d}},
    DESCENT_A64_FORMS(DESCENT_A64_INFO)
#undef DESCENT_A64_INFO
};

const char* const kCondNames[] = {"eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc",
                                  "hi", "ls", "ge", "lt", "gt", "le", "al", "nv"};

uint64_t ror(uint64_t v, int r, int size) {
  const uint64_t mask = size == 64 ? ~0ull : (1ull << size) - 1;
  v &= mask;
  if (r == 0) return v;
  return ((v >> r) | (v << (size - r))) & mask;
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

}  // namespace

const FormInfo& form_info(Form f) { return kForms[static_cast<int>(f)]; }

const char* x_name(int r, bool sp) {
  static const char* const names[] = {"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
                                      "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
                                      "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30"};
  if (r >= 0 && r < 31) return names[r];
  return sp ? "sp" : "xzr";
}

const char* cond_name(Cond c) { return kCondNames[static_cast<int>(c) & 15]; }
Cond invert(Cond c) { return static_cast<Cond>(static_cast<int>(c) ^ 1); }

// Smallest element first: the value must repeat it, and the element must be a run of ones
// rotated (ROR) by some amount. imms carries the element size in its high bits (a zero
// followed by ones, read from the top: 0xxxxx for 32, 10xxxx for 16, ...) and the run's
// length minus one in the rest; N is set for 64-bit elements.
bool encode_logical_imm(uint64_t value, uint32_t* n_immr_imms) {
  if (value == 0 || value == ~0ull) return false;
  int size = 64;
  while (size > 2) {
    const int half = size / 2;
    const uint64_t mask = (1ull << half) - 1;
    if ((value & mask) != ((value >> half) & mask)) break;
    size = half;
  }
  const uint64_t mask = size == 64 ? ~0ull : (1ull << size) - 1;
  const uint64_t element = value & mask;
  const int ones = std::popcount(element);
  const uint64_t run = (1ull << ones) - 1;  // ones < size: the element is not all ones
  for (int r = 0; r < size; ++r) {
    if (ror(element, r, size) != run) continue;
    const uint32_t immr = uint32_t((size - r) % size);  // element = ROR(run, immr)
    const uint32_t imms = uint32_t((~(size - 1) << 1) & 0x3f) | uint32_t(ones - 1);
    const uint32_t n = size == 64 ? 1 : 0;
    *n_immr_imms = n << 12 | immr << 6 | imms;
    return true;
  }
  return false;
}

uint64_t decode_logical_imm(uint32_t field) {
  const uint32_t n = (field >> 12) & 1, immr = (field >> 6) & 0x3f, imms = field & 0x3f;
  const uint32_t combined = n << 6 | (~imms & 0x3f);
  if (combined == 0) return 0;  // reserved
  const int len = 31 - std::countl_zero(combined);
  const int size = 1 << len;
  const uint32_t levels = uint32_t(size - 1);
  const uint32_t s = imms & levels, r = immr & levels;
  if (s == levels) return 0;  // reserved: all ones
  uint64_t element = ror((1ull << (s + 1)) - 1, int(r), size);
  uint64_t value = 0;
  for (int at = 0; at < 64; at += size) value |= element << at;
  return value;
}

std::vector<A64Inst> materialize(int64_t value, int reg) {
  auto u = static_cast<uint64_t>(value);
  int zeros = 0, ones = 0;
  for (int s = 0; s < 64; s += 16) {
    zeros += ((u >> s) & 0xffff) == 0;
    ones += ((u >> s) & 0xffff) == 0xffff;
  }
  auto inst = [&](Form f, int64_t imm, int shift) {
    A64Inst i;
    i.form = f;
    i.r[0] = static_cast<uint8_t>(reg);
    i.r[1] = kZr;
    i.imm = imm;
    i.shift = shift;
    return i;
  };
  uint32_t field = 0;
  if (zeros < 3 && ones < 3 && encode_logical_imm(u, &field)) return {inst(Form::ORR_RRI, value, 0)};
  // movn when more chunks are all ones than all zeros: it starts from ~0.
  const bool inverted = ones > zeros;
  const uint64_t fill = inverted ? 0xffff : 0;
  std::vector<A64Inst> out;
  for (int s = 0; s < 64; s += 16) {
    uint64_t chunk = (u >> s) & 0xffff;
    if (chunk == fill) continue;
    if (out.empty()) out.push_back(inst(inverted ? Form::MOVN : Form::MOVZ, int64_t(inverted ? ~chunk & 0xffff : chunk), s));
    else out.push_back(inst(Form::MOVK, int64_t(chunk), s));
  }
  if (out.empty()) out.push_back(inst(inverted ? Form::MOVN : Form::MOVZ, 0, 0));  // 0 or -1
  return out;
}

bool valid(const A64Inst& inst, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  const FormInfo& f = form_info(inst.form);
  int reg = 0;
  for (Kind k : f.ops) {
    switch (k) {
      case Kind::None: break;
      case Kind::X: case Kind::XSP: case Kind::D: case Kind::W:
        if (inst.r[reg++] > 31) return fail("register number past 31");
        break;
      case Kind::I12:
        if (inst.imm < 0 || inst.imm > 4095) return fail("add/sub immediate outside 0..4095");
        break;
      case Kind::I16:
        if (inst.imm < 0 || inst.imm > 0xffff) return fail("movz/movk/movn immediate outside 0..65535");
        if (inst.shift % 16 != 0 || inst.shift < 0 || inst.shift > 48) return fail("shift not 0, 16, 32 or 48");
        break;
      case Kind::LOG: {
        uint32_t field = 0;
        if (!encode_logical_imm(uint64_t(inst.imm), &field)) return fail("not a logical immediate: " + hex(uint64_t(inst.imm)));
        break;
      }
      case Kind::U12:
        if (inst.r[reg++] > 31) return fail("register number past 31");
        if (inst.offset < 0 || inst.offset > 32760 || inst.offset % 8) return fail("offset not a multiple of 8 in 0..32760");
        break;
      case Kind::B12:
        if (inst.r[reg++] > 31) return fail("register number past 31");
        if (inst.offset < 0 || inst.offset > 4095) return fail("byte offset outside 0..4095");
        break;
      case Kind::S9:
        if (inst.r[reg++] > 31) return fail("register number past 31");
        if (inst.offset < -256 || inst.offset > 255) return fail("offset outside -256..255");
        break;
      case Kind::P7:
        if (inst.r[reg++] > 31) return fail("register number past 31");
        if (inst.offset < -512 || inst.offset > 504 || inst.offset % 8) return fail("pair offset not a multiple of 8 in -512..504");
        break;
      case Kind::C: break;
      case Kind::R6:
        if (inst.imm < 0 || inst.imm > 63) return fail("immr outside 0..63");
        break;
      case Kind::S6:
        if (inst.shift < 0 || inst.shift > 63) return fail("imms outside 0..63");
        break;
      case Kind::L26:
        if (inst.offset % 4 || inst.offset < -(1ll << 27) || inst.offset >= (1ll << 27)) return fail("branch out of range (+-128 MiB)");
        break;
      case Kind::L19:
        if (inst.offset % 4 || inst.offset < -(1ll << 20) || inst.offset >= (1ll << 20)) return fail("conditional branch out of range (+-1 MiB)");
        break;
    }
  }
  // A pair with writeback into one of its own data registers, or a load of one register
  // twice, is CONSTRAINED UNPREDICTABLE in the Arm ARM (LLVM refuses to decode it).
  if (inst.form == Form::STP_PRE || inst.form == Form::LDP_POST) {
    if (inst.r[2] != kSp && (inst.r[2] == inst.r[0] || inst.r[2] == inst.r[1]))
      return fail("writeback to a register the pair also transfers");
    if (inst.form == Form::LDP_POST && inst.r[0] == inst.r[1]) return fail("a load pair into one register twice");
  }
  return true;
}

uint32_t encode(const A64Inst& inst) {
  const FormInfo& f = form_info(inst.form);
  uint32_t w = f.word;
  auto r = [&](int k) { return uint32_t(inst.r[k] & 31); };
  const uint32_t cond = uint32_t(inst.cc) & 15;
  switch (inst.form) {
    case Form::ADD_RRR: case Form::SUB_RRR: case Form::AND_RRR: case Form::ORR_RRR: case Form::EOR_RRR:
    case Form::SDIV: case Form::LSLV: case Form::LSRV: case Form::ASRV:
    case Form::FADD: case Form::FSUB: case Form::FMUL: case Form::FDIV:
    case Form::SMULH: case Form::FMIN: case Form::FMAX:
      return w | r(2) << 16 | r(1) << 5 | r(0);
    case Form::ADD_RRI: case Form::SUB_RRI:
      return w | uint32_t(inst.imm & 0xfff) << 10 | r(1) << 5 | r(0);
    case Form::CMP_RR: case Form::FCMP:
      return w | r(1) << 16 | r(0) << 5;
    case Form::CMP_RI: case Form::CMN_RI:
      return w | uint32_t(inst.imm & 0xfff) << 10 | r(0) << 5;
    case Form::AND_RRI: case Form::ORR_RRI: case Form::EOR_RRI: {
      uint32_t field = 0;
      encode_logical_imm(uint64_t(inst.imm), &field);
      return w | field << 10 | r(1) << 5 | r(0);
    }
    case Form::MADD: case Form::MSUB:
      return w | r(2) << 16 | r(3) << 10 | r(1) << 5 | r(0);
    case Form::MOVZ: case Form::MOVK: case Form::MOVN:
      return w | uint32_t((inst.shift / 16) & 3) << 21 | uint32_t(inst.imm & 0xffff) << 5 | r(0);
    case Form::UBFM: case Form::SBFM:
      return w | uint32_t(inst.imm & 63) << 16 | uint32_t(inst.shift & 63) << 10 | r(1) << 5 | r(0);
    case Form::CSEL: case Form::CSINC: case Form::CSNEG: case Form::FCSEL:
      return w | r(2) << 16 | cond << 12 | r(1) << 5 | r(0);
    case Form::CBZ: case Form::CBNZ:
      return w | uint32_t((inst.offset / 4) & 0x7ffff) << 5 | r(0);
    case Form::LDR_UI: case Form::STR_UI: case Form::LDR_D: case Form::STR_D:
      return w | uint32_t((inst.offset / 8) & 0xfff) << 10 | r(1) << 5 | r(0);
    case Form::LDUR: case Form::STUR:
      return w | uint32_t(inst.offset & 0x1ff) << 12 | r(1) << 5 | r(0);
    case Form::LDRB: case Form::STRB:
      return w | uint32_t(inst.offset & 0xfff) << 10 | r(1) << 5 | r(0);
    case Form::STP_PRE: case Form::LDP_POST:
      return w | uint32_t((inst.offset / 8) & 0x7f) << 15 | r(1) << 10 | r(2) << 5 | r(0);
    case Form::B: case Form::BL:
      return w | uint32_t((inst.offset / 4) & 0x3ffffff);
    case Form::BCC:
      return w | uint32_t((inst.offset / 4) & 0x7ffff) << 5 | cond;
    case Form::BLR: case Form::RET:
      return w | r(0) << 5;
    case Form::FSQRT: case Form::FNEG: case Form::FMOV_DD: case Form::FMOV_DX: case Form::FMOV_XD:
    case Form::SCVTF: case Form::FCVTZS: case Form::FABS:
      return w | r(1) << 5 | r(0);
    case Form::Count_: break;
  }
  return w;
}

void encode(const A64Inst& inst, std::vector<uint8_t>& out) {
  const uint32_t w = encode(inst);
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(w >> (8 * i)));
}

std::string format(const A64Inst& inst) {
  const FormInfo& f = form_info(inst.form);
  std::string text = f.mnemonic;
  if (inst.form == Form::BCC) text += cond_name(inst.cc);
  const bool pair = inst.form == Form::STP_PRE || inst.form == Form::LDP_POST;
  int reg = 0;
  bool first = true;
  auto add = [&](const std::string& s) {
    text += (first ? " " : ", ") + s;
    first = false;
  };
  for (Kind k : f.ops) {
    switch (k) {
      case Kind::None: break;
      case Kind::X: add(x_name(inst.r[reg++], false)); break;
      case Kind::XSP: add(x_name(inst.r[reg++], true)); break;
      case Kind::D: add("d" + std::to_string(inst.r[reg++])); break;
      case Kind::W: {
        const int w = inst.r[reg++];
        add(w == 31 ? std::string("wzr") : "w" + std::to_string(w));
        break;
      }
      case Kind::I12: add("#" + std::to_string(inst.imm)); break;
      case Kind::I16:
        add("#" + std::to_string(inst.imm) + (inst.shift ? ", lsl #" + std::to_string(inst.shift) : ""));
        break;
      case Kind::LOG: add("#" + hex(uint64_t(inst.imm))); break;
      case Kind::U12: case Kind::B12: case Kind::S9: case Kind::P7: {
        const std::string base = x_name(inst.r[reg++], true), off = "#" + std::to_string(inst.offset);
        if (inst.form == Form::LDP_POST) add("[" + base + "], " + off);
        else if (pair) add("[" + base + ", " + off + "]!");
        else add(inst.offset ? "[" + base + ", " + off + "]" : "[" + base + "]");
        break;
      }
      case Kind::C:
        if (inst.form != Form::BCC) add(cond_name(inst.cc));
        break;
      case Kind::R6: add("#" + std::to_string(inst.imm)); break;
      case Kind::S6: add("#" + std::to_string(inst.shift)); break;
      case Kind::L26: case Kind::L19:
        add(inst.offset < 0 ? "." + std::to_string(inst.offset) : ".+" + std::to_string(inst.offset));
        break;
    }
  }
  return text;
}

}  // namespace descent::native::a64
