// Schedules: finding loops by name, the loop primitives (split, tile, reorder, fuse,
// unroll, vectorize, parallel, bind), the schedule text syntax and the Schedule history.
//
// [SECTION] Tree helpers      the walkers every primitive uses (shared with schedule_blocks)
// [SECTION] Names             find_loop, loop_names, block_names
// [SECTION] Loop primitives   one function each; all work on a copy and commit on success
// [SECTION] Text              apply_step: tokens -> primitive call -> canonical text
// [SECTION] Schedule          history with undo/redo and a replayable trace
//
// Every primitive follows one discipline (TVM's): check preconditions, transform a deep
// copy, run tir::verify on it, and only then replace the caller's function. A failed step
// therefore never leaves a half-transformed loop nest behind, and the verify call catches
// our own bugs as "internal error" messages instead of wrong answers later.
#include "tensor/schedule.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <set>

namespace descent::tensor {
namespace sched {
using tir::Expr;
using tir::ExprPtr;
using tir::ForKind;
using tir::PrimFunc;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtPtr;

// ============================================================================
// [SECTION] Tree helpers
// ============================================================================

namespace {

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

std::string join(const std::vector<std::string>& xs, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) out += sep;
    out += xs[i];
  }
  return out;
}

void set_error(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
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

// ============================================================================
// [SECTION] Names
// ============================================================================

namespace {

// Every loop in program order with the first block inside it (its qualifier).
struct NamedLoop {
  Stmt* loop;
  Stmt* parent;
  std::string block;  // "" when the loop holds no block
};

std::vector<NamedLoop> all_loops(PrimFunc& f) {
  std::vector<NamedLoop> out;
  std::function<void(Stmt*, Stmt*)> go = [&](Stmt* s, Stmt* parent) {
    if (!s) return;
    if (s->kind == StmtKind::For) {
      std::vector<Stmt*> bs = blocks_under(s);
      out.push_back({s, parent, bs.empty() ? std::string() : bs[0]->name});
    }
    for (StmtPtr* c : child_slots(s)) go(c->get(), s);
  };
  go(f.body.get(), nullptr);
  return out;
}

std::string qualified(const NamedLoop& l) {
  return l.block.empty() ? l.loop->var : l.block + "." + l.loop->var;
}

}  // namespace

LoopRef find_loop(PrimFunc& f, const std::string& name, std::string* error) {
  std::vector<NamedLoop> loops = all_loops(f);
  size_t dot = name.find('.');
  if (dot != std::string::npos) {
    std::string block = name.substr(0, dot);
    std::string var = name.substr(dot + 1);
    Stmt* b = tir::find_block(f, block);
    if (!b) {
      set_error(error, "no block '" + block + "' (blocks: " + join(block_names(f)) + ")");
      return {};
    }
    std::vector<std::string> above;
    for (Stmt* l : loops_above(f, b)) {
      if (l->var == var) return {l, parent_of(f, l)};
      above.push_back(l->var);
    }
    set_error(error, "block '" + block + "' is not inside a loop '" + var + "'" +
                         (above.empty() ? std::string(" (it has no loops)")
                                        : " (its loops: " + join(above) + ")"));
    return {};
  }
  std::vector<const NamedLoop*> hits;
  for (const NamedLoop& l : loops)
    if (l.loop->var == name) hits.push_back(&l);
  if (hits.size() == 1) return {hits[0]->loop, hits[0]->parent};
  if (hits.empty()) {
    set_error(error, "no loop '" + name + "'" +
                         (loops.empty() ? std::string(" (the function has no loops)")
                                        : " (loops: " + join(loop_names(f)) + ")"));
    return {};
  }
  std::vector<std::string> names;
  for (const NamedLoop* l : hits) names.push_back(qualified(*l));
  std::sort(names.begin(), names.end());
  set_error(error, "loop '" + name + "' is ambiguous: " + join(names));
  return {};
}

std::vector<std::string> loop_names(const PrimFunc& f) {
  std::vector<NamedLoop> loops = all_loops(const_cast<PrimFunc&>(f));
  std::vector<std::string> out;
  for (const NamedLoop& l : loops) {
    size_t same = std::count_if(loops.begin(), loops.end(),
                                [&](const NamedLoop& o) { return o.loop->var == l.loop->var; });
    out.push_back(same == 1 ? l.loop->var : qualified(l));
  }
  return out;
}

std::vector<std::string> block_names(const PrimFunc& f) {
  std::vector<std::string> out;
  for (Stmt* b : blocks_under(const_cast<PrimFunc&>(f).body.get())) out.push_back(b->name);
  return out;
}

// ============================================================================
// [SECTION] Loop primitives
// ============================================================================

namespace {

// Work on a copy; commit only a verified result. `fn` fills *error and returns false to
// refuse, leaving the caller's function untouched.
bool transform(PrimFunc& f, std::string* error, const std::function<bool(PrimFunc&)>& fn) {
  PrimFunc g = f;
  if (!fn(g)) return false;
  std::string why;
  if (!tir::verify(g, &why)) {
    set_error(error, "internal error: the transformed function is malformed: " + why);
    return false;
  }
  f = std::move(g);
  return true;
}

// "it is already parallel" / "it is already bound to group.x"
std::string already(const Stmt* loop) {
  if (loop->for_kind == ForKind::Bound) return "it is already bound to " + loop->thread_tag;
  return std::string("it is already ") + tir::for_kind_name(loop->for_kind);
}

// The first block under `loop` one of whose Reduce iters is bound through the loop: running
// the loop's iterations at once would race on (or reorder) that block's accumulation.
bool carries_reduction(Stmt* loop, std::string* block, std::string* axis) {
  for (Stmt* b : blocks_under(loop))
    for (const tir::IterVar& iv : b->iters)
      if (iv.kind == tir::IterKind::Reduce && iv.binding && tir::uses_var(*iv.binding, loop->var)) {
        *block = b->name;
        *axis = iv.name;
        return true;
      }
  return false;
}

std::string reduction_error(const std::string& verb, const std::string& name, Stmt* loop) {
  std::string block, axis;
  if (!carries_reduction(loop, &block, &axis)) return "";
  return "cannot " + verb + " '" + name + "': it carries the reduction of block '" + block +
         "' (reduce axis " + axis + "); use rfactor " + block + " " + name + " first";
}

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
  if (factor < 1) {
    set_error(error, what + "factor " + std::to_string(factor) + " must be at least 1");
    return false;
  }
  if (factor > loop->extent) {
    set_error(error, what + "factor " + std::to_string(factor) + " exceeds the extent " +
                         std::to_string(loop->extent) + " of loop '" + loop->var + "'");
    return false;
  }
  if (loop->for_kind != ForKind::Serial) {
    set_error(error, what + already(loop));
    return false;
  }
  std::string outer, inner;
  if (!names.empty()) {
    if (names.size() != 2) {
      set_error(error, what + "expected two names for the new loops");
      return false;
    }
    outer = names[0];
    inner = names[1];
    for (const std::string& n : names) {
      if (!valid_loop_name(n)) {
        set_error(error, what + "'" + n + "' is not a valid loop name");
        return false;
      }
      if (n != loop->var && name_taken_on_path(g, loop, n)) {
        set_error(error, what + "the name '" + n + "' is already used by a loop on this path");
        return false;
      }
    }
    if (outer == inner) {
      set_error(error, what + "the two new loops need different names");
      return false;
    }
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
  if (!outer) {
    set_error(error, what + "they are not nested in one another");
    return false;
  }
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
    set_error(error, what + "they are not one perfect nest (the body of '" + stop->var +
                         "' is not a single loop)");
    return false;
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
  if (!check_mixed_order(chain.front(), before, after, &why)) {
    set_error(error, what + why);
    return false;
  }
  if (!check_bound_nesting(g, &why)) {
    set_error(error, what + why);
    return false;
  }
  return true;
}

}  // namespace

bool split(PrimFunc& f, const std::string& loop, int64_t factor,
           const std::vector<std::string>& names, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    return split_impl(g, loop, factor, names, nullptr, error);
  });
}

bool reorder(PrimFunc& f, const std::vector<std::string>& loops, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    if (loops.empty()) {
      set_error(error, "cannot reorder: no loops given");
      return false;
    }
    std::vector<Stmt*> order;
    for (const std::string& n : loops) {
      if (std::count(loops.begin(), loops.end(), n) > 1) {
        set_error(error, "cannot reorder " + join(loops) + ": loop '" + n + "' appears twice");
        return false;
      }
      LoopRef ref = find_loop(g, n, error);
      if (!ref.loop) return false;
      if (std::find(order.begin(), order.end(), ref.loop) != order.end()) {
        set_error(error, "cannot reorder " + join(loops) + ": loop '" + n + "' appears twice");
        return false;
      }
      order.push_back(ref.loop);
    }
    return reorder_impl(g, order, "cannot reorder " + join(loops) + ": ", error);
  });
}

bool tile(PrimFunc& f, const std::string& loop1, const std::string& loop2, int64_t f1,
          int64_t f2, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    LoopRef a = find_loop(g, loop1, error);
    if (!a.loop) return false;
    LoopRef b = find_loop(g, loop2, error);
    if (!b.loop) return false;
    if (only_child(a.loop) != b.loop) {
      set_error(error, "cannot tile '" + loop1 + "' and '" + loop2 + "': '" + loop2 +
                           "' must be the only statement in the body of '" + loop1 + "'");
      return false;
    }
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
  return transform(f, error, [&](PrimFunc& g) {
    LoopRef a = find_loop(g, loop1, error);
    if (!a.loop) return false;
    LoopRef b = find_loop(g, loop2, error);
    if (!b.loop) return false;
    const std::string what = "cannot fuse '" + loop1 + "' and '" + loop2 + "': ";
    if (a.loop == b.loop) {
      set_error(error, what + "a loop cannot be fused with itself");
      return false;
    }
    if (only_child(a.loop) != b.loop) {
      set_error(error, what + "'" + loop2 + "' must be the only statement in the body of '" +
                           loop1 + "'");
      return false;
    }
    for (Stmt* l : {a.loop, b.loop})
      if (l->for_kind != ForKind::Serial) {
        set_error(error, what + "'" + l->var + "' is " + tir::for_kind_name(l->for_kind) +
                             (l->for_kind == ForKind::Bound ? " to " + l->thread_tag : ""));
        return false;
      }
    std::string fused;
    if (name.empty()) {
      fused = pick_name(g, a.loop, a.loop->var + "_" + b.loop->var + "_fused", {});
    } else {
      if (!valid_loop_name(name)) {
        set_error(error, what + "'" + name + "' is not a valid loop name");
        return false;
      }
      if (name != a.loop->var && name != b.loop->var && name_taken_on_path(g, a.loop, name)) {
        set_error(error, what + "the name '" + name + "' is already used by a loop on this path");
        return false;
      }
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

namespace {

// The common checks of the loop-kind annotations.
Stmt* annotate_target(PrimFunc& g, const std::string& name, const std::string& verb,
                      std::string* error) {
  LoopRef ref = find_loop(g, name, error);
  if (!ref.loop) return nullptr;
  if (ref.loop->for_kind != ForKind::Serial) {
    set_error(error, "cannot " + verb + " '" + name + "': " + already(ref.loop));
    return nullptr;
  }
  return ref.loop;
}

constexpr int64_t kMaxUnroll = 64;

std::string too_long(const std::string& verb, const std::string& name, const Stmt* loop) {
  return "cannot " + verb + " '" + name + "': extent " + std::to_string(loop->extent) + " > " +
         std::to_string(kMaxUnroll) + "; split it first";
}

}  // namespace

bool unroll(PrimFunc& f, const std::string& loop, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "unroll", error);
    if (!l) return false;
    if (l->extent > kMaxUnroll) {
      set_error(error, too_long("unroll", loop, l));
      return false;
    }
    l->for_kind = ForKind::Unrolled;
    return true;
  });
}

bool vectorize(PrimFunc& f, const std::string& loop, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "vectorize", error);
    if (!l) return false;
    std::vector<Stmt*> inside = loops_under(l);
    if (inside.size() > 1) {
      set_error(error, "cannot vectorize '" + loop + "': it is not innermost (loop '" +
                           inside[1]->var + "' is inside it)");
      return false;
    }
    if (l->extent > kMaxUnroll) {
      set_error(error, too_long("vectorize", loop, l));
      return false;
    }
    // A reduce axis bound through the loop would make lanes add into one element.
    std::string why = reduction_error("vectorize", loop, l);
    if (!why.empty()) {
      set_error(error, why);
      return false;
    }
    l->for_kind = ForKind::Vectorized;
    return true;
  });
}

bool parallel(PrimFunc& f, const std::string& loop, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    Stmt* l = annotate_target(g, loop, "parallelize", error);
    if (!l) return false;
    std::string why = reduction_error("parallelize", loop, l);
    if (!why.empty()) {
      set_error(error, why);
      return false;
    }
    // One level of threads: a parallel loop inside another would oversubscribe the pool
    // (and the CPU backend runs one parallel region at a time).
    for (Stmt* b : blocks_under(l))
      for (Stmt* a : loops_above(g, b)) {
        if (a == l) break;
        if (a->for_kind == ForKind::Parallel) {
          set_error(error, "cannot parallelize '" + loop + "': it is inside parallel loop '" +
                               a->var + "'");
          return false;
        }
      }
    for (Stmt* in : loops_under(l))
      if (in != l && in->for_kind == ForKind::Parallel) {
        set_error(error, "cannot parallelize '" + loop + "': it contains parallel loop '" +
                             in->var + "'");
        return false;
      }
    l->for_kind = ForKind::Parallel;
    return true;
  });
}

bool bind(PrimFunc& f, const std::string& loop, const std::string& tag, std::string* error) {
  return transform(f, error, [&](PrimFunc& g) {
    static const char* kTags[] = {"group.x", "group.y", "group.z",
                                  "local.x", "local.y", "local.z"};
    if (std::find(std::begin(kTags), std::end(kTags), tag) == std::end(kTags)) {
      set_error(error, "cannot bind '" + loop + "' to '" + tag +
                           "': the thread tags are group.x, group.y, group.z, local.x, local.y, "
                           "local.z");
      return false;
    }
    const std::string verb = "bind";
    Stmt* l = annotate_target(g, loop, verb, error);
    if (!l) return false;
    const std::string what = "cannot bind '" + loop + "' to " + tag + ": ";
    std::string block, axis;
    if (carries_reduction(l, &block, &axis)) {
      set_error(error, what + "it carries the reduction of block '" + block + "' (reduce axis " +
                           axis + "); use rfactor " + block + " " + loop + " first");
      return false;
    }
    // The loops on this path: those above l (through its first block) and those below.
    std::vector<Stmt*> path;
    std::vector<Stmt*> bs = blocks_under(l);
    if (!bs.empty())
      for (Stmt* a : loops_above(g, bs[0])) {
        if (a == l) break;
        path.push_back(a);
      }
    bool inside_group = false;
    for (Stmt* a : path) {
      if (a->for_kind == ForKind::Bound && a->thread_tag == tag) {
        set_error(error, what + "loop '" + a->var + "' around it is already bound to " + tag);
        return false;
      }
      if (a->for_kind == ForKind::Bound && a->thread_tag.rfind("group.", 0) == 0)
        inside_group = true;
    }
    for (Stmt* in : loops_under(l))
      if (in != l && in->for_kind == ForKind::Bound && in->thread_tag == tag) {
        set_error(error, what + "loop '" + in->var + "' inside it is already bound to " + tag);
        return false;
      }
    if (tag.rfind("local.", 0) == 0 && !inside_group) {
      set_error(error, what + "a local.* loop must be inside a loop bound to group.*");
      return false;
    }
    l->for_kind = ForKind::Bound;
    l->thread_tag = tag;
    return true;
  });
}

}  // namespace sched

// ============================================================================
// [SECTION] Text
// ============================================================================

namespace {

// One primitive of the text syntax: its name, its usage line (what a wrong argument count
// prints) and how to run it on parsed tokens.
struct Primitive {
  const char* name;
  const char* usage;
  // args: the tokens after the name. Returns false with *error on a bad argument.
  bool (*run)(tir::PrimFunc& f, const std::vector<std::string>& args, std::string* error);
  // Accepted argument counts: exactly min_args..max_args, or at least min_args if variadic.
  size_t min_args, max_args;
  bool variadic;
};

bool parse_int(const std::string& prim, const std::string& what, const std::string& tok,
               int64_t* out, std::string* error) {
  const char* begin = tok.data();
  const char* end = begin + tok.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  if (ec != std::errc() || ptr != end) {
    *error = prim + ": " + what + " '" + tok + "' is not an integer";
    return false;
  }
  return true;
}

bool parse_scope(const std::string& prim, const std::string& tok, tir::Scope* out,
                 std::string* error) {
  if (tok == "local") *out = tir::Scope::Local;
  else if (tok == "shared") *out = tir::Scope::Shared;
  else {
    *error = prim + ": scope '" + tok + "' must be local or shared";
    return false;
  }
  return true;
}

bool run_split(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  int64_t factor = 0;
  if (!parse_int("split", "factor", a[1], &factor, error)) return false;
  std::vector<std::string> names;
  if (a.size() == 5) {
    if (a[2] != "as") {
      *error = "usage: split LOOP FACTOR [as OUTER INNER]";
      return false;
    }
    names = {a[3], a[4]};
  } else if (a.size() != 2) {
    *error = "usage: split LOOP FACTOR [as OUTER INNER]";
    return false;
  }
  return sched::split(f, a[0], factor, names, error);
}

bool run_tile(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  int64_t f1 = 0, f2 = 0;
  if (!parse_int("tile", "factor", a[2], &f1, error)) return false;
  if (!parse_int("tile", "factor", a[3], &f2, error)) return false;
  return sched::tile(f, a[0], a[1], f1, f2, error);
}

bool run_fuse(tir::PrimFunc& f, const std::vector<std::string>& a, std::string* error) {
  if (a.size() == 3 || (a.size() == 4 && a[2] != "as")) {
    *error = "usage: fuse LOOP1 LOOP2 [as NAME]";
    return false;
  }
  return sched::fuse(f, a[0], a[1], a.size() == 4 ? a[3] : std::string(), error);
}

const Primitive kPrimitives[] = {
    {"split", "split LOOP FACTOR [as OUTER INNER]", run_split, 2, 5, false},
    {"tile", "tile LOOP1 LOOP2 FACTOR1 FACTOR2", run_tile, 4, 4, false},
    {"reorder", "reorder LOOP LOOP ...",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::reorder(f, a, e);
     },
     2, 0, true},
    {"fuse", "fuse LOOP1 LOOP2 [as NAME]", run_fuse, 2, 4, false},
    {"unroll", "unroll LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::unroll(f, a[0], e);
     },
     1, 1, false},
    {"vectorize", "vectorize LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::vectorize(f, a[0], e);
     },
     1, 1, false},
    {"parallel", "parallel LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::parallel(f, a[0], e);
     },
     1, 1, false},
    {"bind", "bind LOOP group.x|group.y|group.z|local.x|local.y|local.z",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::bind(f, a[0], a[1], e);
     },
     2, 2, false},
    {"compute_at", "compute_at BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::compute_at(f, a[0], a[1], e);
     },
     2, 2, false},
    {"reverse_compute_at", "reverse_compute_at BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::reverse_compute_at(f, a[0], a[1], e);
     },
     2, 2, false},
    {"compute_inline", "compute_inline BLOCK",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::compute_inline(f, a[0], e);
     },
     1, 1, false},
    {"cache_read", "cache_read BLOCK BUFFER local|shared",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       tir::Scope scope;
       return parse_scope("cache_read", a[2], &scope, e) &&
              sched::cache_read(f, a[0], a[1], scope, e);
     },
     3, 3, false},
    {"cache_write", "cache_write BLOCK local|shared",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       tir::Scope scope;
       return parse_scope("cache_write", a[1], &scope, e) &&
              sched::cache_write(f, a[0], scope, e);
     },
     2, 2, false},
    {"decompose_reduction", "decompose_reduction BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::decompose_reduction(f, a[0], a[1], e);
     },
     2, 2, false},
    {"rfactor", "rfactor BLOCK LOOP",
     [](tir::PrimFunc& f, const std::vector<std::string>& a, std::string* e) {
       return sched::rfactor(f, a[0], a[1], e);
     },
     2, 2, false},
};

// Splits on spaces, tabs and commas ("reorder i, k, j" reads like the TVM call); a '#'
// starts a comment.
std::vector<std::string> tokenize(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

bool apply_step(tir::PrimFunc& f, std::string_view step, std::string* canonical,
                std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  std::vector<std::string> tokens = tokenize(step);
  if (tokens.empty()) {
    *error = "empty schedule step";
    return false;
  }
  const Primitive* prim = nullptr;
  for (const Primitive& p : kPrimitives)
    if (tokens[0] == p.name) prim = &p;
  if (!prim) {
    std::vector<std::string> names;
    for (const Primitive& p : kPrimitives) names.push_back(p.name);
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    *error = "unknown schedule primitive '" + tokens[0] + "' (primitives: " + list + ")";
    return false;
  }
  std::vector<std::string> args(tokens.begin() + 1, tokens.end());
  bool count_ok = prim->variadic ? args.size() >= prim->min_args
                                 : args.size() >= prim->min_args && args.size() <= prim->max_args;
  if (!count_ok) {
    *error = std::string("usage: ") + prim->usage;
    return false;
  }
  if (!prim->run(f, args, error)) return false;
  if (canonical) {
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    *canonical = std::move(text);
  }
  return true;
}

// ============================================================================
// [SECTION] Schedule
// ============================================================================

Schedule::Schedule(tir::PrimFunc original) { states_.push_back(std::move(original)); }

bool Schedule::apply(std::string_view step, std::string* error) {
  tir::PrimFunc next = states_[current_];
  std::string canonical;
  if (!apply_step(next, step, &canonical, error)) return false;
  // A new step after undo forgets the undone ones (the redo tail), as editors do.
  states_.resize(current_ + 1);
  steps_.resize(current_);
  states_.push_back(std::move(next));
  steps_.push_back(std::move(canonical));
  ++current_;
  return true;
}

bool Schedule::apply_text(std::string_view text, std::string* error) {
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    if (!tokenize(line).empty()) {
      std::string why;
      if (!apply(line, &why)) {
        if (error) *error = "line " + std::to_string(line_no) + ": " + why;
        return false;
      }
    }
    pos = end + 1;
  }
  return true;
}

bool Schedule::undo() {
  if (current_ == 0) return false;
  --current_;
  return true;
}

bool Schedule::redo() {
  if (current_ + 1 >= states_.size()) return false;
  ++current_;
  return true;
}

std::string Schedule::trace() const {
  std::string out;
  for (size_t i = 0; i < current_; ++i) out += steps_[i] + "\n";
  return out;
}

}  // namespace descent::tensor
