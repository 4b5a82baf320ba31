// A runtime error inside a function defined by an earlier REPL input is located in that
// input: its label, line and column, and its source line with the caret (issue 13, defect 3).
// Each engine (ast, stack, reg, jit) through the Session, and the REPL as a user sees it.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "apps/repl.h"
#include "frontend_util.h"
#include "pipeline/pipeline.h"

using descent::Outcome;
using descent::Repl;
using descent::RunOptions;
using descent::Session;
using fe::contains;
using fe::split_lines;

namespace {

// One input; its line 3, column 12 is the '/'.
const std::string kDivide = "fn dz(a: int) -> int {\n  b = 0\n  return a / b\n}\n";
const std::string kDivideLine = "  return a / b";
// A function that never returns: a step limit stops it inside its loop.
const std::string kSpin =
    "fn spin(n: int) -> int {\n  i = 0\n  while i >= 0 {\n    i = i + n\n  }\n  return i\n}\n";

// The caret line under `source_line` that points at 1-based column `col`.
std::string caret_at(uint32_t col) { return "  " + std::string(col - 1, ' ') + "^"; }

// message is "LABEL:L:C: error: MSG\n  SOURCE\n  CARET\n": checks that it names `label`, that
// the source line shown is line L of `text`, and that the caret sits under column C.
void check_located(const std::string& message, const std::string& label, const std::string& text,
                   const std::string& error) {
  INFO("message:\n" << message);
  auto lines = split_lines(message);
  REQUIRE(lines.size() == 3);
  REQUIRE(lines[0].rfind(label + ":", 0) == 0);
  unsigned line = 0, col = 0;
  REQUIRE(std::sscanf(lines[0].c_str() + label.size(), ":%u:%u:", &line, &col) == 2);
  CHECK(contains(lines[0], ": error: " + error));
  auto src = split_lines(text);
  REQUIRE(line >= 1);
  REQUIRE(line <= src.size());
  CHECK(lines[1] == "  " + src[line - 1]);
  CHECK(lines[2] == caret_at(col));
}

// A session on `engine` that has run `inputs` as <repl:1>, <repl:2>, ... (each must succeed).
void run_inputs(Session& s, const std::string& engine, const std::vector<std::string>& inputs) {
  REQUIRE(s.set_engine(engine));
  for (size_t i = 0; i < inputs.size(); ++i)
    REQUIRE(s.submit(inputs[i], "<repl:" + std::to_string(i + 1) + ">", RunOptions{}).status ==
            Outcome::Ok);
}

}  // namespace

TEST_CASE("earlier input: division by zero in an earlier function is located there, every engine") {
  for (const auto& engine : Session::engines()) {
    CAPTURE(engine);
    Session s;
    run_inputs(s, engine, {kDivide, "y = 2\n"});
    RunOptions opts;
    Outcome o = s.submit("dz(4)\n", "<repl:3>", opts);
    REQUIRE(o.status == Outcome::RuntimeError);
    CHECK(o.message == "<repl:1>:3:12: error: division by zero\n" + std::string("  ") +
                           kDivideLine + "\n" + caret_at(12) + "\n");
    // The diagnostic's location knows its file; the current input's errors keep their own.
    REQUIRE(o.diagnostics.size() == 1);
    REQUIRE(o.diagnostics[0].loc.file != nullptr);
    CHECK(o.diagnostics[0].loc.file->name() == "<repl:1>");
    Outcome here = s.submit("z = 0\nprint(1 / z)\n", "<repl:4>", opts);
    REQUIRE(here.status == Outcome::RuntimeError);
    CHECK(here.message == "<repl:4>:2:9: error: division by zero\n  print(1 / z)\n" +
                              caret_at(9) + "\n");
  }
}

TEST_CASE("earlier input: through a function of a later input, the error stays in the first") {
  for (const auto& engine : Session::engines()) {
    CAPTURE(engine);
    Session s;
    // Same line and column in both inputs: the location must still tell them apart.
    run_inputs(s, engine, {kDivide, "fn twice(a: int) -> int {\n  c = 1\n  return a / c + dz(a)\n}\n"});
    RunOptions opts;
    Outcome o = s.submit("print(twice(3))\n", "<repl:3>", opts);
    REQUIRE(o.status == Outcome::RuntimeError);
    CHECK(o.message.rfind("<repl:1>:3:12: error: division by zero\n", 0) == 0);
    check_located(o.message, "<repl:1>", kDivide, "division by zero");
  }
}

TEST_CASE("earlier input: `interrupted` inside an earlier function is located there, every engine") {
  for (const auto& engine : Session::engines()) {
    CAPTURE(engine);
    Session s;
    run_inputs(s, engine, {kSpin, "w = 5\n"});
    RunOptions limited;
    limited.step_limit = 1000;
    Outcome o = s.submit("print(spin(1))\n", "<repl:3>", limited);
    REQUIRE(o.status == Outcome::RuntimeError);
    check_located(o.message, "<repl:1>", kSpin, "interrupted");
    REQUIRE(o.diagnostics.size() == 1);
    CHECK(o.diagnostics[0].loc.line >= 3);  // in the loop, not at the function's header
    CHECK(o.diagnostics[0].loc.line <= 4);
  }
}

TEST_CASE("earlier input: the REPL shows the defining input's label and source line") {
  for (const auto& engine : Session::engines()) {
    CAPTURE(engine);
    fe::ReplHarness r;
    REQUIRE(r.feed(":engine " + engine));
    REQUIRE(r.feed("x = 1"));                                             // <repl:1>
    for (const auto& line : split_lines(kDivide)) REQUIRE(r.feed(line));  // <repl:2>
    REQUIRE(r.feed("v = 3"));                                              // <repl:3>
    r.take_err();
    REQUIRE(r.feed("dz(4)"));                                              // <repl:4>
    std::string e = r.take_err();
    INFO("stderr:\n" << e);
    CHECK(contains(e, "<repl:2>:3:12: error: division by zero\n  " + kDivideLine + "\n" +
                          caret_at(12) + "\n"));
    CHECK_FALSE(contains(e, "<repl:4>"));
  }
}
