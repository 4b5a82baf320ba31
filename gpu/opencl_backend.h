// OpenCL as a tensor backend (tensor/backend.h). gpu/ sits above tensor/, so it registers
// itself from above: pipeline/backends.cpp calls register_opencl_backend() once, and from
// then on "opencl" is a device name like "ref" and "cpu" everywhere.
#pragma once

namespace descent::gpu {

// Adds the "opencl" backend to the registry: kernels generated as OpenCL C (opencl_codegen.h)
// and run on the process's default device (runtime.h: a GPU where there is one, else the
// first device, e.g. PoCL on this CPU).
void register_opencl_backend();

}  // namespace descent::gpu
