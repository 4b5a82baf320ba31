// The step debugger the two VM panes share: a cursor over a recorded run (Session::record),
// the controls bar that moves it, and a code listing with a breakpoint gutter.
//
// Header-only on purpose: both panes include it, and it keeps the build file untouched.
//
// [SECTION] StepDebugger: the cursor, breakpoints, the scripted verbs, the controls bar
// [SECTION] CodeListing: a clipped listing with a gutter (breakpoints, the current arrow)
// [SECTION] small helpers: row lookup, integer arguments, the printed output
#pragma once
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <imgui.h>

#include "pipeline/pipeline.h"
#include "viz/document.h"
#include "viz/widgets.h"

namespace descent::viz {

// ---- [SECTION] small helpers -------------------------------------------------------------

// A positive count from a verb's optional argument ("step 10"); `fallback` when absent.
inline bool parse_count(const std::vector<std::string>& args, long fallback, long* out,
                        std::string* error) {
  if (args.empty()) {
    *out = fallback;
    return true;
  }
  long n = 0;
  const std::string& a = args[0];
  auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), n);
  if (ec != std::errc() || p != a.data() + a.size() || n < 0) {
    *error = "'" + a + "' is not a count (a whole number >= 0)";
    return false;
  }
  *out = n;
  return true;
}

// A disassembled instruction for one line of prose: its column padding squeezed to one space.
inline std::string squeeze(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// (function, pc) -> row of a listing, so a recorded step can find its row.
using RowIndex = std::map<std::pair<std::string, int>, int>;
inline RowIndex index_rows(const std::vector<CodeLine>& rows) {
  RowIndex index;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].pc >= 0) index.emplace(std::make_pair(rows[i].function, rows[i].pc), int(i));
  return index;
}
inline int find_row(const RowIndex& index, const std::string& function, int pc) {
  auto it = index.find({function, pc});
  return it == index.end() ? -1 : it->second;
}

// The row's source location is inside what the mouse is over in another pane (or the editor).
inline bool under_hover(const Document& doc, const CodeLine& row) {
  SourceRange h = doc.hovered();
  return row.loc.valid() && h.valid() && h.contains(row.loc.offset);
}

// ---- [SECTION] CodeListing ---------------------------------------------------------------

struct CodeListingStyle {
  std::function<ImU32(int)> background;   // 0: none
  std::function<ImU32(int)> color;        // 0: the default text colour
  std::function<bool(int)> breakpoint;    // draw a breakpoint dot on this row
  std::function<bool(int)> can_break;     // may the gutter toggle one here (null: no gutter)
  int arrow = -1;                         // the debugger's row: a triangle in the gutter
  int scroll_to = -1;                     // bring this row into view (pass it once)
};
struct CodeListingEvents {
  int hovered = -1;         // the row under the mouse
  int gutter_clicked = -1;  // a breakpoint toggle request
};

// Like widgets.h's Listing, plus a gutter a click can put a breakpoint in: Listing has no
// per-row hit areas, and a debugger needs them.
inline CodeListingEvents CodeListing(const char* id, const std::vector<std::string>& lines,
                                     const CodeListingStyle& style, ImVec2 size) {
  CodeListingEvents ev;
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_HorizontalScrollbar);
  const float lh = ImGui::GetTextLineHeightWithSpacing();
  const bool gutter = static_cast<bool>(style.can_break) || style.arrow >= 0;
  // Room for a breakpoint dot and the current-row arrow side by side.
  const float gw = gutter ? lh * 1.5f : 0;
  if (style.scroll_to >= 0 && style.scroll_to < int(lines.size())) {
    float y = style.scroll_to * lh, top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
    if (y < top || y + 2 * lh > top + h) ImGui::SetScrollY(std::max(0.f, y - h / 3));
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float width = ImGui::GetWindowContentRegionMax().x + ImGui::GetScrollX() + 4000;
  ImGuiListClipper clipper;
  clipper.Begin(int(lines.size()), lh);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImVec2 p = ImGui::GetCursorScreenPos();
      ImVec2 q(p.x + width, p.y + lh);
      if (ImU32 bg = style.background ? style.background(i) : 0) dl->AddRectFilled(p, q, bg);
      bool hover = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, q);
      if (hover) {
        ev.hovered = i;
        dl->AddRectFilled(p, q, IM_COL32(0, 0, 0, 18));
      }
      if (gutter) {
        ImVec2 c(p.x + lh * 0.4f, p.y + lh / 2), ca(p.x + lh * 1.05f, p.y + lh / 2);
        bool breakable = style.can_break && style.can_break(i);
        bool in_gutter = hover && ImGui::IsMouseHoveringRect(p, ImVec2(p.x + gw, q.y));
        if (style.breakpoint && style.breakpoint(i))
          dl->AddCircleFilled(c, lh * 0.3f, IM_COL32(200, 30, 30, 255));
        else if (breakable && in_gutter)
          dl->AddCircle(c, lh * 0.3f, IM_COL32(200, 30, 30, 160), 0, 1.5f);
        if (i == style.arrow) {
          float r = lh * 0.28f;
          dl->AddTriangleFilled(ImVec2(ca.x - r, ca.y - r), ImVec2(ca.x - r, ca.y + r),
                                ImVec2(ca.x + r, ca.y), IM_COL32(20, 90, 200, 255));
        }
        if (breakable && in_gutter && ImGui::IsMouseClicked(ImGuiMouseButton_Left))
          ev.gutter_clicked = i;
        ImGui::SetCursorScreenPos(ImVec2(p.x + gw, p.y));
      }
      ImU32 c = style.color ? style.color(i) : 0;
      if (c) ImGui::PushStyleColor(ImGuiCol_Text, c);
      ImGui::TextUnformatted(lines[i].data(), lines[i].data() + lines[i].size());
      if (c) ImGui::PopStyleColor();
    }
  }
  clipper.End();
  ImGui::EndChild();
  return ev;
}

// ---- [SECTION] StepDebugger --------------------------------------------------------------

// Where a debugger stands in a recorded run. at() counts the instructions that have run:
// 0 before the first, total() at the end. The step shown (its row highlighted, its state
// drawn) is the one that just ran, steps[at - 1], because a TraceStep holds the machine
// state *after* its instruction: Step runs the highlighted-next instruction and shows what
// it did. Continue stops right after a breakpointed instruction has run.
class StepDebugger {
 public:
  static constexpr size_t kMaxSteps = 200000;

  explicit StepDebugger(std::string engine) : engine_(std::move(engine)) {}

  // Call first in Draw and Act. A new run (generation) is a new Session: the old recording
  // means nothing there. Where the student had already been stepping, the new program is
  // recorded again and the cursor kept (clamped), so an edit shows its effect at the same
  // step; breakpoints stay (they name (function, pc), which usually survives small edits).
  void sync(Document& doc) {
    if (generation_ == doc.generation()) return;
    generation_ = doc.generation();
    bool was_stepping = recorded_ && at_ > 0;
    size_t keep = at_;
    recorded_ = false;
    rec_ = Recording{};
    at_ = 0;
    moved_ = true;
    range_ = SourceRange{};
    if (was_stepping) {
      ensure_recorded(doc);
      go(doc, keep);
    }
  }

  // Records the run the first time something needs it (record() re-runs the program).
  void ensure_recorded(Document& doc) {
    if (recorded_) return;
    rec_ = doc.session().record(engine_, kMaxSteps);
    recorded_ = true;
    at_ = 0;
  }
  bool recorded() const { return recorded_; }
  const Recording& recording() const { return rec_; }
  // Why there is nothing to step through ("" when there is).
  std::string unavailable() const {
    if (!recorded_) return "";
    if (!rec_.error.empty()) return rec_.error;
    if (rec_.steps.empty()) return "the recording is empty (no instruction ran)";
    return "";
  }

  size_t at() const { return at_; }
  size_t total() const { return rec_.steps.size(); }
  // "stack VM: step 12 / 894 instructions" once recorded, else "": the status bar shows it
  // beside the whole run's count, in the same unit.
  std::string caption() const {
    if (!recorded_ || !unavailable().empty()) return "";
    return engine_ + " VM: step " + std::to_string(at_) + " / " + std::to_string(total()) +
           " instructions" + (rec_.truncated ? " (truncated)" : "");
  }
  const TraceStep* current() const { return at_ > 0 ? &rec_.steps[at_ - 1] : nullptr; }
  const TraceStep* previous() const { return at_ > 1 ? &rec_.steps[at_ - 2] : nullptr; }
  // True once after the cursor moved (the pane scrolls its listing then).
  bool take_moved() { return std::exchange(moved_, false); }

  void step(Document& doc, long n) { go(doc, std::min(total(), at_ + size_t(n))); }
  void back(Document& doc, long n) { go(doc, at_ > size_t(n) ? at_ - size_t(n) : 0); }
  void reset(Document& doc) { go(doc, 0); }
  void cont(Document& doc) {
    size_t j = at_ + 1;
    for (; j < total(); ++j)
      if (is_break(rec_.steps[j - 1].function, rec_.steps[j - 1].pc)) break;
    go(doc, std::min(j, total()));
  }

  bool is_break(const std::string& function, int pc) const {
    return breaks_.count({function, pc}) > 0;
  }
  void toggle_break(const std::string& function, int pc) {
    auto key = std::make_pair(function, pc);
    if (!breaks_.erase(key)) breaks_.insert(key);
  }

  // The verb "break PC [FUNCTION]" over the listing the debugger follows: without a
  // function, the first one (in listing order, so the top level first) with an instruction
  // at PC, so scripts need not spell "<script>" or "<top>".
  bool break_verb(const std::vector<CodeLine>& rows, const std::vector<std::string>& args,
                  std::string* error) {
    long pc = 0;
    if (args.empty() || args.size() > 2) {
      *error = "usage: break PC [FUNCTION]";
      return false;
    }
    if (!parse_count(args, 0, &pc, error)) return false;
    for (const CodeLine& r : rows)
      if (r.pc == pc && (args.size() < 2 || r.function == args[1])) {
        toggle_break(r.function, r.pc);
        return true;
      }
    *error = "no instruction at pc " + args[0] +
             (args.size() > 1 ? " in " + args[1] : std::string()) + " of the code the VM runs";
    return false;
  }

  // Re-asserts the editor highlight each frame the pane is drawn: both VM panes set
  // doc.current, and the one on screen should win.
  void publish(Document& doc) { doc.current = range_; }

  // The verbs "step [N]", "back [N]", "continue", "reset". Returns false when `verb` is not
  // one of them; otherwise *ok says whether it worked.
  bool act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           bool* ok, std::string* error) {
    if (verb != "step" && verb != "back" && verb != "continue" && verb != "reset") return false;
    *ok = false;
    sync(doc);
    ensure_recorded(doc);
    if (std::string why = unavailable(); !why.empty()) {
      *error = "not available: " + why;
      return true;
    }
    long n = 1;
    if ((verb == "step" || verb == "back") && !parse_count(args, 1, &n, error)) return true;
    if (verb == "step") step(doc, n);
    else if (verb == "back") back(doc, n);
    else if (verb == "continue") cont(doc);
    else reset(doc);
    *ok = true;
    return true;
  }

  // Reset | Back | Step | Continue, and "step 12 / 894". The buttons call what act() calls.
  void DrawControls(Document& doc) {
    bool none = recorded_ && !unavailable().empty();
    ImGui::BeginDisabled(none);
    auto button = [&](const char* label, const char* tip, auto&& fn) {
      bool pressed = ImGui::Button(label);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
      if (pressed) {
        ensure_recorded(doc);
        if (unavailable().empty()) fn();
      }
      ImGui::SameLine();
    };
    button("Reset", "back to before the first instruction", [&] { reset(doc); });
    button("< Back", "undo one instruction", [&] { back(doc, 1); });
    button("Step >", "run one instruction", [&] { step(doc, 1); });
    button("Continue >>", "run to the next breakpoint (click a row's gutter) or the end",
           [&] { cont(doc); });
    ImGui::EndDisabled();
    if (!recorded_)
      ImGui::TextDisabled("press Step to record a run");
    else if (!unavailable().empty())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::error()), "not available: %s",
                         unavailable().c_str());
    else
      ImGui::Text("step %zu / %zu%s", at_, total(),
                  rec_.truncated ? " (truncated: the run is longer)" : "");
  }

  // What the program had printed by the current step.
  std::string_view output_so_far() const {
    size_t n = current() ? std::min(current()->output_size, rec_.output.size()) : 0;
    return std::string_view(rec_.output).substr(0, n);
  }

 private:
  void go(Document& doc, size_t at) {
    at_ = std::min(at, total());
    moved_ = true;
    range_ = current() ? doc.range_of(current()->loc) : SourceRange{};
    publish(doc);
  }

  std::string engine_;
  uint64_t generation_ = ~uint64_t(0);
  bool recorded_ = false;
  Recording rec_;
  size_t at_ = 0;
  bool moved_ = false;
  SourceRange range_;
  std::set<std::pair<std::string, int>> breaks_;
};

// The output pane under a debugger: what had been printed by the current step, kept
// scrolled to its end as it grows.
// The line under the step controls: the instruction that just ran, or its runtime error;
// `idle` when nothing has run yet.
inline void DrawStepStatus(const TraceStep* cur, const char* idle) {
  if (cur && !cur->error.empty())
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::error()), "runtime error: %s",
                       cur->error.c_str());
  else if (cur)
    ImGui::Text("ran (%s): %s", cur->function.c_str(), squeeze(cur->instruction).c_str());
  else
    ImGui::TextDisabled("%s", idle);
}

inline void DrawOutputSoFar(const char* id, std::string_view text, ImVec2 size,
                            bool scroll_to_end) {
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_HorizontalScrollbar);
  if (text.empty()) ImGui::TextDisabled("(nothing printed yet)");
  else ImGui::TextUnformatted(text.data(), text.data() + text.size());
  if (scroll_to_end) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

}  // namespace descent::viz
