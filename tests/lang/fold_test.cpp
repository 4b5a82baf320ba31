// fold_constants (lang/fold.h) and its place in the Session's pass list.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "lang/fold.h"
#include "lang/walker.h"
#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {

struct Folded {
  std::string sexpr;  // of the whole program after folding
  int count = -1;     // what fold_constants returned
};

Folded fold_text(const std::string& text) {
  Parsed p = parse_text(text);
  REQUIRE(p.diags.empty());
  Module m;
  std::vector<Diagnostic> d;
  bool ok = check(p.program, m, {}, d);
  std::string first = d.empty() ? std::string() : locs(d)[0];
  REQUIRE_MESSAGE(ok, first);
  Folded f;
  f.count = fold_constants(p.program);
  f.sexpr = p.sexpr();
  return f;
}

// Compiles, folds in place (function bodies included: the Module points into this very
// Program) and runs on the AST walker; returns the printed lines plus "ERROR L:C: msg".
std::vector<std::string> run_folded(const std::string& text, const std::string& name, int* folds) {
  auto program = std::make_shared<Program>();
  std::vector<Diagnostic> d;
  *program = parse(std::make_shared<SourceFile>(name, text), d);
  Module m;
  std::vector<std::string> lines;
  if (!d.empty() || !check(*program, m, {}, d)) {
    for (const auto& e : locs(d)) lines.push_back("COMPILE " + e);
    return lines;
  }
  m.programs.push_back(program);
  *folds = fold_constants(*program);
  GlobalStore g;
  std::string out;
  RunOptions o;
  o.out = [&](std::string_view t) { out += t; };
  RunResult r = make_ast_walker()->run(*program, m, g, o);
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (!r.ok) lines.push_back("ERROR " + locs({r.error})[0]);
  return lines;
}

std::vector<std::string> run_unfolded(const std::string& text, const std::string& name) {
  testing::Actual a = testing::run_program(text, name, "ast");
  std::vector<std::string> lines = a.output;
  if (a.exit_code == 2)
    for (const auto& e : a.errors) lines.push_back("COMPILE " + e);
  else
    for (const auto& e : a.errors) lines.push_back("ERROR " + e);
  return lines;
}

}  // namespace

TEST_CASE("fold: constant subexpressions become literals") {
  Folded a = fold_text("x = 1\ny = 2 * 3 + x");
  CHECK(a.sexpr == "(program (assign x 1) (assign y (add 6 x)))");
  CHECK(a.count == 1);
  Folded b = fold_text("x = 1 + 2 * 3");
  CHECK(b.sexpr == "(program (assign x 7))");
  CHECK(b.count == 2);
  CHECK(fold_text("x = (1 + 2) * (10 - 4) / 4 % 5").sexpr == "(program (assign x 4))");
  CHECK(fold_text("x = 1\ny = x + 2 * 3").sexpr == "(program (assign x 1) (assign y (add x 6)))");
  // Left associativity: x + 1 + 2 is (x + 1) + 2, which has no constant subexpression.
  Folded c = fold_text("x = 1\ny = x + 1 + 2");
  CHECK(c.sexpr == "(program (assign x 1) (assign y (add (add x 1) 2)))");
  CHECK(c.count == 0);
}

TEST_CASE("fold: promotions, conversions, unary operators and builtins") {
  CHECK(fold_text("y = 1.5 + 1").sexpr == "(program (assign y 2.5))");
  CHECK(fold_text("y = float(2)").sexpr == "(program (assign y 2.0))");
  CHECK(fold_text("y = int(2.9)").sexpr == "(program (assign y 2))");
  CHECK(fold_text("y = int(-2.9)").sexpr == "(program (assign y -2))");
  CHECK(fold_text("y = int(7)").sexpr == "(program (assign y 7))");
  CHECK(fold_text("y = -(3)").sexpr == "(program (assign y -3))");
  CHECK(fold_text("y = -2.5").sexpr == "(program (assign y -2.5))");
  CHECK(fold_text("y = !true").sexpr == "(program (assign y false))");
  CHECK(fold_text("y = -9223372036854775807 - 1").sexpr == "(program (assign y -9223372036854775808))");
  CHECK(fold_text("y = 9223372036854775807 + 1").sexpr == "(program (assign y -9223372036854775808))");
  CHECK(fold_text("y = min(1, 2.5)").sexpr == "(program (assign y 1.0))");
  CHECK(fold_text("y = max(3, 2)").sexpr == "(program (assign y 3))");
  CHECK(fold_text("y = abs(-3)").sexpr == "(program (assign y 3))");
  CHECK(fold_text("y = abs(-3.5)").sexpr == "(program (assign y 3.5))");
  CHECK(fold_text("y = sqrt(16)").sexpr == "(program (assign y 4.0))");
  CHECK(fold_text("y = floor(-1.5)").sexpr == "(program (assign y -2.0))");
  CHECK(fold_text("y = 0.1 + 0.2").sexpr == "(program (assign y 0.30000000000000004))");
  CHECK(fold_text("y = 1.0 / 0.0").sexpr == "(program (assign y inf))");  // floats never fail
  CHECK(fold_text("y = 7 / -2").sexpr == "(program (assign y -3))");
  CHECK(fold_text("y = -7 % 3").sexpr == "(program (assign y -1))");
  CHECK(fold_text("y = 1 < 2.5").sexpr == "(program (assign y true))");
  CHECK(fold_text("y = 2 == 3").sexpr == "(program (assign y false))");
  CHECK(fold_text("y = true != false").sexpr == "(program (assign y true))");
}

TEST_CASE("fold: && and || fold from their left operand") {
  CHECK(fold_text("c = false\nb = true && c").sexpr == "(program (assign c false) (assign b c))");
  CHECK(fold_text("c = false\nb = false && c").sexpr == "(program (assign c false) (assign b false))");
  CHECK(fold_text("c = false\nb = true || c").sexpr == "(program (assign c false) (assign b true))");
  CHECK(fold_text("c = false\nb = false || c").sexpr == "(program (assign c false) (assign b c))");
  Folded right = fold_text("c = false\nb = c && true");
  CHECK(right.sexpr == "(program (assign c false) (assign b (and c true)))");
  CHECK(right.count == 0);
  CHECK(fold_text("b = 1 < 2 && 3 > 4").sexpr == "(program (assign b false))");
}

TEST_CASE("fold: operations that fail at run time are left alone") {
  Folded d = fold_text("x = 1 / 0");
  CHECK(d.sexpr == "(program (assign x (div 1 0)))");
  CHECK(d.count == 0);
  CHECK(fold_text("x = 5 % 0").sexpr == "(program (assign x (mod 5 0)))");
  CHECK(fold_text("x = (2 + 3) / (1 - 1)").sexpr == "(program (assign x (div 5 0)))");
  CHECK(fold_text("x = int(1e300)").sexpr == "(program (assign x (call int 1e+300)))");
  CHECK(fold_text("x = int(0.0 / 0.0)").sexpr == "(program (assign x (call int nan)))");
  CHECK(fold_text("x = int(9223372036854775808.0)").sexpr == "(program (assign x (call int 9.223372036854776e+18)))");
  // And they still fail when the program runs, where they are.
  int folds = -1;
  CHECK(run_folded("print(1)\nx = 1 / 0\nprint(2)", "t.ds", &folds) ==
        std::vector<std::string>{"1", "ERROR 2:7: division by zero"});
  CHECK(run_folded("x = 2 + int(1e300)", "t.ds", &folds) ==
        std::vector<std::string>{"ERROR 1:9: invalid conversion"});
  CHECK(run("x = 1 / 0").errors == std::vector<std::string>{"1:7: division by zero"});
  CHECK(run("x = 1 / 0").exit_code == 1);
}

TEST_CASE("fold: reaches into every statement and function body, but not strings") {
  Folded f = fold_text(
      "fn f(n) -> int {\n  if n > 2 * 2 { return n * (1 + 1) }\n  return 0 - 1\n}\n"
      "for i in 0..2 + 3 { print(\"a\", i + 0 * 5) }\n"
      "while 1 > 2 { print(1 + 1) }\n");
  CHECK(f.sexpr ==
        "(program (fn f (params n:int) (block (if (gt n 4) (block (return (mul n 2)))) (return -1))) "
        "(for i 0 5 (block (call print \"a\" (add i 0)))) (while false (block (call print 2))))");
  CHECK(f.count == 7);
}

TEST_CASE("fold: the Session's pass list and snapshots") {
  Session s;
  REQUIRE(s.compile("x = 1\ny = 2 * 3 + x\nz = 4 + 5", "t.ds").status == Outcome::Ok);
  std::vector<PassInfo> p = s.passes();
  REQUIRE(p.size() >= 1);
  CHECK(p[0].name == "fold_constants");
  CHECK(p[0].stage == "ast");
  CHECK(p[0].changed);
  CHECK(p[0].summary == "folded 2 expressions");
  StageResult before = s.pass_snapshot("fold_constants", false, Format::Sexpr);
  StageResult after = s.pass_snapshot("fold_constants", true, Format::Sexpr);
  CHECK(before.ok);
  CHECK(after.ok);
  CHECK(before.text == "(program (assign x 1) (assign y (add (mul 2 3) x)) (assign z (add 4 5)))\n");
  CHECK(after.text == "(program (assign x 1) (assign y (add 6 x)) (assign z 9))\n");
  CHECK(s.stage("ast-folded", Format::Sexpr).text == after.text);
  CHECK(s.stage("ast", Format::Sexpr).text == before.text);

  REQUIRE(s.compile("w = 2\nv = w * w", "t.ds").status == Outcome::Ok);
  p = s.passes();
  REQUIRE(p.size() >= 1);
  CHECK_FALSE(p[0].changed);
  CHECK(p[0].summary == "folded 0 expressions");
  CHECK(s.pass_snapshot("fold_constants", false).text == s.pass_snapshot("fold_constants", true).text);

  REQUIRE(s.compile("u = -1", "t.ds").status == Outcome::Ok);
  CHECK(s.passes()[0].summary == "folded 1 expression");

  StageResult nope = s.pass_snapshot("nope", true);
  CHECK_FALSE(nope.ok);
  CHECK(nope.text == "unknown pass 'nope' (passes: fold_constants, fuse_superinstructions, allocate_registers, "
                          "fuse_reg_superinstructions, and " +
                          std::to_string(s.passes().size() - 4) + " LLVM passes (list them with :passes))");

  // After a compile error no pass ran.
  REQUIRE(s.compile("q = nope", "t.ds").status == Outcome::CompileError);
  CHECK(s.passes().empty());
  CHECK_FALSE(s.pass_snapshot("fold_constants", true).ok);
  CHECK(s.pass_snapshot("nope", true).text == "unknown pass 'nope' (passes: none)");
}

TEST_CASE("fold: folding never changes what a golden program prints") {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(DESCENT_TESTS_DIR) / "programs";
  REQUIRE(fs::is_directory(dir));
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ds") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 60);
  int total_folds = 0, differing = 0;
  for (const auto& f : files) {
    std::string text = testing::read_text(f.string());
    std::string name = f.filename().string();
    int folds = 0;
    std::vector<std::string> folded = run_folded(text, name, &folds);
    std::vector<std::string> plain = run_unfolded(text, name);
    total_folds += folds;
    if (folded != plain) {
      ++differing;
      MESSAGE(name, ": folded output differs from the unfolded run");
    }
    // And both match the file's own # expect: lines.
    testing::Expectation want = testing::parse_expectations(text);
    if (want.exit_code == 0 && folded != want.output) {
      ++differing;
      MESSAGE(name, ": folded output differs from its # expect: lines");
    }
  }
  CHECK(differing == 0);
  CHECK(total_folds > 20);  // the corpus does exercise the pass
}
