// The register VM against the AST walker (the reference engine): every golden and must-fail
// program with a 16-register file, with a 3-register file (spills everywhere) and on the
// unallocated virtual code; multi-input sessions, interrupts, call depth, echo; golden
// disassembly of both forms and the trace (tests/vm/golden/reg_*.txt; DESCENT_UPDATE_GOLDEN=1
// rewrites them), and the allocator's invariants.
#include "vm/reg_vm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tests/engine_util.h"
#include "tests/golden.h"
#include "tests/programs_test.h"
#include "vm/reg_alloc.h"
#include "vm/reg_compiler.h"
#include "vm/reg_disasm.h"
#include "vm/reg_fuse.h"

namespace fs = std::filesystem;
using namespace descent;
using descent::testing::ds_files;

namespace {

using RegRunner = testing::EngineRunner;

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
  // The fused form (what the VM runs) too; a fused call's register fits its byte.
  const RegFunction& g = u.fused;
  CHECK(g.code.size() + static_cast<size_t>(u.fusions) == f.code.size());
  CHECK(g.locs.size() == g.code.size());
  for (size_t pc = 0; pc < g.code.size(); ++pc) {
    const OpInfo& info = op_info(g.code[pc].op);
    const uint16_t fields[3] = {g.code[pc].a, g.code[pc].b, g.code[pc].c};
    const Arg roles[3] = {info.a, info.b, info.c};
    for (int k = 0; k < 3; ++k) {
      if (roles[k] == Arg::Use || roles[k] == Arg::Def || roles[k] == Arg::UseDef)
        CHECK(fields[k] < g.num_regs);
      if (roles[k] == Arg::UseImm) CHECK(imm_reg(fields[k]) < g.num_regs);
      if (roles[k] == Arg::Target) CHECK(fields[k] < g.code.size());
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
    if (next(8) == 0)  // a call1 whose argument is a register plus or minus a constant
      return "h(" + var(nvars) + (next(2) ? " - " : " + ") + std::to_string(next(300)) + ")";
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
    p += "fn h(a: int) -> int {\n  if a < 3 { return a }\n  if a == 50 { return a }\n"
         "  return a % 97 + 1\n}\n";
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

// Five parameters and a loop: with a small file, values spill.
const char* const kMany =
      "fn many(a: int, b: int, c: int, d: int, e: int) -> int {\n"
      "  s = 0\n"
      "  for i in 0..10 { s += a * i + b * c - d % e + i }\n"
      "  return s + a + b + c + d + e\n"
      "}\n"
      "print(many(1, 2, 3, 4, 5))\n";

TEST_CASE("reg: with 3 registers, spills and reloads appear and the program stays correct") {
  const std::string text = kMany;
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

TEST_CASE("reg: allocate_registers with an assigner of its own (labs/linear_scan's hook)") {
  const std::string text = kMany;
  RegRunner r(make_reg_vm(4));
  auto prog = r.compile(text);
  REQUIRE(prog);
  Diagnostic err;
  auto virt = compile_reg_function(*r.module.functions[static_cast<size_t>(r.module.find_function("many"))].decl,
                                   r.module, &err);
  REQUIRE(virt);
  auto spilled = [](const std::vector<LiveInterval>& iv) {
    return std::count_if(iv.begin(), iv.end(), [](const LiveInterval& x) { return x.spilled(); });
  };
  // The project's scan, passed explicitly, is what allocate_registers does by default.
  RegFunction a = *virt, b = *virt;
  auto own = allocate_registers(a, 4);
  allocate_registers(b, 4, linear_scan_assign);
  CHECK(disassemble(a, nullptr) == disassemble(b, nullptr));
  CHECK(spilled(own) > 0);
  CHECK(spilled(own) < static_cast<long>(own.size()));
  // An assigner that spills everything is called with the whole file, then two fewer.
  std::vector<int> files;
  RegFunction c = *virt;
  auto all = allocate_registers(c, 4, [&files](std::vector<LiveInterval>& iv, int k) {
    files.push_back(k);
    for (auto& x : iv) CHECK(x.reg == -1);
  });
  CHECK(files == std::vector<int>{4, 2});
  CHECK(spilled(all) == static_cast<long>(all.size()));
  for (const auto& x : all) CHECK(x.slot >= 0);
  // A register outside the file is taken as a spill, so the code stays well-formed.
  RegFunction d = *virt;
  auto wild = allocate_registers(d, 4, [](std::vector<LiveInterval>& iv, int k) {
    for (auto& x : iv) x.reg = k + 5;
  });
  CHECK(spilled(wild) == static_cast<long>(wild.size()));
  // The engine allocates every body with it: everything reloaded, the same output.
  RegRunner reloading(make_reg_vm(4, [](std::vector<LiveInterval>& iv, int) {
    for (auto& x : iv) x.reg = -1;
  }));
  RegRunner::Result got = reloading.submit(text, {}, true);
  CHECK(got.output == "125\n");
  RegRunner plain(make_reg_vm(4));
  CHECK(got.steps > plain.submit(text).steps);
  CHECK(reloading.trace.find("  reload      r") != std::string::npos);
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
  testing::check_golden_file("vm/golden/reg_seed_virtual.txt", dump_reg(*prog, r.module, false));
  testing::check_golden_file("vm/golden/reg_seed_alloc.txt", dump_reg(*prog, r.module, true));
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
  testing::check_golden_file("vm/golden/reg_fib_virtual.txt", virt.substr(virt.find("fn fib")));
  std::string alloc = dump_reg(*prog, r.module, true);
  testing::check_golden_file("vm/golden/reg_fib_alloc.txt", alloc.substr(alloc.find("fn fib")));
  // What the VM runs: fuse_reg_superinstructions makes the 8 instructions 4, for any file.
  // (reg_fib_fused_16.txt and reg_fib_fused_3.txt differ in their header only.)
  for (int n : {16, 3}) {
    std::string text = dump_reg(*prog, r.module, RegForm::Fused, n);
    testing::check_golden_file("vm/golden/reg_fib_fused_" + std::to_string(n) + ".txt",
                               text.substr(text.find("fn fib")));
  }
  // The virtual code fuses the same way (the VM runs it so with make_reg_vm(0)).
  RegFunction code = *compile_reg_function(*r.module.functions[0].decl, r.module, nullptr);
  CHECK(fuse_reg_superinstructions(code) == 4);
  testing::check_golden_file("vm/golden/reg_fib_virtual_fused.txt", disassemble(code, &r.module));
  auto units = compile_reg_units(*prog, r.module, 16);
  CHECK(summarize_fusion(units) == "fused 4 instruction pairs in 1 body");
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
  testing::check_golden_file("vm/golden/reg_trace_inc.txt", r.trace);
  CHECK(res.steps == 5);
  // The untraced run counts the same steps.
  RegRunner plain(make_reg_vm());
  CHECK(plain.submit("fn inc(n: int) -> int {\n  return n + 1\n}\ny = inc(41)\n").steps == 5);
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

// ---- superinstructions (fuse_reg_superinstructions) ----

namespace {

// How often op appears in what the VM runs for `text`: in the body named `body` ("<top>"
// or a function's name), or in every body when it is empty; a file of n registers.
int fused_count(const std::string& text, Op op, const std::string& body = "", int n = 16) {
  int count = 0;
  for (const auto& u : units_of(text, n))
    if (body.empty() || u.fused.name == body)
      for (const Instr& in : u.fused.code) count += in.op == op ? 1 : 0;
  return count;
}

// The fused code of one body, disassembled.
std::string fused_dump(const std::string& text, const std::string& body, int n = 16) {
  RegRunner r(make_reg_vm(n));
  auto prog = r.compile(text);
  REQUIRE(prog);
  for (const auto& u : compile_reg_units(*prog, r.module, n))
    if (u.fused.name == body) return disassemble(u.fused, &r.module);
  return "";
}

// agree_with_walker, on more register files: 4 and 5 (spills, scratch pairs), 300 (registers
// beyond the 255 that a fused call's byte can name).
void agree_on_more_files(const std::string& text, const std::string& what) {
  agree_with_walker(text, what);
  RegRunner walker(make_ast_walker());
  RegRunner::Result want = walker.submit(text);
  for (int n : {4, 5, 300}) {
    RegRunner reg(make_reg_vm(n));
    RegRunner::Result got = reg.submit(text);
    INFO(what, " with ", n, " registers");
    CHECK(got.output == want.output);
    CHECK(got.error == want.error);
  }
}

// With the interrupt flag already set, the register VM stops where the walker does (or
// finishes like it, when no back-edge or call is reached), with the same output.
void agree_when_interrupted(const std::string& text, const std::string& what) {
  std::atomic<bool> flag{true};
  RunOptions opts;
  opts.interrupt = &flag;
  RegRunner walker(make_ast_walker());
  RegRunner::Result want = walker.submit(text, opts);
  for (int n : kFiles) {
    RegRunner reg(make_reg_vm(n));
    RegRunner::Result got = reg.submit(text, opts);
    INFO(what, " with ", n, " registers");
    CHECK(got.output == want.output);
    CHECK(got.error == want.error);
  }
}

// A hand-made body for the pass itself (virtual code; f0 is the function it calls).
RegFunction hand_made(uint16_t jump_at_8) {
  RegFunction f;
  f.name = "h";
  f.fn_index = 0;
  f.param_types = {Type::Int};
  f.ret = Type::Int;
  f.num_vregs = 8;
  f.vreg_types.assign(8, Type::Int);
  f.vreg_names = {"n", "", "", "", "", "", "", ""};
  f.param_locs = {0};
  f.k = {Value::of_int(1), Value::of_int(2)};
  f.k_types = {Type::Int, Type::Int};
  f.code = {
      {Op::JEQK_INT, 0, 0, 3},  // 0: jumps to 3, the first of a pair: still fused
      {Op::SUBK_INT, 1, 0, 0},  // 1: v1 := n - 1
      {Op::CALL1, 2, 0, 1},     // 2: v1 is dead afterwards: call1_subi
      {Op::ADDK_INT, 3, 0, 1},  // 3
      {Op::CALL1, 4, 0, 3},     // 4: call1_addi
      {Op::ADDK_INT, 5, 0, 0},  // 5
      {Op::CALL1, 6, 0, 5},     // 6: v5 is read at 7: kept apart
      {Op::ADD_INT, 7, 5, 6},   // 7
      {Op::JEQK_INT, 7, 0, jump_at_8},  // 8: over the return (->10): retnek_int
      {Op::RETURN, 6, 0, 0},            // 9
      {Op::ADD_INT, 7, 2, 4},           // 10
      {Op::RETURN, 7, 0, 0},            // 11: a jump target when jump_at_8 is 11
  };
  f.locs.assign(f.code.size(), SourceLoc{});
  for (auto& l : f.locs) l.line = 1;
  return f;
}

}  // namespace

TEST_CASE("reg: fuse_reg_superinstructions: temporaries, jump targets, retargeted jumps") {
  RegFunction a = hand_made(10);
  CHECK(fuse_reg_superinstructions(a) == 4);
  testing::check_golden_file("vm/golden/reg_hand_fused_10.txt", disassemble(a, nullptr));
  // A jump that lands on the second instruction of a pair keeps the pair apart; a jump
  // that does not skip exactly one RETURN is no conditional return.
  RegFunction b = hand_made(11);
  CHECK(fuse_reg_superinstructions(b) == 2);
  testing::check_golden_file("vm/golden/reg_hand_fused_11.txt", disassemble(b, nullptr));
  // Nothing to fuse: the code is left as it is.
  RegFunction c = hand_made(11);
  c.code.erase(c.code.begin() + 1, c.code.begin() + 5);
  c.locs.resize(c.code.size());
  c.code[0].c = 1;
  c.code[4].c = 7;
  std::string before = disassemble(c, nullptr);
  CHECK(fuse_reg_superinstructions(c) == 0);
  CHECK(disassemble(c, nullptr) == before);
}

TEST_CASE("reg: call1_addi and call1_subi compute the argument in the call") {
  const std::string text =
      "fn id(n: int) -> int {\n  return n\n}\n"
      "fn t(n: int) {\n"
      "  print(id(n + 1), id(n - 1), id(n + 255), id(n - 255), id(n + -3), id(n - -3))\n"
      "  print(id(n + 256), id(n - 1000), id(n * 2))\n"
      "}\n"
      "t(5)\nt(-9223372036854775807 - 1)\nt(9223372036854775807)\n"
      "fn keep(n: int) -> int {\n  m = n - 1\n  r = id(m)\n  if r > 100 { return m }\n"
      "  return r + m\n}\n"
      "fn back(n: int) -> int {\n  s = 0\n  m = n\n  for i in 0..n {\n    s += m\n"
      "    m = m - 2\n    s += id(m)\n  }\n  return s\n}\n"
      "print(keep(7), keep(500), back(10))\n";
  agree_on_more_files(text, "call1 immediates");
  CHECK(fused_count(text, Op::CALL1_ADDI, "t") == 3);  // n + 1, n + 255, n - -3
  CHECK(fused_count(text, Op::CALL1_SUBI, "t") == 3);  // n - 1, n - 255, n + -3
  // 256 and 1000 do not fit the immediate's byte; n * 2 is no add: plain call1.
  CHECK(fused_count(text, Op::CALL1, "t") == 3);
  // m is read after the call (in the same block, or around the loop's back-edge).
  CHECK(fused_count(text, Op::CALL1_SUBI, "keep") == 0);
  CHECK(fused_count(text, Op::CALL1_SUBI, "back") == 0);
  CHECK(fused_count(text, Op::CALL1_SUBI, "keep", 3) == 0);
  CHECK(fused_count(text, Op::CALL1_SUBI, "back", 3) == 0);
  testing::check_golden_file("vm/golden/reg_call1_immediates.txt",
                             fused_dump("fn id(n: int) -> int {\n  return n\n}\n"
                                        "fn t(n: int) -> int {\n"
                                        "  return id(n + 7) * id(n - 300)\n}\n",
                                        "t"));
}

TEST_CASE("reg: a fused call overflows the stack and is interrupted where the walker says") {
  for (int n : kFiles) {
    RegRunner r(make_reg_vm(n));
    INFO(n, " registers");
    auto res = r.submit("fn up(n: int) -> int {\n  return up(n + 1)\n}\nprint(up(0))\n");
    CHECK(res.error == "2:10: stack overflow");
    CHECK(fused_count("fn up(n: int) -> int {\n  return up(n + 1)\n}\n", Op::CALL1_ADDI) == 1);
  }
  agree_with_walker("fn up(n: int) -> int {\n  return up(n + 1)\n}\nprint(up(0))\n", "up");
  agree_with_walker(
      "fn d(n: int) -> int {\n  if n == 0 { return 0 }\n  return 1 + d(n - 1)\n}\n"
      "print(d(9999))\nprint(d(10000))\n",
      "depth");
  agree_when_interrupted("fn f(n: int) -> int {\n  return n\n}\nx = 5\nprint(f(x - 1))\n",
                         "interrupted fused call");
  agree_when_interrupted(
      "fn f(n: int) -> int {\n  if n < 2 { return n }\n  return f(n - 1) + f(n - 2)\n}\n"
      "print(1)\nprint(f(1))\n",
      "interrupted fib");
}

TEST_CASE("reg: return_add_int and return_addk_int") {
  const std::string text =
      "fn ra(a: int, b: int) -> int {\n  return a + b\n}\n"
      "fn rk(a: int) -> int {\n  return 5 + a\n}\n"
      "fn rn(a: int) -> int {\n  return a + -7\n}\n"
      "fn rf(a: float, b: float) -> float {\n  return a + b\n}\n"
      "big = 9223372036854775807\n"
      "print(ra(1, 2), ra(big, 1), rk(big), rk(-5), rn(0), rf(0.5, 0.25))\n";
  agree_on_more_files(text, "returns of sums");
  CHECK(fused_count(text, Op::RETURN_ADD_INT, "ra") == 1);
  CHECK(fused_count(text, Op::RETURN_ADDK_INT, "rk") == 1);
  CHECK(fused_count(text, Op::RETURN_ADDK_INT, "rn") == 1);
  CHECK(fused_count(text, Op::RETURN, "rf") == 1);  // floats are not fused
  testing::check_golden_file("vm/golden/reg_return_addk.txt", fused_dump(text, "rk"));
}

TEST_CASE("reg: conditional returns (ret*k_int) for all six comparisons") {
  std::string text;
  const char* ops[] = {"==", "!=", "<", "<=", ">", ">="};
  const Op fused[] = {Op::RETEQK_INT, Op::RETNEK_INT, Op::RETLTK_INT,
                      Op::RETLEK_INT, Op::RETGTK_INT, Op::RETGEK_INT};
  for (int i = 0; i < 6; ++i) {
    std::string name = "c" + std::to_string(i);
    text += "fn " + name + "(n: int, m: int) -> int {\n  if n " + ops[i] + " 3 { return m }\n" +
            "  return n * 10\n}\n";
    text += "fn " + name + "k(n: int) -> int {\n  if 3 " + ops[i] + " n { return n }\n" +
            "  return n * 10\n}\n";
    text += "fn " + name + "f(x: float) -> float {\n  if x " + ops[i] + " 3.0 { return x }\n" +
            "  return x * 10.0\n}\n";
    for (const char* v : {"-1", "2", "3", "4", "9223372036854775807"})
      text += "print(" + name + "(" + v + ", 77), " + name + "k(" + v + "), " + name + "f(" +
              "float(" + v + ")))\n";
    text += "z = 0.0\nprint(" + name + "f(z / z))\n";
  }
  agree_on_more_files(text, "conditional returns");
  for (int i = 0; i < 6; ++i) {
    std::string name = "c" + std::to_string(i);
    INFO(name);
    CHECK(fused_count(text, fused[i], name) == 1);
    CHECK(fused_count(text, Op::RETURN, name) == 1);  // the return n * 10
    // 3 OP n is n MIRROR(OP) 3: a conditional return all the same.
    int any = 0;
    for (Op op : fused) any += fused_count(text, op, name + "k");
    CHECK(any == 1);
    // Floats keep their compare-and-branch (negating a float comparison is not exact).
    for (Op op : fused) CHECK(fused_count(text, op, name + "f") == 0);
  }
}

TEST_CASE("reg: the trace of fused calls and returns, conditional returns both ways") {
  RegRunner r(make_reg_vm());
  auto res = r.submit(
      "fn f(n: int) -> int {\n"
      "  if n < 1 { return n }\n"
      "  return f(n - 1) + n\n"
      "}\n"
      "y = f(1)\n",
      {}, true);
  CHECK(res.error == "");
  testing::check_golden_file("vm/golden/reg_trace_fused_calls.txt", r.trace);
  CHECK(res.steps == 8);
}

TEST_CASE("reg: while loops agree with the walker on every kind of condition") {
  const std::string text =
      "fn k(n: int, x: float, flag: bool) -> int {\n"
      "  c = 0\n  i = 0\n"
      "  while i < n { i += 1\n    c += 1 }\n"
      "  while i > n - 2 { i -= 1 }\n"
      "  while i >= 0 && c < 100 { i -= 1\n    c += 2 }\n"
      "  while c > 200 || i < -3 { i += 1\n    c += 1 }\n"
      "  while !(i >= 5) { i += 1\n    if i == 2 { continue }\n    c += 10 }\n"
      "  y = x\n"
      "  while y < 10.0 { y += 1.5 }\n"
      "  while !(y <= 0.0) && y == y { y -= 4.0\n    c += 1 }\n"
      "  while y * 2.0 > -10.0 && !(y != y) { y -= 1.0 }\n"
      "  f = flag\n"
      "  while f { f = !f\n    c += 1000 }\n"
      "  while !f { f = true\n    c += 10000 }\n"
      "  j = 0\n"
      "  while j < 3 {\n    m = 0\n    while m < j { m += 1\n      c += 1 }\n    j += 1\n"
      "    if c > 100000 { break }\n  }\n"
      "  while j < 100 { j += 1\n    if j == 50 { return c + j } }\n"
      "  return c\n"
      "}\n"
      "z = 0.0\n"
      "print(k(0, 0.5, true), k(7, -3.0, false), k(3, z / z, true), k(-4, 12.0, false))\n"
      "g = 0\n"
      "while g < 5 { g += 1 }\n"
      "print(g)\n"
      "d = 1\n"
      "while 10 / d > 1 { d += 1 }\n"
      "print(d)\n"
      "d = 0\n"
      "while 10 / d > 1 { d += 1 }\n";
  agree_on_more_files(text, "while conditions");
}

TEST_CASE("reg: while loops are interrupted exactly where the walker says") {
  // The walker checks after each iteration's body, before the condition again.
  for (const char* text : {
           "i = 0\nwhile i < 0 { i += 1 }\nprint(i)\n",   // no iteration: no check
           "i = 0\nwhile i < 1 { i += 1 }\nprint(i)\n",   // one: checked after its body
           "i = 0\nwhile i < 5 { break }\nprint(i)\n",     // break: no check
           "i = 0\nwhile i < 5 { i += 1\n  continue }\n",  // continue: checked
           "x = 3\nwhile x > 0 && x < 10 { x -= 1 }\nprint(x)\n",
       })
    agree_when_interrupted(text, text);
  // The step limit stops a loop at the while statement.
  RegRunner r(make_reg_vm());
  RunOptions limited;
  limited.step_limit = 1000;
  auto res = r.submit("fn spin() {\n  i = 0\n  while i >= 0 { i = (i + 1) % 7 }\n}\nspin()\n",
                      limited);
  CHECK(res.error == "3:3: interrupted");
  CHECK(res.steps > 1000);
  CHECK(res.steps < 1010);
  for (int n : {3, 0}) {
    RegRunner small(make_reg_vm(n));
    CHECK(small
              .submit("fn spin() {\n  i = 0\n  while i >= 0 { i = (i + 1) % 7 }\n}\nspin()\n",
                      limited)
              .error == "3:3: interrupted");
  }
}

TEST_CASE("reg: fused calls with registers beyond a byte (a file of 300)") {
  std::string text = "fn id(n: int) -> int {\n  return n\n}\nfn wide(p: int) -> int {\n";
  for (int i = 0; i < 270; ++i)
    text += "  a" + std::to_string(i) + " = p + " + std::to_string(i) + "\n";
  text += "  s = id(a269 - 1) + id(a0 - 1)\n  return s + p";  // p, a0 .. a269 all live
  for (int i = 0; i < 270; ++i) text += " + a" + std::to_string(i);
  text += "\n}\nprint(wide(1), wide(-5))\n";
  agree_on_more_files(text, "wide");
  // With 300 registers a269 lives in r271: its call cannot name it in a byte.
  CHECK(fused_count(text, Op::CALL1_SUBI, "wide", 300) == 1);
  // With 16 it is spilled and reloaded into a scratch register, which can.
  CHECK(fused_count(text, Op::CALL1_SUBI, "wide", 16) == 2);
  for (const auto& u : units_of(text, 300)) check_allocation(u, 300, "wide");
}

TEST_CASE("reg: top-level loop variables live in registers and go back to their globals") {
  // B2 at top level, as students write it: sum and i are registers inside the loop (no
  // getglobal or setglobal there), and HALT writes them back.
  const std::string b2 = "n = 1000\ntotal = 0\nfor i in 0..n {\n  total = (total + i * i) % 1000003\n}\nprint(total)\n";
  agree_with_walker(b2, "b2 at top level");
  auto units = units_of(b2, 16);
  const RegFunction& top = units[0].fused;
  REQUIRE(top.promoted.size() == 3);  // n (the loop's bound), total and i
  int loop_start = -1, loop_end = -1;
  for (int pc = 0; pc < int(top.code.size()); ++pc)
    if (top.code[size_t(pc)].op == Op::FORLOOP || top.code[size_t(pc)].op == Op::FORLOOPK) {
      loop_end = pc;
      loop_start = top.code[size_t(pc)].c;
    }
  REQUIRE(loop_start >= 0);
  for (int pc = loop_start; pc <= loop_end; ++pc) {
    CHECK(top.code[size_t(pc)].op != Op::GETGLOBAL);
    CHECK(top.code[size_t(pc)].op != Op::SETGLOBAL);
  }
  std::string dump = disassemble(top, nullptr);
  CHECK(dump.find("halt        ") != std::string::npos);
  CHECK(dump.find(" <- r") != std::string::npos);

  // Sessions: what a later input reads is what the walker's would read, after a normal end,
  // an error in the loop, a loop that ran no iteration, and with a function reading a global.
  for (int n : kFiles) {
    INFO(n, " registers");
    const char* inputs[] = {
        // An error half way: sum and i as they were when it happened.
        "total = 0\nseen_i = 0\nfor i in 0..10 {\n  total = total + i\n  seen_i = i\n  if i == 5 { print(1 / (i - 5)) }\n}\n",
        "print(total, seen_i)\n",
        // A loop of no iteration: j never assigned, so reading it is an error.
        "m = 0\nfor j in 0..m {\n  q = j\n}\n",
        "print(q)\n",
        // Assigned in an earlier input, then kept in a register here.
        "acc = 5\n",
        "acc = 1\nfor k in 0..4 { acc = acc * 2 }\nprint(acc)\n",
        "print(acc + 1)\n",
        // A function that reads a global: that global stays a global.
        "fn peek() -> int { return seen }\nseen = 0\nfor t in 0..3 {\n  seen = seen + 10\n  print(peek())\n}\n",
        // A float and a bool.
        "x = 0.5\nflag = false\nfor s in 0..3 {\n  x = x * 2.0\n  flag = x > 3.0\n}\nprint(x, flag)\n",
        // An error inside a loop: its variable and one first assigned in its body were
        // assigned (the walker says so), and a later input may read them.
        "for v in 0..10 {\n  w = v * 2\n  if v == 3 { print(1 / (v - 3)) }\n}\n",
        "print(v, w)\n",
        // Assigned only in a loop that ran no iteration: still unassigned.
        "e = 0\nfor u in 0..e {\n  z = u\n}\n",
        "print(u)\n",
        "print(z)\n",
        // A break.
        "fresh = 0\nfor b in 0..100 {\n  fresh = fresh + 1\n  if b == 7 { break }\n}\n",
        "print(fresh)\n",
    };
    RegRunner w(make_ast_walker()), r(make_reg_vm(n));
    for (const char* in : inputs) {
      INFO(in);
      auto want = w.submit(in);
      auto got = r.submit(in);
      CHECK(got.output == want.output);
      CHECK(got.error == want.error);
    }
  }
}

TEST_CASE("reg: an interrupted top-level loop leaves its variables as far as it got") {
  RegRunner r(make_reg_vm());
  RunOptions limited;
  limited.step_limit = 10000;
  auto res = r.submit("count = 0\nlast = 0\nfor i in 0..100000000 {\n  count = count + 1\n  last = i\n}\n",
                      limited);
  CHECK(res.error.find("interrupted") != std::string::npos);
  // Each iteration adds one to count and copies i: they agree, far from the end.
  auto after = r.submit("print(count > 100, count < 10000, count - last)\n");
  CHECK(after.error == "");
  CHECK(after.output == "true true 1\n");
}
