#include <doctest/doctest.h>

#include "lang/source.h"

using namespace descent;

TEST_CASE("a diagnostic shows file:line:col, the source line and a caret") {
  SourceFile f("prog.ds", "x = 1\nprint(y)\n");
  Diagnostic d{Severity::Error, ErrorKind::Compile, f.loc_at(12), "undefined variable 'y'"};
  CHECK(format_diagnostic(f, d) == "prog.ds:2:7: error: undefined variable 'y'\n  print(y)\n        ^\n");
}

TEST_CASE("columns count characters, not bytes") {
  SourceFile f("u.ds", "print(\"é\", z)\n");
  SourceLoc loc = f.loc_at(static_cast<uint32_t>(f.text().find('z')));
  CHECK(loc.line == 1);
  CHECK(loc.col == 12);
}
