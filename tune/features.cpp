// Loop-nest features (features.h): one walk of the statement tree with the loops above each
// statement on a stack; each Store and its Loads are the accesses.
#include "tune/features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tensor/index_eval.h"
#include "tensor/launch.h"

namespace descent::tune {
namespace {

using tir::Expr;
using tir::ExprKind;
using tir::Stmt;
using tir::StmtKind;

float lg(double x) { return float(std::log2(1.0 + std::max(0.0, x))); }

// The value of an integer index expression with loop variables set, others 0, and 0 on a
// fault (tensor/index_eval.h): affine index math is all schedules make, so
// value(v = 1) - value(v = 0) is v's stride.
int64_t eval(const Expr& e, const std::map<std::string, int64_t>& at) {
  return tir::eval_index_at(e, at);
}

struct Access {
  int buffer;
  std::vector<const Expr*> indices;
};

struct Walker {
  const tir::PrimFunc& f;
  std::vector<const Stmt*> loops;  // enclosing For statements, outermost first
  // Accumulated features.
  double parallel_extent = 1, vector_lanes = 0, unrolled = 1, groups = 1, locals = 1;
  int loops_total = 0, max_depth = 0, predicates = 0, blocks = 0, local_buffers = 0;
  double local_bytes = 0;
  double innermost_extent = 0;
  // Per store: bytes touched in one iteration of each of the 4 innermost loop levels, and
  // reuse there, summed over stores weighted by their executions.
  double touched[4] = {0, 0, 0, 0}, reuse[4] = {0, 0, 0, 0};
  double stride_one = 0, stride_zero = 0, stride_other = 0, accesses = 0;
  double register_tile = 1;  // spatial iterations inside the outermost reduce loop

  void loads(const Expr& e, std::vector<Access>* out) {
    if (e.kind == ExprKind::Load) {
      Access a{e.buffer, {}};
      for (const auto& i : e.args) a.indices.push_back(i.get());
      out->push_back(a);
    }
    for (const auto& a : e.args) loads(*a, out);
  }

  int64_t flat(const Access& a, const std::map<std::string, int64_t>& at) {
    const auto& shape = f.buffers[size_t(a.buffer)].shape;
    int64_t v = 0;
    for (size_t d = 0; d < a.indices.size() && d < shape.size(); ++d) v = v * shape[d] + eval(*a.indices[d], at);
    return v;
  }

  void store(const Stmt& s) {
    std::vector<Access> acc;
    Access w{s.buffer, {}};
    for (const auto& i : s.indices) w.indices.push_back(i.get());
    acc.push_back(w);
    if (s.value) loads(*s.value, &acc);
    double executions = 1;
    for (const Stmt* l : loops) executions *= double(l->extent);
    if (!loops.empty()) {
      const Stmt* inner = loops.back();
      innermost_extent = std::max(innermost_extent, double(inner->extent));
      for (const Access& a : acc) {
        std::map<std::string, int64_t> zero, one = {{inner->var, 1}};
        int64_t stride = flat(a, one) - flat(a, zero);
        accesses += executions;
        if (stride == 0) stride_zero += executions;
        else if (stride == 1 || stride == -1) stride_one += executions;
        else stride_other += executions;
      }
    }
    // Bytes one iteration of the k-th innermost loop touches: per access, 4 bytes times the
    // extents of the loops inside it that the access's indices use (an upper bound on the
    // distinct elements); reuse: the iterations inside over those elements.
    for (int k = 0; k < 4 && k < int(loops.size()); ++k) {
      size_t from = loops.size() - size_t(k) - 1;
      double inside = 1;
      for (size_t l = from; l < loops.size(); ++l) inside *= double(loops[l]->extent);
      double bytes = 0, elements = 0;
      for (const Access& a : acc) {
        double n = 1;
        for (size_t l = from; l < loops.size(); ++l) {
          std::map<std::string, int64_t> zero, one = {{loops[l]->var, 1}};
          if (flat(a, one) != flat(a, zero)) n *= double(loops[l]->extent);
        }
        elements += n;
        bytes += 4 * n;
      }
      touched[k] += lg(bytes);
      reuse[k] += lg(inside * double(acc.size()) / std::max(1.0, elements));
    }
  }

  void walk(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For: {
        ++loops_total;
        loops.push_back(&s);
        max_depth = std::max(max_depth, int(loops.size()));
        double e = double(s.extent);
        if (s.for_kind == tir::ForKind::Parallel) parallel_extent *= e;
        if (s.for_kind == tir::ForKind::Vectorized) vector_lanes = std::max(vector_lanes, e);
        if (s.for_kind == tir::ForKind::Unrolled) unrolled *= e;
        if (s.for_kind == tir::ForKind::Bound) {
          if (s.thread_tag.rfind("group", 0) == 0) groups *= e;
          else locals *= e;
        }
        if (s.body) walk(*s.body);
        loops.pop_back();
        return;
      }
      case StmtKind::Block: {
        ++blocks;
        if (s.predicate) ++predicates;
        // The register tile: spatial loops inside the outermost loop that a reduce iterator
        // of this block uses.
        for (size_t l = 0; l < loops.size(); ++l) {
          bool reduce = false;
          for (const auto& it : s.iters)
            if (it.kind == tir::IterKind::Reduce && it.binding && tir::uses_var(*it.binding, loops[l]->var))
              reduce = true;
          if (!reduce) continue;
          double tile = 1;
          for (size_t m = l + 1; m < loops.size(); ++m) {
            bool spatial = false;
            for (const auto& it : s.iters)
              if (it.kind == tir::IterKind::Spatial && it.binding && tir::uses_var(*it.binding, loops[m]->var))
                spatial = true;
            if (spatial) tile *= double(loops[m]->extent);
          }
          register_tile = std::max(register_tile, tile);
          break;
        }
        // The block's statements with its bindings inlined: accesses in loop variables.
        if (s.init) {
          auto init = tir::clone(*s.init);
          tir::inline_bindings(init.get(), s);
          walk(*init);
        }
        if (s.body) {
          auto body = tir::clone(*s.body);
          tir::inline_bindings(body.get(), s);
          walk(*body);
        }
        return;
      }
      case StmtKind::Store: store(s); return;
      case StmtKind::Seq:
        for (const auto& c : s.stmts) walk(*c);
        return;
      case StmtKind::If:
        ++predicates;
        if (s.body) walk(*s.body);
        return;
      case StmtKind::Allocate: {
        ++local_buffers;
        double n = 4;
        for (int64_t d : f.buffers[size_t(s.buffer)].shape) n *= double(d);
        local_bytes += n;
        if (s.body) walk(*s.body);
        return;
      }
      case StmtKind::Barrier: return;
    }
  }
};

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {
      "log2 flops",         "log2 bytes",          "arithmetic intensity", "loops",
      "depth",              "blocks",              "predicates",           "log2 parallel extent",
      "vector lanes",       "log2 unrolled copies", "log2 work-groups",    "log2 work-items",
      "local buffers",      "log2 local bytes",    "log2 innermost extent", "log2 register tile",
      "stride-1 share",     "stride-0 share",      "strided share",
      "log2 bytes touched, level 1", "log2 bytes touched, level 2",
      "log2 bytes touched, level 3", "log2 bytes touched, level 4",
      "log2 reuse, level 1", "log2 reuse, level 2", "log2 reuse, level 3", "log2 reuse, level 4",
  };
  return names;
}

std::vector<float> features(const tir::PrimFunc& f) {
  Walker w{f, {}};
  if (f.body) w.walk(*f.body);
  tensor::KernelCost cost = tensor::kernel_cost(f);
  double acc = std::max(1.0, w.accesses);
  std::vector<float> v = {
      lg(cost.flops),
      lg(cost.bytes),
      float(cost.bytes > 0 ? cost.flops / cost.bytes : 0),
      float(w.loops_total),
      float(w.max_depth),
      float(w.blocks),
      float(w.predicates),
      lg(w.parallel_extent - 1),
      float(w.vector_lanes),
      lg(w.unrolled - 1),
      lg(w.groups - 1),
      lg(w.locals - 1),
      float(w.local_buffers),
      lg(w.local_bytes),
      lg(w.innermost_extent),
      lg(w.register_tile),
      float(w.stride_one / acc),
      float(w.stride_zero / acc),
      float(w.stride_other / acc),
      float(w.touched[0]), float(w.touched[1]), float(w.touched[2]), float(w.touched[3]),
      float(w.reuse[0]), float(w.reuse[1]), float(w.reuse[2]), float(w.reuse[3]),
  };
  return v;
}

}  // namespace descent::tune
