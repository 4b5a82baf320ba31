// The native pane: the native backend's DAG stages drawn (clusters per block, value and chain
// edges, isel's pattern colours and legend), its later stages as text, the function selector,
// and no crash on input with errors, no input, tensor code or a huge body. The pane's caption
// says what it drew; the test checks it against Session::native_graphs(), the pane's source.
#include <doctest/doctest.h>

#include <string>

#include "helpers.h"
#include "viz/app.h"

using namespace descent::viz;
using namespace descent::viz::testing;

namespace {

const char* kFib =
    "fn fib(n: int) -> int {\n"
    "  if n < 2 { return n }\n"
    "  return fib(n - 1) + fib(n - 2)\n"
    "}\n"
    "print(fib(20))\n";

const char* kStages[] = {"dag", "legal", "combine", "isel", "sched", "regalloc", "asm"};

std::unique_ptr<App> fib_app() {
  auto app = make_app("sample.ds");
  app->document().set_text(kFib, false);
  app->settle();
  show(*app, "native");
  return app;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The body `name` ("fn fib", "<top>") of a DAG stage, as the Session gives it.
descent::native::BodyGraph body(App& app, const char* stage, const std::string& name) {
  for (auto& g : app.document().session().native_graphs(stage))
    if (g.name == name) return g;
  FAIL("no body " << name << " at " << stage);
  return {};
}

}  // namespace

TEST_CASE("native pane: fib in every stage, drawn or as text") {
  auto app = fib_app();
  Pane* pane = app->pane("native");
  REQUIRE(pane);
  std::map<std::string, Image> shots;
  for (const char* stage : kStages) {
    CAPTURE(stage);
    act(*app, std::string("native stage ") + stage);
    act(*app, "native function fib");
    shots[stage] = app->capture();
    std::string caption = pane->caption();
    CAPTURE(caption);
    CHECK(caption.rfind(std::string(stage) + ": fn fib, ", 0) == 0);
    Ink k = ink(shots[stage], 500);
    CHECK(k.fraction > 0.02);
    CHECK(k.colours > 8);
    bool graph = std::string(stage) == "dag" || std::string(stage) == "legal" ||
                 std::string(stage) == "combine" || std::string(stage) == "isel";
    if (graph) {
      auto g = body(*app, stage, "fn fib");
      size_t chain = 0;
      for (const auto& e : g.edges) chain += e.chain;
      CHECK(chain > 0);  // calls and returns are ordered by the chain
      CHECK(number_before(caption, "blocks") == long(g.blocks.size()));
      CHECK(number_before(caption, "nodes") == long(g.nodes.size()));
      CHECK(number_before(caption, "value and") == long(g.edges.size() - chain));
      CHECK(number_before(caption, "chain edges") == long(chain));
      CHECK(pane_window("native", "##dag"));
    } else {
      // The text is the Session's own, fib's section of it.
      std::string text = app->document().session().stage(std::string("native-") + stage).text;
      CHECK(has(text, "; fn fib"));
      long lines = number_before(caption, "lines");
      CHECK(lines > 3);
      CHECK(pane_window("native", "##text"));
    }
  }
  // Each stage is a picture of its own (isel's colours, legal's and combine's are the same
  // DAG as dag's for fib, so only the drawn against the text stages and isel are compared).
  CHECK(difference(shots["dag"], shots["isel"]) > 0.01);
  CHECK(difference(shots["isel"], shots["sched"]) > 0.01);
  CHECK(difference(shots["sched"], shots["asm"]) > 0.01);
  CHECK(difference(shots["regalloc"], shots["asm"]) > 0.01);

  // The top level: another body, another picture.
  act(*app, "native stage dag");
  act(*app, "native function <top>");
  CHECK(pane->caption().rfind("dag: <top>, ", 0) == 0);
  CHECK(difference(shots["dag"], app->capture()) > 0.01);
  act(*app, "native function 1");
  CHECK(pane->caption().rfind("dag: fn fib, ", 0) == 0);
  act(*app, "native stage asm");
  act(*app, "native function <top>");
  CHECK(pane->caption().rfind("asm: <top>, ", 0) == 0);

  std::string err;
  for (const char* bad : {"native stage nosuch", "native stage", "native function nosuch",
                          "native hover b0", "native hover b99 n0", "native hover x y", "native fly"}) {
    CAPTURE(bad);
    err.clear();
    CHECK_FALSE(app->act(bad, &err));
    CHECK(!err.empty());
  }
  err.clear();
  CHECK_FALSE(app->act("native hover b0 n0", &err));  // asm is text: nothing to hover
  CHECK(has(err, "text"));
  app->settle();
}

TEST_CASE("native pane: isel colours nodes by pattern, with a legend; hovering a node names it") {
  auto app = fib_app();
  Pane* pane = app->pane("native");
  act(*app, "native function fib");
  act(*app, "native stage isel");
  Image isel = app->capture();
  auto g = body(*app, "isel", "fn fib");
  size_t covered = 0;
  for (const auto& n : g.nodes) covered += n.pattern >= 0 && !n.pattern_name.empty();
  CHECK(covered > 5);
  // The legend lists the patterns used, as the caption does.
  std::string caption = pane->caption();
  CAPTURE(caption);
  CHECK(has(caption, "patterns: "));
  CHECK(has(caption, "JCC_4"));
  CHECK(has(caption, "CMP64ri32"));
  for (const auto& n : g.nodes)
    if (n.pattern >= 0) CHECK(has(caption, n.pattern_name));

  // Hover the compare: its text and its pattern, from the Session's graph.
  const descent::native::GraphNode* cmp = nullptr;
  for (const auto& n : g.nodes)
    if (n.pattern_name == "CMP64ri32") cmp = &n;
  REQUIRE(cmp);
  act(*app, "native hover b" + std::to_string(cmp->block) + " n" + std::to_string(cmp->id));
  CHECK(has(pane->caption(), "hover b" + std::to_string(cmp->block) + " " + cmp->label + " [CMP64ri32]"));
  CHECK(difference(isel, app->capture()) > 0.0005);  // the tooltip, the lit node
  act(*app, "native hover off");
  CHECK(!has(pane->caption(), "hover "));

  // The DAG stages before isel have no patterns: the caption lists none.
  act(*app, "native stage dag");
  CHECK(!has(pane->caption(), "patterns"));
}

TEST_CASE("native pane: no input, errors, tensor code, a huge body") {
  AppOptions o;
  o.hidden = true;
  std::string err;
  auto app = App::create(o, &err);
  REQUIRE_MESSAGE(app, err);
  app->settle();
  show(*app, "native");
  Pane* pane = app->pane("native");
  CHECK(pane->caption() == "nothing compiled yet");
  CHECK_FALSE(app->act("native function fib", &err));
  act(*app, "native stage sched");  // the stage can be chosen still

  auto edit = [&](const std::string& text) {
    app->document().set_text(text, false);
    app->settle();
  };
  edit("fn f(a: int) -> int {\n  return a +\n}\n");
  CHECK(has(pane->caption(), "the input has errors"));
  CHECK(ink(app->capture(), 500).fraction > 0.005);  // it says so
  err.clear();
  CHECK_FALSE(app->act("native hover b0 n0", &err));
  CHECK(has(err, "errors"));
  edit("print(undefined_name)\n");  // parses, does not check
  CHECK(has(pane->caption(), "the input has errors"));

  // An empty program: the top level, with nothing but its end.
  edit("");
  for (const char* stage : kStages) {
    act(*app, std::string("native stage ") + stage);
    CHECK(pane->caption().rfind(std::string(stage) + ": <top>", 0) == 0);
  }

  // Tensor code: the backend does not run it, and says so instead of drawing.
  edit("x = rand([4, 4], 1)\nprint(sum_all(x))\n");
  act(*app, "native stage isel");
  CAPTURE(pane->caption());
  CHECK(!pane->caption().empty());

  // A function too long to draw whole: the first nodes are drawn, the rest counted.
  std::string longer = "fn big(x: int) -> int {\n";
  for (int i = 0; i < 500; ++i) longer += "  x = x * 3 + " + std::to_string(i) + "\n";
  longer += "  return x\n}\nprint(big(1))\n";
  edit(longer);
  act(*app, "native stage dag");
  act(*app, "native function big");
  CAPTURE(pane->caption());
  CHECK(has(pane->caption(), "drawn: the first 1500 nodes"));
  CHECK(number_before(pane->caption(), "not drawn)") > 0);
  CHECK(ink(app->capture(), 500).fraction > 0.02);

  // A body so long that the backend would freeze the window for seconds: compiled on request.
  std::string huge = "x = 0\n";
  for (int i = 0; i < 1700; ++i) huge += "x = (x * 3 + " + std::to_string(i) + ") % 1000\n";
  edit(huge);
  CAPTURE(pane->caption());
  CHECK(pane->caption().rfind("not compiled yet: ", 0) == 0);
  err.clear();
  CHECK_FALSE(app->act("native function <top>", &err));
  CHECK(has(err, "native compute"));
  // Asked, it compiles (the window waits about a second) and draws the first nodes.
  act(*app, "native compute");
  CHECK(pane->caption().rfind("dag: <top>, ", 0) == 0);
  CHECK(has(pane->caption(), "drawn: the first 1500 nodes"));
}

TEST_CASE("native pane: the second target, AArch64, chosen by a control or a script") {
  auto app = fib_app();
  Pane* pane = app->pane("native");
  act(*app, "native function fib");
  act(*app, "native stage isel");
  Image x86 = app->capture();
  CHECK(!has(pane->caption(), "aarch64"));
  act(*app, "native target aarch64");
  Image a64 = app->capture();
  std::string caption = pane->caption();
  CAPTURE(caption);
  CHECK(caption.rfind("isel: fn fib, ", 0) == 0);
  CHECK(has(caption, ", on aarch64"));
  CHECK(difference(x86, a64) > 0.01);  // other patterns, other colours and legend
  // The text stages too: AAPCS64's registers.
  act(*app, "native stage regalloc");
  app->capture();
  CHECK(has(pane->caption(), "regalloc: fn fib, "));
  CHECK(has(pane->caption(), ", on aarch64"));
  act(*app, "native stage asm");
  app->capture();
  act(*app, "native target x86-64");
  app->capture();
  CHECK(!has(pane->caption(), "aarch64"));
  std::string err;
  CHECK_FALSE(app->act("native target mips", &err));
  CHECK(has(err, "usage: native target"));
  // The Session's own default was left alone.
  CHECK(has(app->document().session().stage("native-isel").text, "JMP_4"));

  // The text stages of both targets side by side.
  act(*app, "native stage regalloc");
  Image alone = app->capture();
  act(*app, "native compare on");
  Image both = app->capture();
  caption = pane->caption();
  CHECK(caption.rfind("regalloc: fn fib, ", 0) == 0);
  CHECK(has(caption, "; beside it: aarch64, "));
  CHECK(number_before(caption.substr(caption.find("beside it")), "lines") > 3);
  CHECK(difference(alone, both) > 0.01);
  act(*app, "native target aarch64");
  app->capture();
  CHECK(has(pane->caption(), "; beside it: x86-64, "));
  act(*app, "native compare off");
  app->capture();
  CHECK(!has(pane->caption(), "beside it"));
  err.clear();
  CHECK_FALSE(app->act("native compare maybe", &err));
  CHECK(has(err, "usage: native compare"));
}
