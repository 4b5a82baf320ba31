// Machine code per target (llvm_backend/target.h): assembly, encodings, MIR after isel and
// after register allocation, object files that a C compiler links and runs.
// Most modules come from small hand-written LLVM IR; the last tests lower every golden program
// (tests/programs/*.ds) through codegen.h for every target, and link and run a few as
// standalone objects. They check key instructions and registers, never whole dumps: the exact
// code LLVM picks may change between patch releases.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "llvm_backend/codegen.h"
#include "llvm_backend/passes.h"
#include "llvm_backend/target.h"
#include "tests/programs_test.h"

using namespace descent::llvmbe;

namespace {

// add, compare, a loop and a call: sum of i*i + 10 for i in 0..n, passed to an external
// function. `addq $10` / `add ..., #10` / `addi ..., 10` / `i64.const 10; i64.add` show up.
const char* kLoopIR = R"IR(
declare i64 @ext(i64)

define i64 @sum_loop(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %sum = phi i64 [0, %entry], [%sum.next, %loop]
  %sq = mul i64 %i, %i
  %sum.sq = add i64 %sum, %sq
  %sum.next = add i64 %sum.sq, 10
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  %r = call i64 @ext(i64 %sum.next)
  ret i64 %r
}

define i64 @add10(i64 %x) {
  %y = add i64 %x, 10
  ret i64 %y
}
)IR";

// A whole program: fib(20) and a counted loop, printed with printf from main.
const char* kProgramIR = R"IR(
@.fmt = private unnamed_addr constant [9 x i8] c"%ld %ld\0A\00"

declare i32 @printf(ptr, ...)

define i64 @fib(i64 %n) {
entry:
  %small = icmp slt i64 %n, 2
  br i1 %small, label %base, label %rec
base:
  ret i64 %n
rec:
  %n1 = sub i64 %n, 1
  %f1 = call i64 @fib(i64 %n1)
  %n2 = sub i64 %n, 2
  %f2 = call i64 @fib(i64 %n2)
  %f = add i64 %f1, %f2
  ret i64 %f
}

define i64 @sum_squares(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %sum = phi i64 [0, %entry], [%sum.next, %loop]
  %sq = mul i64 %i, %i
  %t = add i64 %sum, %sq
  %sum.next = srem i64 %t, 1000003
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret i64 %sum.next
}

define i32 @main() {
  %f = call i64 @fib(i64 20)
  %s = call i64 @sum_squares(i64 1000)
  %r = call i32 (ptr, ...) @printf(ptr @.fmt, i64 %f, i64 %s)
  ret i32 0
}
)IR";

struct Parsed {
  std::unique_ptr<llvm::LLVMContext> context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module;
};

Parsed parse_ir(const char* text) {
  Parsed p;
  llvm::SMDiagnostic diagnostic;
  p.module = llvm::parseAssemblyString(text, diagnostic, *p.context);
  REQUIRE_MESSAGE(p.module, diagnostic.getMessage().str());
  return p;
}

bool have_cc() { return std::system("command -v cc >/dev/null 2>&1") == 0; }

// A scratch directory for objects and executables, removed with the test.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() /
             ("descent_" + tag + "_" + std::to_string(static_cast<long>(::getpid())))) {
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

struct RunOutput {
  std::string out;  // stdout
  int status = -1;  // exit status, -1 if it did not exit normally
};

RunOutput run_command(const std::string& command) {
  RunOutput r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) r.out.append(buffer, n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  return r;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A mnemonic as a whole word at the start of an instruction (after the indentation).
bool has_instruction(const std::string& assembly, const std::string& mnemonic) {
  std::regex pattern("(^|\\n)\\s+" + mnemonic + "(\\s|$)");
  return std::regex_search(assembly, pattern);
}

// The MIR instructions only: the text after each function's "body:" key.
std::string mir_bodies(const std::string& mir) {
  std::string out;
  size_t at = 0;
  while ((at = mir.find("body:", at)) != std::string::npos) {
    size_t end = mir.find("\n...", at);
    out += mir.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? mir.size() : end;
  }
  return out;
}

const std::regex kVirtualRegister("%[0-9]+");

struct TargetExpectation {
  std::string name;                   // what a user types
  std::string triple;                 // what it resolves to
  std::vector<std::string> mnemonics; // instructions the loop module must contain
  std::string physical_register;      // a register MIR names after allocation
};

const std::vector<TargetExpectation>& expectations() {
  static const std::vector<TargetExpectation> table = {
      {"x86-64", "x86_64-unknown-linux-gnu", {"addq", "retq"}, "$rdi"},
      {"arm64", "aarch64-unknown-linux-gnu", {"add", "ret"}, "$x0"},
      {"riscv64", "riscv64-unknown-linux-gnu", {"add", "mul", "ret"}, "$x10"},
      {"wasm32", "wasm32-unknown-unknown", {"i64.add", "i64.mul", "end_function"}, ""},
  };
  return table;
}

}  // namespace

TEST_CASE("supported targets and the resolver") {
  auto targets = supported_targets();
  REQUIRE(targets.size() >= 4);
  for (const auto& e : expectations()) {
    CAPTURE(e.triple);
    CHECK(std::find(targets.begin(), targets.end(), e.triple) != targets.end());
    std::string error;
    CHECK(resolve_target(e.triple, &error) == e.triple);
    CHECK(resolve_target(e.name, &error) == e.triple);
  }
  std::string error;
  CHECK(resolve_target("x86_64", &error) == "x86_64-unknown-linux-gnu");
  CHECK(resolve_target("AArch64", &error) == "aarch64-unknown-linux-gnu");
  CHECK(resolve_target("x86_64-pc-linux-gnu", &error) == "x86_64-pc-linux-gnu");
  CHECK_FALSE(resolve_target("host", &error).empty());

  for (const char* bad : {"mips", "sparc-sun-solaris", "x86", "wasm64", "bogus-thing"}) {
    CAPTURE(bad);
    error.clear();
    CHECK(resolve_target(bad, &error).empty());
    CHECK(contains(error, "unknown target '" + std::string(bad) + "'"));
    for (const auto& triple : targets) CHECK(contains(error, triple));
    CHECK(contains(error, "arm64"));
  }
  // Every entry point reports the same error and produces nothing.
  Parsed p = parse_ir(kLoopIR);
  error.clear();
  CHECK(emit_asm(*p.module, "mips", 2, false, &error).empty());
  CHECK(contains(error, "unknown target 'mips'"));
  error.clear();
  CHECK(emit_mir(*p.module, "mips", 2, "regalloc", &error).empty());
  CHECK(contains(error, "unknown target 'mips'"));
  std::vector<uint8_t> bytes;
  error.clear();
  CHECK_FALSE(emit_object_bytes(*p.module, "mips", 2, &bytes, &error));
  CHECK(contains(error, "supported targets"));
  CHECK(emit_asm(*p.module, "x86-64", 4, false, nullptr).empty());  // null error is fine
}

TEST_CASE("assembly for every target, from one module") {
  Parsed p = parse_ir(kLoopIR);
  for (const auto& e : expectations()) {
    for (int level : {0, 2}) {
      CAPTURE(e.triple);
      CAPTURE(level);
      std::string error;
      std::string assembly = emit_asm(*p.module, e.name, level, false, &error);
      CHECK(error.empty());
      REQUIRE_FALSE(assembly.empty());
      CHECK(contains(assembly, "sum_loop"));
      CHECK(contains(assembly, "add10"));
      for (const auto& mnemonic : e.mnemonics) {
        CAPTURE(mnemonic);
        CHECK(has_instruction(assembly, mnemonic));
      }
      CHECK_FALSE(contains(assembly, "encoding:"));
    }
  }
  // The caller's module is read, never retargeted.
  CHECK(p.module->getTargetTriple().empty());
  CHECK(p.module->getDataLayoutStr().empty());
}

TEST_CASE("-O0 and -O2 code differ") {
  Parsed p = parse_ir(kLoopIR);
  std::string o0 = emit_asm(*p.module, "x86-64", 0, false, nullptr);
  std::string o2 = emit_asm(*p.module, "x86-64", 2, false, nullptr);
  REQUIRE_FALSE(o0.empty());
  REQUIRE_FALSE(o2.empty());
  CHECK(o0 != o2);
  // The fast allocator at -O0 keeps values in stack slots across the loop.
  CHECK(contains(o0, "(%rsp)"));
}

TEST_CASE("encoded bytes beside each instruction") {
  Parsed p = parse_ir(kLoopIR);
  std::string error;
  std::string x86 = emit_asm(*p.module, "x86_64", 2, true, &error);
  REQUIRE(error.empty());
  // add10: x + 10 -> leaq 10(%rdi), %rax. The encoding is on the same line.
  std::regex encoded_instruction(R"(\n\s+[a-z]+\s[^\n#]*#\s*encoding: \[0x[0-9a-f]{2}(,0x[0-9a-f]{2}|,[A-Z])*\])");
  CHECK(std::regex_search(x86, encoded_instruction));
  CHECK(std::regex_search(x86, std::regex(R"(retq\s+# encoding: \[0xc3\])")));
  // A call's target is not known until link time: its bytes show as a fixup.
  CHECK(contains(x86, "fixup A"));

  // Every instruction carries its bytes: on its own line, or on the next one when LLVM
  // has a comment of its own for the instruction ("8-byte Folded Spill").
  size_t instructions = 0, encoded = 0;
  size_t at = 0;
  while (at < x86.size()) {
    size_t end = x86.find('\n', at);
    if (end == std::string::npos) end = x86.size();
    std::string line = x86.substr(at, end - at);
    at = end + 1;
    if (line.size() > 1 && line[0] == '\t' && std::isalpha(static_cast<unsigned char>(line[1])))
      ++instructions;
    if (contains(line, "encoding: [")) ++encoded;
  }
  CHECK(instructions > 5);
  CHECK(encoded == instructions);

  for (const char* target : {"aarch64", "riscv64", "wasm32"}) {
    CAPTURE(target);
    std::string assembly = emit_asm(*p.module, target, 2, true, &error);
    CHECK(contains(assembly, "encoding: [0x"));
  }
  // A known encoding: aarch64 `ret` is d65f03c0, little-endian.
  CHECK(contains(emit_asm(*p.module, "aarch64", 2, true, nullptr),
                 "encoding: [0xc0,0x03,0x5f,0xd6]"));
}

TEST_CASE("MIR after instruction selection uses virtual registers") {
  Parsed p = parse_ir(kLoopIR);
  for (const auto& e : expectations()) {
    for (int level : {0, 2}) {
      CAPTURE(e.triple);
      CAPTURE(level);
      std::string error;
      std::string mir = emit_mir(*p.module, e.name, level, "finalize-isel", &error);
      CHECK(error.empty());
      REQUIRE_FALSE(mir.empty());
      CHECK(contains(mir, "name:            sum_loop"));
      CHECK(contains(mir, "name:            add10"));
      std::string bodies = mir_bodies(mir);
      CHECK(std::regex_search(bodies, kVirtualRegister));
      CHECK(std::regex_search(bodies, std::regex(R"(bb\.[0-9]+)")));
      CHECK(emit_mir(*p.module, e.name, level, "isel", nullptr) == mir);  // alias
    }
  }
}

TEST_CASE("MIR after register allocation uses physical registers") {
  Parsed p = parse_ir(kLoopIR);
  for (const auto& e : expectations()) {
    for (int level : {0, 2}) {
      CAPTURE(e.triple);
      CAPTURE(level);
      std::string error;
      std::string mir = emit_mir(*p.module, e.name, level, "regalloc", &error);
      CHECK(error.empty());
      REQUIRE_FALSE(mir.empty());
      std::string bodies = mir_bodies(mir);
      if (!e.physical_register.empty()) {
        CHECK(contains(bodies, e.physical_register));
        CHECK_FALSE(std::regex_search(bodies, kVirtualRegister));
      } else {
        // WebAssembly has no registers: values live in numbered locals instead.
        CHECK(contains(bodies, "LOCAL_GET_I64"));
      }
    }
  }
}

TEST_CASE("compact MIR keeps names and bodies only") {
  Parsed p = parse_ir(kLoopIR);
  std::string mir = emit_mir(*p.module, "x86-64", 2, "regalloc", nullptr);
  REQUIRE_FALSE(mir.empty());
  std::string compact = compact_mir(mir);
  CHECK(compact.rfind("; function sum_loop\nbb.0.entry:\n", 0) == 0);
  CHECK(contains(compact, "\n; function add10\n"));
  CHECK(contains(compact, "RET 0"));
  CHECK_FALSE(contains(compact, "frameInfo:"));
  CHECK_FALSE(contains(compact, "..."));
  CHECK(compact.size() < mir.size() / 2);
  CHECK(compact_mir("not mir") == "not mir");
}

TEST_CASE("several threads generate code for several targets at once") {
  Parsed p = parse_ir(kLoopIR);
  const auto& table = expectations();
  std::vector<std::string> sequential, parallel(table.size());
  for (const auto& e : table)
    sequential.push_back(emit_asm(*p.module, e.name, 2, true, nullptr) +
                         emit_mir(*p.module, e.name, 2, "regalloc", nullptr));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < table.size(); ++i)
    threads.emplace_back([&, i] {
      parallel[i] = emit_asm(*p.module, table[i].name, 2, true, nullptr) +
                    emit_mir(*p.module, table[i].name, 2, "regalloc", nullptr);
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < table.size(); ++i) {
    CAPTURE(table[i].triple);
    CHECK_FALSE(parallel[i].empty());
    CHECK(parallel[i] == sequential[i]);
  }
}

TEST_CASE("MIR after any codegen pass, and unknown or absent passes") {
  Parsed p = parse_ir(kLoopIR);
  std::string error;
  CHECK_FALSE(emit_mir(*p.module, "x86-64", 2, "machine-scheduler", &error).empty());
  CHECK(error.empty());
  CHECK(emit_mir(*p.module, "x86-64", 2, "no-such-pass", &error).empty());
  CHECK(contains(error, "unknown codegen pass 'no-such-pass'"));
  // The greedy allocator does not run at -O0.
  error.clear();
  CHECK(emit_mir(*p.module, "aarch64", 0, "greedy", &error).empty());
  CHECK(contains(error, "does not run for aarch64-unknown-linux-gnu at -O0"));
}

TEST_CASE("object files: format per target") {
  Parsed p = parse_ir(kLoopIR);
  for (const auto& e : expectations()) {
    CAPTURE(e.triple);
    std::vector<uint8_t> bytes;
    std::string error;
    REQUIRE(emit_object_bytes(*p.module, e.name, 2, &bytes, &error));
    CHECK(error.empty());
    REQUIRE(bytes.size() > 4);
    if (e.triple.rfind("wasm", 0) == 0)
      CHECK(std::string(bytes.begin(), bytes.begin() + 4) == std::string("\0asm", 4));
    else
      CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "\x7f" "ELF");
  }
  std::string error;
  CHECK_FALSE(emit_object(*p.module, "x86-64", 2, "/nonexistent-dir/x.o", &error));
  CHECK(contains(error, "cannot write '/nonexistent-dir/x.o'"));
}

TEST_CASE("an object file links with cc and runs") {
  if (!have_cc()) {
    MESSAGE("skipped: no C compiler (cc) on PATH to link the object file with");
    return;
  }
  Parsed p = parse_ir(kProgramIR);
  ScratchDir dir("target_test");
  for (int level : {0, 2}) {
    CAPTURE(level);
    std::string object = (dir.path / ("prog" + std::to_string(level) + ".o")).string();
    std::string exe = (dir.path / ("prog" + std::to_string(level))).string();
    std::string error;
    REQUIRE_MESSAGE(emit_object(*p.module, "host", level, object, &error), error);
    RunOutput link = run_command("cc '" + object + "' -o '" + exe + "' 2>&1");
    REQUIRE_MESSAGE(link.status == 0, link.out);
    RunOutput run = run_command("'" + exe + "'");
    CHECK(run.status == 0);
    // fib(20); the sum of i*i for i < 1000 (332833500) mod 1000003.
    CHECK(run.out == "6765 832504\n");
  }
}

TEST_CASE("a module made for this machine retargets cleanly") {
  // The JIT may stamp host CPU attributes on functions; other targets must not see them.
  const char* ir = R"IR(
define i64 @f(i64 %x) #0 {
  %y = add i64 %x, 10
  ret i64 %y
}
attributes #0 = { "target-cpu"="skylake" "target-features"="+avx2,+fma" "tune-cpu"="skylake" }
)IR";
  Parsed p = parse_ir(ir);
  p.module->setTargetTriple("x86_64-pc-linux-gnu");
  p.module->setDataLayout("e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128");
  for (const auto& e : expectations()) {
    CAPTURE(e.triple);
    std::string error;
    CHECK_FALSE(emit_asm(*p.module, e.name, 2, true, &error).empty());
    CHECK(error.empty());
  }
  CHECK(p.module->getTargetTriple() == "x86_64-pc-linux-gnu");
  CHECK(p.module->getFunction("f")->hasFnAttribute("target-cpu"));
}

TEST_CASE("invalid IR is an error, not a crash") {
  llvm::LLVMContext context;
  llvm::Module module("broken", context);
  auto* type = llvm::FunctionType::get(llvm::Type::getInt64Ty(context), false);
  auto* function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "f", module);
  llvm::BasicBlock::Create(context, "entry", function);  // no terminator
  std::string error;
  CHECK(emit_asm(module, "x86-64", 2, false, &error).empty());
  CHECK(contains(error, "invalid LLVM IR"));
  error.clear();
  CHECK(emit_mir(module, "riscv64", 2, "regalloc", &error).empty());
  CHECK(contains(error, "invalid LLVM IR"));
}

TEST_CASE("a module without definitions has empty machine code") {
  Parsed p = parse_ir("declare i64 @ext(i64)\n");
  std::string error;
  CHECK(emit_mir(*p.module, "aarch64", 2, "regalloc", &error).empty());
  CHECK(error.empty());
  CHECK_FALSE(emit_asm(*p.module, "aarch64", 2, false, &error).empty());  // directives only
  CHECK(error.empty());
}

// ---- Descent programs, through codegen.h ----

namespace {

// One golden program parsed and checked on its own.
struct CheckedProgram {
  descent::Module module;
  std::shared_ptr<descent::Program> program;
};

std::unique_ptr<CheckedProgram> check_program(const std::string& text, const std::string& name) {
  auto c = std::make_unique<CheckedProgram>();
  auto source = std::make_shared<descent::SourceFile>(name, text);
  std::vector<descent::Diagnostic> diagnostics;
  c->program = std::make_shared<descent::Program>(descent::parse(source, diagnostics));
  descent::GlobalStore globals;
  globals.resize(c->module.globals.size());
  if (!diagnostics.empty() || !descent::check(*c->program, c->module, globals.defined, diagnostics))
    return nullptr;
  c->module.programs.push_back(c->program);
  return c;
}

// The instructions a function of that target ends with: a return, or a tail call's jump.
std::vector<std::string> exit_mnemonics(const std::string& triple) {
  if (triple.rfind("x86_64", 0) == 0) return {"retq", "jmp"};
  if (triple.rfind("aarch64", 0) == 0) return {"ret", "b"};
  if (triple.rfind("riscv64", 0) == 0) return {"ret", "tail"};
  return {"end_function"};
}

size_t count_instructions(const std::string& assembly) {
  std::regex instruction("\\n\\t[a-z]");
  return std::distance(std::sregex_iterator(assembly.begin(), assembly.end(), instruction),
                       std::sregex_iterator());
}

}  // namespace

TEST_CASE("every golden program has assembly and MIR for every target") {
  int programs = 0;
  for (const auto& path : descent::testing::ds_files("programs")) {
    std::string name = path.filename().string();
    CAPTURE(name);
    auto checked = check_program(descent::testing::read_text(path.string()), name);
    if (!checked) continue;  // the walker's own tests cover programs that do not compile
    std::string error;
    IRGenOptions options;
    IRModule ir = generate_ir(*checked->program, checked->module, options, &error);
    REQUIRE_MESSAGE(ir, error);
    optimize(*ir.module, 2, /*capture=*/false);
    ++programs;
    for (const auto& triple : supported_targets()) {
      CAPTURE(triple);
      std::string assembly = emit_asm(*ir.module, triple, 2, true, &error);
      REQUIRE_MESSAGE(!assembly.empty(), error);
      CHECK(contains(assembly, options.entry));
      auto exits = exit_mnemonics(triple);
      CHECK(std::any_of(exits.begin(), exits.end(),
                        [&](const std::string& m) { return has_instruction(assembly, m); }));
      CHECK(count_instructions(assembly) >= 5);
      CHECK(contains(assembly, "encoding: [0x"));
      std::string mir = emit_mir(*ir.module, triple, 2, "regalloc", &error);
      CHECK_MESSAGE(!mir.empty(), error);
    }
  }
  CHECK(programs > 20);
}

TEST_CASE("golden programs built as objects link with cc and print what they expect") {
  if (!have_cc()) {
    MESSAGE("skipped: no C compiler (cc) on PATH to link the object files with");
    return;
  }
  ScratchDir dir("target_programs");
  for (const char* file : {"fib_recursive.ds", "mandel_small.ds", "float_repr.ds",
                           "int_min_div_minus_one.ds", "collatz.ds"}) {
    CAPTURE(file);
    std::string text = descent::testing::read_text(
        (std::filesystem::path(DESCENT_TESTS_DIR) / "programs" / file).string());
    REQUIRE_FALSE(text.empty());
    auto expected = descent::testing::parse_expectations(text);
    auto checked = check_program(text, file);
    REQUIRE(checked);
    IRGenOptions options;
    options.standalone = true;
    std::string error;
    IRModule ir = generate_ir(*checked->program, checked->module, options, &error);
    REQUIRE_MESSAGE(ir, error);
    optimize(*ir.module, 2, /*capture=*/false);
    std::string object = (dir.path / (std::string(file) + ".o")).string();
    std::string exe = (dir.path / file).string() + ".exe";
    REQUIRE_MESSAGE(emit_object(*ir.module, "host", 2, object, &error), error);
    RunOutput link = run_command("cc '" + object + "' -o '" + exe + "' -lm 2>&1");
    REQUIRE_MESSAGE(link.status == 0, link.out);
    RunOutput run = run_command("'" + exe + "' 2>/dev/null");
    std::string want;
    for (const auto& line : expected.output) want += line + "\n";
    CHECK(run.out == want);
    CHECK(run.status == expected.exit_code);
  }
}
