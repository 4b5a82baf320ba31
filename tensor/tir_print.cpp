// The TVMScript-like printer for the loop-nest IR: what the MLC course shows, what golden
// tests compare and what the REPL/GUI display before and after each schedule step. Its
// expressions are the C-style printer's (c_printer.h, which also holds print_c) in Python's
// spelling.
//
// [SECTION] index: the script's spelling of expressions | print_script.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "lang/text.h"
#include "tensor/c_printer.h"
#include "tensor/tir.h"

namespace descent::tir {

namespace {

// ---- the script's spelling of expressions -------------------------------------------------

// TVMScript is Python: the C-style expression printer (c_printer.h) with Python's operators
// and TVM's names. The precedence ladder is the same, so parentheses land where C has them.
class ScriptExprs : public ExprPrinter {
 public:
  using ExprPrinter::ExprPrinter;

  std::string access(int buffer, const std::vector<ExprPtr>& idx) const override {
    if (buffer < 0 || size_t(buffer) >= f.buffers.size())
      return "<buffer #" + std::to_string(buffer) + ">";
    std::vector<std::string> items;
    for (const auto& i : idx) items.push_back(print_ptr(i));
    return f.buffers[size_t(buffer)].name + "[" + join(items) + "]";
  }

 protected:
  std::string bool_literal(bool v) const override { return v ? "True" : "False"; }

  std::string float_literal(double d) const override {
    float v = float(d);
    if (std::isnan(v)) return "T.float32(\"nan\")";
    if (std::isinf(v)) return v < 0 ? "T.float32(\"-inf\")" : "T.float32(\"inf\")";
    // An integral value would read back as an int, so it carries its type, as TVM prints it.
    bool integral = v == std::trunc(v) && std::fabs(v) < 1e15f;
    if (integral) return "T.float32(" + shortest_f32(v) + ")";
    return shortest_f32(v);
  }

  const char* infix(Op op, ScalarType operand) const override {
    if (op == Op::Div && operand == ScalarType::Int) return "//";
    if (op == Op::And) return "and";
    if (op == Op::Or) return "or";
    return ExprPrinter::infix(op, operand);
  }

  std::string min_max(const Expr& e) const override {
    return std::string(e.op == Op::Max ? "T.max(" : "T.min(") + print(*e.args[0]) + ", " +
           print(*e.args[1]) + ")";
  }

  std::string math(const Expr& e) const override {
    const char* n = e.op == Op::Exp ? "T.exp" : e.op == Op::Log ? "T.log"
                    : e.op == Op::Sqrt ? "T.sqrt" : e.op == Op::Abs ? "T.abs" : "?";
    return std::string(n) + "(" + print(*e.args[0]) + ")";
  }

  std::string float_mod(const Expr& e) const override { return infix_binary(e); }

  std::string fused_multiply_add(const Expr& e) const override {
    return "T.fma(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ", " + print(*e.args[2]) + ")";
  }

  std::string select(const Expr& e) const override {
    return "T.if_then_else(" + print(*e.args[0]) + ", " + print(*e.args[1]) + ", " +
           print(*e.args[2]) + ")";
  }
};

std::string pad(int n) { return std::string(size_t(n) * 4, ' '); }

// A Python tuple: "(128, 64)", and "(8,)" for one element.
std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return "(" + join(dims) + (shape.size() == 1 ? ",)" : ")");
}

// ---- print_script ---------------------------------------------------------------------------

struct ScriptPrinter {
  const PrimFunc& f;
  ScriptExprs ep{f};
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
    if (!s->intrinsic.empty()) line(depth, "# tensorized: " + s->intrinsic);
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

}  // namespace

std::string print_expr(const PrimFunc& f, const Expr& e) {
  ScriptExprs p{f};
  return p.print(e);
}

std::string print_script(const PrimFunc& f) {
  ScriptPrinter p(f);
  std::set<int> allocated = allocated_buffers(f.body.get());
  std::string sig;
  std::vector<int> args = argument_buffers(f);
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

}  // namespace descent::tir
