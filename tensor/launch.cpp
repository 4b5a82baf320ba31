// kernel_cost: counting a loop nest's work (launch.h says what is counted and why).
#include "tensor/launch.h"

#include "tensor/tir.h"

namespace descent::tensor {

namespace {
using namespace descent::tir;

// f32 operations in one evaluation of an expression.
double expr_flops(const Expr& e) {
  double n = 0;
  for (const auto& a : e.args)
    if (a) n += expr_flops(*a);
  bool arithmetic = e.kind == ExprKind::Binary || e.kind == ExprKind::Unary;
  if (arithmetic && e.type == ScalarType::F32) n += 1;
  if (e.kind == ExprKind::Fma) n += 2;  // a multiply and an add, as the nest before tensorize
  return n;
}

// f32 operations in one execution of a statement tree (loops inside a block multiply).
double stmt_flops(const Stmt* s) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::Store: return s->value ? expr_flops(*s->value) : 0;
    case StmtKind::For: return double(s->extent) * stmt_flops(s->body.get());
    case StmtKind::Seq: {
      double n = 0;
      for (const auto& k : s->stmts) n += stmt_flops(k.get());
      return n;
    }
    case StmtKind::Block: {
      // Once per point of the block's domain; its init once per spatial point.
      double all = 1, spatial = 1;
      for (const auto& it : s->iters) {
        all *= double(it.extent);
        if (it.kind == IterKind::Spatial) spatial *= double(it.extent);
      }
      return all * stmt_flops(s->body.get()) + spatial * stmt_flops(s->init.get());
    }
    case StmtKind::If:
    case StmtKind::Allocate: return stmt_flops(s->body.get());
    case StmtKind::Barrier: return 0;
  }
  return 0;
}

bool holds_block(const Stmt* s) {
  if (!s) return false;
  if (s->kind == StmtKind::Block) return true;
  if (holds_block(s->body.get()) || holds_block(s->init.get())) return true;
  for (const auto& k : s->stmts)
    if (holds_block(k.get())) return true;
  return false;
}

// Blocks are counted by their domains, so the loops around them must not multiply again:
// the walk from the root only finds the blocks.
double func_flops(const Stmt* s) {
  if (!s) return 0;
  // A block over a tile (blockize) counts through the block inside it, whose domain is whole.
  if (s->kind == StmtKind::Block && !holds_block(s->body.get())) return stmt_flops(s);
  double n = func_flops(s->body.get());
  for (const auto& k : s->stmts) n += func_flops(k.get());
  return n;
}

double elements(const Buffer& b) {
  double n = 1;
  for (int64_t d : b.shape) n *= double(d);
  return n;
}
}  // namespace

KernelCost kernel_cost(const PrimFunc& f) {
  KernelCost c;
  c.flops = func_flops(f.body.get());
  for (int p : f.params)
    if (p >= 0 && size_t(p) < f.buffers.size()) c.bytes += 4.0 * elements(f.buffers[size_t(p)]);
  if (f.output >= 0 && size_t(f.output) < f.buffers.size())
    c.bytes += 4.0 * elements(f.buffers[size_t(f.output)]);
  return c;
}

}  // namespace descent::tensor
