// The checker's side of lab llvm_strength, compiled with the student's strength.cpp against
// the project's lang/ and llvm_backend/ libraries and libLLVM-15, and run in a child process
// (a crash here is a failed check, not a crash of `descent lab`). `harness CASE PROGRAMS_DIR`
// prints one line: "PASS" or "FAIL: why".
//   reduces_mul     after the pass no function of the lab's programs multiplies by 2^k
//   reduces_div     ... and none divides (sdiv) by 2^k, 1 <= k <= 62
//   keeps_results   the lab's programs and 200 seeded random ones print the same on the JIT
//                   at -O0 with the pass (llvm_backend/jit.h's set_ir_transform) as on the
//                   AST walker, negative numbers, 2^62 and wrap-around included
//   reports_preserved  run() returns none() (or less than all) when it changed a function
//                   and all() when it did not
// Every case verifies the module after the pass: a broken module fails with the verifier's
// message.
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "llvm_backend/codegen.h"
#include "llvm_backend/jit.h"
#include "strength_lab.h"

using namespace descent;

namespace {

int fail(const std::string& why) {
  std::printf("FAIL: %s\n", why.c_str());
  return 0;
}

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

// Runs the student's pass on every function of m through the new pass manager, then the
// verifier: "" or why the module is broken.
std::string run_pass(llvm::Module& m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(StrengthReducePass());
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
  return broken(m);
}

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
int check_reduced(const std::vector<Source>& programs, bool (*left)(const llvm::Instruction&),
                  const char* what) {
  int before = 0;
  for (const auto& src : programs) {
    auto c = compile(src.name, src.text);
    if (!c->error.empty()) return fail(src.name + ": " + c->error);
    std::string error;
    llvmbe::IRModule ir = llvmbe::generate_ir(*c->program, c->module, {}, &error);
    if (!ir) return fail(src.name + ": codegen failed: " + error);
    for (const auto& f : *ir.module)
      for (const auto& b : f)
        for (const auto& i : b) before += left(i);
    if (std::string why = run_pass(*ir.module); !why.empty()) return fail(src.name + ": " + why);
    for (const auto& f : *ir.module)
      for (const auto& b : f)
        for (const auto& i : b)
          if (left(i))
            return fail(src.name + ": @" + f.getName().str() + " still " + what + ": `" +
                        text_of(i) + "`");
  }
  if (before == 0) return fail(std::string("the lab's programs have nothing that ") + what);
  std::printf("PASS\n");
  return 0;
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

int keeps_results(const std::vector<Source>& lab) {
  std::vector<Source> programs = lab;
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 200; ++i) programs.push_back(random_program(rng, i + 1));
  auto walker = make_ast_walker();
  for (const auto& src : programs) {
    auto jit = llvmbe::make_jit_engine(0);
    jit->set_ir_transform([](llvm::Module& m) { return run_pass(m); });
    std::string want = run_on(*walker, src), got = run_on(*jit, src);
    if (size_t broke = got.find("jit: after your pass"); broke != std::string::npos)
      return fail(src.name + ": " + got.substr(broke + 5));
    if (want != got) {
      std::string diff = first_difference(want, got);
      return fail(src.name + ": " + (diff.empty() ? "the outputs differ" : diff) +
                  (src.name.rfind("random", 0) == 0 ? " (the program: " + shown(src.text, 400) + ")" : ""));
    }
  }
  std::printf("PASS\n");
  return 0;
}

int reports_preserved(const std::vector<Source>& programs) {
  bool saw_same = false;
  for (const auto& src : programs) {
    auto c = compile(src.name, src.text);
    if (!c->error.empty()) return fail(src.name + ": " + c->error);
    std::string error;
    llvmbe::IRModule ir = llvmbe::generate_ir(*c->program, c->module, {}, &error);
    if (!ir) return fail(src.name + ": codegen failed: " + error);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    for (auto& f : *ir.module) {
      if (f.isDeclaration()) continue;
      std::string before = text_of(f);
      StrengthReducePass pass;
      llvm::PreservedAnalyses pa = pass.run(f, fam);
      bool changed = text_of(f) != before;
      saw_same = saw_same || !changed;
      std::string where = src.name + ": @" + f.getName().str();
      if (changed && pa.areAllPreserved())
        return fail(where + " changed, but run() returned PreservedAnalyses::all(): the pass manager "
                            "would keep analyses of the old code (return none())");
      if (!changed && !pa.areAllPreserved())
        return fail(where + " did not change, but run() did not return PreservedAnalyses::all(): every "
                            "analysis of it would be thrown away and computed again for nothing");
    }
    if (std::string why = broken(*ir.module); !why.empty()) return fail(src.name + ": " + why);
  }
  if (!saw_same) return fail("every function changed; the lab's programs need one with nothing to reduce");
  std::printf("PASS\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: harness CASE PROGRAMS_DIR");
  std::string which = argv[1];
  std::vector<Source> programs = lab_programs(argv[2]);
  if (programs.empty()) return fail(std::string("no programs in ") + argv[2]);
  if (which == "reduces_mul") return check_reduced(programs, mul_by_power, "multiplies by a power of two");
  if (which == "reduces_div") return check_reduced(programs, sdiv_by_power, "divides (sdiv) by a power of two");
  if (which == "keeps_results") return keeps_results(programs);
  if (which == "reports_preserved") return reports_preserved(programs);
  return fail("unknown case " + which);
}
