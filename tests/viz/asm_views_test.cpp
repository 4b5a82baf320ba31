// The machine pane's source-line mapping (issue 14, "Views students expect"): each assembly
// line knows its source line, hovering it highlights that line in the source, and the
// function list still works with the assembler's directives hidden.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "helpers.h"
#include "pipeline/pipeline.h"
#include "viz/app.h"

namespace {
using namespace descent::viz::testing;
}  // namespace

TEST_CASE("machine pane: hovering assembly rows highlights the source lines they came from") {
  auto app = make_app("sample.ds");
  show(*app, "machine");
  act(*app, "machine target x86-64");
  act(*app, "machine view asm");
  act(*app, "machine function fib");  // with directives hidden, found by its label
  descent::viz::Document& doc = app->document();
  const descent::SourceFile* src = doc.session().last_source();
  REQUIRE(src != nullptr);
  std::set<uint32_t> lines;
  for (int row = 0; row < 200; ++row) {
    act(*app, "machine hover " + std::to_string(row));
    if (!doc.hovered().valid()) continue;
    uint32_t line = src->loc_at(doc.hovered().begin).line;
    CHECK(src->line_text(line) == std::string_view(src->text()).substr(
                                      doc.hovered().begin, doc.hovered().end - doc.hovered().begin));
    lines.insert(line);
  }
  act(*app, "machine hover off");
  // fib is lines 2-5 of sample.ds: its code comes from the if (3) and the return (4).
  CHECK(lines.count(3) == 1);
  CHECK(lines.count(4) == 1);
  for (uint32_t line : lines) CHECK((line >= 2 && line <= 5));
  std::string err;
  CHECK_FALSE(app->act("machine hover x", &err));
  CHECK(err.find("usage: machine hover") != std::string::npos);
}
