// The native backend's stages and the data they pass along (private to native/).
//
//   RegFunction (virtual registers)                                   vm/reg_code.h
//     │ build_dags        one selection DAG per basic block            dag.cpp
//     │ legalize          operations x86-64 cannot do as they stand    legalize.cpp
//     │ combine           constant folding, algebraic identities       combine.cpp
//     │ select            tree covering with the pattern table          isel.cpp
//     │ schedule          list scheduling inside each block             sched.cpp
//     │ allocate          linear scan onto rax..r15 / xmm0..xmm15       regalloc.cpp
//     ▼ emit             prologue, epilogue, stubs, the bytes          emit.cpp, frame.cpp
//   executable code                                                   engine.cpp
//
// Why the virtual register bytecode as input (and not the AST or a new SSA IR): it is already
// checked, typed per opcode, and split into three-address steps whose virtual registers are
// exactly the "virtual registers" of an LLVM backend; its basic blocks are the DAG's blocks.
// A student sees the same program one tier up in `:reg`.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lang/module.h"
#include "native/a64.h"
#include "native/target.h"
#include "native/x86.h"
#include "vm/reg_code.h"

namespace descent::native {

// A set of small numbers (virtual registers) as bits: liveness is unions and differences of
// these, 64 registers per machine word.
struct Bits {
  std::vector<uint64_t> w;
  explicit Bits(size_t n = 0) : w((n + 63) / 64, 0) {}
  bool test(size_t i) const { return (w[i / 64] >> (i % 64)) & 1; }
  void set(size_t i) { w[i / 64] |= uint64_t{1} << (i % 64); }
  bool operator==(const Bits& o) const { return w == o.w; }
  bool operator!=(const Bits& o) const { return w != o.w; }
  void unite(const Bits& o) {
    for (size_t i = 0; i < w.size(); ++i) w[i] |= o.w[i];
  }
  // this = use | (out & ~def)
  void assign_live_in(const Bits& use, const Bits& out, const Bits& def) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = use.w[i] | (out.w[i] & ~def.w[i]);
  }
  template <class F>
  void each(F f) const {
    for (size_t i = 0; i < w.size(); ++i)
      for (uint64_t x = w[i]; x; x &= x - 1) f(i * 64 + static_cast<size_t>(__builtin_ctzll(x)));
  }
};

// The classic backward liveness fixpoint over blocks, shared by the DAG builder (bytecode
// virtual registers) and the allocator (machine virtual registers): given each block's
// upward-exposed uses and definitions, computes what is live in and out of each block.
inline void solve_liveness(const std::vector<Bits>& use, const std::vector<Bits>& def,
                           const std::vector<std::vector<int>>& succs, size_t nv,
                           std::vector<Bits>* in, std::vector<Bits>* out) {
  size_t n = use.size();
  in->assign(n, Bits(nv));
  out->assign(n, Bits(nv));
  for (bool changed = true; changed;) {  // straight-line code: one pass and a check
    changed = false;
    for (size_t b = n; b-- > 0;) {
      Bits lo(nv);
      for (int s : succs[b]) lo.unite((*in)[static_cast<size_t>(s)]);
      Bits li(nv);
      li.assign_live_in(use[b], lo, def[b]);
      if (lo != (*out)[b] || li != (*in)[b]) {
        (*out)[b] = std::move(lo);
        (*in)[b] = std::move(li);
        changed = true;
      }
    }
  }
}

// ---- [SECTION] the selection DAG ----

// Value classes: a 64-bit integer (int, bool: 0/1) in a GPR, a double in an xmm register,
// nothing, or the chain (the order of side effects).
enum class VT : uint8_t { None, I64, F64, Chain };
const char* vt_name(VT t);

// Comparisons, on ints (signed) or floats (ordered: false with a nan, except the n* forms
// and ne, which are true with a nan, as in C).
enum class CC : uint8_t { eq, ne, lt, le, gt, ge, nlt, nle, ngt, nge };
const char* cc_name(CC c);

// Every node kind: X(NAME, "text", operands (-1: any number), result)
// "chained" kinds take the previous side effect as their chain operand and are roots of
// their own tree in instruction selection.
#define DESCENT_NATIVE_NODES(X)                                                  \
  X(Const, "const", 0, I64)          /* imm: an int or a bool */                \
  X(FConst, "fconst", 0, F64)        /* imm: the double's bits */               \
  X(Reg, "reg", 0, I64)              /* the value of virtual register aux at block entry */ \
  X(SetReg, "setreg", 1, None)       /* chained: virtual register aux := op0 */ \
  X(Global, "global", 0, I64)        /* chained: G[aux] */                      \
  X(GlobalChk, "global.chk", 0, I64) /* chained: G[aux], error if never assigned (site) */ \
  X(SetGlobal, "setglobal", 1, None) /* chained: G[aux] := op0 */               \
  X(Add, "add", 2, I64)                                                          \
  X(Sub, "sub", 2, I64)                                                          \
  X(Mul, "mul", 2, I64)                                                          \
  X(SDiv, "sdiv", 2, I64)            /* the language's /: checks for 0 and -1 */ \
  X(SRem, "srem", 2, I64)                                                        \
  X(Neg, "neg", 1, I64)                                                          \
  X(Not, "not", 1, I64)              /* bool: 1 - x */                           \
  X(Abs, "abs", 1, I64)                                                          \
  X(SMin, "smin", 2, I64)                                                        \
  X(SMax, "smax", 2, I64)                                                        \
  X(SetCC, "setcc", 2, I64)          /* aux: a CC; ints and bools */            \
  X(FSetCC, "fsetcc", 2, I64)        /* aux: a CC; floats */                    \
  X(Select, "select", 3, I64)        /* op0 ? op1 : op2 (ints) */               \
  X(FAdd, "fadd", 2, F64)                                                        \
  X(FSub, "fsub", 2, F64)                                                        \
  X(FMul, "fmul", 2, F64)                                                        \
  X(FDiv, "fdiv", 2, F64)                                                        \
  X(FRem, "frem", 2, F64)            /* fmod */                                 \
  X(FNeg, "fneg", 1, F64)                                                        \
  X(FAbs, "fabs", 1, F64)                                                        \
  X(FMin, "fmin", 2, F64)                                                        \
  X(FMax, "fmax", 2, F64)                                                        \
  X(FSqrt, "fsqrt", 1, F64)                                                      \
  X(FMath, "fmath", 1, F64)          /* aux: a Builtin (exp log sin cos floor): libm */ \
  X(IToF, "sitofp", 1, F64)                                                      \
  X(FToI, "fptosi", 1, I64)          /* chained: int(), error if nan or out of range */ \
  X(Call, "call", -1, I64)           /* chained: function aux (result: imm = its VT) */ \
  X(Print, "print", -1, None)        /* chained: a print statement: aux = its list */ \
  X(Echo, "echo", 1, None)           /* chained: REPL echo of op0 as Type aux */ \
  X(CallCheck, "callcheck", 0, None) /* chained: interrupt and depth check before a call */ \
  X(Tick, "tick", 0, None)           /* chained: a loop back-edge's interrupt poll */ \
  X(Br, "br", 0, None)               /* chained: jump to block aux */           \
  X(BrCond, "brcond", 1, None)       /* chained: if op0 jump to block aux, else fall through */ \
  X(Ret, "ret", -1, None)            /* chained: return op0 (if any) */          \
  X(Halt, "halt", 0, None)           /* chained: the end of top-level code */    \
  /* made by legalisation: */                                                    \
  X(DivCheck, "divcheck", 1, None)   /* chained: error "division by zero" if op0 == 0 */ \
  X(X86Div, "x86.idiv", 2, I64)      /* idiv's quotient: op1 neither 0 nor -1 */ \
  X(X86Rem, "x86.irem", 2, I64)      /* idiv's remainder */                     \
  X(SDivSafe, "sdiv.safe", 2, I64)   /* op1 != 0: idiv, or negation for -1 */    \
  X(SRemSafe, "srem.safe", 2, I64)   /* op1 != 0: idiv, or 0 for -1 */          \
  X(Shl, "shl", 2, I64)              /* op1: a constant 0..63 */                 \
  X(Sra, "sra", 2, I64)                                                          \
  X(Srl, "srl", 2, I64)                                                          \
  X(And, "and", 2, I64)                                                          \
  X(Imm64, "imm64", 0, I64)          /* a constant too wide for an imm32 */      \
  X(MulHS, "mulhs", 2, I64)          /* the high 64 bits of the signed 128-bit product */ \
  X(FLoadConst, "fconst.bits", 0, F64) /* a float constant through a GPR */       \
  X(LibCall, "libcall", -1, F64)     /* a libm call: aux = the Builtin (or Mod for fmod) */

enum class NK : uint8_t {
#define DESCENT_NATIVE_NK(name, text, n, vt) name,
  DESCENT_NATIVE_NODES(DESCENT_NATIVE_NK)
#undef DESCENT_NATIVE_NK
      Count_
};
constexpr int kNumNodeKinds = static_cast<int>(NK::Count_);
const char* nk_name(NK k);
bool is_chained(NK k);

struct Node {
  NK kind = NK::Const;
  VT type = VT::None;
  std::vector<int> ops;  // value operands (node ids in the same DAG)
  int chain = -1;        // the previous side effect (chained kinds), -1 at the block's start
  int64_t imm = 0;       // Const / FConst / Imm64 value; Call: the result's VT
  int aux = 0;           // Reg/SetReg: virtual register; Global*: index; SetCC: CC; Call:
                         // function; Br/BrCond: block; Print: list offset; FMath: Builtin
  int site = -1;         // where its runtime error points (an index into Dag::sites... below)
  int pc = -1;           // the bytecode instruction it came from
  bool dead = false;     // replaced by combine / legalize (kept so the ids stay stable)
};

// One basic block of the virtual code and its DAG.
struct Block {
  int first_pc = 0, end_pc = 0;  // [first_pc, end_pc)
  std::vector<int> succs;        // block indices
  std::vector<Node> nodes;
  int last_chain = -1;           // the terminator (the end of the chain)
};

// What a runtime error reports: a location and the message's kind.
enum class Fail : uint8_t { DivisionByZero, InvalidConversion, StackOverflow, Interrupted,
                            UndefinedVariable };
struct Site {
  SourceLoc loc;
  Fail kind = Fail::DivisionByZero;
  int global = -1;  // UndefinedVariable: which global
};
const char* fail_message(Fail k);  // the walker's words for it (engine.cpp)

struct Function {
  const RegFunction* src = nullptr;
  std::vector<Block> blocks;
  std::vector<Site> sites;
  std::vector<VT> vreg_vt;          // per virtual register of src: its class
  std::vector<Bits> live_out;  // per block: the src vregs a later block may read
  std::vector<std::string> log;     // what legalize and combine did, one line each
};

// Builds the blocks and one DAG per block. False (and *error) for code the backend does not
// run (tensor operations).
bool build_dags(const RegFunction& f, const Module& m, Function& out, std::string* error);
void legalize(Function& f, const Target& target = x86_64_target());
void combine(Function& f, const Target& target = x86_64_target());

// ---- [SECTION] machine instructions (after selection) ----

// Machine operations over virtual registers, three-address: the two-address form of x86
// (`add rax, rcx` overwrites rax) is made at emission, once registers are known.
#define DESCENT_NATIVE_MOPS(X)                                                           \
  X(MOV, "mov")       X(MOVI, "movi")     X(ADD, "add")     X(ADDI, "addi")              \
  X(SUB, "sub")       X(SUBI, "subi")     X(IMUL, "imul")   X(IMULI, "imuli")            \
  X(AND, "and")       X(ANDI, "andi")     X(SHLI, "shli")   X(SARI, "sari")              \
  X(SHRI, "shri")     X(NEG, "neg")       X(XORI, "xori")   X(LEA, "lea")                \
  X(CMP, "cmp")       X(CMPI, "cmpi")     X(TEST, "test")   X(SETCC, "setcc")            \
  X(CMOV, "cmov")     X(IDIV, "idiv")     X(IREM, "irem")   X(SDIVSAFE, "sdiv.safe")     \
  X(SREMSAFE, "srem.safe") X(DIVCHECK, "divcheck")                                       \
  X(FMOV, "fmov")     X(FMOVI, "fmovi")   X(FADD, "addsd")  X(FSUB, "subsd")             \
  X(FMUL, "mulsd")    X(FDIV, "divsd")    X(FMIN, "minsd")  X(FMAX, "maxsd")             \
  X(FSQRT, "sqrtsd")  X(FNEG, "fneg")     X(FABS, "fabs")   X(UCOMI, "ucomisd")          \
  X(FSETCC, "fsetcc") X(CVTSI2SD, "cvtsi2sd") X(CVTTSD2SI, "cvttsd2si.chk")              \
  X(LDG, "ldg")       X(LDGCHK, "ldg.chk") X(STG, "stg")                                 \
  X(CALL, "call")     X(CALLH, "call.helper") X(CALLCHECK, "callcheck") X(TICK, "tick")  \
  X(JMP, "jmp")       X(JCC, "jcc")       X(FJCC, "fjcc")   X(RET, "ret")                \
  X(HALT, "halt")     X(ARGS, "args")     X(ABS, "abs")     X(SMIN, "smin")              \
  X(SMAX, "smax")     X(MULHS, "mulhs")                                                 \
  /* AArch64's own: */                                                                   \
  X(MADD, "madd")     X(MSUB, "msub")     X(CBNZ, "cbnz")   X(CBZ, "cbz")

enum class MOp : uint8_t {
#define DESCENT_NATIVE_MOP(name, text) name,
  DESCENT_NATIVE_MOPS(DESCENT_NATIVE_MOP)
#undef DESCENT_NATIVE_MOP
      Count_
};
const char* mop_name(MOp op);
const char* a64_mop_name(MOp op);  // the same operations under AArch64's mnemonics

// The helpers generated code calls (engine.cpp), by number.
enum class Helper : uint8_t { PrintInt, PrintFloat, PrintBool, PrintStr, PrintSpace, PrintEnd,
                              Math, Fmod };
const char* helper_name(Helper h);

struct MInst {
  MOp op = MOp::MOV;
  int def = -1;           // machine virtual register written (-1: none)
  std::vector<int> params;  // ARGS only: the parameters it defines, in order
  std::vector<int> uses;  // machine virtual registers read
  int64_t imm = 0;
  int cc = 0;             // SETCC/CMOV/JCC: a Cond; FSETCC/FJCC: a CC
  int target = -1;        // JMP/JCC/FJCC: a block
  int site = -1;          // the runtime error it may raise
  int aux = 0;            // LDG/STG: global; CALL: function; CALLH: Helper; ...
  int pattern = -1;       // the isel pattern that made it (views)
  int node = -1;          // the DAG node it covers the root of (views)
};

struct MBlock {
  std::vector<MInst> code;
};

struct MFunction {
  std::vector<MBlock> blocks;
  std::vector<VT> vt;          // per machine virtual register: I64 or F64
  std::vector<std::string> names;  // per machine vreg: the local's name, or ""
  int num_src_vregs = 0;       // the first ones are the bytecode's v0..
  int new_vreg(VT t) { vt.push_back(t); names.emplace_back(); return static_cast<int>(vt.size()) - 1; }
  // Selection's record, for the isel view: per block, per tree, the patterns used.
  std::vector<std::vector<std::string>> cover;
  // Per block, per DAG node: the pattern that covered it (-1: none; a leaf or a root's use).
  std::vector<std::vector<int>> node_rule;
  std::string error;  // non-empty: a node no pattern of the target's table covers (a bug)
};

// Instruction selection by tree covering (isel.cpp).
struct Pattern {
  const char* name;    // "ADD64ri32"
  const char* result;  // the nonterminal it produces: "reg", "freg", "imm", "flags", "stmt"
  NK node;             // the DAG node kind at its root
  const char* shape;   // the tree it matches, e.g. "add(reg, imm)"
  int cost;            // instructions it emits (latency does not enter: see docs/native.md)
  const char* emits;   // the x86 it stands for, for the view: "add r, imm32"
};
const std::vector<Pattern>& patterns();        // x86-64's table (isel.cpp)
const std::vector<Pattern>& a64_patterns();    // AArch64's (a64_isel.cpp)
void select(const Function& f, MFunction& out);      // x86-64
void select_a64(const Function& f, MFunction& out);  // AArch64
inline void select(const Function& f, MFunction& out, const Target& t) {
  if (t.arch == Arch::AArch64) select_a64(f, out);
  else select(f, out);
}

// List scheduling inside each block: dependences, critical-path priority.
void schedule(MFunction& f, std::vector<std::string>* log);

// ---- [SECTION] register allocation ----

// A location after allocation: a register (GPR or xmm number by the vreg's class) or a
// stack slot.
struct Loc {
  int reg = -1;   // >= 0: a register
  int slot = -1;  // >= 0: frame slot
};
struct Interval {
  int vreg = 0;
  int start = 0, end = 0;   // positions: 2 per instruction (read at 2i, written at 2i+1)
  bool crosses_call = false;
  VT vt = VT::I64;
  Loc loc;
};
struct Allocation {
  std::vector<Interval> intervals;  // by start
  std::vector<Loc> loc;             // per vreg
  int num_slots = 0;
  std::vector<int> callee_saved;    // the callee-saved GPRs used (pushed by the prologue)
  std::vector<int> fpr_callee_saved;  // the callee-saved float registers used (AArch64's d8-d15)
  std::vector<int> positions;       // per block: the position of its first instruction
};
// succs: per block, its successor blocks. regs: the target's (target.h).
Allocation allocate(const MFunction& f, const std::vector<std::vector<int>>& succs,
                    const RegisterFile& regs = x86_64_target().regs);

// ---- [SECTION] emission ----

struct Emitted {
  std::vector<X86Inst> insts;
  std::vector<int> labels_at;        // per label: the instruction index it stands before
  std::vector<std::string> comments; // per instruction: what it is for ("spill v3", "prologue")
  std::vector<uint8_t> bytes;
  std::vector<int> offsets;          // per instruction: its byte offset
  std::vector<int> sizes;            // per instruction: its byte count
};
// Writes the function's x86-64 code. Calls reach the helpers and the Module's functions
// through the context in r15 (engine.cpp's layout). print's strings go by address in this
// process (string_base -1) or by number from string_base (a program image, image.h).
Emitted emit(const Function& f, const MFunction& m, const Allocation& a, bool top_level,
             const std::vector<int>& site_ids, int string_base = -1);

// Parallel moves (arguments into their registers, parameters out of them): register copies
// that must happen as if all at once. Orders them so that none overwrites a source another
// still needs, and breaks each cycle through a spare register: in the result, kSpare as dst
// means "save src in the spare", as src "read the saved value". frame.cpp; both emitters.
struct RegMove {
  int dst, src;
};
constexpr int kSpare = -1;
std::vector<RegMove> sequence_moves(std::vector<RegMove> moves);

// The same for AArch64 (a64_emit.cpp, a64_frame.cpp): one 32-bit word per instruction, so a
// branch's offset is known once every label is placed (label_of names the branch's label).
struct A64Emitted {
  std::vector<a64::A64Inst> insts;
  std::vector<int> label_of;         // per instruction: the label it branches to, -1 if none
  std::vector<int> labels_at;        // per label: the instruction index it stands before
  std::vector<std::string> comments; // per instruction: what it is for
  std::vector<uint8_t> bytes;        // four per instruction, little-endian
  std::string error;                 // non-empty: an operand out of range (a frame too large)
};
// Calls reach helpers and functions through the context in x28 (the same Context layout);
// print's strings are numbered from string_base (the runner's table of every body's strings).
// constants: how to build a 64-bit constant in a register (null: a64::materialize; the
// instruction-selection lab gives its own).
using a64::ConstantBuilder;
A64Emitted emit_a64(const Function& f, const MFunction& m, const Allocation& a, bool top_level,
                    const std::vector<int>& site_ids, int string_base, const ConstantBuilder* constants = nullptr);

}  // namespace descent::native

namespace descent::native {

// ---- [SECTION] the runtime context (engine.cpp fills it; r15 points to it) ----
struct Context {
  int64_t* globals = nullptr;          // GlobalStore::values
  uint8_t* defined = nullptr;          // GlobalStore::defined
  const uint8_t* poll = nullptr;       // nonzero: loop back-edges must call the runtime
  int64_t depth = 0;                   // the slow path's copy of r14 (the call depth)
  void* slow = nullptr;                // the trampoline that saves every register (r11: site)
  void* fail = nullptr;                // void (int64 site): a runtime error, never returns
  // A call from depth >= call_limit takes the slow path: 10,000 (so the one compare is also
  // the stack-overflow check), or 0 while the runtime watches (a step limit, an interrupt:
  // the engine's watcher thread lowers it when the flag goes up mid-run).
  std::atomic<int64_t> call_limit{0};
  void* helpers[8] = {};               // by Helper
  void* slow_helper = nullptr;         // void (int64 site): what the trampoline calls
  // The Module's functions' entry points follow the Context in memory (kCtxTable): a call is
  // one `call qword ptr [r15 + kCtxTable + 8f]`.
};
constexpr int kCtxGlobals = 0, kCtxDefined = 8, kCtxPoll = 16, kCtxDepth = 24, kCtxSlow = 32,
              kCtxFail = 40, kCtxCallLimit = 48, kCtxHelpers = 56, kCtxSlowHelper = 120,
              kCtxTable = 128;
// Registers generated code keeps for itself: r15 holds the Context, r14 the call depth
// (frames below top-level code; each function adds one on entry and takes it off on return).
constexpr int kCtxReg = 15, kDepthReg = 14;

// The save-everything trampoline the slow paths call (frame.cpp): pushes every caller-saved
// register, calls `helper`(r11) (a C function of one int64 argument), restores, returns.
std::vector<X86Inst> slow_trampoline();

// Assembles a list of instructions with labels (labels_at[i]: the instruction index label i
// stands before) into bytes, filling offsets and sizes.
void assemble(Emitted& e);

}  // namespace descent::native
