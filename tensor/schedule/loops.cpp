// Loop transformations: split, tile, reorder, fuse. They reshape the iteration space and
// never what a block computes: the blocks' bindings are rewritten (i -> i_0 * 32 + i_1), so
// each block still sees the same iteration variables and does the same work, only in
// another order. This is where tiling for the cache starts: split the loops, reorder the
// pieces, and the inner loops walk a tile small enough to stay in cache. A split whose
// factor does not divide the extent guards the blocks with a predicate, so the function
// still computes exactly the original points.
#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

bool name_taken_on_path(PrimFunc& f, const Stmt* at, const std::string& n) {
  return fresh_loop_name(f, at, n) != n;
}

bool valid_loop_name(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Splits `loop` (found in g) into outer (ceil(E/F)) and inner (F); the caller has checked
// the factor and the names. Returns the outer loop; the inner is its body.
Stmt* split_loop(PrimFunc& g, Stmt* loop, int64_t factor, const std::string& outer_name,
                 const std::string& inner_name) {
  const int64_t extent = loop->extent;
  const std::string old = loop->var;
  // i -> i_0 * F + i_1 everywhere below the loop (bindings, predicates).
  ExprPtr value = tir::binary(tir::Op::Add,
                              tir::binary(tir::Op::Mul, tir::var(outer_name), tir::int_imm(factor)),
                              tir::var(inner_name));
  substitute_loop_var(loop, old, *value);
  // The last outer iteration overshoots when F does not divide E: every block below gets
  // the guard, so the function still computes exactly the original points.
  if (extent % factor != 0) {
    for (Stmt* b : blocks_under(loop)) {
      ExprPtr guard = tir::binary(tir::Op::Lt, tir::clone(*value), tir::int_imm(extent));
      b->predicate = b->predicate ? tir::binary(tir::Op::And, std::move(b->predicate),
                                                std::move(guard))
                                  : std::move(guard);
    }
  }
  // Reuse the For node as the inner loop (it keeps the body); wrap it in the new outer.
  StmtPtr* slot = slot_of(g, loop);
  StmtPtr inner = std::move(*slot);
  inner->var = inner_name;
  inner->extent = factor;
  *slot = tir::make_for(outer_name, (extent + factor - 1) / factor, std::move(inner));
  return slot->get();
}

// The default name for a new loop: `base` if free on the path, else base_1, ...
std::string pick_name(PrimFunc& g, const Stmt* at, const std::string& base,
                      const std::set<std::string>& also_taken) {
  std::string n = fresh_loop_name(g, at, base);
  for (int k = 1; also_taken.count(n); ++k)
    n = fresh_loop_name(g, at, base + "_" + std::to_string(k));
  return n;
}

bool split_impl(PrimFunc& g, const std::string& name, int64_t factor,
                const std::vector<std::string>& names, Stmt** outer_out, std::string* error) {
  LoopRef ref = find_loop(g, name, error);
  if (!ref.loop) return false;
  Stmt* loop = ref.loop;
  const std::string what = "cannot split '" + name + "': ";
  if (factor < 1)
    return fail(error, what + "factor " + std::to_string(factor) + " must be at least 1");
  if (factor > loop->extent)
    return fail(error, what + "factor " + std::to_string(factor) + " exceeds the extent " +
                           std::to_string(loop->extent) + " of loop '" + loop->var + "'");
  if (loop->for_kind != ForKind::Serial) return fail(error, what + already(loop));
  std::string outer, inner;
  if (!names.empty()) {
    if (names.size() != 2) return fail(error, what + "expected two names for the new loops");
    outer = names[0];
    inner = names[1];
    for (const std::string& n : names) {
      if (!valid_loop_name(n)) return fail(error, what + "'" + n + "' is not a valid loop name");
      if (n != loop->var && name_taken_on_path(g, loop, n))
        return fail(error, what + "the name '" + n + "' is already used by a loop on this path");
    }
    if (outer == inner) return fail(error, what + "the two new loops need different names");
  } else {
    outer = pick_name(g, loop, loop->var + "_0", {});
    inner = pick_name(g, loop, loop->var + "_1", {outer});
  }
  Stmt* o = split_loop(g, loop, factor, outer, inner);
  if (outer_out) *outer_out = o;
  return true;
}

// The loops from `outer` down its perfect chain while they are loops.
std::vector<Stmt*> chain_from(Stmt* outer) {
  std::vector<Stmt*> chain;
  for (Stmt* s = outer; s && s->kind == StmtKind::For; s = only_child(s)) chain.push_back(s);
  return chain;
}

// A local.* binding only means something inside a work-group (group.*) loop.
bool check_bound_nesting(PrimFunc& g, std::string* why) {
  for (Stmt* l : loops_under(g.body.get())) {
    if (l->for_kind != ForKind::Bound || l->thread_tag.rfind("local.", 0) != 0) continue;
    bool inside_group = false;
    for (Stmt* b : blocks_under(l)) {
      for (Stmt* a : loops_above(g, b)) {
        if (a == l) break;
        if (a->for_kind == ForKind::Bound && a->thread_tag.rfind("group.", 0) == 0)
          inside_group = true;
      }
      break;
    }
    if (!inside_group) {
      *why = "loop '" + l->var + "' bound to " + l->thread_tag +
             " would not be inside a loop bound to group.*";
      return false;
    }
  }
  return true;
}

// A block's init runs at the point where every reduce binding is 0, so that point must be
// the first one the nest visits for each output element. Reordering loops keeps that true
// for loops that feed only spatial or only reduce axes (each starts at 0), but not for a
// loop that mixes both (a spatial loop fused with a reduce loop, or pieces split from one):
// the order of such pieces is what makes reduce index 0 come first, so it must not change.
// `before` and `after` are the loop variables of the chain under `top` in the two orders.
bool check_mixed_order(Stmt* top, const std::vector<std::string>& before,
                       const std::vector<std::string>& after, std::string* why) {
  for (Stmt* b : blocks_under(top)) {
    auto mixed = [&](const std::string& v) {
      bool spatial = false, reduce = false;
      for (const tir::IterVar& iv : b->iters) {
        if (!iv.binding || !tir::uses_var(*iv.binding, v)) continue;
        (iv.kind == tir::IterKind::Reduce ? reduce : spatial) = true;
      }
      return spatial && reduce;
    };
    std::vector<std::string> was, now;
    for (const std::string& v : before)
      if (mixed(v)) was.push_back(v);
    for (const std::string& v : after)
      if (mixed(v)) now.push_back(v);
    if (was == now) continue;
    for (size_t i = 0; i < was.size(); ++i)
      if (was[i] != now[i]) {
        *why = "loops '" + was[i] + "' and '" + now[i] +
               "' each feed both a spatial and a reduce axis of block '" + b->name +
               "'; their order decides where its init runs";
        return false;
      }
  }
  return true;
}

// The loop header (what moves when loops are reordered); bindings refer to loops by name,
// so exchanging headers between For nodes reorders the nest without touching the body.
struct LoopHeader {
  std::string var;
  int64_t extent;
  ForKind kind;
  std::string tag;
  int unroll_factor;
};
LoopHeader header_of(const Stmt* l) {
  return {l->var, l->extent, l->for_kind, l->thread_tag, l->unroll_factor};
}
void set_header(Stmt* l, const LoopHeader& h) {
  l->var = h.var;
  l->extent = h.extent;
  l->for_kind = h.kind;
  l->thread_tag = h.tag;
  l->unroll_factor = h.unroll_factor;
}

// `what` starts every message ("cannot reorder i, k: ").
bool reorder_impl(PrimFunc& g, const std::vector<Stmt*>& order, const std::string& what,
                  std::string* error) {
  // The outermost named loop is the one that contains all the others.
  Stmt* outer = nullptr;
  for (Stmt* l : order) {
    bool holds_all = true;
    for (Stmt* m : order) holds_all = holds_all && contains(l, m);
    if (holds_all) outer = l;
  }
  if (!outer) return fail(error, what + "they are not nested in one another");
  std::vector<Stmt*> chain = chain_from(outer);
  std::set<Stmt*> wanted(order.begin(), order.end());
  size_t last = 0, seen = 0;
  for (size_t i = 0; i < chain.size() && seen < wanted.size(); ++i)
    if (wanted.count(chain[i])) {
      ++seen;
      last = i;
    }
  if (seen < wanted.size()) {
    // Name the loop where the perfect nest stops.
    Stmt* stop = chain.back();
    return fail(error, what + "they are not one perfect nest (the body of '" + stop->var +
                           "' is not a single loop)");
  }
  chain.resize(last + 1);
  std::vector<std::string> before, after;
  for (Stmt* l : chain) before.push_back(l->var);
  std::vector<LoopHeader> headers;
  for (Stmt* l : order) headers.push_back(header_of(l));
  size_t next = 0;
  for (Stmt* l : chain)
    if (wanted.count(l)) set_header(l, headers[next++]);
  for (Stmt* l : chain) after.push_back(l->var);
  std::string why;
  if (!check_mixed_order(chain.front(), before, after, &why)) return fail(error, what + why);
  if (!check_bound_nesting(g, &why)) return fail(error, what + why);
  return true;
}

}  // namespace

bool split(PrimFunc& f, const std::string& loop, int64_t factor,
           const std::vector<std::string>& names, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    return split_impl(g, loop, factor, names, nullptr, error);
  });
}

bool reorder(PrimFunc& f, const std::vector<std::string>& loops, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    if (loops.empty()) return fail(error, "cannot reorder: no loops given");
    std::vector<Stmt*> order;
    for (const std::string& n : loops) {
      if (std::count(loops.begin(), loops.end(), n) > 1)
        return fail(error, "cannot reorder " + join(loops) + ": loop '" + n + "' appears twice");
      LoopRef ref = find_loop(g, n, error);
      if (!ref.loop) return false;
      if (std::find(order.begin(), order.end(), ref.loop) != order.end())
        return fail(error, "cannot reorder " + join(loops) + ": loop '" + n + "' appears twice");
      order.push_back(ref.loop);
    }
    return reorder_impl(g, order, "cannot reorder " + join(loops) + ": ", error);
  });
}

bool tile(PrimFunc& f, const std::string& loop1, const std::string& loop2, int64_t f1,
          int64_t f2, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    LoopRef a = find_loop(g, loop1, error);
    if (!a.loop) return false;
    LoopRef b = find_loop(g, loop2, error);
    if (!b.loop) return false;
    if (only_child(a.loop) != b.loop)
      return fail(error, "cannot tile '" + loop1 + "' and '" + loop2 + "': '" + loop2 +
                             "' must be the only statement in the body of '" + loop1 + "'");
    // Split the outer loop first (its guard comes first in a predicate). The inner loop is
    // still found by its name: splitting reuses the For node as the inner part, and the
    // new names avoid every name on the path.
    Stmt* a_outer = nullptr;
    Stmt* b_outer = nullptr;
    if (!split_impl(g, loop1, f1, {}, &a_outer, error)) return false;
    if (!split_impl(g, loop2, f2, {}, &b_outer, error)) return false;
    Stmt* a_inner = only_child(a_outer);
    Stmt* b_inner = only_child(b_outer);
    std::vector<Stmt*> order = {a_outer, b_outer, a_inner, b_inner};
    return reorder_impl(g, order, "cannot tile '" + loop1 + "' and '" + loop2 + "': ", error);
  });
}

bool fuse(PrimFunc& f, const std::string& loop1, const std::string& loop2,
          const std::string& name, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    LoopRef a = find_loop(g, loop1, error);
    if (!a.loop) return false;
    LoopRef b = find_loop(g, loop2, error);
    if (!b.loop) return false;
    const std::string what = "cannot fuse '" + loop1 + "' and '" + loop2 + "': ";
    if (a.loop == b.loop) return fail(error, what + "a loop cannot be fused with itself");
    if (only_child(a.loop) != b.loop)
      return fail(error, what + "'" + loop2 + "' must be the only statement in the body of '" +
                             loop1 + "'");
    for (Stmt* l : {a.loop, b.loop})
      if (l->for_kind != ForKind::Serial)
        return fail(error, what + "'" + l->var + "' is " + tir::for_kind_name(l->for_kind) +
                               (l->for_kind == ForKind::Bound ? " to " + l->thread_tag : ""));
    std::string fused;
    if (name.empty()) {
      fused = pick_name(g, a.loop, a.loop->var + "_" + b.loop->var + "_fused", {});
    } else {
      if (!valid_loop_name(name))
        return fail(error, what + "'" + name + "' is not a valid loop name");
      if (name != a.loop->var && name != b.loop->var && name_taken_on_path(g, a.loop, name))
        return fail(error, what + "the name '" + name + "' is already used by a loop on this path");
      fused = name;
    }
    const int64_t e1 = a.loop->extent, e2 = b.loop->extent;
    // i -> f / E2, j -> f % E2; the degenerate extents give the plain variable.
    ExprPtr fv = tir::var(fused);
    ExprPtr iv = e2 == 1 ? tir::clone(*fv)
                 : e1 == 1 ? tir::int_imm(0)
                           : tir::binary(tir::Op::Div, tir::clone(*fv), tir::int_imm(e2));
    ExprPtr jv = e2 == 1 ? tir::int_imm(0)
                 : e1 == 1 ? tir::clone(*fv)
                           : tir::binary(tir::Op::Mod, tir::clone(*fv), tir::int_imm(e2));
    // Substitute through temporaries first: the fused name may equal i or j.
    const std::string ta = "%fuse_outer", tb = "%fuse_inner";
    substitute_loop_var(b.loop, a.loop->var, *tir::var(ta));
    substitute_loop_var(b.loop, b.loop->var, *tir::var(tb));
    substitute_loop_var(b.loop, ta, *iv);
    substitute_loop_var(b.loop, tb, *jv);
    StmtPtr* slot = slot_of(g, a.loop);
    StmtPtr body = std::move(b.loop->body);
    *slot = tir::make_for(fused, e1 * e2, std::move(body));
    return true;
  });
}


// ---- fission: one nest per statement of a sequence ------------------------------------

void touches_in_expr(const Expr& e, const Stmt* block, std::vector<Touch>* out) {
  visit_expr(e, [&](const Expr& x) {
    if (x.kind != ExprKind::Load) return;
    Touch t{x.buffer, false, {}, {}};
    for (const auto& i : x.args) t.index.push_back(block ? tir::inline_bindings(*i, *block) : tir::clone(*i));
    out->push_back(std::move(t));
  });
}

void touches_under(Stmt* s, std::vector<Touch>* out) {
  std::map<std::string, int64_t> inner;  // the loops around the statement being visited
  std::function<void(Stmt*)> visit = [&](Stmt* x) {
    if (!x) return;
    const size_t first = out->size();
    if (x->kind == StmtKind::Block) {
      for (Stmt* st : stores_of(x)) {
        Touch t{st->buffer, true, {}, {}};
        for (const auto& i : st->indices) t.index.push_back(tir::inline_bindings(*i, *x));
        out->push_back(std::move(t));
        for (const auto& i : st->indices) touches_in_expr(*i, x, out);
        if (st->value) touches_in_expr(*st->value, x, out);
      }
      if (x->predicate) touches_in_expr(*x->predicate, x, out);
    } else if (x->kind == StmtKind::Store) {
      Touch t{x->buffer, true, {}, {}};
      for (const auto& i : x->indices) t.index.push_back(tir::clone(*i));
      out->push_back(std::move(t));
      if (x->value) touches_in_expr(*x->value, nullptr, out);
    }
    for (size_t k = first; k < out->size(); ++k) (*out)[k].inner = inner;
    if (x->kind == StmtKind::Block) return;  // its statements are done
    const bool loop = x->kind == StmtKind::For;
    if (loop) inner[x->var] = x->extent;
    for (StmtPtr* c : child_slots(x)) visit(c->get());
    if (loop) inner.erase(x->var);
  };
  visit(s);
}

namespace {

// Whether e takes a different value for each value of `v` in [0, extent), mentioning no
// variable but v and the `fixed` ones (loops outside, constant while v runs): then an
// element indexed by it belongs to one iteration of v alone. With fixed variables present
// only sums and products are accepted (a shift by them keeps e injective; a division or a
// min might not), and they are taken at 0 for the check.
bool injective_in(const Expr& e, const std::string& v, int64_t extent,
                  const std::set<std::string>& fixed) {
  bool other = false, affine = true;
  visit_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Var && x.name != v && !fixed.count(x.name)) other = true;
    if (x.kind == ExprKind::Binary && x.op != Op::Add && x.op != Op::Sub && x.op != Op::Mul)
      affine = false;
  });
  if (other || !tir::uses_var(e, v)) return false;
  if (e.kind == ExprKind::Var) return true;
  ExprPtr at_v = tir::clone(e);
  for (const std::string& f : fixed)
    if (tir::uses_var(*at_v, f)) {
      if (!affine) return false;
      at_v = tir::substitute(*at_v, f, *tir::int_imm(0));
    }
  if (extent > 4096) return false;
  std::set<int64_t> seen;
  for (int64_t k = 0; k < extent; ++k) {
    ExprPtr at = tir::simplify(*tir::substitute(*at_v, v, *tir::int_imm(k)));
    if (at->kind != ExprKind::IntImm || !seen.insert(at->ival).second) return false;
  }
  return true;
}

}  // namespace

// An affine index at given values of its variables (the rest at 0); false when it does not
// come to a constant.
static bool value_at(const Expr& e, const std::map<std::string, int64_t>& at, int64_t* out) {
  ExprPtr c = tir::clone(e);
  std::set<std::string> vars;
  visit_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Var) vars.insert(x.name);
  });
  for (const std::string& v : vars) {
    auto it = at.find(v);
    c = tir::substitute(*c, v, *tir::int_imm(it == at.end() ? 0 : it->second));
  }
  c = tir::simplify(*c);
  if (c->kind != ExprKind::IntImm) return false;
  *out = c->ival;
  return true;
}

// Whether, in dimension d, iteration k of `loop` reaches only a span of its own: for each k,
// the least and greatest index any access takes over the loops inside (each index an affine
// function: sums, differences, products by constants, so its extremes lie at the inner
// loops' first and last values), the spans of different k never overlapping. The loops
// outside (`fixed`) are taken at 0, which says the same for their every value only if each
// moves every access alike: each must have one coefficient in all of them (A[i + j] beside
// A[2 i + j] would overlap at i = 1 and not at i = 0).
static bool blocked_in(const std::vector<const Touch*>& all, size_t d, const Stmt& loop,
                       const std::set<std::string>& fixed) {
  if (loop.extent <= 0 || loop.extent > 4096) return false;
  const int64_t none = std::numeric_limits<int64_t>::max();
  std::vector<std::pair<int64_t, int64_t>> span(size_t(loop.extent), {none, -none});
  std::map<std::string, int64_t> coefficient;  // of each outer variable, the first access's
  for (size_t n = 0; n < all.size(); ++n) {
    const Touch* t = all[n];
    if (t->index.size() <= d) return false;
    for (const std::string& f : fixed) {
      int64_t base = 0, one = 0;
      if (!value_at(*t->index[d], {}, &base) || !value_at(*t->index[d], {{f, 1}}, &one)) return false;
      auto [it, first] = coefficient.emplace(f, one - base);
      if (!first && it->second != one - base) return false;
    }
  }
  for (const Touch* t : all) {
    if (t->index.size() <= d) return false;
    const Expr& e = *t->index[d];
    bool affine = true;
    visit_expr(e, [&](const Expr& x) {
      if (x.kind == ExprKind::Var)
        affine = affine && (x.name == loop.var || fixed.count(x.name) || t->inner.count(x.name));
      else if (x.kind == ExprKind::Binary)
        affine = affine && (x.op == Op::Add || x.op == Op::Sub ||
                            (x.op == Op::Mul && (x.args[0]->kind == ExprKind::IntImm ||
                                                 x.args[1]->kind == ExprKind::IntImm)));
      else
        affine = affine && x.kind == ExprKind::IntImm;
    });
    if (!affine) return false;
    ExprPtr base = tir::clone(e);
    for (const std::string& f : fixed)
      if (tir::uses_var(*base, f)) base = tir::substitute(*base, f, *tir::int_imm(0));
    std::vector<std::pair<std::string, int64_t>> vars;
    for (const auto& [name, extent] : t->inner)
      if (tir::uses_var(*base, name)) vars.emplace_back(name, extent);
    if (vars.size() > 4) return false;
    for (int64_t k = 0; k < loop.extent; ++k) {
      ExprPtr at = tir::substitute(*base, loop.var, *tir::int_imm(k));
      for (unsigned corner = 0; corner < (1u << vars.size()); ++corner) {
        ExprPtr c = tir::clone(*at);
        for (size_t v = 0; v < vars.size(); ++v)
          c = tir::substitute(*c, vars[v].first, *tir::int_imm(corner >> v & 1u ? vars[v].second - 1 : 0));
        c = tir::simplify(*c);
        if (c->kind != ExprKind::IntImm) return false;
        auto& s = span[size_t(k)];
        s = {std::min(s.first, c->ival), std::max(s.second, c->ival)};
      }
    }
  }
  std::sort(span.begin(), span.end());
  for (size_t k = 0; k + 1 < span.size(); ++k)
    if (span[k].second >= span[k + 1].first) return false;
  return true;
}

bool separated_by(const std::vector<const Touch*>& all, const Stmt& loop,
                  const std::set<std::string>& fixed) {
  size_t dims = all.empty() ? 0 : all[0]->index.size();
  for (size_t d = 0; d < dims; ++d) {
    bool same = true;
    for (const Touch* t : all)
      same = same && t->index.size() == dims && tir::equal(*t->index[d], *all[0]->index[d]);
    if (same && injective_in(*all[0]->index[d], loop.var, loop.extent, fixed)) return true;
  }
  for (size_t d = 0; d < dims; ++d)
    if (blocked_in(all, d, loop, fixed)) return true;
  return false;
}


bool fission(PrimFunc& f, const std::string& loop, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    LoopRef a = find_loop(g, loop, error);
    if (!a.loop) return false;
    const std::string what = "cannot fission '" + loop + "': ";
    // The loops from `loop` down to the first sequence of statements.
    std::vector<Stmt*> chain = {a.loop};
    Stmt* seq = nullptr;
    for (Stmt* s = a.loop;;) {
      Stmt* body = s->body.get();
      if (body && body->kind == StmtKind::Seq && body->stmts.size() >= 2) {
        seq = body;
        break;
      }
      Stmt* c = only_child(s);
      if (!c || c->kind != StmtKind::For)
        return fail(error, what + "below it is a single statement, not a sequence of them (nothing to separate)");
      chain.push_back(c);
      s = c;
    }
    for (Stmt* l : chain)
      if (l->for_kind == ForKind::Bound)
        return fail(error, what + "'" + l->var + "' is bound to " + l->thread_tag);
    // Legal when no part reads or writes, in one iteration of the loops, what another part
    // writes in a different iteration: every buffer one part writes and another touches
    // must be indexed, in every access, by the same injective function of each loop.
    std::vector<std::vector<Touch>> parts(seq->stmts.size());
    for (size_t k = 0; k < parts.size(); ++k) touches_under(seq->stmts[k].get(), &parts[k]);
    for (size_t p = 0; p < parts.size(); ++p)
      for (size_t q = p + 1; q < parts.size(); ++q) {
        std::set<int> shared;
        for (const Touch& x : parts[p])
          for (const Touch& y : parts[q])
            if (x.buffer == y.buffer && (x.write || y.write)) shared.insert(x.buffer);
        for (int b : shared) {
          std::vector<const Touch*> all;
          for (size_t k : {p, q})
            for (const Touch& t : parts[k])
              if (t.buffer == b) all.push_back(&t);
          // The loops above the chain are constant while it runs (i_0 in i_0 * 16 + i_1).
          std::set<std::string> fixed;
          for (Stmt* l : loops_above(g, a.loop)) fixed.insert(l->var);
          for (Stmt* l : chain) {
            if (!separated_by(all, *l, fixed))
              return fail(error, what + "'" + buffer_name(g, b) + "' is written in one part and used in another across iterations of '" + l->var + "' (each part would see the other's later iterations)");
          }
        }
      }
    // One copy of the loops per statement, in order.
    std::vector<StmtPtr> nests;
    for (auto& part : seq->stmts) {
      StmtPtr body = std::move(part);
      for (size_t k = chain.size(); k-- > 0;) {
        const Stmt* l = chain[k];
        StmtPtr loop_copy = tir::make_for(l->var, l->extent, std::move(body), l->for_kind);
        loop_copy->thread_tag = l->thread_tag;
        loop_copy->unroll_factor = l->unroll_factor;
        body = std::move(loop_copy);
      }
      nests.push_back(std::move(body));
    }
    // Into the sequence holding the loop, if there is one (no sequence inside a sequence:
    // the other primitives find a nest's siblings there).
    Stmt* parent = parent_of(g, a.loop);
    if (parent && parent->kind == StmtKind::Seq) {
      auto& list = parent->stmts;
      size_t at = 0;
      while (at < list.size() && list[at].get() != a.loop) ++at;
      list.erase(list.begin() + long(at));
      for (size_t k = 0; k < nests.size(); ++k) list.insert(list.begin() + long(at + k), std::move(nests[k]));
    } else {
      replace_stmt(g, a.loop, tir::make_seq(std::move(nests)));
    }
    return true;
  });
}

}  // namespace descent::tensor::sched
