// The CPU backend: loop-nest IR -> LLVM IR (through the same LLVM 15 the scalar tier uses)
// -> ORC JIT -> a callable kernel.
//
// Loop kinds become real machine behaviour: Vectorized loops become explicit LLVM vector
// types (<N x float> loads, stores and FMAs; a gather or a scalar fallback only where an
// access is not contiguous), Unrolled loops are replicated, Parallel loops are outlined into
// a function that a thread pool calls with ranges of the iteration space. Bound loops (an
// OpenCL notion) run as serial loops here. Local buffers become stack arrays.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tensor/backend.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::cpu {

struct CpuOptions {
  int threads = 0;      // parallel loops: 0 = every hardware thread; 1 = serial
  int opt_level = 3;    // LLVM -O level for the generated function
  // The vector width LLVM may use for loops it vectorizes itself (explicit vector types are
  // as wide as the schedule says): 512 where the host has AVX-512, else 256.
  bool prefer_wide_vectors = true;
  // Set (e.g. by Ctrl-C) while a kernel runs, it makes the generated code stop at its next
  // coarse loop iteration (every thread), and run() fail with "interrupted", *out untouched.
  // Null: the code polls a flag that is never set (run_raw, benchmarks).
  const std::atomic<bool>* interrupt = nullptr;
};

class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  // args: one tensor per PrimFunc::params entry (shapes as lowered); *out is (re)shaped to
  // the output buffer. False with *error when shapes do not match, or with "interrupted"
  // when CpuOptions::interrupt was set before or during the run. *kernel_seconds (may be
  // null) gets the time of the generated code alone, *setup_seconds that of allocating the
  // output and zeroing scratch buffers, which a benchmark does not count.
  virtual bool run(const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out, std::string* error,
                   double* kernel_seconds = nullptr, double* setup_seconds = nullptr) = 0;
  // Same, into caller-provided raw buffers (benchmarks: no allocation in the timed loop).
  virtual void run_raw(const std::vector<const float*>& args, float* out) = 0;
  virtual const std::string& llvm_ir() const = 0;  // the module after optimisation
  virtual double compile_seconds() const = 0;
};

bool compile_cpu(const tir::PrimFunc& f, const CpuOptions& options,
                 std::unique_ptr<CpuKernel>* out, std::string* error);
// The LLVM IR of the generated function, before (optimized = false) or after optimisation.
bool emit_cpu_llvm(const tir::PrimFunc& f, const CpuOptions& options, bool optimized,
                   std::string* ir, std::string* error);

// The threads parallel loops use by default (CpuOptions::threads = 0): the CPUs this thread
// may run on (its affinity mask: taskset, cpusets), capped by the CPU quota of the process's
// cgroup, at least 1. Not std::thread::hardware_concurrency(), which counts the machine's.
int hardware_threads();

// Floats per vector register of this CPU: 16 with AVX-512, 8 with AVX (and AVX2), else 4.
int host_vector_lanes();

// Adds "cpu" to the tensor backend registry (tensor/backend.h); pipeline/backends.cpp calls
// it, the one place devices are registered. Safe to call again.
void register_cpu_backend();
// The same backend as an object, for whoever registers it (plugins/: the Session opens
// this folder's code as a plugin on first use).
std::unique_ptr<tensor::Backend> make_cpu_backend();

}  // namespace descent::cpu
