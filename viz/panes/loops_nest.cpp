// The loop-nest pane's nest view (loops_internal.h): the loops as a tree, coloured by kind
// and clickable, the schedule trace beside it, and under them the kernel as C or TVMScript
// with what the last step changed in green and the selected loop's header marked.
//
// Apart from loops.cpp because it only draws: it reads the nest, trace and listings that
// LoopsPane::refresh() cached and calls select_loop() when a loop is clicked.
#include <imgui.h>

#include <utility>

#include "viz/panes/loops_internal.h"
#include "viz/widgets.h"

namespace descent::viz::loops_internal {

namespace {

const char* const kKinds[] = {"serial", "parallel", "vectorized", "unrolled", "bound"};

}  // namespace

void LoopsPane::draw_legend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float h = ImGui::GetTextLineHeight();
  ImGui::TextDisabled("loop kinds:");
  for (const char* k : kKinds) {
    ImGui::SameLine();
    ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(p.x, p.y + h * 0.2f), ImVec2(p.x + h * 0.6f, p.y + h * 0.8f),
                      colors::loop_kind(k), 2);
    ImGui::Dummy(ImVec2(h * 0.6f, h));
    ImGui::SameLine(0, 4);
    ImGui::PushStyleColor(ImGuiCol_Text, colors::loop_kind(k));
    ImGui::TextUnformatted(k);
    ImGui::PopStyleColor();
  }
}

void LoopsPane::draw_nest(ImVec2 size) {
  ImGui::BeginChild("##nest", size, true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextDisabled("Loop nest (click a loop to select it)");
  ImGui::Separator();
  draw_node(tree_);
  ImGui::EndChild();
}

void LoopsPane::draw_node(const TreeNode& n) {
  ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_DefaultOpen | ImGuiTreeNodeFlags_OpenOnArrow |
                             ImGuiTreeNodeFlags_SpanAvailWidth;
  bool leaf = n.kids.empty();
  if (leaf) flags |= ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen;
  auto it = n.head == "for" ? loops_.find(&n) : loops_.end();
  const LoopInfo* loop = it == loops_.end() ? nullptr : &it->second;
  if (loop && loop->name == selected_) flags |= ImGuiTreeNodeFlags_Selected;

  std::string label, extra;
  ImU32 color = 0;
  if (loop) {
    label = "for " + n.atom + " in " + n.detail;
    if (loop->kind != "serial") extra = loop->kind;
    color = colors::loop_kind(loop->kind);
  } else if (n.head == "func") {
    label = "kernel " + n.atom;
  } else if (n.head == "block") {
    label = "block " + n.atom;
    extra = n.detail;
    color = IM_COL32(20, 110, 50, 255);
  } else if (n.head == "init") {
    label = "init";
    color = colors::dim();
  } else if (n.head == "if") {
    label = "if " + n.atom;
  } else if (n.head == "alloc") {
    label = "alloc " + n.atom;
    color = colors::dim();
  } else if (n.head == "stmt") {
    label = n.atom;
  } else {
    label = n.head + (n.atom.empty() ? "" : " " + n.atom);
  }
  if (color) ImGui::PushStyleColor(ImGuiCol_Text, color);
  bool open = ImGui::TreeNodeEx(static_cast<const void*>(&n), flags, "%s", label.c_str());
  if (color) ImGui::PopStyleColor();
  if (loop && ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) select_loop(loop->name);
  if (loop && ImGui::IsItemHovered())
    ImGui::SetTooltip("%s loop '%s'%s", loop->kind.c_str(), loop->name.c_str(),
                      loop->nest.empty() ? "" : ("\nits nest: " + join(loop->nest, " ")).c_str());
  if (!extra.empty()) {
    ImGui::SameLine();
    if (loop) {
      // The kind as a coloured tag, so it reads on a projector without the legend.
      ImVec2 p = ImGui::GetCursorScreenPos();
      ImVec2 ts = ImGui::CalcTextSize(extra.c_str());
      ImGui::GetWindowDrawList()->AddRectFilled(
          ImVec2(p.x - 3, p.y), ImVec2(p.x + ts.x + 3, p.y + ts.y), color, 3);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 255, 255, 255));
      ImGui::TextUnformatted(extra.c_str());
      ImGui::PopStyleColor();
    } else {
      ImGui::TextDisabled("%s", extra.c_str());
    }
  }
  if (open && !leaf) {
    for (const auto& k : n.kids) draw_node(k);
    ImGui::TreePop();
  }
}

void LoopsPane::draw_trace(ImVec2 size) {
  ImGui::BeginChild("##trace_box", size, false);
  ImGui::TextDisabled("Schedule trace (%zu step%s)", trace_lines_.size(),
                      trace_lines_.size() == 1 ? "" : "s");
  if (trace_lines_.empty()) {
    ImGui::TextDisabled("none: the nest is as lowered");
  } else {
    ListingStyle style;
    style.line_numbers = true;
    int last = static_cast<int>(trace_lines_.size()) - 1;
    bool fresh = last_was_step_;
    style.background = [last, fresh](int i) {
      return fresh && i == last ? colors::changed() : 0;
    };
    style.scroll_to = trace_scroll_ ? last : -1;  // once, so the student can scroll up
    trace_scroll_ = false;
    Listing("##trace", trace_lines_, style);
  }
  ImGui::EndChild();
}

int LoopsPane::find_header(const std::vector<std::string>& lines) const {
  int sel_line = -1;
  const LoopInfo* loop = nullptr;
  for (const auto& [node, info] : loops_)
    if (info.name == selected_) loop = &info;
  if (!loop) return -1;
  const std::string& var = loop->var;
  std::string pat = "int64_t " + var + " = ";
  // "C.j" is the j above block C: search back from the block's line.
  size_t from = lines.size();
  if (loop->name != var && !loop->block.empty()) {
    const std::string& block = loop->block;
    std::string mark =
        view_ == "c" ? "/* block " + block + " */" : "T.block(\"" + block + "\")";
    for (size_t i = 0; i < lines.size() && from == lines.size(); ++i)
      if (lines[i].find(mark) != std::string::npos) from = i;
  }
  auto header = [&](size_t i) {
    if (view_ == "c") return lines[i].find(pat) != std::string::npos;
    // TVMScript: "for i, j, k in T.grid(...)" declares several loops on one line.
    std::string t = trim(lines[i]);
    size_t in = t.find(" in ");
    if (t.rfind("for ", 0) != 0 || in == std::string::npos) return false;
    for (auto& w : split_words(t.substr(4, in - 4)))
      if (w == var || w == var + ",") return true;
    return false;
  };
  if (from < lines.size()) {
    for (size_t i = from + 1; i-- > 0 && sel_line < 0;)
      if (header(i)) sel_line = static_cast<int>(i);
  } else {
    for (size_t i = 0; i < lines.size() && sel_line < 0; ++i)
      if (header(i)) sel_line = static_cast<int>(i);
  }
  return sel_line;
}

void LoopsPane::draw_view(Document& doc) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Show");
  for (auto [key, label] : {std::pair{"c", "C"}, std::pair{"tir", "TVMScript"},
                            std::pair{"tir-original", "as lowered"},
                            std::pair{"order", "iteration order"}}) {
    ImGui::SameLine();
    if (ImGui::RadioButton(label, view_ == key)) view_ = key;
  }
  if (view_ == "order") {
    draw_order(doc);
    return;
  }
  ImGui::SameLine();
  ImGui::TextDisabled(" (green: changed by the last step)");
  const auto& lines = view_lines_[view_];
  const auto& changed = view_changed_[view_];
  // The selected loop's header line, found by the variable it declares; searched again only
  // when the selection, the view or the nest changes.
  std::string key = selected_ + "|" + view_;
  if (key != sel_key_) {
    sel_key_ = key;
    sel_line_ = find_header(lines);
    if (sel_line_ >= 0 && scroll_view_to_ < 0) scroll_view_to_ = sel_line_;
  }
  int sel_line = sel_line_;
  ListingStyle style;
  style.line_numbers = true;
  style.background = [&changed, sel_line](int i) -> ImU32 {
    if (i == sel_line) return colors::current();
    return size_t(i) < changed.size() && changed[size_t(i)] ? colors::changed() : 0;
  };
  style.scroll_to = scroll_view_to_;
  scroll_view_to_ = -1;
  Listing("##view", lines, style);
}

}  // namespace descent::viz::loops_internal
