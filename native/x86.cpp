// The x86-64 encoder: each form's bytes, written the way the Intel SDM's opcode tables read.
//
// [SECTION] names         registers and condition codes
// [SECTION] the table     one row per form: "REX.W 01 /r" and the SDM's Op/En column
// [SECTION] reading rows  the row's text -> an Encoding, once
// [SECTION] encode        prefix, REX, opcode, ModRM, SIB, displacement, immediate
// [SECTION] format_intel  the instruction as LLVM's Intel printer writes it
//
// An x86-64 instruction, as encode() writes it (SDM vol. 2, chapter 2):
//
//   [66|F2] [REX] opcode(1-3 bytes) [ModRM] [SIB] [disp8|disp32] [imm8|imm32|imm64|rel32]
//
//   REX   = 0100WRXB  W: 64-bit operand size; R, X, B: the 4th bit of ModRM.reg, SIB.index
//                     and ModRM.rm / SIB.base / the opcode's +r register (r8..r15 need it)
//   ModRM = mod(2) reg(3) rm(3)   mod 11: rm is a register; 00/01/10: rm names memory with
//                                 no / an 8-bit / a 32-bit displacement. reg is a register
//                                 or, written /0../7, more opcode bits.
//   SIB   = scale(2) index(3) base(3)   needed when the base is rsp or r12 (rm = 100)
#include "native/x86.h"

#include <array>
#include <cassert>
#include <climits>
#include <cstdio>
#include <sstream>

namespace descent::native {

// [SECTION] names ------------------------------------------------------------------------

const char* gpr_name(int r) {
  static const char* const names[kNumGprs] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp",
                                              "rsi", "rdi", "r8",  "r9",  "r10", "r11",
                                              "r12", "r13", "r14", "r15"};
  return names[r & 15];
}

// Without a REX prefix the byte registers 4..7 are ah, ch, dh, bh; with any REX prefix they
// are spl, bpl, sil, dil. encode() adds a bare REX (0x40) for those, so these are the names.
const char* gpr8_name(int r) {
  static const char* const names[kNumGprs] = {"al",  "cl",   "dl",   "bl",   "spl",  "bpl",
                                              "sil", "dil",  "r8b",  "r9b",  "r10b", "r11b",
                                              "r12b", "r13b", "r14b", "r15b"};
  return names[r & 15];
}

const char* gpr32_name(int r) {
  static const char* const names[kNumGprs] = {"eax", "ecx", "edx",  "ebx",  "esp",  "ebp",
                                              "esi", "edi", "r8d",  "r9d",  "r10d", "r11d",
                                              "r12d", "r13d", "r14d", "r15d"};
  return names[r & 15];
}

const char* cond_name(Cond c) {
  static const char* const names[16] = {"o", "no", "b",  "ae", "e", "ne", "be", "a",
                                        "s", "ns", "p",  "np", "l", "ge", "le", "g"};
  return names[static_cast<int>(c) & 15];
}

// The conditions come in pairs that differ only in bit 0: o/no, b/ae, e/ne, ..., le/g.
Cond negate(Cond c) { return static_cast<Cond>(static_cast<int>(c) ^ 1); }

const FormInfo& form_info(Form f) {
  static const FormInfo infos[kNumForms] = {
#define DESCENT_X86_INFO(name, mn, llvm, a, b, c) {mn, llvm, {Kind::a, Kind::b, Kind::c}},
      DESCENT_X86_FORMS(DESCENT_X86_INFO)
#undef DESCENT_X86_INFO
  };
  return infos[static_cast<int>(f)];
}

namespace {

// [SECTION] the table --------------------------------------------------------------------

// How the operands (in Intel order, destination first) reach the bytes: the SDM's "Op/En"
// column.
enum class OpEn : uint8_t {
  ZO,   // no operands
  O,    // operand 0 in the low 3 bits of the last opcode byte (+r)
  OI,   // O, and operand 1 an immediate
  M,    // operand 0 in ModRM.rm; ModRM.reg holds the /digit
  MI,   // M, and operand 1 an immediate
  MR,   // operand 0 in ModRM.rm, operand 1 in ModRM.reg
  RM,   // operand 0 in ModRM.reg, operand 1 in ModRM.rm
  RMI,  // RM, and operand 2 an immediate
  D,    // a rel32 after the opcode (cd)
};

struct Row {
  Form form;
  const char* sdm;  // the SDM's "Opcode" column; +cc adds the condition to the byte
  OpEn op_en;
};

// Where the SDM offers two encodings (89 /r and 8B /r both move a register to a register),
// the row is the one LLVM's assembler picks, so that the disassembler's opcode name is the
// plain one (8B /r for a register would come back as MOV64rr_REV).
constexpr Row kRows[] = {
    // Moves and addresses.
    {Form::MOV_RR, "REX.W 89 /r", OpEn::MR},         // MOV r/m64, r64
    {Form::MOV_RI32, "REX.W C7 /0 id", OpEn::MI},    // MOV r/m64, imm32 (sign-extended)
    {Form::MOV_RI64, "REX.W B8+r io", OpEn::OI},     // MOV r64, imm64 (movabs)
    {Form::MOV_RM, "REX.W 8B /r", OpEn::RM},         // MOV r64, r/m64
    {Form::MOV_MR, "REX.W 89 /r", OpEn::MR},         // MOV r/m64, r64
    {Form::MOV_MI32, "REX.W C7 /0 id", OpEn::MI},    // MOV r/m64, imm32
    {Form::MOV8_MI, "C6 /0 ib", OpEn::MI},           // MOV r/m8, imm8
    {Form::CMP8_MI, "80 /7 ib", OpEn::MI},           // CMP r/m8, imm8
    {Form::LEA_RM, "REX.W 8D /r", OpEn::RM},         // LEA r64, m
    // Integer arithmetic. The 81 and 83 groups share one opcode per immediate size; the
    // /digit picks the operation: /0 add, /1 or, /4 and, /5 sub, /6 xor, /7 cmp.
    {Form::ADD_RR, "REX.W 01 /r", OpEn::MR},         // ADD r/m64, r64
    {Form::ADD_RI8, "REX.W 83 /0 ib", OpEn::MI},     // ADD r/m64, imm8 (sign-extended)
    {Form::ADD_RI32, "REX.W 81 /0 id", OpEn::MI},    // ADD r/m64, imm32 (sign-extended)
    {Form::SUB_RR, "REX.W 29 /r", OpEn::MR},         // SUB r/m64, r64
    {Form::SUB_RI8, "REX.W 83 /5 ib", OpEn::MI},     // SUB r/m64, imm8
    {Form::SUB_RI32, "REX.W 81 /5 id", OpEn::MI},    // SUB r/m64, imm32
    {Form::AND_RR, "REX.W 21 /r", OpEn::MR},         // AND r/m64, r64
    {Form::AND_RI8, "REX.W 83 /4 ib", OpEn::MI},     // AND r/m64, imm8
    {Form::AND_RI32, "REX.W 81 /4 id", OpEn::MI},    // AND r/m64, imm32
    {Form::OR_RR, "REX.W 09 /r", OpEn::MR},          // OR r/m64, r64
    {Form::XOR_RR, "REX.W 31 /r", OpEn::MR},         // XOR r/m64, r64
    {Form::XOR_RI8, "REX.W 83 /6 ib", OpEn::MI},     // XOR r/m64, imm8
    {Form::CMP_RR, "REX.W 39 /r", OpEn::MR},         // CMP r/m64, r64
    {Form::CMP_RI8, "REX.W 83 /7 ib", OpEn::MI},     // CMP r/m64, imm8
    {Form::CMP_RI32, "REX.W 81 /7 id", OpEn::MI},    // CMP r/m64, imm32
    {Form::CMP_RM, "REX.W 3B /r", OpEn::RM},         // CMP r64, r/m64
    {Form::CMP_MI8, "REX.W 83 /7 ib", OpEn::MI},     // CMP r/m64, imm8
    {Form::TEST_RR, "REX.W 85 /r", OpEn::MR},        // TEST r/m64, r64
    {Form::IMUL_RR, "REX.W 0F AF /r", OpEn::RM},     // IMUL r64, r/m64
    {Form::IMUL_RRI8, "REX.W 6B /r ib", OpEn::RMI},  // IMUL r64, r/m64, imm8
    {Form::IMUL_RRI32, "REX.W 69 /r id", OpEn::RMI}, // IMUL r64, r/m64, imm32
    {Form::NEG_R, "REX.W F7 /3", OpEn::M},           // NEG r/m64
    {Form::INC_M, "REX.W FF /0", OpEn::M},           // INC r/m64
    {Form::DEC_M, "REX.W FF /1", OpEn::M},           // DEC r/m64
    {Form::CQO, "REX.W 99", OpEn::ZO},               // CQO: rdx:rax <- sign-extend rax
    {Form::IDIV_R, "REX.W F7 /7", OpEn::M},          // IDIV r/m64: rdx:rax / r/m64
    {Form::IMUL_R, "REX.W F7 /5", OpEn::M},          // IMUL r/m64: rdx:rax = rax * r/m64
    {Form::SHL_RI, "REX.W C1 /4 ib", OpEn::MI},      // SHL r/m64, imm8
    {Form::SAR_RI, "REX.W C1 /7 ib", OpEn::MI},      // SAR r/m64, imm8
    {Form::SHR_RI, "REX.W C1 /5 ib", OpEn::MI},      // SHR r/m64, imm8
    // Conditions. SETcc ignores ModRM.reg; /0 is what assemblers write.
    {Form::SETCC_R, "0F 90+cc /0", OpEn::M},         // SETcc r/m8
    {Form::MOVZX_RR8, "0F B6 /r", OpEn::RM},         // MOVZX r32, r/m8 (zeroes bits 63..32 too)
    {Form::CMOVCC_RR, "REX.W 0F 40+cc /r", OpEn::RM},// CMOVcc r64, r/m64
    // Control flow.
    {Form::JMP_L, "E9 cd", OpEn::D},                 // JMP rel32
    {Form::JCC_L, "0F 80+cc cd", OpEn::D},           // Jcc rel32
    {Form::CALL_L, "E8 cd", OpEn::D},                // CALL rel32
    {Form::CALL_R, "FF /2", OpEn::M},                // CALL r/m64 (64-bit by default: no REX.W)
    {Form::CALL_M, "FF /2", OpEn::M},                // CALL r/m64
    {Form::RET, "C3", OpEn::ZO},                     // RET
    {Form::PUSH_R, "50+r", OpEn::O},                 // PUSH r64 (64-bit by default)
    {Form::POP_R, "58+r", OpEn::O},                  // POP r64
    // SSE2 doubles. The mandatory prefix picks the type: F2 scalar double, 66 packed double.
    {Form::MOVAPD_XX, "66 0F 28 /r", OpEn::RM},      // MOVAPD xmm1, xmm2/m128
    {Form::MOVSD_XM, "F2 0F 10 /r", OpEn::RM},       // MOVSD xmm1, m64
    {Form::MOVSD_MX, "F2 0F 11 /r", OpEn::MR},       // MOVSD m64, xmm1
    {Form::MOVQ_XR, "66 REX.W 0F 6E /r", OpEn::RM},  // MOVQ xmm, r/m64
    {Form::MOVQ_RX, "66 REX.W 0F 7E /r", OpEn::MR},  // MOVQ r/m64, xmm
    {Form::ADDSD_XX, "F2 0F 58 /r", OpEn::RM},       // ADDSD xmm1, xmm2/m64
    {Form::SUBSD_XX, "F2 0F 5C /r", OpEn::RM},       // SUBSD xmm1, xmm2/m64
    {Form::MULSD_XX, "F2 0F 59 /r", OpEn::RM},       // MULSD xmm1, xmm2/m64
    {Form::DIVSD_XX, "F2 0F 5E /r", OpEn::RM},       // DIVSD xmm1, xmm2/m64
    {Form::MINSD_XX, "F2 0F 5D /r", OpEn::RM},       // MINSD xmm1, xmm2/m64
    {Form::MAXSD_XX, "F2 0F 5F /r", OpEn::RM},       // MAXSD xmm1, xmm2/m64
    {Form::SQRTSD_XX, "F2 0F 51 /r", OpEn::RM},      // SQRTSD xmm1, xmm2/m64
    {Form::UCOMISD_XX, "66 0F 2E /r", OpEn::RM},     // UCOMISD xmm1, xmm2/m64: sets ZF PF CF
    {Form::XORPD_XX, "66 0F 57 /r", OpEn::RM},       // XORPD xmm1, xmm2/m128
    {Form::ANDPD_XX, "66 0F 54 /r", OpEn::RM},       // ANDPD xmm1, xmm2/m128
    {Form::CVTSI2SD_XR, "F2 REX.W 0F 2A /r", OpEn::RM},  // CVTSI2SD xmm1, r/m64
    {Form::CVTTSD2SI_RX, "F2 REX.W 0F 2C /r", OpEn::RM}, // CVTTSD2SI r64, xmm1/m64 (truncates)
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kNumForms, "one row per form");

// [SECTION] reading rows -----------------------------------------------------------------

// One row, read: what encode() needs to know.
struct Encoding {
  uint8_t prefix = 0;       // a mandatory prefix (66, F2), or 0
  bool rex_w = false;       // REX.W: 64-bit operand size
  uint8_t opcode[3] = {};   // the opcode bytes (0F escapes included)
  int opcode_len = 0;
  bool plus_r = false;      // +r: operand 0's low 3 bits are added to the last opcode byte
  bool plus_cc = false;     // +cc: the condition is added to the last opcode byte
  bool modrm = false;       // a ModRM byte follows the opcode
  int digit = -1;           // /0../7: ModRM.reg is this opcode extension (-1: a register)
  int imm_size = 0;         // ib id io: bytes of immediate
  bool rel32 = false;       // cd: a 32-bit displacement from the end of the instruction
  OpEn op_en = OpEn::ZO;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "REX.W 0F 40+cc /r" -> {rex_w, opcode 0F 40, plus_cc, modrm}. The words: a leading 66 or
// F2 is the mandatory prefix; REX.W; hex bytes (a suffix +r or +cc on the last); /r or /digit;
// ib, id, io an immediate; cd a rel32.
Encoding read_row(const Row& row) {
  Encoding e;
  e.op_en = row.op_en;
  std::istringstream words(row.sdm);
  std::string w;
  bool first = true;
  while (words >> w) {
    if (first && (w == "66" || w == "F2")) {
      e.prefix = static_cast<uint8_t>(hex_digit(w[0]) * 16 + hex_digit(w[1]));
    } else if (w == "REX.W") {
      e.rex_w = true;
    } else if (w == "/r") {
      e.modrm = true;
    } else if (w.size() == 2 && w[0] == '/') {
      e.modrm = true;
      e.digit = w[1] - '0';
    } else if (w == "ib" || w == "id" || w == "io") {
      e.imm_size = w == "ib" ? 1 : w == "id" ? 4 : 8;
    } else if (w == "cd") {
      e.rel32 = true;
    } else {
      assert(w.size() >= 2 && hex_digit(w[0]) >= 0 && hex_digit(w[1]) >= 0 && e.opcode_len < 3);
      e.opcode[e.opcode_len++] = static_cast<uint8_t>(hex_digit(w[0]) * 16 + hex_digit(w[1]));
      e.plus_r = w.substr(2) == "+r";
      e.plus_cc = w.substr(2) == "+cc";
    }
    first = false;
  }
  return e;
}

const Encoding& encoding(Form f) {
  static const std::array<Encoding, kNumForms> table = [] {
    std::array<Encoding, kNumForms> t{};
    for (const Row& row : kRows) t[static_cast<int>(row.form)] = read_row(row);
    return t;
  }();
  return table[static_cast<int>(f)];
}

bool is_register(Kind k) { return k == Kind::R || k == Kind::R8 || k == Kind::R32 || k == Kind::X; }

// Operand i's register number: register operands take r[0], r[1] in operand order.
int register_of(const X86Inst& inst, int i) {
  const FormInfo& info = form_info(inst.form);
  assert(is_register(info.ops[i]));
  int slot = 0;
  for (int j = 0; j < i; ++j) slot += is_register(info.ops[j]);
  return inst.r[slot] & 15;
}

// [SECTION] encode -----------------------------------------------------------------------

void put_le(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint8_t modrm_byte(int mod, int reg, int rm) {
  return static_cast<uint8_t>(mod << 6 | (reg & 7) << 3 | (rm & 7));
}

// ModRM (+ SIB + displacement) for [base + disp] with `reg` in ModRM.reg.
void put_memory(std::vector<uint8_t>& out, int reg, Mem m) {
  int base = m.base & 7;
  // mod 00: no displacement; 01: disp8; 10: disp32. But mod 00 with rm = 101 means
  // [rip + disp32], not [rbp], so rbp and r13 always carry a displacement (disp8 0).
  int mod = m.disp == 0 && base != 5 ? 0 : m.disp >= -128 && m.disp <= 127 ? 1 : 2;
  out.push_back(modrm_byte(mod, reg, base));
  // rm = 100 means "a SIB byte follows", not [rsp], so rsp and r12 go through a SIB byte:
  // scale 1 (00), no index (100), base 100: 0x24.
  if (base == 4) out.push_back(0x24);
  if (mod == 1) put_le(out, static_cast<uint32_t>(m.disp), 1);
  if (mod == 2) put_le(out, static_cast<uint32_t>(m.disp), 4);
}

}  // namespace

void encode(const X86Inst& inst, std::vector<uint8_t>& out, int* rel32_at) {
  const FormInfo& info = form_info(inst.form);
  const Encoding& e = encoding(inst.form);
  if (rel32_at) *rel32_at = -1;

  // Which operand sits where (-1: none). ModRM.rm may be a register or memory.
  int opcode_reg = -1, modrm_reg = -1, modrm_rm = -1;
  switch (e.op_en) {
    case OpEn::ZO: case OpEn::D: break;
    case OpEn::O: case OpEn::OI: opcode_reg = register_of(inst, 0); break;
    case OpEn::M: case OpEn::MI: modrm_rm = 0; break;
    case OpEn::MR: modrm_rm = 0; modrm_reg = register_of(inst, 1); break;
    case OpEn::RM: case OpEn::RMI: modrm_reg = register_of(inst, 0); modrm_rm = 1; break;
  }
  bool rm_is_memory = modrm_rm >= 0 && info.ops[modrm_rm] == Kind::M;
  int rm = modrm_rm < 0 ? -1 : rm_is_memory ? inst.mem.base & 15 : register_of(inst, modrm_rm);

  // REX: W for 64-bit operands; R extends ModRM.reg, B extends ModRM.rm (or the memory base,
  // or the +r register) to reach r8..r15 and xmm8..xmm15. We never use an index, so X is 0.
  // A byte register spl, bpl, sil or dil needs a REX with no bits set: without one, those
  // numbers mean ah, ch, dh, bh.
  bool w = e.rex_w;
  bool r = modrm_reg >= 8;
  bool b = rm >= 8 || opcode_reg >= 8;
  bool bare = false;
  for (int i = 0; i < 3; ++i)
    if (info.ops[i] == Kind::R8 && register_of(inst, i) >= 4 && register_of(inst, i) <= 7)
      bare = true;

  if (e.prefix) out.push_back(e.prefix);  // a mandatory prefix goes before REX
  if (w || r || b || bare) out.push_back(static_cast<uint8_t>(0x40 | w << 3 | r << 2 | b));
  for (int i = 0; i < e.opcode_len; ++i) {
    uint8_t byte = e.opcode[i];
    if (i == e.opcode_len - 1 && e.plus_r) byte += opcode_reg & 7;
    if (i == e.opcode_len - 1 && e.plus_cc) byte += static_cast<uint8_t>(inst.cc) & 15;
    out.push_back(byte);
  }
  if (e.modrm) {
    int reg = e.digit >= 0 ? e.digit : modrm_reg;
    if (rm_is_memory)
      put_memory(out, reg, inst.mem);
    else
      out.push_back(modrm_byte(0b11, reg, rm));
  }
  // The immediate must fit its bytes (the CPU sign-extends it; a shift count is 0..255):
  // choosing ADD_RI8 or ADD_RI32 is the selector's job, not ours.
  assert(e.imm_size != 1 || (inst.imm >= -128 && inst.imm <= 255));
  assert(e.imm_size != 4 || (inst.imm >= INT32_MIN && inst.imm <= INT32_MAX));
  if (e.imm_size) put_le(out, static_cast<uint64_t>(inst.imm), e.imm_size);
  if (e.rel32) {
    // The caller patches these four bytes once the label's offset is known.
    if (rel32_at) *rel32_at = static_cast<int>(out.size());
    put_le(out, 0, 4);
  }
}

// [SECTION] format_intel -----------------------------------------------------------------

namespace {

// The size keyword LLVM prints before a memory operand ("" for lea, which reads no memory).
const char* memory_size(Form f) {
  switch (f) {
    case Form::LEA_RM: return "";
    case Form::MOV8_MI: case Form::CMP8_MI: return "byte ptr ";
    default: return "qword ptr ";
  }
}

std::string format_memory(Form f, Mem m) {
  std::string text = std::string(memory_size(f)) + "[" + gpr_name(m.base);
  int64_t disp = m.disp;  // 64 bits, so that -INT32_MIN does not overflow
  if (disp > 0) text += " + " + std::to_string(disp);
  if (disp < 0) text += " - " + std::to_string(-disp);
  return text + "]";
}

// An immediate as the CPU reads its bytes: sign-extended, except a shift count (unsigned).
std::string format_immediate(Form f, Kind k, int64_t imm) {
  if (f == Form::SHL_RI || f == Form::SAR_RI || f == Form::SHR_RI)
    return std::to_string(static_cast<uint8_t>(imm));
  if (k == Kind::I8) return std::to_string(static_cast<int8_t>(imm));
  if (k == Kind::I32) return std::to_string(static_cast<int32_t>(imm));
  return std::to_string(imm);
}

}  // namespace

std::string format_intel(const X86Inst& inst) {
  const FormInfo& info = form_info(inst.form);
  std::string text = info.mnemonic;
  if (encoding(inst.form).plus_cc) text += cond_name(inst.cc);  // "j" + "ne", "set" + "e"
  for (int i = 0; i < 3 && info.ops[i] != Kind::None; ++i) {
    text += i == 0 ? " " : ", ";
    switch (info.ops[i]) {
      case Kind::R: text += gpr_name(register_of(inst, i)); break;
      case Kind::R8: text += gpr8_name(register_of(inst, i)); break;
      case Kind::R32: text += gpr32_name(register_of(inst, i)); break;
      case Kind::X: text += "xmm" + std::to_string(register_of(inst, i)); break;
      case Kind::M: text += format_memory(inst.form, inst.mem); break;
      case Kind::I8: case Kind::I32: case Kind::I64:
        text += format_immediate(inst.form, info.ops[i], inst.imm);
        break;
      case Kind::L:
        if (inst.label >= 0) {
          text += ".L" + std::to_string(inst.label);
        } else {
          char hex[24];
          std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(inst.target));
          text += hex;
        }
        break;
      case Kind::None: break;
    }
  }
  return text;
}

}  // namespace descent::native
