// The register VM against the AST walker (the reference engine): every golden and must-fail
// program with a 16-register file, with a 3-register file (spills everywhere) and on the
// unallocated virtual code; multi-input sessions, interrupts, call depth, echo; golden
// disassembly of both forms, the trace, and the allocator's invariants.
#include "vm/reg_vm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tests/programs_test.h"
#include "vm/reg_alloc.h"
#include "vm/reg_compiler.h"
#include "vm/reg_disasm.h"

namespace fs = std::filesystem;
using namespace descent;
using descent::testing::ds_files;

namespace {

// One engine with its own Module and GlobalStore: a session without the pipeline.
struct RegRunner {
  std::unique_ptr<Engine> engine;
  Module module;
  GlobalStore globals;
  std::string trace;

  explicit RegRunner(std::unique_ptr<Engine> e) : engine(std::move(e)) {}

  struct Result {
    bool compiled = false;
    std::string output;
    std::string error;  // "L:C: message" of a runtime error; "compile" for compile errors
    uint64_t steps = 0;
    bool operator==(const Result& o) const {
      return compiled == o.compiled && output == o.output && error == o.error;
    }
  };

  // Parses and checks text against this runner's Module; null on a compile error.
  std::shared_ptr<Program> compile(const std::string& text) {
    auto src = std::make_shared<SourceFile>("test.ds", text);
    std::vector<Diagnostic> diags;
    auto prog = std::make_shared<Program>(parse(src, diags));
    globals.resize(module.globals.size());
    if (!diags.empty() || !check(*prog, module, globals.defined, diags)) return nullptr;
    module.programs.push_back(prog);
    return prog;
  }

  Result submit(const std::string& text, RunOptions opts = {}, bool with_trace = false) {
    Result r;
    auto prog = compile(text);
    if (!prog) {
      r.error = "compile";
      return r;
    }
    r.compiled = true;
    opts.out = [&r](std::string_view s) { r.output += s; };
    if (with_trace) opts.trace = [this](std::string_view s) { trace += s; };
    RunResult rr = engine->run(*prog, module, globals, opts);
    r.steps = rr.steps;
    if (!rr.ok)
      r.error = std::to_string(rr.error.loc.line) + ":" + std::to_string(rr.error.loc.col) + ": " +
                rr.error.message;
    return r;
  }
};


// The register files every agreement test runs with (0: the virtual code, unallocated).
const int kFiles[] = {16, 3, 0};

void agree_with_walker(const std::string& text, const std::string& what) {
  RegRunner walker(make_ast_walker());
  RegRunner::Result want = walker.submit(text);
  for (int n : kFiles) {
    RegRunner reg(make_reg_vm(n));
    RegRunner::Result got = reg.submit(text);
    INFO(what, " with ", n, " registers");
    CHECK(got.compiled == want.compiled);
    CHECK(got.output == want.output);
    CHECK(got.error == want.error);
  }
}

// Every body of a program, compiled and allocated for a file of n registers.
std::vector<RegUnit> units_of(const std::string& text, int n) {
  RegRunner r(make_reg_vm(n));
  auto prog = r.compile(text);
  REQUIRE(prog);
  return compile_reg_units(*prog, r.module, n);
}

// The allocator's contract, for one body.
void check_allocation(const RegUnit& u, int n, const std::string& what) {
  INFO(what, " ", u.virt.name, " with ", n, " registers");
  REQUIRE(u.error.empty());
  const auto& iv = u.intervals;
  for (size_t a = 0; a < iv.size(); ++a) {
    CHECK(iv[a].start <= iv[a].end);
    if (iv[a].spilled()) {
      CHECK(iv[a].slot >= 0);
    } else {
      CHECK(iv[a].reg < n);
    }
    for (size_t b = a + 1; b < iv.size(); ++b) {
      if (!overlaps(iv[a], iv[b])) continue;
      // No two simultaneously live values share a register or a spill slot.
      if (!iv[a].spilled() && !iv[b].spilled())
        CHECK_MESSAGE(iv[a].reg != iv[b].reg, "v", iv[a].vreg, " and v", iv[b].vreg);
      if (iv[a].spilled() && iv[b].spilled())
        CHECK_MESSAGE(iv[a].slot != iv[b].slot, "v", iv[a].vreg, " and v", iv[b].vreg);
    }
  }
  // Parameters live on entry arrive in distinct frame locations.
  for (size_t p = 0; p < u.alloc.param_locs.size(); ++p)
    for (size_t q = p + 1; q < u.alloc.param_locs.size(); ++q) {
      bool live_p = false, live_q = false;
      for (const auto& x : iv) {
        live_p = live_p || (x.vreg == static_cast<int>(p) && x.start == 0);
        live_q = live_q || (x.vreg == static_cast<int>(q) && x.start == 0);
      }
      if (live_p && live_q) CHECK(u.alloc.param_locs[p] != u.alloc.param_locs[q]);
    }
  // Allocated code names only registers of the file (operands) and frame locations.
  const RegFunction& f = u.alloc;
  CHECK(f.allocated);
  CHECK(f.num_regs <= n);
  for (size_t pc = 0; pc < f.code.size(); ++pc) {
    const OpInfo& info = op_info(f.code[pc].op);
    const uint16_t fields[3] = {f.code[pc].a, f.code[pc].b, f.code[pc].c};
    const Arg roles[3] = {info.a, info.b, info.c};
    for (int k = 0; k < 3; ++k) {
      if (roles[k] == Arg::Use || roles[k] == Arg::Def || roles[k] == Arg::UseDef)
        CHECK(fields[k] < f.num_regs);
      if (roles[k] == Arg::Slot) CHECK(fields[k] >= f.num_regs);
      if (roles[k] == Arg::Target) CHECK(fields[k] < f.code.size());
    }
  }
}

// A deterministic generator of small programs with many simultaneously live ints, loops,
// branches and calls: fodder for the allocator.
struct ProgramGen {
  uint64_t state;
  explicit ProgramGen(uint64_t seed)
      : state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  int next(int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  }
  std::string var(int nvars) { return "x" + std::to_string(next(nvars)); }
  std::string expr(int nvars, int depth) {
    if (depth == 0 || next(4) == 0) return next(3) == 0 ? std::to_string(next(20) - 5) : var(nvars);
    static const char* ops[] = {"+", "-", "*", "%"};
    int op = next(4);
    std::string rhs = op == 3 ? std::to_string(next(9) + 1) : expr(nvars, depth - 1);
    if (op == 3) return "(" + expr(nvars, depth - 1) + " % " + rhs + ")";
    if (next(6) == 0) return "g(" + expr(nvars, depth - 1) + ", " + rhs + ")";
    return "(" + expr(nvars, depth - 1) + " " + ops[op] + " " + rhs + ")";
  }
  std::string cond(int nvars) {
    static const char* cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    std::string c = expr(nvars, 1) + " " + cmp[next(6)] + " " + expr(nvars, 1);
    if (next(4) == 0) c = "(" + c + ") && " + var(nvars) + " > 0";
    return c;
  }
  std::string block(int nvars, int depth, const std::string& indent) {
    std::string out;
    int n = 1 + next(4);
    for (int s = 0; s < n; ++s) {
      int kind = depth > 0 ? next(6) : 0;
      if (kind <= 2) {
        out += indent + var(nvars) + " = " + expr(nvars, 3) + " % 100000\n";
      } else if (kind == 3) {
        out += indent + "if " + cond(nvars) + " {\n" + block(nvars, depth - 1, indent + "  ") +
               indent + "} else {\n" + block(nvars, depth - 1, indent + "  ") + indent + "}\n";
      } else if (kind == 4) {
        std::string i = "i" + std::to_string(depth);
        out += indent + "for " + i + " in 0.." + std::to_string(next(5)) + " {\n" + indent + "  " +
               var(nvars) + " += " + i + "\n" + block(nvars, depth - 1, indent + "  ") + indent +
               "}\n";
      } else {
        std::string w = "w" + std::to_string(depth);
        out += indent + w + " = 0\n" + indent + "while " + w + " < " + std::to_string(next(4)) +
               " {\n" + indent + "  " + w + " += 1\n" + block(nvars, depth - 1, indent + "  ") +
               indent + "  if " + cond(nvars) + " { continue }\n" + indent + "}\n";
      }
    }
    return out;
  }
  std::string program() {
    int nvars = 3 + next(6);
    std::string p = "fn g(a: int, b: int) -> int {\n  return (a * 7 + b) % 1000\n}\n";
    p += "fn f(";
    for (int v = 0; v < 3; ++v)
      p += (v ? ", " : "") + std::string("p") + std::to_string(v) + ": int";
    p += ") -> int {\n";
    if (next(3) == 0)
      p += "  p" + std::to_string(next(3)) + " = " + std::to_string(next(50)) + "\n";
    for (int v = 0; v < nvars; ++v)
      p += "  x" + std::to_string(v) + " = p" + std::to_string(v % 3) + " + " + std::to_string(v) +
           "\n";
    if (next(3) == 0) p += "  p" + std::to_string(next(3)) + " = x0 * 3\n";
    p += block(nvars, 3, "  ");
    p += "  return ";
    for (int v = 0; v < nvars; ++v) p += (v ? " + x" : "x") + std::to_string(v);
    p += "\n}\n";
    p += "print(f(1, 2, 3), f(-4, 5, 9))\n";
    return p;
  }
};

}  // namespace

TEST_CASE("reg: golden programs agree with the walker (16 and 3 registers, virtual)") {
  auto files = ds_files("programs");
  REQUIRE(files.size() >= 60);
  for (const auto& f : files) {
    std::string text = testing::read_text(f.string());
    agree_with_walker(text, f.filename().string());
    // And with the file's own expectations.
    RegRunner reg(make_reg_vm(3));
    auto got = reg.submit(text);
    std::string want;
    for (const auto& l : testing::parse_expectations(text).output) want += l + "\n";
    CHECK_MESSAGE(got.output == want, f.filename().string());
  }
}

TEST_CASE("reg: must-fail programs agree with the walker (16 and 3 registers, virtual)") {
  auto files = ds_files("errors");
  REQUIRE(files.size() >= 40);
  for (const auto& f : files)
    agree_with_walker(testing::read_text(f.string()), f.filename().string());
}

TEST_CASE("reg: allocator invariants on every golden program and many generated ones") {
  for (const auto& f : ds_files("programs")) {
    std::string text = testing::read_text(f.string());
    for (int n : {3, 4, 5, 16})
      for (const auto& u : units_of(text, n)) check_allocation(u, n, f.filename().string());
  }
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    std::string text = ProgramGen(seed).program();
    INFO("generated program ", seed, ":\n", text);
    for (int n : {3, 4, 16})
      for (const auto& u : units_of(text, n)) check_allocation(u, n, "generated");
    agree_with_walker(text, "generated " + std::to_string(seed));
  }
}

TEST_CASE("reg: with 3 registers, spills and reloads appear and the program stays correct") {
  const std::string text =
      "fn many(a: int, b: int, c: int, d: int, e: int) -> int {\n"
      "  s = 0\n"
      "  for i in 0..10 { s += a * i + b * c - d % e + i }\n"
      "  return s + a + b + c + d + e\n"
      "}\n"
      "print(many(1, 2, 3, 4, 5))\n";
  agree_with_walker(text, "many");
  auto units16 = units_of(text, 16);
  auto units3 = units_of(text, 3);
  const RegFunction& f16 = units16[1].alloc;
  const RegFunction& f3 = units3[1].alloc;
  auto count = [](const RegFunction& f, Op op) {
    return std::count_if(f.code.begin(), f.code.end(), [op](const Instr& i) { return i.op == op; });
  };
  CHECK(count(f16, Op::SPILL) == 0);
  CHECK(count(f16, Op::RELOAD) == 0);
  CHECK(f16.num_slots == 0);
  CHECK(count(f3, Op::SPILL) > 0);
  CHECK(count(f3, Op::RELOAD) > 0);
  CHECK(f3.num_slots > 0);
  CHECK(f3.num_regs == 3);
  std::string dump = disassemble(f3, nullptr);
  CHECK(dump.find("reload") != std::string::npos);
  CHECK(dump.find("spill") != std::string::npos);
  CHECK(dump.find("[3-register file: 3 used,") != std::string::npos);
  RegRunner reg(make_reg_vm(3));
  CHECK(reg.submit(text).output == "125\n");
  // The trace shows the reloads and the spill slots' values beside the registers.
  RegRunner traced(make_reg_vm(3));
  CHECK(traced.submit(text, {}, true).output == "125\n");
  CHECK(traced.trace.find("  reload      r") != std::string::npos);
  CHECK(traced.trace.find(" s0=") != std::string::npos);
}

TEST_CASE("reg: parameters assigned before they are read do not clobber live ones") {
  agree_with_walker(
      "fn f(a: int, b: int) -> int {\n  b = a + 1\n  return b\n}\nprint(f(1, 10))\n"
      "fn g(a: int, b: int, c: int) -> int {\n  c = b * 2\n  a = c + 1\n  return a + b\n}\n"
      "print(g(1, 10, 100))\n"
      "fn h(a: int, b: int, c: int, d: int, e: int) -> int {\n  e = a + b + c + d\n"
      "  a = e * 2\n  return a + e\n}\nprint(h(1, 2, 3, 4, 5))\n",
      "dead parameters");
  RegRunner r(make_reg_vm());
  CHECK(r.submit("fn f(a: int, b: int) -> int {\n  b = a + 1\n  return b\n}\nprint(f(1, 10))\n")
            .output == "2\n");
}

TEST_CASE("reg: golden disassembly of the seed example, virtual and allocated") {
  RegRunner r(make_reg_vm());
  auto prog = r.compile("x = 15\nx + 10 - 5\n");
  REQUIRE(prog);
  CHECK(dump_reg(*prog, r.module, false) ==
        "<top>  [virtual: 4 registers]\n"
        "0000     1  loadk       v0, k0                 ; 15\n"
        "0001     |  setglobal   v0, g0                 ; x\n"
        "0002     2  getglobal   v1, g0                 ; x\n"
        "0003     |  addk_int    v2, v1, k1             ; 10\n"
        "0004     |  subk_int    v3, v2, k2             ; 5\n"
        "0005     |  halt\n");
  CHECK(dump_reg(*prog, r.module, true) ==
        "<top>  [16-register file: 1 used, 0 spill slots]\n"
        "0000     1  loadk       r0, k0                 ; 15\n"
        "0001     |  setglobal   r0, g0                 ; x\n"
        "0002     2  getglobal   r0, g0                 ; x\n"
        "0003     |  addk_int    r0, r0, k1             ; 10\n"
        "0004     |  subk_int    r0, r0, k2             ; 5\n"
        "0005     |  halt\n");
  // With echo (the REPL), the expression statement's value is printed.
  CHECK(dump_reg(*prog, r.module, false, 16, true).find("echo        v3, int") !=
        std::string::npos);
}

TEST_CASE("reg: golden disassembly of fib, virtual and allocated") {
  RegRunner r(make_reg_vm());
  auto prog = r.compile(
      "fn fib(n: int) -> int {\n"
      "  if n < 2 { return n }\n"
      "  return fib(n - 1) + fib(n - 2)\n"
      "}\n");
  REQUIRE(prog);
  std::string virt = dump_reg(*prog, r.module, false);
  CHECK(virt.substr(virt.find("fn fib")) ==
        "fn fib(n: int) -> int  [virtual: 6 registers]\n"
        "0000     2  jgek_int    v0, k0, ->2            ; 2\n"
        "0001     |  return      v0\n"
        "0002     3  subk_int    v1, v0, k1             ; 1\n"
        "0003     |  call1       v2, fib(v1)\n"
        "0004     |  subk_int    v3, v0, k0             ; 2\n"
        "0005     |  call1       v4, fib(v3)\n"
        "0006     |  add_int     v5, v2, v4\n"
        "0007     |  return      v5\n");
  std::string alloc = dump_reg(*prog, r.module, true);
  CHECK(alloc.substr(alloc.find("fn fib")) ==
        "fn fib(n: int) -> int  [16-register file: 2 used, 0 spill slots]  ; params in r0\n"
        "0000     2  jgek_int    r0, k0, ->2            ; 2\n"
        "0001     |  return      r0\n"
        "0002     3  subk_int    r1, r0, k1             ; 1\n"
        "0003     |  call1       r1, fib(r1)\n"
        "0004     |  subk_int    r0, r0, k0             ; 2\n"
        "0005     |  call1       r0, fib(r0)\n"
        "0006     |  add_int     r0, r1, r0\n"
        "0007     |  return      r0\n");
}

TEST_CASE("reg: live intervals as data and as text") {
  RegRunner r(make_reg_vm());
  auto prog = r.compile(
      "fn f(a: int, b: int) -> int {\n"
      "  s = 0\n"
      "  for i in 0..b { s += a * i }\n"
      "  return s\n"
      "}\n");
  REQUIRE(prog);
  auto units = compile_reg_units(*prog, r.module, 16);
  REQUIRE(units.size() == 2);
  const RegUnit& u = units[1];
  // a, b, s, i and the temporary a * i all have intervals; a and s live through the loop.
  auto find = [&](int v) {
    for (const auto& x : u.intervals)
      if (x.vreg == v) return x;
    FAIL("no interval for v", v);
    return LiveInterval{};
  };
  int loop_end = 0;
  for (size_t pc = 0; pc < u.virt.code.size(); ++pc)
    if (u.virt.code[pc].op == Op::FORLOOP) loop_end = static_cast<int>(pc);
  REQUIRE(loop_end > 0);
  CHECK(find(0).last_pc() >= loop_end);  // a: used in the body, live around the back-edge
  CHECK(find(2).last_pc() > loop_end);   // s: returned after the loop
  CHECK(summarize_allocation(units) == "5 intervals in 2 bodies, 0 spilled (16 registers)");
  std::string text = dump_live(*prog, r.module, 16);
  CHECK(text.find("live intervals (") != std::string::npos);
  CHECK(text.find("v0    a    int   ") != std::string::npos);
  CHECK(text.find("|=") != std::string::npos);
  // With 3 registers something lives in a spill slot ('~').
  std::string small = dump_live(*prog, r.module, 3);
  CHECK(small.find('~') != std::string::npos);
}

TEST_CASE("reg: trace prints each instruction with the registers in use") {
  RegRunner r(make_reg_vm());
  RunOptions opts;
  auto res = r.submit(
      "fn inc(n: int) -> int {\n"
      "  return n + 1\n"
      "}\n"
      "y = inc(41)\n",
      opts, true);
  CHECK(res.error == "");
  CHECK(r.trace ==
        "<top>    0000     4  loadk       r0, k0                 ; 41     | r0=41\n"
        "<top>    0001     4  call1       r0, inc(r0)                     | r0=41\n"
        "inc      0000     2  addk_int    r0, r0, k0             ; 1      | r0=42\n"
        "inc      0001     2  return      r0                              | r0=42\n"
        "<top>    0002     4  setglobal   r0, g0                 ; y      | r0=42\n"
        "<top>    0003     4  halt                                        | r0=42\n");
  CHECK(res.steps == 6);
  // The untraced run counts the same steps.
  RegRunner plain(make_reg_vm());
  CHECK(plain.submit("fn inc(n: int) -> int {\n  return n + 1\n}\ny = inc(41)\n").steps == 6);
}

TEST_CASE("reg: a multi-input session: globals persist, functions are redefined, echo") {
  for (int n : kFiles) {
    INFO(n, " registers");
    RegRunner w(make_ast_walker()), r(make_reg_vm(n));
    RunOptions echo;
    echo.echo = true;
    const char* inputs[] = {
        "x = 15\n",
        "x + 10 - 5\n",
        "fn twice(v: int) -> int { return v * 2 }\n",
        "twice(x)\n",
        "fn twice(v: int) -> int { return v * 3 }\n",
        "twice(x)\nprint(twice(1), x > 3)\n",
        "y = 2.5 * float(x)\ny\n",
        "fn show() { print(late) }\n",
        "show()\n",
        "late = true\nshow()\n",
    };
    for (const char* in : inputs) {
      INFO(in);
      auto want = w.submit(in, echo);
      auto got = r.submit(in, echo);
      CHECK(got.output == want.output);
      CHECK(got.error == want.error);
    }
  }
}

TEST_CASE("reg: interrupt by flag and by step limit, at loops and calls") {
  RegRunner r(make_reg_vm());
  std::atomic<bool> flag{true};
  RunOptions opts;
  opts.interrupt = &flag;
  CHECK(r.submit("i = 0\nwhile true { i += 1 }\n", opts).error == "2:1: interrupted");
  CHECK(r.submit("fn f() -> int { return 1 }\nprint(f())\n", opts).error == "2:7: interrupted");
  CHECK(r.submit("fn h() { for i in 0..10 { } }\nh()\n", opts).error == "2:1: interrupted");
  RunOptions limited;
  limited.step_limit = 1000;
  auto res = r.submit("fn spin() { while true { } }\nprint(1)\nspin()\n", limited);
  CHECK(res.output == "1\n");
  CHECK(res.error == "1:13: interrupted");
  CHECK(res.steps > 1000);
  CHECK(res.steps < 1010);
  // The engine is usable again afterwards.
  CHECK(r.submit("print(2)\n").output == "2\n");
}

TEST_CASE("reg: stack overflow at exactly 10,001 frames, before a call's arguments") {
  for (int n : kFiles) {
    INFO(n, " registers");
    RegRunner r(make_reg_vm(n));
    const char* d = "fn d(n: int) -> int {\n  if n == 0 { return 0 }\n  return 1 + d(n - 1)\n}\n";
    CHECK(r.submit(std::string(d) + "print(d(9999))\n").output == "9999\n");
    CHECK(r.submit("print(d(10000))\n").error == "3:14: stack overflow");
    // The walker checks the depth before it evaluates the arguments: g(n) must not run.
    agree_with_walker(
        "fn g(n: int) -> int {\n  print(n)\n  return n\n}\n"
        "fn f(n: int) -> int {\n  if n < 9998 { return f(n + 1) }\n  return f(g(n) + 1)\n}\n"
        "print(f(0))\n",
        "overflow before arguments");
    agree_with_walker("fn f(n: int) -> int {\n  return f(n / (n - 10000))\n}\nprint(f(1))\n",
                      "overflow before a failing argument");
  }
}

TEST_CASE("reg: for-loop variable after the loop, bounds evaluated once, nan branches") {
  agree_with_walker(
      "fn f(n: int) -> int {\n  i = 99\n  for i in 0..n { }\n  return i\n}\n"
      "print(f(0), f(1), f(5))\n"
      "fn g(n: int) -> int {\n  for i in 0..n { if i == 3 { break } }\n  k = 0\n"
      "  for j in n..0 { k = j }\n  for j in 0..n { j += 10; k += j }\n  return k\n}\n"
      "print(g(2), g(6))\n"
      "for q in 0..3 { print(q) }\nprint(q)\n"
      "fn self_bound(i: int) -> int {\n  for i in 0..i { print(i) }\n  for i in i..i + 2 { "
      "print(i) }\n"
      "  n = 3\n  for j in 0..n { n = 1\n    print(j, n) }\n  return i\n}\nprint(self_bound(3))\n",
      "for variable");
  agree_with_walker(
      "fn h(x: float) -> int {\n  c = 0\n  if x < 1.0 { c += 1 }\n  if !(x < 1.0) { c += 10 }\n"
      "  if x >= 1.0 { c += 100 }\n  if !(x >= 1.0) { c += 1000 }\n  if 1.0 > x { c += 10000 }\n"
      "  while !(x <= 2.0) { c += 100000\n    break }\n  return c\n}\n"
      "z = 0.0\nprint(h(0.5), h(1.5), h(z / z), h(3.0))\n",
      "nan branches");
}

TEST_CASE("reg: division and remainder by constant powers of two match the walker") {
  std::string text =
      "fn t(x: int) {\n  print(x / 2, x % 2, x / 4, x % 8, x / 1024, x % 1024)\n"
      "  print(x / 4611686018427387904, x % 4611686018427387904, x / 3, x % -2)\n}\n";
  for (const char* x :
       {"0", "1", "-1", "7", "-7", "8", "-8", "1023", "-1025", "9223372036854775807",
        "-9223372036854775807 - 1", "-4611686018427387904", "4611686018427387905"})
    text += "t(" + std::string(x) + ")\n";
  agree_with_walker(text, "powers of two");
  auto units = units_of(text, 16);
  std::string dump = disassemble(units[1].alloc, nullptr);
  CHECK(dump.find("divp2_int") != std::string::npos);
  CHECK(dump.find("modp2_int") != std::string::npos);
}
