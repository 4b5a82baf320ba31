// Drawing helpers the panes share: listings that stay fluid at any length, line diffs,
// a layered graph layout, and the colours everything uses. No pipeline knowledge here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

#include "lang/text.h"

namespace descent::viz {

// ---- Colours (one palette, so the same thing has the same colour in every pane) ----
namespace colors {
ImU32 highlight();      // a hovered source range / hovered row
ImU32 current();        // the debugger's current instruction / source range
ImU32 changed();        // lines a pass changed
ImU32 deleted();        // lines a pass deleted
ImU32 error();          // error underlines and messages
ImU32 text();           // ordinary text
ImU32 dim();            // secondary text: line numbers, offsets
// A value's box (operand-stack slot, register) and its outline: from the theme, so text()
// reads on it in the light and the dark theme alike.
ImU32 cell();
ImU32 cell_border();
// Loop kinds of the loop-nest pane: serial, parallel, vectorized, unrolled, bound.
ImU32 loop_kind(std::string_view kind);
// Node kinds of graphs: "kernel", "input", "const"; AST heads get a colour by category.
ImU32 node_kind(std::string_view kind);
}  // namespace colors

using descent::split_lines;  // lang/text.h

// A width designed at the default 16-pixel font, at the current font size: fixed pixel
// widths clipped their text at --font-size 22 (a projector's).
float em(float px_at_16);

// A scrolling, clipped list of monospace lines (only the visible ones are drawn, so a
// 50,000-line dump scrolls as fast as a 50-line one).
struct ListingStyle {
  // Background of line i (0: none).
  std::function<ImU32(int)> background;
  // Text colour of line i (0: the default).
  std::function<ImU32(int)> color;
  int scroll_to = -1;        // scroll so this line is visible (once: pass -1 afterwards)
  bool line_numbers = false;
  // With line_numbers: line i's number (-1: none, e.g. a deleted line shown in place);
  // unset: i + 1.
  std::function<int(int)> number;
};
// Draws the listing in a child window of `size` (0,0: all available space). Returns the
// line under the mouse, or -1.
int Listing(const char* id, const std::vector<std::string>& lines, const ListingStyle& style,
            ImVec2 size = ImVec2(0, 0));

// ---- Graphs ----
// A layered (Sugiyama-style) layout of a directed acyclic graph: nodes go into layers by
// longest path from the sources, the order within a layer is improved by barycentre
// sweeps to cut crossings, and layers stack top to bottom.
struct GraphLayout {
  std::vector<ImVec2> pos;   // each node's top-left corner, in layout space
  std::vector<int> layer;    // each node's layer
  ImVec2 size;               // the bounding box of the whole layout
  // bends[e]: where edge e (an index into the edges given) crosses the layers between its
  // ends, top to bottom, as a vertical run (top, bottom) through each: a slot of its own in
  // the layer's order, so a long edge passes between boxes instead of through them. Empty
  // for an edge between adjacent layers.
  std::vector<std::vector<ImVec2>> bends;
};
// sizes[i]: node i's box; edges: (from, to) pairs of node indices (cycles are tolerated:
// back edges are ignored for layering).
GraphLayout layered_layout(const std::vector<ImVec2>& sizes,
                           const std::vector<std::pair<int, int>>& edges,
                           float layer_gap = 48, float node_gap = 24);

struct GraphNodeStyle {
  std::string label;   // one or more lines
  ImU32 fill = 0;      // 0: the default
  ImU32 border = 0;
  bool highlight = false;
  // The colour of each line of the label (missing or 0: the dark default), so one box can
  // tell a heading, facts and code apart (the analysis pane's basic blocks).
  std::vector<ImU32> line_colors;
};
// Draws a laid-out graph in a scrolling child window; edges are curves with arrowheads.
// An edge that does not point down (its target's layer is not below its source's: a loop's
// back edge, left out of the edges given to layered_layout) goes round the right-hand side of
// the boxes between its ends, through the gaps between layers, instead of up through them.
// Returns the node under the mouse, or -1. drawn (optional): which nodes were in view and
// drawn this frame.
int DrawGraph(const char* id, const GraphLayout& layout, const std::vector<ImVec2>& sizes,
              const std::vector<GraphNodeStyle>& nodes,
              const std::vector<std::pair<int, int>>& edges,
              const std::vector<std::string>& edge_labels = {}, ImVec2 size = ImVec2(0, 0),
              std::vector<char>* drawn = nullptr);
// The box a label needs (with padding) in the current font.
ImVec2 node_size(const std::string& label);

}  // namespace descent::viz
