// The native pane: the native x86-64 backend (native/backend.h) at work on one body of the
// last input (its top-level code or one of its functions), stage by stage.
//
//   - dag, legal, combine, isel: each basic block's selection DAG, drawn. A block is a box
//     (a cluster, its heading on top), a node a box with its text; value edges run from an
//     operand down to its user as grey curves, chain edges (the order of side effects) dashed
//     in blue. Before isel a node is tinted by what it is (an int, a float, a side effect);
//     after isel by the pattern that covered it: one colour per pattern index, the same in
//     every program, and a legend lists the patterns used. Hovering a node shows its text
//     and its pattern; hovering a legend entry lights up the nodes that pattern covered.
//   - sched, regalloc, asm: the backend's own text, as `descent dump --stage native-*`
//     prints it.
//
// Everything comes from Session::native_graphs() and Session::stage("native-*"); the pane adds
// the layout and the colours. The layout is layered_layout (widgets.h) per block, as the
// analysis pane lays out its CFG: a node's row is its longest path from the leaves, so
// constants and registers sit on top and the block's terminator at the bottom; the blocks
// follow in their order, left to right and then down, as many to a row as the view holds.
//
// Limits, said on screen: a body's first kMaxNodes nodes are drawn (the rest are counted);
// the backend compiles on the window's thread and its scheduler and allocator take seconds
// on one very long block, so an input whose longest body has more than kSlowBody virtual
// instructions is compiled only when asked (the Compute button, `native compute`).
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

struct StageDef {
  const char* key;  // the verb's argument; the Session's stage is "native-" + key
  bool graph;       // drawn (a DAG stage) or shown as text
};
const StageDef kStages[] = {{"dag", true},     {"legal", true},     {"combine", true}, {"isel", true},
                            {"sched", false},  {"regalloc", false}, {"asm", false}};
constexpr int kNumStages = 7;

constexpr size_t kMaxNodes = 1500;   // drawn per body
constexpr size_t kSlowBody = 8000;   // virtual instructions in one body: compile on request
constexpr size_t kLabelColumns = 56; // a node's box shows this much of its text

// Colours: value edges grey, chain edges blue; node tints that read with dark ink on the
// light and the dark theme alike.
constexpr ImU32 kValueEdge = IM_COL32(120, 120, 120, 255);
constexpr ImU32 kChainEdge = IM_COL32(40, 110, 210, 255);
constexpr ImU32 kInk = IM_COL32(20, 20, 20, 255);
constexpr ImU32 kIntFill = IM_COL32(205, 224, 245, 255);     // an int (or bool) value
constexpr ImU32 kFloatFill = IM_COL32(205, 238, 200, 255);   // a float value
constexpr ImU32 kEffectFill = IM_COL32(250, 228, 190, 255);  // a side effect, on the chain
constexpr ImU32 kUncovered = IM_COL32(235, 235, 235, 255);   // isel: no pattern of its own
constexpr ImU32 kLabelColor = IM_COL32(20, 70, 160, 255);    // text views: block labels

// Pattern p's colour: a hue 0.6385 of a turn on from p-1's, in three saturations and two
// values, so a pattern keeps its colour from program to program. The step was chosen to keep
// the patterns a small program uses together (fib's, a loop's) apart; the golden ratio put
// IMM32 (0) and CMP64ri32 (21), which cover a compare together, on the same hue.
ImU32 pattern_color(int p) {
  if (p < 0) return kUncovered;
  static const float sat[] = {0.28f, 0.42f, 0.56f}, val[] = {0.97f, 0.88f};
  float h = std::fmod(0.08f + static_cast<float>(p) * 0.6385f, 1.f);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(h, sat[p % 3], val[(p / 3) % 2], r, g, b);
  return IM_COL32(static_cast<int>(r * 255), static_cast<int>(g * 255), static_cast<int>(b * 255), 255);
}

// The kind of a node from its text ("n4: i64 = add n2, n3", "n3: brcond b3, n2, ch n1").
ImU32 kind_fill(const std::string& label) {
  if (label.find(": f64 = ") != std::string::npos) return kFloatFill;
  if (label.find(" = ") != std::string::npos) return kIntFill;
  return kEffectFill;
}

std::string clip(const std::string& s, size_t n = kLabelColumns) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// True when an item `w` wide still fits on this line (then it goes there).
bool same_line_if_fits(float w) {
  float right = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w;
  if (right > ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) return false;
  ImGui::SameLine();
  return true;
}

// A polyline drawn in dashes.
void dashed(ImDrawList* dl, const std::vector<ImVec2>& pts, ImVec2 at, ImU32 col, float width) {
  const float dash = 6, gap = 4;
  float phase = 0;  // distance into the current dash+gap period
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    ImVec2 a(at.x + pts[i].x, at.y + pts[i].y), b(at.x + pts[i + 1].x, at.y + pts[i + 1].y);
    float len = std::hypot(b.x - a.x, b.y - a.y), done = 0;
    while (done < len) {
      float left = (phase < dash ? dash : dash + gap) - phase;
      float step = std::min(left, len - done);
      if (phase < dash) {
        float t0 = done / len, t1 = (done + step) / len;
        dl->AddLine(ImVec2(a.x + (b.x - a.x) * t0, a.y + (b.y - a.y) * t0),
                    ImVec2(a.x + (b.x - a.x) * t1, a.y + (b.y - a.y) * t1), col, width);
      }
      done += step;
      phase = std::fmod(phase + step, dash + gap);
    }
  }
}

// One body at one stage, laid out for one font size: what the graph view draws. Each block
// is laid out on its own (coordinates inside its cluster); flow() then places the clusters
// left to right and top to bottom in the width of the view, as text flows.
struct Picture {
  int stage = -1, body = -1;
  float font = 0;
  std::vector<int> node;           // drawn node i: its index into BodyGraph::nodes
  std::vector<int> cluster;        // drawn node i: its cluster
  std::vector<ImVec2> pos, size;   // inside its cluster
  std::vector<std::string> label;  // clipped to kLabelColumns
  struct Edge {
    int from, to;                  // drawn nodes (of one cluster)
    bool chain;
    std::vector<ImVec2> pts;       // the curve, sampled, inside the cluster
  };
  std::vector<Edge> edges;
  struct Cluster {
    ImVec2 size;
    std::string heading;
    ImVec2 at;                     // its top-left corner in the picture (flow())
  };
  std::vector<Cluster> clusters;
  float gap = 0;                   // between clusters
  float flowed_for = -1;           // the width flow() placed the clusters in
  ImVec2 extent;                   // of the placed clusters
  size_t hidden_nodes = 0;         // past kMaxNodes
  int partial_block = -1;          // the block cut short by the cap
};

// Places the clusters in rows no wider than `width` (a cluster wider than that has a row of
// its own), in block order.
void flow(Picture& p, float width) {
  p.flowed_for = width;
  p.extent = ImVec2(0, 0);
  float x = 0, y = 0, row = 0;
  for (auto& c : p.clusters) {
    if (x > 0 && x + c.size.x > width) x = 0, y += row + p.gap, row = 0;
    c.at = ImVec2(x, y);
    x += c.size.x + p.gap;
    row = std::max(row, c.size.y);
    p.extent = ImVec2(std::max(p.extent.x, c.at.x + c.size.x), std::max(p.extent.y, c.at.y + c.size.y));
  }
}

// Lays out body `g`'s blocks top to bottom, each with layered_layout.
Picture lay_out(const native::BodyGraph& g) {
  Picture p;
  p.font = ImGui::GetFontSize();
  const float pad = em(10), head = ImGui::GetFontSize() + em(6), gap = em(18);
  const size_t nb = g.blocks.size();
  std::vector<std::vector<int>> in_block(nb);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int b = g.nodes[i].block;
    if (b >= 0 && static_cast<size_t>(b) < nb) in_block[static_cast<size_t>(b)].push_back(static_cast<int>(i));
  }
  std::vector<int> drawn(g.nodes.size(), -1);  // node index -> drawn index
  std::vector<std::vector<size_t>> block_edges(nb);
  for (size_t e = 0; e < g.edges.size(); ++e) {
    int to = g.edges[e].to;
    if (to >= 0 && static_cast<size_t>(to) < g.nodes.size()) {
      int b = g.nodes[static_cast<size_t>(to)].block;
      if (b >= 0 && static_cast<size_t>(b) < nb) block_edges[static_cast<size_t>(b)].push_back(e);
    }
  }
  p.gap = gap;
  for (size_t b = 0; b < nb; ++b) {
    const auto& ids = in_block[b];
    size_t room = kMaxNodes - std::min(kMaxNodes, p.node.size());
    size_t take = std::min(ids.size(), room);
    if (take < ids.size()) {
      p.hidden_nodes += ids.size() - take;
      if (take > 0) p.partial_block = static_cast<int>(b);
    }
    if (take == 0 && !ids.empty()) continue;
    const size_t first = p.node.size();
    std::vector<ImVec2> sizes;
    for (size_t k = 0; k < take; ++k) {
      int i = ids[k];
      drawn[static_cast<size_t>(i)] = static_cast<int>(p.node.size());
      p.node.push_back(i);
      p.label.push_back(clip(g.nodes[static_cast<size_t>(i)].label));
      sizes.push_back(node_size(p.label.back()));
    }
    // The block's edges between drawn nodes, as local indices; one per pair for the layout
    // (a print of n2 chained after n2 has a value and a chain edge from n2).
    std::vector<std::pair<int, int>> pairs;
    std::map<std::pair<int, int>, size_t> pair_of;
    struct Local { int a, b; bool chain; size_t pair; };
    std::vector<Local> local;
    for (size_t e : block_edges[b]) {
      const auto& ge = g.edges[e];
      if (ge.from < 0 || static_cast<size_t>(ge.from) >= g.nodes.size()) continue;
      int a = drawn[static_cast<size_t>(ge.from)], c = drawn[static_cast<size_t>(ge.to)];
      if (a < static_cast<int>(first) || c < static_cast<int>(first)) continue;
      std::pair<int, int> key(a - static_cast<int>(first), c - static_cast<int>(first));
      auto [it, fresh] = pair_of.emplace(key, pairs.size());
      if (fresh) pairs.push_back(key);
      local.push_back({key.first, key.second, ge.chain, it->second});
    }
    GraphLayout l = layered_layout(sizes, pairs, em(30), em(14));
    float head_w = ImGui::CalcTextSize(g.blocks[b].c_str()).x;
    float w = std::max(l.size.x, head_w) + 2 * pad;
    float h = head + (take ? l.size.y + pad : 0) + pad;
    p.clusters.push_back({ImVec2(w, h), g.blocks[b], ImVec2(0, 0)});
    ImVec2 at(pad + std::max(0.f, (w - 2 * pad - l.size.x) / 2), head + pad);
    for (size_t k = 0; k < take; ++k) {
      p.pos.push_back(ImVec2(at.x + l.pos[k].x, at.y + l.pos[k].y));
      p.size.push_back(sizes[k]);
      p.cluster.push_back(static_cast<int>(p.clusters.size()) - 1);
    }
    // Each edge: out of the operand's bottom, through the bends layered_layout gave its pair,
    // into the user's top; a curve across each gap between rows, straight down a row crossed.
    // A chain edge runs a few pixels to the right, so one beside a value edge shows.
    for (const Local& e : local) {
      size_t fa = first + static_cast<size_t>(e.a), fb = first + static_cast<size_t>(e.b);
      float dx = e.chain ? em(5) : 0;
      std::vector<ImVec2> via = {ImVec2(p.pos[fa].x + p.size[fa].x / 2 + dx, p.pos[fa].y + p.size[fa].y)};
      if (e.pair < l.bends.size())
        for (ImVec2 q : l.bends[e.pair]) via.push_back(ImVec2(at.x + q.x + dx, at.y + q.y));
      via.push_back(ImVec2(p.pos[fb].x + p.size[fb].x / 2 + dx, p.pos[fb].y));
      Picture::Edge out{static_cast<int>(fa), static_cast<int>(fb), e.chain, {via[0]}};
      for (size_t k = 0; k + 1 < via.size(); k += 2) {
        ImVec2 s = via[k], t = via[k + 1];
        float dy = std::max(em(20), (t.y - s.y) / 2);
        ImVec2 c1(s.x, s.y + dy), c2(t.x, t.y - dy);
        if (t.y <= s.y) c1 = s, c2 = t;  // not downwards (should not happen in a DAG): straight
        for (int j = 1; j <= 12; ++j) {
          float u = static_cast<float>(j) / 12, v = 1 - u;
          out.pts.push_back(ImVec2(v * v * v * s.x + 3 * v * v * u * c1.x + 3 * v * u * u * c2.x + u * u * u * t.x,
                                   v * v * v * s.y + 3 * v * v * u * c1.y + 3 * v * u * u * c2.y + u * u * u * t.y));
        }
        if (k + 2 < via.size()) out.pts.push_back(via[k + 2]);
      }
      p.edges.push_back(std::move(out));
    }
  }
  return p;
}

struct NativePane : Pane {
  const char* name() const override { return "native"; }
  const char* title() const override { return "Native backend"; }
  const char* short_title() const override { return "Native"; }
  std::vector<std::string> verbs() const override {
    return {"stage dag|legal|combine|isel|sched|regalloc|asm", "function NAME|N (<top> is the top level)",
            "hover BLOCK NODE|off (b1 n3: that node's tooltip)", "compute (a very long body: compile it anyway)"};
  }
  std::string caption() const override { return caption_; }

  // ---- What is shown (the controls) ----
  int stage_ = 3;           // index into kStages: isel, the stage with the most to see
  std::string target_ = "x86-64";  // the machine described (native/target.h): x86-64 or aarch64
  std::string body_name_;   // carried across edits: the same body if it is still there
  int hover_block_ = -1, hover_node_ = -1;  // a scripted hover (the mouse takes over)
  int legend_hover_ = -2;   // a legend entry under the mouse: its pattern (-1: none), -2: no entry

  // ---- What was loaded, for one generation ----
  uint64_t generation_ = std::numeric_limits<uint64_t>::max();
  bool compiled_ = false;     // a run has finished
  bool has_errors_ = false;   // it did not compile
  size_t longest_ = 0;        // virtual instructions in the longest body
  std::string longest_name_;
  bool compute_ = false;      // asked to compile a body longer than kSlowBody
  std::map<int, std::vector<native::BodyGraph>> graphs_;  // per graph stage
  std::map<int, std::vector<std::vector<std::string>>> texts_;  // per text stage: per body, its lines
  std::map<int, std::vector<std::vector<std::string>>> other_texts_;  // the same for the other target
  bool compare_ = false;  // text stages: the other target's beside (native compare on)
  std::vector<std::string> bodies_;  // "<top>", "fn fib": the function selector's entries
  int body_ = 0;
  Picture picture_;
  std::string caption_;
  std::string hover_text_;  // the hovered node, for the caption ("hover b1 n2: ... [CMP64ri32]")

  bool slow() const { return longest_ > kSlowBody && !compute_; }

  void refresh(Document& doc) {
    if (generation_ == doc.generation()) return;
    generation_ = doc.generation();
    compiled_ = doc.generation() > 0;
    has_errors_ = compiled_ && doc.outcome().status == Outcome::CompileError;
    graphs_.clear();
    texts_.clear();
    other_texts_.clear();
    bodies_.clear();
    picture_ = Picture{};
    compute_ = false;
    longest_ = 0;
    longest_name_.clear();
    if (!compiled_ || has_errors_) return;
    // The size of the longest body, from the virtual register code the backend starts from.
    std::map<std::string, size_t> count;
    for (const CodeLine& l : doc.session().listing("reg"))
      if (l.pc >= 0) ++count[l.function];
    for (const auto& [fn, n] : count)
      if (n > longest_) longest_ = n, longest_name_ = fn;
    if (!slow()) load_bodies(doc);
  }

  // The bodies (the function selector), from the DAG stage; the one shown before, if it is
  // still there.
  void load_bodies(Document& doc) {
    const auto& dag = graphs(doc, 0);
    bodies_.clear();
    for (size_t i = 0; i < dag.size(); ++i)
      bodies_.push_back(dag[i].name.empty() ? "body " + std::to_string(i) + " (not compiled)" : dag[i].name);
    body_ = 0;
    for (size_t i = 0; i < bodies_.size(); ++i)
      if (bodies_[i] == body_name_) body_ = static_cast<int>(i);
    // A new input: the first function rather than the top level, which is mostly a call.
    if (body_ == 0 && body_name_.empty() && bodies_.size() > 1) body_ = 1;
    if (!bodies_.empty()) body_name_ = bodies_[static_cast<size_t>(body_)];
  }

  // The Session's stages for the target this pane shows (set on each fetch: the Session is
  // shared, and its own default follows :target).
  std::vector<native::BodyGraph> fetch(Document& doc, int stage, const std::string& target = "") {
    std::string error;
    doc.session().set_native_target(target.empty() ? target_ : target, &error);
    auto g = doc.session().native_graphs(kStages[stage].key);
    doc.session().set_native_target("", &error);
    return g;
  }

  const std::vector<native::BodyGraph>& graphs(Document& doc, int stage) {
    auto it = graphs_.find(stage);
    if (it == graphs_.end()) it = graphs_.emplace(stage, fetch(doc, stage)).first;
    return it->second;
  }

  // ", on aarch64" in the caption when the pane shows the second target.
  std::string on_target() const { return target_ == "x86-64" ? "" : ", on " + target_; }

  void set_target(const std::string& t) {
    if (t == target_) return;
    target_ = t;
    graphs_.clear();
    texts_.clear();
    other_texts_.clear();
    picture_ = Picture{};
    hover_block_ = hover_node_ = -1;
  }

  // A text stage, body by body, as the Session gives it.
  // The other target (compare_): x86-64's beside AArch64's, or the other way round.
  std::string other_target() const { return target_ == "x86-64" ? "aarch64" : "x86-64"; }

  const std::vector<std::string>* text(Document& doc, int stage, std::string* error, bool other = false) {
    auto& cache = other ? other_texts_ : texts_;
    if (!cache.count(stage)) {
      auto& sections = cache[stage];
      sections.assign(bodies_.size(), {});
      for (const native::BodyGraph& g : fetch(doc, stage, other ? other_target() : ""))
        for (size_t i = 0; i < bodies_.size(); ++i)
          if (g.name == bodies_[i]) sections[i] = g.error.empty() ? split_lines(g.text) : split_lines(g.error);
      for (auto& sec : sections)
        while (!sec.empty() && sec.back().empty()) sec.pop_back();
    }
    const auto& sections = cache[stage];
    if (static_cast<size_t>(body_) >= sections.size()) {
      *error = "no code";
      return nullptr;
    }
    return &sections[static_cast<size_t>(body_)];
  }

  const native::BodyGraph* body(Document& doc) {
    const auto& gs = graphs(doc, stage_);
    return static_cast<size_t>(body_) < gs.size() ? &gs[static_cast<size_t>(body_)] : nullptr;
  }

  void select_body(int b) {
    if (b < 0 || static_cast<size_t>(b) >= bodies_.size()) return;
    body_ = b;
    body_name_ = bodies_[static_cast<size_t>(b)];
    hover_block_ = hover_node_ = -1;
  }

  // ---- Drawing ----
  void draw_controls() {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("stage");
    for (int i = 0; i < kNumStages; ++i) {
      const char* key = kStages[i].key;
      same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(key).x + em(8));
      if (ImGui::RadioButton(key, stage_ == i)) stage_ = i, hover_block_ = hover_node_ = -1;
      if (ImGui::IsItemHovered())
        for (const StageInfo& s : Session::stages())
          if (std::string_view(s.name) == std::string("native-") + key) ImGui::SetTooltip("%s", s.description);
    }
    ImGui::AlignTextToFramePadding();  // a row of its own: the machine, then the function
    ImGui::TextUnformatted("target");
    for (const char* t : {"x86-64", "aarch64"}) {
      same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(t).x + em(8));
      if (ImGui::RadioButton(t, target_ == t)) set_target(t);
    }
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("beside").x + em(8));
    ImGui::Checkbox("beside", &compare_);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the text stages (sched, regalloc, asm) of the other target beside");
    if (bodies_.empty()) return;
    float w = em(160);
    same_line_if_fits(ImGui::CalcTextSize("function").x + w + em(8));
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("function");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w);
    if (ImGui::BeginCombo("##body", bodies_[static_cast<size_t>(body_)].c_str())) {
      for (size_t i = 0; i < bodies_.size(); ++i)
        if (ImGui::Selectable(bodies_[i].c_str(), static_cast<int>(i) == body_)) select_body(static_cast<int>(i));
      ImGui::EndCombo();
    }
  }

  // The patterns a body's nodes used, by index, with how many nodes each covered.
  static std::map<int, std::pair<std::string, int>> patterns_of(const native::BodyGraph& g) {
    std::map<int, std::pair<std::string, int>> used;
    for (const auto& n : g.nodes) {
      auto& u = used[n.pattern];
      u.first = n.pattern >= 0 ? n.pattern_name : "(no pattern of its own)";
      ++u.second;
    }
    return used;
  }

  void draw_legend(const native::BodyGraph& g) {
    legend_hover_ = -2;
    if (std::string_view(kStages[stage_].key) != "isel") {
      struct Key { ImU32 col; const char* what; } keys[] = {
          {kIntFill, "int value"}, {kFloatFill, "float value"}, {kEffectFill, "side effect"}};
      ImGui::TextDisabled("nodes:");
      for (const Key& k : keys) {
        same_line_if_fits(ImGui::GetFontSize() + ImGui::CalcTextSize(k.what).x + em(8));
        swatch(k.col);
        ImGui::SameLine();
        ImGui::TextUnformatted(k.what);
      }
      edge_keys();
      return;
    }
    ImGui::TextDisabled("patterns:");
    for (const auto& [p, u] : patterns_of(g)) {
      std::string label = fmt::format("{} ({})", u.first, u.second);
      same_line_if_fits(ImGui::GetFontSize() + ImGui::CalcTextSize(label.c_str()).x + em(8));
      ImGui::BeginGroup();
      swatch(pattern_color(p));
      ImGui::SameLine();
      ImGui::TextUnformatted(label.c_str());
      ImGui::EndGroup();
      if (ImGui::IsItemHovered()) {
        legend_hover_ = p;
        ImGui::SetTooltip("%s covers %s (lit up in the graph)", u.first.c_str(), plural(size_t(u.second), "node", "nodes").c_str());
      }
    }
    edge_keys();
  }
  static void swatch(ImU32 col) {
    ImVec2 a = ImGui::GetCursorScreenPos();
    float s = ImGui::GetFontSize();
    ImGui::Dummy(ImVec2(s, s));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(a, ImVec2(a.x + s, a.y + s), col, 3);
    dl->AddRect(a, ImVec2(a.x + s, a.y + s), IM_COL32(60, 60, 60, 255), 3);
  }
  static void edge_keys() {
    ImGui::TextDisabled("edges:");
    ImGui::SameLine();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kValueEdge), "operand -> user (solid)");
    same_line_if_fits(ImGui::CalcTextSize("chain: side-effect order (dashed)").x);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kChainEdge), "chain: side-effect order (dashed)");
  }

  // The graph of body g: clusters, edges, nodes; hovering a node shows its tooltip.
  void draw_graph(const native::BodyGraph& g) {
    Picture& p = picture_;
    // The view's width, less the frame's padding and a vertical scroll bar.
    float view = ImGui::GetContentRegionAvail().x - 16 - 2 * ImGui::GetStyle().WindowPadding.x -
                 ImGui::GetStyle().ScrollbarSize;
    if (p.flowed_for != view) flow(p, view);
    ImGui::SetNextWindowContentSize(ImVec2(p.extent.x + 16, p.extent.y + 16));
    ImGui::BeginChild("##dag", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImVec2 top = ImGui::GetCursorScreenPos();
    top.x += 8, top.y += 8;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 cmin = dl->GetClipRectMin(), cmax = dl->GetClipRectMax();
    // Where cluster c's inside starts on screen, and whether a box there is in view.
    auto origin = [&](int c) {
      ImVec2 at = p.clusters[static_cast<size_t>(c)].at;
      return ImVec2(top.x + at.x, top.y + at.y);
    };
    auto visible = [&](ImVec2 o, ImVec2 a, ImVec2 b) {
      return a.x + o.x <= cmax.x && b.x + o.x >= cmin.x && a.y + o.y <= cmax.y && b.y + o.y >= cmin.y;
    };
    // The node under the mouse (or the scripted one), found first so its edges stand out.
    int hovered = -1;
    const bool mouse = ImGui::IsWindowHovered();
    if (mouse && (ImGui::GetIO().MouseDelta.x != 0 || ImGui::GetIO().MouseDelta.y != 0))
      hover_block_ = hover_node_ = -1;
    for (size_t i = 0; i < p.node.size(); ++i) {
      const auto& n = g.nodes[static_cast<size_t>(p.node[i])];
      ImVec2 o = origin(p.cluster[i]);
      ImVec2 a(o.x + p.pos[i].x, o.y + p.pos[i].y), b(a.x + p.size[i].x, a.y + p.size[i].y);
      if ((mouse && ImGui::IsMouseHoveringRect(a, b)) || (n.block == hover_block_ && n.id == hover_node_))
        hovered = static_cast<int>(i);
    }
    for (const auto& c : p.clusters) {
      ImVec2 a(top.x + c.at.x, top.y + c.at.y), b(a.x + c.size.x, a.y + c.size.y);
      if (!visible(ImVec2(0, 0), a, b)) continue;
      dl->AddRectFilled(a, b, IM_COL32(128, 128, 128, 22), 6);
      dl->AddRect(a, b, IM_COL32(128, 128, 128, 160), 6, 0, 1.5f);
      dl->AddText(ImVec2(a.x + em(8), a.y + em(4)), colors::dim(), c.heading.c_str());
    }
    for (const auto& e : p.edges) {
      ImVec2 o = origin(p.cluster[static_cast<size_t>(e.from)]);
      ImVec2 lo = e.pts.front(), hi = e.pts.front();
      for (ImVec2 q : e.pts) lo = ImVec2(std::min(lo.x, q.x), std::min(lo.y, q.y)), hi = ImVec2(std::max(hi.x, q.x), std::max(hi.y, q.y));
      if (!visible(o, lo, hi)) continue;
      bool lit = hovered >= 0 && (e.from == hovered || e.to == hovered);
      ImU32 col = e.chain ? kChainEdge : lit ? colors::text() : kValueEdge;
      float w = lit ? 2.5f : 1.5f;
      if (e.chain) {
        dashed(dl, e.pts, o, col, w);
      } else {
        std::vector<ImVec2> pts;
        for (ImVec2 q : e.pts) pts.push_back(ImVec2(o.x + q.x, o.y + q.y));
        dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, w);
      }
      ImVec2 tip(o.x + e.pts.back().x, o.y + e.pts.back().y);
      dl->AddTriangleFilled(tip, ImVec2(tip.x - 4, tip.y - 8), ImVec2(tip.x + 4, tip.y - 8), col);
    }
    const bool isel = std::string_view(kStages[stage_].key) == "isel";
    for (size_t i = 0; i < p.node.size(); ++i) {
      ImVec2 o = origin(p.cluster[i]);
      ImVec2 a(o.x + p.pos[i].x, o.y + p.pos[i].y), b(a.x + p.size[i].x, a.y + p.size[i].y);
      if (!visible(ImVec2(0, 0), a, b)) continue;
      const auto& n = g.nodes[static_cast<size_t>(p.node[i])];
      dl->AddRectFilled(a, b, isel ? pattern_color(n.pattern) : kind_fill(n.label), 4);
      bool lit = static_cast<int>(i) == hovered || (isel && legend_hover_ != -2 && n.pattern == legend_hover_);
      if (lit) dl->AddRectFilled(a, b, colors::highlight(), 4);
      dl->AddRect(a, b, IM_COL32(60, 60, 60, 255), 4, 0, lit ? 2.5f : 1.f);
      dl->AddText(ImVec2(a.x + 8, a.y + 5), kInk, p.label[i].c_str());
    }
    ImGui::Dummy(ImVec2(p.extent.x + 16, p.extent.y + 16));
    ImGui::EndChild();
    if (hovered >= 0) {
      const auto& n = g.nodes[static_cast<size_t>(p.node[static_cast<size_t>(hovered)])];
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(n.label.c_str());
      if (isel)
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kLabelColor), "%s",
                           n.pattern >= 0 ? ("pattern " + n.pattern_name).c_str()
                                          : "no pattern of its own: covered inside a larger tree, or a leaf");
      if (n.block >= 0 && static_cast<size_t>(n.block) < g.blocks.size())
        ImGui::TextDisabled("block %s", g.blocks[static_cast<size_t>(n.block)].c_str());
      ImGui::EndTooltip();
      hover_text_ = "hover b" + std::to_string(n.block) + " " + n.label +
                    (isel ? " [" + (n.pattern >= 0 ? n.pattern_name : std::string("no pattern")) + "]" : "");
    }
  }

  void draw_text(const std::vector<std::string>& lines, const char* id = "##text") {
    ListingStyle st;
    st.color = [&](int i) -> ImU32 {
      const std::string& l = lines[static_cast<size_t>(i)];
      if (!l.empty() && l[0] == ';') return colors::dim();
      if (!l.empty() && l[0] != ' ' && l.back() == ':') return kLabelColor;  // b3:, .L2:
      return 0;
    };
    Listing(id, lines, st);
  }

  std::string graph_caption(const native::BodyGraph& g) const {
    size_t chain = 0;
    for (const auto& e : g.edges) chain += e.chain;
    std::string c = fmt::format("{}: {}, {}, {}, {} value and {} chain edges", kStages[stage_].key, g.name,
                                plural(g.blocks.size(), "block", "blocks"), plural(g.nodes.size(), "node", "nodes"),
                                g.edges.size() - chain, chain);
    if (std::string_view(kStages[stage_].key) == "isel") {
      std::string names;
      size_t n = 0;
      for (const auto& [p, u] : patterns_of(g))
        if (p >= 0) names += (n++ ? ", " : "") + u.first;
      c += "; " + plural(n, "pattern", "patterns") + ": " + names;
    }
    if (picture_.hidden_nodes)
      c += fmt::format("; drawn: the first {} nodes ({} not drawn)", picture_.node.size(), picture_.hidden_nodes);
    return c;
  }

  void Draw(Document& doc) override {
    refresh(doc);
    hover_text_.clear();
    draw_controls();
    auto say = [&](ImU32 col, const std::string& what) {
      caption_ = what;
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      ImGui::TextWrapped("%s", what.c_str());
      ImGui::PopStyleColor();
    };
    if (!compiled_) return say(colors::dim(), "nothing compiled yet");
    if (has_errors_) return say(colors::error(), "the input has errors: the native backend needs a program that "
                                                  "parses and checks (the editor lists the errors)");
    if (slow()) {
      say(colors::dim(), fmt::format("not compiled yet: {} has {} virtual instructions, and the native backend "
                                     "(its scheduler and register allocator) takes seconds on a body that long, "
                                     "on the window's thread", longest_name_, longest_));
      if (ImGui::Button("Compute (the window waits)")) compute(doc);
      return;
    }
    if (bodies_.empty()) return say(colors::dim(), "no code for the native backend");
    const StageDef& st = kStages[stage_];
    if (!st.graph) {
      std::string error;
      const std::vector<std::string>* lines = text(doc, stage_, &error);
      if (!lines) return say(colors::error(), std::string(st.key) + " not available: " + error);
      caption_ = fmt::format("{}: {}, {}{}", st.key, bodies_[static_cast<size_t>(body_)],
                             plural(lines->size(), "line", "lines"), on_target());
      const std::vector<std::string>* beside = compare_ ? text(doc, stage_, &error, true) : nullptr;
      if (beside)
        caption_ += fmt::format("; beside it: {}, {}", other_target(), plural(beside->size(), "line", "lines"));
      ImGui::TextDisabled("%s", caption_.c_str());
      if (!beside) {
        draw_text(*lines);
        return;
      }
      // Two columns, this target's on the left: the same function's stage on both machines.
      if (ImGui::BeginTable("##compare", 2, ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV)) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(target_.c_str());
        draw_text(*lines, "##text");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(other_target().c_str());
        draw_text(*beside, "##text2");
        ImGui::EndTable();
      }
      return;
    }
    const native::BodyGraph* g = body(doc);
    if (!g) return say(colors::error(), std::string(st.key) + ": no such body");
    if (!g->error.empty()) return say(colors::error(), std::string(st.key) + " not available: " + g->error);
    if (picture_.stage != stage_ || picture_.body != body_ || picture_.font != ImGui::GetFontSize()) {
      picture_ = lay_out(*g);
      picture_.stage = stage_;
      picture_.body = body_;
    }
    std::string c = graph_caption(*g);
    c = c.substr(0, c.find("; ")) + on_target() + (c.find("; ") == std::string::npos ? "" : c.substr(c.find("; ")));
    ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
    ImGui::TextWrapped("%s", c.substr(0, c.find("; ")).c_str());
    ImGui::PopStyleColor();
    if (picture_.hidden_nodes) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s", fmt::format("too large to draw whole: the first {} nodes are drawn, {} more{} are "
                                           "not (`descent dump --stage native-{}` prints them all)",
                                           picture_.node.size(), picture_.hidden_nodes,
                                           picture_.partial_block >= 0 ? fmt::format(" (from b{} on)", picture_.partial_block) : "",
                                           st.key).c_str());
      ImGui::PopStyleColor();
    }
    draw_legend(*g);
    draw_graph(*g);
    caption_ = c + (hover_text_.empty() ? "" : "; " + hover_text_);
  }

  void compute(Document& doc) {
    compute_ = true;
    load_bodies(doc);
  }

  // ---- Scripted actions: the functions the controls call ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    auto fail = [&](std::string why) {
      *error = std::move(why);
      return false;
    };
    if (verb == "compare") {
      if (args.size() != 1 || (args[0] != "on" && args[0] != "off"))
        return fail("usage: native compare on|off (the text stages of the other target beside)");
      compare_ = args[0] == "on";
      return true;
    }
    if (verb == "target") {
      if (args.size() != 1 || !native::find_target(args[0]))
        return fail("usage: native target x86-64|aarch64");
      set_target(native::find_target(args[0])->name);
      return true;
    }
    if (verb == "stage") {
      for (int i = 0; i < kNumStages; ++i)
        if (args.size() == 1 && args[0] == kStages[i].key) {
          stage_ = i;
          hover_block_ = hover_node_ = -1;
          return true;
        }
      return fail("usage: native stage dag|legal|combine|isel|sched|regalloc|asm");
    }
    const bool known = verb == "function" || verb == "hover" || verb == "compute";
    if (!known) return Pane::Act(doc, verb, args, error);
    if (!compiled_) return fail("nothing compiled yet");
    if (has_errors_) return fail("the input has errors, so the native backend has no code");
    if (verb == "compute") {
      if (!args.empty()) return fail("usage: native compute");
      compute(doc);
      return true;
    }
    if (slow()) return fail("not compiled yet (a very long body): native compute first");
    if (verb == "function") {
      if (args.size() != 1) return fail("usage: native function NAME|N");
      std::string names;
      for (size_t i = 0; i < bodies_.size(); ++i) {
        if (bodies_[i] == args[0] || bodies_[i] == "fn " + args[0] || std::to_string(i) == args[0]) {
          select_body(static_cast<int>(i));
          return true;
        }
        names += (i ? ", " : "") + bodies_[i];
      }
      return fail("no function '" + args[0] + "' (bodies: " + names + ")");
    }
    // hover
    if (args.size() == 1 && args[0] == "off") {
      hover_block_ = hover_node_ = -1;
      return true;
    }
    auto number = [](std::string_view s, char prefix, int* out) {
      if (!s.empty() && (s[0] == prefix || s[0] == prefix - 32)) s.remove_prefix(1);
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
    };
    int b = -1, n = -1;
    if (args.size() != 2 || !number(args[0], 'b', &b) || !number(args[1], 'n', &n))
      return fail("usage: native hover BLOCK NODE|off (e.g. b1 n3)");
    if (!kStages[stage_].graph) return fail(std::string("the ") + kStages[stage_].key + " stage is text, not a graph");
    const native::BodyGraph* g = body(doc);
    bool found = false;
    if (g)
      for (const auto& node : g->nodes) found = found || (node.block == b && node.id == n);
    if (!found) return fail(fmt::format("no node b{} n{} in {} at {}", b, n, body_name_, kStages[stage_].key));
    hover_block_ = b;
    hover_node_ = n;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pane> make_native_pane() { return std::make_unique<NativePane>(); }

}  // namespace descent::viz
