// The "opencl" backend: generate OpenCL C for a loop nest, build it on the default device
// (cached per source in the context), run it with profiling events.
#include "gpu/opencl_backend.h"

#include <chrono>

#include "gpu/opencl_codegen.h"
#include "gpu/opencl_run.h"
#include "gpu/runtime.h"
#include "tensor/backend.h"

namespace descent::gpu {

namespace {
using tensor::CompiledKernel;
using tensor::KernelTiming;
using tensor::Tensor;

KernelTiming to_kernel_timing(const Timing& t) {
  return KernelTiming{t.upload_s, t.kernel_s, t.download_s, t.build_s};
}

// A generated program: built lazily by the first run (the context caches builds, so a
// kernel compiled twice in a process is built once).
class OpenCLKernel : public CompiledKernel {
 public:
  OpenCLKernel(const tir::PrimFunc& f, OpenCLProgram program, Context* ctx, double gen_s,
               const std::atomic<bool>* interrupt)
      : f_(f), program_(std::move(program)), ctx_(ctx), gen_s_(gen_s), interrupt_(interrupt) {}
  bool run(const std::vector<const Tensor*>& args, Tensor* out, KernelTiming* timing,
           std::string* error) override {
    Timing t;
    if (!run_program(f_, program_, *ctx_, args, out, &t, error, interrupt_)) return false;
    if (timing) *timing = to_kernel_timing(t);
    return true;
  }
  double compile_seconds() const override { return gen_s_; }

 private:
  tir::PrimFunc f_;
  OpenCLProgram program_;
  Context* ctx_;
  double gen_s_;
  const std::atomic<bool>* interrupt_;  // BackendOptions::interrupt: checked between launches
};

// A hand-written program: buffers for the inputs and the output, then the int scalars.
class HandKernel : public CompiledKernel {
 public:
  HandKernel(tensor::HandKernel k, Program program, Context* ctx, double build_s)
      : k_(std::move(k)), program_(program), ctx_(ctx), build_s_(build_s) {}
  bool run(const std::vector<const Tensor*>& args, Tensor* out, KernelTiming* timing,
           std::string* error) override {
    Timing t;
    std::vector<DeviceBuffer> buffers(args.size() + 1);
    for (size_t i = 0; i < args.size(); ++i) {
      size_t bytes = args[i]->data.size() * sizeof(float);
      double s = 0;
      if (!ctx_->alloc(bytes, &buffers[i], error) ||
          !ctx_->write(buffers[i], args[i]->data.data(), bytes, &s, error))
        return false;
      t.upload_s += s;
    }
    int64_t n = 1;
    for (int64_t d : k_.output_shape) n *= d;
    if (!ctx_->alloc(size_t(n) * sizeof(float), &buffers.back(), error)) return false;
    std::vector<KernelArg> kargs;
    for (const auto& b : buffers) kargs.push_back({&b, 0});
    for (int32_t v : k_.scalars) kargs.push_back({nullptr, v});
    LaunchDims dims;
    dims.dims = k_.dims;
    for (int d = 0; d < 3; ++d) {
      dims.global[d] = k_.global[d];
      dims.local[d] = k_.local[d];
    }
    if (!ctx_->launch(program_, k_.entry, kargs, dims, &t.kernel_s, error)) return false;
    Tensor result;
    result.shape = k_.output_shape;
    result.data = tensor::AlignedFloats(size_t(n));
    if (result.data.size() != size_t(n)) {
      *error = tensor::out_of_memory_text(k_.output_shape);
      return false;
    }
    if (!ctx_->read(buffers.back(), result.data.data(), size_t(n) * sizeof(float), &t.download_s,
                    error))
      return false;
    *out = std::move(result);
    if (timing) *timing = to_kernel_timing(t);
    return true;
  }
  double compile_seconds() const override { return build_s_; }

 private:
  tensor::HandKernel k_;
  Program program_;
  Context* ctx_;
  double build_s_;
};

class OpenCLBackend : public tensor::Backend {
 public:
  const char* name() const override { return "opencl"; }
  const char* description() const override {
    return "OpenCL C on the default OpenCL device (a GPU where there is one, else PoCL on the CPU)";
  }
  bool open(std::string* error) override { return default_context(error) != nullptr; }
  bool device(tensor::DeviceSummary* out, std::string* error) override {
    Context* ctx = default_context(error);
    if (!ctx) return false;
    const DeviceInfo& d = ctx->device();
    *out = tensor::DeviceSummary{d.name, d.type, d.platform,
                                 int(std::max<int64_t>(1, d.compute_units)), d.type == "CPU"};
    return true;
  }
  std::string describe() override { return "opencl:\n" + describe_devices(); }
  // A CPU device (PoCL) has this CPU's vectors; a GPU's float4 is its natural width.
  int vector_lanes() override {
    tensor::DeviceSummary d;
    std::string why;
    if (device(&d, &why) && d.host_cpu) return tensor::find_backend("cpu")->vector_lanes();
    return 4;
  }
  bool compile(const tir::PrimFunc& f, const tensor::BackendOptions& options,
               std::unique_ptr<CompiledKernel>* out, std::string* error) override {
    Context* ctx = default_context(error);
    if (!ctx) return false;
    auto t0 = std::chrono::steady_clock::now();
    OpenCLProgram program;
    if (!generate_opencl(f, &program, error)) return false;
    double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *out = std::make_unique<OpenCLKernel>(f, std::move(program), ctx, gen_s, options.interrupt);
    return true;
  }
  const char* hand_kernel_suffix() const override { return ".cl"; }
  bool compile_hand(const tensor::HandKernel& k, std::unique_ptr<CompiledKernel>* out,
                    std::string* error) override {
    Context* ctx = default_context(error);
    if (!ctx) return false;
    Program program;
    double build_s = 0;
    if (!ctx->build(k.source, "", &program, &build_s, error)) return false;
    *out = std::make_unique<HandKernel>(k, program, ctx, build_s);
    return true;
  }
  const std::vector<tensor::BackendView>& views() const override {
    static const std::vector<tensor::BackendView> v = {
        {"opencl", "the scheduled loop nest as OpenCL C, with its launch sizes"},
    };
    return v;
  }
  bool view(const tir::PrimFunc& f, std::string_view which, std::string* text,
            std::string* error) override {
    if (which != "opencl") return Backend::view(f, which, text, error);
    OpenCLProgram program;
    if (!generate_opencl(f, &program, error)) return false;
    *text = print_opencl(f);
    return true;
  }
};

}  // namespace

void register_opencl_backend() { tensor::register_backend(std::make_unique<OpenCLBackend>()); }

}  // namespace descent::gpu
