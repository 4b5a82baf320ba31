// The tensor suite of `descent bench` at quick scale: every column runs and is checked
// (against the reference interpreter at this scale), the rates and roof fractions are
// filled in, a column that cannot run here is a skipped record that says why, a broken
// schedule fails its cell with the reason, the progress bar counts every cell, bad options
// are errors. Nothing here asserts how fast anything is.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/roofline.h"
#include "bench/bench.h"
#include "bench/blas.h"
#include "gpu/runtime.h"

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

bool is_opencl(const BenchRecord& r) { return r.engine.rfind("opencl", 0) == 0; }

// A schedules directory holding copies of the shipped CPU schedules only.
fs::path cpu_schedules_only(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(schedules_dir())) {
    std::string f = e.path().filename().string();
    if (f.size() > 6 && f.substr(f.size() - 6) == ".sched" && f.find(".opencl.") == std::string::npos)
      fs::copy_file(e.path(), dir / f);
  }
  return dir;
}
}  // namespace

TEST_CASE("tensor suite: every workload on every column, checked, with rates") {
  std::string error;
  std::vector<std::string> progress;
  BenchOptions o = quick_tensor();
  o.progress = [&](std::string_view line) { progress.emplace_back(line); };
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  CHECK(tensor_workloads() == std::vector<std::string>{"vector_add", "matmul_128", "matmul_512",
                                                        "matmul_1024", "matmul_2048", "linear_relu",
                                                        "softmax", "softmax_1024", "layer_norm"});
  // 9 workloads x (ref once + cpu-naive, cpu-default and cpu-sched at 2 thread counts + the
  // 3 OpenCL columns once + the baseline at 2 thread counts)
  // + opencl-hand for the four matmul workloads (onnxruntime: only when asked for)
  REQUIRE(records.size() == 9 * (1 + 3 * 2 + 3 + 2) + 4);
  bool have_device = !descent::gpu::device_names().empty();
  int opencl_naive_ran = 0, cpu_default_ran = 0;
  for (const auto& r : records) {
    INFO(r.workload, " on ", r.engine, " x", r.threads, ": ", r.note);
    CHECK(r.suite == "tensor");
    std::string base =
        r.workload == "vector_add" || r.workload.rfind("softmax", 0) == 0 || r.workload == "layer_norm" ? "cpp"
                                                                                                         : "openblas";
    CHECK(r.baseline == base);
    CHECK(r.engine != (base == "cpp" ? "openblas" : "cpp"));
    if (r.skipped) {
      // Only the OpenCL columns may be skipped: without a device, or (opencl-sched) without
      // a schedule file for this workload.
      CHECK(is_opencl(r));
      CHECK_FALSE(r.checksum_ok);
      CHECK(r.note.find("skipped: ") == 0);
      if (have_device) CHECK(r.engine == "opencl-sched");
      if (have_device) CHECK(r.note.find("no schedule file") != std::string::npos);
      continue;
    }
    CHECK(r.checksum_ok);
    CHECK(r.expected == "matches the reference interpreter");
    CHECK(r.runs == 1);
    CHECK(r.threads >= 1);
    CHECK(r.gflops > 0);
    CHECK(std::isfinite(r.gflops));
    CHECK(r.gbs > 0);
    if (r.engine == "opencl-naive") ++opencl_naive_ran;
    if (r.engine == "cpu-default") ++cpu_default_ran;
    if (!is_opencl(r)) CHECK(r.roof_fraction > 0);
    // At the quick scale every workload's data fits in a cache: its roof is that level's.
    if (!is_opencl(r) && !detect_data_caches().empty()) {
      CHECK(r.roof_level.size() == 2);
      CHECK(r.roof_level[0] == 'L');
    }
    if (r.engine != "ref") CHECK(std::isfinite(r.ratio_vs_baseline));
    if (r.engine == base) CHECK(r.ratio_vs_baseline == doctest::Approx(1.0));
    // Build time apart from run time: every compiled column records its compile time.
    if (r.engine.find("naive") != std::string::npos || r.engine.find("sched") != std::string::npos ||
        r.engine.find("default") != std::string::npos)
      CHECK(r.compile_s > 0);
    else if (r.engine == "opencl-hand")
      CHECK(r.compile_s >= 0);  // the program build (0 when PoCL's cache already had it)
    else
      CHECK(std::isnan(r.compile_s));
  }
  CHECK(opencl_naive_ran == (have_device ? 9 : 0));
  CHECK(cpu_default_ran == 9 * 2);  // the rules schedule every workload's kernel, checked
  CHECK(all_ok(records));

  std::string table = format_tensor_table(records);
  CHECK(table.find("cpu-sched") != std::string::npos);
  CHECK(table.find("GFLOP/s") != std::string::npos);
  CHECK(table.find("compile") != std::string::npos);
  CHECK(table.find("time/base: median / the baseline's median (cpp for layer_norm, softmax, softmax_1024, "
                   "vector_add; openblas for linear_relu, matmul_1024, matmul_128, matmul_2048, matmul_512)") !=
        std::string::npos);
  CHECK(table.find("FAILED") == std::string::npos);

  // The progress bar: one line when each cell starts and one when it ends, counting up to
  // the total.
  std::vector<std::string> bar;
  for (const auto& l : progress)
    if (!l.empty() && l[0] == '[') bar.push_back(l);
  REQUIRE(bar.size() == 2 * records.size());
  CHECK(bar.front().find("[>                       ]   0/112 vector_add on ref x1 ...") == 0);
  CHECK(bar.back().find("[========================] 112/112 layer_norm on cpp x2: median ") == 0);
}

TEST_CASE("tensor suite: a missing OpenCL schedule skips its cell, a missing CPU one fails") {
  fs::path dir = cpu_schedules_only("descent-tensor-sched-missing");
  fs::remove(dir / "softmax.sched");
  BenchOptions o = quick_tensor();
  o.schedules_dir = dir.string();
  o.engines = {"cpu-sched", "opencl-sched"};
  o.workloads = {"softmax"};
  o.threads = {1};
  auto records = run_benchmarks(o, nullptr);
  REQUIRE(records.size() == 2);
  CHECK(records[0].engine == "cpu-sched");
  CHECK_FALSE(records[0].checksum_ok);
  CHECK_FALSE(records[0].skipped);
  CHECK(records[0].note.find("no schedule file") != std::string::npos);
  CHECK(records[0].note.find("softmax.sched") != std::string::npos);
  CHECK(records[1].engine == "opencl-sched");
  CHECK(records[1].skipped);
  CHECK(records[1].note.find("skipped: ") == 0);
  CHECK_FALSE(all_ok(records));  // the CPU cell failed
  CHECK(all_ok({records[1]}));   // a skipped cell alone is not a failure
  std::string table = format_tensor_table(records);
  CHECK(table.find("skipped") != std::string::npos);
  CHECK(table.find("FAILED") != std::string::npos);
  fs::remove_all(dir);
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
  CHECK(doc["records"][0]["compile_s"].get<double>() > 0);
  CHECK(doc["records"][0]["skipped"] == false);
  CHECK(doc["records"][1]["kind"] == "library");
  // The library says what it ran, in the JSON and as the CSV's last column; Descent's own
  // records leave it empty.
  CHECK(doc["records"][0]["library"] == "");
  std::string library = doc["records"][1]["library"];
  CHECK(library == blas_description());
  CHECK(header.find(",search_s,library") != std::string::npos);
  std::string blas_row;
  std::getline(in, blas_row);
  CHECK(blas_row.find(library) != std::string::npos);
}

TEST_CASE("tensor suite: an illegal shipped schedule fails its cell with the reason") {
  // matmul_128 has no schedule of its own: it falls back to the kernel's, matmul.sched.
  fs::path dir = fs::temp_directory_path() / "descent-tensor-sched-test";
  fs::create_directories(dir);
  std::ofstream(dir / "matmul.sched") << "split i 32\nvectorize r   # a reduction: refused\n";
  BenchOptions o = quick_tensor();
  o.schedules_dir = dir.string();
  o.engines = {"cpu-sched"};
  o.threads = {1};
  o.workloads = {"matmul_128"};
  auto records = run_benchmarks(o, nullptr);
  REQUIRE(records.size() == 1);
  CHECK_FALSE(records[0].checksum_ok);
  CHECK_FALSE(records[0].skipped);
  CHECK(records[0].note.find("matmul.sched") != std::string::npos);
  CHECK(records[0].note.find("line 2") != std::string::npos);
  CHECK(records[0].note.find("vectorize") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tensor suite: the onnxruntime column runs when asked for, checked, or says what is missing") {
  std::string error;
  BenchOptions o = quick_tensor();
  o.engines = {"onnxruntime"};
  o.workloads = {"softmax", "layer_norm"};
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  REQUIRE(records.size() == 2 * o.threads.size());
  for (const auto& r : records) {
    INFO(r.workload, " x", r.threads, ": ", r.note);
    CHECK(r.engine == "onnxruntime");
    if (r.skipped) {  // no python3, numpy, onnx or onnxruntime here: a note, never a failure
      CHECK((r.note.find("not installed") != std::string::npos ||
             r.note.find("python3") != std::string::npos));
      continue;
    }
    CHECK(r.checksum_ok);  // ONNX Runtime's Softmax / LayerNormalization, checked as any column
    CHECK(r.expected == "matches the reference interpreter");
    CHECK(r.note.rfind("ONNX Runtime ", 0) == 0);
    CHECK(r.median_s > 0);
  }
  // Not asked for: no column.
  o.engines = {};
  o.workloads = {"softmax"};
  for (const auto& r : run_benchmarks(o, &error)) CHECK(r.engine != "onnxruntime");
}

TEST_CASE("tensor suite: bad options are errors, not records") {
  std::string error;
  BenchOptions o = quick_tensor();
  o.engines = {"gpu"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error == "unknown tensor engine 'gpu' (engines: ref, cpu-naive, cpu-default, cpu-sched, "
                 "opencl-naive, opencl-default, opencl-sched, opencl-hand, openblas, cpp, onnxruntime)");
  o = quick_tensor();
  o.workloads = {"conv9d"};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error == "no workload 'conv9d' in suite 'tensor' (workloads: vector_add, matmul_128, "
                 "matmul_512, matmul_1024, matmul_2048, linear_relu, softmax, softmax_1024, layer_norm)");
  o = quick_tensor();
  o.threads = {0};
  CHECK(run_benchmarks(o, &error).empty());
  CHECK(error.find("thread counts") != std::string::npos);
}
