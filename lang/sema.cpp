// Semantic analysis, the driver: check() runs one Checker over a Program.
//
// The order matters. Names are declared first (kernels, then functions, then globals), so
// that a call may name a function defined further down. Then the whole unit is checked
// quietly, again and again, until the inferred return types and global types stop changing
// (a function may return a global that is set from a call to it); a last pass reports the
// errors. Kernels are checked once at the end: their rules do not depend on that fixpoint.
//
// The rules themselves live next door, one concern per file (see sema_internal.h).
#include "lang/sema.h"

#include <algorithm>

#include "lang/sema_internal.h"

namespace descent::sema_internal {

bool Checker::run() {
  size_t before = diags_.size();
  declare_kernels();
  declare_functions();
  declare_globals();
  // Return types and global types may depend on each other (a function returns a
  // global, a global is set from a call), so check quietly until nothing new is learnt,
  // then once more reporting errors.
  int limit = static_cast<int>(new_functions_.size() + new_globals_.size()) * 2 + 4;
  quiet_ = true;
  for (int i = 0; i < limit; ++i) {
    std::vector<Type> before = environment();
    pass();
    if (environment() == before) break;
  }
  quiet_ = false;
  pass();
  for (auto& st : prog_.body)
    if (st->kind == StmtKind::KernelDecl)
      check_kernel(*st->kernel, [this](SourceLoc l, std::string m) { error(l, std::move(m)); });
  mark_tensor_users();
  for (int fi : new_functions_) {
    const FunctionInfo& f = m_.functions[fi];
    auto it = redefined_.find(fi);
    if (it != redefined_.end() && (it->second.params != f.params || it->second.ret != f.ret))
      error(f.decl->loc, "cannot redefine '" + f.name + "' with a different signature");
  }
  std::stable_sort(diags_.begin() + static_cast<long>(before), diags_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return a.loc.line != b.loc.line ? a.loc.line < b.loc.line
                                                     : a.loc.col < b.loc.col;
                   });
  return diags_.size() == before;
}

void Checker::error(SourceLoc loc, std::string msg) {
  if (quiet_) return;
  diags_.push_back(Diagnostic{Severity::Error, ErrorKind::Compile, loc, std::move(msg)});
}

// What one pass learns and the next one uses: inferred return types and the types of
// this input's globals. The quiet passes stop when it no longer changes.
std::vector<Type> Checker::environment() const {
  std::vector<Type> env;
  for (int fi : new_functions_) env.push_back(m_.functions[fi].ret);
  for (int gi : new_globals_) env.push_back(m_.globals[gi].type);
  return env;
}

void Checker::pass() {
  // A global's type comes from its first assignment, whose value may involve a return
  // type only guessed in an earlier pass: recompute it every pass rather than keep a guess.
  for (int gi : new_globals_) m_.globals[gi].type = Type::Unknown;
  global_first_seen_.assign(m_.globals.size(), 0);
  for (size_t i = 0; i < m_.globals.size(); ++i)
    global_first_seen_[i] = m_.globals[i].type != Type::Unknown;
  // Top level first, so function bodies see this pass's global types.
  // Flow tracks globals there; earlier inputs' globals count if they already ran.
  fn_ = nullptr;
  flow_ = Flow{};
  flow_.set.assign(m_.globals.size(), false);
  for (size_t i = 0; i < defined_.size() && i < flow_.set.size(); ++i) flow_.set[i] = defined_[i];
  loop_depth_ = 0;
  block(prog_.body);
  for (int fi : new_functions_) check_function(fi);
}

}  // namespace descent::sema_internal

namespace descent {

bool check(Program& program, Module& module, const std::vector<uint8_t>& defined,
           std::vector<Diagnostic>& diags, const KernelShapeCheck& kernel_shapes) {
  Module saved_globals_functions;
  saved_globals_functions.globals = module.globals;
  saved_globals_functions.global_index = module.global_index;
  saved_globals_functions.functions = module.functions;
  saved_globals_functions.function_index = module.function_index;
  saved_globals_functions.kernels = module.kernels;
  saved_globals_functions.kernel_index = module.kernel_index;
  sema_internal::Checker c(program, module, defined, diags);
  bool ok = c.run();
  for (const auto& s : program.body) {
    if (!ok || !kernel_shapes || s->kind != StmtKind::KernelDecl) continue;
    Diagnostic d;
    if (kernel_shapes(*s->kernel, &d)) continue;
    d.severity = Severity::Error;
    d.kind = ErrorKind::Compile;
    diags.push_back(std::move(d));
    ok = false;
  }
  if (ok) return true;
  module.globals = std::move(saved_globals_functions.globals);
  module.global_index = std::move(saved_globals_functions.global_index);
  module.functions = std::move(saved_globals_functions.functions);
  module.function_index = std::move(saved_globals_functions.function_index);
  module.kernels = std::move(saved_globals_functions.kernels);
  module.kernel_index = std::move(saved_globals_functions.kernel_index);
  return false;
}

}  // namespace descent
