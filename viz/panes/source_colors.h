// One colour per source line, shared by the source pane (a stripe beside each line number)
// and the code panes (each assembly or IR line tinted like the source line it came from), as
// Compiler Explorer pairs them. Neighbouring lines get clearly different hues.
#pragma once
#include <imgui.h>

#include <utility>

#include "viz/document.h"

namespace descent::viz {

// A light tint for line `line` (1-based); `alpha` lets a hovered line stand out.
inline ImU32 source_line_color(int line, int alpha = 60) {
  static const ImU32 hues[] = {IM_COL32(230, 80, 80, 255),  IM_COL32(60, 140, 230, 255),
                               IM_COL32(60, 180, 90, 255),  IM_COL32(230, 160, 40, 255),
                               IM_COL32(160, 80, 200, 255), IM_COL32(40, 180, 180, 255),
                               IM_COL32(200, 100, 150, 255), IM_COL32(140, 140, 60, 255)};
  ImU32 c = hues[static_cast<unsigned>(line) % (sizeof hues / sizeof hues[0])];
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
}

// The tint of a code line from source line `line` (0: none), strong while that line is
// among the hovered ones ([first, last]).
inline ImU32 source_line_tint(int line, std::pair<int, int> hovered) {
  if (line <= 0) return 0;
  bool lit = line >= hovered.first && line <= hovered.second;
  return source_line_color(line, lit ? 150 : 45);
}

// The range of source line `line` of the last input (empty when there is none): what a code
// pane reports when one of its lines is hovered.
inline SourceRange source_line_range(Document& doc, int line) {
  const SourceFile* src = doc.session().last_source();
  if (!src || line < 1 || static_cast<uint32_t>(line) > src->line_count()) return {};
  std::string_view text = src->line_text(static_cast<uint32_t>(line));
  uint32_t begin = static_cast<uint32_t>(text.data() - src->text().data());
  return {begin, begin + static_cast<uint32_t>(text.size())};
}

// The source lines another pane hovers ([first, last]; 0, -1 when none).
inline std::pair<int, int> hovered_source_lines(Document& doc) {
  const SourceFile* src = doc.session().last_source();
  SourceRange h = doc.hovered();
  if (!src || !h.valid()) return {0, -1};
  return {static_cast<int>(src->loc_at(h.begin).line),
          static_cast<int>(src->loc_at(h.end - 1).line)};
}

}  // namespace descent::viz
