// The analysis suite of `descent bench` at quick scale: every workload in every domain, each
// against the front end of the same program, checked; no time is asserted.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/value.h"
#include "bench/bench.h"

using namespace descent::bench;

TEST_CASE("analysis suite: every workload in every domain, with the front end as its baseline") {
  BenchOptions o;
  o.suite = "analysis";
  o.quick = true;
  o.repeats = 1;
  o.programs_dir = DESCENT_BENCH_PROGRAMS_DIR;
  std::string error;
  auto records = run_benchmarks(o, &error);
  REQUIRE_MESSAGE(error.empty(), error);
  CHECK(records.size() == analysis_workloads().size() * descent::analysis::all_domains().size());
  std::set<std::string> workloads, domains;
  for (const auto& r : records) {
    INFO(r.workload << " " << r.engine << ": " << r.note);
    CHECK(r.suite == "analysis");
    CHECK(r.checksum_ok);
    CHECK(r.runs == 1);
    CHECK(r.median_s > 0);
    CHECK(r.compile_s > 0);
    CHECK(std::isfinite(r.ratio_vs_baseline));
    CHECK(r.steps >= 1);  // interprocedural rounds
    workloads.insert(r.workload);
    domains.insert(r.engine);
  }
  CHECK(workloads.size() == analysis_workloads().size());
  std::set<std::string> every_domain;
  for (descent::analysis::Domain d : descent::analysis::all_domains())
    every_domain.insert(descent::analysis::domain_name(d));
  CHECK(every_domain.count("congruences") == 1);  // the list is the analysis's own, all six
  CHECK(domains == every_domain);
  std::string table = format_analysis_table(records);
  CHECK(table.find("workload") == 0);
  CHECK(table.find("big_program") != std::string::npos);
  CHECK(table.find("time/base: median / front end") != std::string::npos);
  // A suite of its own, listed with the others (run_benchmarks's "all" leaves it out, as the
  // tune suite).
  const auto names = suites();
  CHECK(std::find(names.begin(), names.end(), "analysis") != names.end());
  BenchOptions bad = o;
  bad.workloads = {"nope"};
  CHECK(run_benchmarks(bad, &error).empty());
  CHECK(error == "unknown workload 'nope' in the analysis suite");
}
