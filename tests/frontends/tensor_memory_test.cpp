// Issue 15 from the command line: `descent run --device/--threads/--tensor-limit`, and the
// REPL's :memory (the tensor memory report and the per-tensor limit).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sanitizer.h"
#include "frontend_util.h"

using fe::contains;

namespace {

// rand, not ones: kernels over constants are folded at compile time and never launch.
const char* kProgram = "a = rand([64, 32], 1)\n"
                       "b = rand([32, 16], 2)\n"
                       "c = relu(matmul(a, b))\n"
                       "print(c[3, 5])\n";

}  // namespace

TEST_CASE("run --device: the kernels run where it says, with the same result") {
  fe::TempDir dir;
  std::string path = dir.write("mm.ds", kProgram);
  std::vector<double> values;
  for (const char* device : {"ref", "cpu"}) {
    INFO("device " << std::string(device));
    auto r = fe::run_descent({"run", path, "--device", device, "--threads", "1", "--debug", "2"});
    INFO(fe::describe(r));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, std::string("matmul_relu on ") + device));
    values.push_back(std::stod(r.out));
  }
  CHECK(values[0] > 1.0);  // 32 products of two numbers in [0, 1)
  CHECK(std::abs(values[0] - values[1]) < 1e-4 * values[0]);
  auto bad = fe::run_descent({"run", path, "--device", "tpu"});
  CHECK(bad.exit_code == 64);
  CHECK(contains(bad.err, "error: --device: "));
  CHECK(contains(bad.err, "tpu"));
}

TEST_CASE("run --tensor-limit: a tensor over it is an error at its line; a bad size is usage") {
  fe::TempDir dir;
  std::string path = dir.write("big.ds", "x = ones([16, 16])\nprint(x[0, 0])\ny = zeros([1024, 1024])\nprint(1)\n");
  auto r = fe::run_descent({"run", path, "--tensor-limit", "1M"});
  INFO(fe::describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out == "1.0\n");
  CHECK(fe::check_diagnostic(r.err, path, 3, 5,
                             "zeros of shape [1024, 1024] would need 4.0 MiB, more than the tensor "
                             "limit of 1.0 MiB (set it with :memory LIMIT or --tensor-limit)",
                             "y = zeros([1024, 1024])") == "");
  auto ok = fe::run_descent({"run", path, "--tensor-limit", "4MiB"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "1.0\n1\n");
  auto bad = fe::run_descent({"run", path, "--tensor-limit", "lots"});
  CHECK(bad.exit_code == 64);
  CHECK(contains(bad.err, "'lots' is not a size"));
}

TEST_CASE(":memory reports live tensors and the collector; :memory LIMIT sets the limit") {
  auto r = fe::run_descent({}, "x = ones([1024, 1024])\n"
                               ":memory\n"
                               "for i in 0..20 {\n  t = ones([1024, 1024])\n}\n"
                               ":memory\n"
                               ":memory 2M\n"
                               "y = ones([1024, 1024])\n"
                               ":memory\n"
                               ":memory banana\n"
                               "print(x[1, 1])\n");
  INFO(fe::describe(r));
  CHECK(r.exit_code == 0);
  // After the first input: x (4 MiB), nothing collected yet beyond the end-of-run sweep.
  CHECK(contains(r.out, "tensors: 1 live, 4.0 MiB (peak 4.0 MiB)\n"));
  // After the loop: x and the last t are live; the loop's others were freed.
  CHECK(contains(r.out, "tensors: 2 live, 8.0 MiB"));
  CHECK(contains(r.out, "limit: 2.0 MiB per tensor\n"));
  CHECK(contains(r.err, "<repl:3>:1:5: error: ones of shape [1024, 1024] would need 4.0 MiB, "
                        "more than the tensor limit of 2.0 MiB"));
  CHECK(contains(r.err, "error: 'banana' is not a size"));
  CHECK(contains(r.out, "1.0\n"));
}

TEST_CASE("the process's peak memory: 2,000 dropped 4 MB tensors stay under 100 MB resident") {
  // Resident memory, not the runtime's own count: freed tensors must go back to the system,
  // not sit in the allocator (glibc kept 550 MB of them before large buffers were mapped).
  if (kUnderAddressSanitizer) return;  // ASan's shadow and quarantine dominate
  fe::TempDir dir;
  std::string path = dir.write("churn.ds", "total = 0.0\n"
                                           "for i in 0..2000 {\n"
                                           "  t = ones([1024, 1024])\n"
                                           "  total = total + t[i % 1024, 3]\n"
                                           "}\n"
                                           "print(total)\n");
  // Through peak_rss (fe::peak_kib), not fork() and wait4() here.
  int status = -1;
  long peak_kib = fe::peak_kib({"run", path}, "", dir.path("peak.txt"), &status);
  CHECK(status == 0);
  INFO("peak resident " << peak_kib / 1024 << " MiB");
  CHECK(peak_kib < 100 * 1024);
}
