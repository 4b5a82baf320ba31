// The tensor suite of `descent bench` at quick scale: every column runs and is checked
// (against the reference interpreter at this scale), the rates and roof fractions are
// filled in, a broken schedule fails its cell with the reason, bad options are errors.
// Nothing here asserts how fast anything is.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench.h"

using namespace descent::bench;
namespace fs = std::filesystem;

namespace {
BenchOptions quick_tensor() {
  BenchOptions o;
  o.suite = "tensor";
  o.quick = true;
  o.repeats = 1;
  o.threads = {1, 2};
  return o;
}
}  // namespace

TEST_CASE("tensor suite: every workload on every column, checked, with rates") {
  std::string error;
  auto records = run_benchmarks(quick_tensor(), &error);
  CHECK(error.empty());
  // 2 workloads x (ref once + 3 columns x 2 thread counts)
  REQUIRE(records.size() == 2 * (1 + 3 * 2));
  for (const auto& r : records) {
    INFO(r.workload, " on ", r.engine, " x", r.threads, ": ", r.note);
    CHECK(r.suite == "tensor");
    CHECK(r.checksum_ok);
    CHECK(r.runs == 1);
    CHECK(r.threads >= 1);
    CHECK(r.gflops > 0);
    CHECK(std::isfinite(r.gflops));
    CHECK(r.gbs > 0);
    CHECK(r.roof_fraction > 0);
    CHECK(r.baseline == "openblas");
    if (r.engine != "ref") CHECK(std::isfinite(r.ratio_vs_baseline));
    if (r.engine == "openblas") CHECK(r.ratio_vs_baseline == doctest::Approx(1.0));
  }
  std::string table = format_tensor_table(records);
  CHECK(table.find("cpu-sched") != std::string::npos);
  CHECK(table.find("GFLOP/s") != std::string::npos);
  CHECK(table.find("FAILED") == std::string::npos);
}

TEST_CASE("tensor suite: CSV and JSON carry threads, gflops and the roof fraction") {
  BenchOptions o = quick_tensor();
  o.engines = {"cpu-sched", "openblas"};
  o.workloads = {"linear_relu"};
  o.threads = {1};
  auto records = run_benchmarks(o, nullptr);
  REQUIRE(records.size() == 2);
  std::string csv = to_csv(records);
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  CHECK(header.find(",threads,gflops,gbs,roof_fraction") != std::string::npos);
  CHECK(row.find("tensor,linear_relu,cpu-sched,descent,quick,") == 0);
  auto doc = nlohmann::json::parse(to_json(records));
  CHECK(doc["records"][0]["threads"] == 1);
  CHECK(doc["records"][0]["gflops"].get<double>() > 0);
}

TEST_CASE("tensor suite: an illegal shipped schedule fails its cell with the reason") {
  fs::path dir = fs::temp_directory_path() / "descent-tensor-sched-test";
  fs::create_directories(dir);
  std::ofstream(dir / "matmul.sched") << "split i 32\nvectorize r   # a reduction: refused\n";
  std::ofstream(dir / "linear_relu.sched") << "";
  BenchOptions o = quick_tensor();
  o.schedules_dir = dir.string();
  o.engines = {"cpu-sched"};
  o.threads = {1};
  o.workloads = {"matmul"};
  auto records = run_benchmarks(o, nullptr);
  REQUIRE(records.size() == 1);
  CHECK_FALSE(records[0].checksum_ok);
  CHECK(records[0].note.find("line 2") != std::string::npos);
  CHECK(records[0].note.find("vectorize") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tensor suite: bad options are errors, not records") {
  std::string error;
  BenchOptions o = quick_tensor();
  o.engines = {"gpu"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("unknown tensor engine 'gpu'") != std::string::npos);
  o = quick_tensor();
  o.workloads = {"conv9d"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("no workload 'conv9d'") != std::string::npos);
  o = quick_tensor();
  o.threads = {0};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("thread counts") != std::string::npos);
}
