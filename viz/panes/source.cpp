// The source editor: the program, editable, with its errors underlined and the source
// ranges the other panes point at highlighted.
//
// ImGui's InputTextMultiline draws plain text only. To colour ranges we make it exactly as
// big as its text, so that it never scrolls itself, put it in a scrolling child of our own,
// and paint the highlights and underlines on the child's draw list at positions computed
// the way the input box lays out text: one font size per line, CalcTextSize() across.
// The input box's background is made transparent, so what we paint shows beneath the text.
//
// [SECTION] text geometry   [SECTION] the editor   [SECTION] errors and output   [SECTION] Act
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "lang/text.h"
#include "viz/pane.h"
#include "viz/panes/source_colors.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

// ---- [SECTION] text geometry -----------------------------------------------------------

// Byte offsets of the start of every line of a text (a trailing newline opens one more,
// empty line, as the input box shows it).
std::vector<uint32_t> line_starts_of(const std::string& text) {
  std::vector<uint32_t> starts{0};
  for (uint32_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  return starts;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || static_cast<unsigned char>(c) >= 0x80;
}

// The source range of the thing at `offset`: the token the last run lexed there when the
// text is still what that run saw, else the word around it (the run is a keystroke behind).
SourceRange range_at(Document& doc, const std::string& text, uint32_t offset) {
  const SourceFile* src = doc.session().last_source();
  if (src && src->text() == text) {
    for (const Token& t : doc.session().last_tokens()) {
      uint32_t b = t.loc.offset, e = b + static_cast<uint32_t>(t.text.size());
      if (offset >= b && offset < e && t.kind != Tok::Newline && t.kind != Tok::Eof)
        return {b, e};
      if (b > offset) break;
    }
    return {};
  }
  if (offset >= text.size() || !is_word_char(text[offset])) return {};
  uint32_t b = offset, e = offset;
  while (b > 0 && is_word_char(text[b - 1])) --b;
  while (e < text.size() && is_word_char(text[e])) ++e;
  return {b, e};
}

// Undoes the two escapes a one-line scripted command needs for a multi-line program.
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == '\\')) {
      char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : '\\';
    } else {
      out += s[i];
    }
  }
  return out;
}

struct SourcePane : Pane {
  const char* name() const override { return "source"; }
  const char* title() const override { return "Source"; }
  std::vector<std::string> verbs() const override {
    return {"set TEXT", "append TEXT", "hover LINE:COL|off", "goto LINE"};
  }

  // The editor's copy of the text: ImGui edits it in place; every change goes to the
  // Document at once (which debounces the re-run), so the two differ only when something
  // else (a script, File > Open) replaced the Document's text.
  std::string buf_;
  std::vector<uint32_t> starts_;  // line starts of buf_
  float max_width_ = 0;           // the widest line, in pixels
  bool geometry_dirty_ = true, width_dirty_ = true;
  ImGuiID input_id_ = 0;          // the input box's ImGui id

  int cursor_ = -1;               // the caret's byte offset, as the input box last reported
  int scroll_to_line_ = -1;       // 0-based; scroll the editor there on the next frame
  int goto_line_ = -1;            // the line "goto" marked, until the next edit
  SourceRange hover_override_;    // set by the "hover" verb, shown until the mouse moves in
  SourceRange seen_current_, seen_hovered_;  // to scroll when another pane moves them

  uint64_t diag_gen_ = ~0ull;
  std::vector<SourceRange> diag_ranges_;  // each diagnostic's range, cached per run

  // The output pane's lines, cached per run.
  uint64_t out_gen_ = ~0ull;
  std::vector<std::string> out_lines_;
  std::vector<ImU32> out_colors_;

  // Line and byte-in-line of an offset of buf_.
  std::pair<int, uint32_t> line_col(uint32_t offset) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    int line = static_cast<int>(it - starts_.begin()) - 1;
    return {std::max(line, 0), offset - starts_[std::max(line, 0)]};
  }
  std::string_view line_text(int line) const {
    uint32_t b = starts_[line];
    uint32_t e = line + 1 < static_cast<int>(starts_.size()) ? starts_[line + 1] - 1
                                                              : static_cast<uint32_t>(buf_.size());
    return std::string_view(buf_).substr(b, e - b);
  }
  float x_of(int line, uint32_t byte) const {
    std::string_view t = line_text(line);
    byte = std::min<uint32_t>(byte, static_cast<uint32_t>(t.size()));
    return ImGui::CalcTextSize(t.data(), t.data() + byte).x;
  }

  void sync(Document& doc) {
    if (buf_ != doc.text()) {
      buf_ = doc.text();
      geometry_dirty_ = true;
      // The input box keeps its own copy while it has focus: make it let go, so it
      // reloads ours instead of writing its stale text back.
      if (input_id_ != 0 && ImGui::GetCurrentContext() && ImGui::GetActiveID() == input_id_)
        ImGui::ClearActiveID();
    }
    if (geometry_dirty_) {
      starts_ = line_starts_of(buf_);
      width_dirty_ = true;
      geometry_dirty_ = false;
    }
  }
  // Text widths need the font, which exists only inside a frame.
  void measure() {
    if (!width_dirty_) return;
    max_width_ = 0;
    for (size_t i = 0; i < starts_.size(); ++i) {
      std::string_view t = line_text(static_cast<int>(i));
      max_width_ = std::max(max_width_, ImGui::CalcTextSize(t.data(), t.data() + t.size()).x);
    }
    width_dirty_ = false;
  }

  // ---- [SECTION] the editor ------------------------------------------------------------

  // Paints a range's background, line by line.
  // A range that ends with a line break (a NEWLINE token, a statement) ends on its own
  // line: the break has no glyph to mark.
  SourceRange visible_part(SourceRange r) const {
    if (r.end > r.begin + 1 && r.end <= buf_.size() && buf_[r.end - 1] == '\n') --r.end;
    else if (r.end == r.begin + 1 && r.begin < buf_.size() && buf_[r.begin] == '\n') r.end = r.begin;
    return r;
  }

  void fill_range(ImDrawList* dl, ImVec2 origin, float fh, SourceRange r, ImU32 col) {
    if (!r.valid() || starts_.empty()) return;
    r = visible_part(r);
    auto [l0, c0] = line_col(std::min<uint32_t>(r.begin, static_cast<uint32_t>(buf_.size())));
    auto [l1, c1] = line_col(std::min<uint32_t>(r.end, static_cast<uint32_t>(buf_.size())));
    for (int l = l0; l <= l1; ++l) {
      float xa = l == l0 ? x_of(l, c0) : 0;
      float xb = l == l1 ? x_of(l, c1) : x_of(l, static_cast<uint32_t>(line_text(l).size())) + fh / 3;
      if (xb <= xa) xb = xa + fh / 3;  // an empty piece still shows
      dl->AddRectFilled(ImVec2(origin.x + xa, origin.y + l * fh),
                        ImVec2(origin.x + xb, origin.y + (l + 1) * fh), col, 2);
    }
  }

  // A red zigzag under a range, as word processors mark spelling; returns true when the
  // mouse is over it.
  bool underline_range(ImDrawList* dl, ImVec2 origin, float fh, SourceRange r) {
    if (starts_.empty()) return false;
    uint32_t n = static_cast<uint32_t>(buf_.size());
    r = visible_part(r);
    auto [l0, c0] = line_col(std::min(r.begin, n));
    auto [l1, c1] = line_col(std::min(r.end, n));
    bool hover = false;
    ImVec2 mouse = ImGui::GetIO().MousePos;
    for (int l = l0; l <= l1; ++l) {
      float xa = origin.x + (l == l0 ? x_of(l, c0) : 0);
      float xb = origin.x + (l == l1 ? x_of(l, c1) : x_of(l, static_cast<uint32_t>(line_text(l).size())));
      if (xb - xa < fh / 2) xb = xa + fh / 2;  // an error at the end of a line still shows
      float y = origin.y + (l + 1) * fh - 1;
      ImVec2 pts[256];
      int k = 0;
      for (float x = xa; x < xb && k < 255; x += 3, ++k) pts[k] = ImVec2(x, y + (k % 2 ? -2.f : 1.f));
      pts[k] = ImVec2(xb, y + (k % 2 ? -2.f : 1.f));
      ++k;
      dl->AddPolyline(pts, k, colors::error(), 0, 1.5f);
      if (mouse.x >= xa && mouse.x < xb && mouse.y >= y - fh && mouse.y < y + 4) hover = true;
    }
    return hover;
  }

  void draw_editor(Document& doc, ImVec2 size) {
    const float fh = ImGui::GetFontSize();  // the input box's line height
    const ImGuiStyle& st = ImGui::GetStyle();
    // Paper white on the light theme (text is dark), the theme's own background otherwise.
    ImVec4 tc = ImGui::GetStyleColorVec4(ImGuiCol_Text);
    bool light = tc.x + tc.y + tc.z < 1.5f;
    ImGui::PushStyleColor(ImGuiCol_ChildBg, light ? ImVec4(1, 1, 1, 1) : ImGui::GetStyleColorVec4(ImGuiCol_FrameBg));
    ImGui::BeginChild("##editor_scroll", size, true, ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();

    char digits_buf[16];
    int digits = std::snprintf(digits_buf, sizeof digits_buf, "%zu", starts_.size());
    float gutter = ImGui::CalcTextSize("0").x * (digits + 1.5f);
    ImVec2 local0(gutter, 0);  // where the input box goes, in content coordinates
    ImGui::SetCursorPos(local0);
    measure();
    input_id_ = ImGui::GetID("##src");

    // Big enough that the box never scrolls on its own, with slack for the keystroke that
    // lengthens the text before the next frame measures it again.
    float avail_w = ImGui::GetContentRegionAvail().x;
    ImVec2 box(std::max(avail_w, max_width_ + fh * 8 + st.FramePadding.x * 2),
               std::max(ImGui::GetContentRegionAvail().y,
                        (starts_.size() + 3) * fh + st.FramePadding.y * 2));
    ImGui::PushStyleColor(ImGuiCol_FrameBg, IM_COL32(0, 0, 0, 0));
    auto on_cursor = [](ImGuiInputTextCallbackData* d) {
      *static_cast<int*>(d->UserData) = d->CursorPos;
      return 0;
    };
    int cursor = cursor_;
    bool edited = ImGui::InputTextMultiline(
        "##src", &buf_, box,
        ImGuiInputTextFlags_AllowTabInput | ImGuiInputTextFlags_NoHorizontalScroll |
            ImGuiInputTextFlags_CallbackAlways,
        on_cursor, &cursor);
    ImGui::PopStyleColor();
    bool active = ImGui::IsItemActive();
    ImVec2 rect_min = ImGui::GetItemRectMin(), rect_max = ImGui::GetItemRectMax();
    if (edited) {
      doc.set_text(buf_);
      geometry_dirty_ = true;
      goto_line_ = -1;
      sync(doc);
    }
    // The box's own child window may have scrolled for a frame (a paste that outgrew it);
    // follow it so the overlays stay on the glyphs.
    float inner_scroll = 0;
    ImGuiWindow* self = ImGui::GetCurrentWindow();
    if (!self->DC.ChildWindows.empty()) inner_scroll = self->DC.ChildWindows.back()->Scroll.y;
    ImVec2 origin(rect_min.x + st.FramePadding.x, rect_min.y + st.FramePadding.y - inner_scroll);

    // Only the visible lines get overlays and numbers.
    float top = ImGui::GetWindowPos().y, bottom = top + ImGui::GetWindowHeight();
    int first = std::max(0, static_cast<int>((top - origin.y) / fh) - 1);
    int last = std::min(static_cast<int>(starts_.size()) - 1, static_cast<int>((bottom - origin.y) / fh) + 1);

    if (goto_line_ >= 0 && goto_line_ < static_cast<int>(starts_.size()))
      dl->AddRectFilled(ImVec2(rect_min.x, origin.y + goto_line_ * fh),
                        ImVec2(rect_max.x, origin.y + (goto_line_ + 1) * fh), IM_COL32(0, 0, 0, 14));
    if (doc.current.valid()) fill_range(dl, origin, fh, doc.current, colors::current());
    if (doc.hovered().valid()) fill_range(dl, origin, fh, doc.hovered(), colors::highlight());

    // Errors: underline every located diagnostic, its message on hover.
    const Outcome& o = doc.outcome();
    if (diag_gen_ != doc.generation()) {  // range_of walks the tokens: once per run
      diag_gen_ = doc.generation();
      diag_ranges_.clear();
      for (const Diagnostic& d : o.diagnostics) diag_ranges_.push_back(doc.range_of(d.loc));
    }
    for (size_t i = 0; i < o.diagnostics.size() && i < diag_ranges_.size(); ++i) {
      const Diagnostic& d = o.diagnostics[i];
      if (!d.loc.valid()) continue;
      SourceRange r = diag_ranges_[i];
      auto [l, c] = line_col(std::min<uint32_t>(r.begin, static_cast<uint32_t>(buf_.size())));
      (void)c;
      if (l + 1 < first || l > last + 1) continue;
      if (underline_range(dl, origin, fh, r) && ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
        ImGui::BeginTooltip();
        ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
        ImGui::Text("%u:%u: %s", d.loc.line, d.loc.col, d.message.c_str());
        ImGui::PopStyleColor();
        ImGui::EndTooltip();
      }
    }

    // Line numbers in the gutter (not part of the text, so not selectable or editable).
    float gx = ImGui::GetWindowPos().x - ImGui::GetScrollX() + st.WindowPadding.x;
    for (int l = first; l <= last; ++l) {
      char num[32];
      std::snprintf(num, sizeof num, "%*d", std::min(digits, 10), l + 1);
      bool err_line = false;
      for (const Diagnostic& d : o.diagnostics)
        if (d.loc.valid() && static_cast<int>(d.loc.line) == l + 1) err_line = true;
      dl->AddText(ImVec2(gx, origin.y + l * fh), err_line ? colors::error() : colors::dim(), num);
      // The line's colour, which the machine pane tints its assembly with.
      dl->AddRectFilled(ImVec2(origin.x - fh * 0.45f, origin.y + l * fh),
                        ImVec2(origin.x - fh * 0.15f, origin.y + (l + 1) * fh),
                        source_line_color(l + 1, 200));
    }

    // The mouse over the text: tell the other panes which token it is on.
    ImVec2 mouse = ImGui::GetIO().MousePos;
    bool over_text = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) &&
                     ImGui::IsMouseHoveringRect(rect_min, rect_max);
    if (over_text && (ImGui::GetIO().MouseDelta.x != 0 || ImGui::GetIO().MouseDelta.y != 0))
      hover_override_ = SourceRange{};  // the real mouse takes over from a scripted hover
    if (hover_override_.valid()) {
      doc.hover_source(hover_override_);
    } else if (over_text && !starts_.empty()) {
      int l = static_cast<int>(std::floor((mouse.y - origin.y) / fh));
      if (l >= 0 && l < static_cast<int>(starts_.size())) {
        std::string_view t = line_text(l);
        float x = mouse.x - origin.x;
        // Walk the line a code point at a time until the mouse is inside one.
        uint32_t b = 0;
        while (b < t.size()) {
          uint32_t n = 1;
          while (b + n < t.size() && (static_cast<unsigned char>(t[b + n]) & 0xC0) == 0x80) ++n;
          if (ImGui::CalcTextSize(t.data(), t.data() + b + n).x > x) break;
          b += n;
        }
        if (b < t.size()) {
          SourceRange r = range_at(doc, buf_, starts_[l] + b);
          if (r.valid()) doc.hover_source(r);
        }
      }
    }

    // Keep the caret in view while typing or moving it with the keys.
    if (active && cursor != cursor_ && cursor >= 0) {
      auto [l, c] = line_col(static_cast<uint32_t>(std::min<size_t>(cursor, buf_.size())));
      float y = local0.y + st.FramePadding.y + l * fh, x = local0.x + st.FramePadding.x + x_of(l, c);
      float h = ImGui::GetWindowHeight(), w = ImGui::GetWindowWidth();
      if (y < ImGui::GetScrollY()) ImGui::SetScrollY(y);
      else if (y + fh * 2 > ImGui::GetScrollY() + h) ImGui::SetScrollY(y + fh * 2 - h);
      if (x < ImGui::GetScrollX() + gutter) ImGui::SetScrollX(std::max(0.f, x - gutter - fh * 2));
      else if (x + fh > ImGui::GetScrollX() + w) ImGui::SetScrollX(x + fh * 4 - w);
    }
    cursor_ = cursor;
    // Follow what another pane points at (the debugger's current statement, a hovered
    // node) when it is out of view; never while the mouse is in the editor itself.
    for (SourceRange* seen : {&seen_current_, &seen_hovered_}) {
      SourceRange now = seen == &seen_current_ ? doc.current : doc.hovered();
      if (now == *seen) continue;
      *seen = now;
      if (!now.valid() || over_text || scroll_to_line_ >= 0 || now.begin > buf_.size()) continue;
      int l = line_col(now.begin).first;
      if (l < first + 1 || l > last - 2) scroll_to_line_ = l;
    }
    if (scroll_to_line_ >= 0) {
      float y = local0.y + st.FramePadding.y + scroll_to_line_ * fh;
      ImGui::SetScrollY(std::max(0.f, y - ImGui::GetWindowHeight() / 3));
      scroll_to_line_ = -1;
    }
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }

  // ---- [SECTION] errors and output -----------------------------------------------------

  void refresh_output(Document& doc) {
    if (out_gen_ == doc.generation()) return;
    out_gen_ = doc.generation();
    out_lines_ = split_lines(doc.output());
    out_colors_.assign(out_lines_.size(), 0);
    const Outcome& o = doc.outcome();
    auto add = [&](const std::string& text, ImU32 col) {
      for (auto& l : split_lines(text)) out_lines_.push_back(l), out_colors_.push_back(col);
    };
    if (o.status != Outcome::Ok) add(o.message, colors::error());
    if (!o.note.empty()) add("note: " + o.note, colors::dim());
  }

  void draw_errors(Document& doc, float height) {
    const Outcome& o = doc.outcome();
    ImGui::BeginChild("##errors", ImVec2(0, height), true);
    for (size_t i = 0; i < o.diagnostics.size(); ++i) {
      const Diagnostic& d = o.diagnostics[i];
      char label[64];
      if (d.loc.valid()) std::snprintf(label, sizeof label, "%u:%u", d.loc.line, d.loc.col);
      else std::snprintf(label, sizeof label, "-");
      ImGui::PushID(static_cast<int>(i));
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      bool clicked = ImGui::Selectable(label, false, ImGuiSelectableFlags_SpanAllColumns |
                                                         ImGuiSelectableFlags_AllowItemOverlap);
      bool hovered = ImGui::IsItemHovered();
      ImGui::PopStyleColor();
      ImGui::SameLine();
      ImGui::TextUnformatted(d.kind == ErrorKind::Runtime ? "runtime error:" : "error:");
      ImGui::SameLine();
      ImGui::TextUnformatted(d.message.c_str());
      ImGui::PopID();
      if (d.loc.valid()) {
        if (hovered) doc.hover_source(doc.range_of(d.loc));
        if (clicked) scroll_to_line_ = static_cast<int>(d.loc.line) - 1;
      }
    }
    ImGui::EndChild();
  }

  void draw_output(Document& doc, float height) {
    refresh_output(doc);
    if (doc.busy()) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "Output (running... %.1f s)",
                         doc.busy_seconds());
    } else {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "Output");
    }
    if (out_lines_.empty()) {
      ImGui::BeginChild("##output_empty", ImVec2(0, height - ImGui::GetTextLineHeightWithSpacing()), true);
      ImGui::TextDisabled(doc.generation() == 0 ? "(not run yet)" : "(the program printed nothing)");
      ImGui::EndChild();
      return;
    }
    ListingStyle style;
    style.color = [this](int i) { return out_colors_[i]; };
    Listing("##output", out_lines_, style, ImVec2(0, height - ImGui::GetTextLineHeightWithSpacing()));
  }

  void Draw(Document& doc) override {
    sync(doc);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    float lh = ImGui::GetTextLineHeightWithSpacing();
    size_t nerr = doc.outcome().diagnostics.size();
    float err_h = nerr ? std::min<float>(static_cast<float>(nerr), 4.f) * lh + lh / 2 + 4 : 0;
    float out_h = std::max(lh * 4, avail.y * 0.28f);
    float edit_h = std::max(lh * 4, avail.y - err_h - out_h - ImGui::GetStyle().ItemSpacing.y * 2);
    draw_editor(doc, ImVec2(0, edit_h));
    if (nerr) draw_errors(doc, err_h);
    draw_output(doc, ImGui::GetContentRegionAvail().y);
  }

  // ---- [SECTION] Act -------------------------------------------------------------------

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    if (verb == "set") {
      doc.set_text(unescape(join(args, " ")));
      hover_override_ = {};
      return true;
    }
    if (verb == "append") {
      doc.set_text(doc.text() + unescape(join(args, " ")));
      return true;
    }
    if (verb == "goto") {
      int line = 0;
      if (args.size() != 1 || std::sscanf(args[0].c_str(), "%d", &line) != 1 || line < 1) {
        *error = "usage: source goto LINE (1-based)";
        return false;
      }
      sync(doc);
      if (line > static_cast<int>(starts_.size())) {
        *error = "line " + args[0] + " is past the end (" + std::to_string(starts_.size()) + " lines)";
        return false;
      }
      scroll_to_line_ = goto_line_ = line - 1;
      return true;
    }
    if (verb == "hover") {
      if (args.size() == 1 && (args[0] == "off" || args[0] == "none")) {
        hover_override_ = {};
        return true;
      }
      int line = 0, col = 0;
      if (args.size() != 1 || std::sscanf(args[0].c_str(), "%d:%d", &line, &col) != 2 || line < 1 ||
          col < 1) {
        *error = "usage: source hover LINE:COL (1-based) or hover off";
        return false;
      }
      sync(doc);
      if (line > static_cast<int>(starts_.size())) {
        *error = "line " + std::to_string(line) + " is past the end";
        return false;
      }
      // COL counts characters, as diagnostics do: step over code points, not bytes.
      std::string_view t = line_text(line - 1);
      uint32_t b = 0;
      for (int c = 1; c < col && b < t.size(); ++c) {
        ++b;
        while (b < t.size() && (static_cast<unsigned char>(t[b]) & 0xC0) == 0x80) ++b;
      }
      if (b >= t.size()) {
        *error = args[0] + " is past the end of line " + std::to_string(line);
        return false;
      }
      SourceRange r = range_at(doc, buf_, starts_[line - 1] + b);
      if (!r.valid()) r = {starts_[line - 1] + b, starts_[line - 1] + b + 1};
      hover_override_ = r;
      doc.hover_source(r);
      scroll_to_line_ = line - 1;
      return true;
    }
    *error = "source has no action '" + std::string(verb) +
             "' (set TEXT, append TEXT, hover LINE:COL|off, goto LINE)";
    return false;
  }
};

}  // namespace

std::unique_ptr<Pane> make_source_pane() { return std::make_unique<SourcePane>(); }

}  // namespace descent::viz
