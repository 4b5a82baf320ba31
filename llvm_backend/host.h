// This machine as an LLVM target, set up once for the three places that compile for it: the
// scalar JIT (jit.cpp), the tensor CPU kernels (cpu/cpu.cpp) and the machine-code views
// (target.cpp, which shares the -O level table and the diagnostics sink).
//
//   std::string err;
//   auto tm = make_host_target_machine(2, &err);            // IR passes' cost model
//   HostJitOptions o;
//   o.opt_level = 2;
//   o.symbols = {{"descent_alloc", reinterpret_cast<const void*>(&descent_alloc)}};
//   auto jit = make_host_jit(o, &err);                      // then addIRModule, lookup
//
// The host is detected once per process (JITTargetMachineBuilder::detectHost: this CPU's
// name and features), with position-independent code and the small code model: JIT code
// reaches the runtime and libm (anywhere in the address space) through the GOT.
// Errors are values: null / false, and *error set to LLVM's message (callers add a prefix).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

namespace llvm {
class DiagnosticInfo;
class LLVMContext;
}  // namespace llvm

namespace descent::llvmbe {

// The native target and its assembly printer, registered once per process.
void initialize_native_target();

// The four targets Descent compiles for (x86-64, AArch64, RISC-V, WebAssembly) with their
// assembly printers, and the code generator's pass registry, once per process; this
// machine's own target through initialize_native_target, never registered twice. LLVM's
// registration functions write the target's entries unconditionally, so a target registered
// again while another thread compiles for it would be a data race: every registration in
// Descent goes through these two functions, each with its own once.
void initialize_descent_targets();

// -O level 0..3 (clamped) -> the code generator's level (None, Less, Default, Aggressive).
llvm::CodeGenOpt::Level codegen_level(int opt_level);

// An llvm::Error as its message (the error is consumed).
std::string error_text(llvm::Error e);

// The host's builder (PIC, small code model, this CPU and its features); null with *error
// when LLVM cannot target this machine. Copy it before changing it.
const llvm::orc::JITTargetMachineBuilder* host_machine_builder(std::string* error);

// The host as code generators see it.
struct HostCpu {
  std::string triple;       // "x86_64-unknown-linux-gnu"
  std::string cpu;          // "skylake-avx512"
  std::string features;     // "+sse2,+avx2,...,-avx512vl" (LLVM's feature string)
  std::string data_layout;  // of a host TargetMachine
};
bool describe_host(HostCpu* out, std::string* error);

// A TargetMachine for the host whose code generator runs at -O `opt_level` (0..3, clamped).
std::unique_ptr<llvm::TargetMachine> make_host_target_machine(int opt_level, std::string* error);

using SymbolAddresses = std::vector<std::pair<std::string, const void*>>;

struct HostJitOptions {
  int opt_level = 2;  // the level of LLJIT's own compiler (unused when `compiler` is set)
  // LLJIT's generic platform scans every module added for static constructors and
  // destructors (llvm.global_ctors) and links a helper module to run them. Code that has none
  // (Descent's units) can go without: the scan is work on every module added.
  bool static_initializers = true;
  // Makes LLJIT's IR -> object compiler instead (jit.cpp's follows a changing -O level).
  llvm::orc::LLJITBuilder::CompileFunctionCreator compiler;
  SymbolAddresses symbols;  // absolute symbols: functions the generated code calls
};

// An LLJIT for the host: symbols of the process (libm, libc) found on demand, and
// options.symbols defined at their addresses. Its data layout is the host's, computed once
// per process (LLJIT would otherwise make a TargetMachine of its own just to ask for it).
std::unique_ptr<llvm::orc::LLJIT> make_host_jit(const HostJitOptions& options, std::string* error);

// Defines each name as an absolute symbol at its address in `library` (null: the JIT's main
// library).
bool define_symbols(llvm::orc::LLJIT& jit, const SymbolAddresses& symbols, std::string* error,
                    llvm::orc::JITDylib* library = nullptr);

// Code generation errors (an operation a target cannot lower, ...) arrive through the
// context's diagnostic handler, whose default prints and exits. attach() collects them here
// instead (errors only, one per line); the sink must outlive the context's use.
struct DiagnosticSink {
  std::string errors;
  void attach(llvm::LLVMContext& context);
  static void handle(const llvm::DiagnosticInfo& info, void* sink);
};

}  // namespace descent::llvmbe
