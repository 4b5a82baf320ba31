// The real `descent` binary (DESCENT_BIN) through pipes: the scripted REPL, `descent run`,
// `descent dump`, --help, usage errors and Ctrl-C (SIGINT).
#include <doctest/doctest.h>

#include <fstream>

#include "frontend_util.h"
#include "pipeline/pipeline.h"

using descent::Session;
using fe::check_diagnostic;
using fe::contains;
using fe::describe;
using fe::ProcResult;
using fe::run_descent;

namespace {
constexpr int kUsageError = 64;

const char* kSeed = "x = 15\nx + 10 - 5\n";
}  // namespace

TEST_SUITE("cli") {

// ---- the REPL on a pipe ----

TEST_CASE("piped REPL: the seed program echoes exactly 20") {
  ProcResult r = run_descent({}, "x = 15\nx + 10 - 5\n");
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "20\n");  // no banner, no prompts, no timing: just the echo
  CHECK(r.err == "");
}

TEST_CASE("piped REPL: recovers after compile and runtime errors") {
  ProcResult r = run_descent({}, "y + 1\n"             // compile error
                                 "x = 2\n"
                                 "print(x / 0)\n"      // runtime error
                                 "fn f(n) {\n"         // multi-line input
                                 "  return n * x\n"
                                 "}\n"
                                 "x * 3\n"
                                 "f(5)\n");
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "6\n10\n");
  CHECK(check_diagnostic(r.err, "<repl:1>", 1, 1, "undefined variable 'y'", "y + 1") == "");
  CHECK(contains(r.err, "error: division by zero"));
  CHECK(contains(r.err, "print(x / 0)"));
}

TEST_CASE("piped REPL: commands work and :quit stops reading") {
  ProcResult r = run_descent({}, "a = 1 + 2\n:ast sexpr\n:quit\nprint(99)\n");
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "(program (assign a (add 1 2)))\n");
  CHECK(r.err == "");
}

TEST_CASE("piped REPL: end of input with no lines exits cleanly") {
  ProcResult r = run_descent({}, "");
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "");
}

// ---- descent run ----

TEST_CASE("run: a good program exits 0, prints its output and does not echo") {
  fe::TempDir dir;
  std::string f = dir.write("good.ds",
                            "x = 15\n"
                            "x + 10 - 5\n"  // not echoed by `run`
                            "fn fib(n: int) -> int {\n"
                            "  if n < 2 { return n }\n"
                            "  return fib(n - 1) + fib(n - 2)\n"
                            "}\n"
                            "for i in 0..5 { print(i, fib(i)) }\n"
                            "print(2.5 * float(x), x > 3)\n");
  ProcResult r = run_descent({"run", f});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0 0\n1 1\n2 1\n3 2\n4 3\n37.5 true\n");
  CHECK(r.err == "");

  ProcResult a = run_descent({"run", f, "--engine", "ast"});
  INFO(describe(a));
  CHECK(a.exit_code == 0);
  CHECK(a.out == r.out);
}

TEST_CASE("run: a runtime error exits 1; output before it stays, nothing after") {
  fe::TempDir dir;
  std::string f = dir.write("rt.ds",
                            "print(1)\n"
                            "print(2)\n"
                            "y = 0\n"
                            "print(5 / y)\n"
                            "print(3)\n");
  ProcResult r = run_descent({"run", f});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 1);
  CHECK(r.out == "1\n2\n");
  CHECK(check_diagnostic(r.err, f, 4, 9, "division by zero", "print(5 / y)") == "");
  CHECK(fe::split_lines(r.err).size() == 3);
}

TEST_CASE("run: a runtime error inside a function points into the function") {
  fe::TempDir dir;
  std::string f = dir.write("conv.ds",
                            "fn bad(v: float) -> int {\n"
                            "  return int(v)\n"
                            "}\n"
                            "print(bad(2.5))\n"
                            "print(bad(0.0 / 0.0))\n");
  ProcResult r = run_descent({"run", f});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out == "2\n");
  CHECK(check_diagnostic(r.err, f, 2, 10, "invalid conversion", "  return int(v)") == "");
}

TEST_CASE("run: --plot draws the printed losses, also when the run stops with an error") {
  fe::TempDir dir;
  // Two epochs, then a runtime error: the curve of what ran is still drawn.
  std::string f = dir.write("train.ds",
                            "loss = 2.0\n"
                            "for e in 1..3 { print(\"epoch\", e, \"loss\", loss)\n loss = loss / 4.0 }\n"
                            "z = 0\nprint(1 / z)\n");
  std::string png = dir.write("loss.png", "");  // the path; --plot writes over it
  ProcResult r = run_descent({"run", f, "--plot", png});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out == "epoch 1 loss 2.0\nepoch 2 loss 0.5\n");
  CHECK(contains(r.err, "division by zero"));
  CHECK(contains(r.err, "wrote " + png));
  std::ifstream in(png, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  CHECK(head == "\x89PNG\r\n\x1a\n");
  // Nothing to plot is an error on its own (exit 1 after a good run), naming the words.
  std::string quiet = dir.write("quiet.ds", "print(1)\n");
  r = run_descent({"run", quiet, "--plot", png, "--plot-of", "acc"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "1\n");
  CHECK(contains(r.err, "error: --plot: the program printed no line with 'acc NUMBER' to plot"));
}

TEST_CASE("run: a compile error exits 2 and nothing runs") {
  fe::TempDir dir;
  SUBCASE("syntax error") {
    std::string f = dir.write("syn.ds", "print(1)\nx = 1 +\nprint(2)\n");
    ProcResult r = run_descent({"run", f});
    INFO(describe(r));
    CHECK(r.exited);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");  // print(1) comes first but nothing runs
    CHECK(check_diagnostic(r.err, f, 2, 8, "expected expression", "x = 1 +") == "");
  }
  SUBCASE("name error") {
    std::string f = dir.write("name.ds", "print(1)\nprint(q)\n");
    ProcResult r = run_descent({"run", f});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(check_diagnostic(r.err, f, 2, 7, "undefined variable 'q'", "print(q)") == "");
  }
  SUBCASE("type error") {
    std::string f = dir.write("type.ds", "x = 1\nif x { print(x) }\n");
    ProcResult r = run_descent({"run", f});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(check_diagnostic(r.err, f, 2, 4, "condition must be bool, got int", "if x { print(x) }") == "");
  }
  SUBCASE("lexical error") {
    std::string f = dir.write("lex.ds", "print(1)\nx = 1 $ 2\n");
    ProcResult r = run_descent({"run", f});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(check_diagnostic(r.err, f, 2, 7, "unexpected character '$'", "x = 1 $ 2") == "");
  }
}

TEST_CASE("run: --time reports on stderr and leaves stdout alone") {
  fe::TempDir dir;
  std::string f = dir.write("t.ds", "print(6 * 7)\n");
  ProcResult r = run_descent({"run", f, "--time"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "42\n");
  CHECK(contains(r.err, "compile"));
  CHECK(contains(r.err, "ms"));
}

TEST_CASE("run --engine jit --time: the tiers are shown; --no-tiers compiles at -O first") {
  fe::TempDir dir;
  std::string f = dir.write("fib.ds", "fn fib(n: int) -> int {\n  if n < 2 { return n }\n"
                                      "  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(27))\n");
  ProcResult tiered = run_descent({"run", f, "--engine", "jit", "--time"});
  INFO(describe(tiered));
  CHECK(tiered.exit_code == 0);
  CHECK(tiered.out == "196418\n");
  CHECK(contains(tiered.err, "jit: 1 function at -O0"));
  // Ready during the run or not by its end: either way the line says which.
  CHECK(contains(tiered.err, "jit: -O2 behind it, "));
  ProcResult plain = run_descent({"run", f, "--engine", "jit", "--time", "--no-tiers"});
  INFO(describe(plain));
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == "196418\n");
  CHECK(contains(plain.err, "jit: 1 function "));
  CHECK_FALSE(contains(plain.err, "at -O0"));
  CHECK_FALSE(contains(plain.err, "behind it"));
}

TEST_CASE("run: a lot of output before a runtime error is all kept") {
  fe::TempDir dir;
  std::string f = dir.write("many.ds", "for i in 0..20000 { print(i) }\nz = 0\nprint(1 / z)\n");
  ProcResult r = run_descent({"run", f});
  INFO("exit " << r.exit_code << ", stderr: " << r.err);
  CHECK(r.exit_code == 1);
  std::string expected;
  for (int i = 0; i < 20000; ++i) expected += std::to_string(i) + "\n";
  CHECK(r.out == expected);
  CHECK(contains(r.err, "division by zero"));
}

TEST_CASE("run: --engine nope is a usage error that lists the engines") {
  fe::TempDir dir;
  std::string f = dir.write("seed.ds", kSeed);
  ProcResult r = run_descent({"run", f, "--engine", "nope"});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == kUsageError);
  CHECK(r.out == "");
  CHECK(contains(r.err, "nope"));
  for (const auto& e : Session::engines()) CHECK(contains(r.err, e));
}

TEST_CASE("run: a missing file is a clear error with a nonzero exit") {
  fe::TempDir dir;
  std::string missing = dir.path("does-not-exist.ds");
  ProcResult r = run_descent({"run", missing});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code != 0);
  CHECK(r.out == "");
  CHECK(contains(r.err, "error"));
  CHECK(contains(r.err, missing));
}

TEST_CASE("a directory is not a program: run, dump, kernel and build refuse it, :load too") {
  // An empty text compiles and runs happily, so reading a directory as "" would exit 0 and
  // say nothing (and `build` would write an object file).
  fe::TempDir dir;
  std::string d = dir.path("d");
  std::filesystem::create_directory(d);
  std::string object = dir.path("x.o");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", d}, {"dump", d, "--stage", "ast"}, {"kernel", d, "matmul"},
           {"build", d, "-o", object}}) {
    ProcResult r = run_descent(args);
    INFO(args[0] << ": " << describe(r));
    CHECK(r.exited);
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "error: '" + d + "' is a directory, not a file"));
  }
  CHECK_FALSE(std::filesystem::exists(object));
  fe::ReplHarness h;
  h.feed(":load " + d);
  CHECK(contains(h.take_err(), "error: '" + d + "' is a directory, not a file"));
  h.feed("1 + 1");
  CHECK(h.take_out() == "2\n");
}

// ---- descent dump ----

TEST_CASE("dump: the seed program's AST as an s-expression") {
  fe::TempDir dir;
  std::string f = dir.write("seed.ds", kSeed);
  ProcResult r = run_descent({"dump", f, "--stage", "ast", "--format", "sexpr"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "(program (assign x 15) (sub (add x 10) 5))\n");
  CHECK(r.err == "");

  ProcResult text = run_descent({"dump", f, "--stage", "ast"});
  INFO(describe(text));
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, "assign x"));
  CHECK(contains(text.out, "sub"));

  ProcResult dot = run_descent({"dump", f, "--stage", "ast", "--format", "dot"});
  INFO(describe(dot));
  CHECK(dot.exit_code == 0);
  CHECK(contains(dot.out, "digraph"));

  std::string g = dir.write("fold.ds", "x = 1 + 2 * 3\n");
  ProcResult folded = run_descent({"dump", g, "--stage", "ast-folded", "--format", "sexpr"});
  INFO(describe(folded));
  CHECK(folded.exit_code == 0);
  CHECK(folded.out == "(program (assign x 7))\n");
}

TEST_CASE("dump: --stage tokens works on a program with a syntax error") {
  fe::TempDir dir;
  std::string f = dir.write("syn.ds", "print(1)\nx = 1 +\n");
  ProcResult r = run_descent({"dump", f, "--stage", "tokens"});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "1:1"));
  CHECK(contains(r.out, "IDENT"));
  CHECK(contains(r.out, "print"));
  CHECK(contains(r.out, "2:7"));  // the dangling '+'
  CHECK(contains(r.out, "EOF"));

  // And on a lexical error the bad character shows up among the tokens.
  std::string g = dir.write("lex.ds", "x = 1 $ 2\n");
  ProcResult l = run_descent({"dump", g, "--stage", "tokens"});
  INFO(describe(l));
  CHECK(l.exit_code == 0);
  CHECK(contains(l.out, "unexpected character '$'"));
  CHECK(contains(l.out, "1:9"));  // the lexer went on after it

  // Other stages need a program that compiles: a compile error, exit 2, nothing on stdout.
  ProcResult a = run_descent({"dump", f, "--stage", "ast"});
  INFO(describe(a));
  CHECK(a.exit_code == 2);
  CHECK(a.out == "");
  CHECK(check_diagnostic(a.err, f, 2, 8, "expected expression", "x = 1 +") == "");
}

TEST_CASE("dump: an unknown stage is a usage error that lists the stages") {
  fe::TempDir dir;
  std::string f = dir.write("seed.ds", kSeed);
  ProcResult r = run_descent({"dump", f, "--stage", "nope"});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code == kUsageError);
  CHECK(r.out == "");
  CHECK(contains(r.err, "nope"));
  for (const auto& s : Session::stages()) CHECK(contains(r.err, s.name));

  ProcResult fmt = run_descent({"dump", f, "--stage", "ast", "--format", "xml"});
  INFO(describe(fmt));
  CHECK(fmt.exit_code == kUsageError);
  CHECK(fmt.out == "");
  CHECK(contains(fmt.err, "xml"));
  CHECK(contains(fmt.err, "sexpr"));
}

TEST_CASE("dump: a missing file is a clear error with a nonzero exit") {
  fe::TempDir dir;
  std::string missing = dir.path("nothing-here.ds");
  ProcResult r = run_descent({"dump", missing, "--stage", "tokens"});
  INFO(describe(r));
  CHECK(r.exited);
  CHECK(r.exit_code != 0);
  CHECK(r.out == "");
  CHECK(contains(r.err, "error"));
  CHECK(contains(r.err, missing));
}

// ---- help and usage ----

TEST_CASE("--help for the app and each subcommand mentions the options") {
  ProcResult app = run_descent({"--help"});
  INFO(describe(app));
  CHECK(app.exit_code == 0);
  CHECK(contains(app.out, "run"));
  CHECK(contains(app.out, "dump"));
  CHECK(contains(app.out, "REPL"));

  ProcResult run = run_descent({"run", "--help"});
  INFO(describe(run));
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "FILE"));
  CHECK(contains(run.out, "--engine"));
  CHECK(contains(run.out, "--time"));
  for (const auto& e : Session::engines()) CHECK(contains(run.out, e));

  ProcResult dump = run_descent({"dump", "--help"});
  INFO(describe(dump));
  CHECK(dump.exit_code == 0);
  CHECK(contains(dump.out, "FILE"));
  CHECK(contains(dump.out, "--stage"));
  CHECK(contains(dump.out, "--format"));
  for (const auto& s : Session::stages()) CHECK(contains(dump.out, s.name));
  CHECK(contains(dump.out, "sexpr"));
  CHECK(contains(dump.out, "dot"));
}

// The CLI's usage errors exit 64 (EX_USAGE), as `--engine nope` and `--stage nope` do. These
// are the command-line mistakes that the argument parser itself catches.
TEST_CASE("usage errors caught by argument parsing exit 64") {
  fe::TempDir dir;
  std::string f = dir.write("seed.ds", kSeed);
  struct Case {
    const char* what;
    std::vector<std::string> args;
  };
  const Case cases[] = {
      {"unknown subcommand", {"frobnicate"}},
      {"run without FILE", {"run"}},
      {"run with an unknown option", {"run", f, "--bogus"}},
      {"--engine without a value", {"run", f, "--engine"}},
      {"dump without --stage", {"dump", f}},
  };
  for (const auto& c : cases) {
    ProcResult r = run_descent(c.args);
    INFO(std::string(c.what) << ": " << describe(r));
    CHECK(r.exited);
    CHECK(r.exit_code == kUsageError);
    CHECK(r.out == "");
    CHECK_FALSE(r.err.empty());
  }
}

// ---- Ctrl-C ----

TEST_CASE("Ctrl-C interrupts `descent run`: exit 1 and 'interrupted'") {
  fe::TempDir dir;
  std::string f = dir.write("loop.ds", "print(\"start\")\nwhile true { }\nprint(\"after\")\n");
  fe::Child c({DESCENT_BIN, "run", f});
  REQUIRE_MESSAGE(c.wait_for_handler(SIGINT), "descent never installed a SIGINT handler");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  c.send_signal(SIGINT);
  ProcResult r = c.finish();
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exited);
  CHECK(r.exit_code == 1);
  CHECK(check_diagnostic(r.err, f, 2, 1, "interrupted", "while true { }") == "");
  CHECK(r.out == "start\n");  // printed before the loop; nothing after it
}

TEST_CASE("Ctrl-C interrupts `descent build --run`: the linked program stops, exit 130") {
  // The program runs in a process group of its own (proc/), which a terminal's Ctrl-C does
  // not reach: the CLI's flag must stop it, or an endless loop would never end.
  fe::TempDir dir;
  std::string f = dir.write("loop.ds", "print(\"start\")\nx = 0\nwhile true { x += 1 }\n");
  fe::Child c({DESCENT_BIN, "build", f, "--run"});
  REQUIRE_MESSAGE(c.wait_for_handler(SIGINT), "descent never installed a SIGINT handler");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // built, linked, running
  c.send_signal(SIGINT);
  ProcResult r = c.finish();
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exited);
  CHECK(r.exit_code == 130);
  CHECK(contains(r.err, "error: --run: interrupted"));
}

TEST_CASE("Ctrl-C in the piped REPL stops the loop and the REPL goes on") {
  fe::Child c({DESCENT_BIN});
  REQUIRE_MESSAGE(c.wait_for_handler(SIGINT), "descent never installed a SIGINT handler");
  c.write("while true { }\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  c.send_signal(SIGINT);
  c.write("print(7)\n");
  ProcResult r = c.finish();
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exited);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "7\n");
  CHECK(contains(r.err, "error: interrupted"));
  CHECK(check_diagnostic(r.err, "<repl:1>", 1, 1, "interrupted", "while true { }") == "");
}

TEST_CASE("Ctrl-C in the piped REPL: the next input runs without a stale interrupt") {
  fe::Child c({DESCENT_BIN});
  REQUIRE(c.wait_for_handler(SIGINT));
  c.write("n = 0\nwhile true { n += 1 }\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  c.send_signal(SIGINT);
  // A finite loop after the interrupt must run to the end, and state must survive.
  c.write("m = 0\nfor i in 0..1000 { m += i }\nm\nn > 0\n");
  ProcResult r = c.finish();
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "499500\ntrue\n");
  CHECK(contains(r.err, "interrupted"));
}

}  // TEST_SUITE
