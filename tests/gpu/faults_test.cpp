// test_gpu_faults (issue 13): Ctrl-C on the OpenCL device. A queued launch cannot be stopped,
// so the interrupt flag is checked before each launch of a program and the error says that a
// running launch finishes first; through the backend, BackendOptions::interrupt reaches it.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <string>

#include "gpu/opencl_run.h"
#include "gpu/runtime.h"
#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/tensor.h"
#include "tests/tensor/kernel_util.h"

using namespace descent;
using tensor::Tensor;

namespace {

const char* kAdd = R"(kernel add(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = a[i] + b[i]
  return c
}
)";

const char* kInterrupted = "interrupted (a running OpenCL launch finishes first)";

gpu::Context& context() {
  std::string error;
  gpu::Context* c = gpu::default_context(&error);
  REQUIRE_MESSAGE(c != nullptr, error);
  return *c;
}

}  // namespace

TEST_SUITE("faults") {

TEST_CASE("run_opencl: a set interrupt flag stops before the next launch, a clear one runs") {
  gpu::Context& ctx = context();
  tir::PrimFunc f = testing::lower_kernel_text(kAdd, {{16}, {16}});
  Tensor a, b, out;
  std::string error;
  REQUIRE(tensor::ones({16}, &a, &error));
  REQUIRE(tensor::ones({16}, &b, &error));
  std::atomic<bool> flag{true};
  CHECK_FALSE(gpu::run_opencl(f, ctx, {&a, &b}, &out, nullptr, &error, &flag));
  CHECK(error == kInterrupted);
  flag = false;
  REQUIRE_MESSAGE(gpu::run_opencl(f, ctx, {&a, &b}, &out, nullptr, &error, &flag), error);
  CHECK(out.data[15] == 2.0f);
}

TEST_CASE("opencl backend: BackendOptions::interrupt reaches the launches") {
  register_tensor_backends();
  tensor::Backend* backend = tensor::find_backend("opencl");
  REQUIRE(backend != nullptr);
  std::string error;
  REQUIRE_MESSAGE(backend->open(&error), error);
  tir::PrimFunc f = testing::lower_kernel_text(kAdd, {{16}, {16}});
  std::atomic<bool> flag{false};
  tensor::BackendOptions options;
  options.interrupt = &flag;
  std::unique_ptr<tensor::CompiledKernel> k;
  REQUIRE_MESSAGE(backend->compile(f, options, &k, &error), error);
  Tensor a, b, out;
  REQUIRE(tensor::ones({16}, &a, &error));
  REQUIRE(tensor::ones({16}, &b, &error));
  REQUIRE_MESSAGE(k->run({&a, &b}, &out, nullptr, &error), error);
  CHECK(out.data[0] == 2.0f);
  flag = true;
  CHECK_FALSE(k->run({&a, &b}, &out, nullptr, &error));
  CHECK(error == kInterrupted);
}

}  // TEST_SUITE
