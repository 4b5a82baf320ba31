// Staging buffers: cache_read, cache_write, compact_buffers. cache_read copies a buffer into
// a local or shared copy that one block reads; cache_write lets a block accumulate in a copy
// that is written back after it. On their own they only add copies. Their point comes with
// compute_at, which moves the copy next to its use, and compact_buffers, which then shrinks
// the copy to the box one loop iteration touches: a [4, 32] tile in registers or GPU shared
// memory instead of the whole tensor.
#include <memory>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// The statement directly in the function's top-level Seq that holds `s` (turning the body
// into a Seq first, so there is always a place before and after it).
Stmt* top_level(PrimFunc& g, Stmt* s) {
  if (g.body->kind != StmtKind::Seq) {
    std::vector<StmtPtr> one;
    one.push_back(std::move(g.body));
    g.body = tir::make_seq(std::move(one));
  }
  for (StmtPtr& c : g.body->stmts)
    if (contains(c.get(), s)) return c.get();
  return nullptr;
}

bool has_allocate(const Stmt* s, int x) {
  if (!s) return false;
  if (s->kind == StmtKind::Allocate && s->buffer == x) return true;
  if (has_allocate(s->init.get(), x) || has_allocate(s->body.get(), x)) return true;
  for (const StmtPtr& c : s->stmts)
    if (has_allocate(c.get(), x)) return true;
  return false;
}

// The cache itself: a Temp copy of buffer x's declaration, named `name`, in `scope`, with
// every load block b makes of x redirected to it. Returns its index.
int add_cache_buffer(PrimFunc& g, Stmt* b, int x, const std::string& name, tir::Scope scope) {
  tir::Buffer nb = g.buffers[size_t(x)];
  nb.name = name;
  nb.scope = scope;
  nb.role = tir::BufferRole::Temp;
  g.buffers.push_back(nb);
  int y = int(g.buffers.size()) - 1;
  statement_exprs(b, [&](ExprPtr& root) {
    rewrite_expr(root, [&](ExprPtr& e) {
      if (e->kind == ExprKind::Load && e->buffer == x) e->buffer = y;
    });
  });
  return y;
}

bool cache_read_impl(PrimFunc& g, const std::string& bname, const std::string& buf,
                     tir::Scope scope, std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  int x = g.find_buffer(buf);
  if (x < 0) return fail(error, "no buffer '" + buf + "' (buffers: " + join(buffer_names(g)) + ")");
  std::string pre = "cannot cache_read '" + buf + "' for '" + bname + "': ";
  if (!block_reads(b, x)) return fail(error, pre + "block '" + bname + "' does not read it");
  if (block_writes(b, x)) return fail(error, pre + "block '" + bname + "' also writes it");
  // The copy runs once, before the whole nest: a write to the buffer inside that nest would
  // be missed by the copy.
  Stmt* top = top_level(g, b);
  for (Stmt* o : blocks_under(top))
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' writes it inside the same loop nest");

  std::string name = unique_buffer_name(g, buf + "_" + tir::scope_name(scope));
  if (tir::find_block(g, name)) name = unique_block_name(g, name);
  int y = add_cache_buffer(g, b, x, name, scope);
  const std::vector<int64_t> shape = g.buffers[size_t(y)].shape;
  insert_next_to(g, top, copy_nest(name, y, x, shape), /*after=*/false);
  return true;
}

bool cache_write_impl(PrimFunc& g, const std::string& bname, tir::Scope scope, std::string* error) {
  Stmt* b;
  if (!find_block_or_fail(g, bname, &b, error)) return false;
  std::string pre = "cannot cache_write '" + bname + "': ";
  int x = written_buffer(b);
  if (x < 0) return fail(error, pre + "it writes more than one buffer");
  std::string xn = buffer_name(g, x);
  // The write-back runs once, after the whole nest: nobody inside it may read the buffer.
  Stmt* top = top_level(g, b);
  for (const tir::BlockSite& site : tir::blocks(g)) {
    Stmt* o = site.block;
    if (o == b) continue;
    if (block_writes(o, x))
      return fail(error, pre + "block '" + o->name + "' also writes '" + xn + "'");
    if (contains(top, o) && block_reads(o, x))
      return fail(error,
                  pre + "block '" + o->name + "' reads '" + xn + "' inside the same loop nest");
  }
  std::string name = unique_buffer_name(g, xn + "_" + tir::scope_name(scope));
  int y = add_cache_buffer(g, b, x, name, scope);
  const std::vector<int64_t> shape = g.buffers[size_t(y)].shape;
  for (Stmt* s : stores_of(b)) s->buffer = y;
  std::string wb = unique_block_name(g, xn + "_writeback");
  insert_next_to(g, top, copy_nest(wb, x, y, shape), /*after=*/true);
  return true;
}

}  // namespace

std::vector<std::string> buffer_names(const PrimFunc& g) {
  std::vector<std::string> out;
  for (const tir::Buffer& b : g.buffers) out.push_back(b.name);
  return out;
}

// Over the DESTINATION's shape, so the writes are contiguous; with a permutation the reads
// stride through the source (a transpose has to stride one of the two, and the nest that
// follows reads the written side many times).
StmtPtr copy_nest(const std::string& name, int dst, int src, const std::vector<int64_t>& shape,
                  const std::vector<int>& perm) {
  auto block = std::make_unique<Stmt>(StmtKind::Block);
  block->name = name;
  std::vector<ExprPtr> dst_idx, src_idx(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string v = "v" + std::to_string(d);
    block->iters.push_back({v, shape[d], IterKind::Spatial, tir::var("ax" + std::to_string(d))});
    dst_idx.push_back(tir::var(v));
    src_idx[perm.empty() ? d : size_t(perm[d])] = tir::var(v);  // new dim d is old dim perm[d]
  }
  block->body = tir::make_store(dst, std::move(dst_idx), tir::load(src, std::move(src_idx)));
  StmtPtr s = std::move(block);
  for (size_t d = shape.size(); d-- > 0;)
    s = tir::make_for("ax" + std::to_string(d), shape[d], std::move(s));
  return s;
}

bool cache_read(PrimFunc& f, const std::string& block, const std::string& buffer, tir::Scope scope,
                std::string* error) {
  return commit(f, error,
                [&](PrimFunc& g) { return cache_read_impl(g, block, buffer, scope, error); });
}

bool cache_write(PrimFunc& f, const std::string& block, tir::Scope scope, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return cache_write_impl(g, block, scope, error); });
}

// An intermediate the kernel makes and uses itself (a Temp: not an input, not the result)
// moved to local or shared memory, then compacted like any staging buffer: where every access
// sits under one loop (softmax's exponentials, once its rows are fused), it shrinks to the
// box one iteration touches (a row, in L1 or on the stack) instead of a whole tensor that
// each row writes out to memory and reads back.
bool set_scope(PrimFunc& f, const std::string& buffer, tir::Scope scope, std::string* error) {
  return commit(f, error, [&](PrimFunc& g) {
    int x = g.find_buffer(buffer);
    if (x < 0)
      return fail(error, "no buffer '" + buffer + "' (buffers: " + join(buffer_names(g)) + ")");
    const tir::Buffer& b = g.buffers[size_t(x)];
    std::string pre = "cannot set_scope '" + buffer + "': ";
    if (b.role != tir::BufferRole::Temp)
      return fail(error, pre + (b.role == tir::BufferRole::Input ? "it is an input" : "it is the kernel's result") +
                             ", which lives where the caller put it");
    if (has_allocate(g.body.get(), x))
      return fail(error, pre + "it is already compacted into a loop (its scope is fixed there)");
    if (b.scope == scope) return fail(error, pre + "it is in that scope already");
    g.buffers[size_t(x)].scope = scope;
    compact_buffers(g);
    return true;
  });
}

Stmt* innermost_loop_around(PrimFunc& f, int x) {
  std::vector<Stmt*> common;
  bool first = true;
  for (const tir::BlockSite& site : tir::blocks(f)) {
    if (!block_reads(site.block, x) && !block_writes(site.block, x)) continue;
    if (first) {
      common = site.loops;
      first = false;
      continue;
    }
    size_t n = 0;
    while (n < common.size() && n < site.loops.size() && common[n] == site.loops[n]) ++n;
    common.resize(n);
  }
  return common.empty() ? nullptr : common.back();
}

// A staging buffer whose accesses all sit under one loop L lives for one iteration of L only
// (compute_at and reverse_compute_at put the write and the reads in the same iteration), so
// it needs only the box one iteration touches: a [K, 32] panel instead of all of B, a [4, 32]
// accumulator instead of all of Y. The box's base becomes index 0.
int compact_buffers(PrimFunc& f) {
  int count = 0;
  for (size_t x = 0; x < f.buffers.size(); ++x) {
    const tir::Buffer& buf = f.buffers[x];
    if (buf.scope == tir::Scope::Global || buf.role != tir::BufferRole::Temp) continue;
    if (has_allocate(f.body.get(), int(x))) continue;
    Stmt* loop = innermost_loop_around(f, int(x));
    if (!loop) continue;
    Region r;
    std::string why;
    if (!region_under(f, loop, int(x), Access::Both, &r, &why)) continue;
    if (r.dims.size() != buf.shape.size()) continue;
    std::vector<int64_t> shape;
    for (const Bound& b : r.dims) shape.push_back(b.hi - b.lo + 1);
    for (Stmt* blk : blocks_under(loop)) {
      auto relative = [&](std::vector<ExprPtr>& idx) {
        for (size_t d = 0; d < idx.size() && d < r.dims.size(); ++d) {
          if (r.dims[d].coeff.empty() && r.dims[d].lo == 0) continue;
          idx[d] = tir::simplify(
              *tir::binary(Op::Sub, std::move(idx[d]), base_expr(r.dims[d], r.outer)));
        }
      };
      statement_exprs(blk, [&](ExprPtr& root) {
        rewrite_expr(root, [&](ExprPtr& e) {
          if (e->kind == ExprKind::Load && e->buffer == int(x)) relative(e->args);
        });
      });
      for (Stmt* s : stores_of(blk))
        if (s->buffer == int(x)) relative(s->indices);
    }
    f.buffers[x].shape = shape;
    auto alloc = std::make_unique<Stmt>(StmtKind::Allocate);
    alloc->buffer = int(x);
    alloc->body = std::move(loop->body);
    loop->body = std::move(alloc);
    ++count;
  }
  return count;
}

// ============================================================================
// [SECTION] Reductions

}  // namespace descent::tensor::sched
