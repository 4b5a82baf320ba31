// The code panes' source-line mapping (issue 14, "Views students expect"): each assembly
// line knows its source line, hovering it highlights that line in the source, and the
// function list still works with the assembler's directives hidden; two targets side by
// side, each tinted; the LLVM IR as generated and as optimised tinted and hover-linked too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>

#include "helpers.h"
#include "pipeline/pipeline.h"
#include "viz/app.h"

namespace {
using namespace descent::viz::testing;

// The source lines that hovering rows 0..rows-1 of a pane's listing (`VERB ROW`) lights up,
// each checked to be a whole line of the source.
std::set<uint32_t> hovered_lines(descent::viz::App& app, const std::string& verb, int rows) {
  descent::viz::Document& doc = app.document();
  const descent::SourceFile* src = doc.session().last_source();
  REQUIRE(src != nullptr);
  std::set<uint32_t> lines;
  for (int row = 0; row < rows; ++row) {
    act(app, verb + " " + std::to_string(row));
    if (!doc.hovered().valid()) continue;
    uint32_t line = src->loc_at(doc.hovered().begin).line;
    CHECK(src->line_text(line) == std::string_view(src->text()).substr(
                                      doc.hovered().begin, doc.hovered().end - doc.hovered().begin));
    lines.insert(line);
  }
  return lines;
}

// Rows of `img` within the window `w` that carry a source tint: a run, at least a third of
// the window wide, of one colour that is not a grey (the listing's background, and the
// hover darkening of it, are greys). Returns how many rows, and the distinct tints.
struct Tints {
  int rows = 0;
  std::set<uint32_t> colours;
};
Tints tinted_rows(const descent::viz::Image& img, const ImGuiWindow* w) {
  Tints t;
  int x0 = std::max(0, int(w->InnerRect.Min.x)), x1 = std::min(img.width, int(w->InnerRect.Max.x));
  int y0 = std::max(0, int(w->InnerRect.Min.y)), y1 = std::min(img.height, int(w->InnerRect.Max.y));
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1;) {
      const uint8_t* p = &img.rgb[(size_t(y) * img.width + x) * 3];
      int end = x;
      while (end < x1 && std::equal(p, p + 3, &img.rgb[(size_t(y) * img.width + end) * 3])) ++end;
      int spread = std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]});
      if (end - x >= (x1 - x0) / 3 && spread >= 8) {
        ++t.rows;
        t.colours.insert((uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2]);
        break;
      }
      x = end;
    }
  }
  return t;
}
}  // namespace

TEST_CASE("machine pane: hovering assembly rows highlights the source lines they came from") {
  auto app = make_app("sample.ds");
  show(*app, "machine");
  act(*app, "machine target x86-64");
  act(*app, "machine view asm");
  act(*app, "machine function fib");  // with directives hidden, found by its label
  std::set<uint32_t> lines = hovered_lines(*app, "machine hover", 200);
  act(*app, "machine hover off");
  // fib is lines 2-5 of sample.ds: its code comes from the if (3) and the return (4).
  CHECK(lines.count(3) == 1);
  CHECK(lines.count(4) == 1);
  for (uint32_t line : lines) CHECK((line >= 2 && line <= 5));
  std::string err;
  CHECK_FALSE(app->act("machine hover x", &err));
  CHECK(err.find("usage: machine hover") != std::string::npos);
}

TEST_CASE("machine pane: two targets side by side, each with its instruction count and tints") {
  auto app = make_app("sample.ds");
  show(*app, "machine");
  act(*app, "machine target x86-64");
  act(*app, "machine view asm");
  act(*app, "machine function fib");
  // What each target alone counts, to compare the columns with.
  long x86 = number_before(app->pane("machine")->caption(), "instructions");
  act(*app, "machine target aarch64");
  long arm = number_before(app->pane("machine")->caption(), "instructions");
  REQUIRE(x86 > 0);
  REQUIRE(arm > 0);
  act(*app, "machine target x86-64");
  act(*app, "machine compare aarch64");
  descent::viz::Image img = show(*app, "machine");
  std::string caption = app->pane("machine")->caption();
  CAPTURE(caption);
  size_t right = caption.find("aarch64");
  REQUIRE(right != std::string::npos);
  CHECK(caption.rfind("x86_64", 0) == 0);
  CHECK(number_before(caption, "instructions") == x86);
  CHECK(number_before(caption, "instructions", right) == arm);
  CHECK(caption.find("(ds.fib)", right) != std::string::npos);
  // Two listings, side by side, both with rows in several source-line tints.
  ImGuiWindow* left = pane_window("machine", "##code");
  ImGuiWindow* second = pane_window("machine", "##code2");
  REQUIRE(left);
  REQUIRE(second);
  CHECK(left->InnerRect.Max.x <= second->InnerRect.Min.x);
  CHECK(std::abs(left->InnerRect.GetWidth() - second->InnerRect.GetWidth()) <= 1);
  Tints lt = tinted_rows(img, left), rt = tinted_rows(img, second);
  CHECK(lt.rows >= 3 * 14);  // three instructions' rows at least, 14 pixels a row or more
  CHECK(rt.rows >= 3 * 14);
  CHECK(lt.colours.size() >= 2);
  CHECK(rt.colours.size() >= 2);
  // The second column's rows map to fib's source lines as the first's do.
  std::set<uint32_t> lines;
  for (int row = 0; row < 60; ++row) {
    act(*app, "machine hover " + std::to_string(row) + " right");
    if (app->document().hovered().valid())
      lines.insert(app->document().session().last_source()->loc_at(app->document().hovered().begin).line);
  }
  CHECK(lines.count(3) == 1);
  CHECK(lines.count(4) == 1);
  for (uint32_t line : lines) CHECK((line >= 2 && line <= 5));
  // Off again: one listing.
  act(*app, "machine compare off");
  show(*app, "machine");
  CHECK(app->pane("machine")->caption().find("aarch64") == std::string::npos);
  std::string err;
  CHECK_FALSE(app->act("machine compare nosuch-cpu", &err));
  CHECK_FALSE(app->act("machine hover 3 right", &err));
  CHECK(err.find("compare") != std::string::npos);
}

TEST_CASE("machine pane: two targets side by side fit the pane at font sizes 16, 22 and 26") {
  for (float size : {16.f, 22.f, 26.f}) {
    CAPTURE(size);
    descent::viz::AppOptions o;
    o.font_size = size;
    auto app = make_app("sample.ds", o);
    show(*app, "machine");
    act(*app, "machine target x86-64");
    act(*app, "machine view asm");
    act(*app, "machine compare aarch64");
    app->settle(2);
    ImGuiWindow* w = pane_window("machine");
    REQUIRE(w);
    float width = w->ContentRegionRect.GetWidth();
    CAPTURE(width);
    CAPTURE(w->ContentSizeIdeal.x);
    CHECK(w->ContentSizeIdeal.x <= width + 1);
    // Both columns inside the pane, each given a fair share of it.
    for (const char* child : {"##left", "##right"}) {
      ImGuiWindow* c = pane_window("machine", child);
      REQUIRE(c);
      CHECK(c->Rect().Min.x >= w->InnerRect.Min.x - 1);
      CHECK(c->Rect().Max.x <= w->InnerRect.Max.x + 1);
      CHECK(c->Rect().GetWidth() >= width / 2 - 20);
      CHECK(c->ContentSizeIdeal.x <= c->ContentRegionRect.GetWidth() + 1);  // the headers wrap
    }
  }
}

TEST_CASE("LLVM pane: the IR as generated and as optimised is tinted and hover-linked, pass snapshots not") {
  auto app = make_app("sample.ds");
  descent::viz::Image img = show(*app, "llvm");  // entry 0: the IR as generated
  ImGuiWindow* ir = pane_window("llvm", "##ir");
  REQUIRE(ir);
  Tints generated = tinted_rows(img, ir);
  CHECK(generated.rows >= 3 * 14);
  CHECK(generated.colours.size() >= 2);
  // fib (lines 2-5 of sample.ds) is defined first: its IR's rows light up its lines.
  std::set<uint32_t> lines = hovered_lines(*app, "llvm hover", 60);
  CHECK(lines.count(3) == 1);
  CHECK(lines.count(4) == 1);
  act(*app, "llvm hover off");
  // The last entry is the optimised IR (llvm-opt), with source lines too.
  act(*app, "llvm pass optimised");
  CHECK(app->pane("llvm")->caption().find("lines as optimised") != std::string::npos);
  CHECK(hovered_lines(*app, "llvm hover", 60).count(4) == 1);
  act(*app, "llvm hover off");
  // A pass snapshot has none: no tinted rows, hovering links nothing.
  act(*app, "llvm pass 1");
  img = show(*app, "llvm");
  ir = pane_window("llvm", "##ir");
  REQUIRE(ir);
  CHECK(tinted_rows(img, ir).rows == 0);
  CHECK(hovered_lines(*app, "llvm hover", 60).empty());
  std::string err;
  CHECK_FALSE(app->act("llvm hover x", &err));
  CHECK(err.find("usage: llvm hover") != std::string::npos);
}
