// The checker's side of lab llvm_strength, compiled against the project's lang/ and
// llvm_backend/ libraries and libLLVM-15, and run in a child process (a crash here is a
// failed check, not a crash of `descent lab`). Built twice (labs/cpp_common/observe.h): with
// the student's strength.cpp, `harness observe CASE SEED PROGRAMS_DIR` runs the student's pass
// and writes what it did as records on fd 3; with the starter's strength.cpp,
// `harness check CASE SEED PROGRAMS_DIR` reads those records on stdin instead of running any
// pass and prints one line: "PASS", "FAIL: why" (or "END ..." when the records stop short).
//   reduces_mul     after the pass no function of the lab's programs multiplies by 2^k
//   reduces_div     ... and none divides (sdiv) by 2^k, 1 <= k <= 62
//   keeps_results   the lab's programs and 200 random ones drawn from SEED print the same on
//                   the JIT at -O0 with the pass (llvm_backend/jit.h's set_ir_transform) as on
//                   the AST walker, negative numbers, 2^62 and wrap-around included
//   reports_preserved  run() returns none() (or less than all) when it changed a function
//                   and all() when it did not
// Every case verifies the module after the pass: a broken module fails with the verifier's
// message.
//
// The record of one run of the pass is the whole module after it, as LLVM's printer writes it
// (and, for a direct call of run(), whether the PreservedAnalyses it returned preserve all).
// The pass runs on a copy of the module (parsed from its text); in both modes the harness then
// parses the record's text into the module's context and moves everything it holds into the
// module in place of what was there (become): the module stays the same object (the JIT
// holds it), so all that follows (verifier, instruction scans, printing, the JIT) sees exactly
// the IR the record holds, in the student's run as in the checker's. Text that does not parse
// fails the check ("... does not parse back").
//
// keeps_results runs the recorded IR on the checker's own JIT, in the checker's process, which
// must not run code that the lab's pass could never produce (a record could declare write()
// and print PASS from there). So before that IR is taken, it must be the module before the
// pass but for integer arithmetic (only_arithmetic_changed below): every other instruction in
// the same block, in the same order, on the same operands (an integer operand that was an
// arithmetic result may be any other integer: the rewrites feed those), and no function,
// global or module property it did not have, except intrinsic declarations.
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/ADT/STLExtras.h>
#include <llvm/AsmParser/LLParser.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "labs/cpp_common/observe.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "llvm_backend/codegen.h"
#include "llvm_backend/jit.h"
#include "strength_lab.h"

using namespace descent;

namespace {

std::string shown(std::string s, size_t max = 200) {
  for (auto& c : s)
    if (c == '\n') c = '|';
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

template <typename T>
std::string text_of(const T& x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  x.print(os);
  os.flush();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? s : s.substr(b);
}

// A checked program with its Module (what codegen and the engines need).
struct Checked {
  std::unique_ptr<Program> program;
  Module module;
  std::string error;  // a compile error
};

std::unique_ptr<Checked> compile(const std::string& name, const std::string& text) {
  auto c = std::make_unique<Checked>();
  std::vector<Diagnostic> diags;
  c->program = std::make_unique<Program>(parse(std::make_shared<SourceFile>(name, text), diags));
  if (!diags.empty() || !check(*c->program, c->module, {}, diags))
    c->error = "compile error: " + (diags.empty() ? std::string("?") : diags[0].message);
  return c;
}

// "" or the verifier's reason why m is no longer a valid module.
std::string broken(const llvm::Module& m) {
  std::string why;
  llvm::raw_string_ostream os(why);
  if (!llvm::verifyModule(m, &os)) return "";
  os.flush();
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return "after your pass the module is broken (llvm::verifyModule): " + shown(why, 400);
}

// ---- a module as a record: its text, and the module made again from it ----

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  os.flush();
  return s;
}

// The module `text` holds, parsed into `context`; null (and *why set) when it does not parse.
// LLParser itself, with the debug-info upgrade off: parseAssemblyString's upgrade runs the
// verifier on a module that claims current debug info and aborts the process if it is broken.
std::unique_ptr<llvm::Module> parse_module(const std::string& text, llvm::LLVMContext& context, std::string* why) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, "record"), llvm::SMLoc());
  llvm::SMDiagnostic err;
  auto m = std::make_unique<llvm::Module>("record", context);
  if (llvm::LLParser(text, sm, err, m.get(), nullptr, context).Run(/*UpgradeDebugInfo=*/false)) {
    *why = "line " + std::to_string(err.getLineNo()) + ": " + err.getMessage().str();
    return nullptr;
  }
  return m;
}

// Makes m hold what n holds (n, in the same context, is left empty): m's own functions,
// globals, aliases, ifuncs and named metadata are deleted, n's move over (the same objects,
// so nothing in them needs remapping), with n's data layout, triple, module asm and source
// name. m stays the object it was; its identifier stays.
void become(llvm::Module& m, llvm::Module& n) {
  m.dropAllReferences();
  auto unused = [](llvm::GlobalValue& gv) {
    gv.removeDeadConstantUsers();
    if (!gv.use_empty()) gv.replaceAllUsesWith(llvm::PoisonValue::get(gv.getType()));
  };
  for (auto& f : m) unused(f);
  for (auto& g : m.globals()) unused(g);
  for (auto& a : m.aliases()) unused(a);
  for (auto& i : m.ifuncs()) unused(i);
  while (!m.empty()) m.begin()->eraseFromParent();
  while (!m.global_empty()) m.global_begin()->eraseFromParent();
  while (!m.alias_empty()) m.alias_begin()->eraseFromParent();
  while (!m.ifunc_empty()) m.ifunc_begin()->eraseFromParent();
  while (!m.named_metadata_empty()) m.eraseNamedMetadata(&*m.named_metadata_begin());

  m.getFunctionList().splice(m.end(), n.getFunctionList());
  m.getGlobalList().splice(m.global_end(), n.getGlobalList());
  m.getAliasList().splice(m.alias_end(), n.getAliasList());
  m.getIFuncList().splice(m.ifunc_end(), n.getIFuncList());
  // A comdat belongs to its module: n's go with n.
  for (llvm::GlobalObject& go : m.global_objects())
    if (const llvm::Comdat* c = go.getComdat()) {
      llvm::Comdat* mine = m.getOrInsertComdat(c->getName());
      mine->setSelectionKind(c->getSelectionKind());
      go.setComdat(mine);
    }
  for (llvm::NamedMDNode& nmd : n.named_metadata()) {
    llvm::NamedMDNode* mine = m.getOrInsertNamedMetadata(nmd.getName());
    for (llvm::MDNode* op : nmd.operands()) mine->addOperand(op);
  }
  m.setDataLayout(n.getDataLayout());
  m.setTargetTriple(n.getTargetTriple());
  m.setModuleInlineAsm(n.getModuleInlineAsm());
  m.setSourceFileName(n.getSourceFileName());
}

// m made again from its own text, before the student's pass sees it: from then on every
// module the harness compares (before and after the pass) has come through the parser, so a
// detail the printer and parser do not carry over exactly cannot look like a change.
std::string normalize(llvm::Module& m) {
  std::string why;
  std::unique_ptr<llvm::Module> n = parse_module(module_text(m), m.getContext(), &why);
  if (!n) return "the checker could not read back codegen's IR (" + why + ")";
  become(m, *n);
  return "";
}

// The copy of m the student's pass changes: made from m's text, as every module the harness
// compares is, so an unchanged function prints as it did (CloneModule only if that fails).
std::unique_ptr<llvm::Module> copy_of(const llvm::Module& m) {
  std::string why;
  std::unique_ptr<llvm::Module> copy = parse_module(module_text(m), m.getContext(), &why);
  if (!copy) return llvm::CloneModule(m);
  copy->setModuleIdentifier(m.getModuleIdentifier());
  return copy;
}

// ---- what the checker lets its JIT run (keeps_results) ----

// The intrinsics an integer rewrite may call: no memory, no side effects, integers only.
bool integer_intrinsic(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::abs: case llvm::Intrinsic::smax: case llvm::Intrinsic::smin:
    case llvm::Intrinsic::umax: case llvm::Intrinsic::umin: case llvm::Intrinsic::fshl:
    case llvm::Intrinsic::fshr: case llvm::Intrinsic::ctlz: case llvm::Intrinsic::cttz:
    case llvm::Intrinsic::ctpop: case llvm::Intrinsic::bswap: case llvm::Intrinsic::bitreverse:
    case llvm::Intrinsic::sadd_sat: case llvm::Intrinsic::ssub_sat: case llvm::Intrinsic::uadd_sat:
    case llvm::Intrinsic::usub_sat: case llvm::Intrinsic::sshl_sat: case llvm::Intrinsic::ushl_sat:
      return true;
    default:
      return false;
  }
}

bool small_integer(const llvm::Type* t) { return t->isIntegerTy() && t->getIntegerBitWidth() <= 128; }

// Integer arithmetic: what the pass may add, remove and rewrite as it likes (it touches no
// memory, calls nothing outside LLVM, and leaves the control flow alone).
bool arithmetic(const llvm::Instruction& i) {
  if (!small_integer(i.getType())) return false;
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&i)) {
    const llvm::Function* f = call->getCalledFunction();
    if (!f || !integer_intrinsic(f->getIntrinsicID()) || call->hasOperandBundles()) return false;
    for (const llvm::Use& a : call->args())
      if (!small_integer(a->getType())) return false;
    return true;
  }
  if (!llvm::isa<llvm::BinaryOperator>(i) && !llvm::isa<llvm::ICmpInst>(i) && !llvm::isa<llvm::SelectInst>(i) &&
      !llvm::isa<llvm::TruncInst>(i) && !llvm::isa<llvm::ZExtInst>(i) && !llvm::isa<llvm::SExtInst>(i) &&
      !llvm::isa<llvm::FreezeInst>(i))
    return false;
  for (const llvm::Use& u : i.operands())
    if (!small_integer(u->getType())) return false;
  return true;
}

// Whether operand k of `user` may become another integer when it was an arithmetic result:
// not an address, a size or an intrinsic's argument (those decide what memory is touched).
bool free_operand(const llvm::Instruction& user, unsigned k) {
  if (llvm::isa<llvm::GetElementPtrInst>(user) || llvm::isa<llvm::IntToPtrInst>(user) ||
      llvm::isa<llvm::AllocaInst>(user))
    return false;
  if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&user)) {
    const llvm::Function* f = call->getCalledFunction();
    return f && !f->isIntrinsic() && call->isArgOperand(&user.getOperandUse(k));
  }
  return true;
}

std::string operand_text(const llvm::Value& v, const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  v.printAsOperand(os, true, &m);
  os.flush();
  return s;
}

std::string block_name(const llvm::BasicBlock& b, size_t index) {
  return b.hasName() ? "%" + b.getName().str() : "block " + std::to_string(index + 1);
}

// "" when `after` is `before` but for integer arithmetic, else where it is not.
std::string body_differs(const llvm::Function& before, const llvm::Function& after) {
  std::string fn = "@" + after.getName().str();
  if (before.size() != after.size())
    return fn + " has " + std::to_string(after.size()) + " basic blocks; before the pass it had " +
           std::to_string(before.size());
  std::unordered_map<const llvm::Value*, const llvm::Value*> same;  // before's -> after's
  for (unsigned k = 0; k < before.arg_size(); ++k) same[before.getArg(k)] = after.getArg(k);
  struct Pair {
    const llvm::Instruction* was;
    const llvm::Instruction* is;
    std::string where;
  };
  std::vector<Pair> pairs;
  size_t index = 0;
  for (auto a = before.begin(), b = after.begin(); a != before.end(); ++a, ++b, ++index) {
    same[&*a] = &*b;
    std::string where = "in " + fn + ", " + block_name(*b, index);
    std::vector<const llvm::Instruction*> was, is;
    for (const auto& i : *a)
      if (!arithmetic(i)) was.push_back(&i);
    for (const auto& i : *b)
      if (!arithmetic(i)) is.push_back(&i);
    // The first place they differ: an instruction more, one less, or another one.
    for (size_t k = 0; k < std::max(was.size(), is.size()); ++k) {
      if (k < was.size() && k < is.size() && is[k]->isSameOperationAs(was[k])) {
        same[was[k]] = is[k];
        pairs.push_back({was[k], is[k], where});
        continue;
      }
      if (is.size() > was.size()) return where + ": `" + shown(text_of(*is[k])) + "` is new";
      if (is.size() < was.size()) return where + ": `" + shown(text_of(*was[k])) + "` is gone";
      return where + ": `" + shown(text_of(*is[k])) + "` where it had `" + shown(text_of(*was[k])) + "`";
    }
  }
  const llvm::Module& mb = *before.getParent();
  const llvm::Module& ma = *after.getParent();
  auto matches = [&](const llvm::Value* a, const llvm::Value* b) {
    if (auto it = same.find(a); it != same.end()) return it->second == b;
    if (a == b) return true;  // a constant, metadata or inline asm: unique in the context
    return llvm::isa<llvm::Constant>(a) && llvm::isa<llvm::Constant>(b) &&
           operand_text(*a, mb) == operand_text(*b, ma);  // one that names a global
  };
  for (const Pair& p : pairs) {
    bool ok = true;
    for (unsigned k = 0; ok && k < p.was->getNumOperands(); ++k) {
      const llvm::Value* a = p.was->getOperand(k);
      const auto* ai = llvm::dyn_cast<llvm::Instruction>(a);
      if (ai && arithmetic(*ai) && free_operand(*p.was, k)) continue;  // the rewrites feed these
      ok = matches(a, p.is->getOperand(k));
    }
    if (ok)
      if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(p.was))
        for (unsigned k = 0; ok && k < phi->getNumIncomingValues(); ++k)
          ok = matches(phi->getIncomingBlock(k), llvm::cast<llvm::PHINode>(p.is)->getIncomingBlock(k));
    if (!ok)
      return p.where + ": `" + shown(text_of(*p.is)) + "` where it had `" + shown(text_of(*p.was)) + "`";
  }
  return "";
}

bool same_declaration(const llvm::Function& a, const llvm::Function& b) {
  auto extra = [](const llvm::Function& f, const llvm::Module& m) {
    std::string s;
    if (f.hasPersonalityFn()) s += "personality " + operand_text(*f.getPersonalityFn(), m);
    if (f.hasPrefixData()) s += " prefix " + operand_text(*f.getPrefixData(), m);
    if (f.hasPrologueData()) s += " prologue " + operand_text(*f.getPrologueData(), m);
    if (f.hasComdat()) s += " comdat " + f.getComdat()->getName().str();
    if (f.hasGC()) s += " gc " + f.getGC();
    return s;
  };
  return a.getName() == b.getName() && a.getFunctionType() == b.getFunctionType() &&
         a.getLinkage() == b.getLinkage() && a.getVisibility() == b.getVisibility() &&
         a.getCallingConv() == b.getCallingConv() && a.getAttributes() == b.getAttributes() &&
         a.isDeclaration() == b.isDeclaration() && a.getSection() == b.getSection() &&
         a.getAlign() == b.getAlign() && a.getUnnamedAddr() == b.getUnnamedAddr() &&
         a.getDLLStorageClass() == b.getDLLStorageClass() && a.isDSOLocal() == b.isDSOLocal() &&
         a.getAddressSpace() == b.getAddressSpace() &&
         extra(a, *a.getParent()) == extra(b, *b.getParent());
}

// "" when `after` is `before` but for integer arithmetic in function bodies (and intrinsic
// declarations it calls), else why the checker will not run it.
std::string only_arithmetic_changed(const llvm::Module& before, const llvm::Module& after) {
  const std::string head = "after your pass the module changed in more than integer arithmetic (";
  const std::string tail = "): the checker runs this IR on its JIT, so the pass may rewrite integer arithmetic only";
  if (after.getDataLayoutStr() != before.getDataLayoutStr() || after.getTargetTriple() != before.getTargetTriple() ||
      after.getModuleInlineAsm() != before.getModuleInlineAsm())
    return head + "its data layout, target triple or module asm" + tail;
  auto texts = [](const auto& range) {
    std::vector<std::string> out;
    for (const auto& v : range) out.push_back(text_of(v));
    return out;
  };
  if (texts(after.globals()) != texts(before.globals())) return head + "its global variables" + tail;
  if (texts(after.aliases()) != texts(before.aliases()) || texts(after.ifuncs()) != texts(before.ifuncs()))
    return head + "its aliases" + tail;
  auto metadata = [](const llvm::Module& m) {
    std::vector<std::pair<std::string, std::vector<const llvm::MDNode*>>> out;
    for (const llvm::NamedMDNode& n : m.named_metadata()) {
      out.push_back({n.getName().str(), {}});
      for (const llvm::MDNode* op : n.operands()) out.back().second.push_back(op);
    }
    return out;
  };
  if (metadata(after) != metadata(before)) return head + "its named metadata" + tail;

  // The functions it had, in the same order, then only intrinsic declarations.
  auto a = after.begin();
  for (const llvm::Function& f : before) {
    if (a != after.end() && a->getName() != f.getName() && !before.getFunction(a->getName()))
      return head + "a new function @" + a->getName().str() + tail;
    if (a == after.end() || a->getName() != f.getName())
      return head + "@" + f.getName().str() + " is gone or moved" + tail;
    if (!same_declaration(f, *a))
      return head + "the declaration of @" + f.getName().str() + ": its type, linkage or attributes" + tail;
    if (!f.isDeclaration())
      if (std::string why = body_differs(f, *a); !why.empty()) return head + why + tail;
    ++a;
  }
  for (; a != after.end(); ++a)
    if (!a->isDeclaration() || a->getIntrinsicID() == llvm::Intrinsic::not_intrinsic)
      return head + "a new function @" + a->getName().str() + tail;
  return "";
}

// ---- the student's pass, through the trust boundary ----

// The analysis managers a pass runs with, as PassBuilder sets them up.
struct Analyses {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  Analyses() {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
  }
};

// The replay of a record's module into m: "" or why it cannot be taken (then m is left as it
// was, and the check fails with that reason). With `will_run`, the IR goes to the JIT next.
std::string take(llvm::Module& m, const std::string& text, bool will_run) {
  std::string why;
  std::unique_ptr<llvm::Module> n = parse_module(text, m.getContext(), &why);
  if (!n) return "after your pass the module's IR does not parse back (" + shown(why, 400) + ")";
  if (will_run)
    if (why = only_arithmetic_changed(m, *n); !why.empty()) return why;
  become(m, *n);
  return "";
}

// Runs the student's pass on every function of m through the new pass manager, then the
// verifier: "" or why the module is broken. The record is the module after the pass.
std::string run_pass(llvm::Module& m, bool will_run = false) {
  if (std::string why = normalize(m); !why.empty()) return why;
  std::string why = lab::observed(
      "StrengthReducePass::run(every_function)",
      [&](lab::Record& r) {
        std::unique_ptr<llvm::Module> work = copy_of(m);
        {
          Analyses a;
          llvm::FunctionPassManager fpm;
          fpm.addPass(StrengthReducePass());
          llvm::ModulePassManager mpm;
          mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
          mpm.run(*work, a.mam);
        }
        r.str(module_text(*work));
      },
      [&](lab::Reader& in) { return take(m, in.str(), will_run); });
  if (!why.empty()) return why;
  return broken(m);
}

struct PassRun {
  bool all_preserved = false;  // what run() returned: PreservedAnalyses::areAllPreserved()
  std::string failed;          // "" or why the module it left cannot be taken
};

// The student's run() called directly on the function at `index` of m (a definition). The
// record: whether the result preserves all analyses, and the module after the call.
PassRun run_on_function(llvm::Module& m, size_t index) {
  return lab::observed(
      "StrengthReducePass::run",
      [&](lab::Record& r) {
        std::unique_ptr<llvm::Module> work = copy_of(m);
        bool all;
        {
          Analyses a;
          StrengthReducePass pass;
          llvm::PreservedAnalyses pa = pass.run(*std::next(work->begin(), static_cast<long>(index)), a.fam);
          all = pa.areAllPreserved();
        }
        r.u64(all ? 1 : 0).str(module_text(*work));
      },
      [&](lab::Reader& in) {
        PassRun run;
        run.all_preserved = in.u64() != 0;
        run.failed = take(m, in.str(), false);
        return run;
      });
}

// ---- the checks ----

// The constant operand of `i` at `at` as k when it is 2^k (unsigned: 2^63 counts), else -1.
int log2_operand(const llvm::Instruction& i, unsigned at) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(i.getOperand(at));
  return c && c->getValue().isPowerOf2() ? static_cast<int>(c->getValue().exactLogBase2()) : -1;
}
bool mul_by_power(const llvm::Instruction& i) {
  return i.getOpcode() == llvm::Instruction::Mul && (log2_operand(i, 0) >= 0 || log2_operand(i, 1) >= 0);
}
bool sdiv_by_power(const llvm::Instruction& i) {
  if (i.getOpcode() != llvm::Instruction::SDiv) return false;
  int k = log2_operand(i, 1);
  return k >= 1 && k <= static_cast<int>(i.getType()->getIntegerBitWidth()) - 2;
}

struct Source {
  std::string name, text;
};

std::vector<Source> lab_programs(const std::filesystem::path& dir) {
  std::vector<Source> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ds") out.push_back({e.path().filename().string(), read(e.path())});
  std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.name < b.name; });
  return out;
}

// reduces_mul / reduces_div: the IR of every lab program after the pass has no instruction
// `left` accepts (and there were some before).
std::string check_reduced(const std::vector<Source>& programs, bool (*left)(const llvm::Instruction&),
                          const char* what) {
  int before = 0;
  for (const auto& src : programs) {
    auto c = compile(src.name, src.text);
    if (!c->error.empty()) return src.name + ": " + c->error;
    std::string error;
    llvmbe::IRModule ir = llvmbe::generate_ir(*c->program, c->module, {}, &error);
    if (!ir) return src.name + ": codegen failed: " + error;
    for (const auto& f : *ir.module)
      for (const auto& b : f)
        for (const auto& i : b) before += left(i);
    if (std::string why = run_pass(*ir.module); !why.empty()) return src.name + ": " + why;
    for (const auto& f : *ir.module)
      for (const auto& b : f)
        for (const auto& i : b)
          if (left(i))
            return src.name + ": @" + f.getName().str() + " still " + what + ": `" + text_of(i) + "`";
  }
  if (before == 0) return std::string("the lab's programs have nothing that ") + what;
  return "";
}

// What a program prints, then "error at line L: message" if it failed at run time.
std::string run_on(Engine& engine, const Source& src) {
  auto c = compile(src.name, src.text);
  if (!c->error.empty()) return c->error;
  GlobalStore globals;
  globals.resize(c->module.globals.size());
  std::string out;
  RunOptions opts;
  opts.out = [&out](std::string_view t) { out += t; };
  RunResult rr;
  run_on_big_stack([&] { rr = engine.run(*c->program, c->module, globals, opts); });
  if (!rr.ok) out += "error at line " + std::to_string(rr.error.loc.line) + ": " + rr.error.message;
  return out;
}

// The first line where two outputs differ, as the student should read it.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "";
    if (!ha || !hb || la != lb)
      return "output line " + std::to_string(line) + ": the AST walker prints \"" + (ha ? shown(la) : "") +
             "\", the JIT after your pass \"" + (hb ? shown(lb) : "") + "\"";
  }
}

const char* kInputs[] = {"0", "1", "-1", "7", "-7", "8", "-8", "1000003", "-1000003", "4611686018427387904",
                         "-4611686018427387904", "9223372036854775807", "(-9223372036854775807 - 1)"};

std::string constant(std::mt19937_64& rng, bool divisor) {
  static const char* powers[] = {"1", "2", "4", "8", "16", "1024", "65536", "4294967296", "4611686018427387904"};
  static const char* others[] = {"3", "6", "-2", "-4", "-8", "(-9223372036854775807 - 1)", "1000003"};
  if (rng() % 3) return powers[rng() % 9];
  std::string c = others[rng() % 7];
  if (!divisor && rng() % 4 == 0) return "0";
  return c;
}

// An int expression over x: *, / by constants (either side for *), + and -.
std::string random_expr(std::mt19937_64& rng, int depth) {
  if (depth == 0 || rng() % 4 == 0) return rng() % 4 ? "x" : std::to_string(rng() % 100);
  std::string a = random_expr(rng, depth - 1);
  switch (rng() % 5) {
    case 0: return "(" + a + " * " + constant(rng, false) + ")";
    case 1: return "(" + constant(rng, false) + " * " + a + ")";
    case 2: return "(" + a + " / " + constant(rng, true) + ")";
    case 3: return "(" + a + " + " + random_expr(rng, depth - 1) + ")";
    default: return "(" + a + " - " + random_expr(rng, depth - 1) + ")";
  }
}

Source random_program(std::mt19937_64& rng, int n) {
  std::string text = "fn f(x: int) -> int {\n  return " + random_expr(rng, 4) + "\n}\n";
  for (const char* v : kInputs) text += "print(f(" + std::string(v) + "))\n";
  return {"random program " + std::to_string(n), text};
}

std::string keeps_results(const std::vector<Source>& lab, uint64_t seed) {
  std::vector<Source> programs = lab;
  std::mt19937_64 rng(seed);  // the run's seed: a submission cannot know the programs
  for (int i = 0; i < 200; ++i) programs.push_back(random_program(rng, i + 1));
  auto walker = make_ast_walker();
  for (const auto& src : programs) {
    auto jit = llvmbe::make_jit_engine(0);
    jit->set_ir_transform([](llvm::Module& m) { return run_pass(m, /*will_run=*/true); });
    std::string want = run_on(*walker, src), got = run_on(*jit, src);
    if (size_t broke = got.find("jit: after your pass"); broke != std::string::npos)
      return src.name + ": " + got.substr(broke + 5);
    if (want != got) {
      std::string diff = first_difference(want, got);
      return src.name + ": " + (diff.empty() ? "the outputs differ" : diff) +
             (src.name.rfind("random", 0) == 0 ? " (the program: " + shown(src.text, 400) + ")" : "");
    }
  }
  return "";
}

std::string reports_preserved(const std::vector<Source>& programs) {
  bool saw_same = false;
  for (const auto& src : programs) {
    auto c = compile(src.name, src.text);
    if (!c->error.empty()) return src.name + ": " + c->error;
    std::string error;
    llvmbe::IRModule ir = llvmbe::generate_ir(*c->program, c->module, {}, &error);
    if (!ir) return src.name + ": codegen failed: " + error;
    llvm::Module& m = *ir.module;
    if (std::string why = normalize(m); !why.empty()) return src.name + ": " + why;
    // By position: each call's replay makes every function of m anew.
    for (size_t k = 0; k < m.size(); ++k) {
      const llvm::Function& f = *std::next(m.begin(), static_cast<long>(k));
      if (f.isDeclaration()) continue;
      std::string name = f.getName().str(), before = text_of(f);
      PassRun run = run_on_function(m, k);
      if (!run.failed.empty()) return src.name + ": " + run.failed;
      const llvm::Function* now = m.getFunction(name);
      bool changed = !now || text_of(*now) != before;
      saw_same = saw_same || !changed;
      std::string where = src.name + ": @" + name;
      if (changed && run.all_preserved)
        return where + " changed, but run() returned PreservedAnalyses::all(): the pass manager "
                       "would keep analyses of the old code (return none())";
      if (!changed && !run.all_preserved)
        return where + " did not change, but run() did not return PreservedAnalyses::all(): every "
                       "analysis of it would be thrown away and computed again for nothing";
    }
    if (std::string why = broken(m); !why.empty()) return src.name + ": " + why;
  }
  if (!saw_same) return "every function changed; the lab's programs need one with nothing to reduce";
  return "";
}

std::string check(const std::string& which, uint64_t seed, const std::filesystem::path& dir) {
  std::vector<Source> programs = lab_programs(dir);
  if (programs.empty()) return "no programs in " + dir.string();
  if (which == "reduces_mul") return check_reduced(programs, mul_by_power, "multiplies by a power of two");
  if (which == "reduces_div") return check_reduced(programs, sdiv_by_power, "divides (sdiv) by a power of two");
  if (which == "keeps_results") return keeps_results(programs, seed);
  if (which == "reports_preserved") return reports_preserved(programs);
  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 1, [](const lab::Args& a) { return check(a.which, a.seed, a.data[0]); });
}
