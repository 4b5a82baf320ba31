// Codegen: the checked AST -> LLVM IR, with LANGUAGE.md's semantics spelled out in the IR.
//
//   x = 15                 @ds.x = global i64 0 (+ @ds.x.defined), top-level code in descent_main
//   fn fib(n: int) -> int  define i64 @ds.fib(i64 %n, i32 %depth)
//   n - 1                  sub i64 %n1, 1           (wrapping: never nsw/nuw)
//   a / b                  icmp eq %b, 0 -> descent_rt_error(division by zero, line, col);
//                          INT_MIN / -1 handled by a select, so sdiv never traps
//   int(f)                 range check, then fptosi
//   fib(n - 1)             %depth >= descent_rt_call_limit (10,000) -> the runtime's call check
//                          (stack overflow; interrupts); then call with %depth + 1
//   while / for            a poll of descent_rt_poll on the back-edge (interrupt, step limit)
//   print(a, "s", b)       every argument evaluated first, then descent_rt_print_* calls
//   relu(x), t[i, j]       tensor code: calls to the runtime's helpers (codegen_tensor.cpp)
//
// Names: Descent functions and globals get a "ds." prefix (so `fn printf` or a global
// `stdout` can never collide with C's); locals are allocas named after the variable (%sum),
// parameters keep their names (%n, stored in %n.addr), every read of a variable is named after
// it, and every value assigned to `sum` is named %sum.next. After SROA the loop phis read
// %sum.0 = phi [0, %entry], [%sum.next, %for.next].
//
// The runtime the IR calls is described in llvm_backend/runtime.h.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lang/module.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace descent::llvmbe {

// An LLVM module with the context it lives in (the module is destroyed first).
struct IRModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  IRModule();
  ~IRModule();
  IRModule(IRModule&&) noexcept;
  IRModule& operator=(IRModule&&) noexcept;
  explicit operator bool() const { return module != nullptr; }
};

struct IRGenOptions {
  // false (the REPL/dump view): this input's top-level code and the functions it declares;
  //   functions of earlier inputs are declared; globals are `external` (the JIT binds them).
  // true (`descent build`): a whole program for an object file: every function it can reach,
  //   globals defined here, the runtime defined in IR over libc, and C's `int main()`.
  bool standalone = false;
  bool echo = false;                   // REPL: print each top-level expression's value
  std::string entry = "descent_main";  // the name of the function holding top-level code
  std::string triple;                  // target triple and its data layout; "" = this host
  bool debug_info = false;             // line tables: see UnitSpec::debug_info
};

// Lowers one checked Program. Empty IRModule (and *error set) only on an internal error
// (the verifier rejected what codegen produced): a checked program always lowers.
IRModule generate_ir(const Program& program, const Module& module, const IRGenOptions& options,
                     std::string* error);
// The view of a scope (not standalone): its script's top-level code as `descent_main` (none
// without a script; echo as the scope says) and its functions; the rest is declared.
IRModule generate_ir(const CodeScope& scope, const Module& module, const std::string& triple,
                     std::string* error, bool debug_info = false);

// ---- what the JIT uses (generate_ir is this with the choices above) ----

// Exactly what one unit contains.
struct UnitSpec {
  std::string entry = "descent_main";       // top-level code's function ("": none)
  std::vector<int> define;                  // Module function indices to define here
  std::function<std::string(int)> symbol;   // the LLVM name of function i (defined or declared)
  bool define_globals = false;              // globals defined (internal) here or external
  bool runtime = false;                     // define the runtime and main() (standalone)
  bool external_functions = true;           // defined functions visible outside the unit
  bool echo = false;
  std::string triple;  // "" = this host
  // Line tables (DWARF "line tables only"): a compile unit, a DISubprogram per function and a
  // DILocation (line, col of the statement or expression) on every instruction, so the IR
  // has !dbg and the assembly .loc lines: what maps a view's lines to source lines
  // (listing.h). Off for the JIT and objects, which need no such map.
  bool debug_info = false;
  // How the code names the input a location is in (runtime.h). Views and objects number
  // inputs by their Program's position in the Module (the program being compiled, when the
  // Module lacks it, is programs.size()): the same program always gives the same IR. The JIT
  // uses the SourceFile's serial instead, which stays true when the Module frees an earlier
  // input while the JIT's code for a later one is still in use.
  bool input_serials = false;
  // Tiered code (the JIT's first tier, docs/llvm.md "Tiers"): a call to a function for which
  // this says true loads the callee's address from the pointer `SYMBOL.slot` (the JIT's, where
  // it publishes faster code when it is ready) and calls that, instead of SYMBOL itself.
  // Null: every call is direct.
  std::function<bool(int)> through_slot;
};
IRModule generate_unit(const Program& program, const Module& module, const UnitSpec& spec,
                       std::string* error);

// The user functions a block calls directly (Module indices, each once, in first-call order).
std::vector<int> called_functions(const Block& block);
// The LLVM names of Descent's functions and globals: "ds.fib", "ds.x", "ds.x.defined".
std::string function_symbol(const std::string& name);
std::string global_symbol(const std::string& name);
std::string defined_symbol(const std::string& name);
// Registers the targets Descent compiles for (host.h, initialize_descent_targets: once per
// process, this machine's own through initialize_native_target): what IR generation for
// another machine's triple needs.
void initialize_all_targets();
// The pointer a tiered call loads its callee's address from ("ds.fib.slot").
std::string slot_symbol(const std::string& function_symbol);

}  // namespace descent::llvmbe
