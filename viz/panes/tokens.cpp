// The tokens pane: what the lexer made of the source, one row per token, coloured by class
// so keywords, literals, names and punctuation stand apart the way an editor's syntax
// colouring would (the lexer's view of the program is exactly that colouring).
#include <imgui.h>

#include <cstdio>
#include <string>

#include "viz/pane.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

enum class TokClass { Keyword, Literal, Name, Punct, Layout, Error };

TokClass class_of(Tok t) {
  switch (t) {
    case Tok::Int: case Tok::Float: case Tok::String: case Tok::True: case Tok::False:
      return TokClass::Literal;
    case Tok::Ident: return TokClass::Name;
    case Tok::Fn: case Tok::Return: case Tok::If: case Tok::Else: case Tok::While:
    case Tok::For: case Tok::In: case Tok::Break: case Tok::Continue: case Tok::Kernel:
      return TokClass::Keyword;
    case Tok::Newline: case Tok::Eof: return TokClass::Layout;
    case Tok::Error: return TokClass::Error;
    default: return TokClass::Punct;
  }
}

ImU32 class_color(TokClass c) {
  switch (c) {
    case TokClass::Keyword: return IM_COL32(0, 70, 190, 255);     // blue, as editors show them
    case TokClass::Literal: return IM_COL32(170, 80, 0, 255);     // brown
    case TokClass::Name: return IM_COL32(20, 20, 20, 255);
    case TokClass::Punct: return IM_COL32(110, 40, 150, 255);     // purple
    case TokClass::Layout: return colors::dim();
    case TokClass::Error: return colors::error();
  }
  return colors::text();
}

// A lexeme as one visible line: a NEWLINE token's text is a line break.
std::string visible(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

struct Row {
  std::string where, kind, lexeme;
  ImU32 color;
  SourceRange range;
};

struct TokensPane : Pane {
  const char* name() const override { return "tokens"; }
  const char* title() const override { return "Tokens"; }
  std::vector<std::string> verbs() const override { return {"select N|off"}; }

  uint64_t gen_ = ~0ull;
  std::vector<Row> rows_;
  int selected_ = -1;           // the "select" verb's token, hovered until the mouse takes over
  SourceRange last_hovered_;    // to scroll only when the editor's hover moves
  int scroll_to_ = -1;

  void refresh(Document& doc) {
    if (gen_ == doc.generation()) return;
    gen_ = doc.generation();
    rows_.clear();
    for (const Token& t : doc.session().last_tokens()) {
      Row r;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%u:%u", t.loc.line, t.loc.col);
      r.where = buf;
      r.kind = tok_name(t.kind);
      r.lexeme = visible(t.text);
      if (t.kind == Tok::Error && !t.error.empty()) r.lexeme += "   " + t.error;
      r.color = class_color(class_of(t.kind));
      uint32_t len = static_cast<uint32_t>(t.text.size());
      r.range = {t.loc.offset, t.loc.offset + (len ? len : 1)};
      rows_.push_back(std::move(r));
    }
    if (selected_ >= static_cast<int>(rows_.size())) selected_ = -1;
  }

  void Draw(Document& doc) override {
    refresh(doc);
    if (rows_.empty()) {
      ImGui::TextDisabled(doc.generation() == 0 ? "not available: nothing compiled yet"
                                                : "not available: the lexer produced no tokens");
      return;
    }
    if (selected_ >= 0) doc.hover_source(rows_[selected_].range);
    SourceRange hov = doc.hovered();
    ImGui::TextDisabled("%zu tokens", rows_.size());
    ImGui::SameLine();
    const char* legend[] = {"keyword", "literal", "name", "punctuation", "layout", "error"};
    for (int c = 0; c < 6; ++c) {
      ImGui::SameLine();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(class_color(static_cast<TokClass>(c))),
                         "%s", legend[c]);
    }

    ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                            ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                            ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("##tokens", 4, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#");
    ImGui::TableSetupColumn("line:col");
    ImGui::TableSetupColumn("kind");
    ImGui::TableSetupColumn("lexeme", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();

    // Follow the editor: when its hover moves to another token, bring that row into view.
    bool table_hovered = ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
    if (!(hov == last_hovered_) && hov.valid() && !table_hovered) {
      for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].range.begin < hov.end && hov.begin < rows_[i].range.end) {
          scroll_to_ = static_cast<int>(i);
          break;
        }
    }
    last_hovered_ = hov;
    float row_h = ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2;
    if (scroll_to_ >= 0) {
      float y = scroll_to_ * row_h, top = ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
      if (y < top || y + row_h * 2 > top + h) ImGui::SetScrollY(std::max(0.f, y - h / 3));
      scroll_to_ = -1;
    }

    int hovered_row = -1;
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(rows_.size()), row_h);
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const Row& r = rows_[i];
        ImGui::TableNextRow();
        if (hov.valid() && r.range.begin < hov.end && hov.begin < r.range.end)
          ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, colors::highlight());
        ImGui::TableNextColumn();
        ImGui::PushID(i);
        // A row-wide invisible selectable gives the whole row one hover target.
        char idx[16];
        std::snprintf(idx, sizeof idx, "%d", i);
        ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
        ImGui::Selectable(idx, false, ImGuiSelectableFlags_SpanAllColumns);
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) hovered_row = i;
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::dim()), "%s", r.where.c_str());
        ImGui::TableNextColumn();
        ImGui::PushStyleColor(ImGuiCol_Text, r.color);
        ImGui::TextUnformatted(r.kind.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.lexeme.c_str());
        ImGui::PopStyleColor();
      }
    }
    clipper.End();
    ImGui::EndTable();
    if (hovered_row >= 0) {
      selected_ = -1;  // the real mouse takes over from a scripted selection
      doc.hover_source(rows_[hovered_row].range);
    }
  }

  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    if (verb == "select") {
      if (args.size() == 1 && (args[0] == "off" || args[0] == "none")) {
        selected_ = -1;
        return true;
      }
      int n = -1;
      if (args.size() != 1 || std::sscanf(args[0].c_str(), "%d", &n) != 1 || n < 0) {
        *error = "usage: tokens select N (0-based token index) or select off";
        return false;
      }
      if (n >= static_cast<int>(rows_.size())) {
        *error = "no token " + args[0] + " (there are " + std::to_string(rows_.size()) + ")";
        return false;
      }
      selected_ = scroll_to_ = n;
      doc.hover_source(rows_[n].range);
      return true;
    }
    *error = "tokens has no action '" + std::string(verb) + "' (select N)";
    return false;
  }
};

}  // namespace

std::unique_ptr<Pane> make_tokens_pane() { return std::make_unique<TokensPane>(); }

}  // namespace descent::viz
