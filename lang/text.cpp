// Line diffs and reading files: see text.h.
#include "lang/text.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace descent {

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

namespace {

struct Op {
  char kind;      // ' ', '-', '+'
  size_t ai, bi;  // line indices (0-based) in a and b where the op stands
};

// The edit script from x to y: the longest common subsequence of the lines, deletions before
// insertions where both are possible (what `diff` does).
std::vector<Op> diff_ops(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  size_t n = x.size(), m = y.size();
  // Common head and tail first: passes usually touch one function of many.
  size_t head = 0;
  while (head < n && head < m && x[head] == y[head]) ++head;
  size_t tail = 0;
  while (tail < n - head && tail < m - head && x[n - 1 - tail] == y[m - 1 - tail]) ++tail;
  size_t xn = n - head - tail, yn = m - head - tail;
  std::vector<Op> ops;
  for (size_t i = 0; i < head; ++i) ops.push_back({' ', i, i});
  if (xn * yn <= 4'000'000) {
    // Longest common subsequence of the middle parts, then walk it.
    std::vector<uint32_t> lcs((xn + 1) * (yn + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (yn + 1) + j]; };
    for (size_t i = xn; i-- > 0;)
      for (size_t j = yn; j-- > 0;)
        at(i, j) = x[head + i] == y[head + j] ? at(i + 1, j + 1) + 1
                                              : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < xn || j < yn) {
      if (i < xn && j < yn && x[head + i] == y[head + j]) {
        ops.push_back({' ', head + i++, head + j++});
      } else if (i < xn && (j == yn || at(i + 1, j) >= at(i, j + 1))) {
        ops.push_back({'-', head + i++, head + j});  // deletions before insertions
      } else {
        ops.push_back({'+', head + i, head + j++});
      }
    }
  } else {
    for (size_t i = 0; i < xn; ++i) ops.push_back({'-', head + i, head});
    for (size_t j = 0; j < yn; ++j) ops.push_back({'+', head + xn, head + j});
  }
  for (size_t i = 0; i < tail; ++i) ops.push_back({' ', n - tail + i, m - tail + i});
  return ops;
}
}  // namespace

std::vector<bool> changed_lines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b) {
  std::vector<bool> changed(b.size(), false);
  for (const Op& op : diff_ops(a, b))
    if (op.kind == '+') changed[op.bi] = true;
  return changed;
}

std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_label,
                         const std::string& b_label) {
  if (a == b) return "";
  std::vector<std::string> x = split_lines(a), y = split_lines(b);
  std::vector<Op> ops = diff_ops(x, y);

  const size_t context = 3;
  std::string out = "--- " + a_label + "\n+++ " + b_label + "\n";
  size_t k = 0, total = ops.size();
  while (k < total) {
    while (k < total && ops[k].kind == ' ') ++k;
    if (k == total) break;
    size_t start = k >= context ? k - context : 0;
    size_t end = k;
    for (;;) {
      while (end < total && ops[end].kind != ' ') ++end;
      size_t next = end;
      while (next < total && ops[next].kind == ' ' && next - end <= 2 * context) ++next;
      if (next < total && ops[next].kind != ' ' && next - end <= 2 * context) {
        end = next;
        continue;
      }
      break;
    }
    size_t stop = std::min(total, end + context);
    size_t acount = 0, bcount = 0;
    std::string body;
    for (size_t i = start; i < stop; ++i) {
      const Op& op = ops[i];
      if (op.kind != '+') ++acount;
      if (op.kind != '-') ++bcount;
      body += op.kind;
      body += op.kind == '+' ? y[op.bi] : x[op.ai];
      body += '\n';
    }
    size_t a0 = ops[start].ai + (acount ? 1 : 0), b0 = ops[start].bi + (bcount ? 1 : 0);
    out += "@@ -" + std::to_string(a0) + "," + std::to_string(acount) + " +" + std::to_string(b0) +
           "," + std::to_string(bcount) + " @@\n" + body;
    k = stop;
  }
  return out;
}

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool read_file(const std::string& path, std::string* text, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "'" + path + "' is a directory, not a file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    *error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  *text = ss.str();
  return true;
}

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // Optimal string alignment distance: insertions, deletions, substitutions, transpositions.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                            d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::string best;
  size_t best_d = std::max<size_t>(1, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = distance(word, c);
    if (d > 0 && d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string bytes_text(uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

bool parse_bytes(std::string_view text, uint64_t* bytes) {
  std::string t(text);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || errno || !(v >= 0)) return false;
  std::string unit(end);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  static const std::pair<const char*, double> units[] = {
      {"", 1}, {"B", 1}, {"K", 1024.0}, {"M", 1024.0 * 1024}, {"G", 1024.0 * 1024 * 1024},
      {"T", 1024.0 * 1024 * 1024 * 1024}};
  bool known = false;
  for (auto& [name, s] : units) {
    std::string n = name;
    if (unit == n || (!n.empty() && n != "B" && (unit == n + "B" || unit == n + "IB"))) {
      scale = s;
      known = true;
    }
  }
  if (!known || v * scale >= 1.8e19) return false;
  *bytes = uint64_t(v * scale);
  return true;
}

}  // namespace descent
