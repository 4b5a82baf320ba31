// The register bytecode: instruction encoding, the opcode table, and RegFunction.
//
// Three-address code in the style of Lua 5.4's lopcodes.h: every instruction names where its
// operands are and where its result goes (`add_int r1, r0, r2`), so `x = a + b` is one
// dispatch instead of the stack VM's four. Every opcode is typed (ADD_INT vs ADD_FLOAT): sema
// has fixed every type, so the VM never tests a tag.
//
// Encoding: one instruction is 8 bytes, four 16-bit fields.
//
//     63          48 47          32 31          16 15           0
//    +--------------+--------------+--------------+--------------+
//    |      C       |      B       |      A       |      op      |
//    +--------------+--------------+--------------+--------------+
//
// What a field means depends on the opcode (the Arg columns of the table below):
//   R[x]  register x of the current frame. In VIRTUAL code (the compiler's output) there is
//         one register per local and per temporary (printed v0, v1, ...). In ALLOCATED code
//         (after allocate_registers) x < the register file size (printed r0, r1, ...).
//   S[x]  a spill slot: x is its frame offset (allocated code only; printed s0, s1, ...).
//         A frame is [registers | spill slots], so one offset space names both ("a frame
//         location"); R and S differ in cost, not in addressing.
//   K[x]  constant x of the function's constant table (printed k0, ...).
//   G[x]  global x of the Module (GlobalStore::values[x]).
//   F[x]  function x of the Module.
//   L[x]  an operand list in the function's `lists` table: L[x] = n, then n entries. CALL's,
//         TENSOR's, TCHECK's and SAFEPOINT's entries are locations, PRINT's are (type,
//         location-or-string) pairs.
//   S[x]  a tensor site: entry x of the function's tensor_sites (lang/tensor_ops.h).
//         Lists name frame locations, registers or spill slots alike: a call copies its
//         arguments into the callee's frame like a memory move, so a call with many
//         spilled arguments needs no reloads.
//   pc    a jump target: an absolute instruction index in the same function.
//   C     (Imm) a number in the instruction itself.
//   C.r, C.i  (UseImm) a register below 256 in C's low byte and a number 0..255 in its high
//         byte: the argument R[C.r] + C.i or R[C.r] - C.i of a fused call (vm/reg_fuse.h).
//
// Opcodes marked "fused" are made only by fuse_reg_superinstructions (vm/reg_fuse.h), the
// peephole pass after allocation; the compiler and the allocator never emit them.
//
// Calling convention: the callee's frame starts right after the caller's frame. CALL
// copies each argument location into the frame location where the callee wants that
// parameter (RegFunction::param_locs, decided by the callee's register allocation), then
// runs the callee; RETURN A copies R[A] into the caller's R[A of the CALL].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/tensor_ops.h"
#include "lang/value.h"

namespace descent {

// The role of one instruction field (the allocator, disassembler and trace read these).
enum class Arg : uint8_t {
  None,     // unused
  Def,      // register written
  Use,      // register read
  UseDef,   // register read and written (FORLOOP's counter)
  Const,    // K index
  Global,   // G index
  Slot,     // spill slot (frame offset)
  Func,     // F index
  List,     // L index
  Target,   // jump target pc
  Imm,      // a small number in the instruction itself (DIVP2/MODP2's shift)
  UseImm,   // a register read (low 8 bits) and an unsigned immediate (high 8 bits): R[C.r] and C.i
  Type,     // a Type (ECHO)
  Builtin,  // a Builtin (MATH)
  Site,     // a tensor_sites index (TENSOR, TCHECK)
};

// What type the Def field holds afterwards (for the trace, which prints registers typed).
enum class Res : uint8_t { None, Int, Float, Bool, CopyB, KType, GType, Ret, Spill, Site };

// X(NAME, A, B, C, result, semantics)  -- the semantics column is the specification.
// "jump" means pc := C. Comparisons in J* ops are on the two operands' static type.
#define DESCENT_REG_OPCODES(X)                                                                     \
  X(MOVE, Def, Use, None, CopyB, "R[A] := R[B]")                                                   \
  X(LOADK, Def, Const, None, KType, "R[A] := K[B]")                                                \
  X(GETGLOBAL, Def, Global, None, GType, "R[A] := G[B]")                                           \
  X(GETGLOBALCHK, Def, Global, None, GType, "if G[B] never assigned: error; R[A] := G[B]")         \
  X(SETGLOBAL, Use, Global, None, None, "G[B] := R[A]; mark G[B] assigned")                        \
  X(SPILL, Use, Slot, None, Spill, "S[B] := R[A]")                                                 \
  X(RELOAD, Def, Slot, None, CopyB, "R[A] := S[B]")                                                \
  X(ADD_INT, Def, Use, Use, Int, "R[A] := R[B] + R[C]   (wraps)")                                  \
  X(SUB_INT, Def, Use, Use, Int, "R[A] := R[B] - R[C]")                                            \
  X(MUL_INT, Def, Use, Use, Int, "R[A] := R[B] * R[C]")                                            \
  X(DIV_INT, Def, Use, Use, Int, "R[A] := R[B] / R[C]   (error if R[C] == 0)")                     \
  X(MOD_INT, Def, Use, Use, Int, "R[A] := R[B] % R[C]   (error if R[C] == 0)")                     \
  X(ADDK_INT, Def, Use, Const, Int, "R[A] := R[B] + K[C]")                                         \
  X(SUBK_INT, Def, Use, Const, Int, "R[A] := R[B] - K[C]")                                         \
  X(MULK_INT, Def, Use, Const, Int, "R[A] := R[B] * K[C]")                                         \
  X(DIVK_INT, Def, Use, Const, Int, "R[A] := R[B] / K[C]   (error if K[C] == 0)")                  \
  X(MODK_INT, Def, Use, Const, Int, "R[A] := R[B] % K[C]   (error if K[C] == 0)")                  \
  X(DIVP2_INT, Def, Use, Imm, Int, "R[A] := R[B] / 2^C   (a shift, rounding toward zero)")       \
  X(MODP2_INT, Def, Use, Imm, Int, "R[A] := R[B] % 2^C   (a mask, sign of R[B])")                 \
  X(ADD_FLOAT, Def, Use, Use, Float, "R[A] := R[B] + R[C]")                                        \
  X(SUB_FLOAT, Def, Use, Use, Float, "R[A] := R[B] - R[C]")                                        \
  X(MUL_FLOAT, Def, Use, Use, Float, "R[A] := R[B] * R[C]")                                        \
  X(DIV_FLOAT, Def, Use, Use, Float, "R[A] := R[B] / R[C]   (IEEE: inf/nan, no error)")            \
  X(MOD_FLOAT, Def, Use, Use, Float, "R[A] := fmod(R[B], R[C])")                                   \
  X(ADDK_FLOAT, Def, Use, Const, Float, "R[A] := R[B] + K[C]")                                     \
  X(SUBK_FLOAT, Def, Use, Const, Float, "R[A] := R[B] - K[C]")                                     \
  X(MULK_FLOAT, Def, Use, Const, Float, "R[A] := R[B] * K[C]")                                     \
  X(DIVK_FLOAT, Def, Use, Const, Float, "R[A] := R[B] / K[C]")                                     \
  X(MODK_FLOAT, Def, Use, Const, Float, "R[A] := fmod(R[B], K[C])")                                \
  X(NEG_INT, Def, Use, None, Int, "R[A] := -R[B]   (wraps)")                                       \
  X(NEG_FLOAT, Def, Use, None, Float, "R[A] := -R[B]")                                             \
  X(NOT, Def, Use, None, Bool, "R[A] := !R[B]")                                                    \
  X(ITOF, Def, Use, None, Float, "R[A] := float(R[B])")                                            \
  X(FTOI, Def, Use, None, Int, "R[A] := int(R[B])   (error if nan or out of range)")               \
  X(EQ_INT, Def, Use, Use, Bool, "R[A] := R[B] == R[C]")                                           \
  X(NE_INT, Def, Use, Use, Bool, "R[A] := R[B] != R[C]")                                           \
  X(LT_INT, Def, Use, Use, Bool, "R[A] := R[B] < R[C]")                                            \
  X(LE_INT, Def, Use, Use, Bool, "R[A] := R[B] <= R[C]")                                           \
  X(EQK_INT, Def, Use, Const, Bool, "R[A] := R[B] == K[C]")                                        \
  X(NEK_INT, Def, Use, Const, Bool, "R[A] := R[B] != K[C]")                                        \
  X(LTK_INT, Def, Use, Const, Bool, "R[A] := R[B] < K[C]")                                         \
  X(LEK_INT, Def, Use, Const, Bool, "R[A] := R[B] <= K[C]")                                        \
  X(GTK_INT, Def, Use, Const, Bool, "R[A] := R[B] > K[C]")                                         \
  X(GEK_INT, Def, Use, Const, Bool, "R[A] := R[B] >= K[C]")                                        \
  X(EQ_FLOAT, Def, Use, Use, Bool, "R[A] := R[B] == R[C]")                                         \
  X(NE_FLOAT, Def, Use, Use, Bool, "R[A] := R[B] != R[C]")                                         \
  X(LT_FLOAT, Def, Use, Use, Bool, "R[A] := R[B] < R[C]")                                          \
  X(LE_FLOAT, Def, Use, Use, Bool, "R[A] := R[B] <= R[C]")                                         \
  X(EQK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] == K[C]")                                      \
  X(NEK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] != K[C]")                                      \
  X(LTK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] < K[C]")                                       \
  X(LEK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] <= K[C]")                                      \
  X(GTK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] > K[C]")                                       \
  X(GEK_FLOAT, Def, Use, Const, Bool, "R[A] := R[B] >= K[C]")                                      \
  X(EQ_BOOL, Def, Use, Use, Bool, "R[A] := R[B] == R[C]")                                          \
  X(NE_BOOL, Def, Use, Use, Bool, "R[A] := R[B] != R[C]")                                          \
  X(ABS_INT, Def, Use, None, Int, "R[A] := abs(R[B])   (wraps: abs(INT_MIN) = INT_MIN)")           \
  X(ABS_FLOAT, Def, Use, None, Float, "R[A] := fabs(R[B])")                                        \
  X(MIN_INT, Def, Use, Use, Int, "R[A] := min(R[B], R[C])")                                        \
  X(MAX_INT, Def, Use, Use, Int, "R[A] := max(R[B], R[C])")                                        \
  X(MIN_FLOAT, Def, Use, Use, Float, "R[A] := min(R[B], R[C])   (R[B] unless R[C] < R[B])")        \
  X(MAX_FLOAT, Def, Use, Use, Float, "R[A] := max(R[B], R[C])   (R[B] unless R[C] > R[B])")        \
  X(MATH, Def, Use, Builtin, Float, "R[A] := C(R[B])   (C: sqrt exp log sin cos floor)")          \
  X(JMP, None, None, Target, None, "jump")                                                         \
  X(LOOP, None, None, Target, None, "check interrupt and step limit; jump   (loop back-edge)")     \
  X(JTRUE, Use, None, Target, None, "if R[A] then jump")                                           \
  X(JFALSE, Use, None, Target, None, "if !R[A] then jump")                                         \
  X(JEQ_INT, Use, Use, Target, None, "if R[A] == R[B] then jump")                                  \
  X(JNE_INT, Use, Use, Target, None, "if R[A] != R[B] then jump")                                  \
  X(JLT_INT, Use, Use, Target, None, "if R[A] < R[B] then jump")                                   \
  X(JLE_INT, Use, Use, Target, None, "if R[A] <= R[B] then jump")                                  \
  X(JEQK_INT, Use, Const, Target, None, "if R[A] == K[B] then jump")                               \
  X(JNEK_INT, Use, Const, Target, None, "if R[A] != K[B] then jump")                               \
  X(JLTK_INT, Use, Const, Target, None, "if R[A] < K[B] then jump")                                \
  X(JLEK_INT, Use, Const, Target, None, "if R[A] <= K[B] then jump")                               \
  X(JGTK_INT, Use, Const, Target, None, "if R[A] > K[B] then jump")                                \
  X(JGEK_INT, Use, Const, Target, None, "if R[A] >= K[B] then jump")                               \
  X(JEQ_FLOAT, Use, Use, Target, None, "if R[A] == R[B] then jump")                                \
  X(JNE_FLOAT, Use, Use, Target, None, "if R[A] != R[B] then jump")                                \
  X(JLT_FLOAT, Use, Use, Target, None, "if R[A] < R[B] then jump")                                 \
  X(JLE_FLOAT, Use, Use, Target, None, "if R[A] <= R[B] then jump")                                \
  X(JNLT_FLOAT, Use, Use, Target, None, "if !(R[A] < R[B]) then jump   (true for nan)")           \
  X(JNLE_FLOAT, Use, Use, Target, None, "if !(R[A] <= R[B]) then jump")                            \
  X(JEQK_FLOAT, Use, Const, Target, None, "if R[A] == K[B] then jump")                             \
  X(JNEK_FLOAT, Use, Const, Target, None, "if R[A] != K[B] then jump")                             \
  X(JLTK_FLOAT, Use, Const, Target, None, "if R[A] < K[B] then jump")                              \
  X(JLEK_FLOAT, Use, Const, Target, None, "if R[A] <= K[B] then jump")                             \
  X(JGTK_FLOAT, Use, Const, Target, None, "if R[A] > K[B] then jump")                              \
  X(JGEK_FLOAT, Use, Const, Target, None, "if R[A] >= K[B] then jump")                             \
  X(JNLTK_FLOAT, Use, Const, Target, None, "if !(R[A] < K[B]) then jump")                          \
  X(JNLEK_FLOAT, Use, Const, Target, None, "if !(R[A] <= K[B]) then jump")                         \
  X(JNGTK_FLOAT, Use, Const, Target, None, "if !(R[A] > K[B]) then jump")                          \
  X(JNGEK_FLOAT, Use, Const, Target, None, "if !(R[A] >= K[B]) then jump")                         \
  X(FORLOOP, UseDef, Use, Target, Int,                                                             \
    "check interrupt; if R[A]+1 < R[B] then { R[A] += 1; jump }")                                  \
  X(FORLOOPK, UseDef, Const, Target, Int,                                                          \
    "check interrupt; if R[A]+1 < K[B] then { R[A] += 1; jump }")                                  \
  X(PRECALL, None, Func, None, None,                                                               \
    "check interrupt and call depth for a call to F[B]   (before arguments with effects)")        \
  X(CALL, Def, Func, List, Ret,                                                                    \
    "check interrupt and depth; copy args L[C] into F[B]'s frame; R[A] := F[B](...)")             \
  X(CALL0, Def, Func, None, Ret, "CALL without arguments: R[A] := F[B]()")                         \
  X(CALL1, Def, Func, Use, Ret, "CALL with one argument in a register: R[A] := F[B](R[C])")       \
  X(CALL1_ADDI, Def, Func, UseImm, Ret,                                                            \
    "R[A] := F[B](R[C.r] + C.i)   (fused addk_int; call1: C.r low byte, C.i high byte)")           \
  X(CALL1_SUBI, Def, Func, UseImm, Ret,                                                            \
    "R[A] := F[B](R[C.r] - C.i)   (fused subk_int; call1)")                                        \
  X(RETURN, Use, None, None, None, "return R[A] to the caller's CALL register")                   \
  X(RETURN_ADD_INT, Use, Use, None, None, "return R[A] + R[B]   (fused add_int; return)")          \
  X(RETURN_ADDK_INT, Use, Const, None, None, "return R[A] + K[B]   (fused addk_int; return)")      \
  X(RETEQK_INT, Use, Const, Use, None,                                                             \
    "if R[A] == K[B] then return R[C]   (fused jnek_int; return)")                                 \
  X(RETNEK_INT, Use, Const, Use, None,                                                             \
    "if R[A] != K[B] then return R[C]   (fused jeqk_int; return)")                                 \
  X(RETLTK_INT, Use, Const, Use, None,                                                             \
    "if R[A] < K[B] then return R[C]   (fused jgek_int; return)")                                  \
  X(RETLEK_INT, Use, Const, Use, None,                                                             \
    "if R[A] <= K[B] then return R[C]   (fused jgtk_int; return)")                                 \
  X(RETGTK_INT, Use, Const, Use, None,                                                             \
    "if R[A] > K[B] then return R[C]   (fused jlek_int; return)")                                  \
  X(RETGEK_INT, Use, Const, Use, None,                                                             \
    "if R[A] >= K[B] then return R[C]   (fused jltk_int; return)")                                 \
  X(RETURN0, None, None, None, None, "return (no value)")                                          \
  X(HALT, None, None, None, None,                                                                  \
    "end of top-level code; G[promoted[n]] := R[L[A][n]]: top-level variables in registers go home") \
  X(PRINT, List, None, None, None, "print the items of L[A] separated by spaces, then newline")    \
  X(ECHO, Use, Type, None, None, "REPL: print R[A] as type B, then newline")                     \
  X(TENSOR, Def, Site, List, Site,                                                                 \
    "R[A] := tensor operation S[B] on the values of L[C]   (a handle, an element, a dim)")        \
  X(TCHECK, None, Site, List, None,                                                                \
    "check S[B] on the values of L[C]: a shape dim, a call's tensor arguments, a result")         \
  X(SAFEPOINT, List, None, None, None,                                                             \
    "if the runtime wants it, collect tensors; roots: tensor globals and L[A]")

enum class Op : uint16_t {
#define DESCENT_REG_ENUM(name, a, b, c, res, doc) name,
  DESCENT_REG_OPCODES(DESCENT_REG_ENUM)
#undef DESCENT_REG_ENUM
      Count_
};
constexpr int kNumRegOps = static_cast<int>(Op::Count_);

struct OpInfo {
  const char* name;  // lowercase, as the disassembler prints it: "add_int"
  Arg a, b, c;
  Res res;
  const char* doc;  // the semantics column
};
const OpInfo& op_info(Op op);

// One instruction (see the bit diagram above).
struct Instr {
  Op op;
  uint16_t a = 0, b = 0, c = 0;
};
static_assert(sizeof(Instr) == 8, "an instruction is 8 bytes");

constexpr int kMaxOperand = 0xFFFF;  // fields are 16 bits: limits per function

// One compiled body: a function, or an input's top-level code.
struct RegFunction {
  std::string name;        // the function's name, or "<top>"
  int fn_index = -1;       // Module function index; -1 for top-level code
  std::vector<Type> param_types;
  Type ret = Type::Void;

  std::vector<Instr> code;
  std::vector<SourceLoc> locs;  // per instruction: where its errors point, its source line
  std::vector<Value> k;         // constants
  std::vector<Type> k_types;    // each constant's type (for printing)
  std::vector<uint16_t> lists;  // operand lists of CALL and PRINT: count, then entries
  std::vector<std::string> strings;  // print's string literals
  std::vector<SourceLoc> list_locs;  // per lists entry: a printed tensor's errors point here
  std::vector<TensorSite> tensor_sites;  // S: the tensor operations
  bool uses_tensors = false;  // CALL notes the tensor handle count for it (the collector)

  // Top-level code only: the globals that live in registers for this input (issue 34's
  // "top-level loops as fast as functions"), by global index. HALT's list L[A] names their
  // locations, which the allocator assigns like any list's; HALT and a run's error write
  // each back to its global (the value only: whether it is assigned was set when it was).
  std::vector<uint16_t> promoted;

  // Virtual form (the compiler's output). Locals are v0.. (parameters first), then temps.
  int num_vregs = 0;
  std::vector<Type> vreg_types;
  std::vector<std::string> vreg_names;  // the local's name; "" for a temporary

  // Allocated form (after allocate_registers).
  bool allocated = false;
  int file_size = 0;     // the register file it was allocated for
  int num_regs = 0;      // registers in this function's frame: frame offsets 0..num_regs-1
  int num_slots = 0;     // spill slots: frame offsets num_regs..num_regs+num_slots-1
  std::vector<uint16_t> param_locs;  // frame location where each parameter arrives

  // Values one activation needs; the next frame starts this far after this one.
  int frame_size() const { return allocated ? num_regs + num_slots : num_vregs; }
};

// What a print list item holds: an int/float/bool location, or a string literal index.
constexpr uint16_t kPrintStr = static_cast<uint16_t>(Type::Str);

// The operand list of an instruction whose list holds plain locations (CALL, TENSOR, TCHECK,
// SAFEPOINT): a pointer to its count, followed by the entries; null for any other.
const uint16_t* location_list(const RegFunction& f, const Instr& in);
inline uint16_t* location_list(RegFunction& f, const Instr& in) {
  return const_cast<uint16_t*>(location_list(static_cast<const RegFunction&>(f), in));
}

// Control flow of an instruction, for the allocator's CFG and the disassembler.
bool is_jump(Op op);          // has a Target field
bool falls_through(Op op);    // execution can continue at pc + 1
bool returns_value(Op op);    // RETURN and the fused RETURN_*: ends the frame with a value
// The register of a UseImm field (low byte) and its immediate (high byte).
inline uint16_t imm_reg(uint16_t c) { return c & 0xFF; }
inline uint16_t imm_value(uint16_t c) { return c >> 8; }
inline uint16_t pack_imm(int reg, int imm) { return static_cast<uint16_t>(reg | (imm << 8)); }
// Registers read and written by code[pc] (Use/UseDef/Def fields and CALL/PRINT lists).
// List entries are reported as uses too: they are frame locations read by the instruction.
void instr_uses(const RegFunction& f, int pc, std::vector<int>& out);
void instr_defs(const RegFunction& f, int pc, std::vector<int>& out);

}  // namespace descent
