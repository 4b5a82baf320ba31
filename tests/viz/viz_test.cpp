// The visualizer, rendered for real under a virtual X server (Xvfb, started here when
// $DISPLAY does not answer): every pane draws something, each pane's picture differs from
// the others, and each scripted interaction (a split, a VM step, an edit) changes the
// picture. Without any X server the whole executable exits 77, which CTest reports as
// skipped - never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <stb/stb_image.h>

#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "viz/app.h"
#include "viz/headless.h"
#include "viz/widgets.h"
#include "helpers.h"

using namespace descent::viz;
using namespace descent::viz::testing;

namespace {

// Which program each pane is shown on: the tensor panes need tensor code, and the VM panes
// cannot step tensor code (it runs on the AST walker).
const char* program_for(const std::string& pane) {
  return pane == "graph" ? "tensor_sample.ds" : "sample.ds";
}

}  // namespace

TEST_CASE("every pane renders something, and no two panes look alike") {
  std::vector<std::string> names;
  std::map<std::string, Image> shots;
  {
    auto probe = make_app("sample.ds");
    for (const auto& p : probe->panes()) names.push_back(p->name());
  }
  REQUIRE(names.size() == 14);
  std::map<std::string, std::unique_ptr<App>> apps;
  for (const auto& name : names) {
    auto& app = apps[program_for(name)];
    if (!app) app = make_app(program_for(name));
    shots[name] = show(*app, name);
    Ink k = ink(shots[name], 500);  // the pane's side of the window (past the editor)
    INFO("pane " << name << ": " << k.fraction * 100 << "% ink, " << k.colours << " colours");
    CHECK(k.fraction > 0.01);
    CHECK(k.colours > 8);
  }
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = i + 1; j < names.size(); ++j) {
      double d = difference(shots[names[i]], shots[names[j]]);
      INFO(names[i] << " vs " << names[j] << ": " << d * 100 << "% of pixels differ");
      CHECK(d > 0.01);
    }
}

TEST_CASE("the same state renders the same picture") {
  // The premise of the interaction tests below: without an action, nothing changes.
  auto app = make_app("sample.ds");
  Image a = show(*app, "stack");
  app->settle();
  Image b = app->capture();
  CHECK(difference(a, b) == 0);
}

// Each scripted interaction must change what is drawn.
struct Interaction {
  const char* pane;
  const char* program;
  std::vector<std::string> setup;   // actions before the first picture
  std::vector<std::string> change;  // the interaction under test
};

TEST_CASE("scripted interactions change the picture") {
  std::vector<Interaction> cases = {
      {"stack", "sample.ds", {}, {"stack step 5"}},
      {"stack", "sample.ds", {"stack step 5"}, {"stack back 2"}},
      {"reg", "sample.ds", {}, {"reg step 7"}},
      {"reg", "sample.ds", {}, {"reg registers 3"}},
      {"loops", "sample.ds", {"loops kernel matmul m=64 n=64 k=64"}, {"loops sched split i 16"}},
      {"loops", "sample.ds", {"loops kernel matmul m=64 n=64 k=64"}, {"loops sched parallel i"}},
      {"ast", "sample.ds", {}, {"ast view graph"}},
      {"ast", "sample.ds", {}, {"ast select 3"}},
      {"tokens", "sample.ds", {}, {"tokens select 4"}},
      {"llvm", "sample.ds", {}, {"llvm next-changed"}},
      {"machine", "sample.ds", {}, {"machine target aarch64"}},
      {"machine", "sample.ds", {}, {"machine view asm"}},
      {"graph", "tensor_sample.ds", {}, {"graph pass fuse_elementwise"}},
      {"source", "sample.ds", {}, {"source set \"x = 1 +\n\""}},
  };
  for (const auto& c : cases) {
    std::string label = std::string(c.pane) + ": " + c.change[0];
    CAPTURE(label);
    auto app = make_app(c.program);
    std::string err;
    REQUIRE(app->select_pane(c.pane, &err));
    for (const auto& a : c.setup) act(*app, a);
    Image before = show(*app, c.pane);
    for (const auto& a : c.change) act(*app, a);
    Image after = app->capture();
    double d = difference(before, after);
    INFO(d * 100 << "% of pixels differ");
    CHECK(d > 0.001);
  }
}

TEST_CASE("an illegal schedule step leaves the nest as it was and says why") {
  auto app = make_app("sample.ds");
  act(*app, "loops kernel matmul m=64 n=64 k=64");
  show(*app, "loops");
  auto nest = [&] { return app->document().session().kernel_view("tir").text; };
  std::string original = nest();
  REQUIRE(original.find("for") != std::string::npos);
  std::string err;
  CHECK_FALSE(app->act("loops sched split nosuchloop 4", &err));
  CHECK(err.find("nosuchloop") != std::string::npos);
  CHECK(nest() == original);
  // A reduction loop cannot be vectorized: refused with the primitive's reason.
  err.clear();
  CHECK_FALSE(app->act("loops sched vectorize r", &err));
  CHECK(err.find("reduction") != std::string::npos);
  CHECK(nest() == original);
  Image before = show(*app, "loops");
  act(*app, "loops sched split i 16");
  CHECK(nest() != original);
  act(*app, "loops undo");
  CHECK(nest() == original);
  act(*app, "loops redo");
  CHECK(nest() != original);
  CHECK(difference(before, app->capture()) > 0.001);
}

TEST_CASE("the loop-nest pane runs on every registered device, and names them when refused") {
  auto app = make_app("sample.ds");
  act(*app, "loops kernel matmul m=16 n=16 k=16");
  std::string err;
  CHECK_FALSE(app->act("loops run tpu", &err));
  CHECK(err.find("usage: run [ref|cpu|opencl") != std::string::npos);
  for (const auto& device : descent::Session::devices()) {
    CAPTURE(device);
    std::string why;
    if (!descent::tensor::find_backend(device)->open(&why)) continue;  // no OpenCL here
    err.clear();
    CHECK_MESSAGE(app->act("loops run " + device, &err), err);
  }
}

TEST_CASE("opening a .sched file applies it in the loop-nest pane, or refuses it and says why") {
  // Issue 32: a schedule file was parsed as a program (a screen of red errors).
  auto app = make_app("sample.ds");
  std::string program = app->document().text();
  std::string err;
  REQUIRE_MESSAGE(app->act("open " + std::string(DESCENT_SOURCE_DIR) + "/bench/schedules/matmul.sched", &err), err);
  CHECK(app->selected_pane() == "loops");
  CHECK(app->document().text() == program);  // the program is still the document
  std::string nest = app->document().session().kernel_view("tir").text;
  CHECK(nest.find("j_0") != std::string::npos);  // matmul.sched tiles i and j first
  CHECK(app->document().kernel().name == "matmul");
  // A schedule for a kernel nothing defines, and one with a step that does not apply: each
  // refused with the file (and line), the document left alone.
  std::string dir = std::filesystem::temp_directory_path() / ("descent-viz-sched-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/nosuch.sched") << "split i 4\n"; }
  { std::ofstream(dir + "/relu.sched") << "# a comment\n\nsplit nosuchloop 4\n"; }
  err.clear();
  CHECK_FALSE(app->act("open " + dir + "/nosuch.sched", &err));
  CHECK_MESSAGE(err.find("nosuch.sched is a schedule, not a program, and its kernel 'nosuch'") != std::string::npos, err);
  err.clear();
  CHECK_FALSE(app->act("open " + dir + "/relu.sched", &err));
  CHECK_MESSAGE(err.find("relu.sched:3: ") != std::string::npos, err);
  CHECK_MESSAGE(err.find("nosuchloop") != std::string::npos, err);
  CHECK(app->document().text() == program);
  std::filesystem::remove_all(dir);
  app->settle();
}

TEST_CASE("unknown panes, verbs and arguments are errors, not crashes") {
  auto app = make_app("sample.ds");
  std::string err;
  CHECK_FALSE(app->select_pane("nosuch", &err));
  CHECK(err.find("no pane 'nosuch'") != std::string::npos);
  for (const char* bad : {"nosuch verb", "stack", "stack fly", "stack step -1",
                          "loops sched", "machine target nosuch-cpu", "llvm pass 100000",
                          "reg registers 1", "graph pass nosuch", ""}) {
    err.clear();
    CAPTURE(bad);
    CHECK_FALSE(app->act(bad, &err));
    CHECK(!err.empty());
  }
  app->settle();  // still draws
}

TEST_CASE("the benchmark pane runs the classroom suite and draws its chart") {
  auto app = make_app("sample.ds");
  Image before = show(*app, "bench");
  act(*app, "bench run quick vector_add");
  Image after = app->capture();
  CHECK(difference(before, after) > 0.01);
}

TEST_CASE("descent-viz --screenshot writes a PNG of the window, and reports bad input") {
  std::string png = "/tmp/descent_viz_test_" + std::to_string(getpid()) + ".png";
  std::string cmd = std::string(DESCENT_VIZ_BIN) + " " + kDir +
                    "sample.ds --pane stack --do \"stack step 3\" --screenshot " + png;
  REQUIRE(std::system(cmd.c_str()) == 0);
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load(png.c_str(), &w, &h, &n, 3);
  REQUIRE(data);
  CHECK(w == 1280);
  CHECK(h == 800);
  stbi_image_free(data);
  std::remove(png.c_str());

  auto status = [](const std::string& args) {
    std::string c = std::string(DESCENT_VIZ_BIN) + " " + args + " >/dev/null 2>&1";
    int s = std::system(c.c_str());
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  };
  CHECK(status(kDir + "sample.ds --pane nosuch --screenshot " + png) == 1);
  CHECK(status(kDir + "sample.ds --do \"stack fly\" --screenshot " + png) == 1);
  CHECK(status("/nonexistent.ds --screenshot " + png) == 1);
}

TEST_CASE("the document re-runs edits off the UI thread and stops a runaway program") {
  Document doc;
  doc.settings().run_timeout_s = 0.5;
  doc.set_text("x = 0\nwhile true { x += 1 }\n", /*debounce=*/false);
  doc.poll();
  CHECK(doc.busy());  // the window would keep drawing meanwhile
  doc.wait();
  CHECK(doc.outcome().status == descent::Outcome::RuntimeError);
  CHECK(doc.outcome().message.find("interrupted") != std::string::npos);
  uint64_t g = doc.generation();
  doc.set_text("print(6 * 7)\n", false);
  doc.wait();
  CHECK(doc.generation() == g + 1);
  CHECK(doc.output() == "42\n");
  CHECK(doc.outcome().status == descent::Outcome::Ok);
}

TEST_CASE("layered_layout puts every edge downwards and keeps boxes apart") {
  // A diamond with a long edge and a cycle-closing back edge (tolerated, ignored).
  std::vector<ImVec2> sizes(5, ImVec2(40, 20));
  std::vector<std::pair<int, int>> edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 4}, {3, 4}, {4, 0}};
  GraphLayout g = layered_layout(sizes, edges);
  for (auto [a, b] : edges) {
    if (a == 4 && b == 0) continue;
    CHECK(g.layer[b] > g.layer[a]);
    CHECK(g.pos[b].y > g.pos[a].y);
  }
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j) {
      bool apart = g.pos[i].x + sizes[i].x <= g.pos[j].x || g.pos[j].x + sizes[j].x <= g.pos[i].x ||
                   g.pos[i].y + sizes[i].y <= g.pos[j].y || g.pos[j].y + sizes[j].y <= g.pos[i].y;
      CHECK(apart);
    }
}

int main(int argc, char** argv) {
  std::string err;
  auto x = XServer::ensure(&err);
  if (!x) {
    std::fprintf(stderr, "test_viz: SKIPPED, no X server could be started: %s\n", err.c_str());
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
