// Issue 37's precision, feature by feature, each against the setting that turns it off: loop
// unrolling (--unroll), widening thresholds, the congruence and small-set domains, every
// function analysed (one nothing calls: with unknown arguments), calls in their caller's
// context (with recursion followed call by call and the summary as the fallback), readable
// bounds and --explain. The examples are the table. Soundness of all of it is the
// random-program test in analysis_test.cpp; here, that each technique still does its work.
#include <doctest/doctest.h>

#include <string>

#include "analysis/analysis.h"
#include "pipeline/pipeline.h"

using namespace descent;
using namespace descent::analysis;

namespace {

struct Settings {
  Domain domain = Domain::Product;
  int unroll = 64;
  bool thresholds = true, contexts = true, explain = false;
};

// The report `descent dump --stage analysis` prints for src under these settings.
std::string report(const std::string& src, const Settings& s = {}) {
  Session session;
  Outcome o = session.compile(src, "p.ds");
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  session.set_analysis_domain(s.domain);
  session.set_analysis_unroll(s.unroll);
  session.set_analysis_thresholds(s.thresholds);
  session.set_analysis_contexts(s.contexts);
  session.set_analysis_explain(s.explain);
  return session.stage("analysis").text;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Settings classic() {  // the lessons' settings (docs/analysis.md sections 1-9)
  Settings s;
  s.domain = Domain::Intervals;
  s.unroll = 0;
  s.thresholds = false;
  s.contexts = false;
  return s;
}

const char* kClampSum =
    "fn clamp(x: int) -> int {\n"
    "  if x < 0 { return 0 }\n"
    "  if x > 100 { return 100 }\n"
    "  return x\n"
    "}\n"
    "total = 0\n"
    "for i in 0..10 {\n"
    "  total += clamp(i * 20)\n"
    "}\n"
    "after = total\n";

const char* kGcd =
    "a = 1071\n"
    "b = 462\n"
    "while b != 0 {\n"
    "  t = a % b\n"
    "  a = b\n"
    "  b = t\n"
    "}\n"
    "print(a)\n";

}  // namespace

TEST_CASE("the issue's table: the clamp sum, gcd, a short loop, a function nothing calls") {
  // The clamp sum: exact with unrolling and contexts (Eva needs -eva-slevel 100 for 700).
  std::string sum = report(kClampSum);
  CHECK(has(sum, "total in [0, 700], = 0 mod 20"));  // in the loop: every iteration's
  CHECK(has(sum, "# after = 700"));
  CHECK_FALSE(has(sum, "may wrap"));
  std::string sum_classic = report(kClampSum, classic());
  CHECK(has(sum_classic, "# after: any"));
  CHECK(has(sum_classic, "may wrap around"));
  // Without contexts the calls share one summary: a multiple of 20 up to 100 per iteration.
  Settings summaries;
  summaries.contexts = false;
  CHECK(has(report(kClampSum, summaries), "# after in [0, 1000], = 0 mod 20"));

  // gcd: three exact iterations, and the division is safe on each.
  std::string gcd = report(kGcd);
  CHECK(has(gcd, "t in {0, 21, 147}"));
  CHECK_FALSE(has(gcd, "division by zero"));
  std::string gcd_classic = report(kGcd, classic());
  CHECK(has(gcd_classic, "possible division by zero"));

  // A loop of five: five sums, as a set.
  CHECK(has(report("c = 0\nfor j in 0..5 {\n  c += j\n}\n"), "c in {0, 1, 3, 6, 10}"));

  // A function nothing calls: analysed with any argument, and its alarm says so. One after a
  // recursive function too (the graph's builder once stopped at the recursive call).
  std::string uncalled = report(
      "fn forever(n: int) -> int {\n  return forever(n + 1)\n}\n"
      "fn ratio(x: int) -> int {\n  return 100 / x\n}\nprint(1)\n");
  CHECK(has(uncalled, "# never called: facts for any argument; x: any; result in [-100, 100]"));
  CHECK(has(uncalled, "p.ds:5:14: error (possible): possible division by zero: the divisor of '100 / x' may be 0 "
                      "(if ratio is called with any argument: nothing calls it)"));
  CHECK(has(uncalled, "endless recursion: forever never returns"));
}

TEST_CASE("unrolling: iteration by iteration up to --unroll, then widening from the join") {
  const std::string loop = "k = 0\nwhile k < 50 {\n  k += 7\n}\nprint(k)\n";
  std::string unrolled = report(loop, {Domain::Intervals, 64, true, true, true});
  CHECK(has(unrolled, "k in [7, 56]"));
  CHECK(has(unrolled, "line 2: unrolled: its head reached 9 times at most, each state apart: no widening"));
  // Fewer iterations than the loop runs: widened, at the program's constants (49 < 50).
  std::string cut = report(loop, {Domain::Intervals, 3, true, true, true});
  CHECK(has(cut, "still running after 3 unrolled iterations, so widened"));
  CHECK(has(cut, "widening stopped at the program's constants: k <= 49"));
  // After the loop: exactly 56 with unrolling (the last iteration's exit).
  CHECK(has(report("k = 0\nwhile k < 50 {\n  k += 7\n}\nafter = k\n"), "after = 56"));
}

TEST_CASE("wrap-around: the note names the first iteration that may wrap") {
  // 9223372036854775000 + 100 * 9 passes INT64_MAX (...807): the ninth iteration wraps.
  std::string text = report("x = 9223372036854775000\nfor i in 0..10 {\n  x += 100\n}\n");
  CHECK(has(text, "p.ds:3:5: note: 'x += 100' may wrap around (first in iteration 9 of the loop on line 2)"));
  // Widened, the loop has no iteration to name.
  std::string widened = report("x = 9223372036854775000\nfor i in 0..10 {\n  x += 100\n}\n", classic());
  CHECK(has(widened, "'x += 100' may wrap around (int arithmetic"));
}

TEST_CASE("thresholds: a widened bound stops at the program's own constants") {
  // x's bound is not the loop's test, so narrowing cannot win it back: only a threshold
  // (the constant 50, where `x < 50` stops it) keeps it.
  const std::string loop = "i = 0\nx = 0\nwhile i < 1000 {\n  i += 1\n  if x < 50 {\n    x += 1\n  }\n}\nafter = x\n";
  Settings s = classic();
  s.thresholds = true;
  CHECK(has(report(loop, s), "# after in [0, 50]"));
  CHECK(has(report(loop, classic()), "# after >= 0"));  // widening's end, printed as the type's
}

TEST_CASE("congruences and small sets: alone and in the product") {
  const std::string src = "x = 0\nfor k in 0..10 {\n  x = k * 6\n}\n";
  Settings s;
  s.unroll = 0;  // widened: what survives is what each domain can say
  CHECK(has(report(src, s), "x in [0, 54], = 0 mod 6"));
  s.domain = Domain::Intervals;
  CHECK(has(report(src, s), "x in [0, 54]\n"));
  // Alone, a congruence has no bounds: k * 6 may wrap, and wrapping keeps only the
  // power-of-two part of the modulus.
  s.domain = Domain::Congruences;
  CHECK(has(report("s = 0\nfor i in 0..4 {\n  s += 6\n}\n", s), "s = 0 mod 2"));
  s.domain = Domain::Sets;
  s.unroll = 64;
  CHECK(has(report("s = 0\nfor i in 0..4 {\n  s += 6\n}\n", s), "s in {6, 12, 18, 24}"));
}

TEST_CASE("contexts: each call in its caller's state, recursion call by call, the summary as fallback") {
  const std::string sign =
      "fn sign(x: int) -> int {\n"
      "  if x < 0 { return -1 }\n"
      "  if x == 0 { return 0 }\n"
      "  return 1\n"
      "}\n"
      "a = sign(-5)\n"
      "b = sign(7)\n";
  Settings explain;
  explain.explain = true;
  std::string ctx = report(sign, explain);
  CHECK(has(ctx, "# a = -1\n"));
  CHECK(has(ctx, "# b = 1\n"));
  CHECK(has(ctx, "# x in {-5, 7}; result in {-1, 1}"));  // the fn line: the contexts' join
  CHECK(has(ctx, "fn sign: analysed in 2 calling contexts"));
  Settings summaries = explain;
  summaries.contexts = false;
  std::string sum = report(sign, summaries);
  CHECK(has(sum, "# a in {-1, 1}"));
  CHECK(has(sum, "fn sign: its summary (arguments joined over every call)"));

  // Recursion, call by call: fact(10) is exact and nothing wraps.
  const std::string fact = "fn fact(n: int) -> int {\n  if n <= 1 { return 1 }\n  return n * fact(n - 1)\n}\n";
  std::string f10 = report(fact + "f = fact(10)\n", explain);
  CHECK(has(f10, "# f = 3628800"));
  CHECK(has(f10, "fn fact: analysed in 10 calling contexts"));
  CHECK_FALSE(has(f10, "may wrap"));
  // Deeper than 32 calls: the summary takes over (sound, and it says so).
  std::string f40 = report(fact + "f = fact(40)\n", explain);
  CHECK(has(f40, "fn fact: its summary"));
  CHECK(has(f40, "# f: any"));
  // An unknown argument reaches the same context again at once: the summary.
  std::string unknown =
      report(fact + "y = 1\nfor i in 0..1000 {\n  y = y * 7\n}\nprint(fact(y))\n", explain);
  CHECK(has(unknown, "fn fact: its summary"));
  CHECK(has(unknown, "# n: any; result: any"));
  // A function nothing calls, and what it calls: analysed once, with any argument.
  std::string uncalled = report(fact + "fn g(k: int) -> int {\n  return fact(k)\n}\nprint(1)\n", explain);
  CHECK(has(uncalled, "fn g: never called: analysed once, with any argument"));

  // One call that divides by zero among safe ones: a possible error (not definite, not
  // silent); with only the safe calls, no alarm at all.
  const std::string div = "fn inv(x: int) -> int {\n  return 100 / x\n}\n";
  std::string some = report(div + "a = inv(5)\nb = inv(0)\n");
  CHECK(has(some, "p.ds:2:14: error (possible): possible division by zero"));
  CHECK(has(some, "# b: never assigned (fails or never returns here)"));
  std::string safe = report(div + "a = inv(5)\nb = inv(-4)\n");
  CHECK_FALSE(has(safe, "division by zero"));
  CHECK(has(safe, "# b = -25"));

  // A loop calling with few distinct values: one context per value, looked up after that
  std::string memo = report(
      "fn half(x: int) -> int {\n  return x / 2\n}\ns = 0\nfor i in 0..1000 {\n  s += half(i % 2)\n}\n", explain);
  // (0, 1, and {0, 1} once the loop is widened), not one per iteration; s is always 0.
  CHECK(has(memo, "fn half: analysed in 3 calling contexts"));
  CHECK(has(memo, "s is always 0 here"));
}
