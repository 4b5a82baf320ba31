// `descent dump --stage asm` with Compiler Explorer's choices (the real binary through
// pipes): --function, --no-encodings, directives hidden unless --directives; and the same
// choices in the REPL's :asm.
#include <doctest/doctest.h>

#include <filesystem>

#include "frontend_util.h"

using fe::contains;
using fe::describe;
using fe::ProcResult;
using fe::run_descent;

namespace {
const char* kProgram =
    "fn sq(n: int) -> int {\n"
    "  return n * n\n"
    "}\n"
    "fn fib(n: int) -> int {\n"
    "  if n < 2 { return n }\n"
    "  return fib(n - 1) + fib(n - 2)\n"
    "}\n"
    "print(sq(fib(7)))\n";

// `descent dump` of kProgram with these arguments after the file.
ProcResult dump(fe::TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"dump", dir.write("p.ds", kProgram)});
  return run_descent(args);
}
}  // namespace

TEST_SUITE("cli") {

TEST_CASE("dump asm: directives hidden by default, --directives shows them") {
  fe::TempDir dir;
  ProcResult r = dump(dir, {"--stage", "asm", "--target", "x86-64"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "ds.sq:"));
  CHECK(contains(r.out, "imulq"));
  CHECK(contains(r.out, "encoding: ["));
  for (const char* d : {"\t.text", "\t.p2align", "\t.cfi_startproc", "\t.type", "\t.size", "\t.file", "\t.loc"})
    CHECK_MESSAGE(!contains(r.out, d), d);

  ProcResult all = dump(dir, {"--stage", "asm", "--target", "x86-64", "--directives"});
  INFO(describe(all));
  CHECK(all.exit_code == 0);
  for (const char* d : {"\t.text", "\t.p2align", "\t.cfi_startproc", "\t.type", "\t.size", "\t.loc"})
    CHECK_MESSAGE(contains(all.out, d), d);
}

TEST_CASE("dump asm: --function shows one function; --no-encodings drops the bytes") {
  fe::TempDir dir;
  ProcResult r = dump(dir, {"--stage", "asm", "--target", "aarch64", "--function", "sq", "--no-encodings"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ds.sq:                                  // @ds.sq\n"
                 "// %bb.0:                               // %entry\n"
                 "\tmul\tx0, x0, x0\n"
                 "\tret\n"
                 "                                        // -- End function\n");
  ProcResult enc = dump(dir, {"--stage", "asm", "--target", "aarch64", "--function", "sq"});
  INFO(describe(enc));
  CHECK(contains(enc.out, "\tmul\tx0, x0, x0                      // encoding: [0x00,0x7c,0x00,0x9b]\n"));
  CHECK(!contains(enc.out, "ds.fib"));
}

TEST_CASE("dump: --function of no function is an error that suggests the closest name") {
  fe::TempDir dir;
  ProcResult r = dump(dir, {"--stage", "asm", "--function", "fbi"});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err == "error: no function 'fbi' (did you mean 'fib'?)\n");
  ProcResult stack = dump(dir, {"--stage", "stack", "--function", "sq"});
  INFO(describe(stack));
  CHECK(stack.exit_code == 0);
  CHECK(contains(stack.out, "sq"));
  CHECK(!contains(stack.out, "fib"));
}

}  // TEST_SUITE

TEST_CASE("repl :asm takes directives and no-encodings after the target and function") {
  fe::ReplHarness h;
  h.feed("fn sq(n: int) -> int {\n");
  h.feed("  return n * n\n");
  h.feed("}\n");
  h.take_out();
  h.feed(":asm aarch64 sq no-encodings\n");
  CHECK(h.take_err() == "");
  std::string plain = h.take_out();
  CHECK(contains(plain, "\tmul\tx0, x0, x0\n"));
  CHECK(!contains(plain, ".cfi_startproc"));
  h.feed(":asm sq aarch64 directives\n");
  CHECK(h.take_err() == "");
  std::string full = h.take_out();
  CHECK(contains(full, ".cfi_startproc"));
  CHECK(contains(full, "encoding: ["));
  // The choices are for that view only, like the target.
  h.feed(":asm aarch64 sq\n");
  std::string again = h.take_out();
  CHECK(!contains(again, ".cfi_startproc"));
  CHECK(contains(again, "encoding: ["));
  h.feed(":asm sq directives directives\n");
  CHECK(contains(h.take_err(), "usage: :asm"));
}

TEST_CASE("repl :asm TARGET run: the last input linked for another architecture and run under qemu") {
  fe::ReplHarness h;
  h.feed("fn sq(n: int) -> int {\n");
  h.feed("  return n * n\n");
  h.feed("}\n");
  h.feed("print(sq(12), 7 / 2)\n");
  h.take_out();
  h.feed(":asm aarch64 run\n");
  CHECK(h.take_err() == "");
  CHECK(h.take_out() == "144 3\n(exit code 0)\n");
  h.feed(":asm riscv64 run\n");
  CHECK(h.take_out() == "144 3\n(exit code 0)\n");
  // A runtime error: its message from the target's code, and the exit code 1.
  h.feed("x = 0\n");
  h.feed("print(5 % x)\n");
  h.take_out();
  h.take_err();
  h.feed(":asm aarch64 run\n");
  CHECK(contains(h.take_err(), "error: division by zero"));
  CHECK(h.take_out() == "(exit code 1)\n");
  h.feed(":asm wasm32 run\n");
  CHECK(contains(h.take_err(), "wasm32 objects are not linked or run here"));
  // The target was for that command only.
  h.feed(":asm sq no-encodings\n");
  CHECK(!contains(h.take_out(), "\tmul\tx0"));
}

TEST_CASE("repl :native STAGE aarch64: the teaching backend's second target, for that view only, or both") {
  fe::ReplHarness h;
  h.feed("fn f(a: int, b: int, c: int) -> int { return a * b + c }\n");
  h.take_out();
  h.feed(":native isel aarch64 f\n");
  CHECK(h.take_err() == "");
  std::string a = h.take_out();
  CHECK(contains(a, "madd v0(a), v1(b), v2(c)"));
  CHECK(contains(a, "MUL.prod MADDXrrr"));
  // Back to this machine's target for the next view.
  h.feed(":native isel f\n");
  std::string x = h.take_out();
  CHECK(contains(x, "imul v0(a), v1(b)"));
  CHECK(!contains(x, "madd"));
  // Two targets, one after the other.
  h.feed(":native regalloc x86-64 aarch64 f\n");
  CHECK(h.take_err() == "");
  std::string both = h.take_out();
  CHECK(contains(both, "== x86-64\n"));
  CHECK(contains(both, "== aarch64\n"));
  CHECK(both.find("== x86-64") < both.find("== aarch64"));
  CHECK(contains(both, " = madd x0, x1, x2"));  // AAPCS64's argument registers
  h.feed(":native asm aarch64 f\n");
  std::string words = h.take_out();
  CHECK(contains(words, "stp x29, x30, [sp, #-16]!"));
  CHECK(contains(words, "madd x"));
}

TEST_CASE("repl :target aarch64 with :engine native: the AArch64 code runs under qemu, globals kept") {
  fe::ReplHarness h;
  h.feed(":target aarch64\n");
  CHECK(contains(h.take_out(), "target aarch64"));
  h.feed(":engine native\n");
  h.take_out();
  h.feed("x = 41\n");
  h.feed("print(x + 1)\n");
  CHECK(h.take_out() == "42\n");
  h.feed("fn f(n: int) -> int { return 100 / n }\n");
  h.feed("print(f(x - 41))\n");
  CHECK(contains(h.take_err(), "division by zero"));
  h.feed("print(x * 2)\n");
  CHECK(h.take_out() == "82\n");
  h.feed(":target x86-64\n");
  h.take_out();
  h.feed("print(x * 3)\n");
  CHECK(h.take_out() == "123\n");
  h.feed(":target sparc\n");
  CHECK(contains(h.take_err(), "error:"));
}

TEST_CASE("descent run --engine native --target aarch64, and build --native: the second target's code run") {
  fe::TempDir dir;
  std::string file = dir.write("p.ds", kProgram);
  ProcResult r = run_descent({"run", file, "--engine", "native", "--target", "aarch64"});
  CHECK_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(r.out == "169\n");
  ProcResult bad = run_descent({"run", file, "--target", "aarch64"});
  CHECK(bad.exit_code == 64);
  CHECK(contains(bad.err, "--target applies to --engine native"));
  std::string exe = dir.path("prog");
  ProcResult built = run_descent({"build", file, "--native", "--target", "aarch64", "-o", exe});
  CHECK_MESSAGE(built.exit_code == 0, describe(built));
  CHECK(std::filesystem::exists(exe));
  CHECK(std::filesystem::exists(exe + ".c"));
  ProcResult ran = run_descent({"build", file, "--native", "--target", "aarch64", "--run"});
  CHECK(ran.out == "169\n");
  CHECK(ran.exit_code == 0);
}
