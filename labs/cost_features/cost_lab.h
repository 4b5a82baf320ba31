// Lab cost_features: the loop-nest features you compute (in features.cpp), and the helpers
// you may use. The checker compares your numbers with the ones the project's own cost model
// reads (tune/features.h, `tune::features`) on matmul, linear_relu and softmax nests, as
// lowered, scheduled by hand, scheduled by the default rules, and scheduled at random.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensor/index_eval.h"
#include "tensor/tir.h"

// What a cost model reads instead of running the kernel (a part of tune/features.h's list).
struct NestFeatures {
  // The shape of the nest.
  int loops = 0;  // For statements in the whole function
  int depth = 0;  // the most For statements on one path from the top: a For inside two others is depth 3

  // How the work is spread over the machine.
  double parallel_extent = 1;  // the product of the extents of every parallel loop (threads)
  double vector_lanes = 0;     // the largest extent of a vectorized loop; 0 without one
  double unrolled = 1;         // the product of the extents of every unrolled loop (body copies)

  // The working set. Level k (1 to 4) is the k-th innermost loop around a store: level 1 is
  // the loop right around it, level 2 the one around that, ... For one store and one level,
  // `bytes` is what one iteration of that loop touches: for each access of the store (its
  // target and every Load in its value), 4 bytes times the product of the extents of the
  // loops from that level inwards that the access depends on; summed over the accesses.
  // touched[k - 1] is the sum over every Store in the function (a reduction's init store
  // included) of log2(1 + bytes); a store with fewer than k loops around it adds nothing.
  std::array<double, 4> touched = {0, 0, 0, 0};
};

// Your function (features.cpp).
NestFeatures nest_features(const descent::tir::PrimFunc& f);

// ---- helpers, yours to use ------------------------------------------------------------------
//
// Block iterators. A block's statements index buffers by the block's own iterators (vi, vj,
// vr), each bound to an expression of the loops around the block (vi = i_0 * 4 + i_1). To
// see which loops an access depends on, rewrite the statements in loop variables first:
//
//   descent::tir::StmtPtr body = descent::tir::clone(*block.body);
//   descent::tir::inline_bindings(body.get(), block);   // vi -> i_0 * 4 + i_1, ...
//   walk(*body);                                         // (the same for block.init)

// One access of a store: the buffer it reads or writes, and its index expressions.
struct Access {
  int buffer = -1;
  std::vector<const descent::tir::Expr*> indices;
};

namespace cost_lab_detail {
inline void loads(const descent::tir::Expr& e, std::vector<Access>* out) {
  if (e.kind == descent::tir::ExprKind::Load) {
    Access a;
    a.buffer = e.buffer;
    for (const auto& i : e.args) a.indices.push_back(i.get());
    out->push_back(a);
  }
  for (const auto& a : e.args) loads(*a, out);
}

// An integer index expression with the variables in `at` set (others 0): the project's one
// index evaluator (tensor/index_eval.h), as tune::features uses it; 0 on a fault.
inline int64_t eval(const descent::tir::Expr& e, const std::map<std::string, int64_t>& at) {
  return descent::tir::eval_index_at(e, at);
}
}  // namespace cost_lab_detail

// Every access of a Store statement (kind StmtKind::Store): its target first, then each Load
// in its value, in order.
inline std::vector<Access> accesses(const descent::tir::Stmt& store) {
  std::vector<Access> out;
  Access target;
  target.buffer = store.buffer;
  for (const auto& i : store.indices) target.indices.push_back(i.get());
  out.push_back(target);
  if (store.value) cost_lab_detail::loads(*store.value, &out);
  return out;
}

// The element offset of an access in its buffer (row-major) with the loop variables in `at`
// set and every other variable 0. An access depends on a loop when setting that loop's
// variable to 1 moves it:  flat_index(f, a, {{loop.var, 1}}) != flat_index(f, a, {}).
inline int64_t flat_index(const descent::tir::PrimFunc& f, const Access& a,
                          const std::map<std::string, int64_t>& at) {
  const auto& shape = f.buffers[size_t(a.buffer)].shape;
  int64_t v = 0;
  for (size_t d = 0; d < a.indices.size() && d < shape.size(); ++d)
    v = v * shape[d] + cost_lab_detail::eval(*a.indices[d], at);
  return v;
}
