// The benchmark bar chart (bench/plot.h): which records become bars, that bar heights follow
// the values on the log axis, the PNG file, and the errors. Records are made by hand: the
// chart is a pure function of them.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/plot.h"

using namespace descent::bench;
namespace fs = std::filesystem;

namespace {
BenchRecord rec(const std::string& workload, const std::string& engine, int threads,
                double gflops, bool ok = true) {
  BenchRecord r;
  r.suite = "tensor";
  r.workload = workload;
  r.engine = engine;
  r.scale = "full";
  r.threads = threads;
  r.gflops = gflops;
  r.median_s = 1.0 / gflops;
  r.runs = 1;
  r.checksum_ok = ok;
  return r;
}

// Pixels of exactly this colour (the bars' and the legend's swatches use the engine colours).
int count(const Image& img, uint8_t r, uint8_t g, uint8_t b) {
  int n = 0;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3)
    n += img.rgb[i] == r && img.rgb[i + 1] == g && img.rgb[i + 2] == b;
  return n;
}
const uint8_t kNaive[] = {140, 180, 230}, kSched[] = {30, 90, 180}, kBlas[] = {50, 160, 80},
              kClNaive[] = {250, 180, 110};
int count(const Image& img, const uint8_t* c) { return count(img, c[0], c[1], c[2]); }

PlotOptions opts() {
  PlotOptions o;
  o.machine = "test machine";
  return o;
}
}  // namespace

TEST_CASE("plot: one bar per passing (workload, engine), heights on a log scale") {
  std::vector<BenchRecord> records = {
      rec("matmul", "cpu-naive", 1, 1.0),    rec("matmul", "cpu-sched", 1, 100.0),
      rec("matmul", "openblas", 1, 100.0),   rec("add", "cpu-naive", 1, 1.0),
      rec("add", "cpu-sched", 1, 100.0),     rec("add", "openblas", 1, 100.0),
      rec("add", "opencl-naive", 2, 5, false),  // failed: no bar, no legend entry
  };
  Image img;
  std::string error;
  REQUIRE(render_plot(records, opts(), &img, &error));
  CHECK(error.empty());
  CHECK(img.width == 1600);
  CHECK(img.height == 900);
  CHECK(img.rgb.size() == size_t(1600) * 900 * 3);
  CHECK(img.pixel(0, 0) == std::vector<uint8_t>{255, 255, 255});
  int naive = count(img, kNaive), sched = count(img, kSched), blas = count(img, kBlas);
  CHECK(naive > 0);
  // Equal values draw equal bars (and equal legend swatches).
  CHECK(sched == blas);
  // 100 is two decades above 1: the taller bars hold many more pixels.
  CHECK(sched > 2 * naive);
  CHECK(count(img, kClNaive) == 0);

  // Per (workload, engine) the record at the highest thread count makes the bar: 2-thread
  // cpu-naive records at 100 replace the 1-thread ones at 1, and match cpu-sched's bars.
  records.push_back(rec("matmul", "cpu-naive", 2, 100.0));
  records.push_back(rec("add", "cpu-naive", 2, 100.0));
  Image two;
  REQUIRE(render_plot(records, opts(), &two, &error));
  CHECK(count(two, kNaive) == count(two, kSched));
}

TEST_CASE("plot: the time metric, the PNG file and the errors") {
  std::vector<BenchRecord> records = {rec("matmul", "cpu-naive", 1, 1.0),
                                      rec("matmul", "cpu-sched", 1, 10.0)};
  PlotOptions o = opts();
  o.metric = "time";
  o.width = 800;
  o.height = 450;
  Image img;
  std::string error;
  REQUIRE(render_plot(records, o, &img, &error));
  // Lower is better, and the slow naive run (1 s) is the taller bar now.
  CHECK(count(img, kNaive) > count(img, kSched));

  fs::path png = fs::temp_directory_path() / "descent-plot-test.png";
  fs::remove(png);
  REQUIRE(write_plot(records, png.string(), o, &error));
  std::ifstream in(png, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 33);
  CHECK(bytes.substr(0, 8) == "\x89PNG\r\n\x1a\n");
  CHECK(bytes.substr(12, 4) == "IHDR");
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
           (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
  };
  CHECK(be32(16) == 800);
  CHECK(be32(20) == 450);
  fs::remove(png);

  CHECK_FALSE(write_plot(records, "/nonexistent-dir/x.png", o, &error));
  CHECK(error == "cannot write the plot to '/nonexistent-dir/x.png'");
  CHECK_FALSE(render_plot({}, opts(), &img, &error));
  CHECK(error.find("nothing to plot") == 0);
  CHECK_FALSE(render_plot({rec("matmul", "cpu-naive", 1, 1.0, false)}, opts(), &img, &error));
  CHECK(error.find("nothing to plot") == 0);
  o.metric = "speed";
  CHECK_FALSE(render_plot(records, o, &img, &error));
  CHECK(error == "unknown plot metric 'speed' (metrics: gflops, time)");
  o = opts();
  o.width = 100;
  CHECK_FALSE(render_plot(records, o, &img, &error));
  CHECK(error == "plot size 100 x 900 is outside 320 x 240 .. 8192 x 8192");
}

TEST_CASE("plot: curves from a program's output (descent run --plot)") {
  std::string printed =
      "training\nepoch 1 loss 1.5\nepoch 2 loss 0.5 accuracy 0.8\nloss is a word\n"
      "epoch 3 loss 0.05 accuracy 0.9\nepoch four loss nan\ntest accuracy 0.95\n";
  std::vector<XYSeries> s = series_from_output(printed, {"loss", "accuracy", "absent"});
  REQUIRE(s.size() == 2);  // "absent" was never followed by a number
  CHECK(s[0].name == "loss");
  // x is the epoch on the line; "loss is" and "loss nan" are not points.
  CHECK(s[0].points == std::vector<std::pair<double, double>>{{1, 1.5}, {2, 0.5}, {3, 0.05}});
  // No epoch on the last line: its position among the series' points.
  CHECK(s[1].points == std::vector<std::pair<double, double>>{{2, 0.8}, {3, 0.9}, {3, 0.95}});

  XYPanel p;
  std::string error;
  REQUIRE(output_panel(printed, {"loss"}, "train.ds", &p, &error));
  CHECK(p.log_y);  // 1.5 down to 0.05: a factor of 30
  CHECK(p.x_label == "epoch");
  CHECK(p.title == "loss per epoch, as train.ds printed it");
  REQUIRE(output_panel("acc 0.5\nacc 0.6\n", {"acc"}, "a.ds", &p, &error));
  CHECK_FALSE(p.log_y);
  CHECK(p.x_label == "line printed");
  Image img;
  REQUIRE(render_panels("a.ds", "test machine", {p}, 640, 360, &img, &error));
  CHECK_FALSE(output_panel("hello\n", {"loss", "acc"}, "a.ds", &p, &error));
  CHECK(error == "the program printed no line with 'loss NUMBER', 'acc NUMBER' to plot");
}

TEST_CASE("plot: the bitmap font's metrics") {
  CHECK(text_width("", 2) == 0);
  CHECK(text_width("a", 1) == 5);
  CHECK(text_width("abc", 2) == (3 * 6 - 1) * 2);
}
