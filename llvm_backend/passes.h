// The optimisation pipeline: LLVM's own -O0..-O3 (new pass manager), with a snapshot of the
// module after every pass that ran.
//
//   auto snaps = optimize(*ir.module, 2, /*capture=*/true);
//   for (auto& s : snaps) print(s.label, s.changed ? "changed" : "-");
//   diff_snapshots(find_snapshot(snaps, "SROAPass")->ir, find_snapshot(snaps, "GVNPass")->ir);
//
// Snapshots are taken with PassInstrumentationCallbacks (registerAfterPassCallback), never
// with the global -print-after-all option, which would also fire inside PoCL's compiles.
// Analyses and pass managers/adaptors are skipped; each transformation pass run gives one
// snapshot of the whole module, marked changed when its text differs from the one before.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "lang/module.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace descent::llvmbe {

struct PassSnapshot {
  std::string pass;   // LLVM's pass name: "SROAPass", "InstCombinePass", ...
  std::string label;  // unique key: the pass name, then "InstCombinePass#2", "#3" for reruns
  std::string unit;   // what it ran on: a function ("ds.fib"), "[module]", a CGSCC or a loop
  std::string ir;     // the whole module after it, as text
  bool changed = false;  // ir differs from the previous snapshot (or the input)
};

// Runs the default pipeline for opt_level 0..3 (clamped) on m. With capture, returns one
// snapshot per transformation pass run, in order; without, returns nothing (and costs
// nothing). tm: the target to optimise for (its TargetTransformInfo); null: one for the
// module's triple with a generic CPU, so dumps are the same on every machine.
std::vector<PassSnapshot> optimize(llvm::Module& m, int opt_level, bool capture,
                                   llvm::TargetMachine* tm = nullptr);

// The JIT's pipeline for one unit (jit.cpp). At -O1 and -O2 a hand-picked list
// (kJitPipeline) instead of LLVM's -O2: the same simplifications a small Descent function
// needs (registers for locals, CSE, instcombine, tail-recursion elimination, inlining,
// loop rotation, LICM, induction variables, GVN), about half the compile time of the full
// pipeline, whose other hundred passes (vectorizers, unrolling, ...) have nothing to do on
// scalar code. -O0 and -O3 run LLVM's own. `descent dump --stage llvm-opt` and :passes
// still show LLVM's -O2, the pipeline a student reads about. Returns "" or why the pipeline
// text did not parse (a bug in kJitPipeline: every JIT test then fails with it).
std::string optimize_for_jit(llvm::Module& m, int opt_level, llvm::TargetMachine* tm);
inline constexpr const char* kJitPipeline =
    "cgscc(function(sroa,early-cse,simplifycfg,instcombine,tailcallelim),inline,function-attrs,"
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine,reassociate,"
    "loop-mssa(loop-rotate,licm),simplifycfg,instcombine,loop(indvars,loop-deletion),gvn,"
    "instcombine,simplifycfg))";

// The snapshot with this label ("InstCombinePass#2"), or, for a plain pass name, its first
// run. Null if no such pass ran.
const PassSnapshot* find_snapshot(const std::vector<PassSnapshot>& snaps, std::string_view key);

// A unified diff of two snapshots' IR: descent::unified_diff (lang/text.h) under the name
// the REPL's :diff and the docs use.
std::string diff_snapshots(const std::string& a, const std::string& b,
                           const std::string& a_label = "a", const std::string& b_label = "b");

// ---- stage views for the Session (REPL :llvm, :passes; `descent dump --stage ...`) ----

// The IR of one checked input as generated (optimized=false: stage "llvm") or after the
// -O pipeline (stage "llvm-opt"). On an internal error returns "" and sets *error.
std::string dump_llvm(const Program& program, const Module& module, int opt_level, bool optimized,
                      std::string* error);
// The snapshots of the -O pipeline on that IR (stage "passes"); the IR before the first
// pass is dump_llvm(..., optimized=false).
std::vector<PassSnapshot> dump_passes(const Program& program, const Module& module, int opt_level,
                                      std::string* error = nullptr);
// The same for any scope (its script's echo included: the IR of what the REPL ran).
std::string dump_llvm(const CodeScope& scope, const Module& module, int opt_level, bool optimized,
                      std::string* error);
std::vector<PassSnapshot> dump_passes(const CodeScope& scope, const Module& module, int opt_level,
                                      std::string* error = nullptr);
// "SROAPass  ds.fib  changed" lines for `descent dump --stage passes`.
std::string format_pass_list(const std::vector<PassSnapshot>& snaps);

}  // namespace descent::llvmbe
