// Lab cost_features: the features of a loop nest that a cost model reads instead of running
// the kernel. cost_lab.h says exactly what each one is; replace the three TODOs.
#include <cmath>
#include <vector>

#include "cost_lab.h"

using namespace descent::tir;

namespace {

struct Walker {
  const PrimFunc& f;
  NestFeatures out;
  std::vector<const Stmt*> loops;  // the For statements around the current one, outermost first

  void store(const Stmt& s) {
    // TODO: for each level k = 1..4 that has a loop (k <= loops.size()): the bytes one
    // iteration of the k-th innermost loop touches (cost_lab.h), then
    // out.touched[k - 1] += std::log2(1 + bytes).
    (void)s;
  }

  void walk(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For:
        // TODO: count the loop, follow the depth, and note how its kind (s.for_kind:
        // ForKind::Parallel, Vectorized, Unrolled) spreads the work; keep it on `loops`
        // while you walk its body.
        return;
      case StmtKind::Block:
        // TODO: walk the block's init (when it has one) and its body, with the block's
        // iterator bindings inlined (cost_lab.h says why and how).
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
