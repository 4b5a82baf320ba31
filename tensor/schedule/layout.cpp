// Layouts: transform_layout, and the hoisting of a kernel's input re-layouts out of the kernel.
//
// Every other primitive changes the order in which a nest visits memory; this one changes the
// memory. `transform_layout W 1 0` gives W a transposed twin W_t (W_t[r, j] = W[j, r]) and
// makes every access of W read the twin instead. For a `linear` layer, whose weights are
// stored as PyTorch's nn.Linear stores them ([out, in], contiguous along the reduction), that
// turns "one dot product per output" into a matmul whose B rows are contiguous along the
// outputs: the form a register tile of outputs wants (TVM's transform_layout, the layout
// change MLAS and oneDNN make when they pre-pack weights).
//
// On an intermediate buffer the change is free: its stores and loads are re-indexed and
// nothing is copied. On an input it costs a copy, made by a nest of its own at the start of
// the kernel, visible in the loops like any other nest, with its bytes in the kernel's cost.
// When the input is the same tensor from one launch to the next (a layer's weights), that
// copy need not run every time: hoist_layout_prologues moves it out of the kernel into a
// function of its own whose result the graph runtime keeps, once per weight tensor.
#include <algorithm>
#include <numeric>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// idx[d] <- idx[perm[d]]: an index vector of the old layout read in the new one.
void permute(std::vector<ExprPtr>& idx, const std::vector<int>& perm) {
  std::vector<ExprPtr> out(idx.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = std::move(idx[size_t(perm[d])]);
  idx = std::move(out);
}

// Every load of buffer `x` in the function becomes a load of `y` with its indices permuted.
void relayout_loads(PrimFunc& g, int x, int y, const std::vector<int>& perm) {
  for (Stmt* b : blocks_under(g.body.get()))
    statement_exprs(b, [&](ExprPtr& root) {
      rewrite_expr(root, [&](ExprPtr& e) {
        if (e->kind != ExprKind::Load || e->buffer != x) return;
        e->buffer = y;
        permute(e->args, perm);
      });
    });
}

std::string perm_text(const std::vector<int>& perm) {
  std::string s;
  for (int p : perm) s += (s.empty() ? "" : " ") + std::to_string(p);
  return s;
}

bool transform_layout_impl(PrimFunc& g, const std::string& buf, const std::vector<int>& perm,
                           std::string* error) {
  int x = g.find_buffer(buf);
  if (x < 0) return fail(error, "no buffer '" + buf + "' (buffers: " + join(buffer_names(g)) + ")");
  const std::string pre = "cannot transform_layout '" + buf + "': ";
  const tir::Buffer old = g.buffers[size_t(x)];
  const size_t rank = old.shape.size();
  if (perm.size() != rank)
    return fail(error, pre + "it has " + std::to_string(rank) + " dimension" +
                           (rank == 1 ? "" : "s") + ", so the new order needs " +
                           std::to_string(rank) + " axis numbers (a permutation of 0.." +
                           std::to_string(rank - 1) + "), not " + std::to_string(perm.size()));
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < rank; ++d)
    if (sorted[d] != int(d))
      return fail(error, pre + "'" + perm_text(perm) + "' is not a permutation of 0.." +
                             std::to_string(rank - 1));
  bool identity = true;
  for (size_t d = 0; d < rank; ++d) identity &= perm[d] == int(d);
  if (identity) return fail(error, pre + "'" + perm_text(perm) + "' keeps every axis in place");
  if (x == g.output)
    return fail(error, pre + "it is the kernel's result, whose layout the caller reads; "
                             "re-lay out the inputs or an intermediate instead");
  if (old.scope != tir::Scope::Global)
    return fail(error, pre + "it is a " + tir::scope_name(old.scope) +
                           " staging buffer; transform the layout of the buffer it copies");
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = old.shape[size_t(perm[d])];
  const bool input = std::find(g.params.begin(), g.params.end(), x) != g.params.end();
  if (!input) {
    // An intermediate: the same values, stored the other way round. Nothing is copied.
    g.buffers[size_t(x)].shape = shape;
    relayout_loads(g, x, x, perm);
    for (Stmt* b : blocks_under(g.body.get()))
      for (Stmt* s : stores_of(b))
        if (s->buffer == x) permute(s->indices, perm);
    return true;
  }
  // An input: its layout is the caller's, so the kernel makes a re-laid-out copy first.
  tir::Buffer nb = old;
  nb.name = unique_buffer_name(g, buf + "_t");
  nb.shape = shape;
  nb.role = tir::BufferRole::Temp;
  g.buffers.push_back(nb);
  int y = int(g.buffers.size()) - 1;
  relayout_loads(g, x, y, perm);
  std::string block = nb.name;
  if (tir::find_block(g, block)) block = unique_block_name(g, block);
  if (g.body->kind != StmtKind::Seq) {
    std::vector<StmtPtr> one;
    one.push_back(std::move(g.body));
    g.body = tir::make_seq(std::move(one));
  }
  g.body->stmts.insert(g.body->stmts.begin(), copy_nest(block, y, x, shape, perm));
  return true;
}

// True when top-level statement `s` only copies the first `n_params` parameters into one
// Global temp that no other statement writes: a prologue that depends on the kernel's
// inputs alone. Only a copy (every store's value one load): a nest that computes from the
// inputs (exp(x) in a sigmoid) is the kernel's own work, not a layout to make once.
bool is_input_prologue(PrimFunc& f, size_t n_params, Stmt* s, int* written) {
  std::vector<Stmt*> blocks = blocks_under(s);
  if (blocks.empty()) return false;
  auto first = f.params.begin(), last = f.params.begin() + long(std::min(n_params, f.params.size()));
  int y = -1;
  for (Stmt* b : blocks) {
    int w = written_buffer(b);
    if (w < 0 || (y >= 0 && w != y)) return false;
    y = w;
    for (int r : buffers_read(b))
      if (std::find(first, last, r) == last) return false;
    for (Stmt* st : stores_of(b))
      if (!st->value || st->value->kind != tir::ExprKind::Load) return false;
  }
  const tir::Buffer& out = f.buffers[size_t(y)];
  if (y == f.output || out.scope != tir::Scope::Global || out.role != tir::BufferRole::Temp)
    return false;
  for (const tir::BlockSite& site : tir::blocks(f))
    if (!contains(s, site.block) && block_writes(site.block, y)) return false;
  *written = y;
  return true;
}

}  // namespace

bool transform_layout(PrimFunc& f, const std::string& buffer, const std::vector<int>& perm,
                      std::string* error) {
  return commit(f, error, [&](PrimFunc& g) { return transform_layout_impl(g, buffer, perm, error); });
}

}  // namespace descent::tensor::sched

namespace descent::tensor {

std::vector<LayoutPrologue> hoist_layout_prologues(tir::PrimFunc& f) {
  std::vector<LayoutPrologue> out;
  if (!f.body || f.body->kind != tir::StmtKind::Seq) return out;
  auto& stmts = f.body->stmts;
  const size_t n_params = f.params.size();  // a hoisted copy is appended as a parameter:
                                            // the next prologue may read only the caller's
  // Only the leading statements: what comes before any other work (transform_layout puts
  // its copies first; a copy after other nests stays where the schedule put it).
  while (!stmts.empty() && stmts.size() > 1) {
    int y = -1;
    if (!sched::is_input_prologue(f, n_params, stmts.front().get(), &y)) break;
    // The prologue as a function of its own: the parameters it reads, in f's order, and y.
    LayoutPrologue p;
    p.buffer = f.buffers[size_t(y)].name;
    tir::PrimFunc g;
    g.name = f.name + "_" + p.buffer;
    std::vector<int> remap(f.buffers.size(), -1);
    std::set<int> read;
    for (tir::Stmt* b : sched::blocks_under(stmts.front().get()))
      for (int r : sched::buffers_read(b)) read.insert(r);
    for (size_t k = 0; k < f.params.size(); ++k) {
      int x = f.params[k];
      if (!read.count(x)) continue;
      remap[size_t(x)] = int(g.buffers.size());
      g.params.push_back(int(g.buffers.size()));
      g.buffers.push_back(f.buffers[size_t(x)]);
      p.inputs.push_back(int(k));
    }
    remap[size_t(y)] = int(g.buffers.size());
    g.output = int(g.buffers.size());
    g.buffers.push_back(f.buffers[size_t(y)]);
    g.buffers.back().role = tir::BufferRole::Output;
    g.body = std::move(stmts.front());
    stmts.erase(stmts.begin());
    for (tir::Stmt* b : sched::blocks_under(g.body.get())) {
      sched::statement_exprs(b, [&](tir::ExprPtr& root) {
        sched::rewrite_expr(root, [&](tir::ExprPtr& e) {
          if (e->kind == tir::ExprKind::Load) e->buffer = remap[size_t(e->buffer)];
        });
      });
      for (tir::Stmt* s : sched::stores_of(b)) s->buffer = remap[size_t(s->buffer)];
    }
    // In f, the copy is now an input: appended after the caller's arguments.
    f.buffers[size_t(y)].role = tir::BufferRole::Input;
    f.params.push_back(y);
    p.func = std::make_shared<const tir::PrimFunc>(std::move(g));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace descent::tensor
