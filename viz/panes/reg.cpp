// The register VM pane: the code with unlimited virtual registers next to the same code after
// register allocation, the allocator's live intervals as bars (which value sits in which
// register when, and which ones did not fit), and a step debugger that shows the register
// file of the running frame.
//
// The point for students: turn the register count down to 3 and watch values get spilled
// (red, hatched bars; s0, s1 slots in the register file).
//
// [SECTION] colours and the live-interval chart
// [SECTION] the register file
// [SECTION] the pane
#include <imgui.h>

#include <cmath>
#include <cstdlib>

#include "viz/pane.h"
#include "viz/panes/debugger.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

// Continues the row if `width` more pixels fit in the pane, else starts the next row: at a
// projector's font size (--font-size 22) the options wrap instead of running off the edge.
void continue_row(float width, float spacing) {
  ImGui::SameLine(0, spacing);
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}
// The width of a labelled widget: the frame part (a radio's circle, a combo's box), the
// gap, the label.
float labelled_width(float frame, const char* label) {
  return frame + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

// ---- [SECTION] colours and the live-interval chart --------------------------------------

// "r7" -> 7, "s1" -> 1; -1 when there is no number.
int location_number(std::string_view loc) {
  if (loc.size() < 2) return -1;
  int n = 0;
  auto [p, ec] = std::from_chars(loc.data() + 1, loc.data() + loc.size(), n);
  return ec == std::errc() && p == loc.data() + loc.size() ? n : -1;
}

// One colour per register, the same in the bars and in the register file, so a bar can be
// matched with its box at a glance. Spilled values are red.
ImU32 register_color(std::string_view loc, bool spilled) {
  static const ImU32 palette[] = {
      IM_COL32(158, 202, 225, 255), IM_COL32(161, 217, 155, 255), IM_COL32(253, 208, 162, 255),
      IM_COL32(218, 218, 235, 255), IM_COL32(255, 237, 160, 255), IM_COL32(199, 233, 233, 255),
      IM_COL32(252, 197, 192, 255), IM_COL32(204, 235, 197, 255), IM_COL32(222, 203, 228, 255),
      IM_COL32(229, 216, 189, 255), IM_COL32(188, 189, 220, 255), IM_COL32(217, 217, 217, 255)};
  if (spilled || (!loc.empty() && loc[0] == 's')) return IM_COL32(235, 90, 80, 255);
  int n = location_number(loc);
  return n < 0 ? IM_COL32(200, 200, 200, 255) : palette[n % 12];
}

// Diagonal stripes over a rectangle: spilled values must stand out without colour too.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col) {
  dl->PushClipRect(a, b, true);
  float h = b.y - a.y;
  for (float x = a.x - h; x < b.x; x += 6) dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), col);
  dl->PopClipRect();
}

std::string range_label(const LiveRange& r) { return r.value + "  " + r.location; }

// One row per value, x axis the virtual instruction index. `mark` (an instruction the mouse
// is over in a listing, or -1) draws a vertical line and highlights the values live there.
// Returns the range under the mouse, or -1.
int DrawLiveBars(const LiveFunction& f, int mark, ImVec2 size) {
  const float lh = ImGui::GetTextLineHeightWithSpacing();
  int n = std::max(1, f.num_instructions);
  for (const LiveRange& r : f.ranges) n = std::max(n, r.end + 1);
  float label_w = ImGui::CalcTextSize("v00  r00").x;
  for (const LiveRange& r : f.ranges)
    label_w = std::max(label_w, ImGui::CalcTextSize(range_label(r).c_str()).x);
  label_w = std::min(label_w + 12, size.x * 0.4f);
  const float plot_w = std::max(40.f, size.x - label_w - ImGui::GetStyle().ScrollbarSize - 16);
  const float col_w = plot_w / float(n);

  // The axis stays put above the scrolling rows.
  {
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float digit = ImGui::CalcTextSize("0").x;
    // Label every 1, 2, 5, 10, 20, 50, ... instructions: as dense as the labels allow.
    const float need = digit * (float(std::to_string(n).size()) + 1.5f);
    int every = 100000;
    for (int e : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000})
      if (e * col_w >= need) {
        every = e;
        break;
      }
    float x0 = p.x + 8 + label_w;
    dl->AddText(ImVec2(p.x + 8, p.y), colors::dim(), "index");
    for (int i = 0; i < n; i += every) {
      std::string t = std::to_string(i);
      dl->AddText(ImVec2(x0 + i * col_w, p.y), colors::dim(), t.c_str());
    }
    ImGui::Dummy(ImVec2(size.x, lh));
  }
  int hovered = -1;
  ImGui::BeginChild("##live_rows", ImVec2(size.x, size.y - lh), true);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  float x0 = origin.x + label_w;
  ImGuiListClipper clipper;
  clipper.Begin(int(f.ranges.size()), lh);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const LiveRange& r = f.ranges[i];
      ImVec2 p = ImGui::GetCursorScreenPos();
      bool live_at_mark = mark >= r.start && mark <= r.end;
      bool hover = ImGui::IsWindowHovered() &&
                   ImGui::IsMouseHoveringRect(p, ImVec2(x0 + plot_w, p.y + lh));
      if (hover || live_at_mark)
        dl->AddRectFilled(p, ImVec2(x0 + plot_w, p.y + lh),
                          hover ? IM_COL32(0, 0, 0, 18) : colors::highlight());
      // Faint column guides make "which instruction" readable on long rows.
      dl->AddLine(ImVec2(x0, p.y + lh - 1), ImVec2(x0 + plot_w, p.y + lh - 1),
                  IM_COL32(0, 0, 0, 20));
      ImGui::PushStyleColor(ImGuiCol_Text, r.spilled ? colors::error() : colors::text());
      ImGui::TextUnformatted(r.value.c_str());
      ImGui::PopStyleColor();
      ImGui::SameLine(label_w - ImGui::CalcTextSize(r.location.c_str()).x - 8);
      ImGui::TextDisabled("%s", r.location.c_str());
      ImVec2 a(x0 + r.start * col_w, p.y + 3), b(x0 + (r.end + 1) * col_w, p.y + lh - 3);
      b.x = std::max(b.x, a.x + 3);
      dl->AddRectFilled(a, b, register_color(r.location, r.spilled), 3);
      if (r.spilled) hatch(dl, a, b, IM_COL32(120, 0, 0, 200));
      dl->AddRect(a, b, IM_COL32(0, 0, 0, 90), 3);
      if (hover) {
        hovered = i;
        ImGui::SetTooltip("%s: live over instructions %d..%d, in %s%s", r.value.c_str(), r.start,
                          r.end, r.location.c_str(), r.spilled ? " (spilled to memory)" : "");
      }
    }
  }
  clipper.End();
  if (mark >= 0 && mark < n) {
    float x = x0 + (mark + 0.5f) * col_w, top = ImGui::GetWindowPos().y;
    dl->AddLine(ImVec2(x, top), ImVec2(x, top + ImGui::GetWindowHeight()),
                IM_COL32(20, 90, 200, 200), 2);
  }
  ImGui::EndChild();
  return hovered;
}

// ---- [SECTION] the register file --------------------------------------------------------

// Which locations the last instruction wrote: those that differ from the same frame's state
// the last time it was on top. A frame that was just entered (a call) has everything new.
std::set<std::string> written_locations(const Recording& rec, size_t at) {
  std::set<std::string> out;
  if (at == 0 || at > rec.steps.size()) return out;
  const TraceStep& cur = rec.steps[at - 1];
  const TraceStep* before = nullptr;
  for (size_t j = at - 1; j-- > 0;) {
    const TraceStep& s = rec.steps[j];
    if (s.depth < cur.depth) break;  // crossed into the caller: this activation is new
    if (s.depth == cur.depth && s.function == cur.function) {
      before = &s;
      break;
    }
  }
  std::map<std::string, std::string> old;
  if (before)
    for (auto& [loc, v] : before->registers) old[loc] = v;
  for (auto& [loc, v] : cur.registers) {
    auto it = old.find(loc);
    if (it == old.end() || it->second != v) out.insert(loc);
  }
  return out;
}

constexpr float kBoxW = 90, kBoxGap = 6;  // at 16 px: em()
float box_height() { return 2 * ImGui::GetTextLineHeight() + 8; }
int box_columns(float child_width) {
  float inner = child_width - 2 * ImGui::GetStyle().WindowPadding.x;
  return std::max(1, int((inner + kBoxGap) / (em(kBoxW) + kBoxGap)));
}
// The height the register file needs for `boxes` boxes in a child `width` wide.
float register_file_height(int boxes, float width) {
  int rows = (boxes + box_columns(width) - 1) / box_columns(width);
  return ImGui::GetTextLineHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y +
         rows * (box_height() + kBoxGap);
}

void DrawRegisterFile(int num_registers, const TraceStep* cur,
                      const std::set<std::string>& written, ImVec2 size) {
  ImGui::BeginChild("##regfile", size, true);
  if (!cur) {
    ImGui::TextDisabled("register file (%d registers): press Step", num_registers);
    ImGui::EndChild();
    return;
  }
  // The frame on top after the instruction: a call's state is already the callee's.
  ImGui::Text("registers after it (call depth %d)", cur->depth);
  std::map<std::string, std::string> value(cur->registers.begin(), cur->registers.end());
  std::vector<std::string> names;
  for (int i = 0; i < num_registers; ++i) names.push_back("r" + std::to_string(i));
  std::vector<std::pair<int, std::string>> slots;  // spill slots, in number order
  for (auto& [loc, v] : cur->registers)
    if (!loc.empty() && loc[0] != 'r') slots.emplace_back(location_number(loc), loc);
    else if (location_number(loc) >= num_registers) slots.emplace_back(-1, loc);
  std::sort(slots.begin(), slots.end());
  for (auto& s : slots) names.push_back(s.second);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float lh = ImGui::GetTextLineHeight();
  const float bw = em(kBoxW), bh = box_height(), gap = kBoxGap;
  int cols = box_columns(size.x);
  ImVec2 o = ImGui::GetCursorScreenPos();
  for (size_t i = 0; i < names.size(); ++i) {
    ImVec2 a(o.x + (i % cols) * (bw + gap), o.y + (i / cols) * (bh + gap)), b(a.x + bw, a.y + bh);
    auto it = value.find(names[i]);
    bool has = it != value.end();
    bool wrote = written.count(names[i]) > 0;
    bool slot = names[i][0] != 'r';
    dl->AddRectFilled(a, b, wrote ? colors::current() : colors::cell(), 3);
    // A stripe in the register's bar colour ties the box to the live-interval chart.
    dl->AddRectFilled(a, ImVec2(a.x + 5, b.y), register_color(names[i], slot), 3);
    dl->AddRect(a, b, wrote ? IM_COL32(20, 90, 200, 255) : colors::cell_border(), 3,
                0, wrote ? 2.f : 1.f);
    dl->AddText(ImVec2(a.x + 9, a.y + 3), slot ? colors::error() : colors::dim(),
                names[i].c_str());
    dl->PushClipRect(ImVec2(a.x + 8, a.y), ImVec2(b.x - 3, b.y), true);
    dl->AddText(ImVec2(a.x + 9, a.y + 4 + lh), has ? colors::text() : colors::dim(),
                has ? it->second.c_str() : "-");
    dl->PopClipRect();
    if (has && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(a, b))
      ImGui::SetTooltip("%s = %s%s", names[i].c_str(), it->second.c_str(),
                        wrote ? "  (just written)" : "");
  }
  size_t rows = (names.size() + cols - 1) / cols;
  ImGui::Dummy(ImVec2(cols * (bw + gap), rows * (bh + gap)));
  ImGui::EndChild();
}

// ---- [SECTION] the pane -----------------------------------------------------------------

struct RegPane : Pane {
  const char* name() const override { return "reg"; }
  const char* title() const override { return "Register VM"; }
  const char* short_title() const override { return "Reg VM"; }

  StepDebugger dbg{"reg"};
  bool right_running = false;   // right column: the fused code the VM runs (else allocated)
  std::string function;         // whose code and live intervals are shown
  uint64_t generation = ~uint64_t(0);
  std::vector<CodeLine> virt, alloc, fused;
  std::vector<LiveFunction> live;
  RowIndex fused_rows;
  // Per selected function: the rows of the virtual and allocated listings.
  std::vector<int> virt_rows, alloc_rows;
  std::vector<std::string> virt_text, alloc_text, fused_text;
  std::string filtered_for;
  std::set<std::string> written;
  size_t written_at = ~size_t(0);
  int hovered_range = -1;  // the chart's bar under the mouse, from the previous frame

  void refresh(Document& doc) {
    if (generation != doc.generation()) {
      generation = doc.generation();
      Session& s = doc.session();
      virt = s.listing("reg");
      alloc = s.listing("reg-alloc");
      fused = s.listing("reg-fused");
      live = s.live_ranges();
      fused_rows = index_rows(fused);
      fused_text.clear();
      for (auto& r : fused) fused_text.push_back(r.text);
      filtered_for = "\x01";  // force the filter below
      written_at = ~size_t(0);
      // The selected function is per-pane state: keep it across runs when it still exists.
      if (!live_function() && !live.empty()) function = live.front().function;
    }
    if (filtered_for != function) {
      filtered_for = function;
      filter(virt, virt_rows, virt_text);
      filter(alloc, alloc_rows, alloc_text);
    }
    if (written_at != dbg.at() && dbg.recorded()) {
      written_at = dbg.at();
      written = written_locations(dbg.recording(), dbg.at());
    }
  }

  // The selected function's rows, so the listings line up with its live-interval chart;
  // everything when the names do not match (nothing is better hidden than shown).
  void filter(const std::vector<CodeLine>& all, std::vector<int>& rows,
              std::vector<std::string>& text) {
    rows.clear(), text.clear();
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].function == function && !all[i].text.empty()) rows.push_back(int(i));
    if (rows.empty())
      for (size_t i = 0; i < all.size(); ++i) rows.push_back(int(i));
    for (int i : rows) text.push_back(all[i].text);
  }

  const LiveFunction* live_function() const {
    for (auto& f : live)
      if (f.function == function) return &f;
    return nullptr;
  }

  // Stepping into a call shows the callee's code and intervals: the register file on
  // screen is that frame's.
  void follow() {
    if (const TraceStep* cur = dbg.current())
      for (auto& f : live)
        if (f.function == cur->function) function = f.function;
  }

  std::string caption() const override { return dbg.caption(); }

  void Draw(Document& doc) override {
    dbg.sync(doc);
    refresh(doc);
    if (virt.empty()) {
      ImGui::TextDisabled("Register VM: not available: %s",
                          doc.outcome().status == Outcome::CompileError
                              ? "the program does not compile (see the editor)"
                              : "there is no register bytecode for this program");
      return;
    }
    dbg.publish(doc);
    size_t at_before = dbg.at();
    dbg.DrawControls(doc);
    if (dbg.at() != at_before && dbg.at() > 0) right_running = true;
    bool moved = dbg.take_moved();
    if (moved) follow(), refresh(doc);

    // Second row: the register count, the function, the right column.
    int n = doc.settings().num_registers;
    ImGui::SetNextItemWidth(em(110));
    // Typed counts apply on Enter (each keystroke would re-run the pipeline on "1" of "12").
    if (ImGui::InputInt("registers", &n, 1, 1, ImGuiInputTextFlags_EnterReturnsTrue) &&
        std::clamp(n, 3, 32) != doc.settings().num_registers)
      set_registers(doc, std::clamp(n, 3, 32));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the register file size (3..32): try 3");
    if (live.size() > 1) {
      continue_row(labelled_width(em(140), "function"), 16);
      ImGui::SetNextItemWidth(em(140));
      if (ImGui::BeginCombo("function", function.c_str())) {
        for (auto& f : live)
          if (ImGui::Selectable(f.function.c_str(), f.function == function)) function = f.function;
        ImGui::EndCombo();
      }
    }
    const float radio = ImGui::GetFrameHeight();
    continue_row(labelled_width(radio, "allocated") + ImGui::GetStyle().ItemSpacing.x +
                     labelled_width(radio, "running"),
                 16);  // the two choices stay together
    if (ImGui::RadioButton("allocated", !right_running)) right_running = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("running", right_running)) right_running = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the fused code the VM runs, with the debugger");
    refresh(doc);

    const TraceStep* cur = dbg.current();
    DrawStepStatus(cur, "virtual registers (left), after allocation (right)");

    ImVec2 avail = ImGui::GetContentRegionAvail();
    const float lh = ImGui::GetTextLineHeightWithSpacing();
    int boxes = doc.session().num_registers();
    if (cur)
      for (auto& [loc, v] : cur->registers)
        if (!loc.empty() && loc[0] != 'r') ++boxes;
    float rf_h = cur ? std::min(avail.y * 0.32f, register_file_height(boxes, avail.x))
                     : lh + 2 * ImGui::GetStyle().WindowPadding.y;
    // What is left after the register file, less the two captions and the item spacing.
    float rest = avail.y - rf_h - 4 * ImGui::GetStyle().ItemSpacing.y - 2;
    float code_h = rest * 0.55f, bars_h = rest - code_h - lh;

    // The listings.
    int mark = -1;                 // the virtual instruction the mouse is over
    const LiveFunction* lf = live_function();
    const LiveRange* hr =
        lf && hovered_range >= 0 && hovered_range < int(lf->ranges.size())
            ? &lf->ranges[hovered_range] : nullptr;
    auto code_style = [&](const std::vector<CodeLine>& all, const std::vector<int>& rows) {
      CodeListingStyle st;
      const std::vector<CodeLine>* a = &all;
      const std::vector<int>* rs = &rows;
      const std::string* fn = &function;
      st.background = [&doc, hr, a, rs, fn](int i) -> ImU32 {
        const CodeLine& r = (*a)[(*rs)[i]];
        if (hr && r.function == *fn && r.pc >= hr->start && r.pc <= hr->end)
          return colors::highlight();
        return under_hover(doc, r) ? colors::highlight() : 0;
      };
      st.color = [a, rs](int i) -> ImU32 { return (*a)[(*rs)[i]].pc < 0 ? colors::dim() : 0; };
      return st;
    };
    auto hover_row = [&](const std::vector<CodeLine>& all, const std::vector<int>& rows, int i) {
      if (i < 0) return;
      const CodeLine& r = all[rows[i]];
      if (r.loc.valid()) doc.hover_source(doc.range_of(r.loc));
      if (r.pc >= 0 && r.function == function) mark = r.pc;
    };
    if (ImGui::BeginTable("##reg_code", 2, ImGuiTableFlags_SizingStretchSame |
                                               ImGuiTableFlags_BordersInnerV)) {
      ImGui::TableNextColumn();
      ImGui::TextDisabled("virtual (reg)");
      hover_row(virt, virt_rows,
                CodeListing("##virt", virt_text, code_style(virt, virt_rows),
                            ImVec2(-1, code_h - lh)).hovered);
      ImGui::TableNextColumn();
      if (!right_running) {
        ImGui::TextDisabled("allocated (reg-alloc, %d registers)",
                            doc.session().num_registers());
        hover_row(alloc, alloc_rows,
                  CodeListing("##alloc", alloc_text, code_style(alloc, alloc_rows),
                              ImVec2(-1, code_h - lh)).hovered);
      } else {
        ImGui::TextDisabled("running (reg-fused)");
        int cur_row = cur ? find_row(fused_rows, cur->function, cur->pc) : -1;
        bool error_row = cur && !cur->error.empty();
        CodeListingStyle st;
        st.background = [&](int i) -> ImU32 {
          if (i == cur_row) return error_row ? IM_COL32(230, 60, 60, 90) : colors::current();
          return under_hover(doc, fused[i]) ? colors::highlight() : 0;
        };
        st.color = [&](int i) -> ImU32 { return fused[i].pc < 0 ? colors::dim() : 0; };
        st.breakpoint = [&](int i) { return dbg.is_break(fused[i].function, fused[i].pc); };
        st.can_break = [&](int i) { return fused[i].pc >= 0; };
        st.arrow = cur_row;
        st.scroll_to = moved ? cur_row : -1;
        CodeListingEvents ev = CodeListing("##fused", fused_text, st, ImVec2(-1, code_h - lh));
        if (ev.hovered >= 0 && fused[ev.hovered].loc.valid())
          doc.hover_source(doc.range_of(fused[ev.hovered].loc));
        if (ev.gutter_clicked >= 0)
          dbg.toggle_break(fused[ev.gutter_clicked].function, fused[ev.gutter_clicked].pc);
      }
      ImGui::EndTable();
    }

    // The live intervals.
    if (!lf) {
      ImGui::TextDisabled("live intervals: not available: %s",
                          live.empty() ? "the allocator reported none"
                                       : ("no intervals for " + function).c_str());
      ImGui::Dummy(ImVec2(avail.x, bars_h));
    } else {
      int spilled = 0;
      for (auto& r : lf->ranges) spilled += r.spilled;
      ImGui::Text("live intervals of %s: %zu values, ", lf->function.c_str(), lf->ranges.size());
      ImGui::SameLine(0, 0);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(spilled ? colors::error() : colors::dim()),
                         "%d spilled", spilled);
      hovered_range = DrawLiveBars(*lf, mark, ImVec2(avail.x, bars_h));
    }

    DrawRegisterFile(doc.session().num_registers(), cur, written, ImVec2(avail.x, rf_h));
  }

  void set_registers(Document& doc, int n) {
    doc.settings().num_registers = n;
    doc.rerun_now();
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    dbg.sync(doc);
    refresh(doc);
    bool ok = false;
    if (dbg.act(doc, verb, args, &ok, error)) {
      if (ok && dbg.at() > 0) right_running = true;
      follow();
      refresh(doc);
      return ok;
    }
    if (verb == "break") return dbg.break_verb(fused, args, error);
    if (verb == "registers") {
      long n = 0;
      if (args.size() != 1 || !parse_count(args, 0, &n, error) || n < 3 || n > 32) {
        *error = "usage: registers N (3..32)";
        return false;
      }
      set_registers(doc, int(n));
      return true;
    }
    if (verb == "function") {
      if (args.size() != 1) {
        *error = "usage: function NAME";
        return false;
      }
      for (auto& f : live)
        if (f.function == args[0]) {
          function = f.function;
          refresh(doc);
          return true;
        }
      std::string names;
      for (auto& f : live) names += (names.empty() ? "" : ", ") + f.function;
      *error = "no function '" + args[0] + "' (functions: " + (names.empty() ? "none" : names) +
               ")";
      return false;
    }
    if (verb == "view") {
      if (args.size() == 1 && (args[0] == "allocated" || args[0] == "running")) {
        right_running = args[0] == "running";
        return true;
      }
      *error = "usage: view allocated|running";
      return false;
    }
    *error = "reg has no action '" + std::string(verb) + "'";
    return false;
  }

  std::vector<std::string> verbs() const override {
    return {"step [N]", "back [N]", "continue", "reset", "break PC [FUNCTION]", "registers N",
            "function NAME", "view allocated|running"};
  }
};

}  // namespace

std::unique_ptr<Pane> make_reg_pane() { return std::make_unique<RegPane>(); }

}  // namespace descent::viz
