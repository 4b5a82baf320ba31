// The tensor graph pane: the dataflow graph of the last tensor evaluation, before and after
// each graph pass, drawn side by side so a class sees fusion happen (linear + relu becoming
// one linear_relu node under fuse_elementwise).
//
// Everything comes from Session::graph_view() and Session::passes(); the pane adds the
// layered layout, the kind colours and the diff between the two sides (which nodes the pass
// added, removed or rewrote). The runtime keeps the snapshots of the *last* evaluation only,
// so the pane shows the graph behind the last value the program needed.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

// What to write to see a graph: shown when the program has no tensor code.
constexpr const char* kExample =
    "This program builds no tensor graph. Kernel calls build one lazily and a\n"
    "value that is needed (print, sum_all) runs it through the graph passes.\n"
    "Try, at the end of the program:\n\n"
    "  x = rand([1, 64], 1)\n"
    "  w = rand([32, 64], 2)\n"
    "  y = relu(linear(x, w))\n"
    "  print(sum_all(y))\n\n"
    "fuse_elementwise then turns linear + relu into one kernel, linear_relu.";

// A node outline that says "someone asked for this value".
constexpr ImU32 kOutputBorder = IM_COL32(200, 40, 40, 255);

// One side of the picture: a graph view and what the pane derived from it.
struct Picture {
  std::string view;   // what graph_view() was asked for
  bool ok = false;
  std::string text;   // the view as text (shown when there is no structured graph)
  std::optional<GraphData> graph;
  std::vector<bool> marked;  // nodes that differ from the other side
  std::vector<std::string> lines;
  // The layout depends on the font size (box sizes come from the text), so it is kept per
  // size: the natural one, and a smaller one when the graph has to shrink to fit its half.
  struct Laid {
    float font = 0;
    std::vector<ImVec2> sizes;
    GraphLayout layout;
  };
  Laid natural, fitted;
  std::vector<GraphNodeStyle> styles;
  std::vector<std::pair<int, int>> edges;
  std::vector<std::string> edge_labels;
};

bool has_nodes(const Picture& p) { return p.graph && !p.graph->nodes.empty(); }

void load(Picture* p, const Session& s, const std::string& view) {
  *p = Picture{};
  p->view = view;
  StageResult r = s.graph_view(view);
  p->ok = r.ok;
  p->text = r.text;
  p->graph = std::move(r.graph);
  p->lines = split_lines(p->text);
  if (!p->graph) return;
  const auto& g = *p->graph;
  std::map<int64_t, int> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].id] = static_cast<int>(i);
  // An edge carries its source's shape, which the source's box shows too; edges converging
  // on one node would pile their labels up at the same midpoint, so only a node's sole
  // input edge is labelled.
  std::map<int64_t, int> inputs;
  for (const auto& e : g.edges) ++inputs[e.to];
  for (const auto& e : g.edges) {
    auto a = index.find(e.from), b = index.find(e.to);
    if (a == index.end() || b == index.end()) continue;  // a dangling edge: draw the rest
    p->edges.emplace_back(a->second, b->second);
    p->edge_labels.push_back(inputs[e.to] == 1 ? e.label : std::string());
  }
  p->marked.assign(g.nodes.size(), false);
  for (const auto& n : g.nodes) {
    GraphNodeStyle st;
    st.label = n.label + "\n" + n.shape;
    // The backward pass (grad's nodes) in orange, as the DOT view draws it.
    st.fill = n.backward ? colors::node_kind("backward") : colors::node_kind(n.kind);
    if (n.output) st.border = kOutputBorder;
    p->styles.push_back(std::move(st));
  }
}

// Marks the nodes of `a` that `b` does not have in the same form: a new id, or the same id
// with another label, kind or shape (fusion rewrites a node in place: relu -> linear_relu).
void mark_differences(Picture* a, const Picture& b) {
  if (!a->graph || !b.graph) return;
  std::map<int64_t, const GraphData::Node*> other;
  for (const auto& n : b.graph->nodes) other[n.id] = &n;
  for (size_t i = 0; i < a->graph->nodes.size(); ++i) {
    const auto& n = a->graph->nodes[i];
    auto it = other.find(n.id);
    bool same = it != other.end() && it->second->label == n.label &&
                it->second->kind == n.kind && it->second->shape == n.shape;
    a->marked[i] = !same;
    a->styles[i].highlight = !same;
  }
}

// A dataflow graph reads best with each input just above its first consumer (a layer's
// weights beside that layer), not every input in the top row where a longest-path layering
// puts all sources: a three-layer MLP would be seven boxes wide with edges crossing the whole
// picture. layered_layout() layers by longest path, so each source gets a chain of invisible
// zero-size nodes in front of it that pushes it down to the layer above its consumer; the
// chains are appended after the real nodes and left out of the drawing.
GraphLayout dataflow_layout(const std::vector<ImVec2>& sizes,
                            const std::vector<std::pair<int, int>>& edges, float layer_gap,
                            float node_gap) {
  const int n = static_cast<int>(sizes.size());
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indeg(n, 0);
  for (auto [a, b] : edges)
    if (a >= 0 && b >= 0 && a < n && b < n && a != b) succ[a].push_back(b), ++indeg[b];
  // Longest-path layers, in Kahn's order (a cycle, which a dataflow graph cannot have,
  // just leaves its nodes at layer 0).
  std::vector<int> layer(n, 0), left = indeg, queue;
  for (int v = 0; v < n; ++v)
    if (indeg[v] == 0) queue.push_back(v);
  for (size_t q = 0; q < queue.size(); ++q)
    for (int w : succ[queue[q]]) {
      layer[w] = std::max(layer[w], layer[queue[q]] + 1);
      if (--left[w] == 0) queue.push_back(w);
    }
  std::vector<ImVec2> all = sizes;
  std::vector<std::pair<int, int>> all_edges = edges;
  for (int v = 0; v < n; ++v) {
    if (indeg[v] != 0 || succ[v].empty()) continue;
    int target = std::numeric_limits<int>::max();
    for (int w : succ[v]) target = std::min(target, layer[w] - 1);
    for (int k = 0; k < target; ++k) {
      int d = static_cast<int>(all.size());
      all.push_back(ImVec2(0, 0));
      all_edges.emplace_back(d, k + 1 < target ? d + 1 : v);
    }
  }
  return layered_layout(all, all_edges, layer_gap, node_gap);
}

const Picture::Laid& laid_out(Picture& p, float scale) {
  Picture::Laid& l = scale < 1 ? p.fitted : p.natural;
  float font = ImGui::GetFontSize();
  if (l.font == font && l.sizes.size() == p.styles.size()) return l;
  l.font = font;
  l.sizes.clear();
  for (const auto& st : p.styles) l.sizes.push_back(node_size(st.label));
  l.layout = dataflow_layout(l.sizes, p.edges, 48 * scale, 24 * scale);
  return l;
}

struct GraphPane : Pane {
  const char* name() const override { return "graph"; }
  const char* title() const override { return "Tensor graph"; }
  const char* short_title() const override { return "Graph"; }

  // ---- State ----
  uint64_t generation = std::numeric_limits<uint64_t>::max();
  std::vector<PassInfo> passes;  // the graph passes of the last evaluation, names without "graph."
  bool evaluated = false;        // there is a last evaluation (before/passes/executed)
  bool pending = false;          // nodes built but not computed yet
  std::string why_none;          // graph_view's reason when neither
  // What is shown: "pass" (before | after passes[pass]) or one view: "before", "executed",
  // "pending". `chosen` remembers that the user picked it, so a re-run keeps it when it can.
  std::string mode;
  std::string pass;
  bool chosen = false;
  // The pictures of what is shown, and the key they were made for.
  std::string shown_key;
  Picture left, right;

  int pass_index(const std::string& n) const {
    for (size_t i = 0; i < passes.size(); ++i)
      if (passes[i].name == n) return static_cast<int>(i);
    return -1;
  }

  // Opens on the graph as built: the selector then reads top to bottom as the passes ran.
  void choose_default() {
    mode = evaluated ? "before" : pending ? "pending" : "";
    pass.clear();
  }

  void refresh(Document& doc) {
    if (generation == doc.generation()) return;
    generation = doc.generation();
    const Session& s = doc.session();
    passes.clear();
    for (auto p : s.passes())
      if (p.stage == "graph") {
        if (p.name.rfind("graph.", 0) == 0) p.name = p.name.substr(6);
        passes.push_back(std::move(p));
      }
    StageResult before = s.graph_view("before");
    evaluated = before.ok;
    why_none = before.text;
    StageResult pend = s.graph_view("pending");
    pending = pend.ok && (pend.graph ? !pend.graph->nodes.empty()
                                     : pend.text.rfind("(no pending", 0) != 0);
    bool valid = (mode == "pass" && pass_index(pass) >= 0) ||
                 ((mode == "before" || mode == "executed") && evaluated) ||
                 (mode == "pending" && pending);
    if (!chosen || !valid) choose_default();
    shown_key.clear();
  }

  // Loads the pictures for the current mode (once per generation and choice).
  void prepare(Document& doc) {
    refresh(doc);
    std::string key = mode + "/" + pass;
    if (key == shown_key) return;
    shown_key = key;
    const Session& s = doc.session();
    if (mode == "pass") {
      int i = pass_index(pass);
      load(&left, s, i <= 0 ? "before" : passes[i - 1].name);
      load(&right, s, pass);
      mark_differences(&left, right);
      mark_differences(&right, left);
    } else if (!mode.empty()) {
      load(&left, s, mode);
      right = Picture{};
    } else {
      left = right = Picture{};
    }
  }

  bool select(const std::string& m, const std::string& p) {
    mode = m;
    pass = p;
    chosen = true;
    return true;
  }

  // ---- Drawing ----
  void draw_selector() {
    float row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
    int rows = static_cast<int>(passes.size()) + 2 + (pending ? 1 : 0);
    float h = std::min(rows, 7) * row + 4;
    if (!ImGui::BeginTable("passes", 3,
                           ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                               ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                           ImVec2(0, h)))
      return;
    ImGui::TableSetupColumn("#");
    ImGui::TableSetupColumn("view");
    ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
    auto entry = [&](const std::string& num, const std::string& label, const std::string& what,
                     bool selected, bool changed, auto on_click) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(label.c_str());
      if (ImGui::Selectable(num.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns))
        on_click();
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(label.c_str());
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, changed ? IM_COL32(20, 140, 50, 255) : colors::dim());
      ImGui::TextUnformatted(what.c_str());
      ImGui::PopStyleColor();
      // A long summary is cut at the pane's edge; the whole of it on hover.
      if (ImGui::IsItemHovered() && ImGui::CalcTextSize(what.c_str()).x >
                                        ImGui::GetContentRegionAvail().x)
        ImGui::SetTooltip("%s", what.c_str());
    };
    entry(" ", "before", "the graph as the program built it", mode == "before", false,
          [&] { select("before", ""); });
    for (size_t i = 0; i < passes.size(); ++i) {
      const auto& p = passes[i];
      std::string what = p.changed ? "changed: " : "no change";
      if (p.changed) what += p.summary;
      else if (!p.summary.empty()) what += " (" + p.summary + ")";
      entry(std::to_string(i + 1), p.name, what, mode == "pass" && pass == p.name, p.changed,
            [&] { select("pass", p.name); });
    }
    entry(" ", "executed", "what ran", mode == "executed", false,
          [&] { select("executed", ""); });
    if (pending)
      entry(" ", "pending", "built, not computed yet", mode == "pending", false,
            [&] { select("pending", ""); });
    ImGui::EndTable();
  }

  // One picture in a region of `size`; the graph shrinks (down to 70%) to fit its width.
  void draw_picture(const char* id, Picture& p, ImVec2 size, const char* caption) {
    ImGui::BeginChild(id, size, false, ImGuiWindowFlags_NoScrollbar);
    ImGui::TextUnformatted(caption);
    if (!p.ok) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("not available: %s", p.text.c_str());
      ImGui::PopStyleColor();
    } else if (!has_nodes(p)) {
      // No structured graph (or an empty one): the text form says the same.
      Listing("text", p.lines, ListingStyle{});
    } else {
      const Picture::Laid& base = laid_out(p, 1);
      float avail = ImGui::GetContentRegionAvail().x - 24;
      float scale = base.layout.size.x > avail ? std::max(0.7f, avail / base.layout.size.x) : 1;
      if (scale < 1) ImGui::SetWindowFontScale(scale);
      const Picture::Laid& l = scale < 1 ? laid_out(p, scale) : base;
      int hovered = DrawGraph("g", l.layout, l.sizes, p.styles, p.edges, p.edge_labels);
      if (scale < 1) ImGui::SetWindowFontScale(1);
      if (hovered >= 0) tooltip(p, hovered);
    }
    ImGui::EndChild();
  }

  void tooltip(const Picture& p, int i) {
    const auto& g = *p.graph;
    const auto& n = g.nodes[i];
    ImGui::BeginTooltip();
    ImGui::Text("%%%lld  %s  (%s)", static_cast<long long>(n.id), n.label.c_str(), n.kind.c_str());
    ImGui::Text("shape %s%s", n.shape.c_str(), n.output ? "  - an output" : "");
    std::string ins;
    for (const auto& e : g.edges)
      if (e.to == n.id) ins += (ins.empty() ? "%" : ", %") + std::to_string(e.from);
    if (!ins.empty()) ImGui::Text("inputs %s", ins.c_str());
    if (i < static_cast<int>(p.marked.size()) && p.marked[i])
      ImGui::TextUnformatted(&p == &left && mode == "pass" ? "removed or rewritten by the pass"
                                                           : "added or rewritten by the pass");
    ImGui::EndTooltip();
  }

  void Draw(Document& doc) override {
    prepare(doc);
    if (mode.empty()) {
      ImGui::TextUnformatted("not available: no tensor graph");
      if (!why_none.empty() && why_none.rfind("no tensor evaluation", 0) != 0)
        ImGui::TextWrapped("(%s)", why_none.c_str());
      ImGui::Separator();
      ImGui::TextUnformatted(kExample);
      return;
    }
    draw_selector();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()),
                       "kernel: blue  input: green  constant: grey  output: red outline");
    if (mode != "pending") {
      ImGui::SameLine();
      ImGui::TextDisabled("(?)");
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The runtime keeps the passes of its last evaluation only: this is the\n"
                          "graph behind the last tensor value the program needed.");
    }
    if (mode == "pass")
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()),
                         "yellow: nodes the pass removed or rewrote (left), added or rewrote (right)");
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (mode == "pass") {
      float w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
      std::string before = "before " + pass, after = "after " + pass;
      draw_picture("left", left, ImVec2(w, avail.y), before.c_str());
      ImGui::SameLine();
      draw_picture("right", right, ImVec2(w, avail.y), after.c_str());
    } else {
      const char* caption = mode == "before"     ? "the graph as built"
                            : mode == "executed" ? "the graph that ran (after every pass)"
                                                 : "pending: built, not computed yet";
      draw_picture("single", left, avail, caption);
    }
  }

  // ---- Scripted actions (the selector's clicks) ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    if (verb == "pass") {
      if (args.size() != 1) {
        *error = "usage: pass N|NAME";
        return false;
      }
      if (passes.empty()) {
        *error = evaluated ? "the last evaluation ran no graph passes"
                           : "no tensor evaluation: the program computed no tensor value";
        return false;
      }
      std::string a = args[0];
      if (a.rfind("graph.", 0) == 0) a = a.substr(6);
      int i = pass_index(a);
      if (i < 0 && !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit) && a.size() < 6) {
        int n = std::stoi(a);
        if (n >= 1 && n <= static_cast<int>(passes.size())) i = n - 1;
      }
      if (i < 0) {
        std::string names;
        for (size_t k = 0; k < passes.size(); ++k)
          names += (k ? ", " : "") + std::to_string(k + 1) + " " + passes[k].name;
        *error = "no graph pass '" + args[0] + "' (passes: " + names + ")";
        return false;
      }
      return select("pass", passes[i].name);
    }
    if (verb == "show") {
      if (args.size() != 1 ||
          (args[0] != "before" && args[0] != "executed" && args[0] != "pending")) {
        *error = "usage: show before|executed|pending";
        return false;
      }
      if (args[0] == "pending" ? !pending : !evaluated) {
        *error = args[0] == "pending" ? "no pending tensor computations"
                                      : "no tensor evaluation: " + why_none;
        return false;
      }
      return select(args[0], "");
    }
    return Pane::Act(doc, verb, args, error);
  }
  std::vector<std::string> verbs() const override {
    return {"pass N|NAME", "show before|executed|pending"};
  }
};

}  // namespace

std::unique_ptr<Pane> make_graph_pane() { return std::make_unique<GraphPane>(); }

}  // namespace descent::viz
