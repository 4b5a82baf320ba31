// Running a generated OpenCL program: argument checks, buffers, uploads, the kernels' launches
// in order, the download of the output. See opencl_run.h.
#include "gpu/opencl_run.h"

#include <algorithm>
#include <map>
#include <new>
#include <stdexcept>

#include "gpu/opencl_printer.h"

namespace descent::gpu {

using tir::Buffer;
using tir::PrimFunc;

namespace {

bool fail(std::string* error, const std::string& text) {
  if (error) *error = text;
  return false;
}

}  // namespace

// The message for a launch sequence stopped by the interrupt flag.
constexpr const char* kInterrupted = "interrupted (a running OpenCL launch finishes first)";

bool run_program_unguarded(const PrimFunc& f, const OpenCLProgram& program, Context& context,
                           const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out,
                           Timing* timing, std::string* error,
                           const std::atomic<bool>* interrupt) {
  Timing t;
  if (args.size() != f.params.size())
    return fail(error, "kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                           " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer& b = f.buffers[size_t(f.params[i])];
    if (!args[i] || args[i]->shape != b.shape)
      return fail(error, "argument " + std::to_string(i + 1) + " ('" + b.name + "') has shape " +
                             (args[i] ? tensor::shape_text(args[i]->shape) : std::string("(none)")) +
                             " but the kernel was generated for " + tensor::shape_text(b.shape));
  }
  // Refuse impossible work-groups before compiling (a compiler given an impossible
  // reqd_work_group_size may fail with a less helpful message).
  const DeviceInfo& dev = context.device();
  for (const KernelLaunch& k : program.kernels) {
    int64_t items = k.locals[0] * k.locals[1] * k.locals[2];
    if (dev.max_work_group_size > 0 && items > dev.max_work_group_size)
      return fail(error, "cannot launch kernel '" + k.name + "' on '" + dev.name + "': work-group " +
                             sizes_text(k.locals, k.dims.dims) + " (" + std::to_string(items) +
                             " work-items) exceeds the device's maximum work-group size " +
                             std::to_string(dev.max_work_group_size) +
                             " (CL_INVALID_WORK_GROUP_SIZE); bind shorter loops to local.*");
  }
  Program prog;
  if (!context.build(program.source, "", &prog, &t.build_s, error)) return false;

  std::map<int, DeviceBuffer> mem;
  for (int b : program.params) {
    DeviceBuffer d;
    if (!context.alloc(size_t(numel(f.buffers[size_t(b)])) * sizeof(float), &d, error)) return false;
    mem.emplace(b, std::move(d));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    double s = 0;
    DeviceBuffer& d = mem.at(f.params[i]);
    if (!context.write(d, args[i]->data.data(), d.bytes(), &s, error)) return false;
    t.upload_s += s;
  }
  // The interpreter starts every buffer at zero; so do we (the output and every scratch).
  for (int b : program.params) {
    if (std::find(f.params.begin(), f.params.end(), b) != f.params.end()) continue;
    double s = 0;
    if (!context.fill_zero(mem.at(b), &s, error)) return false;
    t.upload_s += s;
  }
  std::vector<KernelArg> kargs;
  for (int b : program.params) kargs.push_back(KernelArg{&mem.at(b), 0});
  for (const KernelLaunch& k : program.kernels) {
    if (interrupt && interrupt->load(std::memory_order_relaxed)) return fail(error, kInterrupted);
    double s = 0;
    if (!context.launch(prog, k.name, kargs, k.dims, &s, error)) return false;
    t.kernel_s += s;
  }
  tensor::Tensor result;
  if (!tensor::zeros(f.buffers[size_t(f.output)].shape, &result, error)) return false;
  if (!context.read(mem.at(f.output), result.data.data(), size_t(result.numel()) * sizeof(float),
                    &t.download_s, error))
    return false;
  *out = std::move(result);
  if (timing) *timing = t;
  return true;
}

bool run_program(const PrimFunc& f, const OpenCLProgram& program, Context& context,
                 const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out,
                 Timing* timing, std::string* error, const std::atomic<bool>* interrupt) {
  // Device buffers are error values (a failed clCreateBuffer); the host side's containers
  // are caught here so that no exception leaves the library.
  try {
    return run_program_unguarded(f, program, context, args, out, timing, error, interrupt);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return fail(error, tensor::out_of_memory_text(f.buffers[size_t(f.output)].shape));
}

bool run_opencl(const PrimFunc& f, Context& context, const std::vector<const tensor::Tensor*>& args,
                tensor::Tensor* out, Timing* timing, std::string* error,
                const std::atomic<bool>* interrupt) {
  OpenCLProgram program;
  if (!generate_opencl(f, &program, error)) return false;
  return run_program(f, program, context, args, out, timing, error, interrupt);
}

}  // namespace descent::gpu
