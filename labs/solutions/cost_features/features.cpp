// Lab cost_features: the features of a loop nest that a cost model reads instead of running
// the kernel (cost_lab.h). The reference solution.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cost_lab.h"

using namespace descent::tir;

namespace {

struct Walker {
  const PrimFunc& f;
  NestFeatures out;
  std::vector<const Stmt*> loops;  // the For statements around the current one, outermost first

  // Does access `a` move when loop `l`'s variable does?
  bool depends(const Access& a, const Stmt& l) const {
    return flat_index(f, a, {{l.var, 1}}) != flat_index(f, a, {});
  }

  void store(const Stmt& s) {
    std::vector<Access> acc = accesses(s);
    for (size_t k = 1; k <= 4 && k <= loops.size(); ++k) {
      size_t from = loops.size() - k;  // the level's loop; the ones after it are inside it
      double bytes = 0;
      for (const Access& a : acc) {
        double elements = 1;
        for (size_t l = from; l < loops.size(); ++l)
          if (depends(a, *loops[l])) elements *= double(loops[l]->extent);
        bytes += 4 * elements;
      }
      out.touched[k - 1] += std::log2(1 + bytes);
    }
  }

  void walk(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For: {
        ++out.loops;
        loops.push_back(&s);
        out.depth = std::max(out.depth, int(loops.size()));
        double e = double(s.extent);
        if (s.for_kind == ForKind::Parallel) out.parallel_extent *= e;
        if (s.for_kind == ForKind::Vectorized) out.vector_lanes = std::max(out.vector_lanes, e);
        if (s.for_kind == ForKind::Unrolled) out.unrolled *= e;
        if (s.body) walk(*s.body);
        loops.pop_back();
        return;
      }
      case StmtKind::Block:
        // In loop variables: vi, vj, vr replaced by their bindings.
        for (const StmtPtr* part : {&s.init, &s.body}) {
          if (!*part) continue;
          StmtPtr copy = clone(**part);
          inline_bindings(copy.get(), s);
          walk(*copy);
        }
        return;
      case StmtKind::Store:
        store(s);
        return;
      case StmtKind::Seq:
        for (const auto& c : s.stmts) walk(*c);
        return;
      case StmtKind::If:
      case StmtKind::Allocate:
        if (s.body) walk(*s.body);
        return;
      case StmtKind::Barrier:
        return;
    }
  }
};

}  // namespace

NestFeatures nest_features(const PrimFunc& f) {
  Walker w{f, {}, {}};
  if (f.body) w.walk(*f.body);
  return w.out;
}
