// The Eva side by side (analysis/c_twin.h, analysis/eva.h, issue 37): the C twin of a few
// programs (key lines, a golden file, and `cc -fsyntax-only` where a C compiler is installed),
// Eva's output read from canned text, the comparison on hand-made values, the runner's answer
// when frama-c is missing, the corpus compared from its recorded Eva logs (so CI needs no
// Frama-C), and one run of the real frama-c where it is installed.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analysis/eva.h"
#include "pipeline/pipeline.h"
#include "proc/process.h"
#include "tests/golden.h"

using namespace descent;
using namespace descent::analysis;
namespace fs = std::filesystem;

namespace {

const char* kClamp =
    "fn clamp(x: int) -> int {\n"       // 1
    "  if x < 0 { return 0 }\n"         // 2
    "  if x > 100 { return 100 }\n"     // 3
    "  return x\n"                      // 4
    "}\n"                               // 5
    "total = 0\n"                       // 6
    "for i in 0..10 {\n"                // 7
    "  total += clamp(i * 20)\n"        // 8
    "}\n"                               // 9
    "print(\"total\", total)\n";        // 10

std::unique_ptr<Session> compiled(const std::string& src, const std::string& name = "clamp.ds") {
  auto s = std::make_unique<Session>();
  Outcome o = s->compile(src, name);
  REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
  return s;
}

CTwin twin_of(Session& s) {
  auto r = s.analyze();
  REQUIRE(r);
  CTwin twin;
  std::string error;
  REQUIRE_MESSAGE(make_c_twin(*r->cfg.program, s.module(), &twin, &error), error);
  return twin;
}

std::string c_line(const CTwin& t, uint32_t n) {
  std::istringstream in(t.text);
  std::string line;
  for (uint32_t i = 1; std::getline(in, line); ++i)
    if (i == n) return line.substr(line.find_first_not_of(' '));
  return "";
}

const TwinSite* site(const CTwin& t, uint32_t line, const std::string& var) {
  for (const auto& s : t.sites)
    if (s.line == line && s.var == var) return &s;
  return nullptr;
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

EvaValue value(const std::string& text) {
  EvaValue v;
  REQUIRE_MESSAGE(parse_eva_value(text, &v), text);
  return v;
}

AbsVal ints(int64_t lo, int64_t hi, uint64_t mod = 1, int64_t rem = 0) {
  AbsVal v;
  v.type = Type::Int;
  v.hull = Interval::of_int(lo, hi);
  v.signs = signs_of(v.hull);
  v.mod = mod;
  v.rem = rem;
  return v;
}

AbsVal floats(double lo, double hi, bool nan = false) {
  AbsVal v;
  v.type = Type::Float;
  v.hull = Interval::of_float(lo, hi, nan);
  v.signs = signs_of(v.hull);
  return v;
}

// Compiles a twin with the system's C compiler; "" when it compiles (or there is none).
std::string cc_errors(const CTwin& twin) {
  std::string cc = proc::find_on_path("cc");
  if (cc.empty()) return "";
  fs::path dir = fs::temp_directory_path() / ("descent-twin-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "twin.c") << twin.text;
  proc::Options o;
  o.argv = {cc, "-std=c99", "-Wall", "-Werror", "-fsyntax-only", (dir / "twin.c").string()};
  o.limits.wall_s = 60;
  proc::Result r = proc::run(o);
  fs::remove_all(dir);
  return r.ok ? "" : r.out + r.err + r.problem;
}

}  // namespace

TEST_CASE("C twin: int64_t, prototypes first, the loop's bounds once, a probe after each assignment") {
  auto s = compiled(kClamp);
  CTwin t = twin_of(*s);
  CHECK(t.text.find("#include <stdint.h>") != std::string::npos);
  CHECK(t.text.find("C leaves signed overflow undefined") != std::string::npos);
  CHECK(t.text.find("int64_t clamp(int64_t x);") < t.text.find("int64_t clamp(int64_t x) {"));
  CHECK(t.text.find("for (int64_t i_next = 0, i_end = 10; i_next < i_end; i_next++) {") != std::string::npos);
  CHECK(t.text.find("total += clamp(i * 20);") != std::string::npos);
  CHECK(t.text.find("descent_use_int(total);") != std::string::npos);  // print, without its string
  CHECK(t.text.find("\"total\"") == std::string::npos);
  // Each fact's probe is on its own line, which knows the Descent line.
  const TwinSite* total = site(t, 8, "total");
  REQUIRE(total);
  CHECK(total->function == "<script>");
  CHECK(c_line(t, total->c_line) == "Frama_C_show_each_total(total);");
  CHECK(c_line(t, total->c_line - 1) == "total += clamp(i * 20);");
  CHECK(t.line_of(total->c_line - 1) == 8);
  const TwinSite* i = site(t, 7, "i");
  REQUIRE(i);
  CHECK(c_line(t, i->c_line) == "Frama_C_show_each_i(i);");
  CHECK(c_line(t, i->c_line - 1) == "i = i_next;");
  const TwinSite* x = site(t, 1, "x");
  REQUIRE(x);
  CHECK(x->param);
  CHECK(x->function == "clamp");
  CHECK(t.function_of(x->c_line) == "clamp");
  CHECK(t.uncalled.empty());
  // The columns are StmtFact's, so the two tools' facts meet statement by statement.
  auto r = s->analyze();
  bool met = false;
  for (const auto& f : r->stmt_facts()) met = met || (f.line == 8 && f.col == total->col && f.var == "total");
  CHECK(met);
  testing::check_golden_file("analysis/golden/clamp.twin.c", t.text);
  CHECK(cc_errors(t) == "");
}

TEST_CASE("C twin: floats, bools, builtins, names C keeps for itself, and functions never called") {
  auto s = compiled(
      "fn pow(b: int, e: int) -> int {\n"
      "  r = 1\n"
      "  for k in 0..e { r *= b }\n"
      "  return r\n"
      "}\n"
      "fn unused(n: int) -> float { return 1.0 / float(n) }\n"
      "printf = pow(2, 10)\n"
      "f = 7.5\n"
      "f %= 2.0\n"
      "g = min(f, 1.0) + max(abs(-2.5), sqrt(4.0))\n"
      "k = int(f * 10.0) + min(3, printf) + abs(-4)\n"
      "ok = k > 3 && !(f == 0.0) || false\n"
      "while printf > 1 { printf /= 2; if printf == 4 { break } }\n"
      "print(ok, g, k)\n",
      "mix.ds");
  CTwin t = twin_of(*s);
  CHECK(t.text.find("int64_t pow_(int64_t b, int64_t e);") != std::string::npos);  // not C's pow
  CHECK(t.text.find("printf_ = pow_(2, 10);") != std::string::npos);
  CHECK(t.text.find("f = fmod(f, 2.0);") != std::string::npos);
  CHECK(t.text.find("descent_fmin(f, 1.0)") != std::string::npos);
  CHECK(t.text.find("descent_fmax(fabs(-2.5), sqrt(4.0))") != std::string::npos);
  CHECK(t.text.find("(int64_t)(f * 10.0)") != std::string::npos);
  CHECK(t.text.find("descent_min(3, printf_)") != std::string::npos);
  CHECK(t.text.find("int ok;") != std::string::npos);
  CHECK(t.text.find("ok = (k > 3 && !(f == 0.0)) || 0;") != std::string::npos);
  CHECK(t.text.find("Frama_C_show_each_ok(ok);") != std::string::npos);
  CHECK(t.text.find("void Frama_C_show_each_f(double);") != std::string::npos);
  CHECK(t.text.find("1.0 / (double)n") != std::string::npos);
  REQUIRE(t.uncalled.size() == 1);
  CHECK(t.uncalled[0] == "unused");
  CHECK(t.reachable_from("main") == std::vector<std::string>{"main", "pow_"});
  CHECK(cc_errors(t) == "");
}

TEST_CASE("C twin: tensors and kernels are refused with a sentence, never a crash") {
  Session s;
  REQUIRE(s.compile("t = zeros([2, 3])\nprint(sum_all(t))\n", "t.ds").status == Outcome::Ok);
  auto r = s.analyze();
  REQUIRE(r);
  CTwin twin;
  std::string error;
  CHECK_FALSE(make_c_twin(*r->cfg.program, s.module(), &twin, &error));
  CHECK(error.find("no C twin") != std::string::npos);
}

TEST_CASE("Eva's values read: sets, ranges with congruences, unbounded ends, floats, NaN") {
  EvaValue v = value("{0; 20; 40}");
  CHECK(v.kind == EvaValue::Kind::Int);
  CHECK(v.set == std::vector<int64_t>{0, 20, 40});
  v = value("[0..2147483640],0%20");
  CHECK((v.lo == 0 && v.hi == 2147483640 && v.mod == 20 && v.rem == 0));
  v = value("[-9223372036854775805..9223372036854775805],0%5");
  CHECK((v.mod == 5 && v.rem == 0 && v.lo == -9223372036854775805));
  v = value("[--..--]");
  CHECK((v.lo == INT64_MIN && v.hi == INT64_MAX && v.mod == 1));
  v = value("[1..--],1%3");
  CHECK((v.lo == 1 && v.hi == INT64_MAX && v.rem == 1 && v.mod == 3));
  v = value("[2.5 .. 6.25]");
  CHECK((v.kind == EvaValue::Kind::Float && v.flo == 2.5 && v.fhi == 6.25 && !v.nan));
  v = value("[-0. .. inf] \xe2\x88\xaa {NaN}");
  CHECK((v.flo == 0 && std::isinf(v.fhi) && v.nan));
  v = value("NaN");
  CHECK((v.kind == EvaValue::Kind::Float && v.nan && v.flo > v.fhi));
  v = value("{-0.}");
  CHECK((v.kind == EvaValue::Kind::Float && v.flo == 0 && v.fhi == 0));
  CHECK(value("{inf}").flo == INFINITY);
  CHECK(value("[1.25 .. 1.79769313486e+308]").fhi == 1.79769313486e+308);
  EvaValue bad;
  CHECK_FALSE(parse_eva_value("{{ &x }}", &bad));
  CHECK_FALSE(parse_eva_value("[1..", &bad));
  // Printed back in Eva's syntax, and joined as Eva joins.
  CHECK(eva_value_text(value("[0..--],0%20")) == "[0..--],0%20");
  CHECK(eva_value_text(value("[1.25 .. 3.125] \xe2\x88\xaa {NaN}")) == "[1.25 .. 3.125] \xe2\x88\xaa {NaN}");
  CHECK(eva_value_text(eva_join(value("{462}"), value("{147; 21}"))) == "{21; 147; 462}");
  CHECK(eva_value_text(eva_join(value("{0; 20; 40; 60; 80}"), value("{100; 120; 140; 160}"))) == "[0..160],0%20");
  CHECK(eva_value_text(eva_join(value("[0..100],0%20"), value("{30}"))) == "[0..100],0%10");
  CHECK(eva_value_text(eva_join(value("{1.25}"), value("[2. .. 3.]"))) == "[1.25 .. 3.]");
}

TEST_CASE("Eva's output read: show_each values (wrapped or not), alarms over several lines, errors") {
  const std::string out =
      "[kernel] Parsing twin.c (with preprocessing)\n"
      "[eva] Analyzing a complete application starting at main\n"
      "[eva] twin.c:20: Frama_C_show_each_x: {0}\n"
      "[eva] twin.c:36: Frama_C_show_each_i: {0}\n"
      "[eva] twin.c:36: starting to merge loop iterations\n"
      "[eva:alarm] twin.c:37: Warning: \n"
      "  signed overflow.\n"
      "  assert total + tmp \xe2\x89\xa4 9223372036854775807;\n"
      "  (tmp from clamp(i * 20))\n"
      "[eva] twin.c:38: \n"
      "  Frama_C_show_each_total: [0..9223372036854775800],0%20\n"
      "[eva] /tmp/x/twin.c:40: Frama_C_show_each_f: [2.5 .. inf] \xe2\x88\xaa {NaN}\n"
      "[eva:alarm] twin.c:41: Warning: division by zero. assert (int64_t)(a - 21) \xe2\x89\xa2 0;\n"
      "[eva] other.c:5: Frama_C_show_each_y: {1}\n"
      "[eva] twin.c:6: User Error: \n"
      "  Recursive call to fact without a specification.\n"
      "[eva] done for function main\n"
      "[eva] ====== VALUES COMPUTED ======\n"
      "[eva:final-states] Values at end of function main:\n"
      "  total \xe2\x88\x88 [0..9223372036854775800],0%20\n";
  EvaOutput o = parse_eva_output(out);
  CHECK(o.finished);
  REQUIRE(o.shows.size() == 4);
  CHECK(o.shows[0].c_line == 20);
  CHECK(o.shows[0].probe == "Frama_C_show_each_x");
  CHECK(o.shows[2].c_line == 38);
  CHECK(o.shows[2].value.mod == 20);
  CHECK(o.shows[3].value.nan);
  REQUIRE(o.alarms.size() == 2);
  CHECK(o.alarms[0].c_line == 37);
  CHECK(o.alarms[0].kind == "signed overflow");
  CHECK(o.alarms[0].text.find("tmp from clamp") != std::string::npos);
  CHECK(o.alarms[1].kind == "division by zero");
  REQUIRE(o.problems.size() == 1);
  CHECK(o.problems[0].find("Recursive call to fact") != std::string::npos);
  // Compacted (what a recorded log keeps), it reads the same.
  std::string small = compact_eva_output(out);
  CHECK(small.find("VALUES COMPUTED") == std::string::npos);
  EvaOutput again = parse_eva_output(small);
  CHECK(again.shows.size() == 4);
  CHECK(again.alarms.size() == 2);
  CHECK(again.finished);
  // A log: a header, then one section per entry.
  EvaRun run = parse_eva_log("# twin 0123456789abcdef\n=== eva from main ===\n" + small +
                             "=== eva from f (-lib-entry: every argument and global unknown) ===\n"
                             "[eva] twin.c:9: Frama_C_show_each_n: [--..--]\n");
  CHECK(run.available);
  CHECK(run.twin_hash == "0123456789abcdef");
  REQUIRE(run.outputs.size() == 2);
  CHECK(run.outputs[1].entry == "f");
  CHECK_FALSE(run.outputs[1].finished);
  CHECK(parse_eva_log("nothing here").available == false);
}

TEST_CASE("precision: which set of values lies inside which") {
  CHECK(compare_values(ints(0, 9), value("[0..9]")) == Verdict::Same);
  CHECK(compare_values(ints(0, 9), value("[0..--]")) == Verdict::DescentMore);
  CHECK(compare_values(ints(0, 100), value("{0; 20; 40; 60; 80; 100}")) == Verdict::EvaMore);
  CHECK(compare_values(ints(0, 100, 20, 0), value("{0; 20; 40; 60; 80; 100}")) == Verdict::Same);
  CHECK(compare_values(ints(0, 100, 20, 0), value("[0..100],0%20")) == Verdict::Same);
  CHECK(compare_values(ints(0, 20), value("[0..9223372036854775806],0%2")) == Verdict::Incomparable);
  CHECK(compare_values(ints(0, 1000, 10, 0), value("[0..1000],0%5")) == Verdict::DescentMore);
  CHECK(compare_values(ints(0, 1000, 10, 0), value("[0..1000],0%20")) == Verdict::EvaMore);
  CHECK(compare_values(ints(0, 1000, 10, 0), value("[0..1000],5%10")) == Verdict::Incomparable);
  CHECK(compare_values(ints(INT64_MIN, INT64_MAX), value("[--..--]")) == Verdict::Same);
  // Signs take values out of the hull: [-5, 5] without 0.
  AbsVal nz = ints(-5, 5);
  nz.signs = kNeg | kPos;
  CHECK(compare_values(nz, value("[-5..5]")) == Verdict::DescentMore);
  CHECK(compare_values(nz, value("{-5; 5}")) == Verdict::EvaMore);
  CHECK(compare_values(nz, value("[1..5]")) == Verdict::EvaMore);
  AbsVal big_nz = ints(-1000, 1000);
  big_nz.signs = kNeg | kPos;
  CHECK(compare_values(big_nz, value("[-1000..1000]")) == Verdict::DescentMore);
  CHECK(compare_values(big_nz, value("[1..1000]")) == Verdict::EvaMore);
  // A small set of Descent's own.
  AbsVal set = ints(0, 100);
  set.n_set = 3;
  set.set[0] = 0, set.set[1] = 50, set.set[2] = 100;
  CHECK(compare_values(set, value("{0; 50; 100}")) == Verdict::Same);
  CHECK(compare_values(set, value("[0..100],0%50")) == Verdict::Same);
  CHECK(compare_values(set, value("[0..100],0%25")) == Verdict::DescentMore);
  // Unreachable on one side: the empty set lies inside everything.
  AbsVal bottom = ints(1, 0);
  bottom.signs = 0;
  CHECK(compare_values(bottom, value("{1}")) == Verdict::DescentMore);
  CHECK(compare_values(ints(1, 1), EvaValue{}) == Verdict::EvaMore);
  // Floats, allowing for Eva's 12 digits.
  CHECK(compare_values(floats(0.5, 5.0), value("[0.5 .. 5.]")) == Verdict::Same);
  CHECK(compare_values(floats(0, 0.1), value("[0. .. 0.1]")) == Verdict::Same);
  CHECK(compare_values(floats(0, 1.7976931348623157e308), value("[0. .. 1.79769313486e+308]")) == Verdict::Same);
  CHECK(compare_values(floats(0, 1), value("[0. .. 1.] \xe2\x88\xaa {NaN}")) == Verdict::DescentMore);
  CHECK(compare_values(floats(0, 1, true), value("[0. .. 2.]")) == Verdict::Incomparable);
  CHECK(compare_values(floats(1, 2), value("[0. .. 1.5]")) == Verdict::Incomparable);
  // Bools are 0 and 1 in the twin.
  AbsVal yes;
  yes.type = Type::Bool;
  yes.hull = Interval::of_bool(false, true);
  yes.signs = kTrue;
  CHECK(compare_values(yes, value("{1}")) == Verdict::Same);
  CHECK(compare_values(yes, value("{0; 1}")) == Verdict::DescentMore);
}

TEST_CASE("the comparison: facts per statement, alarms per line, counts") {
  auto s = compiled(kClamp);
  auto r = s->analyze();
  CTwin t = twin_of(*s);
  const TwinSite* x = site(t, 1, "x");
  const TwinSite* i = site(t, 7, "i");
  const TwinSite* total = site(t, 8, "total");
  const TwinSite* total0 = site(t, 6, "total");
  REQUIRE((x && i && total && total0));
  auto at = [](uint32_t line) { return "twin.c:" + std::to_string(line) + ": "; };
  std::string log = "# twin " + twin_hash(t) + "\n=== eva from main ===\n" +
                    "[eva] " + at(x->c_line) + "Frama_C_show_each_x: {0; 20; 40; 60; 80}\n" +
                    "[eva] " + at(x->c_line) + "Frama_C_show_each_x: {100; 120; 140; 160; 180}\n" +
                    "[eva] " + at(total0->c_line) + "Frama_C_show_each_total: {0}\n" +
                    "[eva] " + at(i->c_line) + "Frama_C_show_each_i: [0..9]\n" +
                    "[eva] " + at(total->c_line) + "Frama_C_show_each_total: [0..9223372036854775800],0%20\n" +
                    "[eva:alarm] " + at(total->c_line - 1) + "Warning: signed overflow. assert total + tmp <= 9;\n" +
                    "[eva] done for function main\n";
  EvaComparison c = compare_with_eva(*r, t, parse_eva_log(log));
  CHECK(c.notes.empty());
  REQUIRE(c.facts.size() == 4);
  for (const auto& f : c.facts) {
    CHECK(f.eva_has);
    CHECK(f.descent_has);
    INFO(f.site.var << " line " << f.site.line << ": " << f.descent_text << " vs " << f.eva_text);
    if (f.site.line == 6 || f.site.line == 7) CHECK(f.verdict == Verdict::Same);
    if (f.site.line == 1) CHECK(f.eva_text == "[0..180],0%20");  // the calls joined
    CHECK(f.verdict == compare_values(f.descent, f.eva));
  }
  CHECK(c.counts.facts == 4);
  CHECK(c.counts.same + c.counts.descent_more + c.counts.eva_more + c.counts.incomparable == 4);
  REQUIRE(c.alarms.size() >= 1);
  const AlarmRow* row8 = nullptr;
  for (const auto& a : c.alarms)
    if (a.line == 8) row8 = &a;
  REQUIRE(row8);
  CHECK(row8->eva_overflow);
  CHECK(row8->eva == std::vector<std::string>{"signed overflow"});
  CHECK(c.counts.eva_overflows == 1);
  CHECK(c.counts.eva_errors == 0);
  std::string text = format_eva_comparison(c, *r->cfg.program->source);
  CHECK(text.find("total += clamp(i * 20)") != std::string::npos);
  CHECK(text.find("[0..9223372036854775800],0%20") != std::string::npos);
  CHECK(text.find("facts: 4;") != std::string::npos);
  CHECK(format_eva_totals({{"clamp.ds", c.counts}}).find("total") != std::string::npos);

  // The program ran clean: Eva's overflow alarm on line 8, where Descent proves no
  // wrap-around (each call in context: the sum is at most 700), is a false alarm; had the run
  // failed on line 8, it would be a true one.
  CHECK_FALSE(row8->descent_wrap);
  EvaComparison clean = c;
  count_false_alarms(&clean, 0);
  CHECK(clean.counts.runs == 1);
  CHECK(clean.counts.eva_false == 1);
  CHECK(clean.counts.descent_false == 0);
  CHECK(format_eva_comparison(clean, *r->cfg.program->source)
            .find("false alarms (lines the run shows cannot fail): Descent 0, Eva 1") != std::string::npos);
  EvaComparison failed = c;
  count_false_alarms(&failed, 8);
  CHECK(failed.counts.eva_false == 0);
  CHECK(format_eva_totals({{"clamp.ds", clean.counts}}).find("false alarms") != std::string::npos);

  // A log of another twin is said to be stale; a run that did not finish gives no verdict.
  EvaComparison stale = compare_with_eva(*r, t, parse_eva_log("# twin 0000\n=== eva from main ===\n"));
  CHECK(stale.notes.size() == 1);
  CHECK(stale.counts.no_eva == 4);
}

TEST_CASE("without frama-c: a sentence saying how to install it, never a failure") {
  auto s = compiled(kClamp);
  EvaOptions o;
  o.frama_c = "/nonexistent/frama-c";
  EvaSideBySide side;
  std::string error;
  REQUIRE(eva_side_by_side(*s->analyze(), o, nullptr, &side, &error));
  CHECK_FALSE(side.eva.available);
  CHECK(side.eva.message.find("frama-c not found") != std::string::npos);
  CHECK(side.eva.message.find("apt-get install frama-c-base") != std::string::npos);
  CHECK(side.comparison.counts.no_eva == 4);
}

TEST_CASE("the corpus against its recorded Eva logs (tests/analysis/corpus/*.eva)") {
  std::string dir = std::string(DESCENT_TESTS_DIR) + "/analysis/corpus";
  std::vector<std::string> programs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ds") programs.push_back(e.path().string());
  std::sort(programs.begin(), programs.end());
  CHECK(programs.size() >= 40);
  std::vector<std::pair<std::string, EvaCounts>> rows;
  for (const auto& path : programs) {
    std::string name = fs::path(path).filename().string();
    INFO(name);
    Session session;
    Outcome o = session.compile(read(path), path);
    REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
    std::string log = read(fs::path(path).replace_extension(".eva").string());
    REQUIRE_MESSAGE(!log.empty(), "no recorded Eva log: scripts/eva_corpus.sh --record writes it");
    EvaSideBySide side;
    std::string error;
    REQUIRE_MESSAGE(eva_side_by_side(*session.analyze(), {}, &log, &side, &error), error);
    CHECK_MESSAGE(side.eva.twin_hash == twin_hash(side.twin),
                  "the recorded log is of another C twin: scripts/eva_corpus.sh --record");
    CHECK(side.comparison.counts.no_eva == 0);
    CHECK(side.comparison.counts.facts == int(side.twin.sites.size()));
    rows.push_back({name, side.comparison.counts});
  }
  MESSAGE("Descent (intervals) against Eva, recorded:\n" << format_eva_totals(rows));
}

TEST_CASE("frama-c itself, where it is installed") {
  if (proc::find_on_path("frama-c").empty()) {
    MESSAGE("skipped: frama-c is not installed (apt-get install frama-c-base)");
    return;
  }
  auto s = compiled(kClamp);
  EvaSideBySide side;
  std::string error;
  REQUIRE(eva_side_by_side(*s->analyze(), {}, nullptr, &side, &error));
  REQUIRE_MESSAGE(side.eva.available, side.eva.message);
  REQUIRE(side.eva.outputs.size() == 1);
  CHECK(side.eva.outputs[0].finished);
  CHECK(side.comparison.counts.no_eva == 0);
  for (const auto& f : side.comparison.facts) {
    if (f.site.var == "x") CHECK(f.eva_text == "[0..180],0%20");
    if (f.site.line == 8) CHECK(f.eva_text == "[0..9223372036854775800],0%20");
  }
  CHECK(side.comparison.counts.eva_overflows == 1);
  // Parsed back from its own log, the comparison is the same.
  EvaComparison again = compare_with_eva(*s->analyze(), side.twin, parse_eva_log(side.eva.log));
  CHECK(again.counts.same == side.comparison.counts.same);
  CHECK(again.counts.eva_more == side.comparison.counts.eva_more);
}
