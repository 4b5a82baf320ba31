// Abstract values as text (analysis/value.h): the facts the report, the REPL and the
// visualizer print ("x in [0, 9]", "n > 0", "y = 15"). Apart from the lattice because each
// domain says what it knows in its own words: a new domain adds its words here.
#include "analysis/value.h"

#include <string>

#include "analysis/value_internal.h"

namespace descent::analysis {

using namespace value_internal;

std::string int_bound_text(int64_t v) {
  if (v == kMin) return "-inf";
  if (v == kMax) return "+inf";
  return std::to_string(v);
}

namespace {
// Widening's first step (+-2^62) and the ends of a congruence near the type's ends are
// artefacts, not facts a reader needs: a range reaching them is shown as reaching the end of
// the type (a larger set, so still true).
constexpr int64_t kFar = int64_t(1) << 62;
}  // namespace

std::string float_bound_text(double v) { return format_value(Value::of_float(v), Type::Float); }

std::string Lattice::show(const AbsVal& v) const {
  if (v.type == Type::Unknown) return "not tracked";
  if (v.is_bottom()) return "unreachable";
  if (v.type == Type::Bool) {
    if (v.signs == kTrue) return "= true";
    if (v.signs == kFalse) return "= false";
    return "true or false";
  }
  const bool flt = v.type == Type::Float;
  const bool nan = flt && (v.signs & kNan);
  const std::string or_nan = nan ? " or nan" : "";
  if (flt && v.signs == kNan) return "= nan";
  if (v.hull.is_point()) return "= " + (flt ? float_bound_text(v.hull.flo) : std::to_string(v.hull.lo));
  auto sign_text = [&](uint8_t s) -> std::string {
    s &= kNeg | kZero | kPos;
    switch (s) {
      case kPos: return "> 0";
      case kZero | kPos: return ">= 0";
      case kNeg: return "< 0";
      case kNeg | kZero: return "<= 0";
      case kZero: return "= 0";
      case kNeg | kPos: return "!= 0";
      default: return "";
    }
  };
  if (d_ == Domain::Constants) return "not constant";
  const bool ints = v.type == Type::Int;
  const std::string residue = ints && v.mod >= 2 ? "= " + std::to_string(v.rem) + " mod " + std::to_string(v.mod) : "";
  if (d_ == Domain::Congruences && ints) return residue.empty() ? "any" : residue;
  // A set that is not a run of consecutive values says it as the values.
  if (ints && v.n_set >= 2 && uint64_t(v.hull.hi - v.hull.lo) + 1 != v.n_set) {
    std::string s = "in {";
    for (int k = 0; k < v.n_set; ++k) s += (k ? ", " : "") + std::to_string(v.set[k]);
    return s + "}";
  }
  if (d_ == Domain::Sets && ints && !v.n_set) return "any";
  if (d_ == Domain::Signs) {
    std::string s = sign_text(v.signs);
    if (s.empty()) return nan ? "any" : "any sign";
    return s + or_nan;
  }
  // Intervals and the product.
  std::string range;
  if (flt) {
    if (v.hull.range_empty()) range = "";
    else if (v.hull.flo == -kInf && v.hull.fhi == kInf) range = "any number";
    else range = "in [" + float_bound_text(v.hull.flo) + ", " + float_bound_text(v.hull.fhi) + "]";
    if (range == "any number" && nan) return "any";
  } else {
    int64_t lo = v.hull.lo <= -kFar ? kMin : v.hull.lo, hi = v.hull.hi >= kFar ? kMax : v.hull.hi;
    if (lo == kMin && hi == kMax) range = "any";
    else if (hi == kMax) range = lo == 1 ? "> 0" : ">= " + int_bound_text(lo);
    else if (lo == kMin) range = hi == -1 ? "< 0" : "<= " + int_bound_text(hi);
    else range = "in [" + int_bound_text(lo) + ", " + int_bound_text(hi) + "]";
  }
  // The product says what the signs add: a zero the hull spans but the value avoids.
  if (d_ == Domain::Product && !(v.signs & kZero) && (signs_of(v.hull) & kZero)) range += ", != 0";
  if (!residue.empty()) range += range == "any" ? " " + residue : ", " + residue;
  return range + or_nan;
}

std::string Lattice::describe(const std::string& name, const AbsVal& v) const {
  std::string s = show(v);
  bool relation = s.rfind("= ", 0) == 0 || s.rfind("in ", 0) == 0 || s[0] == '<' || s[0] == '>' ||
                  s.rfind("!=", 0) == 0;
  return name + (relation ? " " : ": ") + s;
}

}  // namespace descent::analysis
