// The machine code pane: what LLVM's back end makes of the program for one target, at
// three points: machine IR right after instruction selection (virtual registers, SSA),
// machine IR after register allocation (physical registers, spills), and the final
// assembly with each instruction's encoded bytes.
//
// Everything is text from Session::stage(); what the pane adds is colour that makes the
// lesson visible: virtual registers (%12) against physical ones ($rdi), labels, and the
// encoding column dimmed so the instructions stand out from their bytes. The assembly is
// tinted by source line (StageResult::source_lines), in the colours of the source pane's
// line stripes; hovering an assembly line highlights its source line, and hovering source
// highlights the assembly made from it.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "viz/pane.h"
#include "viz/panes/source_colors.h"
#include "viz/widgets.h"

namespace descent::viz {

namespace {

struct View {
  const char* key;    // the stage, and the verb's argument
  const char* title;  // the tab
};
const View kViews[] = {{"mir", "MIR after isel"},
                       {"mir-regalloc", "MIR after regalloc"},
                       {"asm", "assembly"}};
constexpr int kNumViews = 3;

// The palette of this pane, on top of widgets.h's shared one.
ImU32 label_color() { return IM_COL32(20, 70, 160, 255); }    // blocks, functions
ImU32 vreg_color() { return IM_COL32(200, 90, 0, 255); }      // %12: virtual register
ImU32 preg_color() { return IM_COL32(120, 40, 160, 255); }    // $rdi: physical register
ImU32 directive_color() { return IM_COL32(120, 120, 90, 255); }  // .p2align, .type

// One run of a line in one colour.
struct Span {
  uint32_t begin, end;
  ImU32 color;  // 0: the default text colour
};
struct Line {
  std::string text;
  std::vector<Span> spans;  // cover text left to right
  int function = -1;        // index into the function list, -1: module-level lines
  // Assembly: where the comment holding the encoding starts (npos: none), and whether the
  // whole line is only encoding or fixup notes; hiding encodings cuts the one, drops the other.
  size_t bytes_at = std::string::npos;
  bool bytes_only = false;
  bool instruction = false;  // assembly: an instruction, not a label, directive or comment
  int source = 0;            // the source line it came from (0: none)
};

// An assembly line that starts a function: a label at column 0 that is not a local .L one.
std::string function_label(const std::string& s) {
  if (s.empty() || s[0] == ' ' || s[0] == '.' || s[0] == '#' || s.compare(0, 2, "//") == 0)
    return "";
  size_t colon = s.find(':');
  if (colon == std::string::npos || s.find_first_of(" \t", 0) < colon) return "";
  return s.substr(0, colon);
}

// ImGui draws a tab as a fixed-width glyph, not to the next tab stop, which would break
// the column the assembler aligns its comments to.
std::string expand_tabs(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char c : s) {
    if (c == '\t') {
      do out += ' ';
      while (out.size() % 8 != 0);
    } else {
      out += c;
    }
  }
  return out;
}

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// MIR: "; function NAME" headers, "bb.3.if.end:" labels, %N / $reg operands.
void color_mir(Line& l) {
  const std::string& s = l.text;
  size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return;
  if (s[first] == ';') {
    l.spans.push_back({0, uint32_t(s.size()), first == 0 ? label_color() : colors::dim()});
    return;
  }
  if (first == 0 && s.back() == ':') {
    l.spans.push_back({0, uint32_t(s.size()), label_color()});
    return;
  }
  // Successor and live-in lists are bookkeeping, not instructions.
  if (s.compare(first, 11, "successors:") == 0 || s.compare(first, 8, "liveins:") == 0) {
    l.spans.push_back({0, uint32_t(s.size()), colors::dim()});
    return;
  }
  uint32_t plain = 0;
  for (size_t i = 0; i < s.size();) {
    if ((s[i] == '%' || s[i] == '$') && i + 1 < s.size() && is_word(s[i + 1]) &&
        (i == 0 || !is_word(s[i - 1]))) {
      size_t j = i + 1;
      while (j < s.size() && is_word(s[j])) ++j;
      // %bb.2 is a block, %subreg.sub_32bit a sub-register index: not registers.
      bool reg = s[i] == '$' || std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (reg) {
        if (plain < i) l.spans.push_back({plain, uint32_t(i), 0});
        l.spans.push_back({uint32_t(i), uint32_t(j), s[i] == '%' ? vreg_color() : preg_color()});
        plain = uint32_t(j);
      }
      i = j;
    } else if (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      break;  // ":: (load ...)": the memory operand's description, dimmed below
    } else {
      ++i;
    }
  }
  size_t memo = s.find(" :: ", plain);
  if (memo == std::string::npos) {
    if (plain < s.size()) l.spans.push_back({plain, uint32_t(s.size()), 0});
  } else {
    if (plain < memo) l.spans.push_back({plain, uint32_t(memo), 0});
    l.spans.push_back({uint32_t(memo), uint32_t(s.size()), colors::dim()});
  }
}

// Assembly: the comment (and with it "encoding: [...]") dimmed, labels and directives in
// their colours. `comment` is the target's comment marker: "#" ("//" on AArch64, where '#'
// starts an immediate).
void color_asm(Line& l, const std::string& comment) {
  const std::string& s = l.text;
  size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return;
  size_t c = s.find(comment);
  // Whole-line comments (fixups, spill notes, "%bb.1:") are the assembler talking.
  bool bytes = c != std::string::npos && (s.find("encoding: [", c) != std::string::npos ||
                                          s.find("fixup ", c) != std::string::npos);
  if (bytes) l.bytes_at = c;
  if (c == first) {
    l.bytes_only = bytes;
    l.spans.push_back({0, uint32_t(s.size()), colors::dim()});
    return;
  }
  size_t code_end = c == std::string::npos ? s.size() : c;
  ImU32 code = 0;
  if (first == 0) code = label_color();
  else if (s[first] == '.') code = directive_color();
  l.spans.push_back({0, uint32_t(code_end), code});
  if (c != std::string::npos) l.spans.push_back({uint32_t(c), uint32_t(s.size()), colors::dim()});
}

bool is_instruction(const std::string& s) {
  size_t first = s.find_first_not_of(' ');
  return first != std::string::npos && first > 0 && s[first] != '.' && s[first] != '#' &&
         s.compare(first, 2, "//") != 0;
}

struct MachinePane : Pane {
  const char* name() const override { return "machine"; }
  const char* title() const override { return "Machine code"; }
  const char* short_title() const override { return "Machine"; }

  int view_ = 0;              // index into kViews
  bool select_view_ = false;  // tell the tab bar once (after a scripted change)
  std::string target_error_;  // the last target that could not be set, and why
  std::string function_;      // "" = all functions
  bool encodings_ = true;     // assembly: show each instruction's bytes

  // ---- The cached listing: one (generation, target, -O, view) ----
  uint64_t gen_ = UINT64_MAX;
  std::string target_;
  int opt_ = -1;
  int cached_view_ = -1;
  bool ok_ = false;
  std::string error_;  // why there is no code (compile errors, tensor programs)
  std::vector<Line> lines_;
  std::vector<std::string> functions_;
  std::vector<int> shown_;  // indices of lines_ that the function filter and the encodings switch let through
  std::string shown_for_ = "\x01";
  size_t longest_ = 0;  // the widest shown line, in characters
  int instructions_ = 0;  // in the shown functions (filter() counts them)
  std::string caption_;
  std::string caption() const override { return caption_; }
  int hover_row_ = -1;  // a shown row hovered by the "hover" verb, until the mouse moves in

  // The session is new after every edit: give it the target this pane chose (the worker
  // applies doc.settings().target too, but a run that was already in flight started from
  // the old settings).
  void sync_target(Document& doc) {
    std::string ignored;
    doc.session().set_target(doc.settings().target, &ignored);
  }

  void refresh(Document& doc) {
    Session& s = doc.session();
    if (gen_ != doc.generation()) sync_target(doc);
    if (gen_ == doc.generation() && target_ == s.target() && opt_ == s.opt_level() &&
        cached_view_ == view_)
      return;
    gen_ = doc.generation();
    target_ = s.target();
    opt_ = s.opt_level();
    cached_view_ = view_;
    shown_for_ = "\x01";
    lines_.clear();
    functions_.clear();
    instructions_ = 0;
    StageResult r = s.stage(kViews[view_].key);
    ok_ = r.ok;
    error_ = r.ok ? "" : r.text;
    if (!r.ok) return;
    bool is_asm = std::string_view(kViews[view_].key) == "asm";
    std::string comment = target_.rfind("aarch64", 0) == 0 ? "//" : "#";
    int fn = -1;
    std::vector<std::string> raw_lines = split_lines(r.text);
    for (size_t i = 0; i < raw_lines.size(); ++i) {
      const std::string& raw = raw_lines[i];
      Line l;
      l.text = expand_tabs(raw);
      l.source = i < r.source_lines.size() ? r.source_lines[i] : 0;
      // Which function a line belongs to: MIR says "; function NAME"; the assembler
      // brackets each with "-- Begin function NAME" / "-- End function" comments.
      if (!is_asm && l.text.rfind("; function ", 0) == 0) {
        functions_.push_back(l.text.substr(11));
        fn = static_cast<int>(functions_.size()) - 1;
      }
      // (or, with directives hidden, by the function's label alone).
      size_t begin = is_asm ? l.text.find("-- Begin function ") : std::string::npos;
      std::string label = is_asm ? function_label(l.text) : "";
      if (begin != std::string::npos || (!label.empty() && (fn < 0 || functions_[fn] != label))) {
        functions_.push_back(begin != std::string::npos ? l.text.substr(begin + 18) : label);
        fn = static_cast<int>(functions_.size()) - 1;
      }
      l.function = fn;
      if (is_asm && l.text.find("-- End function") != std::string::npos) fn = -1;
      if (is_asm) {
        color_asm(l, comment);
        l.instruction = is_instruction(l.text);
      } else {
        color_mir(l);
      }
      lines_.push_back(std::move(l));
    }
  }

  void filter() {
    std::string key = function_ + (encodings_ ? "+" : "-");
    if (shown_for_ == key) return;
    shown_for_ = key;
    shown_.clear();
    int want = -2;
    for (size_t i = 0; i < functions_.size(); ++i)
      if (functions_[i] == function_) want = static_cast<int>(i);
    longest_ = 0;
    instructions_ = 0;  // of the functions shown, not the module
    for (size_t i = 0; i < lines_.size(); ++i)
      if ((function_.empty() || want == -2 || lines_[i].function == want) &&
          (encodings_ || !lines_[i].bytes_only)) {
        shown_.push_back(static_cast<int>(i));
        instructions_ += lines_[i].instruction;
        longest_ = std::max(longest_, encodings_ ? lines_[i].text.size()
                                                 : std::min(lines_[i].text.size(), lines_[i].bytes_at));
      }
  }

  bool set_target(Document& doc, const std::string& name, std::string* error) {
    std::string err;
    if (!doc.session().set_target(name, &err)) {
      target_error_ = err;
      if (error) *error = err;
      return false;
    }
    target_error_.clear();
    doc.settings().target = name;  // the next run (after an edit) keeps it
    return true;
  }

  void set_opt(Document& doc, int level) {
    if (doc.settings().opt_level == level) return;
    doc.settings().opt_level = level;
    doc.rerun_now();
  }

  // ---- Scripted actions ----
  bool Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
           std::string* error) override {
    refresh(doc);
    if (verb == "target") {
      if (args.size() != 1) {
        *error = "usage: machine target NAME (host, or one of the supported triples/aliases)";
        return false;
      }
      return set_target(doc, args[0] == "host" ? "" : args[0], error);
    }
    if (verb == "view") {
      for (int i = 0; i < kNumViews; ++i)
        if (args.size() == 1 && args[0] == kViews[i].key) {
          view_ = i;
          select_view_ = true;
          return true;
        }
      *error = "usage: machine view mir|mir-regalloc|asm";
      return false;
    }
    if (verb == "function") {
      if (args.size() != 1) {
        *error = "usage: machine function NAME|all";
        return false;
      }
      if (args[0] == "all") {
        function_.clear();
        return true;
      }
      refresh(doc);
      for (const auto& f : functions_)
        if (f == args[0] || f == "ds." + args[0]) {
          function_ = f;
          return true;
        }
      *error = "no function '" + args[0] + "' in this view";
      return false;
    }
    if (verb == "encodings") {
      if (args.size() != 1 || (args[0] != "on" && args[0] != "off")) {
        *error = "usage: machine encodings on|off";
        return false;
      }
      encodings_ = args[0] == "on";
      return true;
    }
    if (verb == "hover") {
      int row = -1;
      if (args.size() == 1 && args[0] == "off") {
        hover_row_ = -1;
        return true;
      }
      if (args.size() != 1 || (row = std::atoi(args[0].c_str())) < 0 || args[0].find_first_not_of("0123456789") != std::string::npos) {
        *error = "usage: machine hover ROW|off (a row of the listing, from 0)";
        return false;
      }
      hover_row_ = row;
      return true;
    }
    if (verb == "opt") {
      if (args.size() != 1 || args[0].size() != 1 || args[0][0] < '0' || args[0][0] > '3') {
        *error = "usage: machine opt 0|1|2|3";
        return false;
      }
      set_opt(doc, args[0][0] - '0');
      return true;
    }
    *error = "machine has no action '" + std::string(verb) + "' (target, view, function, encodings, opt, hover)";
    return false;
  }
  std::vector<std::string> verbs() const override {
    return {"target NAME", "view mir|mir-regalloc|asm", "function NAME|all", "encodings on|off",
            "opt 0|1|2|3", "hover ROW|off"};
  }

  // ---- Drawing ----
  void draw_controls(Document& doc) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("target");
    ImGui::SameLine();
    const std::string& chosen = doc.settings().target;
    std::string preview = chosen.empty() ? "host (" + doc.session().target() + ")"
                                         : doc.session().target();
    ImGui::SetNextItemWidth(em(300));
    if (ImGui::BeginCombo("##target", preview.c_str())) {
      if (ImGui::Selectable("host", chosen.empty())) set_target(doc, "", nullptr);
      for (const auto& t : Session::targets())
        if (ImGui::Selectable(t.c_str(), !chosen.empty() && doc.session().target() == t))
          set_target(doc, t, nullptr);
      ImGui::EndCombo();
    }
    ImGui::SameLine(0, 18);
    ImGui::TextUnformatted("-O");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFrameHeight() * 2.2f);
    char cur[4];
    std::snprintf(cur, sizeof cur, "%d", doc.settings().opt_level);
    if (ImGui::BeginCombo("##opt", cur)) {
      for (int level = 0; level <= 3; ++level) {
        char item[4];
        std::snprintf(item, sizeof item, "%d", level);
        if (ImGui::Selectable(item, level == doc.settings().opt_level)) set_opt(doc, level);
      }
      ImGui::EndCombo();
    }
    if (!functions_.empty()) {
      ImGui::SameLine(0, 18);
      ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
      if (ImGui::BeginCombo("##function",
                            function_.empty() ? "all functions" : function_.c_str())) {
        if (ImGui::Selectable("all functions", function_.empty())) function_.clear();
        for (const auto& f : functions_)
          if (ImGui::Selectable(f.c_str(), f == function_)) function_ = f;
        ImGui::EndCombo();
      }
    }
    if (!target_error_.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s", target_error_.c_str());
      ImGui::PopStyleColor();
    }
    if (ImGui::BeginTabBar("##views")) {
      for (int i = 0; i < kNumViews; ++i) {
        ImGuiTabItemFlags f = select_view_ && i == view_ ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(kViews[i].title, nullptr, f)) {
          if (!select_view_) view_ = i;
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
    select_view_ = false;
  }

  // The range of source line `line` of the last input (empty when there is none).
  static SourceRange line_range(Document& doc, int line) {
    const SourceFile* src = doc.session().last_source();
    if (!src || line < 1 || static_cast<uint32_t>(line) > src->line_count()) return {};
    std::string_view text = src->line_text(static_cast<uint32_t>(line));
    uint32_t begin = static_cast<uint32_t>(text.data() - src->text().data());
    return {begin, begin + static_cast<uint32_t>(text.size())};
  }

  // The source lines another pane hovers ([first, last]; 0, -1 when none).
  static std::pair<int, int> hovered_lines(Document& doc) {
    const SourceFile* src = doc.session().last_source();
    SourceRange h = doc.hovered();
    if (!src || !h.valid()) return {0, -1};
    return {static_cast<int>(src->loc_at(h.begin).line), static_cast<int>(src->loc_at(h.end - 1).line)};
  }

  void draw_listing(Document& doc) {
    ImGui::BeginChild("##code", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float lh = ImGui::GetTextLineHeightWithSpacing();
    // The font is monospace; measure many characters, because CalcTextSize rounds up to
    // whole pixels and one rounded glyph would drift by a column every ten.
    float cw = ImGui::CalcTextSize("MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM").x / 32;
    float width = std::max(longest_ * cw, ImGui::GetContentRegionAvail().x);
    auto [hover_first, hover_last] = hovered_lines(doc);
    if (ImGui::IsWindowHovered() && ImGui::GetIO().MouseDelta.x + ImGui::GetIO().MouseDelta.y != 0)
      hover_row_ = -1;  // the real mouse takes over from a scripted hover
    if (hover_row_ >= 0 && hover_row_ < static_cast<int>(shown_.size()))
      doc.hover_source(line_range(doc, lines_[shown_[hover_row_]].source));
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(shown_.size()), lh);
    while (clipper.Step()) {
      for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
        const Line& l = lines_[shown_[r]];
        ImVec2 p = ImGui::GetCursorScreenPos();
        bool mouse_here = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, ImVec2(p.x + width, p.y + lh));
        if (l.source > 0) {
          bool lit = l.source >= hover_first && l.source <= hover_last;
          dl->AddRectFilled(p, ImVec2(p.x + width, p.y + lh), source_line_color(l.source, lit ? 150 : 45));
          if (mouse_here) doc.hover_source(line_range(doc, l.source));
        }
        if (mouse_here) dl->AddRectFilled(p, ImVec2(p.x + width, p.y + lh), IM_COL32(0, 0, 0, 18));
        size_t cut = encodings_ ? l.text.size() : std::min(l.text.size(), l.bytes_at);
        for (const Span& s : l.spans) {
          size_t end = std::min<size_t>(s.end, cut);
          if (s.begin >= end) continue;
          dl->AddText(ImVec2(p.x + s.begin * cw, p.y), s.color ? s.color : colors::text(),
                      l.text.data() + s.begin, l.text.data() + end);
        }
        // Every row as wide as the widest, so the horizontal scroll range does not change
        // with what the clipper happens to show.
        ImGui::Dummy(ImVec2(width, lh - ImGui::GetStyle().ItemSpacing.y));
      }
    }
    clipper.End();
    ImGui::EndChild();
  }

  void Draw(Document& doc) override {
    refresh(doc);
    draw_controls(doc);
    refresh(doc);  // the controls may have changed the view or the target
    if (doc.busy()) ImGui::TextDisabled("re-running...");
    if (!ok_) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s not available: %s", kViews[view_].title, error_.c_str());
      ImGui::PopStyleColor();
      return;
    }
    filter();
    std::string what = function_.empty() ? "all functions" : function_;
    bool is_asm = std::string_view(kViews[view_].key) == "asm";
    caption_ = target_ + " at -O" + std::to_string(opt_) + ": " +
               std::to_string(is_asm ? instructions_ : static_cast<int>(shown_.size())) +
               (is_asm ? " instructions (" : " lines (") + what + ")";
    if (is_asm) {
      ImGui::Checkbox("encodings", &encodings_);
      ImGui::SameLine();
    }
    ImGui::TextDisabled("%s", caption_.c_str());
    draw_listing(doc);
  }
};

}  // namespace

std::unique_ptr<Pane> make_machine_pane() { return std::make_unique<MachinePane>(); }

}  // namespace descent::viz
