// defined_before_read (schedule.h): which buffers a kernel overwrites completely before it
// reads them, so that a backend can skip zero-filling them on every launch. A block's
// iteration domain is covered exactly once by its loops (every primitive keeps that true),
// so a block storing buf[v0, v1] with v0 and v1 spatial, distinct and as long as buf's axes
// writes every element of buf.
#include "tensor/schedule/internal.h"

namespace descent::tensor {

using namespace tir;
using namespace sched;

namespace {

// The store's indices cover `buffer` when they are distinct spatial iteration variables of
// `block` whose extents are the buffer's axes.
bool covers(const PrimFunc& f, const Stmt* block, const Stmt* store) {
  std::vector<int> iter_of_dim;
  if (!indices_are_iters(block, raw(store->indices), &iter_of_dim)) return false;
  const auto& shape = f.buffers[size_t(store->buffer)].shape;
  if (iter_of_dim.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    const IterVar& v = block->iters[size_t(iter_of_dim[d])];
    if (v.kind != IterKind::Spatial || v.extent != shape[d]) return false;
  }
  return true;
}

// Every load of `buffer` in e reads at `at`'s indices.
bool loads_only_at(const Expr& e, int buffer, const Stmt* at) {
  bool ok = true;
  visit_expr(e, [&](const Expr& x) {
    if (x.kind != ExprKind::Load || x.buffer != buffer) return;
    if (x.args.size() != at->indices.size()) {
      ok = false;
      return;
    }
    for (size_t d = 0; d < x.args.size(); ++d) ok = ok && equal(*x.args[d], *at->indices[d]);
  });
  return ok;
}

bool reads_buffer(const Expr& e, int buffer) {
  bool hit = false;
  visit_expr(e, [&](const Expr& x) { hit = hit || (x.kind == ExprKind::Load && x.buffer == buffer); });
  return hit;
}

// What the first block that touches `buffer` says: defined (it writes all of it before
// reading any), undefined (it may read an element no one wrote), or not touched at all.
enum class First { Defined, Undefined, Untouched };

First first_touch(const PrimFunc& f, Stmt* block, int buffer) {
  bool reads = block_reads(block, buffer), writes = block_writes(block, buffer);
  if (!reads && !writes) return First::Untouched;
  if (!writes) return First::Undefined;
  // The one store of the body (and of the init, if any) to `buffer`.
  std::vector<Stmt*> body_stores, init_stores;
  if (block->body) stores_in(block->body.get(), &body_stores);
  if (block->init) stores_in(block->init.get(), &init_stores);
  auto only = [&](const std::vector<Stmt*>& stores) -> Stmt* {
    Stmt* found = nullptr;
    for (Stmt* s : stores)
      if (s->buffer == buffer) {
        if (found) return nullptr;
        found = s;
      }
    return found;
  };
  Stmt* store = only(body_stores);
  if (!store || !covers(f, block, store)) return First::Undefined;
  if (block->predicate && reads_buffer(*block->predicate, buffer)) return First::Undefined;
  if (!reads) return First::Defined;
  // A reduction reading what it accumulates: its init must write the same element first.
  Stmt* init = only(init_stores);
  if (!init || !covers(f, block, init)) return First::Undefined;
  for (size_t d = 0; d < init->indices.size(); ++d)
    if (!equal(*init->indices[d], *store->indices[d])) return First::Undefined;
  bool same_place = true;
  for (Stmt* s : body_stores) {
    if (s->value) same_place = same_place && loads_only_at(*s->value, buffer, store);
    for (const ExprPtr& i : s->indices) same_place = same_place && loads_only_at(*i, buffer, store);
  }
  // An init that itself reads the buffer would read it before anything wrote it.
  if (init->value && reads_buffer(*init->value, buffer)) return First::Undefined;
  return same_place ? First::Defined : First::Undefined;
}

}  // namespace

bool defined_before_read(const PrimFunc& f, int buffer) {
  if (!f.body || buffer < 0 || size_t(buffer) >= f.buffers.size()) return false;
  for (Stmt* b : blocks_under(f.body.get())) {
    // A block with blocks inside (blockize's outer block) is judged by those.
    if (has_nested_block(b)) continue;
    First first = first_touch(f, b, buffer);
    if (first != First::Untouched) return first == First::Defined;
  }
  return false;  // never written: what it holds is whatever it was allocated with
}

}  // namespace descent::tensor
