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
//
// "beside it" (machine compare NAME) adds a second column: the same view of the same code
// for a second target, with its own header, tinted the same way, so the x86-64 and AArch64
// code of one source line share a colour.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
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

// One target's listing of one view: the lines with their colours, and what the function
// filter and the encodings switch let through.
struct Column {
  std::string target;  // the triple it was made for
  bool ok = false;
  std::string error;   // why there is no code (compile errors, tensor programs, a bad target)
  std::vector<Line> lines;
  std::vector<std::string> functions;
  std::vector<int> shown;  // indices of lines that the function filter and the encodings switch let through
  std::string shown_for = "\x01";
  size_t longest = 0;    // the widest shown line, in characters
  int instructions = 0;  // in the shown functions (filter() counts them)
  int hover_row = -1;    // a shown row hovered by the "hover" verb, until the mouse moves in

  void load(const StageResult& r, bool is_asm) {
    shown_for = "\x01";
    lines.clear();
    functions.clear();
    instructions = 0;
    ok = r.ok;
    error = r.ok ? "" : r.text;
    if (!r.ok) return;
    std::string comment = target.rfind("aarch64", 0) == 0 ? "//" : "#";
    int fn = -1;
    std::vector<std::string> raw_lines = split_lines(r.text);
    for (size_t i = 0; i < raw_lines.size(); ++i) {
      Line l;
      l.text = expand_tabs(raw_lines[i]);
      l.source = i < r.source_lines.size() ? r.source_lines[i] : 0;
      // Which function a line belongs to: MIR says "; function NAME"; the assembler
      // brackets each with "-- Begin function NAME" / "-- End function" comments.
      if (!is_asm && l.text.rfind("; function ", 0) == 0) {
        functions.push_back(l.text.substr(11));
        fn = static_cast<int>(functions.size()) - 1;
      }
      // (or, with directives hidden, by the function's label alone).
      size_t begin = is_asm ? l.text.find("-- Begin function ") : std::string::npos;
      std::string label = is_asm ? function_label(l.text) : "";
      if (begin != std::string::npos || (!label.empty() && (fn < 0 || functions[fn] != label))) {
        functions.push_back(begin != std::string::npos ? l.text.substr(begin + 18) : label);
        fn = static_cast<int>(functions.size()) - 1;
      }
      l.function = fn;
      if (is_asm && l.text.find("-- End function") != std::string::npos) fn = -1;
      if (is_asm) {
        color_asm(l, comment);
        l.instruction = is_instruction(l.text);
      } else {
        color_mir(l);
      }
      lines.push_back(std::move(l));
    }
  }

  // `function` "" (or one this listing lacks): all of them.
  void filter(const std::string& function, bool encodings) {
    std::string key = function + (encodings ? "+" : "-");
    if (shown_for == key) return;
    shown_for = key;
    shown.clear();
    int want = -2;
    for (size_t i = 0; i < functions.size(); ++i)
      if (functions[i] == function) want = static_cast<int>(i);
    longest = 0;
    instructions = 0;  // of the functions shown, not the module
    for (size_t i = 0; i < lines.size(); ++i)
      if ((function.empty() || want == -2 || lines[i].function == want) &&
          (encodings || !lines[i].bytes_only)) {
        shown.push_back(static_cast<int>(i));
        instructions += lines[i].instruction;
        longest = std::max(longest, encodings ? lines[i].text.size()
                                              : std::min(lines[i].text.size(), lines[i].bytes_at));
      }
  }
};

struct MachinePane : Pane {
  const char* name() const override { return "machine"; }
  const char* title() const override { return "Machine code"; }
  const char* short_title() const override { return "Machine"; }

  int view_ = 0;              // index into kViews
  bool select_view_ = false;  // tell the tab bar once (after a scripted change)
  std::string target_error_;  // the last target that could not be set, and why
  std::string function_;      // "" = all functions
  bool encodings_ = true;     // assembly: show each instruction's bytes
  // Two targets side by side: the second one ("" = off), as chosen (an alias or a triple).
  std::string compare_;
  std::string compare_last_ = "aarch64";  // what the checkbox turns on

  // ---- The cached listings: one (generation, target, -O, view) each ----
  uint64_t gen_ = UINT64_MAX;
  int opt_ = -1;
  int cached_view_ = -1;
  Column main_;
  uint64_t other_gen_ = UINT64_MAX;
  int other_opt_ = -1, other_view_ = -1;
  std::string other_for_;  // the compare_ other_ was made for
  Column other_;
  std::string caption_;
  std::string caption() const override { return caption_; }

  bool is_asm() const { return std::string_view(kViews[view_].key) == "asm"; }

  // The session is new after every edit: give it the target this pane chose (the worker
  // applies doc.settings().target too, but a run that was already in flight started from
  // the old settings).
  void sync_target(Document& doc) {
    std::string ignored;
    doc.session().set_target(doc.settings().target, &ignored);
  }

  // A view for another target than the session's: the Session makes its code stages for
  // its one target, so switch it for the one call and back (all on the window's thread; the
  // worker runs on its own Session). Session::stage with a target argument would be cleaner.
  static StageResult stage_for(Session& s, const std::string& target, const char* key,
                               std::string* triple) {
    std::string saved = s.target(), err;
    if (!s.set_target(target, &err)) {
      StageResult r;
      r.text = err;
      return r;
    }
    *triple = s.target();
    StageResult r = s.stage(key);
    s.set_target(saved, &err);
    return r;
  }

  void refresh(Document& doc) {
    Session& s = doc.session();
    if (gen_ != doc.generation()) sync_target(doc);
    if (!(gen_ == doc.generation() && main_.target == s.target() && opt_ == s.opt_level() &&
          cached_view_ == view_)) {
      gen_ = doc.generation();
      main_.target = s.target();
      opt_ = s.opt_level();
      cached_view_ = view_;
      main_.load(s.stage(kViews[view_].key), is_asm());
    }
    if (compare_.empty() || (other_gen_ == doc.generation() && other_opt_ == s.opt_level() &&
                             other_view_ == view_ && other_for_ == compare_))
      return;
    other_gen_ = doc.generation();
    other_opt_ = s.opt_level();
    other_view_ = view_;
    other_for_ = compare_;
    other_.target = compare_;
    StageResult r = stage_for(s, compare_, kViews[view_].key, &other_.target);
    other_.load(r, is_asm());
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

  // The second column on `name` (a target as `machine target` takes it), or off ("").
  bool set_compare(Document& doc, const std::string& name, std::string* error) {
    if (name.empty()) {
      compare_.clear();
      return true;
    }
    Session& s = doc.session();
    std::string saved = s.target(), err;
    if (!s.set_target(name == "host" ? "" : name, &err)) {
      target_error_ = err;
      if (error) *error = err;
      return false;
    }
    std::string triple = s.target();
    s.set_target(saved, &err);
    target_error_.clear();
    compare_ = compare_last_ = name == "host" ? triple : name;
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
    if (verb == "compare") {
      if (args.size() != 1) {
        *error = "usage: machine compare NAME|off (a second target, shown beside the first)";
        return false;
      }
      return set_compare(doc, args[0] == "off" ? "" : args[0], error);
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
      for (const auto& f : main_.functions)
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
      const char* usage =
          "usage: machine hover ROW [right]|off (a row of the listing, from 0; right: of the "
          "second target's, with compare on)";
      if (args.size() == 1 && args[0] == "off") {
        main_.hover_row = other_.hover_row = -1;
        return true;
      }
      bool right = args.size() == 2 && args[1] == "right";
      if (args.empty() || args.size() > 2 || (args.size() == 2 && !right) || args[0].empty() ||
          args[0].size() > 9 || args[0].find_first_not_of("0123456789") != std::string::npos) {
        *error = usage;
        return false;
      }
      if (right && compare_.empty()) {
        *error = "machine hover ROW right: no second target (machine compare NAME first)";
        return false;
      }
      main_.hover_row = other_.hover_row = -1;
      (right ? other_ : main_).hover_row = std::atoi(args[0].c_str());
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
    *error = "machine has no action '" + std::string(verb) +
             "' (target, compare, view, function, encodings, opt, hover)";
    return false;
  }
  std::vector<std::string> verbs() const override {
    return {"target NAME",       "compare NAME|off", "view mir|mir-regalloc|asm",
            "function NAME|all", "encodings on|off", "opt 0|1|2|3",
            "hover ROW [right]|off"};
  }

  // ---- Drawing ----
  // A combo of the supported targets; `host` offers "host" first. Returns the choice
  // ("" = host) when one was made.
  static bool target_combo(const char* id, const std::string& preview, const std::string& current,
                           bool host, std::string* choice) {
    bool chosen = false;
    if (ImGui::BeginCombo(id, preview.c_str())) {
      if (host && ImGui::Selectable("host", current.empty())) *choice = "", chosen = true;
      for (const auto& t : Session::targets())
        if (ImGui::Selectable(t.c_str(), current == t)) *choice = t, chosen = true;
      ImGui::EndCombo();
    }
    return chosen;
  }

  void draw_controls(Document& doc) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("target");
    ImGui::SameLine();
    const std::string& chosen = doc.settings().target;
    std::string preview = chosen.empty() ? "host (" + doc.session().target() + ")"
                                         : doc.session().target();
    ImGui::SetNextItemWidth(em(300));
    std::string choice;
    if (target_combo("##target", preview, chosen.empty() ? "" : doc.session().target(), true, &choice))
      set_target(doc, choice, nullptr);
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
    // The second target on a row of its own: at a projector's font size the first row is
    // full already.
    bool compare = !compare_.empty();
    if (ImGui::Checkbox("beside it:", &compare)) set_compare(doc, compare ? compare_last_ : "", nullptr);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("the same code for a second target, in a column of its own");
    ImGui::SameLine();
    ImGui::BeginDisabled(!compare);
    ImGui::SetNextItemWidth(em(300));
    std::string shown = compare ? (other_.target.empty() ? compare_ : other_.target) : compare_last_;
    if (target_combo("##compare", shown, other_.target, false, &choice)) set_compare(doc, choice, nullptr);
    ImGui::EndDisabled();
    if (!main_.functions.empty()) {
      ImGui::SameLine(0, 18);
      ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
      if (ImGui::BeginCombo("##function",
                            function_.empty() ? "all functions" : function_.c_str())) {
        if (ImGui::Selectable("all functions", function_.empty())) function_.clear();
        for (const auto& f : main_.functions)
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

  void draw_listing(Document& doc, Column& c, const char* id) {
    ImGui::BeginChild(id, ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float lh = ImGui::GetTextLineHeightWithSpacing();
    // The font is monospace; measure many characters, because CalcTextSize rounds up to
    // whole pixels and one rounded glyph would drift by a column every ten.
    float cw = ImGui::CalcTextSize("MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM").x / 32;
    float width = std::max(c.longest * cw, ImGui::GetContentRegionAvail().x);
    std::pair<int, int> hovered = hovered_source_lines(doc);
    if (ImGui::IsWindowHovered() && ImGui::GetIO().MouseDelta.x + ImGui::GetIO().MouseDelta.y != 0)
      c.hover_row = -1;  // the real mouse takes over from a scripted hover
    if (c.hover_row >= 0 && c.hover_row < static_cast<int>(c.shown.size()))
      doc.hover_source(source_line_range(doc, c.lines[c.shown[c.hover_row]].source));
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(c.shown.size()), lh);
    while (clipper.Step()) {
      for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
        const Line& l = c.lines[c.shown[r]];
        ImVec2 p = ImGui::GetCursorScreenPos();
        bool mouse_here = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, ImVec2(p.x + width, p.y + lh));
        if (l.source > 0) {
          dl->AddRectFilled(p, ImVec2(p.x + width, p.y + lh), source_line_tint(l.source, hovered));
          if (mouse_here) doc.hover_source(source_line_range(doc, l.source));
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

  // "TRIPLE at -O2: 31 instructions (ds.fib)", the header of a column.
  std::string header(const Column& c) const {
    std::string what = function_.empty() ? "all functions" : function_;
    return c.target + " at -O" + std::to_string(opt_) + ": " +
           std::to_string(is_asm() ? c.instructions : static_cast<int>(c.shown.size())) +
           (is_asm() ? " instructions (" : " lines (") + what + ")";
  }

  // A column: its header (wrapped, so a long triple at a large font stays inside), then
  // its listing or why there is none.
  void draw_column(Document& doc, Column& c, const char* id) {
    if (!c.ok) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s not available for %s: %s", kViews[view_].title, c.target.c_str(),
                         c.error.c_str());
      ImGui::PopStyleColor();
      return;
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", header(c).c_str());
    ImGui::PopTextWrapPos();
    draw_listing(doc, c, id);
  }

  void Draw(Document& doc) override {
    refresh(doc);
    draw_controls(doc);
    refresh(doc);  // the controls may have changed the view or the target
    if (doc.busy()) ImGui::TextDisabled("re-running...");
    if (!main_.ok) {
      ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
      ImGui::TextWrapped("%s not available: %s", kViews[view_].title, main_.error.c_str());
      ImGui::PopStyleColor();
      return;
    }
    main_.filter(function_, encodings_);
    caption_ = header(main_);
    if (is_asm()) ImGui::Checkbox("encodings", &encodings_);
    if (compare_.empty()) {
      if (is_asm()) ImGui::SameLine();
      ImGui::TextDisabled("%s", caption_.c_str());
      draw_listing(doc, main_, "##code");
      return;
    }
    other_.filter(function_, encodings_);
    if (other_.ok) caption_ += " | " + header(other_);
    // Two columns of equal width; each listing scrolls on its own, as two editors would.
    float gap = ImGui::GetStyle().ItemSpacing.x;
    float w = std::floor((ImGui::GetContentRegionAvail().x - gap) / 2);
    ImGui::BeginChild("##left", ImVec2(w, 0), false);
    draw_column(doc, main_, "##code");
    ImGui::EndChild();
    ImGui::SameLine(0, gap);
    ImGui::BeginChild("##right", ImVec2(w, 0), false);
    draw_column(doc, other_, "##code2");
    ImGui::EndChild();
  }
};

}  // namespace

std::unique_ptr<Pane> make_machine_pane() { return std::make_unique<MachinePane>(); }

}  // namespace descent::viz
