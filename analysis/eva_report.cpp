// The Eva side by side as text (analysis/eva.h): the facts line by line, the alarms, the
// counts, and a table of counts over many programs.
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/eva.h"

namespace descent::analysis {
namespace {

std::string pad(const std::string& s, size_t width) {
  // Widths count characters, not bytes (Eva's ∪ is three bytes).
  size_t chars = 0;
  for (unsigned char ch : s) chars += (ch & 0xC0) != 0x80;
  return chars >= width ? s : s + std::string(width - chars, ' ');
}

std::string num(int v, size_t width) {
  std::string s = std::to_string(v);
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string percent(int part, int whole) {
  if (whole == 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * part / whole);
  return buf;
}

std::string trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

}  // namespace

std::string format_eva_counts(const EvaCounts& k) {
  std::string s = "facts: " + std::to_string(k.facts) + "; Descent at least as precise on " +
                  std::to_string(k.descent_at_least()) + " (" + percent(k.descent_at_least(), k.facts) +
                  ": same " + std::to_string(k.same) + ", Descent more precise " + std::to_string(k.descent_more) +
                  "), Eva more precise on " + std::to_string(k.eva_more) + ", incomparable " +
                  std::to_string(k.incomparable);
  if (k.not_analysed) s += ", not analysed by Descent " + std::to_string(k.not_analysed);
  if (k.no_eva) s += ", no Eva value " + std::to_string(k.no_eva);
  s += "\nerror alarms (lines): Descent " + std::to_string(k.descent_errors) + ", Eva " +
       std::to_string(k.eva_errors) + ", both " + std::to_string(k.both_errors);
  if (k.descent_errors_uncalled || k.eva_errors_uncalled)
    s += "; in functions never called: Descent " + std::to_string(k.descent_errors_uncalled) + ", Eva " +
         std::to_string(k.eva_errors_uncalled);
  s += "\nwrap-around (Descent) / signed overflow (Eva), lines: " + std::to_string(k.descent_wraps) + " / " +
       std::to_string(k.eva_overflows);
  if (k.eva_other) s += "; Eva's other alarms: " + std::to_string(k.eva_other) + " lines";
  if (k.runs)
    s += "\nfalse alarms (lines the run shows cannot fail): Descent " + std::to_string(k.descent_false) + ", Eva " +
         std::to_string(k.eva_false);
  if (k.eva_problems) s += "\nEva had to guess or stopped (see the notes): its facts here are not all sound";
  return s + "\n";
}

std::string format_eva_comparison(const EvaComparison& c, const SourceFile& source) {
  std::string out = std::string("Descent (") + domain_name(c.domain) +
                    ") beside Frama-C Eva on the C twin, fact by fact (ints are int64_t there: where Descent "
                    "wraps around, Eva reports a signed overflow)\n\n";
  std::vector<const FactRow*> rows;
  for (const auto& r : c.facts) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const FactRow* a, const FactRow* b) {
    return a->site.line != b->site.line ? a->site.line < b->site.line : a->site.col < b->site.col;
  });
  size_t wv = 3, wd = 7, we = 3;
  auto var_text = [](const FactRow& r) {
    return r.site.var + (r.site.param ? " (param)" : "") + (r.if_called ? " *" : "");
  };
  for (const FactRow* r : rows) {
    wv = std::max(wv, var_text(*r).size());
    wd = std::max(wd, std::min<size_t>(clip(r->descent_text, 40).size(), 40));
    we = std::max(we, std::min<size_t>(clip(r->eva_text, 44).size(), 44));
  }
  out += "  line  " + pad("var", wv) + "  " + pad("Descent", wd) + "  " + pad("Eva", we) + "  verdict\n";
  bool any_if_called = false;
  uint32_t last = 0;
  for (const FactRow* r : rows) {
    if (r->site.line != last) {
      last = r->site.line;
      std::string text = last <= source.line_count() ? trimmed(source.line_text(last)) : "";
      out += num(int(last), 6) + "  " + clip(text, 100) + "\n";
    }
    any_if_called = any_if_called || r->if_called;
    out += "        " + pad(var_text(*r), wv) + "  " + pad(clip(r->descent_text, 40), wd) + "  " +
           pad(clip(r->eva_text, 44), we) + "  " + verdict_name(r->verdict) + "\n";
  }
  if (rows.empty()) out += "  (no assignments, loops or parameters: no facts to compare)\n";
  if (any_if_called)
    out += "  * in a function the top-level code never calls: Eva ran it from its own entry, every argument "
           "and global unknown\n";

  out += "\nalarms (errors, and wrap-around: Eva's signed overflow is where Descent's ints wrap):\n";
  if (c.alarms.empty()) out += "  none from either\n";
  else {
    size_t w = 7;
    auto side = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
      return s.empty() ? std::string("-") : s;
    };
    for (const auto& a : c.alarms) w = std::max(w, side(a.descent).size());
    out += "  line  " + pad("Descent", w) + "  Eva\n";
    for (const auto& a : c.alarms)
      out += (a.line ? num(int(a.line), 6) : std::string("   (C)")) + "  " + pad(side(a.descent), w) + "  " +
             side(a.eva) + (a.if_called ? "  (if called)" : "") + "\n";
  }
  out += "\n" + format_eva_counts(c.counts);
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  return out;
}

std::string format_eva_totals(const std::vector<std::pair<std::string, EvaCounts>>& rows) {
  struct Col {
    const char* head;
    int EvaCounts::*field;
  };
  static const Col cols[] = {
      {"facts", &EvaCounts::facts},           {"same", &EvaCounts::same},
      {"D more", &EvaCounts::descent_more},   {"Eva more", &EvaCounts::eva_more},
      {"incomp.", &EvaCounts::incomparable},  {"not an.", &EvaCounts::not_analysed},
      {"no Eva", &EvaCounts::no_eva},         {"D err", &EvaCounts::descent_errors},
      {"Eva err", &EvaCounts::eva_errors},    {"D err*", &EvaCounts::descent_errors_uncalled},
      {"Eva err*", &EvaCounts::eva_errors_uncalled}, {"D wrap", &EvaCounts::descent_wraps},
      {"Eva ovf", &EvaCounts::eva_overflows}, {"Eva prob", &EvaCounts::eva_problems},
      {"D false", &EvaCounts::descent_false}, {"Eva false", &EvaCounts::eva_false},
  };
  size_t wn = 7;
  for (const auto& [name, k] : rows) wn = std::max(wn, name.size());
  EvaCounts total;
  std::string out = pad("program", wn);
  for (const auto& col : cols) out += "  " + std::string(col.head);
  out += "\n";
  auto line = [&](const std::string& name, const EvaCounts& k) {
    std::string s = pad(name, wn);
    for (const auto& col : cols) s += "  " + num(k.*col.field, std::string(col.head).size());
    return s + "\n";
  };
  for (const auto& [name, k] : rows) {
    out += line(name, k);
    total += k;
  }
  out += line("total", total);
  out += "\nDescent at least as precise on " + std::to_string(total.descent_at_least()) + " of " +
         std::to_string(total.facts) + " facts (" + percent(total.descent_at_least(), total.facts) +
         "); Eva more precise on " + std::to_string(total.eva_more) + ", incomparable " +
         std::to_string(total.incomparable) + ", not analysed by Descent " + std::to_string(total.not_analysed) +
         ", no Eva value " + std::to_string(total.no_eva) + "\n";
  out += "error alarms (lines): Descent " + std::to_string(total.descent_errors) + ", Eva " +
         std::to_string(total.eva_errors) + " (both " + std::to_string(total.both_errors) +
         "); * in functions never called: Descent " + std::to_string(total.descent_errors_uncalled) + ", Eva " +
         std::to_string(total.eva_errors_uncalled) + "\n";
  out += "wrap-around (Descent) / signed overflow (Eva), lines: " + std::to_string(total.descent_wraps) + " / " +
         std::to_string(total.eva_overflows) + "\n";
  if (total.runs)
    out += "false alarms (lines the run shows cannot fail; Eva's overflow alarms where Descent proves no wrap "
           "count): Descent " + std::to_string(total.descent_false) + ", Eva " + std::to_string(total.eva_false) +
           " (" + std::to_string(total.runs) + " programs run to their end)\n";
  if (total.eva_problems)
    out += "Eva prob: programs where Eva had to guess (a recursion deeper than it unrolls) or stopped: " +
           std::to_string(total.eva_problems) + "\n";
  return out;
}

}  // namespace descent::analysis
