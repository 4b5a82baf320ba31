// [SECTION] index: names and storage | expressions | memory accesses (for barriers) |
// kernels (bound loops, guards, barriers, vectors) | the program | running it.
//
// The header explains the mapping from loop nests to OpenCL; this file follows it top to
// bottom. The generator works on the IR as written: block iteration variables are replaced by
// their bindings (as tir::print_c does), so the kernel reads as plain C with OpenCL's
// address spaces and work-item functions.
#include "gpu/opencl_codegen.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "tensor/schedule.h"

namespace descent::gpu {

using tir::Buffer;
using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::ForKind;
using tir::IterKind;
using tir::Op;
using tir::PrimFunc;
using tir::ScalarType;
using tir::Scope;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtPtr;

namespace {

bool fail(std::string* error, const std::string& text) {
  if (error) *error = text;
  return false;
}

// ---------------------------------------------------------------------------------------
// [SECTION] names and storage
// ---------------------------------------------------------------------------------------

// Descent identifiers may collide with OpenCL C's keywords, types and built-ins (a buffer
// called `local` or a loop called `exp`); those get a trailing underscore.
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
  if (words.count(n)) return true;
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

std::string cname(const std::string& n) { return reserved(n) ? n + "_" : n; }

enum class Storage : uint8_t {
  Param,     // a kernel parameter: an input, the output
  Scratch,   // a __global buffer run_opencl allocates: intermediates, function-lifetime staging
  Private,   // a private array declared where the IR allocates it
  LocalMem,  // a __local array declared at kernel scope
};

int64_t numel(const Buffer& b) {
  int64_t n = 1;
  for (int64_t d : b.shape) n *= d;
  return n;
}

struct TagInfo {
  bool group = false;
  int dim = 0;
};

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

// Where each Local/Shared buffer's Allocate sits: under a local.* loop or not.
void find_allocations(const Stmt* s, int local_depth, std::map<int, bool>* under_local) {
  if (!s) return;
  if (s->kind == StmtKind::Allocate) (*under_local)[s->buffer] = local_depth > 0;
  int d = local_depth;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound &&
      s->thread_tag.compare(0, 6, "local.") == 0)
    ++d;
  find_allocations(s->init.get(), d, under_local);
  find_allocations(s->body.get(), d, under_local);
  for (const auto& k : s->stmts) find_allocations(k.get(), d, under_local);
}

void find_written(const Stmt* s, std::set<int>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Store) out->insert(s->buffer);
  find_written(s->init.get(), out);
  find_written(s->body.get(), out);
  for (const auto& k : s->stmts) find_written(k.get(), out);
}

bool has_bound(const Stmt* s) {
  if (!s) return false;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound) return true;
  if (has_bound(s->init.get()) || has_bound(s->body.get())) return true;
  for (const auto& k : s->stmts)
    if (has_bound(k.get())) return true;
  return false;
}

void buffers_used(const Expr* e, std::set<int>* out) {
  if (!e) return;
  if (e->kind == ExprKind::Load) out->insert(e->buffer);
  for (const auto& a : e->args) buffers_used(a.get(), out);
}

void buffers_used(const Stmt* s, std::set<int>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Store || s->kind == StmtKind::Allocate) out->insert(s->buffer);
  for (const auto& i : s->indices) buffers_used(i.get(), out);
  buffers_used(s->value.get(), out);
  buffers_used(s->predicate.get(), out);
  for (const auto& it : s->iters) buffers_used(it.binding.get(), out);
  buffers_used(s->init.get(), out);
  buffers_used(s->body.get(), out);
  for (const auto& k : s->stmts) buffers_used(k.get(), out);
}

// Block iteration variables vanish: every use becomes its binding (as in tir::print_c).
ExprPtr bind_expr(const Expr& e, const Stmt* block) { return tir::inline_bindings(e, *block); }
void bind_stmt(Stmt* s, const Stmt* block) { tir::inline_bindings(s, *block); }

// The row-major flat index of an access, simplified.
ExprPtr flat_index(const Buffer& b, const std::vector<ExprPtr>& idx) {
  std::vector<int64_t> strides(b.shape.size(), 1);
  for (size_t d = b.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * b.shape[d];
  ExprPtr flat;
  for (size_t d = 0; d < idx.size() && d < strides.size(); ++d) {
    ExprPtr term = tir::binary(Op::Mul, tir::clone(*idx[d]), tir::int_imm(strides[d]));
    flat = flat ? tir::binary(Op::Add, std::move(flat), std::move(term)) : std::move(term);
  }
  if (!flat) flat = tir::int_imm(0);
  return tir::simplify(*flat);
}

// The coefficient of `v` in an index expression when the expression is linear in v (other
// variables act as constants); nullopt when v appears non-linearly (in a division, a min,
// multiplied by another variable...).
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

std::string shortest_f32(float v) {
  char buf[64];
  for (int prec = 1; prec <= 9; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

// ---------------------------------------------------------------------------------------
// [SECTION] expressions
// ---------------------------------------------------------------------------------------

int precedence(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Binary:
      switch (e.op) {
        case Op::Or: return 1;
        case Op::And: return 2;
        case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: return 3;
        case Op::Add: case Op::Sub: return 4;
        case Op::Mul: case Op::Div: case Op::Mod: return 5;
        default: return 9;  // calls
      }
    case ExprKind::Unary: return e.op == Op::Neg ? 6 : 9;
    case ExprKind::Select: return 0;
    case ExprKind::IntImm: return e.ival < 0 ? 6 : 9;
    case ExprKind::FloatImm: return std::signbit(e.fval) ? 6 : 9;
    default: return 9;
  }
}

const char* infix(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::And: return "&&";
    case Op::Or: return "||";
    default: return "?";
  }
}

// Vector context: inside a vectorized loop over `lane` of `width` lanes, loads whose index
// moves with the lane become vloadN and everything built from them is floatN.
struct VecCtx {
  std::string lane;
  int width = 0;
};

// An index expression as a sum of terms (coefficient x variable, or x an opaque sub-expression
// such as a division) plus a constant, so that `(r_0 * 16 + ax0 - r_0 * 16) * 16` prints as
// `ax0 * 16`. Terms keep the order in which they first appear.
struct Linear {
  std::vector<std::pair<std::string, int64_t>> terms;  // printed atom -> coefficient
  int64_t constant = 0;

  void add(const std::string& atom, int64_t c) {
    for (auto& t : terms)
      if (t.first == atom) {
        t.second += c;
        return;
      }
    terms.emplace_back(atom, c);
  }
};

struct ExprGen;
void linearize(const ExprGen& g, const Expr& e, int64_t scale, Linear* out);

// Private arrays that every access reads or writes N lanes at a time, at offsets that are
// multiples of N, are declared as arrays of floatN: `float16 C_local[4]` accessed as
// C_local[i_1], not `float C_local[64]` accessed through vload16/vstore16. The difference is
// what the OpenCL compiler can keep in registers: LLVM promotes an array of vectors indexed
// by constants (after unrolling) to vector registers, but a float array read and written
// through vloadN is left in memory, and each step of a matmul's reduction then goes
// through the stack (half the speed on PoCL). Which arrays qualify is learned by generating
// the kernel once and looking at every access (see VecUse); the second generation uses it.
struct VecUse {
  std::map<int, int> seen;    // private buffer -> lanes of every access so far, or -1
  std::map<int, int> layout;  // the buffers declared as arrays of floatN, and N

  void note(int buffer, int lanes) {
    auto it = seen.find(buffer);
    if (it == seen.end()) seen[buffer] = lanes;
    else if (it->second != lanes) it->second = -1;
  }
  int lanes(int buffer) const {
    auto it = layout.find(buffer);
    return it == layout.end() ? 0 : it->second;
  }
};

struct ExprGen {
  const PrimFunc& f;
  std::set<std::string>* helpers;  // the ds_* helper functions the program needs
  const VecCtx* vec = nullptr;
  VecUse* vec_use = nullptr;                  // private buffers' access widths
  const std::vector<Storage>* storage = nullptr;

  bool is_private(int buffer) const {
    return storage && buffer >= 0 && size_t(buffer) < storage->size() &&
           (*storage)[size_t(buffer)] == Storage::Private;
  }

  std::string vtype() const { return "float" + std::to_string(vec->width); }

  // Whether e is a vector value (depends on the lane) in the current context.
  bool is_vec(const Expr& e) const {
    return vec && e.type != ScalarType::Int && tir::uses_var(e, vec->lane);
  }

  std::string operand(const Expr& e, int min_prec) const {
    std::string s = print(e);
    return precedence(e) < min_prec ? "(" + s + ")" : s;
  }

  // A scalar operand where a vector is required (function arguments, select).
  std::string widen(const Expr& e) const {
    if (!vec || is_vec(e)) return print(e);
    return "(" + vtype() + ")(" + print(e) + ")";
  }

  std::string helper(const std::string& base, bool vector) const {
    std::string name = base + (vector ? std::to_string(vec->width) : "");
    helpers->insert(name);
    return name;
  }

  std::string index(const Expr& flat, int min_prec) const {
    if (flat.type != ScalarType::Int) return operand(flat, min_prec);
    Linear lin;
    linearize(*this, flat, 1, &lin);
    return print_linear(lin, min_prec);
  }

  static std::string print_linear(const Linear& lin, int min_prec) {
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

  // The address of element `flat` of a buffer, for vloadN/vstoreN: `B + (r * 64 + j)`, or
  // just `B` at index 0.
  std::string pointer(int buffer, const Expr& flat) const {
    std::string i = scalar().index(flat, 5);
    std::string name = cname(f.buffers[size_t(buffer)].name);
    return i == "0" ? name : name + " + " + i;
  }

  // The generator for index expressions: scalar, same bookkeeping.
  ExprGen scalar() const { return ExprGen{f, helpers, nullptr, vec_use, storage}; }

  // base / lanes as printed index text when every term and the constant of base is a
  // multiple of lanes (then `C_local + i_1 * 16` is element i_1 of a float16 array).
  std::optional<std::string> vector_element(const Expr& base, int lanes) const {
    Linear lin;
    linearize(scalar(), base, 1, &lin);
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
  std::optional<std::string> private_vector(int buffer, const Expr& base, int lanes) const {
    if (!is_private(buffer) || !vec_use) return std::nullopt;
    std::optional<std::string> element = lanes ? vector_element(base, lanes) : std::nullopt;
    vec_use->note(buffer, element ? lanes : -1);
    if (element && vec_use->lanes(buffer) == lanes)
      return cname(f.buffers[size_t(buffer)].name) + "[" + *element + "]";
    return std::nullopt;
  }

  std::string access(int buffer, const std::vector<ExprPtr>& idx) const {
    const Buffer& b = f.buffers[size_t(buffer)];
    ExprPtr flat = flat_index(b, idx);
    if (vec && tir::uses_var(*flat, vec->lane)) {
      // Contiguous in the lane (checked before choosing the vector form): the lane-0
      // address, then vloadN of width consecutive floats.
      ExprPtr base = tir::simplify(*tir::substitute(*flat, vec->lane, *tir::int_imm(0)));
      if (auto e = private_vector(buffer, *base, vec->width)) return *e;
      return "vload" + std::to_string(vec->width) + "(0, " + pointer(buffer, *base) + ")";
    }
    private_vector(buffer, *flat, 0);
    return cname(b.name) + "[" + scalar().index(*flat, 0) + "]";
  }

  std::string print(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::IntImm:
        return std::to_string(e.ival);
      case ExprKind::FloatImm: {
        float v = float(e.fval);
        if (std::isnan(v)) return "NAN";
        if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
        std::string s = shortest_f32(v);
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
        return s + "f";
      }
      case ExprKind::Var:
        return cname(e.name);
      case ExprKind::Load:
        return access(e.buffer, e.args);
      case ExprKind::Select: {
        const Expr& c = *e.args[0];
        if (is_vec(c))  // lane-wise: OpenCL's select(else, then, mask)
          return "select(" + widen(*e.args[2]) + ", " + widen(*e.args[1]) + ", " + print(c) + ")";
        if (is_vec(e))
          return operand(c, 1) + " ? " + widen(*e.args[1]) + " : " + widen(*e.args[2]);
        return operand(c, 1) + " ? " + operand(*e.args[1], 1) + " : " + operand(*e.args[2], 1);
      }
      case ExprKind::Unary: {
        const Expr& a = *e.args[0];
        switch (e.op) {
          case Op::Neg: return "-" + operand(a, 7);
          case Op::Exp: return "exp(" + as_float(a) + ")";
          case Op::Log: return "log(" + as_float(a) + ")";
          case Op::Sqrt: return "sqrt(" + as_float(a) + ")";
          case Op::Abs:
            if (e.type == ScalarType::Int) return helper("ds_iabs", false) + "(" + print(a) + ")";
            return "fabs(" + print(a) + ")";
          default: return "?";
        }
      }
      case ExprKind::Binary: {
        const Expr& a = *e.args[0];
        const Expr& b = *e.args[1];
        if (e.op == Op::Min || e.op == Op::Max) {
          if (e.type == ScalarType::Int)  // OpenCL's integer min/max have no nan to worry about
            return std::string(e.op == Op::Max ? "max(" : "min(") + print(a) + ", " + print(b) + ")";
          // The interpreter's rule, (b > a) ? b : a, not fmax/fmin (which drop a nan).
          bool v = is_vec(e);
          std::string h = helper(e.op == Op::Max ? "ds_max" : "ds_min", v);
          return h + "(" + (v ? widen(a) : as_float(a)) + ", " + (v ? widen(b) : as_float(b)) + ")";
        }
        if (e.op == Op::Mod && e.type == ScalarType::F32)
          return "fmod(" + widen_float(a, e) + ", " + widen_float(b, e) + ")";
        int p = precedence(e);
        int left = p == 3 ? p + 1 : p;
        bool assoc = e.type == ScalarType::Int && (e.op == Op::Add || e.op == Op::Mul) &&
                     b.kind == ExprKind::Binary && b.op == e.op && b.type == ScalarType::Int;
        // An index value used as a float (`x + (vi * 16 + vj)`): convert explicitly, as the
        // interpreter does, so integer arithmetic stays integer up to that point.
        bool mixed = e.type != ScalarType::Int &&
                     (a.type == ScalarType::Int) != (b.type == ScalarType::Int);
        std::string l = mixed && a.type == ScalarType::Int ? "(float)(" + print(a) + ")" : operand(a, left);
        std::string r = mixed && b.type == ScalarType::Int ? "(float)(" + print(b) + ")"
                                                           : operand(b, assoc ? p : p + 1);
        return l + " " + infix(e.op) + " " + r;
      }
    }
    return "?";
  }

  std::string as_float(const Expr& a) const {
    return a.type == ScalarType::Int ? "(float)(" + print(a) + ")" : print(a);
  }
  std::string widen_float(const Expr& a, const Expr& whole) const {
    return is_vec(whole) ? widen(a) : as_float(a);
  }
};

void linearize(const ExprGen& g, const Expr& e, int64_t scale, Linear* out) {
  if (e.kind == ExprKind::IntImm) {
    out->constant += scale * e.ival;
    return;
  }
  if (e.kind == ExprKind::Var) {
    out->add(cname(e.name), scale);
    return;
  }
  if (e.kind == ExprKind::Binary && (e.op == Op::Add || e.op == Op::Sub)) {
    linearize(g, *e.args[0], scale, out);
    linearize(g, *e.args[1], e.op == Op::Add ? scale : -scale, out);
    return;
  }
  if (e.kind == ExprKind::Binary && e.op == Op::Mul) {
    if (e.args[1]->kind == ExprKind::IntImm) return linearize(g, *e.args[0], scale * e.args[1]->ival, out);
    if (e.args[0]->kind == ExprKind::IntImm) return linearize(g, *e.args[1], scale * e.args[0]->ival, out);
  }
  if (e.kind == ExprKind::Unary && e.op == Op::Neg) return linearize(g, *e.args[0], -scale, out);
  // Anything else (a division, a product of variables) is one opaque term.
  out->add(g.operand(e, 6), scale);
}

// ---------------------------------------------------------------------------------------
// [SECTION] memory accesses, for the barrier rule
// ---------------------------------------------------------------------------------------

// One read or write of memory that several work-items can see, with its indices written in
// terms of thread tags ("local.x") instead of the loop variables bound to them.
struct Access {
  int buffer;
  bool write;
  std::vector<ExprPtr> index;
  bool all_locals;  // inside loops bound to every local dimension the launch uses
};

using Accesses = std::vector<Access>;

struct AccessCollector {
  const PrimFunc& f;
  const std::vector<Storage>& storage;
  const std::set<int>& written;                 // buffers stored anywhere in f
  const std::set<std::string>& launch_locals;   // local tags with extent > 1
  std::vector<std::pair<std::string, ExprPtr>> subst;
  std::set<std::string> locals_in_scope;
  Accesses out;

  bool shared_memory(int b) const {
    return b >= 0 && size_t(b) < storage.size() && storage[size_t(b)] != Storage::Private &&
           written.count(b);
  }

  ExprPtr canon(const Expr& e) const {
    ExprPtr r = tir::clone(e);
    for (auto it = subst.rbegin(); it != subst.rend(); ++it)
      r = tir::substitute(*r, it->first, *it->second);
    return tir::simplify(*r);
  }

  bool all_locals() const {
    for (const auto& t : launch_locals)
      if (!locals_in_scope.count(t)) return false;
    return true;
  }

  void add(int buffer, bool write, const std::vector<ExprPtr>& idx) {
    if (!shared_memory(buffer)) return;
    Access a{buffer, write, {}, all_locals()};
    for (const auto& i : idx) a.index.push_back(canon(*i));
    out.push_back(std::move(a));
  }

  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Load) add(e->buffer, false, e->args);
    for (const auto& a : e->args) expr(a.get());
  }

  void stmt(const Stmt* s) {
    if (!s) return;
    size_t mark = subst.size();
    bool added_local = false;
    std::string tag;
    switch (s->kind) {
      case StmtKind::For:
        if (s->for_kind == ForKind::Bound) {
          subst.emplace_back(s->var, tir::var(s->thread_tag));
          if (s->thread_tag.compare(0, 6, "local.") == 0 && !locals_in_scope.count(s->thread_tag)) {
            locals_in_scope.insert(s->thread_tag);
            added_local = true;
            tag = s->thread_tag;
          }
        }
        stmt(s->body.get());
        break;
      case StmtKind::Block:
        for (const auto& it : s->iters)
          if (it.binding) subst.emplace_back(it.name, canon(*it.binding));
        expr(s->predicate.get());
        stmt(s->init.get());
        stmt(s->body.get());
        break;
      case StmtKind::Store:
        for (const auto& i : s->indices) expr(i.get());
        expr(s->value.get());
        add(s->buffer, true, s->indices);
        break;
      case StmtKind::Seq:
        for (const auto& k : s->stmts) stmt(k.get());
        break;
      case StmtKind::If:
        expr(s->predicate.get());
        stmt(s->body.get());
        break;
      case StmtKind::Allocate:
        stmt(s->body.get());
        break;
      case StmtKind::Barrier:
        break;
    }
    subst.resize(mark);
    if (added_local) locals_in_scope.erase(tag);
  }
};

// All accesses to one buffer touch the same element from the same work-item: each is made
// inside loops bound to every local dimension, and they all use one index tuple that
// mentions every local tag. Then no other work-item of the group ever touches that element
// (Y[vi, vj] += ... in a thread's own accumulation), and no barrier is needed for it.
bool owned_by_one_item(const std::vector<const Access*>& as, const std::set<std::string>& locals) {
  if (as.empty()) return true;
  const Access& first = *as.front();
  for (const Access* a : as) {
    if (!a->all_locals || a->index.size() != first.index.size()) return false;
    for (size_t d = 0; d < a->index.size(); ++d)
      if (!tir::equal(*a->index[d], *first.index[d])) return false;
  }
  for (const auto& t : locals) {
    bool mentioned = false;
    for (const auto& i : first.index) mentioned = mentioned || tir::uses_var(*i, t);
    if (!mentioned) return false;
  }
  return true;
}

// Does something in `later` touch memory `earlier` wrote (or write what it read) so that a
// work-item might see another's data? Then a barrier must separate them. *global is set when
// __global memory is involved (the fence must cover it too).
bool conflict(const Accesses& earlier, const Accesses& later, const std::vector<Storage>& storage,
              const std::set<std::string>& locals, bool* global) {
  std::set<int> buffers;
  for (const Access& a : earlier) buffers.insert(a.buffer);
  bool any = false;
  for (int b : buffers) {
    bool w1 = false, w2 = false, r2 = false, r1 = false;
    std::vector<const Access*> all;
    for (const Access& a : earlier)
      if (a.buffer == b) {
        (a.write ? w1 : r1) = true;
        all.push_back(&a);
      }
    bool in_later = false;
    for (const Access& a : later)
      if (a.buffer == b) {
        (a.write ? w2 : r2) = true;
        in_later = true;
        all.push_back(&a);
      }
    if (!in_later || !(w1 || w2)) continue;
    // Across iterations of one loop (earlier == later) only a read can observe another
    // work-item's write (or be spoiled by it): a body that only writes needs no barrier.
    if (&earlier == &later && !(r1 && w1)) continue;
    if (owned_by_one_item(all, locals)) continue;
    any = true;
    if (storage[size_t(b)] != Storage::LocalMem) *global = true;
  }
  return any;
}

// ---------------------------------------------------------------------------------------
// [SECTION] kernels
// ---------------------------------------------------------------------------------------

struct Kernel {
  std::string name;
  std::vector<const Stmt*> stmts;
  std::map<std::string, int64_t> extent;  // tag -> largest bound extent
  KernelLaunch launch;
};

struct Gen {
  const PrimFunc& f;
  std::vector<Storage> storage;
  std::set<int> written;
  std::set<std::string> helpers;
  std::string idx = "int";  // the index type: long only when a buffer needs it
  std::string error;

  // Per kernel.
  const Kernel* k = nullptr;
  std::set<std::string> launch_locals;  // local tags with extent > 1
  std::set<std::string> launch_tags;    // every tag with extent > 1
  std::set<std::string> in_scope;       // tags bound around the current statement
  std::vector<std::string> guarded;     // enclosing bound loops shorter than the launch
  // The next statement is alone in its C scope (a loop's whole body), so a bound loop can
  // declare its variable there without braces of its own.
  bool alone = false;
  std::ostringstream out;

  explicit Gen(const PrimFunc& fn) : f(fn) {}

  VecUse vec_use;
  ExprGen eg(const VecCtx* v = nullptr) { return ExprGen{f, &helpers, v, &vec_use, &storage}; }

  // Copies of an unrolled body after the first repeat no comment lines: said once is enough.
  bool quiet = false;

  void line(int depth, const std::string& s) {
    if (quiet && s.compare(0, 2, "//") == 0) return;
    out << std::string(size_t(depth) * 2, ' ') << s << "\n";
  }

  bool err(const std::string& text) {
    if (error.empty()) error = text;
    return false;
  }

  Accesses accesses(const Stmt* s) {
    AccessCollector c{f, storage, written, launch_locals, {}, {}, {}};
    // The tags already bound around s count as in scope for ownership.
    for (const auto& t : in_scope)
      if (t.compare(0, 6, "local.") == 0) c.locals_in_scope.insert(t);
    c.stmt(s);
    return std::move(c.out);
  }

  // Work-items of a group share this point of the program when some local dimension of the
  // launch is not bound here: that is where barriers can (and must) go.
  bool shared_point() const {
    for (const auto& t : launch_locals)
      if (!in_scope.count(t)) return true;
    return false;
  }

  bool barrier(int depth, bool global, const std::string& why) {
    if (!guarded.empty())
      return err("kernel '" + k->name + "' needs a barrier (" + why + ") inside loop '" +
                 guarded.back() + "', which is bound to fewer work-items than the launch has: "
                 "not every work-item would reach it");
    line(depth, std::string("barrier(CLK_LOCAL_MEM_FENCE") + (global ? " | CLK_GLOBAL_MEM_FENCE" : "") +
                    ");  // " + why);
    return true;
  }

  bool body_of(const Stmt* s, int depth) {
    alone = true;
    return stmt(s, depth);
  }

  bool stmt(const Stmt* s, int depth) {
    if (!s) return true;
    bool solo = alone;
    alone = false;
    switch (s->kind) {
      case StmtKind::For: return loop(s, depth, solo);
      case StmtKind::Block: return block(s, depth);
      case StmtKind::Store: return store(s, depth);
      case StmtKind::Seq:
      case StmtKind::Allocate:
        return seq(s, depth, solo);
      case StmtKind::If:
        line(depth, "if (" + eg().print(*s->predicate) + ") {");
        if (!body_of(s->body.get(), depth + 1)) return false;
        line(depth, "}");
        return true;
      case StmtKind::Barrier:
        return barrier(depth, true, "from the loop nest");
    }
    return true;
  }

  // Sequences and allocations form one list: an allocation only declares (a private array;
  // __local ones are at kernel scope, __global scratch is a parameter), so the statements
  // inside it and those around it are checked for barriers together.
  static void flatten(const Stmt* s, std::vector<const Stmt*>* out) {
    if (!s) return;
    if (s->kind == StmtKind::Seq) {
      for (const auto& k : s->stmts) flatten(k.get(), out);
    } else if (s->kind == StmtKind::Allocate) {
      out->push_back(s);
      flatten(s->body.get(), out);
    } else {
      out->push_back(s);
    }
  }

  // Statements in order, with a barrier wherever work-items share memory and a later
  // statement depends on an earlier one's writes (or overwrites what it read).
  bool seq(const Stmt* s, int depth, bool solo) {
    std::vector<const Stmt*> items;
    flatten(s, &items);
    size_t real = 0;
    for (const Stmt* c : items) real += c->kind != StmtKind::Allocate;
    bool sync = shared_point();
    Accesses pending;
    for (const Stmt* c : items) {
      if (c->kind == StmtKind::Allocate) {
        const Buffer& b = f.buffers[size_t(c->buffer)];
        std::string where = b.scope == Scope::Shared ? "shared in the IR, private here: allocated "
                                                       "inside a local.* loop, one per work-item"
                                                     : "local: private to the work-item";
        if (int lanes = vec_use.lanes(c->buffer))
          line(depth, "float" + std::to_string(lanes) + " " + cname(b.name) + "[" +
                          std::to_string(numel(b) / lanes) + "] = {0};  // " + where +
                          "; only ever used " + std::to_string(lanes) + " lanes at a time");
        else if (storage[size_t(c->buffer)] == Storage::Private)
          line(depth, "float " + cname(b.name) + "[" + std::to_string(numel(b)) + "] = {0};  // " + where);
        continue;
      }
      if (sync) {
        Accesses mine = accesses(c);
        bool global = false;
        if (conflict(pending, mine, storage, launch_locals, &global)) {
          if (!barrier(depth, global, "wait for the statements above")) return false;
          pending.clear();
        }
        for (auto& a : mine) pending.push_back(std::move(a));
      }
      alone = solo && real == 1;
      if (!stmt(c, depth)) return false;
    }
    return true;
  }

  bool loop(const Stmt* s, int depth, bool solo) {
    std::string v = cname(s->var);
    std::string n = std::to_string(s->extent);
    if (s->for_kind == ForKind::Bound) {
      TagInfo t;
      if (!parse_tag(s->thread_tag, &t))
        return err("loop '" + s->var + "' is bound to unknown thread tag '" + s->thread_tag +
                   "' (expected group.x|y|z or local.x|y|z)");
      int64_t full = k->extent.at(s->thread_tag);
      bool added = !in_scope.count(s->thread_tag);
      in_scope.insert(s->thread_tag);
      // Alone in its scope, the loop's variable can be declared right there; otherwise
      // (a sibling nest may bind a loop of the same name) it gets a scope of its own.
      int in = solo ? depth : depth + 1;
      if (!solo) line(depth, "{");
      line(in, "const " + idx + " " + v + " = (" + idx + ")" + id_call(t) + ";  // " + s->var +
                   " in 0.." + n + ": " + s->thread_tag);
      bool ok;
      if (s->extent < full) {
        line(in, "if (" + v + " < " + n + ") {  // " + std::to_string(full) +
                     " work-items in this dimension for " + n + " iterations");
        guarded.push_back(s->var);
        ok = body_of(s->body.get(), in + 1);
        guarded.pop_back();
        line(in, "}");
      } else {
        alone = true;
        ok = stmt(s->body.get(), in);
      }
      if (!solo) line(depth, "}");
      if (added) in_scope.erase(s->thread_tag);
      return ok;
    }
    if (s->for_kind == ForKind::Vectorized) {
      std::string why;
      if (vector_loop(s, depth, &why)) return error.empty();
      if (!error.empty()) return false;
      line(depth, "// vectorize " + s->var + ": " + why + "; a scalar loop");
    }
    if (s->for_kind == ForKind::Unrolled) {
      std::string why;
      if (unrolled(s, depth, &why)) return error.empty();
      if (!error.empty()) return false;
      line(depth, "// unroll " + s->var + ": " + why + "; left to the OpenCL compiler");
      line(depth, "#pragma unroll");
    }
    if (s->for_kind == ForKind::Parallel)
      line(depth, "// parallel " + s->var + ": serial inside one work-item (bind it to use the device)");
    line(depth, "for (" + idx + " " + v + " = 0; " + v + " < " + n + "; ++" + v + ") {");
    if (!body_of(s->body.get(), depth + 1)) return false;
    if (shared_point()) {
      // Loop-carried: the next iteration must not overwrite (or read) what this one's
      // other work-items are still using.
      Accesses body = accesses(s->body.get());
      bool global = false;
      if (conflict(body, body, storage, launch_locals, &global) &&
          !barrier(depth + 1, global, "before the next iteration reuses the memory"))
        return false;
    }
    line(depth, "}");
    return true;
  }

  // An unrolled loop as straight-line code: the body once per iteration with the loop
  // variable replaced by its value, so every index into a private array is a constant and
  // the array can live in registers whatever the OpenCL compiler's unroller decides. False
  // with *why when the loop is left to `#pragma unroll`: too long, or it needs barriers
  // between iterations, or its body declares variables (which the copies would repeat).
  bool unrolled(const Stmt* s, int depth, std::string* why) {
    constexpr int64_t kMaxCopies = 32;
    if (s->extent > kMaxCopies) {
      *why = std::to_string(s->extent) + " iterations are more than " + std::to_string(kMaxCopies) +
             " copies of the body";
      return false;
    }
    bool declares = false;
    std::function<void(const Stmt*)> visit = [&](const Stmt* x) {
      if (!x) return;
      if (x->kind == StmtKind::Allocate || x->kind == StmtKind::Barrier ||
          (x->kind == StmtKind::For && x->for_kind == ForKind::Bound))
        declares = true;
      visit(x->init.get());
      visit(x->body.get());
      for (const auto& k : x->stmts) visit(k.get());
    };
    visit(s->body.get());
    if (declares) {
      *why = "its body allocates, binds or synchronises";
      return false;
    }
    if (shared_point()) {
      Accesses body = accesses(s->body.get());
      bool global = false;
      if (conflict(body, body, storage, launch_locals, &global)) {
        *why = "its iterations need barriers between them";
        return false;
      }
    }
    line(depth, "// unrolled " + s->var + ": the body for " + s->var + " = 0.." +
                    std::to_string(s->extent - 1));
    bool was_quiet = quiet;
    bool ok = true;
    for (int64_t v = 0; v < s->extent && ok; ++v) {
      StmtPtr copy = tir::clone(*s->body);
      tensor::sched::substitute_loop_var(copy.get(), s->var, *tir::int_imm(v));
      ok = stmt(copy.get(), depth);
      quiet = true;
    }
    quiet = was_quiet;
    return ok;
  }

  // The guard that makes a store to visible memory happen once: work-item 0 of every
  // dimension of the launch that is not bound around it.
  std::string store_guard(int buffer) const {
    if (storage[size_t(buffer)] == Storage::Private) return "";
    std::string cond;
    for (const auto& t : launch_tags) {
      if (in_scope.count(t)) continue;
      TagInfo info;
      parse_tag(t, &info);
      cond += (cond.empty() ? "" : " && ") + id_call(info) + " == 0";
    }
    return cond.empty() ? "" : "if (" + cond + ") ";
  }

  bool store(const Stmt* s, int depth) {
    line(depth, store_guard(s->buffer) + eg().access(s->buffer, s->indices) + " = " +
                    eg().print(*s->value) + ";");
    return true;
  }

  std::string init_condition(const Stmt* b) {
    std::string cond;
    for (const auto& it : b->iters) {
      if (it.kind != IterKind::Reduce || !it.binding) continue;
      ExprPtr e = tir::simplify(*it.binding);
      cond += (cond.empty() ? "" : " && ") + eg().operand(*e, 4) + " == 0";
    }
    return cond;
  }

  bool block(const Stmt* b, int depth) {
    line(depth, "// block " + b->name);
    int in = depth;
    if (b->predicate) {
      line(depth, "if (" + eg().print(*bind_expr(*b->predicate, b)) + ") {");
      ++in;
    }
    if (b->init) {
      StmtPtr init = tir::clone(*b->init);
      bind_stmt(init.get(), b);
      std::string cond = init_condition(b);
      if (!cond.empty()) {
        line(in, "if (" + cond + ") {");
        if (!stmt(init.get(), in + 1)) return false;
        line(in, "}");
      } else if (!stmt(init.get(), in)) {
        return false;
      }
    }
    if (b->body) {
      StmtPtr body = tir::clone(*b->body);
      bind_stmt(body.get(), b);
      if (!stmt(body.get(), in)) return false;
    }
    if (b->predicate) line(depth, "}");
    return true;
  }

  // A vectorized loop whose body is one store (in a block, possibly with an init) with
  // accesses contiguous in the loop variable: one floatN statement. False with *why when it
  // does not qualify (the caller emits a scalar loop).
  bool vector_loop(const Stmt* s, int depth, std::string* why) {
    int w = int(s->extent);
    if (w != 2 && w != 4 && w != 8 && w != 16) {
      *why = std::to_string(s->extent) + " lanes is not an OpenCL vector width (2, 4, 8, 16)";
      return false;
    }
    const Stmt* body = s->body.get();
    while (body && body->kind == StmtKind::Seq && body->stmts.size() == 1) body = body->stmts[0].get();
    StmtPtr init, main;
    std::string init_cond;
    ExprPtr pred;
    if (body && body->kind == StmtKind::Block) {
      if (body->init) {
        init = tir::clone(*body->init);
        bind_stmt(init.get(), body);
        init_cond = init_condition(body);
        for (const auto& it : body->iters)
          if (it.kind == IterKind::Reduce && it.binding && tir::uses_var(*it.binding, s->var)) {
            *why = "the lanes carry a reduction";
            return false;
          }
      }
      if (body->predicate) pred = bind_expr(*body->predicate, body);
      main = body->body ? tir::clone(*body->body) : nullptr;
      if (main) bind_stmt(main.get(), body);
    } else if (body) {
      main = tir::clone(*body);
    }
    auto single = [](StmtPtr& p) -> const Stmt* {
      const Stmt* x = p.get();
      while (x && x->kind == StmtKind::Seq && x->stmts.size() == 1) x = x->stmts[0].get();
      return x && x->kind == StmtKind::Store ? x : nullptr;
    };
    const Stmt* st = single(main);
    const Stmt* ist = init ? single(init) : nullptr;
    if (!st || (init && !ist)) {
      *why = "its body is not a single store";
      return false;
    }
    if (pred && tir::uses_var(*pred, s->var)) {
      *why = "its predicate depends on the lane";
      return false;
    }
    for (const Stmt* x : {st, ist}) {
      if (!x) continue;
      if (!vector_store_ok(*x, s->var, why)) return false;
    }
    VecCtx vc{s->var, w};
    std::string vt = "float" + std::to_string(w);
    // The lane variable never appears in the text (every use of it is a lane of a vector),
    // so it is not declared.
    line(depth, "// vectorized " + s->var + ": " + std::to_string(w) + " lanes as one " + vt);
    int in = depth;
    if (pred) {
      line(in, "if (" + eg().print(*pred) + ") {");
      ++in;
    }
    auto emit = [&](const Stmt* x, int d, const std::string& prefix) {
      const Buffer& b = f.buffers[size_t(x->buffer)];
      ExprPtr flat = flat_index(b, x->indices);
      ExprPtr base = tir::simplify(*tir::substitute(*flat, s->var, *tir::int_imm(0)));
      ExprGen g = eg(&vc);
      std::string value = g.is_vec(*x->value) ? g.print(*x->value) : "(" + vt + ")(" + g.print(*x->value) + ")";
      if (auto element = g.private_vector(x->buffer, *base, w)) {
        line(d, prefix + *element + " = " + value + ";");
        return;
      }
      line(d, prefix + store_guard(x->buffer) + "vstore" + std::to_string(w) + "(" + value + ", 0, " +
                  eg().pointer(x->buffer, *base) + ");");
    };
    if (ist) {
      if (!init_cond.empty()) emit(ist, in, "if (" + init_cond + ") ");
      else emit(ist, in, "");
    }
    emit(st, in, "");
    if (pred) line(in - 1, "}");
    return true;
  }

  // The store's index moves by 1 per lane; every load moves by 1 or not at all; the lane
  // variable appears nowhere else; and the stored buffer is read only at the stored address
  // (a shifted read would see lanes the vector store has not written yet).
  bool vector_store_ok(const Stmt& st, const std::string& lane, std::string* why) {
    const Buffer& b = f.buffers[size_t(st.buffer)];
    ExprPtr flat = flat_index(b, st.indices);
    auto c = coefficient(*flat, lane);
    if (!c || *c != 1) {
      *why = "the store to '" + b.name + "' is not contiguous in the lane";
      return false;
    }
    bool ok = true;
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (!ok) return;
      if (e.kind == ExprKind::Load) {
        const Buffer& lb = f.buffers[size_t(e.buffer)];
        ExprPtr lf = flat_index(lb, e.args);
        auto lc = coefficient(*lf, lane);
        if (!lc || (*lc != 0 && *lc != 1)) {
          *why = "the load of '" + lb.name + "' is not contiguous in the lane";
          ok = false;
        } else if (e.buffer == st.buffer && !tir::equal(*lf, *flat)) {
          *why = "'" + lb.name + "' is read at another address than it is written";
          ok = false;
        }
        return;
      }
      if (e.kind == ExprKind::Var && e.name == lane) {
        *why = "the lane index is used as a value";
        ok = false;
        return;
      }
      if (e.type == ScalarType::Int && tir::uses_var(e, lane)) {
        *why = "the lane index is used as a value";
        ok = false;
        return;
      }
      if (e.type == ScalarType::Bool && e.kind == ExprKind::Binary &&
          (e.op == Op::And || e.op == Op::Or) && tir::uses_var(e, lane)) {
        *why = "a lane-dependent condition combines comparisons";
        ok = false;
        return;
      }
      for (const auto& a : e.args) visit(*a);
    };
    visit(*st.value);
    return ok;
  }
};

// Every bound loop of a kernel: its largest extent per tag, and no tag twice on one path.
bool collect_tags(const Stmt* s, std::set<std::string>& path, Kernel& k, std::string* error) {
  if (!s) return true;
  bool added = false;
  if (s->kind == StmtKind::For && s->for_kind == ForKind::Bound) {
    TagInfo t;
    if (!parse_tag(s->thread_tag, &t))
      return fail(error, "loop '" + s->var + "' is bound to unknown thread tag '" + s->thread_tag +
                             "' (expected group.x|y|z or local.x|y|z)");
    if (path.count(s->thread_tag))
      return fail(error, "loop '" + s->var + "' is bound to " + s->thread_tag +
                             " inside another loop bound to " + s->thread_tag);
    path.insert(s->thread_tag);
    added = true;
    int64_t& e = k.extent[s->thread_tag];
    e = std::max(e, s->extent);
  }
  bool ok = collect_tags(s->init.get(), path, k, error) && collect_tags(s->body.get(), path, k, error);
  for (const auto& c : s->stmts) ok = ok && collect_tags(c.get(), path, k, error);
  if (added) path.erase(s->thread_tag);
  return ok;
}

std::string sizes_text(const int64_t* v, int dims) {
  std::string s = "(";
  for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
  return s + ")";
}

}  // namespace

std::string describe_launch(const KernelLaunch& k) {
  int64_t groups = 1, items = 1;
  for (int d = 0; d < k.dims.dims; ++d) {
    groups *= k.groups[d];
    items *= k.locals[d];
  }
  return "kernel " + k.name + ": global " + sizes_text(k.dims.global, k.dims.dims) + " local " +
         sizes_text(k.locals, k.dims.dims) + " = " + std::to_string(groups) + " work-group" +
         (groups == 1 ? "" : "s") + " of " + std::to_string(items) + " work-item" + (items == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------
// [SECTION] the program
// ---------------------------------------------------------------------------------------

bool generate_opencl(const PrimFunc& f, OpenCLProgram* out, std::string* error) {
  *out = OpenCLProgram{};
  std::string why;
  if (!tir::verify(f, &why)) return fail(error, "cannot generate OpenCL for '" + f.name + "': " + why);
  if (!f.body) return fail(error, "cannot generate OpenCL for '" + f.name + "': it has no body");
  Gen g(f);

  // Storage: see the header.
  std::map<int, bool> alloc_under_local;
  find_allocations(f.body.get(), 0, &alloc_under_local);
  find_written(f.body.get(), &g.written);
  int64_t largest = 0;
  for (size_t b = 0; b < f.buffers.size(); ++b) {
    const Buffer& buf = f.buffers[b];
    largest = std::max(largest, numel(buf));
    bool param = std::find(f.params.begin(), f.params.end(), int(b)) != f.params.end() ||
                 int(b) == f.output;
    Storage st;
    if (param) st = Storage::Param;
    else if (buf.scope == Scope::Global || !alloc_under_local.count(int(b))) st = Storage::Scratch;
    else if (buf.scope == Scope::Local || alloc_under_local[int(b)]) st = Storage::Private;
    else st = Storage::LocalMem;
    g.storage.push_back(st);
  }
  std::function<void(const Stmt*)> extents = [&](const Stmt* s) {
    if (!s) return;
    if (s->kind == StmtKind::For) largest = std::max(largest, s->extent);
    extents(s->init.get());
    extents(s->body.get());
    for (const auto& k : s->stmts) extents(k.get());
  };
  extents(f.body.get());
  if (largest >= (int64_t(1) << 31)) g.idx = "long";

  // Kernels: one per top-level statement when the function binds loops (each may bind
  // differently, and a kernel boundary is the only barrier across work-groups), else one.
  std::vector<const Stmt*> tops;
  if (f.body->kind == StmtKind::Seq)
    for (const auto& s : f.body->stmts) tops.push_back(s.get());
  else
    tops.push_back(f.body.get());
  std::vector<Kernel> kernels;
  if (!has_bound(f.body.get()) || tops.size() == 1) {
    kernels.push_back(Kernel{cname(f.name), tops, {}, {}});
  } else {
    for (size_t i = 0; i < tops.size(); ++i)
      kernels.push_back(Kernel{cname(f.name) + "_" + std::to_string(i), {tops[i]}, {}, {}});
  }

  // Parameters: inputs, output, scratch.
  for (int p : f.params) out->params.push_back(p);
  out->params.push_back(f.output);
  for (size_t b = 0; b < f.buffers.size(); ++b)
    if (g.storage[b] == Storage::Scratch) {
      out->params.push_back(int(b));
      out->scratch.push_back(int(b));
    }
  std::string sig;
  for (size_t i = 0; i < out->params.size(); ++i) {
    int b = out->params[i];
    bool input = std::find(f.params.begin(), f.params.end(), b) != f.params.end() && b != f.output;
    sig += std::string(i ? ", " : "") + (input ? "__global const float* restrict " : "__global float* restrict ") +
           cname(f.buffers[size_t(b)].name);
  }

  std::ostringstream body;
  for (Kernel& k : kernels) {
    std::set<std::string> path;
    for (const Stmt* s : k.stmts)
      if (!collect_tags(s, path, k, error)) return false;
    KernelLaunch& L = k.launch;
    L.name = k.name;
    int dims = 1;
    for (const auto& [tag, extent] : k.extent) {
      TagInfo t;
      parse_tag(tag, &t);
      (t.group ? L.groups : L.locals)[t.dim] = extent;
      dims = std::max(dims, t.dim + 1);
      if (extent > 1) {
        g.launch_tags.insert(tag);
        if (!t.group) g.launch_locals.insert(tag);
      }
    }
    L.dims.dims = dims;
    for (int d = 0; d < 3; ++d) {
      L.dims.global[d] = L.groups[d] * L.locals[d];
      L.dims.local[d] = L.locals[d];
    }
    g.k = &k;
    g.out.str("");
    g.in_scope.clear();
    // __local arrays live at kernel scope: the ones this kernel's statements use.
    std::set<int> used;
    for (const Stmt* s : k.stmts) buffers_used(s, &used);
    for (int b : used)
      if (g.storage[size_t(b)] == Storage::LocalMem) {
        const Buffer& buf = f.buffers[size_t(b)];
        g.line(1, "__local float " + cname(buf.name) + "[" + std::to_string(numel(buf)) +
                      "];  // shared by the work-group (not zeroed: every use is written first)");
      }
    // The statements as one sequence, so barriers go between them where needed.
    Stmt top(StmtKind::Seq);
    for (const Stmt* s : k.stmts) top.stmts.push_back(tir::clone(*s));
    std::string decls = g.out.str();
    bool ok = g.seq(&top, 1, true);
    // Private arrays only ever accessed as whole aligned vectors: generate again with them
    // declared as arrays of vectors (see VecUse).
    bool again = false;
    for (const auto& [b, lanes] : g.vec_use.seen)
      if (lanes > 0 && !g.vec_use.layout.count(b)) {
        g.vec_use.layout[b] = lanes;
        again = true;
      }
    if (ok && again) {
      g.out.str("");
      g.out << decls;
      g.in_scope.clear();
      ok = g.seq(&top, 1, true);
    }
    if (!ok) return fail(error, "cannot generate OpenCL for '" + f.name + "': " + g.error);
    body << "\n// " << describe_launch(L) << "\n";
    body << "__kernel __attribute__((reqd_work_group_size(" << L.locals[0] << ", " << L.locals[1]
         << ", " << L.locals[2] << ")))\n";
    body << "void " << k.name << "(" << sig << ") {\n" << g.out.str() << "}\n";
    out->kernels.push_back(L);
    g.launch_tags.clear();
    g.launch_locals.clear();
  }

  // Helpers go first but are known last: only those the kernels call.
  std::ostringstream head;
  head << "// OpenCL C generated by Descent from the loop nest '" << f.name << "'.\n";
  std::string helpers;
  for (const std::string& h : g.helpers) {
    if (h == "ds_iabs") {
      helpers += "static inline " + g.idx + " ds_iabs(" + g.idx + " a) { return a < 0 ? -a : a; }\n";
      continue;
    }
    // ds_max / ds_min / ds_max4 ...: the interpreter's rule, lane by lane for vectors.
    bool is_max = h.compare(0, 6, "ds_max") == 0;
    std::string width = h.substr(6);
    std::string t = "float" + width;
    std::string cmp = is_max ? ">" : "<";
    std::string ret = width.empty() ? "b " + cmp + " a ? b : a" : "select(a, b, b " + cmp + " a)";
    helpers += "static inline " + t + " " + h + "(" + t + " a, " + t + " b) { return " + ret + "; }\n";
  }
  if (!helpers.empty()) head << "// max(a, b) is (b > a) ? b : a, as in the interpreter (fmax would drop a nan).\n" << helpers;
  out->source = head.str() + body.str();
  return true;
}

std::string print_opencl(const PrimFunc& f) {
  OpenCLProgram p;
  std::string error;
  if (!generate_opencl(f, &p, &error)) return "error: " + error + "\n";
  return p.source;
}

// ---------------------------------------------------------------------------------------
// [SECTION] running it
// ---------------------------------------------------------------------------------------

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

bool run_program(const PrimFunc& f, const OpenCLProgram& program, Context& context,
                 const std::vector<const tensor::Tensor*>& args, tensor::Tensor* out,
                 Timing* timing, std::string* error) {
  Timing t;
  if (args.size() != f.params.size())
    return fail(error, "kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                           " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer& b = f.buffers[size_t(f.params[i])];
    if (!args[i] || args[i]->shape != b.shape)
      return fail(error, "argument " + std::to_string(i + 1) + " ('" + b.name + "') has shape " +
                             (args[i] ? shape_text(args[i]->shape) : std::string("(none)")) +
                             " but the kernel was generated for " + shape_text(b.shape));
  }
  // Refuse impossible work-groups before compiling (a compiler given an impossible
  // reqd_work_group_size may fail with a less helpful message).
  const DeviceInfo& dev = context.device();
  for (const KernelLaunch& k : program.kernels) {
    int64_t items = k.locals[0] * k.locals[1] * k.locals[2];
    if (dev.max_work_group_size > 0 && items > dev.max_work_group_size)
      return fail(error, "cannot launch kernel '" + k.name + "' on '" + dev.name + "': work-group " +
                             sizes_text(k.locals, k.dims.dims) + " (" + std::to_string(items) +
                             " work-items) exceeds the device's maximum work-group size " +
                             std::to_string(dev.max_work_group_size) +
                             " (CL_INVALID_WORK_GROUP_SIZE); bind shorter loops to local.*");
  }
  Program prog;
  if (!context.build(program.source, "", &prog, &t.build_s, error)) return false;

  std::map<int, DeviceBuffer> mem;
  for (int b : program.params) {
    DeviceBuffer d;
    if (!context.alloc(size_t(numel(f.buffers[size_t(b)])) * sizeof(float), &d, error)) return false;
    mem.emplace(b, std::move(d));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    double s = 0;
    DeviceBuffer& d = mem.at(f.params[i]);
    if (!context.write(d, args[i]->data.data(), d.bytes(), &s, error)) return false;
    t.upload_s += s;
  }
  // The interpreter starts every buffer at zero; so do we (the output and every scratch).
  for (int b : program.params) {
    if (std::find(f.params.begin(), f.params.end(), b) != f.params.end()) continue;
    double s = 0;
    if (!context.fill_zero(mem.at(b), &s, error)) return false;
    t.upload_s += s;
  }
  std::vector<KernelArg> kargs;
  for (int b : program.params) kargs.push_back(KernelArg{&mem.at(b), 0});
  for (const KernelLaunch& k : program.kernels) {
    double s = 0;
    if (!context.launch(prog, k.name, kargs, k.dims, &s, error)) return false;
    t.kernel_s += s;
  }
  tensor::Tensor result;
  if (!tensor::zeros(f.buffers[size_t(f.output)].shape, &result, error)) return false;
  if (!context.read(mem.at(f.output), result.data.data(), size_t(result.numel()) * sizeof(float),
                    &t.download_s, error))
    return false;
  *out = std::move(result);
  if (timing) *timing = t;
  return true;
}

bool run_opencl(const PrimFunc& f, Context& context, const std::vector<const tensor::Tensor*>& args,
                tensor::Tensor* out, Timing* timing, std::string* error) {
  OpenCLProgram program;
  if (!generate_opencl(f, &program, error)) return false;
  return run_program(f, program, context, args, out, timing, error);
}

}  // namespace descent::gpu
