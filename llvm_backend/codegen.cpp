// AST -> LLVM IR, the entry points: generate_unit() lowers what a UnitSpec asks for,
// generate_ir() is it with the choices of the REPL view or of `descent build`.
//
// The lowering itself is one Lowering object per unit; its parts are listed in
// codegen_internal.h. What the IR looks like for each construct is in codegen.h.
#include "llvm_backend/codegen.h"
#include "llvm_backend/host.h"

#include <map>
#include <mutex>
#include <set>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm_backend/codegen_internal.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe {

IRModule::IRModule() = default;
IRModule::~IRModule() = default;
IRModule::IRModule(IRModule&&) noexcept = default;
IRModule& IRModule::operator=(IRModule&& other) noexcept {
  module.reset();  // before the context it lives in
  context = std::move(other.context);
  module = std::move(other.module);
  return *this;
}

std::string function_symbol(const std::string& name) { return "ds." + name; }
std::string global_symbol(const std::string& name) { return "ds." + name; }
std::string defined_symbol(const std::string& name) { return "ds." + name + ".defined"; }
std::string slot_symbol(const std::string& function_symbol) { return function_symbol + ".slot"; }

void initialize_all_targets() { initialize_descent_targets(); }

namespace codegen_internal {

namespace {

void collect_calls(const Expr& e, std::vector<int>& out, std::set<int>& seen) {
  if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.slot >= 0 &&
      seen.insert(e.slot).second)
    out.push_back(e.slot);
  for (const auto& k : e.kids) collect_calls(*k, out, seen);
}

}  // namespace

void collect_calls(const Block& b, std::vector<int>& out, std::set<int>& seen) {
  for (const auto& s : b) {
    if (s->kind == StmtKind::FnDecl) continue;
    if (s->expr) collect_calls(*s->expr, out, seen);
    if (s->expr2) collect_calls(*s->expr2, out, seen);
    collect_calls(s->body, out, seen);
    collect_calls(s->else_body, out, seen);
  }
}

}  // namespace codegen_internal

namespace {

// The data layout of `triple` ("" = this host), from a TargetMachine for it, made once per
// triple (a TargetMachine costs a tenth of a millisecond or more, and every JIT unit asks;
// the layout depends on the triple only). Thread-safe: the JIT's worker generates IR too.
bool set_target(llvm::Module& m, const std::string& triple, std::string* error) {
  // This machine's target alone for its own triple (what the JIT generates: a third of the
  // time of registering all of them, on its first unit's way); every target otherwise.
  if (triple.empty()) initialize_native_target();
  else initialize_all_targets();
  std::string t = triple.empty() ? llvm::sys::getProcessTriple() : triple;
  static std::mutex mu;
  static std::map<std::string, std::string> layouts;
  std::lock_guard<std::mutex> lock(mu);
  auto it = layouts.find(t);
  if (it == layouts.end()) {
    std::string err;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t, err);
    if (!target) {
      if (error) *error = "unknown target '" + t + "': " + err;
      return false;
    }
    std::unique_ptr<llvm::TargetMachine> tm(
        target->createTargetMachine(t, "generic", "", llvm::TargetOptions(), llvm::None));
    if (!tm) {
      if (error) *error = "no target machine for '" + t + "'";
      return false;
    }
    it = layouts.emplace(t, tm->createDataLayout().getStringRepresentation()).first;
  }
  m.setTargetTriple(t);
  m.setDataLayout(it->second);
  return true;
}

}  // namespace

std::vector<int> called_functions(const Block& block) {
  std::vector<int> out;
  std::set<int> seen;
  codegen_internal::collect_calls(block, out, seen);
  return out;
}

IRModule generate_unit(const Program& program, const Module& module, const UnitSpec& spec,
                       std::string* error) {
  // A standalone program has no tensor runtime to call: `descent build` compiles scalar
  // programs only (tensor code runs in the JIT, whose runtime has the TensorRuntime).
  bool tensors = program.uses_tensors;
  for (int f : spec.define) {
    const FnDecl* d = module.functions[static_cast<size_t>(f)].decl;
    tensors = tensors || (d && d->uses_tensors);
  }
  if (spec.runtime && tensors) {
    if (error)
      *error = "tensor code cannot be built into an object file (it needs the tensor "
               "runtime): run it with `descent run`";
    return IRModule{};
  }
  IRModule ir;
  ir.context = std::make_unique<llvm::LLVMContext>();
  std::string name = program.source ? program.source->name() : "descent";
  ir.module = std::make_unique<llvm::Module>(name, *ir.context);
  if (!set_target(*ir.module, spec.triple, error)) return IRModule{};
  codegen_internal::Lowering lower(program, module, spec, *ir.module);
  lower.run();
  if (spec.runtime) define_standalone_runtime(*ir.module, lower.sites, spec.entry);
  // Declarations after the definitions, as clang prints them.
  std::vector<llvm::Function*> decls;
  for (llvm::Function& f : *ir.module)
    if (f.isDeclaration()) decls.push_back(&f);
  for (llvm::Function* f : decls) {
    f->removeFromParent();
    ir.module->getFunctionList().push_back(f);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*ir.module, &os)) {
    if (error) *error = "internal error: codegen produced invalid IR: " + os.str();
    return IRModule{};
  }
  return ir;
}

IRModule generate_ir(const Program& program, const Module& module, const IRGenOptions& options,
                     std::string* error) {
  UnitSpec spec;
  spec.entry = options.entry;
  spec.echo = options.echo;
  spec.triple = options.triple;
  spec.debug_info = options.debug_info;
  // This input's functions, in source order.
  std::vector<int> define;
  std::set<int> seen;
  for (const auto& s : program.body)
    if (s->kind == StmtKind::FnDecl && s->fn->index >= 0 && seen.insert(s->fn->index).second)
      define.push_back(s->fn->index);
  if (options.standalone) {
    // ... and everything they and the top-level code can reach.
    std::vector<int> work = define;
    for (int f : called_functions(program.body)) work.push_back(f);
    for (size_t i = 0; i < work.size(); ++i) {
      int f = work[i];
      if (seen.insert(f).second) define.push_back(f);
      const FnDecl* d = module.functions[static_cast<size_t>(f)].decl;
      if (d)
        for (int g : called_functions(d->body))
          if (!seen.count(g)) work.push_back(g);
    }
    spec.define_globals = true;
    spec.runtime = true;
    spec.external_functions = false;
  }
  spec.define = define;
  return generate_unit(program, module, spec, error);
}

IRModule generate_ir(const CodeScope& scope, const Module& module, const std::string& triple,
                     std::string* error, bool debug_info) {
  static const Program no_script;  // a scope of functions alone has no top-level code
  UnitSpec spec;
  spec.entry = scope.script ? "descent_main" : "";
  spec.echo = scope.echo;
  spec.triple = triple;
  spec.debug_info = debug_info;
  std::set<int> seen;
  for (const FnDecl* fn : scope.functions)
    if (fn->index >= 0 && seen.insert(fn->index).second) spec.define.push_back(fn->index);
  return generate_unit(scope.script ? *scope.script : no_script, module, spec, error);
}

}  // namespace descent::llvmbe
