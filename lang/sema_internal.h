// Private to the semantic checker (lang/sema*.cpp): nothing outside them includes this.
//
// check() (sema.h) is one Checker object walking a Program. Its methods are spread over
// files by concern, each a chapter of the language's static rules:
//   sema.cpp         the driver: declare, check quietly to a fixpoint, then report
//   sema_names.cpp   declarations, and where each name lives (global, local, callable)
//   sema_stmt.cpp    statements and definite assignment (Flow)
//   sema_expr.cpp    the type of every scalar expression, with int -> float promotion
//   sema_tensor.cpp  tensors and shapes in ordinary code; which code touches tensors
//   sema_kernel.cpp  the rules of index notation inside kernels (its own small checker)
#pragma once
#include <optional>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/module.h"

namespace descent::sema_internal {

inline bool is_numeric(Type t) { return t == Type::Int || t == Type::Float; }
inline bool is_tensor_type(Type t) { return t == Type::Tensor || t == Type::Shape; }
inline bool is_tensor_builtin(Builtin b) { return b >= Builtin::Zeros && b <= Builtin::SumAll; }

// The leftmost position of an expression, for messages about a whole expression.
inline SourceLoc expr_start(const Expr& e) {
  const Expr* p = &e;
  while ((p->kind == ExprKind::Binary || p->kind == ExprKind::Promote) && !p->kids.empty())
    p = p->kids[0].get();
  return p->loc;
}

inline std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Definite-assignment state: which variables surely hold a value here. Code after a
// return/break/continue is unreachable, and an unreachable state joins as "everything".
struct Flow {
  std::vector<bool> set;
  bool reachable = true;
};

inline Flow join(const Flow& a, const Flow& b) {
  if (!a.reachable) return b;
  if (!b.reachable) return a;
  Flow out = a;
  for (size_t i = 0; i < out.set.size(); ++i) out.set[i] = a.set[i] && b.set[i];
  return out;
}

// Checks one kernel's body (sema_kernel.cpp); errors go to `error`.
void check_kernel(KernelDecl& kernel, const std::function<void(SourceLoc, std::string)>& error);

class Checker {
 public:
  Checker(Program& p, Module& m, const std::vector<uint8_t>& defined, std::vector<Diagnostic>& d)
      : prog_(p), m_(m), defined_(defined), diags_(d) {}

  bool run();

 private:
  // sema.cpp: the driver
  void error(SourceLoc loc, std::string msg);
  std::vector<Type> environment() const;
  void pass();

  // sema_names.cpp: declarations and where names live
  bool is_function_name(const std::string& name) const;
  std::string callable_kind(const std::string& name) const;
  // " (did you mean 'print'?)" for a name close to a callable / a variable in scope, or "".
  std::string callable_guess(const std::string& name) const;
  std::string variable_guess(const std::string& name) const;
  void declare_kernels();
  void unbind_earlier_kernel(const std::string& name);
  void declare_functions();
  void declare_globals();
  void check_function(int fi);
  void add_local(const std::string& name, Type t);
  bool resolve_target(Stmt& s, SourceLoc loc);
  Type& var_type(const Stmt& s);
  void set_var_type(const Stmt& s, Type t);
  char& first_seen(const Stmt& s);
  Type variable(Expr& e);

  // sema_stmt.cpp: statements and definite assignment
  void block(Block& b);
  void stmt(Stmt& s);
  void body_of_loop(Block& b, bool discard);
  void condition(ExprPtr& e);
  void assign(Stmt& s);
  void ret(Stmt& s);

  // sema_expr.cpp: types of expressions
  void coerce(ExprPtr& e, Type want);
  Type value(ExprPtr& e);
  Type expr(ExprPtr& ep);
  Type binary(Expr& e);
  bool arity(Expr& e, size_t want);
  Type call(Expr& e);
  Type builtin(Expr& e);

  // sema_tensor.cpp: tensors in ordinary code
  bool touches(const Expr& e) const;
  bool touches(const Block& b) const;
  void mark_tensor_users();
  Type not_on_tensors(SourceLoc loc, const char* op, Type t);
  Type kernel_call(Expr& e, int ki);
  Type tensor_builtin(Expr& e);
  Type shape_literal(Expr& e);
  Type element(Expr& e);
  Type field(Expr& e);
  std::optional<std::vector<Dim>> static_shape(const Expr& e) const;
  void check_returned_shape(const Expr& value);

  Program& prog_;
  Module& m_;
  const std::vector<uint8_t>& defined_;
  std::vector<Diagnostic>& diags_;
  bool quiet_ = false;
  std::vector<int> new_functions_, new_globals_, new_kernels_;
  std::unordered_map<int, FunctionInfo> redefined_;

  FnDecl* fn_ = nullptr;  // the function being checked, or null at top level
  int fn_index_ = -1;
  std::unordered_map<std::string, int> locals_;
  std::vector<std::string> local_names_;
  std::vector<Type> local_types_;
  Flow flow_;
  std::vector<std::vector<Flow>> breaks_;  // per enclosing loop: the states at its breaks
  int loop_depth_ = 0;
  Type ret_seen_value_ = Type::Unknown;
  bool ret_any_value_ = false, ret_any_void_ = false;

  std::vector<char> local_first_seen_, global_first_seen_;
};

}  // namespace descent::sema_internal
