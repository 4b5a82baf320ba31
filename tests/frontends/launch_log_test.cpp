// The kernel launch log (`:debug 2`, `descent run --debug 2`, tinygrad's DEBUG=2) and the
// `:time` breakdown by stage and kernel. Nothing here bounds a time: the checks are the
// lines' shape, the kernels and devices they name, and that the rates they print are the
// kernel's counted work over the time they print.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>

#include "apps/repl.h"
#include "frontend_util.h"
#include "tensor/launch.h"
#include "tensor/tir.h"

using descent::Session;
using fe::contains;

namespace {

// Two evaluations of 32 x 32 kernels in one input: matmul, then add.
const char* kProgram =
    "a = rand([32, 32], 1)\n"
    "s = sum_all(matmul(a, a))\n"
    "t = sum_all(add(a, a))\n"
    "print(\"done\")\n";
constexpr double kN = 32;
constexpr double kMatmulFlops = 2 * kN * kN * kN;  // a multiply and an add per (i, j, r)
constexpr double kAddFlops = kN * kN;
constexpr double kBytes = 4 * 3 * kN * kN;  // two inputs read, one output written, f32

struct Launch {
  int number = 0;
  std::string kernel, device, device_name, schedule;  // schedule: "default schedule", "as lowered", ...
  double ms = 0, gflops = 0, gbs = 0;
  std::string how;  // "cached" or "compiled in ..."
};

// The launch lines of a stream; every line of it must be one.
std::vector<Launch> parse_launches(const std::string& text) {
  static const std::regex line(
      R"(\[launch (\d+)\] (\S+) on (\S+) \((.+)\), (as lowered|(?:user|tuned|default) schedule): (\S+) ms, (\S+) GFLOP/s, (\S+) GB/s, (cached|compiled in \S+ ms))");
  std::vector<Launch> out;
  for (const auto& l : fe::split_lines(text)) {
    std::smatch m;
    INFO("line: " << l);
    REQUIRE(std::regex_match(l, m, line));
    out.push_back({std::stoi(m[1]), m[2], m[3], m[4], m[5], std::stod(m[6]), std::stod(m[7]),
                   std::stod(m[8]), m[9]});
  }
  return out;
}

// GFLOP/s and GB/s are the counted work over the printed time (each printed to 4 digits).
void check_rates(const Launch& l, double flops) {
  INFO(l.kernel << " on " << l.device);
  REQUIRE(l.ms > 0);
  CHECK(l.gflops > 0);
  CHECK(l.gbs > 0);
  CHECK(l.gflops == doctest::Approx(flops / (l.ms * 1e-3) / 1e9).epsilon(0.005));
  CHECK(l.gbs == doctest::Approx(kBytes / (l.ms * 1e-3) / 1e9).epsilon(0.005));
}

// Runs kProgram on a device with `:debug 2` and checks its two launch lines.
void check_device_log(const std::string& device) {
  fe::ReplHarness r;
  r.feed(":debug 2");
  r.feed(":device " + device);
  REQUIRE(r.take_err() == "");
  r.take_out();
  r.feed(kProgram);
  CHECK(r.take_out() == "done\n");
  std::vector<Launch> log = parse_launches(r.take_err());
  REQUIRE(log.size() == 2);
  CHECK(log[0].number == 1);
  CHECK(log[0].kernel == "matmul");
  CHECK(log[1].number == 2);
  CHECK(log[1].kernel == "add");
  for (const auto& l : log) {
    CHECK(l.device == device);
    CHECK(contains(l.how, "compiled"));  // a new session compiles each kernel once
  }
  check_rates(log[0], kMatmulFlops);
  check_rates(log[1], kAddFlops);
  // The same kernels again come from the cache.
  r.feed(kProgram);
  r.take_out();
  log = parse_launches(r.take_err());
  REQUIRE(log.size() == 2);
  CHECK(log[0].how == "cached");
  CHECK(log[1].how == "cached");
}

}  // namespace

TEST_CASE(":debug 2 logs one line per kernel launch on ref and cpu") {
  check_device_log("ref");
  check_device_log("cpu");
}

TEST_CASE(":debug 2 says which schedule ran: the default rules', or the nest as lowered") {
  fe::ReplHarness r;
  r.feed(":debug 2");
  r.feed(":device cpu");
  r.take_out();
  r.take_err();
  r.feed(kProgram);
  r.take_out();
  std::vector<Launch> log = parse_launches(r.take_err());
  REQUIRE(log.size() == 2);
  CHECK(log[0].schedule == "default schedule");
  r.feed(":defaults off");
  r.take_out();
  r.feed(kProgram);
  r.take_out();
  log = parse_launches(r.take_err());
  REQUIRE(log.size() == 2);
  CHECK(log[0].schedule == "as lowered");
}

TEST_CASE(":debug 2 names the OpenCL device") {
  Session probe;
  std::string why;
  if (!probe.set_device("opencl", &why)) {
    MESSAGE("skipped: no OpenCL device here (" << why << ")");
    return;
  }
  check_device_log("opencl");
  fe::ReplHarness r;
  r.feed(":debug 2");
  r.feed(":device opencl");
  r.feed(kProgram);
  std::vector<Launch> log = parse_launches(r.take_err());
  REQUIRE(!log.empty());
  // Which OpenCL device, not only "opencl": the name the runtime reports (PoCL's "pthread-...",
  // a GPU's product name).
  CHECK(!log[0].device_name.empty());
  CHECK(log[0].device_name != "opencl");
}

TEST_CASE(":debug shows the level, 0 and off silence the log, a bad level is an error") {
  fe::ReplHarness r;
  r.feed(":debug");
  CHECK(r.take_out() == "debug 0\n");
  r.feed(kProgram);
  CHECK(r.take_out() == "done\n");
  CHECK(r.take_err() == "");  // off by default
  r.feed(":debug 2");
  r.feed(":debug");
  CHECK(r.take_out() == "debug 2\n");
  for (const char* off : {":debug 0", ":debug off"}) {
    r.feed(":debug 2");
    r.feed(off);
    r.take_out();
    r.feed(kProgram);
    CHECK(r.take_out() == "done\n");
    CHECK(r.take_err() == "");
  }
  r.feed(":debug 3");
  std::string e = r.take_err();
  CHECK(contains(e, "error: the debug level is 0 (or off), 1"));
  CHECK(contains(e, "not '3'"));
  r.feed(":debug");
  CHECK(r.take_out() == "debug 0\n");  // unchanged by the bad level
}

TEST_CASE(":debug 1 prints one summary line per input that launched kernels") {
  fe::ReplHarness r;
  r.feed(":debug 1");
  r.feed(kProgram);
  std::vector<std::string> lines = fe::split_lines(r.take_err());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("[launches] 2 kernels on ref (reference interpreter), 2 compiled: ", 0) == 0);
  r.feed("1 + 1");
  CHECK(r.take_err() == "");
}

TEST_CASE("a launch while the program's output is mid-line waits for the line's end") {
  std::string log;
  descent::LaunchLog l(2, [&log](std::string_view s) { log += s; });
  descent::tensor::LaunchRecord rec;
  rec.kernel = "matmul";
  rec.device = "ref";
  l.output("x ");
  l.launch(rec);
  CHECK(log == "");  // "x " is waiting for the rest of its line
  l.output("1\n");
  CHECK(contains(log, "[launch 1] matmul on ref"));
  l.launch(rec);
  CHECK(contains(log, "[launch 2] matmul on ref"));  // at a line's start: at once
}

TEST_CASE(":time breaks the input's time down by stage and kernel") {
  fe::ReplHarness r;
  r.feed(":time");
  CHECK(r.take_out() == "timing on\n");
  r.feed("3 + 4");
  std::string scalar = r.take_out();
  INFO(scalar);
  CHECK(scalar.rfind("7\n[ast] compile ", 0) == 0);  // the line :time always printed
  for (const char* stage : {"\n  parse ", "\n  check ", "\n  fold_constants ", "\n  run "})
    CHECK(contains(scalar, stage));
  CHECK(!contains(scalar, "lower"));  // no tensor code, no tensor stages
  r.feed(kProgram);
  std::string tensor = r.take_out();
  INFO(tensor);
  for (const char* stage : {"\n  parse ", "\n  run ", "\n    lower ", "\n    graph passes ",
                            "\n    compile ", "\n    kernels "})
    CHECK(contains(tensor, stage));
  static const std::regex kernel_line(R"(\n      matmul +\d+\.\d+ ms  #1 on ref, compiled\n      add +\d+\.\d+ ms  #2 on ref, compiled\n)");
  CHECK(std::regex_search(tensor, kernel_line));
}

TEST_CASE("kernel_cost counts a kernel's work the same before and after a schedule") {
  Session s;
  std::string error;
  descent::tir::PrimFunc f, g;
  std::map<std::string, int64_t> dims = {{"n", 8}, {"k", 16}, {"m", 4}};
  REQUIRE(s.lower_kernel("matmul", dims, "", &f, &error));
  REQUIRE(s.lower_kernel("matmul", dims, "split i 3\nreorder j i_1\n", &g, &error));
  auto a = descent::tensor::kernel_cost(f), b = descent::tensor::kernel_cost(g);
  CHECK(a.flops == 2.0 * 8 * 16 * 4);
  CHECK(a.bytes == 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  CHECK(b.flops == a.flops);  // 3 does not divide 8: the padded iterations do no work
  CHECK(b.bytes == a.bytes);
  // The benchmark's workloads, as its docs count them.
  REQUIRE(s.lower_kernel("linear_relu", dims, "", &f, &error));
  CHECK(descent::tensor::kernel_cost(f).flops == 2.0 * 8 * 16 * 4 + 8 * 4);  // + the max
  REQUIRE(s.lower_kernel("softmax", {{"n", 8}, {"m", 16}}, "", &f, &error));
  // max, subtract, exp, sum, and the scaling's multiply and divide (written per element: the
  // count is of the nest as written, before LLVM hoists 1 / s out of the row).
  CHECK(descent::tensor::kernel_cost(f).flops == 6.0 * 8 * 16);
}

TEST_CASE("descent run --debug 2 logs launches on stderr, --debug with a bad level fails") {
  fe::TempDir dir;
  std::string f = dir.write("t.ds", kProgram);
  fe::ProcResult r = fe::run_descent({"run", f, "--debug", "2"});
  INFO(fe::describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "done\n");
  std::vector<Launch> log = parse_launches(r.err);
  REQUIRE(log.size() == 2);
  CHECK(log[0].kernel == "matmul");
  CHECK(log[1].kernel == "add");
  check_rates(log[0], kMatmulFlops);

  r = fe::run_descent({"run", f, "--debug", "0"});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");

  r = fe::run_descent({"run", f, "--debug", "loud"});
  CHECK(r.exit_code == 64);
  CHECK(contains(r.err, "error: --debug: the debug level is 0"));
  CHECK(r.out == "");

  r = fe::run_descent({"run", f, "--time"});
  CHECK(r.out == "done\n");
  CHECK(contains(r.err, "\n    kernels "));
  CHECK(contains(r.err, "\n      matmul "));
}
