// The abstract domains' lattice (analysis/value.h): the Lattice runs the interval transfer
// functions (interval.cpp) atom by atom and abstracts the results into what each domain can
// express; join, meet, widening and narrowing; and normalize, which keeps each domain's value
// to what it can say (for the product: the hull and the signs refining each other).
// Printing values is value_print.cpp.
#include "analysis/value.h"

#include <algorithm>
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
    case Domain::Congruences: return "congruences";
    case Domain::Sets: return "sets";
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
                                          Domain::Congruences, Domain::Sets, Domain::Product};
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
  if (v.type != Type::Int) v.mod = 1, v.rem = 0, v.n_set = 0;
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
    case Domain::Congruences:
    case Domain::Sets:
      if (v.type != Type::Int) return normalize_as(Domain::Intervals, v);
      if (v.hull.is_empty()) return bottom(v.type);
      // Alone, each keeps a value's own words (a residue, a list) or one value; no bounds.
      if (!v.hull.is_point() && !(d_ == Domain::Sets && v.n_set)) v.hull = Interval::full(Type::Int);
      v.signs = signs_of(v.hull);
      if (!value_internal::reduce_int(v, d_)) return bottom(v.type);
      if (d_ == Domain::Congruences && !v.hull.is_point()) v.hull = Interval::full(Type::Int);
      v.signs = signs_of(v.hull);
      return v;
    case Domain::Product:
      v.signs &= signs_of(v.hull);
      v.hull = analysis::meet(v.hull, hull_of_signs(v.signs));
      v.signs &= signs_of(v.hull);
      if (v.type == Type::Int) {
        if (!value_internal::reduce_int(v, d_)) return bottom(v.type);
        v.signs &= signs_of(v.hull);
        if (v.signs == 0) return bottom(v.type);
      }
      return v;
  }
  return v;
}

// The same representation (both normalised): cheaper than leq both ways.
bool Lattice::same(const AbsVal& a, const AbsVal& b) {
  if (a.type != b.type || a.signs != b.signs || !(a.hull == b.hull) || a.mod != b.mod || a.rem != b.rem ||
      a.n_set != b.n_set)
    return false;
  return std::equal(a.set, a.set + a.n_set, b.set);
}

AbsVal Lattice::normalize_as(Domain d, AbsVal v) const { return Lattice(d).normalize(v); }

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
  if (same(a, b)) return true;  // as in join: most variables of a state did not change
  if ((a.signs & ~b.signs) != 0) return false;
  if (!(analysis::join(a.hull, b.hull) == b.hull)) return false;
  return a.type != Type::Int || value_internal::leq_extra(a, b);
}

AbsVal Lattice::join(const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown || a.is_bottom()) return b;
  if (b.type == Type::Unknown || b.is_bottom()) return a;
  if (same(a, b)) return a;  // the common case in a state: most variables did not change
  AbsVal r = a;
  r.hull = analysis::join(a.hull, b.hull);
  r.signs = a.signs | b.signs;
  if (r.type == Type::Int) value_internal::join_extra(r, a, b, d_);
  return normalize(r);
}

AbsVal Lattice::meet(const AbsVal& a, const AbsVal& b) const {
  if (a.type == Type::Unknown) return b;
  if (b.type == Type::Unknown) return a;
  if (same(a, b)) return a;  // x meet x = x (both normalised): narrowing meets mostly equal states
  AbsVal r = a;
  r.hull = analysis::meet(a.hull, b.hull);
  r.signs = a.signs & b.signs;
  if (r.hull.is_empty()) return bottom(a.type);
  if (r.type == Type::Int && !value_internal::meet_extra(r, a, b, d_)) return bottom(a.type);
  return normalize(r);
}

AbsVal Lattice::widen(const AbsVal& old, const AbsVal& next, bool thresholds) const {
  if (old.type == Type::Unknown || old.is_bottom()) return next;
  if (next.type == Type::Unknown || next.is_bottom()) return old;
  if (d_ == Domain::Constants || d_ == Domain::Signs || old.type == Type::Bool) return join(old, next);
  // Congruences and sets alone have no infinite ascending chain: a modulus only shrinks to
  // one of its divisors, a set grows to kMaxSet values and then to all.
  if ((d_ == Domain::Congruences || d_ == Domain::Sets) && old.type == Type::Int) return join(old, next);
  // Intervals: a bound that moved jumps to the end of the type, so a loop's growing counter
  // reaches a fixpoint in one step instead of 2^63.
  AbsVal r = join(old, next);
  if (old.type == Type::Float) {
    if (!old.hull.range_empty() && !next.hull.range_empty()) {
      if (next.hull.flo < old.hull.flo) r.hull.flo = -kInf;
      if (next.hull.fhi > old.hull.fhi) r.hull.fhi = kInf;
    }
  } else if (!old.hull.range_empty() && !next.hull.range_empty()) {
    // Ints stop first at the program's own constants (thresholds: `while k < 100` stops k at
    // 100, not at 2^62), then in two steps, to +-2^62 and then to the end of the type: a
    // counter that stops below 2^62 (`n += 1` until `n >= 5`) keeps a bound that `n + 1`
    // cannot wrap past, so the loop test still narrows it; jumping straight to INT_MAX would
    // make the next `+ 1` wrap to the whole type, which no narrowing can undo.
    const auto tb = thresholds_.begin(), te = thresholds ? thresholds_.end() : tb;
    if (next.hull.lo < old.hull.lo) {
      auto t = std::upper_bound(tb, te, next.hull.lo);
      if (t != tb && *(t - 1) > -kWidenStep) r.hull.lo = *(t - 1);
      else r.hull.lo = old.hull.lo > -kWidenStep && next.hull.lo >= -kWidenStep ? -kWidenStep : kMin;
    }
    if (next.hull.hi > old.hull.hi) {
      auto t = std::lower_bound(tb, te, next.hull.hi);
      if (t != te && *t < kWidenStep) r.hull.hi = *t;
      else r.hull.hi = old.hull.hi < kWidenStep && next.hull.hi <= kWidenStep ? kWidenStep : kMax;
    }
  }
  r.signs = old.signs | next.signs | (d_ == Domain::Intervals ? signs_of(r.hull) : 0);
  return normalize(r);
}

// Narrowing runs a stable loop once more and keeps what both runs allow: each of the two is
// true of every execution, so their meet is too. The solver bounds the passes, so no
// narrowing operator is needed for termination: it is the meet in every domain.
AbsVal Lattice::narrow(const AbsVal& old, const AbsVal& next) const {
  if (old.type == Type::Unknown || old.is_bottom()) return old;
  if (next.type == Type::Unknown) return old;
  if (next.is_bottom()) return next;
  return meet(old, next);
}

void Lattice::set_thresholds(std::vector<int64_t> t) {
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  thresholds_ = std::move(t);
}

bool Lattice::is_threshold(int64_t v) const {
  return std::binary_search(thresholds_.begin(), thresholds_.end(), v);
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
  if (t == Type::Int && !r.is_bottom() && (keeps_congruence(d_) || keeps_set(d_))) {
    binary_extra(op, a, b, r, d_);
    if (r.hull.is_empty()) return bottom(result);
    r = normalize(r);
  }
  return r;
}

AbsVal Lattice::unary(UnaryOp op, const AbsVal& a) const {
  if (a.type == Type::Unknown) return a;
  if (a.is_bottom()) return a;
  if (op == UnaryOp::Not) return from_interval(Interval::of_bool(a.signs & kTrue, a.signs & kFalse));
  AbsVal r = bottom(a.type);
  for (const auto& x : atoms(a)) r = join(r, from_interval(neg_interval(x, nullptr)));
  if (a.type == Type::Int && !r.is_bottom()) {
    neg_extra(a, r, d_);
    r = normalize(r);
  }
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
    case Builtin::Abs: {
      AbsVal r = each(args[0], [&](const Interval& x) { return abs_interval(x, fx); });
      if (result == Type::Int && !r.is_bottom()) builtin_extra(fn, args, r, d_), r = normalize(r);
      return r;
    }
    case Builtin::Min:
    case Builtin::Max: {
      if (args.size() != 2) return top(result);
      AbsVal r = bottom(result);
      for (const auto& x : atoms(args[0]))
        for (const auto& y : atoms(args[1])) {
          Interval z = minmax_interval(fn == Builtin::Min, x, y);
          if (!z.is_empty()) r = join(r, from_interval(z));
        }
      if (result == Type::Int && !r.is_bottom()) builtin_extra(fn, args, r, d_), r = normalize(r);
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
  if (a.type == Type::Int && (keeps_congruence(d_) || keeps_set(d_))) {
    if (op == BinaryOp::Eq) return meet(a, b);  // exactly the values both allow
    AbsVal m = meet(a, r);
    if (m.is_bottom()) return m;
    refine_extra(op, a, b, m, d_);
    if (m.hull.is_empty()) return bottom(a.type);
    return normalize(m);
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
  if (v.type == Type::Int && !value_internal::contains_extra(v, x.i)) return false;
  return (v.signs & atom) != 0;
}

}  // namespace descent::analysis
