// blockize: a sub-nest becomes one block over a tile (the first half of TVM's tensorize, the
// MLC course's chapter on hardware acceleration). Before:
//
//   for i_0, j_0, k in T.grid(128, 32, 1024):
//     for i_1, j_1 in T.grid(8, 32):
//       with T.block("C"):
//         vi = T.axis.spatial(1024, i_0 * 8 + i_1)     (and vj, and vk = R(k))
//
// `blockize i_1` splits each binding into the part the loops outside the tile choose (which
// tile: i_0) and the part inside it (where in the tile: i_1), and wraps the tile in a block
// "C_o" whose iteration variables are the first parts:
//
//   for i_0, j_0, k in T.grid(128, 32, 1024):
//     with T.block("C_o"):
//       vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k])
//       for i_1, j_1 in T.grid(8, 32):
//         with T.block("C"):
//           vi = T.axis.spatial(1024, vi_o * 8 + i_1)
//
// The outer block is the unit a tensor intrinsic replaces: `tensorize C_o cpu.fma_8x32`
// matches the tile inside it and, as TVM does, the block then is the intrinsic's call (here
// the intrinsic's loops, marked; the outer block's variables are folded back into the tile).
//
// A binding splits only when it is (outer affine part) * c + (inner part in [0, c)) with the
// block's extent a multiple of c: a tile that a predicate guards, or a fused loop mixing the
// two sides, is refused with the variable that does not split. Until the block is tensorized
// only the steps that change loop kinds (unroll, vectorize, parallel, bind) and tensorize
// apply: the other primitives reason about one level of blocks (tensor/schedule/text.cpp).
#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// The block that holds `s` (a block above it), or null.
const Stmt* enclosing_block(PrimFunc& g, const Stmt* s) {
  for (Stmt* p = parent_of(g, s); p; p = parent_of(g, p))
    if (p->kind == StmtKind::Block) return p;
  return nullptr;
}

// Divides an affine sum of (loop * coefficient) terms by c exactly; null when some
// coefficient is not a multiple of c.
ExprPtr divide_affine(const std::map<std::string, int64_t>& coeff, int64_t offset, int64_t c) {
  if (offset % c != 0) return nullptr;
  ExprPtr sum = offset ? tir::int_imm(offset / c) : nullptr;
  for (const auto& [v, k] : coeff) {
    if (k == 0) continue;
    if (k % c != 0) return nullptr;
    ExprPtr term = k / c == 1 ? tir::var(v) : tir::binary(Op::Mul, tir::var(v), tir::int_imm(k / c));
    sum = sum ? tir::binary(Op::Add, std::move(sum), std::move(term)) : std::move(term);
  }
  return sum ? std::move(sum) : tir::int_imm(0);
}

}  // namespace

bool has_nested_block(const tir::Stmt* s) {
  if (!s) return false;
  if (s->kind == StmtKind::Block) {
    bool inner = false;
    walk(const_cast<Stmt*>(s), [&](Stmt* x) {
      if (x != s && x->kind == StmtKind::Block) inner = true;
      return !inner;
    });
    if (inner) return true;
  }
  if (has_nested_block(s->init.get()) || has_nested_block(s->body.get())) return true;
  for (const auto& k : s->stmts)
    if (has_nested_block(k.get())) return true;
  return false;
}

bool flatten_block(PrimFunc& g, Stmt* outer) {
  if (!outer || outer->kind != StmtKind::Block || outer->init || outer->predicate || !outer->body)
    return false;
  StmtPtr body = std::move(outer->body);
  tir::inline_bindings(body.get(), *outer);
  return replace_stmt(g, outer, std::move(body)) != nullptr;
}

bool blockize(PrimFunc& f, const std::string& loop, std::string* error) {
  const std::string head = "cannot blockize '" + loop + "': ";
  return commit(f, error, [&](PrimFunc& g) {
    LoopRef ref = find_loop(g, loop, error);
    if (!ref.loop) return false;
    Stmt* top = ref.loop;
    if (const Stmt* b = enclosing_block(g, top))
      return fail(error, head + "it is already inside block '" + b->name +
                             "' (blockize makes one level of blocks over tiles)");
    // The tile: a perfect chain of loops from `top` down to one block.
    std::vector<Stmt*> tile{top};
    Stmt* x = only_child(top);
    while (x && x->kind == StmtKind::For) {
      tile.push_back(x);
      x = only_child(x);
    }
    if (!x || x->kind != StmtKind::Block)
      return fail(error, head + "the loops under it must lead to exactly one block (a perfect "
                             "nest); inside '" + tile.back()->var + "' there " +
                             (x ? "is something else" : "are several statements"));
    Stmt* block = x;
    if (has_nested_block(block))
      return fail(error, head + "block '" + block->name + "' already holds a block");
    if (block->predicate)
      return fail(error, head + "a predicate guards block '" + block->name +
                             "' (a split that does not divide): the tile is not whole everywhere");
    // Each binding as outer * c + inner.
    AccessEnv env;
    for (Stmt* l : loops_above(g, top)) env.outer.push_back(l);
    std::set<std::string> inner_names;
    for (Stmt* l : tile) {
      env.inner[l->var] = l->extent;
      inner_names.insert(l->var);
    }
    std::set<std::string> taken;
    for (const Stmt* l : env.outer) taken.insert(l->var);
    for (const Stmt* l : tile) taken.insert(l->var);
    for (const auto& it : block->iters) taken.insert(it.name);
    auto fresh = [&](const std::string& base) {
      std::string n = base;
      for (int k = 1; taken.count(n); ++k) n = base + "_" + std::to_string(k);
      taken.insert(n);
      return n;
    };
    auto outer = std::make_unique<Stmt>(StmtKind::Block);
    outer->name = unique_block_name(g, block->name + "_o");
    std::vector<ExprPtr> new_bindings;
    for (const auto& it : block->iters) {
      const std::string what = head + "iteration variable '" + it.name + "' (" +
                               tir::print_expr(g, *it.binding) + ") ";
      if (!uses_any(*it.binding, inner_names)) {
        // Chosen outside the tile: the outer block takes it whole.
        IterVar o;
        o.name = fresh(it.name + "_o");
        o.extent = it.extent;
        o.kind = it.kind;
        o.binding = tir::clone(*it.binding);
        new_bindings.push_back(tir::var(o.name));
        outer->iters.push_back(std::move(o));
        continue;
      }
      Bound b;
      std::string why;
      if (!bound_of(*it.binding, env, &b, &why))
        return fail(error, what + "does not split into tile and position: " + why);
      bool outer_part = false;
      for (const auto& [v, k] : b.coeff) outer_part |= k != 0;
      if (!outer_part) {
        // Wholly inside the tile: the tile covers this variable's domain.
        new_bindings.push_back(tir::clone(*it.binding));
        continue;
      }
      const int64_t c = b.hi + 1;
      ExprPtr o_binding = b.lo == 0 && b.dense ? divide_affine(b.coeff, 0, c) : nullptr;
      if (!o_binding || it.extent % c != 0)
        return fail(error, what + "is not (a tile index) * " + std::to_string(c) +
                               " + (a position in [0, " + std::to_string(c) +
                               ")) over a domain that " + std::to_string(c) + " divides");
      // The position inside the tile: the binding with every loop outside set to 0.
      ExprPtr inner = tir::clone(*it.binding);
      for (const Stmt* l : env.outer) inner = tir::substitute(*inner, l->var, *tir::int_imm(0));
      IterVar o;
      o.name = fresh(it.name + "_o");
      o.extent = it.extent / c;
      o.kind = it.kind;
      o.binding = tir::simplify(*o_binding);
      new_bindings.push_back(tir::simplify(*tir::binary(
          Op::Add, tir::binary(Op::Mul, tir::var(o.name), tir::int_imm(c)), tir::simplify(*inner))));
      outer->iters.push_back(std::move(o));
    }
    if (outer->iters.empty())
      return fail(error, head + "no iteration variable of block '" + block->name +
                             "' depends on the loops outside the tile: the whole nest is the tile");
    for (size_t k = 0; k < block->iters.size(); ++k) block->iters[k].binding = std::move(new_bindings[k]);
    // The outer block takes the tile's place and holds it.
    Stmt* outer_raw = outer.get();
    StmtPtr tile_stmt = replace_stmt(g, top, std::move(outer));
    outer_raw->body = std::move(tile_stmt);
    return true;
  });
}

}  // namespace descent::tensor::sched
