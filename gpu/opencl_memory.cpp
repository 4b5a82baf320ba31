// Which memory accesses the work-items of a group share, and when two statements touching
// it need a barrier between them (the rule is described in opencl_codegen.h).
#include "gpu/opencl_printer.h"

namespace descent::gpu {

using tir::Expr;
using tir::ExprKind;
using tir::ExprPtr;
using tir::ForKind;
using tir::PrimFunc;
using tir::Stmt;
using tir::StmtKind;

namespace {

struct AccessCollector {
  const PrimFunc& f;
  const std::vector<Storage>& storage;
  const std::set<int>& written;                 // buffers stored anywhere in f
  const std::set<std::string>& launch_locals;   // local tags with extent > 1
  std::vector<std::pair<std::string, ExprPtr>> subst;
  std::set<std::string> locals_in_scope;
  Accesses out;

  bool shared_memory(int b) const {
    return b >= 0 && size_t(b) < storage.size() && storage[size_t(b)] != Storage::Private &&
           written.count(b);
  }

  ExprPtr canon(const Expr& e) const {
    ExprPtr r = tir::clone(e);
    for (auto it = subst.rbegin(); it != subst.rend(); ++it)
      r = tir::substitute(*r, it->first, *it->second);
    return tir::simplify(*r);
  }

  bool all_locals() const {
    for (const auto& t : launch_locals)
      if (!locals_in_scope.count(t)) return false;
    return true;
  }

  void add(int buffer, bool write, const std::vector<ExprPtr>& idx) {
    if (!shared_memory(buffer)) return;
    Access a{buffer, write, {}, all_locals()};
    for (const auto& i : idx) a.index.push_back(canon(*i));
    out.push_back(std::move(a));
  }

  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Load) add(e->buffer, false, e->args);
    for (const auto& a : e->args) expr(a.get());
  }

  void stmt(const Stmt* s) {
    if (!s) return;
    size_t mark = subst.size();
    bool added_local = false;
    std::string tag;
    switch (s->kind) {
      case StmtKind::For:
        if (s->for_kind == ForKind::Bound) {
          subst.emplace_back(s->var, tir::var(s->thread_tag));
          if (s->thread_tag.compare(0, 6, "local.") == 0 && !locals_in_scope.count(s->thread_tag)) {
            locals_in_scope.insert(s->thread_tag);
            added_local = true;
            tag = s->thread_tag;
          }
        }
        stmt(s->body.get());
        break;
      case StmtKind::Block:
        for (const auto& it : s->iters)
          if (it.binding) subst.emplace_back(it.name, canon(*it.binding));
        expr(s->predicate.get());
        stmt(s->init.get());
        stmt(s->body.get());
        break;
      case StmtKind::Store:
        for (const auto& i : s->indices) expr(i.get());
        expr(s->value.get());
        add(s->buffer, true, s->indices);
        break;
      case StmtKind::Seq:
        for (const auto& k : s->stmts) stmt(k.get());
        break;
      case StmtKind::If:
        expr(s->predicate.get());
        stmt(s->body.get());
        break;
      case StmtKind::Allocate:
        stmt(s->body.get());
        break;
      case StmtKind::Barrier:
        break;
    }
    subst.resize(mark);
    if (added_local) locals_in_scope.erase(tag);
  }
};

// All accesses to one buffer touch the same element from the same work-item: each is made
// inside loops bound to every local dimension, and they all use one index tuple that
// mentions every local tag. Then no other work-item of the group ever touches that element
// (Y[vi, vj] += ... in a thread's own accumulation), and no barrier is needed for it.
bool owned_by_one_item(const std::vector<const Access*>& as, const std::set<std::string>& locals) {
  if (as.empty()) return true;
  const Access& first = *as.front();
  for (const Access* a : as) {
    if (!a->all_locals || a->index.size() != first.index.size()) return false;
    for (size_t d = 0; d < a->index.size(); ++d)
      if (!tir::equal(*a->index[d], *first.index[d])) return false;
  }
  for (const auto& t : locals) {
    bool mentioned = false;
    for (const auto& i : first.index) mentioned = mentioned || tir::uses_var(*i, t);
    if (!mentioned) return false;
  }
  return true;
}

}  // namespace

Accesses collect_accesses(const Stmt* s, const PrimFunc& f, const std::vector<Storage>& storage,
                          const std::set<int>& written, const std::set<std::string>& launch_locals,
                          const std::set<std::string>& in_scope) {
  AccessCollector c{f, storage, written, launch_locals, {}, {}, {}};
  // The tags already bound around s count as in scope for ownership.
  for (const auto& t : in_scope)
    if (t.compare(0, 6, "local.") == 0) c.locals_in_scope.insert(t);
  c.stmt(s);
  return std::move(c.out);
}

bool conflict(const Accesses& earlier, const Accesses& later, const std::vector<Storage>& storage,
              const std::set<std::string>& locals, bool* global) {
  std::set<int> buffers;
  for (const Access& a : earlier) buffers.insert(a.buffer);
  bool any = false;
  for (int b : buffers) {
    bool w1 = false, w2 = false, r2 = false, r1 = false;
    std::vector<const Access*> all;
    for (const Access& a : earlier)
      if (a.buffer == b) {
        (a.write ? w1 : r1) = true;
        all.push_back(&a);
      }
    bool in_later = false;
    for (const Access& a : later)
      if (a.buffer == b) {
        (a.write ? w2 : r2) = true;
        in_later = true;
        all.push_back(&a);
      }
    if (!in_later || !(w1 || w2)) continue;
    // Across iterations of one loop (earlier == later) only a read can observe another
    // work-item's write (or be spoiled by it): a body that only writes needs no barrier.
    if (&earlier == &later && !(r1 && w1)) continue;
    if (owned_by_one_item(all, locals)) continue;
    any = true;
    if (storage[size_t(b)] != Storage::LocalMem) *global = true;
  }
  return any;
}

}  // namespace descent::gpu
