// Names: how a schedule points at a loop or a block. Schedules are text, so every primitive
// starts by turning a name ("k", "C.i") into a statement. A bare loop name must be unique;
// where two nests share one (both stages of mm_relu have an "i"), "BLOCK.i" picks the loop
// "i" above that block. A name that matches nothing, or too much, gets an error listing what
// exists, so a typo is a one-look fix.
#include <algorithm>
#include <functional>

#include "tensor/schedule/internal.h"

namespace descent::tensor::sched {

namespace {

// Every loop in program order with the first block inside it (its qualifier).
struct NamedLoop {
  Stmt* loop;
  Stmt* parent;
  std::string block;  // "" when the loop holds no block
};

std::vector<NamedLoop> all_loops(PrimFunc& f) {
  std::vector<NamedLoop> out;
  std::function<void(Stmt*, Stmt*)> go = [&](Stmt* s, Stmt* parent) {
    if (!s) return;
    if (s->kind == StmtKind::For) {
      std::vector<Stmt*> bs = blocks_under(s);
      out.push_back({s, parent, bs.empty() ? std::string() : bs[0]->name});
    }
    for (StmtPtr* c : child_slots(s)) go(c->get(), s);
  };
  go(f.body.get(), nullptr);
  return out;
}

std::string qualified(const NamedLoop& l) {
  return l.block.empty() ? l.loop->var : l.block + "." + l.loop->var;
}

}  // namespace

LoopRef find_loop(PrimFunc& f, const std::string& name, std::string* error) {
  std::vector<NamedLoop> loops = all_loops(f);
  size_t dot = name.find('.');
  if (dot != std::string::npos) {
    std::string block = name.substr(0, dot);
    std::string var = name.substr(dot + 1);
    Stmt* b = tir::find_block(f, block);
    if (!b) {
      fail(error, "no block '" + block + "' (blocks: " + join(block_names(f)) + ")");
      return {};
    }
    std::vector<std::string> above;
    for (Stmt* l : loops_above(f, b)) {
      if (l->var == var) return {l, parent_of(f, l)};
      above.push_back(l->var);
    }
    fail(error, "block '" + block + "' is not inside a loop '" + var + "'" +
                    (above.empty() ? std::string(" (it has no loops)")
                                   : " (its loops: " + join(above) + ")"));
    return {};
  }
  std::vector<const NamedLoop*> hits;
  for (const NamedLoop& l : loops)
    if (l.loop->var == name) hits.push_back(&l);
  if (hits.size() == 1) return {hits[0]->loop, hits[0]->parent};
  if (hits.empty()) {
    fail(error, "no loop '" + name + "'" +
                    (loops.empty() ? std::string(" (the function has no loops)")
                                   : " (loops: " + join(loop_names(f)) + ")"));
    return {};
  }
  std::vector<std::string> names;
  for (const NamedLoop* l : hits) names.push_back(qualified(*l));
  std::sort(names.begin(), names.end());
  fail(error, "loop '" + name + "' is ambiguous: " + join(names));
  return {};
}

std::vector<std::string> loop_names(const PrimFunc& f) {
  std::vector<NamedLoop> loops = all_loops(const_cast<PrimFunc&>(f));
  std::vector<std::string> out;
  for (const NamedLoop& l : loops) {
    size_t same = std::count_if(loops.begin(), loops.end(),
                                [&](const NamedLoop& o) { return o.loop->var == l.loop->var; });
    out.push_back(same == 1 ? l.loop->var : qualified(l));
  }
  return out;
}

std::vector<std::string> block_names(const PrimFunc& f) {
  std::vector<std::string> out;
  for (Stmt* b : blocks_under(const_cast<PrimFunc&>(f).body.get())) out.push_back(b->name);
  return out;
}

bool block_loops(const PrimFunc& f, const std::string& block, std::vector<std::string>* out,
                 std::string* error) {
  PrimFunc& g = const_cast<PrimFunc&>(f);
  Stmt* b = tir::find_block(g, block);
  if (!b) return fail(error, "no block '" + block + "' (blocks: " + join(block_names(f)) + ")");
  std::vector<NamedLoop> loops = all_loops(g);
  out->clear();
  for (Stmt* l : loops_above(g, b)) {
    size_t same = std::count_if(loops.begin(), loops.end(),
                                [&](const NamedLoop& o) { return o.loop->var == l->var; });
    out->push_back(same == 1 ? l->var : block + "." + l->var);
  }
  return true;
}

}  // namespace descent::tensor::sched
