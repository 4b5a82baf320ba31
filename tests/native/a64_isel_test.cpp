// The AArch64 target description (native/target.h, a64_isel.cpp): the second pattern table's
// coverage, the covers tree covering finds there that x86-64's table cannot (madd, msub,
// cbnz, constants priced by their chunks, 12-bit immediates), legalisation for a target whose
// sdiv does not trap, and register allocation on AAPCS64's register file. Emission and
// running under qemu: a64_run_test.cpp; the encoder: a64_encoder_test.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "native/backend.h"
#include "native/native.h"
#include "native/target.h"
#include "pipeline/pipeline.h"
#include "tests/diff/program_gen.h"
#include "tests/programs_test.h"

using namespace descent;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One native stage of a program for a target, as `descent dump --stage native-STAGE
// --target T` shows it (the Session's native target set instead of the LLVM one).
std::string a64(const std::string& src, const std::string& stage, const std::string& target = "aarch64") {
  Session s;
  std::string error;
  REQUIRE(s.set_native_target(target, &error));
  Outcome o = s.compile(src, "a64.ds");
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  StageResult r = s.stage("native-" + stage);
  REQUIRE_MESSAGE(r.ok, r.text);
  return r.text;
}

// The patterns an isel view names after its instructions ("; NAME nID").
std::multiset<std::string> used(const std::string& isel) {
  std::multiset<std::string> out;
  static const std::regex rule(";\\s+(\\S+) n[0-9]+$");
  size_t at = 0;
  while (at < isel.size()) {
    size_t end = isel.find('\n', at);
    if (end == std::string::npos) end = isel.size();
    std::string line = isel.substr(at, end - at);
    std::smatch m;
    if (std::regex_search(line, m, rule)) out.insert(m[1]);
    // The tree lines list every pattern of a cover, operands included ("; b1 tree n4 add:
    // MUL.prod MADDXrrr").
    if (line.rfind("; b", 0) == 0 && contains(line, " tree ")) {
      std::string names = line.substr(line.find(':', line.find(" tree ")) + 1);
      size_t p = 0;
      while (p < names.size()) {
        size_t q = names.find(' ', p);
        if (q == std::string::npos) q = names.size();
        if (q > p) out.insert(names.substr(p, q - p));
        p = q + 1;
      }
    }
    at = end + 1;
  }
  return out;
}

// Small programs that reach the table's corners; with the golden programs, every pattern.
const std::vector<std::string>& corpus() {
  static const std::vector<std::string> c = {
      "fn k(a: int) -> int { return a + 7 + 70000 + 4295032833 + 1311768467463790320 + -71777214294589696 }\n"
      "print(k(1))\n",
      "fn m(a: int, b: int, c: int) -> int { return a * b + c + (c - a * b) + (c + a * b) + a * b }\n"
      "print(m(2, 3, 4))\n",
      "fn s(a: int, b: int) -> int { return a - 5 + (a + -5) + (a - -5) + a - b }\n"
      "print(s(9, 3))\n",
      "fn d(a: int, b: int) -> int { return a / b + a % b + a / 7 + a / 8 + a % 8 + a / (-9223372036854775807 - 1) }\n"
      "print(d(100, 7))\n",
      "fn z(a: int) -> int { return a / 0 }\n",
      "fn c(a: int, b: int) -> int {\n  if a < b { return min(a, b) }\n  if a > -5 { return max(a, b) }\n"
      "  if a == 3 { return abs(a) }\n  return -a\n}\nprint(c(1, 2))\n",
      "fn t(a: bool, b: bool) -> int {\n  if a { return 1 }\n  if !b { return 2 }\n  x = a == b\n  if x { return 3 }\n"
      "  return 4\n}\nprint(t(true, false))\n",
      "fn f(x: float, y: float) -> float {\n  if x < y { return x + y }\n  if x != y { return x * y }\n"
      "  if !(x >= y) { return -x }\n  return sqrt(abs(x)) / y - min(x, y) + max(x, 2.5) + float(int(x)) + x % y + exp(y)\n}\n"
      "print(f(1.0, 2.0))\n",
      "g = 1\nh = 2.0\nfn r() -> float { return h * 2.0 }\nfn q() -> int { return g + 1 }\nfn v() { print(g) }\n"
      "g = q()\nh = r()\nv()\nfor i in 0..3 { g += i }\nprint(g, h, \"s\")\n",
      "b = 3 < 4\nprint(b)\n",
  };
  return c;
}

}  // namespace

TEST_CASE("aarch64: every pattern of the table covers something, and every node kind selection sees has one") {
  std::multiset<std::string> seen;
  for (const std::string& src : corpus()) {
    INFO(src);
    auto u = used(a64(src, "isel"));
    seen.insert(u.begin(), u.end());
  }
  namespace fs = std::filesystem;
  for (const auto& e : fs::directory_iterator(fs::path(DESCENT_TESTS_DIR) / "programs")) {
    if (e.path().extension() != ".ds") continue;
    std::string src = descent::testing::read_text(e.path().string());
    Session s;
    std::string error;
    REQUIRE(s.set_native_target("aarch64", &error));
    if (s.compile(src, e.path().filename().string()).status != Outcome::Ok) continue;
    StageResult r = s.stage("native-isel");
    if (!r.ok) continue;
    auto u = used(r.text);
    seen.insert(u.begin(), u.end());
  }
  // No stage makes an `and` node yet (the language has no bitwise and; x86-64's AND patterns
  // wait in the same way).
  const std::set<std::string> waiting = {"ANDXrr", "ANDXri"};
  {
    // The REPL's echo of an expression statement's value (an int and a float).
    Session s;
    std::string error;
    REQUIRE(s.set_native_target("aarch64", &error));
    RunOptions opts;
    opts.echo = true;
    opts.out = [](std::string_view) {};
    REQUIRE(s.submit("x = 3\nx + 1\n2.5 * float(x)\n", "echo.ds", opts).status == Outcome::Ok);
    auto u = used(s.stage("native-isel").text);
    seen.insert(u.begin(), u.end());
  }
  for (const auto& p : native::a64_patterns()) {
    INFO(std::string(p.name));
    CHECK((seen.count(p.name) > 0 || waiting.count(p.name)));
  }
  const std::set<native::NK> legalized = {native::NK::SDiv, native::NK::SRem, native::NK::FRem,
                                          native::NK::FMath, native::NK::FConst,
                                          // x86-64's own: AArch64's legalisation never makes them
                                          native::NK::X86Div, native::NK::X86Rem, native::NK::Imm64};
  for (int k = 0; k < native::kNumNodeKinds; ++k) {
    auto kind = static_cast<native::NK>(k);
    INFO(std::string(native::nk_name(kind)));
    bool covered = kind == native::NK::Reg;
    for (const auto& p : native::a64_patterns()) covered = covered || p.node == kind;
    CHECK((covered || legalized.count(kind)));
  }
}

TEST_CASE("aarch64: tree covering finds madd and msub, and leaves a shared product alone") {
  std::string isel = a64("fn f(a: int, b: int, c: int) -> int { return a * b + c }\n", "isel");
  CHECK(contains(isel, "madd v0(a), v1(b), v2(c)"));
  CHECK(contains(isel, "MUL.prod MADDXrrr"));
  CHECK(!contains(isel, "mul v"));
  isel = a64("fn f(a: int, b: int, c: int) -> int { return c - a * b }\n", "isel");
  CHECK(contains(isel, "msub v0(a), v1(b), v2(c)"));
  // A madd inside a product that another madd takes: each gets its own operands.
  isel = a64("fn f(a: int, b: int, c: int, x: int) -> int { return x * (a * b + c) + a }\n", "isel");
  CHECK(contains(isel, "v8 = madd v0(a), v1(b), v2(c)"));
  CHECK(contains(isel, "madd v3(x), v8, v0(a)"));
  // A product used twice is computed once, in a register: no madd may take it whole.
  isel = a64("fn f(a: int, b: int) -> int {\n  p = a * b\n  return (p + 1) * (p + 2)\n}\n", "isel");
  CHECK(contains(isel, "MULXrr"));
  // x86-64 has no such instruction: imul then add.
  std::string x86 = a64("fn f(a: int, b: int, c: int) -> int { return a * b + c }\n", "isel", "x86-64");
  CHECK(contains(x86, "imul v0(a), v1(b)"));
  CHECK(contains(x86, "IMUL64rr"));
}

TEST_CASE("aarch64: constants cost their 16-bit chunks; immediates fit 12 bits or a logical pattern") {
  std::string isel = a64("fn f(a: int) -> int { return a + 7 + 4096 + 70000 + 4295032833 + 1311768467463790320"
                         " + -71777214294589696 + -1 }\n", "isel");
  CHECK(contains(isel, "add v0(a), 7"));           // imm12
  CHECK(contains(isel, "mov 4096"));               // past imm12: a register (one movz)
  CHECK(contains(isel, "MOVZ+MOVK n"));            // 70000 = 0x1_1170
  CHECK(contains(isel, "MOVZ+2MOVK n"));           // 0x1_0001_0001
  CHECK(contains(isel, "MOVZ+3MOVK n"));           // 0x1234_5678_9abc_def0
  CHECK(contains(isel, "mov -71777214294589696"));  // 0xff00ff00ff00ff00: orr's logical immediate
  CHECK(contains(isel, "ORRXri n"));
  CHECK(contains(isel, "SUBXri.neg"));             // + -1 is sub #1
  // x86-64: every constant that fits 32 bits is an immediate operand of add.
  std::string x86 = a64("fn f(a: int) -> int { return a + 4096 }\n", "isel", "x86-64");
  CHECK(contains(x86, "addi v0(a), 4096"));
}

TEST_CASE("aarch64: branches, comparisons and selects") {
  // A branch on a bool in a register: `if b` jumps away when b is 0, one cbz (x86-64: test,
  // je).
  std::string isel = a64("fn f(b: bool) -> int {\n  if b { return 1 }\n  return 2\n}\n", "isel");
  CHECK(contains(isel, "cbz v0(b)"));
  CHECK(contains(isel, "NOT.zero CBZX"));
  std::string x86 = a64("fn f(b: bool) -> int {\n  if b { return 1 }\n  return 2\n}\n", "isel", "x86-64");
  CHECK(contains(x86, "test v0(b)"));
  CHECK(contains(x86, "TEST64rr"));
  // A comparison feeding a branch: cmp + b.cc.
  isel = a64("fn f(a: int) -> int {\n  if a < 100 { return 1 }\n  return 2\n}\n", "isel");
  CHECK(contains(isel, "cmp v0(a), 100"));
  CHECK(contains(isel, "b.ge"));
  // Every float comparison is one fcmp and one condition (x86-64 needs two flags for == and
  // != with a nan: FSETCC, four instructions).
  isel = a64("fn f(x: float, y: float) -> bool { return x == y }\n", "isel");
  CHECK(contains(isel, "fcmp v0(x), v1(y)"));
  CHECK(contains(isel, "cset.eq"));
  x86 = a64("fn f(x: float, y: float) -> bool { return x == y }\n", "isel", "x86-64");
  CHECK(contains(x86, "FSETCC"));
  isel = a64("fn f(x: float, y: float) -> bool { return x < y }\n", "isel");
  CHECK(contains(isel, "cset.mi"));  // less than, false with a nan
}

TEST_CASE("aarch64: sdiv does not trap, so a division keeps only its check for zero") {
  std::string legal = a64("fn f(a: int, b: int) -> int { return a / b + a % b }\n", "legal");
  CHECK(contains(legal, "divcheck (division by zero) + sdiv.safe (sdiv)"));
  CHECK(contains(legal, "srem.safe (sdiv, msub)"));
  std::string isel = a64("fn f(a: int, b: int) -> int { return a / b + a % b }\n", "isel");
  CHECK(contains(isel, "cbz.divcheck v1(b)"));
  CHECK(contains(isel, "sdiv v0(a), v1(b)"));
  CHECK(contains(isel, "srem v0(a), v1(b)"));
  // By INT_MIN (a constant after folding): x86-64 uses idiv with no checks; AArch64 sdiv.
  const std::string by_min = "fn f(a: int) -> int { return a / (-9223372036854775807 - 1) }\n";
  CHECK(contains(a64(by_min, "combine", "x86-64"), "x86.idiv"));
  std::string c = a64(by_min, "combine");
  CHECK(!contains(c, "x86.idiv"));
  CHECK(!contains(c, "imm64"));
  CHECK(contains(a64(by_min, "isel"), "SDIVXr"));
}

TEST_CASE("aarch64: linear scan on AAPCS64's registers") {
  const native::Target& t = native::aarch64_target();
  // Many values at once, some across a call, ints and floats.
  std::string src =
      "fn g(x: int) -> int { return x + 1 }\n"
      "fn f(a: int, b: int, x: float) -> float {\n"
      "  c = a * 3\n  d = b * 5\n  e = a + b\n  y = x * 2.0\n  z = x + 1.0\n"
      "  k = g(c)\n"
      "  return float(c + d + e + k) + y + z\n}\nprint(f(1, 2, 3.0))\n";
  std::string ra = a64(src, "regalloc");
  INFO(ra);
  std::set<std::string> allowed_gpr, allowed_fpr, callee_gpr, callee_fpr;
  for (int r : t.regs.caller_saved) allowed_gpr.insert(t.gpr(r));
  for (int r : t.regs.callee_saved) allowed_gpr.insert(t.gpr(r)), callee_gpr.insert(t.gpr(r));
  for (int r : t.regs.fprs) allowed_fpr.insert(t.fpr(r));
  for (int r : t.regs.fprs_callee_saved) callee_fpr.insert(t.fpr(r));
  std::regex line(";\\s+v\\S*\\s+\\[\\d+, \\d+\\]\\s+(\\S+)(.*)");
  int across = 0, lines = 0;
  size_t at = 0;
  while ((at = ra.find("; v", at)) != std::string::npos) {
    size_t end = ra.find('\n', at);
    std::string l = ra.substr(at, end - at);
    at = end;
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    ++lines;
    std::string where = m[1];
    if (where == "[slot") continue;
    bool fl = where[0] == 'd';
    CHECK_MESSAGE((fl ? allowed_fpr.count(where) : allowed_gpr.count(where)), l);
    if (contains(m[2], "live across a call")) {
      ++across;
      CHECK_MESSAGE((fl ? callee_fpr.count(where) : callee_gpr.count(where)), l);
    }
  }
  CHECK(lines >= 8);
  CHECK(across >= 2);  // ints and floats live across g(c)
  // The float live across the call stays in a register (d8-d15); x86-64 keeps no xmm
  // register across a call, so there it goes to the stack.
  CHECK(contains(ra, "(live across a call)"));
  CHECK(contains(a64(src, "regalloc", "x86-64"), "[slot"));
  CHECK(contains(ra, "callee-saved used: x19"));
}

TEST_CASE("aarch64: the views name the target; the asm stage lists words and labels") {
  std::string listing = a64("x = 0\nwhile x < 3 { x += 1 }\nprint(x)\n", "asm");
  CHECK(contains(listing, "  0000  a9bf7bfd  stp x29, x30, [sp, #-16]!"));
  CHECK(contains(listing, ".L1:"));
  CHECK(std::regex_search(listing, std::regex("b\\.(lt|ge|ne|eq|gt|le) \\.L[0-9]+")));
  CHECK(contains(listing, "bytes\n"));
  CHECK(contains(a64("print(1)\n", "patterns"), "cost  aarch64"));
  CHECK(contains(a64("print(1)\n", "patterns", "x86-64"), "cost  x86"));
  Session s;
  std::string error;
  CHECK_FALSE(s.set_native_target("mips", &error));
  CHECK(contains(error, "x86-64, aarch64"));
}

TEST_CASE("aarch64: random programs select and allocate with no hole in the table") {
  // The differential test's generator (loops, recursion, floats, every operator, planted
  // runtime errors): every body compiles down to regalloc for AArch64, and for x86-64 too.
  int compiled = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    testing::ProgramGenerator gen(seed);
    const std::string& src = gen.source();
    for (const char* target : {"aarch64", "x86-64"}) {
      Session s;
      std::string error;
      REQUIRE(s.set_native_target(target, &error));
      if (s.compile(src, "seed.ds").status != Outcome::Ok) continue;
      StageResult r = s.stage("native-regalloc");
      INFO("seed " << seed << " on " << target << "\n" << src);
      REQUIRE(r.ok);
      CHECK(!contains(r.text, "instruction selector:"));
      compiled += std::string(target) == "aarch64";
    }
  }
  CHECK(compiled >= 250);
}
