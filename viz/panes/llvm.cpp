// The LLVM IR pane: the optimisation pipeline as a list of passes, and the whole module
// after the selected one with what that pass changed highlighted.
//
// Entry 0 of the list is the IR as generated (stage "llvm"); entry i > 0 is the i-th
// transformation pass the -O pipeline ran (Session::passes() with stage "llvm"). A -O2 run
// is 100-200 passes, most of which change nothing, so the list marks the ones that did and
// can hide the rest; only the selected pass's IR is fetched and diffed. The last entry is the
// IR as the whole pipeline left it (stage "llvm-opt").
//
// The IR as generated and as optimised is tinted by source line (StageResult::source_lines,
// from the debug locations codegen emits), in the source pane's stripe colours, and hovering
// a line lights up its source, as in the machine pane. The pass snapshots in between have no
// source lines (Session::pass_snapshot gives none: the pipeline's snapshots are of IR without
// debug locations), so they stay uncoloured, and the header's tooltip says why.
#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lang/text.h"
#include "viz/pane.h"
#include "viz/panes/source_colors.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

constexpr float kListWidth = 300;  // the pass list (at 16 px: em()); the IR gets the rest

bool parse_int(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = static_cast<int>(v);
  return true;
}

// A marker that reads without colour too (a projector washes colours out): a filled dot.
ImU32 changed_mark() { return IM_COL32(30, 150, 70, 255); }

// The lines a pass deleted, by where they stood: gone[i] went just before line i of the
// IR after the pass (gone[after.size()]: at the end). Read from unified_diff's hunks, so
// they come from the same line matching as changed_lines' marks.
std::vector<std::vector<std::string>> deleted_lines(const std::string& before,
                                                    const std::string& after, size_t after_lines) {
  std::vector<std::vector<std::string>> gone(after_lines + 1);
  size_t bi = 0;
  bool in_hunk = false;
  for (const auto& l : split_lines(descent::unified_diff(before, after))) {
    if (l.rfind("@@ ", 0) == 0) {  // "@@ -a,n +b,m @@": b is 1-based, or the line before when m is 0
      unsigned long b0 = 0, m = 0;
      if (std::sscanf(l.c_str(), "@@ -%*u,%*u +%lu,%lu @@", &b0, &m) != 2) return gone;
      bi = m > 0 ? b0 - 1 : b0;
      in_hunk = true;
    } else if (in_hunk && !l.empty() && (l[0] == ' ' || l[0] == '+')) {
      ++bi;
    } else if (in_hunk && !l.empty() && l[0] == '-' && bi <= after_lines) {
      gone[bi].push_back(l.substr(1));
    }
  }
  return gone;
}

struct LlvmPane : Pane {
  const char* name() const override { return "llvm"; }
  const char* title() const override { return "LLVM IR"; }
  const char* short_title() const override { return "LLVM"; }

  // ---- What one generation (one Session) gives ----
  uint64_t gen_ = UINT64_MAX;
  int opt_ = -1;                  // the session's -O level the list was made at
  StageResult generated_;         // stage("llvm"): entry 0, or why there is no IR
  StageResult optimised_;         // stage("llvm-opt"): the last entry
  std::vector<PassInfo> passes_;  // the LLVM passes only; entry i + 1 of the list
  int changed_count_ = 0;

  // ---- The selection (kept across generations by label, so an edit or a new -O level
  // stays on the same pass when it still runs) ----
  int sel_ = 0;
  std::string sel_label_;
  bool changed_only_ = false;
  int scroll_list_to_ = -1;  // list row to bring into view (after a scripted/keyboard move)

  // ---- The selected entry's IR, diffed against the entry before it ----
  int view_of_ = -1;  // which entry view_ holds (-1: none)
  // The rows shown: the IR after the pass, with the lines it deleted in their places.
  std::vector<std::string> lines_;
  std::vector<bool> deleted_;  // row i is a deleted line (not in the IR after the pass)
  std::vector<int> number_;    // row i's line number in the IR after the pass (-1: deleted)
  std::vector<int> source_;    // row i's source line (0: none; pass snapshots have none)
  int hover_row_ = -1;         // a row hovered by the "hover" verb, until the mouse comes in
  int lines_deleted_ = 0;
  std::string caption_;
  std::vector<bool> changed_;
  int lines_changed_ = 0;
  std::string view_error_;
  int scroll_ir_to_ = -1;

  // 0: as generated; 1..passes: after each pass; the last: as optimised (llvm-opt).
  int entries() const { return 2 + static_cast<int>(passes_.size()); }
  bool is_pass(int i) const { return i > 0 && i <= static_cast<int>(passes_.size()); }
  bool is_final(int i) const { return i == entries() - 1; }
  std::string label(int i) const {
    if (i == 0) return "IR as generated";
    if (is_final(i)) return "IR as optimised";
    const PassInfo& p = passes_[i - 1];
    // The summary is "on ds.fib" (or a module, CGSCC or loop): part of what a label means.
    return p.summary.empty() ? p.name : p.name + " " + p.summary;
  }
  bool changed(int i) const { return is_pass(i) && passes_[i - 1].changed; }
  // What pass i ran on: "ds.fib", "[module]", "(ds.fib)" (a call-graph SCC), a loop.
  std::string unit(int i) const {
    const std::string& s = passes_[i - 1].summary;
    return s.rfind("on ", 0) == 0 ? s.substr(3) : s;
  }
  // The width of list row i as drawn ("%3d " then the name and the unit), so the
  // horizontal scroll reaches the end of the longest.
  float row_width(int i) const {
    std::string t = "123 " + (is_pass(i) ? passes_[i - 1].name : label(i));
    if (is_pass(i)) t += " " + unit(i);
    return ImGui::CalcTextSize(t.c_str()).x;
  }

  void refresh(Document& doc) {
    if (gen_ == doc.generation()) return;
    Session& s = doc.session();
    gen_ = doc.generation();
    opt_ = s.opt_level();
    generated_ = s.stage("llvm");
    optimised_ = s.stage("llvm-opt");
    passes_.clear();
    changed_count_ = 0;
    if (generated_.ok) {
      for (auto& p : s.passes())
        if (p.stage == "llvm") {
          changed_count_ += p.changed;
          passes_.push_back(std::move(p));
        }
    }
    int keep = 0;
    for (int i = 1; i < entries() && !sel_label_.empty(); ++i)
      if (is_pass(i) ? passes_[i - 1].name == sel_label_ : sel_label_ == label(i)) keep = i;
    sel_ = keep;
    view_of_ = -1;
    scroll_list_to_ = sel_;
  }

  void select(int i) {
    i = std::clamp(i, 0, entries() - 1);
    if (i != sel_) scroll_ir_to_ = -2;  // "to the first changed line", once it is computed
    sel_ = i;
    sel_label_ = i == 0 ? "" : is_pass(i) ? passes_[i - 1].name : label(i);
    scroll_list_to_ = i;
  }

  // The next entry after `from` that changed the IR, or -1.
  int next_changed(int from) const {
    for (int i = from + 1; i < entries(); ++i)
      if (changed(i)) return i;
    return -1;
  }
  // Previous/next among the entries the list shows.
  int step(int from, int dir) const {
    for (int i = from + dir; i >= 0 && i < entries(); i += dir)
      if (!changed_only_ || !is_pass(i) || changed(i)) return i;
    return from;
  }

  void load_view(Document& doc) {
    if (view_of_ == sel_) return;
    view_of_ = sel_;
    lines_.clear();
    changed_.clear();
    deleted_.clear();
    number_.clear();
    source_.clear();
    hover_row_ = -1;
    lines_changed_ = lines_deleted_ = 0;
    view_error_.clear();
    if (!generated_.ok) return;
    std::vector<std::string> after_lines;
    std::vector<bool> changed;
    std::vector<std::vector<std::string>> gone;
    const std::vector<int>* sources = nullptr;
    if (!is_pass(sel_)) {
      const StageResult& r = sel_ == 0 ? generated_ : optimised_;
      if (!r.ok) {
        view_error_ = r.text;
        return;
      }
      after_lines = split_lines(r.text);
      changed.assign(after_lines.size(), false);
      sources = &r.source_lines;
    } else {
      const std::string& pass = passes_[sel_ - 1].name;
      StageResult after = doc.session().pass_snapshot(pass, true);
      StageResult before = doc.session().pass_snapshot(pass, false);
      if (!after.ok) {
        view_error_ = after.text;
        return;
      }
      after_lines = split_lines(after.text);
      changed = before.ok ? descent::changed_lines(split_lines(before.text), after_lines)
                          : std::vector<bool>(after_lines.size(), false);
      if (before.ok) gone = deleted_lines(before.text, after.text, after_lines.size());
    }
    int first = -1;
    auto add = [&](std::string text, bool is_changed, bool is_deleted, int number) {
      if ((is_changed || is_deleted) && first < 0) first = static_cast<int>(lines_.size());
      lines_.push_back(std::move(text));
      changed_.push_back(is_changed);
      deleted_.push_back(is_deleted);
      number_.push_back(number);
      size_t at = static_cast<size_t>(number - 1);
      source_.push_back(sources && number > 0 && at < sources->size() ? (*sources)[at] : 0);
    };
    for (size_t i = 0; i <= after_lines.size(); ++i) {
      if (i < gone.size())
        for (auto& d : gone[i]) add(std::move(d), false, true, -1), ++lines_deleted_;
      if (i < after_lines.size()) {
        lines_changed_ += changed[i];
        add(std::move(after_lines[i]), changed[i], false, static_cast<int>(i) + 1);
      }
    }
    if (scroll_ir_to_ == -2) scroll_ir_to_ = first;
  }

  void set_opt(Document& doc, int level) {
    if (doc.settings().opt_level == level) return;
    doc.settings().opt_level = level;
    doc.rerun_now();  // a fresh Session at the new level; refresh() keeps the pass selected
  }

  // ---- Scripted actions: the same functions the controls call ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    auto usage = [&](const char* u) {
      *error = std::string("usage: llvm ") + u;
      return false;
    };
    bool moves = verb == "pass" || verb == "next-changed" || verb == "next" || verb == "prev";
    if (moves && !generated_.ok) {
      *error = "no LLVM IR to step through: " + generated_.text;
      return false;
    }
    if (verb == "pass") {
      if (args.size() != 1) return usage("pass N|NAME");
      int n = 0;
      if (parse_int(args[0], &n)) {
        if (n < 0 || n >= entries()) {
          *error = "no pass " + args[0] + " (0.." + std::to_string(entries() - 1) +
                   "; 0 is the IR as generated, " +
                   std::to_string(entries() - 1) + " as optimised)";
          return false;
        }
        select(n);
        return true;
      }
      for (int i = 1; i < entries(); ++i)
        if (label(i).find(args[0]) != std::string::npos) {
          select(i);
          return true;
        }
      *error = passes_.empty() ? "no LLVM passes ran at -O" + std::to_string(opt_)
                               : "no pass whose label contains '" + args[0] + "'";
      return false;
    }
    if (verb == "next-changed") {
      if (!args.empty()) return usage("next-changed");
      int n = next_changed(sel_);
      if (n < 0) {
        *error = "no pass after '" + label(sel_) + "' changed the IR";
        return false;
      }
      select(n);
      return true;
    }
    if (verb == "next" || verb == "prev") {
      int n = step(sel_, verb == "next" ? 1 : -1);
      if (n == sel_) {
        *error = verb == "next" ? "already at the last pass" : "already at the IR as generated";
        return false;
      }
      select(n);
      return true;
    }
    if (verb == "opt") {
      int n = 0;
      if (args.size() != 1 || !parse_int(args[0], &n)) return usage("opt 0|1|2|3");
      if (n < 0 || n > 3) {
        *error = "the -O level is 0..3, not " + args[0];
        return false;
      }
      set_opt(doc, n);
      return true;
    }
    if (verb == "changed-only") {
      if (args.size() != 1 || (args[0] != "on" && args[0] != "off"))
        return usage("changed-only on|off");
      changed_only_ = args[0] == "on";
      scroll_list_to_ = sel_;
      return true;
    }
    if (verb == "hover") {
      if (args.size() == 1 && args[0] == "off") {
        hover_row_ = -1;
        return true;
      }
      if (args.size() != 1 || args[0].empty() || args[0].size() > 9 ||
          args[0].find_first_not_of("0123456789") != std::string::npos)
        return usage("hover ROW|off (a row of the IR shown, from 0)");
      load_view(doc);
      hover_row_ = std::atoi(args[0].c_str());
      return true;
    }
    *error = "llvm has no action '" + std::string(verb) +
             "' (pass, next-changed, next, prev, opt, changed-only, hover)";
    return false;
  }
  std::string caption() const override { return caption_; }
  std::vector<std::string> verbs() const override {
    return {"pass N|NAME", "next-changed", "next", "prev", "opt 0|1|2|3", "changed-only on|off",
            "hover ROW|off"};
  }

  // ---- Drawing ----
  void draw_toolbar(Document& doc) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("-O level");
    for (int level = 0; level <= 3; ++level) {
      ImGui::SameLine();
      char id[8];
      std::snprintf(id, sizeof id, "%d##O", level);
      if (ImGui::RadioButton(id, doc.settings().opt_level == level)) set_opt(doc, level);
    }
    ImGui::SameLine(0, 18);
    ImGui::BeginDisabled(passes_.empty());
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) select(step(sel_, -1));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("previous pass (Up)");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) select(step(sel_, 1));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("next pass (Down)");
    ImGui::SameLine();
    int nc = next_changed(sel_);
    ImGui::BeginDisabled(nc < 0);
    if (ImGui::Button("next changed")) select(nc);
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    if (doc.busy()) {
      ImGui::SameLine();
      ImGui::TextDisabled("re-running...");
    }
  }

  void draw_pass_list() {
    ImGui::BeginGroup();
    ImGui::Checkbox("only passes that changed", &changed_only_);
    ImGui::TextDisabled("%d passes, %d changed", static_cast<int>(passes_.size()), changed_count_);
    // The rows the list shows; the full-list index stays the key (the verbs use it).
    std::vector<int> rows;
    rows.reserve(entries());
    for (int i = 0; i < entries(); ++i)
      if (!changed_only_ || !is_pass(i) || changed(i) || i == sel_) rows.push_back(i);
    ImGui::BeginChild("##passes", ImVec2(em(kListWidth), 0), true,
                      ImGuiWindowFlags_HorizontalScrollbar);
    float lh = ImGui::GetTextLineHeightWithSpacing();
    if (scroll_list_to_ >= 0) {
      auto it = std::find(rows.begin(), rows.end(), scroll_list_to_);
      if (it != rows.end()) {
        float y = (it - rows.begin()) * lh, top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
        if (y < top || y + 2 * lh > top + h) ImGui::SetScrollY(std::max(0.f, y - h / 3));
      }
      scroll_list_to_ = -1;
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float dot = ImGui::GetFontSize() * 0.9f;
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(rows.size()), lh);
    while (clipper.Step()) {
      for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
        int i = rows[r];
        ImGui::PushID(i);
        ImVec2 p = ImGui::GetCursorScreenPos();
        bool ch = changed(i);
        if (ch) {
          float rad = ImGui::GetFontSize() * 0.22f;
          dl->AddCircleFilled(ImVec2(p.x + dot / 2, p.y + lh / 2 - 1), rad, changed_mark());
        }
        ImGui::SetCursorScreenPos(ImVec2(p.x + dot, p.y));
        // The row is a blank selectable with the text drawn over it, so that the pass name
        // and what it ran on can differ in colour. Passes that left the IR alone recede: the
        // eye goes to the ones that did work.
        if (ImGui::Selectable("##row", sel_ == i, 0, ImVec2(std::max(row_width(i), ImGui::GetContentRegionAvail().x), 0)))
          select(i);
        ImVec2 t(p.x + dot, p.y);
        char num[16];
        std::snprintf(num, sizeof num, "%3d ", i);
        std::string head = num + (is_pass(i) ? passes_[i - 1].name : label(i));
        dl->AddText(t, !is_pass(i) || ch ? colors::text() : colors::dim(), head.c_str());
        if (is_pass(i)) {
          t.x += ImGui::CalcTextSize(head.c_str()).x + ImGui::CalcTextSize(" ").x;
          dl->AddText(t, colors::dim(), unit(i).c_str());
        }
        ImGui::PopID();
      }
    }
    clipper.End();
    // Up/Down step through the list while it has focus, like a file list.
    if (ImGui::IsWindowFocused()) {
      if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) select(step(sel_, -1));
      if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) select(step(sel_, 1));
    }
    ImGui::EndChild();
    ImGui::EndGroup();
  }

  void draw_ir(Document& doc) {
    ImGui::BeginGroup();
    if (!view_error_.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("not available: %s", view_error_.c_str());
      ImGui::PopStyleColor();
      ImGui::EndGroup();
      return;
    }
    if (!is_pass(sel_)) {
      ImGui::TextUnformatted(sel_ == 0 ? "the IR as generated, before any pass"
                                       : "the IR as optimised, after every pass (llvm-opt)");
      ImGui::TextDisabled("%d lines, tinted by the source line each came from",
                          static_cast<int>(lines_.size()));
    } else {
      ImGui::Text("after %s", passes_[sel_ - 1].name.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("no source colours here: the pass snapshots carry no source lines "
                          "(the IR as generated and as optimised, first and last, has them)");
      if (lines_changed_ == 0 && lines_deleted_ == 0) {
        caption_ = passes_[sel_ - 1].summary + ": no lines changed";
        ImGui::TextDisabled("%s", caption_.c_str());
      } else {
        // A swatch before each count, the legend of the listing's backgrounds.
        auto legend = [](ImU32 colour, const std::string& text) {
          ImVec2 p = ImGui::GetCursorScreenPos();
          float h = ImGui::GetTextLineHeight();
          ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h, p.y + h), colour);
          ImGui::Dummy(ImVec2(h, h));
          ImGui::SameLine();
          ImGui::TextUnformatted(text.c_str());
        };
        std::string changed_text = std::to_string(lines_changed_) + " line" +
                                   (lines_changed_ == 1 ? "" : "s") + " added or changed";
        std::string deleted_text = std::to_string(lines_deleted_) + " deleted";
        caption_ = changed_text + ", " + deleted_text + " " + passes_[sel_ - 1].summary;
        legend(colors::changed(), changed_text);
        ImGui::SameLine();
        legend(colors::deleted(), deleted_text + " " + passes_[sel_ - 1].summary);
      }
    }
    if (!is_pass(sel_))
      caption_ = std::to_string(lines_.size()) + (sel_ == 0 ? " lines as generated" : " lines as optimised");
    std::pair<int, int> hovered = hovered_source_lines(doc);
    if (hover_row_ >= 0 && hover_row_ < static_cast<int>(source_.size()) && source_[hover_row_] > 0)
      doc.hover_source(source_line_range(doc, source_[hover_row_]));
    ListingStyle st;
    st.background = [this, hovered](int i) -> ImU32 {
      if (i >= static_cast<int>(changed_.size())) return 0;
      return deleted_[i] ? colors::deleted() : changed_[i] ? colors::changed()
                                                           : source_line_tint(source_[i], hovered);
    };
    st.number = [this](int i) { return number_[i]; };
    // Function headers and comments, the landmarks of a module dump.
    st.color = [this](int i) -> ImU32 {
      const std::string& l = lines_[i];
      if (deleted_[i]) return colors::dim();
      if (l.rfind("define ", 0) == 0) return IM_COL32(20, 70, 160, 255);
      if (l.rfind(";", 0) == 0 || l.rfind("declare ", 0) == 0 || l.rfind("attributes ", 0) == 0)
        return colors::dim();
      return 0;
    };
    st.scroll_to = scroll_ir_to_;
    scroll_ir_to_ = -1;
    st.line_numbers = true;
    int under_mouse = Listing("##ir", lines_, st);
    if (under_mouse >= 0) {
      hover_row_ = -1;  // the real mouse takes over from a scripted hover
      if (source_[under_mouse] > 0) doc.hover_source(source_line_range(doc, source_[under_mouse]));
    }
    ImGui::EndGroup();
  }

  void Draw(Document& doc) override {
    refresh(doc);
    draw_toolbar(doc);
    if (!generated_.ok) {
      ImGui::Separator();
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("LLVM IR not available: %s", generated_.text.c_str());
      ImGui::PopStyleColor();
      ImGui::TextDisabled("(for a tensor kernel's IR, see the loop nest pane's llvm view)");
      return;
    }
    load_view(doc);
    draw_pass_list();
    ImGui::SameLine();
    draw_ir(doc);
  }
};

}  // namespace

std::unique_ptr<Pane> make_llvm_pane() { return std::make_unique<LlvmPane>(); }

}  // namespace descent::viz
