// The helpers every schedule primitive is built from. A primitive is a small program over
// the statement tree: find the loops above a block, find the slot that owns a statement,
// cut a subtree out and put another in its place. Writing those moves once, here, keeps
// each primitive's file about its own idea (what it checks, what it builds) rather than
// about pointer plumbing. The discipline they all follow is commit(): transform a deep copy,
// verify it, and only then replace the caller's function, so a refused step changes nothing.
#include <functional>
#include <map>
#include <set>
#include <string>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

// ---- Errors and commit --------------------------------------------------------------------

bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

bool commit(PrimFunc& f, std::string* error, const std::function<bool(PrimFunc&)>& fn) {
  PrimFunc g = f;
  if (!fn(g)) return false;
  std::string why;
  if (!tir::verify(g, &why))
    return fail(error, "internal error: the transformed function is malformed: " + why);
  f = std::move(g);
  return true;
}

// "it is already parallel" / "it is already bound to group.x"
std::string already(const Stmt* loop) {
  if (loop->for_kind == ForKind::Bound) return "it is already bound to " + loop->thread_tag;
  return std::string("it is already ") + tir::for_kind_name(loop->for_kind);
}

// ---- The statement tree -------------------------------------------------------------------

// The owning pointers directly inside s, in program order (init runs before body).
std::vector<StmtPtr*> child_slots(Stmt* s) {
  std::vector<StmtPtr*> out;
  if (s->init) out.push_back(&s->init);
  if (s->body) out.push_back(&s->body);
  for (StmtPtr& c : s->stmts)
    if (c) out.push_back(&c);
  return out;
}

// Pre-order walk; `fn` returns false to stop descending below a node.
void walk(Stmt* s, const std::function<bool(Stmt*)>& fn) {
  if (!s || !fn(s)) return;
  for (StmtPtr* c : child_slots(s)) walk(c->get(), fn);
}

namespace {

// Finds the slot holding `target` under `slot` (inclusive), recording the parent.
StmtPtr* find_slot(StmtPtr* slot, Stmt* parent, const Stmt* target, Stmt** parent_out) {
  if (!*slot) return nullptr;
  if (slot->get() == target) {
    if (parent_out) *parent_out = parent;
    return slot;
  }
  for (StmtPtr* c : child_slots(slot->get()))
    if (StmtPtr* r = find_slot(c, slot->get(), target, parent_out)) return r;
  return nullptr;
}

}  // namespace

std::vector<Stmt*> loops_above(PrimFunc& f, const Stmt* block) {
  std::vector<Stmt*> path;
  std::vector<Stmt*> result;
  bool found = false;
  std::function<void(Stmt*)> go = [&](Stmt* s) {
    if (!s || found) return;
    if (s == block) {
      found = true;
      result = path;
      return;
    }
    bool is_loop = s->kind == StmtKind::For;
    if (is_loop) path.push_back(s);
    for (StmtPtr* c : child_slots(s)) go(c->get());
    if (is_loop) path.pop_back();
  };
  go(f.body.get());
  return result;
}

Stmt* parent_of(PrimFunc& f, const Stmt* s) {
  Stmt* parent = nullptr;
  if (!find_slot(&f.body, nullptr, s, &parent)) return nullptr;
  return parent;
}

StmtPtr* slot_of(PrimFunc& f, const Stmt* s) { return find_slot(&f.body, nullptr, s, nullptr); }

StmtPtr replace_stmt(PrimFunc& f, const Stmt* s, StmtPtr with) {
  StmtPtr* slot = slot_of(f, s);
  if (!slot) return nullptr;
  StmtPtr old = std::move(*slot);
  *slot = std::move(with);
  return old;
}

Stmt* only_child(Stmt* s) {
  if (!s || !s->body) return nullptr;
  Stmt* c = s->body.get();
  while (c->kind == StmtKind::Seq) {
    if (c->stmts.size() != 1) return nullptr;
    c = c->stmts[0].get();
  }
  return c;
}

bool is_perfect_chain(const std::vector<Stmt*>& loops) {
  for (size_t i = 0; i + 1 < loops.size(); ++i)
    if (only_child(loops[i]) != loops[i + 1]) return false;
  return true;
}

std::vector<Stmt*> blocks_under(Stmt* s) {
  std::vector<Stmt*> out;
  walk(s, [&](Stmt* n) {
    if (n->kind == StmtKind::Block) out.push_back(n);
    return true;
  });
  return out;
}

std::vector<Stmt*> loops_under(Stmt* s) {
  std::vector<Stmt*> out;
  walk(s, [&](Stmt* n) {
    if (n->kind == StmtKind::For) out.push_back(n);
    return true;
  });
  return out;
}

bool contains(const Stmt* outer, const Stmt* inner) {
  bool found = false;
  walk(const_cast<Stmt*>(outer), [&](Stmt* n) {
    if (n == inner) found = true;
    return !found;
  });
  return found;
}

std::string fresh_loop_name(PrimFunc& f, const Stmt* at, const std::string& base) {
  std::set<std::string> taken;
  if (at) {
    // Loops above `at`: those enclosing it on its path from the root.
    std::vector<Stmt*> path;
    std::function<bool(Stmt*)> go = [&](Stmt* s) {
      if (!s) return false;
      if (s == at) return true;
      bool is_loop = s->kind == StmtKind::For;
      if (is_loop) path.push_back(s);
      for (StmtPtr* c : child_slots(s))
        if (go(c->get())) return true;
      if (is_loop) path.pop_back();
      return false;
    };
    go(f.body.get());
    for (Stmt* l : path) taken.insert(l->var);
    for (Stmt* l : loops_under(const_cast<Stmt*>(at))) taken.insert(l->var);
  } else {
    for (Stmt* l : loops_under(f.body.get())) taken.insert(l->var);
  }
  if (!taken.count(base)) return base;
  for (int n = 1;; ++n) {
    std::string candidate = base + "_" + std::to_string(n);
    if (!taken.count(candidate)) return candidate;
  }
}

namespace {

// a + (b + c) -> (a + b) + c on index sums, so repeated splits print as the flat
// i_0 * 32 + i_1_0 * 8 + i_1_1 a reader expects rather than nested parentheses.
void left_associate(ExprPtr& e) {
  for (ExprPtr& a : e->args) left_associate(a);
  while (e->kind == tir::ExprKind::Binary && e->op == tir::Op::Add &&
         e->type == tir::ScalarType::Int && e->args[1]->kind == tir::ExprKind::Binary &&
         e->args[1]->op == tir::Op::Add) {
    ExprPtr rhs = std::move(e->args[1]);
    ExprPtr lhs = tir::binary(tir::Op::Add, std::move(e->args[0]), std::move(rhs->args[0]));
    e = tir::binary(tir::Op::Add, std::move(lhs), std::move(rhs->args[1]));
  }
}

}  // namespace

void substitute_loop_var(Stmt* s, const std::string& name, const Expr& with) {
  auto subst = [&](ExprPtr& e) {
    if (!e || !tir::uses_var(*e, name)) return;
    e = tir::simplify(*tir::substitute(*e, name, with));
    left_associate(e);
  };
  walk(s, [&](Stmt* n) {
    switch (n->kind) {
      case StmtKind::Block: {
        for (tir::IterVar& iv : n->iters) subst(iv.binding);
        subst(n->predicate);
        // The block's body speaks of its own iteration variables; only a (pathological)
        // body that mentions the loop variable directly would need rewriting, and an iter
        // var of the same name shadows it.
        for (const tir::IterVar& iv : n->iters)
          if (iv.name == name) return false;
        return true;
      }
      case StmtKind::If: subst(n->predicate); return true;
      case StmtKind::Store:
        for (ExprPtr& i : n->indices) subst(i);
        subst(n->value);
        return true;
      default: return true;
    }
  });
}

// ---- Statement surgery --------------------------------------------------------------------

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

bool find_block_or_fail(PrimFunc& g, const std::string& name, Stmt** out, std::string* error) {
  *out = tir::find_block(g, name);
  if (*out) return true;
  return fail(error, "no block '" + name + "' (blocks: " + join(block_names(g)) + ")");
}

// ---- Expressions --------------------------------------------------------------------------

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

}  // namespace descent::tensor::sched
