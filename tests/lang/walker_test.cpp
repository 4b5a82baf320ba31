// The AST walker (lang/walker.h) used directly as an Engine, and the evaluation rules it
// must share with every engine: order of evaluation, short-circuits, loops, globals.
#include <doctest/doctest.h>

#include "lang/walker.h"
#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {
using Lines = std::vector<std::string>;

// A hand-assembled pipeline: Module and GlobalStore owned here, several inputs in turn.
struct Machine {
  Module module;
  GlobalStore globals;
  std::unique_ptr<Engine> engine = make_ast_walker();
  std::string out;
  RunResult last;

  // Returns false (with the errors in `errors`) when the input does not compile.
  bool run(const std::string& text, std::vector<std::string>* errors = nullptr, bool echo = false) {
    auto program = std::make_shared<Program>();
    std::vector<Diagnostic> d;
    *program = parse(std::make_shared<SourceFile>("w.ds", text), d);
    globals.resize(module.globals.size());
    if (!d.empty() || !check(*program, module, globals.defined, d)) {
      if (errors) *errors = locs(d);
      return false;
    }
    module.programs.push_back(program);
    out.clear();
    RunOptions o;
    o.out = [this](std::string_view t) { out += t; };
    o.echo = echo;
    last = engine->run(*program, module, globals, o);
    return true;
  }
};
}  // namespace

TEST_CASE("walker: runs a checked program and keeps globals in the GlobalStore") {
  Machine m;
  CHECK(std::string(m.engine->name()) == "ast");
  REQUIRE(m.run("x = 40\ny = 2.5\nprint(x + 2)"));
  CHECK(m.last.ok);
  CHECK(m.out == "42\n");
  CHECK(m.last.steps >= 3);
  REQUIRE(m.globals.values.size() == 2);
  CHECK(m.globals.values[0].i == 40);
  CHECK(m.globals.values[1].f == 2.5);
  CHECK(m.globals.defined == std::vector<uint8_t>{1, 1});
  // A second input sees the first one's globals and functions.
  REQUIRE(m.run("fn add(a, b) { return a + b }\nx = add(x, 2)"));
  REQUIRE(m.run("print(x, add(1, 2))"));
  CHECK(m.out == "42 3\n");
  CHECK(m.globals.values[0].i == 42);
  // Echo of expression statements (the REPL's behaviour).
  REQUIRE(m.run("x\ny * 2\nx == 42", nullptr, /*echo=*/true));
  CHECK(m.out == "42\n5.0\ntrue\n");
}

TEST_CASE("walker: runtime errors come back as a Runtime diagnostic") {
  Machine m;
  REQUIRE(m.run("a = 1\nb = a / (a - 1)\nc = 3"));
  CHECK_FALSE(m.last.ok);
  CHECK(m.last.error.kind == ErrorKind::Runtime);
  CHECK(m.last.error.message == "division by zero");
  CHECK(m.last.error.loc.line == 2);
  CHECK(m.last.error.loc.col == 7);
  CHECK(m.globals.defined == std::vector<uint8_t>{1, 0, 0});
  std::vector<std::string> errors;
  CHECK_FALSE(m.run("print(b)", &errors));
  CHECK(errors == Lines{"1:7: undefined variable 'b'"});
}

TEST_CASE("walker: left-to-right evaluation and short-circuit logic") {
  const std::string p = "fn p(n) -> int {\n  print(n)\n  return n\n}\n";
  CHECK(run(p + "print(p(1) + p(2) * p(3), p(4))").output == Lines{"1", "2", "3", "4", "7 4"});
  CHECK(run(p + "x = min(p(5), p(6))").output == Lines{"5", "6"});
  const std::string t = "fn t(s: int) -> bool {\n  print(s)\n  return s > 0\n}\n";
  CHECK(run(t + "print(t(0) && t(1))").output == Lines{"0", "false"});
  CHECK(run(t + "print(t(1) || t(2))").output == Lines{"1", "true"});
  CHECK(run(t + "print(t(1) && t(0) || t(3))").output == Lines{"1", "0", "3", "true"});
  // The right operand can hold what would fail if it ran.
  CHECK(run("x = 0\nprint(x != 0 && 10 / x > 1)").output == Lines{"false"});
  CHECK(run("x = 0\nprint(x == 0 || 10 / x > 1)").output == Lines{"true"});
}

TEST_CASE("walker: loops") {
  // Range bounds are evaluated once; assigning the loop variable does not steer the loop.
  CHECK(run("n = 3\nfor i in 0..n { n = 10\n print(i) }").output == Lines{"0", "1", "2"});
  CHECK(run("for i in 0..3 { print(i)\n i = 100 }").output == Lines{"0", "1", "2"});
  CHECK(run("for i in 5..2 { print(i) }\nprint(\"done\")").output == Lines{"done"});
  CHECK(run("for i in -2..1 { print(i) }").output == Lines{"-2", "-1", "0"});
  // The loop variable keeps its last value after the loop when the loop ran.
  CHECK(run("i = 0\nfor i in 0..4 { }\nprint(i)").output == Lines{"3"});
  CHECK(run("x = 0\nwhile true {\n  x += 1\n  if x % 2 == 0 { continue }\n  if x > 6 { break }\n  print(x)\n}")
            .output == Lines{"1", "3", "5"});
  CHECK(run("for i in 0..3 {\n  for j in 0..3 {\n    if j == 1 { break }\n    print(i, j)\n  }\n}").output ==
        Lines{"0 0", "1 0", "2 0"});
  CHECK(run("fn f() -> int {\n  for i in 0..10 {\n    while true { return i + 7 }\n  }\n  return -1\n}\nprint(f())")
            .output == Lines{"7"});
  CHECK(run("while false { print(1) }\nprint(2)").output == Lines{"2"});
  CHECK(run("s = 0\nfor i in 9223372036854775805..9223372036854775807 { s += 1 }\nprint(s)").output ==
        Lines{"2"});
}

TEST_CASE("walker: functions, locals and recursion") {
  CHECK(run("fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(20))")
            .output == Lines{"6765"});
  // Each call has its own locals.
  CHECK(run("fn f(n) -> int {\n  k = n * 10\n  if n > 0 { f(n - 1) }\n  return k\n}\nprint(f(3))").output ==
        Lines{"30"});
  // Parameters are copies.
  CHECK(run("fn g(n) {\n  n = n + 1\n  print(n)\n}\nx = 1\ng(x)\nprint(x)").output == Lines{"2", "1"});
  CHECK(run("fn h(a: float, b) -> float { return a / b }\nprint(h(1, 4))").output == Lines{"0.25"});
  CHECK(run("fn v() {\n  print(\"in\")\n  return\n  print(\"never\")\n}\nv()").output == Lines{"in"});
  CHECK(run("print(\"tab\\there\", \"q\\\"\", \"back\\\\slash\")").output == Lines{"tab\there q\" back\\slash"});
  CHECK(run("print()").output == Lines{""});
}

TEST_CASE("walker: run_on_big_stack runs the function to completion") {
  int calls = 0;
  run_on_big_stack([&] { ++calls; });
  CHECK(calls == 1);
  // Deep native recursion that an 8 MB stack would not hold.
  std::function<int(int)> depth = [&](int n) -> int {
    volatile char pad[4096];
    pad[0] = static_cast<char>(n);
    return n == 0 ? pad[0] : 1 + depth(n - 1);
  };
  int result = -1;
  run_on_big_stack([&] { result = depth(20000); }, 256u << 20);
  CHECK(result == 20000);
}
