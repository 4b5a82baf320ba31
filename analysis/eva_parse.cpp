// Reading what Frama-C's Eva prints (analysis/eva.h): its values ({0; 20}, [0..100],0%20,
// [1.25 .. 3.125] ∪ {NaN}), its messages (show_each values, alarms, errors), and the logs
// run_eva records, so that a recorded run can be compared again without Frama-C.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <numeric>
#include <set>

#include "analysis/eva.h"

namespace descent::analysis {
namespace {

constexpr const char* kUnion = "\xe2\x88\xaa";  // ∪

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Whitespace runs (Eva wraps long messages onto indented lines) become one space.
std::string squeeze(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + sep.size())
    out.push_back(trim(std::string_view(s).substr(from, at - from)));
  out.push_back(trim(std::string_view(s).substr(from)));
  return out;
}

bool parse_int(const std::string& s, int64_t* out) {
  if (s == "--") return false;
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno) return false;
  *out = v;
  return true;
}

bool parse_float(const std::string& s, double* out) {
  if (s == "inf" || s == "+inf" || s == "-inf") {
    *out = s[0] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

bool looks_float(const std::string& s) {
  return s.find_first_of(".eE") != std::string::npos || s.find("inf") != std::string::npos ||
         s == "NaN";
}

uint64_t gcd_u(uint64_t a, uint64_t b) { return std::gcd(a, b); }

int64_t floor_mod(__int128 x, uint64_t m) {
  __int128 r = x % __int128(m);
  if (r < 0) r += m;
  return int64_t(r);
}

// An int value as (smallest element, largest, stride): a listed set's stride is the gcd of
// its differences; 0 for a single value.
void int_shape(const EvaValue& v, int64_t* lo, int64_t* hi, uint64_t* stride) {
  if (!v.set.empty()) {
    *lo = v.set.front();
    *hi = v.set.back();
    uint64_t g = 0;
    for (int64_t x : v.set) g = gcd_u(g, uint64_t(__int128(x) - v.set.front()));
    *stride = g;
    return;
  }
  *lo = v.lo;
  *hi = v.hi;
  *stride = v.lo == v.hi ? 0 : v.mod;
}

std::string float_text(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".";
  if (x == 0 && std::signbit(x)) s = "-0.";
  return s;
}

}  // namespace

bool parse_eva_value(std::string_view raw, EvaValue* out) {
  std::string s = squeeze(raw);
  EvaValue v;
  if (s == "BOTTOM") {
    *out = v;
    return true;
  }
  if (s == "NaN") {
    v.kind = EvaValue::Kind::Float;
    v.nan = true;
    *out = v;
    return true;
  }
  if (size_t u = s.find(kUnion); u != std::string::npos) {
    std::string rest = squeeze(s.substr(u + 3));
    if (rest != "{NaN}" || !parse_eva_value(trim(s.substr(0, u)), &v) || v.kind != EvaValue::Kind::Float) return false;
    v.nan = true;
    *out = v;
    return true;
  }
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') {
    std::vector<std::string> items = split(s.substr(1, s.size() - 2), ";");
    bool is_float = std::any_of(items.begin(), items.end(), looks_float);
    if (is_float) {
      v.kind = EvaValue::Kind::Float;
      for (const auto& it : items) {
        double x;
        if (it == "NaN") v.nan = true;
        else if (!parse_float(it, &x)) return false;
        else {
          if (x == 0) x = 0;  // -0. and 0. are one value to Descent's bounds
          if (v.flo > v.fhi) v.flo = v.fhi = x;
          v.flo = std::min(v.flo, x);
          v.fhi = std::max(v.fhi, x);
        }
      }
    } else {
      v.kind = EvaValue::Kind::Int;
      for (const auto& it : items) {
        int64_t x;
        if (!parse_int(it, &x)) return false;
        v.set.push_back(x);
      }
      std::sort(v.set.begin(), v.set.end());
      v.set.erase(std::unique(v.set.begin(), v.set.end()), v.set.end());
      if (v.set.empty()) return false;
      v.lo = v.set.front();
      v.hi = v.set.back();
    }
    *out = v;
    return true;
  }
  if (s.empty() || s.front() != '[') return false;
  size_t close = s.find(']');
  if (close == std::string::npos) return false;
  std::string inner = s.substr(1, close - 1), tail = s.substr(close + 1);
  bool is_float = inner.find(" .. ") != std::string::npos;
  std::vector<std::string> ends = split(inner, is_float ? " .. " : "..");
  if (ends.size() != 2) return false;
  if (is_float) {
    v.kind = EvaValue::Kind::Float;
    if (!parse_float(ends[0], &v.flo) || !parse_float(ends[1], &v.fhi) || !tail.empty()) return false;
    if (v.flo == 0) v.flo = 0;
    if (v.fhi == 0) v.fhi = 0;
    *out = v;
    return true;
  }
  v.kind = EvaValue::Kind::Int;
  v.lo = INT64_MIN;
  v.hi = INT64_MAX;
  if (ends[0] != "--" && !parse_int(ends[0], &v.lo)) return false;
  if (ends[1] != "--" && !parse_int(ends[1], &v.hi)) return false;
  if (!tail.empty()) {  // ",r%m"
    if (tail[0] != ',') return false;
    size_t pct = tail.find('%');
    int64_t r, m;
    if (pct == std::string::npos || !parse_int(tail.substr(1, pct - 1), &r) || !parse_int(tail.substr(pct + 1), &m) || m < 1)
      return false;
    v.mod = uint64_t(m);
    v.rem = floor_mod(r, v.mod);
  }
  *out = v;
  return true;
}

std::string eva_value_text(const EvaValue& v) {
  switch (v.kind) {
    case EvaValue::Kind::Bottom: return "BOTTOM";
    case EvaValue::Kind::Int: {
      if (!v.set.empty()) {
        std::string s = "{";
        for (size_t i = 0; i < v.set.size(); ++i) s += (i ? "; " : "") + std::to_string(v.set[i]);
        return s + "}";
      }
      auto bound = [](int64_t x, int64_t end) { return x == end ? std::string("--") : std::to_string(x); };
      std::string s = "[" + bound(v.lo, INT64_MIN) + ".." + bound(v.hi, INT64_MAX) + "]";
      if (v.mod > 1) s += "," + std::to_string(v.rem) + "%" + std::to_string(v.mod);
      return s;
    }
    case EvaValue::Kind::Float: {
      std::string s;
      if (v.flo > v.fhi) return v.nan ? "NaN" : "BOTTOM";
      if (v.flo == v.fhi) s = "{" + float_text(v.flo) + "}";
      else s = "[" + float_text(v.flo) + " .. " + float_text(v.fhi) + "]";
      return v.nan ? s + " " + kUnion + " {NaN}" : s;
    }
  }
  return "?";
}

EvaValue eva_join(const EvaValue& a, const EvaValue& b) {
  if (a.kind == EvaValue::Kind::Bottom) return b;
  if (b.kind == EvaValue::Kind::Bottom || a.kind != b.kind) return a;
  EvaValue v;
  v.kind = a.kind;
  if (a.kind == EvaValue::Kind::Float) {
    bool ae = a.flo > a.fhi, be = b.flo > b.fhi;
    v.nan = a.nan || b.nan;
    if (ae && be) return v;
    v.flo = ae ? b.flo : be ? a.flo : std::min(a.flo, b.flo);
    v.fhi = ae ? b.fhi : be ? a.fhi : std::max(a.fhi, b.fhi);
    return v;
  }
  if (!a.set.empty() && !b.set.empty()) {
    std::vector<int64_t> u;
    std::set_union(a.set.begin(), a.set.end(), b.set.begin(), b.set.end(), std::back_inserter(u));
    if (u.size() <= size_t(kMaxSet)) {
      v.set = u;
      v.lo = u.front();
      v.hi = u.back();
      return v;
    }
  }
  int64_t alo, ahi, blo, bhi;
  uint64_t as, bs;
  int_shape(a, &alo, &ahi, &as);
  int_shape(b, &blo, &bhi, &bs);
  // The first element of each (its bounds may not be congruent when Eva left them so).
  auto first = [](const EvaValue& x, int64_t lo, uint64_t s) -> __int128 {
    if (!x.set.empty() || s <= 1) return lo;
    __int128 f = lo + __int128((x.rem - floor_mod(lo, s) + __int128(s)) % __int128(s));
    return f;
  };
  __int128 d = first(a, alo, as) - first(b, blo, bs);
  uint64_t g = gcd_u(gcd_u(as, bs), uint64_t(d < 0 ? -d : d));
  v.lo = std::min(alo, blo);
  v.hi = std::max(ahi, bhi);
  v.mod = g == 0 ? 1 : g;
  v.rem = floor_mod(first(a, alo, as), v.mod);
  if (v.mod == 1) v.rem = 0;
  return v;
}

namespace {

// Messages: a line that starts with '[', and the indented lines that continue it (Eva wraps
// long ones), each as its lines.
std::vector<std::string> eva_messages(const std::string& text) {
  std::vector<std::string> messages;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty() && line[0] == '[') messages.push_back(line + "\n");
    else if (!messages.empty() && !line.empty() && std::isspace(static_cast<unsigned char>(line[0])))
      messages.back() += line + "\n";
  }
  return messages;
}

bool read_by_parser(const std::string& m) {
  return m.rfind("[eva:alarm]", 0) == 0 || m.find("Frama_C_show_each_") != std::string::npos ||
         m.find("done for function") != std::string::npos || m.find("User Error") != std::string::npos ||
         m.find("aborted") != std::string::npos;
}

}  // namespace

std::string compact_eva_output(const std::string& text) {
  std::string out;
  std::set<std::string> seen;  // a value printed again adds nothing to the join
  for (const auto& m : eva_messages(text))
    if (read_by_parser(m) && seen.insert(m).second) out += m;
  return out;
}

EvaOutput parse_eva_output(const std::string& text, const std::string& c_file) {
  EvaOutput out;
  for (const std::string& raw : eva_messages(text)) {
    std::string m = squeeze(raw);
    size_t close = m.find("] ");
    if (close == std::string::npos) continue;
    std::string tag = m.substr(0, close + 1), rest = m.substr(close + 2);
    if (rest.find("User Error") != std::string::npos || rest.find("aborted") != std::string::npos)
      out.problems.push_back(tag + " " + rest);
    if (tag == "[eva]" && rest.rfind("done for function ", 0) == 0) out.finished = true;
    // "FILE:LINE: ..."
    size_t c1 = rest.find(':');
    if (c1 == std::string::npos) continue;
    std::string file = rest.substr(0, c1);
    if (file.size() < c_file.size() || file.compare(file.size() - c_file.size(), c_file.size(), c_file) != 0) continue;
    size_t c2 = rest.find(':', c1 + 1);
    int64_t line;
    if (c2 == std::string::npos || !parse_int(rest.substr(c1 + 1, c2 - c1 - 1), &line) || line <= 0) continue;
    std::string body = trim(rest.substr(c2 + 1));
    if (tag == "[eva]" && body.rfind("Frama_C_show_each_", 0) == 0) {
      size_t colon = body.find(':');
      if (colon == std::string::npos) continue;
      EvaShow s;
      s.c_line = uint32_t(line);
      s.probe = body.substr(0, colon);
      std::string value = trim(body.substr(colon + 1));
      if (!parse_eva_value(value, &s.value)) {
        out.problems.push_back("could not read Eva's value '" + value + "' (C line " + std::to_string(line) + ")");
        continue;
      }
      out.shows.push_back(std::move(s));
    } else if (tag == "[eva:alarm]") {
      EvaAlarm a;
      a.c_line = uint32_t(line);
      if (body.rfind("Warning:", 0) == 0) body = trim(body.substr(8));
      a.text = body;
      a.kind = body.substr(0, body.find('.'));
      out.alarms.push_back(std::move(a));
    }
  }
  return out;
}

EvaRun parse_eva_log(const std::string& log) {
  EvaRun run;
  run.log = log;
  std::string section, entry;
  bool in_section = false;
  auto finish = [&] {
    if (!in_section) return;
    EvaOutput o = parse_eva_output(section);
    o.entry = entry;
    run.outputs.push_back(std::move(o));
    section.clear();
  };
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? log.size() : nl + 1;
    if (line.rfind("=== eva from ", 0) == 0) {
      finish();
      in_section = true;
      std::string rest = line.substr(13);
      entry = rest.substr(0, rest.find(' '));
      continue;
    }
    if (!in_section) {
      if (line.rfind("# twin ", 0) == 0) run.twin_hash = trim(line.substr(7));
      continue;
    }
    section += line + "\n";
  }
  finish();
  run.available = !run.outputs.empty();
  if (!run.available) run.message = "the Eva log holds no run (no '=== eva from' section)";
  return run;
}

}  // namespace descent::analysis
