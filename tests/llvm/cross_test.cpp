// Cross execution (issue 38): every test program built by the LLVM tier for aarch64 and
// riscv64, linked with Debian's cross gcc and run under qemu-user (scripts/setup.sh installs
// gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu, their libc and qemu-user), prints what the
// program's `# expect:` lines say the AST walker prints, and a runtime error exits with 1 and
// its message at the same line and column. On an AArch64 or RISC-V machine the same test
// runs that target natively.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "pipeline/pipeline.h"
#include "proc/cross.h"
#include "tests/programs_test.h"

using namespace descent;
using namespace descent::testing;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char dir[] = "/tmp/descent-cross-XXXXXX";
    REQUIRE(mkdtemp(dir));
    path = dir;
  }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The clean programs and the ones that fail at run time (exit 1), with their expectations.
std::vector<fs::path> programs() {
  std::vector<fs::path> out = ds_files("programs");
  for (const auto& p : ds_files("errors"))
    if (parse_expectations(read_text(p.string())).exit_code == 1) out.push_back(p);
  return out;
}

void check_target(const std::string& arch) {
  proc::CrossTools tools;
  std::string why;
  REQUIRE_MESSAGE(proc::find_cross_tools(arch, &tools, &why), why);
  TempDir dir;
  int checked = 0, failing = 0;
  for (const auto& path : programs()) {
    CAPTURE(path.filename().string());
    std::string text = read_text(path.string());
    Expectation want = parse_expectations(text);
    Session s;
    REQUIRE(s.set_target(arch, &why));
    REQUIRE(s.compile(text, path.filename().string()).status == Outcome::Ok);
    std::string object = dir.path + "/p.o", exe = dir.path + "/p";
    REQUIRE_MESSAGE(s.build_object(object, &why), why);
    REQUIRE_MESSAGE(proc::link_executable(tools, object, exe, &why), why);
    proc::Limits limits;
    limits.wall_s = 60;
    proc::Result r = proc::run_executable(tools, exe, limits);
    REQUIRE_MESSAGE(r.started, r.problem);
    CHECK(r.signal == 0);
    CHECK(lines_of(r.out) == want.output);
    CHECK(r.exit_code == want.exit_code);
    for (const std::string& e : want.errors) {  // "L:C: MESSAGE" -> "F:L:C: error: MESSAGE"
      size_t colon = e.find(": ");
      REQUIRE(colon != std::string::npos);
      std::string where = ":" + e.substr(0, colon) + ": error: " + e.substr(colon + 2);
      CHECK_MESSAGE(r.err.find(where) != std::string::npos, r.err);
    }
    ++checked;
    failing += want.exit_code == 1;
  }
  CHECK(checked > 50);
  CHECK(failing > 3);  // the runtime errors are among them
}

}  // namespace

TEST_CASE("cross: every test program built for aarch64, linked and run under qemu-aarch64") {
  check_target("aarch64");
}

TEST_CASE("cross: every test program built for riscv64, linked and run under qemu-riscv64") {
  check_target("riscv64");
}

TEST_CASE("cross: a missing tool is named with its Debian package; wasm32 and unknown machines are refused") {
  proc::CrossTools t;
  std::string why;
  CHECK_FALSE(proc::find_cross_tools("sparc64", &t, &why));
  CHECK(why.find("no cross toolchain for 'sparc64'") != std::string::npos);
  CHECK(proc::find_cross_tools(proc::host_arch(), &t, &why));
  CHECK(t.emulator.empty());  // this machine's own code runs directly
}
