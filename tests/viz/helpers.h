// What the visualizer tests share: an app on a test program, scripted actions, and
// measures of a rendered picture (how much differs, how much is ink).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "viz/app.h"

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

}  // namespace descent::viz::testing
