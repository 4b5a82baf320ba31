// The registration point of the tensor backends that live above tensor/: the one place a new
// device is added (one include, one line). Only ref, the oracle, registers itself in tensor/.
#include <mutex>

#include "gpu/opencl_backend.h"
#include "plugins/llvm_lazy.h"
#include "pipeline/pipeline.h"

namespace descent {

void register_tensor_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    // cpu's code and LLVM live in a plugin, opened when the device is first used (lazy.h).
    tensor::register_backend(llvm_plugin::make_lazy_cpu_backend());
    gpu::register_opencl_backend();
  });
}

}  // namespace descent
