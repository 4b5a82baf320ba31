#include "lang/value.h"

#include <charconv>
#include <cstdlib>

namespace descent {

bool apply_binary(BinaryOp op, Type t, Value a, Value b, Value* out) {
  if (t == Type::Int) {
    switch (op) {
      case BinaryOp::Add: *out = Value::of_int(wrap_add(a.i, b.i)); return true;
      case BinaryOp::Sub: *out = Value::of_int(wrap_sub(a.i, b.i)); return true;
      case BinaryOp::Mul: *out = Value::of_int(wrap_mul(a.i, b.i)); return true;
      case BinaryOp::Div:
        if (b.i == 0) return false;
        *out = Value::of_int(int_div(a.i, b.i));
        return true;
      case BinaryOp::Mod:
        if (b.i == 0) return false;
        *out = Value::of_int(int_mod(a.i, b.i));
        return true;
      case BinaryOp::Eq: *out = Value::of_bool(a.i == b.i); return true;
      case BinaryOp::Ne: *out = Value::of_bool(a.i != b.i); return true;
      case BinaryOp::Lt: *out = Value::of_bool(a.i < b.i); return true;
      case BinaryOp::Le: *out = Value::of_bool(a.i <= b.i); return true;
      case BinaryOp::Gt: *out = Value::of_bool(a.i > b.i); return true;
      case BinaryOp::Ge: *out = Value::of_bool(a.i >= b.i); return true;
      default: break;
    }
  } else if (t == Type::Float) {
    switch (op) {
      case BinaryOp::Add: *out = Value::of_float(a.f + b.f); return true;
      case BinaryOp::Sub: *out = Value::of_float(a.f - b.f); return true;
      case BinaryOp::Mul: *out = Value::of_float(a.f * b.f); return true;
      case BinaryOp::Div: *out = Value::of_float(a.f / b.f); return true;
      case BinaryOp::Mod: *out = Value::of_float(std::fmod(a.f, b.f)); return true;
      case BinaryOp::Eq: *out = Value::of_bool(a.f == b.f); return true;
      case BinaryOp::Ne: *out = Value::of_bool(a.f != b.f); return true;
      case BinaryOp::Lt: *out = Value::of_bool(a.f < b.f); return true;
      case BinaryOp::Le: *out = Value::of_bool(a.f <= b.f); return true;
      case BinaryOp::Gt: *out = Value::of_bool(a.f > b.f); return true;
      case BinaryOp::Ge: *out = Value::of_bool(a.f >= b.f); return true;
      default: break;
    }
  } else if (op == BinaryOp::Eq || op == BinaryOp::Ne) {  // two bools
    *out = Value::of_bool((a.b == b.b) == (op == BinaryOp::Eq));
    return true;
  }
  *out = Value{};
  return true;
}

double call_math(Builtin b, double x) {
  switch (b) {
    case Builtin::Sqrt: return std::sqrt(x);
    case Builtin::Exp: return std::exp(x);
    case Builtin::Log: return std::log(x);
    case Builtin::Sin: return std::sin(x);
    case Builtin::Cos: return std::cos(x);
    case Builtin::Floor: return std::floor(x);
    case Builtin::Abs: return std::fabs(x);
    default: return x;
  }
}

std::string repr_layout(std::string sci) {
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out = neg ? "-" : "";
  int n = static_cast<int>(digits.size());
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (exp + 1 >= n) {
      out += digits + std::string(static_cast<size_t>(exp + 1 - n), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exp + 1)) + "." +
             digits.substr(static_cast<size_t>(exp + 1));
    }
  } else {
    out += digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  }
  return out;
}

std::string format_float(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  // Shortest round-trip digits and exponent, from std::to_chars in scientific form, then
  // Python's layout.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  return repr_layout(std::string(buf, res.ptr));
}

std::string format_value(Value v, Type t) {
  switch (t) {
    case Type::Int: return std::to_string(v.i);
    case Type::Float: return format_float(v.f);
    case Type::Bool: return v.b ? "true" : "false";
    default: return "";
  }
}

}  // namespace descent
