// The tuner pane (issue 17): the selected kernel tuned from the window, the three times and
// the candidates drawn, and Apply putting the best schedule under the microscope. Times are
// measured but never compared with a number; the caption says what was tuned and how.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "helpers.h"
#include "viz/app.h"

using namespace descent::viz;
using namespace descent::viz::testing;

TEST_CASE("tuner pane: nothing selected, then a kernel tuned, drawn and applied") {
  auto app = make_app("sample.ds");
  Image empty = show(*app, "tune");
  Pane* tune = app->pane("tune");
  CHECK(tune->caption() == "no kernel selected");
  std::string err;
  CHECK_FALSE(app->act("tune run", &err));
  CHECK(err.find("no kernel selected") == 0);
  CHECK_FALSE(app->act("tune apply", &err));
  CHECK(err == "no finished tuning job with a schedule to apply");
  CHECK_FALSE(app->act("tune run strategy=anneal", &err));
  CHECK(err == "unknown strategy 'anneal'");

  act(*app, "loops kernel matmul n=32 m=32 k=32");
  act(*app, "tune run trials=4 strategy=random");
  Image tuned = show(*app, "tune");
  std::string caption = tune->caption();
  INFO(caption);
  CHECK(caption.rfind("matmul 32x32 32x32 on cpu: as lowered ", 0) == 0);
  CHECK(caption.find("candidates") != std::string::npos);
  // The table, the bars and the curve are drawn: far more ink than the empty pane.
  CHECK(ink(tuned).fraction > ink(empty).fraction);

  // A candidate's loop nest, as clicking its row shows it.
  CHECK_FALSE(app->act("tune show 99", &err));
  CHECK(err.rfind("show takes a candidate's number, 1..", 0) == 0);
  act(*app, "tune show 2");
  show(*app, "tune");
  std::string shown = tune->caption();
  INFO(shown);
  size_t at = shown.find("; candidate 2's loop nest shown (");
  REQUIRE(at != std::string::npos);
  CHECK(std::atoi(shown.c_str() + at + 33) > 5);  // a whole nest, not an error line

  // Apply: the loop-nest pane's kernel now carries the best schedule as its steps.
  act(*app, "tune apply");
  CHECK(!app->document().session().schedule_trace().empty());
}
