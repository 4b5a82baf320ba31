// OpenCL expressions: the C-style printer's hooks (tensor/c_printer.h) in OpenCL C, and the
// names, tags and index helpers the rest of the generator shares (opencl_printer.h).
//
// [SECTION] index: names and tags | expressions | vector and private-array accesses.
#include "gpu/opencl_printer.h"

#include <cmath>

#include "lang/text.h"

namespace descent::gpu {

using tir::Buffer;
using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::Op;
using tir::ScalarType;

// ---------------------------------------------------------------------------------------
// [SECTION] names and tags
// ---------------------------------------------------------------------------------------

namespace {

bool reserved(const std::string& n) {
  static const std::set<std::string> words = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "half", "uchar",
      "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "true",
      "false", "kernel", "global", "local", "constant", "private", "read_only", "write_only",
      "read_write", "image2d_t", "image3d_t", "sampler_t", "event_t", "max", "min", "exp",
      "log", "sqrt", "fabs", "fmod", "abs", "select", "barrier", "mad", "fma", "clamp",
      "get_group_id", "get_local_id", "get_global_id", "INFINITY", "NAN"};
  // OpenCL C's built-in functions (the math, common, geometric and relational ones): a
  // kernel or buffer of that name (the prelude's tanh) would redeclare one.
  static const std::set<std::string> builtins = {
      "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi",
      "atan2pi", "cbrt", "ceil", "copysign", "cos", "cosh", "cospi", "erfc", "erf", "exp2",
      "exp10", "expm1", "fdim", "floor", "fmax", "fmin", "fract", "frexp", "hypot", "ilogb",
      "ldexp", "lgamma", "lgamma_r", "log2", "log10", "log1p", "logb", "maxmag", "minmag",
      "modf", "nan", "nextafter", "pow", "pown", "powr", "remainder", "remquo", "rint", "rootn",
      "round", "rsqrt", "sin", "sincos", "sinh", "sinpi", "tan", "tanh", "tanpi", "tgamma",
      "trunc", "sign", "step", "smoothstep", "mix", "degrees", "radians", "dot", "cross",
      "length", "distance", "normalize", "isnan", "isinf", "isfinite", "isnormal", "signbit",
      "any", "all", "bitselect", "printf", "mul24", "mad24", "clz", "popcount", "rotate",
      "hadd", "rhadd", "abs_diff", "add_sat", "sub_sat", "mad_sat", "mad_hi", "mul_hi",
      "upsample", "convert_float", "convert_int", "as_float", "as_int", "vec_step", "shuffle",
      "shuffle2", "mem_fence", "read_mem_fence", "write_mem_fence", "get_work_dim",
      "get_global_size", "get_local_size", "get_num_groups", "get_global_offset"};
  if (words.count(n) || builtins.count(n)) return true;
  if (n.compare(0, 7, "native_") == 0 || n.compare(0, 5, "half_") == 0 ||
      n.compare(0, 7, "atomic_") == 0 || n.compare(0, 5, "async") == 0)
    return true;
  // Vector type names (float4, int16, ...) and our helpers.
  for (const char* t : {"float", "int", "char", "short", "long", "uchar", "ushort", "uint",
                        "ulong", "double", "half"}) {
    std::string s = t;
    if (n.size() > s.size() && n.compare(0, s.size(), s) == 0 &&
        n.find_first_not_of("0123456789", s.size()) == std::string::npos)
      return true;
  }
  return n.compare(0, 3, "ds_") == 0 || n.compare(0, 5, "vload") == 0 ||
         n.compare(0, 6, "vstore") == 0;
}

}  // namespace

std::string cname(const std::string& n) { return reserved(n) ? n + "_" : n; }

int64_t numel(const Buffer& b) {
  int64_t n = 1;
  for (int64_t d : b.shape) n *= d;
  return n;
}

bool parse_tag(const std::string& tag, TagInfo* out) {
  static const std::map<std::string, TagInfo> tags = {
      {"group.x", {true, 0}}, {"group.y", {true, 1}}, {"group.z", {true, 2}},
      {"local.x", {false, 0}}, {"local.y", {false, 1}}, {"local.z", {false, 2}}};
  auto it = tags.find(tag);
  if (it == tags.end()) return false;
  *out = it->second;
  return true;
}

std::string id_call(const TagInfo& t) {
  return std::string(t.group ? "get_group_id(" : "get_local_id(") + std::to_string(t.dim) + ")";
}

std::string sizes_text(const int64_t* v, int dims) {
  std::vector<std::string> sizes;
  for (int d = 0; d < dims; ++d) sizes.push_back(std::to_string(v[d]));
  return "(" + join(sizes) + ")";
}

std::optional<int64_t> coefficient(const Expr& e, const std::string& v) {
  if (!tir::uses_var(e, v)) return 0;
  switch (e.kind) {
    case ExprKind::Var: return 1;
    case ExprKind::Binary: {
      if (e.op == Op::Add || e.op == Op::Sub) {
        auto a = coefficient(*e.args[0], v), b = coefficient(*e.args[1], v);
        if (!a || !b) return std::nullopt;
        return e.op == Op::Add ? *a + *b : *a - *b;
      }
      if (e.op == Op::Mul) {
        const Expr& l = *e.args[0];
        const Expr& r = *e.args[1];
        if (l.kind == ExprKind::IntImm) {
          auto c = coefficient(r, v);
          return c ? std::optional<int64_t>(*c * l.ival) : std::nullopt;
        }
        if (r.kind == ExprKind::IntImm) {
          auto c = coefficient(l, v);
          return c ? std::optional<int64_t>(*c * r.ival) : std::nullopt;
        }
      }
      return std::nullopt;
    }
    case ExprKind::Unary:
      if (e.op == Op::Neg) {
        auto c = coefficient(*e.args[0], v);
        return c ? std::optional<int64_t>(-*c) : std::nullopt;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}


// ---------------------------------------------------------------------------------------
// [SECTION] expressions
// ---------------------------------------------------------------------------------------

bool OpenCLPrinter::is_private(int buffer) const {
  return buffer >= 0 && size_t(buffer) < storage.size() && storage[size_t(buffer)] == Storage::Private;
}

bool OpenCLPrinter::is_vec(const Expr& e) const {
  return vec && e.type != ScalarType::Int && tir::uses_var(e, vec->lane);
}

std::string OpenCLPrinter::widen(const Expr& e) const {
  if (!vec || is_vec(e)) return print(e);
  return "(" + vtype() + ")(" + print(e) + ")";
}

// ds_max, or ds_max4 lane by lane (the program declares the ones the kernels call).
std::string OpenCLPrinter::helper(const std::string& base, bool vector) const {
  return call(base + (vector ? std::to_string(vec->width) : ""));
}

// An index value where OpenCL wants a float: converted explicitly, as the interpreter does,
// so integer arithmetic stays integer up to that point.
std::string OpenCLPrinter::as_float(const Expr& a) const {
  return a.type == ScalarType::Int ? "(float)(" + print(a) + ")" : print(a);
}

std::string OpenCLPrinter::widen_float(const Expr& a, const Expr& whole) const {
  return is_vec(whole) ? widen(a) : as_float(a);
}

std::string OpenCLPrinter::select(const Expr& e) const {
  const Expr& c = *e.args[0];
  if (is_vec(c))  // lane-wise: OpenCL's select(else, then, mask)
    return "select(" + widen(*e.args[2]) + ", " + widen(*e.args[1]) + ", " + print(c) + ")";
  if (is_vec(e)) return operand(c, 1) + " ? " + widen(*e.args[1]) + " : " + widen(*e.args[2]);
  return CPrinter::select(e);
}

// OpenCL's fma works on floatN lane by lane: a vector micro-kernel's multiply-add.
std::string OpenCLPrinter::fused_multiply_add(const Expr& e) const {
  return "fma(" + widen_float(*e.args[0], e) + ", " + widen_float(*e.args[1], e) + ", " +
         widen_float(*e.args[2], e) + ")";
}

std::string OpenCLPrinter::math(const Expr& e) const {
  const Expr& a = *e.args[0];
  switch (e.op) {
    case Op::Exp: return "exp(" + as_float(a) + ")";
    case Op::Log: return "log(" + as_float(a) + ")";
    case Op::Sqrt: return "sqrt(" + as_float(a) + ")";
    case Op::Abs:
      if (e.type == ScalarType::Int) return helper("ds_iabs", false) + "(" + print(a) + ")";
      return "fabs(" + print(a) + ")";
    default: return "?";
  }
}

std::string OpenCLPrinter::min_max(const Expr& e) const {
  const Expr& a = *e.args[0];
  const Expr& b = *e.args[1];
  if (e.type == ScalarType::Int)  // OpenCL's integer min/max have no nan to worry about
    return std::string(e.op == Op::Max ? "max(" : "min(") + print(a) + ", " + print(b) + ")";
  // The interpreter's rule, (b > a) ? b : a, not fmax/fmin (which drop a nan).
  bool v = is_vec(e);
  std::string h = helper(e.op == Op::Max ? "ds_max" : "ds_min", v);
  return h + "(" + (v ? widen(a) : as_float(a)) + ", " + (v ? widen(b) : as_float(b)) + ")";
}

std::string OpenCLPrinter::float_mod(const Expr& e) const {
  return "fmod(" + widen_float(*e.args[0], e) + ", " + widen_float(*e.args[1], e) + ")";
}

std::string OpenCLPrinter::index(const Expr& flat, int min_prec) const {
  if (flat.type != ScalarType::Int) return operand(flat, min_prec);
  Linear lin;
  linearize(flat, 1, &lin);
  return print_linear(lin, min_prec);
}

void OpenCLPrinter::linearize(const Expr& e, int64_t scale, Linear* out) const {
  if (e.kind == ExprKind::IntImm) {
    out->constant += scale * e.ival;
    return;
  }
  if (e.kind == ExprKind::Var) {
    out->add(cname(e.name), scale);
    return;
  }
  if (e.kind == ExprKind::Binary && (e.op == Op::Add || e.op == Op::Sub)) {
    linearize(*e.args[0], scale, out);
    linearize(*e.args[1], e.op == Op::Add ? scale : -scale, out);
    return;
  }
  if (e.kind == ExprKind::Binary && e.op == Op::Mul) {
    if (e.args[1]->kind == ExprKind::IntImm) return linearize(*e.args[0], scale * e.args[1]->ival, out);
    if (e.args[0]->kind == ExprKind::IntImm) return linearize(*e.args[1], scale * e.args[0]->ival, out);
  }
  if (e.kind == ExprKind::Unary && e.op == Op::Neg) return linearize(*e.args[0], -scale, out);
  // Anything else (a division, a product of variables) is one opaque term.
  out->add(operand(e, 6), scale);
}

std::string OpenCLPrinter::print_linear(const Linear& lin, int min_prec) {
  std::string s;
  int terms = 0;
  for (const auto& [atom, c] : lin.terms) {
    if (c == 0) continue;
    int64_t m = c < 0 ? -c : c;
    std::string t = m == 1 ? atom : atom + " * " + std::to_string(m);
    s += s.empty() ? (c < 0 ? "-" + t : t) : (c < 0 ? " - " : " + ") + t;
    ++terms;
  }
  if (lin.constant != 0 || s.empty()) {
    int64_t m = lin.constant < 0 ? -lin.constant : lin.constant;
    s += s.empty() ? std::to_string(lin.constant) : (lin.constant < 0 ? " - " : " + ") + std::to_string(m);
    ++terms;
  }
  bool sum = terms > 1 || s[0] == '-';
  if (sum && min_prec > 4) return "(" + s + ")";
  return s;
}

// ---------------------------------------------------------------------------------------
// [SECTION] vector and private-array accesses
// ---------------------------------------------------------------------------------------

// The address of element `flat` of a buffer, for vloadN/vstoreN: `B + (r * 64 + j)`, or
// just `B` at index 0.
std::string OpenCLPrinter::pointer(int buffer, const Expr& flat) const {
  std::string i = scalar([&] { return index(flat, 5); });
  std::string n = cname(f.buffers[size_t(buffer)].name);
  return i == "0" ? n : n + " + " + i;
}

// base / lanes as printed index text when every term and the constant of base is a
// multiple of lanes (then `C_local + i_1 * 16` is element i_1 of a float16 array).
std::optional<std::string> OpenCLPrinter::vector_element(const Expr& base, int lanes) const {
  Linear lin;
  scalar([&] {
    linearize(base, 1, &lin);
    return 0;
  });
  Linear div;
  for (const auto& [atom, c] : lin.terms) {
    if (c % lanes != 0) return std::nullopt;
    if (c != 0) div.add(atom, c / lanes);
  }
  if (lin.constant % lanes != 0) return std::nullopt;
  div.constant = lin.constant / lanes;
  return print_linear(div, 0);
}

// A private buffer's access of `lanes` lanes (0: one scalar) at flat lane-0 index base:
// recorded for the layout decision; the element text when the buffer has vector layout.
std::optional<std::string> OpenCLPrinter::private_vector(int buffer, const Expr& base, int lanes) const {
  if (!is_private(buffer)) return std::nullopt;
  std::optional<std::string> element = lanes ? vector_element(base, lanes) : std::nullopt;
  vec_use.note(buffer, element ? lanes : -1);
  if (element && vec_use.lanes(buffer) == lanes)
    return cname(f.buffers[size_t(buffer)].name) + "[" + *element + "]";
  return std::nullopt;
}

std::string OpenCLPrinter::access(int buffer, const std::vector<ExprPtr>& idx) const {
  const Buffer& b = f.buffers[size_t(buffer)];
  ExprPtr flat = tir::flat_index(b, idx);
  if (vec && tir::uses_var(*flat, vec->lane)) {
    // Contiguous in the lane (checked before choosing the vector form): the lane-0
    // address, then vloadN of width consecutive floats.
    ExprPtr base = tir::simplify(*tir::substitute(*flat, vec->lane, *tir::int_imm(0)));
    if (auto e = private_vector(buffer, *base, vec->width)) return *e;
    return "vload" + std::to_string(vec->width) + "(0, " + pointer(buffer, *base) + ")";
  }
  private_vector(buffer, *flat, 0);
  return cname(b.name) + "[" + scalar([&] { return index(*flat, 0); }) + "]";
}

}  // namespace descent::gpu
