#include "viz/widgets.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

namespace descent::viz {

namespace colors {
// Colours that read on the light theme the app uses by default and on a projector.
ImU32 highlight() { return IM_COL32(255, 214, 10, 110); }
ImU32 current() { return IM_COL32(64, 160, 255, 110); }
ImU32 changed() { return IM_COL32(80, 200, 120, 80); }
ImU32 deleted() { return IM_COL32(230, 70, 70, 70); }
ImU32 error() { return IM_COL32(220, 40, 40, 255); }
ImU32 text() { return ImGui::GetColorU32(ImGuiCol_Text); }
ImU32 dim() { return ImGui::GetColorU32(ImGuiCol_TextDisabled); }
ImU32 cell() { return ImGui::GetColorU32(ImGuiCol_FrameBg); }
ImU32 cell_border() { return ImGui::GetColorU32(ImGuiCol_Border); }
ImU32 loop_kind(std::string_view k) {
  if (k == "parallel") return IM_COL32(214, 39, 40, 255);     // red: many cores
  if (k == "vectorized") return IM_COL32(31, 119, 180, 255);  // blue: SIMD lanes
  if (k == "unrolled") return IM_COL32(255, 127, 14, 255);    // orange: copies of the body
  if (k == "bound") return IM_COL32(148, 103, 189, 255);      // purple: GPU threads
  return IM_COL32(90, 90, 90, 255);                           // grey: serial
}
ImU32 node_kind(std::string_view k) {
  if (k == "kernel") return IM_COL32(198, 219, 239, 255);
  if (k == "input") return IM_COL32(199, 233, 192, 255);
  if (k == "const") return IM_COL32(217, 217, 217, 255);
  if (k == "backward") return IM_COL32(246, 195, 139, 255);  // a kernel of the backward pass
  // AST categories
  if (k == "stmt") return IM_COL32(253, 208, 162, 255);
  if (k == "expr") return IM_COL32(198, 219, 239, 255);
  if (k == "leaf") return IM_COL32(199, 233, 192, 255);
  if (k == "decl") return IM_COL32(218, 218, 235, 255);
  return IM_COL32(240, 240, 240, 255);
}
}  // namespace colors

float em(float px_at_16) { return px_at_16 * ImGui::GetFontSize() / 16.f; }

int Listing(const char* id, const std::vector<std::string>& lines, const ListingStyle& style,
            ImVec2 size) {
  int hovered = -1;
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_HorizontalScrollbar);
  float lh = ImGui::GetTextLineHeightWithSpacing();
  if (style.scroll_to >= 0 && style.scroll_to < static_cast<int>(lines.size())) {
    float y = style.scroll_to * lh;
    float top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
    if (y < top || y + lh > top + h - lh) ImGui::SetScrollY(std::max(0.f, y - h / 3));
  }
  int digits = 1;
  for (size_t n = lines.size(); n >= 10; n /= 10) ++digits;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(lines.size()), lh);
  float width = ImGui::GetWindowContentRegionMax().x + ImGui::GetScrollX();
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImVec2 p = ImGui::GetCursorScreenPos();
      ImU32 bg = style.background ? style.background(i) : 0;
      bool hover = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(
                                                   p, ImVec2(p.x + width + 4000, p.y + lh));
      if (hover) hovered = i;
      if (bg) dl->AddRectFilled(p, ImVec2(p.x + width + 4000, p.y + lh), bg);
      if (hover) dl->AddRectFilled(p, ImVec2(p.x + width + 4000, p.y + lh), IM_COL32(0, 0, 0, 18));
      if (style.line_numbers) {
        int number = style.number ? style.number(i) : i + 1;
        if (number >= 0)
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "%*d", digits, number);
        else
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "%*s", digits, "-");
        ImGui::SameLine();
      }
      ImU32 c = style.color ? style.color(i) : 0;
      if (c) ImGui::PushStyleColor(ImGuiCol_Text, c);
      ImGui::TextUnformatted(lines[i].data(), lines[i].data() + lines[i].size());
      if (c) ImGui::PopStyleColor();
    }
  }
  clipper.End();
  ImGui::EndChild();
  return hovered;
}

GraphLayout layered_layout(const std::vector<ImVec2>& sizes,
                           const std::vector<std::pair<int, int>>& edges, float layer_gap,
                           float node_gap) {
  const int n = static_cast<int>(sizes.size());
  GraphLayout out;
  out.pos.assign(n, ImVec2(0, 0));
  out.layer.assign(n, 0);
  if (n == 0) return out;
  // Layering: longest path from the sources, by relaxing edges in a topological order
  // (Kahn's); an edge that would close a cycle is left out.
  std::vector<std::vector<int>> succ(n), pred(n);
  std::vector<int> indeg(n, 0);
  for (auto [a, b] : edges) {
    if (a < 0 || b < 0 || a >= n || b >= n || a == b) continue;
    succ[a].push_back(b);
    ++indeg[b];
  }
  std::vector<int> order, queue;
  for (int i = 0; i < n; ++i)
    if (indeg[i] == 0) queue.push_back(i);
  std::vector<bool> placed(n, false);
  while (order.size() < static_cast<size_t>(n)) {
    if (queue.empty()) {  // a cycle: break it at the first unplaced node
      for (int i = 0; i < n; ++i)
        if (!placed[i]) {
          queue.push_back(i);
          break;
        }
    }
    int v = queue.front();
    queue.erase(queue.begin());
    if (placed[v]) continue;
    placed[v] = true;
    order.push_back(v);
    for (int w : succ[v]) {
      if (placed[w]) continue;  // back edge
      out.layer[w] = std::max(out.layer[w], out.layer[v] + 1);
      pred[w].push_back(v);
      if (--indeg[w] == 0) queue.push_back(w);
    }
  }
  int layers = 1 + *std::max_element(out.layer.begin(), out.layer.end());
  // Long edges: one dummy node per layer crossed, in the layer's order like any node (the
  // classic Sugiyama step), chained a -> d1 -> d2 -> b in place of a -> b.
  std::vector<ImVec2> size = sizes;
  std::vector<int> layer = out.layer;
  std::vector<std::vector<int>> chain(edges.size());  // the dummies of edge e, top down
  for (size_t e = 0; e < edges.size(); ++e) {
    auto [a, b] = edges[e];
    if (a < 0 || b < 0 || a >= n || b >= n || a == b || layer[b] - layer[a] < 2) continue;
    if (std::find(pred[b].begin(), pred[b].end(), a) == pred[b].end()) continue;  // back edge
    int prev = a;
    for (int l = layer[a] + 1; l < layer[b]; ++l) {
      int d = static_cast<int>(size.size());
      size.push_back(ImVec2(2, 0));
      layer.push_back(l);
      pred.emplace_back(1, prev);
      succ.emplace_back();
      if (prev == a) std::replace(succ[a].begin(), succ[a].end(), b, d);
      else succ[prev].push_back(d);
      chain[e].push_back(d);
      prev = d;
    }
    std::replace(pred[b].begin(), pred[b].end(), a, prev);
    succ[prev].push_back(b);
  }
  const int total = static_cast<int>(size.size());
  std::vector<std::vector<int>> rows(layers);
  for (int v : order) rows[layer[v]].push_back(v);
  for (int d = n; d < total; ++d) rows[layer[d]].push_back(d);
  // Crossing reduction: a few down and up sweeps ordering each layer by the mean position
  // of its neighbours in the layer before.
  std::vector<float> rank(total, 0);
  auto renumber = [&] {
    for (auto& row : rows)
      for (size_t i = 0; i < row.size(); ++i) rank[row[i]] = static_cast<float>(i);
  };
  renumber();
  for (int sweep = 0; sweep < 6; ++sweep) {
    bool down = sweep % 2 == 0;
    for (int li = down ? 1 : layers - 2; down ? li < layers : li >= 0; li += down ? 1 : -1) {
      auto& row = rows[li];
      std::vector<float> key(total, 0);
      for (int v : row) {
        const auto& nb = down ? pred[v] : succ[v];
        float sum = 0;
        int cnt = 0;
        for (int u : nb)
          if (layer[u] == li + (down ? -1 : 1)) sum += rank[u], ++cnt;
        key[v] = cnt ? sum / cnt : rank[v];
      }
      std::stable_sort(row.begin(), row.end(), [&](int a, int b) { return key[a] < key[b]; });
      for (size_t i = 0; i < row.size(); ++i) rank[row[i]] = static_cast<float>(i);
    }
  }
  // Coordinates: each layer centred on the widest one.
  std::vector<float> row_w(layers, 0), row_h(layers, 0), row_y(layers, 0);
  for (int li = 0; li < layers; ++li)
    for (int v : rows[li]) {
      row_w[li] += size[v].x + (row_w[li] > 0 ? node_gap : 0);
      row_h[li] = std::max(row_h[li], size[v].y);
    }
  float width = *std::max_element(row_w.begin(), row_w.end());
  std::vector<ImVec2> pos(total);
  float y = 0;
  for (int li = 0; li < layers; ++li) {
    float x = (width - row_w[li]) / 2;
    row_y[li] = y;
    for (int v : rows[li]) {
      pos[v] = ImVec2(x, y + (row_h[li] - size[v].y) / 2);
      x += size[v].x + node_gap;
    }
    y += row_h[li] + layer_gap;
  }
  for (int v = 0; v < n; ++v) out.pos[v] = pos[v];
  out.bends.assign(edges.size(), {});
  for (size_t e = 0; e < edges.size(); ++e)
    for (int d : chain[e]) {
      float cx = pos[d].x + size[d].x / 2;
      out.bends[e].push_back(ImVec2(cx, row_y[layer[d]]));
      out.bends[e].push_back(ImVec2(cx, row_y[layer[d]] + row_h[layer[d]]));
    }
  out.size = ImVec2(width, y - layer_gap);
  return out;
}

ImVec2 node_size(const std::string& label) {
  ImVec2 t = ImGui::CalcTextSize(label.c_str());
  return ImVec2(t.x + 16, t.y + 10);
}

int DrawGraph(const char* id, const GraphLayout& layout, const std::vector<ImVec2>& sizes,
              const std::vector<GraphNodeStyle>& nodes,
              const std::vector<std::pair<int, int>>& edges,
              const std::vector<std::string>& edge_labels, ImVec2 size,
              std::vector<char>* drawn) {
  int hovered = -1;
  if (drawn) drawn->assign(sizes.size(), 0);
  const int n = static_cast<int>(sizes.size());
  // Back edges (see the header): each runs up a lane right of every box in the layers it
  // spans, a longer loop further out, so nested loops' edges nest instead of overlapping.
  // Its horizontal runs go through the empty gaps between layers, never through a box.
  const bool layered = layout.layer.size() >= sizes.size() && layout.pos.size() >= sizes.size();
  auto is_back = [&](int a, int b) {
    return a == b || (layered && layout.layer[b] <= layout.layer[a]);
  };
  // Each layer's right edge (of its rightmost box), top and bottom.
  std::vector<float> layer_right, layer_top, layer_bottom;
  if (layered)
    for (int v = 0; v < n; ++v) {
      size_t l = static_cast<size_t>(std::max(0, layout.layer[v]));
      if (layer_right.size() <= l) {
        layer_right.resize(l + 1, 0);
        layer_top.resize(l + 1, 1e30f);
        layer_bottom.resize(l + 1, -1e30f);
      }
      layer_right[l] = std::max(layer_right[l], layout.pos[v].x + sizes[v].x);
      layer_top[l] = std::min(layer_top[l], layout.pos[v].y);
      layer_bottom[l] = std::max(layer_bottom[l], layout.pos[v].y + sizes[v].y);
    }
  const int layers = static_cast<int>(layer_right.size());
  // The y of the gap below layer l (-1: above it), in layout space.
  auto gap_below = [&](int l) {
    size_t i = static_cast<size_t>(l);
    return l + 1 < layers && layer_top[i + 1] > layer_bottom[i] ? (layer_bottom[i] + layer_top[i + 1]) / 2
                                                                 : layer_bottom[i] + 10;
  };
  auto gap_above = [&](int l) {
    size_t i = static_cast<size_t>(l);
    return l > 0 && layer_bottom[i - 1] < layer_top[i] ? (layer_bottom[i - 1] + layer_top[i]) / 2
                                                       : layer_top[i] - 6;
  };
  std::vector<float> lane(edges.size(), -1);  // layout x of a back edge's lane, -1: none
  float width = layout.size.x, height = layout.size.y;
  for (size_t e = 0; e < edges.size(); ++e) {
    auto [a, b] = edges[e];
    if (a < 0 || b < 0 || a >= n || b >= n || !layered || !is_back(a, b)) continue;
    int lo = layout.layer[b], hi = layout.layer[a];
    if (lo < 0 || hi >= layers) continue;
    float x = 0;
    for (int l = lo; l <= hi; ++l) x = std::max(x, layer_right[static_cast<size_t>(l)]);
    lane[e] = x + 14 + 10 * static_cast<float>(std::min(hi - lo, 6));
    width = std::max(width, lane[e] + 6);
    height = std::max(height, gap_below(hi) + 4);
  }
  // The scroll range from the start: a scroll the caller asks for on the first frame (the
  // AST graph opening at its root) would otherwise be clamped to the empty content of a
  // window that has not drawn yet.
  ImGui::SetNextWindowContentSize(ImVec2(width + 16, height + 16));
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_HorizontalScrollbar);
  ImVec2 origin = ImGui::GetCursorScreenPos();
  origin.x += 8, origin.y += 8;
  // Centre a small graph in the view.
  float avail = ImGui::GetContentRegionAvail().x;
  if (width + 16 < avail) origin.x += (avail - width - 16) / 2;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImU32 edge_col = IM_COL32(110, 110, 110, 255);
  // Only what is in view is drawn: a big program's graph has thousands of nodes.
  ImVec2 clip_min = dl->GetClipRectMin(), clip_max = dl->GetClipRectMax();
  auto visible = [&](ImVec2 a, ImVec2 b) {
    return std::max(a.x, b.x) >= clip_min.x && std::min(a.x, b.x) <= clip_max.x &&
           std::max(a.y, b.y) >= clip_min.y && std::min(a.y, b.y) <= clip_max.y;
  };
  for (size_t e = 0; e < edges.size(); ++e) {
    auto [a, b] = edges[e];
    if (a < 0 || b < 0 || a >= n || b >= n) continue;
    if (lane[e] >= 0) {
      // Down out of the source's bottom (right of centre, where no forward edge leaves), right
      // along the gap below its layer, up the lane, left along the gap above the target's
      // layer, down into the target's top (right of centre, where no forward edge arrives).
      int la = layout.layer[a], lb = layout.layer[b];
      float xa = origin.x + layout.pos[a].x + sizes[a].x * 0.8f;
      float xb = origin.x + layout.pos[b].x + sizes[b].x * 0.8f;
      float ya = origin.y + layout.pos[a].y + sizes[a].y, yb = origin.y + layout.pos[b].y;
      float below = origin.y + gap_below(la), above = origin.y + gap_above(lb);
      float x = origin.x + lane[e];
      if (!visible(ImVec2(std::min(xa, xb), above), ImVec2(x, below))) continue;
      const ImVec2 pts[] = {ImVec2(xa, ya), ImVec2(xa, below), ImVec2(x, below), ImVec2(x, above),
                            ImVec2(xb, above), ImVec2(xb, yb)};
      // Rounded corners: a straight run to near each corner, a quadratic curve round it.
      dl->PathLineTo(pts[0]);
      for (size_t k = 1; k + 1 < std::size(pts); ++k) {
        ImVec2 p = pts[k], in = pts[k - 1], out = pts[k + 1];
        auto dist = [](ImVec2 u, ImVec2 v) { return std::hypot(u.x - v.x, u.y - v.y); };
        float r = std::min({8.f, dist(p, in) / 2, dist(p, out) / 2});
        auto toward = [&](ImVec2 from, ImVec2 to) {
          float d = std::max(dist(from, to), 1e-3f);
          return ImVec2(from.x + (to.x - from.x) * r / d, from.y + (to.y - from.y) * r / d);
        };
        dl->PathLineTo(toward(p, in));
        dl->PathBezierQuadraticCurveTo(p, toward(p, out), 6);
      }
      dl->PathLineTo(ImVec2(xb, yb - 7));
      dl->PathStroke(edge_col, 0, 1.5f);
      dl->AddTriangleFilled(ImVec2(xb, yb), ImVec2(xb - 4, yb - 8), ImVec2(xb + 4, yb - 8), edge_col);
      continue;
    }
    ImVec2 pa(origin.x + layout.pos[a].x + sizes[a].x / 2, origin.y + layout.pos[a].y + sizes[a].y);
    ImVec2 pb(origin.x + layout.pos[b].x + sizes[b].x / 2, origin.y + layout.pos[b].y);
    if (!visible(pa, pb)) continue;
    // Through the bends: a curve across each gap between layers, a straight run down each
    // layer crossed.
    std::vector<ImVec2> pts = {pa};
    if (e < layout.bends.size())
      for (ImVec2 q : layout.bends[e]) pts.push_back(ImVec2(origin.x + q.x, origin.y + q.y));
    pts.push_back(pb);
    for (size_t k = 0; k + 1 < pts.size(); k += 2) {
      ImVec2 p = pts[k], q = pts[k + 1];
      float dy = std::max(20.f, (q.y - p.y) / 2);
      dl->AddBezierCubic(p, ImVec2(p.x, p.y + dy), ImVec2(q.x, q.y - dy), q, edge_col, 1.5f);
      if (k + 2 < pts.size()) dl->AddLine(q, pts[k + 2], edge_col, 1.5f);
    }
    dl->AddTriangleFilled(ImVec2(pb.x, pb.y), ImVec2(pb.x - 4, pb.y - 8), ImVec2(pb.x + 4, pb.y - 8),
                          edge_col);
    if (e < edge_labels.size() && !edge_labels[e].empty()) {
      ImVec2 mid((pa.x + pb.x) / 2 + 4, (pa.y + pb.y) / 2 - ImGui::GetFontSize() / 2);
      dl->AddText(mid, colors::dim(), edge_labels[e].c_str());
    }
  }
  for (int i = 0; i < n; ++i) {
    ImVec2 a(origin.x + layout.pos[i].x, origin.y + layout.pos[i].y);
    ImVec2 b(a.x + sizes[i].x, a.y + sizes[i].y);
    if (!visible(a, b)) continue;
    if (drawn) (*drawn)[i] = 1;
    const GraphNodeStyle& s = i < static_cast<int>(nodes.size()) ? nodes[i] : GraphNodeStyle{};
    bool hover = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b);
    if (hover) hovered = i;
    dl->AddRectFilled(a, b, s.fill ? s.fill : colors::node_kind(""), 4);
    if (s.highlight || hover) dl->AddRectFilled(a, b, colors::highlight(), 4);
    dl->AddRect(a, b, s.border ? s.border : IM_COL32(60, 60, 60, 255), 4, 0,
                s.highlight ? 2.5f : s.border ? 2.f : 1.f);
    const ImU32 ink = IM_COL32(20, 20, 20, 255);
    if (s.line_colors.empty()) {
      dl->AddText(ImVec2(a.x + 8, a.y + 5), ink, s.label.c_str());
    } else {
      // Line by line, each in its colour, at the line height node_size() measured with.
      float y = a.y + 5;
      size_t start = 0;
      for (size_t line = 0; start <= s.label.size(); ++line) {
        size_t end = s.label.find('\n', start);
        if (end == std::string::npos) end = s.label.size();
        ImU32 c = line < s.line_colors.size() && s.line_colors[line] ? s.line_colors[line] : ink;
        dl->AddText(ImVec2(a.x + 8, y), c, s.label.data() + start, s.label.data() + end);
        y += ImGui::GetFontSize();
        start = end + 1;
      }
    }
  }
  ImGui::Dummy(ImVec2(width + 16, height + 16));
  ImGui::EndChild();
  return hovered;
}

}  // namespace descent::viz
