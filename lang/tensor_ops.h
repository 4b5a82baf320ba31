// Tensor operations of ordinary code, shared by the engines that compile it (the stack and
// register VMs): each takes the operand values an engine has already evaluated, left to
// right, calls the TensorRuntime, and on failure says what went wrong and where, with the
// walker's messages and locations. The checks themselves (declared shapes, indices, dims)
// are lang/tensor_checks.h's, which the walker and the JIT's helpers use too.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lang/ast.h"
#include "lang/engine.h"
#include "lang/module.h"
#include "lang/tensor_api.h"
#include "lang/value.h"

namespace descent {

struct TensorFailure {
  SourceLoc loc;
  std::string message;
};

// Named dims a call bound (fn f(x: f32[n, 4]) -> f32[n, 2]), for the result's check.
using DimBindings = std::vector<std::pair<std::string, int64_t>>;

// Whether e is an expression of scalar code that tensor_expr runs: a shape literal, t[i, j]
// or s[i], t.shape, a kernel call, or a tensor builtin (zeros ones rand arange load save
// sum_all).
bool is_tensor_expr(const Expr& e);
// How many values tensor_expr takes for e: its kids, except the file names of load and
// save; t[i, j] takes the variable's value first, then the indices.
size_t tensor_operand_count(const Expr& e);

// Runs e on its evaluated operands `in`; *out is its value (a handle, a float element, an
// int dimension; nothing for save). rt null: "tensor code needs a tensor runtime".
bool tensor_expr(TensorRuntime* rt, const Module& m, const Expr& e, const Value* in, Value* out,
                 TensorFailure* fail);

// One dimension of a shape literal (dim is its expression): at least 1. tensor_expr checks
// every dimension of a literal too; an engine calls this first only when a later dimension
// could fail, so that the first failure wins as in the walker.
bool check_shape_dim(const Expr& dim, int64_t d, TensorFailure* fail);

// A value as print and the REPL echo show it (loc: where a failure to evaluate points).
bool show_value(TensorRuntime* rt, Value v, Type t, SourceLoc loc, std::string* out,
                TensorFailure* fail);

// fn f(x: f32[1, 784]): the arguments of `call` (already evaluated) against fn's declared
// tensor parameter shapes; *bound receives the named dims they bind.
bool check_tensor_args(TensorRuntime* rt, const Expr& call, const FnDecl& fn, const Value* args,
                       DimBindings* bound, TensorFailure* fail);
// fn f(...) -> f32[1, 3]: the tensor f returns (written at ret_loc) against its declared shape.
bool check_tensor_result(TensorRuntime* rt, const FnDecl& fn, Value ret, SourceLoc ret_loc,
                         DimBindings bound, TensorFailure* fail);
// Whether calls to fn need check_tensor_args (a tensor parameter or a declared tensor result).
bool has_tensor_signature(const FnDecl& fn);

// The defined tensor-typed globals: roots of every collection.
void global_tensor_roots(const Module& m, const GlobalStore& g, std::vector<int64_t>* roots);

}  // namespace descent

namespace descent {

// One tensor operation of compiled code, in a table beside the code (both VMs): the
// instruction names its entry, so the ISA needs one tensor instruction, not one per builtin.
enum class TensorStep : uint8_t {
  Expr,    // tensor_expr(expr) on the `operands` values before it; its value replaces them
  Dim,     // check_shape_dim(expr) on the value just computed (a shape literal's dimension)
  Args,    // check_tensor_args(expr, functions[fn]) on the `operands` arguments of a call
  Result,  // check_tensor_result(functions[fn]) on the value `return expr` hands back
};
struct TensorSite {
  TensorStep step = TensorStep::Expr;
  const Expr* expr = nullptr;  // owned by the Program the compiled code came from
  int32_t fn = -1;             // Args, Result: the function's index in the Module
  uint32_t operands = 0;       // values it reads
  bool has_value = false;      // Expr: whether it produces one (save does not)
};
// How a listing shows a site: "kernel linear 2", "zeros", "shape 2", "index t 2",
// "check args mlp 1".
std::string tensor_site_text(const TensorSite& s, const Module* m);

}  // namespace descent
