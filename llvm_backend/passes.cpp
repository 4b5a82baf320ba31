#include "llvm_backend/passes.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <llvm/ADT/Any.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LazyCallGraph.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "lang/text.h"
#include "llvm_backend/codegen.h"

namespace descent::llvmbe {

namespace {

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

// What a pass ran on, in words.
std::string unit_name(const llvm::Any& ir) {
  if (llvm::any_isa<const llvm::Module*>(ir)) return "[module]";
  if (llvm::any_isa<const llvm::Function*>(ir))
    return llvm::any_cast<const llvm::Function*>(ir)->getName().str();
  if (llvm::any_isa<const llvm::LazyCallGraph::SCC*>(ir))
    return llvm::any_cast<const llvm::LazyCallGraph::SCC*>(ir)->getName();
  if (llvm::any_isa<const llvm::Loop*>(ir)) {
    const llvm::Loop* l = llvm::any_cast<const llvm::Loop*>(ir);
    return l->getHeader()->getParent()->getName().str() + " loop %" + l->getName().str();
  }
  return "?";
}

// Pass managers, adaptors and analysis wrappers are plumbing, not passes a student looks at.
bool plumbing(llvm::StringRef pass) {
  return llvm::isSpecialPass(pass, {"PassManager", "PassAdaptor", "AnalysisManagerProxy",
                                    "DevirtSCCRepeatedPass", "ModuleInlinerWrapperPass"}) ||
         pass.startswith("RequireAnalysisPass") || pass.startswith("InvalidateAnalysisPass") ||
         pass == "VerifierPass";
}

std::unique_ptr<llvm::TargetMachine> machine_for(const llvm::Module& m) {
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(m.getTargetTriple(), err);
  if (!t) return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(
      m.getTargetTriple(), "generic", "", llvm::TargetOptions(), llvm::None));
}

// LLVM's default pipeline for opt_level (0..3), or the textual one when `text` is set.
// Returns "" or why `text` did not parse.
std::string run_pipeline(llvm::Module& m, int opt_level, const char* text, llvm::TargetMachine* tm,
                  llvm::PassInstrumentationCallbacks* pic) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm, llvm::PipelineTuningOptions(), llvm::None, pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1, llvm::OptimizationLevel::O2,
      llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm;
  if (text) {
    if (llvm::Error e = pb.parsePassPipeline(mpm, text)) return llvm::toString(std::move(e));
  } else if (opt_level == 0) {
    mpm = pb.buildO0DefaultPipeline(levels[0]);
  } else {
    mpm = pb.buildPerModuleDefaultPipeline(levels[opt_level]);
  }
  mpm.run(m, mam);
  return "";
}

}  // namespace

std::vector<PassSnapshot> optimize(llvm::Module& m, int opt_level, bool capture,
                                   llvm::TargetMachine* tm) {
  opt_level = std::clamp(opt_level, 0, 3);
  std::unique_ptr<llvm::TargetMachine> owned;
  if (!tm) {
    owned = machine_for(m);
    tm = owned.get();
  }
  std::vector<PassSnapshot> snaps;
  std::string last;
  std::map<std::string, int> runs;
  // untouched: the pass said it preserved every analysis, which a pass may only say when it
  // left the IR as it was (LLVM's contract for PreservedAnalyses::all()). Printing the whole
  // module is most of what capturing costs (at -O2 about a hundred passes run, most of them
  // changing nothing), so those snapshots reuse the text before them.
  auto record = [&](llvm::StringRef pass, std::string unit, bool untouched) {
    if (plumbing(pass)) return;
    PassSnapshot s;
    s.pass = pass.str();
    int n = ++runs[s.pass];
    s.label = n == 1 ? s.pass : s.pass + "#" + std::to_string(n);
    s.unit = std::move(unit);
    s.ir = untouched ? last : module_text(m);
    s.changed = s.ir != last;
    if (s.changed) last = s.ir;
    snaps.push_back(std::move(s));
  };
  llvm::PassInstrumentationCallbacks pic;
  if (capture) {
    last = module_text(m);
    pic.registerAfterPassCallback(
        [&](llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses& pa) {
          record(pass, unit_name(ir), pa.areAllPreserved());
        });
    // The pass removed what it ran on (e.g. a function deleted by the inliner).
    pic.registerAfterPassInvalidatedCallback(
        [&](llvm::StringRef pass, const llvm::PreservedAnalyses&) { record(pass, "(removed)", false); });
  }

  run_pipeline(m, opt_level, nullptr, tm, &pic);  // LLVM's own: nothing to parse
  return snaps;
}

std::string optimize_for_jit(llvm::Module& m, int opt_level, llvm::TargetMachine* tm) {
  opt_level = std::clamp(opt_level, 0, 3);
  std::unique_ptr<llvm::TargetMachine> owned;
  if (!tm) {
    owned = machine_for(m);
    tm = owned.get();
  }
  // -O0 runs no IR pass: LLVM's O0 pipeline only inlines always_inline functions (Descent
  // makes none), and building its analysis managers costs a fifth of a small unit's compile.
  if (opt_level == 0) return "";
  bool picked = opt_level == 1 || opt_level == 2;
  return run_pipeline(m, opt_level, picked ? kJitPipeline : nullptr, tm, nullptr);
}

const PassSnapshot* find_snapshot(const std::vector<PassSnapshot>& snaps, std::string_view key) {
  for (const auto& s : snaps)
    if (s.label == key) return &s;
  return nullptr;
}

// ---- [SECTION] diff ----

std::string diff_snapshots(const std::string& a, const std::string& b, const std::string& a_label,
                           const std::string& b_label) {
  return unified_diff(a, b, a_label, b_label);
}

// ---- [SECTION] stage views ----

std::string dump_llvm(const Program& program, const Module& module, int opt_level, bool optimized,
                      std::string* error) {
  return dump_llvm(CodeScope::of(program), module, opt_level, optimized, error);
}

std::vector<PassSnapshot> dump_passes(const Program& program, const Module& module, int opt_level,
                                      std::string* error) {
  return dump_passes(CodeScope::of(program), module, opt_level, error);
}

std::string dump_llvm(const CodeScope& scope, const Module& module, int opt_level, bool optimized,
                      std::string* error) {
  IRModule ir = generate_ir(scope, module, "", error);
  if (!ir) return "";
  if (optimized) optimize(*ir.module, opt_level, false);
  return module_text(*ir.module);
}

std::vector<PassSnapshot> dump_passes(const CodeScope& scope, const Module& module, int opt_level,
                                      std::string* error) {
  IRModule ir = generate_ir(scope, module, "", error);
  if (!ir) return {};
  return optimize(*ir.module, opt_level, true);
}

std::string format_pass_list(const std::vector<PassSnapshot>& snaps) {
  size_t w = 4, u = 4;
  for (const auto& s : snaps) {
    w = std::max(w, s.label.size());
    u = std::max(u, s.unit.size());
  }
  std::string out;
  for (const auto& s : snaps) {
    std::string line = s.label + std::string(w + 2 - s.label.size(), ' ') + s.unit +
                       std::string(u + 2 - s.unit.size(), ' ') + (s.changed ? "changed" : "-");
    out += line + "\n";
  }
  return out;
}

}  // namespace descent::llvmbe
