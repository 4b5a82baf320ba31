// Schedules, the block primitives: they move, merge, split and stage whole blocks, where
// schedule.cpp's loop primitives only reshape the loops around them.
//
// [SECTION] Helpers        expression walkers, block facts (what it reads and writes),
//                          statement surgery, the copy-verify-commit discipline
// [SECTION] Regions        which elements of a buffer one iteration of a loop touches
// [SECTION] Stage fusion   compute_at, reverse_compute_at, compute_inline
// [SECTION] Staging        cache_read, cache_write, compact_buffers
// [SECTION] Reductions     decompose_reduction, rfactor
//
// The one idea behind compute_at, reverse_compute_at and compact_buffers is the REGION: the
// box of a buffer's elements that the blocks under a loop L touch during one iteration of L.
// Block bindings are affine in the loop variables, so each index of an access is
//   sum(c_v * v for the loops at or above L)  +  [lo, hi]  (the loops inside L sweep it)
// and a region is one such form per dimension. Moving a producer under L means computing
// exactly the region its consumers read there (TVM's compute_at does the same with integer
// sets); compacting a staging buffer means allocating only that box, per iteration of L.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "tensor/schedule.h"

namespace descent::tensor {
namespace sched {
using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::IterKind;
using tir::IterVar;
using tir::Op;
using tir::PrimFunc;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtPtr;

// ============================================================================
// [SECTION] Helpers
// ============================================================================

namespace {

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + xs[i];
  return out;
}

bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

// Every primitive transforms a deep copy and commits it only when it is well formed: a
// refused step leaves the caller's function exactly as it was, and tir::verify turns our
// own mistakes into an "internal error" message instead of a wrong answer later.
bool commit(PrimFunc& f, std::string* error,
            const std::function<bool(PrimFunc&, std::string*)>& fn) {
  PrimFunc g = f;
  if (!fn(g, error)) return false;
  std::string why;
  if (!tir::verify(g, &why))
    return fail(error, "internal error: the transformed function is malformed: " + why);
  f = std::move(g);
  return true;
}

// Calls fn on every owning expression pointer in the tree of e (children first), so fn may
// replace the node it is given.
void rewrite_expr(ExprPtr& e, const std::function<void(ExprPtr&)>& fn) {
  if (!e) return;
  for (ExprPtr& a : e->args) rewrite_expr(a, fn);
  fn(e);
}

void visit_expr(const Expr& e, const std::function<void(const Expr&)>& fn) {
  fn(e);
  for (const ExprPtr& a : e.args)
    if (a) visit_expr(*a, fn);
}

// Every root expression of a statement tree: Store indices and values, block predicates,
// If conditions. Bindings are left out: they speak of loops, never of buffers.
void statement_exprs(Stmt* s, const std::function<void(ExprPtr&)>& fn) {
  if (!s) return;
  for (ExprPtr& i : s->indices) fn(i);
  if (s->value) fn(s->value);
  if (s->predicate) fn(s->predicate);
  statement_exprs(s->init.get(), fn);
  statement_exprs(s->body.get(), fn);
  for (StmtPtr& c : s->stmts) statement_exprs(c.get(), fn);
}

void stores_in(Stmt* s, std::vector<Stmt*>* out) {
  if (!s) return;
  if (s->kind == StmtKind::Store) out->push_back(s);
  stores_in(s->init.get(), out);
  stores_in(s->body.get(), out);
  for (StmtPtr& c : s->stmts) stores_in(c.get(), out);
}

std::vector<Stmt*> stores_of(Stmt* block) {
  std::vector<Stmt*> out;
  stores_in(block->init.get(), &out);
  stores_in(block->body.get(), &out);
  return out;
}

bool block_reads(Stmt* block, int buffer) {
  bool hit = false;
  statement_exprs(block, [&](ExprPtr& root) {
    visit_expr(*root, [&](const Expr& e) {
      if (e.kind == ExprKind::Load && e.buffer == buffer) hit = true;
    });
  });
  return hit;
}

bool block_writes(Stmt* block, int buffer) {
  for (Stmt* s : stores_of(block))
    if (s->buffer == buffer) return true;
  return false;
}

std::set<int> buffers_read(Stmt* block) {
  std::set<int> out;
  statement_exprs(block, [&](ExprPtr& root) {
    visit_expr(*root, [&](const Expr& e) {
      if (e.kind == ExprKind::Load) out.insert(e.buffer);
    });
  });
  return out;
}

// The one buffer a block writes, or -1 (none, or several).
int written_buffer(Stmt* block) {
  int b = -1;
  for (Stmt* s : stores_of(block)) {
    if (b >= 0 && s->buffer != b) return -1;
    b = s->buffer;
  }
  return b;
}

std::string buffer_name(const PrimFunc& f, int b) { return f.buffers[b].name; }

const IterVar* find_iter(const Stmt* block, const std::string& name) {
  for (const IterVar& iv : block->iters)
    if (iv.name == name) return &iv;
  return nullptr;
}

bool has_reduce_iter(const Stmt* block) {
  for (const IterVar& iv : block->iters)
    if (iv.kind == IterKind::Reduce) return true;
  return false;
}

// Maps each of `indices` (all Vars naming distinct iteration variables of `block`) to the
// iteration variable's position; false when an index is anything else.
bool indices_are_iters(const Stmt* block, const std::vector<const Expr*>& indices,
                       std::vector<int>* iter_of_dim) {
  iter_of_dim->clear();
  std::set<int> seen;
  for (const Expr* e : indices) {
    if (e->kind != ExprKind::Var) return false;
    int found = -1;
    for (size_t k = 0; k < block->iters.size(); ++k)
      if (block->iters[k].name == e->name) found = int(k);
    if (found < 0 || !seen.insert(found).second) return false;
    iter_of_dim->push_back(found);
  }
  return true;
}

std::vector<const Expr*> raw(const std::vector<ExprPtr>& xs) {
  std::vector<const Expr*> out;
  for (const ExprPtr& x : xs) out.push_back(x.get());
  return out;
}

// Substitutes several variables at once. Doing it one name at a time would be wrong when
// the replacements mention the names being replaced (inlining Y[vj, vi] into a block whose
// own iteration variables are also called vi and vj).
ExprPtr substitute_all(const Expr& e, const std::map<std::string, const Expr*>& with) {
  if (e.kind == ExprKind::Var) {
    auto it = with.find(e.name);
    if (it != with.end()) return tir::clone(*it->second);
  }
  ExprPtr out = tir::clone(e);
  for (size_t k = 0; k < e.args.size(); ++k)
    if (e.args[k]) out->args[k] = substitute_all(*e.args[k], with);
  return out;
}

ExprPtr conjunction(std::vector<ExprPtr> terms) {
  ExprPtr out;
  for (ExprPtr& t : terms)
    out = out ? tir::binary(Op::And, std::move(out), std::move(t)) : std::move(t);
  return out;
}

// Splits a predicate into its &&-ed conditions (the form split leaves behind).
void conjuncts(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::Binary && e.op == Op::And) {
    conjuncts(*e.args[0], out);
    conjuncts(*e.args[1], out);
  } else {
    out->push_back(&e);
  }
}

bool uses_any(const Expr& e, const std::set<std::string>& names) {
  bool hit = false;
  visit_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Var && names.count(x.name)) hit = true;
  });
  return hit;
}

// The conditions of `pred` that mention none of `dropped` (null when none is left).
ExprPtr predicate_without(const Expr* pred, const std::set<std::string>& dropped) {
  if (!pred) return nullptr;
  std::vector<const Expr*> parts;
  conjuncts(*pred, &parts);
  std::vector<ExprPtr> kept;
  for (const Expr* p : parts)
    if (!uses_any(*p, dropped)) kept.push_back(tir::clone(*p));
  return conjunction(std::move(kept));
}

// ---- statement surgery ---------------------------------------------------------------------

// Inserts `s` before (or after) `at`: into the Seq holding `at`, or by turning the slot of
// `at` into a two-statement Seq.
void insert_next_to(PrimFunc& g, Stmt* at, StmtPtr s, bool after) {
  Stmt* parent = parent_of(g, at);
  if (parent && parent->kind == StmtKind::Seq) {
    auto& v = parent->stmts;
    for (size_t k = 0; k < v.size(); ++k)
      if (v[k].get() == at) {
        v.insert(v.begin() + long(k) + (after ? 1 : 0), std::move(s));
        return;
      }
  }
  StmtPtr* slot = slot_of(g, at);
  StmtPtr old = std::move(*slot);
  std::vector<StmtPtr> two;
  if (after) {
    two.push_back(std::move(old));
    two.push_back(std::move(s));
  } else {
    two.push_back(std::move(s));
    two.push_back(std::move(old));
  }
  *slot = tir::make_seq(std::move(two));
}

// Removes `s` from the Seq holding it (false when it is not in a Seq).
bool erase_stmt(PrimFunc& g, Stmt* s) {
  Stmt* parent = parent_of(g, s);
  if (!parent || parent->kind != StmtKind::Seq) return false;
  auto& v = parent->stmts;
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k].get() == s) {
      v.erase(v.begin() + long(k));
      return true;
    }
  return false;
}

// The largest statement around `block` that holds no other block and sits in a Seq: what
// compute_at and friends lift out. Null when the block shares every enclosing statement up
// to the root with other blocks, or when nothing around it sits in a Seq.
Stmt* own_nest(PrimFunc& g, Stmt* block) {
  Stmt* best = nullptr;
  Stmt* s = block;
  while (s) {
    if (blocks_under(s).size() != 1) break;
    Stmt* parent = parent_of(g, s);
    if (parent && parent->kind == StmtKind::Seq) best = s;
    s = parent;
  }
  return best;
}

// The statement directly in the function's top-level Seq that holds `s` (turning the body
// into a Seq first, so there is always a place before and after it).
Stmt* top_level(PrimFunc& g, Stmt* s) {
  if (g.body->kind != StmtKind::Seq) {
    std::vector<StmtPtr> one;
    one.push_back(std::move(g.body));
    g.body = tir::make_seq(std::move(one));
  }
  for (StmtPtr& c : g.body->stmts)
    if (contains(c.get(), s)) return c.get();
  return nullptr;
}

int block_index(const std::vector<tir::BlockSite>& sites, const Stmt* b) {
  for (size_t k = 0; k < sites.size(); ++k)
    if (sites[k].block == b) return int(k);
  return -1;
}

std::string unique_buffer_name(const PrimFunc& g, const std::string& base) {
  if (g.find_buffer(base) < 0) return base;
  for (int n = 1;; ++n)
    if (g.find_buffer(base + "_" + std::to_string(n)) < 0) return base + "_" + std::to_string(n);
}

std::string unique_block_name(PrimFunc& g, const std::string& base) {
  if (!tir::find_block(g, base)) return base;
  for (int n = 1;; ++n)
    if (!tir::find_block(g, base + "_" + std::to_string(n))) return base + "_" + std::to_string(n);
}

// Every buffer name of g, for "no buffer" messages.
std::vector<std::string> buffer_names(const PrimFunc& g) {
  std::vector<std::string> out;
  for (const tir::Buffer& b : g.buffers) out.push_back(b.name);
  return out;
}

bool find_block_or_fail(PrimFunc& g, const std::string& name, Stmt** out, std::string* error) {
  *out = tir::find_block(g, name);
  if (*out) return true;
  return fail(error, "no block '" + name + "' (blocks: " + join(block_names(g)) + ")");
}

// Drops buffer `x` from g: every later buffer index shifts down by one, and an Allocate of
// x gives way to its body.
void remove_buffer(PrimFunc& g, int x) {
  auto shift = [x](int& b) {
    if (b > x) --b;
  };
  std::function<void(StmtPtr&)> go = [&](StmtPtr& s) {
    if (!s) return;
    if (s->kind == StmtKind::Allocate && s->buffer == x) {
      StmtPtr body = std::move(s->body);
      s = std::move(body);
      go(s);
      return;
    }
    if (s->kind == StmtKind::Store || s->kind == StmtKind::Allocate) shift(s->buffer);
    auto fix = [&](ExprPtr& root) {
      rewrite_expr(root, [&](ExprPtr& e) {
        if (e->kind == ExprKind::Load) shift(e->buffer);
      });
    };
    for (ExprPtr& i : s->indices) fix(i);
    if (s->value) fix(s->value);
    if (s->predicate) fix(s->predicate);
    go(s->init);
    go(s->body);
    for (StmtPtr& c : s->stmts) go(c);
  };
  go(g.body);
  for (int& p : g.params) shift(p);
  shift(g.output);
  g.buffers.erase(g.buffers.begin() + x);
}

std::string outside_box(PrimFunc& g, Stmt* alloc, const tir::BlockSite& site, int x);

// A staging buffer with an Allocate exists only inside it, and compact_buffers made its
// indices relative to the loops around that Allocate (b_local[v0 - ax0, v1]). A block moved
// or inlined to where no Allocate of such a buffer encloses it would read another nest's
// loops under the same names, so the primitives that move blocks refuse that. Returns ""
// when every block is inside the allocations it uses, else why not.
std::string allocation_escape(PrimFunc& g) {
  std::map<int, std::vector<Stmt*>> allocs;
  std::function<void(Stmt*)> find = [&](Stmt* s) {
    if (!s) return;
    if (s->kind == StmtKind::Allocate) allocs[s->buffer].push_back(s);
    find(s->init.get());
    find(s->body.get());
    for (StmtPtr& c : s->stmts) find(c.get());
  };
  find(g.body.get());
  if (allocs.empty()) return "";
  for (const tir::BlockSite& site : tir::blocks(g))
    for (const auto& [x, where] : allocs) {
      bool reads = block_reads(site.block, x), writes = block_writes(site.block, x);
      if (!reads && !writes) continue;
      auto inside = std::find_if(where.begin(), where.end(),
                                 [&](Stmt* a) { return contains(a, site.block); });
      if (inside != where.end()) {
        if (std::string why = outside_box(g, *inside, site, x); !why.empty()) return why;
        continue;
      }
      Stmt* home = parent_of(g, where[0]);
      std::string at = home && home->kind == StmtKind::For ? " (under loop '" + home->var + "')"
                                                           : "";
      return "block '" + site.block->name + "' would " + (reads ? "read" : "write") + " '" +
             g.buffers[x].name + "' outside its allocation" + at;
    }
  return "";
}

// A copy nest `for ax0, ax1, ...: block NAME: dst[v0, v1, ...] = src[v0, v1, ...]` over the
// whole of a buffer's shape: what cache_read and cache_write start from.
StmtPtr copy_nest(const std::string& name, int dst, int src, const std::vector<int64_t>& shape) {
  auto block = std::make_unique<Stmt>(StmtKind::Block);
  block->name = name;
  std::vector<ExprPtr> dst_idx, src_idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string v = "v" + std::to_string(d);
    block->iters.push_back({v, shape[d], IterKind::Spatial, tir::var("ax" + std::to_string(d))});
    dst_idx.push_back(tir::var(v));
    src_idx.push_back(tir::var(v));
  }
  block->body = tir::make_store(dst, std::move(dst_idx), tir::load(src, std::move(src_idx)));
  StmtPtr s = std::move(block);
  for (size_t d = shape.size(); d-- > 0;)
    s = tir::make_for("ax" + std::to_string(d), shape[d], std::move(s));
  return s;
}

}  // namespace

// ============================================================================
// [SECTION] Regions
// ============================================================================

namespace {

// One index of an access as seen from one iteration of a loop L:
//   sum(coeff[v] * v for v in the loops at or above L) + [lo, hi]
// where [lo, hi] is what the loops inside L sweep.
struct Bound {
  std::map<std::string, int64_t> coeff;
  int64_t lo = 0, hi = 0;
  // The loops inside L reach every integer of [lo, hi] (j_1 does; 2 * j_1 does not). A
  // producer's box is what it writes only when this holds in every dimension.
  bool dense = true;
};

// How to read variables at one access: iteration variables through their bindings, loops
// at or above L as symbols, loops inside L as ranges.
struct AccessEnv {
  const Stmt* block = nullptr;
  std::vector<const Stmt*> outer;        // loops at or above L, outermost first
  std::map<std::string, int64_t> inner;  // loops inside L -> extent
};

bool is_const(const Bound& b) { return b.coeff.empty() && b.lo == b.hi; }

bool bound_of(const Expr& e, const AccessEnv& env, Bound* out, std::string* why, int depth = 0);

bool bound_binary(const Expr& e, const AccessEnv& env, Bound* out, std::string* why, int depth) {
  Bound a, b;
  if (!bound_of(*e.args[0], env, &a, why, depth) || !bound_of(*e.args[1], env, &b, why, depth))
    return false;
  switch (e.op) {
    case Op::Add:
      *out = a;
      for (auto& [v, c] : b.coeff) out->coeff[v] += c;
      out->lo += b.lo;
      out->hi += b.hi;
      out->dense = a.dense && b.dense;
      break;
    case Op::Sub:
      *out = a;
      for (auto& [v, c] : b.coeff) out->coeff[v] -= c;
      out->lo = a.lo - b.hi;
      out->hi = a.hi - b.lo;
      out->dense = a.dense && b.dense;
      break;
    case Op::Mul: {
      if (is_const(a)) std::swap(a, b);
      if (!is_const(b)) {
        if (!a.coeff.empty() || !b.coeff.empty()) {
          *why = "an index multiplies two loop variables";
          return false;
        }
        int64_t p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
        *out = {{}, std::min({p[0], p[1], p[2], p[3]}), std::max({p[0], p[1], p[2], p[3]}),
                false};
        break;
      }
      int64_t c = b.lo;
      *out = a;
      for (auto& [v, k] : out->coeff) k *= c;
      out->lo = c >= 0 ? a.lo * c : a.hi * c;
      out->hi = c >= 0 ? a.hi * c : a.lo * c;
      out->dense = a.lo == a.hi || c == 0 || (a.dense && (c == 1 || c == -1));
      break;
    }
    case Op::Div:
    case Op::Mod:
    case Op::Min:
    case Op::Max:
      // Only over loops inside L (fused loops): there the result is a constant range.
      if (!a.coeff.empty() || !b.coeff.empty()) {
        *why = "an index is not affine in the loops at or above the target";
        return false;
      }
      if (e.op == Op::Div || e.op == Op::Mod) {
        if (!is_const(b) || b.lo <= 0 || a.lo < 0) {
          *why = "an index divides by a non-constant";
          return false;
        }
        int64_t c = b.lo;
        if (e.op == Op::Div)
          *out = {{}, a.lo / c, a.hi / c, a.dense};
        else if (a.hi < c)
          *out = Bound{{}, a.lo, a.hi, a.dense};
        else
          *out = Bound{{}, 0, c - 1, a.dense && a.hi - a.lo + 1 >= c};
      } else if (e.op == Op::Min) {
        *out = {{}, std::min(a.lo, b.lo), std::min(a.hi, b.hi), a.dense && b.dense};
      } else {
        *out = {{}, std::max(a.lo, b.lo), std::max(a.hi, b.hi), a.dense && b.dense};
      }
      break;
    default:
      *why = std::string("an index uses '") + tir::op_name(e.op) + "'";
      return false;
  }
  for (auto it = out->coeff.begin(); it != out->coeff.end();)
    it = it->second == 0 ? out->coeff.erase(it) : std::next(it);
  return true;
}

bool bound_of(const Expr& e, const AccessEnv& env, Bound* out, std::string* why, int depth) {
  if (depth > 64) {
    *why = "an index is too deeply nested";
    return false;
  }
  switch (e.kind) {
    case ExprKind::IntImm:
      *out = {{}, e.ival, e.ival};
      return true;
    case ExprKind::Var: {
      if (env.block) {
        if (const IterVar* iv = find_iter(env.block, e.name))
          return iv->binding && bound_of(*iv->binding, env, out, why, depth + 1);
      }
      for (const Stmt* l : env.outer)
        if (l->var == e.name) {
          *out = {{{e.name, 1}}, 0, 0};
          return true;
        }
      auto it = env.inner.find(e.name);
      if (it != env.inner.end()) {
        *out = {{}, 0, it->second - 1};
        return true;
      }
      *why = "variable '" + e.name + "' is not a loop around the access";
      return false;
    }
    case ExprKind::Binary:
      return bound_binary(e, env, out, why, depth + 1);
    case ExprKind::Unary:
      if (e.op == Op::Neg) {
        Bound a;
        if (!bound_of(*e.args[0], env, &a, why, depth + 1)) return false;
        for (auto& [v, c] : a.coeff) c = -c;
        *out = {a.coeff, -a.hi, -a.lo, a.dense};
        return true;
      }
      break;
    default:
      break;
  }
  *why = "an index is not integer arithmetic on loop variables";
  return false;
}

// A buffer's region under one iteration of a loop: one Bound per dimension.
struct Region {
  std::vector<Bound> dims;
  std::vector<const Stmt*> outer;  // the loops at or above L (the symbols), outermost first
};

enum class Access { Read, Write, Both };

// The region of buffer `x` accessed (as `mode` says) by the blocks under `loop`, as the
// union of every access. Accesses must agree on their symbolic part: one base per dimension.
bool region_under(PrimFunc& g, Stmt* loop, int x, Access mode, Region* out, std::string* why) {
  out->dims.clear();
  out->outer.clear();
  bool any = false;
  for (const tir::BlockSite& site : tir::blocks(g)) {
    auto at = std::find(site.loops.begin(), site.loops.end(), loop);
    if (at == site.loops.end()) continue;
    AccessEnv env;
    env.block = site.block;
    for (auto it = site.loops.begin(); it != at + 1; ++it) env.outer.push_back(*it);
    for (auto it = at + 1; it != site.loops.end(); ++it) env.inner[(*it)->var] = (*it)->extent;
    if (out->outer.empty()) out->outer = env.outer;

    std::vector<const std::vector<ExprPtr>*> accesses;
    if (mode != Access::Write)
      statement_exprs(site.block, [&](ExprPtr& root) {
        visit_expr(*root, [&](const Expr& e) {
          if (e.kind == ExprKind::Load && e.buffer == x) accesses.push_back(&e.args);
        });
      });
    if (mode != Access::Read)
      for (Stmt* s : stores_of(site.block))
        if (s->buffer == x) accesses.push_back(&s->indices);

    for (const std::vector<ExprPtr>* idx : accesses) {
      std::vector<Bound> dims;
      for (const ExprPtr& i : *idx) {
        Bound b;
        if (!bound_of(*i, env, &b, why)) {
          *why = "in block '" + site.block->name + "', " + *why;
          return false;
        }
        dims.push_back(b);
      }
      if (!any) {
        out->dims = dims;
        any = true;
        continue;
      }
      for (size_t d = 0; d < dims.size() && d < out->dims.size(); ++d) {
        if (dims[d].coeff != out->dims[d].coeff) {
          *why = "the accesses of '" + g.buffers[x].name + "' under '" + loop->var +
                 "' do not share one base in dimension " + std::to_string(d);
          return false;
        }
        // The union of two dense ranges is dense when they overlap or touch.
        out->dims[d].dense = out->dims[d].dense && dims[d].dense &&
                             dims[d].lo <= out->dims[d].hi + 1 && out->dims[d].lo <= dims[d].hi + 1;
        out->dims[d].lo = std::min(out->dims[d].lo, dims[d].lo);
        out->dims[d].hi = std::max(out->dims[d].hi, dims[d].hi);
      }
    }
  }
  if (!any) *why = "nothing under '" + loop->var + "' accesses '" + g.buffers[x].name + "'";
  return any;
}

// A compacted buffer holds, per execution of its Allocate, only the box compact_buffers
// computed, indexed relative to the loops around the Allocate. A block moved within the
// Allocate can still run instances that need other elements (compute_at rebuilding an axis
// over its whole domain, under a loop the box was cut for): every index must stay in the
// box for every iteration of the loops inside the Allocate. "" when it does (or when the
// index is not affine: then nothing is claimed).
std::string outside_box(PrimFunc& g, Stmt* alloc, const tir::BlockSite& site, int x) {
  AccessEnv env;
  env.block = site.block;
  std::vector<Stmt*> around = loops_above(g, alloc);
  for (Stmt* l : around) env.outer.push_back(l);
  for (Stmt* l : site.loops)
    if (std::find(around.begin(), around.end(), l) == around.end()) env.inner[l->var] = l->extent;
  const std::vector<int64_t>& shape = g.buffers[x].shape;
  std::vector<const std::vector<ExprPtr>*> accesses;
  statement_exprs(site.block, [&](ExprPtr& root) {
    visit_expr(*root, [&](const Expr& e) {
      if (e.kind == ExprKind::Load && e.buffer == x) accesses.push_back(&e.args);
    });
  });
  for (Stmt* st : stores_of(site.block))
    if (st->buffer == x) accesses.push_back(&st->indices);
  for (const std::vector<ExprPtr>* idx : accesses)
    for (size_t d = 0; d < idx->size() && d < shape.size(); ++d) {
      Bound b;
      std::string why;
      if (!bound_of(*(*idx)[d], env, &b, &why)) continue;
      if (b.coeff.empty() && b.lo >= 0 && b.hi < shape[d]) continue;
      Stmt* home = parent_of(g, alloc);
      while (home && home->kind != StmtKind::For) home = parent_of(g, home);
      return "block '" + site.block->name + "' would access '" + g.buffers[x].name +
             "' outside the part of it allocated per iteration" +
             (home ? " of '" + home->var + "'" : std::string());
    }
  return "";
}

// The symbolic start of a dimension, sum(coeff * v) + lo, in loop-nesting order.
ExprPtr base_expr(const Bound& b, const std::vector<const Stmt*>& outer) {
  ExprPtr out;
  for (const Stmt* l : outer) {
    auto it = b.coeff.find(l->var);
    if (it == b.coeff.end()) continue;
    ExprPtr term = it->second == 1
                       ? tir::var(l->var)
                       : tir::binary(Op::Mul, tir::var(l->var), tir::int_imm(it->second));
    out = out ? tir::binary(Op::Add, std::move(out), std::move(term)) : std::move(term);
  }
  if (!out) return tir::int_imm(b.lo);
  if (b.lo != 0) out = tir::binary(Op::Add, std::move(out), tir::int_imm(b.lo));
  return out;
}

// The smallest and largest element a dimension can reach, over every iteration of the
// symbolic loops: decides whether the moved block needs a guard.
void element_range(const Bound& b, const std::vector<const Stmt*>& outer, int64_t* lo,
                   int64_t* hi) {
  *lo = b.lo;
  *hi = b.hi;
  for (const Stmt* l : outer) {
    auto it = b.coeff.find(l->var);
    if (it == b.coeff.end()) continue;
    int64_t span = it->second * (l->extent - 1);
    if (span > 0)
      *hi += span;
    else
      *lo += span;
  }
}

// Rebuilds `block` (already detached) as a nest that covers, for each iteration variable,
// either the given region dimension (`dims[k]`, base + ax) or its whole extent (null). A
// one-element dimension gets no loop at all: its binding is just the base. The old loops'
// names are reused where free on the new path (`taken`), else ax0, ax1, ... The old
// predicate spoke of loops that no longer exist; it came from splits, and the clamps added
// here (binding < extent, binding >= 0) express exactly what it guarded. (A condition that
// joins several axes cannot be a loop predicate: rfactor puts its own in the block body.)
StmtPtr build_nest(StmtPtr block, const std::vector<const Bound*>& dims,
                   const std::vector<const Stmt*>& outer, std::set<std::string> taken) {
  for (const IterVar& iv : block->iters) taken.insert(iv.name);
  struct NewLoop {
    std::string name;
    int64_t extent;
  };
  std::vector<NewLoop> loops;
  std::vector<ExprPtr> guards;
  int fresh = 0;
  auto pick = [&](const IterVar& iv) {
    std::string old = iv.binding && iv.binding->kind == ExprKind::Var ? iv.binding->name : "";
    std::string name = old;
    while (name.empty() || taken.count(name)) name = "ax" + std::to_string(fresh++);
    taken.insert(name);
    return name;
  };
  for (size_t k = 0; k < block->iters.size(); ++k) {
    IterVar& iv = block->iters[k];
    const Bound* b = dims[k];
    if (!b) {
      std::string name = pick(iv);
      loops.push_back({name, iv.extent});
      iv.binding = tir::var(name);
      continue;
    }
    int64_t size = b->hi - b->lo + 1;
    ExprPtr base = base_expr(*b, outer);
    if (size == 1) {
      iv.binding = tir::simplify(*base);
    } else {
      std::string name = pick(iv);
      loops.push_back({name, size});
      iv.binding = tir::simplify(*tir::binary(Op::Add, std::move(base), tir::var(name)));
    }
    int64_t lo, hi;
    element_range(*b, outer, &lo, &hi);
    if (lo < 0) guards.push_back(tir::binary(Op::Ge, tir::clone(*iv.binding), tir::int_imm(0)));
    if (hi > iv.extent - 1)
      guards.push_back(tir::binary(Op::Lt, tir::clone(*iv.binding), tir::int_imm(iv.extent)));
  }
  block->predicate = conjunction(std::move(guards));
  StmtPtr s = std::move(block);
  for (size_t k = loops.size(); k-- > 0;)
    s = tir::make_for(loops[k].name, loops[k].extent, std::move(s));
  return s;
}

// Names of the loops at or above `loop`: a new nest inside it must avoid them.
std::set<std::string> names_down_to(PrimFunc& g, Stmt* loop) {
  std::set<std::string> out;
  for (Stmt* l : loops_above(g, loop)) out.insert(l->var);
  out.insert(loop->var);
  return out;
}

}  // namespace

// ============================================================================
// [SECTION] Stage fusion
// ============================================================================

namespace {

bool compute_at_impl(PrimFunc& g, const std::string& bname, const std::string& lname,
                     std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  LoopRef L = find_loop(g, lname, error);
  if (!L.loop) return false;
  std::string pre = "cannot compute_at '" + bname + "' at '" + lname + "': ";
  int x = written_buffer(b);
  if (x < 0) return fail(error, pre + "it writes more than one buffer");
  std::string xn = buffer_name(g, x);
  if (g.buffers[x].role == tir::BufferRole::Output)
    return fail(error, pre + "it writes the output '" + xn +
                           "'; only an intermediate stage can move into its consumers");
  if (contains(L.loop, b)) return fail(error, pre + "it is already inside '" + lname + "'");

  std::vector<tir::BlockSite> sites = tir::blocks(g);
  int ib = block_index(sites, b);
  int first_under = -1, last_under = -1;
  bool consumed = false;
  for (size_t k = 0; k < sites.size(); ++k) {
    Stmt* o = sites[k].block;
    bool under = contains(L.loop, o);
    if (under) {
      if (first_under < 0) first_under = int(k);
      last_under = int(k);
    }
    if (o == b) continue;
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' also writes '" + xn + "'");
    if (block_reads(o, x)) {
      if (!under)
        return fail(error,
                    pre + "block '" + o->name + "' reads '" + xn + "' outside '" + lname + "'");
      consumed = true;
    }
  }
  if (!consumed) return fail(error, pre + "no block under '" + lname + "' reads '" + xn + "'");
  if (first_under < ib)
    return fail(error, pre + "block '" + sites[first_under].block->name + "' under '" + lname +
                           "' runs before it");
  // Moving the producer later is only safe if nothing in between changes what it reads.
  std::set<int> inputs = buffers_read(b);
  inputs.erase(x);
  for (int k = ib + 1; k <= last_under; ++k)
    for (int in : inputs)
      if (block_writes(sites[k].block, in))
        return fail(error, pre + "block '" + sites[k].block->name + "' writes '" +
                               buffer_name(g, in) + "', which it reads");

  std::vector<Stmt*> stores = stores_of(b);
  std::vector<int> iter_of_dim;
  for (Stmt* s : stores) {
    std::vector<int> m;
    if (!indices_are_iters(b, raw(s->indices), &m) || (!iter_of_dim.empty() && m != iter_of_dim))
      return fail(error,
                  pre + "its store to '" + xn + "' is not indexed by its iteration variables");
    iter_of_dim = m;
  }
  for (size_t k = 0; k < b->iters.size(); ++k)
    if (b->iters[k].kind == IterKind::Spatial &&
        std::find(iter_of_dim.begin(), iter_of_dim.end(), int(k)) == iter_of_dim.end())
      return fail(error,
                  pre + "its spatial axis '" + b->iters[k].name + "' does not index '" + xn + "'");
  Stmt* nest = own_nest(g, b);
  if (!nest) return fail(error, pre + "it shares its loops with other blocks");

  Region r;
  std::string why;
  if (!region_under(g, L.loop, x, Access::Read, &r, &why)) return fail(error, pre + why);

  std::vector<const Bound*> dims(b->iters.size(), nullptr);
  for (size_t d = 0; d < iter_of_dim.size(); ++d) dims[iter_of_dim[d]] = &r.dims[d];
  StmtPtr moved = build_nest(tir::clone(*b), dims, r.outer, names_down_to(g, L.loop));

  Stmt* body = L.loop->body.get();
  if (body->kind == StmtKind::Seq)
    body->stmts.insert(body->stmts.begin(), std::move(moved));
  else
    insert_next_to(g, body, std::move(moved), /*after=*/false);
  erase_stmt(g, nest);
  if (std::string why = allocation_escape(g); !why.empty()) return fail(error, pre + why);
  compact_buffers(g);
  return true;
}

bool reverse_compute_at_impl(PrimFunc& g, const std::string& bname, const std::string& lname,
                             std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  LoopRef L = find_loop(g, lname, error);
  if (!L.loop) return false;
  std::string pre = "cannot reverse_compute_at '" + bname + "' at '" + lname + "': ";
  if (contains(L.loop, b)) return fail(error, pre + "it is already inside '" + lname + "'");
  int out = written_buffer(b);
  if (out < 0) return fail(error, pre + "it writes more than one buffer");

  std::vector<tir::BlockSite> sites = tir::blocks(g);
  int ib = block_index(sites, b);
  std::vector<Stmt*> under;
  int last_under = -1;
  for (size_t k = 0; k < sites.size(); ++k)
    if (contains(L.loop, sites[k].block)) {
      under.push_back(sites[k].block);
      last_under = int(k);
    }
  // Its inputs produced under the loop: their regions drive the new nest.
  std::vector<int> produced;
  for (int in : buffers_read(b))
    for (Stmt* u : under)
      if (block_writes(u, in)) {
        produced.push_back(in);
        break;
      }
  if (produced.empty()) return fail(error, pre + "it reads nothing written under '" + lname + "'");
  std::set<int> inputs = buffers_read(b);
  for (size_t k = 0; k < sites.size(); ++k) {
    Stmt* o = sites[k].block;
    bool is_under = std::find(under.begin(), under.end(), o) != under.end();
    for (int x : produced)
      if (o != b && !is_under && block_writes(o, x))
        return fail(error, pre + "block '" + o->name + "' writes '" + buffer_name(g, x) +
                               "' outside '" + lname + "'");
    if (is_under && (block_reads(o, out) || block_writes(o, out)))
      return fail(error, pre + "block '" + o->name + "' under '" + lname + "' uses '" +
                             buffer_name(g, out) + "'");
  }
  if (last_under > ib)
    return fail(error, pre + "block '" + sites[last_under].block->name + "' under '" + lname +
                           "' runs after it");
  // Moving the consumer earlier: nothing in between may touch what it reads or writes.
  for (int k = last_under + 1; k < ib; ++k) {
    Stmt* o = sites[k].block;
    if (block_reads(o, out) || block_writes(o, out))
      return fail(error,
                  pre + "block '" + o->name + "' between them uses '" + buffer_name(g, out) + "'");
    for (int in : inputs)
      if (block_writes(o, in))
        return fail(error, pre + "block '" + o->name + "' between them writes '" +
                               buffer_name(g, in) + "'");
  }
  // Every element written under the loop must be final when the consumer reads it: a
  // reduction whose reduce loop is the target (or encloses it) is still accumulating.
  std::set<std::string> at_or_above = names_down_to(g, L.loop);
  for (Stmt* u : under) {
    if (!std::any_of(produced.begin(), produced.end(), [&](int x) { return block_writes(u, x); }))
      continue;
    for (const IterVar& iv : u->iters)
      if (iv.kind == IterKind::Reduce && iv.binding && uses_any(*iv.binding, at_or_above))
        return fail(error, pre + "the reduction of '" + u->name + "' is not finished inside '" +
                               lname + "'");
  }
  Stmt* nest = own_nest(g, b);
  if (!nest) return fail(error, pre + "it shares its loops with other blocks");

  // Each produced buffer bounds the axes that index it; two buffers indexed by the same axis
  // must agree. Axes that index none of them (softmax's e reads mx[vi] only) keep their whole
  // extent: each iteration of the loop produces everything they need.
  std::vector<Bound> bounds(b->iters.size());
  std::vector<const Bound*> dims(b->iters.size(), nullptr);
  std::vector<const Stmt*> outer;
  std::vector<ExprPtr> inherited;  // producers' conditions on the iteration of the loop
  for (int x : produced) {
    std::string xn = buffer_name(g, x);
    std::vector<int> iter_of_dim;
    bool ok = true, seen = false;
    statement_exprs(b, [&](ExprPtr& root) {
      visit_expr(*root, [&](const Expr& e) {
        if (e.kind != ExprKind::Load || e.buffer != x) return;
        std::vector<int> m;
        if (!indices_are_iters(b, raw(e.args), &m) || (seen && m != iter_of_dim)) ok = false;
        iter_of_dim = m;
        seen = true;
      });
    });
    if (!ok)
      return fail(error,
                  pre + "its reads of '" + xn + "' are not indexed by its iteration variables");
    Region r;
    std::string why;
    if (!region_under(g, L.loop, x, Access::Write, &r, &why)) return fail(error, pre + why);
    // The consumer will read the whole box in each iteration, so the box must be exactly what
    // the producers write there: not every other element (j_0 * 2 + j_1 under j_1), and not
    // fewer than it because a predicate skips some (one that only clamps an axis to its
    // extent is fine: the new nest clamps the same way).
    for (size_t d = 0; d < r.dims.size(); ++d)
      if (!r.dims[d].dense)
        return fail(error, pre + "the elements of '" + xn + "' written in one iteration of '" +
                               lname + "' do not form a box (dimension " + std::to_string(d) +
                               " is strided)");
    for (Stmt* w : under) {
      if (!w->predicate || !block_writes(w, x)) continue;
      std::set<std::string> inner;
      for (Stmt* l : loops_under(L.loop))
        if (l != L.loop && contains(l, w)) inner.insert(l->var);
      std::vector<const Expr*> parts;
      conjuncts(*w->predicate, &parts);
      for (const Expr* c : parts) {
        if (!uses_any(*c, inner)) {
          // A condition on the iteration of the loop itself (i_1_0 * 2 + i_1_1 < 5 when the
          // split of a split overshoots): where it skips the producer, the consumer must
          // skip too, or it copies out elements nobody wrote.
          inherited.push_back(tir::clone(*c));
          continue;
        }
        bool clamp = false;
        for (const IterVar& iv : w->iters) {
          if (!iv.binding || c->kind != ExprKind::Binary || c->args.size() != 2) continue;
          const Expr& lhs = *c->args[0];
          const Expr& rhs = *c->args[1];
          if (c->op == Op::Lt && rhs.kind == ExprKind::IntImm && rhs.ival == iv.extent &&
              tir::equal(lhs, *iv.binding))
            clamp = true;
          if (c->op == Op::Ge && rhs.kind == ExprKind::IntImm && rhs.ival == 0 &&
              tir::equal(lhs, *iv.binding))
            clamp = true;
        }
        if (!clamp)
          return fail(error, pre + "block '" + w->name + "' writes '" + xn + "' under a " +
                                 "predicate that skips elements inside '" + lname + "'");
      }
    }
    outer = r.outer;
    for (size_t d = 0; d < iter_of_dim.size() && d < r.dims.size(); ++d) {
      int k = iter_of_dim[d];
      const Bound& nb = r.dims[d];
      if (dims[k] && (dims[k]->coeff != nb.coeff || dims[k]->lo != nb.lo || dims[k]->hi != nb.hi))
        return fail(error, pre + "its axis '" + b->iters[k].name +
                               "' would need two different ranges under '" + lname + "'");
      bounds[k] = nb;
      dims[k] = &bounds[k];
    }
  }
  StmtPtr moved = build_nest(tir::clone(*b), dims, outer, names_down_to(g, L.loop));
  if (!inherited.empty()) {
    Stmt* nb = blocks_under(moved.get())[0];
    std::vector<ExprPtr> all;
    for (ExprPtr& c : inherited) {
      bool dup = false;
      for (const ExprPtr& a : all) dup = dup || tir::equal(*a, *c);
      if (!dup) all.push_back(std::move(c));
    }
    if (nb->predicate) all.push_back(std::move(nb->predicate));
    nb->predicate = conjunction(std::move(all));
  }

  Stmt* body = L.loop->body.get();
  if (body->kind == StmtKind::Seq)
    body->stmts.push_back(std::move(moved));
  else
    insert_next_to(g, body, std::move(moved), /*after=*/true);
  erase_stmt(g, nest);
  if (std::string why = allocation_escape(g); !why.empty()) return fail(error, pre + why);
  compact_buffers(g);
  return true;
}

bool compute_inline_impl(PrimFunc& g, const std::string& bname, std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  std::string pre = "cannot compute_inline '" + bname + "': ";
  if (b->init || has_reduce_iter(b)) return fail(error, pre + "it is a reduction");
  Stmt* store = b->body.get();
  while (store && store->kind == StmtKind::Seq && store->stmts.size() == 1)
    store = store->stmts[0].get();
  if (!store || store->kind != StmtKind::Store)
    return fail(error, pre + "its body is not a single store");
  int x = store->buffer;
  std::string xn = buffer_name(g, x);
  if (g.buffers[x].role != tir::BufferRole::Temp)
    return fail(error, pre + "it writes the output '" + xn + "'");
  std::vector<int> iter_of_dim;
  if (!indices_are_iters(b, raw(store->indices), &iter_of_dim) ||
      iter_of_dim.size() != b->iters.size())
    return fail(
        error, pre + "its store to '" + xn + "' is not indexed by exactly its iteration variables");
  if (b->predicate)
    return fail(error, pre + "it has a predicate (inline it before splitting its loops)");
  if (block_reads(b, x)) return fail(error, pre + "it reads '" + xn + "' itself");

  std::vector<tir::BlockSite> sites = tir::blocks(g);
  int ib = block_index(sites, b);
  std::set<int> inputs = buffers_read(b);
  for (size_t k = 0; k < sites.size(); ++k) {
    Stmt* o = sites[k].block;
    if (o == b) continue;
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' also writes '" + xn + "'");
    if (int(k) < ib && block_reads(o, x))
      return fail(error, pre + "block '" + o->name + "' reads '" + xn + "' before it is computed");
    if (int(k) > ib)
      for (int in : inputs)
        if (block_writes(o, in))
          return fail(error, pre + "block '" + o->name + "' writes '" + buffer_name(g, in) +
                                 "', which it reads, after it");
  }
  Stmt* nest = own_nest(g, b);
  if (!nest) return fail(error, pre + "it shares its loops with other blocks");

  // Its value may name loops directly (compacted indices do): those must be loops around
  // every reader too, or the names would mean another nest's loops there.
  std::vector<Stmt*> own_loops = loops_above(g, b);
  std::set<std::string> loose;
  visit_expr(*store->value, [&](const Expr& e) {
    if (e.kind == ExprKind::Var && !find_iter(b, e.name)) loose.insert(e.name);
  });
  for (const tir::BlockSite& site : sites) {
    if (site.block == b || !block_reads(site.block, x)) continue;
    for (const std::string& v : loose) {
      bool shared = std::any_of(site.loops.begin(), site.loops.end(), [&](Stmt* l) {
        return l->var == v &&
               std::find(own_loops.begin(), own_loops.end(), l) != own_loops.end();
      });
      if (!shared)
        return fail(error, pre + "its value uses the loop '" + v + "', which does not enclose '" +
                               site.block->name + "'");
    }
  }

  ExprPtr value = tir::clone(*store->value);
  std::vector<std::string> iter_names;
  for (int k : iter_of_dim) iter_names.push_back(b->iters[k].name);
  for (const tir::BlockSite& site : sites) {
    if (site.block == b) continue;
    statement_exprs(site.block, [&](ExprPtr& root) {
      rewrite_expr(root, [&](ExprPtr& e) {
        if (e->kind != ExprKind::Load || e->buffer != x) return;
        std::map<std::string, const Expr*> with;
        for (size_t d = 0; d < iter_names.size() && d < e->args.size(); ++d)
          with[iter_names[d]] = e->args[d].get();
        e = substitute_all(*value, with);
      });
    });
  }
  erase_stmt(g, nest);
  if (std::string why = allocation_escape(g); !why.empty()) return fail(error, pre + why);
  remove_buffer(g, x);
  return true;
}

}  // namespace

bool compute_at(PrimFunc& f, const std::string& block, const std::string& loop,
                std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g, std::string* e) { return compute_at_impl(g, block, loop, e); });
}

bool reverse_compute_at(PrimFunc& f, const std::string& block, const std::string& loop,
                        std::string* error) {
  return commit(f, error, [&](PrimFunc& g, std::string* e) {
    return reverse_compute_at_impl(g, block, loop, e);
  });
}

bool compute_inline(PrimFunc& f, const std::string& block, std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g, std::string* e) { return compute_inline_impl(g, block, e); });
}

// ============================================================================
// [SECTION] Staging
// ============================================================================

namespace {

bool has_allocate(const Stmt* s, int x) {
  if (!s) return false;
  if (s->kind == StmtKind::Allocate && s->buffer == x) return true;
  if (has_allocate(s->init.get(), x) || has_allocate(s->body.get(), x)) return true;
  for (const StmtPtr& c : s->stmts)
    if (has_allocate(c.get(), x)) return true;
  return false;
}

bool cache_read_impl(PrimFunc& g, const std::string& bname, const std::string& buf,
                     tir::Scope scope, std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  int x = g.find_buffer(buf);
  if (x < 0) return fail(error, "no buffer '" + buf + "' (buffers: " + join(buffer_names(g)) + ")");
  std::string pre = "cannot cache_read '" + buf + "' for '" + bname + "': ";
  if (!block_reads(b, x)) return fail(error, pre + "block '" + bname + "' does not read it");
  if (block_writes(b, x)) return fail(error, pre + "block '" + bname + "' also writes it");
  // The copy runs once, before the whole nest: a write to the buffer inside that nest would
  // be missed by the copy.
  Stmt* top = top_level(g, b);
  for (Stmt* o : blocks_under(top))
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' writes it inside the same loop nest");

  std::string name = unique_buffer_name(g, buf + "_" + tir::scope_name(scope));
  if (tir::find_block(g, name)) name = unique_block_name(g, name);
  tir::Buffer nb = g.buffers[x];
  nb.name = name;
  nb.scope = scope;
  nb.role = tir::BufferRole::Temp;
  g.buffers.push_back(nb);
  int y = int(g.buffers.size()) - 1;
  statement_exprs(b, [&](ExprPtr& root) {
    rewrite_expr(root, [&](ExprPtr& e) {
      if (e->kind == ExprKind::Load && e->buffer == x) e->buffer = y;
    });
  });
  insert_next_to(g, top, copy_nest(name, y, x, nb.shape), /*after=*/false);
  return true;
}

bool cache_write_impl(PrimFunc& g, const std::string& bname, tir::Scope scope, std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  std::string pre = "cannot cache_write '" + bname + "': ";
  int x = written_buffer(b);
  if (x < 0) return fail(error, pre + "it writes more than one buffer");
  std::string xn = buffer_name(g, x);
  // The write-back runs once, after the whole nest: nobody inside it may read the buffer.
  Stmt* top = top_level(g, b);
  for (const tir::BlockSite& site : tir::blocks(g)) {
    Stmt* o = site.block;
    if (o == b) continue;
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' also writes '" + xn + "'");
    if (contains(top, o) && block_reads(o, x))
      return fail(error,
                  pre + "block '" + o->name + "' reads '" + xn + "' inside the same loop nest");
  }
  std::string name = unique_buffer_name(g, xn + "_" + tir::scope_name(scope));
  tir::Buffer nb = g.buffers[x];
  nb.name = name;
  nb.scope = scope;
  nb.role = tir::BufferRole::Temp;
  g.buffers.push_back(nb);
  int y = int(g.buffers.size()) - 1;
  statement_exprs(b, [&](ExprPtr& root) {
    rewrite_expr(root, [&](ExprPtr& e) {
      if (e->kind == ExprKind::Load && e->buffer == x) e->buffer = y;
    });
  });
  for (Stmt* s : stores_of(b)) s->buffer = y;
  std::string wb = unique_block_name(g, xn + "_writeback");
  insert_next_to(g, top, copy_nest(wb, x, y, nb.shape), /*after=*/true);
  return true;
}

}  // namespace

bool cache_read(PrimFunc& f, const std::string& block, const std::string& buffer, tir::Scope scope,
                std::string* error) {
  return commit(f, error, [&](PrimFunc& g, std::string* e) {
    return cache_read_impl(g, block, buffer, scope, e);
  });
}

bool cache_write(PrimFunc& f, const std::string& block, tir::Scope scope, std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g, std::string* e) { return cache_write_impl(g, block, scope, e); });
}

// A staging buffer whose accesses all sit under one loop L lives for one iteration of L only
// (compute_at and reverse_compute_at put the write and the reads in the same iteration), so
// it needs only the box one iteration touches: a [K, 32] panel instead of all of B, a [4, 32]
// accumulator instead of all of Y. The box's base becomes index 0.
int compact_buffers(PrimFunc& f) {
  int count = 0;
  for (size_t x = 0; x < f.buffers.size(); ++x) {
    const tir::Buffer& buf = f.buffers[x];
    if (buf.scope == tir::Scope::Global || buf.role != tir::BufferRole::Temp) continue;
    if (has_allocate(f.body.get(), int(x))) continue;
    // The innermost loop enclosing every access.
    std::vector<Stmt*> common;
    bool first = true;
    for (const tir::BlockSite& site : tir::blocks(f)) {
      if (!block_reads(site.block, int(x)) && !block_writes(site.block, int(x))) continue;
      if (first) {
        common = site.loops;
        first = false;
        continue;
      }
      size_t n = 0;
      while (n < common.size() && n < site.loops.size() && common[n] == site.loops[n]) ++n;
      common.resize(n);
    }
    if (common.empty()) continue;
    Stmt* loop = common.back();
    Region r;
    std::string why;
    if (!region_under(f, loop, int(x), Access::Both, &r, &why)) continue;
    if (r.dims.size() != buf.shape.size()) continue;
    std::vector<int64_t> shape;
    for (const Bound& b : r.dims) shape.push_back(b.hi - b.lo + 1);
    for (Stmt* blk : blocks_under(loop)) {
      auto relative = [&](std::vector<ExprPtr>& idx) {
        for (size_t d = 0; d < idx.size() && d < r.dims.size(); ++d) {
          if (r.dims[d].coeff.empty() && r.dims[d].lo == 0) continue;
          idx[d] = tir::simplify(
              *tir::binary(Op::Sub, std::move(idx[d]), base_expr(r.dims[d], r.outer)));
        }
      };
      statement_exprs(blk, [&](ExprPtr& root) {
        rewrite_expr(root, [&](ExprPtr& e) {
          if (e->kind == ExprKind::Load && e->buffer == int(x)) relative(e->args);
        });
      });
      for (Stmt* s : stores_of(blk))
        if (s->buffer == int(x)) relative(s->indices);
    }
    f.buffers[x].shape = shape;
    auto alloc = std::make_unique<Stmt>(StmtKind::Allocate);
    alloc->buffer = int(x);
    alloc->body = std::move(loop->body);
    loop->body = std::move(alloc);
    ++count;
  }
  return count;
}

// ============================================================================
// [SECTION] Reductions
// ============================================================================

namespace {

// The loop variables a block's reduce axes are bound to.
std::set<std::string> reduce_loop_vars(const Stmt* b, const std::vector<Stmt*>& loops) {
  std::set<std::string> out;
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Reduce && iv.binding)
      for (const Stmt* l : loops)
        if (tir::uses_var(*iv.binding, l->var)) out.insert(l->var);
  return out;
}

// A copy of a loop's header (name, extent, kind) around `body`.
StmtPtr copy_loop(const Stmt& l, StmtPtr body) {
  StmtPtr s = tir::make_for(l.var, l.extent, std::move(body), l.for_kind);
  s->thread_tag = l.thread_tag;
  return s;
}

bool decompose_reduction_impl(PrimFunc& g, const std::string& bname, const std::string& lname,
                              std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  LoopRef L = find_loop(g, lname, error);
  if (!L.loop) return false;
  std::string pre = "cannot decompose_reduction '" + bname + "' at '" + lname + "': ";
  if (!b->init) return fail(error, pre + "it has no init");
  std::vector<Stmt*> loops = loops_above(g, b);
  auto at = std::find(loops.begin(), loops.end(), L.loop);
  if (at == loops.end()) return fail(error, pre + "'" + lname + "' does not enclose it");
  std::set<std::string> reduce = reduce_loop_vars(b, loops);
  for (auto it = loops.begin(); it != at; ++it)
    if (reduce.count((*it)->var))
      return fail(error, pre + "the reduce loop '" + (*it)->var + "' lies above it");
  // The init nest repeats the spatial loops from the target down to the block, so every
  // spatial binding must be expressible with those and the loops above.
  std::vector<Stmt*> copied;
  std::set<std::string> dropped;
  for (auto it = at; it != loops.end(); ++it) {
    if (reduce.count((*it)->var))
      dropped.insert((*it)->var);
    else
      copied.push_back(*it);
  }
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Spatial && iv.binding && uses_any(*iv.binding, dropped))
      return fail(error, pre + "its spatial axis '" + iv.name + "' depends on a reduce loop");
  // The init nest runs once for every iteration of the copied loops, all before the first
  // reduction step under LOOP. That is the block's own init (run where the reduce axes are
  // 0) only if each iteration of those loops is a different output element: a loop that
  // feeds no axis (compute_at recomputing a reduction per consumer iteration) or two loops
  // reaching the same element (a sliding window) repeat the reduction, and a hoisted init
  // would let the repeats pile up. Refused rather than placed lower: the user picked LOOP,
  // and a loop inside the repeating one is the right place to name instead.
  for (Stmt* l : copied) {
    if (l->extent == 1) continue;
    bool feeds = std::any_of(b->iters.begin(), b->iters.end(), [&](const IterVar& iv) {
      return iv.kind == IterKind::Spatial && iv.binding && tir::uses_var(*iv.binding, l->var);
    });
    if (!feeds)
      return fail(error, pre + "loop '" + l->var + "' feeds none of its axes, so it repeats the " +
                             "reduction; the init would run only once for all the repeats " +
                             "(decompose at a loop inside '" + l->var + "')");
  }
  // A compacted accumulator exists only inside its Allocate: the init cannot go above it.
  std::vector<Stmt*> init_writes;
  stores_in(b->init.get(), &init_writes);
  for (Stmt* st : init_writes)
    for (Stmt* a = parent_of(g, b); a && a != L.loop; a = parent_of(g, a))
      if (a->kind == StmtKind::Allocate && a->buffer == st->buffer) {
        Stmt* home = parent_of(g, a);
        while (home && home->kind != StmtKind::For) home = parent_of(g, home);
        return fail(error, pre + "it accumulates in '" + buffer_name(g, st->buffer) +
                               "', which is allocated inside '" + (home ? home->var : lname) +
                               "': the init cannot move above that");
      }
  {
    // Each copied loop's step through the elements the init stores to (row-major over the
    // buffer, so compacted indices like C_local[vi - i, ...] count as what they are). When
    // the indices are affine in the loops, distinct iterations reach distinct elements if
    // the steps form a mixed radix: each larger than all the smaller ones can add up to.
    AccessEnv env;
    env.block = b;
    for (Stmt* l : loops) env.outer.push_back(l);
    std::map<std::string, int64_t> step;
    bool affine = true;
    std::string buf;
    if (!init_writes.empty()) {  // one store is enough: an init writes one element
      const Stmt* st = init_writes[0];
      const std::vector<int64_t>& shape = g.buffers[st->buffer].shape;
      buf = buffer_name(g, st->buffer);
      int64_t stride = 1;
      for (size_t d = st->indices.size(); d-- > 0 && affine;) {
        Bound form;
        std::string why;
        if (!bound_of(*st->indices[d], env, &form, &why) || form.lo != form.hi) {
          affine = false;
          break;
        }
        for (const auto& [v, k] : form.coeff) step[v] += k * stride;
        stride *= d < shape.size() ? shape[d] : 1;
      }
    }
    std::vector<std::pair<int64_t, Stmt*>> radix;
    for (Stmt* l : copied)
      if (l->extent > 1) radix.push_back({std::abs(step[l->var]), l});
    std::stable_sort(radix.begin(), radix.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t reach = 0;  // the largest offset the smaller steps add up to
    for (size_t k = 0; affine && k < radix.size(); ++k) {
      const std::string& v = radix[k].second->var;
      if (radix[k].first == 0)
        return fail(error, pre + "every iteration of loop '" + v + "' stores its init to the " +
                               "same elements of '" + buf + "', so the loop repeats the " +
                               "reduction; the init would run only once for all the repeats " +
                               "(decompose at a loop inside '" + v + "')");
      if (radix[k].first <= reach)
        return fail(error, pre + "loops '" + radix[k - 1].second->var + "' and '" + v +
                               "' reach the same element of '" + buf + "' more than once, so " +
                               "its reduction repeats; the init would run only once for all " +
                               "the repeats");
      reach += radix[k].first * (radix[k].second->extent - 1);
    }
    // Not affine (fused loops): the init must then store at exactly its iteration variables,
    // whose bindings are one-to-one over the loops that fuse and split make.
    if (!affine)
      for (Stmt* st : init_writes) {
        std::vector<int> m;
        if (!indices_are_iters(b, raw(st->indices), &m))
          return fail(error, pre + "its init's store to '" + buffer_name(g, st->buffer) +
                                 "' is neither affine in the loops nor indexed by its axes");
      }
  }

  auto init = std::make_unique<Stmt>(StmtKind::Block);
  init->name = unique_block_name(g, bname + "_init");
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Spatial)
      init->iters.push_back({iv.name, iv.extent, iv.kind, tir::clone(*iv.binding)});
  init->predicate = predicate_without(b->predicate.get(), dropped);
  init->body = std::move(b->init);
  StmtPtr nest = std::move(init);
  for (size_t k = copied.size(); k-- > 0;) nest = copy_loop(*copied[k], std::move(nest));
  insert_next_to(g, L.loop, std::move(nest), /*after=*/false);
  // Above the Allocate of a compacted accumulator the init would write nowhere.
  if (std::string why = allocation_escape(g); !why.empty()) return fail(error, pre + why);
  return true;
}

// Recognises the update a reduction block performs: X[idx] = X[idx] op value (or
// value op X[idx]) with op one of + * max min. Returns the store and fills *op and *value.
Stmt* reduction_update(Stmt* b, Op* op, const Expr** value) {
  Stmt* s = b->body.get();
  while (s && s->kind == StmtKind::Seq && s->stmts.size() == 1) s = s->stmts[0].get();
  if (!s || s->kind != StmtKind::Store || !s->value) return nullptr;
  const Expr& v = *s->value;
  if (v.kind != ExprKind::Binary ||
      !(v.op == Op::Add || v.op == Op::Mul || v.op == Op::Max || v.op == Op::Min))
    return nullptr;
  auto is_self = [&](const Expr& e) {
    if (e.kind != ExprKind::Load || e.buffer != s->buffer || e.args.size() != s->indices.size())
      return false;
    for (size_t d = 0; d < e.args.size(); ++d)
      if (!tir::equal(*e.args[d], *s->indices[d])) return false;
    return true;
  };
  *op = v.op;
  if (is_self(*v.args[0]))
    *value = v.args[1].get();
  else if (is_self(*v.args[1]))
    *value = v.args[0].get();
  else
    return nullptr;
  return s;
}

bool rfactor_impl(PrimFunc& g, const std::string& bname, const std::string& lname,
                  std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  LoopRef L = find_loop(g, lname, error);
  if (!L.loop) return false;
  std::string pre = "cannot rfactor '" + bname + "' at '" + lname + "': ";
  const std::string& lv = L.loop->var;
  std::vector<Stmt*> loops = loops_above(g, b);
  if (std::find(loops.begin(), loops.end(), L.loop) == loops.end())
    return fail(error, pre + "'" + lname + "' does not enclose it");
  Op op;
  const Expr* update = nullptr;
  Stmt* store = b->init ? reduction_update(b, &op, &update) : nullptr;
  if (!store) return fail(error, pre + "it is not a reduction of the form X = X op value");
  int x = store->buffer;
  std::string xn = buffer_name(g, x);
  int reduce_iter = -1;
  for (size_t k = 0; k < b->iters.size(); ++k) {
    const IterVar& iv = b->iters[k];
    if (!iv.binding || !tir::uses_var(*iv.binding, lv)) continue;
    if (iv.kind == IterKind::Spatial)
      return fail(error, pre + "'" + lname + "' binds the spatial axis '" + iv.name +
                             "'; rfactor needs a reduce loop");
    if (reduce_iter >= 0) return fail(error, pre + "'" + lname + "' binds two reduce axes");
    reduce_iter = int(k);
  }
  if (reduce_iter < 0)
    return fail(error, pre + "'" + lname + "' does not bind a reduce axis of it");
  // The reduce axis is vr = c0 + c * r + sum(c_k * l_k) over the other loops l_k it is
  // bound to (r_0 when r was split). The partial-sum block gets r as a new spatial axis u
  // and each l_k as a reduce axis of its own, vl_k over l_k's whole extent, and reads
  // vr as c0 + c * u + sum(c_k * vl_k). Keeping one axis `vr` bound to the strided rest
  // (r_0 * 16) would give it a 72-wide domain for 5 values: compute_at rebuilds loops
  // from domains, and would then read past the end. Its init runs where every vl_k is 0,
  // once per partial sum. Each axis must be dense, so the loops' ranges in the domain
  // are what the block may be run over, split predicates included (they stay on loops).
  const IterVar& vr = b->iters[reduce_iter];
  AccessEnv env;
  for (Stmt* l : loops) env.outer.push_back(l);
  Bound form;
  std::string why;
  if (!bound_of(*vr.binding, env, &form, &why) || !form.coeff.count(lv) || form.lo != form.hi)
    return fail(error, pre + "the reduce axis '" + vr.name + "' is not affine in '" + lname + "'");
  int64_t c = form.coeff[lv];
  struct Part {
    const Stmt* loop;
    int64_t coeff;
    std::string iter;
  };
  std::vector<Part> parts;  // the other loops, outermost first
  for (Stmt* l : loops) {
    auto it = form.coeff.find(l->var);
    if (l == L.loop || it == form.coeff.end()) continue;
    for (size_t k = 0; k < b->iters.size(); ++k)
      if (int(k) != reduce_iter && b->iters[k].binding &&
          tir::uses_var(*b->iters[k].binding, l->var))
        return fail(error, pre + "loop '" + l->var + "' feeds both '" + vr.name + "' and '" +
                               b->iters[k].name + "'");
    parts.push_back({l, it->second, ""});
  }

  std::string u = "v" + lv;
  while (find_iter(b, u)) u += "_rf";
  std::set<std::string> iter_taken{u};
  for (const IterVar& iv : b->iters) iter_taken.insert(iv.name);
  for (Part& p : parts) {
    p.iter = "v" + p.loop->var;
    while (iter_taken.count(p.iter)) p.iter += "_rf";
    iter_taken.insert(p.iter);
  }
  int64_t ext = L.loop->extent;

  // The buffer of partial results: X's shape plus one dim for r, in X's scope. When X is a
  // compacted accumulator (cache_write then compute_at: an Allocate per iteration of some
  // loop, indexed relative to it), the partial sums live in the same Allocate: a global
  // buffer indexed that way would be one buffer shared by every iteration, a race as soon
  // as the loop runs in parallel.
  tir::Buffer rb = g.buffers[x];
  rb.name = unique_buffer_name(g, xn + "_rf");
  rb.role = tir::BufferRole::Temp;
  rb.scope = g.buffers[x].role == tir::BufferRole::Temp ? g.buffers[x].scope : tir::Scope::Global;
  rb.shape.push_back(ext);
  g.buffers.push_back(rb);
  int xr = int(g.buffers.size()) - 1;
  std::function<void(StmtPtr&)> alloc_with_x = [&](StmtPtr& s) {
    if (!s) return;
    if (s->kind == StmtKind::Allocate && s->buffer == x) {
      auto a = std::make_unique<Stmt>(StmtKind::Allocate);
      a->buffer = xr;
      a->body = std::move(s->body);
      s->body = std::move(a);
      return;
    }
    alloc_with_x(s->init);
    alloc_with_x(s->body);
    for (StmtPtr& c : s->stmts) alloc_with_x(c);
  };
  alloc_with_x(g.body);

  // The partial-sum block: where the old block was, under the same loops.
  auto rf = std::make_unique<Stmt>(StmtKind::Block);
  rf->name = unique_block_name(g, bname + "_rf");
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Spatial)
      rf->iters.push_back({iv.name, iv.extent, iv.kind, tir::clone(*iv.binding)});
  rf->iters.push_back({u, ext, IterKind::Spatial, tir::var(lv)});
  for (size_t k = 0; k < b->iters.size(); ++k) {
    const IterVar& iv = b->iters[k];
    if (iv.kind != IterKind::Reduce) continue;
    if (int(k) != reduce_iter)
      rf->iters.push_back({iv.name, iv.extent, iv.kind, tir::clone(*iv.binding)});
    else if (parts.empty())  // still a reduction (its init keeps its meaning): one step
      rf->iters.push_back({iv.name, 1, iv.kind, tir::int_imm(0)});
    else
      for (const Part& p : parts)
        rf->iters.push_back({p.iter, p.loop->extent, iv.kind, tir::var(p.loop->var)});
  }
  if (b->predicate) rf->predicate = tir::clone(*b->predicate);
  rf->init = tir::clone(*b->init);
  rf->body = tir::clone(*b->body);
  auto term = [](const std::string& v, int64_t k) {
    return k == 1 ? tir::var(v) : tir::binary(Op::Mul, tir::var(v), tir::int_imm(k));
  };
  ExprPtr whole = parts.empty() ? tir::var(vr.name) : nullptr;
  for (const Part& p : parts)
    whole = whole ? tir::binary(Op::Add, std::move(whole), term(p.iter, p.coeff))
                  : term(p.iter, p.coeff);
  if (!parts.empty() && form.lo != 0)
    whole = tir::binary(Op::Add, std::move(whole), tir::int_imm(form.lo));
  whole = tir::binary(Op::Add, std::move(whole), term(u, c));
  if (parts.empty() && form.lo != 0)  // vr (one step, 0) + c0 + c * u
    whole = tir::binary(Op::Add, std::move(whole), tir::int_imm(form.lo));
  std::map<std::string, const Expr*> with{{vr.name, whole.get()}};
  auto to_rf = [&](std::vector<ExprPtr>& idx) { idx.push_back(tir::var(u)); };
  for (Stmt* part : {rf->init.get(), rf->body.get()}) {
    statement_exprs(part, [&](ExprPtr& root) {
      root = substitute_all(*root, with);
      rewrite_expr(root, [&](ExprPtr& e) {
        if (e->kind == ExprKind::Load && e->buffer == x) {
          e->buffer = xr;
          to_rf(e->args);
        }
      });
    });
    std::vector<Stmt*> stores;
    stores_in(part, &stores);
    for (Stmt* s : stores)
      if (s->buffer == x) {
        s->buffer = xr;
        to_rf(s->indices);
      }
  }

  // When a split of the reduce loop did not divide, some combinations of the dense axes are
  // not steps of the reduction: past its end (vr_0 * 16 + vr_1 = 79 of 72), or, for a split
  // of a split, a step that another combination also makes (r_in = 3 of 3 is the next
  // r_out's r_in = 0). The loops' predicate skips them where the block stands, but it
  // speaks of loops, and compute_at rebuilds loops from the axes' domains; so the update
  // itself is guarded, in terms of the axes, wherever it goes: by each condition of the
  // predicate on these loops only (each is now exactly an axis), and by the end.
  std::vector<ExprPtr> guard;
  auto add_guard = [&](ExprPtr c) {
    c = tir::simplify(*c);
    for (const ExprPtr& g2 : guard)
      if (tir::equal(*g2, *c)) return;
    guard.push_back(std::move(c));
  };
  if (b->predicate) {
    std::map<std::string, ExprPtr> axis_of;
    axis_of[lv] = tir::var(u);
    for (const Part& p : parts) axis_of[p.loop->var] = tir::var(p.iter);
    std::vector<const Expr*> conds;
    conjuncts(*b->predicate, &conds);
    for (const Expr* cond : conds) {
      bool only_these = true, any = false;
      visit_expr(*cond, [&](const Expr& e) {
        if (e.kind != ExprKind::Var) return;
        if (axis_of.count(e.name)) any = true;
        else only_these = false;
      });
      if (!any || !only_these) continue;
      std::map<std::string, const Expr*> onto;
      for (const auto& [loop, axis] : axis_of) onto[loop] = axis.get();
      add_guard(substitute_all(*cond, onto));
    }
  }
  int64_t top_value = form.lo + c * (ext - 1);
  for (const Part& p : parts) top_value += p.coeff * (p.loop->extent - 1);
  if (top_value > vr.extent - 1)
    add_guard(tir::binary(Op::Lt, tir::clone(*whole), tir::int_imm(vr.extent)));
  if (!guard.empty()) rf->body = tir::make_if(conjunction(std::move(guard)), std::move(rf->body));

  // The final reduction of the partial results, right after the statement that holds only
  // the partial-sum block: under the loops it still shares (linear_relu's i, j), before any
  // block there that reads X.
  Stmt* top = b;
  for (Stmt* s = parent_of(g, b); s && blocks_under(s).size() == 1; s = parent_of(g, s)) top = s;
  std::vector<Stmt*> above_top = loops_above(g, top);
  std::set<std::string> reduce = reduce_loop_vars(b, loops);
  std::vector<Stmt*> copied;
  std::set<std::string> dropped;
  for (Stmt* l : loops) {
    if (std::find(above_top.begin(), above_top.end(), l) != above_top.end()) continue;
    if (reduce.count(l->var))
      dropped.insert(l->var);
    else
      copied.push_back(l);
  }
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Spatial && iv.binding && uses_any(*iv.binding, dropped))
      return fail(error, pre + "its spatial axis '" + iv.name + "' depends on a reduce loop");
  std::set<std::string> taken;
  for (Stmt* l : above_top) taken.insert(l->var);
  for (Stmt* l : copied) taken.insert(l->var);
  for (const IterVar& iv : b->iters) taken.insert(iv.name);
  taken.insert(u);
  std::string rloop = "rf";
  for (int n = 1; taken.count(rloop); ++n) rloop = "rf_" + std::to_string(n);

  auto fin = std::make_unique<Stmt>(StmtKind::Block);
  fin->name = bname;
  for (const IterVar& iv : b->iters)
    if (iv.kind == IterKind::Spatial)
      fin->iters.push_back({iv.name, iv.extent, iv.kind, tir::clone(*iv.binding)});
  fin->iters.push_back({u, ext, IterKind::Reduce, tir::var(rloop)});
  fin->predicate = predicate_without(b->predicate.get(), dropped);
  fin->init = tir::clone(*b->init);
  std::vector<ExprPtr> idx, self_idx, rf_idx;
  for (const ExprPtr& i : store->indices) {
    idx.push_back(tir::clone(*i));
    self_idx.push_back(tir::clone(*i));
    rf_idx.push_back(tir::clone(*i));
  }
  rf_idx.push_back(tir::var(u));
  fin->body = tir::make_store(
      x, std::move(idx),
      tir::binary(op, tir::load(x, std::move(self_idx)), tir::load(xr, std::move(rf_idx))));
  StmtPtr nest = std::move(fin);
  nest = tir::make_for(rloop, ext, std::move(nest));
  for (size_t k = copied.size(); k-- > 0;) nest = copy_loop(*copied[k], std::move(nest));

  insert_next_to(g, top, std::move(nest), /*after=*/true);
  replace_stmt(g, b, std::move(rf));
  if (std::string why = allocation_escape(g); !why.empty()) return fail(error, pre + why);
  return true;
}

}  // namespace

bool decompose_reduction(PrimFunc& f, const std::string& block, const std::string& loop,
                         std::string* error) {
  return commit(f, error, [&](PrimFunc& g, std::string* e) {
    return decompose_reduction_impl(g, block, loop, e);
  });
}

bool rfactor(PrimFunc& f, const std::string& block, const std::string& loop, std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g, std::string* e) { return rfactor_impl(g, block, loop, e); });
}

}  // namespace sched
}  // namespace descent::tensor
