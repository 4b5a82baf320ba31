#include "llvm_backend/views.h"

#include "llvm_backend/codegen.h"
#include "llvm_backend/passes.h"
#include "llvm_backend/target.h"

namespace descent::llvmbe {

namespace {
// IR for one target, through the same -O pipeline the JIT uses.
IRModule lower(const Program& program, const Module& module, const std::string& triple,
               int opt_level, bool standalone, std::string* error) {
  IRGenOptions opts;
  opts.triple = triple;
  opts.standalone = standalone;
  IRModule ir = generate_ir(program, module, opts, error);
  if (ir) optimize(*ir.module, opt_level, /*capture=*/false);
  return ir;
}
}  // namespace

std::string machine_code(const Program& program, const Module& module, const std::string& target,
                         int opt_level, MachineView view, std::string* error) {
  return machine_code(CodeScope::of(program), module, target, opt_level, view, error);
}

std::string machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                         int opt_level, MachineView view, std::string* error) {
  std::string triple = resolve_target(target, error);
  if (triple.empty()) return "";
  IRModule ir = generate_ir(scope, module, triple, error);
  if (!ir) return "";
  optimize(*ir.module, opt_level, /*capture=*/false);
  switch (view) {
    case MachineView::Asm: return emit_asm(*ir.module, triple, opt_level, /*with_encodings=*/true, error);
    case MachineView::MirAfterIsel:
      return compact_mir(emit_mir(*ir.module, triple, opt_level, kMirAfterIsel, error));
    case MachineView::MirAfterRegalloc:
      return compact_mir(emit_mir(*ir.module, triple, opt_level, kMirAfterRegalloc, error));
  }
  return "";
}

bool build_object(const Program& program, const Module& module, const std::string& target,
                  int opt_level, const std::string& path, std::string* error) {
  std::string triple = resolve_target(target, error);
  if (triple.empty()) return false;
  IRModule ir = lower(program, module, triple, opt_level, /*standalone=*/true, error);
  if (!ir) return false;
  return emit_object(*ir.module, triple, opt_level, path, error);
}

}  // namespace descent::llvmbe
