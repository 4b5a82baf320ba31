// The runtime-error catalogue (lang/runtime_errors.h): one entry per kind, in enum order,
// each the words docs/language.md gives, and every engine reporting exactly those words
// (tests/errors/ checks the locations; here, that nobody spells a message their own way).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lang/runtime_errors.h"
#include "pipeline/pipeline.h"

using namespace descent;

TEST_CASE("the runtime-error catalogue: one entry per kind, in order, as docs/language.md says") {
  std::ifstream in(std::string(DESCENT_TESTS_DIR) + "/../docs/language.md");
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  size_t run_time = doc.find("## Run time");
  REQUIRE(run_time != std::string::npos);
  std::string section = doc.substr(run_time, doc.find("\n## ", run_time + 1) - run_time);
  int i = 0;
  for (const RuntimeErrorInfo& e : kRuntimeErrors) {
    CAPTURE(e.message);
    CHECK(static_cast<int>(e.kind) == i++);
    CHECK(section.find(std::string("`") + e.message) != std::string::npos);
  }
  CHECK(runtime_error_text(RuntimeError::UndefinedVariable, "g") == "undefined variable 'g'");
  CHECK(runtime_error_text(RuntimeError::DivisionByZero) == "division by zero");
}

TEST_CASE("every engine reports each runtime error in the catalogue's words") {
  struct Case {
    RuntimeError kind;
    const char* program;
  };
  const Case cases[] = {
      {RuntimeError::DivisionByZero, "z = 0\nprint(1 / z)\n"},
      {RuntimeError::InvalidConversion, "f = 0.0\nprint(int(f / f))\n"},
      {RuntimeError::StackOverflow, "fn r(n: int) -> int { return r(n + 1) }\nprint(r(0))\n"},
      {RuntimeError::UndefinedVariable, "fn f() -> int { return late }\nprint(f())\nlate = 1\n"},
      {RuntimeError::Interrupted, "i = 0\nwhile true { i += 1 }\n"},  // under a step limit
  };
  for (const std::string& engine : Session::engines()) {
    for (const Case& c : cases) {
      CAPTURE(engine);
      CAPTURE(c.program);
      Session s;
      REQUIRE(s.set_engine(engine));
      RunOptions opts;
      opts.out = [](std::string_view) {};
      opts.step_limit = 100000;
      Outcome o = s.submit(c.program, "t.ds", opts);
      REQUIRE(o.status == Outcome::RuntimeError);
      REQUIRE(!o.diagnostics.empty());
      CHECK(o.diagnostics[0].message == runtime_error_text(c.kind, "late"));
    }
  }
}
