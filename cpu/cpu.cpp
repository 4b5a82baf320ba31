// [SECTION] index: the host target | optimisation | the JIT | CpuKernel | public API.
//
// codegen.cpp turns a PrimFunc into an LLVM module; this file optimises it for the host
// CPU with LLVM's own -O pipeline (the same one the scalar JIT uses, llvm_backend/passes.h),
// JIT-compiles it with an LLJIT of its own (one per kernel, so a kernel's machine code lives
// exactly as long as its CpuKernel), and checks the shapes of every call.
#include "cpu/cpu.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "cpu/codegen.h"
#include "cpu/thread_pool.h"
#include "llvm_backend/host.h"
#include "llvm_backend/passes.h"
#include "tensor/schedule.h"  // defined_before_read

namespace descent::cpu {

using tensor::AlignedFloats;
using tensor::check_shape;
using tensor::shape_text;
using tensor::Tensor;

namespace {

// ---------------------------------------------------------------------------------------
// [SECTION] the host target
// ---------------------------------------------------------------------------------------

// This machine for the code generator (llvm_backend/host.h detects it once); false with the
// reason when LLVM cannot target it.
bool host_target(CpuTarget* target, std::string* error) {
  llvmbe::HostCpu host;
  if (!llvmbe::describe_host(&host, error)) return false;
  target->triple = host.triple;
  target->cpu = host.cpu;
  target->features = host.features;
  target->data_layout = host.data_layout;
  target->avx512 = host.features.find("+avx512f") != std::string::npos;
  return true;
}

using Diagnostics = llvmbe::DiagnosticSink;

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

// ---------------------------------------------------------------------------------------
// [SECTION] optimisation: generate, verify, -O pipeline
// ---------------------------------------------------------------------------------------

struct Built {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<Diagnostics> diagnostics;
  std::unique_ptr<llvm::Module> module;
  std::string entry;
  std::vector<int> temps;
  std::string before, after;  // IR text
};

int effective_threads(const CpuOptions& o) { return o.threads > 0 ? o.threads : hardware_threads(); }

bool build(const tir::PrimFunc& f, const CpuOptions& options, bool optimize, Built* out,
           std::string* error) {
  CpuTarget target;
  std::string why;
  if (!host_target(&target, &why)) {
    *error = "cpu: cannot target this machine: " + why;
    return false;
  }
  if (!tir::verify(f, &why)) {
    *error = "cpu: the loop nest of '" + f.name + "' is malformed: " + why;
    return false;
  }
  if (f.output < 0 || static_cast<size_t>(f.output) >= f.buffers.size()) {
    *error = "cpu: '" + f.name + "' has no output buffer";
    return false;
  }
  for (int p : f.params)
    if (p < 0 || static_cast<size_t>(p) >= f.buffers.size()) {
      *error = "cpu: '" + f.name + "' has a parameter that is not a buffer";
      return false;
    }
  out->context = std::make_unique<llvm::LLVMContext>();
  out->diagnostics = std::make_unique<Diagnostics>();
  out->diagnostics->attach(*out->context);
  CpuCodegenOptions cg;
  cg.target = target;
  cg.threads = effective_threads(options);
  cg.prefer_wide_vectors = options.prefer_wide_vectors;
  if (!generate_cpu_module(f, cg, *out->context, &out->module, &out->entry, &out->temps, &why)) {
    *error = "cpu: " + why;
    return false;
  }
  std::string verifier;
  llvm::raw_string_ostream vout(verifier);
  if (llvm::verifyModule(*out->module, &vout)) {
    vout.flush();
    *error = "cpu: internal error, generated invalid LLVM IR for '" + f.name + "': " + verifier;
    return false;
  }
  out->before = module_text(*out->module);
  if (!optimize) return true;
  auto tm = llvmbe::make_host_target_machine(options.opt_level, &why);
  if (!tm) {
    *error = "cpu: " + why;
    return false;
  }
  llvmbe::optimize(*out->module, options.opt_level, false, tm.get());
  out->after = module_text(*out->module);
  return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] CpuKernel
// ---------------------------------------------------------------------------------------

class JitKernel final : public CpuKernel {
 public:
  using Entry = void (*)(float**);

  JitKernel(const tir::PrimFunc& f, std::unique_ptr<Diagnostics> diagnostics,
            std::unique_ptr<llvm::orc::LLJIT> jit, Entry entry, std::vector<int> temps,
            std::string ir, double seconds, const std::atomic<bool>* interrupt)
      : diagnostics_(std::move(diagnostics)), jit_(std::move(jit)), entry_(entry), ir_(std::move(ir)), seconds_(seconds),
        interrupt_(interrupt) {
    for (int p : f.params) {
      param_names_.push_back(f.buffers[static_cast<size_t>(p)].name);
      param_shapes_.push_back(f.buffers[static_cast<size_t>(p)].shape);
    }
    out_shape_ = f.buffers[static_cast<size_t>(f.output)].shape;
    zero_out_ = !tensor::defined_before_read(f, f.output);
    for (int t : temps) {
      int64_t n = 1;
      for (int64_t d : f.buffers[static_cast<size_t>(t)].shape) n *= d;
      temps_.emplace_back(static_cast<size_t>(n));
      zero_temps_.push_back(!tensor::defined_before_read(f, t));
    }
  }

  bool run(const std::vector<const Tensor*>& args, Tensor* out, std::string* error,
           double* kernel_seconds, double* setup_seconds) override {
    auto t0 = std::chrono::steady_clock::now();
    if (args.size() != param_shapes_.size()) {
      *error = "expected " + std::to_string(param_shapes_.size()) + " arguments, got " +
               std::to_string(args.size());
      return false;
    }
    if (interrupted()) {
      *error = "interrupted";
      return false;
    }
    // Kept per thread between runs: a model in a loop launches small kernels by the
    // thousand, and these would be its only allocations besides the output.
    thread_local std::vector<const float*> raw;
    raw.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i] || args[i]->shape != param_shapes_[i]) {
        *error = "argument " + std::to_string(i + 1) + " ('" + param_names_[i] + "') has shape " +
                 (args[i] ? shape_text(args[i]->shape) : "(none)") +
                 " but the kernel was compiled for " + shape_text(param_shapes_[i]);
        return false;
      }
      raw.push_back(args[i]->data.data());
    }
    // Temps start as zeros, as in the interpreter (run_raw skips this: benchmarks), unless
    // the nest writes every element before it reads one (defined_before_read): then what
    // the last launch left is never seen, and clearing it would be a wasted pass.
    for (size_t i = 0; i < temps_.size(); ++i)
      if (zero_temps_[i]) std::memset(temps_[i].data(), 0, temps_[i].size() * sizeof(float));
    // A caller running the same kernel again (a benchmark) passes the last output back. The
    // run then writes into a spare buffer of this kernel's and swaps it with *out's only once
    // it has finished: no allocation between runs (which would let the thread pool's workers
    // fall asleep between the runs of a 50 us kernel), and an interrupted run publishes
    // nothing. Otherwise a fresh buffer replaces *out at the end (out may be one of args).
    size_t n = size_t(out->numel());
    bool reuse = out->shape == out_shape_ && out->data.size() == n &&
                 std::find(args.begin(), args.end(), out) == args.end();
    Tensor result;
    if (reuse) {
      if (spare_.size() != n) spare_ = AlignedFloats(n);  // empty when out of memory
      reuse = spare_.size() == n;
      if (reuse && zero_out_) std::memset(spare_.data(), 0, n * sizeof(float));
    }
    if (!reuse && !(zero_out_ ? tensor::zeros : tensor::empty)(out_shape_, &result, error)) return false;
    auto t1 = std::chrono::steady_clock::now();
    run_raw(raw, reuse ? spare_.data() : result.data.data());
    auto t2 = std::chrono::steady_clock::now();
    if (setup_seconds) *setup_seconds = std::chrono::duration<double>(t1 - t0).count();
    if (kernel_seconds) *kernel_seconds = std::chrono::duration<double>(t2 - t1).count();
    // Set during the run, the flag may have stopped the code half way: nothing is published.
    if (interrupted()) {
      *error = "interrupted";
      return false;
    }
    if (reuse) std::swap(out->data, spare_);
    else *out = std::move(result);
    return true;
  }

  void run_raw(const std::vector<const float*>& args, float* out) override {
    thread_local std::vector<float*> ptrs;
    ptrs.clear();
    for (const float* a : args) ptrs.push_back(const_cast<float*>(a));  // read only
    ptrs.push_back(out);
    for (auto& t : temps_) ptrs.push_back(t.data());
    // The flag the generated code polls: the caller's, or one never set.
    static const std::atomic<bool> never{false};
    ptrs.push_back(reinterpret_cast<float*>(const_cast<std::atomic<bool>*>(interrupt_ ? interrupt_ : &never)));
    entry_(ptrs.data());
  }

  const std::string& llvm_ir() const override { return ir_; }
  double compile_seconds() const override { return seconds_; }

 private:
  bool interrupted() const { return interrupt_ && interrupt_->load(std::memory_order_relaxed); }

  std::unique_ptr<Diagnostics> diagnostics_;  // the context's handler: outlives the JIT
  std::unique_ptr<llvm::orc::LLJIT> jit_;  // owns the machine code entry_ points into
  Entry entry_;
  std::string ir_;
  double seconds_;
  std::vector<std::string> param_names_;
  std::vector<std::vector<int64_t>> param_shapes_;
  std::vector<int64_t> out_shape_;
  std::vector<AlignedFloats> temps_;  // Global temp buffers, reused by every run
  std::vector<bool> zero_temps_;      // ... and which of them a run must clear first
  bool zero_out_ = true;              // the output too (false: the nest defines all of it)
  AlignedFloats spare_;  // the output buffer of a repeated run, swapped into *out at its end
  const std::atomic<bool>* interrupt_;
};

// The generated code reads the flag as one byte holding 0 or 1.
static_assert(sizeof(std::atomic<bool>) == 1 && std::atomic<bool>::is_always_lock_free);

}  // namespace

// ---------------------------------------------------------------------------------------
// [SECTION] public API
// ---------------------------------------------------------------------------------------

bool compile_cpu(const tir::PrimFunc& f, const CpuOptions& options,
                 std::unique_ptr<CpuKernel>* out, std::string* error) {
  auto start = std::chrono::steady_clock::now();
  Built built;
  if (!build(f, options, true, &built, error)) return false;
  llvmbe::HostJitOptions jit_options;
  jit_options.opt_level = options.opt_level;
  // expf, logf, memset, ... from the process; the thread pool and allocator by address.
  jit_options.symbols = {
      {"descent_parallel_for", reinterpret_cast<const void*>(&descent_parallel_for)},
      {"descent_alloc", reinterpret_cast<const void*>(&descent_alloc)},
      {"descent_free", reinterpret_cast<const void*>(&descent_free)},
  };
  std::string why;
  std::unique_ptr<llvm::orc::LLJIT> jit = llvmbe::make_host_jit(jit_options, &why);
  if (!jit) {
    *error = "cpu: " + why;
    return false;
  }
  Diagnostics* diagnostics = built.diagnostics.get();
  llvm::orc::ThreadSafeModule tsm(std::move(built.module), std::move(built.context));
  if (auto e = jit->addIRModule(std::move(tsm))) {
    *error = "cpu: " + llvmbe::error_text(std::move(e));
    return false;
  }
  auto address = jit->lookup(built.entry);  // compiles the module
  if (!address) {
    *error = "cpu: " + llvmbe::error_text(address.takeError());
    return false;
  }
  if (!diagnostics->errors.empty()) {
    *error = "cpu: code generation failed: " + diagnostics->errors;
    return false;
  }
  for (int t : built.temps)
    if (!check_shape(f.buffers[static_cast<size_t>(t)].shape, error)) {
      *error = "cpu: temporary buffer '" + f.buffers[static_cast<size_t>(t)].name + "': " + *error;
      return false;
    }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    *out = std::make_unique<JitKernel>(f, std::move(built.diagnostics), std::move(jit),
                                       address->toPtr<JitKernel::Entry>(),
                                       std::move(built.temps), std::move(built.after), seconds,
                                       options.interrupt);
  } catch (const std::bad_alloc&) {
    *error = "cpu: out of memory for the temporary buffers of '" + f.name + "'";
    return false;
  }
  return true;
}

bool emit_cpu_llvm(const tir::PrimFunc& f, const CpuOptions& options, bool optimized,
                   std::string* ir, std::string* error) {
  Built built;
  if (!build(f, options, optimized, &built, error)) return false;
  *ir = optimized ? built.after : built.before;
  return true;
}

int host_vector_lanes() {
  static const int lanes = [] {
    CpuTarget t;
    std::string why;
    if (!host_target(&t, &why)) return 4;
    if (t.avx512) return 16;
    return t.features.find("+avx,") != std::string::npos || t.features.find("+avx2") != std::string::npos ? 8 : 4;
  }();
  return lanes;
}

}  // namespace descent::cpu
