// [SECTION] index: names | expression builders | statement builders | PrimFunc |
// visiting (blocks, find_block) | substitute / uses_var / equal | simplify | verify.
#include "tensor/tir.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "tensor/index_eval.h"

namespace descent::tir {

// ---- names ----------------------------------------------------------------------------

const char* scope_name(Scope s) {
  switch (s) {
    case Scope::Global: return "global";
    case Scope::Local: return "local";
    case Scope::Shared: return "shared";
  }
  return "?";
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Add: return "add";
    case Op::Sub: return "sub";
    case Op::Mul: return "mul";
    case Op::Div: return "div";
    case Op::Mod: return "mod";
    case Op::Min: return "min";
    case Op::Max: return "max";
    case Op::Lt: return "lt";
    case Op::Le: return "le";
    case Op::Gt: return "gt";
    case Op::Ge: return "ge";
    case Op::Eq: return "eq";
    case Op::Ne: return "ne";
    case Op::And: return "and";
    case Op::Or: return "or";
    case Op::Neg: return "neg";
    case Op::Exp: return "exp";
    case Op::Log: return "log";
    case Op::Sqrt: return "sqrt";
    case Op::Abs: return "abs";
  }
  return "?";
}

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::Bound: return "bound";
  }
  return "?";
}

// ---- expression builders ----------------------------------------------------------------

ExprPtr int_imm(int64_t v) {
  auto e = std::make_unique<Expr>(ExprKind::IntImm, ScalarType::Int);
  e->ival = v;
  return e;
}

ExprPtr float_imm(double v) {
  auto e = std::make_unique<Expr>(ExprKind::FloatImm, ScalarType::F32);
  e->fval = v;
  return e;
}

ExprPtr var(const std::string& name) {
  auto e = std::make_unique<Expr>(ExprKind::Var, ScalarType::Int);
  e->name = name;
  return e;
}

ExprPtr load(int buffer, std::vector<ExprPtr> indices) {
  auto e = std::make_unique<Expr>(ExprKind::Load, ScalarType::F32);
  e->buffer = buffer;
  e->args = std::move(indices);
  return e;
}

static bool is_comparison(Op op) {
  return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq ||
         op == Op::Ne;
}

ExprPtr binary(Op op, ExprPtr a, ExprPtr b) {
  ScalarType t;
  if (is_comparison(op) || op == Op::And || op == Op::Or)
    t = ScalarType::Bool;
  else if (a->type == ScalarType::F32 || b->type == ScalarType::F32)
    t = ScalarType::F32;  // mixing happens only through f32 literals; the result is f32
  else
    t = a->type;
  auto e = std::make_unique<Expr>(ExprKind::Binary, t);
  e->op = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr unary(Op op, ExprPtr a) {
  // Neg and Abs keep the operand's type (they appear in index math too); the transcendental
  // functions exist only on f32.
  ScalarType t = (op == Op::Neg || op == Op::Abs) ? a->type : ScalarType::F32;
  auto e = std::make_unique<Expr>(ExprKind::Unary, t);
  e->op = op;
  e->args.push_back(std::move(a));
  return e;
}

ExprPtr fma(ExprPtr a, ExprPtr b, ExprPtr c) {
  auto e = std::make_unique<Expr>(ExprKind::Fma, ScalarType::F32);
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  e->args.push_back(std::move(c));
  return e;
}

ExprPtr select(ExprPtr cond, ExprPtr a, ExprPtr b) {
  auto e = std::make_unique<Expr>(ExprKind::Select, a->type);
  e->args.push_back(std::move(cond));
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr clone(const Expr& e) {
  auto c = std::make_unique<Expr>(e.kind, e.type);
  c->ival = e.ival;
  c->fval = e.fval;
  c->name = e.name;
  c->buffer = e.buffer;
  c->op = e.op;
  c->args.reserve(e.args.size());
  for (const auto& a : e.args) c->args.push_back(clone(*a));
  return c;
}

// ---- statement builders -------------------------------------------------------------------

StmtPtr make_for(const std::string& var, int64_t extent, StmtPtr body, ForKind kind) {
  auto s = std::make_unique<Stmt>(StmtKind::For);
  s->var = var;
  s->extent = extent;
  s->for_kind = kind;
  s->body = std::move(body);
  return s;
}

StmtPtr make_store(int buffer, std::vector<ExprPtr> indices, ExprPtr value) {
  auto s = std::make_unique<Stmt>(StmtKind::Store);
  s->buffer = buffer;
  s->indices = std::move(indices);
  s->value = std::move(value);
  return s;
}

StmtPtr make_seq(std::vector<StmtPtr> stmts) {
  auto s = std::make_unique<Stmt>(StmtKind::Seq);
  s->stmts = std::move(stmts);
  return s;
}

StmtPtr make_if(ExprPtr cond, StmtPtr body) {
  auto s = std::make_unique<Stmt>(StmtKind::If);
  s->predicate = std::move(cond);
  s->body = std::move(body);
  return s;
}

StmtPtr clone(const Stmt& s) {
  auto c = std::make_unique<Stmt>(s.kind);
  c->var = s.var;
  c->extent = s.extent;
  c->for_kind = s.for_kind;
  c->thread_tag = s.thread_tag;
  c->unroll_factor = s.unroll_factor;
  c->intrinsic = s.intrinsic;
  c->name = s.name;
  for (const auto& it : s.iters) {
    IterVar v;
    v.name = it.name;
    v.extent = it.extent;
    v.kind = it.kind;
    if (it.binding) v.binding = clone(*it.binding);
    c->iters.push_back(std::move(v));
  }
  if (s.init) c->init = clone(*s.init);
  if (s.predicate) c->predicate = clone(*s.predicate);
  c->buffer = s.buffer;
  for (const auto& i : s.indices) c->indices.push_back(clone(*i));
  if (s.value) c->value = clone(*s.value);
  if (s.body) c->body = clone(*s.body);
  for (const auto& k : s.stmts) c->stmts.push_back(k ? clone(*k) : nullptr);
  return c;
}

// ---- PrimFunc -------------------------------------------------------------------------------

PrimFunc::PrimFunc(const PrimFunc& other)
    : name(other.name),
      buffers(other.buffers),
      params(other.params),
      output(other.output),
      body(other.body ? clone(*other.body) : nullptr) {}

PrimFunc& PrimFunc::operator=(const PrimFunc& other) {
  if (this == &other) return *this;
  name = other.name;
  buffers = other.buffers;
  params = other.params;
  output = other.output;
  body = other.body ? clone(*other.body) : nullptr;
  return *this;
}

int PrimFunc::find_buffer(const std::string& buffer_name) const {
  for (size_t i = 0; i < buffers.size(); i++)
    if (buffers[i].name == buffer_name) return int(i);
  return -1;
}

// ---- visiting -------------------------------------------------------------------------------

static void collect_blocks(Stmt* s, std::vector<Stmt*>& loops, std::vector<BlockSite>& out) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::For:
      loops.push_back(s);
      collect_blocks(s->body.get(), loops, out);
      loops.pop_back();
      break;
    case StmtKind::Block:
      out.push_back({s, loops});
      // Nested blocks (none are produced today) still get visited so a pass never misses one.
      collect_blocks(s->init.get(), loops, out);
      collect_blocks(s->body.get(), loops, out);
      break;
    case StmtKind::Seq:
      for (auto& k : s->stmts) collect_blocks(k.get(), loops, out);
      break;
    case StmtKind::If:
    case StmtKind::Allocate:
      collect_blocks(s->body.get(), loops, out);
      break;
    case StmtKind::Store:
    case StmtKind::Barrier:
      break;
  }
}

std::vector<BlockSite> blocks(PrimFunc& f) {
  std::vector<BlockSite> out;
  std::vector<Stmt*> loops;
  collect_blocks(f.body.get(), loops, out);
  return out;
}

Stmt* find_block(PrimFunc& f, const std::string& name) {
  for (auto& site : blocks(f))
    if (site.block->name == name) return site.block;
  return nullptr;
}

// ---- substitute / uses_var / equal ----------------------------------------------------------

ExprPtr substitute(const Expr& e, const std::string& name, const Expr& with) {
  if (e.kind == ExprKind::Var && e.name == name) return clone(with);
  auto c = std::make_unique<Expr>(e.kind, e.type);
  c->ival = e.ival;
  c->fval = e.fval;
  c->name = e.name;
  c->buffer = e.buffer;
  c->op = e.op;
  for (const auto& a : e.args) c->args.push_back(substitute(*a, name, with));
  return c;
}

bool uses_var(const Expr& e, const std::string& name) {
  if (e.kind == ExprKind::Var) return e.name == name;
  for (const auto& a : e.args)
    if (uses_var(*a, name)) return true;
  return false;
}

bool equal(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.type != b.type || a.args.size() != b.args.size()) return false;
  switch (a.kind) {
    case ExprKind::IntImm:
      if (a.ival != b.ival) return false;
      break;
    case ExprKind::FloatImm:
      // Bitwise on the f32 value, so nan equals nan and 0.0 differs from -0.0.
      if (!(float(a.fval) == float(b.fval) || (std::isnan(a.fval) && std::isnan(b.fval))) ||
          std::signbit(a.fval) != std::signbit(b.fval))
        return false;
      break;
    case ExprKind::Var:
      if (a.name != b.name) return false;
      break;
    case ExprKind::Load:
      if (a.buffer != b.buffer) return false;
      break;
    case ExprKind::Binary:
    case ExprKind::Unary:
      if (a.op != b.op) return false;
      break;
    case ExprKind::Select:
    case ExprKind::Fma:
      break;
  }
  for (size_t i = 0; i < a.args.size(); i++)
    if (!equal(*a.args[i], *b.args[i])) return false;
  return true;
}

// ---- simplify -------------------------------------------------------------------------------
//
// Only rewrites that are exact in every case: integer folding (never dividing by zero), the
// integer identities x+0, x-0, x*1, x*0, x/1, x%1, regrouping constants of nested adds and
// products, and f32 folding computed in f32 (what the program would have computed anyway).
// f32 identities are limited to x*1 and x/1: x+0 turns -0 into +0 and x*0 is nan for inf.

static bool is_int(const Expr& e, int64_t v) {
  return e.kind == ExprKind::IntImm && e.type == ScalarType::Int && e.ival == v;
}
static bool is_int_const(const Expr& e) {
  return e.kind == ExprKind::IntImm && e.type == ScalarType::Int;
}
static bool is_float(const Expr& e, double v) {
  return e.kind == ExprKind::FloatImm && e.fval == v;
}

static bool fold_f32(Op op, float a, float b, float* r) {
  switch (op) {
    case Op::Add: *r = a + b; return true;
    case Op::Sub: *r = a - b; return true;
    case Op::Mul: *r = a * b; return true;
    case Op::Div: *r = a / b; return true;
    case Op::Min: *r = b < a ? b : a; return true;  // the shared max/min rule (lower.cpp)
    case Op::Max: *r = b > a ? b : a; return true;
    default: return false;
  }
}

static ExprPtr simplify_binary(Op op, ExprPtr a, ExprPtr b, ScalarType type) {
  if (type == ScalarType::Int && is_int_const(*a) && is_int_const(*b)) {
    int64_t r;
    if (int_arith(op, a->ival, b->ival, &r)) return int_imm(r);
  }
  if (type == ScalarType::F32 && a->kind == ExprKind::FloatImm &&
      b->kind == ExprKind::FloatImm) {
    float r;
    if (fold_f32(op, float(a->fval), float(b->fval), &r)) return float_imm(r);
  }
  if (type == ScalarType::Int) {
    switch (op) {
      case Op::Add:
        if (is_int(*b, 0)) return a;
        if (is_int(*a, 0)) return b;
        // Constants to the right, then (x + c1) + c2 -> x + (c1 + c2).
        if (is_int_const(*a)) std::swap(a, b);
        if (is_int_const(*b) && a->kind == ExprKind::Binary && a->op == Op::Add &&
            is_int_const(*a->args[1])) {
          int64_t c = a->args[1]->ival + b->ival;
          return simplify_binary(Op::Add, std::move(a->args[0]), int_imm(c), type);
        }
        break;
      case Op::Sub:
        if (is_int(*b, 0)) return a;
        if (equal(*a, *b)) return int_imm(0);
        break;
      case Op::Mul:
        if (is_int(*a, 0) || is_int(*b, 0)) return int_imm(0);
        if (is_int(*b, 1)) return a;
        if (is_int(*a, 1)) return b;
        // Constants to the right, then (x * c1) * c2 -> x * (c1 * c2).
        if (is_int_const(*a)) std::swap(a, b);
        if (is_int_const(*b) && a->kind == ExprKind::Binary && a->op == Op::Mul &&
            is_int_const(*a->args[1])) {
          int64_t c = a->args[1]->ival * b->ival;
          return simplify_binary(Op::Mul, std::move(a->args[0]), int_imm(c), type);
        }
        break;
      case Op::Div:
        if (is_int(*b, 1)) return a;
        break;
      case Op::Mod:
        if (is_int(*b, 1)) return int_imm(0);
        break;
      default:
        break;
    }
  } else if (type == ScalarType::F32) {
    if (op == Op::Mul && is_float(*b, 1.0) && a->type == ScalarType::F32) return a;
    if (op == Op::Mul && is_float(*a, 1.0) && b->type == ScalarType::F32) return b;
    if (op == Op::Div && is_float(*b, 1.0) && a->type == ScalarType::F32) return a;
  }
  auto e = std::make_unique<Expr>(ExprKind::Binary, type);
  e->op = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr simplify(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var:
      return clone(e);
    case ExprKind::Load: {
      auto c = std::make_unique<Expr>(e.kind, e.type);
      c->buffer = e.buffer;
      for (const auto& a : e.args) c->args.push_back(simplify(*a));
      return c;
    }
    case ExprKind::Binary:
      return simplify_binary(e.op, simplify(*e.args[0]), simplify(*e.args[1]), e.type);
    case ExprKind::Unary: {
      ExprPtr a = simplify(*e.args[0]);
      if (e.op == Op::Neg && a->kind == ExprKind::IntImm && a->type == ScalarType::Int)
        return int_imm(-a->ival);
      if (e.op == Op::Neg && a->kind == ExprKind::FloatImm) return float_imm(-float(a->fval));
      auto c = std::make_unique<Expr>(e.kind, e.type);
      c->op = e.op;
      c->args.push_back(std::move(a));
      return c;
    }
    case ExprKind::Select:
    case ExprKind::Fma: {
      auto c = std::make_unique<Expr>(e.kind, e.type);
      for (const auto& a : e.args) c->args.push_back(simplify(*a));
      return c;
    }
  }
  return clone(e);
}

// ---- verify ---------------------------------------------------------------------------------

namespace {

// A closed integer interval; `known` false when the expression is not plain index math.
struct Range {
  bool known = false;
  int64_t lo = 0, hi = 0;
};

struct Verifier {
  const PrimFunc& f;
  std::string error;
  // Every name in scope on the current path, with its domain (loop extent or iter extent).
  std::vector<std::pair<std::string, int64_t>> scope;
  int guards = 0;  // enclosing Ifs and block predicates: bindings may overshoot under them
  // Buffers that have an Allocate somewhere: they exist only inside it, so every access
  // must lie under one (compacted indices are relative to the loops around that Allocate).
  std::vector<bool> has_allocate;
  std::vector<int> live;  // per buffer: how many of its Allocates enclose the current path

  explicit Verifier(const PrimFunc& fn)
      : f(fn), has_allocate(fn.buffers.size(), false), live(fn.buffers.size(), 0) {}

  void find_allocates(const Stmt* s) {
    if (!s) return;
    if (s->kind == StmtKind::Allocate && s->buffer >= 0 && size_t(s->buffer) < f.buffers.size())
      has_allocate[s->buffer] = true;
    find_allocates(s->init.get());
    find_allocates(s->body.get());
    for (const auto& c : s->stmts) find_allocates(c.get());
  }

  bool in_scope(int buffer, const char* what, const std::string& where) {
    if (!has_allocate[buffer] || live[buffer] > 0) return true;
    return fail(std::string(what) + " '" + f.buffers[buffer].name + "' outside its allocation (in " +
                where + ")");
  }

  const std::pair<std::string, int64_t>* lookup(const std::string& name) const {
    for (auto it = scope.rbegin(); it != scope.rend(); ++it)
      if (it->first == name) return &*it;
    return nullptr;
  }

  bool fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
    return false;
  }

  bool bind(const std::string& name, int64_t extent, const std::string& what) {
    if (lookup(name)) return fail(what + " '" + name + "' reuses a name already bound around it");
    scope.push_back({name, extent});
    return true;
  }

  Range range(const Expr& e) const {
    Range r;
    switch (e.kind) {
      case ExprKind::IntImm:
        r = {true, e.ival, e.ival};
        break;
      case ExprKind::Var:
        if (auto* v = lookup(e.name)) r = {true, 0, v->second - 1};
        break;
      case ExprKind::Binary: {
        Range a = range(*e.args[0]), b = range(*e.args[1]);
        if (!a.known || !b.known) break;
        switch (e.op) {
          case Op::Add: r = {true, a.lo + b.lo, a.hi + b.hi}; break;
          case Op::Sub: r = {true, a.lo - b.hi, a.hi - b.lo}; break;
          case Op::Mul: {
            int64_t p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
            r = {true, std::min({p[0], p[1], p[2], p[3]}), std::max({p[0], p[1], p[2], p[3]})};
            break;
          }
          case Op::Div:
            if (b.lo == b.hi && b.lo > 0 && a.lo >= 0) r = {true, a.lo / b.lo, a.hi / b.lo};
            break;
          case Op::Mod:
            if (b.lo == b.hi && b.lo > 0 && a.lo >= 0)
              r = {true, 0, std::min(a.hi, b.lo - 1)};
            break;
          case Op::Min: r = {true, std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; break;
          case Op::Max: r = {true, std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; break;
          default: break;
        }
        break;
      }
      default:
        break;
    }
    return r;
  }

  bool expr(const Expr& e, const std::string& where) {
    switch (e.kind) {
      case ExprKind::Var:
        if (!lookup(e.name))
          return fail("variable '" + e.name + "' is not bound (in " + where + ")");
        return true;
      case ExprKind::Load:
        if (e.buffer < 0 || size_t(e.buffer) >= f.buffers.size())
          return fail("load of buffer #" + std::to_string(e.buffer) + " which does not exist (in " +
                      where + ")");
        if (e.args.size() != f.buffers[e.buffer].shape.size())
          return fail("load of '" + f.buffers[e.buffer].name + "' has " +
                      std::to_string(e.args.size()) + " indices but the buffer has rank " +
                      std::to_string(f.buffers[e.buffer].shape.size()) + " (in " + where + ")");
        if (!in_scope(e.buffer, "load of", where)) return false;
        break;
      case ExprKind::Binary:
        if (e.args.size() != 2) return fail("binary '" + std::string(op_name(e.op)) +
                                            "' without two operands (in " + where + ")");
        break;
      case ExprKind::Unary:
        if (e.args.size() != 1) return fail("unary '" + std::string(op_name(e.op)) +
                                            "' without one operand (in " + where + ")");
        break;
      case ExprKind::Select:
        if (e.args.size() != 3) return fail("select without three operands (in " + where + ")");
        break;
      case ExprKind::Fma:
        if (e.args.size() != 3) return fail("fma without three operands (in " + where + ")");
        break;
      default:
        break;
    }
    for (const auto& a : e.args)
      if (!a || !expr(*a, where)) return a ? false : fail("missing operand (in " + where + ")");
    return true;
  }

  bool stmt(const Stmt* s, const std::string& where) {
    if (!s) return fail("missing statement (in " + where + ")");
    switch (s->kind) {
      case StmtKind::For: {
        if (s->extent < 1)
          return fail("loop '" + s->var + "' has extent " + std::to_string(s->extent));
        if (!bind(s->var, s->extent, "loop")) return false;
        bool ok = stmt(s->body.get(), where);
        scope.pop_back();
        return ok;
      }
      case StmtKind::Block: {
        std::string here = "block '" + s->name + "'";
        // Bindings and the predicate see the enclosing loops only.
        for (const auto& it : s->iters) {
          if (!it.binding) return fail("iteration variable '" + it.name + "' of " + here +
                                       " has no binding");
          if (!expr(*it.binding, here)) return false;
          if (it.extent < 1)
            return fail("iteration variable '" + it.name + "' of " + here + " has extent " +
                        std::to_string(it.extent));
        }
        if (s->predicate && !expr(*s->predicate, here)) return false;
        // A split whose factor does not divide makes bindings overshoot; the predicate (or
        // an enclosing If) guards those iterations, so only the lower bound is checked there.
        bool guarded = guards > 0 || s->predicate != nullptr;
        for (const auto& it : s->iters) {
          Range r = range(*it.binding);
          if (!r.known) continue;
          if (r.lo < 0 || (!guarded && r.hi > it.extent - 1))
            return fail("binding of '" + it.name + "' in " + here + " ranges over [" +
                        std::to_string(r.lo) + ", " + std::to_string(r.hi) +
                        "] but its extent is " + std::to_string(it.extent));
        }
        size_t mark = scope.size();
        for (const auto& it : s->iters)
          if (!bind(it.name, it.extent, "iteration variable")) return false;
        bool ok = (!s->init || stmt(s->init.get(), here)) && stmt(s->body.get(), here);
        scope.resize(mark);
        return ok;
      }
      case StmtKind::Store: {
        if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size())
          return fail("store to buffer #" + std::to_string(s->buffer) +
                      " which does not exist (in " + where + ")");
        const Buffer& b = f.buffers[s->buffer];
        if (s->indices.size() != b.shape.size())
          return fail("store to '" + b.name + "' has " + std::to_string(s->indices.size()) +
                      " indices but the buffer has rank " + std::to_string(b.shape.size()) +
                      " (in " + where + ")");
        if (!in_scope(s->buffer, "store to", where)) return false;
        for (const auto& i : s->indices)
          if (!i || !expr(*i, where)) return i ? false : fail("missing index (in " + where + ")");
        if (!s->value) return fail("store to '" + b.name + "' without a value (in " + where + ")");
        return expr(*s->value, where);
      }
      case StmtKind::Seq:
        for (const auto& k : s->stmts)
          if (!stmt(k.get(), where)) return false;
        return true;
      case StmtKind::If: {
        if (!s->predicate) return fail("if without a condition (in " + where + ")");
        if (!expr(*s->predicate, where)) return false;
        guards++;
        bool ok = stmt(s->body.get(), where);
        guards--;
        return ok;
      }
      case StmtKind::Allocate:
        if (s->buffer < 0 || size_t(s->buffer) >= f.buffers.size())
          return fail("allocation of buffer #" + std::to_string(s->buffer) +
                      " which does not exist");
        {
          live[s->buffer]++;
          bool ok = stmt(s->body.get(), where);
          live[s->buffer]--;
          return ok;
        }
      case StmtKind::Barrier:
        return true;
    }
    return true;
  }
};

}  // namespace

bool verify(const PrimFunc& f, std::string* error) {
  for (size_t i = 0; i < f.buffers.size(); i++) {
    const Buffer& b = f.buffers[i];
    if (b.shape.empty()) {
      if (error) *error = "buffer '" + b.name + "' has rank 0";
      return false;
    }
    for (int64_t d : b.shape)
      if (d < 1) {
        if (error) *error = "buffer '" + b.name + "' has a dim of " + std::to_string(d);
        return false;
      }
  }
  for (int p : f.params)
    if (p < 0 || size_t(p) >= f.buffers.size()) {
      if (error) *error = "parameter buffer #" + std::to_string(p) + " does not exist";
      return false;
    }
  if (f.output < 0 || size_t(f.output) >= f.buffers.size()) {
    if (error) *error = "function '" + f.name + "' has no output buffer";
    return false;
  }
  Verifier v(f);
  v.find_allocates(f.body.get());
  if (!v.stmt(f.body.get(), "function '" + f.name + "'")) {
    if (error) *error = v.error;
    return false;
  }
  return true;
}

ExprPtr inline_bindings(const Expr& e, const Stmt& block) {
  ExprPtr r = clone(e);
  for (const auto& it : block.iters)
    if (it.binding) r = substitute(*r, it.name, *it.binding);
  return simplify(*r);
}

void inline_bindings(Stmt* s, const Stmt& block) {
  if (!s) return;
  for (auto& i : s->indices)
    if (i) i = inline_bindings(*i, block);
  if (s->value) s->value = inline_bindings(*s->value, block);
  if (s->predicate) s->predicate = inline_bindings(*s->predicate, block);
  for (auto& it : s->iters)
    if (it.binding) it.binding = inline_bindings(*it.binding, block);
  inline_bindings(s->init.get(), block);
  inline_bindings(s->body.get(), block);
  for (auto& k : s->stmts) inline_bindings(k.get(), block);
}

}  // namespace descent::tir
