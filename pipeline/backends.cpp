// The registration point of the tensor backends that live above tensor/: the one place a new
// device is added (one include, one line). Only ref, the oracle, registers itself in tensor/.
#include <mutex>

#include "cpu/cpu.h"
#include "gpu/opencl_backend.h"
#include "pipeline/pipeline.h"

namespace descent {

void register_tensor_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    cpu::register_cpu_backend();
    gpu::register_opencl_backend();
  });
}

}  // namespace descent
