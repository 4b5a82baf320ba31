// Printers for the loop-nest IR: TVMScript-like text (what the MLC course shows, what golden
// tests compare and what the REPL/GUI display before and after each schedule step) and the
// equivalent C99 loop nest (Halide's lesson style: the schedule's effect seen as plain loops).
//
// [SECTION] index: shared expression printer (numbers, precedence) | print_script |
// print_c.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "tensor/tir.h"

namespace descent::tir {

namespace {

// ---- shared expression printer -------------------------------------------------------------

enum class Lang { Script, C };

// The shortest decimal text that reads back to the same f32 ("0.5", "1e-05", "3").
std::string shortest_f32(float v) {
  char buf[64];
  for (int prec = 1; prec <= 9; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

bool integral(float v) { return std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15f; }

std::string float_text(double d, Lang lang) {
  float v = float(d);
  if (lang == Lang::Script) {
    if (std::isnan(v)) return "T.float32(\"nan\")";
    if (std::isinf(v)) return v < 0 ? "T.float32(\"-inf\")" : "T.float32(\"inf\")";
    // An integral value would read back as an int, so it carries its type, as TVM prints it.
    if (integral(v)) return "T.float32(" + shortest_f32(v) + ")";
    return shortest_f32(v);
  }
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  std::string s = shortest_f32(v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

// Binding strength, loosest first; the same ladder serves both languages.
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

const char* infix(Op op, Lang lang, ScalarType operand) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return (lang == Lang::Script && operand == ScalarType::Int) ? "//" : "/";
    case Op::Mod: return "%";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::And: return lang == Lang::Script ? "and" : "&&";
    case Op::Or: return lang == Lang::Script ? "or" : "||";
    default: return "?";
  }
}

const char* call_name(Op op, Lang lang, ScalarType type) {
  bool f = type == ScalarType::F32;
  switch (op) {
    case Op::Max: return lang == Lang::Script ? "T.max" : (f ? "ds_max" : "ds_imax");
    case Op::Min: return lang == Lang::Script ? "T.min" : (f ? "ds_min" : "ds_imin");
    case Op::Exp: return lang == Lang::Script ? "T.exp" : "expf";
    case Op::Log: return lang == Lang::Script ? "T.log" : "logf";
    case Op::Sqrt: return lang == Lang::Script ? "T.sqrt" : "sqrtf";
    case Op::Abs: return lang == Lang::Script ? "T.abs" : (f ? "fabsf" : "ds_iabs");
    case Op::Mod: return "fmodf";  // f32 remainder in C
    default: return "?";
  }
}

struct ExprPrinter {
  const PrimFunc& f;
  Lang lang;
  std::set<std::string>* used = nullptr;  // C: the ds_* helpers the text calls

  std::string call(const char* name) const {
    if (used) used->insert(name);
    return name;
  }

  std::string operand(const Expr& e, int min_prec) const {
    std::string s = print(e);
    return precedence(e) < min_prec ? "(" + s + ")" : s;
  }

  std::string print_ptr(const ExprPtr& e) const { return e ? print(*e) : "<missing>"; }

  std::string print(const Expr& e) const {
    size_t want = e.kind == ExprKind::Binary ? 2 : e.kind == ExprKind::Unary ? 1
                  : e.kind == ExprKind::Select ? 3 : 0;
    bool whole = e.kind == ExprKind::Load || e.args.size() == want;
    for (const auto& a : e.args) whole = whole && a != nullptr;
    if (!whole) return "<malformed " + std::string(op_name(e.op)) + ">";
    switch (e.kind) {
      case ExprKind::IntImm:
        if (e.type == ScalarType::Bool)
          return lang == Lang::Script ? (e.ival ? "True" : "False") : (e.ival ? "1" : "0");
        return std::to_string(e.ival);
      case ExprKind::FloatImm:
        return float_text(e.fval, lang);
      case ExprKind::Var:
        return e.name;
      case ExprKind::Load:
        return access(e.buffer, e.args);
      case ExprKind::Select:
        if (lang == Lang::Script)
          return "T.if_then_else(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ", " +
                 print(*e.args[2]) + ")";
        return operand(*e.args[0], 1) + " ? " + operand(*e.args[1], 1) + " : " +
               operand(*e.args[2], 1);
      case ExprKind::Unary:
        if (e.op == Op::Neg) return "-" + operand(*e.args[0], 7);
        return call(call_name(e.op, lang, e.type)) + "(" + print(*e.args[0]) + ")";
      case ExprKind::Binary: {
        ScalarType t = e.args[0]->type;
        bool fcall = lang == Lang::C && e.op == Op::Mod && e.type == ScalarType::F32;
        if (e.op == Op::Min || e.op == Op::Max || fcall)
          return call(call_name(e.op, lang, e.type)) + "(" + print(*e.args[0]) + ", " +
                 print(*e.args[1]) + ")";
        int p = precedence(e);
        // Left-associative: the right operand needs parentheses at equal strength (a - (b - c),
        // and a + (b + c) too, since f32 addition does not reassociate). Comparisons never
        // chain (Python would read a < b < c as a chain).
        // Integer + and * do reassociate exactly, so index math drops those parentheses.
        int left = p == 3 ? p + 1 : p;
        const Expr& r = *e.args[1];
        bool assoc = e.type == ScalarType::Int && (e.op == Op::Add || e.op == Op::Mul) &&
                     r.kind == ExprKind::Binary && r.op == e.op && r.type == ScalarType::Int;
        return operand(*e.args[0], left) + " " + infix(e.op, lang, t) + " " +
               operand(r, assoc ? p : p + 1);
      }
    }
    return "?";
  }

  std::string access(int buffer, const std::vector<ExprPtr>& idx) const {
    // Printers also show unverified functions (a schedule bug being debugged): never index
    // past the buffer table.
    if (buffer < 0 || size_t(buffer) >= f.buffers.size())
      return "<buffer #" + std::to_string(buffer) + ">";
    const Buffer& b = f.buffers[size_t(buffer)];
    if (lang == Lang::C && idx.size() != b.shape.size())
      return b.name + "[<" + std::to_string(idx.size()) + " indices for rank " +
             std::to_string(b.shape.size()) + ">]";
    std::string s = b.name + "[";
    if (lang == Lang::Script) {
      for (size_t i = 0; i < idx.size(); i++) s += (i ? ", " : "") + print_ptr(idx[i]);
      return s + "]";
    }
    for (const auto& i : idx)
      if (!i) return b.name + "[<missing index>]";
    // Row-major flattening, each term index * stride, so a reader sees the layout.
    std::vector<int64_t> strides(b.shape.size(), 1);
    for (size_t d = b.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * b.shape[d];
    ExprPtr flat;
    for (size_t d = 0; d < idx.size(); d++) {
      ExprPtr term = binary(Op::Mul, clone(*idx[d]), int_imm(strides[d]));
      flat = flat ? binary(Op::Add, std::move(flat), std::move(term)) : std::move(term);
    }
    ExprPtr simple = simplify(*flat);
    return s + print(*simple) + "]";
  }
};

std::string pad(int n) { return std::string(size_t(n) * 4, ' '); }

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Parameters then the output, skipping any index that names no buffer.
std::vector<int> valid_args(const PrimFunc& f) {
  std::vector<int> args;
  for (int p : f.params)
    if (p >= 0 && size_t(p) < f.buffers.size()) args.push_back(p);
  if (f.output >= 0 && size_t(f.output) < f.buffers.size()) args.push_back(f.output);
  return args;
}

void collect_allocated(const Stmt* s, std::set<int>& out) {
  if (!s) return;
  if (s->kind == StmtKind::Allocate) out.insert(s->buffer);
  collect_allocated(s->init.get(), out);
  collect_allocated(s->body.get(), out);
  for (const auto& k : s->stmts) collect_allocated(k.get(), out);
}

// ---- print_script ---------------------------------------------------------------------------

struct ScriptPrinter {
  const PrimFunc& f;
  ExprPrinter ep{f, Lang::Script};
  std::ostringstream out;
  std::vector<const Stmt*> loops;  // enclosing loops, to decide whether remap applies

  explicit ScriptPrinter(const PrimFunc& fn) : f(fn) {}

  void line(int depth, const std::string& s) { out << pad(depth) << s << "\n"; }

  const Stmt* loop_named(const std::string& name) const {
    for (auto it = loops.rbegin(); it != loops.rend(); ++it)
      if ((*it)->var == name) return *it;
    return nullptr;
  }

  void stmt(const Stmt* s, int depth) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: loop(s, depth); break;
      case StmtKind::Block: block(s, depth); break;
      case StmtKind::Store: {
        std::string target = ep.access(s->buffer, s->indices);
        line(depth, target + " = " + ep.print_ptr(s->value));
        break;
      }
      case StmtKind::Seq:
        for (const auto& k : s->stmts) stmt(k.get(), depth);
        break;
      case StmtKind::If:
        line(depth, "if " + ep.print_ptr(s->predicate) + ":");
        stmt(s->body.get(), depth + 1);
        break;
      case StmtKind::Allocate: {
        if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size()) {
          line(depth, "# allocation of buffer #" + std::to_string(s->buffer));
          stmt(s->body.get(), depth);
          break;
        }
        const Buffer& b = f.buffers[size_t(s->buffer)];
        line(depth, b.name + " = T.alloc_buffer(" + shape_tuple(b.shape) + ", \"float32\", scope=\"" +
                        scope_name(b.scope) + "\")");
        stmt(s->body.get(), depth);
        break;
      }
      case StmtKind::Barrier:
        line(depth, "T.barrier()");
        break;
    }
  }

  void loop(const Stmt* s, int depth) {
    size_t mark = loops.size();
    if (s->for_kind == ForKind::Serial) {
      // Collapse a chain of perfectly nested serial loops into one T.grid.
      std::vector<const Stmt*> chain{s};
      while (chain.back()->body && chain.back()->body->kind == StmtKind::For &&
             chain.back()->body->for_kind == ForKind::Serial)
        chain.push_back(chain.back()->body.get());
      std::string vars, extents;
      for (size_t i = 0; i < chain.size(); i++) {
        vars += (i ? ", " : "") + chain[i]->var;
        extents += (i ? ", " : "") + std::to_string(chain[i]->extent);
        loops.push_back(chain[i]);
      }
      if (chain.size() == 1)
        line(depth, "for " + vars + " in range(" + extents + "):");
      else
        line(depth, "for " + vars + " in T.grid(" + extents + "):");
      stmt(chain.back()->body.get(), depth + 1);
    } else {
      std::string n = std::to_string(s->extent), head;
      switch (s->for_kind) {
        case ForKind::Parallel: head = "T.parallel(" + n + ")"; break;
        case ForKind::Vectorized: head = "T.vectorized(" + n + ")"; break;
        case ForKind::Unrolled: head = "T.unroll(" + n + ")"; break;
        case ForKind::Bound:
          head = "T.thread_binding(" + n + ", thread=\"" + s->thread_tag + "\")";
          break;
        case ForKind::Serial: break;
      }
      line(depth, "for " + s->var + " in " + head + ":");
      loops.push_back(s);
      stmt(s->body.get(), depth + 1);
    }
    loops.resize(mark);
  }

  void block(const Stmt* s, int depth) {
    line(depth, "with T.block(\"" + s->name + "\"):");
    int in = depth + 1;
    bool remap = !s->iters.empty();
    for (const auto& it : s->iters) {
      const Stmt* l = it.binding && it.binding->kind == ExprKind::Var
                          ? loop_named(it.binding->name) : nullptr;
      if (!l || l->extent != it.extent) remap = false;
    }
    if (remap) {
      std::string names, kinds, vars;
      for (size_t i = 0; i < s->iters.size(); i++) {
        names += (i ? ", " : "") + s->iters[i].name;
        kinds += s->iters[i].kind == IterKind::Spatial ? "S" : "R";
        vars += (i ? ", " : "") + s->iters[i].binding->name;
      }
      line(in, names + " = T.axis.remap(\"" + kinds + "\", [" + vars + "])");
    } else {
      for (const auto& it : s->iters)
        line(in, it.name + " = T.axis." +
                     (it.kind == IterKind::Spatial ? "spatial(" : "reduce(") +
                     std::to_string(it.extent) + ", " +
                     (it.binding ? ep.print(*it.binding) : std::string("?")) + ")");
    }
    if (s->predicate) line(in, "T.where(" + ep.print(*s->predicate) + ")");
    if (s->init) {
      line(in, "with T.init():");
      stmt(s->init.get(), in + 1);
    }
    stmt(s->body.get(), in);
  }
};

// ---- print_c --------------------------------------------------------------------------------

struct CPrinter {
  const PrimFunc& f;
  std::set<std::string> used;
  ExprPrinter ep{f, Lang::C, &used};
  std::ostringstream out;

  explicit CPrinter(const PrimFunc& fn) : f(fn) {}

  void line(int depth, const std::string& s) {
    out << std::string(size_t(depth) * 2, ' ') << s << "\n";
  }

  // Block iteration variables vanish in C: every use becomes its binding.
  static ExprPtr bind(const Expr& e, const Stmt* block) { return inline_bindings(e, *block); }
  static StmtPtr bind(const Stmt& s, const Stmt* block) {
    StmtPtr c = clone(s);
    inline_bindings(c.get(), *block);
    return c;
  }

  static const char* thread_call(const std::string& tag) {
    if (tag == "group.x") return "get_group_id(0)";
    if (tag == "group.y") return "get_group_id(1)";
    if (tag == "group.z") return "get_group_id(2)";
    if (tag == "local.x") return "get_local_id(0)";
    if (tag == "local.y") return "get_local_id(1)";
    if (tag == "local.z") return "get_local_id(2)";
    return "an unknown thread index";
  }

  void stmt(const Stmt* s, int depth) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: {
        std::string head = "for (int64_t " + s->var + " = 0; " + s->var + " < " +
                           std::to_string(s->extent) + "; " + s->var + "++) {";
        switch (s->for_kind) {
          case ForKind::Serial: break;
          case ForKind::Parallel: line(depth, "#pragma omp parallel for"); break;
          case ForKind::Vectorized: line(depth, "#pragma omp simd"); break;
          case ForKind::Unrolled: line(depth, "/* #pragma unroll: fully unrolled */"); break;
          case ForKind::Bound:
            head += "  /* OpenCL: " + s->var + " = " + thread_call(s->thread_tag) + " */";
            break;
        }
        line(depth, head);
        stmt(s->body.get(), depth + 1);
        line(depth, "}");
        break;
      }
      case StmtKind::Block: {
        line(depth, "/* block " + s->name + " */");
        int in = depth;
        if (s->predicate) {
          line(depth, "if (" + ep.print(*bind(*s->predicate, s)) + ") {");
          in++;
        }
        if (s->init) {
          // Runs on the first iteration of every reduce variable: the conjunction of
          // "binding == 0" for each (nothing to test when the block has no reduce variable).
          std::string cond;
          for (const auto& it : s->iters) {
            if (it.kind != IterKind::Reduce || !it.binding) continue;
            ExprPtr b = simplify(*it.binding);
            cond += (cond.empty() ? "" : " && ") + ep.operand(*b, 4) + " == 0";
          }
          if (!cond.empty()) {
            line(in, "if (" + cond + ") {");
            stmt(bind(*s->init, s).get(), in + 1);
            line(in, "}");
          } else {
            stmt(bind(*s->init, s).get(), in);
          }
        }
        if (s->body) stmt(bind(*s->body, s).get(), in);
        if (s->predicate) line(depth, "}");
        break;
      }
      case StmtKind::Store:
        line(depth, ep.access(s->buffer, s->indices) + " = " + ep.print_ptr(s->value) + ";");
        break;
      case StmtKind::Seq:
        for (const auto& k : s->stmts) stmt(k.get(), depth);
        break;
      case StmtKind::If:
        line(depth, "if (" + ep.print_ptr(s->predicate) + ") {");
        stmt(s->body.get(), depth + 1);
        line(depth, "}");
        break;
      case StmtKind::Allocate: {
        if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size()) {
          stmt(s->body.get(), depth);
          break;
        }
        const Buffer& b = f.buffers[size_t(s->buffer)];
        int64_t n = 1;
        for (int64_t d : b.shape) n *= d;
        line(depth, "{");
        line(depth + 1, "float " + b.name + "[" + std::to_string(n) + "] = {0};  /* " +
                            scope_name(b.scope) + " */");
        stmt(s->body.get(), depth + 1);
        line(depth, "}");
        break;
      }
      case StmtKind::Barrier:
        line(depth, "/* barrier(CLK_LOCAL_MEM_FENCE) */");
        break;
    }
  }
};

}  // namespace

std::string print_expr(const PrimFunc& f, const Expr& e) {
  ExprPrinter p{f, Lang::Script};
  return p.print(e);
}

std::string print_script(const PrimFunc& f) {
  ScriptPrinter p(f);
  std::set<int> allocated;
  collect_allocated(f.body.get(), allocated);
  std::string sig;
  std::vector<int> args = valid_args(f);
  for (size_t i = 0; i < args.size(); i++) {
    const Buffer& b = f.buffers[size_t(args[i])];
    sig += (i ? ", " : "") + b.name + ": T.Buffer(" + shape_tuple(b.shape) + ", \"float32\")";
  }
  p.out << "@T.prim_func\n";
  p.out << "def " << f.name << "(" << sig << "):\n";
  for (size_t b = 0; b < f.buffers.size(); b++) {
    const Buffer& buf = f.buffers[b];
    if (std::find(args.begin(), args.end(), int(b)) != args.end() || allocated.count(int(b)))
      continue;
    std::string scope = buf.scope == Scope::Global
                            ? "" : std::string(", scope=\"") + scope_name(buf.scope) + "\"";
    p.line(1, buf.name + " = T.alloc_buffer(" + shape_tuple(buf.shape) + ", \"float32\"" +
                  scope + ")");
  }
  if (f.body)
    p.stmt(f.body.get(), 1);
  else
    p.line(1, "pass");
  return p.out.str();
}

std::string print_c(const PrimFunc& f) {
  CPrinter p(f);
  std::set<int> allocated;
  collect_allocated(f.body.get(), allocated);
  std::string sig;
  std::vector<int> args = valid_args(f);
  for (size_t i = 0; i < args.size(); i++) {
    const Buffer& b = f.buffers[size_t(args[i])];
    bool input = args[i] != f.output;
    sig += std::string(i ? ", " : "") + (input ? "const float* restrict " : "float* restrict ") +
           b.name;
  }
  p.out << "void " << f.name << "(" << sig << ") {\n";
  std::vector<std::string> temps;
  for (size_t b = 0; b < f.buffers.size(); b++) {
    const Buffer& buf = f.buffers[b];
    if (std::find(args.begin(), args.end(), int(b)) != args.end() || allocated.count(int(b)))
      continue;
    int64_t n = 1;
    for (int64_t d : buf.shape) n *= d;
    std::string shape;
    for (size_t d = 0; d < buf.shape.size(); d++)
      shape += (d ? " x " : "") + std::to_string(buf.shape[d]);
    p.line(1, "float* restrict " + buf.name + " = calloc(" + std::to_string(n) +
                  ", sizeof(float));  /* " + shape + " */");
    temps.push_back(buf.name);
  }
  if (!temps.empty()) {
    std::string cond;
    for (const auto& t : temps) cond += (cond.empty() ? "!" : " || !") + t;
    p.line(1, "if (" + cond + ") goto done;");
  }
  p.stmt(f.body.get(), 1);
  if (!temps.empty()) {
    p.out << "done:\n";
    for (const auto& t : temps) p.line(1, "free(" + t + ");");
  }
  p.out << "}\n";
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
  for (const auto& [name, text] : helpers)
    if (p.used.count(name)) {
      head += text;
      any = true;
    }
  if (any) head += "\n";
  return head + p.out.str();
}

}  // namespace descent::tir
