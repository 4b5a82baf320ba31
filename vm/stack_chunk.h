// The stack VM's bytecode: the instruction set and the Chunk that holds one compiled body.
//
// Encoding. A chunk's code is a byte string of instructions. Each instruction is one opcode
// byte followed by 0 to 3 operands of 4 bytes each (uint32, host byte order, unaligned; read
// with read_u32 or Chunk::operand):
//
//   +--------+---------------+---------------+---------------+
//   | opcode | operand A u32 | operand B u32 | operand C u32 |   (as many as its format has)
//   +--------+---------------+---------------+---------------+
//
// The operand FORMAT of each opcode (the middle column of the table below) says how many
// operands it has and what they name:
//   NONE  no operand               K   k: constant index (K[k], the chunk's constant pool)
//   L     l: local slot (L[l])     G   g: global index (G[g], the session's GlobalStore)
//   J     j: jump offset, a signed int32 counted from the end of this instruction
//   LK    l, k                     LJ  l, j                 LKJ  l, k, j
//   FN    f: function index, n: argument count             B    b: builtin (Builtin enum)
//   P     p: print format (P[p], the chunk's print table)   T    t: a Type (for ECHO)
//   S     s: tensor site (S[s], the chunk's table of tensor operations, lang/tensor_ops.h)
//
// Machine model. One value stack holds every active frame: a frame is the function's locals
// L[0..num_locals) (parameters first, then the other locals, then hidden for-loop slots)
// followed by its operand stack. A call turns the n argument values on top of the caller's
// operand stack into the callee's first n locals, so arguments are never copied. Values are
// untyped 8-byte words (lang/value.h): every opcode is typed (ADD_INT vs ADD_FLOAT), chosen by
// the compiler from the checked AST, so the VM never tests a type at run time.
//
// The compiler emits the plain opcodes; the superinstructions (fused compare-and-jump, the
// *_CONST_* and *_LOCAL_* forms) are made from them by fuse_superinstructions (stack_fuse.h).
//
// In the semantics column, "a, b := pop2" pops b (the top) and then a; "push" and "pop" act on
// the operand stack; "pc += j" is a jump; "tick" is the check every back-edge and call makes
// (options.interrupt, options.step_limit: error "interrupted").
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/source.h"
#include "lang/tensor_ops.h"
#include "lang/value.h"

namespace descent::stack {

// clang-format off
#define DESCENT_STACK_OPCODES(X)                                                                  \
  /* constants and variables */                                                                   \
  X(CONST,                K,    "push K[k]")                                                      \
  X(POP,                  NONE, "pop (an expression statement's unused value)")                   \
  X(LOAD_LOCAL,           L,    "push L[l]")                                                      \
  X(STORE_LOCAL,          L,    "L[l] := pop")                                                    \
  X(LOAD_GLOBAL,          G,    "push G[g]")                                                      \
  X(LOAD_GLOBAL_CHECKED,  G,    "G[g] never assigned: error 'undefined variable'; push G[g]")     \
  X(STORE_GLOBAL,         G,    "G[g] := pop; mark G[g] assigned")                                \
  /* int arithmetic: wraps modulo 2^64 */                                                         \
  X(ADD_INT,              NONE, "a, b := pop2; push a + b")                                       \
  X(SUB_INT,              NONE, "a, b := pop2; push a - b")                                       \
  X(MUL_INT,              NONE, "a, b := pop2; push a * b")                                       \
  X(DIV_INT,              NONE, "a, b := pop2; b == 0: error 'division by zero'; push a / b (truncates)") \
  X(MOD_INT,              NONE, "a, b := pop2; b == 0: error 'division by zero'; push a % b (sign of a)") \
  X(NEG_INT,              NONE, "a := pop; push -a")                                              \
  /* float arithmetic: IEEE-754 double */                                                         \
  X(ADD_FLOAT,            NONE, "a, b := pop2; push a + b")                                       \
  X(SUB_FLOAT,            NONE, "a, b := pop2; push a - b")                                       \
  X(MUL_FLOAT,            NONE, "a, b := pop2; push a * b")                                       \
  X(DIV_FLOAT,            NONE, "a, b := pop2; push a / b (inf or nan when b == 0)")              \
  X(MOD_FLOAT,            NONE, "a, b := pop2; push fmod(a, b)")                                  \
  X(NEG_FLOAT,            NONE, "a := pop; push -a")                                              \
  /* arithmetic with a constant operand (superinstructions: [a] CONST k ADD_INT in one) */        \
  X(ADD_CONST_INT,        K,    "a := pop; push a + K[k]")                                        \
  X(SUB_CONST_INT,        K,    "a := pop; push a - K[k]")                                        \
  X(MUL_CONST_INT,        K,    "a := pop; push a * K[k]")                                        \
  X(DIV_CONST_INT,        K,    "a := pop; push a / K[k]   (K[k] != 0: never fails)")             \
  X(MOD_CONST_INT,        K,    "a := pop; push a % K[k]   (K[k] != 0: never fails)")             \
  X(ADD_CONST_FLOAT,      K,    "a := pop; push a + K[k]")                                        \
  X(SUB_CONST_FLOAT,      K,    "a := pop; push a - K[k]")                                        \
  X(MUL_CONST_FLOAT,      K,    "a := pop; push a * K[k]")                                        \
  X(DIV_CONST_FLOAT,      K,    "a := pop; push a / K[k]")                                        \
  /* comparisons: push a bool */                                                                  \
  X(EQ_INT,               NONE, "a, b := pop2; push a == b")                                      \
  X(NE_INT,               NONE, "a, b := pop2; push a != b")                                      \
  X(LT_INT,               NONE, "a, b := pop2; push a < b")                                       \
  X(LE_INT,               NONE, "a, b := pop2; push a <= b")                                      \
  X(GT_INT,               NONE, "a, b := pop2; push a > b")                                       \
  X(GE_INT,               NONE, "a, b := pop2; push a >= b")                                      \
  X(EQ_FLOAT,             NONE, "a, b := pop2; push a == b")                                      \
  X(NE_FLOAT,             NONE, "a, b := pop2; push a != b")                                      \
  X(LT_FLOAT,             NONE, "a, b := pop2; push a < b")                                       \
  X(LE_FLOAT,             NONE, "a, b := pop2; push a <= b")                                      \
  X(GT_FLOAT,             NONE, "a, b := pop2; push a > b")                                       \
  X(GE_FLOAT,             NONE, "a, b := pop2; push a >= b")                                      \
  X(EQ_BOOL,              NONE, "a, b := pop2; push a == b")                                      \
  X(NE_BOOL,              NONE, "a, b := pop2; push a != b")                                      \
  X(NOT,                  NONE, "a := pop; push !a")                                              \
  /* conversions and builtins */                                                                  \
  X(INT_TO_FLOAT,         NONE, "a := pop; push float(a)")                                        \
  X(FLOAT_TO_INT,         NONE, "a := pop; nan or out of range: error 'invalid conversion'; push int(a)") \
  X(MATH,                 B,    "a := pop; push b(a): sqrt exp log sin cos floor, abs of a float") \
  X(ABS_INT,              NONE, "a := pop; push |a| (wraps at INT_MIN)")                          \
  X(MIN_INT,              NONE, "a, b := pop2; push b < a ? b : a")                               \
  X(MAX_INT,              NONE, "a, b := pop2; push b > a ? b : a")                               \
  X(MIN_FLOAT,            NONE, "a, b := pop2; push b < a ? b : a")                               \
  X(MAX_FLOAT,            NONE, "a, b := pop2; push b > a ? b : a")                               \
  X(PRINT,                P,    "pop a value per non-string item of P[p]; print the items and a newline") \
  X(ECHO,                 T,    "a := pop; print a as a t and a newline (REPL echo)")             \
  /* tensors: values are int64 handles into RunOptions::tensors (lang/tensor_api.h) */            \
  X(TENSOR,               S,    "S[s] reads the top S[s].n values: an operation pops them and pushes its value (if any); a check leaves them") \
  X(SAFEPOINT,            NONE, "a statement ended: if the runtime wants it, collect tensors no variable holds") \
  /* jumps */                                                                                     \
  X(JUMP,                 J,    "pc += j")                                                        \
  X(JUMP_IF_FALSE,        J,    "if !pop: pc += j")                                               \
  X(JUMP_IF_TRUE,         J,    "if pop: pc += j")                                                \
  X(JUMP_IF_FALSE_OR_POP, J,    "if !top: pc += j (keeping it) else pop  (&& as a value)")        \
  X(JUMP_IF_TRUE_OR_POP,  J,    "if top: pc += j (keeping it) else pop   (|| as a value)")        \
  X(LOOP,                 J,    "tick; pc += j (a loop's back-edge, j < 0)")                      \
  /* fused compare-and-jump (superinstructions: a condition costs one dispatch, not two) */       \
  X(JUMP_IF_EQ_INT,       J,    "a, b := pop2; if a == b: pc += j")                               \
  X(JUMP_IF_NE_INT,       J,    "a, b := pop2; if a != b: pc += j")                               \
  X(JUMP_IF_LT_INT,       J,    "a, b := pop2; if a < b: pc += j")                                \
  X(JUMP_IF_LE_INT,       J,    "a, b := pop2; if a <= b: pc += j")                               \
  X(JUMP_IF_GT_INT,       J,    "a, b := pop2; if a > b: pc += j")                                \
  X(JUMP_IF_GE_INT,       J,    "a, b := pop2; if a >= b: pc += j")                               \
  X(JUMP_IF_EQ_FLOAT,     J,    "a, b := pop2; if a == b: pc += j")                               \
  X(JUMP_IF_NE_FLOAT,     J,    "a, b := pop2; if a != b: pc += j")                               \
  X(JUMP_IF_LT_FLOAT,     J,    "a, b := pop2; if a < b: pc += j")                                \
  X(JUMP_IF_LE_FLOAT,     J,    "a, b := pop2; if a <= b: pc += j")                               \
  X(JUMP_IF_GT_FLOAT,     J,    "a, b := pop2; if a > b: pc += j")                                \
  X(JUMP_IF_GE_FLOAT,     J,    "a, b := pop2; if a >= b: pc += j")                               \
  X(JUMP_IF_NOT_LT_FLOAT, J,    "a, b := pop2; if !(a < b): pc += j  (not >=: nan)")              \
  X(JUMP_IF_NOT_LE_FLOAT, J,    "a, b := pop2; if !(a <= b): pc += j")                            \
  X(JUMP_IF_NOT_GT_FLOAT, J,    "a, b := pop2; if !(a > b): pc += j")                             \
  X(JUMP_IF_NOT_GE_FLOAT, J,    "a, b := pop2; if !(a >= b): pc += j")                            \
  X(JUMP_IF_EQ_LOCAL_CONST_INT, LKJ,  "if L[l] == K[k]: pc += j")                                 \
  X(JUMP_IF_NE_LOCAL_CONST_INT, LKJ,  "if L[l] != K[k]: pc += j")                                 \
  X(JUMP_IF_LT_LOCAL_CONST_INT, LKJ,  "if L[l] < K[k]: pc += j")                                  \
  X(JUMP_IF_LE_LOCAL_CONST_INT, LKJ,  "if L[l] <= K[k]: pc += j")                                 \
  X(JUMP_IF_GT_LOCAL_CONST_INT, LKJ,  "if L[l] > K[k]: pc += j")                                  \
  X(JUMP_IF_GE_LOCAL_CONST_INT, LKJ,  "if L[l] >= K[k]: pc += j")                                 \
  /* for i in lo..hi: L[l] is the hidden counter, L[l+1] the hidden bound */                      \
  X(FOR_PREP,             LJ,   "lo, hi := pop2; L[l], L[l+1] := lo, hi; if lo < hi: push lo else pc += j") \
  X(FOR_LOOP,             LJ,   "tick; L[l] += 1; if L[l] < L[l+1]: push L[l]; pc += j (j < 0)")  \
  /* superinstructions on locals */                                                               \
  X(ADD_LOCAL_CONST_INT,  LK,   "push L[l] + K[k]   (LOAD_LOCAL l; ADD_CONST_INT k)")            \
  X(SUB_LOCAL_CONST_INT,  LK,   "push L[l] - K[k]   (LOAD_LOCAL l; SUB_CONST_INT k)")            \
  X(INC_LOCAL_INT,        LK,   "L[l] := L[l] + K[k]   (l += k)")                                 \
  X(ADD_TO_LOCAL_INT,     L,    "L[l] := L[l] + pop   (l += value)")                              \
  X(ADD_TO_LOCAL_FLOAT,   L,    "L[l] := L[l] + pop   (l += value)")                              \
  /* calls */                                                                                     \
  X(PRECALL,              FN,   "tick; 10,000 frames active: error 'stack overflow' (CALL's checks, early)") \
  X(CALL,                 FN,   "PRECALL's checks; new frame for f whose L[0..n) are the top n values") \
  X(RETURN,               NONE, "a := pop; drop the frame; push a (on the caller's operand stack)") \
  X(RETURN_VOID,          NONE, "drop the frame")                                                 \
  X(HALT,                 NONE, "end of the top-level code")
// clang-format on

enum class Op : uint8_t {
#define DESCENT_X(name, fmt, doc) name,
  DESCENT_STACK_OPCODES(DESCENT_X)
#undef DESCENT_X
};

#define DESCENT_X(name, fmt, doc) +1
constexpr int kOpCount = 0 DESCENT_STACK_OPCODES(DESCENT_X);
#undef DESCENT_X

// Operand layouts (the format column above) and what each operand names.
enum class Format : uint8_t { NONE, K, L, G, J, LK, LJ, LKJ, FN, B, P, T, S };
enum class Operand : uint8_t {
  Const, Local, Global, Jump, Function, Count, Builtin, Print, Type, Site
};

constexpr int kOperandBytes = 4;

const char* op_name(Op op);       // "ADD_INT"
const char* op_semantics(Op op);  // "a, b := pop2; push a + b"
Format op_format(Op op);
int operand_count(Format f);
Operand operand_kind(Format f, int i);  // what operand i (0-based) of format f names
inline size_t instruction_length(Op op) {
  return 1 + static_cast<size_t>(operand_count(op_format(op))) * kOperandBytes;
}

inline uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline int32_t read_i32(const uint8_t* p) { return static_cast<int32_t>(read_u32(p)); }

// One item of a print statement: a string literal (type Str, printed as its text) or a value
// of the given type taken from the operand stack.
struct PrintItem {
  Type type = Type::Int;
  std::string text;
  SourceLoc loc;  // a tensor that cannot be evaluated is an error here
};
using PrintFormat = std::vector<PrintItem>;

// One compiled body: a function's, or a program's top-level code.
struct Chunk {
  std::string name;                      // the function's name, or "<script>"
  std::vector<uint8_t> code;             // instructions, encoded as above
  std::vector<SourceLoc> locs;           // line table: locs[i] is the source of the
                                         // instruction that byte i belongs to
  std::vector<Value> constants;          // K: the constant pool
  std::vector<Type> constant_types;      // the type of each constant (for printing)
  std::vector<PrintFormat> prints;       // P: the print statements' layouts
  std::vector<TensorSite> tensor_sites;  // S: the tensor operations
  std::vector<std::string> local_names;  // L: slot names; hidden for-loop slots are ".for1" ...
  std::vector<Type> local_types;
  uint32_t num_params = 0;
  uint32_t max_stack = 0;          // the deepest the operand stack gets above the locals
  Type return_type = Type::Void;   // functions: what RETURN hands back
  int32_t fn_index = -1;           // functions: index in the Module (-1 for the script)
  bool uses_tensors = false;       // it has SAFEPOINTs; CALL notes the handle count for it

  uint32_t num_locals() const { return static_cast<uint32_t>(local_names.size()); }
  uint32_t frame_size() const { return num_locals() + max_stack; }
  Op op_at(size_t offset) const { return static_cast<Op>(code[offset]); }
  // Operand i (0-based) of the instruction at offset.
  uint32_t operand(size_t offset, int i) const {
    return read_u32(&code[offset + 1 + static_cast<size_t>(i) * kOperandBytes]);
  }
  // Where a jump operand at (offset, i) lands.
  size_t jump_target(size_t offset, int i) const {
    return static_cast<size_t>(static_cast<int64_t>(offset + instruction_length(op_at(offset))) +
                               static_cast<int32_t>(operand(offset, i)));
  }
};

// A whole program compiled for the stack VM: its top-level code and the functions it declares.
struct StackProgram {
  Chunk script;
  std::vector<Chunk> functions;  // one per FnDecl of the program, in source order
};

}  // namespace descent::stack
