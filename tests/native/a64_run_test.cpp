// The native backend's second target run (issue 38): every golden program, every program that
// must fail at run time and seeded random programs, compiled through the AArch64 description,
// cross-linked and run under qemu-aarch64, must print and fail exactly as the walker does.
// Then what is the runtime's: step limits, Ctrl-C, globals kept across REPL inputs, and a clear
// error when the tools are missing. (native_test.cpp runs its hand-written cases on both
// targets; a64_isel_test.cpp checks selection and allocation without running.)
#include <doctest/doctest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lang/walker.h"
#include "native/native.h"
#include "pipeline/pipeline.h"
#include "proc/cross.h"
#include "tests/diff/program_gen.h"
#include "tests/engine_util.h"

using namespace descent;
using descent::testing::EngineRunner;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<Engine> a64_engine() { return native::make_native_engine(native::aarch64_target()); }

void require_tools() {
  proc::CrossTools tools;
  std::string why;
  REQUIRE_MESSAGE(proc::find_cross_tools("aarch64", &tools, &why), why);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> ds_files(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(std::string(DESCENT_TESTS_DIR) + "/" + dir))
    if (e.path().extension() == ".ds") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// One program, each on a fresh walker and a fresh AArch64 engine (and, with_x86, the x86-64
// program image run as a process of its own: the same runtime around the other target's code).
void same_as_walker(const std::string& text, bool with_x86) {
  EngineRunner walker(make_ast_walker()), a64(a64_engine());
  auto want = walker.submit(text);
  auto got = a64.submit(text);
  CHECK(got.compiled == want.compiled);
  CHECK(got.output == want.output);
  CHECK(got.error == want.error);
  if (!with_x86) return;
  EngineRunner x86(native::make_image_engine(native::x86_64_target()));
  auto x = x86.submit(text);
  INFO("the x86-64 image");
  CHECK(x.output == want.output);
  CHECK(x.error == want.error);
}

}  // namespace

TEST_CASE("native aarch64: every golden program and every must-fail program agrees with the walker") {
  require_tools();
  int ran = 0;
  for (const std::string dir : {"programs", "errors"})
    for (const fs::path& p : ds_files(dir)) {
      std::string text = read_text(p);
      CAPTURE(p.filename().string());
      same_as_walker(text, dir == "programs");
      ++ran;
    }
  CHECK(ran > 150);
}

TEST_CASE("native aarch64: seeded random programs agree with the walker") {
  // 48 by default (each is a cross-compile and a qemu run, about 0.15 s);
  // DESCENT_A64_SEEDS=N runs more.
  require_tools();
  int n = 48;
  if (const char* e = getenv("DESCENT_A64_SEEDS")) n = std::atoi(e);
  int errors = 0;
  for (int seed = 1; seed <= n; ++seed) {
    descent::testing::ProgramGenerator gen(static_cast<uint64_t>(seed) * 7919u);
    const std::string& text = gen.source();
    CAPTURE(seed);
    CAPTURE(text);
    EngineRunner walker(make_ast_walker()), a64(a64_engine());
    auto want = walker.submit(text);
    auto got = a64.submit(text);
    REQUIRE(want.compiled);
    CHECK(got.output == want.output);
    CHECK(got.error == want.error);
    errors += !want.error.empty();
  }
  if (n >= 48) CHECK(errors > 0);  // planted runtime errors among them
}

TEST_CASE("native aarch64: floats print as the walker's, deep frames reach the depth limit") {
  require_tools();
  // Powers of two where printf's correctly rounded digits, one digit short, fall just outside
  // the narrower lower half-gap (the review's find): the neighbour reads back.
  same_as_walker("print(1.0 / 16777216.0, 1.0 / 17592186044416.0, 618970019642690137449562112.0, 0.1, 1e23, 5e-324)\n",
                 true);
  // A recursion whose frames hold a hundred spilled values: 10,000 of them fit (the image runs
  // on a 256 MiB stack, as the in-process engines do), and one more is "stack overflow".
  std::string fn = "fn deep(n: int) -> int {\n";
  std::string sum = "  return r";
  for (int k = 0; k < 100; ++k) {
    fn += "  a" + std::to_string(k) + " = n * " + std::to_string(k + 3) + "\n";
    sum += " + a" + std::to_string(k);
  }
  fn += "  if n == 0 { return 0 }\n  r = deep(n - 1)\n" + sum + "\n}\n";
  same_as_walker(fn + "print(deep(9999))\n", false);
  same_as_walker(fn + "print(deep(10000))\n", false);
}

TEST_CASE("native aarch64: step limits, Ctrl-C and globals kept across inputs") {
  require_tools();
  EngineRunner s(a64_engine());
  RunOptions limited;
  limited.step_limit = 1000;
  auto spun = s.submit("while true { }\n", limited);
  CHECK(spun.error == "1:1: interrupted");
  CHECK(spun.steps == 1001);  // the back-edges the runtime counted, the last one over
  CHECK(s.submit("fn f(n: int) -> int { return f(n) }\nf(1)\n", limited).error == "1:30: interrupted");
  CHECK(s.submit("for i in 0..10 { }\nprint(\"done\")\n", limited).output == "done\n");

  // Ctrl-C: the flag up before the run, and raised while qemu spins.
  std::atomic<bool> flag{true};
  RunOptions opts;
  opts.interrupt = &flag;
  CHECK(s.submit("while true { }\n", opts).error == "0:0: interrupted");
  flag = false;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    flag = true;
  });
  auto r = s.submit("n = 0\nwhile n >= 0 { n = (n + 1) % 1000 }\n", opts);
  t.join();
  CHECK(r.error == "0:0: interrupted");  // the build or the run, whichever the flag met

  // REPL inputs: a global assigned by one run is read by the next; a redefined function is
  // the new one; a runtime error keeps what was assigned before it.
  EngineRunner repl(a64_engine());
  CHECK(repl.submit("x = 41\ny = 2.5\nflag = true").error.empty());
  CHECK(repl.submit("fn f() -> int { return x + 1 }\nprint(f(), y * 2.0, !flag)").output == "42 5.0 false\n");
  CHECK(repl.submit("fn f() -> int { return x * 2 }\nprint(f())").output == "82\n");
  CHECK(repl.submit("x = 7\nz = x / 0").error == "2:7: division by zero");
  CHECK(repl.submit("print(x)").output == "7\n");
}

TEST_CASE("native aarch64: without the cross compiler or qemu, a clear error and nothing else breaks") {
  std::string path = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  EngineRunner s(a64_engine());
  auto r = s.submit("print(1)");
  setenv("PATH", path.c_str(), 1);
  CHECK(r.output.empty());
  CHECK(r.error.find("qemu-user") != std::string::npos);
  CHECK(r.error.find("gcc-aarch64-linux-gnu") != std::string::npos);
  // The views need no tools.
  Session v;
  REQUIRE(v.compile("fn f(a: int, b: int) -> int { return a * b + 3 }\nprint(f(2, 5))", "t.ds").status ==
          Outcome::Ok);
  std::string error;
  REQUIRE(v.set_native_target("aarch64", &error));
  std::string asm_text = v.stage("native-asm", Format::Text).text;
  CHECK(asm_text.find("stp x29, x30, [sp, #-16]!") != std::string::npos);
  CHECK(asm_text.find("madd x") != std::string::npos);
  CHECK(asm_text.find("ret x30") != std::string::npos);
}

TEST_CASE("native aarch64: the Session runs the native engine for its target") {
  require_tools();
  Session s;
  std::string error;
  REQUIRE(s.set_engine("native"));
  REQUIRE(s.set_native_target("aarch64", &error));
  std::string out;
  REQUIRE(s.compile("print(6 * 7, 1.0 / 3.0)", "t.ds").status == Outcome::Ok);
  RunOptions o;
  o.out = [&](std::string_view t) { out += t; };
  CHECK(s.run(o).status == Outcome::Ok);
  CHECK(out == "42 0.3333333333333333\n");
}

TEST_CASE("native aarch64: the constant builder is a seam: any correct one runs every program") {
  // movz then three movk for every constant: never the fewest, always right (the starter of
  // labs/a64_constants).
  require_tools();
  native::a64::ConstantBuilder four = [](int64_t value, int reg) {
    std::vector<native::a64::A64Inst> out;
    for (int s = 0; s < 64; s += 16) {
      native::a64::A64Inst i;
      i.form = s == 0 ? native::a64::Form::MOVZ : native::a64::Form::MOVK;
      i.r[0] = static_cast<uint8_t>(reg);
      i.imm = static_cast<int64_t>((static_cast<uint64_t>(value) >> s) & 0xffff);
      i.shift = s;
      out.push_back(i);
    }
    return out;
  };
  const std::string text = read_text(fs::path(DESCENT_TESTS_DIR) / "../labs/a64_constants/programs/masks.ds");
  EngineRunner walker(make_ast_walker()), a64(native::make_image_engine(native::aarch64_target(), four));
  auto want = walker.submit(text);
  auto got = a64.submit(text);
  CHECK(got.output == want.output);
  CHECK(got.error == want.error);
  // Under a step limit every back-edge and call goes through the slow path's trampoline.
  RunOptions limited;
  limited.step_limit = 50'000'000;
  EngineRunner again(a64_engine());
  auto slow = again.submit(text, limited);
  CHECK(slow.output == want.output);
  CHECK(slow.error == want.error);
}
