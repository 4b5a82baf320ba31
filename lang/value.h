// Run-time values and the arithmetic every engine must share exactly (LANGUAGE.md,
// "Semantics every engine must share exactly"). Engines call these helpers rather than
// re-deriving the rules, so wrap-around, INT_MIN / -1 and float printing cannot drift apart.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "lang/ast.h"

namespace descent {

// A value is 8 untyped bytes: the static type (from sema) says how to read it, so engines
// never test tags in their hot loops.
union Value {
  int64_t i;
  double f;
  bool b;
  Value() : i(0) {}
  static Value of_int(int64_t v) { Value x; x.i = v; return x; }
  static Value of_float(double v) { Value x; x.f = v; return x; }
  static Value of_bool(bool v) { Value x; x.i = 0; x.b = v; return x; }
};

// int arithmetic wraps modulo 2^64: do it in unsigned, where C++ defines wrapping.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// Truncating division and C remainder; the caller has already ruled out b == 0.
// INT_MIN / -1 overflows in C (undefined behaviour, SIGFPE on x86); Descent defines it.
inline int64_t int_div(int64_t a, int64_t b) {
  if (b == -1) return wrap_neg(a);
  return a / b;
}
inline int64_t int_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  return a % b;
}

// int(f): truncates; false for nan or a value outside int's range ("invalid conversion").
inline bool float_to_int(double f, int64_t* out) {
  // 2^63 is exactly representable; every double below it (and >= -2^63) truncates in range.
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(f);
  return true;
}

// min/max as Python defines them: the first argument unless the second is strictly
// smaller (larger). With a nan this decides which one comes back, identically everywhere.
inline Value int_min(Value a, Value b) { return b.i < a.i ? b : a; }
inline Value int_max(Value a, Value b) { return b.i > a.i ? b : a; }
inline Value float_min(Value a, Value b) { return b.f < a.f ? b : a; }
inline Value float_max(Value a, Value b) { return b.f > a.f ? b : a; }

// One binary operator (not && or ||) on two values whose type t both already have (sema
// promoted them). False only for int division or remainder by zero.
bool apply_binary(BinaryOp op, Type t, Value a, Value b, Value* out);

// The one-argument float builtins (sqrt exp log sin cos floor, abs on floats).
double call_math(Builtin b, double x);

// Python's repr() of a float: the shortest text that reads back to the same double, with a
// ".0" or an exponent so it never looks like an int ("3.0", "1e+20", "inf", "nan").
std::string format_float(double f);
// The layout half of it, shared with the f32 printer of the tensor tier: takes std::to_chars
// scientific output ("-1.5e+20", finite) and lays it out as Python's repr: plain notation for a
// decimal exponent in [-4, 16), scientific otherwise, always with a '.' or an exponent.
std::string repr_layout(std::string scientific);
// A value as print shows it.
std::string format_value(Value v, Type t);

}  // namespace descent
