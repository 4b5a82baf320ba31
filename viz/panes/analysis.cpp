// The analysis pane (issue 18, analysis/analysis.h): abstract interpretation of the program
// in one of four domains, shown three ways.
//
//   - The source with the facts that hold after each line beside it (Result::facts_at_line),
//     lines with an alarm tinted (errors red, warnings yellow, notes grey) and the alarm's
//     message under the mouse.
//   - The control-flow graph of one function, each basic block a box with its entry state
//     (the fixpoint, Result::block_states) above its instructions; loop heads, where
//     widening happens, outlined in purple; back edges run round the right-hand side.
//   - A solver-step slider over Result::trace: at step k every block shows the state the
//     solver had for it once step k was done (analysis_steps.h), the block of step k is
//     outlined in its phase's colour, and the facts step k changed are drawn in that colour,
//     so a class watches a loop counter's interval grow, jump to +inf under widening and
//     come back under narrowing. A block no step has computed yet says "no step yet": the
//     trace records changes only, so even an entry block, whose state is set before the
//     first step, appears only once a step changes it.
//
// Everything comes from Session::analyze(domain) (pipeline/pipeline.h); the pane adds the
// layout, the colours and the cursor. The Session computes one analysis per input and domain
// and keeps it, so switching domains back and forth costs nothing after the first time.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_internal.h>  // SetNextWindowScroll, as the AST pane uses it

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "viz/pane.h"
#include "viz/panes/analysis_steps.h"
#include "viz/panes/source_colors.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

namespace an = descent::analysis;

// The solver's phases, each with a colour that reads on a light and a dark theme.
ImU32 phase_color(const std::string& phase) {
  if (phase == "widening") return IM_COL32(230, 110, 0, 255);   // orange: bounds jump to inf
  if (phase == "narrowing") return IM_COL32(30, 150, 60, 255);  // green: bounds won back
  return IM_COL32(30, 80, 230, 255);                            // blue: ascending
}
constexpr ImU32 kFactColor = IM_COL32(0, 115, 130, 255);    // a fact beside its line / in a box: teal
constexpr ImU32 kHeadColor = IM_COL32(90, 90, 90, 255);     // a block's heading
constexpr ImU32 kQuietColor = IM_COL32(140, 140, 140, 255); // "no step yet", "unreachable"
constexpr ImU32 kLoopHead = IM_COL32(148, 103, 189, 255);   // loop heads: where widening happens
constexpr ImU32 kUnreachableFill = IM_COL32(225, 225, 225, 255);
constexpr ImU32 kLitFill = IM_COL32(255, 236, 160, 255);    // a block of the hovered source

// Alarm severities, the order they win in when one line has several.
enum Severity { kNone = 0, kNote = 1, kWarning = 2, kError = 3 };
ImU32 severity_ink(int s) {
  return s == kError ? colors::error() : s == kWarning ? IM_COL32(215, 150, 0, 255)
                                                        : IM_COL32(130, 130, 130, 255);
}
ImU32 severity_tint(int s) {
  return s == kError ? IM_COL32(230, 60, 60, 60) : s == kWarning ? IM_COL32(245, 200, 30, 80)
                                                                  : IM_COL32(150, 150, 150, 35);
}

// A box shows one line of code or one fact at most this long (a 100,000-term expression is
// one instruction); the tooltip has it whole.
constexpr size_t kBoxColumns = 64;
std::string clip(const std::string& s, size_t n = kBoxColumns) {
  if (s.size() <= n) return s;
  size_t cut = n - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "...";
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct AnalysisPane : Pane {
  const char* name() const override { return "analysis"; }
  const char* title() const override { return "Analysis"; }
  std::vector<std::string> verbs() const override {
    return {"domain constants|signs|intervals|product", "function NAME|N",
            "step N|next|prev|first|last|widening", "step block B (the next step computing it)",
            "fixpoint", "counters on|off"};
  }
  std::string caption() const override { return caption_; }

  // ---- What is shown (the controls) ----
  an::Domain domain_ = an::Domain::Intervals;
  int fn_ = 0;               // index into the graph's functions
  std::string fn_name_;      // carried across edits: the same function if it still exists
  bool stepping_ = false;    // false: the fixpoint; true: the state as of step_
  int step_ = 0;             // 0-based index into Result::trace
  bool counters_ = false;    // show the hidden loop variables (i.next, i.end)
  bool playing_ = false;
  double played_at_ = 0;

  // ---- What was loaded, for one generation and domain ----
  uint64_t generation_ = std::numeric_limits<uint64_t>::max();
  an::Domain loaded_domain_ = an::Domain::Intervals;
  bool compiled_ = false;  // a run has finished (generation > 0)
  std::shared_ptr<const an::Result> result_;
  std::vector<std::string> src_;        // the analysed input's lines
  std::vector<std::string> line_facts_; // facts after each line, joined
  std::vector<int> line_severity_;      // the worst alarm on each line
  std::vector<std::string> line_alarms_;  // each line's alarms, one per line of text
  std::vector<std::string> alarm_rows_;   // every alarm, as listed under the source
  std::vector<int> alarm_row_severity_;
  size_t errors_ = 0, warnings_ = 0, notes_ = 0;
  float code_width_ = 0, code_width_font_ = 0;  // the widest source line, at a font size
  int scroll_source_to_ = -1;  // 0-based line: bring it into view next frame
  int scroll_graph_to_ = -1;   // a block of fn_: bring it into view next frame if it is not
  std::vector<char> drawn_;    // the blocks the graph drew (were in view) last frame

  // ---- The graph of fn_, laid out once per result, function, filter and font ----
  struct Graph {
    const an::Result* result = nullptr;
    int fn = -1;
    bool counters = false;
    float font = 0;
    std::set<std::string> hidden;           // hidden loop variables of the function
    std::vector<std::string> heads;         // "B1 for.head (loop head)"
    std::vector<std::vector<std::string>> code, code_full;  // instructions + terminator
    std::vector<ImVec2> sizes;
    std::vector<std::pair<int, int>> edges;  // forward edges first (the layout's), then back
    std::vector<std::string> edge_labels;
    GraphLayout layout;
    // The styles for one view of it (mode, step), rebuilt when that changes.
    std::string styles_key;
    std::vector<GraphNodeStyle> styles;
    std::vector<std::vector<std::string>> shown_state;  // each box's facts (unfiltered)
    std::vector<int> shown_from;  // stepping: the trace step each box's state comes from
  } graph_;

  std::string caption_;

  // ---- Loading ----
  const an::FunctionCfg* function() const {
    if (!result_ || fn_ < 0 || static_cast<size_t>(fn_) >= result_->cfg.functions.size())
      return nullptr;
    return &result_->cfg.functions[static_cast<size_t>(fn_)];
  }
  int trace_size() const { return result_ ? static_cast<int>(result_->trace.size()) : 0; }

  void refresh(Document& doc) {
    if (generation_ == doc.generation() && loaded_domain_ == domain_) return;
    generation_ = doc.generation();
    loaded_domain_ = domain_;
    Session& s = doc.session();
    // The Session's own "analysis" stage then speaks of the same domain as the pane.
    s.set_analysis_domain(domain_);
    compiled_ = doc.generation() > 0;
    result_ = compiled_ ? s.analyze(domain_) : nullptr;
    graph_ = Graph{};
    drawn_.clear();
    src_.clear();
    line_facts_.clear();
    line_severity_.clear();
    line_alarms_.clear();
    alarm_rows_.clear();
    alarm_row_severity_.clear();
    errors_ = warnings_ = notes_ = 0;
    code_width_font_ = 0;
    playing_ = false;
    if (!result_) return;
    const SourceFile* file = s.last_source();
    if (file)
      for (uint32_t i = 1; i <= file->line_count(); ++i) {
        std::string_view t = file->line_text(i);
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
        src_.emplace_back(t);
      }
    while (!src_.empty() && src_.back().empty()) src_.pop_back();
    line_facts_.assign(src_.size(), "");
    line_severity_.assign(src_.size(), kNone);
    line_alarms_.assign(src_.size(), "");
    for (size_t i = 0; i < src_.size(); ++i) {
      std::string joined;
      for (const auto& f : result_->facts_at_line(static_cast<uint32_t>(i + 1)))
        joined += (joined.empty() ? "" : "; ") + f;
      line_facts_[i] = std::move(joined);
    }
    for (const an::Alarm& a : result_->alarms) {
      int sev = a.is_error() ? kError : a.kind == an::Alarm::Kind::MayWrap ? kNote : kWarning;
      (sev == kError ? errors_ : sev == kWarning ? warnings_ : notes_)++;
      std::string what = std::string(sev == kError ? "error" : sev == kWarning ? "warning" : "note") +
                         (sev == kNote ? "" : a.definite ? " (definite)" : " (possible)") + ": " +
                         a.message;
      // An alarm in another file (a function an earlier input declared) has no line here.
      bool here = !a.loc.file || a.loc.file == file;
      std::string where = here ? fmt::format("line {}:{}", a.loc.line, a.loc.col)
                               : fmt::format("{}:{}:{}", a.loc.file->name(), a.loc.line, a.loc.col);
      alarm_rows_.push_back(where + ": " + what);
      alarm_row_severity_.push_back(sev);
      size_t line = a.loc.line;
      if (here && line >= 1 && line <= src_.size()) {
        line_severity_[line - 1] = std::max(line_severity_[line - 1], sev);
        line_alarms_[line - 1] += (line_alarms_[line - 1].empty() ? "" : "\n") + what;
      }
    }
    // The function shown before the edit, if it is still there; else the top level.
    fn_ = 0;
    const auto& fns = result_->cfg.functions;
    for (size_t i = 0; i < fns.size(); ++i)
      if (fns[i].name == fn_name_) fn_ = static_cast<int>(i);
    if (!fns.empty()) fn_name_ = fns[static_cast<size_t>(fn_)].name;
    step_ = std::clamp(step_, 0, std::max(0, trace_size() - 1));
    if (trace_size() == 0) stepping_ = false;
  }

  void select_function(int f) {
    if (!result_ || f < 0 || static_cast<size_t>(f) >= result_->cfg.functions.size()) return;
    fn_ = f;
    fn_name_ = result_->cfg.functions[static_cast<size_t>(f)].name;
  }

  // Moves the cursor to step k (0-based): the graph follows to the function it is in, and
  // the source scrolls to its block.
  void go_to_step(int k) {
    if (trace_size() == 0) return;
    stepping_ = true;
    step_ = std::clamp(k, 0, trace_size() - 1);
    const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
    select_function(s.function);
    if (const an::FunctionCfg* g = function())
      if (s.block >= 0 && static_cast<size_t>(s.block) < g->blocks.size()) {
        uint32_t line = g->blocks[static_cast<size_t>(s.block)].loc.line;
        if (line >= 1) scroll_source_to_ = static_cast<int>(line) - 1;
        scroll_graph_to_ = s.block;
      }
  }

  // ---- The graph ----
  // The heading, instructions and size of every block of fn_, and the layout: once per
  // result, function, filter and font. A box is as tall and wide as its largest state over
  // the whole trace, so the boxes stay put while the slider moves.
  void prepare_graph() {
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

  bool visible_fact(const std::string& fact) const {
    if (counters_) return true;
    // A fact reads "NAME in [..]", "NAME = ..", "NAME: any", "NAME > 0": its variable is the
    // text before the first space or colon.
    std::string var = fact.substr(0, fact.find_first_of(" :"));
    return !graph_.hidden.count(var);
  }

  // The boxes' text and colours for the current view (the fixpoint or step k).
  void prepare_styles(std::pair<int, int> lit_lines) {
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
  // True when an item `w` wide still fits on this line (then it goes there).
  static bool same_line_if_fits(float w) {
    float right = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w;
    float edge = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (right > edge) return false;
    ImGui::SameLine();
    return true;
  }

  void draw_domains(Document& doc) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("domain");
    for (an::Domain d : an::all_domains()) {
      const char* label = an::domain_name(d);
      same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(label).x + em(8));
      if (ImGui::RadioButton(label, domain_ == d)) set_domain(doc, d);
    }
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "constants: one value, or not constant\n"
          "signs: < 0, = 0, > 0 and their unions\n"
          "intervals: [lo, hi]; loop heads widen, then narrowing wins bounds back\n"
          "product: intervals and signs together, each refining the other");
  }

  void set_domain(Document& doc, an::Domain d) {
    domain_ = d;
    refresh(doc);
  }

  void draw_source(Document& doc, float height, int current_line) {
    ImGui::BeginChild("##facts", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
    const float lh = ImGui::GetTextLineHeightWithSpacing();
    const float th = ImGui::GetTextLineHeight();
    if (code_width_font_ != ImGui::GetFontSize()) {
      code_width_font_ = ImGui::GetFontSize();
      code_width_ = 0;
      // Only lines with facts push the facts column right: a long comment has none beside it.
      for (size_t i = 0; i < src_.size(); ++i)
        if (!line_facts_[i].empty())
          code_width_ = std::max(code_width_, ImGui::CalcTextSize(src_[i].c_str()).x);
    }
    const int rows = static_cast<int>(src_.size() + (alarm_rows_.empty() ? 0 : 1 + alarm_rows_.size()));
    if (scroll_source_to_ >= 0) {
      float y = static_cast<float>(scroll_source_to_) * lh, top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
      if (y < top || y + 2 * lh > top + h) ImGui::SetScrollY(std::max(0.f, y - h / 3));
      scroll_source_to_ = -1;
    }
    // Columns: line number, alarm mark, the source (clipped at a width that keeps the facts
    // on screen), the facts.
    const float num_w = ImGui::CalcTextSize("0000").x;
    const float mark_w = th;
    const float code_w = std::min(code_width_, em(330));
    const float facts_x = num_w + mark_w + code_w + em(16);
    std::pair<int, int> lit = hovered_source_lines(doc);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float full = ImGui::GetWindowContentRegionMax().x + ImGui::GetScrollX() + 4000;
    int hovered = -1;
    ImGuiListClipper clipper;
    clipper.Begin(rows, lh);
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        ImVec2 p = ImGui::GetCursorScreenPos();
        if (static_cast<size_t>(i) >= src_.size()) {  // the alarm list under the source
          int a = i - static_cast<int>(src_.size()) - 1;
          if (a < 0) {
            ImGui::TextDisabled("alarms:");
            continue;
          }
          ImGui::PushStyleColor(ImGuiCol_Text, severity_ink(alarm_row_severity_[static_cast<size_t>(a)]));
          ImGui::TextUnformatted(alarm_rows_[static_cast<size_t>(a)].c_str());
          ImGui::PopStyleColor();
          continue;
        }
        const size_t line = static_cast<size_t>(i);
        ImVec2 q(p.x + full, p.y + lh);
        if (line_severity_[line]) dl->AddRectFilled(p, q, severity_tint(line_severity_[line]));
        if (i + 1 >= lit.first && i + 1 <= lit.second) dl->AddRectFilled(p, q, colors::highlight());
        if (i == current_line) dl->AddRectFilled(p, q, colors::current());
        if (ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, q)) {
          hovered = i;
          dl->AddRectFilled(p, q, IM_COL32(0, 0, 0, 18));
        }
        char num[16];
        std::snprintf(num, sizeof num, "%4d", i + 1);
        dl->AddText(p, colors::dim(), num);
        if (int s = line_severity_[line])
          dl->AddCircleFilled(ImVec2(p.x + num_w + mark_w / 2, p.y + th / 2), th * 0.28f, severity_ink(s));
        float x0 = p.x + num_w + mark_w;
        const std::string& facts = line_facts_[line];
        // A line with facts is cut where they start (the tooltip and the editor have it
        // whole); a line without runs on.
        float w = facts_x;
        if (facts.empty()) {
          dl->AddText(ImVec2(x0, p.y), colors::text(), src_[line].c_str());
          w = num_w + mark_w + ImGui::CalcTextSize(src_[line].c_str()).x;
        } else {
          dl->PushClipRect(ImVec2(x0, p.y), ImVec2(x0 + code_w, p.y + lh), true);
          dl->AddText(ImVec2(x0, p.y), colors::text(), src_[line].c_str());
          dl->PopClipRect();
          if (ImGui::CalcTextSize(src_[line].c_str()).x > code_w)
            dl->AddText(ImVec2(x0 + code_w, p.y), colors::dim(), "..");
          dl->AddText(ImVec2(p.x + facts_x, p.y), kFactColor, facts.c_str());
          w += ImGui::CalcTextSize(facts.c_str()).x;
        }
        ImGui::Dummy(ImVec2(w, th));
      }
    clipper.End();
    ImGui::EndChild();
    if (hovered >= 0 && static_cast<size_t>(hovered) < src_.size()) {
      doc.hover_source(source_line_range(doc, hovered + 1));
      const size_t line = static_cast<size_t>(hovered);
      if (!line_facts_[line].empty() || !line_alarms_[line].empty()) {
        ImGui::BeginTooltip();
        ImGui::Text("line %d, after it runs (%s):", hovered + 1, an::domain_name(domain_));
        for (const auto& f : result_->facts_at_line(static_cast<uint32_t>(hovered + 1)))
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kFactColor), "  %s", f.c_str());
        if (!line_alarms_[line].empty()) {
          ImGui::PushStyleColor(ImGuiCol_Text, severity_ink(line_severity_[line]));
          ImGui::TextUnformatted(line_alarms_[line].c_str());
          ImGui::PopStyleColor();
        }
        ImGui::EndTooltip();
      }
    }
  }

  void draw_graph_controls() {
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
    if (ImGui::Button("next widening")) next_widening(nullptr);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the next step that widens a loop head");
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

  // The next step (after the current one; from the first when showing the fixpoint) that
  // computes block `b` of the function shown: what clicking a box does.
  bool next_step_of(int b, std::string* error) {
    for (int k = stepping_ ? step_ + 1 : 0; k < trace_size(); ++k) {
      const an::SolverStep& s = result_->trace[static_cast<size_t>(k)];
      if (s.function == fn_ && s.block == b) {
        go_to_step(k);
        return true;
      }
    }
    if (error) *error = "no later step computes B" + std::to_string(b) + " of " + fn_name_;
    return false;
  }

  bool next_widening(std::string* error) {
    for (int k = step_ + (stepping_ ? 1 : 0); k < trace_size(); ++k)
      if (result_->trace[static_cast<size_t>(k)].phase == "widening") {
        go_to_step(k);
        return true;
      }
    if (error) *error = "no widening step after this one";
    return false;
  }

  // "step 12 of 40: B1 (for.head, loop head), widening, changed"
  std::string step_text() const {
    const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
    std::string where = "B" + std::to_string(s.block);
    if (s.function >= 0 && static_cast<size_t>(s.function) < result_->cfg.functions.size()) {
      const an::FunctionCfg& g = result_->cfg.functions[static_cast<size_t>(s.function)];
      if (s.block >= 0 && static_cast<size_t>(s.block) < g.blocks.size()) {
        const an::BasicBlock& b = g.blocks[static_cast<size_t>(s.block)];
        where += " (" + b.label + (b.loop_head ? ", loop head" : "") + ")";
      }
      if (s.function != 0) where = g.name + " " + where;
    }
    return fmt::format("step {} of {}: {}, {}, {}", step_ + 1, trace_size(), where, s.phase,
                       s.changed ? "changed" : "unchanged");
  }

  std::string make_caption() const {
    if (!compiled_) return "nothing compiled yet";
    if (!result_) return "the input has errors";
    const an::FunctionCfg* g = function();
    if (!g) return std::string(an::domain_name(domain_)) + ": no code";
    std::string alarms = errors_ + warnings_ + notes_ == 0
                             ? "no alarms"
                             : plural(errors_, "error", "errors") + ", " + plural(warnings_, "warning", "warnings") +
                                   ", " + plural(notes_, "note", "notes");
    std::string c = fmt::format("{}: {}, {}, {} solver steps{}; {}; ", an::domain_name(domain_), g->name,
                                plural(g->blocks.size(), "block", "blocks"), trace_size(),
                                result_->trace_truncated ? " (cut short)" : "", alarms);
    if (!stepping_) return c + "the fixpoint";
    size_t reached = 0;
    for (int j : latest_steps(*result_, fn_, step_)) reached += j >= 0;
    return c + step_text() + fmt::format("; {} of {} blocks computed so far", reached, g->blocks.size());
  }

  void Draw(Document& doc) override {
    refresh(doc);
    caption_ = make_caption();
    draw_domains(doc);
    if (!compiled_) {
      ImGui::TextDisabled("not available: nothing compiled yet");
      return;
    }
    if (!result_) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("the input has errors, so it was not analysed: the analysis needs a "
                         "program that parses and checks (the editor lists the errors)");
      ImGui::PopStyleColor();
      return;
    }
    if (!function()) {
      ImGui::TextDisabled("not available: no code to analyse");
      return;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
    ImGui::TextWrapped("%s", caption_.c_str());
    ImGui::PopStyleColor();

    // The current step's block, for the source to mark.
    int current_line = -1;
    if (stepping_ && step_ < trace_size()) {
      const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
      if (static_cast<size_t>(s.function) < result_->cfg.functions.size()) {
        const auto& blocks = result_->cfg.functions[static_cast<size_t>(s.function)].blocks;
        if (s.block >= 0 && static_cast<size_t>(s.block) < blocks.size())
          current_line = static_cast<int>(blocks[static_cast<size_t>(s.block)].loc.line) - 1;
      }
    }
    const float lh = ImGui::GetTextLineHeightWithSpacing();
    size_t rows = src_.size() + (alarm_rows_.empty() ? 0 : 1 + alarm_rows_.size());
    float avail = ImGui::GetContentRegionAvail().y;
    float source_h = std::min(static_cast<float>(rows) * lh + 2 * ImGui::GetStyle().WindowPadding.y + 14,
                              avail * 0.36f);
    ImGui::TextDisabled("facts after each line (hover a line for its alarms)");
    draw_source(doc, std::max(source_h, 3 * lh), current_line);

    draw_graph_controls();
    if (stepping_ && step_ < trace_size()) {
      const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(phase_color(s.phase)), "%s", step_text().c_str());
    } else {
      ImGui::TextDisabled("each block's entry state at the fixpoint; purple: loop heads (widening happens there)");
    }
    caption_ = make_caption();  // the controls may have moved the cursor
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

  void block_tooltip(Document& doc, size_t b) {
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

  // ---- Scripted actions: the functions the controls call ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    auto fail = [&](std::string why) {
      *error = std::move(why);
      return false;
    };
    if (verb == "domain") {
      an::Domain d;
      if (args.size() != 1 || !an::parse_domain(args[0], &d))
        return fail("usage: analysis domain constants|signs|intervals|product");
      set_domain(doc, d);
      return true;
    }
    const bool known = verb == "function" || verb == "step" || verb == "fixpoint" || verb == "counters";
    if (!known) return Pane::Act(doc, verb, args, error);
    if (!compiled_) return fail("nothing compiled yet");
    if (!result_) return fail("the input has errors, so it was not analysed");
    if (verb == "counters") {
      if (args.size() != 1 || (args[0] != "on" && args[0] != "off")) return fail("usage: analysis counters on|off");
      counters_ = args[0] == "on";
      return true;
    }
    if (verb == "fixpoint") {
      if (!args.empty()) return fail("usage: analysis fixpoint");
      stepping_ = false;
      return true;
    }
    if (verb == "function") {
      if (args.size() != 1) return fail("usage: analysis function NAME|N");
      const auto& fns = result_->cfg.functions;
      std::string names;
      for (size_t i = 0; i < fns.size(); ++i) {
        if (fns[i].name == args[0] || std::to_string(i) == args[0]) {
          select_function(static_cast<int>(i));
          return true;
        }
        names += (i ? ", " : "") + fns[i].name;
      }
      return fail("no function '" + args[0] + "' in the analysis (functions: " + names + ")");
    }
    // step
    const int n = trace_size();
    if (n == 0) return fail("the solver took no steps");
    if (args.size() == 2 && args[0] == "block") {
      int b = -1;
      std::string_view id = args[1];
      if (!id.empty() && (id[0] == 'B' || id[0] == 'b')) id.remove_prefix(1);
      auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), b);
      const an::FunctionCfg* g = function();
      if (ec != std::errc() || p != id.data() + id.size() || !g || b < 0 ||
          static_cast<size_t>(b) >= g->blocks.size())
        return fail("no block '" + args[1] + "' in " + fn_name_);
      return next_step_of(b, error);
    }
    if (args.size() != 1) return fail("usage: analysis step N|next|prev|first|last|widening|block B");
    const std::string& a = args[0];
    if (a == "widening") return next_widening(error);
    if (a == "next" || a == "prev") {
      int k = stepping_ ? step_ + (a == "next" ? 1 : -1) : (a == "next" ? 0 : n - 1);
      if (k < 0 || k >= n) return fail(a == "next" ? "already at the last step" : "already at the first step");
      go_to_step(k);
      return true;
    }
    if (a == "first" || a == "last") {
      go_to_step(a == "first" ? 0 : n - 1);
      return true;
    }
    int k = 0;
    auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), k);
    if (ec != std::errc() || p != a.data() + a.size() || k < 1 || k > n)
      return fail(fmt::format("no step '{}' (steps 1..{}, next, prev, first, last, widening)", a, n));
    go_to_step(k - 1);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pane> make_analysis_pane() { return std::make_unique<AnalysisPane>(); }

}  // namespace descent::viz
