// Differential testing: thousands of random, well-typed programs (tests/diff/program_gen.h)
// must behave identically on every engine in Session::engines(): the same stdout lines, the
// same exit code and the same diagnostics (message and line:col) as the "ast" engine. A new
// engine is compared as soon as it appears in Session::engines(); nothing here names it.
//
// On its own (with only "ast") the test still checks the generator and the walker: every
// program compiles (a compile error is a generator bug), its run is deterministic (a second
// run prints the same), a program without a planted error exits 0, and one with a planted
// error stops with exactly that error.
//
// Environment (all optional):
//   DESCENT_DIFF_FIRST=S  DESCENT_DIFF_SEEDS=N   run seeds S .. S+N-1 (default 1 .. 3000)
//   DESCENT_DIFF_SHOW=S                          print seed S's program and its ast run
//   DESCENT_DIFF_GOLDEN=S [DESCENT_DIFF_ENGINE=E] write seed S as a golden test (see below)
//
// Turning a failing seed into a golden test
// -----------------------------------------
// A failure prints the seed and the program. To keep it as a regression test:
//   DESCENT_DIFF_GOLDEN=1234 ./build/test_diff -tc='*golden*'
// writes tests/programs/diff_seed_1234.ds (a program that exits 0) or
// tests/errors/diff_seed_1234.ds (one that stops with a runtime error), with the `# expect:`
// lines (and `# exit:` / `# error:` lines) of the run on the "ast" engine appended as
// comments at the end, so line numbers in diagnostics do not move. Take the expectation from
// whichever engine is right (DESCENT_DIFF_ENGINE=stack ...) -- decide that from
// docs/language.md, not from the majority -- check the file by hand, shrink it if you can
// (delete statements while the engines still disagree), and commit it: test_programs then
// runs it on every engine. If the seed found a generator bug instead (a compile error, a
// step-limit hit, an unplanted runtime error), fix program_gen.cpp; seeds will then produce
// different programs, which is fine.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/diff/program_gen.h"
#include "tests/programs_test.h"

using namespace descent;
using namespace descent::testing;

namespace {

// A guard against hangs only: generated programs take at most ~100k AST steps, and an engine
// counting instructions may count many more, so this is far above any honest program.
constexpr uint64_t kStepLimit = 50'000'000;
constexpr uint64_t kMaxAstSteps = 100'000;  // what the generator promises (AST-walker steps)
constexpr int kDefaultSeeds = 3000;
constexpr int kMaxReported = 5;  // failing seeds reported in full before giving up

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::atoi(v);
}

std::string numbered(const std::string& src) {
  std::istringstream in(src);
  std::string out, line;
  for (int n = 1; std::getline(in, line); ++n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%4d| ", n);
    out += buf + line + "\n";
  }
  return out;
}

std::string describe(const Actual& a) {
  std::string s = "exit code " + std::to_string(a.exit_code) + "\n";
  for (const auto& e : a.errors) s += "error " + e + "\n";
  size_t shown = 0;
  for (const auto& l : a.output) {
    if (++shown > 60) {
      s += "  ... (" + std::to_string(a.output.size()) + " lines in all)\n";
      break;
    }
    s += "  | " + l + "\n";
  }
  return s;
}

// Where two runs first differ, in one line.
std::string first_difference(const Actual& a, const Actual& b) {
  if (a.exit_code != b.exit_code)
    return "exit code " + std::to_string(a.exit_code) + " vs " + std::to_string(b.exit_code);
  size_t n = std::min(a.output.size(), b.output.size());
  for (size_t i = 0; i < n; ++i)
    if (a.output[i] != b.output[i])
      return "output line " + std::to_string(i + 1) + ": '" + a.output[i] + "' vs '" + b.output[i] +
             "'";
  if (a.output.size() != b.output.size())
    return "output has " + std::to_string(a.output.size()) + " vs " +
           std::to_string(b.output.size()) + " lines";
  if (a.errors != b.errors) {
    std::string ea = a.errors.empty() ? "(none)" : a.errors[0];
    std::string eb = b.errors.empty() ? "(none)" : b.errors[0];
    return "diagnostics '" + ea + "' vs '" + eb + "'";
  }
  return "";
}

bool same(const Actual& a, const Actual& b) {
  return a.exit_code == b.exit_code && a.output == b.output && a.errors == b.errors;
}

bool interrupted(const Actual& a) {
  for (const auto& e : a.errors)
    if (e.find("interrupted") != std::string::npos) return true;
  return false;
}

std::string last_message(const Actual& a) {
  if (a.errors.empty()) return "";
  const std::string& e = a.errors.back();
  // "L:C: MESSAGE"
  size_t p = e.find(": ");
  return p == std::string::npos ? e : e.substr(p + 2);
}

std::string seed_name(int seed) { return "seed_" + std::to_string(seed) + ".ds"; }

// run_program() (tests/programs_test.h), plus the number of steps the engine counted.
Actual run_counting(const std::string& text, const std::string& name, const std::string& engine,
                    uint64_t* steps) {
  Session s;
  s.set_engine(engine);
  std::string out;
  RunOptions opts;
  opts.out = [&](std::string_view t) { out += t; };
  opts.step_limit = kStepLimit;
  Outcome o = s.submit(text, name, opts);
  *steps = o.steps;
  Actual a;
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) a.output.push_back(l);
  for (const auto& d : o.diagnostics)
    a.errors.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                       d.message);
  a.exit_code = o.exit_code();
  a.message = o.message;
  return a;
}

}  // namespace

TEST_CASE("random programs compile, run deterministically and agree on every engine") {
  const int first = env_int("DESCENT_DIFF_FIRST", 1);
  const int count = env_int("DESCENT_DIFF_SEEDS", kDefaultSeeds);
  const auto engines = Session::engines();
  REQUIRE(std::find(engines.begin(), engines.end(), "ast") != engines.end());

  int failures = 0, ran = 0, runtime_errors = 0, output_lines = 0;
  uint64_t max_steps = 0, total_steps = 0;
  for (int seed = first; seed < first + count; ++seed) {
    if (failures >= kMaxReported) {
      FAIL_CHECK("stopped after ", kMaxReported, " failing seeds; seeds ", seed, "..",
                 first + count - 1, " were not run");
      break;
    }
    ProgramGenerator gen(static_cast<uint64_t>(seed));
    const std::string& src = gen.source();
    const std::string& planted = gen.expected_error();
    const std::string name = seed_name(seed);
    ++ran;

    std::vector<std::string> problems;
    uint64_t steps = 0;
    Actual ref = run_counting(src, name, "ast", &steps);
    max_steps = std::max(max_steps, steps);
    total_steps += steps;
    if (steps > kMaxAstSteps)
      problems.push_back("took " + std::to_string(steps) + " steps on ast, more than the " +
                         std::to_string(kMaxAstSteps) + " the generator promises");
    if (ref.exit_code == 1) ++runtime_errors;
    output_lines += static_cast<int>(ref.output.size());
    if (ref.exit_code == 2) {
      problems.push_back("compile error on ast: the generator wrote an ill-typed program");
    } else if (interrupted(ref)) {
      problems.push_back("hit the step limit on ast: the generator's cost bound is wrong");
    } else if (planted.empty() && ref.exit_code != 0) {
      problems.push_back("runtime error '" + last_message(ref) +
                         "' on ast, but the generator planted none (generator or walker bug)");
    } else if (!planted.empty() && (ref.exit_code != 1 || last_message(ref) != planted)) {
      problems.push_back("the generator planted '" + planted + "' but ast " +
                         (ref.exit_code == 0 ? std::string("ran to completion")
                                             : "stopped with '" + last_message(ref) + "'"));
    }
    Actual again = run_program(src, name, "ast", kStepLimit);
    if (!same(ref, again))
      problems.push_back("ast is not deterministic: " + first_difference(ref, again));

    std::string others;
    for (const auto& engine : engines) {
      if (engine == "ast") continue;
      Actual got = run_program(src, name, engine, kStepLimit);
      if (!same(ref, got)) {
        problems.push_back("engine '" + engine +
                           "' differs from ast: " + first_difference(ref, got));
        others += "--- " + engine + ":\n" + describe(got) + got.message + "\n";
      }
    }

    if (!problems.empty()) {
      ++failures;
      std::string report = "seed " + std::to_string(seed) + ":\n";
      for (const auto& p : problems) report += "  * " + p + "\n";
      report += "--- program (" + name + "):\n" + numbered(src);
      report += "--- ast:\n" + describe(ref) + ref.message + "\n" + others;
      report += "reproduce: DESCENT_DIFF_FIRST=" + std::to_string(seed) +
                " DESCENT_DIFF_SEEDS=1 ./test_diff\nkeep as a golden test: DESCENT_DIFF_GOLDEN=" +
                std::to_string(seed) + " ./test_diff -tc='*golden*' (see differential_test.cpp)\n";
      FAIL_CHECK(report);
    }
  }
  MESSAGE(ran, " programs on ", engines.size(), " engine(s): ", runtime_errors,
          " ended in a runtime error; on ast ", output_lines, " output lines, ",
          total_steps / std::max(ran, 1), " steps on average, ", max_steps, " at most");
  if (ran >= 200) CHECK(runtime_errors > 0);
}

TEST_CASE("the generator covers the features it promises") {
  const int count = env_int("DESCENT_DIFF_SEEDS", kDefaultSeeds);
  struct Counter {
    const char* name;
    bool GenFeatures::*flag;
    int n = 0;
  };
  std::vector<Counter> counters = {
      {"break", &GenFeatures::break_stmt},
      {"continue", &GenFeatures::continue_stmt},
      {"while loop", &GenFeatures::while_loop},
      {"for loop", &GenFeatures::for_loop},
      {"nested loops", &GenFeatures::nested_loop},
      {"recursion", &GenFeatures::recursion},
      {"mutual recursion", &GenFeatures::mutual_recursion},
      {"&&", &GenFeatures::and_op},
      {"||", &GenFeatures::or_op},
      {"short-circuit around a printing call", &GenFeatures::short_circuit_call},
      {"division guarded by && / ||", &GenFeatures::guarded_division},
      {"float division", &GenFeatures::float_div},
      {"float division by zero", &GenFeatures::float_div_by_zero},
      {"float %", &GenFeatures::float_mod},
      {"int /", &GenFeatures::int_div},
      {"int %", &GenFeatures::int_mod},
      {"% with a negative operand", &GenFeatures::negative_mod},
      {"INT_MIN / -1 and x % -1", &GenFeatures::int_min_div},
      {"overflowing constants", &GenFeatures::overflow},
      {"int() of a float", &GenFeatures::float_to_int},
      {"float() of an int", &GenFeatures::int_to_float},
      {"sqrt exp log sin cos floor", &GenFeatures::math_builtin},
      {"globals read in functions", &GenFeatures::global_in_function},
      {"locals shadowing globals", &GenFeatures::shadowed_global},
      {"functions declared after top-level code", &GenFeatures::call_before_declaration},
      {"else if", &GenFeatures::else_if},
      {"early return", &GenFeatures::early_return},
      {"recursion exactly 10,000 frames deep", &GenFeatures::boundary_recursion},
      {"a divisor that divides by zero", &GenFeatures::nested_failing_division},
      {"several divisions by zero in one function", &GenFeatures::several_failing_divisions},
      {"7-10 int and 9-12 float parameters", &GenFeatures::stack_arguments},
  };
  std::map<std::string, int> planted;
  int runtime_errors = 0;
  for (int seed = 1; seed <= count; ++seed) {
    ProgramGenerator gen(static_cast<uint64_t>(seed));
    gen.source();
    for (auto& c : counters)
      if (gen.features().*c.flag) ++c.n;
    std::string e = gen.expected_error();
    if (e.empty()) continue;
    ++runtime_errors;
    if (e.rfind("undefined variable", 0) == 0) e = "undefined variable";
    ++planted[e];
  }
  std::string table;
  for (const auto& c : counters) table += "  " + std::to_string(c.n) + "\t" + c.name + "\n";
  table += "  " + std::to_string(runtime_errors) + "\truntime errors (planted), of which:\n";
  for (const auto& [msg, n] : planted) table += "    " + std::to_string(n) + "\t" + msg + "\n";
  MESSAGE("feature coverage over ", count, " programs:\n", table);
  if (count < 500) return;  // small runs (one seed) cannot cover everything
  for (const auto& c : counters) CHECK_MESSAGE(c.n > 0, "no program has: ", c.name);
  CHECK(runtime_errors > 0);
  for (const char* msg :
       {"division by zero", "invalid conversion", "stack overflow", "undefined variable"})
    CHECK_MESSAGE(planted[msg] > 0, "no program plants: ", msg);
}

TEST_CASE("the generator is deterministic") {
  for (uint64_t seed : {1u, 2u, 77u, 1234u}) {
    ProgramGenerator a(seed), b(seed);
    CHECK(a.source() == b.source());
    CHECK(a.expected_error() == b.expected_error());
  }
  ProgramGenerator a(5), b(6);
  CHECK(a.source() != b.source());
}

// Prints one seed's program and its run on every engine (DESCENT_DIFF_SHOW=seed).
TEST_CASE("show a seed (DESCENT_DIFF_SHOW=seed)") {
  int seed = env_int("DESCENT_DIFF_SHOW", 0);
  if (seed <= 0) return;
  ProgramGenerator gen(static_cast<uint64_t>(seed));
  std::string text = numbered(gen.source());
  text +=
      "planted error: " + (gen.expected_error().empty() ? "(none)" : gen.expected_error()) + "\n";
  for (const auto& engine : Session::engines()) {
    Actual a = run_program(gen.source(), seed_name(seed), engine, kStepLimit);
    text += "--- " + engine + ":\n" + describe(a) + a.message + "\n";
  }
  MESSAGE(text);
}

// Writes one seed as a golden test (DESCENT_DIFF_GOLDEN=seed, DESCENT_DIFF_ENGINE=engine).
TEST_CASE("write a seed as a golden test (DESCENT_DIFF_GOLDEN=seed)") {
  int seed = env_int("DESCENT_DIFF_GOLDEN", 0);
  if (seed <= 0) return;
  const char* e = std::getenv("DESCENT_DIFF_ENGINE");
  std::string engine = e && *e ? e : "ast";
  ProgramGenerator gen(static_cast<uint64_t>(seed));
  std::string text = "# Found by the differential test (tests/diff), seed " + std::to_string(seed) +
                     "; expectations from the '" + engine + "' engine.\n" + gen.source();
  std::string file = "diff_seed_" + std::to_string(seed) + ".ds";
  Actual a = run_program(text, file, engine, kStepLimit);
  REQUIRE_MESSAGE(a.exit_code != 2, "seed ", seed, " does not compile:\n", a.message);
  if (text.back() != '\n') text += "\n";
  text += "\n";
  for (const auto& l : a.output) text += "# expect: " + l + "\n";
  if (a.exit_code != 0) {
    text += "# exit: " + std::to_string(a.exit_code) + "\n";
    for (const auto& err : a.errors) text += "# error: " + err + "\n";
  }
  std::filesystem::path path =
      std::filesystem::path(DESCENT_TESTS_DIR) / (a.exit_code == 0 ? "programs" : "errors") / file;
  std::ofstream(path, std::ios::binary) << text;
  MESSAGE("wrote ", path.string());
}
