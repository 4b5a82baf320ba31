// The abstract syntax tree: plain structs, one per kind of node.
//
// The parser fills in the syntax (kinds, names, children, locations). Semantic analysis
// (sema.h) then annotates the same nodes in place: every expression gets its type, every
// name its storage (local slot or global index), every call its callee, and an int that is
// silently used as a float gets an explicit Promote node wrapped around it. So every engine
// downstream sees the conversions spelled out and never decides types on its own.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/source.h"

namespace descent {

// Static types. Void is the "type" of a call to a function that returns nothing; Str only
// ever appears as a print argument or a file name (load/save). Tensor and Shape belong to the
// tensor layer (LANGUAGE.md): a Tensor value is a handle into the session's TensorRuntime
// (lang/tensor_api.h), a Shape value (`t.shape`, `[1, 3072]`) is a handle too.
enum class Type : uint8_t { Unknown, Void, Int, Float, Bool, Str, Tensor, Shape };
const char* type_name(Type t);

enum class UnaryOp : uint8_t { Neg, Not };
enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, Mod,   // arithmetic on two ints or two floats
  Eq, Ne, Lt, Le, Gt, Ge,    // comparisons, result bool
  And, Or,                   // short-circuit logic on bools
};
const char* op_symbol(UnaryOp op);   // "-", "!"
const char* op_symbol(BinaryOp op);  // "+", "&&", ...
const char* op_name(UnaryOp op);     // "neg", "not" (s-expressions, bytecode comments)
const char* op_name(BinaryOp op);    // "add", "and", ...
// == != < <= > >=: in a kernel, a comparison is an f32 mask (1.0 where it holds, else 0.0).
inline bool is_kernel_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

// Functions every program can call without declaring them.
enum class Builtin : uint8_t {
  None, Print, Sqrt, Exp, Log, Sin, Cos, Abs, Min, Max, Floor, ToFloat, ToInt,
  // Tensor layer: creation, file I/O, the host operations a classifier needs (computed on
  // the host, not kernels: docs/tensor.md) and reductions to a scalar. SumAll stays the last:
  // loops over every builtin end there.
  Zeros, Ones, Rand, Arange, Load, Save, Argmax, Reshape, Flatten, Rows, Eq, Mean,
  // Training (docs/training.md): grad(loss, x) and param(t), host operations too.
  Grad, Param,
  Full,  // full(shape, value): a tensor of one value (a learning rate as a [1] tensor)
  SumAll,
};
const char* builtin_name(Builtin b);
const std::vector<std::string>& builtin_names();  // every builtin's name, for "did you mean"
Builtin builtin_by_name(std::string_view name);  // None if it is not a builtin

// Where a variable lives once sema has resolved it.
enum class Storage : uint8_t { Unresolved, Local, Global };

enum class ExprKind : uint8_t {
  IntLit,    // int_value
  FloatLit,  // float_value
  BoolLit,   // bool_value
  StrLit,    // text (escapes already decoded); only as a print argument
  Var,       // name -> storage/slot
  Unary,     // unary_op kids[0]
  Binary,    // binary_op kids[0] kids[1]; And/Or evaluate kids[1] only when needed
  Call,      // name(kids...) -> builtin or function index
  Promote,   // int kids[0] used as a float (inserted by sema, never written by the user)
  // Tensor layer:
  List,      // [kids...]: a shape literal of ints, e.g. rand([1, 3072], 1)
  Index,     // text[kids...]: scalar code: one element of a tensor variable (float);
             // kernel bodies: a buffer access A[i, k] whose kids are index expressions
  Field,     // kids[0].text: only `.shape` exists
  Reduce,    // kernel bodies only: text ("sum"|"max"|"min") over axes, of kids[0]
  Axis,      // kernel bodies only: an index variable (spatial or reduce axis) named text
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourceLoc loc;            // operator for Unary/Binary, name for Var/Call, else the literal
  Type type = Type::Unknown;  // result type, set by sema
  uint32_t height = 1;        // 1 + the tallest child: bounds recursion in every tree walk

  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string text;  // Var/Call: the name; StrLit: the decoded string
  UnaryOp unary_op = UnaryOp::Neg;
  BinaryOp binary_op = BinaryOp::Add;
  std::vector<ExprPtr> kids;

  // Filled in by sema:
  Type operand_type = Type::Unknown;  // Binary: the type both operands have after promotion
  Storage storage = Storage::Unresolved;  // Var
  int32_t slot = -1;              // Var: local slot or global index; Call: function index
  bool check_defined = false;     // Var: a global read that must be checked at run time
  bool dim_value = false;         // Axis in a kernel body: not an axis but a named dim of the
                                  // kernel's types, read as its size (`x[i, j] / d`)
  Builtin builtin = Builtin::None;  // Call: which builtin, or None for a user function
  int32_t kernel = -1;            // Call: the kernel index in the Module, when it calls one
  std::vector<std::string> axes;  // Reduce: the reduce axes, e.g. sum(r, s) -> {"r", "s"}

  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
  // A flat 100,000-term sum is a tree that deep: it is freed with a work list, since
  // recursion would overflow the stack of whichever thread drops it (ast.cpp).
  ~Expr();
  Expr(Expr&&) = default;
  Expr& operator=(Expr&&) = default;
};

enum class StmtKind : uint8_t {
  Expr,      // expr
  Assign,    // name op= value (assign_op None for plain '=')
  If,        // if cond { body } else { else_body }  ("else if" is an else_body of one If)
  While,     // while cond { body }
  For,       // for name in lo..hi { body }
  Break,
  Continue,
  Return,    // return [value]
  FnDecl,    // fn: a function declaration (top level only)
  KernelDecl,  // kernel: a tensor function in index notation (top level only)
};

struct FnDecl;
struct KernelDecl;
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  SourceLoc loc;  // the keyword, or the assigned name
  ExprPtr expr;   // Expr: the expression; Assign/Return: value (may be null for Return);
                  // If/While: condition; For: lower bound
  ExprPtr expr2;  // For: upper bound
  std::string name;  // Assign/For: the variable
  SourceLoc op_loc;  // Assign: the '=' or 'op=' token (compound division errors point here)
  bool has_op = false;                // Assign: compound (+= ...) rather than plain '='
  BinaryOp assign_op = BinaryOp::Add;  // Assign with has_op: the operator
  Block body;       // If/While/For
  Block else_body;  // If
  bool has_else = false;
  std::unique_ptr<FnDecl> fn;  // FnDecl
  std::unique_ptr<KernelDecl> kernel;  // KernelDecl

  // Filled in by sema:
  Storage storage = Storage::Unresolved;  // Assign/For: where the variable lives
  int32_t slot = -1;
  Type var_type = Type::Unknown;  // Assign/For: the variable's type
  int32_t fn_index = -1;          // Return: the enclosing function

  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

// One dimension of a tensor type: a number (f32[128]) or a name bound when the kernel is
// called (f32[n]).
struct Dim {
  int64_t value = -1;  // >= 1 when concrete
  std::string name;    // non-empty when named
  SourceLoc loc;
};

// A tensor type as written: f32[1, 784]. Element type f32 (i32 is parsed and rejected by
// sema with "i32 tensors are not supported yet" until the tensor layer has them).
struct TensorType {
  std::string elem = "f32";
  std::vector<Dim> dims;
  SourceLoc loc;
};

struct Param {
  std::string name;
  SourceLoc loc;
  Type type = Type::Int;  // "n" alone means "n: int"; Tensor when written "x: f32[...]"
  SourceLoc type_loc;
  TensorType tensor;      // when type == Tensor: the declared shape (checked at call time)
};

// One statement of a kernel: target[indices] = value. The indices are the stage's spatial
// axes; Reduce nodes inside value introduce its reduce axes.
struct KernelStage {
  std::string target;
  SourceLoc loc;  // the target name
  std::vector<std::string> indices;
  std::vector<SourceLoc> index_locs;
  ExprPtr value;  // Axis, Index, FloatLit/IntLit, Unary, Binary (+ - * /), Call (max min exp
                  // log sqrt abs with Builtin set), Reduce
};

// kernel name(params) -> f32[dims] { stages...; return target }
struct KernelDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;  // all of type Tensor
  bool has_return_type = false;
  TensorType return_type;
  std::vector<KernelStage> stages;
  std::string result;  // the buffer named by `return`
  SourceLoc result_loc;
  int32_t index = -1;  // position in the Module's kernel table (set by sema)
};

struct FnDecl {
  std::string name;
  SourceLoc loc;  // the name
  std::vector<Param> params;
  Type declared_return = Type::Unknown;  // Unknown when no "-> T" is written
  SourceLoc return_loc;
  TensorType return_tensor;  // when declared_return == Tensor
  Block body;

  // Filled in by sema:
  int32_t index = -1;  // position in the Module's function table
  Type return_type = Type::Unknown;
  bool uses_tensors = false;  // it, or a function it calls, touches tensors
  std::vector<std::string> local_names;  // params first, then every other local
  std::vector<Type> local_types;
};

// One compiled input: a file, or one REPL entry.
struct Program {
  std::shared_ptr<const SourceFile> source;
  Block body;  // top-level statements, including FnDecl statements, in source order
  // Set by sema: the top-level code, or a function it calls, touches tensors. Only the ast
  // engine runs tensor code; the Session runs such inputs there and says so.
  bool uses_tensors = false;
};

}  // namespace descent
