// fuzz_frontend: the bytes are a Descent program. It is compiled (lang/: parse + check) and,
// when it compiles, run on the AST walker, the stack VM and the register VM, each in a fresh
// module, with a step budget. The engines must agree: the same output and the same run-time
// error (location and message). A run that hits the budget stops at a different point on
// each engine (they count steps in different units), so then each output must only be a
// prefix of the other's. Compile and run-time errors are fine; a crash, a sanitizer report or
// a disagreement is a bug. Tensor programs run on the walker alone (the VMs refuse tensor
// code by design, and no tensor runtime is attached here: that is fuzz_repl's ground).
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "lang/engine.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "vm/reg_vm.h"
#include "vm/stack_vm.h"

using namespace descent;

namespace {

constexpr uint64_t kStepLimit = 20000;

struct Run {
  std::string engine;
  bool compiled = false;
  bool uses_tensors = false;
  std::string output;
  std::string error;  // "L:C: message" of a run-time error, or ""
  bool interrupted() const { return error.find("interrupted") != std::string::npos; }
  std::string describe() const {
    return engine + (compiled ? "" : " (did not compile)") + "\noutput:\n" + output +
           "\nerror: " + error;
  }
};

Run run(const std::string& text, std::unique_ptr<Engine> engine) {
  Run r;
  r.engine = engine->name();
  auto src = std::make_shared<SourceFile>("fuzz.ds", text);
  std::vector<Diagnostic> diags;
  auto program = std::make_shared<Program>(parse(src, diags));
  Module module;
  GlobalStore globals;
  globals.resize(module.globals.size());
  if (!diags.empty() || !check(*program, module, globals.defined, diags)) return r;
  module.programs.push_back(program);
  globals.resize(module.globals.size());
  r.compiled = true;
  r.uses_tensors = program->uses_tensors;
  if (r.uses_tensors && r.engine != "ast") return r;
  RunOptions opts;
  opts.out = [&r](std::string_view s) { r.output += s; };
  opts.step_limit = kStepLimit;
  RunResult rr = engine->run(*program, module, globals, opts);
  if (!rr.ok)
    r.error = std::to_string(rr.error.loc.line) + ":" + std::to_string(rr.error.loc.col) + ": " +
              rr.error.message;
  return r;
}

bool is_prefix(const std::string& a, const std::string& b) { return b.compare(0, a.size(), a) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  Run ast = run(text, make_ast_walker());
  if (!ast.compiled || ast.uses_tensors) return 0;
  // Both VMs as the REPL runs them, plus the plain (unfused) stack VM and a register VM with
  // the smallest register file, whose allocator must spill.
  for (auto* make : {+[] { return make_stack_vm(); }, +[] { return make_stack_vm(false); },
                     +[] { return make_reg_vm(); }, +[] { return make_reg_vm(3); }}) {
    Run vm = run(text, make());
    if (!vm.compiled) fuzz::fail("the walker compiled it, " + vm.engine + " did not");
    if (ast.interrupted() || vm.interrupted()) {
      // Stopped by the budget: both printed a prefix of the same whole output.
      if (!is_prefix(ast.output, vm.output) && !is_prefix(vm.output, ast.output))
        fuzz::fail("engines disagree (before a step-budget stop)", ast.describe(), vm.describe());
    } else if (ast.output != vm.output || ast.error != vm.error) {
      fuzz::fail("engines disagree", ast.describe(), vm.describe());
    }
  }
  return 0;
}
