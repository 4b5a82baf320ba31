// The analysis pane's source view (analysis_internal.h): the analysed input a line a row, the
// facts that hold after each line beside it (Result::facts_at_line), lines with an alarm
// tinted (errors red, warnings yellow, notes grey) and the alarm's message under the mouse,
// then every alarm listed under the source.
//
// Apart from the graph (analysis_graph.cpp) because it speaks of lines, not blocks: it reads
// what AnalysisPane::refresh() gathered per line and shares only the cursor's line with it.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "viz/panes/analysis_internal.h"
#include "viz/panes/source_colors.h"

namespace descent::viz::analysis_internal {

namespace {

ImU32 severity_ink(int s) {
  return s == kError ? colors::error() : s == kWarning ? IM_COL32(215, 150, 0, 255)
                                                        : IM_COL32(130, 130, 130, 255);
}
ImU32 severity_tint(int s) {
  return s == kError ? IM_COL32(230, 60, 60, 60) : s == kWarning ? IM_COL32(245, 200, 30, 80)
                                                                  : IM_COL32(150, 150, 150, 35);
}

}  // namespace

void AnalysisPane::draw_source(Document& doc, float height, int current_line) {
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

}  // namespace descent::viz::analysis_internal
