// The reference interpreter: the oracle every other tensor backend is checked against.
//
// It is deliberately a plain tree walker, but not a naive one: names are resolved to slots
// and buffer strides computed once, before the first iteration (a `Prepared` copy of the
// function), so running a loop nest allocates nothing and looks nothing up by name. That
// keeps a 128x128x128 matmul well under a second, which is what lets every test compare
// against it.
//
// Semantics (shared by every backend, see lower.cpp): f32 arithmetic; max(a, b) is
// (b > a) ? b : a and min(a, b) is (b < a) ? b : a; integer Div/Mod truncate; Select and
// And/Or evaluate only the operands they need, so a guarded load is never performed.
// Every Load and Store is bounds-checked, and every block iteration value is checked
// against its domain: a schedule bug is reported, never executed.
//
// [SECTION] index: prepared form | preparing (name resolution) | evaluation | statements |
// interpret.
#include <cmath>
#include <map>
#include <algorithm>
#include <new>
#include <stdexcept>

#include "tensor/index_eval.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::tir {

namespace {

// ---- prepared form ------------------------------------------------------------------------

struct PExpr {
  ExprKind kind = ExprKind::IntImm;
  ScalarType type = ScalarType::Int;
  Op op = Op::Add;
  int slot = -1;    // Var
  int buffer = -1;  // Load
  int64_t ival = 0;
  float fval = 0;
  std::vector<PExpr> args;
};

struct PIter {
  int slot;
  int64_t extent;
  IterKind kind;
  PExpr binding;
  std::string name;
};

struct PStmt {
  StmtKind kind;
  int slot = -1;  // For
  int64_t extent = 0;
  std::string name;  // Block
  std::vector<PIter> iters;
  std::unique_ptr<PStmt> init;
  bool has_predicate = false;
  PExpr predicate;
  int buffer = -1;  // Store, Allocate
  std::vector<PExpr> indices;
  PExpr value;
  std::unique_ptr<PStmt> body;
  std::vector<std::unique_ptr<PStmt>> stmts;
};

// A Tensor rather than a std::vector: its allocation failure is an error value (tensor::zeros),
// never a std::bad_alloc, and the output buffer is handed to the caller without a copy.
struct BufferState {
  tensor::Tensor t;
  std::vector<int64_t> strides;
};

// ---- preparing -----------------------------------------------------------------------------

struct Preparer {
  const PrimFunc& f;
  std::vector<std::pair<std::string, int>> scope;  // name -> slot, innermost last
  int slots = 0;
  std::string error;

  explicit Preparer(const PrimFunc& fn) : f(fn) {}

  bool fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
    return false;
  }

  int lookup(const std::string& name) const {
    for (auto it = scope.rbegin(); it != scope.rend(); ++it)
      if (it->first == name) return it->second;
    return -1;
  }

  bool buffer_ok(int b, size_t rank, const char* what) {
    if (b < 0 || size_t(b) >= f.buffers.size())
      return fail(std::string(what) + " of buffer #" + std::to_string(b) + " which does not exist");
    if (rank != f.buffers[b].shape.size())
      return fail(std::string(what) + " of '" + f.buffers[b].name + "' with " +
                  std::to_string(rank) + " indices, but it has rank " +
                  std::to_string(f.buffers[b].shape.size()));
    return true;
  }

  bool expr(const Expr& e, PExpr* out) {
    out->kind = e.kind;
    out->type = e.type;
    out->op = e.op;
    out->ival = e.ival;
    out->fval = float(e.fval);
    out->buffer = e.buffer;
    size_t want = 0;
    switch (e.kind) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
        break;
      case ExprKind::Var:
        out->slot = lookup(e.name);
        if (out->slot < 0) return fail("variable '" + e.name + "' is not bound");
        break;
      case ExprKind::Load:
        if (!buffer_ok(e.buffer, e.args.size(), "load")) return false;
        want = e.args.size();
        break;
      case ExprKind::Binary: want = 2; break;
      case ExprKind::Unary: want = 1; break;
      case ExprKind::Select:
      case ExprKind::Fma: want = 3; break;
    }
    if (e.args.size() != want) return fail("malformed expression (wrong operand count)");
    out->args.resize(want, PExpr());
    for (size_t i = 0; i < want; i++) {
      if (!e.args[i]) return fail("malformed expression (missing operand)");
      if (!expr(*e.args[i], &out->args[i])) return false;
    }
    return true;
  }

  std::unique_ptr<PStmt> stmt(const Stmt* s) {
    if (!s) return fail("malformed function (missing statement)"), nullptr;
    auto p = std::make_unique<PStmt>();
    p->kind = s->kind;
    switch (s->kind) {
      case StmtKind::For:
        p->slot = slots++;
        p->extent = s->extent;
        scope.push_back({s->var, p->slot});
        p->body = stmt(s->body.get());
        scope.pop_back();
        if (!p->body) return nullptr;
        break;
      case StmtKind::Block: {
        p->name = s->name;
        for (const auto& it : s->iters) {
          PIter pi{slots++, it.extent, it.kind, PExpr(),
                   it.name};
          if (!it.binding) return fail("iteration variable '" + it.name + "' of block '" +
                                       s->name + "' has no binding"), nullptr;
          if (!expr(*it.binding, &pi.binding)) return nullptr;
          p->iters.push_back(std::move(pi));
        }
        if (s->predicate) {
          p->has_predicate = true;
          if (!expr(*s->predicate, &p->predicate)) return nullptr;
        }
        size_t mark = scope.size();
        for (const auto& pi : p->iters) scope.push_back({pi.name, pi.slot});
        if (s->init && !(p->init = stmt(s->init.get()))) return nullptr;
        p->body = stmt(s->body.get());
        scope.resize(mark);
        if (!p->body) return nullptr;
        break;
      }
      case StmtKind::Store:
        if (!buffer_ok(s->buffer, s->indices.size(), "store")) return nullptr;
        p->buffer = s->buffer;
        p->indices.resize(s->indices.size(), PExpr());
        for (size_t i = 0; i < s->indices.size(); i++)
          if (!s->indices[i] || !expr(*s->indices[i], &p->indices[i]))
            return fail("malformed store index"), nullptr;
        if (!s->value || !expr(*s->value, &p->value))
          return fail("malformed store value"), nullptr;
        break;
      case StmtKind::Seq:
        for (const auto& k : s->stmts) {
          auto c = stmt(k.get());
          if (!c) return nullptr;
          p->stmts.push_back(std::move(c));
        }
        break;
      case StmtKind::If:
        if (!s->predicate) return fail("if without a condition"), nullptr;
        p->has_predicate = true;
        if (!expr(*s->predicate, &p->predicate)) return nullptr;
        if (!(p->body = stmt(s->body.get()))) return nullptr;
        break;
      case StmtKind::Allocate:
        if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size())
          return fail("allocation of buffer #" + std::to_string(s->buffer) +
                      " which does not exist"), nullptr;
        p->buffer = s->buffer;
        if (!(p->body = stmt(s->body.get()))) return nullptr;
        break;
      case StmtKind::Barrier:
        break;  // serial execution: every "thread" has already arrived
    }
    return p;
  }
};

// ---- evaluation -----------------------------------------------------------------------------

struct Machine {
  const PrimFunc& f;
  std::vector<BufferState> bufs;
  std::vector<int64_t> slots;
  std::string error;
  const std::string* block = nullptr;  // the block being run, for error messages
  const std::atomic<bool>* interrupt = nullptr;
  uint32_t ticks = 0;

  explicit Machine(const PrimFunc& fn) : f(fn) {}

  bool failed() const { return !error.empty(); }

  void fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
  }

  std::string where() const {
    return block ? " in block '" + *block + "'" : " outside any block";
  }

  // The flattened offset of buffer[indices], or -1 (with the error set) when out of range.
  int64_t offset(int b, const std::vector<PExpr>& indices, const char* what) {
    const Buffer& buf = f.buffers[b];
    const BufferState& st = bufs[b];
    int64_t off = 0;
    bool in_range = true;
    // Evaluate every index even after a bad one, so the message shows the whole access.
    int64_t idx[8];
    std::vector<int64_t> many;
    int64_t* vals = idx;
    if (indices.size() > 8) {
      many.resize(indices.size());
      vals = many.data();
    }
    for (size_t d = 0; d < indices.size(); d++) {
      vals[d] = eval_int(indices[d]);
      if (vals[d] < 0 || vals[d] >= buf.shape[d]) in_range = false;
      off += vals[d] * st.strides[d];
    }
    if (failed()) return -1;
    if (!in_range) {
      std::string at, shape;
      for (size_t d = 0; d < indices.size(); d++) {
        at += (d ? ", " : "") + std::to_string(vals[d]);
        shape += (d ? ", " : "") + std::to_string(buf.shape[d]);
      }
      fail(std::string(what) + " " + buf.name + "[" + at + "] is out of range of its shape [" +
           shape + "]" + where());
      return -1;
    }
    return off;
  }

  int64_t eval_int(const PExpr& e) {
    switch (e.kind) {
      case ExprKind::IntImm: return e.ival;
      case ExprKind::Var: return slots[e.slot];
      case ExprKind::FloatImm:
      case ExprKind::Fma:
      case ExprKind::Load: return int64_t(eval_f32(e));
      case ExprKind::Select:
        return eval_bool(e.args[0]) ? eval_int(e.args[1]) : eval_int(e.args[2]);
      case ExprKind::Unary: {
        int64_t a = eval_int(e.args[0]);
        if (e.op == Op::Neg) return -a;
        if (e.op == Op::Abs) return a < 0 ? -a : a;
        fail(std::string("'") + op_name(e.op) + "' applied to an integer" + where());
        return 0;
      }
      case ExprKind::Binary: {
        if (e.type == ScalarType::Bool) return eval_bool(e);
        if (e.type == ScalarType::F32) return int64_t(eval_f32(e));
        int64_t a = eval_int(e.args[0]), b = eval_int(e.args[1]), r = 0;
        if (tir::int_arith(e.op, a, b, &r)) return r;
        if (e.op == Op::Div || e.op == Op::Mod)
          fail("integer division by zero" + where());
        else
          fail(std::string("'") + op_name(e.op) + "' on integers" + where());
        return 0;
      }
    }
    return 0;
  }

  bool eval_bool(const PExpr& e) {
    if (e.kind != ExprKind::Binary) return eval_int(e) != 0;
    switch (e.op) {
      case Op::And: return eval_bool(e.args[0]) && eval_bool(e.args[1]);
      case Op::Or: return eval_bool(e.args[0]) || eval_bool(e.args[1]);
      case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne:
        break;
      default:
        return eval_int(e) != 0;
    }
    if (e.args[0].type == ScalarType::F32 || e.args[1].type == ScalarType::F32) {
      float a = eval_f32(e.args[0]), b = eval_f32(e.args[1]);
      switch (e.op) {
        case Op::Lt: return a < b;
        case Op::Le: return a <= b;
        case Op::Gt: return a > b;
        case Op::Ge: return a >= b;
        case Op::Eq: return a == b;
        default: return a != b;
      }
    }
    int64_t a = eval_int(e.args[0]), b = eval_int(e.args[1]), r = 0;
    tir::int_compare(e.op, a, b, &r);  // And and Or returned above: a comparison
    return r != 0;
  }

  float eval_f32(const PExpr& e) {
    if (e.type != ScalarType::F32) return float(eval_int(e));
    switch (e.kind) {
      case ExprKind::FloatImm: return e.fval;
      case ExprKind::IntImm: return float(e.ival);
      case ExprKind::Var: return float(slots[e.slot]);
      case ExprKind::Load: {
        int64_t off = offset(e.buffer, e.args, "load of");
        return off < 0 ? 0.0f : bufs[e.buffer].t.data[size_t(off)];
      }
      case ExprKind::Select:
        return eval_bool(e.args[0]) ? eval_f32(e.args[1]) : eval_f32(e.args[2]);
      case ExprKind::Fma:  // one rounding, as the hardware instruction
        return std::fmaf(eval_f32(e.args[0]), eval_f32(e.args[1]), eval_f32(e.args[2]));
      case ExprKind::Unary: {
        float a = eval_f32(e.args[0]);
        switch (e.op) {
          case Op::Neg: return -a;
          case Op::Exp: return std::exp(a);
          case Op::Log: return std::log(a);
          case Op::Sqrt: return std::sqrt(a);
          case Op::Abs: return std::fabs(a);
          default: return a;
        }
      }
      case ExprKind::Binary: {
        float a = eval_f32(e.args[0]), b = eval_f32(e.args[1]);
        switch (e.op) {
          case Op::Add: return a + b;
          case Op::Sub: return a - b;
          case Op::Mul: return a * b;
          case Op::Div: return a / b;
          case Op::Mod: return std::fmod(a, b);
          case Op::Min: return b < a ? b : a;
          case Op::Max: return b > a ? b : a;
          default:
            fail(std::string("'") + op_name(e.op) + "' on f32" + where());
            return 0;
        }
      }
    }
    return 0;
  }

  // ---- statements ---------------------------------------------------------------------------

  bool poll() {
    if (++ticks % 65536 == 0 && interrupt && interrupt->load(std::memory_order_relaxed)) {
      fail("interrupted");
      return false;
    }
    return true;
  }

  void run(const PStmt& s) {
    switch (s.kind) {
      case StmtKind::For:
        for (int64_t i = 0; i < s.extent && !failed(); i++) {
          slots[s.slot] = i;
          if (!poll()) return;
          run(*s.body);
        }
        break;
      case StmtKind::Block: {
        const std::string* outer = block;
        block = &s.name;
        for (const auto& it : s.iters) slots[it.slot] = eval_int(it.binding);
        if (failed()) return;
        if (!s.has_predicate || eval_bool(s.predicate)) {
          bool at_start = true;
          for (const auto& it : s.iters) {
            int64_t v = slots[it.slot];
            if (v < 0 || v >= it.extent) {
              fail("iteration variable '" + it.name + "' = " + std::to_string(v) +
                   " is outside its domain [0, " + std::to_string(it.extent) + ")" + where());
              return;
            }
            if (it.kind == IterKind::Reduce && v != 0) at_start = false;
          }
          if (s.init && at_start) run(*s.init);
          if (!failed()) run(*s.body);
        }
        block = outer;
        break;
      }
      case StmtKind::Store: {
        float v = eval_f32(s.value);
        int64_t off = offset(s.buffer, s.indices, "store to");
        if (off >= 0) bufs[s.buffer].t.data[size_t(off)] = v;
        break;
      }
      case StmtKind::Seq:
        for (const auto& k : s.stmts) {
          if (failed()) return;
          run(*k);
        }
        break;
      case StmtKind::If:
        if (eval_bool(s.predicate) && !failed()) run(*s.body);
        break;
      case StmtKind::Allocate: {
        // Fresh (zeroed) storage each time the allocation is entered, as a new work-group's
        // __local memory or a new thread's registers would be (though never read uninitialised
        // by correct code, zero makes any run of the oracle deterministic).
        auto& data = bufs[s.buffer].t.data;
        std::fill(data.data(), data.data() + data.size(), 0.0f);
        run(*s.body);
        break;
      }
      case StmtKind::Barrier:
        break;
    }
  }
};

}  // namespace

// ---- interpret ------------------------------------------------------------------------------

namespace {

bool interpret_unguarded(const PrimFunc& f, const std::vector<const tensor::Tensor*>& args,
                         tensor::Tensor* out, std::string* error,
                         const std::atomic<bool>* interrupt) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  if (!f.body) return fail("function '" + f.name + "' has no body");
  if (f.output < 0 || size_t(f.output) >= f.buffers.size())
    return fail("function '" + f.name + "' has no output buffer");
  if (args.size() != f.params.size())
    return fail("function '" + f.name + "' takes " + std::to_string(f.params.size()) +
                " arguments but got " + std::to_string(args.size()));

  Machine m(f);
  m.interrupt = interrupt;
  m.bufs.resize(f.buffers.size());
  for (size_t b = 0; b < f.buffers.size(); b++) {
    std::string why;
    if (!tensor::check_shape(f.buffers[b].shape, &why))
      return fail("buffer '" + f.buffers[b].name + "': " + why);
    const auto& shape = f.buffers[b].shape;
    auto& st = m.bufs[b];
    st.strides.assign(shape.size(), 1);
    int64_t n = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      st.strides[d] = n;
      n *= shape[d];
    }
    if (!tensor::zeros(shape, &st.t, &why))
      return fail(why + " (buffer '" + f.buffers[b].name + "' of '" + f.name + "')");
  }
  for (size_t i = 0; i < args.size(); i++) {
    int b = f.params[i];
    if (b < 0 || size_t(b) >= f.buffers.size())
      return fail("parameter #" + std::to_string(i) + " names no buffer");
    if (!args[i] || args[i]->shape != f.buffers[b].shape)
      return fail("argument '" + f.buffers[b].name + "' does not have the buffer's shape");
    std::copy(args[i]->data.data(), args[i]->data.data() + args[i]->numel(),
              m.bufs[b].t.data.data());
  }

  Preparer p(f);
  auto body = p.stmt(f.body.get());
  if (!body) return fail("function '" + f.name + "': " + p.error);
  m.slots.assign(size_t(p.slots), 0);
  m.run(*body);
  if (m.failed()) return fail(m.error);

  if (out) *out = std::move(m.bufs[f.output].t);
  return true;
}

}  // namespace

// The buffers are error values already; this catches the small allocations (the prepared
// copy of the function, its slots, messages), so no exception leaves the library.
bool interpret(const PrimFunc& f, const std::vector<const tensor::Tensor*>& args,
               tensor::Tensor* out, std::string* error, const std::atomic<bool>* interrupt) {
  try {
    return interpret_unguarded(f, args, out, error, interrupt);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  if (error) *error = "out of memory interpreting '" + f.name + "'";
  return false;
}

}  // namespace descent::tir
