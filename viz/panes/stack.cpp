// The stack VM pane: the bytecode the VM runs, and a step debugger over a recorded run that
// draws the operand stack as it grows and shrinks, the call depth, and what has been printed.
//
// The VM runs the *fused* code (superinstructions such as JUMP_IF_GE_LOCAL_CONST_INT), so
// that is what the debugger follows; "compiled" shows the code as the compiler emitted it,
// before fusion, to compare (read-only: no instruction of it ever runs).
#include <imgui.h>

#include "viz/pane.h"
#include "viz/panes/debugger.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

// The operand stack as a column of boxes, bottom of the stack at the bottom, the newest
// value highlighted: the picture a whiteboard explanation of a stack machine draws.
void DrawOperandStack(const TraceStep* step, ImVec2 size) {
  ImGui::BeginChild("##operands", size, true);
  if (!step) {
    ImGui::TextDisabled("operand stack");
    ImGui::TextDisabled("(not started)");
    ImGui::EndChild();
    return;
  }
  // The depth after the instruction: a CALL has entered the callee, a RETURN left it.
  ImGui::Text("call depth %d", step->depth);
  ImGui::TextDisabled("operand stack (%zu)", step->stack.size());
  const auto& st = step->stack;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float lh = ImGui::GetTextLineHeight();
  const float bh = lh + 10, gap = 4, label_w = ImGui::CalcTextSize("00").x + 8;
  ImVec2 top = ImGui::GetCursorScreenPos();
  ImVec2 wpos = ImGui::GetWindowPos(), wsize = ImGui::GetWindowSize();
  float pad = ImGui::GetStyle().WindowPadding.y;
  float bottom = wpos.y + wsize.y - pad;
  float x0 = top.x + label_w, x1 = wpos.x + wsize.x - ImGui::GetStyle().WindowPadding.x;
  if (st.empty()) {
    ImGui::SetCursorScreenPos(ImVec2(x0, bottom - lh));
    ImGui::TextDisabled("(empty)");
    ImGui::EndChild();
    return;
  }
  int fit = std::max(1, int((bottom - top.y) / (bh + gap)));
  int n = int(st.size());
  // Too deep to show whole: keep the newest values (the top), and say how many are hidden.
  int first = n > fit ? n - (fit - 1) : 0;
  float y = bottom;
  if (first > 0) {
    ImGui::SetCursorScreenPos(ImVec2(x0, y - lh));
    ImGui::TextDisabled("+%d below", first);
    y -= bh + gap;
  }
  for (int i = first; i < n; ++i) {
    ImVec2 a(x0, y - bh), b(x1, y);
    bool newest = i == n - 1;
    dl->AddRectFilled(a, b, newest ? colors::current() : colors::cell(), 3);
    dl->AddRect(a, b, colors::cell_border(), 3);
    char idx[16];
    std::snprintf(idx, sizeof idx, "%d", i);
    dl->AddText(ImVec2(top.x, a.y + 5), colors::dim(), idx);
    dl->PushClipRect(ImVec2(a.x + 4, a.y), ImVec2(b.x - 4, b.y), true);
    dl->AddText(ImVec2(a.x + 6, a.y + 5), colors::text(), st[i].c_str());
    dl->PopClipRect();
    if (ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b))
      ImGui::SetTooltip("stack[%d] = %s%s", i, st[i].c_str(), newest ? "  (top)" : "");
    y -= bh + gap;
  }
  ImGui::EndChild();
}

struct StackPane : Pane {
  const char* name() const override { return "stack"; }
  const char* title() const override { return "Stack VM"; }
  const char* short_title() const override { return "Stack"; }

  StepDebugger dbg{"stack"};
  bool show_compiled = false;
  uint64_t generation = ~uint64_t(0);
  std::vector<CodeLine> fused, compiled;
  std::vector<std::string> fused_text, compiled_text;
  RowIndex fused_rows;

  void refresh(Document& doc) {
    if (generation == doc.generation()) return;
    generation = doc.generation();
    fused = doc.session().listing("stack-fused");
    compiled = doc.session().listing("stack");
    fused_text.clear(), compiled_text.clear();
    for (auto& r : fused) fused_text.push_back(r.text);
    for (auto& r : compiled) compiled_text.push_back(r.text);
    fused_rows = index_rows(fused);
  }

  std::string why_empty(Document& doc) const {
    if (doc.outcome().status == Outcome::CompileError)
      return "the program does not compile (see the editor)";
    return "there is no stack bytecode for this program";
  }

  std::string caption() const override { return dbg.caption(); }

  void Draw(Document& doc) override {
    refresh(doc);
    dbg.sync(doc);
    if (fused.empty()) {
      ImGui::TextDisabled("Stack VM: not available: %s", why_empty(doc).c_str());
      return;
    }
    dbg.publish(doc);
    dbg.DrawControls(doc);
    // The two choices go on the controls' row if they fit, else together on the next: at a
    // projector's font size (--font-size 22) or a long run's step count, nothing is clipped.
    const ImGuiStyle& ui = ImGui::GetStyle();
    float choices = 2 * (ImGui::GetFrameHeight() + ui.ItemInnerSpacing.x) + ui.ItemSpacing.x +
                    ImGui::CalcTextSize("fused").x + ImGui::CalcTextSize("compiled").x;
    ImGui::SameLine(0, 24);
    if (ImGui::GetContentRegionAvail().x < choices) ImGui::NewLine();
    if (ImGui::RadioButton("fused", !show_compiled)) show_compiled = false;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the code the VM runs (the debugger follows it)");
    ImGui::SameLine();
    if (ImGui::RadioButton("compiled", show_compiled)) show_compiled = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("as the compiler emitted it, before fusion");

    const TraceStep* cur = dbg.current();
    DrawStepStatus(cur, show_compiled ? "as compiled; the VM runs the fused code"
                                      : "click a row's gutter for a breakpoint");

    bool moved = dbg.take_moved();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    const float sp = ImGui::GetStyle().ItemSpacing.y;
    const float out_h = std::max(80.f, avail.y * 0.2f);
    const float mid_h = avail.y - out_h - ImGui::GetTextLineHeightWithSpacing() - sp;
    const float stack_w = std::min(240.f, avail.x * 0.32f);
    const float list_w = avail.x - stack_w - ImGui::GetStyle().ItemSpacing.x;

    const std::vector<CodeLine>& rows = show_compiled ? compiled : fused;
    int cur_row = cur && !show_compiled ? find_row(fused_rows, cur->function, cur->pc) : -1;
    bool error_row = cur && !cur->error.empty();
    CodeListingStyle style;
    style.background = [&](int i) -> ImU32 {
      if (i == cur_row) return error_row ? IM_COL32(230, 60, 60, 90) : colors::current();
      if (under_hover(doc, rows[i])) return colors::highlight();
      return 0;
    };
    style.color = [&](int i) -> ImU32 { return rows[i].pc < 0 ? colors::dim() : 0; };
    if (!show_compiled) {
      style.breakpoint = [&](int i) { return dbg.is_break(rows[i].function, rows[i].pc); };
      style.can_break = [&](int i) { return rows[i].pc >= 0; };
      style.arrow = cur_row;
      style.scroll_to = moved ? cur_row : -1;
    }
    CodeListingEvents ev = CodeListing("##stack_code", show_compiled ? compiled_text : fused_text,
                                       style, ImVec2(list_w, mid_h));
    if (ev.hovered >= 0 && rows[ev.hovered].loc.valid())
      doc.hover_source(doc.range_of(rows[ev.hovered].loc));
    if (ev.gutter_clicked >= 0)
      dbg.toggle_break(rows[ev.gutter_clicked].function, rows[ev.gutter_clicked].pc);
    ImGui::SameLine();
    DrawOperandStack(cur, ImVec2(stack_w, mid_h));

    ImGui::TextDisabled("output");
    if (!dbg.recorded())
      DrawOutputSoFar("##stack_out", "", ImVec2(avail.x, out_h), false);
    else
      DrawOutputSoFar("##stack_out", dbg.output_so_far(), ImVec2(avail.x, out_h), moved);
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    bool ok = false;
    if (dbg.act(doc, verb, args, &ok, error)) return ok;
    if (verb == "view") {
      if (args.size() == 1 && (args[0] == "compiled" || args[0] == "fused")) {
        show_compiled = args[0] == "compiled";
        return true;
      }
      *error = "usage: view compiled|fused";
      return false;
    }
    if (verb == "break") return dbg.break_verb(fused, args, error);
    *error = "stack has no action '" + std::string(verb) + "' (" + join_verbs() + ")";
    return false;
  }

  std::string join_verbs() const {
    std::string s;
    for (auto& v : verbs()) s += (s.empty() ? "" : ", ") + v;
    return s;
  }
  std::vector<std::string> verbs() const override {
    return {"step [N]", "back [N]", "continue", "reset", "break PC [FUNCTION]",
            "view compiled|fused"};
  }
};

}  // namespace

std::unique_ptr<Pane> make_stack_pane() { return std::make_unique<StackPane>(); }

}  // namespace descent::viz
