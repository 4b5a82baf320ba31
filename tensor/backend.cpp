// The backend registry, and the reference interpreter as a backend.
#include "tensor/backend.h"

#include <chrono>
#include <mutex>

#include "lang/text.h"

namespace descent::tensor {

namespace {
using Clock = std::chrono::steady_clock;

// ---- ref: the oracle ----------------------------------------------------------------
// Compiling is keeping the loop nest; running is walking it (tir::interpret), which checks
// every access and stops on the interrupt flag between statements.
class RefKernel : public CompiledKernel {
 public:
  RefKernel(const tir::PrimFunc& f, const std::atomic<bool>* interrupt)
      : f_(f), interrupt_(interrupt) {}
  bool run(const std::vector<const Tensor*>& args, Tensor* out, KernelTiming* timing,
           std::string* error) override {
    // tir::interpret trusts its caller with the shapes; a backend may not.
    if (args.size() != f_.params.size()) {
      *error = "kernel '" + f_.name + "' takes " + std::to_string(f_.params.size()) +
               " arguments, got " + std::to_string(args.size());
      return false;
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const tir::Buffer& b = f_.buffers[size_t(f_.params[i])];
      if (!args[i] || args[i]->shape != b.shape) {
        *error = "argument " + std::to_string(i + 1) + " ('" + b.name + "') has shape " +
                 (args[i] ? shape_text(args[i]->shape) : std::string("(none)")) +
                 " but the kernel was lowered for " + shape_text(b.shape);
        return false;
      }
    }
    auto t0 = Clock::now();
    bool ok = tir::interpret(f_, args, out, error, interrupt_);
    if (timing) *timing = KernelTiming{0, std::chrono::duration<double>(Clock::now() - t0).count(), 0, 0};
    return ok;
  }
  double compile_seconds() const override { return 0; }

 private:
  tir::PrimFunc f_;
  const std::atomic<bool>* interrupt_;
};

class RefBackend : public Backend {
 public:
  const char* name() const override { return "ref"; }
  const char* description() const override {
    return "the reference interpreter: walks the loop nest, slow and obviously right";
  }
  bool device(DeviceSummary* out, std::string*) override {
    *out = DeviceSummary{"reference interpreter", "interpreter", "", 1, true};
    return true;
  }
  std::string describe() override {
    return "ref: the reference interpreter (the oracle every other backend is checked against)\n";
  }
  bool compile(const tir::PrimFunc& f, const BackendOptions& options,
               std::unique_ptr<CompiledKernel>* out, std::string*) override {
    *out = std::make_unique<RefKernel>(f, options.interrupt);
    return true;
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Backend>> backends;
  Registry() {
    backends.push_back(std::make_unique<RefBackend>());
  }
};

Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

void register_backend(std::unique_ptr<Backend> backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& b : r.backends) {
    if (std::string_view(b->name()) == backend->name()) {
      b = std::move(backend);
      return;
    }
  }
  r.backends.push_back(std::move(backend));
}

Backend* find_backend(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& b : r.backends)
    if (name == b->name()) return b.get();
  return nullptr;
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (auto& b : r.backends) names.push_back(b->name());
  return names;
}

Backend* backend_or_error(std::string_view name, std::string* error) {
  if (Backend* b = find_backend(name)) return b;
  *error = "unknown device '" + std::string(name) + "' (devices: " + join(backend_names()) + ")";
  return nullptr;
}

Backend& reference_backend() { return *find_backend("ref"); }

}  // namespace descent::tensor
