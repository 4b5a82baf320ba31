// Tensor code on the bytecode VMs (issue 15): tensor values are handles on the operand stack
// or in registers, every operation goes through the TensorRuntime with the walker's errors
// and locations, and the VMs collect garbage tensors at their safe points.
// (The tensor golden programs run on every engine in tests/programs_test.cpp.)
#include <doctest/doctest.h>

#include <string>

#include "pipeline/pipeline.h"
#include "tests/tensor/session_util.h"
#include "tensor/runtime.h"

using namespace descent;

namespace {

using descent::testing::contains;
using descent::testing::submit;

// The error (message and location) an engine gives for a failing tensor program.
std::string error_on(const std::string& engine, const std::string& source,
                     std::string* printed = nullptr) {
  Session s;
  REQUIRE(s.set_engine(engine));
  Outcome o = submit(s, source, printed);
  CHECK_MESSAGE(o.status == Outcome::RuntimeError, engine, ": ", o.message);
  CHECK(o.note.empty());
  return o.message;
}

const char* const kVMs[] = {"stack", "reg"};

}  // namespace

// The collector on the VMs (loops, frames, temporaries) is tested with the walker's, engine
// by engine, in tests/tensor/lifetime_test.cpp.

TEST_CASE("tensor errors on the VMs have the walker's messages and locations") {
  const char* const programs[] = {
      // a dimension below 1, before a later dimension's own error
      "z = 0\nn = 0\ns = [1, n, 5 / z]\n",
      // a shape index out of range, at the index
      "s = [2, 3]\nprint(s[1])\nprint(s[ 2 ])\n",
      // rank mismatch, at the tensor
      "t = ones([2, 3])\nprint(t[1])\n",
      // arange(0)
      "fn f(n: int) -> float {\n  return sum_all(arange(n))\n}\nx = f(0)\n",
      // a result of the wrong shape, at the returned value (named dims bound by the call)
      "fn f(x: f32[n, 4], m: int) -> f32[n, 4] {\n  return  ones([m, 4])\n}\n"
      "y = f(ones([3, 4]), 3)\nprint(y[2, 3])\ny = f(ones([3, 4]), 2)\n",
      // a kernel's shapes, inside a function, at the call
      "fn g(a: f32[n, k]) -> f32[n, k] {\n  b = ones([2, 2])\n  return add(a, b)\n}\n"
      "print(sum_all(g(ones([3, 3]))))\n",
      // zeros over the tensor limit
      "print(1)\nprint(sum_all(zeros([100000, 100000])))\n",
  };
  for (const char* p : programs) {
    CAPTURE(p);
    std::string ast_printed;
    std::string want = error_on("ast", p, &ast_printed);
    CHECK(contains(want, "<test>:"));
    for (const char* engine : kVMs) {
      CAPTURE(engine);
      std::string printed;
      CHECK(error_on(engine, p, &printed) == want);
      CHECK(printed == ast_printed);
    }
  }
}

TEST_CASE(":compare runs tensor code on the stack and reg VMs") {
  Session s;
  std::string printed;
  REQUIRE(submit(s, "fn scale(x: f32[n, n]) -> f32[n, n] {\n"
                    "  y = add(x, x)\n"
                    "  return y\n"
                    "}\n"
                    "t = scale(ones([2, 2]))\n"
                    "print(t.shape, t[1, 1], sum_all(t))\n",
                 &printed)
              .status == Outcome::Ok);
  CHECK(printed == "[2, 2] 2.0 8.0\n");
  int ran = 0;
  for (const auto& c : s.compare(RunOptions{})) {
    CAPTURE(c.engine);
    if (c.engine != "stack" && c.engine != "reg") continue;
    ++ran;
    CHECK(c.not_run.empty());
    CHECK(c.outcome.status == Outcome::Ok);
    CHECK(c.output == printed);
    CHECK(c.outcome.steps > 0);
  }
  CHECK(ran == 2);
}

TEST_CASE("the :stack and :reg listings show tensor code") {
  Session s;
  REQUIRE(submit(s, "fn f(x: f32[1, 4]) -> f32[1, 2] {\n"
                    "  return linear(x, ones([2, 4]))\n"
                    "}\n"
                    "y = f(rand([1, 4], 3))\n"
                    "print(y)\n")
              .status == Outcome::Ok);
  StageResult stack = s.stage("stack");
  REQUIRE(stack.ok);
  CHECK(contains(stack.text, "TENSOR                     rand"));
  CHECK(contains(stack.text, "TENSOR                     check args f 1"));
  CHECK(contains(stack.text, "TENSOR                     kernel linear 2"));
  CHECK(contains(stack.text, "TENSOR                     check result f"));
  CHECK(contains(stack.text, "SAFEPOINT"));
  StageResult reg = s.stage("reg");
  REQUIRE(reg.ok);
  CHECK(contains(reg.text, "tensor      "));
  CHECK(contains(reg.text, "kernel linear 2 ("));
  CHECK(contains(reg.text, "tcheck      check args f 1"));
  CHECK(contains(reg.text, "safepoint"));
}
