#include "llvm_backend/passes.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

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

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
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
  auto record = [&](llvm::StringRef pass, std::string unit) {
    if (plumbing(pass)) return;
    PassSnapshot s;
    s.pass = pass.str();
    int n = ++runs[s.pass];
    s.label = n == 1 ? s.pass : s.pass + "#" + std::to_string(n);
    s.unit = std::move(unit);
    s.ir = module_text(m);
    s.changed = s.ir != last;
    last = s.ir;
    snaps.push_back(std::move(s));
  };
  llvm::PassInstrumentationCallbacks pic;
  if (capture) {
    last = module_text(m);
    pic.registerAfterPassCallback(
        [&](llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses&) {
          record(pass, unit_name(ir));
        });
    // The pass removed what it ran on (e.g. a function deleted by the inliner).
    pic.registerAfterPassInvalidatedCallback(
        [&](llvm::StringRef pass, const llvm::PreservedAnalyses&) { record(pass, "(removed)"); });
  }

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm, llvm::PipelineTuningOptions(), llvm::None, &pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1, llvm::OptimizationLevel::O2,
      llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm = opt_level == 0
                                    ? pb.buildO0DefaultPipeline(levels[0])
                                    : pb.buildPerModuleDefaultPipeline(levels[opt_level]);
  mpm.run(m, mam);
  return snaps;
}

const PassSnapshot* find_snapshot(const std::vector<PassSnapshot>& snaps, std::string_view key) {
  for (const auto& s : snaps)
    if (s.label == key) return &s;
  return nullptr;
}

// ---- [SECTION] diff ----

namespace {
struct Op {
  char kind;      // ' ', '-', '+'
  size_t ai, bi;  // line indices (0-based) in a and b where the op stands
};

// The edit script from x to y: the longest common subsequence of the lines, deletions before
// insertions where both are possible (what `diff` does).
std::vector<Op> diff_ops(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  size_t n = x.size(), m = y.size();
  // Common head and tail first: passes usually touch one function of many.
  size_t head = 0;
  while (head < n && head < m && x[head] == y[head]) ++head;
  size_t tail = 0;
  while (tail < n - head && tail < m - head && x[n - 1 - tail] == y[m - 1 - tail]) ++tail;
  size_t xn = n - head - tail, yn = m - head - tail;
  std::vector<Op> ops;
  for (size_t i = 0; i < head; ++i) ops.push_back({' ', i, i});
  if (xn * yn <= 4'000'000) {
    // Longest common subsequence of the middle parts, then walk it.
    std::vector<uint32_t> lcs((xn + 1) * (yn + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (yn + 1) + j]; };
    for (size_t i = xn; i-- > 0;)
      for (size_t j = yn; j-- > 0;)
        at(i, j) = x[head + i] == y[head + j] ? at(i + 1, j + 1) + 1
                                              : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < xn || j < yn) {
      if (i < xn && j < yn && x[head + i] == y[head + j]) {
        ops.push_back({' ', head + i++, head + j++});
      } else if (i < xn && (j == yn || at(i + 1, j) >= at(i, j + 1))) {
        ops.push_back({'-', head + i++, head + j});  // deletions before insertions
      } else {
        ops.push_back({'+', head + i, head + j++});
      }
    }
  } else {
    for (size_t i = 0; i < xn; ++i) ops.push_back({'-', head + i, head});
    for (size_t j = 0; j < yn; ++j) ops.push_back({'+', head + xn, head + j});
  }
  for (size_t i = 0; i < tail; ++i) ops.push_back({' ', n - tail + i, m - tail + i});
  return ops;
}
}  // namespace

std::vector<bool> changed_lines(const std::vector<std::string>& a,
                                const std::vector<std::string>& b) {
  std::vector<bool> changed(b.size(), false);
  for (const Op& op : diff_ops(a, b))
    if (op.kind == '+') changed[op.bi] = true;
  return changed;
}

std::string diff_snapshots(const std::string& a, const std::string& b, const std::string& a_label,
                           const std::string& b_label) {
  if (a == b) return "";
  std::vector<std::string> x = lines_of(a), y = lines_of(b);
  std::vector<Op> ops = diff_ops(x, y);

  const size_t context = 3;
  std::string out = "--- " + a_label + "\n+++ " + b_label + "\n";
  size_t k = 0, total = ops.size();
  while (k < total) {
    while (k < total && ops[k].kind == ' ') ++k;
    if (k == total) break;
    size_t start = k >= context ? k - context : 0;
    size_t end = k;
    for (;;) {
      while (end < total && ops[end].kind != ' ') ++end;
      size_t next = end;
      while (next < total && ops[next].kind == ' ' && next - end <= 2 * context) ++next;
      if (next < total && ops[next].kind != ' ' && next - end <= 2 * context) {
        end = next;
        continue;
      }
      break;
    }
    size_t stop = std::min(total, end + context);
    size_t acount = 0, bcount = 0;
    std::string body;
    for (size_t i = start; i < stop; ++i) {
      const Op& op = ops[i];
      if (op.kind != '+') ++acount;
      if (op.kind != '-') ++bcount;
      body += op.kind;
      body += op.kind == '+' ? y[op.bi] : x[op.ai];
      body += '\n';
    }
    size_t a0 = ops[start].ai + (acount ? 1 : 0), b0 = ops[start].bi + (bcount ? 1 : 0);
    out += "@@ -" + std::to_string(a0) + "," + std::to_string(acount) + " +" + std::to_string(b0) +
           "," + std::to_string(bcount) + " @@\n" + body;
    k = stop;
  }
  return out;
}

// ---- [SECTION] stage views ----

std::string dump_llvm(const Program& program, const Module& module, int opt_level, bool optimized,
                      std::string* error) {
  IRModule ir = generate_ir(program, module, IRGenOptions{}, error);
  if (!ir) return "";
  if (optimized) optimize(*ir.module, opt_level, false);
  return module_text(*ir.module);
}

std::vector<PassSnapshot> dump_passes(const Program& program, const Module& module, int opt_level,
                                      std::string* error) {
  IRModule ir = generate_ir(program, module, IRGenOptions{}, error);
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
