// The AST pane: the parser's tree (or the tree after constant folding) as a collapsible
// outline and as a drawn node graph, linked both ways to the source: hover a node and its
// source lights up; hover the source and the nodes that contain it light up, the innermost
// most strongly, with the outline opened down to it.
//
// The tree is flattened once per run into preorder, so that the outline can be a clipped
// list (a closed subtree is skipped in one jump: each node knows where its subtree ends)
// and the graph, the "select N" verb and the highlight all share one index per node.
//
// [SECTION] the flattened tree   [SECTION] outline   [SECTION] graph   [SECTION] Act
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

// ---- [SECTION] the flattened tree ------------------------------------------------------

// The four colours of the AST: what declares, what does, what computes, what is a value.
const char* category_of(const TreeNode& n) {
  const std::string& h = n.head;
  if (h == "fn" || h == "kernel" || h == "params" || h == "param" || h == "stage") return "decl";
  if (h == "program" || h == "block" || h == "if" || h == "while" || h == "for" ||
      h == "break" || h == "continue" || h == "return" || h.rfind("assign", 0) == 0)
    return "stmt";
  if (n.leaf || n.kids.empty()) return "leaf";
  return "expr";
}

// The category chips are pastel on either theme, so their text is always dark.
const ImVec4 kChipText(0.08f, 0.08f, 0.08f, 1);
// Types in green, dark on the light theme and light on the dark one.
ImVec4 type_color() {
  ImVec4 t = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  return t.x + t.y + t.z < 1.5f ? ImVec4(0, 0.43f, 0.24f, 1) : ImVec4(0.5f, 0.85f, 0.6f, 1);
}

struct Node {
  const TreeNode* tree = nullptr;
  int parent = -1, depth = 0;
  int end = 0;          // one past the last node of this subtree, in preorder
  SourceRange range;    // [loc, end) in the source, or invalid
  const char* category = "expr";
  std::string label;    // the graph's box text
};

// Preorder with a work list, not recursion: a 100,000-term sum is a tree that deep, and the
// window's thread has an ordinary stack.
void flatten(const TreeNode& root, std::vector<Node>& out) {
  struct Open {
    int self;
    size_t next_kid;
  };
  std::vector<Open> path;
  auto enter = [&](const TreeNode& t, int parent) {
    Node n;
    n.tree = &t;
    n.parent = parent;
    n.depth = static_cast<int>(path.size());
    n.category = category_of(t);
    n.label = t.leaf && !t.atom.empty() ? t.atom : t.atom.empty() ? t.head : t.head + " " + t.atom;
    if (!t.type.empty()) n.label += "\n: " + t.type;
    path.push_back({static_cast<int>(out.size()), 0});
    out.push_back(std::move(n));
  };
  enter(root, -1);
  while (!path.empty()) {
    Open& top = path.back();
    const TreeNode& t = *out[static_cast<size_t>(top.self)].tree;
    if (top.next_kid < t.kids.size()) {
      int self = top.self;
      enter(t.kids[top.next_kid++], self);
    } else {
      out[static_cast<size_t>(top.self)].end = static_cast<int>(out.size());
      path.pop_back();
    }
  }
}

// A tidy tree layout: each depth is a row; leaves go left to right in preorder, a parent
// sits centred over its children, and a subtree moves right as a whole when a row it
// shares with earlier subtrees is already taken. (layered_layout, made for dataflow
// graphs, orders each row by barycentre only, which scatters a subtree across its row.)
GraphLayout tidy_tree_layout(const std::vector<Node>& nodes, const std::vector<ImVec2>& sizes,
                             float row_gap, float node_gap) {
  GraphLayout out;
  const int n = static_cast<int>(nodes.size());
  out.pos.assign(n, ImVec2(0, 0));
  out.layer.assign(n, 0);
  if (n == 0) return out;
  int depths = 0;
  for (const Node& nd : nodes) depths = std::max(depths, nd.depth + 1);
  std::vector<float> next_x(depths, 0);  // the first free x in each row
  // Postorder over the preorder array: a node's children are placed before it.
  std::vector<int> kids_first(n, -1), kids_last(n, -1);
  for (int i = 1; i < n; ++i) {
    int p = nodes[i].parent;
    if (kids_first[p] < 0) kids_first[p] = i;
    kids_last[p] = i;
  }
  auto place = [&](auto&& self, int v) -> void {
    int d = nodes[v].depth;
    float x;
    if (kids_first[v] < 0) {
      x = next_x[d];
    } else {
      for (int k = v + 1; k < nodes[v].end; k = nodes[k].end) self(self, k);
      float a = out.pos[kids_first[v]].x + sizes[kids_first[v]].x / 2;
      float b = out.pos[kids_last[v]].x + sizes[kids_last[v]].x / 2;
      x = (a + b) / 2 - sizes[v].x / 2;
      if (x < next_x[d]) {
        // The row is taken here: move this whole subtree right, and re-mark its rows.
        float delta = next_x[d] - x;
        x += delta;
        for (int k = v + 1; k < nodes[v].end; ++k) out.pos[k].x += delta;
        for (int k = v + 1; k < nodes[v].end; ++k)
          next_x[nodes[k].depth] =
              std::max(next_x[nodes[k].depth], out.pos[k].x + sizes[k].x + node_gap);
      }
    }
    out.pos[v].x = x;
    out.layer[v] = d;
    next_x[d] = x + sizes[v].x + node_gap;
  };
  place(place, 0);
  std::vector<float> row_h(depths, 0), row_y(depths, 0);
  for (int i = 0; i < n; ++i) row_h[nodes[i].depth] = std::max(row_h[nodes[i].depth], sizes[i].y);
  for (int d = 1; d < depths; ++d) row_y[d] = row_y[d - 1] + row_h[d - 1] + row_gap;
  float width = 0;
  for (int i = 0; i < n; ++i) {
    out.pos[i].y = row_y[nodes[i].depth] + (row_h[nodes[i].depth] - sizes[i].y) / 2;
    width = std::max(width, out.pos[i].x + sizes[i].x);
  }
  out.size = ImVec2(width, row_y[depths - 1] + row_h[depths - 1]);
  return out;
}

struct AstPane : Pane {
  const char* name() const override { return "ast"; }
  const char* title() const override { return "AST"; }
  std::vector<std::string> verbs() const override {
    return {"view tree|graph", "folded on|off", "select N|off", "expand all|none",
            "zoom fit|in|out|100"};
  }

  bool graph_view_ = false;
  bool folded_ = false;
  int selected_ = -1;  // the "select" verb's node, hovered until the mouse takes over

  // Cached per (generation, folded).
  uint64_t gen_ = ~0ull;
  bool cached_folded_ = false;
  StageResult stage_;            // owns the tree that nodes_ point into
  std::vector<Node> nodes_;
  std::vector<char> open_;       // outline: is node i open?
  bool layout_dirty_ = true;     // the graph layout needs the font: computed in Draw
  std::vector<ImVec2> sizes_;
  GraphLayout layout_;
  std::vector<std::pair<int, int>> edges_;

  // Highlight state, recomputed when hovered() changes.
  SourceRange last_hov_{1, 0};
  int innermost_ = -1;
  std::vector<char> on_path_;    // node contains hovered().begin
  int scroll_to_ = -1;           // bring this node into view (outline row / graph box)

  // The graph's zoom: the font scale it is drawn at (the layout follows the font).
  float zoom_ = 1;
  bool fit_request_ = false;     // choose the zoom that shows the whole tree, next frame
  float layout_font_ = 0;        // the font size layout_ was made for
  std::string caption_;

  void refresh(Document& doc) {
    if (gen_ == doc.generation() && cached_folded_ == folded_) return;
    gen_ = doc.generation();
    cached_folded_ = folded_;
    stage_ = doc.session().stage(folded_ ? "ast-folded" : "ast");
    nodes_.clear();
    if (stage_.ok && stage_.tree) flatten(*stage_.tree, nodes_);
    // Ranges: [loc, end) where the tree gives an end; otherwise the span of the node's own
    // token and all its descendants' (children come after their parent in preorder, so a
    // backwards sweep sees every child before its parent).
    for (Node& n : nodes_) n.range = doc.range_of(n.tree->loc, n.tree->end);
    for (int i = static_cast<int>(nodes_.size()) - 1; i > 0; --i) {
      Node& n = nodes_[i];
      Node& p = nodes_[n.parent];
      if (!n.range.valid() || p.tree->end.valid()) continue;
      if (!p.range.valid()) p.range = n.range;
      p.range.begin = std::min(p.range.begin, n.range.begin);
      p.range.end = std::max(p.range.end, n.range.end);
    }
    // Small trees start fully open; big ones at their statements.
    open_.assign(nodes_.size(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i)
      open_[i] = nodes_.size() <= 120 || nodes_[i].depth < 2;
    edges_.clear();
    for (size_t i = 1; i < nodes_.size(); ++i) edges_.push_back({nodes_[i].parent, static_cast<int>(i)});
    layout_dirty_ = true;
    last_hov_ = SourceRange{1, 0};
    if (selected_ >= static_cast<int>(nodes_.size())) selected_ = -1;
  }

  void update_highlight(SourceRange hov) {
    if (hov == last_hov_) return;
    last_hov_ = hov;
    on_path_.assign(nodes_.size(), 0);
    innermost_ = -1;
    if (!hov.valid()) return;
    int best_contains_all = -1, best_contains_begin = -1;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      SourceRange r = nodes_[i].range;
      if (!r.contains(hov.begin)) continue;
      on_path_[i] = 1;
      // Preorder: a later match on the path is deeper, so the last one is the innermost.
      best_contains_begin = static_cast<int>(i);
      if (hov.end <= r.end) best_contains_all = static_cast<int>(i);
    }
    innermost_ = best_contains_all >= 0 ? best_contains_all : best_contains_begin;
    // Open the outline down to it, so the highlight is never inside a closed node.
    for (int p = innermost_ >= 0 ? nodes_[innermost_].parent : -1; p >= 0; p = nodes_[p].parent)
      open_[p] = 1;
    scroll_to_ = innermost_;
  }

  // ---- [SECTION] outline ---------------------------------------------------------------

  int draw_outline() {
    std::vector<int> visible;
    visible.reserve(nodes_.size());
    for (int i = 0; i < static_cast<int>(nodes_.size());)
      visible.push_back(i), i = open_[i] ? i + 1 : nodes_[i].end;

    int hovered = -1;
    ImGui::BeginChild("##outline", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    float row_h = ImGui::GetFrameHeight();  // a tree node's row: framed-height, unframed text
    float indent = ImGui::GetStyle().IndentSpacing;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    bool window_hovered = ImGui::IsWindowHovered();
    if (scroll_to_ >= 0) {
      auto it = std::find(visible.begin(), visible.end(), scroll_to_);
      if (it != visible.end() && !window_hovered) {
        float y = static_cast<float>(it - visible.begin()) * row_h;
        float top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
        if (y < top || y + row_h * 2 > top + h) ImGui::SetScrollY(std::max(0.f, y - h / 3));
      }
      scroll_to_ = -1;
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(visible.size()), row_h);
    float x0 = ImGui::GetCursorPosX();
    while (clipper.Step()) {
      for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
        int i = visible[row];
        const Node& n = nodes_[i];
        const TreeNode& t = *n.tree;
        ImVec2 p = ImGui::GetCursorScreenPos();
        float w = ImGui::GetWindowWidth() + ImGui::GetScrollX();
        if (i == innermost_)
          dl->AddRectFilled(ImVec2(p.x - 4, p.y), ImVec2(p.x + w, p.y + row_h), colors::highlight());
        else if (!on_path_.empty() && on_path_[i])
          dl->AddRectFilled(ImVec2(p.x - 4, p.y), ImVec2(p.x + w, p.y + row_h), IM_COL32(255, 214, 10, 40));
        ImGui::SetCursorPosX(x0 + n.depth * indent);
        ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_NoTreePushOnOpen |
                                   ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_FramePadding;
        if (t.kids.empty()) flags |= ImGuiTreeNodeFlags_Leaf;
        ImGui::SetNextItemOpen(open_[i] != 0, ImGuiCond_Always);
        ImGui::PushID(i);
        ImGui::PushStyleColor(ImGuiCol_Header, 0);  // the frame stays clear: our rows colour it
        bool open = ImGui::TreeNodeEx("##n", flags);
        ImGui::PopStyleColor();
        ImGui::PopID();
        if (!t.kids.empty()) open_[i] = open;
        if (ImGui::IsItemHovered()) hovered = i;
        // The label: the head on its category's colour, then the atom, type and detail.
        ImGui::SameLine(0, 0);
        ImVec2 hp = ImGui::GetCursorScreenPos();
        ImVec2 hs = ImGui::CalcTextSize(t.head.c_str());
        float pad_y = ImGui::GetStyle().FramePadding.y;
        dl->AddRectFilled(ImVec2(hp.x - 2, hp.y + pad_y - 1),
                          ImVec2(hp.x + hs.x + 2, hp.y + pad_y + hs.y + 1),
                          colors::node_kind(n.category), 3);
        ImGui::AlignTextToFramePadding();
        ImGui::TextColored(kChipText, "%s", t.head.c_str());
        if (!t.atom.empty()) {
          ImGui::SameLine();
          ImGui::TextUnformatted(t.atom.c_str());
        }
        if (!t.type.empty()) {
          ImGui::SameLine();
          ImGui::TextColored(type_color(), ": %s", t.type.c_str());
        }
        if (!t.detail.empty()) {
          ImGui::SameLine();
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "%s", t.detail.c_str());
        }
        if (t.loc.valid()) {
          ImGui::SameLine();
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), " %u:%u", t.loc.line,
                             t.loc.col);
        }
      }
    }
    clipper.End();
    ImGui::EndChild();
    return hovered;
  }

  // ---- [SECTION] graph -----------------------------------------------------------------

  // The graph at the current zoom. A tree is wider than tall, and its root sits centred
  // over the whole width: opening the view scrolls to the root (or the selected node), and
  // "fit" zooms out until the whole tree shows.
  int draw_graph() {
    ImVec2 view = ImGui::GetContentRegionAvail();
    bool fitted = false;
    if (fit_request_) {
      // Boxes keep their padding and text snaps to pixels, so the layout does not shrink
      // exactly with the zoom: shrink until it fits (or the zoom reaches its minimum).
      fit_request_ = false;
      fitted = true;
      float z = 1;
      for (int tries = 0; tries < 8; ++tries) {
        ImGui::SetWindowFontScale(z);
        relayout(z);
        float fx = (view.x - 24) / std::max(1.f, layout_.size.x + 16);
        float fy = (view.y - 24) / std::max(1.f, layout_.size.y + 16);
        float f = std::min(fx, fy);
        if (f >= 1 || z <= kMinZoom) break;
        z = std::max(kMinZoom, z * f * 0.98f);
      }
      zoom_ = z;
      scroll_to_ = -1;
    }
    ImGui::SetWindowFontScale(zoom_);
    relayout(zoom_);
    std::vector<GraphNodeStyle> styles(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      styles[i].label = nodes_[i].label;
      styles[i].fill = colors::node_kind(nodes_[i].category);
      styles[i].highlight = static_cast<int>(i) == innermost_;
      if (!on_path_.empty() && on_path_[i] && static_cast<int>(i) != innermost_)
        styles[i].border = IM_COL32(230, 150, 0, 255);
    }
    if (scroll_to_ >= 0 && scroll_to_ < static_cast<int>(nodes_.size())) {
      // DrawGraph draws at (8, 8) inside its child, centred only when the graph is narrower
      // than the view (and then needs no horizontal scroll).
      ImVec2 p = layout_.pos[scroll_to_], s = sizes_[scroll_to_];
      if (!ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows))
        ImGui::SetNextWindowScroll(ImVec2(std::max(0.f, 8 + p.x + s.x / 2 - view.x / 2),
                                          std::max(0.f, 8 + p.y + s.y / 2 - view.y / 3)));
      scroll_to_ = -1;
    }
    if (fitted) ImGui::SetNextWindowScroll(ImVec2(0, 0));
    std::vector<char> drawn;
    int hovered = DrawGraph("##astgraph", layout_, sizes_, styles, edges_, {}, ImVec2(0, 0), &drawn);
    ImGui::SetWindowFontScale(1);
    int shown = static_cast<int>(std::count(drawn.begin(), drawn.end(), 1));
    caption_ = "graph: " + std::to_string(shown) + " of " + std::to_string(nodes_.size()) +
               " nodes in view, root " + (!drawn.empty() && drawn[0] ? "in view" : "off screen") +
               ", zoom " + std::to_string(static_cast<int>(zoom_ * 100 + 0.5f)) + "%";
    return hovered;
  }

  static constexpr float kMinZoom = 0.2f;

  // Node boxes and the tree layout at the current font size (`scale` of the natural one:
  // the gaps between boxes shrink with the text).
  void relayout(float scale) {
    if (!layout_dirty_ && layout_font_ == ImGui::GetFontSize()) return;
    layout_font_ = ImGui::GetFontSize();
    sizes_.clear();
    for (const Node& n : nodes_) sizes_.push_back(node_size(n.label));
    layout_ = tidy_tree_layout(nodes_, sizes_, 36 * scale, 10 * scale);
    layout_dirty_ = false;
  }

  void set_zoom(float z) {
    zoom_ = std::clamp(z, kMinZoom, 2.f);
    scroll_to_ = innermost_ >= 0 ? innermost_ : 0;
  }

  void Draw(Document& doc) override {
    refresh(doc);
    if (ImGui::RadioButton("tree", !graph_view_)) graph_view_ = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("graph", graph_view_) && !graph_view_) open_graph();
    ImGui::SameLine(0, 20);
    bool folded = folded_;
    if (ImGui::Checkbox("after constant folding", &folded)) set_folded(doc, folded);
    if (!graph_view_) {
      ImGui::SameLine(0, 20);
      if (ImGui::SmallButton("expand all")) expand(true);
      ImGui::SameLine();
      if (ImGui::SmallButton("collapse")) expand(false);
    } else {
      ImGui::SameLine(0, 20);
      if (ImGui::SmallButton("fit")) fit_request_ = true;
      ImGui::SameLine();
      if (ImGui::SmallButton("-")) set_zoom(zoom_ / 1.25f);
      ImGui::SameLine();
      if (ImGui::SmallButton("+")) set_zoom(zoom_ * 1.25f);
      ImGui::SameLine();
      if (ImGui::SmallButton("1:1")) set_zoom(1);
      if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && ImGui::GetIO().KeyCtrl &&
          ImGui::GetIO().MouseWheel != 0)
        set_zoom(zoom_ * (ImGui::GetIO().MouseWheel > 0 ? 1.1f : 1 / 1.1f));
    }
    ImGui::SameLine(0, 20);
    const char* cats[] = {"stmt", "expr", "leaf", "decl"};
    for (const char* c : cats) {
      ImGui::SameLine();
      ImVec2 p = ImGui::GetCursorScreenPos();
      ImVec2 s = ImGui::CalcTextSize(c);
      float pad = ImGui::GetStyle().FramePadding.y;
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x - 2, p.y + pad - 1),
                                                ImVec2(p.x + s.x + 2, p.y + pad + s.y + 1),
                                                colors::node_kind(c), 3);
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(kChipText, "%s", c);
    }

    if (nodes_.empty()) {
      if (doc.generation() == 0) ImGui::TextDisabled("not available: nothing compiled yet");
      else if (!stage_.ok) ImGui::TextDisabled("not available: %s", stage_.text.c_str());
      else ImGui::TextDisabled("not available: the stage has no tree");
      return;
    }
    if (selected_ >= 0) doc.hover_source(nodes_[selected_].range);
    update_highlight(doc.hovered());
    if (selected_ >= 0) innermost_ = selected_;  // not a deeper node with the same range
    int hovered = graph_view_ ? draw_graph() : draw_outline();
    if (hovered >= 0) {
      selected_ = -1;  // the real mouse takes over from a scripted selection
      if (nodes_[hovered].range.valid()) doc.hover_source(nodes_[hovered].range);
      if (graph_view_) {
        const TreeNode& t = *nodes_[hovered].tree;
        ImGui::BeginTooltip();
        ImGui::Text("%s %s%s%s", t.head.c_str(), t.atom.c_str(), t.type.empty() ? "" : " : ",
                    t.type.c_str());
        if (t.loc.valid()) ImGui::TextDisabled("at %u:%u", t.loc.line, t.loc.col);
        ImGui::EndTooltip();
      }
    }
  }

  // Into the graph view: at the selected node, else at the root (centred over the whole
  // width, so a wide tree scrolled to the left edge showed no root at all).
  void open_graph() {
    graph_view_ = true;
    scroll_to_ = innermost_ >= 0 ? innermost_ : 0;
  }

  std::string caption() const override { return graph_view_ ? caption_ : ""; }

  void set_folded(Document& doc, bool on) {
    folded_ = on;
    refresh(doc);
  }
  void expand(bool all) {
    for (size_t i = 0; i < open_.size(); ++i) open_[i] = all || i == 0;
  }

  // ---- [SECTION] Act -------------------------------------------------------------------

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    std::string a = args.size() == 1 ? args[0] : "";
    if (verb == "view") {
      if (a != "tree" && a != "graph") {
        *error = "usage: ast view tree|graph";
        return false;
      }
      if (a == "graph" && !graph_view_) open_graph();
      graph_view_ = a == "graph";
      if (!graph_view_) scroll_to_ = innermost_;
      return true;
    }
    if (verb == "zoom") {
      float percent = 0;
      if (a == "fit") fit_request_ = true;
      else if (a == "in") set_zoom(zoom_ * 1.25f);
      else if (a == "out") set_zoom(zoom_ / 1.25f);
      else if (std::sscanf(a.c_str(), "%f", &percent) == 1 && percent >= kMinZoom * 100 &&
               percent <= 200)
        set_zoom(percent / 100);
      else {
        *error = "usage: ast zoom fit|in|out|PERCENT (20 to 200)";
        return false;
      }
      return true;
    }
    if (verb == "folded") {
      if (a != "on" && a != "off") {
        *error = "usage: ast folded on|off";
        return false;
      }
      set_folded(doc, a == "on");
      return true;
    }
    if (verb == "expand") {
      if (a != "all" && a != "none") {
        *error = "usage: ast expand all|none";
        return false;
      }
      expand(a == "all");
      return true;
    }
    if (verb == "select") {
      if (a == "off" || a == "none") {
        selected_ = -1;
        return true;
      }
      int n = -1;
      if (std::sscanf(a.c_str(), "%d", &n) != 1 || n < 0) {
        *error = "usage: ast select N (0-based, preorder) or select off";
        return false;
      }
      if (n >= static_cast<int>(nodes_.size())) {
        *error = nodes_.empty() ? "the AST is not available"
                                : "no node " + a + " (there are " + std::to_string(nodes_.size()) + ")";
        return false;
      }
      selected_ = scroll_to_ = n;
      doc.hover_source(nodes_[n].range);
      // Open it and its ancestors, even if its range is shared with a deeper node.
      for (int p = nodes_[n].parent; p >= 0; p = nodes_[p].parent) open_[p] = 1;
      return true;
    }
    *error = "ast has no action '" + std::string(verb) +
             "' (view tree|graph, folded on|off, select N, expand all|none, zoom fit|in|out|N)";
    return false;
  }
};

}  // namespace

std::unique_ptr<Pane> make_ast_pane() { return std::make_unique<AstPane>(); }

}  // namespace descent::viz
