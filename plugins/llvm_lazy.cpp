// Opening libdescent_llvm.so on first use, and the calls that go through it (llvm_lazy.h).
#include "plugins/llvm_lazy.h"

#include <atomic>
#include <mutex>

#include "plugins/loader.h"

namespace descent::llvm_plugin {

namespace {

std::atomic<bool> g_opened{false};

struct Loaded {
  const Api* api = nullptr;
  std::string error;
};

const Loaded& loaded() {
  static const Loaded l = [] {  // once per process, thread-safe
    Loaded r;
    r.api = plugins::open_plugin<Api>(
        plugin_path(), kEntrySymbol, kApiVersion,
        "the jit engine, the cpu device and the LLVM and machine-code views need it", &r.error);
    g_opened = r.api != nullptr;
    return r;
  }();
  return l;
}

// An engine for when the plugin is missing: every run is a clear error, never a crash.
class MissingJit : public llvmbe::JitEngine {
 public:
  explicit MissingJit(std::string why) : why_(std::move(why)) {}
  const char* name() const override { return "jit"; }
  RunResult run(const Program&, const Module&, GlobalStore&, const RunOptions&) override {
    RunResult r;
    r.ok = false;
    r.error.kind = ErrorKind::Runtime;
    r.error.message = why_;
    return r;
  }
  void set_opt_level(int level) override { level_ = level; }
  int opt_level() const override { return level_; }
  void set_ir_transform(llvmbe::IRTransform) override {}
  void set_tiers(bool) override {}
  void wait_for_tiers() override {}
  Stats last_stats() const override { return {}; }

 private:
  std::string why_;
  int level_ = 2;
};

// The registry's "cpu" until the plugin is open: what needs no LLVM it answers itself (its
// name, its views' names, that it uses host threads), the rest goes to the real backend.
class LazyCpuBackend : public tensor::Backend {
 public:
  const char* name() const override { return "cpu"; }
  const char* description() const override {
    return "LLVM-compiled machine code on this machine's cores";
  }
  bool host_threads() const override { return true; }
  int vector_lanes() override {
    tensor::Backend* b = real(nullptr);
    return b ? b->vector_lanes() : 4;
  }
  bool open(std::string* error) override {
    tensor::Backend* b = real(error);
    return b && b->open(error);
  }
  bool device(tensor::DeviceSummary* out, std::string* error) override {
    tensor::Backend* b = real(error);
    return b && b->device(out, error);
  }
  std::string describe() override {
    std::string why;
    tensor::Backend* b = real(&why);
    return b ? b->describe() : "cpu: unavailable: " + why + "\n";
  }
  std::string schedule_suffix() const override { return ".sched"; }
  bool compile(const tir::PrimFunc& f, const tensor::BackendOptions& options,
               std::unique_ptr<tensor::CompiledKernel>* out, std::string* error) override {
    tensor::Backend* b = real(error);
    return b && b->compile(f, options, out, error);
  }
  bool compile_hand(const tensor::HandKernel& kernel, std::unique_ptr<tensor::CompiledKernel>* out,
                    std::string* error) override {
    tensor::Backend* b = real(error);
    return b && b->compile_hand(kernel, out, error);
  }
  const std::vector<tensor::BackendView>& views() const override {
    static const std::vector<tensor::BackendView> v = {
        {"llvm", "LLVM IR the CPU backend generates for the scheduled loop nest"},
        {"llvm-opt", "the same after LLVM's -O3 pipeline (vector types, FMAs)"},
    };
    return v;
  }
  bool view(const tir::PrimFunc& f, std::string_view which, std::string* text,
            std::string* error) override {
    tensor::Backend* b = real(error);
    return b && b->view(f, which, text, error);
  }

 private:
  tensor::Backend* real(std::string* error) {
    std::call_once(once_, [this] {
      if (const Api* a = api(&why_)) real_ = a->make_cpu_backend();
    });
    if (!real_ && error) *error = why_;
    return real_.get();
  }
  std::once_flag once_;
  std::unique_ptr<tensor::Backend> real_;
  std::string why_;
};

}  // namespace

std::string plugin_path() {
#ifdef DESCENT_LLVM_PLUGIN_PATH
  const char* built = DESCENT_LLVM_PLUGIN_PATH;
#else
  const char* built = "";
#endif
  return plugins::plugin_path("DESCENT_LLVM_PLUGIN", built, "libdescent_llvm.so");
}

const Api* api(std::string* error) {
  const Loaded& l = loaded();
  if (!l.api && error) *error = l.error;
  return l.api;
}

bool opened() { return g_opened.load(); }

std::unique_ptr<llvmbe::JitEngine> make_jit_engine(int opt_level) {
  std::string why;
  if (const Api* a = api(&why)) return a->make_jit_engine(opt_level);
  return std::make_unique<MissingJit>(why);
}

std::vector<std::string> supported_targets() {
  const Api* a = api();
  return a ? a->supported_targets() : std::vector<std::string>{};
}

std::string resolve_target(const std::string& name, std::string* error) {
  const Api* a = api(error);
  return a ? a->resolve_target(name, error) : std::string();
}

bool build_object(const Program& program, const Module& module, const std::string& target,
                  int opt_level, const std::string& path, std::string* error) {
  const Api* a = api(error);
  return a && a->build_object(program, module, target, opt_level, path, error);
}

std::vector<llvmbe::PassSnapshot> dump_passes(const CodeScope& scope, const Module& module,
                                              int opt_level, std::string* error) {
  const Api* a = api(error);
  return a ? a->dump_passes(scope, module, opt_level, error) : std::vector<llvmbe::PassSnapshot>{};
}

std::string format_pass_list(const std::vector<llvmbe::PassSnapshot>& snaps) {
  std::string why;
  const Api* a = api(&why);
  return a ? a->format_pass_list(snaps) : why + "\n";
}

std::string diff_snapshots(const std::string& a, const std::string& b, const std::string& a_label,
                           const std::string& b_label) {
  std::string why;
  const Api* p = api(&why);
  return p ? p->diff_snapshots(a, b, a_label, b_label) : why + "\n";
}

llvmbe::Listing ir_code(const CodeScope& scope, const Module& module, int opt_level,
                        bool optimized, std::string* error) {
  const Api* a = api(error);
  return a ? a->ir_code(scope, module, opt_level, optimized, error) : llvmbe::Listing{};
}

llvmbe::Listing machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                             int opt_level, llvmbe::MachineView view,
                             const llvmbe::AsmOptions& options, std::string* error) {
  const Api* a = api(error);
  return a ? a->machine_code(scope, module, target, opt_level, view, options, error)
           : llvmbe::Listing{};
}

std::unique_ptr<tensor::Backend> make_lazy_cpu_backend() { return std::make_unique<LazyCpuBackend>(); }

}  // namespace descent::llvm_plugin
