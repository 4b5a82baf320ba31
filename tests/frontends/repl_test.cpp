// The REPL's logic in-process: descent::Repl over a descent::Session, writing to string
// streams. (The same class runs behind `descent` on a terminal and on a pipe; cli_test.cpp
// drives the real binary.)
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "apps/repl.h"
#include "frontend_util.h"

using descent::Repl;
using descent::Session;
using fe::contains;

namespace {

// The in-process REPL (frontend_util.h), plus a step that must not write to stderr.
struct R : fe::ReplHarness {
  // Feeds a line and returns its stdout; checks that it wrote nothing to stderr.
  std::string ok(const std::string& line) {
    bool go_on = feed(line);
    std::string e = take_err();
    INFO("line: " << line);
    CHECK(go_on);
    CHECK_MESSAGE(e.empty(), "unexpected error output: " << e);
    return take_out();
  }
};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_SUITE("repl") {

TEST_CASE("an expression statement echoes its value; an assignment does not") {
  R r;
  CHECK(r.ok("x = 15") == "");
  CHECK(r.ok("x + 10 - 5") == "20\n");
  CHECK(r.ok("x += 1") == "");
  CHECK(r.ok("x") == "16\n");
  CHECK(r.ok("1.0 / 4") == "0.25\n");
  CHECK(r.ok("2.0 * 3") == "6.0\n");
  CHECK(r.ok("x > 3 && !(x == 0)") == "true\n");
  // print writes its line; the call itself has no value to echo.
  CHECK(r.ok("print(3, 4.5, false)") == "3 4.5 false\n");
  // Several statements on one line: each expression statement echoes, in order.
  CHECK(r.ok("1 + 1; y = 7; y * 2") == "2\n14\n");
  // Blank lines do nothing.
  CHECK(r.ok("") == "");
  CHECK(r.ok("   ") == "");
}

TEST_CASE("globals and functions persist across lines") {
  R r;
  CHECK(r.ok("g = 2") == "");
  CHECK(r.ok("fn twice(n) { return n * g }") == "");
  CHECK(r.ok("twice(21)") == "42\n");
  CHECK(r.ok("g = 3") == "");
  CHECK(r.ok("twice(5)") == "15\n");
  CHECK(r.ok("h = twice(g)") == "");
  CHECK(r.ok("print(h)") == "9\n");
  // A variable keeps the type of its first assignment across inputs.
  r.feed("g = 2.5");
  CHECK(contains(r.take_err(), "error: cannot assign float to int variable 'g'"));
  CHECK(r.take_out() == "");
  CHECK(r.ok("g") == "3\n");
}

TEST_CASE("a compile error is reported on the error stream and changes nothing") {
  R r;
  CHECK(r.ok("keep = 1") == "");
  CHECK(r.feed("a = 5; b = nope"));
  std::string e = r.take_err();
  CHECK(contains(e, ":1:12: error: undefined variable 'nope'"));
  CHECK(contains(e, "a = 5; b = nope"));  // the source line
  CHECK(contains(e, "^"));                // and a caret
  CHECK(r.take_out() == "");

  // The REPL goes on: the next line works...
  CHECK(r.ok("keep + 1") == "2\n");
  // ...and the failed line defined nothing (not even `a`, assigned before the bad part).
  r.feed("a");
  CHECK(contains(r.take_err(), "undefined variable 'a'"));
  CHECK(r.take_out() == "");

  // A function in a failed input is not defined either.
  r.feed("fn g() { return 1 }; q = zz");
  CHECK(contains(r.take_err(), "undefined variable 'zz'"));
  r.feed("g()");
  CHECK(contains(r.take_err(), "undefined function 'g'"));
  CHECK(r.take_out() == "");

  // A syntax error too.
  r.feed("x = (1 +");  // opens a paren: asks for more
  CHECK(r.repl.continuing());
  r.feed(")");
  CHECK_FALSE(r.repl.continuing());
  CHECK(contains(r.take_err(), "error: expected expression"));
  r.feed("x");
  CHECK(contains(r.take_err(), "undefined variable 'x'"));
  CHECK(r.ok("keep") == "1\n");
}

TEST_CASE("a runtime error is reported on the error stream and the REPL goes on") {
  R r;
  CHECK(r.ok("z = 0") == "");
  CHECK(r.feed("print(1); print(10 / z); print(2)"));
  // Output before the error stays; nothing after it is printed.
  CHECK(r.take_out() == "1\n");
  std::string e = r.take_err();
  CHECK(contains(e, ":1:20: error: division by zero"));
  CHECK(contains(e, "print(1); print(10 / z); print(2)"));
  CHECK(contains(e, "^"));
  // The REPL is still usable, with its state.
  CHECK(r.ok("z + 5") == "5\n");
  CHECK(r.ok("fn boom(n) { return n / z }") == "");
  r.feed("boom(3)");
  CHECK(contains(r.take_err(), "error: division by zero"));
  CHECK(r.take_out() == "");
  CHECK(r.ok("z = 3") == "");
  CHECK(r.ok("boom(9)") == "3\n");
}

TEST_CASE("a variable whose first assignment failed at run time stays undefined") {
  R r;
  r.feed("c = 1 / 0");
  CHECK(contains(r.take_err(), "division by zero"));
  r.feed("c");
  CHECK(contains(r.take_err(), "undefined variable 'c'"));
  CHECK(r.take_out() == "");
  CHECK(r.ok("c = 4") == "");
  CHECK(r.ok("c") == "4\n");
}

TEST_CASE("multi-line input continues until the braces close") {
  R r;
  CHECK_FALSE(r.repl.continuing());
  std::string primary = r.repl.prompt();
  CHECK(contains(primary, "descent"));

  CHECK(r.ok("fn f(n) {") == "");
  CHECK(r.repl.continuing());
  std::string cont = r.repl.prompt();
  CHECK(cont != primary);
  CHECK(contains(cont, "..."));

  CHECK(r.ok("  if n < 2 { return n }") == "");
  CHECK(r.repl.continuing());
  CHECK(r.ok("  return f(n - 1) + f(n - 2)") == "");
  CHECK(r.repl.continuing());
  CHECK(r.ok("}") == "");
  CHECK_FALSE(r.repl.continuing());
  CHECK(std::string(r.repl.prompt()) == primary);
  CHECK(r.ok("f(10)") == "55\n");

  // A block statement spanning lines runs once complete; blank lines inside are kept.
  CHECK(r.ok("for i in 0..3 {") == "");
  CHECK(r.ok("") == "");
  CHECK(r.repl.continuing());
  CHECK(r.ok("  print(i * i)") == "");
  CHECK(r.ok("}") == "0\n1\n4\n");

  // An open paren continues too.
  CHECK(r.ok("print(1,") == "");
  CHECK(r.repl.continuing());
  CHECK(r.ok("2)") == "1 2\n");

  // Braces in comments and strings do not count.
  CHECK(r.ok("w = 1 # {") == "");
  CHECK_FALSE(r.repl.continuing());
  CHECK(r.ok("print(\"{\")") == "{\n");
  CHECK_FALSE(r.repl.continuing());
}

TEST_CASE("cancel_input drops a half-typed input") {
  R r;
  CHECK(r.ok("fn k() {") == "");
  CHECK(r.repl.continuing());
  r.repl.cancel_input();
  CHECK_FALSE(r.repl.continuing());
  CHECK(r.ok("5 * 5") == "25\n");
  r.feed("k()");
  CHECK(contains(r.take_err(), "undefined function 'k'"));
}

TEST_CASE(":help lists every command") {
  R r;
  std::string out = r.ok(":help");
  const char* expected[] = {":help", ":tokens", ":ast", ":folded", ":passes", ":stages",
                            ":stage", ":engine", ":time", ":load", ":quit"};
  for (const char* c : expected) {
    INFO("command " << c);
    CHECK(contains(out, c));
    CHECK(has(Repl::commands(), c));
  }
  for (const auto& c : Repl::commands()) {
    INFO("command " << c);
    CHECK(contains(out, c));
  }
}

TEST_CASE(":tokens, :ast, :folded and :passes show the last input") {
  R r;
  // Before any input there is nothing to show: an error, not a crash.
  r.feed(":tokens");
  CHECK_FALSE(r.take_err().empty());
  CHECK(r.take_out() == "");

  CHECK(r.ok("x = 1 + 2") == "");
  std::string toks = r.ok(":tokens");
  CHECK(contains(toks, "1:1"));
  CHECK(contains(toks, "IDENT"));
  CHECK(contains(toks, "1:7"));  // the '+'
  CHECK(contains(toks, "EOF"));
  CHECK(r.ok(":stage tokens") == toks);

  std::string ast = r.ok(":ast");
  CHECK(contains(ast, "program"));
  CHECK(contains(ast, "assign x"));
  CHECK(contains(ast, "add"));
  CHECK(r.ok(":ast sexpr") == "(program (assign x (add 1 2)))\n");
  CHECK(r.ok(":stage ast sexpr") == "(program (assign x (add 1 2)))\n");
  CHECK(contains(r.ok(":ast dot"), "digraph"));

  CHECK(r.ok(":folded sexpr") == "(program (assign x 3))\n");
  CHECK(r.ok(":stage ast-folded sexpr") == "(program (assign x 3))\n");
  std::string folded = r.ok(":folded");
  CHECK(contains(folded, "assign x"));
  CHECK_FALSE(contains(folded, "add"));

  std::string passes = r.ok(":passes");
  CHECK(contains(passes, "fold_constants"));
  CHECK(contains(passes, "changed"));

  // The views follow the last input.
  CHECK(r.ok("x * 2") == "6\n");
  CHECK(r.ok(":ast sexpr") == "(program (mul x 2))\n");

  // Bad arguments are errors on the error stream.
  r.feed(":ast xml");
  CHECK(contains(r.take_err(), "unknown format 'xml'"));
  CHECK(r.take_out() == "");
}

TEST_CASE(":tokens works after a syntax error") {
  R r;
  r.feed("y = 1 +");
  CHECK(contains(r.take_err(), "expected expression"));
  std::string toks = r.ok(":tokens");
  CHECK(contains(toks, "1:7"));
  CHECK(contains(toks, "+"));
  r.feed(":ast");
  CHECK_FALSE(r.take_err().empty());
  CHECK(r.take_out() == "");
}

TEST_CASE(":stages and :stage") {
  R r;
  std::string out = r.ok(":stages");
  CHECK(contains(out, "tokens"));
  CHECK(contains(out, "ast"));
  CHECK(contains(out, "ast-folded"));
  for (const auto& s : Session::stages()) CHECK(contains(out, s.name));

  CHECK(r.ok("v = 4") == "");
  r.feed(":stage nope");
  std::string e = r.take_err();
  CHECK(contains(e, "unknown stage 'nope'"));
  CHECK(contains(e, "tokens"));
  CHECK(r.take_out() == "");
  r.feed(":stage");
  CHECK(contains(r.take_err(), "usage"));
}

TEST_CASE(":engine shows and chooses the engine") {
  R r;
  std::string out = r.ok(":engine");
  CHECK(contains(out, "ast"));
  for (const auto& e : Session::engines()) CHECK(contains(out, e));

  CHECK(r.ok(":engine ast") == "");
  CHECK(r.session.engine() == "ast");

  r.feed(":engine nope");
  std::string e = r.take_err();
  CHECK(contains(e, "unknown engine 'nope'"));
  for (const auto& name : Session::engines()) CHECK(contains(e, name));
  CHECK(r.take_out() == "");
  CHECK(r.session.engine() == "ast");
  CHECK(r.ok("1 + 1") == "2\n");
}

TEST_CASE(":time toggles a timing line after each input") {
  R r;
  CHECK(contains(r.ok(":time"), "on"));
  std::string out = r.ok("3 + 4");
  CHECK(out.rfind("7\n", 0) == 0);
  CHECK(contains(out, "compile"));
  CHECK(contains(out, "ms"));
  CHECK(contains(r.ok(":time"), "off"));
  CHECK(r.ok("3 + 4") == "7\n");
}

TEST_CASE(":load runs a file in this session") {
  fe::TempDir dir;
  std::string path = dir.write("lib.ds",
                               "fn fib(n: int) -> int {\n"
                               "  if n < 2 { return n }\n"
                               "  return fib(n - 1) + fib(n - 2)\n"
                               "}\n"
                               "base = 100\n"
                               "print(fib(10))\n"
                               "base + 1\n");
  R r;
  std::string out = r.ok(":load " + path);
  CHECK(contains(out, "55\n"));
  // What the file defined is there afterwards.
  CHECK(r.ok("fib(12) + base") == "244\n");

  // Diagnostics from a loaded file name the file.
  std::string bad = dir.write("bad.ds", "print(1)\nprint(nope)\n");
  r.feed(":load " + bad);
  std::string e = r.take_err();
  CHECK(contains(e, bad + ":2:7: error: undefined variable 'nope'"));
  CHECK(r.take_out() == "");

  std::string rt = dir.write("rt.ds", "print(1)\nprint(1 % 0)\nprint(2)\n");
  r.feed(":load " + rt);
  CHECK(contains(r.take_err(), rt + ":2:9: error: division by zero"));
  CHECK(r.take_out() == "1\n");
  CHECK(r.ok("base") == "100\n");
}

TEST_CASE(":load of a missing file is an error and the REPL goes on") {
  fe::TempDir dir;
  std::string missing = dir.path("no-such-file.ds");
  R r;
  CHECK(r.feed(":load " + missing));
  std::string e = r.take_err();
  CHECK(contains(e, "error"));
  CHECK(contains(e, missing));
  CHECK(r.take_out() == "");
  r.feed(":load");
  CHECK(contains(r.take_err(), "usage"));
  CHECK(r.ok("2 + 2") == "4\n");
}

TEST_CASE("an unknown command is an error") {
  R r;
  CHECK(r.feed(":frobnicate"));
  std::string e = r.take_err();
  CHECK(contains(e, "unknown command"));
  CHECK(contains(e, ":frobnicate"));
  CHECK(r.take_out() == "");
  CHECK(r.ok("1") == "1\n");
}

TEST_CASE(":quit returns false") {
  R r;
  CHECK(r.feed("1") == true);
  CHECK(r.feed(":quit") == false);
  R r2;
  CHECK(r2.feed("  :quit") == false);
}

TEST_CASE("completion: commands after ':', names and keywords otherwise") {
  R r;
  auto t = r.repl.complete(":t");
  CHECK(std::set<std::string>(t.begin(), t.end()) == std::set<std::string>{":target", ":tokens", ":time", ":trace", ":tir",
                                                                  ":trace-schedule", ":traffic", ":tune", ":tuned"});
  auto all = r.repl.complete(":");
  CHECK(all.size() == Repl::commands().size());
  CHECK(r.repl.complete(":zz").empty());

  CHECK_FALSE(has(r.repl.complete("fi"), "fib"));
  CHECK(r.ok("fn fib(n: int) -> int { if n < 2 { return n }; return fib(n - 1) + fib(n - 2) }") == "");
  auto fi = r.repl.complete("fi");
  CHECK(has(fi, "fib("));  // a function completes with its '(' (issue 14 #15)
  for (auto& s : fi) CHECK(s.rfind("fi", 0) == 0);

  CHECK(r.ok("counter = 1") == "");
  CHECK(has(r.repl.complete("cou"), "counter"));
  CHECK(has(r.repl.complete("wh"), "while"));
  CHECK(has(r.repl.complete("sq"), "sqrt("));
  // A failed input adds no names.
  r.feed("zebra = nope");
  r.take_err();
  CHECK_FALSE(has(r.repl.complete("ze"), "zebra"));
}

TEST_CASE("an interrupt stops a running loop and the REPL survives it") {
  // Run in a forked child with an alarm, so that a REPL that ignores the interrupt fails
  // this test instead of hanging the test run. The child reports through a pipe.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(fe::kDeadlineSeconds));
    Session session;
    std::ostringstream out, err;
    Repl repl(session, out, err);
    std::atomic<bool> done{false};
    // Keep raising the flag until the loop has stopped: the session clears it when a run
    // starts, so a single early store could be lost before the loop begins.
    std::thread poker([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        session.interrupt_flag().store(true);
      }
    });
    bool a = repl.feed("n = 0; while true { n += 1 }");
    done.store(true);
    poker.join();
    std::string first_out = out.str(), first_err = err.str();
    out.str("");
    err.str("");
    bool b = repl.feed("print(7)");
    bool c = repl.feed("n > 0");
    std::string report = std::string(a && b && c ? "1" : "0") + "\x1f" + first_out + "\x1f" +
                         first_err + "\x1f" + out.str() + "\x1f" + err.str();
    (void)!write(fds[1], report.data(), report.size());
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    report.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE_MESSAGE(WIFEXITED(status), "the REPL did not stop on interrupt (killed by signal "
                                         << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")");
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : report) {
    if (ch == '\x1f') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  parts.push_back(cur);
  REQUIRE(parts.size() == 5);
  CHECK(parts[0] == "1");                               // feed returned true each time
  CHECK(parts[1] == "");                                // the loop printed nothing
  CHECK(contains(parts[2], "error: interrupted"));      // reported on the error stream
  CHECK(parts[3] == "7\ntrue\n");                       // the flag does not leak; state survives
  CHECK(parts[4] == "");
}

}  // TEST_SUITE
