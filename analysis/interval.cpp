// Intervals (analysis/value.h): Interval's own operations (join, meet, the sign atoms), then
// the interval transfer functions, each sound on its own (every concrete result of operands
// inside the inputs lies inside the output). They are the arithmetic all four domains share:
// the Lattice (value.cpp) runs them atom by atom and abstracts the results into what each
// domain can express, so they live apart from it, and a new numeric domain gets a file
// beside this one.
//
// Floats need no outward rounding for + - * /: IEEE rounding is monotone, so the rounded
// result of any operands between the bounds lies between the rounded results at the bounds.
// exp and log come from libm, which is accurate but not promised to be correctly rounded, so
// their bounds are moved one ulp outwards.
#include "analysis/value.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/value_internal.h"

namespace descent::analysis {

using namespace value_internal;

namespace {
constexpr double kTwo63 = 9223372036854775808.0;
using i128 = __int128;

bool fits(i128 v) { return v >= i128(kMin) && v <= i128(kMax); }
double down(double x) { return std::isfinite(x) ? std::nextafter(x, -kInf) : x; }
double up(double x) { return std::isfinite(x) ? std::nextafter(x, kInf) : x; }
bool same_float(double a, double b) {
  return a == b && std::signbit(a) == std::signbit(b);
}
}  // namespace

// ---- Interval ------------------------------------------------------------------------------

Interval Interval::empty(Type t) {
  Interval i;
  i.type = t;
  return i;
}
Interval Interval::full(Type t) {
  if (t == Type::Float) return of_float(-kInf, kInf, true);
  if (t == Type::Bool) return of_bool(true, true);
  return of_int(kMin, kMax);
}
Interval Interval::of_int(int64_t lo, int64_t hi) {
  Interval i;
  i.type = Type::Int;
  i.lo = lo;
  i.hi = hi;
  return i;
}
Interval Interval::of_float(double lo, double hi, bool nan) {
  Interval i;
  i.type = Type::Float;
  i.flo = lo;
  i.fhi = hi;
  i.nan = nan;
  return i;
}
Interval Interval::of_bool(bool can_false, bool can_true) {
  Interval i;
  i.type = Type::Bool;
  i.lo = can_false ? 0 : 1;
  i.hi = can_true ? 1 : 0;
  return i;
}
bool Interval::range_empty() const {
  return type == Type::Float ? !(flo <= fhi) : lo > hi;
}
bool Interval::is_empty() const { return range_empty() && !(type == Type::Float && nan); }
bool Interval::contains(Value v) const {
  if (type == Type::Float) {
    if (std::isnan(v.f)) return nan;
    return !range_empty() && flo <= v.f && v.f <= fhi;
  }
  int64_t x = type == Type::Bool ? (v.b ? 1 : 0) : v.i;
  return lo <= x && x <= hi;
}
bool Interval::is_point() const {
  if (type == Type::Float)
    return (range_empty() && nan) || (!nan && !range_empty() && same_float(flo, fhi));
  return lo == hi;
}
bool Interval::operator==(const Interval& o) const {
  if (type != o.type) return false;
  if (type == Type::Float) {
    if (nan != o.nan || range_empty() != o.range_empty()) return false;
    return range_empty() || (same_float(flo, o.flo) && same_float(fhi, o.fhi));
  }
  if (range_empty() || o.range_empty()) return range_empty() == o.range_empty();
  return lo == o.lo && hi == o.hi;
}

namespace {
double fmin_signed(double a, double b) {
  if (a == b) return std::signbit(a) ? a : b;  // -0.0 below 0.0
  return a < b ? a : b;
}
double fmax_signed(double a, double b) {
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
}  // namespace

Interval join(const Interval& a, const Interval& b) {
  if (a.range_empty() && !(a.type == Type::Float && a.nan)) return b;
  if (b.range_empty() && !(b.type == Type::Float && b.nan)) return a;
  Interval r = a;
  if (a.type == Type::Float) {
    r.nan = a.nan || b.nan;
    if (a.range_empty()) {
      r.flo = b.flo;
      r.fhi = b.fhi;
    } else if (!b.range_empty()) {
      r.flo = fmin_signed(a.flo, b.flo);
      r.fhi = fmax_signed(a.fhi, b.fhi);
    }
    return r;
  }
  r.lo = std::min(a.lo, b.lo);
  r.hi = std::max(a.hi, b.hi);
  return r;
}

Interval meet(const Interval& a, const Interval& b) {
  Interval r = a;
  if (a.type == Type::Float) {
    r.nan = a.nan && b.nan;
    if (a.range_empty() || b.range_empty()) {
      r.flo = 1;
      r.fhi = 0;
    } else {
      r.flo = fmax_signed(a.flo, b.flo);
      r.fhi = fmin_signed(a.fhi, b.fhi);
      if (!(r.flo <= r.fhi)) r.flo = 1, r.fhi = 0;
    }
    return r;
  }
  if (a.range_empty() || b.range_empty()) return Interval::empty(a.type);
  r.lo = std::max(a.lo, b.lo);
  r.hi = std::min(a.hi, b.hi);
  if (r.lo > r.hi) return Interval::empty(a.type);
  return r;
}

Interval sign_interval(Type t, uint8_t atom) {
  if (t == Type::Bool) return Interval::of_bool(atom == kFalse, atom == kTrue);
  if (t == Type::Float) {
    const double tiny = std::numeric_limits<double>::denorm_min();
    switch (atom) {
      case kNeg: return Interval::of_float(-kInf, -tiny);
      case kZero: return Interval::of_float(-0.0, 0.0);
      case kPos: return Interval::of_float(tiny, kInf);
      default: {
        Interval n = Interval::empty(Type::Float);
        n.nan = true;
        return n;
      }
    }
  }
  switch (atom) {
    case kNeg: return Interval::of_int(kMin, -1);
    case kZero: return Interval::of_int(0, 0);
    default: return Interval::of_int(1, kMax);
  }
}

uint8_t signs_of(const Interval& iv) {
  if (iv.type == Type::Bool) {
    uint8_t s = 0;
    if (iv.lo <= 0 && 0 <= iv.hi) s |= kFalse;
    if (iv.lo <= 1 && 1 <= iv.hi) s |= kTrue;
    return s;
  }
  uint8_t s = 0;
  for (uint8_t atom : {kNeg, kZero, kPos})
    if (!meet(iv, sign_interval(iv.type, atom)).range_empty()) s |= atom;
  if (iv.type == Type::Float && iv.nan) s |= kNan;
  return s;
}

// ---- interval transfer functions -----------------------------------------------------------

namespace {

Interval int_from(i128 lo, i128 hi, Effects* fx) {
  if (!fits(lo) || !fits(hi)) {
    if (fx) fx->may_wrap = true;
    return Interval::full(Type::Int);
  }
  return Interval::of_int(int64_t(lo), int64_t(hi));
}

Interval bool_result(bool can_false, bool can_true) { return Interval::of_bool(can_false, can_true); }

bool has_inf(const Interval& a, double which) {
  return !a.range_empty() && (which > 0 ? a.fhi == kInf : a.flo == -kInf);
}
bool has_zero(const Interval& a) { return !a.range_empty() && a.flo <= 0 && 0 <= a.fhi; }

// Bounds from candidate results, nan ones left out (they set r.nan instead).
Interval float_hull(std::initializer_list<double> xs, bool nan) {
  Interval r = Interval::empty(Type::Float);
  r.nan = nan;
  for (double x : xs) {
    if (std::isnan(x)) continue;
    if (r.range_empty()) r.flo = r.fhi = x;
    else {
      r.flo = fmin_signed(r.flo, x);
      r.fhi = fmax_signed(r.fhi, x);
    }
  }
  return r;
}

Interval int_binary(BinaryOp op, const Interval& a, const Interval& b, Effects* fx) {
  if (a.range_empty() || b.range_empty()) {
    return op >= BinaryOp::Eq ? Interval::empty(Type::Bool) : Interval::empty(Type::Int);
  }
  switch (op) {
    case BinaryOp::Add: return int_from(i128(a.lo) + b.lo, i128(a.hi) + b.hi, fx);
    case BinaryOp::Sub: return int_from(i128(a.lo) - b.hi, i128(a.hi) - b.lo, fx);
    case BinaryOp::Mul: {
      i128 c[4] = {i128(a.lo) * b.lo, i128(a.lo) * b.hi, i128(a.hi) * b.lo, i128(a.hi) * b.hi};
      return int_from(*std::min_element(c, c + 4), *std::max_element(c, c + 4), fx);
    }
    case BinaryOp::Div: {
      if (a.lo == a.hi && b.lo == b.hi && b.lo != 0) {  // exact, INT_MIN / -1 included
        if (a.lo == kMin && b.lo == -1 && fx) fx->may_wrap = true;
        return Interval::of_int(int_div(a.lo, b.lo), int_div(a.lo, b.lo));
      }
      // The atoms keep b on one side of 0; [0, 0] alone has no result (the error).
      if (b.lo <= 0 && 0 <= b.hi) {
        if (b.lo == 0 && b.hi == 0) return Interval::empty(Type::Int);
        // Not split by sign (cannot happen through the Lattice): stay sound.
        return Interval::full(Type::Int);
      }
      i128 c[4] = {i128(a.lo) / b.lo, i128(a.lo) / b.hi, i128(a.hi) / b.lo, i128(a.hi) / b.hi};
      for (i128 x : c)
        if (!fits(x)) {  // INT_MIN / -1: wraps to INT_MIN, and the corners no longer bound
          if (fx) fx->may_wrap = true;
          return Interval::full(Type::Int);
        }
      return Interval::of_int(int64_t(*std::min_element(c, c + 4)), int64_t(*std::max_element(c, c + 4)));
    }
    case BinaryOp::Mod: {
      if (b.lo == 0 && b.hi == 0) return Interval::empty(Type::Int);
      if (a.lo == a.hi && b.lo == b.hi) return Interval::of_int(int_mod(a.lo, b.lo), int_mod(a.lo, b.lo));
      // |a % b| < |b| and the result has a's sign (C); INT_MIN % -1 is 0, inside this.
      i128 m = std::max(b.lo < 0 ? -i128(b.lo) : i128(b.lo), b.hi < 0 ? -i128(b.hi) : i128(b.hi));
      i128 bound = m - 1;
      i128 lo = a.lo >= 0 ? 0 : std::max(i128(a.lo), -bound);
      i128 hi = a.hi <= 0 ? 0 : std::min(i128(a.hi), bound);
      return Interval::of_int(int64_t(lo), int64_t(hi));
    }
    case BinaryOp::Lt: return bool_result(a.hi >= b.lo, a.lo < b.hi);
    case BinaryOp::Le: return bool_result(a.hi > b.lo, a.lo <= b.hi);
    case BinaryOp::Gt: return bool_result(a.lo <= b.hi, a.hi > b.lo);
    case BinaryOp::Ge: return bool_result(a.lo < b.hi, a.hi >= b.lo);
    case BinaryOp::Eq:
    case BinaryOp::Ne: {
      bool can_eq = !meet(a, b).range_empty();
      bool can_ne = !(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo);
      return op == BinaryOp::Eq ? bool_result(can_ne, can_eq) : bool_result(can_eq, can_ne);
    }
    default: return Interval::full(op >= BinaryOp::Eq ? Type::Bool : Type::Int);
  }
}

Interval float_binary(BinaryOp op, const Interval& a, const Interval& b) {
  bool nan = a.nan || b.nan;
  bool empty = a.range_empty() || b.range_empty();
  if (op >= BinaryOp::Eq && op <= BinaryOp::Ge) {
    if (empty) {
      // A nan operand: every comparison is false except !=.
      if (!nan) return Interval::empty(Type::Bool);
      return bool_result(op != BinaryOp::Ne, op == BinaryOp::Ne);
    }
    bool t = false, f = nan;
    switch (op) {
      case BinaryOp::Lt: t = a.flo < b.fhi; f |= a.fhi >= b.flo; break;
      case BinaryOp::Le: t = a.flo <= b.fhi; f |= a.fhi > b.flo; break;
      case BinaryOp::Gt: t = a.fhi > b.flo; f |= a.flo <= b.fhi; break;
      case BinaryOp::Ge: t = a.fhi >= b.flo; f |= a.flo < b.fhi; break;
      case BinaryOp::Eq:
      case BinaryOp::Ne: {
        bool can_eq = !meet(a, b).range_empty();
        bool can_ne = nan || !(a.flo == a.fhi && b.flo == b.fhi && a.flo == b.flo);
        return op == BinaryOp::Eq ? bool_result(can_ne, can_eq) : bool_result(can_eq, can_ne);
      }
      default: break;
    }
    return bool_result(f, t);
  }
  if (empty) {
    Interval r = Interval::empty(Type::Float);
    r.nan = nan;
    return r;
  }
  switch (op) {
    // + and - are monotone wherever they are not nan (inf - inf): the corners that are
    // numbers bound the result.
    case BinaryOp::Add:
      nan |= (has_inf(a, 1) && has_inf(b, -1)) || (has_inf(a, -1) && has_inf(b, 1));
      return float_hull({a.flo + b.flo, a.flo + b.fhi, a.fhi + b.flo, a.fhi + b.fhi}, nan);
    case BinaryOp::Sub:
      nan |= (has_inf(a, 1) && has_inf(b, 1)) || (has_inf(a, -1) && has_inf(b, -1));
      return float_hull({a.flo - b.flo, a.flo - b.fhi, a.fhi - b.flo, a.fhi - b.fhi}, nan);
    case BinaryOp::Mul: {
      nan |= (has_zero(a) && (has_inf(b, 1) || has_inf(b, -1))) ||
             (has_zero(b) && (has_inf(a, 1) || has_inf(a, -1)));
      return float_hull({a.flo * b.flo, a.flo * b.fhi, a.fhi * b.flo, a.fhi * b.fhi}, nan);
    }
    case BinaryOp::Div: {
      if (has_zero(b)) {
        // The atoms keep b on one side of 0 or exactly at zero. x / ±0 is ±inf by the signs,
        // 0 / 0 nan: the corners say it.
        if (b.flo != 0 || b.fhi != 0) return Interval::full(Type::Float);
        return float_hull({a.flo / b.flo, a.fhi / b.flo, a.flo / b.fhi, a.fhi / b.fhi}, nan || has_zero(a));
      }
      nan |= (has_inf(a, 1) || has_inf(a, -1)) && (has_inf(b, 1) || has_inf(b, -1));
      return float_hull({a.flo / b.flo, a.flo / b.fhi, a.fhi / b.flo, a.fhi / b.fhi}, nan);
    }
    case BinaryOp::Mod: {
      if (a.flo == a.fhi && b.flo == b.fhi && !nan) {  // one value each: exact
        double r = std::fmod(a.flo, b.flo);
        return std::isnan(r) ? float_hull({}, true) : Interval::of_float(r, r);
      }
      // fmod: |r| < |b| and |r| <= |a|, with a's sign; nan for b = 0 or an infinite a.
      nan |= has_zero(b) || has_inf(a, 1) || has_inf(a, -1);
      double m = std::min(std::max(std::fabs(b.flo), std::fabs(b.fhi)),
                          std::max(std::fabs(a.flo), std::fabs(a.fhi)));
      // -0.0 results (fmod(-3.0, 3.0)) compare equal to 0.0: inside [0, m] as well.
      return Interval::of_float(a.flo >= 0 ? 0.0 : -m, a.fhi <= 0 ? 0.0 : m, nan);
    }
    default: return Interval::full(Type::Float);
  }
}
}  // namespace

namespace value_internal {

Interval binary_interval(BinaryOp op, Type t, const Interval& a, const Interval& b, Effects* fx) {
  if (t == Type::Float) return float_binary(op, a, b);
  return int_binary(op, a, b, fx);  // Int, and Bool == / != on 0..1
}

Interval neg_interval(const Interval& a, Effects* fx) {
  if (a.range_empty() && !(a.type == Type::Float && a.nan)) return a;
  if (a.type == Type::Float) {
    Interval r = a;
    if (!a.range_empty()) {
      r.flo = -a.fhi;
      r.fhi = -a.flo;
    }
    return r;
  }
  if (a.lo == kMin) {  // -INT_MIN wraps to INT_MIN
    if (a.hi == kMin) return a;
    if (fx) fx->may_wrap = true;
    return Interval::full(Type::Int);
  }
  return Interval::of_int(-a.hi, -a.lo);
}

Interval abs_interval(const Interval& a, Effects* fx) {
  if (a.range_empty()) return a;
  if (a.type == Type::Float) {
    Interval r = a;
    if (a.flo >= 0) return a;
    if (a.fhi <= 0) return neg_interval(a, fx);
    r.flo = 0.0;
    r.fhi = std::max(-a.flo, a.fhi);
    return r;
  }
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return neg_interval(a, fx);
  if (a.lo == kMin) {
    if (fx) fx->may_wrap = true;
    return Interval::full(Type::Int);
  }
  return Interval::of_int(0, std::max(-a.lo, a.hi));
}

// Python's min/max: the first argument unless the second is strictly smaller (larger).
Interval minmax_interval(bool is_min, const Interval& a, const Interval& b) {
  if (a.type != Type::Float) {
    if (a.range_empty() || b.range_empty()) return Interval::empty(a.type);
    return is_min ? Interval::of_int(std::min(a.lo, b.lo), std::min(a.hi, b.hi))
                  : Interval::of_int(std::max(a.lo, b.lo), std::max(a.hi, b.hi));
  }
  Interval r = Interval::empty(Type::Float);
  r.nan = a.nan;  // a nan first argument comes back (no number is strictly less than nan)
  if (!a.range_empty() && !b.range_empty()) {
    r.flo = is_min ? fmin_signed(a.flo, b.flo) : fmax_signed(a.flo, b.flo);
    r.fhi = is_min ? fmin_signed(a.fhi, b.fhi) : fmax_signed(a.fhi, b.fhi);
  }
  if (b.nan && !a.range_empty()) {  // a nan second argument: the first comes back
    Interval only_a = a;
    only_a.nan = false;
    r = join(r, only_a);
  }
  return r;
}

Interval math_interval(Builtin fn, const Interval& a) {
  Interval r = Interval::empty(Type::Float);
  r.nan = a.nan;
  if (a.range_empty()) return r;
  switch (fn) {
    case Builtin::Sqrt:
      if (a.flo < 0) r.nan = true;
      if (a.fhi >= 0) r.flo = std::sqrt(std::max(a.flo, 0.0)), r.fhi = std::sqrt(a.fhi);
      if (a.flo <= 0 && 0 <= a.fhi && std::signbit(a.flo)) r.flo = -0.0;
      return r;
    case Builtin::Exp:
      r.flo = std::max(0.0, down(std::exp(a.flo)));
      r.fhi = up(std::exp(a.fhi));
      return r;
    case Builtin::Log:
      if (a.flo < 0) r.nan = true;
      if (a.fhi >= 0) r.flo = down(std::log(std::max(a.flo, 0.0))), r.fhi = up(std::log(a.fhi));
      return r;
    case Builtin::Sin:
    case Builtin::Cos:
      if (a.flo == -kInf || a.fhi == kInf) r.nan = true;
      if (std::isfinite(a.flo) || std::isfinite(a.fhi) || a.flo != a.fhi) r.flo = -1.0, r.fhi = 1.0;
      if (a.flo == a.fhi && !std::isfinite(a.flo)) r.flo = 1, r.fhi = 0;
      return r;
    case Builtin::Floor:
      r.flo = std::floor(a.flo);
      r.fhi = std::floor(a.fhi);
      return r;
    case Builtin::Abs: return abs_interval(a, nullptr);
    default: return Interval::full(Type::Float);
  }
}

// int(f): the valid part truncated; `fx` says whether some or every value is invalid.
Interval to_int_interval(const Interval& a, Effects* fx) {
  bool valid_part = !a.range_empty() && a.fhi >= -kTwo63 && a.flo < kTwo63;
  bool invalid_part = a.nan || (!a.range_empty() && (a.flo < -kTwo63 || a.fhi >= kTwo63));
  if (invalid_part && fx) {
    fx->conversion_may = true;
    if (!valid_part) fx->conversion_must = true;
  }
  if (!valid_part) return Interval::empty(Type::Int);
  double lo = std::max(a.flo, -kTwo63);
  double hi = std::min(a.fhi, std::nextafter(kTwo63, 0.0));
  return Interval::of_int(int64_t(std::trunc(lo)), int64_t(std::trunc(hi)));
}

Interval promote_interval(const Interval& a) {
  if (a.range_empty()) return Interval::empty(Type::Float);
  return Interval::of_float(double(a.lo), double(a.hi));
}
}  // namespace value_internal

}  // namespace descent::analysis
