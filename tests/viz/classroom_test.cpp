// Issue 14's visualizer defects, each as the classroom met it: screenshots that failed one
// run in ten, the dark theme hiding the VM's values, and the smaller pane defects.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "viz/app.h"
#include "viz/widgets.h"

#include <imgui_internal.h>

using namespace descent::viz;
using namespace descent::viz::testing;

namespace {

uint32_t pixel(const Image& img, int x, int y) {
  const uint8_t* p = &img.rgb[(size_t(y) * img.width + x) * 3];
  return (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2];
}
double luminance(uint32_t c) {
  return 0.2126 * ((c >> 16) & 255) + 0.7152 * ((c >> 8) & 255) + 0.0722 * (c & 255);
}

// A cell of a VM pane: a box filled with one colour, found as a horizontal run of that colour
// at least min_w pixels wide, extended downwards while its right edge keeps the colour.
struct Cell {
  int x0, x1, y0, y1;  // [x0, x1) x [y0, y1)
  uint32_t fill;
  bool has_text;       // its lower half (where a register's value is written) holds pixels of
                       // the theme's text colour (not the dim "-" of an empty register)
  double contrast;     // the largest luminance difference of such a pixel from the fill
};
std::vector<Cell> find_cells(const Image& img, int x_from, int min_w, uint32_t text) {
  std::vector<Cell> cells;
  std::map<uint32_t, size_t> count;
  for (int y = 0; y < img.height; ++y)
    for (int x = x_from; x < img.width; ++x) ++count[pixel(img, x, y)];
  uint32_t background = 0;
  size_t most = 0;
  for (auto& [c, k] : count)
    if (k > most) most = k, background = c;
  auto covered = [&](int x, int y) {
    for (auto& c : cells)
      if (x >= c.x0 && x < c.x1 && y >= c.y0 && y < c.y1) return true;
    return false;
  };
  auto near_text = [&](uint32_t p) {
    for (int shift : {0, 8, 16})
      if (std::abs(int((p >> shift) & 255) - int((text >> shift) & 255)) > 12) return false;
    return true;
  };
  for (int y = 0; y < img.height; ++y)
    for (int x = x_from; x < img.width;) {
      uint32_t c = pixel(img, x, y);
      int end = x;
      while (end < img.width && pixel(img, end, y) == c) ++end;
      if (c != background && end - x >= min_w && !covered(x, y)) {
        Cell cell{x, end, y, y, c, false, 0};
        while (cell.y1 < img.height && pixel(img, end - 2, cell.y1) == c) ++cell.y1;
        for (int yy = (cell.y0 + cell.y1) / 2; yy < cell.y1; ++yy)
          for (int xx = cell.x0; xx < cell.x1; ++xx)
            if (uint32_t p = pixel(img, xx, yy); p != c && near_text(p)) {
              cell.has_text = true;
              cell.contrast = std::max(cell.contrast, std::abs(luminance(p) - luminance(c)));
            }
        if (cell.y1 - cell.y0 >= 12) cells.push_back(cell);
      }
      x = end;
    }
  return cells;
}

// A VM pane on sample.ds, 8 steps in: two values on the stack, three registers.
std::unique_ptr<App> stepped_pane(const std::string& pane, const AppOptions& o) {
  auto app = make_app("sample.ds", o);
  show(*app, pane);
  act(*app, pane + " step 8");
  return app;
}

}  // namespace

TEST_CASE("20 headless screenshots in a row, each on its own new Xvfb, all succeed") {
  // Issue 14 #1: the display probe connected and disconnected, Xvfb reset as its last client
  // left, and GLFW connected during the reset about one run in ten. Without $DISPLAY each
  // run starts its own server, which is where the race was.
  std::string png = "/tmp/descent_viz_flake_" + std::to_string(getpid()) + ".png";
  int failures = 0;
  for (int i = 0; i < 20; ++i) {
    std::string cmd = std::string("env -u DISPLAY ") + DESCENT_VIZ_BIN + " " + kDir +
                      "sample.ds --pane tokens --screenshot " + png + " 2>/tmp/descent_viz_flake_" +
                      std::to_string(getpid()) + ".err";
    if (std::system(cmd.c_str()) != 0) ++failures;
  }
  std::remove(png.c_str());
  std::remove(("/tmp/descent_viz_flake_" + std::to_string(getpid()) + ".err").c_str());
  CHECK_MESSAGE(failures == 0, failures << " of 20 failed");
}

TEST_CASE("--dark: the operand-stack and register-file cells show their values") {
  // Issue 14 #2: the cells were filled near-white whatever the theme, and the dark theme's
  // text is white: the values were invisible.
  for (bool dark : {false, true}) {
    for (const char* pane : {"stack", "reg"}) {
      CAPTURE(dark);
      CAPTURE(pane);
      AppOptions o;
      o.dark = dark;
      auto app = stepped_pane(pane, o);
      Image img = app->capture();
      // ImGui's dark theme writes white, its light theme black.
      auto cells = find_cells(img, 500, 60, dark ? 0xffffff : 0x000000);
      int inked = 0;
      for (auto& c : cells) {
        if (!c.has_text) continue;
        ++inked;
        INFO("cell at (" << c.x0 << ", " << c.y0 << ") " << c.x1 - c.x0 << "x" << c.y1 - c.y0
                         << " fill " << std::hex << c.fill << std::dec << ": contrast "
                         << c.contrast);
        CHECK(c.contrast > 100);
      }
      CHECK(inked >= 2);  // the test found the cells it is about
    }
  }
}

TEST_CASE("the loop-nest pane opens on the program's own kernel, not the prelude's matmul") {
  auto app = make_app("kernel_sample.ds");
  show(*app, "loops");
  CHECK(app->document().kernel().name == "twice");
  CHECK(app->document().kernel().selected);
  // A program without kernels of its own still gets the prelude's matmul.
  auto plain = make_app("sample.ds");
  show(*plain, "loops");
  CHECK(plain->document().kernel().name == "matmul");
}


TEST_CASE("the asm header counts the instructions of the function shown, not the module's") {
  auto app = make_app("sample.ds");
  show(*app, "machine");
  act(*app, "machine view asm");
  app->settle();
  long all = number_before(app->pane("machine")->caption(), "instructions");
  act(*app, "machine function fib");
  app->settle();
  std::string fib_caption = app->pane("machine")->caption();
  CAPTURE(fib_caption);
  long fib = number_before(fib_caption, "instructions");
  CHECK(fib_caption.find("(ds.fib)") != std::string::npos);
  CHECK(fib > 0);
  CHECK(fib < all);  // the module has the top-level code too
}

TEST_CASE("the LLVM pane shows the lines a pass deleted, in place, and counts them") {
  // Issue 14: added and changed lines were marked, deleted ones invisible (what SROA removed).
  auto app = make_app("sample.ds");
  show(*app, "llvm");
  Pane* llvm = app->pane("llvm");
  descent::Session& s = app->document().session();
  // Every pass that changed the IR: deleted - added = lines before - lines after, as the
  // longest common subsequence has it; a pass that only deletes shows its deletions.
  int checked = 0, deleting = 0;
  for (const auto& p : s.passes()) {
    if (p.stage != "llvm" || !p.changed) continue;
    auto before = s.pass_snapshot(p.name, false), after = s.pass_snapshot(p.name, true);
    if (!before.ok || !after.ok) continue;
    std::string err;
    if (!app->act("llvm pass " + p.name, &err)) continue;  // a name that runs twice
    app->settle(2);
    std::string caption = llvm->caption();
    CAPTURE(p.name);
    CAPTURE(caption);
    long changed = number_before(caption, "line");
    if (changed < 0) changed = number_before(caption, "lines");
    long deleted = number_before(caption, "deleted");
    REQUIRE(changed >= 0);
    REQUIRE(deleted >= 0);
    long a = long(descent::split_lines(before.text).size());
    long b = long(descent::split_lines(after.text).size());
    CHECK(deleted - changed == a - b);
    deleting += deleted > 0;
    if (++checked == 6) break;
  }
  CHECK(checked > 0);
  CHECK(deleting > 0);  // -O2 on fib deletes (allocas, loads and stores at least)
}

TEST_CASE("the AST graph opens with its root in view, and fit shows the whole tree") {
  // The tour's tree is wide: its root, centred over all of it, is far right of the left edge.
  auto app = make_app("../../examples/tour.ds");
  show(*app, "ast");
  act(*app, "ast view graph");
  app->settle();
  Pane* ast = app->pane("ast");
  std::string opened = ast->caption();
  CAPTURE(opened);
  CHECK(opened.find("root in view") != std::string::npos);
  long total = number_before(opened, "nodes");
  REQUIRE(total > 20);
  long shown_at_100 = std::stol(opened.substr(opened.find("graph: ") + 7));
  CHECK(shown_at_100 < total);  // the tree is wider than the pane: the test needs that
  act(*app, "ast zoom fit");
  app->settle();
  std::string fitted = ast->caption();
  CAPTURE(fitted);
  CHECK(std::stol(fitted.substr(fitted.find("graph: ") + 7)) == total);
  CHECK(fitted.find("zoom 100%") == std::string::npos);
  act(*app, "ast zoom 100");
  app->settle();
  CHECK(ast->caption().find("zoom 100%") != std::string::npos);
  CHECK(ast->caption().find("root in view") != std::string::npos);
  std::string err;
  CHECK_FALSE(app->act("ast zoom huge", &err));
}

TEST_CASE("the status bar counts in the engine's unit and shows the VM debugger's count") {
  // Issue 14: "(N steps)" counted the ast engine's statements while the stack debugger
  // beside it counted instructions: two different numbers for "steps".
  auto app = make_app("sample.ds");
  show(*app, "stack");
  act(*app, "stack step 3");
  app->settle();
  std::string status = app->status_text();
  CAPTURE(status);
  CHECK(status.find(" steps)") == std::string::npos);
  CHECK(status.find("on the ast engine") != std::string::npos);
  CHECK(number_before(status, "statements") == long(app->document().outcome().steps));
  // The debugger's count, in instructions, as the stack pane has it.
  std::string caption = app->pane("stack")->caption();
  REQUIRE(!caption.empty());
  CHECK(status.find(caption) != std::string::npos);
  CHECK(number_before(caption, "instructions") > number_before(status, "statements"));
}

TEST_CASE("at --font-size 22 every pane's tab is in the tab bar, wide enough for its label") {
  // Issue 14: at a projector's font size the tabs ran off the right edge (behind scroll
  // arrows): Loop nest and Benchmarks could not be seen.
  for (float size : {16.f, 22.f}) {
    CAPTURE(size);
    AppOptions o;
    o.font_size = size;
    auto app = make_app("sample.ds", o);
    show(*app, "stack");
    const auto& tabs = app->tab_places();
    REQUIRE(tabs.size() == 13);
    for (const auto& t : tabs) {
      CAPTURE(t.label);
      CHECK(t.x0 >= app->tab_bar_x0() - 1);
      CHECK(t.x1 <= app->tab_bar_x1() + 1);
      CHECK(t.x1 - t.x0 >= t.needed - 1);
    }
  }
}

TEST_CASE("a long graph edge goes around the boxes of the layers it crosses") {
  // Issue 14: in the tensor graph an edge from a node to one two layers down ran straight
  // through the box between them. Here 0 -> 2 skips layer 1, where 1 sits, right on the
  // straight line.
  std::vector<ImVec2> sizes = {ImVec2(60, 20), ImVec2(60, 20), ImVec2(60, 20)};
  std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {0, 2}};
  GraphLayout g = layered_layout(sizes, edges);
  REQUIRE(g.bends.size() == edges.size());
  CHECK(g.bends[2].size() == 2);  // one layer crossed: one vertical run
  for (size_t e = 0; e < edges.size(); ++e) {
    auto [a, b] = edges[e];
    // The path as DrawGraph draws it, sampled: out of a's bottom, through the bends, into b.
    std::vector<ImVec2> pts = {ImVec2(g.pos[a].x + sizes[a].x / 2, g.pos[a].y + sizes[a].y)};
    for (ImVec2 q : g.bends[e]) pts.push_back(q);
    pts.push_back(ImVec2(g.pos[b].x + sizes[b].x / 2, g.pos[b].y));
    for (size_t k = 0; k + 1 < pts.size(); ++k)
      for (int t = 0; t <= 100; ++t) {
        float x = pts[k].x + (pts[k + 1].x - pts[k].x) * t / 100.f;
        float y = pts[k].y + (pts[k + 1].y - pts[k].y) * t / 100.f;
        for (int v = 0; v < 3; ++v) {
          if (v == a || v == b) continue;
          bool inside = x > g.pos[v].x && x < g.pos[v].x + sizes[v].x && y > g.pos[v].y &&
                        y < g.pos[v].y + sizes[v].y;
          CAPTURE(e);
          CAPTURE(v);
          CHECK_FALSE(inside);
        }
      }
  }
}

TEST_CASE("a 100,000-term expression: every pane draws it (no recursion on the window's stack)") {
  // The parser allows expressions 100,000 levels deep; the panes walk them (the AST pane's
  // flattening, the VM listings) on the window's thread, whose stack is an ordinary 8 MB.
  std::string path = (std::filesystem::temp_directory_path() / "descent-viz-deep.ds").string();
  {
    std::ofstream f(path);
    f << "x = 1";
    for (int i = 1; i < 100000; ++i) f << " + 1";
    f << "\nprint(x)\n";
  }
  AppOptions o;
  o.hidden = true;
  std::string err;
  auto app = App::create(o, &err);
  REQUIRE_MESSAGE(app, err);
  REQUIRE_MESSAGE(app->document().load(path, &err), err);
  app->settle();
  CHECK(app->document().session().stage("ast").ok);
  for (const auto& pane : app->panes()) {
    INFO("pane " << pane->name());
    Image img = show(*app, pane->name());
    CHECK(ink(img).fraction > 0.01);
  }
  std::filesystem::remove(path);
}


TEST_CASE("at --font-size 22 the VM panes' toolbars fit the pane: nothing runs past its edge") {
  // Issue 14: at a projector's font size the Register VM's options row ran past the right
  // edge of the window ("running" cut off). ImGui clips what does not fit, but it records
  // how far the items reached: the pane's content must be no wider than the pane.
  for (float size : {16.f, 22.f, 26.f}) {
    for (std::string pane : {"stack", "reg"}) {
      CAPTURE(size);
      CAPTURE(pane);
      AppOptions o;
      o.font_size = size;
      auto app = stepped_pane(pane, o);
      app->settle(2);
      ImGuiWindow* w = pane_window(pane);
      REQUIRE(w);
      float width = w->ContentRegionRect.GetWidth();
      CAPTURE(width);
      CAPTURE(w->ContentSizeIdeal.x);
      CHECK(width > 300);
      CHECK(w->ContentSizeIdeal.x <= width + 1);
    }
  }
}
