// The golden-program runner: every tests/programs/*.ds must print exactly its `# expect:`
// lines, and every tests/errors/*.ds must fail with its `# exit:` code and `# error:` lines,
// on every engine the pipeline has. A new engine inherits the whole suite by existing.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "tests/programs_test.h"

namespace fs = std::filesystem;
using namespace descent;
using namespace descent::testing;

namespace {


std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (auto& l : v) s += "  | " + l + "\n";
  return s;
}

void check_file(const fs::path& path, const std::string& engine,
                const std::string& device = "ref") {
  std::string text = read_text(path.string());
  Expectation want = parse_expectations(text);
  Actual got = run_program(text, path.filename().string(), engine, 0, device);
  INFO("engine ", engine, ", device ", device, ", file ", path.filename().string(), "\n",
       got.message);
  CHECK_MESSAGE(got.exit_code == want.exit_code, "exit code ", got.exit_code, ", expected ",
                want.exit_code);
  CHECK_MESSAGE(got.output == want.output, "output:\n", join_lines(got.output), "expected:\n",
                join_lines(want.output));
  CHECK_MESSAGE(got.errors == want.errors, "errors:\n", join_lines(got.errors), "expected:\n",
                join_lines(want.errors));
}

}  // namespace

TEST_CASE("golden programs print their # expect: lines on every engine") {
  auto files = ds_files("programs");
  REQUIRE(files.size() >= 60);
  for (const auto& engine : Session::engines())
    for (const auto& f : files) check_file(f, engine);
}

TEST_CASE("must-fail programs give their # exit: code and # error: lines on every engine") {
  auto files = ds_files("errors");
  REQUIRE(files.size() >= 40);
  for (const auto& engine : Session::engines())
    for (const auto& f : files) {
      Expectation want = parse_expectations(read_text(f.string()));
      INFO(f.filename().string());
      REQUIRE_MESSAGE(!want.errors.empty(), "a must-fail program needs # error: lines");
      REQUIRE_MESSAGE(want.exit_code != 0, "a must-fail program needs # exit: 1 or 2");
      check_file(f, engine);
    }
}

// Tensor programs: kernels run on every tensor device (the reference interpreter and the
// LLVM-compiled CPU code) and must print the same lines. The stack and reg VMs run tensor code
// themselves (the jit still hands it to the walker), and every engine must agree.
TEST_CASE("tensor programs print their # expect: lines on every device and engine") {
  auto files = ds_files("tensor_programs");
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    for (const auto& device : Session::devices()) for (auto e : {"ast", "jit"}) check_file(f, e, device);
    for (const auto& engine : Session::engines())
      if (engine != "ast") check_file(f, engine, "ref");
  }
}
