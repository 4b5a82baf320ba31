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
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "tune/search.h"

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

// ---- Line and scatter charts (the tuner's plots) -----------------------------------------
// One series of points: joined by lines (a best-so-far curve) or drawn as dots (a scatter).
struct XYSeries {
  std::string name;  // the legend's entry
  std::vector<std::pair<double, double>> points;
  bool line = true;
};
// One chart among several side by side. An axis on a log scale drops points <= 0 on it.
struct XYPanel {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<XYSeries> series;
};
// Draws the panels left to right under one title and subtitle (the machine), each with its
// axes, gridlines with labels, and a legend; a series keeps its colour across panels when it
// has the same name. False with *error for no panels, a panel without any drawable point, or a
// size outside 320 x 240 .. 8192 x 8192.
bool render_panels(const std::string& title, const std::string& subtitle,
                   const std::vector<XYPanel>& panels, int width, int height, Image* out,
                   std::string* error);
// The tuner's two charts (`descent tune --plot`): the best GFLOP/s so far against the candidates measured, one line per search (`label`: its
// strategy, its seed), and the cost model's score against the measured GFLOP/s of every
// candidate it scored before it ran (a good model's dots rise to the right). The second chart
// is left out when no search used a model.
// The best-so-far chart also draws the nest as lowered and the default schedule as flat
// reference lines where their times are known (> 0), so every search's curve reads against
// the same two marks, whatever its strategy.
struct TunePlotRun {
  std::string label;
  double flops = 0;  // of one run of the kernel: seconds become GFLOP/s
  const tune::SearchResult* result = nullptr;
  double naive_seconds = 0, default_seconds = 0;
};
std::vector<XYPanel> tune_panels(const std::vector<TunePlotRun>& runs);

// ---- Curves from a program's output (`descent run F --plot FILE`) ------------------------
// Each line of `printed` holding one of `words` followed by a number ("epoch 3 loss 0.41")
// adds a point to that word's series: x is the number after "epoch" on the same line when
// there is one, else the point's position (1, 2, ...). A word never followed by a number
// gives no series.
std::vector<XYSeries> series_from_output(const std::string& printed, const std::vector<std::string>& words);
// The chart of those series, titled with the program's name: a log y axis when the values
// span more than a factor of 20 (a loss falling from 2 to 0.04 reads best that way). False
// with *error when no line had a number to plot.
bool output_panel(const std::string& printed, const std::vector<std::string>& words,
                  const std::string& program, XYPanel* out, std::string* error);

// The image as a PNG file; false with *error when it cannot be written.
bool write_png(const Image& image, const std::string& path, std::string* error);
// The same PNG as bytes in memory (a notebook shows them without a file).
bool encode_png(const Image& image, std::string* bytes, std::string* error);

// The bitmap font: the width in pixels of `text` drawn at `scale` (each glyph is 5 x 7
// pixels plus one of spacing, times scale). Characters the font lacks draw as a box.
int text_width(const std::string& text, int scale);

}  // namespace descent::bench
