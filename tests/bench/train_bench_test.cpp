// The train suite of `descent bench` at quick scale: the Descent columns train the digits MLP
// for an epoch and report its first-epoch loss, checked against NumPy's (the same model, the
// same weights and batches, the backward pass written by hand) when NumPy is there; bad
// options are errors. Nothing here asserts how fast anything is.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "bench/bench.h"

using namespace descent::bench;

namespace {

BenchOptions quick_train() {
  BenchOptions o;
  o.suite = "train";
  o.quick = true;
  o.threads = {1};
  o.workloads = {"digits_train"};
  return o;
}

}  // namespace

TEST_CASE("train suite: an epoch on the Descent columns, its loss checked") {
  BenchOptions o = quick_train();
  o.engines = {"cpu-ast", "cpu-reg", "numpy"};
  std::string error;
  auto records = run_train_benchmarks(o, &error);
  CHECK(error == "");
  REQUIRE(records.size() >= 2);
  bool numpy = false;
  for (const auto& r : records) numpy = numpy || r.engine == "numpy";
  for (const auto& r : records) {
    CAPTURE(r.engine);
    CHECK(r.suite == "train");
    CHECK(r.workload == "digits_train");
    CHECK(r.runs == 1);
    CHECK(r.median_s > 0);
    CHECK_MESSAGE(r.checksum_ok, r.note);
    double loss = std::strtod(r.output.c_str(), nullptr);
    // From these weights the first epoch's mean cross-entropy is about 0.9: below ln(10)
    // (chance) and far from 0.
    CHECK(loss > 0.3);
    CHECK(loss < 2.3);
    if (numpy) CHECK(r.expected.find("NumPy's first-epoch loss") == 0);
  }
  // Both Descent engines printed the same first epoch: the same kernels ran.
  CHECK(records[0].output == records[1].output);
  std::string table = format_train_table(records);
  CHECK(table.find("digits_train") != std::string::npos);
  CHECK(table.find("per epoch") != std::string::npos);
}

TEST_CASE("train suite: unknown engines and workloads are errors") {
  BenchOptions o = quick_train();
  o.engines = {"gpu-magic"};
  std::string error;
  CHECK(run_train_benchmarks(o, &error).empty());
  CHECK(error.find("no engine 'gpu-magic' in suite 'train'") != std::string::npos);
  o = quick_train();
  o.workloads = {"imagenet"};
  CHECK(run_train_benchmarks(o, &error).empty());
  CHECK(error.find("digits_train") != std::string::npos);
}
