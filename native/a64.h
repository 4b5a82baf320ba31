// AArch64 (A64) machine instructions as data, and the encoder that turns them into bytes: the
// second target's counterpart of x86.h (issue 38), the first piece of the AArch64 target
// description. Every A64 instruction is one 32-bit little-endian word whose fields the Arm ARM's
// encoding tables give bit by bit; encode() fills them from the form table below. Nothing here
// knows about Descent.
//
// What differs from x86-64, and why the selector will care (docs/native.md):
//   - three-address forms: `add x0, x1, x2` keeps both inputs, so there is no two-address
//     constraint and no copy before an operation;
//   - 31 general registers; register number 31 is the zero register (xzr) in most operands and
//     the stack pointer in a few (the base of a load, add/sub immediate): the kinds say which;
//   - `madd`/`msub` multiply and add in one instruction, which tree covering can find
//     (a*b + c); `sdiv` does not trap, so division by zero and INT_MIN / -1 stay explicit checks;
//   - immediates are small: 12 bits for add/sub, 16 bits per `movz`/`movk` (a 64-bit constant
//     takes up to four), and the logical immediates, a rotated run of ones repeated in 2, 4,
//     ..., 64-bit elements, which encode_logical_imm computes.
// Each form's LLVM name is the MCInst opcode LLVM's AArch64 disassembler gives for the same word;
// tests/native/a64_encoder_test.cpp checks every form with every register class and immediate
// edge against it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace descent::native::a64 {

constexpr int kZr = 31;  // the zero register in X operands
constexpr int kSp = 31;  // the stack pointer in XSP operands
const char* x_name(int r, bool sp);  // "x0" .. "x30", then "sp" or "xzr"

// Condition codes (the 4-bit cond field of b.cond, csel, csinc).
enum class Cond : uint8_t { eq, ne, hs, lo, mi, pl, vs, vc, hi, ls, ge, lt, gt, le, al, nv };
const char* cond_name(Cond c);
Cond invert(Cond c);  // eq <-> ne, ge <-> lt, ...: flips the low bit

// Operand kinds:
//   X   a 64-bit GPR, 31 = xzr      XSP  the same, 31 = sp      D  a double register d0..d31
//   I12 an unsigned 12-bit immediate (add/sub)    I16 a 16-bit immediate with a shift (0, 16,
//   32, 48) in `shift`                            LOG a logical immediate (a 64-bit value)
//   W   the low 32 bits of a GPR, 31 = wzr (byte loads and stores)
//   U12 a base (XSP) + unsigned offset, a multiple of 8 up to 32760
//   B12 a base (XSP) + unsigned byte offset, 0..4095
//   S9  a base (XSP) + signed offset -256..255    P7  pre/post-indexed pair offset, a multiple
//   of 8 in -512..504                             C  a condition
//   L26 / L19  a label: a branch offset in words (b, bl / b.cond)
//   R6 / S6    a bitfield move's immr (in `imm`) and imms (in `shift`), each 0..63
// FORM(name, mnemonic, LLVM opcode name, base word, operand kinds...)
#define DESCENT_A64_FORMS(FORM)                                         \
  FORM(ADD_RRR, "add", "ADDXrs", 0x8B000000u, X, X, X, None)            \
  FORM(SUB_RRR, "sub", "SUBXrs", 0xCB000000u, X, X, X, None)            \
  FORM(ADD_RRI, "add", "ADDXri", 0x91000000u, XSP, XSP, I12, None)      \
  FORM(SUB_RRI, "sub", "SUBXri", 0xD1000000u, XSP, XSP, I12, None)      \
  FORM(CMP_RR, "cmp", "SUBSXrs", 0xEB00001Fu, X, X, None, None)         \
  FORM(CMP_RI, "cmp", "SUBSXri", 0xF100001Fu, XSP, I12, None, None)     \
  FORM(AND_RRR, "and", "ANDXrs", 0x8A000000u, X, X, X, None)            \
  FORM(ORR_RRR, "orr", "ORRXrs", 0xAA000000u, X, X, X, None)            \
  FORM(EOR_RRR, "eor", "EORXrs", 0xCA000000u, X, X, X, None)            \
  FORM(AND_RRI, "and", "ANDXri", 0x92000000u, XSP, X, LOG, None)        \
  FORM(ORR_RRI, "orr", "ORRXri", 0xB2000000u, XSP, X, LOG, None)        \
  FORM(EOR_RRI, "eor", "EORXri", 0xD2000000u, XSP, X, LOG, None)        \
  FORM(MADD, "madd", "MADDXrrr", 0x9B000000u, X, X, X, X)               \
  FORM(MSUB, "msub", "MSUBXrrr", 0x9B008000u, X, X, X, X)               \
  FORM(SDIV, "sdiv", "SDIVXr", 0x9AC00C00u, X, X, X, None)              \
  FORM(LSLV, "lsl", "LSLVXr", 0x9AC02000u, X, X, X, None)               \
  FORM(LSRV, "lsr", "LSRVXr", 0x9AC02400u, X, X, X, None)               \
  FORM(ASRV, "asr", "ASRVXr", 0x9AC02800u, X, X, X, None)               \
  FORM(MOVZ, "movz", "MOVZXi", 0xD2800000u, X, I16, None, None)         \
  FORM(MOVK, "movk", "MOVKXi", 0xF2800000u, X, I16, None, None)         \
  FORM(MOVN, "movn", "MOVNXi", 0x92800000u, X, I16, None, None)         \
  FORM(CSEL, "csel", "CSELXr", 0x9A800000u, X, X, X, C)                 \
  FORM(CSINC, "csinc", "CSINCXr", 0x9A800400u, X, X, X, C)              \
  FORM(LDR_UI, "ldr", "LDRXui", 0xF9400000u, X, U12, None, None)        \
  FORM(STR_UI, "str", "STRXui", 0xF9000000u, X, U12, None, None)        \
  FORM(LDUR, "ldur", "LDURXi", 0xF8400000u, X, S9, None, None)          \
  FORM(STUR, "stur", "STURXi", 0xF8000000u, X, S9, None, None)          \
  FORM(STP_PRE, "stp", "STPXpre", 0xA9800000u, X, X, P7, None)          \
  FORM(LDP_POST, "ldp", "LDPXpost", 0xA8C00000u, X, X, P7, None)        \
  FORM(B, "b", "B", 0x14000000u, L26, None, None, None)                 \
  FORM(BL, "bl", "BL", 0x94000000u, L26, None, None, None)              \
  FORM(BCC, "b.", "Bcc", 0x54000000u, C, L19, None, None)               \
  FORM(BLR, "blr", "BLR", 0xD63F0000u, X, None, None, None)             \
  FORM(RET, "ret", "RET", 0xD65F0000u, X, None, None, None)             \
  FORM(FADD, "fadd", "FADDDrr", 0x1E602800u, D, D, D, None)             \
  FORM(FSUB, "fsub", "FSUBDrr", 0x1E603800u, D, D, D, None)             \
  FORM(FMUL, "fmul", "FMULDrr", 0x1E600800u, D, D, D, None)             \
  FORM(FDIV, "fdiv", "FDIVDrr", 0x1E601800u, D, D, D, None)             \
  FORM(FSQRT, "fsqrt", "FSQRTDr", 0x1E61C000u, D, D, None, None)        \
  FORM(FNEG, "fneg", "FNEGDr", 0x1E614000u, D, D, None, None)           \
  FORM(FMOV_DD, "fmov", "FMOVDr", 0x1E604000u, D, D, None, None)        \
  FORM(FCMP, "fcmp", "FCMPDrr", 0x1E602000u, D, D, None, None)          \
  FORM(FMOV_DX, "fmov", "FMOVXDr", 0x9E670000u, D, X, None, None)       \
  FORM(FMOV_XD, "fmov", "FMOVDXr", 0x9E660000u, X, D, None, None)       \
  FORM(SCVTF, "scvtf", "SCVTFUXDri", 0x9E620000u, D, X, None, None)     \
  FORM(FCVTZS, "fcvtzs", "FCVTZSUXDr", 0x9E780000u, X, D, None, None)   \
  FORM(LDR_D, "ldr", "LDRDui", 0xFD400000u, D, U12, None, None)         \
  FORM(STR_D, "str", "STRDui", 0xFD000000u, D, U12, None, None)         \
  /* what the AArch64 table's patterns emit beyond the first fifty: */  \
  FORM(CMN_RI, "cmn", "ADDSXri", 0xB100001Fu, XSP, I12, None, None)     \
  FORM(SMULH, "smulh", "SMULHrr", 0x9B407C00u, X, X, X, None)           \
  FORM(CSNEG, "csneg", "CSNEGXr", 0xDA800400u, X, X, X, C)              \
  FORM(CBZ, "cbz", "CBZX", 0xB4000000u, X, L19, None, None)             \
  FORM(CBNZ, "cbnz", "CBNZX", 0xB5000000u, X, L19, None, None)          \
  FORM(FMIN, "fmin", "FMINDrr", 0x1E605800u, D, D, D, None)             \
  FORM(FMAX, "fmax", "FMAXDrr", 0x1E604800u, D, D, D, None)             \
  FORM(FABS, "fabs", "FABSDr", 0x1E60C000u, D, D, None, None)           \
  FORM(LDRB, "ldrb", "LDRBBui", 0x39400000u, W, B12, None, None)        \
  FORM(STRB, "strb", "STRBBui", 0x39000000u, W, B12, None, None)       \
  /* what emission needs beyond the patterns: shifts by a constant (lsl, lsr, asr are */ \
  /* aliases of the bitfield moves) and a float select (min and max keep the language's */ \
  /* "the first unless the second is strictly smaller", which fmin does not: nan) */ \
  FORM(UBFM, "ubfm", "UBFMXri", 0xD3400000u, X, X, R6, S6)             \
  FORM(SBFM, "sbfm", "SBFMXri", 0x93400000u, X, X, R6, S6)             \
  FORM(FCSEL, "fcsel", "FCSELDrrr", 0x1E600C00u, D, D, D, C)

enum class Form : uint8_t {
#define DESCENT_A64_ENUM(name, mn, llvm, word, a, b, c, d) name,
  DESCENT_A64_FORMS(DESCENT_A64_ENUM)
#undef DESCENT_A64_ENUM
      Count_
};
constexpr int kNumForms = static_cast<int>(Form::Count_);

enum class Kind : uint8_t { None, X, XSP, D, W, I12, I16, LOG, U12, B12, S9, P7, C, L26, L19, R6, S6 };
struct FormInfo {
  const char* mnemonic;  // "add"; for BCC the stem before the condition ("b.")
  const char* llvm;      // LLVM's MCInst opcode name for this word
  uint32_t word;         // the fixed bits
  Kind ops[4];
};
const FormInfo& form_info(Form f);

// One instruction. Register operands take r[0], r[1], ... in order (GPR or d-register number
// by kind); a memory operand (U12, S9, P7) is base `r[k]` + `offset`; I12/I16/LOG use `imm`
// (I16 also `shift`; R6/S6 are `imm` and `shift`); a condition is `cc`; a label is `offset` in bytes from this instruction.
struct A64Inst {
  Form form = Form::RET;
  uint8_t r[4] = {30, 0, 0, 0};
  int64_t imm = 0;
  int shift = 0;        // I16: 0, 16, 32 or 48
  int64_t offset = 0;   // memory: bytes from the base; labels: bytes from this instruction
  Cond cc = Cond::eq;
};

// A 64-bit value as a logical immediate: its N:immr:imms fields (13 bits, N at bit 12), or
// false when it is not one (0, all ones, and any value that is not a rotated run of ones
// repeated in elements of 2, 4, 8, 16, 32 or 64 bits).
bool encode_logical_imm(uint64_t value, uint32_t* n_immr_imms);
// The value N:immr:imms stands for (the inverse, for tests and the views).
uint64_t decode_logical_imm(uint32_t n_immr_imms);

// The fewest instructions that put a 64-bit constant in register `reg`: one orr from xzr for a
// logical immediate (unless one movz or movn does), else movz (or movn, when more 16-bit chunks
// are 0xffff than 0) and a movk for each chunk that differs from what it left. The emitter's
// constants, and the reference the instruction-selection lab (labs/a64_constants) is checked
// against.
std::vector<A64Inst> materialize(int64_t value, int reg);
// Anything that does the same job (the emitter takes one: labs/a64_constants is the student's).
using ConstantBuilder = std::function<std::vector<A64Inst>(int64_t value, int reg)>;

// Whether each operand is in range for its kind (registers 0..31, immediates, offsets and their
// alignment, a logical immediate that encodes); *why says which is not.
bool valid(const A64Inst& inst, std::string* why);

// The instruction's word. The caller checks valid() first: out-of-range fields are masked.
uint32_t encode(const A64Inst& inst);
// Appends the word, little-endian.
void encode(const A64Inst& inst, std::vector<uint8_t>& out);

// The instruction in the Arm ARM's assembly syntax, without aliases: "add x0, x1, x2",
// "ldr x0, [sp, #16]", "stp x29, x30, [sp, #-16]!", "b.ne .+8", "movz x0, #1, lsl #16".
std::string format(const A64Inst& inst);

}  // namespace descent::native::a64
