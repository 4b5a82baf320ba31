// What the visualizer tests share: an app on a test program, scripted actions, and
// measures of a rendered picture (how much differs, how much is ink).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>

#include "viz/app.h"

#include <imgui_internal.h>

namespace descent::viz::testing {

inline const std::string kDir = DESCENT_SOURCE_DIR "/tests/viz/";

// An off-screen window (options: the theme, the font size) on tests/viz/PROGRAM.
inline std::unique_ptr<App> make_app(const std::string& program, AppOptions o = {}) {
  o.hidden = true;
  std::string err;
  auto app = App::create(o, &err);
  REQUIRE_MESSAGE(app, err);
  REQUIRE_MESSAGE(app->document().load(kDir + program, &err), err);
  app->settle();
  return app;
}

// The fraction of pixels that differ between two images of the same size.
inline double difference(const Image& a, const Image& b) {
  REQUIRE(a.width == b.width);
  REQUIRE(a.height == b.height);
  size_t differ = 0, n = size_t(a.width) * a.height;
  for (size_t i = 0; i < n; ++i)
    differ += a.rgb[3 * i] != b.rgb[3 * i] || a.rgb[3 * i + 1] != b.rgb[3 * i + 1] ||
              a.rgb[3 * i + 2] != b.rgb[3 * i + 2];
  return double(differ) / double(n);
}

// Not blank: how many pixels differ from the most common colour (the background), and how
// many distinct colours there are.
struct Ink {
  double fraction = 0;
  size_t colours = 0;
};
inline Ink ink(const Image& img, int x0 = 0) {
  std::map<uint32_t, size_t> count;
  for (int y = 0; y < img.height; ++y)
    for (int x = x0; x < img.width; ++x) {
      const uint8_t* p = &img.rgb[(size_t(y) * img.width + x) * 3];
      ++count[(uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2]];
    }
  size_t total = 0, most = 0;
  for (auto& [c, k] : count) total += k, most = std::max(most, k);
  return Ink{double(total - most) / double(total), count.size()};
}

// Runs a scripted action and checks it succeeded.
inline void act(App& app, const std::string& command) {
  std::string err;
  INFO("action: " << command);
  REQUIRE_MESSAGE(app.act(command, &err), err);
  app.settle();
}

inline Image show(App& app, const std::string& pane) {
  std::string err;
  REQUIRE_MESSAGE(app.select_pane(pane, &err), err);
  app.settle();
  return app.capture();
}

// The number before `word` in `text`, from `from` on ("31 instructions" -> 31), or -1.
inline long number_before(const std::string& text, const std::string& word, size_t from = 0) {
  size_t at = text.find(" " + word, from);
  if (at == std::string::npos) return -1;
  size_t start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  return start == at ? -1 : std::stol(text.substr(start, at - start));
}

// The child window a pane draws in (App: BeginChild(pane name) inside "##panes"; ImGui 1.86
// names a child "PARENT/NAME_ID"); with `child`, the child window of that name within it
// (at any depth). Null when there is none.
inline ImGuiWindow* pane_window(const std::string& pane, const std::string& child = "") {
  ImGuiWindow* found = nullptr;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    std::string name = w->Name;
    size_t at = name.rfind("/" + pane + "_");
    if (at != std::string::npos && name.find('/', at + 1) == std::string::npos &&
        name.find("/##panes_") != std::string::npos)
      found = w;
  }
  if (!found || child.empty()) return found;
  std::string prefix = std::string(found->Name) + "/";
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    std::string name = w->Name;
    size_t at = name.rfind("/" + child + "_");
    if (name.rfind(prefix, 0) == 0 && at != std::string::npos &&
        name.find('/', at + 1) == std::string::npos)
      return w;
  }
  return nullptr;
}

}  // namespace descent::viz::testing
