// The native backend (native/): the engine against the AST walker on both targets (AArch64
// under qemu-aarch64), its runtime errors and interrupts, the pattern table's coverage and the cover it chooses, and its views.
// (The golden, must-fail and random-program suites run it as one of Session::engines();
// tests/native/test_encoder.cpp checks the encoder against LLVM's disassembler.)
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>

#include "lang/walker.h"
#include "native/backend.h"
#include "native/native.h"
#include "pipeline/pipeline.h"
#include "proc/cross.h"
#include "tests/engine_util.h"

using namespace descent;
using descent::testing::EngineRunner;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs each input on the walker and on native, x86-64 here (when this host is one) and
// AArch64 under qemu-aarch64, each in a session of its own; every result must agree.
void agree(const std::vector<std::string>& inputs) {
  proc::CrossTools tools;
  std::string why;
  REQUIRE_MESSAGE(proc::find_cross_tools("aarch64", &tools, &why), why);
  EngineRunner walker(make_ast_walker()), nat(native::make_native_engine()),
      a64(native::make_native_engine(native::aarch64_target()));
  for (const std::string& in : inputs) {
    INFO(in);
    auto a = walker.submit(in);
    if (native::host_supported()) {
      auto b = nat.submit(in);
      CHECK(a.compiled == b.compiled);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
    }
    auto c = a64.submit(in);
    INFO("aarch64");
    CHECK(a.compiled == c.compiled);
    CHECK(a.output == c.output);
    CHECK(a.error == c.error);
  }
}

// One stage of a program through the Session, the way `descent dump` asks for it.
std::string stage(const std::string& src, const std::string& name, Format f = Format::Text) {
  Session s;
  auto o = s.compile(src, "t.ds");
  REQUIRE(o.status == Outcome::Ok);
  return s.stage(name, f).text;
}

}  // namespace

TEST_CASE("native: arithmetic, comparisons, conversions and builtins agree with the walker") {
  agree({
      "x = 7\ny = -3\nprint(x + y, x - y, x * y, x / y, x % y, -x, y / 2, y % 2, x / 4, -x / 4, -x % 4)",
      "a = 9223372036854775807\nprint(a + 1, a * 3, -a - 1, (-a - 1) / -1, (-a - 1) % -1)",
      "b = 12345678901\nprint(b * b, b + 4000000000, b / 1000000007, b % 1000000007)",
      "f = 2.5\ng = -0.0\nprint(f + 1.0, f * f, f / 0.0, -f / 0.0, 0.0 / 0.0, g, -g, f - f)",
      "print(sqrt(2.0), exp(1.0), log(10.0), sin(1.0), cos(1.0), floor(-2.5), abs(-3.5), abs(-4))",
      "n = -9223372036854775807 - 1\nprint(abs(n), min(3, -2), max(3, -2), min(1.5, 0.0 / 0.0), max(0.0 / 0.0, 1.5))",
      "print(float(3), int(2.9), int(-2.9), int(-9223372036854775808.0))",
      "p = 1.0\nq = 0.0 / 0.0\nprint(p < q, p <= q, p > q, p >= q, p == q, p != q, q == q, q != q)",
      "print(1 < 2, 2 <= 2, 3 > 4, 3 >= 4, 5 == 5, 5 != 5, true == false, true != false, !true)",
      "print(2.5 % 1.0, -7.5 % 2.0, 7 % -3, -7 % 3)",
      "t = true\nu = t && 1 < 2 || false\nprint(u, !u)",
      "print(\"text\", 1, 2.0, true)",
  });
}

TEST_CASE("native: control flow, loops, recursion and globals agree with the walker") {
  agree({
      "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(20))",
      "s = 0\nfor i in 0..100 { if i % 3 == 0 { continue } s += i; if s > 1000 { break } }\nprint(s)",
      "fn loop(n: int) -> int {\n  s = 0\n  for i in 0..n { s += i * i }\n  return s\n}\nprint(loop(1000))",
      "fn last(n: int) -> int {\n  i = 0\n  for i in 0..n { }\n  return i\n}\nprint(last(5), last(0))",
      "x = 10\nwhile x > 0 { x -= 3 }\nprint(x)",
      // a swap through a temporary: the block's values cross in a cycle
      "fn swap(n: int) -> int {\n  a = 1\n  b = 2\n  for i in 0..n { t = a; a = b; b = t }\n  return a * 10 + b\n}\nprint(swap(3), swap(4))",
      "fn even(n: int) -> bool { if n == 0 { return true } return odd(n - 1) }\n"
      "fn odd(n: int) -> bool { if n == 0 { return false } return even(n - 1) }\nprint(even(10), odd(7))",
      "fn h(x: float) -> float { return x * 0.5 + 1.0 }\ny = 3.0\nfor i in 0..5 { y = h(y) }\nprint(y)",
      "g = 5\nfn readg() -> int { return g * 2 }\nprint(readg())",
      "fn v() { print(\"void\") }\nv()\nv()",
  });
}

TEST_CASE("native: division by constants (shifts, magic numbers, idiv) agrees with the walker") {
  // Each divisor is a constant in the code: powers of two take shifts, others a magic
  // multiplication, INT_MIN an idiv. The dividends cover both signs, the ends and near them.
  std::string prog = "fn probe(x: int) {\n  print(x";
  for (const char* d : {"2", "3", "5", "7", "10", "16", "-1", "-2", "-3", "-7", "-16", "641", "1000003",
                        "6700417", "-1000000007", "4611686018427387904", "9223372036854775807",
                        "(-9223372036854775807 - 1)"})
    prog += std::string(", x / ") + d + ", x % " + d;
  prog += ")\n}\n";
  prog += "for i in -300..300 { probe(i * 7919) }\n"
          "m = -9223372036854775807 - 1\n"
          "for k in 0..64 { probe(m + k); probe(-1 - m - k); probe(k * 1000003 - 1) }\n";
  agree({prog});
}

TEST_CASE("native: many arguments go on the stack; values live across calls survive them") {
  agree({
      "fn many(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int) -> int {\n"
      "  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i\n}\n"
      "print(many(1, 2, 3, 4, 5, 6, 7, 8, 9))",
      "fn fl(a: float, b: float, c: float, d: float, e: float, f: float, g: float, h: float, i: float, j: float) -> float {\n"
      "  return a - b + c - d + e - f + g - h + i * j\n}\nprint(fl(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0))",
      "fn mix(a: int, x: float, b: int, y: float, c: int, d: int, e: int, f: int, g: int, z: float) -> float {\n"
      "  return float(a + b + c + d + e + f + g) * x + y - z\n}\nprint(mix(1, 0.5, 2, 0.25, 3, 4, 5, 6, 7, 0.125))",
      // sixteen ints and floats live across a call: callee-saved registers, then spills
      "fn id(x: int) -> int { return x }\n"
      "fn pressure(n: int) -> float {\n"
      "  a = n + 1\n  b = n + 2\n  c = n + 3\n  d = n + 4\n  e = n + 5\n  f = n + 6\n  g = n + 7\n  h = n + 8\n"
      "  p = float(n) * 1.5\n  q = p + 1.0\n  r = q * 2.0\n  s = r - 0.5\n"
      "  k = id(n)\n"
      "  return float(a + b + c + d + e + f + g + h + k) + p + q + r + s\n}\nprint(pressure(3))",
  });
}

TEST_CASE("native: runtime errors point where the walker's do") {
  agree({
      "x = 0\nprint(1)\ny = 5 / x\nprint(2)",
      "x = 0\ny = 5 % x\n",
      "print(7 / 0)",
      "z = 0.0 / 0.0\nw = int(z)",
      "w = int(1.0e19)",
      "fn down(n: int) -> int { return down(n + 1) + 1 }\nprint(down(0))",
      "fn a(n: int) -> int { return b(n) }\nfn b(n: int) -> int { return a(n) }\na(1)",
      "fn depth(n: int) -> int { if n == 0 { return 0 } return 1 + depth(n - 1) }\nprint(depth(9999))",
      "fn depth(n: int) -> int { if n == 0 { return 0 } return 1 + depth(n - 1) }\nprint(depth(10000))",
  });
}

TEST_CASE("native: the interrupt flag and step limits stop it") {
  if (!native::host_supported()) return;
  EngineRunner s(native::make_native_engine());
  std::atomic<bool> flag{false};
  RunOptions opts;
  opts.interrupt = &flag;
  descent::testing::check_interrupt_stops(s, flag, opts);
  RunOptions limited;
  limited.step_limit = 1000;
  CHECK(s.submit("while true { }\n", limited).error == "1:1: interrupted");
  // A recursion without loops: only calls count, and the limit still stops it (before the
  // 10,000th frame would have said "stack overflow").
  CHECK(s.submit("fn f(n: int) -> int { return f(n) }\nf(1)\n", limited).error == "1:30: interrupted");
  CHECK(s.submit("for i in 0..10 { }\nprint(\"done\")\n", limited).output == "done\n");
}

TEST_CASE("native: REPL-style inputs share globals and see redefined functions") {
  agree({"x = 41", "fn f() -> int { return x + 1 }", "print(f())", "fn f() -> int { return x * 2 }",
         "print(f())", "x = 1\nprint(f())"});
}

TEST_CASE("native: every DAG node kind that reaches selection is covered by some pattern") {
  // Legalisation removes these kinds: none is left for the selector.
  const std::set<native::NK> legalized = {native::NK::SDiv, native::NK::SRem, native::NK::FRem,
                                          native::NK::FMath, native::NK::FConst};
  for (int k = 0; k < native::kNumNodeKinds; ++k) {
    auto kind = static_cast<native::NK>(k);
    INFO(native::nk_name(kind));
    bool covered = kind == native::NK::Reg;  // a leaf: the value is in its register already
    for (const auto& p : native::patterns()) covered = covered || p.node == kind;
    CHECK((covered || legalized.count(kind)));
  }
}

TEST_CASE("native: legalisation leaves no node the selector lacks a pattern for") {
  std::string s = stage("fn f(a: int, b: int, x: float) -> float {\n"
                        "  return float(a / b + a % b + a / 8 + a % 8 + a / -1 + a / 7 + a / (-9223372036854775807 - 1)) + x % 2.0 + exp(x)\n}\n",
                        "native-combine");
  CHECK(!contains(s, "= sdiv n"));
  CHECK(!contains(s, "= srem n"));
  CHECK(!contains(s, "= frem"));
  CHECK(!contains(s, "= fmath"));
  CHECK(contains(s, "divcheck"));
  CHECK(contains(s, "sdiv.safe"));
  CHECK(contains(s, "x86.idiv"));  // by INT_MIN
  CHECK(contains(s, "mulhs"));     // by 7: the magic number
  CHECK(contains(s, "sra"));
  CHECK(contains(s, "libcall fmod"));
  std::string legal = stage("fn f(a: int) -> int { return a / 8 }\n", "native-legal");
  CHECK(contains(legal, "a power of two -> shifts"));
}

TEST_CASE("native: the cover is the cheapest: compare-and-branch, immediates, shifts") {
  std::string branch = stage("fn f(a: int, b: int) -> int {\n  if a < b { return 1 }\n  return 2\n}\n", "native-isel");
  CHECK(contains(branch, "JCC_4"));
  CHECK(contains(branch, "CMP64rr"));
  CHECK(!contains(branch, "SETCC"));  // not cmp, setl, movzx, test, jne
  std::string imm = stage("fn g(a: int) -> int { return a + 5 }\n", "native-isel");
  CHECK(contains(imm, "ADD64ri32"));
  CHECK(!contains(imm, "MOV64ri32"));  // the 5 is an operand, not a register
  std::string value = stage("fn h(a: int, b: int) -> bool { return a < b }\n", "native-isel");
  CHECK(contains(value, "SETCC"));  // a comparison as a value: flags -> reg
  std::string shift = stage("fn k(a: int) -> int { return a * 8 }\n", "native-combine");
  CHECK(contains(shift, "x * 2^k -> x << k"));
  std::string nb = stage("fn m(a: bool) -> int {\n  if !a { return 1 }\n  return 0\n}\n", "native-isel");
  CHECK(contains(nb, "TEST"));
}

TEST_CASE("native: the views show each stage") {
  const std::string fib = "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(10))\n";
  CHECK(contains(stage(fib, "native-dag"), "setcc"));
  CHECK(contains(stage(fib, "native-dag", Format::Dot), "digraph"));
  CHECK(contains(stage(fib, "native-isel", Format::Dot), "fillcolor"));
  std::string ra = stage(fib, "native-regalloc");
  CHECK(contains(ra, "live across a call"));
  CHECK(contains(ra, "rbx"));
  std::string as = stage(fib, "native-asm");
  CHECK(contains(as, "push rbp"));
  CHECK(contains(as, "55 "));  // push rbp's byte
  CHECK(contains(as, "ret"));
  CHECK(contains(stage(fib, "native-sched"), "b0:"));
  std::string table = stage(fib, "native-patterns");
  CHECK(contains(table, "ADD64ri32"));
  CHECK(contains(table, "brcond(flags)"));
}
