// Reductions: decompose_reduction and rfactor. A reduction block has an init (Y = 0) that
// runs where its reduce axes are 0, and an update (Y = Y + ...). decompose_reduction hoists
// the init into a block of its own before a chosen loop, so what is left is a plain
// accumulation nest (what a vectorized inner loop or a GPU kernel wants). rfactor splits a
// reduction in two: partial results over one reduce loop, which becomes a spatial axis that
// may run in parallel or as vector lanes, then a small final reduction of the partials.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

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

bool decompose_reduction(PrimFunc& f, const std::string& block, const std::string& loop,
                         std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g) { return decompose_reduction_impl(g, block, loop, error); });
}

bool rfactor(PrimFunc& f, const std::string& block, const std::string& loop, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return rfactor_impl(g, block, loop, error); });
}

}  // namespace descent::tensor::sched
