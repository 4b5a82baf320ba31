// Private to the loop-nest pane (viz/panes/loops*.cpp): nothing else includes this.
//
// One LoopsPane holds the kernel's nest as the pane last read it and what the student chose;
// its methods are spread over files by what they draw:
//   loops.cpp        keeping up with the Document, the operations (split, reorder, undo, run)
//                    that the buttons and Act() share, the control rows, and Draw()
//   loops_nest.cpp   the nest as a tree of loops, the schedule trace, and the C / TVMScript
//                    listing with the selected loop's header marked
//   loops_order.cpp  the iteration-order picture: the output grid coloured by when the
//                    scheduled nest writes each cell, its step slider and PNG export
#pragma once
#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lang/text.h"
#include "tensor/iteration_order.h"
#include "viz/pane.h"

namespace descent::viz::loops_internal {

// `s` without the blanks at either end (loops.cpp).
std::string trim(std::string_view s);

struct LoopInfo {
  std::string name;                 // as a schedule names it: "i_0", or "C.i" when ambiguous
  std::string var;                  // its variable: "i"
  std::string block;                // the first block under it, or ""
  std::vector<std::string> nest;    // the loops around the first block under it (reorder's default)
  std::string kind;
  std::vector<size_t> path;         // where it is in the tree: kid indices from the root
};

struct LoopsPane : Pane {
  // ---- What the student chose here (the kernel and its schedule: the Document's) ----
  std::string selected_;     // the selected loop's schedule name, or ""
  std::vector<size_t> selected_path_;  // where it is in the tree, to follow it across a step
  std::string device_ = "ref";  // where Run & check runs: a name from Session::devices()

  // ---- Control fields ----
  std::string dims_field_ = kDefaultDims;
  int factor_ = 16;
  int axis_ = 0;
  std::string reorder_field_, step_field_;
  std::string view_ = "c";   // the listing under the nest: "c", "tir" or "tir-original"

  // ---- Messages ----
  std::string error_;        // the last refusal (red)
  std::string applied_;      // the last accepted step
  std::string note_;         // what happened to the schedule across an edit
  std::string run_;          // the last "Run & check" result
  bool run_ok_ = false;
  bool last_was_step_ = false;  // mark the trace's newest step (not after an undo)

  // ---- Cached for one (generation, schedule state) ----
  uint64_t gen_ = ~uint64_t(0);
  bool dirty_ = true;
  bool have_kernel_ = false;
  std::string why_empty_;    // why there is no nest to show
  TreeNode tree_;
  std::unordered_map<const TreeNode*, LoopInfo> loops_;
  std::vector<std::string> loop_names_;  // program order
  std::map<std::string, std::string> aliases_;  // "C.i" and "i" -> the loop's name
  std::vector<std::string> trace_lines_;
  std::map<std::string, std::vector<std::string>> view_lines_, prev_lines_;
  std::map<std::string, std::vector<bool>> view_changed_;
  int scroll_view_to_ = -1;
  bool trace_scroll_ = false;  // the trace changed: show its newest step
  bool scroll_top_ = false;  // another kernel is shown: start its listing at the top
  std::string sel_key_;      // what sel_line_ was found for
  int sel_line_ = -1;        // the selected loop's line in the view

  // ---- The iteration-order view (view_ == "order"), walked when first shown ----
  bool order_stale_ = true;
  tensor::IterationOrder order_;
  std::string order_error_;  // why there is no picture (a nest too big to walk)
  std::vector<int64_t> rank_;  // each element's visit number, -1 if never written
  bool by_last_ = false;     // number visits by the last write (a reduction's) not the first
  int64_t shown_ = -1;       // visits shown (the step slider); -1: all of them
  bool playing_ = false;     // the slider advancing by itself
  std::string export_path_ = "iteration_order.png";
  std::string exported_;     // what the last export wrote

  const char* name() const override { return "loops"; }
  const char* title() const override { return "Loop nest"; }
  const char* short_title() const override { return "Loops"; }

  std::vector<std::string> verbs() const override {
    return {"kernel NAME [DIM=N ...]", "sched STEP...", "try STEP...", "undo", "redo",
            "select LOOP", "view c|tir|tir-original|order",
            "order [step N|all|by first|by last|export FILE.png]", "run [" + join(Session::devices(), "|") + "]"};
  }

  // ---- loops.cpp: the Document, the operations, the controls ----
  void sync(Document& doc);
  bool select(Document& doc, const std::string& kernel, const std::string& dims_text,
              std::string* error);
  void refresh(Document& doc);
  void index_loops();
  void select_loop(const std::string& name);
  void before_change();
  bool apply(Document& doc, const std::string& step, std::string* error);
  bool undo_redo(Document& doc, bool redo, std::string* error);
  bool choose_kernel(Document& doc, const std::string& kernel, const std::string& dims,
                     std::string* error);
  bool run_check(Document& doc, std::string* error);
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override;
  void Draw(Document& doc) override;
  void draw_kernel_row(Document& doc, std::string& ignored);
  void draw_controls(Document& doc, std::string& ignored);
  void draw_messages();

  // ---- loops_nest.cpp: the tree, the trace and the listing ----
  void draw_legend();
  void draw_nest(ImVec2 size);
  void draw_node(const TreeNode& n);
  void draw_trace(ImVec2 size);
  int find_header(const std::vector<std::string>& lines) const;
  void draw_view(Document& doc);

  // ---- loops_order.cpp: the iteration order ----
  bool order_ready(Document& doc);
  int64_t visits_shown() const;
  bool export_order(Document& doc, const std::string& path, std::string* error);
  bool order_act(Document& doc, const std::vector<std::string>& args, std::string* error);
  void draw_order(Document& doc);
  std::string caption() const override;
};

}  // namespace descent::viz::loops_internal
