// Lab tensorize_tile (issue 34): beyond what every lab is held to (labs_test.cpp: the starter
// fails, the solution passes, the likely mistake is caught), the messages a student reads when
// the description and the tile disagree name the part that differs and the schedule line that
// made it, and an implementation that crashes or loops is a failed check naming its call.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "labs/runner/lab.h"
#include "lang/text.h"

using namespace descent;
using namespace descent::labs;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const Lab& tensorize_lab() {
  static std::vector<Lab> labs;
  static const Lab* lab = nullptr;
  if (!lab) {
    std::string error;
    REQUIRE_MESSAGE(load_labs(default_labs_dir(), &labs, &error), error);
    REQUIRE_MESSAGE(find_lab(labs, "tensorize_tile", &lab, &error), error);
  }
  return *lab;
}

// The lab with only the checks whose case is listed (each check compiles nothing more, but
// runs the student's code once).
Lab only(const std::vector<std::string>& cases) {
  Lab out = tensorize_lab();
  out.checks.clear();
  for (const auto& c : tensorize_lab().checks)
    for (const auto& k : cases)
      if (c.spec.value("case", "") == k) out.checks.push_back(c);
  REQUIRE(out.checks.size() == cases.size());
  return out;
}

std::string solution() {
  std::string text, error;
  REQUIRE(read_file(default_labs_dir() + "/solutions/tensorize_tile/micro_kernel.cpp", &text, &error));
  return text;
}

// The solution with `from` replaced by `to` (which must occur), checked on `cases`.
LabReport check_edited(const std::string& tag, const std::string& from, const std::string& to,
                       const std::vector<std::string>& cases, double limit_s = 10) {
  std::string text = solution();
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  text.replace(at, from.size(), to);
  fs::path work = fs::temp_directory_path() / ("descent-tensorize-lab-" + std::to_string(::getpid())) / tag;
  fs::remove_all(work);
  fs::create_directories(work);
  std::ofstream(work / "micro_kernel.cpp") << text;
  CheckOptions o;
  o.time_limit_s = limit_s;
  o.seed = 1;
  LabReport r = check_lab(only(cases), work.string(), o);
  fs::remove_all(work);
  return r;
}

}  // namespace

TEST_CASE("tensorize_tile: a description that differs from the tile is refused, naming the part and the line") {
  // The tile's size: the split that made the loop is named.
  LabReport r = check_edited("size", "t.m = 4;", "t.m = 8;", {"tensorizes"});
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK_MESSAGE(contains(r.checks[0].reason, "`tensorize C_o mk_4x8`: cannot tensorize with mk_4x8: the description "
                                             "has i < 8, but the tile's loop for i, i_1, runs 4 times (line 2, `split i 4`, made it)"),
                r.checks[0].reason);
  // The index pattern: both statements shown, the tile's in the schedule's loop names.
  r = check_edited("pattern", "A[i, k] * B[k, j]\"", "A[k, i] * B[k, j]\"", {"tensorizes"});
  CHECK_MESSAGE(contains(r.checks[0].reason, "the description's statement, C[i, j] += A[k, i] * B[k, j], is not the "
                                             "tile's: block 'C_o' computes C[i_1, j_1] += A[i_1, k_1] * B[k_1, j_1]"),
                r.checks[0].reason);
  // The init left in the tile, a loop named instead of the block, the project's own
  // intrinsic, and a step after tensorize: each its own message.
  r = check_edited("init", "decompose_reduction C k_0\n", "", {"tensorizes"});
  CHECK(contains(r.checks[0].reason, "block 'C' in the tile still has its init"));
  r = check_edited("loop", "tensorize C_o mk_4x8", "tensorize C.i_1 mk_4x8", {"tensorizes"});
  CHECK(contains(r.checks[0].reason, "'C.i_1' is a loop; here tensorize names a block over a tile"));
  r = check_edited("builtin", "tensorize C_o mk_4x8", "tensorize C_o cpu.fma_4x8", {"tensorizes"});
  CHECK(contains(r.checks[0].reason, "this lab tensorizes with your intrinsic, 'mk_4x8' (tile_intrinsic().name), not "
                                     "the project's own cpu.fma_4x8"));
  r = check_edited("after", "tensorize C_o mk_4x8\n", "tensorize C_o mk_4x8\nparallel i_0\n", {"tensorizes"});
  CHECK(contains(r.checks[0].reason, "`parallel i_0`, comes after the tensorize step"));
  // A statement that does not parse says where.
  r = check_edited("parse", "\"C[i, j] += A[i, k] * B[k, j]\"", "\"C[i, j] += A[i, q] * B[k, j]\"", {"describes"});
  CHECK(contains(r.checks[0].reason, "A's index 'q' is not one of the description's loops i, j, k"));
}

TEST_CASE("tensorize_tile: an implementation that crashes or loops fails with the call it was in") {
  LabReport r = check_edited("crash", "  for (int64_t k = 0; k < 64; ++k) {", "  C = nullptr;\n  for (int64_t k = 0; k < 64; ++k) {",
                             {"implements", "hidden_shapes"});
  REQUIRE(r.checks.size() == 2);
  CHECK(r.points == 0);
  CHECK(r.checks[0].status == "crash");
  CHECK_MESSAGE(contains(r.checks[0].reason, "your code crashed: SIGSEGV"), r.checks[0].reason);
  CHECK(contains(r.checks[0].reason, "during its call 2 to implementation_lda64_ldb8_ldc8"));
  CHECK(contains(r.checks[1].reason, "during its call 3 to tensorized_matmul_"));

  r = check_edited("loop", "  for (int64_t k = 0; k < 64; ++k) {",
                   "  for (volatile int z = 0; z < 1; z += 0) {}\n  for (int64_t k = 0; k < 64; ++k) {", {"implements"},
                   2.0);
  CHECK(r.checks[0].status == "timeout");
  CHECK_MESSAGE(contains(r.checks[0].reason, "it was stopped after 2 s (an endless loop?) during its call 2 to "
                                             "implementation_lda64_ldb8_ldc8"),
                r.checks[0].reason);
}

TEST_CASE("tensorize_tile: stepping by the tile's widths is right on a whole matrix, and told apart after") {
  // The likely mistake (tests/labs/wrong/tensorize_tile): right on the first, tight, tile; the
  // message for a wider one says what to fix.
  LabReport r = check_edited("widths", "  v8 c0, c1, c2, c3;", "  lda = 64, ldb = 8, ldc = 8;\n  v8 c0, c1, c2, c3;",
                             {"implements"});
  CHECK_FALSE(r.checks[0].passed);
  CHECK_MESSAGE(contains(r.checks[0].reason, "the first call, on matrices as wide as the tile, was right: step from row "
                                             "to row by lda, ldb and ldc"),
                r.checks[0].reason);
}
