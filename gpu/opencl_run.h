// Running loop nests on an OpenCL device: generate (opencl_codegen.h), build (cached in the
// context), upload the arguments, launch every kernel in order, download the output.
//
// Memory: one device buffer per program parameter (OpenCLProgram::params). Inputs are
// uploaded; the output and every scratch buffer start zero-filled, as the interpreter starts
// every buffer at zero. A work-group larger than the device allows is refused before the
// build, with the fix (bind shorter loops to local.*).
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "gpu/opencl_codegen.h"
#include "gpu/runtime.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::gpu {

// Builds (cached in the context), uploads args (one per PrimFunc::params entry, shapes as
// lowered), runs every kernel, downloads the output into *out (reshaped). *timing (may be
// null) gets each phase; build_s is 0 when the program was already built in this context.
// *interrupt (may be null) is checked before each launch: a launch cannot be stopped once
// queued, so an interrupt takes effect when the running one finishes. No exception escapes:
// a failed host allocation is "out of memory allocating a tensor of shape [..]".
bool run_opencl(const tir::PrimFunc& f, Context& context,
                const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out,
                Timing* timing, std::string* error,
                const std::atomic<bool>* interrupt = nullptr);

// Same, with a program generated earlier (benchmarks: generate once, run many times).
bool run_program(const tir::PrimFunc& f, const OpenCLProgram& program, Context& context,
                 const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out,
                 Timing* timing, std::string* error,
                 const std::atomic<bool>* interrupt = nullptr);

}  // namespace descent::gpu
