// The ideal-cache traffic model of tensor/traffic.h: footprints as boxes of elements, found by
// the schedules' region arithmetic over the loops' ranges, and the recursion over the
// statement tree.
#include "tensor/traffic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "lang/text.h"
#include "tensor/schedule/internal.h"

namespace descent::tensor {

namespace {

using tir::Stmt;
using tir::StmtKind;

struct Range {
  int64_t lo = 0, hi = 0;
};

bool global(const tir::PrimFunc& f, int b) {
  return b >= 0 && size_t(b) < f.buffers.size() && f.buffers[size_t(b)].scope == tir::Scope::Global;
}

using PerBuffer = std::map<int, double>;

double total(const PerBuffer& m) {
  double t = 0;
  for (const auto& [b, v] : m) t += v;
  return t;
}

class Model {
 public:
  Model(tir::PrimFunc& f, double cache) : f_(f), cache_(cache) {}

  PerBuffer moved(Stmt* s) {
    if (!s) return {};
    // Whatever touches no more than the cache holds moves each byte once.
    if (s->kind == StmtKind::Seq || s->kind == StmtKind::Allocate || s->kind == StmtKind::If) {
      PerBuffer whole = footprint(s, true);
      if (total(whole) <= cache_) return whole;
    }
    switch (s->kind) {
      case StmtKind::Seq: {
        PerBuffer out;
        for (auto& c : s->stmts)
          for (const auto& [b, v] : moved(c.get())) out[b] += v;
        return out;
      }
      case StmtKind::If:
      case StmtKind::Allocate: return moved(s->body.get());
      case StmtKind::For: {
        PerBuffer whole = footprint(s, true);
        if (total(whole) <= cache_) return whole;
        PerBuffer body = moved(s->body.get());
        bool body_fits = total(footprint(s, false)) <= cache_;
        std::vector<sched::Touch> touches;
        sched::touches_under(s->body.get(), &touches);
        for (auto& entry : body) {
          const int b = entry.first;  // (a structured binding: clang-15 cannot capture one)
          double& v = entry.second;
          bool invariant = std::none_of(touches.begin(), touches.end(), [&](const sched::Touch& t) {
            return t.buffer == b && std::any_of(t.index.begin(), t.index.end(), [&](const tir::ExprPtr& e) {
                     return tir::uses_var(*e, s->var);
                   });
          });
          if (!(body_fits && invariant)) v *= double(s->extent);
        }
        return body;
      }
      default: return footprint(s, true);  // a block or a store: one run of it
    }
  }

 private:
  // Per global buffer, the bytes of the box its accesses under s reach while the loops under
  // s run (s's own loop too when `with_self`; else s's variable stays fixed).
  PerBuffer footprint(Stmt* s, bool with_self) {
    // The schedules' own region arithmetic (regions.cpp): the loops outside s are symbols,
    // fixed while s runs; each index's range over the loops inside is its box's side.
    sched::AccessEnv env;
    for (Stmt* l : sched::loops_above(f_, s)) env.outer.push_back(l);
    if (!with_self) env.outer.push_back(s);
    for (Stmt* l : sched::loops_under(s))
      if (with_self || l != s) env.inner[l->var] = l->extent;
    std::vector<sched::Touch> touches;
    sched::touches_under(s, &touches);
    std::map<int, std::vector<Range>> box;
    for (const sched::Touch& t : touches) {
      if (!global(f_, t.buffer)) continue;
      const auto& shape = f_.buffers[size_t(t.buffer)].shape;
      std::vector<Range> r;
      for (size_t d = 0; d < shape.size(); ++d) {
        sched::Bound bound;
        std::string why;
        // An index the arithmetic cannot bound counts as the whole dimension.
        if (d < t.index.size() && sched::bound_of(*t.index[d], env, &bound, &why))
          r.push_back({bound.lo, bound.hi});
        else
          r.push_back({0, shape[d] - 1});
      }
      auto [it, fresh] = box.emplace(t.buffer, r);
      if (!fresh)
        for (size_t d = 0; d < r.size(); ++d) {
          it->second[d].lo = std::min(it->second[d].lo, r[d].lo);
          it->second[d].hi = std::max(it->second[d].hi, r[d].hi);
        }
    }
    PerBuffer out;
    for (const auto& [b, r] : box) {
      const auto& shape = f_.buffers[size_t(b)].shape;
      double n = 4;
      for (size_t d = 0; d < r.size(); ++d)
        n *= double(std::min<int64_t>(r[d].hi - r[d].lo + 1, shape[d]));
      out[b] = n;
    }
    return out;
  }

  tir::PrimFunc& f_;
  double cache_;
};

}  // namespace

double Traffic::moved_bytes() const {
  double t = 0;
  for (const auto& b : buffers) t += b.moved_bytes;
  return t;
}

double Traffic::intermediate_bytes() const {
  double t = 0;
  for (const auto& b : buffers)
    if (b.role == tir::BufferRole::Temp) t += b.size_bytes;
  return t;
}

Traffic data_movement(const tir::PrimFunc& f, double cache_bytes) {
  tir::PrimFunc g = f;  // the tree walkers take a mutable function; f stays untouched
  Traffic t;
  t.cache_bytes = cache_bytes;
  PerBuffer moved = Model(g, cache_bytes).moved(g.body.get());
  for (size_t b = 0; b < g.buffers.size(); ++b) {
    if (!global(g, int(b))) continue;
    BufferTraffic bt;
    bt.name = g.buffers[b].name;
    bt.role = g.buffers[b].role;
    bt.size_bytes = 4;
    for (int64_t d : g.buffers[b].shape) bt.size_bytes *= double(d);
    auto it = moved.find(int(b));
    bt.moved_bytes = it == moved.end() ? 0 : it->second;
    t.buffers.push_back(bt);
  }
  return t;
}

std::string format_traffic(const Traffic& t) {
  auto bytes = [](double b) { return bytes_text(uint64_t(std::llround(b))); };
  auto row = [](const std::string& a, const std::string& b, const std::string& c,
                const std::string& d, const std::string& e) {
    char line[160];
    std::snprintf(line, sizeof line, "%-12s %-13s %11s %11s %10s\n", a.c_str(), b.c_str(),
                  c.c_str(), d.c_str(), e.c_str());
    return std::string(line);
  };
  std::string out = "bytes moved through a cache of " + bytes(t.cache_bytes) +
                    " (the ideal-cache model of tensor/traffic.h)\n";
  out += row("buffer", "role", "size", "moved", "moved/size");
  for (const auto& b : t.buffers) {
    const char* role = b.role == tir::BufferRole::Input    ? "input"
                       : b.role == tir::BufferRole::Output ? "output"
                                                           : "intermediate";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.1fx", b.size_bytes > 0 ? b.moved_bytes / b.size_bytes : 0);
    out += row(b.name, role, bytes(b.size_bytes), bytes(b.moved_bytes), ratio);
  }
  out += row("total", "", "", bytes(t.moved_bytes()), "");
  return out;
}

}  // namespace descent::tensor
