// Congruences and small sets (analysis/value.h), the two int domains Frama-C's Eva adds to
// intervals. A congruence says every value is rem modulo mod (`i * 20` is 0 mod 20 whatever
// i is); a small set lists the values when there are at most kMaxSet of them (a clamp gives
// {0, x, 100}; a flag {0, 1}). Each alone is a domain (`--domain congruences`, `sets`); in
// the product they refine the interval and each other: [0, 100] that is 0 mod 20 ends at 0
// and 100, and a set's hull is its interval.
//
// Wrap-around breaks congruences: a sum that wraps loses a multiple of 2^64, and 2^64 is not
// a multiple of 20. So an operation that may wrap keeps only the power-of-two part of the
// modulus (2^64 is a multiple of every power of two up to it).
#include <algorithm>
#include <numeric>

#include "analysis/value_internal.h"

namespace descent::analysis::value_internal {

namespace {
using i128 = __int128;
using u128 = unsigned __int128;

bool fits(i128 v) { return v >= i128(kMin) && v <= i128(kMax); }

// x mod m in [0, m), for any x (m >= 1).
uint64_t modulo(i128 x, uint64_t m) {
  i128 r = x % i128(m);
  return uint64_t(r < 0 ? r + i128(m) : r);
}

uint64_t gcd(uint64_t a, uint64_t b) { return std::gcd(a, b); }
uint64_t abs_diff(int64_t a, int64_t b) { return a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a); }

// The largest power of two dividing m (m >= 1): what a congruence keeps across a wrap.
uint64_t two_part(uint64_t m) { return m & (~m + 1); }

// A congruence as the arithmetic sees it: (0, c) for the one value c, else (mod, rem).
struct Cong {
  uint64_t m;
  i128 r;
};
Cong cong_of(const AbsVal& v) {
  if (v.hull.is_point()) return {0, v.hull.lo};
  return {v.mod, v.rem};
}
void set_cong(AbsVal& v, uint64_t m, i128 r) {
  if (m == 0) {  // one value: the hull says it (normalize keeps it)
    v.mod = 1;
    v.rem = 0;
    return;
  }
  v.mod = m;
  v.rem = int64_t(modulo(r, m));
}

int64_t wrap(i128 v) { return int64_t(uint64_t(u128(v))); }

// One int operation on concrete values, as the engines run it; false when it fails.
bool apply(BinaryOp op, int64_t x, int64_t y, int64_t* out) {
  switch (op) {
    case BinaryOp::Add: *out = wrap(i128(x) + y); return true;
    case BinaryOp::Sub: *out = wrap(i128(x) - y); return true;
    case BinaryOp::Mul: *out = wrap(i128(x) * y); return true;
    case BinaryOp::Div:
      if (y == 0) return false;
      *out = (x == kMin && y == -1) ? kMin : x / y;
      return true;
    case BinaryOp::Mod:
      if (y == 0) return false;
      *out = (y == -1) ? 0 : x % y;
      return true;
    case BinaryOp::Lt: *out = x < y; return true;
    case BinaryOp::Le: *out = x <= y; return true;
    case BinaryOp::Gt: *out = x > y; return true;
    case BinaryOp::Ge: *out = x >= y; return true;
    case BinaryOp::Eq: *out = x == y; return true;
    case BinaryOp::Ne: *out = x != y; return true;
    default: return false;
  }
}

void put_set(AbsVal& v, std::vector<int64_t> xs) {
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  if (xs.empty() || xs.size() > size_t(kMaxSet)) {
    v.n_set = 0;
    return;
  }
  v.n_set = uint8_t(xs.size());
  std::copy(xs.begin(), xs.end(), v.set);
}

std::vector<int64_t> set_of(const AbsVal& v) {
  if (v.hull.is_point()) return {v.hull.lo};
  return std::vector<int64_t>(v.set, v.set + v.n_set);
}

// The congruence of (m1, r1) op (m2, r2) when the exact (unwrapped) result fits in int64.
Cong cong_arith(BinaryOp op, Cong a, Cong b) {
  switch (op) {
    case BinaryOp::Add: return {gcd(a.m, b.m), a.r + b.r};
    case BinaryOp::Sub: return {gcd(a.m, b.m), a.r - b.r};
    case BinaryOp::Mul: {
      // (m1 k + r1)(m2 l + r2) = m1 m2 kl + m1 r2 k + m2 r1 l + r1 r2
      u128 t1 = u128(a.m) * b.m;
      u128 t2 = u128(a.m) * u128(b.r < 0 ? -b.r : b.r);
      u128 t3 = u128(b.m) * u128(a.r < 0 ? -a.r : a.r);
      const u128 limit = u128(1) << 63;
      if (t1 > limit || t2 > limit || t3 > limit) return {1, 0};
      uint64_t g = gcd(gcd(uint64_t(t1), uint64_t(t2)), uint64_t(t3));
      i128 prod = a.r * b.r;  // |r| < 2^63 each: fits
      if (g == 0) return {0, prod};
      return {g, i128(modulo(prod, g))};
    }
    case BinaryOp::Mod: {
      // x % c is x minus a multiple of c (truncating or not): x % c = x (mod |c|).
      if (b.m != 0 || b.r == 0) return {1, 0};
      uint64_t c = uint64_t(b.r < 0 ? -b.r : b.r);
      uint64_t g = a.m == 0 ? c : gcd(a.m, c);
      if (a.m == 0) return {1, 0};  // a constant: the sets compute it
      return {g, a.r};
    }
    case BinaryOp::Div: {
      // Exact division: x = m k + r with c dividing m and r gives x / c = (m / c) k + r / c.
      if (b.m != 0 || b.r == 0 || a.m == 0) return {1, 0};
      i128 c = b.r < 0 ? -b.r : b.r;
      if (i128(a.m) % c != 0 || a.r % c != 0) return {1, 0};
      uint64_t m = uint64_t(i128(a.m) / c);
      i128 r = a.r / c;
      if (b.r < 0) r = -r;
      return {m, r};
    }
    default: return {1, 0};
  }
}

// Whether x = r (mod m) (m 0: x == r).
bool in_cong(int64_t x, uint64_t m, int64_t r) {
  if (m == 0) return x == r;
  return modulo(i128(x) - r, m) == 0;
}

}  // namespace

bool keeps_congruence(Domain d) { return d == Domain::Congruences || d == Domain::Product; }
bool keeps_set(Domain d) { return d == Domain::Sets || d == Domain::Product; }

// Each of the int value's parts refines the others, until nothing changes (twice is enough:
// the set fixes the hull and the congruence, which then only filter the set again).
bool reduce_int(AbsVal& v, Domain d) {
  const bool cong = keeps_congruence(d), sets = keeps_set(d);
  if (!cong) v.mod = 1, v.rem = 0;
  if (!sets) v.n_set = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (v.hull.range_empty()) return false;
    if (v.n_set) {
      std::vector<int64_t> keep;
      for (int k = 0; k < v.n_set; ++k) {
        int64_t x = v.set[k];
        uint8_t atom = x < 0 ? kNeg : x > 0 ? kPos : kZero;
        if (x >= v.hull.lo && x <= v.hull.hi && (v.signs & atom) && in_cong(x, v.mod, v.rem)) keep.push_back(x);
      }
      if (keep.empty()) return false;
      put_set(v, keep);
      v.hull.lo = v.set[0];
      v.hull.hi = v.set[v.n_set - 1];
      if (cong) {
        uint64_t g = 0;
        for (int k = 1; k < v.n_set; ++k) g = gcd(g, abs_diff(v.set[k], v.set[0]));
        if (g > 1) set_cong(v, g, v.set[0]);
      }
    }
    if (v.mod >= 2) {  // the hull's ends move in to the nearest values of the congruence
      i128 lo = i128(v.hull.lo) + modulo(i128(v.rem) - v.hull.lo, v.mod);
      i128 hi = i128(v.hull.hi) - modulo(i128(v.hull.hi) - v.rem, v.mod);
      if (lo > hi) return false;
      v.hull.lo = int64_t(lo);
      v.hull.hi = int64_t(hi);
    }
    if (v.hull.is_point()) {
      v.mod = 1, v.rem = 0;
      if (sets) v.n_set = 1, v.set[0] = v.hull.lo;
    } else if (sets && !v.n_set && u128(i128(v.hull.hi) - v.hull.lo) < u128(kMaxSet) * (v.mod >= 2 ? v.mod : 1)) {
      // Few values fit between the ends: list them (the signs and congruence filter them).
      std::vector<int64_t> xs;
      for (i128 x = v.hull.lo; x <= v.hull.hi; x += (v.mod >= 2 ? v.mod : 1)) {
        uint8_t atom = x < 0 ? kNeg : x > 0 ? kPos : kZero;
        if (v.signs & atom) xs.push_back(int64_t(x));
      }
      if (xs.empty()) return false;
      put_set(v, xs);
    }
  }
  return true;
}

void join_extra(AbsVal& r, const AbsVal& a, const AbsVal& b, Domain d) {
  if (keeps_congruence(d)) {
    Cong x = cong_of(a), y = cong_of(b);
    uint64_t diff = x.r == y.r ? 0 : abs_diff(int64_t(x.r), int64_t(y.r));
    uint64_t g = gcd(gcd(x.m, y.m), diff);
    if (g == 0) r.mod = 1, r.rem = 0;  // the same one value: the hull says it
    else set_cong(r, g, x.r);
  }
  if (keeps_set(d)) {
    r.n_set = 0;
    auto xs = set_of(a), ys = set_of(b);
    if (!xs.empty() && !ys.empty()) {
      xs.insert(xs.end(), ys.begin(), ys.end());
      put_set(r, xs);
    }
  }
}

// False when the two cannot share a value.
bool meet_extra(AbsVal& r, const AbsVal& a, const AbsVal& b, Domain d) {
  if (keeps_congruence(d)) {
    Cong x = cong_of(a), y = cong_of(b);
    if (x.m == 0 || y.m == 0) {
      Cong one = x.m == 0 ? x : y, other = x.m == 0 ? y : x;
      if (!(other.m == 0 ? one.r == other.r : in_cong(int64_t(one.r), other.m, int64_t(other.r)))) return false;
      r.mod = 1, r.rem = 0;  // the hull's meet is that one value
    } else {
      uint64_t g = gcd(x.m, y.m);
      if (modulo(x.r - y.r, g) != 0) return false;
      u128 l = u128(x.m / g) * y.m;
      if (l > (u128(1) << 62)) {
        set_cong(r, std::max(x.m, y.m), x.m >= y.m ? x.r : y.r);  // a sound half of the meet
      } else {
        // x.r + x.m t = y.r (mod y.m): step through t (y.m / g values at most; kept small)
        uint64_t steps = y.m / g;
        if (steps > 4096) {
          set_cong(r, std::max(x.m, y.m), x.m >= y.m ? x.r : y.r);
        } else {
          i128 v = x.r;
          for (uint64_t t = 0; t < steps && !in_cong(int64_t(modulo(v, uint64_t(l))), y.m, int64_t(y.r)); ++t) v += x.m;
          set_cong(r, uint64_t(l), v);
        }
      }
    }
  }
  if (keeps_set(d)) {
    auto xs = set_of(a), ys = set_of(b);
    if (!xs.empty() && !ys.empty()) {
      std::vector<int64_t> both;
      std::set_intersection(xs.begin(), xs.end(), ys.begin(), ys.end(), std::back_inserter(both));
      if (both.empty()) return false;
      put_set(r, both);
    } else {
      put_set(r, xs.empty() ? ys : xs);
    }
  }
  return true;
}

bool leq_extra(const AbsVal& a, const AbsVal& b) {
  if (b.mod >= 2) {
    Cong x = cong_of(a);
    if (x.m % b.mod != 0 || !in_cong(int64_t(modulo(x.r, b.mod)), b.mod, b.rem)) return false;
  }
  if (b.n_set && !b.hull.is_point()) {
    auto xs = set_of(a);
    if (xs.empty()) return false;
    for (int64_t x : xs)
      if (!std::binary_search(b.set, b.set + b.n_set, x)) return false;
  }
  return true;
}

bool contains_extra(const AbsVal& v, int64_t x) {
  if (v.mod >= 2 && !in_cong(x, v.mod, v.rem)) return false;
  if (v.n_set && !std::binary_search(v.set, v.set + v.n_set, x)) return false;
  return true;
}

// What the congruences and sets know of `a op b` (ints), to refine the interval result r.
void binary_extra(BinaryOp op, const AbsVal& a, const AbsVal& b, AbsVal& r, Domain d) {
  if (keeps_set(d)) {
    auto xs = set_of(a), ys = set_of(b);
    if (!xs.empty() && !ys.empty()) {
      std::vector<int64_t> out;
      for (int64_t x : xs)
        for (int64_t y : ys) {
          int64_t z;
          if (apply(op, x, y, &z)) out.push_back(z);
        }
      if (r.type == Type::Bool) {
        bool f = std::count(out.begin(), out.end(), 0) > 0, t = std::count(out.begin(), out.end(), 1) > 0;
        r.hull = meet(r.hull, Interval::of_bool(f, t));
        r.signs &= uint8_t((f ? kFalse : 0) | (t ? kTrue : 0));
        return;
      }
      if (out.empty()) return;
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      r.hull = meet(r.hull, Interval::of_int(out.front(), out.back()));
      AbsVal s = r;
      put_set(s, out);
      if (s.n_set) r.n_set = s.n_set, std::copy(s.set, s.set + s.n_set, r.set);
    }
  }
  if (keeps_congruence(d) && r.type == Type::Int) {
    Cong c = cong_arith(op, cong_of(a), cong_of(b));
    if (c.m == 1) return;
    bool may_wrap = false;
    if (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul) {
      for (i128 x : {i128(a.hull.lo), i128(a.hull.hi)})
        for (i128 y : {i128(b.hull.lo), i128(b.hull.hi)}) {
          i128 z = op == BinaryOp::Add ? x + y : op == BinaryOp::Sub ? x - y : x * y;
          if (!fits(z)) may_wrap = true;
        }
    }
    if (op == BinaryOp::Div && a.hull.lo == kMin) may_wrap = true;  // INT_MIN / -1
    if (c.m == 0) {
      if (may_wrap) return;
      r.hull = meet(r.hull, Interval::of_int(int64_t(c.r), int64_t(c.r)));
      return;
    }
    uint64_t m = may_wrap ? two_part(c.m) : c.m;
    if (m < 2) return;
    // Meet with what the interval arithmetic already knows (r may carry a congruence).
    AbsVal k = r;
    set_cong(k, m, c.r);
    AbsVal out = r;
    if (r.mod >= 2) {
      if (!meet_extra(out, r, k, Domain::Congruences)) return;
    } else {
      out.mod = k.mod, out.rem = k.rem;
    }
    r.mod = out.mod, r.rem = out.rem;
  }
}

// Negation: -(m k + r) = m (-k) - r; a wrap (-INT_MIN) keeps the power-of-two part.
void neg_extra(const AbsVal& a, AbsVal& r, Domain d) {
  if (keeps_set(d) && a.n_set) {
    std::vector<int64_t> out;
    for (int64_t x : set_of(a)) out.push_back(wrap(-i128(x)));
    put_set(r, out);
  }
  if (keeps_congruence(d) && a.mod >= 2) set_cong(r, a.hull.lo == kMin ? two_part(a.mod) : a.mod, -i128(a.rem));
}

// The values of a for which `x op y` can hold for some y of b, as far as the sets know.
void refine_extra(BinaryOp op, const AbsVal& a, const AbsVal& b, AbsVal& r, Domain d) {
  if (!keeps_set(d) || !a.n_set) return;
  auto ys = set_of(b);
  std::vector<int64_t> keep;
  for (int64_t x : set_of(a)) {
    bool ok = false;
    if (!ys.empty()) {
      for (int64_t y : ys) {
        int64_t z;
        if (apply(op, x, y, &z) && z) ok = true;
      }
    } else {
      ok = true;  // the interval refinement decides
    }
    if (ok) keep.push_back(x);
  }
  if (keep.empty()) {
    r.hull = Interval::empty(Type::Int);
    return;
  }
  put_set(r, keep);
}

// abs, min and max of ints: on the sets value by value; min and max are one of their
// operands, so they keep what both operands' congruences share.
void builtin_extra(Builtin fn, const std::vector<AbsVal>& args, AbsVal& r, Domain d) {
  if (args.empty()) return;
  if (keeps_set(d)) {
    std::vector<std::vector<int64_t>> sets;
    for (const auto& a : args) sets.push_back(set_of(a));
    bool all = std::all_of(sets.begin(), sets.end(), [](const auto& s) { return !s.empty(); });
    if (all && fn == Builtin::Abs) {
      std::vector<int64_t> out;
      for (int64_t x : sets[0]) out.push_back(x < 0 ? wrap(-i128(x)) : x);
      put_set(r, out);
    } else if (all && sets.size() == 2) {
      std::vector<int64_t> out;
      for (int64_t x : sets[0])
        for (int64_t y : sets[1]) out.push_back(fn == Builtin::Min ? std::min(x, y) : std::max(x, y));
      put_set(r, out);
    }
  }
  if (keeps_congruence(d)) {
    Cong a = cong_of(args[0]);
    if (fn == Builtin::Abs) {
      // |x| is x or -x: r (mod m) or -r (mod m), so r (mod gcd(m, 2r)); abs(INT_MIN) wraps
      // to itself, which keeps the power-of-two part.
      if (a.m == 0) return;
      uint64_t m = gcd(a.m, uint64_t(modulo(2 * a.r, a.m)));
      if (args[0].hull.lo == kMin) m = two_part(m);
      if (m >= 2) set_cong(r, m, a.r);
    } else if (args.size() == 2) {
      Cong b = cong_of(args[1]);
      uint64_t diff = a.r == b.r ? 0 : abs_diff(int64_t(a.r), int64_t(b.r));
      uint64_t g = gcd(gcd(a.m, b.m), diff);
      if (g >= 2) set_cong(r, g, a.r);
    }
  }
}

}  // namespace descent::analysis::value_internal
