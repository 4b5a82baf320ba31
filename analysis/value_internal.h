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

}  // namespace descent::analysis::value_internal
