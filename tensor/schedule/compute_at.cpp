// compute_at and reverse_compute_at: fuse two stages by moving one block's loop nest under
// a loop of the other. compute_at moves a producer under its consumer's loop and, in each
// iteration, computes just the region the consumer reads there; reverse_compute_at moves a
// consumer under its producer's loop, so each piece is used as soon as it is made. Either
// way the data stays hot, and compact_buffers can then shrink a staging buffer to one
// iteration's box. Both lean on regions.cpp, and refuse any move that could change what some
// block reads.
#include <algorithm>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

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

}  // namespace

bool compute_at(PrimFunc& f, const std::string& block, const std::string& loop,
                std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return compute_at_impl(g, block, loop, error); });
}

bool reverse_compute_at(PrimFunc& f, const std::string& block, const std::string& loop,
                        std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g) { return reverse_compute_at_impl(g, block, loop, error); });
}

}  // namespace descent::tensor::sched
