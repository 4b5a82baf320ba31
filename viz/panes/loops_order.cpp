// The loop-nest pane's iteration-order view (loops_internal.h, `loops view order`).
//
// The "iteration order" view draws the output as a grid of cells coloured by when the
// scheduled nest first writes them (Session::kernel_iteration_order walks it), with the
// schedule's tiles outlined and a step slider: a tiled nest fills one tile at a time where
// the naive nest sweeps rows. It exports as PNG at the grid's own resolution.
//
// Apart from the nest view (loops_nest.cpp) because it is a picture of what the nest does,
// not of the nest: it walks the scheduled kernel once per state of the schedule and keeps
// its own state (the walk, the numbering, the slider, the export).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "viz/app.h"
#include "viz/panes/loops_internal.h"
#include "viz/widgets.h"

namespace descent::viz::loops_internal {

namespace {

// ---- The iteration-order picture: one colour per cell, shared by the pane and the PNG ----

// A ramp from the first visit (dark violet) to the last (yellow), viridis's end points and
// three between: its luminance rises all the way, so it also reads in grey.
void ramp(double t, uint8_t rgb[3]) {
  static const uint8_t stops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  int i = std::min(3, static_cast<int>(t));
  double f = t - i;
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<uint8_t>(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
}
const uint8_t kUnvisited[3] = {226, 226, 226};  // not written within the visits shown
const uint8_t kOutline[3] = {20, 20, 20};       // tile boundaries

// Each element's visit number: by its first write, or (a reduction's) by its last.
std::vector<int64_t> visit_ranks(const tensor::IterationOrder& o, bool by_last) {
  std::vector<int64_t> rank(o.first.size(), -1);
  std::vector<int64_t> order = o.order;
  if (by_last)
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return o.last[size_t(a)] < o.last[size_t(b)]; });
  for (size_t v = 0; v < order.size(); ++v) rank[size_t(order[v])] = int64_t(v);
  return rank;
}

// The ramp spans every visit, so a cell keeps its colour as the step slider moves on.
void cell_rgb(const std::vector<int64_t>& rank, int64_t visits, int64_t all, int64_t e,
              uint8_t rgb[3]) {
  int64_t r = rank[size_t(e)];
  if (r < 0 || r >= visits) {
    std::copy(kUnvisited, kUnvisited + 3, rgb);
    return;
  }
  ramp(all > 1 ? double(r) / double(all - 1) : 0.0, rgb);
}

// Pixels per cell in the PNG: the longer side near 512 pixels, cells 1 to 32 pixels.
int cell_pixels(const tensor::IterationOrder& o) {
  int64_t longest = std::max(o.rows, o.cols);
  return static_cast<int>(std::clamp<int64_t>(512 / std::max<int64_t>(1, longest), 1, 32));
}

// The picture at the grid's resolution, each cell `scale` pixels square; a tile's edge
// is a dark line inside the cells on either side of it.
Image order_image(const tensor::IterationOrder& o, const std::vector<int64_t>& rank,
                  int64_t visits, int scale) {
  int64_t all = static_cast<int64_t>(o.order.size());
  Image img;
  img.width = static_cast<int>(o.cols) * scale;
  img.height = static_cast<int>(o.rows) * scale;
  img.rgb.resize(size_t(img.width) * size_t(img.height) * 3);
  int line = std::max(1, scale / 8);
  auto tile = [&](int64_t r, int64_t c) {
    return r < 0 || c < 0 || r >= o.rows || c >= o.cols ? -2 : o.tile[size_t(r * o.cols + c)];
  };
  for (int64_t r = 0; r < o.rows; ++r)
    for (int64_t c = 0; c < o.cols; ++c) {
      uint8_t fill[3];
      cell_rgb(rank, visits, all, r * o.cols + c, fill);
      int64_t t = tile(r, c);
      // Edges only between two tiles, so an untiled nest has no lines at all.
      bool left = o.tiles > 1 && tile(r, c - 1) != t && c > 0;
      bool right = o.tiles > 1 && tile(r, c + 1) != t && c + 1 < o.cols;
      bool top = o.tiles > 1 && tile(r - 1, c) != t && r > 0;
      bool bottom = o.tiles > 1 && tile(r + 1, c) != t && r + 1 < o.rows;
      for (int y = 0; y < scale; ++y)
        for (int x = 0; x < scale; ++x) {
          bool edge = (left && x < line) || (right && x >= scale - line) ||
                      (top && y < line) || (bottom && y >= scale - line);
          size_t at = ((size_t(r) * scale + y) * size_t(img.width) + size_t(c) * scale + x) * 3;
          std::copy(edge ? kOutline : fill, (edge ? kOutline : fill) + 3, &img.rgb[at]);
        }
    }
  return img;
}

}  // namespace

// ---- The view, its verbs and its caption ----

// Walks the scheduled nest once per state of it; false (with order_error_) without one.
bool LoopsPane::order_ready(Document& doc) {
  refresh(doc);
  if (order_stale_) {
    order_stale_ = false;
    order_error_.clear();
    order_ = tensor::IterationOrder{};
    rank_.clear();
    if (!have_kernel_)
      order_error_ = "no kernel selected: " + why_empty_;
    else if (doc.session().kernel_iteration_order(&order_, &order_error_))
      rank_ = visit_ranks(order_, by_last_);
  }
  return order_error_.empty();
}

int64_t LoopsPane::visits_shown() const {
  int64_t all = static_cast<int64_t>(order_.order.size());
  return shown_ < 0 ? all : std::min(shown_, all);
}

bool LoopsPane::export_order(Document& doc, const std::string& path, std::string* error) {
  if (!order_ready(doc)) {
    *error = "no iteration order to export: " + order_error_;
    return false;
  }
  Image img = order_image(order_, rank_, visits_shown(), cell_pixels(order_));
  if (!write_png(path, img, error)) return false;
  exported_ = "wrote " + path + " (" + std::to_string(img.width) + " x " +
              std::to_string(img.height) + ")";
  return true;
}

// `order`, `order step N`, `order all`, `order by first|last`, `order export FILE.png`.
bool LoopsPane::order_act(Document& doc, const std::vector<std::string>& args, std::string* error) {
  view_ = "order";
  playing_ = false;
  const std::string usage = "usage: order [step N|all|by first|by last|export FILE.png]";
  if (args.empty()) return true;
  if (args[0] == "all" && args.size() == 1) {
    shown_ = -1;
    return true;
  }
  if (args[0] == "step" && args.size() == 2) {
    char* end = nullptr;
    long long n = std::strtoll(args[1].c_str(), &end, 10);
    if (*end != '\0' || n < 0 || args[1].empty()) {
      *error = "order step takes a number of visits >= 0, not '" + args[1] + "'";
      return false;
    }
    shown_ = n;
    return true;
  }
  if (args[0] == "by" && args.size() == 2 && (args[1] == "first" || args[1] == "last")) {
    by_last_ = args[1] == "last";
    order_stale_ = true;
    return true;
  }
  if (args[0] == "export" && args.size() == 2) return export_order(doc, args[1], error);
  *error = usage;
  return false;
}

void LoopsPane::draw_order(Document& doc) {
  if (!order_ready(doc)) {
    ImGui::TextWrapped("No iteration order: %s", order_error_.c_str());
    return;
  }
  const tensor::IterationOrder& o = order_;
  int64_t all = static_cast<int64_t>(o.order.size());
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("number by");
  ImGui::SameLine();
  for (bool last : {false, true}) {
    if (ImGui::RadioButton(last ? "last write" : "first write", by_last_ == last) &&
        by_last_ != last) {
      by_last_ = last;
      rank_ = visit_ranks(o, by_last_);
    }
    ImGui::SameLine();
  }
  if (ImGui::Button(playing_ ? "Pause" : "Play")) {
    if (!playing_ && visits_shown() >= all) shown_ = 0;
    playing_ = !playing_;
  }
  if (playing_) {  // about four seconds from the first visit to the last
    shown_ = std::min(all, visits_shown() + std::max<int64_t>(1, all / 240));
    if (shown_ >= all) playing_ = false;
  }
  ImGui::SameLine();
  int64_t shown = visits_shown(), zero = 0;
  ImGui::SetNextItemWidth(em(200));
  if (ImGui::SliderScalar("visits", ImGuiDataType_S64, &shown, &zero, &all)) {
    shown_ = shown;
    playing_ = false;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the first N elements visited");
  ImGui::SetNextItemWidth(em(200));
  ImGui::InputText("##png", &export_path_);
  ImGui::SameLine();
  std::string ignored;
  if (ImGui::Button("Export PNG") && !export_order(doc, export_path_, &ignored))
    exported_ = ignored;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the picture as drawn, one square of pixels per element");
  if (!exported_.empty()) {
    ImGui::SameLine();
    ImGui::TextUnformatted(exported_.c_str());
  }
  std::string info = caption();
  if (!o.note.empty()) info += "; " + o.note;
  ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
  ImGui::TextWrapped("%s", info.c_str());
  ImGui::PopStyleColor();

  // The grid, as large as fits; cells below a pixel are drawn a block of them at a time
  // (coloured as the block's first cell), so a big output costs no more than a small one.
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float bar = ImGui::GetTextLineHeightWithSpacing();
  float cell = std::min(avail.x / float(o.cols), (avail.y - bar) / float(o.rows));
  int64_t stride = cell >= 2 ? 1 : static_cast<int64_t>(std::ceil(2 / std::max(cell, 1e-3f)));
  cell = std::max(cell, 2.f / float(stride)) * float(stride);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  int64_t hovered = -1;
  for (int64_t r = 0; r < o.rows; r += stride)
    for (int64_t c = 0; c < o.cols; c += stride) {
      uint8_t rgb[3];
      cell_rgb(rank_, shown, all, r * o.cols + c, rgb);
      ImVec2 a(p0.x + float(c / stride) * cell, p0.y + float(r / stride) * cell);
      ImVec2 b(a.x + cell, a.y + cell);
      dl->AddRectFilled(a, b, IM_COL32(rgb[0], rgb[1], rgb[2], 255));
      if (ImGui::IsMouseHoveringRect(a, b)) hovered = r * o.cols + c;
    }
  if (o.tiles > 1 && stride == 1)  // tile edges: between two cells of different tiles
    for (int64_t r = 0; r < o.rows; ++r)
      for (int64_t c = 0; c < o.cols; ++c) {
        int64_t t = o.tile[size_t(r * o.cols + c)];
        float x = p0.x + float(c) * cell, y = p0.y + float(r) * cell;
        ImU32 ink = IM_COL32(kOutline[0], kOutline[1], kOutline[2], 255);
        if (c + 1 < o.cols && o.tile[size_t(r * o.cols + c + 1)] != t)
          dl->AddLine(ImVec2(x + cell, y), ImVec2(x + cell, y + cell), ink, 2);
        if (r + 1 < o.rows && o.tile[size_t((r + 1) * o.cols + c)] != t)
          dl->AddLine(ImVec2(x, y + cell), ImVec2(x + cell, y + cell), ink, 2);
      }
  float h = float((o.rows + stride - 1) / stride) * cell;
  ImGui::Dummy(ImVec2(float((o.cols + stride - 1) / stride) * cell, h));
  if (hovered >= 0) {
    size_t e = size_t(hovered);
    ImGui::SetTooltip("%s[%lld, %lld]: visit %lld, first written at step %lld, last at %lld%s",
                      o.buffer.c_str(), (long long)(hovered / o.cols),
                      (long long)(hovered % o.cols), (long long)rank_[e],
                      (long long)o.first[e], (long long)o.last[e],
                      o.tiles > 1 ? (", tile " + std::to_string(o.tile[e])).c_str() : "");
  }
  // The ramp's legend.
  ImGui::TextDisabled("first");
  ImGui::SameLine();
  ImVec2 q = ImGui::GetCursorScreenPos();
  float w = em(160), lh = ImGui::GetTextLineHeight();
  for (int i = 0; i < 32; ++i) {
    uint8_t rgb[3];
    ramp(i / 31.0, rgb);
    dl->AddRectFilled(ImVec2(q.x + w * float(i) / 32, q.y),
                      ImVec2(q.x + w * float(i + 1) / 32, q.y + lh),
                      IM_COL32(rgb[0], rgb[1], rgb[2], 255));
  }
  ImGui::Dummy(ImVec2(w, lh));
  ImGui::SameLine();
  ImGui::TextDisabled("last visit   (grey: not yet)");
}

// The order view's summary: "C 64 x 64: 4096 elements, 266240 writes, 64 tiles (i_0 j_0)".
std::string LoopsPane::caption() const {
  if (view_ != "order" || !order_error_.empty() || order_stale_) return "";
  const tensor::IterationOrder& o = order_;
  std::string s = o.buffer + " " + std::to_string(o.rows) + " x " + std::to_string(o.cols) +
                  ": " + std::to_string(visits_shown()) + " of " +
                  std::to_string(o.order.size()) + " elements visited, " +
                  std::to_string(o.writes) + " writes in all, ";
  if (o.tiles > 1)
    s += std::to_string(o.tiles) + " tiles (one per " + join(o.tile_loops, ", ") + ")";
  else
    s += "no tiles";
  return s;
}

}  // namespace descent::viz::loops_internal
