// The startup suite of `descent bench` at quick scale: `descent run` of print(1) as a whole
// process, checked for its output, with python3's median in the same run as the baseline.
// No time is asserted (tests/frontends/startup_test.cpp checks what the plugins make lazy).
#include <doctest/doctest.h>

#include <cmath>

#include "bench/bench.h"

using namespace descent::bench;

TEST_CASE("startup suite: each engine's whole process prints 1, against python3 in the same run") {
  BenchOptions o;
  o.suite = "startup";
  o.quick = true;
  o.repeats = 1;
  o.engines = {"ast", "native", "jit", "python3"};
  std::string error;
  auto records = run_benchmarks(o, &error);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(records.size() == 4);
  bool python = false;
  for (const auto& r : records) {
    INFO(r.engine << ": " << r.note);
    CHECK(r.suite == "startup");
    CHECK(r.workload == "print1");
    if (r.skipped) continue;  // python3 may be missing where the suite runs
    CHECK(r.checksum_ok);
    CHECK(r.output == "1");
    CHECK(r.runs == 3);  // at least 3 at quick scale, whatever --repeats says
    CHECK(r.median_s > 0);
    CHECK(std::isfinite(r.ratio_vs_baseline));  // python3 ran: every cell has a ratio
    python |= r.engine == "python3";
  }
  CHECK(python);
  // An unknown workload is an error, not an empty table.
  o.workloads = {"hello"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error == "unknown workload 'hello' in the startup suite (workloads: print1)");
}
