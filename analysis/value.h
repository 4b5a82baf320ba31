// Abstract values: what the analysis knows about one variable at one program point.
//
// Four domains share one representation, so the solver is written once:
//
//   constants   x = 15, or "not constant"                  (a flat lattice: height 3)
//   signs       x < 0, x = 0, x > 0 and their unions        (subsets of {neg, zero, pos}; float
//                                                           adds nan)
//   intervals   x in [lo, hi]; floats also "or nan"       (infinite height: needs widening)
//   product     intervals and signs together, each refining the other: [-5, 5] with x != 0
//               is something neither says alone, and makes 10 / x safe
//
// Every value is a hull (an interval of its type) and a set of sign atoms. Each domain keeps
// only what it can express: constants a single point or the whole type, signs the sign set
// (the hull is just the hull of those signs), intervals the hull (its signs follow from it),
// the product both. Transfer functions are computed once, on intervals, atom by atom (each
// sign of the left operand against each sign of the right), and every domain then abstracts
// the result to what it can say. So all four are sound for the same reason (the interval
// arithmetic is), and differ exactly in what they forget, which is the lesson.
//
// Wrap-around: int arithmetic wraps modulo 2^64 (LANGUAGE.md). An operation whose interval
// result leaves int64's range may wrap to anything: the result becomes the whole type and the
// operation is reported (Effects::may_wrap), never silently clamped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/value.h"

namespace descent::analysis {

enum class Domain : uint8_t { Constants, Signs, Intervals, Congruences, Sets, Product };
// "constants", "signs", "intervals", "congruences", "sets", "product"
const char* domain_name(Domain d);
bool parse_domain(const std::string& text, Domain* out);
const std::vector<Domain>& all_domains();

// Sign atoms. Bools use kFalse/kTrue; ints neg/zero/pos; floats neg/zero/pos/nan.
enum : uint8_t { kNeg = 1, kZero = 2, kPos = 4, kNan = 8 };
enum : uint8_t { kFalse = 1, kTrue = 2 };

// An interval of one scalar type. Int and Bool (0, 1) use [lo, hi]; Float uses [flo, fhi]
// and `nan` (the range may be empty while nan is possible: a value that is only ever nan).
struct Interval {
  Type type = Type::Int;
  int64_t lo = 1, hi = 0;  // empty when lo > hi
  double flo = 1, fhi = 0; // empty when !(flo <= fhi)
  bool nan = false;

  static Interval empty(Type t);
  static Interval full(Type t);
  static Interval of_int(int64_t lo, int64_t hi);
  static Interval of_float(double lo, double hi, bool nan = false);
  static Interval of_bool(bool can_false, bool can_true);
  bool is_empty() const;
  bool range_empty() const;  // Float: no number (nan may remain)
  bool contains(Value v) const;
  bool is_point() const;  // one value exactly
  bool operator==(const Interval& o) const;
};

Interval join(const Interval& a, const Interval& b);
Interval meet(const Interval& a, const Interval& b);
// The values of `t` with this sign atom (kNeg: [INT64_MIN, -1], ...).
Interval sign_interval(Type t, uint8_t atom);
uint8_t signs_of(const Interval& iv);  // the atoms the interval meets

// Eva's small sets: an int value known as at most this many values is kept as the values.
inline constexpr int kMaxSet = 8;

struct AbsVal {
  Type type = Type::Unknown;  // Unknown: untracked (tensors, shapes, strings)
  Interval hull;
  uint8_t signs = 0;  // atoms possible; 0 with an empty hull is bottom
  // Ints, in the domains that keep them (congruences, sets, product): every value is
  // rem (mod mod), with 0 <= rem < mod; mod 1 says nothing.
  uint64_t mod = 1;
  int64_t rem = 0;
  // Ints, in the domains that keep them (sets, product): the values themselves, sorted, when
  // there are at most kMaxSet of them; n_set 0: not known as a set (the hull says the rest).
  uint8_t n_set = 0;
  int64_t set[kMaxSet] = {};
  bool is_bottom() const { return type != Type::Unknown && signs == 0; }
};

// What an operation may do besides producing a value.
struct Effects {
  bool may_wrap = false;          // an int operation may have wrapped around
  bool div_zero_may = false;      // an int / or % whose divisor may be 0
  bool div_zero_must = false;     //   ... is always 0
  bool conversion_may = false;    // int() of a float that may be nan or out of range
  bool conversion_must = false;   //   ... always is
};

// The operations of one domain on AbsVals. All functions keep values normalised: a domain's
// value holds only what that domain can express (see the header comment).
class Lattice {
 public:
  explicit Lattice(Domain d) : d_(d) {}
  Domain domain() const { return d_; }

  AbsVal bottom(Type t) const;
  AbsVal top(Type t) const;
  AbsVal constant(Type t, Value v) const;
  AbsVal from_interval(const Interval& iv) const;  // the domain's abstraction of it
  AbsVal normalize(AbsVal v) const;

  bool leq(const AbsVal& a, const AbsVal& b) const;
  bool equal(const AbsVal& a, const AbsVal& b) const { return leq(a, b) && leq(b, a); }
  AbsVal join(const AbsVal& a, const AbsVal& b) const;
  AbsVal meet(const AbsVal& a, const AbsVal& b) const;
  // thresholds false: skip the program's constants (a loop that has climbed enough of them).
  AbsVal widen(const AbsVal& old, const AbsVal& next, bool thresholds = true) const;
  AbsVal narrow(const AbsVal& old, const AbsVal& next) const;

  // The concrete values an abstract value stands for, as intervals (one per sign atom).
  std::vector<Interval> atoms(const AbsVal& v) const;

  // Transfer functions. `type` is the operation's result type; for binary operators the
  // operands have already been promoted to their common type.
  AbsVal unary(UnaryOp op, const AbsVal& a) const;
  AbsVal binary(BinaryOp op, Type operand_type, const AbsVal& a, const AbsVal& b, Effects* fx) const;
  AbsVal promote(const AbsVal& a) const;  // int -> float
  AbsVal builtin(Builtin b, Type result, const std::vector<AbsVal>& args, Effects* fx) const;
  // Refinement by a comparison known to hold: the values of `a` for which `a op b` can be
  // true (op one of < <= > >= == !=).
  AbsVal refine(BinaryOp op, Type operand_type, const AbsVal& a, const AbsVal& b) const;

  bool contains(const AbsVal& v, Value x) const;  // soundness: x (of v.type) is admitted

  // Widening thresholds (sorted, distinct): an int bound that moves stops at the next of
  // these before it jumps further. The solver takes them from the program's constants.
  void set_thresholds(std::vector<int64_t> t);
  bool is_threshold(int64_t v) const;

  // "x in [0, 9]", "n > 0", "y = 15", "ok = true", "x: any", "x: unreachable".
  std::string describe(const std::string& name, const AbsVal& v) const;
  std::string show(const AbsVal& v) const;  // the value alone: "[0, 9]", "> 0", "15"

 private:
  AbsVal normalize_as(Domain d, AbsVal v) const;
  static bool same(const AbsVal& a, const AbsVal& b);
  Domain d_;
  std::vector<int64_t> thresholds_;
};

std::string int_bound_text(int64_t v);   // -inf/+inf at int64's ends
std::string float_bound_text(double v);  // as print shows floats

}  // namespace descent::analysis
