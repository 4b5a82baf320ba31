// Descent's facts beside Eva's (analysis/eva.h): which set of values lies inside which, fact by
// fact, and the alarms of each, line by line.
//
// Both sides are sets of numbers described by a few parameters: Descent's by a hull, the sign
// atoms left, a congruence and perhaps the values themselves (value.h); Eva's by a list of
// values or a range with a congruence. Inclusion is decided exactly on ints: a set of at most 64
// values is listed and each value tested; a larger one is a strided range (with perhaps 0
// missing), inside another when its ends are and the other's stride divides its own.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/eva.h"

namespace descent::analysis {
namespace {

using i128 = __int128;

int64_t floor_mod(i128 x, uint64_t m) {
  i128 r = x % i128(m);
  return int64_t(r < 0 ? r + i128(m) : r);
}

// A set of ints: listed, or every lo + k * mod up to hi (0 left out when hole0).
struct Ints {
  bool empty = true;
  bool listed = false;
  std::vector<int64_t> set;
  int64_t lo = 0, hi = -1;
  uint64_t mod = 1;
  bool hole0 = false;

  bool contains(int64_t x) const {
    if (empty) return false;
    if (listed) return std::binary_search(set.begin(), set.end(), x);
    return x >= lo && x <= hi && floor_mod(i128(x) - lo, mod) == 0 && !(hole0 && x == 0);
  }
};

Ints listed(std::vector<int64_t> v) {
  Ints s;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  s.empty = v.empty();
  s.listed = true;
  s.set = std::move(v);
  return s;
}

// Every x in [lo, hi] with x = rem (mod mod), without the excluded sign atoms.
Ints strided(int64_t lo, int64_t hi, uint64_t mod, int64_t rem, bool no_neg, bool no_zero, bool no_pos) {
  if (mod == 0) mod = 1;
  i128 L = lo, H = hi;
  if (no_neg && L < 0) L = 0;
  if (no_pos && H > 0) H = 0;
  L += floor_mod(i128(rem) - L, mod);
  H -= floor_mod(H - i128(rem), mod);
  if (no_zero && L == 0) L += mod;
  if (no_zero && H == 0) H -= mod;
  if (L > H) return listed({});
  bool zero_inside = no_zero && L < 0 && H > 0 && floor_mod(0 - L, mod) == 0;
  i128 count = (H - L) / i128(mod) + 1 - (zero_inside ? 1 : 0);
  if (count <= 64) {
    std::vector<int64_t> v;
    for (i128 x = L; x <= H; x += mod)
      if (!(no_zero && x == 0)) v.push_back(int64_t(x));
    return listed(std::move(v));
  }
  Ints s;
  s.empty = false;
  s.lo = int64_t(L);
  s.hi = int64_t(H);
  s.mod = mod;
  s.hole0 = zero_inside;
  return s;
}

bool subset(const Ints& a, const Ints& b) {
  if (a.empty) return true;
  if (b.empty) return false;
  if (a.listed) {
    for (int64_t x : a.set)
      if (!b.contains(x)) return false;
    return true;
  }
  if (b.listed) return false;  // a has more than 64 values, b at most 64
  if (a.lo < b.lo || a.hi > b.hi || a.mod % b.mod != 0 || floor_mod(i128(a.lo) - b.lo, b.mod) != 0) return false;
  return !b.hole0 || a.hole0 || !a.contains(0);
}

Ints ints_of(const AbsVal& d) {
  if (d.is_bottom() || d.hull.is_empty()) return listed({});
  if (d.type == Type::Bool) {
    std::vector<int64_t> v;
    if ((d.signs & kFalse) && d.hull.lo <= 0 && 0 <= d.hull.hi) v.push_back(0);
    if ((d.signs & kTrue) && d.hull.lo <= 1 && 1 <= d.hull.hi) v.push_back(1);
    return listed(v);
  }
  bool no_neg = !(d.signs & kNeg), no_zero = !(d.signs & kZero), no_pos = !(d.signs & kPos);
  uint64_t mod = d.mod == 0 ? 1 : d.mod;
  Ints s = strided(d.hull.lo, d.hull.hi, mod, mod == 1 ? 0 : d.rem, no_neg, no_zero, no_pos);
  if (d.n_set > 0) {
    std::vector<int64_t> v;
    for (int i = 0; i < d.n_set && i < kMaxSet; ++i)
      if (s.contains(d.set[i])) v.push_back(d.set[i]);
    return listed(v);
  }
  return s;
}

Ints ints_of(const EvaValue& e) {
  if (e.kind != EvaValue::Kind::Int) return listed({});
  if (!e.set.empty()) return listed(e.set);
  return strided(e.lo, e.hi, e.mod, e.rem, false, false, false);
}

// Floats: a range (perhaps without 0) and perhaps nan.
struct Floats {
  bool range = false;
  double lo = 0, hi = 0;
  bool hole0 = false;
  bool nan = false;
};

Floats floats_of(const AbsVal& d) {
  Floats f;
  if (d.is_bottom()) return f;
  f.nan = d.hull.nan && (d.signs & kNan);
  f.range = d.hull.flo <= d.hull.fhi && (d.signs & (kNeg | kZero | kPos));
  if (!f.range) return f;
  f.lo = d.hull.flo;
  f.hi = d.hull.fhi;
  if (!(d.signs & kNeg) && f.lo < 0) f.lo = 0;
  if (!(d.signs & kPos) && f.hi > 0) f.hi = 0;
  if (!(d.signs & kZero)) {
    if (f.lo == 0) f.lo = std::nextafter(0.0, 1.0);
    if (f.hi == 0) f.hi = -std::nextafter(0.0, 1.0);
    f.hole0 = f.lo < 0 && f.hi > 0;
  }
  f.range = f.lo <= f.hi;
  return f;
}

Floats floats_of(const EvaValue& e) {
  Floats f;
  if (e.kind != EvaValue::Kind::Float) return f;
  f.nan = e.nan;
  f.range = e.flo <= e.fhi;
  f.lo = e.flo;
  f.hi = e.fhi;
  return f;
}

// x <= y, allowing for Eva's 12 significant digits.
bool approx_le(double x, double y) {
  if (x <= y) return true;
  if (std::isinf(x) || std::isinf(y)) return false;
  return x - y <= 1e-11 * std::max(std::fabs(x), std::fabs(y));
}

bool subset(const Floats& a, const Floats& b) {
  if (a.nan && !b.nan) return false;
  if (!a.range) return true;
  if (!b.range) return false;
  if (!approx_le(b.lo, a.lo) || !approx_le(a.hi, b.hi)) return false;
  return !b.hole0 || a.hole0 || a.lo > 0 || a.hi < 0;
}

bool float_kind(const AbsVal& d) { return d.type == Type::Float; }

// Eva prints a double that is 0 as {0}, as it would an int: the site's type says which it is.
EvaValue as_float(EvaValue v) {
  if (v.kind != EvaValue::Kind::Int) return v;
  EvaValue f;
  f.kind = EvaValue::Kind::Float;
  f.flo = double(v.set.empty() ? v.lo : v.set.front());
  f.fhi = double(v.set.empty() ? v.hi : v.set.back());
  return f;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Same: return "same";
    case Verdict::DescentMore: return "Descent more precise";
    case Verdict::EvaMore: return "Eva more precise";
    case Verdict::Incomparable: return "incomparable";
    case Verdict::NotAnalysed: return "not analysed by Descent";
    case Verdict::NoEva: return "no Eva value";
  }
  return "?";
}

bool descent_within_eva(const AbsVal& d, const EvaValue& e) {
  if (float_kind(d)) return e.kind != EvaValue::Kind::Int && subset(floats_of(d), floats_of(e));
  if (e.kind == EvaValue::Kind::Float) return ints_of(d).empty;
  return subset(ints_of(d), ints_of(e));
}

bool eva_within_descent(const EvaValue& e, const AbsVal& d) {
  if (float_kind(d)) return e.kind != EvaValue::Kind::Int ? subset(floats_of(e), floats_of(d)) : ints_of(e).empty;
  if (e.kind == EvaValue::Kind::Float) return !floats_of(e).range && !floats_of(e).nan;
  return subset(ints_of(e), ints_of(d));
}

Verdict compare_values(const AbsVal& d, const EvaValue& e) {
  bool de = descent_within_eva(d, e), ed = eva_within_descent(e, d);
  return de && ed ? Verdict::Same : de ? Verdict::DescentMore : ed ? Verdict::EvaMore : Verdict::Incomparable;
}

EvaCounts& EvaCounts::operator+=(const EvaCounts& o) {
  facts += o.facts;
  same += o.same;
  descent_more += o.descent_more;
  eva_more += o.eva_more;
  incomparable += o.incomparable;
  not_analysed += o.not_analysed;
  no_eva += o.no_eva;
  descent_errors += o.descent_errors;
  eva_errors += o.eva_errors;
  both_errors += o.both_errors;
  descent_errors_uncalled += o.descent_errors_uncalled;
  eva_errors_uncalled += o.eva_errors_uncalled;
  descent_wraps += o.descent_wraps;
  eva_overflows += o.eva_overflows;
  runs += o.runs;
  descent_false += o.descent_false;
  eva_false += o.eva_false;
  eva_other += o.eva_other;
  eva_problems += o.eva_problems;
  return *this;
}

EvaComparison compare_with_eva(const Result& result, const CTwin& twin, const EvaRun& eva) {
  EvaComparison c;
  c.domain = result.domain;
  const Lattice& lat = result.lattice();
  if (!eva.twin_hash.empty() && eva.twin_hash != twin_hash(twin))
    c.notes.push_back("the Eva log is of another C twin (" + eva.twin_hash + ", now " + twin_hash(twin) +
                      "): record it again");
  if (!eva.available) c.notes.push_back("Eva did not run: " + eva.message);
  for (const auto& o : eva.outputs)
    c.counts.eva_problems = c.counts.eva_problems || !o.problems.empty();
  for (const auto& o : eva.outputs)
    for (const auto& p : o.problems)
      if (std::find(c.notes.begin(), c.notes.end(), "Eva (from " + o.entry + "): " + p) == c.notes.end())
        c.notes.push_back("Eva (from " + o.entry + "): " + p);

  // Which of Eva's runs speaks for a C function: main's for what main reaches, else those of
  // the entries that reach it.
  std::set<std::string> from_main;
  for (const auto& f : twin.reachable_from("main")) from_main.insert(f);
  std::map<std::string, std::vector<const EvaOutput*>> runs_for;
  auto runs = [&](const std::string& fn) -> const std::vector<const EvaOutput*>& {
    auto it = runs_for.find(fn);
    if (it != runs_for.end()) return it->second;
    std::vector<const EvaOutput*> v;
    for (const auto& o : eva.outputs) {
      if (from_main.count(fn) ? o.entry != "main" : o.entry == "main") continue;
      auto reach = twin.reachable_from(o.entry);
      if (std::find(reach.begin(), reach.end(), fn) != reach.end()) v.push_back(&o);
    }
    return runs_for[fn] = v;
  };

  // Descent's facts by statement, and the functions it has any fact in.
  std::map<std::tuple<std::string, uint32_t, uint32_t, std::string>, const StmtFact*> descent;
  std::set<std::string> analysed{"<script>"};
  for (const auto& f : result.stmt_facts()) {
    descent[{f.function, f.line, f.col, f.var}] = &f;
    analysed.insert(f.function);
  }

  for (const auto& site : twin.sites) {
    FactRow row;
    row.site = site;
    std::string cfn = twin.function_of(site.c_line);
    row.if_called = !from_main.count(cfn);
    bool finished = false;
    EvaValue e;
    for (const EvaOutput* o : runs(cfn)) {
      finished = finished || o->finished;
      for (const auto& s : o->shows)
        if (s.c_line == site.c_line && s.probe == site.probe) {
          e = eva_join(e, site.type == Type::Float ? as_float(s.value) : s.value);
          row.eva_has = true;
        }
    }
    row.eva_has = row.eva_has && e.kind != EvaValue::Kind::Bottom;
    row.eva = e;
    auto it = descent.find({site.function, site.line, site.col, site.var});
    row.descent_has = it != descent.end() && !it->second->value.is_bottom();
    if (row.descent_has) row.descent = it->second->value;
    bool in_analysed = analysed.count(site.function) > 0;
    row.descent_text = row.descent_has ? lat.show(row.descent) : in_analysed ? "unreachable" : "not analysed";
    row.eva_text = row.eva_has ? eva_value_text(e) : finished ? "unreachable" : "no value";
    if (!row.eva_has && !finished) row.verdict = Verdict::NoEva;
    else if (!row.descent_has && !in_analysed && row.eva_has) row.verdict = Verdict::NotAnalysed;
    else if (!row.descent_has) row.verdict = row.eva_has ? Verdict::DescentMore : Verdict::Same;
    else if (!row.eva_has) row.verdict = compare_values(row.descent, EvaValue{});
    else row.verdict = compare_values(row.descent, e);
    auto& k = c.counts;
    ++k.facts;
    switch (row.verdict) {
      case Verdict::Same: ++k.same; break;
      case Verdict::DescentMore: ++k.descent_more; break;
      case Verdict::EvaMore: ++k.eva_more; break;
      case Verdict::Incomparable: ++k.incomparable; break;
      case Verdict::NotAnalysed: ++k.not_analysed; break;
      case Verdict::NoEva: ++k.no_eva; break;
    }
    c.facts.push_back(std::move(row));
  }

  // Alarms, by Descent line.
  std::map<uint32_t, AlarmRow> rows;
  std::map<uint32_t, std::string> line_fn;  // Descent line -> a C function it lies in
  for (uint32_t l = 1; l < twin.descent_line.size(); ++l)
    if (twin.descent_line[l] && !line_fn.count(twin.descent_line[l])) line_fn[twin.descent_line[l]] = twin.function_of(l);
  auto row_at = [&](uint32_t line) -> AlarmRow& {
    AlarmRow& r = rows[line];
    r.line = line;
    auto f = line_fn.find(line);
    r.if_called = f != line_fn.end() && !from_main.count(f->second);
    return r;
  };
  const SourceFile* here = result.cfg.program ? result.cfg.program->source.get() : nullptr;
  for (const auto& a : result.alarms) {
    if (!a.loc.valid() || (a.loc.file && a.loc.file != here)) continue;
    bool wrap = a.kind == Alarm::Kind::MayWrap;
    if (!a.is_error() && !wrap) continue;
    AlarmRow& r = row_at(a.loc.line);
    std::string text = wrap ? "may wrap around" : (a.definite ? "" : "possible ") + std::string(alarm_kind_name(a.kind));
    if (std::find(r.descent.begin(), r.descent.end(), text) == r.descent.end()) r.descent.push_back(text);
    r.descent_error = r.descent_error || a.is_error();
    r.descent_wrap = r.descent_wrap || wrap;
  }
  std::set<uint32_t> other_lines;
  for (const auto& o : eva.outputs)
    for (const auto& a : o.alarms) {
      const auto& rs = runs(twin.function_of(a.c_line));
      if (!twin.function_of(a.c_line).empty() && std::find(rs.begin(), rs.end(), &o) == rs.end()) continue;
      AlarmRow& r = row_at(twin.line_of(a.c_line));
      bool div = a.kind.find("division by zero") != std::string::npos;
      bool conv = a.kind.find("overflow in conversion") != std::string::npos || a.kind.find("non-finite") != std::string::npos;
      bool ovf = !conv && a.kind.find("overflow") != std::string::npos;
      std::string text = div ? "division by zero" : conv ? "invalid conversion" : a.kind;
      if (std::find(r.eva.begin(), r.eva.end(), text) == r.eva.end()) r.eva.push_back(text);
      r.eva_error = r.eva_error || div || conv;
      r.eva_overflow = r.eva_overflow || ovf;
      if (!div && !conv && !ovf) other_lines.insert(r.line);
    }
  auto& k = c.counts;
  k.eva_other = int(other_lines.size());
  for (auto& [line, r] : rows) {
    if (r.if_called) {
      k.descent_errors_uncalled += r.descent_error;
      k.eva_errors_uncalled += r.eva_error;
    } else {
      k.descent_errors += r.descent_error;
      k.eva_errors += r.eva_error;
      k.both_errors += r.descent_error && r.eva_error;
    }
    k.descent_wraps += r.descent_wrap;
    k.eva_overflows += r.eva_overflow;
    c.alarms.push_back(r);
  }
  return c;
}

bool eva_side_by_side(const Result& result, const EvaOptions& options, const std::string* recorded,
                      EvaSideBySide* out, std::string* error) {
  if (!result.cfg.program || !result.cfg.module) {
    *error = "no analysed program";
    return false;
  }
  if (!make_c_twin(*result.cfg.program, *result.cfg.module, &out->twin, error)) return false;
  out->eva = recorded ? parse_eva_log(*recorded) : run_eva(out->twin, options);
  out->comparison = compare_with_eva(result, out->twin, out->eva);
  return true;
}

void count_false_alarms(EvaComparison* c, uint32_t failing_line) {
  auto& k = c->counts;
  ++k.runs;
  for (const AlarmRow& r : c->alarms) {
    if (r.if_called || r.line == 0 || r.line == failing_line) continue;
    k.descent_false += r.descent_error;
    k.eva_false += r.eva_error || (r.eva_overflow && !r.descent_wrap);
  }
}

}  // namespace descent::analysis
