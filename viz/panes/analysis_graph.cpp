// The analysis pane's graph view (analysis_internal.h): the control-flow graph of one
// function, each basic block a box with its entry state (the fixpoint, Result::block_states)
// above its instructions; loop heads, where widening happens, outlined in purple; back edges
// run round the right-hand side. With the solver-step controls, every box shows the state
// the solver had for it once step k was done (analysis_steps.h), and the facts step k
// changed are starred in its phase's colour.
//
// Apart from the source view (analysis_source.cpp) because it speaks of blocks: its layout
// and text are computed once per result, function, filter and font, and its styles once per
// cursor position.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_internal.h>  // SetNextWindowScroll, as the AST pane uses it

#include <algorithm>

#include "viz/panes/analysis_internal.h"
#include "viz/panes/analysis_steps.h"
#include "viz/panes/source_colors.h"

namespace descent::viz::analysis_internal {

namespace {

constexpr ImU32 kHeadColor = IM_COL32(90, 90, 90, 255);     // a block's heading
constexpr ImU32 kQuietColor = IM_COL32(140, 140, 140, 255); // "no step yet", "unreachable"
constexpr ImU32 kLoopHead = IM_COL32(148, 103, 189, 255);   // loop heads: where widening happens
constexpr ImU32 kUnreachableFill = IM_COL32(225, 225, 225, 255);
constexpr ImU32 kLitFill = IM_COL32(255, 236, 160, 255);    // a block of the hovered source

// A box shows one line of code or one fact at most this long (a 100,000-term expression is
// one instruction); the tooltip has it whole.
constexpr size_t kBoxColumns = 64;
std::string clip(const std::string& s, size_t n = kBoxColumns) {
  if (s.size() <= n) return s;
  size_t cut = n - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "...";
}

}  // namespace

// ---- The graph ----
// The heading, instructions and size of every block of fn_, and the layout: once per
// result, function, filter and font. A box is as tall and wide as its largest state over
// the whole trace, so the boxes stay put while the slider moves.
void AnalysisPane::prepare_graph() {
  const an::FunctionCfg* g = function();
  float font = ImGui::GetFontSize();
  if (!g || (graph_.result == result_.get() && graph_.fn == fn_ &&
             graph_.counters == counters_ && graph_.font == font))
    return;
  graph_ = Graph{};
  drawn_.clear();
  graph_.result = result_.get();
  graph_.fn = fn_;
  graph_.counters = counters_;
  graph_.font = font;
  for (const auto& v : g->vars)
    if (v.slot < 0) graph_.hidden.insert(v.name);
  const size_t n = g->blocks.size();
  graph_.heads.resize(n);
  graph_.code.resize(n);
  graph_.code_full.resize(n);
  std::vector<float> widest(n, 0);
  std::vector<size_t> facts(n, 1);
  auto measure = [&](size_t b, const std::vector<std::string>& state) {
    size_t shown = 0;
    for (const auto& f : state)
      if (visible_fact(f)) {
        ++shown;
        widest[b] = std::max(widest[b], ImGui::CalcTextSize(("* " + clip(f)).c_str()).x);
      }
    facts[b] = std::max(facts[b], shown);
  };
  // The instructions as text: the printer recurses once per level of an expression, and
  // the parser allows 100,000 levels, more than the window thread's stack holds.
  on_big_stack([&] {
    for (size_t b = 0; b < n; ++b) {
      const an::BasicBlock& bb = g->blocks[b];
      for (const auto& in : bb.instrs) graph_.code_full[b].push_back(an::instr_text(*g, in));
      graph_.code_full[b].push_back(an::term_text(*g, bb));
    }
  });
  for (size_t b = 0; b < n; ++b) {
    const an::BasicBlock& bb = g->blocks[b];
    graph_.heads[b] = "B" + std::to_string(bb.id) + " " + bb.label + (bb.loop_head ? "  (loop head)" : "");
    for (const auto& line : graph_.code_full[b]) {
      graph_.code[b].push_back(clip(line));
      widest[b] = std::max(widest[b], ImGui::CalcTextSize(graph_.code[b].back().c_str()).x);
    }
    widest[b] = std::max(widest[b], ImGui::CalcTextSize(graph_.heads[b].c_str()).x);
    for (const char* placeholder : {"  (no step yet)", "  (no variable has a value yet)", "  (only loop counters)"})
      widest[b] = std::max(widest[b], ImGui::CalcTextSize(placeholder).x);
    if (static_cast<size_t>(fn_) < result_->block_states.size() &&
        b < result_->block_states[static_cast<size_t>(fn_)].size())
      measure(b, result_->block_states[static_cast<size_t>(fn_)][b]);
  }
  for (const auto& s : result_->trace)
    if (s.function == fn_ && s.block >= 0 && static_cast<size_t>(s.block) < n)
      measure(static_cast<size_t>(s.block), s.state);
  for (size_t b = 0; b < n; ++b) {
    size_t lines = 1 + facts[b] + graph_.code[b].size();
    graph_.sizes.emplace_back(widest[b] + 16, static_cast<float>(lines) * font + 10);
  }
  // Edges; the back edges (to a block on the depth-first path from the entry: a loop's
  // jump back to its head) are left out of the layering, so the loop body reads top to
  // bottom and the back edge goes round the side. Iterative: a program can be long.
  std::vector<std::pair<int, int>> forward, back;
  std::vector<std::string> forward_labels, back_labels;
  std::vector<char> state(n, 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<std::pair<int, size_t>> stack;
  auto label_of = [&](const an::BasicBlock& bb, size_t j) -> std::string {
    if (bb.term == an::TermKind::Branch) return j == 0 ? "true" : "false";
    if (bb.term == an::TermKind::LoopTest) return j == 0 ? "body" : "exit";
    return "";
  };
  auto classify = [&](int from, size_t j, bool is_back) {
    int to = g->blocks[static_cast<size_t>(from)].succs[j];
    (is_back ? back : forward).emplace_back(from, to);
    (is_back ? back_labels : forward_labels).push_back(label_of(g->blocks[static_cast<size_t>(from)], j));
  };
  for (size_t root = 0; root < n; ++root) {  // the entry first, then unreachable blocks
    if (state[root]) continue;
    state[root] = 1;
    stack.emplace_back(static_cast<int>(root), 0);
    while (!stack.empty()) {
      auto& [v, j] = stack.back();
      const auto& succs = g->blocks[static_cast<size_t>(v)].succs;
      if (j >= succs.size()) {
        state[static_cast<size_t>(v)] = 2;
        stack.pop_back();
        continue;
      }
      int from = v;
      size_t k = j++;
      int w = succs[k];
      if (w < 0 || static_cast<size_t>(w) >= n) continue;
      classify(from, k, state[static_cast<size_t>(w)] == 1);
      if (state[static_cast<size_t>(w)] == 0) {
        state[static_cast<size_t>(w)] = 1;
        stack.emplace_back(w, 0);
      }
    }
  }
  graph_.layout = layered_layout(graph_.sizes, forward, 40, 28);
  graph_.edges = forward;
  graph_.edges.insert(graph_.edges.end(), back.begin(), back.end());
  graph_.edge_labels = forward_labels;
  graph_.edge_labels.insert(graph_.edge_labels.end(), back_labels.begin(), back_labels.end());
}

bool AnalysisPane::visible_fact(const std::string& fact) const {
  if (counters_) return true;
  // A fact reads "NAME in [..]", "NAME = ..", "NAME: any", "NAME > 0": its variable is the
  // text before the first space or colon.
  std::string var = fact.substr(0, fact.find_first_of(" :"));
  return !graph_.hidden.count(var);
}

// The boxes' text and colours for the current view (the fixpoint or step k).
void AnalysisPane::prepare_styles(std::pair<int, int> lit_lines) {
  const an::FunctionCfg* g = function();
  if (!g) return;
  std::string key = fmt::format("{}/{}/{}/{}", stepping_, step_, lit_lines.first, lit_lines.second);
  if (key == graph_.styles_key) return;
  graph_.styles_key = key;
  const size_t n = g->blocks.size();
  graph_.styles.assign(n, GraphNodeStyle{});
  graph_.shown_state.assign(n, {});
  graph_.shown_from.assign(n, -1);
  std::vector<int> from;
  int current = -1;
  std::vector<std::string> before;  // the current block's state before step k
  const an::SolverStep* step = nullptr;
  if (stepping_ && step_ < trace_size()) {
    from = latest_steps(*result_, fn_, step_);
    step = &result_->trace[static_cast<size_t>(step_)];
    if (step->function == fn_) current = step->block;
    int prev = previous_step(*result_, step_);
    if (prev >= 0) before = result_->trace[static_cast<size_t>(prev)].state;
  }
  for (size_t b = 0; b < n; ++b) {
    const an::BasicBlock& bb = g->blocks[b];
    GraphNodeStyle& st = graph_.styles[b];
    std::string label = graph_.heads[b];
    st.line_colors.push_back(kHeadColor);
    bool reached = true;
    std::vector<std::string> facts;
    if (step) {
      int j = b < from.size() ? from[b] : -1;
      reached = j >= 0;
      if (reached) facts = result_->trace[static_cast<size_t>(j)].state;
      graph_.shown_from[b] = j;
    } else if (static_cast<size_t>(fn_) < result_->block_states.size() &&
               b < result_->block_states[static_cast<size_t>(fn_)].size()) {
      facts = result_->block_states[static_cast<size_t>(fn_)][b];
    }
    graph_.shown_state[b] = facts;
    bool unreachable = facts.size() == 1 && facts[0] == "unreachable";
    size_t shown = 0;
    for (const auto& f : facts) {
      if (!visible_fact(f)) continue;
      ++shown;
      // What step k changed: the facts of its block it did not have before, starred (and
      // in the phase's colour), so the change reads without colour too.
      bool changed = static_cast<int>(b) == current &&
                     std::find(before.begin(), before.end(), f) == before.end();
      label += (changed ? "\n* " : "\n  ") + clip(f);
      st.line_colors.push_back(changed ? phase_color(step->phase) : unreachable ? kQuietColor : kFactColor);
    }
    if (shown == 0) {
      label += !reached ? "\n  (no step yet)" : facts.empty() ? "\n  (no variable has a value yet)" : "\n  (only loop counters)";
      st.line_colors.push_back(kQuietColor);
    }
    for (const auto& line : graph_.code[b]) {
      label += "\n" + line;
      st.line_colors.push_back(0);
    }
    st.label = std::move(label);
    if (unreachable || !reached) st.fill = kUnreachableFill;
    bool lit = false;
    if (lit_lines.first > 0) {
      auto in = [&](uint32_t line) {
        return static_cast<int>(line) >= lit_lines.first && static_cast<int>(line) <= lit_lines.second;
      };
      lit = in(bb.loc.line);
      for (const auto& i : bb.instrs) lit = lit || in(i.loc.line);
    }
    if (lit && !unreachable && reached) st.fill = kLitFill;
    if (bb.loop_head) st.border = kLoopHead;
    if (static_cast<int>(b) == current) {
      st.highlight = true;
      st.border = phase_color(step->phase);
    }
  }
}

// ---- Drawing ----

void AnalysisPane::draw_graph_controls() {
  const auto& fns = result_->cfg.functions;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("function");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em(150));
  if (ImGui::BeginCombo("##function", fns[static_cast<size_t>(fn_)].name.c_str())) {
    for (size_t i = 0; i < fns.size(); ++i)
      if (ImGui::Selectable(fns[i].name.c_str(), static_cast<int>(i) == fn_)) select_function(static_cast<int>(i));
    ImGui::EndCombo();
  }
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("loop counters").x);
  ImGui::Checkbox("loop counters", &counters_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the hidden variables of a for loop: i.next (the value i takes next)\n"
                      "and i.end (the bound, evaluated once)");
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("fixpoint").x);
  if (ImGui::RadioButton("fixpoint", !stepping_)) {
    stepping_ = false;
    playing_ = false;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("each block's entry state once the solver has finished");
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("solver steps").x);
  if (trace_size() == 0) ImGui::BeginDisabled();
  if (ImGui::RadioButton("solver steps", stepping_)) go_to_step(step_);
  if (trace_size() == 0) ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("step through the solver: each step recomputes one block's entry state");
  if (!stepping_) return;
  const int n = trace_size();
  if (ImGui::Button("|<")) go_to_step(0);
  ImGui::SameLine();
  if (ImGui::Button("<")) go_to_step(step_ - 1);
  ImGui::SameLine();
  if (ImGui::Button(">")) go_to_step(step_ + 1);
  ImGui::SameLine();
  if (ImGui::Button(">|")) go_to_step(n - 1);
  ImGui::SameLine();
  if (ImGui::Button(playing_ ? "Pause" : "Play")) {
    if (!playing_ && step_ >= n - 1) go_to_step(0);
    playing_ = !playing_;
    played_at_ = ImGui::GetTime();
  }
  ImGui::SameLine();
  if (ImGui::Button("next unrolled")) next_phase("unrolling", nullptr);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the next iteration of a loop run one by one (--unroll), before any widening");
  ImGui::SameLine();
  if (ImGui::Button("next widening")) next_phase("widening", nullptr);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the next step that widens a loop head (at the program's constants first)");
  ImGui::SameLine();
  int shown = step_ + 1;
  ImGui::SetNextItemWidth(std::max(em(80), ImGui::GetContentRegionAvail().x));
  if (ImGui::SliderInt("##step", &shown, 1, n, "step %d")) {
    go_to_step(shown - 1);
    playing_ = false;
  }
  if (playing_ && ImGui::GetTime() - played_at_ > 0.15) {  // about seven steps a second
    played_at_ = ImGui::GetTime();
    if (step_ + 1 >= n) playing_ = false;
    else go_to_step(step_ + 1);
  }
}

// The graph of fn_ as of the cursor, scrolled to the block the cursor moved to; the box under
// the mouse has a tooltip, and a click on it moves the cursor to the next step computing it.
void AnalysisPane::draw_graph(Document& doc) {
  prepare_graph();
  prepare_styles(hovered_source_lines(doc));
  if (scroll_graph_to_ >= 0 && static_cast<size_t>(scroll_graph_to_) < graph_.sizes.size()) {
    // Only when the block is out of view, so playing through a loop does not jerk the
    // picture about. DrawGraph draws at (8, 8) in its child (centred when narrower than
    // the view, and then it needs no horizontal scroll).
    size_t b = static_cast<size_t>(scroll_graph_to_);
    if (drawn_.size() != graph_.sizes.size() || !drawn_[b]) {
      ImVec2 view = ImGui::GetContentRegionAvail();
      ImVec2 p = graph_.layout.pos[b], sz = graph_.sizes[b];
      ImGui::SetNextWindowScroll(ImVec2(std::max(0.f, 8 + p.x + sz.x / 2 - view.x / 2),
                                        std::max(0.f, 8 + p.y + sz.y / 2 - view.y / 3)));
    }
    scroll_graph_to_ = -1;
  }
  int hovered = DrawGraph("##cfg", graph_.layout, graph_.sizes, graph_.styles, graph_.edges,
                          graph_.edge_labels, ImVec2(0, 0), &drawn_);
  if (hovered >= 0) {
    block_tooltip(doc, static_cast<size_t>(hovered));
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) next_step_of(hovered, nullptr);
  }
}

void AnalysisPane::block_tooltip(Document& doc, size_t b) {
  const an::FunctionCfg* g = function();
  if (!g || b >= g->blocks.size() || b >= graph_.shown_state.size()) return;
  const an::BasicBlock& bb = g->blocks[b];
  if (bb.loc.line >= 1) doc.hover_source(source_line_range(doc, static_cast<int>(bb.loc.line)));
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(graph_.heads[b].c_str());
  if (bb.loop_head) ImGui::TextDisabled("a loop head: the solver widens here, so the loop reaches a fixpoint");
  int from = b < graph_.shown_from.size() ? graph_.shown_from[b] : -1;
  if (stepping_ && from < 0)
    ImGui::TextDisabled("entry state: no step has computed it yet");
  else if (stepping_)
    ImGui::TextDisabled("entry state as of step %d (%s):", from + 1,
                        result_->trace[static_cast<size_t>(from)].phase.c_str());
  else
    ImGui::TextDisabled("entry state at the fixpoint:");
  for (const auto& f : graph_.shown_state[b])
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kFactColor), "  %s", f.c_str());
  ImGui::Separator();
  for (const auto& line : graph_.code_full[b]) ImGui::TextUnformatted(line.c_str());
  ImGui::Separator();
  ImGui::TextDisabled("click: the next solver step that computes this block");
  ImGui::EndTooltip();
}

}  // namespace descent::viz::analysis_internal
