// Abstract interpretation (analysis/): the soundness oracle on random programs, precision on
// loops with known bounds, alarms on the programs that fail at run time, golden reports, the
// domains' arithmetic at its edges (wrap-around, INT_MIN / -1, nan), and termination on big
// and hostile input.
//
// Environment (optional): DESCENT_ANALYSIS_SEEDS=N random programs (default 2000),
// DESCENT_ANALYSIS_SHOW=S prints seed S's program with its interval report.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <atomic>
#include <chrono>

#include "analysis/analysis.h"
#include "tests/diff/program_gen.h"
#include "tests/golden.h"
#include "tests/programs_test.h"

using namespace descent;
using namespace descent::analysis;
using descent::testing::ProgramGenerator;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// Compiles `src` in a fresh Session and returns it (REQUIREs a clean compile).
std::unique_ptr<Session> compiled(const std::string& src, const std::string& name = "test.ds") {
  auto s = std::make_unique<Session>();
  Outcome o = s->compile(src, name);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  return s;
}

std::string report(const std::string& src, Domain d = Domain::Intervals) {
  auto s = compiled(src);
  s->set_analysis_domain(d);
  StageResult r = s->stage("analysis");
  REQUIRE(r.ok);
  return r.text;
}

}  // namespace

TEST_CASE("soundness: every value the AST walker computes lies inside the analysed fact") {
  const int seeds = env_int("DESCENT_ANALYSIS_SEEDS", 2000);
  const int seeds_each = env_int("DESCENT_ANALYSIS_SEEDS_EACH", 700);
  const int show = env_int("DESCENT_ANALYSIS_SHOW", -1);
  int checked = 0, failures = 0;
  size_t observations = 0;
  for (int seed = 1; seed <= seeds && failures < 5; ++seed) {
    ProgramGenerator gen{uint64_t(seed)};
    const std::string& src = gen.source();
    Session session;
    Outcome o = session.compile(src, "seed.ds");
    REQUIRE_MESSAGE(o.status == Outcome::Ok, "seed " << seed << ": " << o.message);
    // The default domain (the reduced product) and intervals on every seed: every
    // component's transfer functions run inside the product, whose facts are their meet, so
    // an unsound component makes the product unsound. Each component alone (its own join,
    // widening and printing) on the first seeds_each.
    std::vector<std::shared_ptr<const Result>> results;
    for (Domain d : all_domains())
      if (seed <= seeds_each || d == Domain::Product || d == Domain::Intervals)
        results.push_back(session.analyze(d));
    if (seed == show) std::printf("%s\n%s", src.c_str(), session.stage("analysis").text.c_str());
    std::string violation;
    RunOptions opts;
    opts.step_limit = 5'000'000;
    opts.observe = [&](const Stmt& s, Value v) {
      ++observations;
      if (!violation.empty()) return;
      for (const auto& r : results)
        if (!r->admits(&s, v)) {
          violation = std::string(domain_name(r->domain)) + ": line " + std::to_string(s.loc.line) + ": '" +
                      s.name + "' = " + format_value(v, s.var_type) + " is outside the fact '" +
                      r->fact_for(&s) + "'";
          return;
        }
    };
    session.run(opts);
    ++checked;
    if (!violation.empty()) {
      ++failures;
      FAIL_CHECK("seed " << seed << ": " << violation << "\n" << src);
    }
  }
  MESSAGE(checked << " programs, " << observations << " observed values");
  CHECK(observations > size_t(seeds) * 20);
}

TEST_CASE("precision: loop counters with known bounds, and the value after a loop") {
  std::string text = report(
      "s = 0\n"
      "for i in 0..10 {\n"
      "  s = i * 2\n"
      "}\n"
      "k = 0\n"
      "while k < 100 {\n"
      "  k += 1\n"
      "}\n"
      "after = k\n"
      "for j in 3..k {\n"
      "  if j > 50 { break }\n"
      "  t = j\n"
      "}\n");
  INFO(text);
  auto s = compiled("for i in 0..10 { x = i }\n");
  auto r = s->analyze(Domain::Intervals);
  CHECK(has(r->facts_at_line(1), "i in [0, 9]"));
  CHECK(text.find("for i in 0..10 {       # i in [0, 9]") != std::string::npos);
  CHECK(text.find("# s in [0, 18]") != std::string::npos);
  CHECK(text.find("# k in [1, 100]") != std::string::npos);
  CHECK(text.find("# after = 100") != std::string::npos);  // narrowing won the bound back
  CHECK(text.find("# j in [3, 51]") != std::string::npos);  // unrolled: the break at 51
  CHECK(text.find("# t in [3, 50]") != std::string::npos);
}

TEST_CASE("precision: the loop counters of the held-out benchmark programs are bounded") {
  // bench/programs/b*.ds: every for loop's variable gets an interval as tight as its bounds'
  // intervals allow: [lo, hi - 1] of the bounds' facts, finite where they are.
  int loops = 0, finite = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DESCENT_TESTS_DIR) + "/../bench/programs")) {
    if (entry.path().extension() != ".ds") continue;
    std::string src = descent::testing::read_text(entry.path().string());
    Session session;
    if (session.compile(src, entry.path().filename().string()).status != Outcome::Ok) continue;
    auto r = session.analyze(Domain::Intervals);
    REQUIRE(r);
    for (const auto& f : r->cfg.functions)
      for (const auto& b : f.blocks)
        for (const auto& in : b.instrs) {
          if (in.kind != InstrKind::LoopBind) continue;
          ++loops;
          std::string fact = r->fact_for(in.stmt);
          INFO(entry.path().filename().string() << " line " << in.stmt->loc.line << ": " << fact);
          CHECK(fact.rfind("in [", 0) == 0);
          finite += fact.find("inf") == std::string::npos;
        }
  }
  CHECK(loops >= 4);
  CHECK(finite == loops);
}

TEST_CASE("alarms: the programs that fail at run time get one at the failing line") {
  // Each runtime-error program of tests/errors whose error an alarm covers: an error alarm of
  // that kind at that line; definite where the facts prove it.
  struct Want {
    const char* file;
    Alarm::Kind kind;
    bool definite;
  };
  const Want wants[] = {
      {"rt_div_assign_by_zero.ds", Alarm::Kind::DivisionByZero, false},
      {"rt_div_by_zero.ds", Alarm::Kind::DivisionByZero, true},
      {"rt_div_by_zero_literal.ds", Alarm::Kind::DivisionByZero, true},
      {"rt_mod_assign_by_zero.ds", Alarm::Kind::DivisionByZero, true},
      {"rt_mod_by_zero.ds", Alarm::Kind::DivisionByZero, false},
      {"rt_int_just_out_of_range.ds", Alarm::Kind::InvalidConversion, true},
      {"rt_int_of_huge.ds", Alarm::Kind::InvalidConversion, true},
      {"rt_int_of_inf.ds", Alarm::Kind::InvalidConversion, true},
      {"rt_int_of_nan.ds", Alarm::Kind::InvalidConversion, true},
      {"rt_int_of_negative_huge.ds", Alarm::Kind::InvalidConversion, true},
      {"rt_stack_overflow.ds", Alarm::Kind::EndlessRecursion, true},
      {"rt_stack_overflow_mutual.ds", Alarm::Kind::EndlessRecursion, true},
      {"rt_stack_overflow_void.ds", Alarm::Kind::EndlessRecursion, true},
  };
  for (const Want& w : wants) {
    std::string path = std::string(DESCENT_TESTS_DIR) + "/errors/" + w.file;
    std::string src = descent::testing::read_text(path);
    auto want = descent::testing::parse_expectations(src);
    REQUIRE(!want.errors.empty());
    uint32_t line = uint32_t(std::stoul(want.errors[0]));
    auto s = compiled(src, w.file);
    for (Domain d : {Domain::Intervals, Domain::Product}) {
      auto r = s->analyze(d);
      bool found = false;
      for (const auto& a : r->alarms)
        if (a.kind == w.kind && a.loc.line == line && a.definite == w.definite) found = true;
      INFO(w.file << " (" << domain_name(d) << "):\n" << format_alarms(*r, SourceFile(w.file, src)));
      CHECK(found);
    }
  }
}

TEST_CASE("alarms: no definite error on a golden program that runs clean") {
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DESCENT_TESTS_DIR) + "/programs")) {
    if (entry.path().extension() != ".ds") continue;
    std::string src = descent::testing::read_text(entry.path().string());
    auto want = descent::testing::parse_expectations(src);
    if (want.exit_code != 0) continue;
    Session session;
    if (session.compile(src, entry.path().filename().string()).status != Outcome::Ok) continue;
    ++programs;
    // The precise domains: a coarse one (signs) cannot prove `2 * 3 == 6 || 1 / 0 == 0`
    // skips its right side, and its definite alarm there is in code it believes may run.
    for (Domain d : {Domain::Intervals, Domain::Product}) {
      auto r = session.analyze(d);
      for (const auto& a : r->alarms) {
        INFO(entry.path().filename().string() << " (" << domain_name(d) << ") line " << a.loc.line << ": " << a.message);
        CHECK_FALSE((a.is_error() && a.definite));
      }
    }
  }
  CHECK(programs > 50);
}

TEST_CASE("alarms: constant conditions, unreachable code, constants the folder missed, wrap-around") {
  auto s = compiled(
      "x = 15\n"
      "if x > 3 { print(1) }\n"
      "fn f(n: int) -> int {\n"
      "  return n\n"
      "  print(n)\n"
      "}\n"
      "y = f(2) + x\n"
      "big = 9223372036854775807\n"
      "w = big + x\n");
  auto r = s->analyze(Domain::Intervals);
  std::string all = format_alarms(*r, SourceFile("t.ds", ""));
  INFO(all);
  CHECK(all.find("t.ds:2:6: warning (definite): the condition 'x > 3' is always true") != std::string::npos);
  CHECK(all.find(":5:3: warning (definite): unreachable code") != std::string::npos);
  CHECK(all.find(":7:1: warning (definite): y is always 17 here") != std::string::npos);
  CHECK(all.find(":9:9: note: 'big + x' may wrap around (int arithmetic is modulo 2^64)") != std::string::npos);
  CHECK(has(r->facts_at_line(9), "w: any"));
  // A literal condition is meant: no warning for `while true`.
  // (With `n == 5` the analysis would rightly keep n unbounded: n could pass 5 and wrap.)
  auto t = compiled("n = 0\nwhile true {\n  n += 1\n  if n >= 5 { break }\n}\nprint(n)\n");
  for (const auto& a : t->analyze(Domain::Intervals)->alarms) CHECK(a.kind != Alarm::Kind::ConditionAlways);
  CHECK(has(t->analyze(Domain::Intervals)->facts_at_line(3), "n in [1, 5]"));
}

TEST_CASE("domains: each says what it can, on the same program") {
  const std::string src =
      "a = 7\n"
      "b = -a\n"
      "c = a * 0\n"
      "d = 0\n"
      "if a > b { d = a } else { d = b }\n"
      "e = float(a) / 2.0\n";
  auto s = compiled(src);
  auto line = [&](Domain d, uint32_t l) { return joined(s->analyze(d)->facts_at_line(l)); };
  CHECK(line(Domain::Constants, 2) == "b = -7");
  CHECK(line(Domain::Signs, 2) == "b < 0");
  CHECK(line(Domain::Intervals, 2) == "b = -7");
  CHECK(line(Domain::Signs, 3) == "c = 0");
  CHECK(line(Domain::Constants, 6) == "e = 3.5");
  // A positive float over a positive float: underflow gives 0, inf / inf nan (signs forget
  // that 2.0 is finite).
  CHECK(line(Domain::Signs, 6) == "e >= 0 or nan");
  // The product: an interval with a hole the signs know about makes a division safe.
  auto p = compiled(
      "fn g(x: int) -> int {\n"
      "  if x != 0 {\n"
      "    return 100 / x\n"
      "  }\n"
      "  return 0\n"
      "}\n"
      "print(g(0) + g(5) + g(-5))\n");
  p->set_analysis_contexts(false);  // one summary for the three calls: x in [-5, 5]
  auto prod = p->analyze(Domain::Product);
  auto ints = p->analyze(Domain::Intervals);
  for (const auto& a : prod->alarms) CHECK(a.kind != Alarm::Kind::DivisionByZero);
  bool interval_alarm = false;
  for (const auto& a : ints->alarms) interval_alarm |= a.kind == Alarm::Kind::DivisionByZero;
  CHECK(interval_alarm);  // [-5, 5] minus the point 0 is still [-5, 5] as an interval
}

TEST_CASE("lattice: the arithmetic at its edges") {
  Lattice L(Domain::Intervals);
  auto ival = [&](int64_t lo, int64_t hi) { return L.from_interval(Interval::of_int(lo, hi)); };
  Effects fx;
  // INT_MIN / -1 is INT_MIN (wraps): the result must admit it.
  AbsVal q = L.binary(BinaryOp::Div, Type::Int, ival(kMin, kMin + 10), ival(-2, -1), &fx);
  CHECK(L.contains(q, Value::of_int(kMin)));
  CHECK(L.contains(q, Value::of_int(kMax)));  // (INT_MIN + 1) / -1
  // INT_MIN % -1 is 0.
  AbsVal m = L.binary(BinaryOp::Mod, Type::Int, ival(kMin, kMin), ival(-1, -1), &fx);
  CHECK(L.contains(m, Value::of_int(0)));
  // Addition that may overflow wraps: the whole type, and said.
  Effects wrap;
  AbsVal w = L.binary(BinaryOp::Add, Type::Int, ival(kMax - 1, kMax), ival(1, 2), &wrap);
  CHECK(wrap.may_wrap);
  CHECK(L.contains(w, Value::of_int(kMin)));
  // -INT_MIN is INT_MIN.
  CHECK(L.contains(L.unary(UnaryOp::Neg, ival(kMin, 0)), Value::of_int(kMin)));
  // Division by an interval that holds 0: possible; by exactly 0: definite, no value.
  Effects dz;
  L.binary(BinaryOp::Div, Type::Int, ival(1, 1), ival(-1, 1), &dz);
  CHECK(dz.div_zero_may);
  CHECK_FALSE(dz.div_zero_must);
  Effects dz0;
  CHECK(L.binary(BinaryOp::Div, Type::Int, ival(1, 1), ival(0, 0), &dz0).is_bottom());
  CHECK(dz0.div_zero_must);
  // Floats: inf - inf is nan; nan compares false, except !=.
  AbsVal inf = L.from_interval(Interval::of_float(INFINITY, INFINITY));
  AbsVal diff = L.binary(BinaryOp::Sub, Type::Float, inf, inf, nullptr);
  CHECK(L.contains(diff, Value::of_float(NAN)));
  AbsVal nan = L.constant(Type::Float, Value::of_float(NAN));
  AbsVal lt = L.binary(BinaryOp::Lt, Type::Float, nan, L.constant(Type::Float, Value::of_float(1)), nullptr);
  CHECK(lt.signs == kFalse);
  AbsVal ne = L.binary(BinaryOp::Ne, Type::Float, nan, nan, nullptr);
  CHECK(ne.signs == kTrue);
  // int() of a range that reaches 2^63: possible; of nan only: definite.
  Effects cv;
  L.builtin(Builtin::ToInt, Type::Int, {L.from_interval(Interval::of_float(0, 1e19))}, &cv);
  CHECK(cv.conversion_may);
  CHECK_FALSE(cv.conversion_must);
  Effects cn;
  CHECK(L.builtin(Builtin::ToInt, Type::Int, {nan}, &cn).is_bottom());
  CHECK(cn.conversion_must);
  // Widening jumps to 2^62 first (so `n + 1` cannot wrap), then to the end of the type; 2^62
  // is shown as the type's end (a larger set: still true, and readable). Narrowing is the
  // meet: both states are true of every run.
  AbsVal wide = L.widen(ival(0, 0), ival(0, 1));
  CHECK(wide.hull.hi == int64_t(1) << 62);
  CHECK(L.show(wide) == ">= 0");
  AbsVal wider = L.widen(wide, ival(0, (int64_t(1) << 62) + 1));
  CHECK(L.show(wider) == ">= 0");
  CHECK(L.show(L.narrow(wide, ival(0, 10))) == "in [0, 10]");
  CHECK(L.show(L.narrow(wider, ival(0, 10))) == "in [0, 10]");
  CHECK(L.show(L.narrow(ival(0, 20), ival(0, 10))) == "in [0, 10]");
  // Thresholds: a moving bound stops at the next program constant first.
  Lattice T(Domain::Intervals);
  T.set_thresholds({0, 99, 100, 101});
  CHECK(T.show(T.widen(ival(0, 1), ival(0, 2))) == "in [0, 99]");
  CHECK(T.show(T.widen(ival(0, 99), ival(0, 100))) == "in [0, 100]");
  CHECK(T.widen(ival(0, 101), ival(0, 102)).hull.hi == int64_t(1) << 62);
  // The signs domain keeps only signs; constants only one value.
  Lattice S(Domain::Signs), C(Domain::Constants);
  CHECK(S.show(S.from_interval(Interval::of_int(3, 9))) == "> 0");
  CHECK(C.show(C.join(C.constant(Type::Int, Value::of_int(1)), C.constant(Type::Int, Value::of_int(2)))) ==
        "not constant");
}

TEST_CASE("the seed's example: does factorial multiply? syntactically and semantically") {
  auto s = compiled(
      "fn factorial(n: int) -> int {\n"
      "  if n == 0 { return 1 }\n"
      "  return n * factorial(n - 1)\n"
      "}\n"
      "fn scaled(n: int) -> int {\n"
      "  if false { return n * 3 }\n"
      "  return n * 1\n"
      "}\n"
      "print(factorial(5) + scaled(2))\n");
  std::string text = s->stage("analysis-mul").text;
  INFO(text);
  CHECK(text.find("fn factorial: syntactically multiplies") != std::string::npos);
  CHECK(text.find("semantically: it multiplies") != std::string::npos);
  CHECK(text.find("line 6, n * 3: never runs") != std::string::npos);
  CHECK(text.find("line 7, n * 1: runs, but one side is always 1: it changes nothing") != std::string::npos);
  CHECK(text.find("semantically: it never really multiplies") != std::string::npos);
}

TEST_CASE("the control-flow graph: blocks, loop heads, edges, DOT") {
  auto s = compiled("fn f(n: int) -> int {\n  t = 0\n  for i in 0..n {\n    if i == 3 { continue }\n    t += i\n  }\n  return t\n}\nprint(f(5))\n");
  std::string text = s->stage("cfg").text;
  INFO(text);
  CHECK(text.find("fn f(n: int)\n") != std::string::npos);
  CHECK(text.find("(for.head, line 3, loop head)") != std::string::npos);
  CHECK(text.find("i.next = 0; i.end = n") != std::string::npos);
  CHECK(text.find("if i.next < i.end -> B") != std::string::npos);
  CHECK(text.find("i.next = i.next + 1") != std::string::npos);
  std::string dot = s->stage("cfg", Format::Dot).text;
  CHECK(dot.rfind("digraph cfg {", 0) == 0);
  CHECK(dot.find("[label=\"T\"]") != std::string::npos);
}

TEST_CASE("termination: a big program, deep nesting and recursion finish") {
  std::string src = "x = 0\n";
  for (int i = 0; i < 300; ++i) src += "for i" + std::to_string(i) + " in 0..3 { x += i" + std::to_string(i) + " }\n";
  std::string nest, close;
  for (int i = 0; i < 40; ++i) {
    nest += "while x < " + std::to_string(1000 + i) + " { x += 1\n";
    close += "}\n";
  }
  src += nest + close;
  src += "fn r(n: int) -> int {\n  if n < 1 { return 0 }\n  return r(n - 1) + r(n - 2) + 1\n}\nprint(r(10))\n";
  auto s = compiled(src);
  for (Domain d : all_domains()) {
    auto r = s->analyze(d);
    CHECK(r->rounds >= 1);
    CHECK(r->rounds < 200);
  }
}

TEST_CASE("interruption: Ctrl-C stops an analysis, and asked again it runs again") {
  // 200 nested loops: seconds of solving (each level re-solved for the levels around it).
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "for i in 0..2 {\n";
  deep += "print(i)\n";
  for (int i = 0; i < 200; ++i) deep += "}\n";
  auto s = compiled(deep);
  // The flag set while the Session analyses (it clears it when it starts, as a run does, so
  // the thread keeps setting it until the analysis returns).
  std::atomic<bool> done{false};
  std::thread ctrl_c([&] {
    while (!done.load()) {
      s->interrupt_flag().store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto r = s->analyze();
  done.store(true);
  ctrl_c.join();
  REQUIRE(r != nullptr);
  CHECK(r->interrupted);
  CHECK(r->facts().empty());
  CHECK(r->alarms.empty());
  // A stale Ctrl-C (pressed at the prompt) does not stop the next analysis.
  std::string mid;
  for (int i = 0; i < 40; ++i) mid += "for i in 0..2 {\n";
  mid += "x = i\n";
  for (int i = 0; i < 40; ++i) mid += "}\n";
  auto small = compiled(mid);
  small->interrupt_flag().store(true);
  auto again = small->analyze(Domain::Intervals);
  REQUIRE(again != nullptr);
  CHECK_FALSE(again->interrupted);
  CHECK(has(again->facts_at_line(41), "x in [0, 1]"));
  // Through the library with the flag already set: stopped at its first poll.
  std::atomic<bool> flag{true};
  Options o;
  o.interrupt = &flag;
  Result direct = analyze(*again->cfg.program, small->module(), o);
  CHECK(direct.interrupted);
  flag.store(false);
  CHECK_FALSE(analyze(*again->cfg.program, small->module(), o).interrupted);
}

TEST_CASE("golden reports") {
  // Hand-written programs with their reports in each domain (DESCENT_UPDATE_GOLDEN=1 rewrites).
  for (const char* name : {"loops", "branches", "recursion", "overflow", "floats"}) {
    std::string path = std::string(DESCENT_TESTS_DIR) + "/analysis/" + name + ".ds";
    std::string src = descent::testing::read_text(path);
    for (Domain d : all_domains()) {
      Session session;
      REQUIRE(session.compile(src, std::string(name) + ".ds").status == Outcome::Ok);
      session.set_analysis_domain(d);
      descent::testing::check_golden_file(
          std::string("analysis/golden/") + name + "." + domain_name(d) + ".txt", session.stage("analysis").text);
    }
  }
}
