// x86-64 machine instructions as data, and the encoder that turns them into bytes.
//
// The native backend's last stage (native/emit.cpp) produces a list of X86Inst; encode()
// writes each one's bytes from the table below, the way the Intel SDM's opcode tables read:
// an optional legacy prefix (66 / F2), a REX prefix when a 64-bit operand size or a register
// r8..r15 needs one, the opcode bytes, a ModRM byte (and a SIB byte when the base register is
// rsp or r12), a displacement, an immediate. Nothing here knows about Descent.
//
// Each form is one encoding with fixed operand kinds. Its LLVM name is the MCInst opcode
// that LLVM's disassembler gives for the same bytes: tests/native checks every form, with
// every register and immediate size, against it. (For scalar SSE arithmetic and conversions
// that is LLVM's *_Int variant, e.g. ADDSDrr_Int: the plain FR64 forms are codegen-only, so
// no bytes ever disassemble to them.)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace descent::native {

// General-purpose registers by hardware number (the 3 bits in ModRM/opcode, plus REX's bit).
enum class Gpr : uint8_t {
  rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15
};
constexpr int kNumGprs = 16;
constexpr int kNumXmms = 16;  // xmm0..xmm15, numbered the same way
const char* gpr_name(int r);   // "rax"
const char* gpr8_name(int r);  // "al", "sil", "r8b" (setcc's operand)
const char* gpr32_name(int r); // "eax" (movzx's destination)

// Condition codes: the low nibble of jcc (0F 80+cc), setcc (0F 90+cc), cmovcc (0F 40+cc).
enum class Cond : uint8_t {
  o, no, b, ae, e, ne, be, a, s, ns, p, np, l, ge, le, g
};
const char* cond_name(Cond c);  // "o" .. "g"
Cond negate(Cond c);            // e <-> ne, l <-> ge, ...: flips the low bit

// Operand kinds of a form:
//   R  a 64-bit GPR        R8 its low byte      R32 its low 32 bits
//   X  an xmm register     M  [base + disp32]   I8/I32/I64 an immediate
//   L  a rel32 to a label (a jump target in the same code, or a call target)
// FORM(name, mnemonic, LLVM opcode name, operand 0 kind, operand 1 kind, operand 2 kind)
// Operands are in Intel order: destination first. (The macro's parameter is FORM, not the
// usual X: X is also an operand kind, and a parameter named X would replace it.)
#define DESCENT_X86_FORMS(FORM)                                \
  FORM(MOV_RR, "mov", "MOV64rr", R, R, None)                   \
  FORM(MOV_RI32, "mov", "MOV64ri32", R, I32, None)             \
  FORM(MOV_RI64, "movabs", "MOV64ri", R, I64, None)            \
  FORM(MOV_RM, "mov", "MOV64rm", R, M, None)                   \
  FORM(MOV_MR, "mov", "MOV64mr", M, R, None)                   \
  FORM(MOV_MI32, "mov", "MOV64mi32", M, I32, None)             \
  FORM(MOV8_MI, "mov", "MOV8mi", M, I8, None)                  \
  FORM(CMP8_MI, "cmp", "CMP8mi", M, I8, None)                  \
  FORM(LEA_RM, "lea", "LEA64r", R, M, None)                    \
  FORM(ADD_RR, "add", "ADD64rr", R, R, None)                   \
  FORM(ADD_RI8, "add", "ADD64ri8", R, I8, None)                \
  FORM(ADD_RI32, "add", "ADD64ri32", R, I32, None)             \
  FORM(SUB_RR, "sub", "SUB64rr", R, R, None)                   \
  FORM(SUB_RI8, "sub", "SUB64ri8", R, I8, None)                \
  FORM(SUB_RI32, "sub", "SUB64ri32", R, I32, None)             \
  FORM(AND_RR, "and", "AND64rr", R, R, None)                   \
  FORM(AND_RI8, "and", "AND64ri8", R, I8, None)                \
  FORM(AND_RI32, "and", "AND64ri32", R, I32, None)             \
  FORM(OR_RR, "or", "OR64rr", R, R, None)                      \
  FORM(XOR_RR, "xor", "XOR64rr", R, R, None)                   \
  FORM(XOR_RI8, "xor", "XOR64ri8", R, I8, None)                \
  FORM(CMP_RR, "cmp", "CMP64rr", R, R, None)                   \
  FORM(CMP_RI8, "cmp", "CMP64ri8", R, I8, None)                \
  FORM(CMP_RI32, "cmp", "CMP64ri32", R, I32, None)             \
  FORM(CMP_RM, "cmp", "CMP64rm", R, M, None)                   \
  FORM(CMP_MI8, "cmp", "CMP64mi8", M, I8, None)                \
  FORM(TEST_RR, "test", "TEST64rr", R, R, None)                \
  FORM(IMUL_RR, "imul", "IMUL64rr", R, R, None)                \
  FORM(IMUL_RRI8, "imul", "IMUL64rri8", R, R, I8)              \
  FORM(IMUL_RRI32, "imul", "IMUL64rri32", R, R, I32)           \
  FORM(NEG_R, "neg", "NEG64r", R, None, None)                  \
  FORM(INC_M, "inc", "INC64m", M, None, None)                  \
  FORM(DEC_M, "dec", "DEC64m", M, None, None)                  \
  FORM(CQO, "cqo", "CQO", None, None, None)                    \
  FORM(IDIV_R, "idiv", "IDIV64r", R, None, None)               \
  FORM(IMUL_R, "imul", "IMUL64r", R, None, None)               \
  FORM(SHL_RI, "shl", "SHL64ri", R, I8, None)                  \
  FORM(SAR_RI, "sar", "SAR64ri", R, I8, None)                  \
  FORM(SHR_RI, "shr", "SHR64ri", R, I8, None)                  \
  FORM(SETCC_R, "set", "SETCCr", R8, None, None)               \
  FORM(MOVZX_RR8, "movzx", "MOVZX32rr8", R32, R8, None)        \
  FORM(CMOVCC_RR, "cmov", "CMOV64rr", R, R, None)              \
  FORM(JMP_L, "jmp", "JMP_4", L, None, None)                   \
  FORM(JCC_L, "j", "JCC_4", L, None, None)                     \
  FORM(CALL_L, "call", "CALL64pcrel32", L, None, None)         \
  FORM(CALL_R, "call", "CALL64r", R, None, None)               \
  FORM(CALL_M, "call", "CALL64m", M, None, None)               \
  FORM(RET, "ret", "RET64", None, None, None)                  \
  FORM(PUSH_R, "push", "PUSH64r", R, None, None)               \
  FORM(POP_R, "pop", "POP64r", R, None, None)                  \
  FORM(MOVAPD_XX, "movapd", "MOVAPDrr", X, X, None)            \
  FORM(MOVSD_XM, "movsd", "MOVSDrm", X, M, None)               \
  FORM(MOVSD_MX, "movsd", "MOVSDmr", M, X, None)               \
  FORM(MOVQ_XR, "movq", "MOV64toPQIrr", X, R, None)            \
  FORM(MOVQ_RX, "movq", "MOVPQIto64rr", R, X, None)            \
  FORM(ADDSD_XX, "addsd", "ADDSDrr_Int", X, X, None)           \
  FORM(SUBSD_XX, "subsd", "SUBSDrr_Int", X, X, None)           \
  FORM(MULSD_XX, "mulsd", "MULSDrr_Int", X, X, None)           \
  FORM(DIVSD_XX, "divsd", "DIVSDrr_Int", X, X, None)           \
  FORM(MINSD_XX, "minsd", "MINSDrr_Int", X, X, None)           \
  FORM(MAXSD_XX, "maxsd", "MAXSDrr_Int", X, X, None)           \
  FORM(SQRTSD_XX, "sqrtsd", "SQRTSDr_Int", X, X, None)         \
  FORM(UCOMISD_XX, "ucomisd", "UCOMISDrr", X, X, None)         \
  FORM(XORPD_XX, "xorpd", "XORPDrr", X, X, None)               \
  FORM(ANDPD_XX, "andpd", "ANDPDrr", X, X, None)               \
  FORM(CVTSI2SD_XR, "cvtsi2sd", "CVTSI642SDrr_Int", X, R, None) \
  FORM(CVTTSD2SI_RX, "cvttsd2si", "CVTTSD2SI64rr_Int", R, X, None)

enum class Form : uint8_t {
#define DESCENT_X86_ENUM(name, mn, llvm, a, b, c) name,
  DESCENT_X86_FORMS(DESCENT_X86_ENUM)
#undef DESCENT_X86_ENUM
      Count_
};
constexpr int kNumForms = static_cast<int>(Form::Count_);

enum class Kind : uint8_t { None, R, R8, R32, X, M, I8, I32, I64, L };
struct FormInfo {
  const char* mnemonic;  // "add"; for SETCC/CMOVCC/JCC the stem before the condition
  const char* llvm;      // LLVM's MCInst opcode name for these bytes
  Kind ops[3];
};
const FormInfo& form_info(Form f);

struct Mem {
  uint8_t base = 0;  // a Gpr number
  int32_t disp = 0;
};

// One instruction. Which fields mean something depends on the form's operand kinds, in
// order: each register operand takes the next of r[0], r[1] (GPR or xmm number, by kind),
// a memory operand is `mem`, an immediate is `imm`, a label is `label`.
struct X86Inst {
  Form form = Form::RET;
  uint8_t r[2] = {0, 0};
  Cond cc = Cond::e;  // SETCC_R, CMOVCC_RR, JCC_L
  Mem mem;
  int64_t imm = 0;
  int label = -1;  // L: a label index (jumps), or -1 with `target` (calls to a fixed address)
  uint64_t target = 0;
};

// Appends inst's bytes to out. For an L operand, writes a rel32 of 0 and stores the offset
// of those four bytes in *rel32_at (else -1): the caller patches it once the label is placed
// (rel32 = target - (offset of the byte after the instruction)).
void encode(const X86Inst& inst, std::vector<uint8_t>& out, int* rel32_at);

// The instruction in Intel syntax as LLVM prints it: "add rax, rcx",
// "mov qword ptr [rbp - 8], rbx", "jne .L3", "sete al", "cmovl rax, rbx".
std::string format_intel(const X86Inst& inst);

}  // namespace descent::native
