// Internal to the CPU backend: loop-nest IR -> one LLVM module (codegen*.cpp). cpu.cpp
// optimises it, JIT-compiles it and wraps it as a CpuKernel.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace descent::cpu {

struct CpuTarget {
  std::string triple, data_layout, cpu, features;
  bool avx512 = false;
};

struct CpuCodegenOptions {
  CpuTarget target;
  int threads = 1;                  // baked into each parallel loop's runtime call
  bool prefer_wide_vectors = true;  // "prefer-vector-width"="512" where AVX-512 exists
};

// The entry `void NAME(float** args)`: args[0..] are the params in order, then the output,
// then one pointer per buffer in *temps (Global-scope Temp buffers: main memory the caller
// provides, too big for the stack), then the address of an interrupt flag (a one-byte bool,
// e.g. a std::atomic<bool>; never null): the code polls it in its coarse loops and returns
// early, the outputs half written, once it is set. Runtime symbols the code calls: descent_parallel_for,
// descent_alloc / descent_free (Local buffers too big for a stack frame).
bool generate_cpu_module(const tir::PrimFunc& f, const CpuCodegenOptions& options,
                         llvm::LLVMContext& context, std::unique_ptr<llvm::Module>* module,
                         std::string* entry, std::vector<int>* temps, std::string* error);

}  // namespace descent::cpu

// Aligned, zero-filled heap memory for generated code (Local buffers over the stack limit).
extern "C" void* descent_alloc(int64_t bytes);
extern "C" void descent_free(void* p);
