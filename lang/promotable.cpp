// promotable_globals (lang/promotable.h): a scan of the input and of every function the Module
// knows, for the variables each mentions.
#include "lang/promotable.h"

#include <set>

namespace descent {
namespace {

// The globals an expression or a block reads or writes.
void global_refs(const Expr& e, std::set<int>* out) {
  if ((e.kind == ExprKind::Var || e.kind == ExprKind::Index) && e.storage == Storage::Global)
    out->insert(e.slot);
  for (const auto& k : e.kids) global_refs(*k, out);
}
void global_refs(const Block& b, std::set<int>* out);
void global_refs(const Stmt& s, std::set<int>* out) {
  if ((s.kind == StmtKind::Assign || s.kind == StmtKind::For) && s.storage == Storage::Global)
    out->insert(s.slot);
  if (s.kind == StmtKind::FnDecl || s.kind == StmtKind::KernelDecl) return;  // their own code
  if (s.expr) global_refs(*s.expr, out);
  if (s.expr2) global_refs(*s.expr2, out);
  global_refs(s.body, out);
  global_refs(s.else_body, out);
}
void global_refs(const Block& b, std::set<int>* out) {
  for (const auto& s : b) global_refs(*s, out);
}

// The globals some read of which needs the run-time "assigned yet?" check.
void checked_reads(const Expr& e, std::set<int>* out) {
  if (e.kind == ExprKind::Var && e.storage == Storage::Global && e.check_defined) out->insert(e.slot);
  for (const auto& k : e.kids) checked_reads(*k, out);
}
void checked_reads(const Block& b, std::set<int>* out) {
  for (const auto& s : b) {
    if (s->kind == StmtKind::FnDecl || s->kind == StmtKind::KernelDecl) continue;
    if (s->expr) checked_reads(*s->expr, out);
    if (s->expr2) checked_reads(*s->expr2, out);
    checked_reads(s->body, out);
    checked_reads(s->else_body, out);
  }
}

}  // namespace

std::vector<int> promotable_globals(const Program& p, const Module& m) {
  std::set<int> in_functions, in_loops, checked;
  for (const auto& f : m.functions)
    if (f.decl) global_refs(f.decl->body, &in_functions);
  for (const auto& s : p.body)
    if (s->kind == StmtKind::For || s->kind == StmtKind::While) global_refs(*s, &in_loops);
  checked_reads(p.body, &checked);
  std::vector<int> out;
  for (int g : in_loops) {
    if (in_functions.count(g) || checked.count(g) || g < 0 || size_t(g) >= m.globals.size()) continue;
    Type t = m.globals[size_t(g)].type;
    if (t == Type::Int || t == Type::Float || t == Type::Bool) out.push_back(g);
  }
  return out;
}

}  // namespace descent
