// The Session's side of the LLVM plugin (api.h): the same calls as llvm_backend/'s, each of
// which opens libdescent_llvm.so the first time one is made. When it cannot be opened (moved,
// deleted, built without), each call fails with a message saying so and what needs it; the
// rest of Descent works on.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "plugins/llvm_api.h"

namespace descent::llvm_plugin {

// The table, opening the plugin on the first call; null with *error (when given) saying why.
const Api* api(std::string* error = nullptr);
// Whether the plugin has been opened in this process (start-up tests: a scalar run must not).
bool opened();
// Where it is looked for: $DESCENT_LLVM_PLUGIN, else the path the build put it at, else
// beside the running executable.
std::string plugin_path();

// Never null: without the plugin, an engine whose every run fails with the reason.
std::unique_ptr<llvmbe::JitEngine> make_jit_engine(int opt_level);
std::vector<std::string> supported_targets();  // empty without the plugin
std::string resolve_target(const std::string& name, std::string* error);
bool build_object(const Program& program, const Module& module, const std::string& target,
                  int opt_level, const std::string& path, std::string* error);
std::vector<llvmbe::PassSnapshot> dump_passes(const CodeScope& scope, const Module& module,
                                              int opt_level, std::string* error = nullptr);
std::string format_pass_list(const std::vector<llvmbe::PassSnapshot>& snaps);
std::string diff_snapshots(const std::string& a, const std::string& b, const std::string& a_label,
                           const std::string& b_label);
llvmbe::Listing ir_code(const CodeScope& scope, const Module& module, int opt_level,
                        bool optimized, std::string* error);
llvmbe::Listing machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                             int opt_level, llvmbe::MachineView view,
                             const llvmbe::AsmOptions& options, std::string* error);
// "cpu" in the tensor backends' registry: a stand-in that opens the plugin when the device is
// first opened or used, then forwards to the real backend.
std::unique_ptr<tensor::Backend> make_lazy_cpu_backend();

}  // namespace descent::llvm_plugin
