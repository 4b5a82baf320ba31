// Codegen (AST -> LLVM IR) and the optimisation pipeline: key instructions, names that read
// like the program, the pass snapshots and their diff. They check instructions, never whole
// dumps: the exact text LLVM prints may change between patch releases.
#include "llvm_backend/codegen.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "lang/parser.h"
#include "lang/sema.h"
#include "llvm_backend/passes.h"
#include "llvm_backend/runtime.h"

using namespace descent;
using namespace descent::llvmbe;

namespace {

// A checked program in its own Module: what the Session hands the backend.
struct Checked {
  Module module;
  std::shared_ptr<Program> program;

  explicit Checked(const std::string& text, const std::string& name = "test.ds") {
    auto src = std::make_shared<SourceFile>(name, text);
    std::vector<Diagnostic> diags;
    program = std::make_shared<Program>(parse(src, diags));
    GlobalStore g;
    REQUIRE(diags.empty());
    REQUIRE(check(*program, module, g.defined, diags));
    module.programs.push_back(program);
  }

  std::string ir(int level = -1) {
    std::string error;
    std::string text = dump_llvm(*program, module, level < 0 ? 0 : level, level >= 0, &error);
    REQUIRE(error == "");
    return text;
  }
};

bool has(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern));
}

// The body of one function in a module's text.
std::string function_text(const std::string& ir, const std::string& name) {
  size_t at = ir.find("@" + name + "(");
  while (at != std::string::npos && ir.rfind("define", at) < ir.rfind('\n', at)) {
    size_t line = ir.rfind('\n', at);
    if (ir.compare(line + 1, 6, "define") == 0) break;
    at = ir.find("@" + name + "(", at + 1);
  }
  if (at == std::string::npos) return "";
  size_t start = ir.rfind('\n', at) + 1;
  size_t end = ir.find("\n}\n", at);
  return ir.substr(start, end - start + 2);
}

const char* kSumSquares =
    "fn sum_squares(n: int) -> int {\n"
    "  sum = 0\n"
    "  for i in 0..n {\n"
    "    sum = (sum + i * i) % 1000003\n"
    "  }\n"
    "  return sum\n"
    "}\n"
    "print(sum_squares(10))\n";

}  // namespace

TEST_CASE("ir: wrapping arithmetic: add, sub, mul and neg carry no nsw/nuw") {
  Checked c("fn f(a: int, b: int) -> int { return -(a + b) * (a - b) }\nprint(f(1, 2))\n");
  std::string f = function_text(c.ir(), "ds.f");
  CHECK(has(f, R"(= add i64 %a\d*, %b\d*)"));
  CHECK(has(f, R"(= sub i64 %a\d*, %b\d*)"));
  CHECK(has(f, R"(= sub i64 0, %add)"));  // negation wraps: INT_MIN stays INT_MIN
  CHECK(has(f, R"(= mul i64 %neg, %sub)"));
  CHECK_FALSE(has(f, "nsw|nuw"));
  // Still none after the optimiser, which must not invent them either.
  CHECK_FALSE(has(function_text(c.ir(2), "ds.f"), "nsw|nuw"));
}

TEST_CASE("ir: division checks zero, then divides by 1 instead of -1 and negates") {
  Checked c("fn q(a: int, b: int) -> int { return a / b }\nfn r(a: int, b: int) -> int { return a % b }\n"
            "fn h(a: int) -> int { return a / 2 + a % 7 }\nprint(q(1, 2), r(1, 2), h(3))\n");
  std::string ir = c.ir();
  std::string q = function_text(ir, "ds.q");
  CHECK(has(q, R"(%is.zero = icmp eq i64 %b\d*, 0)"));
  CHECK(has(q, R"(br i1 %is.zero, label %div.zero, label %div.ok)"));
  CHECK(has(q, R"(div.zero:[^\n]*\n\s+call void @descent_rt_error\(i32 1, i32 0, i32 1, i32 40, ptr null\)\s+unreachable)"));
  CHECK(has(q, R"(%is.minus.one = icmp eq i64 %b\d*, -1)"));
  CHECK(has(q, R"(%divisor = select i1 %is.minus.one, i64 1, i64 %b\d*)"));
  CHECK(has(q, R"(%quot = sdiv i64 %a\d*, %divisor)"));
  CHECK(has(q, R"(%div = select i1 %is.minus.one, i64 %neg, i64 %quot)"));
  std::string r = function_text(ir, "ds.r");
  CHECK(has(r, R"(%rem = srem i64 %a\d*, %divisor)"));  // a % 1 == 0 covers b == -1
  // A constant divisor needs no check at all.
  std::string h = function_text(ir, "ds.h");
  CHECK(has(h, R"(sdiv i64 %a\d*, 2)"));
  CHECK(has(h, R"(srem i64 %a\d*, 7)"));
  CHECK_FALSE(has(h, "descent_rt_error"));
  // The runtime error's declaration: it never returns.
  CHECK(has(ir, R"(declare void @descent_rt_error\(i32, i32, i32, i32, ptr\) #\d+)"));
}

TEST_CASE("ir: variables read like the program: allocas, %x.next, and phis after SROA") {
  Checked c(kSumSquares);
  std::string o0 = function_text(c.ir(), "ds.sum_squares");
  CHECK(has(o0, R"(define i64 @ds.sum_squares\(i64 %n, i32 %depth\))"));
  CHECK(has(o0, R"(%n.addr = alloca i64)"));
  CHECK(has(o0, R"(%sum = alloca i64)"));
  CHECK(has(o0, R"(%i.iter = alloca i64)"));
  CHECK(has(o0, R"(%sum.next = srem i64 %add, 1000003)"));
  CHECK(has(o0, R"(store i64 %sum.next, ptr %sum)"));
  CHECK(has(o0, R"(%i.end = load i64, ptr %n.addr)"));
  CHECK(has(o0, R"(for.cond:)"));
  CHECK(has(o0, R"(%for.more = icmp slt i64 %i\d*, %i.end)"));
  // The back-edge polls: the runtime may want to see it (interrupt, step limit).
  CHECK(has(o0, R"(for.next:[^]*%poll = load atomic i8, ptr @descent_rt_poll monotonic[^]*call void @descent_rt_tick\(i32 0, i32 3, i32 3\))"));
  // After the pipeline the variable is a phi named after it, fed by %sum.next.
  std::string o2 = function_text(c.ir(2), "ds.sum_squares");
  CHECK(has(o2, R"(%sum\.\d+ = phi i64 \[[^\n]*%sum.next)"));
  CHECK_FALSE(has(o2, "alloca"));
}

TEST_CASE("ir: calls compare the depth with the call limit, pass depth + 1; top-level code passes 1") {
  Checked c("fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(5))\n");
  std::string ir = c.ir();
  std::string fib = function_text(ir, "ds.fib");
  CHECK(has(fib, R"(%depth.next = add i32 %depth, 1)"));
  CHECK(has(fib, R"(%call.limit = load atomic i32, ptr @descent_rt_call_limit monotonic)"));
  CHECK(has(fib, R"(%call.watched = icmp sge i32 %depth, %call.limit)"));
  CHECK(has(fib, R"(call.check:[^\n]*\n\s+call void @descent_rt_call_check\(i32 %depth, i32 0, i32 3, i32 10\))"));
  CHECK(has(fib, R"(%fib = call i64 @ds.fib\(i64 %sub, i32 %depth.next\))"));
  CHECK(has(fib, R"(%lt = icmp slt i64 %n\d*, 2)"));
  std::string main = function_text(ir, "descent_main");
  CHECK(has(main, R"(call void @descent_rt_call_check\(i32 0, i32 0, i32 5, i32 7\))"));
  CHECK(has(main, R"(call i64 @ds.fib\(i64 5, i32 1\))"));  // top-level code is not a frame
  CHECK(has(main, R"(call void @descent_rt_print_int\(i64 %fib\))"));
  CHECK(has(main, R"(call void @descent_rt_print_end\(\))"));
  // A standalone program has no watcher: the limit is the constant 10,000, and what is left
  // after -O2 is the depth check itself.
  IRGenOptions o;
  o.standalone = true;
  std::string error;
  IRModule m = generate_ir(*c.program, c.module, o, &error);
  REQUIRE(m);
  optimize(*m.module, 2, false);
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->print(os, nullptr);
  os.flush();
  std::string sfib = function_text(text, "ds.fib");
  CHECK(has(sfib, R"(i32 (10000|9999))"));
  CHECK_FALSE(has(sfib, "descent_rt_call_limit|descent_rt_poll"));
}

TEST_CASE("ir: only a function too big for 10,000 frames to surely fit checks the stack") {
  std::string fn = "fn big(n: int) -> int {\n";
  for (int i = 0; i < 900; ++i) fn += "  v" + std::to_string(i) + " = n + 1\n";
  fn += "  if n == 0 { return v1 }\n  return big(n - 1)\n}\nfn small(n: int) -> int { return small(n) }\nprint(big(3))\n";
  Checked c(fn);
  std::string ir = c.ir();
  std::string big = function_text(ir, "ds.big");
  CHECK(has(big, R"(%frame = call ptr @llvm.frameaddress.p0\(i32 0\))"));
  CHECK(has(big, R"(%stack.limit = load ptr, ptr @descent_rt_stack_limit)"));
  CHECK(has(big, R"(call void @descent_rt_error\(i32 3, i32 0, i32 1, i32 4, ptr null\))"));
  CHECK_FALSE(has(function_text(ir, "ds.small"), "frameaddress"));
}

TEST_CASE("ir: globals, their defined flags, and the run-time check inside functions") {
  Checked c("limit = 10\nfn f() -> int { return limit + 1 }\nok = f() > 3\nprint(ok)\n");
  std::string ir = c.ir();
  CHECK(has(ir, R"(@ds.limit = external global i64)"));
  CHECK(has(ir, R"(@ds.limit.defined = external global i8)"));
  CHECK(has(ir, R"(@ds.ok = external global i8)"));  // a bool global is a byte
  std::string main = function_text(ir, "descent_main");
  CHECK(has(main, R"(store i64 10, ptr @ds.limit)"));
  CHECK(has(main, R"(store i8 1, ptr @ds.limit.defined)"));
  std::string f = function_text(ir, "ds.f");
  CHECK(has(f, R"(%limit.defined = load i8, ptr @ds.limit.defined)"));
  CHECK(has(f, R"(br i1 %limit.undefined, label %undefined, label %limit.ok)"));
  CHECK(has(f, R"(call void @descent_rt_error\(i32 5, i32 0, i32 2, i32 24, ptr @name.limit\))"));
  // A standalone program defines them instead (and the runtime, and main).
  std::string error;
  IRGenOptions o;
  o.standalone = true;
  IRModule m = generate_ir(*c.program, c.module, o, &error);
  REQUIRE(m);
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->print(os, nullptr);
  os.flush();
  CHECK(has(text, R"(@ds.limit = internal global i64 0)"));
  CHECK(has(text, R"(define i32 @main\(\))"));
  CHECK(has(text, R"(define internal void @descent_rt_print_float\(double)"));
  CHECK(has(text, R"(test.ds:2:24: error: undefined variable 'limit'\\0A)"));
}

TEST_CASE("ir: int() checks the range, print evaluates every argument first, && short-circuits") {
  Checked c("fn f(x: float, p: bool) -> int {\n  if p && x > 0.0 { print(x, \"s\", int(x)) }\n  return int(x)\n}\nprint(f(1.5, true))\n");
  std::string f = function_text(c.ir(), "ds.f");
  CHECK(has(f, R"(fcmp oge double %x\d*, 0xC3E0000000000000)"));
  CHECK(has(f, R"(fcmp olt double %x\d*, 0x43E0000000000000)"));
  CHECK(has(f, R"(bad.conversion:[^\n]*\n\s+call void @descent_rt_error\(i32 2, i32 0, i32 2, i32 35, ptr null\))"));
  CHECK(has(f, R"(%int = fptosi double %x\d* to i64)"));
  CHECK(has(f, R"(and.rhs:)"));
  CHECK(has(f, R"(%and = phi i1 \[ false, %entry \])"));
  // int(x) is computed before any of the line is printed.
  CHECK(has(f, R"(fptosi[^]*print_float[^]*print_space[^]*print_str[^]*print_space[^]*print_int[^]*print_end)"));
}

TEST_CASE("ir: the REPL view declares earlier functions; echo prints top-level values") {
  Checked c("fn sq(n: int) -> int { return n * n }\n");
  auto src = std::make_shared<SourceFile>("line2", "sq(3) + 1\n");
  std::vector<Diagnostic> diags;
  auto line = std::make_shared<Program>(parse(src, diags));
  GlobalStore g;
  REQUIRE(check(*line, c.module, g.defined, diags));
  c.module.programs.push_back(line);
  IRGenOptions o;
  o.echo = true;
  std::string error;
  IRModule m = generate_ir(*line, c.module, o, &error);
  REQUIRE(m);
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->print(os, nullptr);
  os.flush();
  CHECK(has(text, R"(declare i64 @ds.sq\(i64, i32\))"));
  CHECK_FALSE(has(text, R"(define i64 @ds.sq)"));
  CHECK(has(text, R"(%add = add i64 %sq, 1\s+call void @descent_rt_print_int\(i64 %add\))"));
}

TEST_CASE("passes: O2 runs the known passes, each snapshot is the module after it") {
  Checked c(kSumSquares);
  std::string error;
  auto snaps = dump_passes(*c.program, c.module, 2, &error);
  REQUIRE(error == "");
  REQUIRE(snaps.size() > 20);
  for (const char* name : {"SROAPass", "InstCombinePass", "SimplifyCFGPass", "GVNPass", "LICMPass"})
    CHECK_MESSAGE(find_snapshot(snaps, name) != nullptr, name);
  const PassSnapshot* sroa = find_snapshot(snaps, "SROAPass");
  REQUIRE(sroa);
  CHECK(sroa->changed);  // the allocas become phis
  CHECK(sroa->unit == "ds.sum_squares");
  CHECK(has(function_text(sroa->ir, "ds.sum_squares"), R"(%sum\.\d+ = phi i64)"));
  // Reruns are numbered; the last snapshot is what llvm-opt shows.
  CHECK(find_snapshot(snaps, "InstCombinePass#2") != nullptr);
  CHECK(snaps.back().ir == c.ir(2));
  int changed = 0;
  for (const auto& s : snaps) {
    CHECK(s.pass.find("PassManager") == std::string::npos);
    CHECK(s.pass.find("Adaptor") == std::string::npos);
    changed += s.changed;
  }
  CHECK(changed >= 3);
  CHECK(changed < static_cast<int>(snaps.size()));
  CHECK(has(format_pass_list(snaps), R"((^|\n)SROAPass +ds.sum_squares +changed\n)"));
  // Nothing is captured unless asked for.
  IRModule m = generate_ir(*c.program, c.module, IRGenOptions{}, &error);
  REQUIRE(m);
  CHECK(optimize(*m.module, 2, false).empty());
}

TEST_CASE("passes: O0 keeps the code as generated; levels are clamped") {
  Checked c(kSumSquares);
  std::string error;
  auto o0 = dump_passes(*c.program, c.module, 0, &error);
  for (const auto& s : o0) CHECK_FALSE(s.pass == "SROAPass");
  CHECK(has(c.ir(0), "alloca"));
  CHECK(c.ir(9) == c.ir(3));
  auto o1 = dump_passes(*c.program, c.module, 1, &error);
  auto o3 = dump_passes(*c.program, c.module, 3, &error);
  CHECK(o1.size() < o3.size());
}

TEST_CASE("passes: diff_snapshots is a unified diff of two snapshots") {
  CHECK(diff_snapshots("a\nb\nc\n", "a\nb\nc\n") == "");
  CHECK(diff_snapshots("a\nb\nc\n", "a\nB\nc\n", "before", "after") ==
        "--- before\n+++ after\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  std::string many;
  for (int i = 0; i < 20; ++i) many += "l" + std::to_string(i) + "\n";
  std::string edited = many;
  edited.replace(edited.find("l2\n"), 3, "");
  edited += "tail\n";
  std::string d = diff_snapshots(many, edited);
  CHECK(d.find("-l2\n") != std::string::npos);
  CHECK(d.find("+tail\n") != std::string::npos);
  CHECK(d.find(" l10\n") == std::string::npos);  // far from both changes: not shown
  Checked c(kSumSquares);
  auto snaps = dump_passes(*c.program, c.module, 2);
  const PassSnapshot* sroa = find_snapshot(snaps, "SROAPass");
  REQUIRE(sroa);
  size_t i = static_cast<size_t>(sroa - snaps.data());
  std::string before = i ? snaps[i - 1].ir : c.ir();
  std::string diff = diff_snapshots(before, sroa->ir, "before SROAPass", "SROAPass");
  CHECK(has(diff, R"(\n-  %sum = alloca i64)"));
  CHECK(has(diff, R"(\n\+  %sum\.\d+ = phi i64)"));
}

TEST_CASE("ir: a target triple sets the module's triple and data layout") {
  Checked c(kSumSquares);
  IRGenOptions o;
  o.triple = "aarch64-unknown-linux-gnu";
  std::string error;
  IRModule m = generate_ir(*c.program, c.module, o, &error);
  REQUIRE(m);
  CHECK(m.module->getTargetTriple() == "aarch64-unknown-linux-gnu");
  CHECK(m.module->getDataLayout().getPointerSize() == 8);
  o.triple = "wasm32-unknown-unknown";
  m = generate_ir(*c.program, c.module, o, &error);
  REQUIRE(m);
  CHECK(m.module->getDataLayout().getPointerSize() == 4);
  o.triple = "no-such-machine";
  CHECK_FALSE(generate_ir(*c.program, c.module, o, &error));
  CHECK(error.find("unknown target") != std::string::npos);
}

TEST_CASE("ir: every golden program lowers to valid IR at every level") {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DESCENT_TESTS_DIR) + "/programs")) {
    if (entry.path().extension() != ".ds") continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    Checked c(ss.str(), entry.path().filename().string());
    for (int level = 0; level <= 3; ++level) {
      std::string error;
      std::string text = dump_llvm(*c.program, c.module, level, true, &error);
      INFO(entry.path().filename().string(), " -O", level);
      CHECK(error == "");
      CHECK(text.find("define void @descent_main()") != std::string::npos);
    }
    IRGenOptions o;
    o.standalone = true;
    std::string error;
    CHECK(generate_ir(*c.program, c.module, o, &error));
    CHECK(error == "");
  }
}

TEST_CASE("ir: top-level loop variables are SSA values in the loop, stored at ticks and the end") {
  // B2 at top level: after -O2 the loop body loads no global (only the runtime's poll flag);
  // total and i go to their globals before the tick call (which may stop the run) and
  // before the return. n, read by the loop bound, is promoted too.
  Checked c("n = 1000\ntotal = 0\nfor i in 0..n {\n  total = (total + i * i) % 1000003\n}\nprint(total)\n");
  std::string main = function_text(c.ir(2), "descent_main");
  REQUIRE(!main.empty());
  CHECK_FALSE(has(main, R"(load i64, ptr @ds\.)"));
  CHECK(has(main, R"(phi i64 .*total)"));
  std::string tick = main.substr(main.find("\ntick:"));
  tick = tick.substr(0, tick.find("descent_rt_tick"));
  CHECK(has(tick, R"(store i64 %.*, ptr @ds\.total)"));
  CHECK(has(tick, R"(store i64 %.*, ptr @ds\.i,)"));
  // A global a function reads stays a global: its store is in the loop, before the call.
  Checked f("fn peek() -> int { return seen }\nseen = 0\nfor t in 0..3 {\n  seen = seen + 10\n  print(peek())\n}\n");
  std::string fmain = function_text(f.ir(2), "descent_main");
  CHECK(has(fmain, R"(store i64 .*, ptr @ds\.seen)"));
  CHECK(has(fmain, R"(load i64, ptr @ds\.seen|call i64 @ds\.peek)"));
}
