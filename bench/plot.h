// A bar chart of benchmark records, as a PNG a teacher can put on a slide:
//
//   descent bench --suite tensor --plot bench.png
//
// One group of bars per workload, one bar per column (engine) in a fixed colour, a legend,
// labelled axes and a title naming the machine. Rates spread over five orders of magnitude
// (a naive loop nest at 0.5 GFLOP/s next to a tuned one at 500), so the value axis is
// logarithmic, with a gridline per decade; each bar carries its value.
//
// Everything is drawn here, into an RGB buffer: rectangles, lines and text in a small bitmap
// font (bench/plot.cpp), then written with stb_image_write. No plotting library, no fonts on
// the system: the same bytes on every machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.h"

namespace descent::bench {

struct PlotOptions {
  // "gflops" (GFLOP/s, higher is better) or "time" (median seconds, lower is better).
  std::string metric = "gflops";
  std::string title;    // empty: "Descent tensor benchmarks" + the scale
  std::string machine;  // the subtitle; empty: host_description()
  int width = 1600, height = 900;
};

// An RGB image, row-major, 3 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  // {r, g, b} of pixel (x, y); {0, 0, 0} outside the image.
  std::vector<uint8_t> pixel(int x, int y) const;
};

// Draws the chart. Which records make bars: those of the tensor suite (or, when there are
// none, every record) that ran and passed their check; per (workload, engine) the record at
// the highest thread count. False with *error when no record qualifies, for an unknown
// metric, or for a size below 320 x 240 or above 8192 x 8192.
bool render_plot(const std::vector<BenchRecord>& records, const PlotOptions& options,
                 Image* out, std::string* error);

// render_plot, then the PNG file at `path`. False with *error (nothing or a partial file
// written) when rendering fails or the file cannot be written.
bool write_plot(const std::vector<BenchRecord>& records, const std::string& path,
                const PlotOptions& options, std::string* error);

// The bitmap font: the width in pixels of `text` drawn at `scale` (each glyph is 5 x 7
// pixels plus one of spacing, times scale). Characters the font lacks draw as a box.
int text_width(const std::string& text, int scale);

}  // namespace descent::bench
