// The registration point of the tensor backends that live above tensor/: the one place a new
// device is added (one include, one line). ref and cpu register themselves in tensor/.
#include <mutex>

#include "gpu/opencl_backend.h"
#include "pipeline/pipeline.h"

namespace descent {

void register_tensor_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    gpu::register_opencl_backend();
  });
}

}  // namespace descent
