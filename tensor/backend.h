// The tensor backend seam: where a loop nest becomes something that runs.
//
// The scalar tier has one seam (lang/engine.h: every engine runs a checked program); this is
// the tensor tier's. A backend takes a scheduled loop nest (tir::PrimFunc), compiles it once
// and runs it many times on tensors, reporting time and errors as values. tinygrad calls the
// same triple a device: a renderer (loop nest -> code), a compiler and a runtime; here each
// backend keeps all three behind one small interface:
//
//   Backend* cpu = find_backend("cpu");
//   std::unique_ptr<CompiledKernel> k;
//   if (!cpu->compile(func, BackendOptions{}, &k, &error)) ...
//   k->run({&a, &b}, &out, &timing, &error);
//
// Backends register by name in one registry; everything above tensor/ (the graph runtime,
// the Session, the CLI, the REPL, the visualizer, the benchmark) takes device names and lists
// from it and never names a backend's own headers. tensor/ registers only the one it owns:
//   ref     the reference interpreter (tir::interpret): slow, obviously right, the oracle
// and every device is a sibling folder above it that registers from there, so tensor/ never
// includes them (nor links LLVM or OpenCL):
//   cpu     LLVM-compiled machine code on this machine's cores (cpu/cpu.h)
//   opencl  OpenCL C through the platform's driver (gpu/opencl_backend.h)
// A new device is one folder implementing Backend plus one line in pipeline/backends.cpp
// (register_tensor_backends: the registration point every front end and test shares).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::tensor {

struct BackendOptions {
  int threads = 0;  // host-thread backends: 0 = every hardware thread, 1 = serial
  // Set (e.g. by Ctrl-C) to stop a run; backends check it where they can.
  const std::atomic<bool>* interrupt = nullptr;
};

// Where one run's time went, in seconds. kernel_s is the number benchmarks report: the
// computation alone, as the device measures it (OpenCL profiling events) or as wall time
// around the generated code's entry; preparing buffers and copying data are apart.
struct KernelTiming {
  double setup_s = 0;     // host buffers, zeroing scratch memory, copies to the device
  double kernel_s = 0;    // the kernel itself
  double download_s = 0;  // copying the result back (device backends)
  double build_s = 0;     // a build done lazily by this run (0 when it was already built)
};

// A loop nest compiled for one backend: compile once, run many times.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  // args: one tensor per PrimFunc::params entry, in the shapes the nest was lowered for.
  // *out receives the output buffer's value (reshaped; out may be one of args: it is
  // replaced only at the end). *timing may be null. False with *error on a shape mismatch,
  // a device failure or an interrupt ("interrupted").
  virtual bool run(const std::vector<const Tensor*>& args, Tensor* out, KernelTiming* timing,
                   std::string* error) = 0;
  // Seconds spent compiling (code generation and the backend's compiler).
  virtual double compile_seconds() const = 0;
};

// What a backend runs on, for listings and benchmark headers.
struct DeviceSummary {
  std::string name;         // "host CPU", "pthread-skylake-avx512", "NVIDIA H100"
  std::string type;         // "CPU", "GPU", "interpreter"
  std::string detail;       // platform or driver, may be empty
  int compute_units = 1;    // parallel units the device offers
  bool host_cpu = false;    // runs on this machine's cores (so its CPU roofline applies)
};

// A kernel written by hand in a backend's own language (the benchmark's yardstick beside
// the generated kernels): the whole program text, the function to launch, its launch grid,
// and the int arguments that follow the buffers (inputs, then the output).
struct HandKernel {
  std::string source;
  std::string entry;
  int dims = 1;
  int64_t global[3] = {1, 1, 1};
  int64_t local[3] = {0, 0, 0};  // 0: the device chooses
  std::vector<int32_t> scalars;
  std::vector<int64_t> output_shape;
};

// One view of the code a backend generates for a loop nest (`:llvm`, `--dump opencl`).
struct BackendView {
  const char* name;  // "llvm", "llvm-opt", "opencl"
  const char* help;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;         // "ref", "cpu", "opencl"
  virtual const char* description() const = 0;  // one line for help texts
  // Whether runs use host threads (BackendOptions::threads): benchmarks then run it at
  // every thread count; a device backend's parallelism is its own.
  virtual bool host_threads() const { return false; }
  // Floats per vector register on what it runs on: the width schedules made by rules give
  // their vectors (tune/rules.h). 16 with AVX-512, 8 with AVX2, 4 otherwise and on GPUs.
  virtual int vector_lanes() { return 4; }

  // Whether it can run here now. Opening a device may fail (no OpenCL platform): *error
  // says why and how to get one. The default: always available.
  virtual bool open(std::string* error) {
    (void)error;
    return true;
  }
  virtual bool device(DeviceSummary* out, std::string* error) = 0;
  // `descent devices`: a paragraph about what this backend runs on (or why it cannot).
  virtual std::string describe() = 0;

  virtual bool compile(const tir::PrimFunc& f, const BackendOptions& options,
                       std::unique_ptr<CompiledKernel>* out, std::string* error) = 0;

  // Hand-written kernels in the backend's language; most backends have none.
  virtual bool compile_hand(const HandKernel& kernel, std::unique_ptr<CompiledKernel>* out,
                            std::string* error) {
    (void)kernel;
    (void)out;
    *error = std::string("the ") + name() + " backend runs no hand-written kernels";
    return false;
  }
  bool has_hand_kernels() const { return hand_kernel_suffix()[0] != '\0'; }
  // The file suffix of its hand-written kernels (".cl"), "" when it has none.
  virtual const char* hand_kernel_suffix() const { return ""; }

  // The schedule files written for this backend end in this (bench/schedules: matmul.sched
  // for the CPU, matmul.opencl.sched for OpenCL work-groups).
  virtual std::string schedule_suffix() const { return std::string(".") + name() + ".sched"; }

  // The generated code as text, for the views it lists.
  virtual const std::vector<BackendView>& views() const {
    static const std::vector<BackendView> none;
    return none;
  }
  virtual bool view(const tir::PrimFunc& f, std::string_view which, std::string* text,
                    std::string* error) {
    (void)f;
    (void)text;
    *error = std::string("the ") + name() + " backend has no view '" + std::string(which) + "'";
    return false;
  }
};

// ---- The registry -----------------------------------------------------------------------
// In registration order: ref, then the devices pipeline/backends.cpp registers (cpu, opencl). Backends
// live as long as the process.

// Adds a backend; a second one with the same name replaces the first.
void register_backend(std::unique_ptr<Backend> backend);
// Null when no backend has that name.
Backend* find_backend(std::string_view name);
std::vector<std::string> backend_names();
// find_backend, or *error = "unknown device 'x' (devices: ref, cpu, opencl)".
Backend* backend_or_error(std::string_view name, std::string* error);

// The reference interpreter as a function, for checks that need the oracle's answer.
Backend& reference_backend();

}  // namespace descent::tensor
