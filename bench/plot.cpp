// The bar chart of bench/plot.h: a tiny raster library (filled rectangles, lines, a bitmap
// font) and the chart layout on top of it.
#include "bench/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

// stb_image_write is a single-header library: the implementation is compiled here, once,
// with its functions static so they cannot clash with another copy (libstb) in the process.
// It is C written for C compilers; its warnings are not ours to fix.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace descent::bench {

namespace {

// ---- The font ---------------------------------------------------------------------------
// 5 x 9 cells: rows 0-6 are the capital height, rows 7-8 hold the descenders of g j p q y.
// Drawn as text so the glyphs can be read (and fixed) in the source.
struct Glyph {
  char c;
  const char* rows[9];
};

// clang-format off
constexpr Glyph kGlyphs[] = {
  {' ', {".....", ".....", ".....", ".....", ".....", ".....", ".....", ".....", "....."}},
  {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###.", ".....", "....."}},
  {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###.", ".....", "....."}},
  {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####", ".....", "....."}},
  {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###.", ".....", "....."}},
  {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#.", ".....", "....."}},
  {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###.", ".....", "....."}},
  {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###.", ".....", "....."}},
  {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#...", ".....", "....."}},
  {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###.", ".....", "....."}},
  {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##..", ".....", "....."}},
  {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#", ".....", "....."}},
  {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####.", ".....", "....."}},
  {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###.", ".....", "....."}},
  {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###..", ".....", "....."}},
  {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####", ".....", "....."}},
  {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#....", ".....", "....."}},
  {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####", ".....", "....."}},
  {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#", ".....", "....."}},
  {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###.", ".....", "....."}},
  {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##..", ".....", "....."}},
  {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#", ".....", "....."}},
  {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####", ".....", "....."}},
  {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#", ".....", "....."}},
  {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#", ".....", "....."}},
  {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###.", ".....", "....."}},
  {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#....", ".....", "....."}},
  {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#", ".....", "....."}},
  {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#", ".....", "....."}},
  {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####.", ".....", "....."}},
  {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#..", ".....", "....."}},
  {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###.", ".....", "....."}},
  {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#..", ".....", "....."}},
  {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#.", ".....", "....."}},
  {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#", ".....", "....."}},
  {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#..", ".....", "....."}},
  {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####", ".....", "....."}},
  {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####", ".....", "....."}},
  {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####.", ".....", "....."}},
  {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###.", ".....", "....."}},
  {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####", ".....", "....."}},
  {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###.", ".....", "....."}},
  {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#...", ".....", "....."}},
  {'g', {".....", ".....", ".####", "#...#", "#...#", "#...#", ".####", "....#", ".###."}},
  {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#", ".....", "....."}},
  {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###.", ".....", "....."}},
  {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
  {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#.", ".....", "....."}},
  {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###.", ".....", "....."}},
  {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#", ".....", "....."}},
  {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#", ".....", "....."}},
  {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###.", ".....", "....."}},
  {'p', {".....", ".....", "####.", "#...#", "#...#", "#...#", "####.", "#....", "#...."}},
  {'q', {".....", ".....", ".####", "#...#", "#...#", "#...#", ".####", "....#", "....#"}},
  {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#....", ".....", "....."}},
  {'s', {".....", ".....", ".####", "#....", ".###.", "....#", "####.", ".....", "....."}},
  {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##.", ".....", "....."}},
  {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#", ".....", "....."}},
  {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#..", ".....", "....."}},
  {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#.", ".....", "....."}},
  {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", ".....", "....."}},
  {'y', {".....", ".....", "#...#", "#...#", "#...#", "#...#", ".####", "....#", ".###."}},
  {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####", ".....", "....."}},
  {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##..", ".....", "....."}},
  {',', {".....", ".....", ".....", ".....", ".....", ".##..", ".##..", "..#..", ".#..."}},
  {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", ".....", ".....", "....."}},
  {';', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "..#..", ".#...", "....."}},
  {'-', {".....", ".....", ".....", "#####", ".....", ".....", ".....", ".....", "....."}},
  {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", ".....", ".....", "....."}},
  {'=', {".....", ".....", "#####", ".....", "#####", ".....", ".....", ".....", "....."}},
  {'_', {".....", ".....", ".....", ".....", ".....", ".....", ".....", "#####", "....."}},
  {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", ".....", ".....", "....."}},
  {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##", ".....", "....."}},
  {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#.", ".....", "....."}},
  {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#...", ".....", "....."}},
  {'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###.", ".....", "....."}},
  {']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###.", ".....", "....."}},
  {'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#.", ".....", "....."}},
  {'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#...", ".....", "....."}},
  {'*', {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", ".....", ".....", "....."}},
  {'#', {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#.", ".....", "....."}},
  {'@', {".###.", "#...#", "#.###", "#.#.#", "#.###", "#....", ".###.", ".....", "....."}},
  {'!', {"..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#..", ".....", "....."}},
  {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#..", ".....", "....."}},
  {'\'', {"..#..", "..#..", ".#...", ".....", ".....", ".....", ".....", ".....", "....."}},
  {'"', {".#.#.", ".#.#.", ".....", ".....", ".....", ".....", ".....", ".....", "....."}},
  {'^', {"..#..", ".#.#.", "#...#", ".....", ".....", ".....", ".....", ".....", "....."}},
  {'~', {".....", ".....", ".#...", "#.#.#", "...#.", ".....", ".....", ".....", "....."}},
  {'|', {"..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "....."}},
};
// What a character the table lacks draws as: a hollow box, visibly "not a letter".
constexpr Glyph kMissing = {'?', {"#####", "#...#", "#...#", "#...#", "#...#", "#...#", "#####", ".....", "....."}};
// clang-format on

constexpr int kGlyphW = 5, kGlyphH = 9, kAdvance = 6;

// A mistyped row (4 or 6 characters) would draw a sheared glyph: refuse to compile instead.
constexpr bool glyphs_well_formed() {
  for (const Glyph& g : kGlyphs)
    for (const char* row : g.rows) {
      int n = 0;
      while (row[n] == '.' || row[n] == '#') ++n;
      if (n != kGlyphW || row[n] != '\0') return false;
    }
  return true;
}
static_assert(glyphs_well_formed(), "every glyph row is 5 characters of '.' and '#'");

const Glyph& glyph(char c) {
  static const std::map<char, const Glyph*> table = [] {
    std::map<char, const Glyph*> t;
    for (const Glyph& g : kGlyphs) t[g.c] = &g;
    return t;
  }();
  auto it = table.find(c);
  return it == table.end() ? kMissing : *it->second;
}

// ---- Drawing ----------------------------------------------------------------------------
struct Rgb {
  uint8_t r, g, b;
};
const Rgb kGrid{215, 215, 215}, kAxis{60, 60, 60},
    kText{30, 30, 30}, kSubtle{100, 100, 100};

struct Canvas {
  Image& img;
  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
    size_t i = (size_t(y) * size_t(img.width) + size_t(x)) * 3;
    img.rgb[i] = c.r;
    img.rgb[i + 1] = c.g;
    img.rgb[i + 2] = c.b;
  }
  void rect(int x0, int y0, int x1, int y1, Rgb c) {  // inclusive-exclusive, any order
    if (x0 > x1) std::swap(x0, x1);
    if (y0 > y1) std::swap(y0, y1);
    for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x) set(x, y, c);
  }
  void hline(int x0, int x1, int y, Rgb c, int thick = 1) { rect(x0, y, x1 + 1, y + thick, c); }
  void vline(int x, int y0, int y1, Rgb c, int thick = 1) { rect(x, y0, x + thick, y1 + 1, c); }
  void outline(int x0, int y0, int x1, int y1, Rgb c) {
    hline(x0, x1, y0, c);
    hline(x0, x1, y1, c);
    vline(x0, y0, y1, c);
    vline(x1, y0, y1, c);
  }
  // A straight line `thick` pixels wide (a square pen stepped along the longer axis).
  void line(int x0, int y0, int x1, int y1, Rgb c, int thick = 1) {
    int steps = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
    for (int i = 0; i <= steps; ++i) {
      double t = steps ? double(i) / steps : 0;
      int x = x0 + int(std::lround(t * (x1 - x0))), y = y0 + int(std::lround(t * (y1 - y0)));
      rect(x - thick / 2, y - thick / 2, x - thick / 2 + thick, y - thick / 2 + thick, c);
    }
  }
  // Text with its top-left corner at (x, y). Vertical text reads bottom to top (rotated a
  // quarter turn anticlockwise), its glyphs' tops facing left, starting at (x, y) and going up.
  void text(int x, int y, const std::string& s, int scale, Rgb c, bool vertical = false) {
    int pen = 0;
    for (char ch : s) {
      const Glyph& g = glyph(ch);
      for (int gy = 0; gy < kGlyphH; ++gy)
        for (int gx = 0; gx < kGlyphW; ++gx) {
          if (g.rows[gy][gx] != '#') continue;
          int px = pen + gx * scale, py = gy * scale;
          if (!vertical) rect(x + px, y + py, x + px + scale, y + py + scale, c);
          else rect(x + py, y - px - scale + 1, x + py + scale, y - px + 1, c);
        }
      pen += kAdvance * scale;
    }
  }
};

// Column colours: each family in one hue, naive light and scheduled dark, so the chart reads
// "same kernel, scheduled or not" at a glance; the libraries in green.
Rgb engine_colour(const std::string& e, size_t index) {
  static const std::map<std::string, Rgb> known = {
      {"ref", {150, 150, 150}},          {"cpu-naive", {140, 180, 230}},
      {"cpu-sched", {30, 90, 180}},      {"cpu-default", {90, 140, 210}},
      {"opencl-default", {240, 150, 70}},      {"opencl-naive", {250, 180, 110}},
      {"opencl-sched", {220, 100, 20}},  {"openblas", {50, 160, 80}},
      {"cpp", {120, 190, 90}},           {"ast", {150, 150, 150}},
      {"stack", {140, 180, 230}},        {"reg", {30, 90, 180}},
      {"jit", {220, 100, 20}},           {"lua5.4", {120, 80, 170}},
      {"python3", {200, 170, 40}},       {"clang-O2", {50, 160, 80}}};
  auto it = known.find(e);
  if (it != known.end()) return it->second;
  static const Rgb extra[] = {{200, 60, 90}, {90, 60, 200}, {60, 170, 170}, {170, 120, 60}};
  return extra[index % 4];
}

// The fixed column order; anything else follows in order of appearance.
int engine_rank(const std::string& e) {
  static const std::vector<std::string> order = {"ref",          "cpu-naive",      "cpu-default",
                                                 "cpu-sched",    "opencl-naive",   "opencl-default",
                                                 "opencl-sched", "openblas",       "cpp"};
  auto it = std::find(order.begin(), order.end(), e);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}

std::string value_text(double v, bool time) {
  if (time) {
    if (v < 1e-3) return fmt::format("{:.3g} us", v * 1e6);
    if (v < 1) return fmt::format("{:.3g} ms", v * 1e3);
    return fmt::format("{:.3g} s", v);
  }
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2g}", v);
}

std::string decade_text(int e, bool time) {
  if (time) {
    static const char* units[] = {"ns", "us", "ms", "s"};
    int u = int(std::floor((e + 9) / 3.0));  // 1e-9 -> ns ... 1e0 -> s
    if (u < 0 || u > 3) return fmt::format("1e{} s", e);
    int mult = e + 9 - 3 * u;
    return fmt::format("{} {}", mult == 0 ? 1 : mult == 1 ? 10 : 100, units[u]);
  }
  if (e >= 0 && e <= 6) return fmt::format("{}", int64_t(std::llround(std::pow(10.0, e))));
  if (e < 0 && e >= -4) return fmt::format("{:.{}f}", std::pow(10.0, e), -e);
  return fmt::format("1e{}", e);
}

}  // namespace

std::vector<uint8_t> Image::pixel(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height) return {0, 0, 0};
  size_t i = (size_t(y) * size_t(width) + size_t(x)) * 3;
  return {rgb[i], rgb[i + 1], rgb[i + 2]};
}

int text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : (int(text.size()) * kAdvance - 1) * scale;
}

bool render_plot(const std::vector<BenchRecord>& records, const PlotOptions& o, Image* out,
                 std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  if (o.metric != "gflops" && o.metric != "time") {
    *error = "unknown plot metric '" + o.metric + "' (metrics: gflops, time)";
    return false;
  }
  if (o.width < 320 || o.height < 240 || o.width > 8192 || o.height > 8192) {
    *error = fmt::format("plot size {} x {} is outside 320 x 240 .. 8192 x 8192", o.width, o.height);
    return false;
  }
  const bool time = o.metric == "time";
  bool any_tensor = std::any_of(records.begin(), records.end(),
                                [](const BenchRecord& r) { return r.suite == "tensor"; });

  // The bars: per (workload, engine) the passing record at the highest thread count.
  std::vector<std::string> workloads, engines;
  std::map<std::pair<std::string, std::string>, const BenchRecord*> bar;
  std::string scale;
  for (const auto& r : records) {
    if (any_tensor && r.suite != "tensor") continue;
    double v = time ? r.median_s : r.gflops;
    if (!r.checksum_ok || r.runs == 0 || !std::isfinite(v) || v <= 0) continue;
    std::string w = any_tensor ? r.workload : r.suite + "/" + r.workload;
    auto key = std::make_pair(w, r.engine);
    auto it = bar.find(key);
    if (it != bar.end() && it->second->threads >= r.threads) continue;
    bar[key] = &r;
    if (std::find(workloads.begin(), workloads.end(), w) == workloads.end()) workloads.push_back(w);
    if (std::find(engines.begin(), engines.end(), r.engine) == engines.end())
      engines.push_back(r.engine);
    scale = r.scale;
  }
  if (bar.empty()) {
    *error = time ? "nothing to plot: no record ran and passed its check"
                  : "nothing to plot: no record that passed its check has a GFLOP/s figure "
                    "(try the time metric)";
    return false;
  }
  std::stable_sort(engines.begin(), engines.end(), [](const std::string& a, const std::string& b) {
    return engine_rank(a) < engine_rank(b);
  });
  double lo = INFINITY, hi = 0;
  for (const auto& [key, r] : bar) {
    double v = time ? r->median_s : r->gflops;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Whole decades, strictly beyond the extremes: the smallest bar is never zero pixels tall
  // and the largest leaves room above it for its label.
  int dlo = int(std::ceil(std::log10(lo))) - 1, dhi = int(std::floor(std::log10(hi))) + 1;

  Image img;
  img.width = o.width;
  img.height = o.height;
  img.rgb.assign(size_t(o.width) * size_t(o.height) * 3, 255);
  Canvas c{img};

  // Type sizes follow the image size, so a 3200-wide chart is the 1600 one, sharper.
  const int unit = std::max(1, std::min(o.width / 800, o.height / 450));
  const int big = 3 * unit, mid = 2 * unit, small = unit + (unit > 1 ? 1 : 0);
  // The largest scale up to `want` at which `text` fits in `room` pixels (at least 1).
  auto fit = [](const std::string& text, int want, int room) {
    int s = want;
    while (s > 1 && text_width(text, s) > room) --s;
    return s;
  };

  std::string title = o.title.empty()
                          ? fmt::format("Descent {}benchmarks: {} ({} scale)",
                                        any_tensor ? "tensor " : "",
                                        time ? "median time, lower is better"
                                             : "GFLOP/s, higher is better",
                                        scale)
                          : o.title;
  std::string machine = o.machine.empty() ? host_description() : o.machine;
  int y = 12 * unit;
  int ts = fit(title, big, o.width - 20 * unit);
  int ms = std::min(ts, fit(machine, mid, o.width - 20 * unit));
  c.text((o.width - text_width(title, ts)) / 2, y, title, ts, kText);
  y += kGlyphH * big + 6 * unit;
  c.text((o.width - text_width(machine, ms)) / 2, y, machine, ms, kSubtle);
  y += kGlyphH * mid + 16 * unit;

  // The legend, to the right of the plot area.
  int legend_w = 0;
  for (const auto& e : engines) legend_w = std::max(legend_w, text_width(e, small));
  legend_w += 40 * unit;
  const int left = 110 * unit, right = o.width - legend_w - 20 * unit;
  const int top = y, bottom = o.height - 60 * unit;
  if (right - left < 100 || bottom - top < 80) {
    *error = fmt::format("plot size {} x {} leaves no room for the bars", o.width, o.height);
    return false;
  }
  for (size_t i = 0; i < engines.size(); ++i) {
    int ly = top + int(i) * (kGlyphH * small + 10 * unit);
    int lx = right + 20 * unit;
    c.rect(lx, ly, lx + 7 * small, ly + 7 * small, engine_colour(engines[i], i));
    c.text(lx + 10 * small, ly, engines[i], small, kText);
  }

  // The value axis: log scale, a gridline and a label per decade.
  auto ypos = [&](double v) {
    double t = (std::log10(v) - dlo) / double(dhi - dlo);
    return bottom - int(std::lround(t * double(bottom - top)));
  };
  for (int e = dlo; e <= dhi; ++e) {
    int gy = ypos(std::pow(10.0, e));
    c.hline(left, right, gy, kGrid);
    std::string label = decade_text(e, time);
    c.text(left - 8 * unit - text_width(label, small), gy - 7 * small / 2, label, small, kText);
  }
  std::string yaxis = time ? "median time (log scale)" : "GFLOP/s (log scale)";
  c.text(14 * unit, (top + bottom) / 2 + text_width(yaxis, small) / 2, yaxis, small, kText, true);

  // The bars, grouped by workload.
  const int slot = (right - left) / int(workloads.size());
  const int group = slot * 8 / 10;
  const int bw = std::max(1, group / int(engines.size()));
  // Value labels read upwards above their bars, one glyph high across: as wide as fits a bar.
  const int vs = std::max(1, std::min(small, (bw - 2) / kGlyphH));
  // One size for every workload name: the largest at which the longest fits its slot.
  int ns = mid;
  for (const auto& name : workloads) ns = std::min(ns, fit(name, mid, slot - 8 * unit));
  for (size_t wi = 0; wi < workloads.size(); ++wi) {
    int gx = left + int(wi) * slot + (slot - bw * int(engines.size())) / 2;
    for (size_t ei = 0; ei < engines.size(); ++ei) {
      auto it = bar.find({workloads[wi], engines[ei]});
      if (it == bar.end()) continue;
      double v = time ? it->second->median_s : it->second->gflops;
      int x0 = gx + int(ei) * bw, top_y = ypos(v);
      c.rect(x0 + 1, top_y, x0 + bw - 1, bottom, engine_colour(engines[ei], ei));
      std::string label = value_text(v, time);
      int lx = x0 + (bw - kGlyphH * vs) / 2;
      c.text(lx, top_y - 4 * unit, label, vs, kText, true);
    }
    const std::string& name = workloads[wi];
    c.text(left + int(wi) * slot + (slot - text_width(name, ns)) / 2, bottom + 10 * unit, name, ns,
           kText);
  }
  c.vline(left, top, bottom, kAxis, unit);
  c.hline(left, right, bottom, kAxis, unit);
  std::string xaxis = "workload (bars: each column at its highest thread count)";
  c.text((left + right - text_width(xaxis, small)) / 2, o.height - 22 * unit, xaxis, small,
         kSubtle);
  *out = std::move(img);
  return true;
}

namespace {

// An axis: where its ticks go and what they say. Linear axes get "nice" steps (1, 2 or 5
// times a power of ten); log axes a tick per decade, and 2x and 5x ticks too when the data
// spans less than two decades.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // in data units (log: the exponents' range, as log10 values)
  std::vector<double> ticks;  // data values

  void fit(std::vector<double> v) {
    if (log) {
      v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !(x > 0); }), v.end());
      for (double& x : v) x = std::log10(x);
    }
    double a = *std::min_element(v.begin(), v.end()), b = *std::max_element(v.begin(), v.end());
    if (log) {
      lo = std::floor(a);
      hi = std::ceil(b);
      if (hi <= lo) hi = lo + 1;
      for (int e = int(lo); e <= int(hi); ++e) {
        ticks.push_back(std::pow(10.0, e));
        if (hi - lo < 2 && e < int(hi))
          for (double m : {2.0, 5.0}) ticks.push_back(m * std::pow(10.0, e));
      }
      return;
    }
    if (b <= a) b = a + 1;
    double raw = (b - a) / 5, mag = std::pow(10.0, std::floor(std::log10(raw))), step = mag;
    for (double m : {2.0, 5.0, 10.0})
      if (step < raw) step = m * mag;
    lo = std::floor(a / step) * step;
    hi = std::ceil(b / step) * step;
    // At most a few dozen ticks, even for a range of a few ulps (where t += step stalls).
    for (int k = 0; k <= 50 && lo + k * step <= hi + step / 2; ++k) {
      double t = lo + k * step;
      ticks.push_back(std::abs(t) < step / 1e6 ? 0 : t);
    }
  }
  bool shows(double v) const { return !log || v > 0; }
  double frac(double v) const {
    double x = log ? std::log10(v) : v;
    return (x - lo) / (hi - lo);
  }
};

std::string tick_text(double v) {
  double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  if (a >= 100 || std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

bool render_panels(const std::string& title, const std::string& subtitle,
                   const std::vector<XYPanel>& panels, int width, int height, Image* out,
                   std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  if (width < 320 || height < 240 || width > 8192 || height > 8192) {
    *error = fmt::format("plot size {} x {} is outside 320 x 240 .. 8192 x 8192", width, height);
    return false;
  }
  if (panels.empty()) {
    *error = "nothing to plot";
    return false;
  }
  Image img;
  img.width = width;
  img.height = height;
  img.rgb.assign(size_t(width) * size_t(height) * 3, 255);
  Canvas c{img};
  const int unit = std::max(1, std::min(width / 800, height / 450));
  const int big = 3 * unit, mid = 2 * unit, small = unit + (unit > 1 ? 1 : 0);
  auto fit = [](const std::string& text, int want, int room) {
    int s = want;
    while (s > 1 && text_width(text, s) > room) --s;
    return s;
  };
  int y = 12 * unit;
  int ts = fit(title, big, width - 20 * unit);
  c.text((width - text_width(title, ts)) / 2, y, title, ts, kText);
  y += kGlyphH * big + 6 * unit;
  int ss = std::min(ts, fit(subtitle, mid, width - 20 * unit));
  c.text((width - text_width(subtitle, ss)) / 2, y, subtitle, ss, kSubtle);
  y += kGlyphH * mid + 14 * unit;

  // One colour per series name, shared by the panels.
  static const Rgb palette[] = {{30, 90, 180},  {220, 100, 20}, {50, 160, 80}, {200, 60, 90},
                                {120, 80, 170}, {60, 170, 170}, {170, 120, 60}, {100, 100, 100}};
  std::vector<std::string> names;
  auto colour = [&](const std::string& name) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      names.push_back(name);
      it = names.end() - 1;
    }
    return palette[size_t(it - names.begin()) % 8];
  };
  const int slot = width / int(panels.size());
  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const XYPanel& p = panels[pi];
    Axis ax, ay;
    ax.log = p.log_x;
    ay.log = p.log_y;
    std::vector<double> xs, ys;
    for (const auto& s : p.series)
      for (const auto& [px, py] : s.points)
        if (ax.shows(px) && ay.shows(py) && std::isfinite(px) && std::isfinite(py)) {
          xs.push_back(px);
          ys.push_back(py);
        }
    if (xs.empty()) {
      *error = "the chart '" + p.title + "' has no point to draw";
      return false;
    }
    ax.fit(xs);
    ay.fit(ys);
    const int x0 = int(pi) * slot, left = x0 + 90 * unit, right = x0 + slot - 20 * unit;
    int top = y + kGlyphH * mid + 10 * unit;
    // The legend goes under the panel's title, one row per series.
    int legend_rows = int(p.series.size());
    const int legend_top = top;
    top += legend_rows * (kGlyphH * small + 6 * unit) + 8 * unit;
    const int bottom = height - 50 * unit;
    if (right - left < 80 || bottom - top < 60) {
      *error = fmt::format("plot size {} x {} leaves no room for {} charts", width, height, panels.size());
      return false;
    }
    int pts = fit(p.title, mid, slot - 20 * unit);
    c.text(x0 + (slot - text_width(p.title, pts)) / 2, y, p.title, pts, kText);
    auto px = [&](double v) { return left + int(std::lround(ax.frac(v) * (right - left))); };
    auto py = [&](double v) { return bottom - int(std::lround(ay.frac(v) * (bottom - top))); };
    for (double t : ax.ticks) {
      int gx = px(t);
      c.vline(gx, top, bottom, kGrid);
      std::string label = tick_text(t);
      c.text(gx - text_width(label, small) / 2, bottom + 6 * unit, label, small, kText);
    }
    for (double t : ay.ticks) {
      int gy = py(t);
      c.hline(left, right, gy, kGrid);
      std::string label = tick_text(t);
      c.text(left - 6 * unit - text_width(label, small), gy - 7 * small / 2, label, small, kText);
    }
    c.vline(left, top, bottom, kAxis, unit);
    c.hline(left, right, bottom, kAxis, unit);
    c.text((left + right - text_width(p.x_label, small)) / 2, bottom + 20 * unit, p.x_label, small,
           kSubtle);
    c.text(x0 + 12 * unit, (top + bottom) / 2 + text_width(p.y_label, small) / 2, p.y_label, small,
           kSubtle, true);
    for (size_t si = 0; si < p.series.size(); ++si) {
      const XYSeries& s = p.series[si];
      Rgb col = colour(s.name);
      int ly = legend_top + int(si) * (kGlyphH * small + 6 * unit);
      c.rect(left + 10 * unit, ly, left + 10 * unit + 7 * small, ly + 7 * small, col);
      c.text(left + 10 * unit + 10 * small, ly, s.name, small, kText);
      bool have = false;
      int lx = 0, lyy = 0;
      for (const auto& [vx, vy] : s.points) {
        if (!ax.shows(vx) || !ay.shows(vy) || !std::isfinite(vx) || !std::isfinite(vy)) continue;
        int qx = px(vx), qy = py(vy);
        if (s.line) {
          if (have) c.line(lx, lyy, qx, qy, col, 2 * unit);
        } else {
          c.rect(qx - 2 * unit, qy - 2 * unit, qx + 2 * unit + 1, qy + 2 * unit + 1, col);
        }
        have = true;
        lx = qx;
        lyy = qy;
      }
    }
  }
  *out = std::move(img);
  return true;
}

std::vector<XYSeries> series_from_output(const std::string& printed, const std::vector<std::string>& words) {
  std::vector<XYSeries> out;
  for (const auto& w : words) out.push_back({w, {}, true});
  std::istringstream lines(printed);
  std::string line;
  auto number = [](const std::string& s, double* v) {
    char* end = nullptr;
    *v = std::strtod(s.c_str(), &end);
    return !s.empty() && *end == '\0' && std::isfinite(*v);
  };
  while (std::getline(lines, line)) {
    std::vector<std::string> tok;
    std::istringstream in(line);
    for (std::string t; in >> t;) tok.push_back(t);
    double epoch = 0, v = 0;
    bool has_epoch = false;
    for (size_t i = 0; i + 1 < tok.size(); ++i)
      if (tok[i] == "epoch" && number(tok[i + 1], &epoch)) has_epoch = true;
    for (auto& s : out)
      for (size_t i = 0; i + 1 < tok.size(); ++i)
        if (tok[i] == s.name && number(tok[i + 1], &v)) {
          s.points.push_back({has_epoch ? epoch : double(s.points.size() + 1), v});
          break;
        }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const XYSeries& s) { return s.points.empty(); }),
            out.end());
  return out;
}

bool output_panel(const std::string& printed, const std::vector<std::string>& words,
                  const std::string& program, XYPanel* out, std::string* error) {
  XYPanel p;
  p.series = series_from_output(printed, words);
  if (p.series.empty()) {
    std::string quoted;
    for (const auto& w : words) quoted += (quoted.empty() ? "'" : ", '") + w + " NUMBER'";
    *error = "the program printed no line with " + quoted + " to plot";
    return false;
  }
  double lo = INFINITY, hi = 0;
  bool epochs = printed.find("epoch ") != std::string::npos;
  for (const auto& s : p.series)
    for (const auto& [x, y] : s.points) lo = std::min(lo, y), hi = std::max(hi, y);
  p.log_y = lo > 0 && hi / lo > 20;
  p.x_label = epochs ? "epoch" : "line printed";
  for (const auto& s : p.series) p.y_label += (p.y_label.empty() ? "" : ", ") + s.name;
  p.title = p.y_label + " per " + p.x_label + ", as " + program + " printed it";
  if (p.log_y) p.y_label += " (log scale)";
  *out = std::move(p);
  return true;
}

std::vector<XYPanel> tune_panels(const std::vector<TunePlotRun>& runs) {
  XYPanel curve{"best so far", "candidates measured", "GFLOP/s of the best so far", false, false, {}};
  XYPanel model{"the cost model: score against measured", "model score (higher: faster)",
                "measured GFLOP/s", false, false, {}};
  for (const auto& run : runs) {
    if (!run.result || run.flops <= 0) continue;
    XYSeries line{run.label, {}, true}, dots{run.label, {}, false};
    const auto& r = *run.result;
    int measured = 0;
    for (size_t i = 0; i < r.candidates.size() && i < r.best_so_far.size(); ++i) {
      const tune::Candidate& c = r.candidates[i];
      if (c.from_database) continue;
      ++measured;
      if (r.best_so_far[i] > 0) line.points.push_back({measured, run.flops / r.best_so_far[i] / 1e9});
      if (c.ok && c.has_prediction && c.seconds > 0)
        dots.points.push_back({c.predicted, run.flops / c.seconds / 1e9});
    }
    if (!line.points.empty()) curve.series.push_back(std::move(line));
    if (!dots.points.empty()) model.series.push_back(std::move(dots));
    // The two marks every search is read against, across the whole width of its curve.
    const std::string of = runs.size() > 1 ? " (" + run.label + ")" : "";
    for (auto [name, seconds] : {std::pair<std::string, double>{"as lowered", run.naive_seconds},
                                 {"default schedule", run.default_seconds}})
      if (seconds > 0 && measured > 0)
        curve.series.push_back(
            {name + of, {{1, run.flops / seconds / 1e9}, {std::max(measured, 2), run.flops / seconds / 1e9}}, true});
  }
  std::vector<XYPanel> out;
  if (!curve.series.empty()) out.push_back(std::move(curve));
  if (!model.series.empty()) out.push_back(std::move(model));
  return out;
}

bool write_png(const Image& img, const std::string& path, std::string* error) {
  if (!stbi_write_png(path.c_str(), img.width, img.height, 3, img.rgb.data(), img.width * 3)) {
    if (error) *error = "cannot write the plot to '" + path + "'";
    return false;
  }
  return true;
}

bool encode_png(const Image& img, std::string* bytes, std::string* error) {
  bytes->clear();
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(append, bytes, img.width, img.height, 3, img.rgb.data(),
                              img.width * 3)) {
    if (error) *error = "cannot encode the plot as PNG";
    return false;
  }
  return true;
}

bool write_plot(const std::vector<BenchRecord>& records, const std::string& path,
                const PlotOptions& options, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  Image img;
  return render_plot(records, options, &img, error) && write_png(img, path, error);
}

}  // namespace descent::bench
