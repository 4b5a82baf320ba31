// The doctest main of the tensor tier's tests (tests/tensor, tests/gpu, tests/tune): every
// device is registered before the first test, as every front end does through the Session
// (pipeline/backends.cpp), so a test of the graph runtime or the tuner can name "cpu" without
// building a Session. Only ref registers itself (tensor/backend.cpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "pipeline/pipeline.h"

int main(int argc, char** argv) {
  descent::register_tensor_backends();
  doctest::Context context(argc, argv);
  return context.run();
}
