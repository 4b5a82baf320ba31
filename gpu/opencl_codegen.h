// Loop nests (tensor/tir.h) -> OpenCL C. Running the result is opencl_run.h's.
//
// The mapping, in the terms the MLC course uses for TVM's CUDA backend:
//   - Bound loops are not loops: `for i_0 in T.thread_binding(8, "group.x")` becomes
//     `const int i_0 = get_group_id(0);`, "local.x" becomes get_local_id(0). The launch's
//     NDRange is, per dimension, (largest group.d extent) x (largest local.d extent) work-items
//     in groups of (largest local.d extent). A bound loop shorter than that is guarded
//     (`if (i_1 < 12)`). Loops that are not bound stay loops inside the kernel; a function with
//     no bound loop at all runs as one work-item (correct, slow: bind loops to go parallel).
//   - Every store happens once, as in the interpreter: a store to __global or __local memory
//     that is not inside a loop bound to some dimension the launch uses is done by work-item 0
//     of that dimension only (`if (get_local_id(0) == 0)`). Private memory is per work-item,
//     so stores to it are never guarded.
//   - Memory: inputs are `__global const float*`, the output and intermediate global buffers
//     are `__global float*` (intermediates are scratch buffers run_opencl allocates, zeroed).
//     A Local buffer allocated in the loop nest (tir Allocate) is a private array; a Shared
//     one is a `__local` array declared at kernel scope (OpenCL allows __local variables
//     nowhere else), unless its Allocate lies inside a local.* loop: then each work-item has
//     its own copy in the IR's meaning, and it becomes a private array too. A Local or
//     Shared buffer with no Allocate lives for the whole function and becomes a __global
//     scratch buffer (the only memory every work-item and every later kernel can see).
//   - Barriers: the IR's Barrier nodes become barrier(...). In addition, wherever the
//     work-items of a group share memory (outside every local.* loop, with a work-group of
//     more than one item), the generator inserts barrier(CLK_LOCAL_MEM_FENCE [|
//     CLK_GLOBAL_MEM_FENCE]) between two statements when the second reads or writes __local or
//     __global memory the first wrote (or writes what the first read), and at the end of a
//     loop body that both writes and reads such memory: after a cooperative copy into __local
//     memory (before anyone reads it) and before it is overwritten by the next iteration's
//     copy (after everyone has read it). This is conservative: it may add a barrier that a
//     careful hand-written kernel would not need, never omit one.
//   - A function whose body is several top-level statements with bound loops becomes several
//     kernels (NAME_0, NAME_1, ...), launched in order, one NDRange each; a kernel boundary is
//     the only barrier across work-groups.
//   - Vectorized loops of 2, 4, 8 or 16 iterations whose body is one store with contiguous
//     accesses (index coefficient 1 in the last dimension, loads either contiguous or
//     loop-invariant) become floatN arithmetic with vloadN/vstoreN; any other vectorized loop
//     stays a scalar loop with a comment saying why. A private array that is only ever
//     accessed N aligned lanes at a time is declared as floatN elements (`float16
//     C_local[16]`, used as C_local[3]), which the OpenCL compiler keeps in registers.
//   - Unrolled loops of up to 32 iterations become straight-line code, the body once per
//     iteration with the loop variable replaced by its value (so private arrays are indexed
//     by constants); longer ones, and bodies that declare or synchronise, get #pragma unroll.
//     Parallel loops (a CPU notion) run serially inside the work-item.
//   - max(a, b) is (b > a) ? b : a, not fmax (whose nan rule differs from the interpreter's).
//
// The text comes from the C-style printer (tensor/c_printer.h): OpenCLPrinter
// (opencl_printer.h, private to gpu/) overrides its hooks for all of the above.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/runtime.h"
#include "tensor/tir.h"

namespace descent::gpu {

struct KernelLaunch {
  std::string name;  // the __kernel function
  LaunchDims dims;   // global sizes = groups x locals; local sizes 0 when no local.* loop
  int64_t groups[3] = {1, 1, 1};
  int64_t locals[3] = {1, 1, 1};
};

struct OpenCLProgram {
  std::string source;                 // the whole program text (what --dump opencl prints)
  std::vector<KernelLaunch> kernels;  // launched in this order
  // Buffer indices (into PrimFunc::buffers) of the kernels' parameters, in order: the
  // inputs, then the output, then scratch buffers. Every kernel takes the same list.
  std::vector<int> params;
  std::vector<int> scratch;  // the subset run_opencl allocates (zero-filled) itself
};

// Generates the program. Fails (naming the loop/block/buffer) on what OpenCL cannot express:
// an unknown thread tag, the same tag bound twice on one path, a barrier inside a guarded
// bound loop, a malformed function (tir::verify).
bool generate_opencl(const tir::PrimFunc& f, OpenCLProgram* out, std::string* error);

// The source followed by the launch description, as `--dump opencl` shows it; on error the
// error text.
std::string print_opencl(const tir::PrimFunc& f);

// "kernel mm_0: global (128, 128) local (16, 16) = 64 groups of 256 work-items".
std::string describe_launch(const KernelLaunch& k);

}  // namespace descent::gpu
