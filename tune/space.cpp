// Search spaces: parsing the `?`, `maybe` and `one_of` of a space, and taking its decisions
// one line at a time on the function as the earlier lines left it.
#include "tune/space.h"

#include <cstdlib>
#include <sstream>

#include "lang/text.h"
#include "tensor/schedule.h"

namespace descent::tune {

namespace {

std::string trimmed(std::string s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool is_choice(const std::string& w) { return w == "?" || w.rfind("?{", 0) == 0; }

// The loop whose extent a `?` at word `i` of a step divides: split LOOP ?, tile L1 L2 ? ?.
// "" when `?` has no meaning there.
std::string factor_loop(const std::vector<std::string>& w, size_t i) {
  if (w[0] == "split" && i == 2 && w.size() > 1) return w[1];
  if (w[0] == "tile" && (i == 3 || i == 4) && w.size() > 2) return w[i - 2];
  return "";
}

// "?{4,8,16}" -> {4, 8, 16}; false for an empty, unclosed or non-numeric list.
bool parse_list(const std::string& w, std::vector<int64_t>* out) {
  if (w.size() < 4 || w.back() != '}') return false;
  std::string body = w.substr(2, w.size() - 3);
  std::stringstream in(body);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0) return false;
    out->push_back(v);
  }
  return !out->empty();
}

bool check_step(const std::string& step, int line, std::string* error) {
  auto w = split_words(step);
  if (w.empty()) {
    *error = "line " + std::to_string(line) + ": an empty step";
    return false;
  }
  for (size_t i = 1; i < w.size(); ++i) {
    if (!is_choice(w[i])) continue;
    if (factor_loop(w, i).empty()) {
      *error = "line " + std::to_string(line) + ": '" + w[i] + "' in `" + step +
               "`: a choice stands for a factor, so only split (split LOOP ?) and tile "
               "(tile L1 L2 ? ?) take one";
      return false;
    }
    std::vector<int64_t> list;
    if (w[i] != "?" && !parse_list(w[i], &list)) {
      *error = "line " + std::to_string(line) + ": '" + w[i] +
               "' is not a list of factors (write ?{4,8,16})";
      return false;
    }
  }
  return true;
}

// The steps of one alternative: `cache_read C B local ; compute_at B_local C.j_0` is two,
// taken together (a choice that needs several steps to make sense).
std::vector<std::string> substeps(const std::string& alt) {
  std::vector<std::string> out;
  std::stringstream in(alt);
  for (std::string step; std::getline(in, step, ';');) out.push_back(trimmed(step));
  return out;
}

}  // namespace

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.insert(large.begin(), n / d);
    }
  small.insert(small.end(), large.begin(), large.end());
  return small;
}

int Space::max_decisions() const {
  int n = 0;
  for (const auto& l : lines) {
    n += l.kind != SpaceLine::Kind::Step;
    int most = 0;
    for (const auto& alt : l.alternatives) {
      int here = 0;
      for (const auto& step : substeps(alt))
        for (const auto& w : split_words(step)) here += is_choice(w);
      most = std::max(most, here);
    }
    n += most;
  }
  return n;
}

bool parse_space(std::string_view text, Space* out, std::string* error) {
  Space space;
  space.text = std::string(text);
  int number = 0;
  for (const auto& raw : split_lines(text)) {
    ++number;
    std::string line = trimmed(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    SpaceLine l;
    l.line = number;
    auto w = split_words(line);
    if (w[0] == "maybe") {
      char* end = nullptr;
      double p = w.size() > 1 ? std::strtod(w[1].c_str(), &end) : -1;
      if (w.size() < 3 || *end != '\0' || !(p >= 0 && p <= 1)) {
        *error = "line " + std::to_string(number) +
                 ": write `maybe P STEP`, P a probability from 0 to 1 (maybe 0.5 unroll k_1)";
        return false;
      }
      l.kind = SpaceLine::Kind::Maybe;
      l.probability = p;
      l.alternatives.push_back(trimmed(line.substr(line.find(w[1]) + w[1].size())));
    } else if (w[0] == "one_of") {
      l.kind = SpaceLine::Kind::OneOf;
      std::stringstream in(line.substr(6));
      for (std::string alt; std::getline(in, alt, '|');) l.alternatives.push_back(trimmed(alt));
      bool empty = false;
      for (const auto& a : l.alternatives) empty |= a.empty();
      if (l.alternatives.size() < 2 || empty) {
        *error = "line " + std::to_string(number) +
                 ": write `one_of STEP | STEP ...`, two or more steps (one_of vectorize j_1 | unroll j_1)";
        return false;
      }
    } else {
      l.alternatives.push_back(line);
    }
    for (const auto& alt : l.alternatives)
      for (const auto& step : substeps(alt))
        if (!check_step(step, number, error)) return false;
    space.lines.push_back(std::move(l));
  }
  *out = std::move(space);
  return true;
}

Sample realize(const Space& space, const tir::PrimFunc& f,
               const std::function<int(const Decision&, int)>& choose) {
  Sample s;
  s.func = f;
  // One decision: its index, kept in range, recorded in the genome and the explanation.
  auto decide = [&](Decision d) {
    int n = static_cast<int>(d.options.size());
    int k = choose(d, n);
    d.chosen = ((k % n) + n) % n;
    s.decisions.push_back(d.chosen);
    s.points.push_back(d);
    return d.chosen;
  };
  for (const auto& l : space.lines) {
    std::string alt = l.alternatives[0];
    if (l.kind == SpaceLine::Kind::Maybe) {
      Decision d{l.line, "maybe " + alt, {"skip", "apply"}, 0};
      if (decide(d) == 0) continue;
    } else if (l.kind == SpaceLine::Kind::OneOf) {
      Decision d{l.line, "one of " + std::to_string(l.alternatives.size()) + " steps", l.alternatives, 0};
      alt = l.alternatives[size_t(decide(d))];
    }
    for (const std::string& step : substeps(alt)) {
      // The `?` of this step, each against the loop as the earlier steps left it.
      auto w = split_words(step);
      for (size_t i = 1; i < w.size(); ++i) {
        if (!is_choice(w[i])) continue;
        std::string loop = factor_loop(w, i);
        std::vector<int64_t> values;
        std::string what;
        if (w[i] == "?") {
          std::string err;
          tensor::sched::LoopRef ref = tensor::sched::find_loop(s.func, loop, &err);
          if (!ref.loop) {
            s.error = "line " + std::to_string(l.line) + " (" + step + "): " + err;
            return s;
          }
          values = divisors(ref.loop->extent);
          what = "a factor of " + loop + " (extent " + std::to_string(ref.loop->extent) + ")";
        } else {
          parse_list(w[i], &values);
          what = "a factor of " + loop + " from " + w[i];
        }
        Decision d{l.line, what, {}, 0};
        for (int64_t v : values) d.options.push_back(std::to_string(v));
        w[i] = d.options[size_t(decide(d))];
      }
      std::string concrete = join(w, " "), canonical, err;
      if (!tensor::apply_step(s.func, concrete, &canonical, &err)) {
        s.error = "line " + std::to_string(l.line) + " (" + concrete + "): " + err;
        return s;
      }
      s.trace += canonical + "\n";
    }
  }
  s.ok = true;
  return s;
}

Sample sample(const Space& space, const tir::PrimFunc& f, std::mt19937_64& rng) {
  return realize(space, f, [&](const Decision& d, int n) {
    if (d.options.size() == 2 && d.options[0] == "skip") {
      // A maybe: apply with the line's probability (53 random bits as a double in [0, 1)).
      double p = 1;
      for (const auto& l : space.lines)
        if (l.line == d.line) p = l.probability;
      double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      return u < p ? 1 : 0;
    }
    return static_cast<int>(rng() % static_cast<uint64_t>(n));
  });
}

Sample replay(const Space& space, const tir::PrimFunc& f, const std::vector<int>& decisions) {
  size_t next = 0;
  return realize(space, f, [&](const Decision&, int) {
    return next < decisions.size() ? decisions[next++] : (next++, 0);
  });
}

}  // namespace descent::tune
