#include "tensor/iteration_order.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <utility>

#include "tensor/index_eval.h"

namespace descent::tensor {

using tir::Expr;
using tir::ExprKind;
using tir::Op;
using tir::Stmt;
using tir::StmtKind;

namespace {

// What one store to the output contributes to the tile numbering (found on its first run).
struct Site {
  size_t prefix = 0;  // the loops (outermost first) whose values name the tile
};

struct Walker {
  const tir::PrimFunc& f;
  IterationOrder& out;
  std::string error;
  std::vector<std::pair<const std::string*, int64_t>> env;  // variables, innermost last
  std::vector<std::pair<const Stmt*, size_t>> loops;        // enclosing loops and env slots
  std::vector<const Stmt*> blocks;                          // enclosing blocks
  std::unordered_map<const Stmt*, double> cost_of;
  std::unordered_map<const Stmt*, Site> sites;
  std::map<std::pair<const Stmt*, std::vector<int64_t>>, int64_t> tile_ids;
  std::vector<std::string> tile_loops;  // those of the first site that has any

  // Loop iterations plus output stores a statement's walk visits (predicates counted as
  // always true; an init once per run of its reduction); 0 when it writes no output, so it
  // is skipped. In double: a huge nest's count must not overflow before it is refused.
  double cost(const Stmt* s) {
    if (!s) return 0;
    double c = 0;
    switch (s->kind) {
      case StmtKind::Store: c = s->buffer == f.output ? 1 : 0; break;
      case StmtKind::For: {
        double body = cost(s->body.get());
        c = body == 0 ? 0 : double(s->extent) * (body + 1);
        break;
      }
      case StmtKind::Block: {
        double runs = 1;  // block runs per init: the reduction's domain
        for (const auto& it : s->iters)
          if (it.kind == tir::IterKind::Reduce) runs *= double(std::max<int64_t>(1, it.extent));
        c = cost(s->init.get()) / runs + cost(s->body.get());
        break;
      }
      case StmtKind::Seq:
        for (const auto& k : s->stmts) c += cost(k.get());
        break;
      case StmtKind::If:
      case StmtKind::Allocate: c = cost(s->body.get()); break;
      case StmtKind::Barrier: break;
    }
    cost_of[s] = c;
    return c;
  }

  bool failed() const { return !error.empty(); }

  // Index arithmetic through the shared evaluator (tensor/index_eval.h); loop variables
  // from the innermost binding outwards.
  int64_t eval(const Expr& e) {
    if (failed()) return 0;
    auto lookup = [&](const std::string& name, int64_t* v) {
      for (size_t i = env.size(); i-- > 0;)
        if (*env[i].first == name) return *v = env[i].second, true;
      return false;
    };
    tir::IndexFault fault = tir::IndexFault::None;
    const Expr* at = nullptr;
    int64_t v = tir::eval_index(e, lookup, &fault, &at);
    switch (fault) {
      case tir::IndexFault::None: return v;
      case tir::IndexFault::Unbound:
        error = "variable '" + at->name + "' is not bound where it is used";
        break;
      case tir::IndexFault::DivByZero: error = "an index divides by zero"; break;
      case tir::IndexFault::NeedsData:
        // Only index arithmetic is walked: anything else would need the tensor's values.
        error = "an index or predicate of '" + f.name + "' depends on tensor data (" +
                tir::print_expr(f, *at) + "): its visit order is not known without running it";
        break;
    }
    return 0;
  }

  void walk(const Stmt* s) {
    if (!s || failed() || cost_of[s] == 0) return;
    switch (s->kind) {
      case StmtKind::For: {
        env.push_back({&s->var, 0});
        loops.push_back({s, env.size() - 1});
        for (int64_t v = 0; v < s->extent && !failed(); ++v) {
          env[loops.back().second].second = v;
          walk(s->body.get());
        }
        loops.pop_back();
        env.pop_back();
        break;
      }
      case StmtKind::Block: {
        size_t mark = env.size();
        bool at_start = true;
        for (const auto& it : s->iters) {
          int64_t v = it.binding ? eval(*it.binding) : 0;
          if (it.kind == tir::IterKind::Reduce && v != 0) at_start = false;
          env.push_back({&it.name, v});
        }
        if (!s->predicate || eval(*s->predicate)) {
          blocks.push_back(s);
          if (s->init && at_start) walk(s->init.get());
          walk(s->body.get());
          blocks.pop_back();
        }
        env.resize(mark);
        break;
      }
      case StmtKind::Seq:
        for (const auto& k : s->stmts) walk(k.get());
        break;
      case StmtKind::If:
        if (eval(*s->predicate)) walk(s->body.get());
        break;
      case StmtKind::Allocate: walk(s->body.get()); break;
      case StmtKind::Store: store(*s); break;
      case StmtKind::Barrier: break;
    }
  }

  // The loops of a store's tile: up to the innermost loop that has another loop under it
  // moving one of the same output dimensions (i_0 over i_1; naive i over j moves none twice).
  Site site_of(const Stmt& s) {
    std::vector<tir::ExprPtr> index;
    // Innermost block first: a blockized tile's bindings speak of the outer block's variables.
    for (const auto& e : s.indices) {
      tir::ExprPtr x = tir::clone(*e);
      for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) x = tir::inline_bindings(*x, **b);
      index.push_back(std::move(x));
    }
    std::vector<std::vector<bool>> moves(loops.size(), std::vector<bool>(index.size()));
    for (size_t l = 0; l < loops.size(); ++l)
      for (size_t d = 0; d < index.size(); ++d)
        moves[l][d] = tir::uses_var(*index[d], loops[l].first->var);
    Site site;
    for (size_t l = 0; l < loops.size(); ++l)
      for (size_t m = l + 1; m < loops.size(); ++m)
        for (size_t d = 0; d < index.size(); ++d)
          if (moves[l][d] && moves[m][d]) site.prefix = l + 1;
    if (site.prefix > 0 && tile_loops.empty())
      for (size_t l = 0; l < site.prefix; ++l) tile_loops.push_back(loops[l].first->var);
    return site;
  }

  void store(const Stmt& s) {
    if (s.buffer != f.output) return;
    const std::vector<int64_t>& shape = out.shape;
    int64_t flat = 0;
    for (size_t d = 0; d < s.indices.size() && !failed(); ++d) {
      int64_t v = eval(*s.indices[d]);
      if (d < shape.size() && (v < 0 || v >= shape[d])) {
        error = "a write of '" + out.buffer + "' is out of range: index " + std::to_string(v) +
                " of dim " + std::to_string(d) + " (size " + std::to_string(shape[d]) + ")";
        return;
      }
      flat = flat * (d < shape.size() ? shape[d] : 1) + v;
    }
    if (failed()) return;
    int64_t step = out.writes++;
    size_t e = size_t(flat);
    out.last[e] = step;
    if (out.first[e] >= 0) return;
    out.first[e] = step;
    out.order.push_back(flat);
    auto found = sites.find(&s);
    if (found == sites.end()) found = sites.emplace(&s, site_of(s)).first;
    size_t prefix = found->second.prefix;
    std::vector<int64_t> key;
    for (size_t l = 0; l < prefix; ++l) key.push_back(env[loops[l].second].second);
    const Stmt* by = prefix > 0 ? loops[prefix - 1].first : nullptr;
    auto id = tile_ids.emplace(std::make_pair(by, std::move(key)), int64_t(tile_ids.size()));
    out.tile[e] = id.first->second;
  }
};

}  // namespace

bool iteration_order(const tir::PrimFunc& f, IterationOrder* out, std::string* error,
                     int64_t max_steps) {
  *out = IterationOrder{};
  if (f.output < 0 || size_t(f.output) >= f.buffers.size() || !f.body) {
    *error = "the function '" + f.name + "' has no output buffer";
    return false;
  }
  const tir::Buffer& b = f.buffers[size_t(f.output)];
  out->buffer = b.name;
  out->shape = b.shape;
  size_t rank = b.shape.size();
  if (rank >= 1) out->cols = b.shape.back();
  for (size_t d = 0; d + 1 < rank; ++d) out->rows *= b.shape[d];
  if (rank == 1) out->note = b.name + " is 1-D: drawn as one row";
  if (rank == 0) out->note = b.name + " is a scalar: drawn as one cell";
  if (rank > 2)
    out->note = b.name + " is " + std::to_string(rank) + "-D " + "[" + [&] {
      std::string s;
      for (size_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(b.shape[d]);
      return s;
    }() + "]: its leading dims are flattened into " + std::to_string(out->rows) + " rows";

  Walker w{f, *out, {}, {}, {}, {}, {}, {}, {}, {}};
  double steps = w.cost(f.body.get());
  if (steps > double(max_steps)) {
    char count[32];
    std::snprintf(count, sizeof count, steps < 1e18 ? "%.0f" : "%.3g", steps);
    *error = "the loop nest of '" + f.name + "' is too big to walk: about " + count +
             " steps (loop iterations and writes of " + b.name + "), more than the " +
             std::to_string(max_steps) + " allowed; select the kernel with smaller dims";
    return false;
  }
  size_t n = size_t(out->rows * out->cols);
  out->first.assign(n, -1);
  out->last.assign(n, -1);
  out->tile.assign(n, -1);
  w.walk(f.body.get());
  if (w.failed()) {
    *error = w.error;
    return false;
  }
  out->tiles = std::max<int64_t>(1, int64_t(w.tile_ids.size()));
  out->tile_loops = w.tile_loops;
  return true;
}

}  // namespace descent::tensor
