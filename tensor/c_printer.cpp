// The C-style printer (see c_printer.h) and tir::print_c, the C99 loop nest it prints by
// default (Halide's lesson style: the schedule's effect seen as plain loops).
//
// [SECTION] index: numbers and precedence | expressions | statements | print_c.
#include "tensor/c_printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lang/text.h"

namespace descent::tir {

// ---- numbers and precedence ----------------------------------------------------------------

std::string shortest_f32(float v) {
  char buf[64];
  for (int prec = 1; prec <= 9; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string c_float_literal(double d) {
  float v = float(d);
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  std::string s = shortest_f32(v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

int precedence(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Binary:
      switch (e.op) {
        case Op::Or: return 1;
        case Op::And: return 2;
        case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: return 3;
        case Op::Add: case Op::Sub: return 4;
        case Op::Mul: case Op::Div: case Op::Mod: return 5;
        default: return 9;  // printed as calls
      }
    case ExprKind::Unary:
      return e.op == Op::Neg ? 6 : 9;
    case ExprKind::Select:
      return 0;  // C's ?: binds loosest; the script prints a call but parentheses are harmless
    case ExprKind::IntImm:
      return e.ival < 0 ? 6 : 9;
    case ExprKind::FloatImm:
      return std::signbit(e.fval) ? 6 : 9;
    default:
      return 9;
  }
}

ExprPtr flat_index(const Buffer& b, const std::vector<ExprPtr>& idx) {
  std::vector<int64_t> strides(b.shape.size(), 1);
  for (size_t d = b.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * b.shape[d];
  ExprPtr flat;
  for (size_t d = 0; d < idx.size() && d < strides.size(); ++d) {
    ExprPtr term = binary(Op::Mul, clone(*idx[d]), int_imm(strides[d]));
    flat = flat ? binary(Op::Add, std::move(flat), std::move(term)) : std::move(term);
  }
  if (!flat) flat = int_imm(0);
  return simplify(*flat);
}

// ---- expressions ---------------------------------------------------------------------------

std::string ExprPrinter::operand(const Expr& e, int min_prec) const {
  std::string s = print(e);
  return precedence(e) < min_prec ? "(" + s + ")" : s;
}

std::string ExprPrinter::print(const Expr& e) const {
  size_t want = e.kind == ExprKind::Binary                              ? 2
                : e.kind == ExprKind::Unary                             ? 1
                : e.kind == ExprKind::Select || e.kind == ExprKind::Fma ? 3
                                                                        : 0;
  bool whole = e.kind == ExprKind::Load || e.args.size() == want;
  for (const auto& a : e.args) whole = whole && a != nullptr;
  if (!whole) return "<malformed " + std::string(op_name(e.op)) + ">";
  switch (e.kind) {
    case ExprKind::IntImm:
      if (e.type == ScalarType::Bool) return bool_literal(e.ival != 0);
      return std::to_string(e.ival);
    case ExprKind::FloatImm:
      return float_literal(e.fval);
    case ExprKind::Var:
      return name(e.name);
    case ExprKind::Load:
      return access(e.buffer, e.args);
    case ExprKind::Select:
      return select(e);
    case ExprKind::Fma:
      return fused_multiply_add(e);
    case ExprKind::Unary:
      if (e.op == Op::Neg) return "-" + operand(*e.args[0], 7);
      return math(e);
    case ExprKind::Binary:
      if (e.op == Op::Min || e.op == Op::Max) return min_max(e);
      if (e.op == Op::Mod && e.type == ScalarType::F32) return float_mod(e);
      return infix_binary(e);
  }
  return "?";
}

std::string ExprPrinter::fused_multiply_add(const Expr& e) const {
  return "fmaf(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ", " + print(*e.args[2]) + ")";
}

std::string ExprPrinter::infix_binary(const Expr& e) const {
  const Expr& a = *e.args[0];
  const Expr& b = *e.args[1];
  int p = precedence(e);
  // Left-associative: the right operand needs parentheses at equal strength (a - (b - c),
  // and a + (b + c) too, since f32 addition does not reassociate). Comparisons never
  // chain (Python would read a < b < c as a chain).
  // Integer + and * do reassociate exactly, so index math drops those parentheses.
  int left = p == 3 ? p + 1 : p;
  bool assoc = e.type == ScalarType::Int && (e.op == Op::Add || e.op == Op::Mul) &&
               b.kind == ExprKind::Binary && b.op == e.op && b.type == ScalarType::Int;
  int right = assoc ? p : p + 1;
  // An index value used as a float (`x + (vi * 16 + vj)`): the language decides whether
  // that needs a conversion.
  bool mixed = e.type != ScalarType::Int && (a.type == ScalarType::Int) != (b.type == ScalarType::Int);
  std::string l = mixed && a.type == ScalarType::Int ? int_as_float(a, left) : operand(a, left);
  std::string r = mixed && b.type == ScalarType::Int ? int_as_float(b, right) : operand(b, right);
  return l + " " + infix(e.op, a.type) + " " + r;
}

const char* ExprPrinter::infix(Op op, ScalarType) const {
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

std::string ExprPrinter::min_max(const Expr& e) const {
  // The shared max/min rule (see lower.cpp): (b > a) ? b : a, as in Python; ds_* helpers.
  bool f32 = e.type == ScalarType::F32;
  const char* h = e.op == Op::Max ? (f32 ? "ds_max" : "ds_imax") : (f32 ? "ds_min" : "ds_imin");
  return call(h) + "(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ")";
}

std::string ExprPrinter::math(const Expr& e) const {
  const char* n = "?";
  switch (e.op) {
    case Op::Exp: n = "expf"; break;
    case Op::Log: n = "logf"; break;
    case Op::Sqrt: n = "sqrtf"; break;
    case Op::Abs: n = e.type == ScalarType::F32 ? "fabsf" : "ds_iabs"; break;
    default: break;
  }
  return call(n) + "(" + print(*e.args[0]) + ")";
}

std::string ExprPrinter::float_mod(const Expr& e) const {
  return call("fmodf") + "(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ")";
}

std::string ExprPrinter::select(const Expr& e) const {
  return operand(*e.args[0], 1) + " ? " + operand(*e.args[1], 1) + " : " + operand(*e.args[2], 1);
}

std::string ExprPrinter::access(int buffer, const std::vector<ExprPtr>& idx) const {
  if (buffer < 0 || size_t(buffer) >= f.buffers.size())
    return "<buffer #" + std::to_string(buffer) + ">";
  const Buffer& b = f.buffers[size_t(buffer)];
  if (idx.size() != b.shape.size())
    return b.name + "[<" + std::to_string(idx.size()) + " indices for rank " +
           std::to_string(b.shape.size()) + ">]";
  for (const auto& i : idx)
    if (!i) return b.name + "[<missing index>]";
  // Row-major flattening, each term index * stride, so a reader sees the layout.
  return b.name + "[" + print(*flat_index(b, idx)) + "]";
}

// ---- statements ----------------------------------------------------------------------------

bool CPrinter::stmt(const Stmt* s, int depth) {
  if (!s) return true;
  switch (s->kind) {
    case StmtKind::For: return loop(s, depth);
    case StmtKind::Block: return block(s, depth);
    case StmtKind::Store: return store(s, depth);
    case StmtKind::Seq: return seq(s, depth);
    case StmtKind::If: return if_then(s, depth);
    case StmtKind::Allocate: return allocate(s, depth);
    case StmtKind::Barrier: return barrier(depth);
  }
  return true;
}

std::string CPrinter::param(int buffer, bool input) const {
  return (input ? "const float* restrict " : "float* restrict ") + name(f.buffers[size_t(buffer)].name);
}

std::string CPrinter::for_header(const Stmt* s) const {
  std::string v = name(s->var);
  return "for (int64_t " + v + " = 0; " + v + " < " + std::to_string(s->extent) + "; " + v + "++) {";
}

bool CPrinter::loop(const Stmt* s, int depth) {
  std::string head = for_header(s);
  if (!s->intrinsic.empty()) line(depth, comment("tensorized: " + s->intrinsic));
  switch (s->for_kind) {
    case ForKind::Serial: break;
    case ForKind::Parallel: line(depth, "#pragma omp parallel for"); break;
    case ForKind::Vectorized: line(depth, "#pragma omp simd"); break;
    case ForKind::Unrolled: line(depth, "/* #pragma unroll: fully unrolled */"); break;
    case ForKind::Bound: {
      // C runs a bound loop as a loop; the comment says what OpenCL makes of it.
      static const char* const calls[][2] = {
          {"group.x", "get_group_id(0)"}, {"group.y", "get_group_id(1)"},
          {"group.z", "get_group_id(2)"}, {"local.x", "get_local_id(0)"},
          {"local.y", "get_local_id(1)"}, {"local.z", "get_local_id(2)"}};
      std::string call = "an unknown thread index";
      for (const auto& c : calls)
        if (s->thread_tag == c[0]) call = c[1];
      head += "  /* OpenCL: " + s->var + " = " + call + " */";
      break;
    }
  }
  line(depth, head);
  if (!body(s->body.get(), depth + 1)) return false;
  line(depth, "}");
  return true;
}

bool CPrinter::block(const Stmt* b, int depth) {
  // Block iteration variables vanish in C: every use becomes its binding.
  auto bound = [b](const Stmt& s) {
    StmtPtr c = clone(s);
    inline_bindings(c.get(), *b);
    return c;
  };
  line(depth, comment("block " + b->name));
  int in = depth;
  if (b->predicate) {
    line(depth, "if (" + print(*inline_bindings(*b->predicate, *b)) + ") {");
    in++;
  }
  if (b->init) {
    std::string cond = init_condition(b);
    if (!cond.empty()) {
      line(in, "if (" + cond + ") {");
      if (!stmt(bound(*b->init).get(), in + 1)) return false;
      line(in, "}");
    } else if (!stmt(bound(*b->init).get(), in)) {
      return false;
    }
  }
  if (b->body && !stmt(bound(*b->body).get(), in)) return false;
  if (b->predicate) line(depth, "}");
  return true;
}

std::string CPrinter::init_condition(const Stmt* b) const {
  // The conjunction of "binding == 0" for each reduce variable: the first iteration.
  std::vector<std::string> terms;
  for (const auto& it : b->iters) {
    if (it.kind != IterKind::Reduce || !it.binding) continue;
    ExprPtr e = simplify(*it.binding);
    terms.push_back(operand(*e, 4) + " == 0");
  }
  return join(terms, " && ");
}

bool CPrinter::store(const Stmt* s, int depth) {
  line(depth, store_prefix(s->buffer) + access(s->buffer, s->indices) + " = " + print_ptr(s->value) + ";");
  return true;
}

bool CPrinter::seq(const Stmt* s, int depth) {
  for (const auto& k : s->stmts)
    if (!stmt(k.get(), depth)) return false;
  return true;
}

bool CPrinter::if_then(const Stmt* s, int depth) {
  line(depth, "if (" + print_ptr(s->predicate) + ") {");
  if (!body(s->body.get(), depth + 1)) return false;
  line(depth, "}");
  return true;
}

bool CPrinter::allocate(const Stmt* s, int depth) {
  if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size()) return stmt(s->body.get(), depth);
  line(depth, "{");
  line(depth + 1, local_decl(s->buffer));
  bool ok = stmt(s->body.get(), depth + 1);
  line(depth, "}");
  return ok;
}

std::string CPrinter::local_decl(int buffer) const {
  const Buffer& b = f.buffers[size_t(buffer)];
  int64_t n = 1;
  for (int64_t d : b.shape) n *= d;
  return "float " + name(b.name) + "[" + std::to_string(n) + "] = {0};  /* " + scope_name(b.scope) + " */";
}

bool CPrinter::barrier(int depth) {
  line(depth, comment("barrier(CLK_LOCAL_MEM_FENCE)"));
  return true;
}

// ---- print_c -------------------------------------------------------------------------------

std::vector<int> argument_buffers(const PrimFunc& f) {
  std::vector<int> args;
  for (int p : f.params)
    if (p >= 0 && size_t(p) < f.buffers.size()) args.push_back(p);
  if (f.output >= 0 && size_t(f.output) < f.buffers.size()) args.push_back(f.output);
  return args;
}

std::set<int> allocated_buffers(const Stmt* s) {
  std::set<int> out;
  std::vector<const Stmt*> todo{s};
  while (!todo.empty()) {
    const Stmt* x = todo.back();
    todo.pop_back();
    if (!x) continue;
    if (x->kind == StmtKind::Allocate) out.insert(x->buffer);
    todo.push_back(x->init.get());
    todo.push_back(x->body.get());
    for (const auto& k : x->stmts) todo.push_back(k.get());
  }
  return out;
}

std::string CPrinter::print_function() {
  std::set<int> allocated = allocated_buffers(f.body.get());
  std::vector<int> args = argument_buffers(f);
  std::vector<std::string> params;
  for (int a : args) params.push_back(param(a, a != f.output));
  out << "void " << f.name << "(" << join(params) << ") {\n";
  // Intermediate buffers the loop nest does not allocate live for the whole call.
  std::vector<std::string> temps;
  for (size_t b = 0; b < f.buffers.size(); b++) {
    const Buffer& buf = f.buffers[b];
    if (std::find(args.begin(), args.end(), int(b)) != args.end() || allocated.count(int(b)))
      continue;
    int64_t n = 1;
    std::vector<std::string> dims;
    for (int64_t d : buf.shape) {
      n *= d;
      dims.push_back(std::to_string(d));
    }
    line(1, "float* restrict " + buf.name + " = calloc(" + std::to_string(n) +
                ", sizeof(float));  /* " + join(dims, " x ") + " */");
    temps.push_back(buf.name);
  }
  if (!temps.empty()) line(1, "if (!" + join(temps, " || !") + ") goto done;");
  stmt(f.body.get(), 1);
  if (!temps.empty()) {
    out << "done:\n";
    for (const auto& t : temps) line(1, "free(" + t + ");");
  }
  out << "}\n";
  // The prelude goes first but is known last: only the helpers the body calls.
  std::string head = "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n";
  static const std::pair<const char*, const char*> helpers[] = {
      // The shared max/min rule (see lower.cpp): (b > a) ? b : a, as in Python.
      {"ds_max", "static inline float ds_max(float a, float b) { return b > a ? b : a; }\n"},
      {"ds_min", "static inline float ds_min(float a, float b) { return b < a ? b : a; }\n"},
      {"ds_imax", "static inline int64_t ds_imax(int64_t a, int64_t b) { return b > a ? b : a; }\n"},
      {"ds_imin", "static inline int64_t ds_imin(int64_t a, int64_t b) { return b < a ? b : a; }\n"},
      {"ds_iabs", "static inline int64_t ds_iabs(int64_t a) { return a < 0 ? -a : a; }\n"},
  };
  bool any = false;
  for (const auto& [h, text] : helpers)
    if (helpers_.count(h)) {
      head += text;
      any = true;
    }
  if (any) head += "\n";
  return head + out.str();
}

std::string print_c(const PrimFunc& f) {
  CPrinter p(f);
  return p.print_function();
}

}  // namespace descent::tir
