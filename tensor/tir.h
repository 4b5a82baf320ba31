// The loop-nest IR (TIR): what a kernel lowers to, what schedules transform, and what the
// reference interpreter, the CPU code generator and the OpenCL code generator consume.
//
// Modelled on TVM's TensorIR (the MLC course's `T.prim_func`): a PrimFunc owns buffers and
// a statement tree of loops. The unit of computation is a Block: it declares its iteration
// variables (spatial or reduce, each with an extent and a binding to the loops around it),
// an optional init (run when every reduce variable is 0) and a body. Schedules move loops
// around blocks but never change what a block computes, which is how they are checked.
//
//   for i in 0..128:                      For{var "i", extent 128, kind Serial}
//     for j in 0..128:
//       for k in 0..128:
//         block Y(vi=S(i), vj=S(j), vk=R(k)):   Block{name "Y", iters, init, body}
//           init: Y[vi, vj] = 0.0
//           Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]     Store
//
// All extents are concrete: a kernel with named dims (f32[n, k]) is lowered once per set of
// argument shapes. Loops always start at 0 and step by 1.
//
// Names: loop variables and block iteration variables are plain strings. Within one path
// from the root to a block, no two loops share a name; sibling nests may (mm_relu's two
// stages both have loops "i" and "j"), and schedules address those as "C.i" (block.loop).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace descent::tensor { struct Tensor; }

namespace descent::tir {

enum class ScalarType : uint8_t {
  Int,    // index arithmetic: int64
  F32,    // tensor elements
  Bool,   // conditions (predicates, comparisons)
};

// Where a buffer lives. Global: main memory (CPU) / __global (OpenCL). Local: private to one
// thread (registers or the stack; cache_write accumulators). Shared: one OpenCL work-group's
// __local memory (cache_read staging); on the CPU backends it behaves like Local.
enum class Scope : uint8_t { Global, Local, Shared };
const char* scope_name(Scope s);  // "global", "local", "shared"

enum class BufferRole : uint8_t {
  Input,   // a kernel parameter, read only
  Output,  // the returned buffer
  Temp,    // an intermediate stage or a cache_read/cache_write staging buffer
};

struct Buffer {
  std::string name;
  std::vector<int64_t> shape;  // row-major; every dim >= 1
  Scope scope = Scope::Global;
  BufferRole role = BufferRole::Temp;
};

// ---- Expressions ---------------------------------------------------------------------

enum class ExprKind : uint8_t {
  IntImm,    // ival
  FloatImm,  // fval (an f32 constant; kept as double only for printing)
  Var,       // name: a loop variable or a block iteration variable (Int)
  Load,      // buffer[args...] (F32)
  Binary,    // op args[0] args[1]
  Unary,     // op args[0]: Neg, or a math function (Exp, Log, Sqrt, Abs)
  Select,    // args[0] ? args[1] : args[2]
  Fma,       // args[0] * args[1] + args[2] in f32, rounded once: a fused multiply-add (what a
             // tensor intrinsic's implementation writes: tensor/schedule.h, tensorize)
};

enum class Op : uint8_t {
  // Binary. On Int: Div and Mod truncate (operands are never negative in index math).
  Add, Sub, Mul, Div, Mod, Min, Max,
  Lt, Le, Gt, Ge, Eq, Ne,  // -> Bool
  And, Or,                 // Bool x Bool -> Bool
  // Unary.
  Neg, Exp, Log, Sqrt, Abs,
};
const char* op_name(Op op);  // "add", "max", "exp", ...

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  ScalarType type = ScalarType::Int;
  int64_t ival = 0;
  double fval = 0;
  std::string name;   // Var
  int buffer = -1;    // Load: index into PrimFunc::buffers
  Op op = Op::Add;    // Binary / Unary
  std::vector<ExprPtr> args;

  Expr(ExprKind k, ScalarType t) : kind(k), type(t) {}
};

// Builders. They fold nothing; simplify() does that.
ExprPtr int_imm(int64_t v);
ExprPtr float_imm(double v);
ExprPtr var(const std::string& name);
ExprPtr load(int buffer, std::vector<ExprPtr> indices);
ExprPtr binary(Op op, ExprPtr a, ExprPtr b);  // result type from op and operand types
ExprPtr unary(Op op, ExprPtr a);
ExprPtr select(ExprPtr cond, ExprPtr a, ExprPtr b);
ExprPtr fma(ExprPtr a, ExprPtr b, ExprPtr c);  // a * b + c, F32
ExprPtr clone(const Expr& e);
// Replaces every Var named `name` by a copy of `with` (returns a new tree).
ExprPtr substitute(const Expr& e, const std::string& name, const Expr& with);
// Constant folding and the index identities schedules produce (x*1, x+0, 0*x, (a*c+b)/c
// with 0 <= b < c known from loop extents is left alone: kept simple and always exact).
ExprPtr simplify(const Expr& e);
bool uses_var(const Expr& e, const std::string& name);
// Block iteration variables replaced by their bindings (then simplified): what every backend
// that has no notion of blocks (C, OpenCL) does to a block's statements.
struct Stmt;  // declared here: an elaborated `struct Stmt` would find lang's descent::Stmt
              // wherever lang/ast.h is included first
ExprPtr inline_bindings(const Expr& e, const Stmt& block);
bool equal(const Expr& a, const Expr& b);  // structural

// ---- Statements ----------------------------------------------------------------------

enum class ForKind : uint8_t {
  Serial,
  Parallel,    // iterations run on a thread pool (CPU) — no reduce axis may depend on it
  Vectorized,  // one SIMD instruction per iteration group (CPU: vector types; OpenCL: floatN)
  Unrolled,    // the body repeated extent times
  Bound,       // an OpenCL work-group or work-item index (thread_tag)
};
const char* for_kind_name(ForKind k);  // "serial", "parallel", "vectorized", "unrolled", "bound"

enum class IterKind : uint8_t { Spatial, Reduce };

struct IterVar {
  std::string name;   // the block's own variable: "vi"
  int64_t extent = 0; // its domain [0, extent)
  IterKind kind = IterKind::Spatial;
  ExprPtr binding;    // its value in terms of the enclosing loop variables: "i", "i_0*32+i_1"
};

enum class StmtKind : uint8_t {
  For,       // for var in 0..extent: body
  Block,     // a compute block (see the header comment)
  Store,     // buffer[indices] = value
  Seq,       // stmts in order
  If,        // if cond: body  (predicates from splits whose factor does not divide)
  Allocate,  // buffer (by index) is live within body; Local/Shared staging buffers
  Barrier,   // OpenCL work-group barrier (inserted with Shared buffers under bound loops)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;

  // For
  std::string var;
  int64_t extent = 0;
  ForKind for_kind = ForKind::Serial;
  std::string thread_tag;  // Bound: "group.x|y|z" (get_group_id) or "local.x|y|z" (get_local_id)
  int unroll_factor = 0;   // unused (Unrolled unrolls fully); kept for future partial unroll
  std::string intrinsic;   // the tensor intrinsic whose implementation this tile now is
                           // (tensorize; printed as a comment), "" otherwise

  // Block
  std::string name;
  std::vector<IterVar> iters;
  StmtPtr init;          // may be null; runs when every Reduce iter's binding is 0
  ExprPtr predicate;     // Block/If: may be null for Block (always true)

  // Store
  int buffer = -1;       // Store and Allocate
  std::vector<ExprPtr> indices;
  ExprPtr value;

  // For / Block / If / Allocate
  StmtPtr body;
  // Seq
  std::vector<StmtPtr> stmts;

  explicit Stmt(StmtKind k) : kind(k) {}
};

StmtPtr make_for(const std::string& var, int64_t extent, StmtPtr body,
                 ForKind kind = ForKind::Serial);
StmtPtr make_store(int buffer, std::vector<ExprPtr> indices, ExprPtr value);
StmtPtr make_seq(std::vector<StmtPtr> stmts);
StmtPtr make_if(ExprPtr cond, StmtPtr body);
StmtPtr clone(const Stmt& s);
// The same for every expression of a statement tree, in place.
void inline_bindings(Stmt* s, const Stmt& block);

// ---- Functions -----------------------------------------------------------------------

struct PrimFunc {
  std::string name;
  std::vector<Buffer> buffers;  // inputs first (in parameter order), then the rest
  std::vector<int> params;      // buffer indices of the inputs, in call order
  int output = -1;              // buffer index of the returned buffer
  StmtPtr body;

  PrimFunc() = default;
  PrimFunc(const PrimFunc& other);             // deep copy (schedules keep history)
  PrimFunc& operator=(const PrimFunc& other);
  PrimFunc(PrimFunc&&) = default;
  PrimFunc& operator=(PrimFunc&&) = default;

  int find_buffer(const std::string& name) const;  // -1 if absent
};

// Visiting helpers for passes and backends.
// Every Block in program order, with the loops that enclose it (outermost first).
struct BlockSite {
  Stmt* block;
  std::vector<Stmt*> loops;
};
std::vector<BlockSite> blocks(PrimFunc& f);
Stmt* find_block(PrimFunc& f, const std::string& name);  // null if absent

// Structural checks every transformed function must pass (each schedule primitive runs it
// on its result in debug and test builds): names unique along every path, every Var bound,
// every Load/Store in range of its buffer's rank, iteration bindings within their extents
// for the loop domains (checked by interval arithmetic). False with *error describing the
// first violation.
bool verify(const PrimFunc& f, std::string* error);

// ---- Printers ------------------------------------------------------------------------

// TVMScript-like text, the form the MLC course uses:
//   @T.prim_func
//   def mm_relu(A: T.Buffer((128, 128), "float32"), ...):
//       Y = T.alloc_buffer((128, 128), "float32")
//       for i, j, k in T.grid(128, 128, 128):
//           with T.block("Y"):
//               vi, vj, vk = T.axis.remap("SSR", [i, j, k])
//               with T.init():
//                   Y[vi, vj] = T.float32(0)
//               Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
// Perfectly nested serial loops print as one T.grid; other kinds as T.parallel,
// T.vectorized, T.unroll, T.thread_binding(n, thread="group.x").
std::string print_script(const PrimFunc& f);
// The equivalent C loop nest (blocks become plain statements with their bindings
// substituted; init becomes `if (k == 0)` or is hoisted when decomposed; pragmas mark
// parallel/vectorized/unrolled loops). Valid C99 that compiles as a function
// `void NAME(const float* restrict A, ..., float* restrict OUT)`. Printed by the C-style
// printer (tensor/c_printer.h), whose OpenCL subclass is gpu's generator.
std::string print_c(const PrimFunc& f);
std::string print_expr(const PrimFunc& f, const Expr& e);  // in script syntax

// ---- Reference interpreter -----------------------------------------------------------

// The oracle for tensor code: executes the loop nest directly, in f32, exactly as the IR
// says (loop kinds are ignored: parallel/vectorized/bound loops run serially, in order).
// args: one tensor per PrimFunc::params entry, shapes already checked by the caller;
// *out is resized to the output buffer's shape. Fails (with *error) only on a malformed
// function (an out-of-range access is reported with the buffer, the index and the block,
// never performed). `interrupt` (may be null) stops a long run with "interrupted".
bool interpret(const PrimFunc& f, const std::vector<const tensor::Tensor*>& args,
               tensor::Tensor* out, std::string* error,
               const std::atomic<bool>* interrupt = nullptr);

}  // namespace descent::tir
