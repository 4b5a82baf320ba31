// Private to the abstract domains (analysis/interval.cpp, value.cpp, value_print.cpp):
// nothing outside them includes this.
//
// The domains (value.h) are spread over files by concern:
//   interval.cpp     Interval's own operations and the interval transfer functions: the
//                    arithmetic every domain shares
//   value.cpp        the Lattice: what each domain keeps of a value, join, meet, widening and
//                    narrowing, and the transfer functions run atom by atom
//   value_print.cpp  values as the facts the report prints ("x in [0, 9]", "n > 0")
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/value.h"

namespace descent::analysis::value_internal {

inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The interval transfer functions (interval.cpp), each sound on its own: every concrete
// result of operands inside the inputs lies inside the output. The Lattice calls them one
// sign atom at a time, so an int divisor never straddles 0.
Interval binary_interval(BinaryOp op, Type t, const Interval& a, const Interval& b, Effects* fx);
Interval neg_interval(const Interval& a, Effects* fx);
Interval abs_interval(const Interval& a, Effects* fx);
Interval minmax_interval(bool is_min, const Interval& a, const Interval& b);
Interval math_interval(Builtin fn, const Interval& a);
Interval to_int_interval(const Interval& a, Effects* fx);
Interval promote_interval(const Interval& a);  // int -> float

// Congruences and small sets (congruence.cpp): the parts of an int value beside its hull and
// signs, each function a no-op in a domain that does not keep them.
bool keeps_congruence(Domain d);
bool keeps_set(Domain d);
bool reduce_int(AbsVal& v, Domain d);  // false: no value is left (bottom)
void join_extra(AbsVal& r, const AbsVal& a, const AbsVal& b, Domain d);
bool meet_extra(AbsVal& r, const AbsVal& a, const AbsVal& b, Domain d);  // false: empty
bool leq_extra(const AbsVal& a, const AbsVal& b);
bool contains_extra(const AbsVal& v, int64_t x);
void binary_extra(BinaryOp op, const AbsVal& a, const AbsVal& b, AbsVal& r, Domain d);
void neg_extra(const AbsVal& a, AbsVal& r, Domain d);
void refine_extra(BinaryOp op, const AbsVal& a, const AbsVal& b, AbsVal& r, Domain d);
void builtin_extra(Builtin fn, const std::vector<AbsVal>& args, AbsVal& r, Domain d);

}  // namespace descent::analysis::value_internal
