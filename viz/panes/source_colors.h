// One colour per source line, shared by the source pane (a stripe beside each line number)
// and the code panes (each assembly line tinted like the source line it came from), as
// Compiler Explorer pairs them. Neighbouring lines get clearly different hues.
#pragma once
#include <imgui.h>

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

}  // namespace descent::viz
