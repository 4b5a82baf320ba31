#include "llvm_backend/views.h"

#include <algorithm>

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

// A listing of text that carries no source lines.
static Listing unmapped(std::string text) {
  Listing out;
  out.lines.assign(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), 0);
  out.text = std::move(text);
  return out;
}

Listing machine_code(const Program& program, const Module& module, const std::string& target,
                     int opt_level, MachineView view, const AsmOptions& options,
                     std::string* error) {
  return machine_code(CodeScope::of(program), module, target, opt_level, view, options, error);
}

Listing machine_code(const CodeScope& scope, const Module& module, const std::string& target,
                     int opt_level, MachineView view, const AsmOptions& options,
                     std::string* error) {
  std::string triple = resolve_target(target, error);
  if (triple.empty()) return {};
  IRModule ir = generate_ir(scope, module, triple, error, /*debug_info=*/view == MachineView::Asm);
  if (!ir) return {};
  optimize(*ir.module, opt_level, /*capture=*/false);
  switch (view) {
    case MachineView::Asm: {
      std::string text = emit_asm(*ir.module, triple, opt_level, options.encodings, error);
      if (text.empty()) return {};
      return asm_listing(text, options.directives);
    }
    case MachineView::MirAfterIsel:
      return unmapped(compact_mir(emit_mir(*ir.module, triple, opt_level, kMirAfterIsel, error)));
    case MachineView::MirAfterRegalloc:
      return unmapped(compact_mir(emit_mir(*ir.module, triple, opt_level, kMirAfterRegalloc, error)));
  }
  return {};
}

Listing ir_code(const CodeScope& scope, const Module& module, int opt_level, bool optimized,
                std::string* error) {
  IRModule ir = generate_ir(scope, module, "", error, /*debug_info=*/true);
  if (!ir) return {};
  if (optimized) optimize(*ir.module, opt_level, /*capture=*/false);
  return ir_listing(*ir.module);
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
