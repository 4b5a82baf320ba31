// The isa suite of `descent bench` (issue 38) on its smallest workload: the dynamic instruction
// count of fib(20) on x86_64, aarch64 and riscv64 at LLVM -O0 and -O2, and by the native
// backend for x86_64 and aarch64, under qemu-user
// (scripts/setup.sh installs the cross gcc and qemu). Counts are the targets' own, not times:
// what is asserted is that each run printed its checksum, that the start-up was subtracted,
// and that -O2 executes fewer instructions than -O0 on every target.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "bench/bench.h"

using namespace descent::bench;

namespace {
bool table_has_native(const std::vector<BenchRecord>& records) {
  return format_isa_table(records).find("native") != std::string::npos;
}
}  // namespace

TEST_CASE("isa suite: fib's instructions per target and level, checked, start-up subtracted") {
  BenchOptions o;
  o.suite = "isa";
  o.workloads = {"b1_fib"};
  o.programs_dir = DESCENT_BENCH_PROGRAMS_DIR;
  std::string error;
  auto records = run_benchmarks(o, &error);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(records.size() == 8);
  std::map<std::string, uint64_t> count;
  for (const auto& r : records) {
    INFO(r.engine << ": " << r.note);
    CHECK(r.suite == "isa");
    CHECK(r.checksum_ok);
    CHECK(r.output == "6765");
    CHECK(r.startup_s > 1000);  // the C library's start-up, measured apart
    CHECK(r.steps > 10000);     // fib(20): 21,891 calls
    CHECK(r.steps < 10000000);
    count[r.engine] = r.steps;
  }
  for (const char* arch : {"x86_64", "aarch64", "riscv64"}) {
    CAPTURE(arch);
    CHECK(count[std::string("llvm -O2 ") + arch] < count[std::string("llvm -O0 ") + arch]);
  }
  // The native backend: more than LLVM's -O2 (fib's calls pay for the depth counter and the
  // call check LLVM's code does not have), under 1.5x its -O0, on both targets.
  for (const char* arch : {"x86_64", "aarch64"}) {
    CAPTURE(arch);
    CHECK(count[std::string("native ") + arch] > count[std::string("llvm -O2 ") + arch]);
    CHECK(count[std::string("native ") + arch] * 2 < 3 * count[std::string("llvm -O0 ") + arch]);
  }
  CHECK(table_has_native(records));
  for (const auto& r : records)
    if (r.engine == "llvm -O2 x86_64") CHECK(r.ratio_vs_baseline == doctest::Approx(1.0));
  std::string table = format_isa_table(records);
  CHECK(table.find("workload") == 0);
  CHECK(table.find("aarch64") != std::string::npos);
  BenchOptions bad = o;
  bad.workloads = {"nope"};
  CHECK(run_benchmarks(bad, &error).empty());
  CHECK(error == "unknown workload 'nope' in the isa suite");
}
