// The CPU as a backend: loop nests compiled through LLVM (cpu.h) and run on this machine's
// cores, parallel loops on the thread pool.
#include <chrono>

#include "cpu/cpu.h"
#include "tensor/backend.h"

namespace descent::cpu {

namespace {

using tensor::Backend;
using tensor::BackendOptions;
using tensor::BackendView;
using tensor::CompiledKernel;
using tensor::DeviceSummary;
using tensor::KernelTiming;
using tensor::Tensor;

class CpuCompiled : public CompiledKernel {
 public:
  explicit CpuCompiled(std::unique_ptr<CpuKernel> k) : k_(std::move(k)) {}
  bool run(const std::vector<const Tensor*>& args, Tensor* out, KernelTiming* timing,
           std::string* error) override {
    double kernel_s = 0, setup_s = 0;
    bool ok = k_->run(args, out, error, &kernel_s, &setup_s);
    if (timing) *timing = KernelTiming{setup_s, kernel_s, 0, 0};
    return ok;
  }
  double compile_seconds() const override { return k_->compile_seconds(); }

 private:
  std::unique_ptr<CpuKernel> k_;
};

class CpuBackend : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  const char* description() const override {
    return "LLVM-compiled machine code on this machine's cores";
  }
  bool host_threads() const override { return true; }
  int vector_lanes() override { return host_vector_lanes(); }
  bool device(DeviceSummary* out, std::string*) override {
    *out = DeviceSummary{"host CPU", "CPU", "LLVM 15", hardware_threads(), true};
    return true;
  }
  std::string describe() override {
    return "cpu: this machine's CPU through LLVM, " + std::to_string(hardware_threads()) +
           " hardware threads for parallel loops\n";
  }
  std::string schedule_suffix() const override { return ".sched"; }
  bool compile(const tir::PrimFunc& f, const BackendOptions& options,
               std::unique_ptr<CompiledKernel>* out, std::string* error) override {
    CpuOptions o;
    o.threads = options.threads;
    o.interrupt = options.interrupt;
    std::unique_ptr<CpuKernel> k;
    if (!compile_cpu(f, o, &k, error)) return false;
    *out = std::make_unique<CpuCompiled>(std::move(k));
    return true;
  }
  const std::vector<BackendView>& views() const override {
    static const std::vector<BackendView> v = {
        {"llvm", "LLVM IR the CPU backend generates for the scheduled loop nest"},
        {"llvm-opt", "the same after LLVM's -O3 pipeline (vector types, FMAs)"},
    };
    return v;
  }
  bool view(const tir::PrimFunc& f, std::string_view which, std::string* text,
            std::string* error) override {
    if (which != "llvm" && which != "llvm-opt") return Backend::view(f, which, text, error);
    return emit_cpu_llvm(f, CpuOptions{}, which == "llvm-opt", text, error);
  }
};

}  // namespace

std::unique_ptr<tensor::Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

void register_cpu_backend() { tensor::register_backend(make_cpu_backend()); }

}  // namespace descent::cpu
