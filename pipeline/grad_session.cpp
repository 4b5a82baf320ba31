// The Session's training views: the adjoint kernels tensor/autodiff.h derives, for one
// kernel (`:grad NAME`) or for every kernel an input defines or calls (`--stage grad`).
#include <functional>
#include <set>

#include "pipeline/kernel_lookup.h"
#include "pipeline/pipeline.h"
#include "tensor/autodiff.h"

namespace descent {

namespace {

// "prelude.ds:94:15: " or "line 3, column 7: " before a refusal's message.
std::string where(const SourceLoc& loc) {
  if (!loc.valid()) return "";
  std::string file = loc.file ? loc.file->name() + ":" : "line ";
  return file + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": ";
}

bool adjoint_text(const KernelDecl& k, std::string* text, std::string* error) {
  std::vector<tensor::Adjoint> adjoints;
  Diagnostic d;
  if (!tensor::derive_adjoints(k, &adjoints, &d)) {
    *error = "kernel '" + k.name + "': " + where(d.loc) + d.message;
    return false;
  }
  *text = tensor::adjoints_to_text(k, adjoints);
  return true;
}

// Kernels called anywhere in these statements, by their index in the Module.
void called_kernels(const Block& body, std::set<int32_t>* out) {
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e.kind == ExprKind::Call && e.kernel >= 0) out->insert(e.kernel);
    for (const auto& k : e.kids) expr(*k);
  };
  for (const auto& st : body) {
    if (st->expr) expr(*st->expr);
    if (st->expr2) expr(*st->expr2);
    called_kernels(st->body, out);
    called_kernels(st->else_body, out);
    if (st->fn) called_kernels(st->fn->body, out);
  }
}

}  // namespace

bool Session::kernel_adjoints(const std::string& name, std::string* text, std::string* error) const {
  const KernelDecl* k = find_kernel_or_error(module_, name, error);
  return k && adjoint_text(*k, text, error);
}

bool Session::kernel_adjoint_list(const std::string& name, std::vector<AdjointInfo>* out,
                                  std::string* error) const {
  const KernelDecl* k = find_kernel_or_error(module_, name, error);
  if (!k) return false;
  std::vector<tensor::Adjoint> adjoints;
  Diagnostic d;
  if (!tensor::derive_adjoints(*k, &adjoints, &d)) {
    *error = "kernel '" + k->name + "': " + where(d.loc) + d.message;
    return false;
  }
  out->clear();
  for (const auto& a : adjoints)
    out->push_back(AdjointInfo{k->params[a.param].name, a.name, a.source, a.inputs, a.zero});
  return true;
}

StageResult Session::grad_view() const {
  settle_jit();
  StageResult r;
  const Program* program = last_checked_program();
  if (!program) {
    r.text = "the input has errors, so no kernel was differentiated";
    return r;
  }
  // The kernels it defines, in order, then the ones it calls that an earlier input (the
  // prelude, most often) defined.
  std::vector<const KernelDecl*> kernels;
  std::set<const KernelDecl*> seen;
  for (const auto& st : program->body)
    if (st->kernel && seen.insert(st->kernel.get()).second) kernels.push_back(st->kernel.get());
  std::set<int32_t> called;
  called_kernels(program->body, &called);
  for (int32_t i : called) {
    const KernelDecl* k = module_.kernels[size_t(i)].decl;
    if (k && seen.insert(k).second) kernels.push_back(k);
  }
  if (kernels.empty()) {
    r.ok = true;
    r.text = "the input defines and calls no kernel\n";
    return r;
  }
  r.ok = true;
  for (const KernelDecl* k : kernels) {
    std::string text, error;
    if (!r.text.empty()) r.text += "\n";
    if (adjoint_text(*k, &text, &error))
      r.text += text;
    else
      r.text += "# " + error + "\n";
  }
  return r;
}

}  // namespace descent
