// The seeded random schedule generator (see schedule_random.h for why it exists).
//
// Each call looks at the function as it is now: its loops (with the names schedules use
// for them), the perfect chains they form, its blocks (what each reads and writes, which
// loops carry its reductions) and its buffers. A primitive is drawn by weight, then its
// arguments are drawn from those facts, so most steps make sense; whether the primitive
// accepts them is its own business. Junk steps are drawn separately, to hit the argument
// parser and the "no such loop" paths that plausible steps never reach.
#include "tensor/schedule_random.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "tensor/schedule.h"
#include "tensor/schedule/internal.h"  // loops_under, blocks_under, only_child, loops_above

namespace descent::tensor {
namespace {
using tir::Expr;
using tir::PrimFunc;
using tir::Stmt;
using tir::StmtKind;

// ---- Draws: rng() % n, never a std distribution (see the header) ----------------------
// C++ leaves the order in which the operands of `a + b` are evaluated open, so a step is
// never built from two draws inside one expression: each draw gets its own statement.

uint64_t below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }
bool chance(std::mt19937_64& rng, int percent) { return int(rng() % 100) < percent; }

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& xs) {
  return xs[below(rng, xs.size())];
}

// ---- What the current function offers ------------------------------------------------

struct LoopInfo {
  Stmt* loop = nullptr;
  std::string name;       // as a schedule step addresses it ("i" or "C.i")
  Stmt* child = nullptr;  // the loop directly (perfectly) inside, if any
  bool innermost = true;  // no loop anywhere inside
  int depth = 0;          // loops around it
  bool serial = true;     // not yet parallel, vectorized, unrolled or bound
  bool carries = false;   // some block's reduce iteration is bound through it
};

struct BlockInfo {
  Stmt* block = nullptr;
  std::vector<Stmt*> loops;         // around it, outermost first
  std::set<int> reads, writes;      // buffer indices
  bool reduce = false;              // has a Reduce iteration variable
  std::vector<Stmt*> reduce_loops;  // the loops its Reduce iters are bound through
};

struct View {
  PrimFunc f;  // a copy: the sched:: helpers take non-const functions
  std::vector<LoopInfo> loops;
  std::vector<BlockInfo> blocks;
  std::map<const Stmt*, std::string> loop_name;
};

void collect_loads(const Expr* e, std::set<int>* reads) {
  if (!e) return;
  if (e->kind == tir::ExprKind::Load) reads->insert(e->buffer);
  for (const tir::ExprPtr& a : e->args) collect_loads(a.get(), reads);
}

void collect_accesses(const Stmt* s, BlockInfo* b) {
  if (!s) return;
  if (s->kind == StmtKind::Store) {
    b->writes.insert(s->buffer);
    for (const tir::ExprPtr& i : s->indices) collect_loads(i.get(), &b->reads);
  }
  collect_loads(s->value.get(), &b->reads);
  collect_loads(s->predicate.get(), &b->reads);
  collect_accesses(s->init.get(), b);
  collect_accesses(s->body.get(), b);
  for (const tir::StmtPtr& c : s->stmts) collect_accesses(c.get(), b);
}

void build_view(const PrimFunc& original, View* v) {
  v->f = original;
  PrimFunc& f = v->f;
  if (!f.body) return;
  std::vector<Stmt*> loops = sched::loops_under(f.body.get());
  std::map<std::string, int> uses;
  for (Stmt* l : loops) ++uses[l->var];
  for (Stmt* l : loops) {
    LoopInfo info;
    info.loop = l;
    // The same rule sched::find_loop resolves: a bare name when unique, else qualified by
    // the first block under the loop.
    std::vector<Stmt*> under = sched::blocks_under(l);
    info.name = uses[l->var] == 1 || under.empty() ? l->var : under[0]->name + "." + l->var;
    Stmt* c = sched::only_child(l);
    info.child = c && c->kind == StmtKind::For ? c : nullptr;
    info.innermost = sched::loops_under(l).size() == 1;
    info.depth = int(sched::loops_above(f, l).size());
    info.serial = l->for_kind == tir::ForKind::Serial;
    v->loop_name[l] = info.name;
    v->loops.push_back(std::move(info));
  }
  for (Stmt* b : sched::blocks_under(f.body.get())) {
    BlockInfo info;
    info.block = b;
    info.loops = sched::loops_above(f, b);
    collect_accesses(b, &info);
    for (const tir::IterVar& it : b->iters) {
      if (it.kind != tir::IterKind::Reduce) continue;
      info.reduce = true;
      for (Stmt* l : info.loops)
        if (it.binding && tir::uses_var(*it.binding, l->var) &&
            std::find(info.reduce_loops.begin(), info.reduce_loops.end(), l) ==
                info.reduce_loops.end())
          info.reduce_loops.push_back(l);
    }
    for (Stmt* l : info.reduce_loops)
      for (LoopInfo& li : v->loops)
        if (li.loop == l) li.carries = true;
    v->blocks.push_back(std::move(info));
  }
}

// ---- Arguments -----------------------------------------------------------------------

// A split/tile factor for a loop of this extent: mostly a proper divisor, often a
// non-divisor (a predicate guards the tail), sometimes the degenerate 1 or the whole
// extent, rarely more than the extent.
int64_t factor_for(std::mt19937_64& rng, int64_t extent) {
  std::vector<int64_t> divisors;
  for (int64_t d = 2; d < extent && d <= 64; ++d)
    if (extent % d == 0) divisors.push_back(d);
  uint64_t r = below(rng, 10);
  if (r < 5 && !divisors.empty()) return pick(rng, divisors);
  if (r < 8 && extent > 2) {
    int64_t top = std::min<int64_t>(extent, 66);  // factors in [2, top)
    return 2 + int64_t(below(rng, uint64_t(top - 2)));
  }
  if (r < 9) return chance(rng, 50) ? 1 : extent;
  return extent + 1 + int64_t(below(rng, 8));
}

const char* scope_word(std::mt19937_64& rng) { return chance(rng, 60) ? "local" : "shared"; }

const std::vector<std::string> kTags = {"group.x", "group.y", "group.z",
                                        "local.x", "local.y", "local.z"};

std::string nm(const View& v, const Stmt* loop) { return v.loop_name.at(loop); }

// The loops satisfying `want`, or every loop when too few do (or by chance), so that
// implausible choices still appear now and then.
std::vector<const LoopInfo*> loops_where(std::mt19937_64& rng, const View& v, int prefer_percent,
                                         const std::function<bool(const LoopInfo&)>& want) {
  std::vector<const LoopInfo*> out;
  if (chance(rng, prefer_percent))
    for (const LoopInfo& l : v.loops)
      if (want(l)) out.push_back(&l);
  if (out.empty())
    for (const LoopInfo& l : v.loops) out.push_back(&l);
  return out;
}

// ---- Plausible steps (one per primitive; "" when the function offers nothing) ---------

std::string gen_split(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  auto cands = loops_where(rng, v, 90, [](const LoopInfo& x) { return x.serial; });
  const LoopInfo& l = *pick(rng, cands);
  int64_t factor = factor_for(rng, l.loop->extent);
  std::string step = "split " + l.name + " " + std::to_string(factor);
  if (chance(rng, 15)) step += " as " + l.loop->var + "_out " + l.loop->var + "_in";
  return step;
}

// Loops with a loop perfectly inside; usually only where both are still serial (most
// primitives refuse to reshape a loop that already has a kind).
std::vector<const LoopInfo*> with_child(std::mt19937_64& rng, const View& v) {
  std::vector<const LoopInfo*> out, serial;
  for (const LoopInfo& l : v.loops)
    if (l.child) {
      out.push_back(&l);
      if (l.serial && l.child->for_kind == tir::ForKind::Serial) serial.push_back(&l);
    }
  return serial.empty() || chance(rng, 10) ? out : serial;
}

std::string gen_tile(std::mt19937_64& rng, const View& v) {
  std::vector<const LoopInfo*> cands = with_child(rng, v);
  if (cands.empty()) return "";
  const LoopInfo* l = pick(rng, cands);
  int64_t f1 = factor_for(rng, l->loop->extent);
  int64_t f2 = factor_for(rng, l->child->extent);
  return "tile " + l->name + " " + nm(v, l->child) + " " + std::to_string(f1) + " " +
         std::to_string(f2);
}

std::string gen_reorder(std::mt19937_64& rng, const View& v) {
  std::vector<const LoopInfo*> cands = with_child(rng, v);
  if (cands.empty()) return "";
  // The perfect chain below a random loop, then a random window of it, shuffled.
  std::vector<Stmt*> chain = {pick(rng, cands)->loop};
  for (;;) {
    Stmt* c = sched::only_child(chain.back());
    if (!c || c->kind != StmtKind::For) break;
    chain.push_back(c);
  }
  size_t a = below(rng, chain.size() - 1);
  size_t b = a + 1 + below(rng, chain.size() - a - 1);
  std::vector<Stmt*> window(chain.begin() + long(a), chain.begin() + long(b) + 1);
  std::vector<Stmt*> order = window;
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[below(rng, i + 1)]);
  if (order == window) std::swap(order[0], order[1]);
  std::string step = "reorder";
  for (Stmt* l : order) step += " " + nm(v, l);
  return step;
}

std::string gen_fuse(std::mt19937_64& rng, const View& v) {
  std::vector<const LoopInfo*> cands = with_child(rng, v);
  if (cands.empty()) return "";
  const LoopInfo* l = pick(rng, cands);
  std::string step = "fuse " + l->name + " " + nm(v, l->child);
  if (chance(rng, 10)) step += " as " + l->loop->var + "_" + l->child->var + "_f";
  return step;
}

// Fission wants a loop with a sequence somewhere below it: any loop that is not innermost
// (one whose body is a single nest is refused, a case worth trying too).
std::string gen_fission(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  auto cands = loops_where(rng, v, 80, [](const LoopInfo& l) { return !l.innermost; });
  if (cands.empty()) return "";
  return "fission " + pick(rng, cands)->name;
}

// Blockize wants the outer loop of a tile: a loop with loops around it (the outermost
// loop's tile is the whole nest, which is refused, a case worth trying too).
std::string gen_blockize(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  auto cands = loops_where(rng, v, 80, [](const LoopInfo& l) { return l.depth >= 1; });
  return "blockize " + pick(rng, cands)->name;
}

std::string gen_unroll(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  auto cands = loops_where(rng, v, 85, [](const LoopInfo& l) {
    return l.serial && l.loop->extent <= 16;
  });
  return "unroll " + pick(rng, cands)->name;
}

std::string gen_vectorize(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  // SIMD lanes must be independent: innermost loops that carry no reduction.
  auto cands = loops_where(rng, v, 85, [](const LoopInfo& l) {
    return l.serial && l.innermost && !l.carries && l.loop->extent <= 64;
  });
  return "vectorize " + pick(rng, cands)->name;
}

std::string gen_parallel(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  auto cands = loops_where(rng, v, 80, [](const LoopInfo& l) {
    return l.serial && !l.carries && l.depth <= 1;
  });
  return "parallel " + pick(rng, cands)->name;
}

std::string gen_bind(std::mt19937_64& rng, const View& v) {
  if (v.loops.empty()) return "";
  const std::string& loop = pick(rng, v.loops).name;
  return "bind " + loop + " " + pick(rng, kTags);
}

// (producer, consumer) block pairs linked by a buffer the first writes and the second reads.
std::vector<std::pair<const BlockInfo*, const BlockInfo*>> producer_consumer(const View& v) {
  std::vector<std::pair<const BlockInfo*, const BlockInfo*>> out;
  for (const BlockInfo& p : v.blocks)
    for (const BlockInfo& c : v.blocks) {
      if (&p == &c) continue;
      for (int b : p.writes)
        if (c.reads.count(b)) {
          out.push_back({&p, &c});
          break;
        }
    }
  return out;
}

// compute_at moves the producer under one of the consumer's loops; reverse_compute_at the
// consumer under one of the producer's (one not already around the moved block). A
// function with one block has nothing to fuse: usually "" then, so another primitive is
// drawn.
std::string gen_compute_at(std::mt19937_64& rng, const View& v, bool reverse) {
  const char* verb = reverse ? "reverse_compute_at " : "compute_at ";
  auto pairs = producer_consumer(v);
  if (!pairs.empty() && chance(rng, 90)) {
    auto [p, c] = pick(rng, pairs);
    const BlockInfo* moved = reverse ? c : p;
    const BlockInfo* target = reverse ? p : c;
    std::vector<Stmt*> loops;
    for (Stmt* l : target->loops)
      if (std::find(moved->loops.begin(), moved->loops.end(), l) == moved->loops.end())
        loops.push_back(l);
    if (!loops.empty()) return verb + moved->block->name + " " + nm(v, pick(rng, loops));
  }
  if (v.blocks.empty() || v.loops.empty() || chance(rng, 80)) return "";
  const std::string& block = pick(rng, v.blocks).block->name;
  return verb + block + " " + pick(rng, v.loops).name;
}

// Inlining wants an elementwise intermediate stage: no reduction, not the output.
std::string gen_compute_inline(std::mt19937_64& rng, const View& v) {
  std::vector<const BlockInfo*> cands;
  for (const BlockInfo& b : v.blocks)
    if (!b.reduce && !b.block->init && !b.writes.count(v.f.output)) cands.push_back(&b);
  if (cands.empty() || chance(rng, 10)) {
    if (chance(rng, 70)) return "";
    for (const BlockInfo& b : v.blocks) cands.push_back(&b);
  }
  if (cands.empty()) return "";
  return "compute_inline " + pick(rng, cands)->block->name;
}

std::string gen_cache_read(std::mt19937_64& rng, const View& v) {
  if (v.blocks.empty()) return "";
  const BlockInfo& b = pick(rng, v.blocks);
  // A buffer it reads but does not write (staging an accumulator is refused).
  std::vector<int> bufs;
  for (int x : b.reads)
    if (!b.writes.count(x)) bufs.push_back(x);
  if (bufs.empty() || chance(rng, 10)) bufs.push_back(int(below(rng, v.f.buffers.size())));
  const std::string& buffer = v.f.buffers[size_t(pick(rng, bufs))].name;
  return "cache_read " + b.block->name + " " + buffer + " " + scope_word(rng);
}

std::string gen_cache_write(std::mt19937_64& rng, const View& v) {
  if (v.blocks.empty()) return "";
  const std::string& block = pick(rng, v.blocks).block->name;
  return "cache_write " + block + " " + scope_word(rng);
}

std::vector<const BlockInfo*> reduce_blocks(const View& v) {
  std::vector<const BlockInfo*> out;
  for (const BlockInfo& b : v.blocks)
    if (b.reduce && !b.loops.empty()) out.push_back(&b);
  return out;
}

std::string gen_decompose(std::mt19937_64& rng, const View& v) {
  std::vector<const BlockInfo*> cands = reduce_blocks(v);
  if (cands.empty()) return "";
  const BlockInfo* b = pick(rng, cands);
  // Usually a loop no deeper than the first reduce loop: the init must run before it.
  size_t limit = b->loops.size();
  if (!b->reduce_loops.empty() && chance(rng, 70)) {
    auto it = std::find(b->loops.begin(), b->loops.end(), b->reduce_loops[0]);
    limit = size_t(it - b->loops.begin()) + 1;
  }
  return "decompose_reduction " + b->block->name + " " + nm(v, b->loops[below(rng, limit)]);
}

std::string gen_rfactor(std::mt19937_64& rng, const View& v) {
  std::vector<const BlockInfo*> cands = reduce_blocks(v);
  if (cands.empty()) return "";
  const BlockInfo* b = pick(rng, cands);
  const std::vector<Stmt*>& from =
      !b->reduce_loops.empty() && chance(rng, 80) ? b->reduce_loops : b->loops;
  return "rfactor " + b->block->name + " " + nm(v, pick(rng, from));
}

// A buffer's axes in a random order: mostly a real permutation of a global buffer, sometimes
// the identity, a wrong count or a buffer whose layout is not ours (the output, a staging
// copy), all refused.
std::string gen_transform_layout(std::mt19937_64& rng, const View& v) {
  if (v.f.buffers.empty()) return "";
  const tir::Buffer& b = pick(rng, v.f.buffers);
  std::vector<int> perm(b.shape.size());
  for (size_t d = 0; d < perm.size(); ++d) perm[d] = int(d);
  // Fisher-Yates by hand: std::shuffle's order is the library's, and a seed must mean the
  // same steps on every machine.
  for (size_t d = perm.size(); d > 1; --d) std::swap(perm[d - 1], perm[size_t(below(rng, d))]);
  if (chance(rng, 5)) perm.push_back(int(perm.size()));
  std::string s = "transform_layout " + b.name;
  for (int p : perm) s += " " + std::to_string(p);
  return s;
}

// ---- Deliberately wrong steps ----------------------------------------------------------

std::string gen_junk(std::mt19937_64& rng, const View& v) {
  std::string loop = v.loops.empty() ? "i" : pick(rng, v.loops).name;
  std::string loop2 = v.loops.empty() ? "j" : pick(rng, v.loops).name;
  std::string block = v.blocks.empty() ? "C" : pick(rng, v.blocks).block->name;
  std::string buffer = v.f.buffers.empty() ? "A" : pick(rng, v.f.buffers).name;
  static const std::vector<std::string> kBadNames = {"nope", "k_9", "Q.i", "i.", ".j", "_"};
  const std::string& bad = pick(rng, kBadNames);
  switch (below(rng, 20)) {
    case 0: return "split " + loop + " 0";
    case 1: return "split " + loop + " -" + std::to_string(1 + below(rng, 8));
    case 2: return "split " + loop + " four";
    case 3: return "split " + bad + " 2";
    case 4: return "tile " + loop + " " + loop2 + " 4";
    case 5: return "reorder " + loop;
    case 6: return "reorder " + loop + " " + loop;
    case 7: return "reorder " + loop + " " + loop2;  // often not one perfect nest
    case 8: return "fuse " + loop + " " + bad;
    case 9: return "fuse " + loop + " " + loop2 + " as";
    case 10: return "bind " + loop + " warp.x";
    case 11: return "cache_read " + block + " " + bad + " local";
    case 12: return "cache_read " + block + " " + buffer + " global";
    case 13: return "cache_write " + bad + " shared";
    case 14: return "compute_at " + block + " " + block;
    case 15: return "rfactor " + block + " " + bad;
    case 16: return "spilt " + loop + " 4";
    case 17: return chance(rng, 50) ? "vectorize" : "unroll " + loop + " " + loop2;
    case 18: return "decompose_reduction " + bad + " " + loop;
    default: return "split " + loop + " 99999999999999999999";
  }
}

}  // namespace

std::string random_step(const tir::PrimFunc& f, std::mt19937_64& rng,
                        const RandomStepOptions& options, bool* junk) {
  View v;
  build_view(f, &v);
  if (junk) *junk = true;
  if (chance(rng, options.junk_percent)) return gen_junk(rng, v);
  // Weights: loop reshaping dominates, as in hand-written schedules.
  struct Kind {
    int weight;
    std::string (*gen)(std::mt19937_64&, const View&);
  };
  static const Kind kKinds[] = {
      {14, gen_split},
      {8, gen_tile},
      {10, gen_reorder},
      {7, gen_fuse},
      {4, gen_fission},
      {6, gen_unroll},
      {7, gen_vectorize},
      {7, gen_parallel},
      {4, gen_bind},
      {8, [](std::mt19937_64& r, const View& w) { return gen_compute_at(r, w, false); }},
      {6, [](std::mt19937_64& r, const View& w) { return gen_compute_at(r, w, true); }},
      {6, gen_compute_inline},
      {6, gen_cache_read},
      {5, gen_cache_write},
      {5, gen_decompose},
      {6, gen_rfactor},
      {3, gen_blockize},
      {3, gen_transform_layout},
  };
  int total = 0;
  for (const Kind& k : kKinds) total += k.weight;
  // A primitive with nothing to work on (no perfect nest to reorder, no reduction to
  // rfactor) yields ""; draw again a few times before falling back to a junk step.
  for (int attempt = 0; attempt < 8; ++attempt) {
    int r = int(below(rng, uint64_t(total)));
    for (const Kind& k : kKinds) {
      if (r < k.weight) {
        std::string step = k.gen(rng, v);
        if (!step.empty()) {
          if (junk) *junk = false;
          return step;
        }
        break;
      }
      r -= k.weight;
    }
  }
  return gen_junk(rng, v);
}

std::vector<std::string> random_schedule(const tir::PrimFunc& f, std::mt19937_64& rng,
                                         int max_steps, const RandomStepOptions& options) {
  std::vector<std::string> steps;
  tir::PrimFunc cur = f;
  for (int tries = 0; tries < 4 * max_steps && int(steps.size()) < max_steps; ++tries) {
    std::string step = random_step(cur, rng, options);
    std::string canonical, error;
    if (apply_step(cur, step, &canonical, &error)) steps.push_back(std::move(canonical));
  }
  return steps;
}

}  // namespace descent::tensor
