// The pipeline Session (pipeline/pipeline.h): stages, outcomes and exit codes, step
// limits and interrupts, the call-depth limit.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {
using Lines = std::vector<std::string>;

const char* kDepth =
    "fn d(n: int) -> int {\n"
    "  if n == 0 { return 0 }\n"
    "  return 1 + d(n - 1)\n"
    "}\n";
}  // namespace

TEST_CASE("pipeline: the stages and their names") {
  const auto& st = Session::stages();
  std::vector<std::string> names;
  for (const auto& s : st) {
    names.emplace_back(s.name);
    CHECK(std::string(s.description).size() > 5);
  }
  CHECK(names == Lines{"tokens", "ast", "ast-folded", "stack", "stack-fused", "reg", "reg-alloc", "reg-fused",
                      "live", "llvm", "llvm-opt", "passes", "mir", "mir-regalloc", "asm", "native-dag", "native-legal", "native-combine", "native-isel", "native-sched", "native-regalloc", "native-asm", "native-patterns", "cfg", "analysis", "analysis-cfg", "analysis-mul", "graph", "grad"});

  Session s;
  StageResult none = s.stage("tokens");
  CHECK_FALSE(none.ok);
  CHECK(none.text == "no input yet");
  REQUIRE(s.compile("x = 1\n", "t.ds").status == Outcome::Ok);
  StageResult bad = s.stage("nope");
  CHECK_FALSE(bad.ok);
  CHECK(bad.text == "unknown stage 'nope' (stages: tokens, ast, ast-folded, stack, stack-fused, reg, reg-alloc, reg-fused, live, llvm, llvm-opt, passes, mir, mir-regalloc, asm, native-dag, native-legal, native-combine, native-isel, native-sched, native-regalloc, native-asm, native-patterns, cfg, analysis, analysis-cfg, analysis-mul, graph, grad)");
  for (const auto& n : names) CHECK(s.stage(n).ok);
}

TEST_CASE("pipeline: stage views in every format") {
  Session s;
  REQUIRE(s.compile("x = 15\nx + 10 - 5\n", "t.ds").status == Outcome::Ok);
  StageResult tok = s.stage("tokens");
  CHECK(tok.ok);
  CHECK(tok.text.rfind("1:1     IDENT     x\n1:3     =\n", 0) == 0);
  CHECK_FALSE(tok.tree.has_value());
  StageResult sx = s.stage("ast", Format::Sexpr);
  CHECK(sx.text == "(program (assign x 15) (sub (add x 10) 5))\n");
  REQUIRE(sx.tree.has_value());
  CHECK(sx.tree->head == "program");
  CHECK(sx.tree->kids.size() == 2);
  CHECK(sx.tree->kids[1].type == "int");
  StageResult text = s.stage("ast", Format::Text);
  CHECK(text.text.rfind("program\n  assign x : int\n    int 15 : int\n", 0) == 0);
  StageResult dot = s.stage("ast", Format::Dot);
  CHECK(dot.text.rfind("digraph \"ast\" {\n", 0) == 0);
  CHECK(dot.text.find("n0 -> n1;") != std::string::npos);
  CHECK(dot.text.substr(dot.text.size() - 2) == "}\n");
  CHECK(s.stage("ast-folded", Format::Sexpr).text == "(program (assign x 15) (sub (add x 10) 5))\n");
}

TEST_CASE("pipeline: stages of an input that failed to compile") {
  Session s;
  Outcome o = s.compile("x = (1 +\n", "t.ds");
  CHECK(o.status == Outcome::CompileError);
  StageResult tok = s.stage("tokens");
  CHECK(tok.ok);  // tokens are there even with a syntax error
  CHECK(tok.text == "1:1     IDENT     x\n1:3     =\n1:5     (\n1:6     INT       1\n1:8     +\n2:1     EOF\n");
  StageResult ast = s.stage("ast");
  CHECK_FALSE(ast.ok);
  CHECK(ast.text == "the input has syntax errors, so there is no tree");
  CHECK_FALSE(s.stage("ast-folded").ok);

  // A type error: the tree exists, the folded one does not.
  REQUIRE(s.compile("x = 1 + true\n", "t.ds").status == Outcome::CompileError);
  CHECK(s.stage("tokens").ok);
  CHECK(s.stage("ast").ok);
  CHECK(s.stage("ast", Format::Sexpr).text == "(program (assign x (add 1 true)))\n");
  StageResult folded = s.stage("ast-folded");
  CHECK_FALSE(folded.ok);
  CHECK(folded.text == "the input has errors, so fold_constants did not run");

  // A lexical error still gives a token view that shows it.
  REQUIRE(s.compile("x = $\n", "t.ds").status == Outcome::CompileError);
  CHECK(s.stage("tokens").text.find("1:5     ERROR  unexpected character '$'\n") != std::string::npos);
}

TEST_CASE("pipeline: outcomes, exit codes and messages") {
  Repl r;
  CHECK(r.submit("print(1 + 1)") == "2\n");
  CHECK(r.last.status == Outcome::Ok);
  CHECK(r.last.exit_code() == 0);
  CHECK(r.last.diagnostics.empty());
  CHECK(r.last.message.empty());

  CHECK(r.submit("print(1)\nx = 1 / 0\nprint(2)") == "1\nERROR 2:7: division by zero");
  CHECK(r.last.status == Outcome::RuntimeError);
  CHECK(r.last.exit_code() == 1);
  REQUIRE(r.last.diagnostics.size() == 1);
  CHECK(r.last.diagnostics[0].kind == ErrorKind::Runtime);
  CHECK(r.last.message == "<repl>:2:7: error: division by zero\n  x = 1 / 0\n        ^\n");

  CHECK(r.submit("print(1)\nprint(y)") == "ERROR 2:7: undefined variable 'y'");
  CHECK(r.last.status == Outcome::CompileError);
  CHECK(r.last.exit_code() == 2);
  CHECK(r.last.diagnostics[0].kind == ErrorKind::Compile);
  CHECK(r.last.message == "<repl>:2:7: error: undefined variable 'y'\n  print(y)\n        ^\n");

  // Through run_program: nothing printed after an error; compile errors print nothing.
  testing::Actual a = run("print(\"a\")\nx = 0\nprint(10 % x)\nprint(\"b\")");
  CHECK(a.output == Lines{"a"});
  CHECK(a.errors == Lines{"3:10: division by zero"});
  CHECK(a.exit_code == 1);
  testing::Actual c = run("print(\"a\")\nprint(1 + true)");
  CHECK(c.output.empty());
  CHECK(c.exit_code == 2);
}

TEST_CASE("pipeline: runtime error locations") {
  CHECK(run("x = 10\nx /= 0").errors == Lines{"2:3: division by zero"});
  CHECK(run("x = 10\nx %= 0").errors == Lines{"2:3: division by zero"});
  CHECK(run("x = 0.0 / 0.0\ny = int(x)").errors == Lines{"2:5: invalid conversion"});
  CHECK(run("y = 1 + int(1e19)").errors == Lines{"1:9: invalid conversion"});
  CHECK(run("y = int(-9223372036854775808.0)\nprint(y)").output == Lines{"-9223372036854775808"});
  CHECK(run("y = int(9223372036854775808.0)").errors == Lines{"1:5: invalid conversion"});
  CHECK(run("fn f() -> int { return g }\nx = f()\ng = 2").errors == Lines{"1:24: undefined variable 'g'"});
}

TEST_CASE("pipeline: run() needs a compiled input and can run it again") {
  Session s;
  Outcome none = s.run({});
  CHECK(none.status == Outcome::CompileError);
  CHECK(none.message == "error: nothing compiled to run\n");
  std::string out;
  RunOptions o;
  o.out = [&](std::string_view t) { out += t; };
  REQUIRE(s.compile("print(7)", "t.ds").status == Outcome::Ok);
  CHECK(s.run(o).status == Outcome::Ok);
  CHECK(s.run(o).status == Outcome::Ok);
  CHECK(out == "7\n7\n");
  REQUIRE(s.compile("print(", "t.ds").status == Outcome::CompileError);
  CHECK(s.run(o).status == Outcome::CompileError);
  CHECK(out == "7\n7\n");
}

TEST_CASE("pipeline: engines, names and echo") {
  std::vector<std::string> engines = Session::engines();
  CHECK(std::find(engines.begin(), engines.end(), "ast") != engines.end());
  Session s;
  CHECK(s.engine() == "ast");
  CHECK_FALSE(s.set_engine("nope"));
  CHECK(s.engine() == "ast");
  CHECK(s.set_engine("ast"));

  Repl r(/*echo=*/true);
  CHECK(r.submit("x = 15\nx + 10 - 5") == "20\n");
  CHECK(r.submit("x * 0.5\nx > 3\nprint(1)") == "7.5\ntrue\n1\n");
  CHECK(r.submit("fn f() { print(2) }\nf()") == "2\n");  // a void call echoes nothing
  std::vector<std::string> names = r.session.known_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"x", "f", "print", "sqrt", "int", "float", "min", "max", "abs", "floor"})
    CHECK_MESSAGE(std::find(names.begin(), names.end(), n) != names.end(), n);
  // Without echo, expression statements print nothing.
  Repl quiet;
  CHECK(quiet.submit("x = 15\nx + 10 - 5") == "");
}

TEST_CASE("pipeline: a step limit interrupts a long run") {
  testing::Actual a = run("x = 0\nwhile true { x += 1 }", 1000);
  CHECK(a.exit_code == 1);
  CHECK(a.errors == Lines{"2:1: interrupted"});
  testing::Actual f = run("for i in 0..1000000000 { }", 500);
  CHECK(f.errors == Lines{"1:1: interrupted"});
  testing::Actual rec = run("fn f(n: int) -> int { return f(n + 1) }\nprint(f(0))", 100);
  CHECK(rec.errors.size() == 1);
  CHECK(rec.errors[0].find("interrupted") != std::string::npos);
  // A program within the limit runs to the end.
  testing::Actual ok = run("s = 0\nfor i in 0..10 { s += i }\nprint(s)", 1000);
  CHECK(ok.exit_code == 0);
  CHECK(ok.output == Lines{"45"});
  // Steps are reported.
  Session s;
  Outcome o = s.submit("for i in 0..100 { }", "t.ds", {});
  CHECK(o.steps >= 100);
}

TEST_CASE("pipeline: interrupt_flag set from another thread stops a running program") {
  Session s;
  std::string out;
  RunOptions o;
  o.out = [&](std::string_view t) { out += t; };
  // A safety net so that a broken interrupt fails the test instead of hanging it: the
  // step limit also says "interrupted", but then the steps are over the limit.
  const uint64_t kNet = 3'000'000'000ULL;
  o.step_limit = kNet;
  REQUIRE(s.compile("print(1)\nwhile true {}\nprint(2)", "t.ds").status == Outcome::Ok);
  std::atomic<bool> done{false};
  std::thread t([&] {
    // Keep setting it: run() clears the flag when it starts.
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      s.interrupt_flag().store(true);
    }
  });
  Outcome r = s.run(o);
  done.store(true);
  t.join();
  CHECK(r.status == Outcome::RuntimeError);
  CHECK(r.exit_code() == 1);
  CHECK(locs(r.diagnostics) == Lines{"2:1: interrupted"});
  CHECK(r.steps < kNet);
  CHECK(out == "1\n");
  // The session survives and the next run is not interrupted by the stale flag.
  out.clear();
  CHECK(s.submit("print(3)", "t.ds", o).status == Outcome::Ok);
  CHECK(out == "3\n");

  // RunOptions.interrupt may point at a caller's own flag.
  std::atomic<bool> mine{true};
  RunOptions own = o;
  own.interrupt = &mine;
  Outcome r2 = s.submit("while true {}", "t.ds", own);
  CHECK(locs(r2.diagnostics) == Lines{"1:1: interrupted"});
  CHECK(r2.steps < 100);
}

TEST_CASE("pipeline: the call depth limit is exactly 10,000 frames") {
  testing::Actual ok = run(std::string(kDepth) + "print(d(9999))");  // 10,000 frames
  CHECK(ok.exit_code == 0);
  CHECK(ok.output == Lines{"9999"});
  testing::Actual over = run(std::string(kDepth) + "print(1)\nprint(d(10000))\nprint(2)");  // 10,001
  CHECK(over.exit_code == 1);
  CHECK(over.output == Lines{"1"});
  CHECK(over.errors == Lines{"3:14: stack overflow"});  // at the callee name of the failing call

  // A void function, and two functions calling each other.
  const std::string v = "fn f(n: int) {\n  if n > 0 { f(n - 1) }\n}\n";
  CHECK(run(v + "f(9999)\nprint(\"ok\")").output == Lines{"ok"});
  CHECK(run(v + "f(10000)").errors == Lines{"2:14: stack overflow"});
  const std::string m =
      "fn a(n: int) -> int {\n  if n == 0 { return 0 }\n  return b(n - 1)\n}\n"
      "fn b(n: int) -> int { return a(n) }\n";
  CHECK(run(m + "print(a(4999))").output == Lines{"0"});  // 5,000 a + 4,999 b frames
  CHECK(run(m + "print(b(4999))").output == Lines{"0"});  // 5,000 + 5,000: exactly the limit
  testing::Actual mo = run(m + "print(a(5000))");  // 10,001 frames
  CHECK(mo.errors.size() == 1);
  CHECK(mo.errors == Lines{"5:30: stack overflow"});
  // Unbounded recursion ends in stack overflow, not a crash; the REPL keeps working.
  Repl r;
  CHECK(r.submit("fn inf(n: int) -> int { return inf(n + 1) }\nprint(inf(0))") ==
        "ERROR 1:32: stack overflow");
  CHECK(r.submit(std::string(kDepth) + "print(d(10))") == "10\n");
}

TEST_CASE("pipeline: a 100,000-term flat sum compiles, runs on every engine and shows in every view") {
  // A flat chain is as tall as it is long, and every tree walk (sema, fold, the compilers,
  // LLVM codegen, the printers, the walker) recurses on it: on the Session's big stack.
  std::string chain = "x = 1";
  for (int i = 1; i < 100000; ++i) chain += " + 1";
  chain += "\nprint(x)\nprint(x + 2.5 * 2)\n";
  for (const auto& engine : Session::engines()) {
    Repl r;
    REQUIRE(r.session.set_engine(engine));
    std::string out = r.submit(chain);
    const Outcome& o = r.last;
    Session& s = r.session;
    if (engine == "reg" || engine == "native") {
      // The register VM numbers every value's virtual register in 16 bits: a clean error
      // that says so, not a crash (vm/reg_code.h). The native backend starts from the same
      // bytecode, so it meets the same limit.
      CHECK(o.status != Outcome::Ok);
      CHECK(o.message.find("too large for the register VM (16-bit operands)") != std::string::npos);
      continue;
    }
    CHECK_MESSAGE(out == "100000\n100005.0\n", engine << ": " << out.substr(0, 200));
    if (engine != "jit") continue;
    // Each view once (each is a whole walk of the tree); the trees come back to this thread
    // and are freed here, on its ordinary stack.
    for (const auto& st : Session::stages()) {
      StageResult r = s.stage(st.name);
      CHECK_MESSAGE(r.ok, st.name << ": " << r.text.substr(0, 200));
      CHECK_MESSAGE(r.text.size() < (200u << 20), st.name);  // linear in the input, not quadratic
    }
    CHECK(s.stage("ast", Format::Sexpr).ok);
    CHECK(s.stage("ast", Format::Dot).ok);
  }
  // One term more is a clean compile error, at the '+' that makes it too tall.
  Session s;
  Outcome o = s.submit("x = 1" + std::string() + [] {
    std::string t;
    for (int i = 0; i < 100000; ++i) t += "+1";
    return t;
  }(), "<chain>", RunOptions{});
  CHECK(o.status == Outcome::CompileError);
  CHECK_MESSAGE(o.message.rfind("<chain>:1:200004: error: nesting too deep", 0) == 0,
                o.message.substr(0, 200));
}
