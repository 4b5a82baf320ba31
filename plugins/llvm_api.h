// The LLVM half of Descent as a plugin, opened on first use (issue 34: start-up).
//
// libLLVM-15 is the heaviest thing a process of ours can load: 400,000 relocations and
// thousands of static constructors, 20-30 ms before main() even starts, in every run. Yet a
// scalar program on the ast, stack, reg or native engine never touches it. So the code that
// does (llvm_backend/: the JIT and the IR and machine-code views; cpu/: the CPU tensor
// backend) is linked into a shared object of its own, libdescent_llvm.so, which the Session
// opens with dlopen the first time something asks for LLVM: `--engine jit`, `:llvm`, `:asm`,
// a tensor program on the cpu device. Python's `import` of a heavy module works the same way.
//
// The seam is this table of functions: the plugin fills it in (llvm_plugin.cpp, the one symbol it
// exports) and llvm_lazy.cpp, linked into the Session, forwards each call through it. The table's
// types are Descent's own (lang/, tensor/ and llvm_backend/'s headers, none of which includes
// LLVM), so both sides agree on them by construction. The plugin carries its own hidden copy
// of the libraries it is built from; nothing with process-wide state crosses the seam
// (engines and backends are objects, called through their virtual functions).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lang/module.h"
#include "llvm_backend/jit.h"
#include "llvm_backend/listing.h"
#include "llvm_backend/passes.h"
#include "llvm_backend/views.h"
#include "tensor/backend.h"

namespace descent::llvm_plugin {

// Bumped whenever the table changes: a stale plugin beside a new binary is refused.
constexpr int kApiVersion = 1;

struct Api {
  int version = kApiVersion;
  std::unique_ptr<llvmbe::JitEngine> (*make_jit_engine)(int opt_level);
  std::vector<std::string> (*supported_targets)();
  std::string (*resolve_target)(const std::string& name, std::string* error);
  bool (*build_object)(const Program& program, const Module& module, const std::string& target,
                       int opt_level, const std::string& path, std::string* error);
  std::vector<llvmbe::PassSnapshot> (*dump_passes)(const CodeScope& scope, const Module& module,
                                                   int opt_level, std::string* error);
  std::string (*format_pass_list)(const std::vector<llvmbe::PassSnapshot>& snaps);
  std::string (*diff_snapshots)(const std::string& a, const std::string& b,
                                const std::string& a_label, const std::string& b_label);
  llvmbe::Listing (*ir_code)(const CodeScope& scope, const Module& module, int opt_level,
                             bool optimized, std::string* error);
  llvmbe::Listing (*machine_code)(const CodeScope& scope, const Module& module,
                                  const std::string& target, int opt_level,
                                  llvmbe::MachineView view, const llvmbe::AsmOptions& options,
                                  std::string* error);
  std::unique_ptr<tensor::Backend> (*make_cpu_backend)();
};

// The plugin's one exported symbol: extern "C" const Api* descent_llvm_plugin().
inline constexpr const char* kEntrySymbol = "descent_llvm_plugin";

}  // namespace descent::llvm_plugin
