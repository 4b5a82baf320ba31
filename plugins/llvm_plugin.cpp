// libdescent_llvm.so's entry: the table of api.h, filled with llvm_backend/'s and cpu/'s
// functions. Everything else in this shared object is hidden (plugins/CMakeLists.txt).
#include "cpu/cpu.h"
#include "llvm_backend/target.h"
#include "plugins/llvm_api.h"

namespace descent::llvm_plugin {
namespace {

const Api kApi = {
    kApiVersion,
    [](int opt_level) { return llvmbe::make_jit_engine(opt_level); },
    [] { return llvmbe::supported_targets(); },
    [](const std::string& name, std::string* error) { return llvmbe::resolve_target(name, error); },
    [](const Program& program, const Module& module, const std::string& target, int opt_level,
       const std::string& path, std::string* error) {
      return llvmbe::build_object(program, module, target, opt_level, path, error);
    },
    [](const CodeScope& scope, const Module& module, int opt_level, std::string* error) {
      return llvmbe::dump_passes(scope, module, opt_level, error);
    },
    [](const std::vector<llvmbe::PassSnapshot>& snaps) { return llvmbe::format_pass_list(snaps); },
    [](const std::string& a, const std::string& b, const std::string& a_label,
       const std::string& b_label) { return llvmbe::diff_snapshots(a, b, a_label, b_label); },
    [](const CodeScope& scope, const Module& module, int opt_level, bool optimized,
       std::string* error) { return llvmbe::ir_code(scope, module, opt_level, optimized, error); },
    [](const CodeScope& scope, const Module& module, const std::string& target, int opt_level,
       llvmbe::MachineView view, const llvmbe::AsmOptions& options, std::string* error) {
      return llvmbe::machine_code(scope, module, target, opt_level, view, options, error);
    },
    [] { return cpu::make_cpu_backend(); },
};

}  // namespace
}  // namespace descent::llvm_plugin

extern "C" __attribute__((visibility("default"))) const descent::llvm_plugin::Api* descent_llvm_plugin() {
  return &descent::llvm_plugin::kApi;
}
