// The abstract domains' lattice (analysis/value.h): the Lattice runs the interval transfer
// functions (interval.cpp) atom by atom and abstracts the results into what each domain can
// express; join, meet, widening and narrowing; and normalize, which keeps each domain's value
// to what it can say (for the product: the hull and the signs refining each other).
// Printing values is value_print.cpp.
#include "analysis/value.h"

#include <cmath>

#include "analysis/value_internal.h"

namespace descent::analysis {

using namespace value_internal;

namespace {
constexpr int64_t kWidenStep = int64_t(1) << 62;  // the ints' first widening threshold
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

}  // namespace descent::analysis
