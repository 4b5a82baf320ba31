// test_tensor_faults (issue 13): an allocation that fails inside the reference interpreter
// (a kernel's output, a loop nest's scratch buffer) or inside GraphRuntime::evaluate (a graph
// intermediate) is an error value, "out of memory allocating a tensor of shape [..]", and the
// runtime goes on to evaluate the next request.
//
// Deterministic whatever the machine: each case runs in a forked child whose address space is
// limited (setrlimit RLIMIT_AS, about 5.6 GiB), so a 60000 x 60000 f32 buffer (13.4 GiB, under
// the 2^32-element shape limit) cannot be allocated. Before the fix the interpreter's buffers
// were std::vectors and the child died of an uncaught std::bad_alloc (SIGABRT).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "../sanitizer.h"
#include "tensor/runtime.h"
#include "tests/tensor/kernel_util.h"

using namespace descent;
using namespace descent::tensor;

namespace {

constexpr rlim_t kLimitBytes = rlim_t(6000000) * 1024;
constexpr const char* kOom = "out of memory allocating a tensor of shape [60000, 60000]";

const char* kGenericMatmul = R"(
kernel matmul(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  C[i, j] = sum(k) A[i, k] * B[k, j]
  return C
}
)";

struct ChildResult {
  bool skipped = false;
  std::string report;  // what the body returned: "" when every check in it held
};

// Runs `body` in a forked child under the address-space limit. The child reports through a
// pipe; a child killed by a signal (an exception that escaped) fails the test here.
ChildResult run_limited(const std::function<std::string()>& body) {
  ChildResult r;
  if (kUnderAddressSanitizer) {
    MESSAGE("not run under AddressSanitizer (see tests/sanitizer.h)");
    r.skipped = true;
    return r;
  }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    alarm(120);  // never hang the test run
    rlimit lim{kLimitBytes, kLimitBytes};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(77);
    // Nothing may propagate into the forked copy of doctest (it would go on running tests).
    std::string report;
    try {
      report = body();
    } catch (const std::exception& e) {
      report = std::string("an exception escaped: ") + e.what();
    } catch (...) {
      report = "an exception escaped";
    }
    if (report.empty()) report = "ok";
    ssize_t ignored = write(fds[1], report.data(), report.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    MESSAGE("skipped: setrlimit(RLIMIT_AS) is not available");
    r.skipped = true;
    return r;
  }
  INFO("child report: " << got);
  REQUIRE_MESSAGE(!WIFSIGNALED(status), "the child died of signal " << WTERMSIG(status));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  r.report = got == "ok" ? "" : got;
  return r;
}

bool has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_SUITE("faults") {

TEST_CASE("interpreter: an output that cannot be allocated is an error, the next call runs") {
  // Lowered (and its inputs made) before the limit: only the interpreter's own buffers fail.
  tir::PrimFunc big = testing::lower_kernel_text(kGenericMatmul, {{60000, 1}, {1, 60000}});
  tir::PrimFunc small = testing::lower_kernel_text(kGenericMatmul, {{2, 3}, {3, 2}});
  Tensor a, b, x, y;
  std::string error;
  REQUIRE(zeros({60000, 1}, &a, &error));
  REQUIRE(zeros({1, 60000}, &b, &error));
  REQUIRE(ones({2, 3}, &x, &error));
  REQUIRE(ones({3, 2}, &y, &error));
  auto r = run_limited([&]() -> std::string {
    Tensor out;
    std::string why;
    if (tir::interpret(big, {&a, &b}, &out, &why)) return "the huge matmul succeeded";
    if (!has(why, kOom)) return "unexpected error: " + why;
    if (!tir::interpret(small, {&x, &y}, &out, &why)) return "the small matmul failed: " + why;
    if (out.shape != std::vector<int64_t>{2, 2} || out.data[0] != 3.0f)
      return "the small matmul is wrong";
    return "";
  });
  if (r.skipped) return;
  CHECK_MESSAGE(r.report.empty(), r.report);
}

TEST_CASE("interpreter: a scratch buffer that cannot be allocated is an error") {
  // Y is a scratch buffer of the nest; the output C is small.
  const char* text = R"(
kernel scratch(A: f32[n, k], B: f32[k, m]) -> f32[n] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i] = sum(j) Y[i, j]
  return C
}
)";
  tir::PrimFunc f = testing::lower_kernel_text(text, {{60000, 1}, {1, 60000}});
  Tensor a, b;
  std::string error;
  REQUIRE(zeros({60000, 1}, &a, &error));
  REQUIRE(zeros({1, 60000}, &b, &error));
  auto r = run_limited([&]() -> std::string {
    Tensor out;
    std::string why;
    if (tir::interpret(f, {&a, &b}, &out, &why)) return "the kernel succeeded";
    if (!has(why, kOom) || !has(why, "'Y'")) return "unexpected error: " + why;
    return "";
  });
  if (r.skipped) return;
  CHECK_MESSAGE(r.report.empty(), r.report);
}

TEST_CASE("GraphRuntime: a graph intermediate that cannot be allocated is an error, the runtime goes on") {
  auto program = testing::parse_and_check(kGenericMatmul);
  const KernelDecl& matmul = *program->kernel("matmul");
  auto r = run_limited([&]() -> std::string {
    GraphRuntime rt;
    rt.set_tensor_limit(size_t(1) << 40);  // past the limit check, to the failing allocation
    std::string why;
    int64_t a = 0, b = 0, v = 0, c = 0, e = 0;
    if (!rt.create(Builtin::Rand, {60000, 1}, {1}, &a, &why) ||
        !rt.create(Builtin::Rand, {1, 60000}, {2}, &b, &why) ||
        !rt.create(Builtin::Ones, {60000, 1}, {}, &v, &why))
      return "creating the inputs failed: " + why;
    // c (60000 x 60000) is only an intermediate: the request is e, 60000 x 1.
    if (!rt.call_kernel(matmul, {a, b}, &c, &why) || !rt.call_kernel(matmul, {c, v}, &e, &why))
      return "the calls failed: " + why;
    double got = 0;
    if (rt.element(e, {0, 0}, &got, &why)) return "the huge chain succeeded";
    if (!has(why, kOom)) return "unexpected error: " + why;
    // Asked again: the same error, not a stale or half-stored value.
    why.clear();
    if (rt.element(e, {0, 0}, &got, &why) || !has(why, kOom))
      return "second request: " + (why.empty() ? std::string("succeeded") : why);
    int64_t x = 0, y = 0, z = 0;
    if (!rt.create(Builtin::Ones, {2, 3}, {}, &x, &why) ||
        !rt.create(Builtin::Ones, {3, 2}, {}, &y, &why) ||
        !rt.call_kernel(matmul, {x, y}, &z, &why))
      return "small calls failed: " + why;
    double sum = 0;
    if (!rt.sum_all(z, &sum, &why)) return "the small chain failed: " + why;
    if (sum != 12.0) return "the small chain is wrong: " + std::to_string(sum);
    return "";
  });
  if (r.skipped) return;
  CHECK_MESSAGE(r.report.empty(), r.report);
}

}  // TEST_SUITE
