// The tune suite of `descent bench` at quick scale: each workload's search runs with its
// yardsticks, every column is checked against the reference interpreter by the tuner's
// measurer, the tuned time is never worse than the default's (the default is a candidate),
// the strategies workload compares random and evolutionary, bad options are errors. Nothing
// here asserts how fast anything is, or how good a search is.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "bench/bench.h"
#include "bench/plot.h"

using namespace descent::bench;

namespace {
BenchOptions quick_tune(std::vector<std::string> workloads) {
  BenchOptions o;
  o.suite = "tune";
  o.quick = true;
  o.repeats = 1;
  o.threads = {1};
  o.workloads = std::move(workloads);
  return o;
}
const BenchRecord* find(const std::vector<BenchRecord>& rs, const std::string& workload,
                        const std::string& engine) {
  for (const auto& r : rs)
    if (r.workload == workload && r.engine == engine) return &r;
  return nullptr;
}
}  // namespace

TEST_CASE("tune suite: a search from the naive nest, with the default and hand schedules beside it") {
  CHECK(tune_workloads() == std::vector<std::string>{"matmul_1024", "linear_relu", "softmax_1024",
                                                      "conv2d", "linear_relu_opencl", "strategies"});
  std::string error;
  std::vector<std::string> progress;
  BenchOptions o = quick_tune({"linear_relu", "conv2d"});
  o.progress = [&](std::string_view line) { progress.emplace_back(line); };
  auto records = run_benchmarks(o, &error);
  CHECK(error.empty());
  REQUIRE(records.size() == 8);  // 2 workloads x naive, default, sched, tuned at 1 thread
  for (const auto& r : records) {
    INFO(r.workload << " " << r.engine << ": " << r.note);
    CHECK(r.suite == "tune");
    CHECK(r.scale == "quick");
    CHECK(r.threads == 1);
    if (r.workload == "conv2d" && r.engine == "cpu-sched") {
      CHECK(r.skipped);  // no hand schedule for it
      CHECK(r.note == "no hand schedule for this workload");
      continue;
    }
    CHECK(r.checksum_ok);
    CHECK(r.median_s > 0);
    CHECK(r.gflops > 0);
  }
  for (const std::string w : {"linear_relu", "conv2d"}) {
    const BenchRecord* tuned = find(records, w, "cpu-tuned");
    const BenchRecord* def = find(records, w, "cpu-default");
    REQUIRE(tuned);
    REQUIRE(def);
    CHECK(tuned->median_s <= def->median_s);
    CHECK(tuned->trials >= 1);
    CHECK(tuned->trials <= 4);  // the quick scale's trials
    CHECK(tuned->search_s > 0);
  }
  // Ratios: against the hand schedule where there is one, else the default.
  CHECK(find(records, "linear_relu", "cpu-tuned")->baseline == "cpu-sched");
  CHECK(find(records, "conv2d", "cpu-tuned")->baseline == "cpu-default");
  CHECK(find(records, "linear_relu", "cpu-sched")->ratio_vs_baseline == doctest::Approx(1));
  // The progress bar counts candidates.
  CHECK(std::any_of(progress.begin(), progress.end(), [](const std::string& l) {
    return l.rfind("[", 0) == 0 && l.find("linear_relu (1 thread): candidate 1") != std::string::npos;
  }));
  std::string table = format_tune_table(records);
  CHECK(table.find("cpu-tuned") != std::string::npos);
  CHECK(table.find("conv2d on cpu-sched (1 thread): no hand schedule for this workload") != std::string::npos);
}

TEST_CASE("tune suite: the strategies compared over seeds") {
  std::string error;
  auto records = run_benchmarks(quick_tune({"strategies"}), &error);
  CHECK(error.empty());
  REQUIRE(records.size() == 2);
  const BenchRecord* r = find(records, "strategies", "cpu-random");
  const BenchRecord* e = find(records, "strategies", "cpu-evolutionary");
  REQUIRE(r);
  REQUIRE(e);
  CHECK(r->checksum_ok);
  CHECK(e->checksum_ok);
  CHECK(r->runs == 2);  // two seeds at quick scale
  CHECK(r->trials == 4);
  CHECK(e->trials >= 1);
  CHECK(e->trials <= 5);  // 5: never reached within its 4 trials
  CHECK(r->ratio_vs_baseline == doctest::Approx(1));
}

TEST_CASE("tune suite: bad options, and 'all' leaves it out") {
  std::string error;
  auto records = run_benchmarks(quick_tune({"nope"}), &error);
  CHECK(records.empty());
  CHECK(error.find("no workload 'nope' in suite 'tune'") != std::string::npos);
  auto s = suites();
  CHECK(std::find(s.begin(), s.end(), "tune") != s.end());
}

TEST_CASE("plot: line and scatter panels") {
  XYPanel a{"best so far", "trials", "GFLOP/s", false, true,
            {{"random", {{1, 2.0}, {2, 3.0}, {3, 30.0}}, true}}};
  XYPanel b{"model", "score", "GFLOP/s", false, false,
            {{"evolutionary", {{0.1, 1.0}, {0.5, 2.0}}, false}}};
  Image img;
  std::string error;
  REQUIRE(render_panels("title", "machine", {a, b}, 800, 450, &img, &error));
  CHECK(img.width == 800);
  // Both series' colours are drawn somewhere (the first palette entries: blue, orange).
  std::set<std::vector<uint8_t>> colours;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) colours.insert(img.pixel(x, y));
  CHECK(colours.count({30, 90, 180}) == 1);
  CHECK(colours.count({220, 100, 20}) == 1);
  // Nothing to draw, or no room, is an error, not a blank picture.
  CHECK_FALSE(render_panels("t", "m", {}, 800, 450, &img, &error));
  CHECK(error == "nothing to plot");
  XYPanel empty{"empty", "x", "y", false, true, {{"s", {{1, 0.0}}, true}}};  // 0 on a log axis
  CHECK_FALSE(render_panels("t", "m", {empty}, 800, 450, &img, &error));
  CHECK(error == "the chart 'empty' has no point to draw");
  CHECK_FALSE(render_panels("t", "m", {a}, 100, 100, &img, &error));
  // The tuner's panels: none without a search; the model chart only where a model predicted.
  CHECK(tune_panels({}).empty());
  descent::tune::SearchResult sr;
  sr.candidates.resize(2);
  sr.candidates[0].ok = sr.candidates[1].ok = true;
  sr.candidates[0].seconds = 2e-3;
  sr.candidates[1].seconds = 1e-3;
  sr.best_so_far = {2e-3, 1e-3};
  auto panels = tune_panels({{"random", 2e6, &sr}});
  REQUIRE(panels.size() == 1);
  REQUIRE(panels[0].series.size() == 1);
  CHECK(panels[0].series[0].points ==
        std::vector<std::pair<double, double>>{{1, 1.0}, {2, 2.0}});  // GFLOP/s of the best so far
  sr.candidates[1].has_prediction = true;
  sr.candidates[1].predicted = 0.7;
  panels = tune_panels({{"evolutionary", 2e6, &sr}});
  REQUIRE(panels.size() == 2);
  CHECK(panels[1].series[0].points == std::vector<std::pair<double, double>>{{0.7, 2.0}});
  // The nest as lowered and the default schedule: flat lines across the curve's width.
  panels = tune_panels({{"random", 2e6, &sr, 4e-3, 1.25e-3}});
  REQUIRE(panels[0].series.size() == 3);
  CHECK(panels[0].series[1].name == "as lowered");
  CHECK(panels[0].series[1].points == std::vector<std::pair<double, double>>{{1, 0.5}, {2, 0.5}});
  CHECK(panels[0].series[2].name == "default schedule");
  CHECK(panels[0].series[2].points == std::vector<std::pair<double, double>>{{1, 1.6}, {2, 1.6}});
  // Two searches: each reference line says whose it is.
  panels = tune_panels({{"random", 2e6, &sr, 4e-3, 0}, {"beam", 2e6, &sr, 0, 0}});
  CHECK(panels[0].series[1].name == "as lowered (random)");  // after random's own line
}
