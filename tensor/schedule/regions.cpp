// Regions: which elements of a buffer the blocks under a loop L touch during one iteration
// of L. It is the one idea behind compute_at, reverse_compute_at and compact_buffers. Block
// bindings are affine in the loop variables, so each index of an access is
//   sum(c_v * v for the loops at or above L)  +  [lo, hi]  (the loops inside L sweep it)
// and a region is one such form (a Bound) per dimension. Moving a producer under L means
// computing exactly the region its consumers read there (TVM's compute_at does the same with
// integer sets); compacting a staging buffer means allocating only that box, per iteration
// of L. The file starts with the plainer facts those analyses stand on: which buffers a
// block reads and writes, and how.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

// ---- What a block reads and writes -------------------------------------------------------

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

// ---- Regions ------------------------------------------------------------------------------

namespace {

bool is_const(const Bound& b) { return b.coeff.empty() && b.lo == b.hi; }

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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace descent::tensor::sched
