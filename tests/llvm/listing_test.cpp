// Listings with source lines (llvm_backend/listing.h) and the Session's asm options: the
// directives filter on fixed assembly text (deterministic), then the real views: debug
// locations from codegen reach the IR (!dbg) and the assembly (.loc), the printed IR stays
// what it was without them, and each listing line knows its source line.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "lang/text.h"
#include "llvm_backend/codegen.h"
#include "llvm_backend/listing.h"
#include "llvm_backend/passes.h"
#include "pipeline/pipeline.h"
#include "tests/programs_test.h"

using namespace descent;
using descent::llvmbe::asm_listing;

namespace {

// What LLVM prints for x86-64 with line tables, cut down: a function with a string
// constant, a used and an unused local label, a fixup note, DWARF at the end.
const char* kAsm =
    "\t.text\n"
    "\t.file\t\"p.ds\"\n"
    "\t.globl\tds.f                            # -- Begin function ds.f\n"
    "\t.p2align\t4, 0x90\n"
    "ds.f:                                   # @ds.f\n"
    ".Lfunc_begin0:\n"
    "\t.loc\t1 2 0                           # p.ds:2:0\n"
    "\t.cfi_startproc\n"
    "# %bb.0:\n"
    "\t.loc\t1 3 9 prologue_end\n"
    "\tcmpq\t$2, %rdi\n"
    "\tjge\t.LBB0_2                         # encoding: [0x7d,A]\n"
    "                                        #   fixup A - offset: 1, value: .LBB0_2-1\n"
    "# %bb.1:\n"
    "\t.loc\t1 4 5\n"
    "\tleaq\t.L.str(%rip), %rdi\n"
    ".LBB0_2:\n"
    "\t.loc\t1 0 5\n"
    "\tretq\n"
    ".Lfunc_end0:\n"
    "\t.size\tds.f, .Lfunc_end0-ds.f\n"
    "\t.cfi_endproc\n"
    "                                        # -- End function\n"
    "\t.section\t.rodata.str1.1,\"aMS\",@progbits,1\n"
    ".L.str:\n"
    "\t.asciz\t\"hi\"\n"
    ".L.unused:\n"
    "\t.asciz\t\"never read\"\n"
    "\t.section\t.debug_abbrev,\"\",@progbits\n"
    "\t.byte\t1                               # Abbreviation Code\n"
    "\t.section\t\".note.GNU-stack\",\"\",@progbits\n";

std::vector<std::string> lines_of(const std::string& text) { return split_lines(text); }

int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The source line of the first listing line that contains `needle` (-1: no such line).
int source_of(const std::string& text, const std::vector<int>& sources, const std::string& needle) {
  auto lines = lines_of(text);
  for (size_t i = 0; i < lines.size() && i < sources.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return sources[i];
  return -1;
}

const char* kFib =
    "fn fib(n: int) -> int {\n"   // 1
    "  if n < 2 { return n }\n"   // 2
    "  return fib(n - 1) + fib(n - 2)\n"  // 3
    "}\n"                          // 4
    "x = 7\n"                      // 5
    "print(fib(x) * 3)\n";         // 6

}  // namespace

TEST_CASE("asm listing: directives and unused local labels go, code, used labels and data stay") {
  llvmbe::Listing l = asm_listing(kAsm, /*directives=*/false);
  CHECK(l.text ==
        "ds.f:                                   # @ds.f\n"
        "# %bb.0:\n"
        "\tcmpq\t$2, %rdi\n"
        "\tjge\t.LBB0_2                         # encoding: [0x7d,A]\n"
        "                                        #   fixup A - offset: 1, value: .LBB0_2-1\n"
        "# %bb.1:\n"
        "\tleaq\t.L.str(%rip), %rdi\n"
        ".LBB0_2:\n"
        "\tretq\n"
        "                                        # -- End function\n"
        ".L.str:\n"
        "\t.asciz\t\"hi\"\n");
  // Each instruction has the line of the .loc before it; the fixup its instruction's; a
  // .loc of line 0 (code of no line) gives 0.
  CHECK(l.lines == std::vector<int>{0, 0, 3, 3, 3, 0, 4, 0, 0, 0, 0, 0});
}

TEST_CASE("asm listing: with directives every line stays, with the same source lines") {
  llvmbe::Listing l = asm_listing(kAsm, /*directives=*/true);
  CHECK(l.text == kAsm);
  REQUIRE(static_cast<int>(l.lines.size()) == line_count(kAsm));
  CHECK(source_of(l.text, l.lines, "cmpq") == 3);
  CHECK(source_of(l.text, l.lines, "leaq") == 4);
  CHECK(source_of(l.text, l.lines, ".loc") == 0);
}

TEST_CASE("asm listing: wasm keeps each function's .functype and .local, not the declarations") {
  const char* wasm =
      "\t.text\n"
      "\t.functype\tds.f (i64) -> (i64)\n"
      "\t.section\t.text.ds.f,\"\",@\n"
      "ds.f:\n"
      "\t.functype\tds.f (i64) -> (i64)\n"
      "\t.local  \ti64\n"
      "\tlocal.get\t0\n"
      "\tend_function\n";
  CHECK(asm_listing(wasm, false).text ==
        "ds.f:\n\t.functype\tds.f (i64) -> (i64)\n\t.local  \ti64\n\tlocal.get\t0\n\tend_function\n");
}

TEST_CASE("session asm: no directives by default, each line with its source line") {
  Session s;
  REQUIRE(s.compile(kFib, "fib.ds").status == Outcome::Ok);
  REQUIRE(s.set_target("x86-64", nullptr));
  StageResult r = s.stage("asm", Format::Text, "fib");
  REQUIRE(r.ok);
  for (const char* directive : {".text", ".p2align", ".cfi_", ".loc", ".section", ".type", ".size", ".file"})
    CHECK_MESSAGE(r.text.find(std::string("\t") + directive) == std::string::npos, directive);
  CHECK(r.text.find("ds.fib:") != std::string::npos);
  CHECK(r.text.find("descent_main") == std::string::npos);  // fib alone
  CHECK(r.text.find("encoding: [") != std::string::npos);
  REQUIRE(static_cast<int>(r.source_lines.size()) == line_count(r.text));
  // fib's instructions come from its lines 1-3, and from each of them.
  auto lines = lines_of(r.text);
  std::vector<int> seen;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (r.source_lines[i] == 0) continue;
    CHECK(r.source_lines[i] >= 1);
    CHECK(r.source_lines[i] <= 3);
    seen.push_back(r.source_lines[i]);
  }
  for (int line : {2, 3}) CHECK(std::count(seen.begin(), seen.end(), line) > 0);
  CHECK(source_of(r.text, r.source_lines, "cmpq\t$2") == 2);  // n < 2

  s.set_asm_options({/*encodings=*/false, /*directives=*/true});
  StageResult full = s.stage("asm", Format::Text, "fib");
  REQUIRE(full.ok);
  CHECK(full.text.find("encoding: [") == std::string::npos);
  CHECK(full.text.find("\t.loc\t1 2 ") != std::string::npos);
  CHECK(full.text.find("\t.cfi_startproc") != std::string::npos);
  CHECK(static_cast<int>(full.source_lines.size()) == line_count(full.text));
}

TEST_CASE("session asm: every target maps some instruction to the line that computes it") {
  Session s;
  REQUIRE(s.compile(kFib, "fib.ds").status == Outcome::Ok);
  for (const auto& target : Session::targets()) {
    INFO(target);
    REQUIRE(s.set_target(target, nullptr));
    StageResult r = s.stage("asm");
    REQUIRE(r.ok);
    REQUIRE(static_cast<int>(r.source_lines.size()) == line_count(r.text));
    CHECK(std::count(r.source_lines.begin(), r.source_lines.end(), 6) > 0);  // print(fib(x) * 3)
    CHECK(std::count(r.source_lines.begin(), r.source_lines.end(), 3) > 0);
  }
}

TEST_CASE("session IR views: the text is the IR without debug info, each line with its source line") {
  Session s;
  REQUIRE(s.compile(kFib, "fib.ds").status == Outcome::Ok);
  for (const char* view : {"llvm", "llvm-opt"}) {
    INFO(view);
    StageResult r = s.stage(view);
    REQUIRE(r.ok);
    CHECK(r.text.find("!dbg") == std::string::npos);
    CHECK(r.text.find("!DI") == std::string::npos);
    CHECK(r.text.find("Debug Info Version") == std::string::npos);
    REQUIRE(static_cast<int>(r.source_lines.size()) == line_count(r.text));
    CHECK(source_of(r.text, r.source_lines, "%mul = mul i64") == 6);
    CHECK(source_of(r.text, r.source_lines, "define ") == 0);
  }
  StageResult fn = s.stage("llvm", Format::Text, "fib");
  REQUIRE(fn.ok);
  CHECK(source_of(fn.text, fn.source_lines, "icmp slt i64") == 2);
  CHECK(source_of(fn.text, fn.source_lines, "%sub = sub i64") == 3);
  CHECK(s.stage("mir").source_lines.empty());
}

TEST_CASE("IR views: every golden program prints the same IR with line tables as without") {
  for (const auto& path : testing::ds_files("programs")) {
    Session s;
    if (s.compile(testing::read_text(path.string()), path.filename().string()).status != Outcome::Ok)
      continue;
    StageResult plain = s.stage("llvm"), opt = s.stage("llvm-opt");
    std::string error;
    Module& m = const_cast<Module&>(s.module());
    const Program& p = *m.programs.back();
    if (p.uses_tensors) continue;
    INFO(path.filename().string());
    CHECK(plain.text == llvmbe::dump_llvm(p, m, s.opt_level(), false, &error));
    CHECK(opt.text == llvmbe::dump_llvm(p, m, s.opt_level(), true, &error));
  }
}
