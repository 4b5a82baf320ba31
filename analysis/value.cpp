// The abstract domains' arithmetic (analysis/value.h). Interval transfer functions first,
// each sound on its own (every concrete result of operands inside the inputs lies inside the
// output); then the Lattice, which runs them atom by atom and abstracts the results into
// what each domain can express.
//
// Floats need no outward rounding for + - * /: IEEE rounding is monotone, so the rounded
// result of any operands between the bounds lies between the rounded results at the bounds.
// exp and log come from libm, which is accurate but not promised to be correctly rounded, so
// their bounds are moved one ulp outwards.
#include "analysis/value.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace descent::analysis {

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTwo63 = 9223372036854775808.0;
constexpr int64_t kWidenStep = int64_t(1) << 62;  // the ints' first widening threshold
using i128 = __int128;

bool fits(i128 v) { return v >= i128(kMin) && v <= i128(kMax); }
double down(double x) { return std::isfinite(x) ? std::nextafter(x, -kInf) : x; }
double up(double x) { return std::isfinite(x) ? std::nextafter(x, kInf) : x; }
bool same_float(double a, double b) {
  return a == b && std::signbit(a) == std::signbit(b);
}
}  // namespace

const char* domain_name(Domain d) {
  switch (d) {
    case Domain::Constants: return "constants";
    case Domain::Signs: return "signs";
    case Domain::Intervals: return "intervals";
    case Domain::Product: return "product";
  }
  return "?";
}

bool parse_domain(const std::string& text, Domain* out) {
  for (Domain d : all_domains())
    if (text == domain_name(d)) {
      *out = d;
      return true;
    }
  return false;
}

const std::vector<Domain>& all_domains() {
  static const std::vector<Domain> all = {Domain::Constants, Domain::Signs, Domain::Intervals,
                                          Domain::Product};
  return all;
}

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

}  // namespace

// ---- Lattice ---------------------------------------------------------------------------------

AbsVal Lattice::bottom(Type t) const {
  AbsVal v;
  v.type = t;
  v.hull = Interval::empty(t);
  v.signs = 0;
  return v;
}

AbsVal Lattice::top(Type t) const {
  if (t != Type::Int && t != Type::Float && t != Type::Bool) return AbsVal{};
  AbsVal v;
  v.type = t;
  v.hull = Interval::full(t);
  v.signs = signs_of(v.hull);
  return v;
}

AbsVal Lattice::constant(Type t, Value x) const {
  Interval iv;
  if (t == Type::Float) {
    iv = std::isnan(x.f) ? Interval::empty(Type::Float) : Interval::of_float(x.f, x.f);
    iv.nan = std::isnan(x.f);
  } else if (t == Type::Bool) {
    iv = Interval::of_bool(!x.b, x.b);
  } else if (t == Type::Int) {
    iv = Interval::of_int(x.i, x.i);
  } else {
    return AbsVal{};
  }
  return from_interval(iv);
}

AbsVal Lattice::from_interval(const Interval& iv) const {
  AbsVal v;
  v.type = iv.type;
  v.hull = iv;
  v.signs = signs_of(iv);
  return normalize(v);
}

AbsVal Lattice::normalize(AbsVal v) const {
  if (v.type == Type::Unknown) return v;
  if (v.type == Type::Bool) {  // every domain keeps a bool exactly: {false}, {true} or both
    v.signs &= signs_of(v.hull);
    v.hull = Interval::of_bool(v.signs & kFalse, v.signs & kTrue);
    return v;
  }
  auto hull_of_signs = [&](uint8_t s) {
    Interval h = Interval::empty(v.type);
    for (uint8_t atom : {kNeg, kZero, kPos, kNan})
      if (s & atom) h = analysis::join(h, sign_interval(v.type, atom));
    return h;
  };
  switch (d_) {
    case Domain::Constants:
      if (v.hull.is_empty()) return bottom(v.type);
      if (!v.hull.is_point()) return top(v.type);
      v.signs = signs_of(v.hull);
      return v;
    case Domain::Signs:
      v.signs &= signs_of(v.hull);
      v.hull = hull_of_signs(v.signs);
      return v;
    case Domain::Intervals:
      v.signs = signs_of(v.hull);
      return v;
    case Domain::Product:
      v.signs &= signs_of(v.hull);
      v.hull = analysis::meet(v.hull, hull_of_signs(v.signs));
      v.signs &= signs_of(v.hull);
      return v;
  }
  return v;
}

std::vector<Interval> Lattice::atoms(const AbsVal& v) const {
  std::vector<Interval> out;
  if (v.type == Type::Unknown) return out;
  for (uint8_t atom : {kNeg, kZero, kPos, kNan}) {
    if (v.type == Type::Bool && atom > kTrue) break;
    if (!(v.signs & atom)) continue;
    Interval x = analysis::meet(v.hull, sign_interval(v.type, atom));
    if (v.type == Type::Float && atom == kNan) {
      x = Interval::empty(Type::Float);
      x.nan = v.hull.nan;
    } else if (v.type == Type::Float) {
      x.nan = false;
    }
    if (!x.is_empty()) out.push_back(x);
  }
  return out;
}

bool Lattice::leq(const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown || a.is_bottom()) return true;
  if (b.is_bottom()) return false;
  if ((a.signs & ~b.signs) != 0) return false;
  return analysis::join(a.hull, b.hull) == b.hull;
}

AbsVal Lattice::join(const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown || a.is_bottom()) return b;
  if (b.type == Type::Unknown || b.is_bottom()) return a;
  AbsVal r = a;
  r.hull = analysis::join(a.hull, b.hull);
  r.signs = a.signs | b.signs;
  return normalize(r);
}

AbsVal Lattice::meet(const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown) return b;
  if (b.type == Type::Unknown) return a;
  AbsVal r = a;
  r.hull = analysis::meet(a.hull, b.hull);
  r.signs = a.signs & b.signs;
  if (r.hull.is_empty()) return bottom(a.type);
  return normalize(r);
}

AbsVal Lattice::widen(const AbsVal& old, const AbsVal& next) const {
  if (old.type == Type::Unknown || old.is_bottom()) return next;
  if (next.type == Type::Unknown || next.is_bottom()) return old;
  if (d_ == Domain::Constants || d_ == Domain::Signs || old.type == Type::Bool) return join(old, next);
  // Intervals: a bound that moved jumps to the end of the type, so a loop's growing counter
  // reaches a fixpoint in one step instead of 2^63.
  AbsVal r = join(old, next);
  if (old.type == Type::Float) {
    if (!old.hull.range_empty() && !next.hull.range_empty()) {
      if (next.hull.flo < old.hull.flo) r.hull.flo = -kInf;
      if (next.hull.fhi > old.hull.fhi) r.hull.fhi = kInf;
    }
  } else if (!old.hull.range_empty() && !next.hull.range_empty()) {
    // Ints widen in two steps, to +-2^62 and then to the end of the type: a counter that
    // stops below 2^62 (`n += 1` until `n >= 5`) keeps a bound that `n + 1` cannot wrap
    // past, so the loop test still narrows it; jumping straight to INT_MAX would make the
    // next `+ 1` wrap to the whole type, which no narrowing can undo.
    if (next.hull.lo < old.hull.lo) r.hull.lo = old.hull.lo > -kWidenStep && next.hull.lo >= -kWidenStep ? -kWidenStep : kMin;
    if (next.hull.hi > old.hull.hi) r.hull.hi = old.hull.hi < kWidenStep && next.hull.hi <= kWidenStep ? kWidenStep : kMax;
  }
  r.signs = old.signs | next.signs | (d_ == Domain::Intervals ? signs_of(r.hull) : 0);
  return normalize(r);
}

AbsVal Lattice::narrow(const AbsVal& old, const AbsVal& next) const {
  if (old.type == Type::Unknown || old.is_bottom()) return old;
  if (next.type == Type::Unknown) return old;
  if (next.is_bottom()) return next;
  if (d_ == Domain::Constants || d_ == Domain::Signs || old.type == Type::Bool) return meet(old, next);
  // Only the bounds widening threw to infinity come back: that keeps the sequence finite.
  AbsVal r = old;
  if (old.type == Type::Float) {
    if (old.hull.flo == -kInf) r.hull.flo = next.hull.flo;
    if (old.hull.fhi == kInf) r.hull.fhi = next.hull.fhi;
    r.hull.nan = old.hull.nan && next.hull.nan;
    if (next.hull.range_empty()) r.hull.flo = 1, r.hull.fhi = 0;
  } else {
    if (old.hull.lo == kMin || old.hull.lo == -kWidenStep) r.hull.lo = next.hull.lo;
    if (old.hull.hi == kMax || old.hull.hi == kWidenStep) r.hull.hi = next.hull.hi;
    if (next.hull.range_empty()) r.hull = Interval::empty(old.type);
  }
  r.signs = old.signs & next.signs;
  if (r.hull.is_empty()) return bottom(old.type);
  return normalize(r);
}

// Runs an interval operation on every pair of atoms and abstracts the union.
AbsVal Lattice::binary(BinaryOp op, Type t, const AbsVal& a, const AbsVal& b, Effects* fx) const {
  Type result = (op >= BinaryOp::Eq) ? Type::Bool : t;
  if (t == Type::Unknown || a.type == Type::Unknown || b.type == Type::Unknown) return top(result);
  if (a.is_bottom() || b.is_bottom()) return bottom(result);
  std::vector<Interval> xs = atoms(a), ys = atoms(b);
  if (t == Type::Int && (op == BinaryOp::Div || op == BinaryOp::Mod) && fx) {
    bool zero = false, nonzero = false;
    for (const auto& y : ys) (y.lo == 0 && y.hi == 0 ? zero : nonzero) = true;
    if (zero) fx->div_zero_may = true;
    if (zero && !nonzero) fx->div_zero_must = true;
  }
  AbsVal r = bottom(result);
  for (const auto& x : xs)
    for (const auto& y : ys) {
      Interval z = binary_interval(op, t, x, y, fx);
      if (!z.is_empty()) r = join(r, from_interval(z));
    }
  return r;
}

AbsVal Lattice::unary(UnaryOp op, const AbsVal& a) const {
  if (a.type == Type::Unknown) return a;
  if (a.is_bottom()) return a;
  if (op == UnaryOp::Not) return from_interval(Interval::of_bool(a.signs & kTrue, a.signs & kFalse));
  AbsVal r = bottom(a.type);
  for (const auto& x : atoms(a)) r = join(r, from_interval(neg_interval(x, nullptr)));
  return r;
}

AbsVal Lattice::promote(const AbsVal& a) const {
  if (a.type != Type::Int) return a;
  if (a.is_bottom()) return bottom(Type::Float);
  AbsVal r = bottom(Type::Float);
  for (const auto& x : atoms(a)) r = join(r, from_interval(promote_interval(x)));
  return r;
}

AbsVal Lattice::builtin(Builtin fn, Type result, const std::vector<AbsVal>& args, Effects* fx) const {
  for (const auto& a : args)
    if (a.type != Type::Unknown && a.is_bottom()) return bottom(result);
  auto each = [&](const AbsVal& a, auto&& f) {
    AbsVal r = bottom(result);
    for (const auto& x : atoms(a)) {
      Interval z = f(x);
      if (!z.is_empty()) r = join(r, from_interval(z));
    }
    return r;
  };
  switch (fn) {
    case Builtin::ToFloat:
      return args.empty() ? top(result) : args[0].type == Type::Int ? promote(args[0]) : args[0];
    case Builtin::ToInt:
      if (args.empty() || args[0].type == Type::Int) return args.empty() ? top(result) : args[0];
    {
      // Invalid for some value if any atom has invalid values; for every value only if no
      // atom has a valid one.
      bool may = false, valid = false;
      AbsVal r = each(args[0], [&](const Interval& x) {
        Effects one;
        Interval z = to_int_interval(x, &one);
        may |= one.conversion_may;
        valid |= !one.conversion_must;
        return z;
      });
      if (fx && may) {
        fx->conversion_may = true;
        fx->conversion_must |= !valid;
      }
      return r;
    }
    case Builtin::Abs:
      return each(args[0], [&](const Interval& x) { return abs_interval(x, fx); });
    case Builtin::Min:
    case Builtin::Max: {
      if (args.size() != 2) return top(result);
      AbsVal r = bottom(result);
      for (const auto& x : atoms(args[0]))
        for (const auto& y : atoms(args[1])) {
          Interval z = minmax_interval(fn == Builtin::Min, x, y);
          if (!z.is_empty()) r = join(r, from_interval(z));
        }
      return r;
    }
    case Builtin::Sqrt:
    case Builtin::Exp:
    case Builtin::Log:
    case Builtin::Sin:
    case Builtin::Cos:
    case Builtin::Floor:
      if (args.empty() || args[0].type != Type::Float) return top(result);
      return each(args[0], [&](const Interval& x) { return math_interval(fn, x); });
    default:
      return top(result);
  }
}

AbsVal Lattice::refine(BinaryOp op, Type t, const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown || b.type == Type::Unknown || a.is_bottom()) return a;
  if (b.is_bottom()) return bottom(a.type);
  // Each atom of a keeps the values that can satisfy `x op y` for some y in b.
  AbsVal r = bottom(a.type);
  for (const auto& x : atoms(a)) {
    Interval k = x;
    if (t == Type::Float) {
      bool nan_ok = op == BinaryOp::Ne;  // nan != y is true; every other comparison false
      Interval nums = x;
      nums.nan = false;
      if (x.range_empty()) {
        if (!nan_ok) continue;
        k = x;
      } else if (b.hull.range_empty()) {
        if (!nan_ok) continue;
      } else {
        switch (op) {
          case BinaryOp::Lt:
          case BinaryOp::Le: k = analysis::meet(nums, Interval::of_float(-kInf, b.hull.fhi)); break;
          case BinaryOp::Gt:
          case BinaryOp::Ge: k = analysis::meet(nums, Interval::of_float(b.hull.flo, kInf)); break;
          case BinaryOp::Eq: k = analysis::meet(nums, Interval::of_float(b.hull.flo, b.hull.fhi)); break;
          default: break;
        }
      }
    } else {
      const Interval& y = b.hull;
      switch (op) {
        case BinaryOp::Lt:
          k = y.hi == kMin ? Interval::empty(t) : analysis::meet(x, Interval::of_int(kMin, y.hi - 1));
          break;
        case BinaryOp::Le: k = analysis::meet(x, Interval::of_int(kMin, y.hi)); break;
        case BinaryOp::Gt:
          k = y.lo == kMax ? Interval::empty(t) : analysis::meet(x, Interval::of_int(y.lo + 1, kMax));
          break;
        case BinaryOp::Ge: k = analysis::meet(x, Interval::of_int(y.lo, kMax)); break;
        case BinaryOp::Eq: k = analysis::meet(x, y); break;
        case BinaryOp::Ne:
          if (y.lo == y.hi && !x.range_empty()) {
            if (x.lo == x.hi && x.lo == y.lo) k = Interval::empty(t);
            else if (x.lo == y.lo) k.lo = x.lo + 1;
            else if (x.hi == y.lo) k.hi = x.hi - 1;
          }
          break;
        default: break;
      }
      k.type = x.type;
    }
    if (!k.is_empty()) r = join(r, from_interval(k));
  }
  return meet(a, r);
}

bool Lattice::contains(const AbsVal& v, Value x) const {
  if (v.type == Type::Unknown) return true;
  if (v.is_bottom()) return false;
  if (!v.hull.contains(x)) return false;
  uint8_t atom;
  if (v.type == Type::Bool) atom = x.b ? kTrue : kFalse;
  else if (v.type == Type::Float) atom = std::isnan(x.f) ? kNan : x.f < 0 ? kNeg : x.f > 0 ? kPos : kZero;
  else atom = x.i < 0 ? kNeg : x.i > 0 ? kPos : kZero;
  return (v.signs & atom) != 0;
}

// ---- text ------------------------------------------------------------------------------------

std::string int_bound_text(int64_t v) {
  if (v == kMin) return "-inf";
  if (v == kMax) return "+inf";
  return std::to_string(v);
}

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
  } else if (v.hull.lo == kMin && v.hull.hi == kMax) {
    range = "any";
  } else if (v.hull.hi == kMax) {
    range = v.hull.lo == 1 ? "> 0" : ">= " + int_bound_text(v.hull.lo);
  } else if (v.hull.lo == kMin) {
    range = v.hull.hi == -1 ? "< 0" : "<= " + int_bound_text(v.hull.hi);
  } else {
    range = "in [" + int_bound_text(v.hull.lo) + ", " + int_bound_text(v.hull.hi) + "]";
  }
  // The product says what the signs add: a zero the hull spans but the value avoids.
  if (d_ == Domain::Product && !(v.signs & kZero) && (signs_of(v.hull) & kZero)) range += ", != 0";
  return range + or_nan;
}

std::string Lattice::describe(const std::string& name, const AbsVal& v) const {
  std::string s = show(v);
  bool relation = s.rfind("= ", 0) == 0 || s.rfind("in ", 0) == 0 || s[0] == '<' || s[0] == '>' ||
                  s.rfind("!=", 0) == 0;
  return name + (relation ? " " : ": ") + s;
}

}  // namespace descent::analysis
