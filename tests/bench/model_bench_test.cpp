// The model suite of `descent bench` at quick scale: the imported MLPs run on the chosen
// columns and every output is checked against the reference interpreter; the Python
// yardsticks are columns when NumPy is there and a note (never a failure) when it is not;
// bad options are errors. Nothing here asserts how fast anything is.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/bench.h"

using namespace descent::bench;
namespace fs = std::filesystem;

namespace {

BenchOptions quick_model() {
  BenchOptions o;
  o.suite = "model";
  o.quick = true;
  o.repeats = 2;
  o.threads = {1};
  return o;
}

// PATH set to `dir` first for the lifetime of the object.
struct PathFirst {
  std::string old;
  explicit PathFirst(const fs::path& dir) {
    const char* p = std::getenv("PATH");
    old = p ? p : "";
    setenv("PATH", (dir.string() + ":" + old).c_str(), 1);
  }
  ~PathFirst() { setenv("PATH", old.c_str(), 1); }
};

}  // namespace

TEST_CASE("model suite: the Descent columns run the imported MLPs and match the reference") {
  BenchOptions o = quick_model();
  o.engines = {"cpu-ast", "cpu-stack", "cpu-reg", "cpu-jit"};
  std::string error;
  auto records = run_model_benchmarks(o, &error);
  CHECK(error == "");
  REQUIRE(records.size() == model_workloads().size() * o.engines.size());
  for (const auto& r : records) {
    CAPTURE(r.workload);
    CAPTURE(r.engine);
    CHECK(r.suite == "model");
    CHECK_MESSAGE(r.checksum_ok, r.note);
    CHECK(r.runs == 2);
    CHECK(r.median_s > 0);
    CHECK(r.gflops > 0);
    CHECK(r.threads == 1);
    CHECK(r.output.rfind("tensor([", 0) == 0);
  }
  // The batch is in the output's shape: 64 rows for the _b64 workloads.
  for (const auto& r : records)
    if (r.workload == "mnist_b64") CHECK(r.output.rfind("tensor([64, 10]", 0) == 0);
  std::string table = format_model_table(records);
  CHECK(table.find("mnist_b64   cpu-jit") != std::string::npos);  // aligned under digits_b64
  CHECK(table.find("FAIL") == std::string::npos);
}

TEST_CASE("model suite: OpenCL is a column where there is a device, a skip with the reason where not") {
  BenchOptions o = quick_model();
  o.engines = {"opencl-ast"};
  o.workloads = {"digits_b1"};
  o.threads = {1, 2};
  std::string error;
  auto records = run_model_benchmarks(o, &error);
  CHECK(error == "");
  REQUIRE(records.size() == 1);  // once, not once per thread count
  const auto& r = records[0];
  if (r.skipped) {
    CHECK(r.note.find("device opencl is not available here") != std::string::npos);
  } else {
    CHECK_MESSAGE(r.checksum_ok, r.note);
    CHECK(r.threads == 0);
  }
}

TEST_CASE("model suite: without NumPy the yardsticks are a note, never a failure") {
  // A python3 that cannot import NumPy: Debian's python3 without its site packages.
  fs::path dir = fs::temp_directory_path() / ("descent-no-numpy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "python3");
    f << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  }
  fs::permissions(dir / "python3", fs::perms::owner_all);
  PathFirst path(dir);
  BenchOptions o = quick_model();
  o.engines = {"cpu-ast", "numpy", "onnxruntime"};
  o.workloads = {"digits_b1"};
  std::vector<std::string> progress;
  o.progress = [&](std::string_view line) { progress.emplace_back(line); };
  std::string error;
  auto records = run_model_benchmarks(o, &error);
  CHECK(error == "");
  REQUIRE(records.size() == 1);
  CHECK(records[0].engine == "cpu-ast");
  CHECK(records[0].checksum_ok);
  bool said = false;
  for (const auto& l : progress) said = said || l.find("numpy is not installed") != std::string::npos;
  CHECK(said);
  fs::remove_all(dir);
}

TEST_CASE("model suite: with NumPy its column is checked like the others") {
  // Runs only where the python3 on PATH has NumPy (a developer machine; CI's python3 has none).
  if (std::system("python3 -c 'import numpy' > /dev/null 2>&1") != 0) {
    MESSAGE("python3 has no numpy here: the numpy column is not tested");
    return;
  }
  BenchOptions o = quick_model();
  o.engines = {"cpu-ast", "numpy"};
  o.workloads = {"mnist_b1"};
  std::string error;
  auto records = run_model_benchmarks(o, &error);
  CHECK(error == "");
  REQUIRE(records.size() == 2);
  CHECK(records[1].engine == "numpy");
  CHECK_MESSAGE(records[1].checksum_ok, records[1].note);
  CHECK(records[1].kind == "external");
  CHECK(records[0].baseline == "numpy");
  CHECK(std::isfinite(records[0].ratio_vs_baseline));
}

TEST_CASE("model suite: bad options are errors, not records") {
  BenchOptions o = quick_model();
  o.engines = {"cpu-fast"};
  std::string error;
  CHECK(run_model_benchmarks(o, &error).empty());
  CHECK(error.find("no engine 'cpu-fast' in suite 'model' (engines: cpu-ast, cpu-stack") != std::string::npos);
  o = quick_model();
  o.workloads = {"resnet50"};
  CHECK(run_model_benchmarks(o, &error).empty());
  CHECK(error.find("no workload 'resnet50' in suite 'model' (workloads: digits_b1, digits_b64, mnist_b1, mnist_b64)") !=
        std::string::npos);
  // The suite is listed with the others.
  auto s = suites();
  CHECK(std::find(s.begin(), s.end(), "model") != s.end());
}
