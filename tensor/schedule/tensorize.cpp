// tensorize: a tile of a loop nest replaced by a tensor intrinsic's implementation (the MLC
// course's chapter on hardware acceleration; TVM's TensorIntrin pairs a description with an
// implementation the same way).
//
// Every intrinsic here is a register-blocked multiply-accumulate tile, the micro-kernel of a
// BLAS:
//
//   description   for i < M, j < N:   C[i, j] += A[i] * B[j]
//                 one step of a reduction whose loop is outside the tile: A's element depends
//                 on i only (broadcast across j), B's on j only (a row of M N-wide vectors)
//   cpu           i unrolled, j one N-lane vector, each update one fused multiply-add
//                 (llvm.fma: vfmadd231ps with AVX-512 or AVX2), M x N accumulators
//   opencl        the same with floatN and OpenCL's fma(): a vector micro-kernel per work-item
//
// Matching reads the tile as a person would check it against the description, and a refusal
// says which part differs: the loop extents, the nest's shape, the block (an init left inside,
// a predicate, a second statement), the update's form, or what each operand's indices depend on.
#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

std::vector<TensorIntrin> make_intrinsics() {
  std::vector<TensorIntrin> out;
  auto add = [&](const std::string& device, int64_t m, int64_t n) {
    const std::string M = std::to_string(m), N = std::to_string(n);
    TensorIntrin t;
    t.name = device + ".fma_" + M + "x" + N;
    t.device = device;
    t.m = m;
    t.n = n;
    t.description = "for i < " + M + ", j < " + N +
                    ": C[i, j] += A[i] * B[j] (one step of a reduction outside the tile; A "
                    "depends on i only, B on j only)";
    t.implementation = device == "cpu"
                           ? "i unrolled (" + M + "), j one " + N + "-lane vector: " + M +
                                 " fused multiply-adds (llvm.fma) into " + M + " x " + N +
                                 " accumulators"
                           : "i unrolled (" + M + "), j one float" + N + ": " + M +
                                 " OpenCL fma() per work-item";
    out.push_back(std::move(t));
  };
  // CPU: N a multiple of the common vector widths (8 floats AVX2, 16 AVX-512), M rows of
  // accumulators that fit the register file with room for A's broadcast and B's row.
  for (int64_t m : {1, 2, 4, 6, 8})
    for (int64_t n : {8, 16, 32}) add("cpu", m, n);
  // OpenCL: floatN exists for N = 2, 4, 8, 16.
  for (int64_t m : {1, 2, 4, 8})
    for (int64_t n : {4, 8, 16}) add("opencl", m, n);
  return out;
}

}  // namespace

const std::vector<TensorIntrin>& tensor_intrinsics() {
  static const std::vector<TensorIntrin> all = make_intrinsics();
  return all;
}

const TensorIntrin* find_intrinsic(const std::string& name) {
  for (const auto& t : tensor_intrinsics())
    if (t.name == name) return &t;
  return nullptr;
}

bool tensorize(PrimFunc& f, const std::string& loop, const std::string& intrinsic,
               std::string* error) {
  const TensorIntrin* in = find_intrinsic(intrinsic);
  if (!in) {
    std::string names;
    for (const auto& t : tensor_intrinsics()) names += (names.empty() ? "" : ", ") + t.name;
    return fail(error, "no tensor intrinsic '" + intrinsic + "' (intrinsics: " + names + ")");
  }
  const std::string head = "cannot tensorize '" + loop + "' with " + intrinsic + ": ";
  return commit(f, error, [&](PrimFunc& g) {
    Stmt* outer = nullptr;
    if (Stmt* b = tir::find_block(g, loop)) {
      // A block over a tile (blockize): the tile is what it holds. Its variables fold back
      // into the tile first, so the result has one level of blocks again.
      Stmt* first = only_child(b);
      if (!has_nested_block(b) || !first || first->kind != StmtKind::For)
        return fail(error, head + "block '" + loop + "' is not a block over a tile: blockize a "
                               "tile's outer loop first (or name the loop)");
      if (!flatten_block(g, b))
        return fail(error, head + "block '" + loop + "' has an init or a predicate of its own");
      outer = first;
    } else {
      LoopRef ref = find_loop(g, loop, error);
      if (!ref.loop) return false;
      outer = ref.loop;
    }
    // The nest's shape: exactly two perfectly nested loops, then one block.
    Stmt* inner = only_child(outer);
    if (!inner || inner->kind != StmtKind::For)
      return fail(error, head + "the description is two nested loops (i < " + std::to_string(in->m) +
                             ", j < " + std::to_string(in->n) + ") around one block; '" + loop +
                             "' holds " + (inner ? "something else" : "several statements"));
    Stmt* block = only_child(inner);
    if (!block || block->kind != StmtKind::Block)
      return fail(error, head + "the description is two nested loops around one block; inside '" +
                             inner->var + "' there " +
                             (!block ? std::string("are several statements")
                              : block->kind == StmtKind::For
                                  ? "is another loop ('" + block->var + "'): reorder the reduce loop outside the tile"
                                  : std::string("is something else")));
    if (outer->extent != in->m || inner->extent != in->n)
      return fail(error, head + "the description's loops are " + std::to_string(in->m) + " x " +
                             std::to_string(in->n) + " (i, then j); '" + outer->var + "' x '" +
                             inner->var + "' is " + std::to_string(outer->extent) + " x " +
                             std::to_string(inner->extent));
    for (Stmt* l : {outer, inner})
      if (l->for_kind != ForKind::Serial && l->for_kind != ForKind::Unrolled &&
          l->for_kind != ForKind::Vectorized)
        return fail(error, head + "loop '" + l->var + "' is " + tir::for_kind_name(l->for_kind) +
                               ": a tile is one work-item's (or one thread's) work");
    // The block: an accumulation, its init outside the tile, no predicate.
    if (block->init)
      return fail(error, head + "block '" + block->name + "' still has its init inside the tile: "
                             "decompose_reduction " + block->name + " first (the description only "
                             "accumulates)");
    if (block->predicate)
      return fail(error, head + "a predicate guards block '" + block->name +
                             "' (a split that does not divide): the intrinsic covers whole tiles only");
    bool reduces = false;
    for (const auto& it : block->iters) {
      if (it.kind != IterKind::Reduce) continue;
      reduces = true;
      if (it.binding && (tir::uses_var(*it.binding, outer->var) || tir::uses_var(*it.binding, inner->var)))
        return fail(error, head + "the reduction (" + it.name + ") runs inside the tile; the "
                               "description is one step of it: reorder the reduce loop outside");
    }
    if (!reduces)
      return fail(error, head + "block '" + block->name + "' is not a reduction: the description "
                             "accumulates (C[i, j] += A[i] * B[j])");
    Stmt* store = only_child(block);
    if (!store || store->kind != StmtKind::Store || !store->value)
      return fail(error, head + "block '" + block->name + "' is not a single store");
    // The update, as the loops see it: C[..] = C[..] + A * B (either order of the sum and of
    // the product).
    ExprPtr value = tir::inline_bindings(*store->value, *block);
    std::vector<ExprPtr> target;
    for (const auto& i : store->indices) target.push_back(tir::inline_bindings(*i, *block));
    auto is_target = [&](const Expr& e) {
      if (e.kind != ExprKind::Load || e.buffer != store->buffer || e.args.size() != target.size())
        return false;
      for (size_t d = 0; d < target.size(); ++d)
        if (!tir::equal(*e.args[d], *target[d])) return false;
      return true;
    };
    const Expr* product = nullptr;
    if (value->kind == ExprKind::Binary && value->op == Op::Add) {
      if (is_target(*value->args[0])) product = value->args[1].get();
      else if (is_target(*value->args[1])) product = value->args[0].get();
    }
    if (!product || product->kind != ExprKind::Binary || product->op != Op::Mul ||
        product->type != tir::ScalarType::F32)
      return fail(error, head + "the update of '" + buffer_name(g, store->buffer) + "' is " +
                             tir::print_expr(g, *value) + ", not " + buffer_name(g, store->buffer) +
                             "[..] + A * B");
    // What each operand depends on: C on i and j, one factor on i alone, the other on j alone.
    auto uses = [&](const Expr& e, const Stmt* l) { return tir::uses_var(e, l->var); };
    bool c_ok = false;
    for (const auto& t : target) c_ok |= uses(*t, inner);
    bool c_i = false;
    for (const auto& t : target) c_i |= uses(*t, outer);
    if (!c_ok || !c_i)
      return fail(error, head + "'" + buffer_name(g, store->buffer) +
                             "' must be indexed by both loops of the tile (a distinct accumulator per "
                             "(i, j)); it uses " + (c_ok ? inner->var : outer->var) + " only");
    const Expr* a = product->args[0].get();
    const Expr* b = product->args[1].get();
    if (uses(*a, inner) && !uses(*b, inner)) std::swap(a, b);
    // Operand k as the block writes it (its iteration variables), and the loops it depends on.
    auto describe = [&](size_t k) {
      const Expr& e = *product->args[k];
      std::string deps = uses(e, outer) ? outer->var : "";
      if (uses(e, inner)) deps += (deps.empty() ? "" : " and ") + inner->var;
      const Expr& sv = *store->value;
      const Expr* written = &e;
      for (const auto& side : sv.args)
        if (side->kind == ExprKind::Binary && side->op == Op::Mul && side->args.size() == 2)
          written = side->args[k].get();
      return tir::print_expr(g, *written) + (deps.empty() ? " (on neither)" : " (on " + deps + ")");
    };
    if (uses(*a, inner) || uses(*b, outer) || !uses(*b, inner))
      return fail(error, head + "the description multiplies A[i] (on i only) by B[j] (on j only); "
                             "here " + describe(0) + " times " + describe(1));
    // The implementation: i unrolled, j one vector, the update one fused multiply-add.
    ExprPtr c_load = nullptr;
    // The store's own value keeps the block's iteration variables: rebuild from it.
    const Expr& sv = *store->value;
    const Expr* sv_product = nullptr;
    if (sv.kind == ExprKind::Binary && sv.op == Op::Add) {
      bool left = sv.args[0]->kind == ExprKind::Load && sv.args[0]->buffer == store->buffer;
      c_load = clone(*sv.args[left ? 0 : 1]);
      sv_product = sv.args[left ? 1 : 0].get();
    }
    if (!c_load || !sv_product || sv_product->args.size() != 2)
      return fail(error, head + "internal error: the update changed while it was read");
    store->value = tir::fma(clone(*sv_product->args[0]), clone(*sv_product->args[1]), std::move(c_load));
    outer->for_kind = ForKind::Unrolled;
    inner->for_kind = ForKind::Vectorized;
    outer->intrinsic = intrinsic;
    return true;
  });
}

}  // namespace descent::tensor::sched
