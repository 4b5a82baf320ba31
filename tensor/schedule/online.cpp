// Flash attention's two steps of its own: online_softmax and merge. Everything else on the
// way from attention's five nests to the fused kernel is an ordinary primitive
// (reverse_compute_at brings the rows together, reorder puts a sum's reduction loop
// outside, set_scope moves the row buffers out of memory); docs/transformers.md walks the
// whole road.
//
// online_softmax MX: the "online normalizer" of Milakov and Gimelshein. A softmax-weighted
// sum needs the row's maximum before its first exponential, so unfused it is three passes
// over the row: the max, the exponentials p = exp(x - max), the sums over p. With a running
// maximum m the passes become one: at step j
//     m' = max(m, x_j);  scale = exp(m - m');  S = S * scale + exp(x_j - m') * F_j
// and after the last step S = sum_j exp(x_j - m_final) F_j, the same sum (each term was
// multiplied by exp(m_j - m_final) on the way: the scales telescope). The primitive finds
// the pattern (a max reduction MX over loop j; the next loop over j computing
// P = exp(E - MX); then one or more loops over j, each a sum S = S + P * F with init 0),
// adds the rescaling block (MX_scale = exp(old max - new max), computed before the max's
// update as exp(m - max(m, x))),
// rewrites each sum's update to S * scale + P * F, and makes the loops one.
//
// merge L1 L2: two sibling loops over the same range become one (loop fusion of siblings,
// Halide's compute_with), legal when every buffer both touch and one writes is touched by
// both at one element per iteration, the element iteration j names: then iteration j of L2
// finds what iteration j of L1 left, as it did when L1 finished first. Flash attention uses
// it to compute the row's scores in the same loop that consumes them.
//
// After either, a row buffer touched only inside the new loop shrinks to one element.
#include <algorithm>
#include <map>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// The loop `block`'s only reduce axis is bound to (the binding is that loop's variable), or
// null with *why.
Stmt* reduce_loop(PrimFunc& g, Stmt* block, std::string* why) {
  const IterVar* r = nullptr;
  for (const IterVar& iv : block->iters)
    if (iv.kind == IterKind::Reduce) {
      if (r) {
        *why = "it reduces over two axes";
        return nullptr;
      }
      r = &iv;
    }
  if (!r || !r->binding || r->binding->kind != ExprKind::Var) {
    *why = r ? "its reduce axis is not one loop's variable" : "it is not a reduction";
    return nullptr;
  }
  for (Stmt* l : loops_above(g, block))
    if (l->var == r->binding->name) return l;
  *why = "no loop binds its reduce axis";
  return nullptr;
}

bool reads_any(const Expr& e, const std::set<int>& buffers) {
  bool found = false;
  visit_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Load && buffers.count(x.buffer)) found = true;
  });
  return found;
}

// The Load of `buffer` in e (the first), or null.
const Expr* load_of(const Expr& e, int buffer) {
  const Expr* out = nullptr;
  visit_expr(e, [&](const Expr& x) {
    if (!out && x.kind == ExprKind::Load && x.buffer == buffer) out = &x;
  });
  return out;
}

// An access's indices as loop expressions (the block's variables replaced by bindings).
std::vector<ExprPtr> in_loop_terms(const std::vector<const Expr*>& idx, const Stmt& block) {
  std::vector<ExprPtr> out;
  for (const Expr* e : idx) out.push_back(tir::simplify(*tir::inline_bindings(*e, block)));
  return out;
}

bool same_indices(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (!tir::equal(*a[d], *b[d])) return false;
  return true;
}

// Moves the bodies of `others` (loops after `into` in the same Seq) into `into`'s body, their
// variables renamed to its own, and removes them.
void join_loops(PrimFunc& g, Stmt* into, const std::vector<Stmt*>& others) {
  std::vector<StmtPtr> body;
  body.push_back(std::move(into->body));
  for (Stmt* l : others) {
    substitute_loop_var(l->body.get(), l->var, *tir::var(into->var));
    body.push_back(std::move(l->body));
    erase_stmt(g, l);
  }
  into->body = tir::make_seq(std::move(body));
}

// Every local row buffer now touched only inside a loop deeper than its Allocate is
// re-allocated there, at the size one iteration of that loop touches (compact_buffers).
void recompact(PrimFunc& g) {
  for (size_t x = 0; x < g.buffers.size(); ++x) {
    if (g.buffers[x].scope == tir::Scope::Global || g.buffers[x].role != tir::BufferRole::Temp)
      continue;
    Stmt* alloc = nullptr;
    walk(g.body.get(), [&](Stmt* s) {
      if (s->kind == StmtKind::Allocate && s->buffer == int(x)) alloc = s;
      return alloc == nullptr;
    });
    if (!alloc) continue;
    Stmt* loop = innermost_loop_around(g, int(x));
    if (!loop || !contains(alloc, loop)) continue;
    replace_stmt(g, alloc, std::move(alloc->body));
  }
  compact_buffers(g);
}

// ---- online_softmax --------------------------------------------------------------------

struct Sum {
  Stmt* loop;   // the loop over j that holds it
  Stmt* block;
  Stmt* store;  // S[idx] = S[idx] + value
  const Expr* value;
  const Expr* p_load;  // the load of P inside value
};

bool online_softmax_impl(PrimFunc& g, const std::string& mx_name, std::string* error) {
  Stmt* bmx;
  if (!find_block_or_fail(g, mx_name, &bmx, error)) return false;
  std::string pre = "cannot online_softmax '" + mx_name + "': ";
  std::string why;
  Op op;
  const Expr* x = nullptr;
  Stmt* mx_store = bmx->init ? reduction_update(bmx, &op, &x) : nullptr;
  if (!mx_store || op != Op::Max)
    return fail(error, pre + "it is not a max reduction (X = max(X, value) with an init)");
  Stmt* lmx = reduce_loop(g, bmx, &why);
  if (!lmx) return fail(error, pre + why);
  // Between the reduction loop and the block only loops over the rows (a block of rows at a
  // time: the flash tile), each holding just the next.
  std::vector<Stmt*> mx_chain;  // those loops, outermost first
  for (Stmt* c = only_child(lmx); c != bmx; c = only_child(c)) {
    if (!c || c->kind != StmtKind::For)
      return fail(error, pre + "its reduction loop '" + lmx->var + "' holds more than the block");
    mx_chain.push_back(c);
  }
  int mxbuf = mx_store->buffer;
  const std::string mxn = buffer_name(g, mxbuf);
  Stmt* row = parent_of(g, lmx);
  size_t at = 0;
  if (row && row->kind == StmtKind::Seq)
    while (at < row->stmts.size() && row->stmts[at].get() != lmx) ++at;
  if (!row || row->kind != StmtKind::Seq || at + 1 >= row->stmts.size())
    return fail(error, pre + "nothing follows its loop '" + lmx->var + "' in the same nest: " +
                           "bring the exponentials and the sums under the row's loop first " +
                           "(reverse_compute_at, one row at a time)");

  // P = exp(E - MX), in the loop right after.
  Stmt* lp = row->stmts[at + 1].get();
  Stmt* bp = lp->kind == StmtKind::For ? only_child(lp) : nullptr;
  while (bp && bp->kind == StmtKind::For) bp = only_child(bp);
  if (!bp || bp->kind != StmtKind::Block || !block_reads(bp, mxbuf))
    return fail(error, pre + "the statement after its loop is not one loop over a block that " +
                           "reads '" + mxn + "' (the exponentials, exp(x - " + mxn + "))");
  std::vector<Stmt*> pstores = stores_of(bp);
  const Expr* pv = pstores.size() == 1 ? pstores[0]->value.get() : nullptr;
  if (bp->init || !pv || pv->kind != ExprKind::Unary || pv->op != Op::Exp ||
      pv->args[0]->kind != ExprKind::Binary || pv->args[0]->op != Op::Sub ||
      pv->args[0]->args[1]->kind != ExprKind::Load || pv->args[0]->args[1]->buffer != mxbuf)
    return fail(error, pre + "block '" + bp->name + "' is not p = exp(e - " + mxn + ")");
  if (lp->extent != lmx->extent)
    return fail(error, pre + "loop '" + lp->var + "' of '" + bp->name + "' and loop '" +
                           lmx->var + "' differ in length");
  int pbuf = pstores[0]->buffer;
  const std::string pn = buffer_name(g, pbuf);
  const Expr& mx_in_p = *pv->args[0]->args[1];

  // The sums, one loop each, right after.
  std::vector<Sum> sums;
  std::set<int> sum_bufs;
  for (size_t k = at + 2; k < row->stmts.size(); ++k) {
    Stmt* l = row->stmts[k].get();
    std::vector<Stmt*> bs = blocks_under(l);
    bool reads_p = std::any_of(bs.begin(), bs.end(), [&](Stmt* b) { return block_reads(b, pbuf); });
    if (!reads_p) break;
    std::string sp = pre + "block ";
    if (l->kind != StmtKind::For || bs.size() != 1)
      return fail(error, pre + "a nest after '" + bp->name + "' reads '" + pn +
                             "' but is not one loop over one sum");
    Stmt* b = bs[0];
    sp += "'" + b->name + "' reads '" + pn + "' but ";
    const Expr* val = nullptr;
    Stmt* st = b->init ? reduction_update(b, &op, &val) : nullptr;
    std::vector<Stmt*> inits;
    if (b->init) stores_in(b->init.get(), &inits);
    if (!st || op != Op::Add || inits.size() != 1 || inits[0]->value->kind != ExprKind::FloatImm ||
        inits[0]->value->fval != 0.0)
      return fail(error, sp + "is not a sum from 0 (S = S + " + pn + " * f): only sums can " +
                             "be rescaled as the maximum grows");
    Stmt* lr = reduce_loop(g, b, &why);
    if (!lr) return fail(error, sp + why);
    if (lr != l)
      return fail(error, sp + "its loop over the row is '" + lr->var + "', inside '" + l->var +
                             "': put it outside first (reorder " + b->name + "." + lr->var + " " +
                             b->name + "." + l->var + ")");
    if (l->extent != lmx->extent)
      return fail(error, sp + "its loop '" + l->var + "' differs in length from '" + lmx->var + "'");
    const Expr* pl = nullptr;
    if (val->kind == ExprKind::Load && val->buffer == pbuf) pl = val;
    else if (val->kind == ExprKind::Binary && val->op == Op::Mul) {
      for (int side = 0; side < 2 && !pl; ++side)
        if (val->args[side]->kind == ExprKind::Load && val->args[side]->buffer == pbuf &&
            !reads_any(*val->args[1 - side], {pbuf}))
          pl = val->args[side].get();
    }
    if (!pl)
      return fail(error, sp + "its term is not " + pn + " or " + pn + " times a factor");
    sums.push_back({l, b, st, val, pl});
    sum_bufs.insert(st->buffer);
  }
  if (sums.empty())
    return fail(error, pre + "no sum over '" + pn + "' follows '" + bp->name + "' (the loops " +
                           "after it must be the sums that read it, each with its reduction loop " +
                           "outermost)");
  std::set<int> group = sum_bufs;
  group.insert(pbuf);
  group.insert(mxbuf);
  if (reads_any(*pv->args[0]->args[0], group) || reads_any(*x, group))
    return fail(error, pre + "the scores read what the pass computes");
  for (const Sum& s : sums)
    for (int side = 0; side < 2; ++side)
      if (s.value->kind == ExprKind::Binary && s.value->args[side].get() != s.p_load &&
          reads_any(*s.value->args[side], group))
        return fail(error, pre + "the factor of '" + s.block->name + "' reads what the pass computes");
  std::set<Stmt*> ours = {bmx, bp};
  for (const Sum& s : sums) ours.insert(s.block);
  for (const tir::BlockSite& site : tir::blocks(g))
    if (!ours.count(site.block) && block_reads(site.block, pbuf))
      return fail(error, pre + "block '" + site.block->name + "' also reads '" + pn +
                             "', which holds exp(x - " + mxn + ") for the final maximum only " +
                             "when the passes are apart");

  // The rescaling: MX_scale = exp(old maximum - new maximum), one per row and step.
  auto add_buffer = [&](const std::string& base) {
    tir::Buffer nb = g.buffers[size_t(mxbuf)];
    nb.name = unique_buffer_name(g, base);
    nb.scope = tir::Scope::Local;
    nb.role = tir::BufferRole::Temp;
    g.buffers.push_back(nb);
    return int(g.buffers.size()) - 1;
  };
  int scale = add_buffer(mxn + "_scale");
  auto block_like_mx = [&](const std::string& base, StmtPtr body) {
    auto b = std::make_unique<Stmt>(StmtKind::Block);
    b->name = unique_block_name(g, base);
    for (const IterVar& iv : bmx->iters)
      b->iters.push_back({iv.name, iv.extent, iv.kind, iv.binding ? tir::clone(*iv.binding) : nullptr});
    if (bmx->predicate) b->predicate = tir::clone(*bmx->predicate);
    b->body = std::move(body);
    return b;
  };
  auto mx_idx = [&] {
    std::vector<ExprPtr> out;
    for (const auto& e : mx_store->indices) out.push_back(tir::clone(*e));
    return out;
  };
  // Before the max's own update, from the maximum so far and this step's value:
  // scale = exp(m - max(m, x)). (No copy of the old maximum: a buffer allocated inside the
  // row loop would keep that loop from being vectorized.)
  StmtPtr scale_block = block_like_mx(
      mx_name + "_scale",
      tir::make_store(scale, mx_idx(),
                      tir::unary(Op::Exp, tir::binary(Op::Sub, tir::load(mxbuf, mx_idx()),
                                                      tir::binary(Op::Max, tir::load(mxbuf, mx_idx()),
                                                                  tir::clone(*x))))));
  // The init leaves the loop: the maximum starts once per row, before the first step.
  StmtPtr init_block = block_like_mx(mx_name + "_init", std::move(bmx->init));
  init_block->iters.erase(std::remove_if(init_block->iters.begin(), init_block->iters.end(),
                                         [](const IterVar& iv) { return iv.kind == IterKind::Reduce; }),
                          init_block->iters.end());
  if (init_block->predicate && tir::uses_var(*init_block->predicate, lmx->var))
    return fail(error, pre + "its loop '" + lmx->var + "' was split unevenly (a predicate on it)");
  StmtPtr init_nest = std::move(init_block);
  for (auto it = mx_chain.rbegin(); it != mx_chain.rend(); ++it)
    init_nest = tir::make_for((*it)->var, (*it)->extent, std::move(init_nest));
  // Each sum: S = S * scale[row] + term, the row being the maximum's, written with the
  // loops above the row loop (which every block of the pass shares) rather than with any
  // block's own axes; the checks below confirm P read the maximum at that row.
  for (Sum& s : sums) {
    std::vector<ExprPtr> row_idx = in_loop_terms(raw(mx_store->indices), *bmx);
    const Expr* self = s.store->value->args[0].get() == s.value ? s.store->value->args[1].get()
                                                                 : s.store->value->args[0].get();
    s.store->value = tir::binary(
        Op::Add, tir::binary(Op::Mul, tir::clone(*self), tir::load(scale, std::move(row_idx))),
        tir::clone(*s.value));
    // The old tree is gone: point at the new one's parts.
    s.value = s.store->value->args[1].get();
    s.p_load = load_of(*s.value, pbuf);
  }
  Stmt* mx_block = bmx;
  // At the start of the row's nest, not just before the max's loop: the scores' loop may be
  // merged with the pass afterwards, and must stay its neighbour.
  insert_next_to(g, row->stmts.front().get(), std::move(init_nest), false);
  insert_next_to(g, bmx, std::move(scale_block), false);
  std::vector<Stmt*> others = {lp};
  for (const Sum& s : sums) others.push_back(s.loop);
  join_loops(g, lmx, others);

  // Now one loop: check that every access lines up with the row the maximum is at and the
  // step p was computed at (equal in loop terms), rather than trusting the shapes.
  auto mx_row = in_loop_terms(raw(mx_store->indices), *mx_block);
  if (!same_indices(in_loop_terms(raw(mx_in_p.args), *bp), mx_row))
    return fail(error, pre + "'" + bp->name + "' reads '" + mxn + "' at another row than '" +
                           mx_name + "' writes");
  auto p_at = in_loop_terms(raw(pstores[0]->indices), *bp);
  for (const Sum& s : sums) {
    if (!same_indices(in_loop_terms(raw(s.p_load->args), *s.block), p_at))
      return fail(error, pre + "'" + s.block->name + "' reads '" + pn +
                             "' elsewhere than where this step wrote it");
    const Expr* sc = load_of(*s.store->value->args[0], scale);
    std::set<std::string> above;
    for (Stmt* l : loops_above(g, s.block)) above.insert(l->var);
    bool bound = true;
    if (sc)
      for (const auto& e : sc->args)
        visit_expr(*e, [&](const Expr& v) {
        if (v.kind == ExprKind::Var && !above.count(v.name) && !find_iter(s.block, v.name)) bound = false;
      });
    if (!sc || !bound || !same_indices(in_loop_terms(raw(sc->args), *s.block), mx_row))
      return fail(error, pre + "'" + s.block->name + "' sums a row other than the maximum's " +
                             "(or its loops over the rows are not named as the maximum's)");
  }
  recompact(g);
  return true;
}

// ---- merge -----------------------------------------------------------------------------

bool merge_impl(PrimFunc& g, const std::string& n1, const std::string& n2, std::string* error) {
  LoopRef a = find_loop(g, n1, error);
  if (!a.loop) return false;
  LoopRef b = find_loop(g, n2, error);
  if (!b.loop) return false;
  std::string pre = "cannot merge '" + n1 + "' and '" + n2 + "': ";
  Stmt* l1 = a.loop;
  Stmt* l2 = b.loop;
  Stmt* seq = parent_of(g, l1);
  bool adjacent = false;
  if (seq && seq->kind == StmtKind::Seq && seq == parent_of(g, l2))
    for (size_t k = 0; k + 1 < seq->stmts.size(); ++k)
      if (seq->stmts[k].get() == l1 && seq->stmts[k + 1].get() == l2) adjacent = true;
  if (!adjacent)
    return fail(error, pre + "they are not neighbours in one nest ('" + n2 + "' must come " +
                           "right after '" + n1 + "', under the same loops)");
  if (l1->extent != l2->extent)
    return fail(error, pre + "their lengths differ (" + std::to_string(l1->extent) + " and " +
                           std::to_string(l2->extent) + ")");
  if (l1->for_kind != ForKind::Serial || l2->for_kind != ForKind::Serial)
    return fail(error, pre + "merge serial loops (" + already(l1->for_kind != ForKind::Serial ? l1 : l2) + ")");
  // Both loops named alike: the second's variable becomes the first's.
  StmtPtr copy2 = tir::clone(*l2);
  substitute_loop_var(copy2->body.get(), l2->var, *tir::var(l1->var));
  // Legal when every buffer one loop writes and the other touches is separated by the loop:
  // iteration j of each touches a slice of it that no other iteration touches.
  std::vector<Touch> t1, t2;
  touches_under(l1->body.get(), &t1);
  touches_under(copy2->body.get(), &t2);
  std::set<std::string> fixed;
  for (Stmt* l : loops_above(g, l1)) fixed.insert(l->var);
  std::set<int> shared;
  for (const Touch& x : t1)
    for (const Touch& y : t2)
      if (x.buffer == y.buffer && (x.write || y.write)) shared.insert(x.buffer);
  for (int x : shared) {
    std::vector<const Touch*> all;
    for (const auto* part : {&t1, &t2})
      for (const Touch& t : *part)
        if (t.buffer == x) all.push_back(&t);
    if (!separated_by(all, *l1, fixed))
      return fail(error, pre + "'" + buffer_name(g, x) + "' is not touched at one slice per " +
                             "iteration (the same index, a different value for each '" +
                             l1->var + "'), so merging would reorder a write and a use: " +
                             "iteration j of the second would see less, or more, than the " +
                             "first had made");
  }
  join_loops(g, l1, {l2});
  recompact(g);
  return true;
}

}  // namespace

bool online_softmax(PrimFunc& f, const std::string& block, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return online_softmax_impl(g, block, error); });
}

bool merge(PrimFunc& f, const std::string& loop1, const std::string& loop2, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return merge_impl(g, loop1, loop2, error); });
}

}  // namespace descent::tensor::sched
