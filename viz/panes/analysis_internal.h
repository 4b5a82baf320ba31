// Private to the analysis pane (viz/panes/analysis*.cpp): nothing else includes this.
//
// One AnalysisPane holds the Session's analysis for one input and domain, and the cursor
// (the fixpoint, or solver step k). Its methods are spread over files by what they draw:
//   analysis.cpp         loading a result, moving the cursor, the caption, the domain row,
//                        Draw() and the scripted verbs (Act)
//   analysis_source.cpp  the source with the facts after each line beside it, alarm lines
//                        tinted, and the list of alarms under it
//   analysis_graph.cpp   one function's control-flow graph, each block a box with its entry
//                        state as of the cursor, and the controls that step the solver
#pragma once
#include <imgui.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz::analysis_internal {

namespace an = descent::analysis;

// The solver's phases, each with a colour that reads on a light and a dark theme.
inline ImU32 phase_color(const std::string& phase) {
  if (phase == "widening") return IM_COL32(230, 110, 0, 255);   // orange: bounds jump to inf
  if (phase == "narrowing") return IM_COL32(30, 150, 60, 255);  // green: bounds won back
  if (phase == "unrolling") return IM_COL32(150, 60, 170, 255); // violet: one iteration at a time
  return IM_COL32(30, 80, 230, 255);                            // blue: ascending
}
constexpr ImU32 kFactColor = IM_COL32(0, 115, 130, 255);    // a fact beside its line / in a box: teal

// Alarm severities, the order they win in when one line has several.
enum Severity { kNone = 0, kNote = 1, kWarning = 2, kError = 3 };

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
  an::Domain domain_ = an::Domain::Intervals;  // the lesson starts with intervals (the CLI default is product)
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

  int trace_size() const { return result_ ? static_cast<int>(result_->trace.size()) : 0; }

  // ---- analysis.cpp: loading, the cursor, the caption, Draw and Act ----
  const an::FunctionCfg* function() const;
  void refresh(Document& doc);
  void select_function(int f);
  void go_to_step(int k);
  bool next_step_of(int b, std::string* error);
  bool next_phase(const std::string& phase, std::string* error);
  std::string thresholds_of(int function, int head) const;
  std::string step_text() const;
  std::string make_caption() const;
  void Draw(Document& doc) override;
  static bool same_line_if_fits(float w);
  void draw_domains(Document& doc);
  void set_domain(Document& doc, an::Domain d);
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override;

  // ---- analysis_source.cpp: the facts beside the source ----
  void draw_source(Document& doc, float height, int current_line);

  // ---- analysis_graph.cpp: the control-flow graph and the solver-step controls ----
  void prepare_graph();
  bool visible_fact(const std::string& fact) const;
  void prepare_styles(std::pair<int, int> lit_lines);
  void draw_graph_controls();
  void draw_graph(Document& doc);
  void block_tooltip(Document& doc, size_t b);
};

}  // namespace descent::viz::analysis_internal
