// Ctrl-C inside a compiled CPU kernel (issue 13, defect 2): the generated code polls the
// interrupt flag in its coarse loops, every parallel worker stops, run() fails with
// "interrupted" and leaves the output alone, and a Session goes on afterwards.
//
// The kernels are big matmuls that would run for many seconds: a run that came back
// "interrupted" stopped early (a finished run reports success), so no wall-time bound is
// asserted.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "cpu/cpu.h"
#include "tensor/tensor.h"
#include "tests/tensor/kernel_util.h"
#include "tensor/tir.h"

using namespace descent;
using descent::tensor::Tensor;

namespace {

// n x n x n: about 3.4 G multiply-adds, tens of seconds unscheduled on one core.
constexpr int64_t kBig = 1500;

tir::PrimFunc big_matmul(const Session& s, std::string_view schedule) {
  tir::PrimFunc f;
  std::string error;
  REQUIRE_MESSAGE(s.lower_kernel("matmul", {{"n", kBig}, {"k", kBig}, {"m", kBig}}, schedule, &f, &error),
                  error);
  return f;
}

using testing::inputs_for;

// Sets *flag after `ms` milliseconds, on its own thread (as a signal handler would).
struct SetLater {
  std::thread t;
  SetLater(std::atomic<bool>* flag, int ms)
      : t([flag, ms] {
          std::this_thread::sleep_for(std::chrono::milliseconds(ms));
          flag->store(true);
        }) {}
  ~SetLater() { t.join(); }
};

}  // namespace

TEST_CASE("a CPU kernel stops when the interrupt flag is set, and publishes nothing") {
  Session s;
  struct Case {
    const char* schedule;
    int threads;
  };
  for (Case c : {Case{"", 1}, Case{"parallel i", 2}}) {
    CAPTURE(c.schedule);
    tir::PrimFunc f = big_matmul(s, c.schedule);
    std::vector<Tensor> in = inputs_for(f);
    std::vector<const Tensor*> args = testing::pointers(in);
    std::atomic<bool> stop{false};
    cpu::CpuOptions options;
    options.threads = c.threads;
    options.interrupt = &stop;
    std::unique_ptr<cpu::CpuKernel> k;
    std::string error;
    REQUIRE_MESSAGE(cpu::compile_cpu(f, options, &k, &error), error);
    // The polls are there: in the entry, and in the worker for the parallel schedule.
    CHECK(k->llvm_ir().find("load atomic i8") != std::string::npos);

    // Of the same shape as the output: a reusable buffer, which must stay as it was.
    Tensor out;
    REQUIRE(tensor::full({kBig, kBig}, 7.0f, &out, &error));

    SUBCASE("set before the call: nothing runs") {
      stop = true;
      CHECK_FALSE(k->run(args, &out, &error));
      CHECK(error == "interrupted");
    }
    SUBCASE("set from another thread while the kernel runs") {
      {
        SetLater later(&stop, 50);
        CHECK_FALSE(k->run(args, &out, &error));
      }
      CHECK(error == "interrupted");
    }
    CHECK(out.shape == std::vector<int64_t>{kBig, kBig});
    bool untouched = true;
    for (size_t i = 0; i < out.data.size(); ++i) untouched = untouched && out.data[i] == 7.0f;
    CHECK(untouched);
  }
}

TEST_CASE("the cpu backend passes BackendOptions::interrupt to the generated code") {
  Session s;
  tir::PrimFunc f = big_matmul(s, "parallel i");
  std::vector<Tensor> in = inputs_for(f);
  std::vector<const Tensor*> args = testing::pointers(in);
  std::atomic<bool> stop{false};
  tensor::BackendOptions options;
  options.threads = 2;
  options.interrupt = &stop;
  std::unique_ptr<tensor::CompiledKernel> k;
  std::string error;
  REQUIRE_MESSAGE(tensor::find_backend("cpu")->compile(f, options, &k, &error), error);
  Tensor out;
  {
    SetLater later(&stop, 50);
    CHECK_FALSE(k->run(args, &out, nullptr, &error));
  }
  CHECK(error == "interrupted");
  CHECK(out.data.size() == 0);  // nothing published
}

TEST_CASE("without a flag the polls read one that is never set: results are unchanged") {
  Session s;
  tir::PrimFunc f;
  std::string error;
  REQUIRE(s.lower_kernel("matmul", {{"n", 64}, {"k", 48}, {"m", 80}}, "parallel i", &f, &error));
  std::vector<Tensor> in = inputs_for(f);
  std::vector<const Tensor*> args = testing::pointers(in);
  Tensor want;
  REQUIRE_MESSAGE(tir::interpret(f, args, &want, &error), error);
  cpu::CpuOptions options;
  options.threads = 2;
  std::unique_ptr<cpu::CpuKernel> k;
  REQUIRE_MESSAGE(cpu::compile_cpu(f, options, &k, &error), error);
  Tensor got;
  REQUIRE_MESSAGE(k->run(args, &got, &error), error);
  std::string why;
  CHECK_MESSAGE(tensor::allclose(want, got, 1e-4, &why), why);
  std::vector<float> raw(got.data.size(), -1.0f);
  k->run_raw({in[0].data.data(), in[1].data.data()}, raw.data());
  CHECK(raw == std::vector<float>(got.data.data(), got.data.data() + got.data.size()));
}

TEST_CASE("Session on the cpu device: Ctrl-C in a kernel is an error at the call; the session goes on") {
  Session s;
  std::string error;
  REQUIRE_MESSAGE(s.set_device("cpu", &error), error);
  std::string printed;
  RunOptions o;
  o.out = [&](std::string_view t) { printed += t; };
  Outcome r;
  {
    SetLater later(&s.interrupt_flag(), 50);
    r = s.submit("a = rand([1500, 1500], 1)\nc = matmul(a, a)\nprint(sum_all(c))\n", "big.ds", o);
  }
  CHECK(r.status == Outcome::RuntimeError);
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].message == "interrupted");
  CHECK(r.diagnostics[0].loc.line == 3);  // the evaluation print(sum_all(c)) asked for
  CHECK(printed.empty());

  r = s.submit("b = rand([4, 4], 2)\nprint(sum_all(relu(matmul(b, b))) >= 0.0)\n", "small.ds", o);
  CHECK_MESSAGE(r.status == Outcome::Ok, r.message);
  CHECK(printed == "true\n");
}
