// The analysis as a reader sees it: the source with the facts after each line as comments
// (so the report is itself a valid program), then the alarms in the compilers' format.
#include <algorithm>

#include "analysis/analysis.h"
#include "lang/source.h"

namespace descent::analysis {

std::string format_alarms(const Result& result, const SourceFile& source) {
  std::string out;
  for (const auto& a : result.alarms) {
    const SourceFile& file = a.loc.file ? *a.loc.file : source;
    std::string severity = a.is_error() ? "error" : a.kind == Alarm::Kind::MayWrap ? "note" : "warning";
    std::string certainty = a.kind == Alarm::Kind::MayWrap ? "" : a.definite ? " (definite)" : " (possible)";
    out += file.name() + ":" + std::to_string(a.loc.line) + ":" + std::to_string(a.loc.col) + ": " +
           severity + certainty + ": " + a.message + "\n";
  }
  return out;
}

std::string format_block_states(const Result& result) {
  std::string out;
  const auto& fns = result.cfg.functions;
  for (size_t f = 0; f < fns.size(); ++f) {
    const auto& g = fns[f];
    if (!out.empty()) out += "\n";
    out += (g.fn ? "fn " + g.name : g.name) + "\n";
    for (const auto& b : g.blocks) {
      out += "  B" + std::to_string(b.id) + " (" + b.label + (b.loop_head ? ", loop head" : "") + ")";
      std::string state;
      if (f < result.block_states.size() && size_t(b.id) < result.block_states[f].size())
        for (const auto& fact : result.block_states[f][size_t(b.id)]) state += (state.empty() ? "" : "; ") + fact;
      out += state.empty() ? "\n" : ": " + state + "\n";
      for (const auto& in : b.instrs) out += "      " + instr_text(g, in) + "\n";
      out += "      " + term_text(g, b) + "\n";
    }
  }
  return out;
}

std::string format_explain(const Result& result) {
  std::string out = "\nhow each loop was solved:\n";
  if (result.loops.empty()) out += "  no loops\n";
  for (const auto& n : result.loops) {
    const auto& g = result.cfg.functions[size_t(n.function)];
    std::string where = "  line " + std::to_string(n.line) + (g.fn ? " (fn " + g.name + ")" : "") + ": ";
    if (!n.widened) {
      out += where + "unrolled: its head reached " + std::to_string(n.unrolled) +
             (n.unrolled == 1 ? " time" : " times") + " at most, each state apart: no widening\n";
      continue;
    }
    out += where + (n.unrolled ? "still running after " + std::to_string(n.unrolled) + " unrolled iterations, so widened"
                               : "widened (not unrolled)");
    if (!n.thresholds.empty()) {
      out += "; widening stopped at the program's constants:";
      for (size_t k = 0; k < n.thresholds.size(); ++k) out += (k ? ", " : " ") + n.thresholds[k];
    }
    out += n.narrowed ? "; then narrowed by the loop's tests\n" : "\n";
  }
  // How each function was analysed: in each call's own state, or from its summary.
  std::string calls;
  for (size_t f = 1; f < result.cfg.functions.size(); ++f) {
    const auto& g = result.cfg.functions[f];
    if (!g.fn) continue;
    int n = f < result.contexts.size() ? result.contexts[f] : 0;
    calls += "  fn " + g.name + ": " +
             (n > 0    ? "analysed in " + std::to_string(n) + (n == 1 ? " calling context" : " calling contexts") +
                             " (each call's argument values apart)\n"
              : n < 0 ? "never called: analysed once, with any argument\n"
                      : "its summary (arguments joined over every call)\n");
  }
  if (!calls.empty()) out += "\nhow each function was analysed:\n" + calls;
  return out;
}

std::string format_report(const Result& result, const SourceFile& source) {
  std::vector<std::string> lines;
  const std::string& text = source.text();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
    if (end == text.size()) break;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t width = 0;
  for (const auto& l : lines) width = std::max(width, l.size());
  width = std::min<size_t>(width, 40);
  std::string out = "facts after each line (" + std::string(domain_name(result.domain)) + "):\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string num = std::to_string(i + 1);
    std::string row = std::string(num.size() < 4 ? 4 - num.size() : 0, ' ') + num + "  " + lines[i];
    auto facts = result.facts_at_line(uint32_t(i + 1));
    if (!facts.empty()) {
      std::string joined;
      for (size_t k = 0; k < facts.size(); ++k) joined += (k ? "; " : "") + facts[k];
      size_t pad = lines[i].size() < width ? width - lines[i].size() : 0;
      row += std::string(pad, ' ') + "  # " + joined;
    }
    out += row + "\n";
  }
  std::string alarms = format_alarms(result, source);
  out += alarms.empty() ? "\nno alarms\n" : "\nalarms:\n" + alarms;
  return out;
}

}  // namespace descent::analysis
