// The tensor backend seam (tensor/backend.h): the registry, every registered backend checked
// against the reference interpreter through the one interface, and a device registered by a
// test showing up everywhere device names are taken (the Session, the graph runtime, the
// kernel views) without any front end changing.
#include <doctest/doctest.h>

#include <algorithm>

#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/runtime.h"
#include "tensor/tensor.h"
#include "tests/tensor/kernel_util.h"

using namespace descent;
using namespace descent::tensor;

namespace {

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The prelude's matmul, lowered for small shapes, with an optional schedule.
tir::PrimFunc matmul(const Session& s, std::string_view schedule = "") {
  tir::PrimFunc f;
  std::string error;
  REQUIRE_MESSAGE(s.lower_kernel("matmul", {{"n", 16}, {"k", 24}, {"m", 32}}, schedule, &f, &error),
                  error);
  return f;
}

std::vector<Tensor> inputs_for(const tir::PrimFunc& f) { return testing::inputs_for(f, 7); }
using testing::pointers;

// A device a later issue might add, reduced to its essentials: it runs kernels through the
// interpreter and counts what it was asked to do.
int fake_compiles = 0;
class FakeBackend : public Backend {
 public:
  const char* name() const override { return "fake"; }
  const char* description() const override { return "a test device"; }
  bool device(DeviceSummary* out, std::string*) override {
    *out = DeviceSummary{"fake", "test", "", 1, false};
    return true;
  }
  std::string describe() override { return "fake: a test device\n"; }
  bool compile(const tir::PrimFunc& f, const BackendOptions& o,
               std::unique_ptr<CompiledKernel>* out, std::string* error) override {
    ++fake_compiles;
    return reference_backend().compile(f, o, out, error);
  }
  const std::vector<BackendView>& views() const override {
    static const std::vector<BackendView> v = {{"fake-code", "what the fake device runs"}};
    return v;
  }
  bool view(const tir::PrimFunc& f, std::string_view which, std::string* text,
            std::string* error) override {
    if (which != "fake-code") return Backend::view(f, which, text, error);
    *text = "fake code for " + f.name + "\n";
    return true;
  }
};

}  // namespace

TEST_CASE("registry: ref and cpu first, then what registers from above; unknown names say which exist") {
  Session s;  // registers the backends above tensor/ (OpenCL)
  auto names = backend_names();
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "ref");
  CHECK(names[1] == "cpu");
  CHECK(has(names, "opencl"));
  CHECK(Session::devices() == names);
  CHECK(find_backend("tpu") == nullptr);
  std::string error;
  CHECK(backend_or_error("tpu", &error) == nullptr);
  CHECK(error.find("unknown device 'tpu' (devices: ref, cpu, opencl") == 0);
  CHECK(&reference_backend() == find_backend("ref"));
  CHECK(find_backend("cpu")->host_threads());
  CHECK_FALSE(find_backend("ref")->host_threads());
  CHECK(find_backend("cpu")->schedule_suffix() == ".sched");
  CHECK(find_backend("opencl")->schedule_suffix() == ".opencl.sched");
  CHECK(find_backend("opencl")->has_hand_kernels());
  CHECK_FALSE(find_backend("cpu")->has_hand_kernels());
}

TEST_CASE("every backend that opens here agrees with the reference, naive and scheduled") {
  Session s;
  // A schedule every device can run: work-groups for OpenCL, a parallel loop and a vector
  // loop for the CPU (each device ignores what it does not use).
  const char* schedule = "split C.i 4\nbind C.i_0 group.x\nbind C.i_1 local.x\n";
  for (const char* sched : {"", schedule}) {
    tir::PrimFunc f = matmul(s, sched);
    std::vector<Tensor> in = inputs_for(f);
    Tensor want;
    std::string error;
    REQUIRE(tir::interpret(matmul(s), pointers(in), &want, &error));
    for (const auto& name : backend_names()) {
      Backend* b = find_backend(name);
      INFO("device ", name, ", schedule '", sched, "'");
      std::string why;
      if (!b->open(&why)) {
        MESSAGE(name << " cannot open here: " << why);
        continue;
      }
      std::unique_ptr<CompiledKernel> k;
      REQUIRE_MESSAGE(b->compile(f, BackendOptions{1, nullptr}, &k, &why), why);
      Tensor got;
      KernelTiming t;
      t.kernel_s = -1;
      REQUIRE_MESSAGE(k->run(pointers(in), &got, &t, &why), why);
      CHECK(t.kernel_s >= 0);
      CHECK(allclose(got, want, 1e-4, &why));
      // Running again reuses what was compiled and gives the same answer.
      Tensor again;
      REQUIRE(k->run(pointers(in), &again, nullptr, &why));
      CHECK(allclose(again, got, 0, &why));
      // A wrong shape is an error naming the argument, never a crash.
      Tensor wrong;
      REQUIRE(rand({3, 3}, 1, &wrong, &why));
      std::vector<const Tensor*> bad = {&wrong, &in[1]};
      CHECK_FALSE(k->run(bad, &got, nullptr, &why));
      CHECK(why.find("argument 1") != std::string::npos);
    }
  }
}

TEST_CASE("each backend's views come through the Session; a device without views refuses") {
  Session s;
  std::string error;
  REQUIRE(s.select_kernel("matmul", {{"n", 8}, {"k", 8}, {"m", 8}}, &error));
  std::vector<std::string> views;
  for (const auto& v : Session::kernel_views()) views.push_back(v.name);
  for (const char* v : {"tir", "tir-original", "c", "schedule", "llvm", "llvm-opt", "opencl"})
    CHECK_MESSAGE(has(views, v), v);
  CHECK(s.kernel_view("llvm").text.find("define") != std::string::npos);
  StageResult none = s.kernel_view("nope");
  CHECK_FALSE(none.ok);
  CHECK(none.text.find("unknown kernel view 'nope'") == 0);
  std::string text;
  CHECK_FALSE(reference_backend().view(matmul(s), "llvm", &text, &error));
  CHECK(error == "the ref backend has no view 'llvm'");
  std::unique_ptr<CompiledKernel> k;
  CHECK_FALSE(find_backend("cpu")->compile_hand(HandKernel{}, &k, &error));
  CHECK(error == "the cpu backend runs no hand-written kernels");
}

TEST_CASE("a new device is one registration: the Session, the graph runtime and the views take it") {
  Session s;
  register_backend(std::make_unique<FakeBackend>());
  CHECK(has(Session::devices(), "fake"));
  CHECK(Session::describe_devices().find("fake: a test device") != std::string::npos);

  // The kernel under the microscope runs on it, checked against the reference.
  std::string error;
  REQUIRE(s.select_kernel("matmul", {{"n", 8}, {"k", 8}, {"m", 8}}, &error));
  int before = fake_compiles;
  Session::KernelRun r = s.run_kernel("fake", /*check=*/true);
  CHECK_MESSAGE(r.ok, r.error);
  CHECK(r.checked);
  CHECK(fake_compiles == before + 1);
  CHECK(s.kernel_view("fake-code").text == "fake code for matmul\n");

  // Kernel calls from scalar code run on it.
  REQUIRE(s.set_device("fake", &error));
  CHECK(s.device() == "fake");
  std::string out;
  RunOptions opts;
  opts.out = [&](std::string_view t) { out += t; };
  // (Random data, so the graph's constant folding cannot compute it before it runs.)
  Outcome o = s.submit("x = rand([4, 4], 1)\nprint(sum_all(add(mul(x, zeros([4, 4])), ones([4, 4]))))",
                       "t.ds", opts);
  CHECK_MESSAGE(o.status == Outcome::Ok, o.message);
  CHECK(out == "16.0\n");
  CHECK(s.tensors().last_evaluation().device == "fake");
  CHECK(fake_compiles > before + 1);

  // An unknown device leaves the current one in place.
  CHECK_FALSE(s.set_device("tpu", &error));
  CHECK(error.find("unknown device 'tpu'") == 0);
  CHECK(error.find("fake") != std::string::npos);
  CHECK(s.device() == "fake");
}
