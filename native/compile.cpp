#include "native/compile.h"

#include <algorithm>

#include "native/native.h"
#include "vm/reg_compiler.h"

namespace descent::native {

std::unique_ptr<Compiled> compile(std::unique_ptr<RegFunction> virt, const Module& module,
                                  bool top_level, std::string* error, bool keep_snapshots,
                                  const Target& target) {
  auto c = std::make_unique<Compiled>();
  c->target = &target;
  c->top_level = top_level;
  c->src = std::move(virt);
  if (!build_dags(*c->src, module, c->fn, error)) return nullptr;
  if (keep_snapshots) c->built = c->fn;
  legalize(c->fn, target);
  if (keep_snapshots) c->legal = c->fn;
  combine(c->fn, target);
  select(c->fn, c->mf, target);
  if (!c->mf.error.empty()) {
    *error = std::string("the ") + target.name + " instruction selector: " + c->mf.error;
    return nullptr;
  }
  if (keep_snapshots) c->selected = c->mf;
  schedule(c->mf, keep_snapshots ? &c->sched_log : nullptr);
  std::vector<std::vector<int>> succs;
  for (const Block& b : c->fn.blocks) succs.push_back(b.succs);
  c->alloc = allocate(c->mf, succs, target.regs);
  return c;
}

int refresh(CachedBody& c, const FunctionInfo& info, const Module& module, const Target& target, Diagnostic* error) {
  if (c.code && c.decl == info.decl && c.version == info.version) return 0;
  auto virt = compile_reg_function(*info.decl, module, error);
  if (!virt) return -1;
  std::string why;
  c.code = compile(std::move(virt), module, false, &why, false, target);
  if (!c.code) {
    *error = Diagnostic{Severity::Error, ErrorKind::Runtime, info.decl->loc, why};
    return -1;
  }
  c.decl = info.decl;
  c.version = info.version;
  return 1;
}

void finish(Compiled& c, const std::vector<int>& site_ids, bool map, int string_base,
            const ConstantBuilder* constants) {
  if (c.target->arch == Arch::AArch64) {
    c.a64_code = emit_a64(c.fn, c.mf, c.alloc, c.top_level, site_ids, std::max(string_base, 0), constants);
    return;
  }
  c.code = emit(c.fn, c.mf, c.alloc, c.top_level, site_ids, string_base);
  if (map && host_supported()) c.memory = std::make_unique<ExecMemory>(c.code.bytes);
}

}  // namespace descent::native
