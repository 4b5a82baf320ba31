// The analysis pane (issue 18): the facts beside the source, the control-flow graph with each
// block's entry state, the solver-step slider walking Result::trace, the domain switch, and no
// crash on input that does not compile or has no code. The pane's caption says what it drew
// (domain, function, the step and how many blocks it had computed), and the test checks that
// against the Session's own Result rather than against numbers the solver might change.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "helpers.h"
#include "viz/app.h"
#include "viz/panes/analysis_steps.h"

using namespace descent::viz;
using namespace descent::viz::testing;
namespace an = descent::analysis;

namespace {

std::shared_ptr<const an::Result> result(App& app, an::Domain d) {
  auto r = app.document().session().analyze(d);
  REQUIRE(r);
  return r;
}

// The caption's "step K of N: ...; R of B blocks computed so far" parts.
struct StepCaption {
  long step = -1, of = -1, reached = -1;
  std::string rest;
};
StepCaption parse_step(const std::string& caption) {
  StepCaption c;
  size_t at = caption.find("; step ");
  if (at == std::string::npos) return c;
  c.rest = caption.substr(at + 2);
  c.step = std::stol(caption.substr(at + 7));
  c.of = number_before(caption, "solver steps");
  size_t r = caption.rfind("; ");
  c.reached = std::stol(caption.substr(r + 2));
  return c;
}

}  // namespace

TEST_CASE("analysis pane: facts by line, the graph, and the solver steps one by one") {
  auto app = make_app("analysis_sample.ds");
  Image fixpoint = show(*app, "analysis");
  Pane* pane = app->pane("analysis");
  REQUIRE(pane);
  auto r = result(*app, an::Domain::Intervals);
  const size_t steps = r->trace.size();
  REQUIRE(steps > 0);
  REQUIRE(r->cfg.functions.size() == 2);  // the top level and scale
  std::string caption = pane->caption();
  INFO(caption);
  CHECK(caption.rfind("intervals: <script>, " + std::to_string(r->cfg.functions[0].blocks.size()) +
                          " blocks, " + std::to_string(steps) + " solver steps",
                      0) == 0);
  CHECK(caption.find("1 error") != std::string::npos);  // the possible division by zero
  CHECK(caption.find("the fixpoint") != std::string::npos);
  // Drawn: the source with its facts and the graph, each in a child window of its own.
  CHECK(ink(fixpoint, 500).fraction > 0.02);
  CHECK(pane_window("analysis", "##facts"));
  CHECK(pane_window("analysis", "##cfg"));

  // Every step of the trace: the caption names the step's block and phase, and the number
  // of blocks of its function computed so far is the number of distinct blocks the trace has
  // computed up to it (blocks no step has computed yet show no state).
  std::string err;
  long last_reached = 0;
  int last_function = -1;
  for (size_t k = 1; k <= steps; ++k) {
    CAPTURE(k);
    REQUIRE_MESSAGE(app->act("analysis step " + std::to_string(k), &err), err);
    app->frame();
    StepCaption c = parse_step(pane->caption());
    CAPTURE(pane->caption());
    CHECK(c.step == long(k));
    CHECK(c.of == long(steps));
    const an::SolverStep& s = r->trace[k - 1];
    std::string block = "B" + std::to_string(s.block) + " (";
    CHECK(c.rest.find(block) != std::string::npos);
    CHECK(c.rest.find(", " + s.phase + ", ") != std::string::npos);
    std::set<int> seen;
    for (size_t j = 0; j < k; ++j)
      if (r->trace[j].function == s.function) seen.insert(r->trace[j].block);
    CHECK(c.reached == long(seen.size()));
    if (s.function == last_function) CHECK(c.reached >= last_reached);
    last_reached = c.reached;
    last_function = s.function;
    // The pane's rule, checked directly: a computed block shows the latest step at or
    // before k that computed it.
    std::vector<int> latest = latest_steps(*r, s.function, int(k - 1));
    CHECK(latest[size_t(s.block)] == int(k - 1));
  }

  // The slider moves the picture: the first step, then the first iteration of an unrolled
  // loop (the for loop's head, iteration by iteration before any widening), then the first
  // widening of a loop head: the loop to 1000 runs past --unroll's 64 iterations and widens
  // at the program's constants, which the caption lists.
  act(*app, "analysis step first");
  Image first = app->capture();
  CHECK(difference(fixpoint, first) > 0.001);
  act(*app, "analysis step unrolling");
  CHECK(pane->caption().find(", unrolling, iteration 1, ") != std::string::npos);
  CHECK(pane->caption().find("loop head") != std::string::npos);
  act(*app, "analysis step unrolling");
  CHECK(pane->caption().find(", unrolling, iteration 2, ") != std::string::npos);
  act(*app, "analysis step widening");
  CHECK(pane->caption().find(", widening, ") != std::string::npos);
  CHECK(pane->caption().find("loop head") != std::string::npos);
  CHECK(pane->caption().find("thresholds m <= 999") != std::string::npos);
  CHECK(difference(first, app->capture()) > 0.001);
  act(*app, "analysis step next");
  act(*app, "analysis step prev");
  CHECK(pane->caption().find(", widening, ") != std::string::npos);

  // Clicking a box: the next step that computes that block (here the first loop head).
  int head = -1;
  for (const auto& b : r->cfg.functions[0].blocks)
    if (b.loop_head && head < 0) head = b.id;
  REQUIRE(head >= 0);
  act(*app, "analysis fixpoint");
  act(*app, "analysis function <script>");
  act(*app, "analysis step block B" + std::to_string(head));
  CHECK(pane->caption().find(": B" + std::to_string(head) + " (") != std::string::npos);
  CHECK(pane->caption().find("loop head") != std::string::npos);

  // Another function, and back to the fixpoint.
  act(*app, "analysis fixpoint");
  act(*app, "analysis function scale");
  CHECK(pane->caption().rfind("intervals: scale, ", 0) == 0);
  CHECK(pane->caption().find("the fixpoint") != std::string::npos);
  act(*app, "analysis counters on");
  act(*app, "analysis counters off");

  for (const char* bad : {"analysis step 0", "analysis step 100000", "analysis step sideways",
                          "analysis function nosuch", "analysis domain octagons",
                          "analysis counters maybe", "analysis step block 999", "analysis fly"}) {
    CAPTURE(bad);
    err.clear();
    CHECK_FALSE(app->act(bad, &err));
    CHECK(!err.empty());
  }
  app->settle();
}

TEST_CASE("analysis pane: switching domains re-analyses and redraws") {
  auto app = make_app("analysis_sample.ds");
  Image intervals = show(*app, "analysis");
  Pane* pane = app->pane("analysis");
  std::map<std::string, Image> shots;
  for (an::Domain d : an::all_domains()) {
    std::string name = an::domain_name(d);
    CAPTURE(name);
    act(*app, "analysis domain " + name);
    auto r = result(*app, d);
    // The Session's "analysis" stage follows the pane's domain.
    CHECK(app->document().session().analysis_domain() == d);
    CHECK(app->document().session().stage("analysis").text.find("(" + name + ")") != std::string::npos);
    CHECK(pane->caption().rfind(name + ": <script>, ", 0) == 0);
    CHECK(number_before(pane->caption(), "solver steps") == long(r->trace.size()));
    shots[name] = app->capture();
    // Stepping works in every domain.
    act(*app, "analysis step last");
    CHECK(parse_step(pane->caption()).step == long(r->trace.size()));
    act(*app, "analysis step first");  // the source view follows the step: back to the top
    act(*app, "analysis fixpoint");
    act(*app, "analysis function <script>");  // the last step may have been in scale
  }
  // Other facts, another picture: constants know less than intervals, signs other things.
  CHECK(difference(shots["constants"], shots["intervals"]) > 0.001);
  CHECK(difference(shots["signs"], shots["intervals"]) > 0.001);
  CHECK(difference(intervals, shots["intervals"]) == 0);  // back where it started

  // The domain is the pane's: an edit (a fresh Session) keeps it.
  act(*app, "analysis domain signs");
  app->document().set_text(app->document().text() + "m = -3\n", false);
  app->settle();
  CHECK(pane->caption().rfind("signs: <script>, ", 0) == 0);
  CHECK(app->document().session().analysis_domain() == an::Domain::Signs);
}

TEST_CASE("analysis pane: input with errors, an empty program, code that cannot run") {
  auto app = make_app("analysis_sample.ds");
  show(*app, "analysis");
  Pane* pane = app->pane("analysis");
  auto edit = [&](const std::string& text) {
    app->document().set_text(text, false);
    app->settle();
  };

  edit("x = 1 +\n");
  Image broken = app->capture();
  CHECK(pane->caption() == "the input has errors");
  CHECK(ink(broken, 500).fraction > 0.005);  // it says so
  std::string err;
  CHECK_FALSE(app->act("analysis step 1", &err));
  CHECK(err.find("errors") != std::string::npos);
  CHECK_FALSE(app->act("analysis function f", &err));
  act(*app, "analysis domain product");  // the domain can still be chosen
  CHECK(pane->caption() == "the input has errors");
  edit("print(undefined_name)\n");  // parses, does not check
  CHECK(pane->caption() == "the input has errors");

  edit("");
  INFO(pane->caption());
  CHECK(pane->caption().rfind("product: <script>, ", 0) == 0);
  CHECK(pane->caption().find("no alarms") != std::string::npos);
  if (!result(*app, an::Domain::Product)->trace.empty()) {
    act(*app, "analysis step first");
    act(*app, "analysis step last");
  }
  app->act("analysis step widening", &err);  // likely none: an error, not a crash
  app->settle();

  // A function that always divides by zero, and code after its return that never runs.
  edit("fn f(a: int) -> int {\n  return a / 0\n  print(a)\n}\nprint(f(1))\n");
  CHECK(pane->caption().find("1 error") != std::string::npos);
  act(*app, "analysis function f");
  CHECK(pane->caption().rfind("product: f, ", 0) == 0);
  // f never returns, so nothing after its call runs: the solver may have had nothing to
  // change, and then there is nothing to step through.
  if (result(*app, an::Domain::Product)->trace.empty()) {
    CHECK_FALSE(app->act("analysis step last", &err));
    CHECK(err == "the solver took no steps");
  } else {
    act(*app, "analysis step last");
  }
  act(*app, "analysis fixpoint");
  CHECK(ink(app->capture(), 500).fraction > 0.02);

  // A program that loops forever still has facts: the analysis never runs it.
  app->document().settings().run_timeout_s = 0.5;
  edit("x = 0\nwhile true { x = x + 1 }\n");
  CHECK(pane->caption().rfind("product: <script>, ", 0) == 0);
}
