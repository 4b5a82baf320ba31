// The loop-nest pane's iteration-order picture, read back from the PNG it exports: one
// square of pixels per output element, coloured from the first visit (dark) to the last
// (bright), grey where the step slider has not got to yet.
#include <doctest/doctest.h>

#include <stb/stb_image.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "helpers.h"
#include "viz/app.h"

using namespace descent::viz;
using namespace descent::viz::testing;

namespace {

struct Png {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  // The colour at the centre of cell (r, c) of a grid of `cells` columns.
  const uint8_t* cell(int r, int c, int cells) const {
    int scale = width / cells;
    return &rgb[(size_t(r * scale + scale / 2) * width + c * scale + scale / 2) * 3];
  }
  double luminance(int r, int c, int cells) const {
    const uint8_t* p = cell(r, c, cells);
    return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
  }
  bool grey(int r, int c, int cells) const {
    const uint8_t* p = cell(r, c, cells);
    return p[0] == 226 && p[1] == 226 && p[2] == 226;
  }
};

// Exports the picture with `loops order export` and reads it back.
Png exported(App& app, const std::string& extra = "") {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("descent_order_" + std::to_string(getpid()) + ".png")).string();
  if (!extra.empty()) act(app, extra);
  act(app, "loops order export " + path);
  Png png;
  int channels = 0;
  uint8_t* data = stbi_load(path.c_str(), &png.width, &png.height, &channels, 3);
  REQUIRE_MESSAGE(data, "cannot read " << path);
  png.rgb.assign(data, data + size_t(png.width) * png.height * 3);
  stbi_image_free(data);
  std::filesystem::remove(path);
  return png;
}

}  // namespace

TEST_CASE("iteration order: the naive matmul sweeps rows, the tiled one fills a tile at a time") {
  auto app = make_app("sample.ds");
  act(*app, "loops kernel matmul n=16 m=16 k=4");
  show(*app, "loops");

  Png naive = exported(*app);
  // The grid's own resolution: 16 x 16 cells, each the same whole number of pixels.
  CHECK(naive.width == naive.height);
  CHECK(naive.width % 16 == 0);
  CHECK(naive.width / 16 >= 8);
  // Row-major: along each row left to right, then on to the next row (neighbours may share
  // one of the ramp's 256 colours; 16 visits apart they never do).
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c + 1 < 16; ++c)
      CHECK(naive.luminance(r, c, 16) <= naive.luminance(r, c + 1, 16) + 1.0);
    CHECK(naive.luminance(r, 0, 16) < naive.luminance(r, 15, 16));
    if (r + 1 < 16) {
      CHECK(naive.luminance(r, 15, 16) <= naive.luminance(r + 1, 0, 16) + 1.0);
      CHECK(naive.luminance(r, 0, 16) < naive.luminance(r + 1, 0, 16));
    }
  }

  act(*app, "loops sched tile i j 4 4");
  Png tiled = exported(*app);
  CHECK(tiled.width == naive.width);
  // The first 4 x 4 tile comes first, row by row within it: its cells brighten in that order
  // (the ramp's 256 colours may repeat for neighbours) and are darker than all the others.
  double prev = -1, brightest = 0;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      double l = tiled.luminance(r, c, 16);
      CHECK(l >= prev - 1.0);
      prev = l, brightest = std::max(brightest, l);
    }
  CHECK(tiled.luminance(0, 0, 16) < tiled.luminance(3, 3, 16));
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      if (r >= 4 || c >= 4) CHECK(tiled.luminance(r, c, 16) > brightest);
  // The tile to its right is next: the naive order would have gone on to row 1 instead.
  CHECK(tiled.luminance(0, 4, 16) < tiled.luminance(4, 0, 16));
  // A tile edge is drawn between cells (0, 3) and (0, 4), and none inside a tile.
  int scale = tiled.width / 16;
  auto at = [&](int x, int y) { return &tiled.rgb[(size_t(y) * tiled.width + x) * 3]; };
  CHECK(at(4 * scale - 1, scale / 2)[0] == 20);
  CHECK(at(3 * scale - 1, scale / 2)[0] != 20);

  // Stepped to 16 visits, exactly the first tile is coloured.
  Png first = exported(*app, "loops order step 16");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) CHECK(first.grey(r, c, 16) == (r >= 4 || c >= 4));
  // The naive nest, stepped the same, has coloured the first row.
  act(*app, "loops undo");
  Png row = exported(*app);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) CHECK(row.grey(r, c, 16) == (r != 0));
  CHECK(app->pane("loops")->caption() ==
        "C 16 x 16: 16 of 256 elements visited, 1280 writes in all, no tiles");
}

TEST_CASE("iteration order: bad arguments and a nest too big to walk are errors") {
  auto app = make_app("sample.ds");
  act(*app, "loops kernel matmul n=16 m=16 k=4");
  std::string err;
  CHECK_FALSE(app->act("loops order step many", &err));
  CHECK(err == "order step takes a number of visits >= 0, not 'many'");
  CHECK_FALSE(app->act("loops order sideways", &err));
  CHECK(err == "usage: order [step N|all|by first|by last|export FILE.png]");
  act(*app, "loops kernel matmul n=1024 m=1024 k=1024");
  CHECK_FALSE(app->act("loops order export /tmp/never_written.png", &err));
  CHECK(err.rfind("no iteration order to export: the loop nest of 'matmul' is too big to walk", 0) == 0);
  CHECK_FALSE(std::filesystem::exists("/tmp/never_written.png"));
}
