// The analysis pane (issue 18, analysis/analysis.h): abstract interpretation of the program
// in one of four domains, shown three ways.
//
//   - The source with the facts that hold after each line beside it (Result::facts_at_line),
//     lines with an alarm tinted (errors red, warnings yellow, notes grey) and the alarm's
//     message under the mouse.
//   - The control-flow graph of one function, each basic block a box with its entry state
//     (the fixpoint, Result::block_states) above its instructions; loop heads, where
//     widening happens, outlined in purple; back edges run round the right-hand side.
//   - A solver-step slider over Result::trace: at step k every block shows the state the
//     solver had for it once step k was done (analysis_steps.h), the block of step k is
//     outlined in its phase's colour, and the facts step k changed are drawn in that colour,
//     so a class watches a loop counter's interval grow, jump to +inf under widening and
//     come back under narrowing. A block no step has computed yet says "no step yet": the
//     trace records changes only, so even an entry block, whose state is set before the
//     first step, appears only once a step changes it.
//
// Everything comes from Session::analyze(domain) (pipeline/pipeline.h); the pane adds the
// layout, the colours and the cursor. The Session computes one analysis per input and domain
// and keeps it, so switching domains back and forth costs nothing after the first time.
//
// The pane's state and its methods are declared in analysis_internal.h; this file loads the
// result, moves the cursor and lays the pane out. The facts beside the source are drawn in
// analysis_source.cpp, the control-flow graph and the solver-step controls in
// analysis_graph.cpp.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <charconv>

#include "viz/panes/analysis_internal.h"
#include "viz/panes/analysis_steps.h"

namespace descent::viz {

namespace analysis_internal {

namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

// ---- Loading ----
const an::FunctionCfg* AnalysisPane::function() const {
  if (!result_ || fn_ < 0 || static_cast<size_t>(fn_) >= result_->cfg.functions.size())
    return nullptr;
  return &result_->cfg.functions[static_cast<size_t>(fn_)];
}

void AnalysisPane::refresh(Document& doc) {
  if (generation_ == doc.generation() && loaded_domain_ == domain_) return;
  generation_ = doc.generation();
  loaded_domain_ = domain_;
  Session& s = doc.session();
  // The Session's own "analysis" stage then speaks of the same domain as the pane.
  s.set_analysis_domain(domain_);
  compiled_ = doc.generation() > 0;
  result_ = compiled_ ? s.analyze(domain_) : nullptr;
  graph_ = Graph{};
  drawn_.clear();
  src_.clear();
  line_facts_.clear();
  line_severity_.clear();
  line_alarms_.clear();
  alarm_rows_.clear();
  alarm_row_severity_.clear();
  errors_ = warnings_ = notes_ = 0;
  code_width_font_ = 0;
  playing_ = false;
  if (!result_) return;
  const SourceFile* file = s.last_source();
  if (file)
    for (uint32_t i = 1; i <= file->line_count(); ++i) {
      std::string_view t = file->line_text(i);
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
      src_.emplace_back(t);
    }
  while (!src_.empty() && src_.back().empty()) src_.pop_back();
  line_facts_.assign(src_.size(), "");
  line_severity_.assign(src_.size(), kNone);
  line_alarms_.assign(src_.size(), "");
  for (size_t i = 0; i < src_.size(); ++i) {
    std::string joined;
    for (const auto& f : result_->facts_at_line(static_cast<uint32_t>(i + 1)))
      joined += (joined.empty() ? "" : "; ") + f;
    line_facts_[i] = std::move(joined);
  }
  for (const an::Alarm& a : result_->alarms) {
    int sev = a.is_error() ? kError : a.kind == an::Alarm::Kind::MayWrap ? kNote : kWarning;
    (sev == kError ? errors_ : sev == kWarning ? warnings_ : notes_)++;
    std::string what = std::string(sev == kError ? "error" : sev == kWarning ? "warning" : "note") +
                       (sev == kNote ? "" : a.definite ? " (definite)" : " (possible)") + ": " +
                       a.message;
    // An alarm in another file (a function an earlier input declared) has no line here.
    bool here = !a.loc.file || a.loc.file == file;
    std::string where = here ? fmt::format("line {}:{}", a.loc.line, a.loc.col)
                             : fmt::format("{}:{}:{}", a.loc.file->name(), a.loc.line, a.loc.col);
    alarm_rows_.push_back(where + ": " + what);
    alarm_row_severity_.push_back(sev);
    size_t line = a.loc.line;
    if (here && line >= 1 && line <= src_.size()) {
      line_severity_[line - 1] = std::max(line_severity_[line - 1], sev);
      line_alarms_[line - 1] += (line_alarms_[line - 1].empty() ? "" : "\n") + what;
    }
  }
  // The function shown before the edit, if it is still there; else the top level.
  fn_ = 0;
  const auto& fns = result_->cfg.functions;
  for (size_t i = 0; i < fns.size(); ++i)
    if (fns[i].name == fn_name_) fn_ = static_cast<int>(i);
  if (!fns.empty()) fn_name_ = fns[static_cast<size_t>(fn_)].name;
  step_ = std::clamp(step_, 0, std::max(0, trace_size() - 1));
  if (trace_size() == 0) stepping_ = false;
}

void AnalysisPane::select_function(int f) {
  if (!result_ || f < 0 || static_cast<size_t>(f) >= result_->cfg.functions.size()) return;
  fn_ = f;
  fn_name_ = result_->cfg.functions[static_cast<size_t>(f)].name;
}

// Moves the cursor to step k (0-based): the graph follows to the function it is in, and
// the source scrolls to its block.
void AnalysisPane::go_to_step(int k) {
  if (trace_size() == 0) return;
  stepping_ = true;
  step_ = std::clamp(k, 0, trace_size() - 1);
  const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
  select_function(s.function);
  if (const an::FunctionCfg* g = function())
    if (s.block >= 0 && static_cast<size_t>(s.block) < g->blocks.size()) {
      uint32_t line = g->blocks[static_cast<size_t>(s.block)].loc.line;
      if (line >= 1) scroll_source_to_ = static_cast<int>(line) - 1;
      scroll_graph_to_ = s.block;
    }
}

// ---- The cursor and the caption ----

// The next step (after the current one; from the first when showing the fixpoint) that
// computes block `b` of the function shown: what clicking a box does.
bool AnalysisPane::next_step_of(int b, std::string* error) {
  for (int k = stepping_ ? step_ + 1 : 0; k < trace_size(); ++k) {
    const an::SolverStep& s = result_->trace[static_cast<size_t>(k)];
    if (s.function == fn_ && s.block == b) {
      go_to_step(k);
      return true;
    }
  }
  if (error) *error = "no later step computes B" + std::to_string(b) + " of " + fn_name_;
  return false;
}

// "widening" or "unrolling": the next step in that phase (unrolling steps are the loop's
// iterations run one by one before any widening, Options::unroll).
bool AnalysisPane::next_phase(const std::string& phase, std::string* error) {
  for (int k = step_ + (stepping_ ? 1 : 0); k < trace_size(); ++k)
    if (result_->trace[static_cast<size_t>(k)].phase == phase) {
      go_to_step(k);
      return true;
    }
  if (error) *error = "no " + phase + " step after this one";
  return false;
}

// The bounds widening stopped at for the loop whose head is block b of function f (the
// program's constants, LoopNote::thresholds), or "" when it had none.
std::string AnalysisPane::thresholds_of(int f, int b) const {
  for (const an::LoopNote& l : result_->loops)
    if (l.function == f && l.head == b && !l.thresholds.empty()) {
      std::string t;
      for (const std::string& v : l.thresholds) t += (t.empty() ? "" : ", ") + v;
      return t;
    }
  return "";
}

// "step 12 of 40: B1 (for.head, loop head), widening, changed, thresholds 100, 1000" or
// "step 3 of 40: B1 (while.head, loop head), unrolling, iteration 2, changed"
std::string AnalysisPane::step_text() const {
  const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
  std::string where = "B" + std::to_string(s.block);
  if (s.function >= 0 && static_cast<size_t>(s.function) < result_->cfg.functions.size()) {
    const an::FunctionCfg& g = result_->cfg.functions[static_cast<size_t>(s.function)];
    if (s.block >= 0 && static_cast<size_t>(s.block) < g.blocks.size()) {
      const an::BasicBlock& b = g.blocks[static_cast<size_t>(s.block)];
      where += " (" + b.label + (b.loop_head ? ", loop head" : "") + ")";
    }
    if (s.function != 0) where = g.name + " " + where;
  }
  std::string phase = s.phase;
  if (s.phase == "unrolling") phase += ", iteration " + std::to_string(s.iteration);
  std::string text = fmt::format("step {} of {}: {}, {}, {}", step_ + 1, trace_size(), where, phase,
                                 s.changed ? "changed" : "unchanged");
  if (s.phase == "widening") {
    std::string t = thresholds_of(s.function, s.block);
    if (!t.empty()) text += ", thresholds " + t;
  }
  return text;
}

std::string AnalysisPane::make_caption() const {
  if (!compiled_) return "nothing compiled yet";
  if (!result_) return "the input has errors";
  const an::FunctionCfg* g = function();
  if (!g) return std::string(an::domain_name(domain_)) + ": no code";
  std::string alarms = errors_ + warnings_ + notes_ == 0
                           ? "no alarms"
                           : plural(errors_, "error", "errors") + ", " + plural(warnings_, "warning", "warnings") +
                                 ", " + plural(notes_, "note", "notes");
  std::string c = fmt::format("{}: {}, {}, {} solver steps{}; {}; ", an::domain_name(domain_), g->name,
                              plural(g->blocks.size(), "block", "blocks"), trace_size(),
                              result_->trace_truncated ? " (cut short)" : "", alarms);
  if (!stepping_) return c + "the fixpoint";
  size_t reached = 0;
  for (int j : latest_steps(*result_, fn_, step_)) reached += j >= 0;
  return c + step_text() + fmt::format("; {} of {} blocks computed so far", reached, g->blocks.size());
}

// ---- Drawing ----
void AnalysisPane::Draw(Document& doc) {
  refresh(doc);
  caption_ = make_caption();
  draw_domains(doc);
  if (!compiled_) {
    ImGui::TextDisabled("not available: nothing compiled yet");
    return;
  }
  if (!result_) {
    ImGui::PushStyleColor(ImGuiCol_Text, colors::error());
    ImGui::TextWrapped("the input has errors, so it was not analysed: the analysis needs a "
                       "program that parses and checks (the editor lists the errors)");
    ImGui::PopStyleColor();
    return;
  }
  if (!function()) {
    ImGui::TextDisabled("not available: no code to analyse");
    return;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, colors::dim());
  ImGui::TextWrapped("%s", caption_.c_str());
  ImGui::PopStyleColor();

  // The current step's block, for the source to mark.
  int current_line = -1;
  if (stepping_ && step_ < trace_size()) {
    const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
    if (static_cast<size_t>(s.function) < result_->cfg.functions.size()) {
      const auto& blocks = result_->cfg.functions[static_cast<size_t>(s.function)].blocks;
      if (s.block >= 0 && static_cast<size_t>(s.block) < blocks.size())
        current_line = static_cast<int>(blocks[static_cast<size_t>(s.block)].loc.line) - 1;
    }
  }
  const float lh = ImGui::GetTextLineHeightWithSpacing();
  size_t rows = src_.size() + (alarm_rows_.empty() ? 0 : 1 + alarm_rows_.size());
  float avail = ImGui::GetContentRegionAvail().y;
  float source_h = std::min(static_cast<float>(rows) * lh + 2 * ImGui::GetStyle().WindowPadding.y + 14,
                            avail * 0.36f);
  ImGui::TextDisabled("facts after each line (hover a line for its alarms)");
  draw_source(doc, std::max(source_h, 3 * lh), current_line);

  draw_graph_controls();
  if (stepping_ && step_ < trace_size()) {
    const an::SolverStep& s = result_->trace[static_cast<size_t>(step_)];
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(phase_color(s.phase)), "%s", step_text().c_str());
  } else {
    ImGui::TextDisabled("each block's entry state at the fixpoint; purple: loop heads (widening happens there)");
  }
  caption_ = make_caption();  // the controls may have moved the cursor
  draw_graph(doc);
}

// True when an item `w` wide still fits on this line (then it goes there).
bool AnalysisPane::same_line_if_fits(float w) {
  float right = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w;
  float edge = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (right > edge) return false;
  ImGui::SameLine();
  return true;
}

void AnalysisPane::draw_domains(Document& doc) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("domain");
  for (an::Domain d : an::all_domains()) {
    const char* label = an::domain_name(d);
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(label).x + em(8));
    if (ImGui::RadioButton(label, domain_ == d)) set_domain(doc, d);
  }
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "constants: one value, or not constant\n"
        "signs: < 0, = 0, > 0 and their unions\n"
        "intervals: [lo, hi]; loop heads widen, then narrowing wins bounds back\n"
        "product: intervals and signs together, each refining the other");
}

void AnalysisPane::set_domain(Document& doc, an::Domain d) {
  domain_ = d;
  refresh(doc);
}

// ---- Scripted actions: the functions the controls call ----
bool AnalysisPane::Act(Document& doc, std::string_view verb, const std::vector<std::string>& args,
                       std::string* error) {
  refresh(doc);
  auto fail = [&](std::string why) {
    *error = std::move(why);
    return false;
  };
  if (verb == "domain") {
    an::Domain d;
    if (args.size() != 1 || !an::parse_domain(args[0], &d))
      return fail("usage: analysis domain constants|signs|intervals|product");
    set_domain(doc, d);
    return true;
  }
  const bool known = verb == "function" || verb == "step" || verb == "fixpoint" || verb == "counters";
  if (!known) return Pane::Act(doc, verb, args, error);
  if (!compiled_) return fail("nothing compiled yet");
  if (!result_) return fail("the input has errors, so it was not analysed");
  if (verb == "counters") {
    if (args.size() != 1 || (args[0] != "on" && args[0] != "off")) return fail("usage: analysis counters on|off");
    counters_ = args[0] == "on";
    return true;
  }
  if (verb == "fixpoint") {
    if (!args.empty()) return fail("usage: analysis fixpoint");
    stepping_ = false;
    return true;
  }
  if (verb == "function") {
    if (args.size() != 1) return fail("usage: analysis function NAME|N");
    const auto& fns = result_->cfg.functions;
    std::string names;
    for (size_t i = 0; i < fns.size(); ++i) {
      if (fns[i].name == args[0] || std::to_string(i) == args[0]) {
        select_function(static_cast<int>(i));
        return true;
      }
      names += (i ? ", " : "") + fns[i].name;
    }
    return fail("no function '" + args[0] + "' in the analysis (functions: " + names + ")");
  }
  // step
  const int n = trace_size();
  if (n == 0) return fail("the solver took no steps");
  if (args.size() == 2 && args[0] == "block") {
    int b = -1;
    std::string_view id = args[1];
    if (!id.empty() && (id[0] == 'B' || id[0] == 'b')) id.remove_prefix(1);
    auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), b);
    const an::FunctionCfg* g = function();
    if (ec != std::errc() || p != id.data() + id.size() || !g || b < 0 ||
        static_cast<size_t>(b) >= g->blocks.size())
      return fail("no block '" + args[1] + "' in " + fn_name_);
    return next_step_of(b, error);
  }
  if (args.size() != 1)
    return fail("usage: analysis step N|next|prev|first|last|widening|unrolling|block B");
  const std::string& a = args[0];
  if (a == "widening" || a == "unrolling") return next_phase(a, error);
  if (a == "next" || a == "prev") {
    int k = stepping_ ? step_ + (a == "next" ? 1 : -1) : (a == "next" ? 0 : n - 1);
    if (k < 0 || k >= n) return fail(a == "next" ? "already at the last step" : "already at the first step");
    go_to_step(k);
    return true;
  }
  if (a == "first" || a == "last") {
    go_to_step(a == "first" ? 0 : n - 1);
    return true;
  }
  int k = 0;
  auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), k);
  if (ec != std::errc() || p != a.data() + a.size() || k < 1 || k > n)
    return fail(fmt::format("no step '{}' (steps 1..{}, next, prev, first, last, widening, unrolling)", a, n));
  go_to_step(k - 1);
  return true;
}

}  // namespace analysis_internal

std::unique_ptr<Pane> make_analysis_pane() { return std::make_unique<analysis_internal::AnalysisPane>(); }

}  // namespace descent::viz
