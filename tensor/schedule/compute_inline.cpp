// compute_inline: substitutes an elementwise producer's value into every block that reads
// it, so the intermediate buffer disappears (relu's input is never written to memory). Only
// a pure map can go: one store at exactly its iteration variables, no reduction, no
// predicate; and no block may read its buffer before it, or change its inputs after it.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

bool has_reduce_iter(const Stmt* block) {
  for (const IterVar& iv : block->iters)
    if (iv.kind == IterKind::Reduce) return true;
  return false;
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

bool compute_inline(PrimFunc& f, const std::string& block, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return compute_inline_impl(g, block, error); });
}

}  // namespace descent::tensor::sched
