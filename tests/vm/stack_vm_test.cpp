// The stack VM against the AST walker (the reference engine): every golden and must-fail
// program, multi-input sessions, interrupts, call depth; plus golden disassembly and trace
// (tests/vm/golden/stack_*.txt; DESCENT_UPDATE_GOLDEN=1 rewrites them).
#include "vm/stack_vm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tests/engine_util.h"
#include "tests/golden.h"
#include "tests/programs_test.h"
#include "vm/stack_compiler.h"
#include "vm/stack_disasm.h"
#include "vm/stack_fuse.h"

namespace fs = std::filesystem;
using namespace descent;
using descent::testing::ds_files;

namespace {

using Runner = testing::EngineRunner;

Runner stack_runner(bool fused = true) { return Runner(make_stack_vm(fused)); }
Runner walker_runner() { return Runner(make_ast_walker()); }

// Runs the inputs in turn on both engines (each with its own session) and checks that every
// input prints the same and fails the same.
// (Both with superinstructions fused and without: both must be right.)
void agree(const std::vector<std::string>& inputs, bool echo = false) {
  for (bool fused : {true, false}) {
    Runner s = stack_runner(fused), w = walker_runner();
    RunOptions opts;
    opts.echo = echo;
    for (size_t i = 0; i < inputs.size(); ++i) {
      INFO("fused ", fused, ", input ", i, ":\n", inputs[i]);
      auto a = s.submit(inputs[i], opts);
      auto b = w.submit(inputs[i], opts);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
    }
  }
}
void agree(const std::string& program) { agree(std::vector<std::string>{program}); }


// Compiles one program and returns its stack dump.
std::string dump(const std::string& text, bool echo = false, bool fused = false) {
  auto src = std::make_shared<SourceFile>("test.ds", text);
  std::vector<Diagnostic> diags;
  auto prog = std::make_shared<Program>(parse(src, diags));
  Module m;
  GlobalStore g;
  REQUIRE(diags.empty());
  REQUIRE(check(*prog, m, g.defined, diags));
  m.programs.push_back(prog);
  return stack::dump_stack(*prog, m, echo, fused);
}

}  // namespace

TEST_CASE("stack: the engine is called stack") {
  CHECK(std::string(make_stack_vm()->name()) == "stack");
}

TEST_CASE("stack: every golden program prints what the walker prints and its # expect: lines") {
  auto files = ds_files("programs");
  REQUIRE(files.size() >= 60);
  for (const auto& f : files)
    for (bool fused : {true, false}) {
      std::string text = testing::read_text(f.string());
      auto want = testing::parse_expectations(text);
      Runner s = stack_runner(fused), w = walker_runner();
      auto a = s.submit(text);
      auto b = w.submit(text);
      INFO(f.filename().string(), fused ? "" : " (plain)", "\n", a.output, a.error);
      CHECK(a.compiled);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
      std::string expected;
      for (const auto& l : want.output) expected += l + "\n";
      CHECK(a.output == expected);
    }
}

TEST_CASE("stack: every must-fail program fails as on the walker, at the same line:col") {
  auto files = ds_files("errors");
  REQUIRE(files.size() >= 40);
  int runtime = 0;
  for (const auto& f : files)
    for (bool fused : {true, false}) {
      std::string text = testing::read_text(f.string());
      auto want = testing::parse_expectations(text);
      Runner s = stack_runner(fused), w = walker_runner();
      auto a = s.submit(text);
      auto b = w.submit(text);
      INFO(f.filename().string(), fused ? "" : " (plain)", "\n", a.output, a.error);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
      if (want.exit_code == 1) {
        ++runtime;
        REQUIRE(!want.errors.empty());
        CHECK(a.error == want.errors[0]);
      }
    }
  CHECK(runtime >= 20);  // 10+ runtime-error programs, each fused and plain
}

TEST_CASE(
    "stack: the seed example disassembles as push 15, store x, load x, push 10, add, push 5, sub") {
  testing::check_golden_file("vm/golden/stack_seed.txt", dump("x = 15\nx + 10 - 5\n"));
  // In the REPL the value is echoed rather than dropped.
  std::string echoed = dump("x = 15\nx + 10 - 5\n", true);
  CHECK(echoed.find("0027    | ECHO                       int\n") != std::string::npos);
  // What the VM runs: fuse_superinstructions folds each constant into its operator.
  testing::check_golden_file("vm/golden/stack_seed_fused.txt",
                             dump("x = 15\nx + 10 - 5\n", false, true));
}

TEST_CASE("stack: golden disassembly of a for loop with continue and a short-circuit condition") {
  std::string sum =
      "fn sum(n: int) -> int {\n"
      "  s = 0\n"
      "  for i in 0..n {\n"
      "    if i % 3 == 0 || i > 10 { continue }\n"
      "    s += i\n"
      "  }\n"
      "  return s\n"
      "}\n"
      "print(\"sum\", sum(20))\n";
  // As the compiler emits it ...
  testing::check_golden_file("vm/golden/stack_sum.txt", dump(sum));
  // ... and as it runs, after fuse_superinstructions.
  testing::check_golden_file("vm/golden/stack_sum_fused.txt", dump(sum, false, true));
}

TEST_CASE("stack: golden disassembly of a while loop and a recursive function") {
  std::string fib =
      "fn fib(n: int) -> int {\n"
      "  if n < 2 { return n }\n"
      "  return fib(n - 1) + fib(n - 2)\n"
      "}\n"
      "i = 0\n"
      "while i < 3 { i += 1 }\n";
  testing::check_golden_file("vm/golden/stack_fib.txt", dump(fib));
  testing::check_golden_file("vm/golden/stack_fib_fused.txt", dump(fib, false, true));
}

// x = x + 1 written by hand, then a jump back: to the start, or into the middle of it.
stack::Chunk hand_chunk(int32_t jump_to) {
  stack::Chunk c;
  c.name = "hand";
  c.local_names = {"x"};
  c.local_types = {Type::Int};
  c.constants = {Value::of_int(1)};
  c.constant_types = {Type::Int};
  auto op = [&](stack::Op o, std::initializer_list<uint32_t> args) {
    c.code.push_back(static_cast<uint8_t>(o));
    for (uint32_t a : args)
      for (int b = 0; b < 4; ++b) c.code.push_back(static_cast<uint8_t>(a >> (8 * b)));
    c.locs.resize(c.code.size(), SourceLoc{0, 1, 1});
  };
  op(stack::Op::LOAD_LOCAL, {0});
  op(stack::Op::CONST, {0});
  op(stack::Op::ADD_INT, {});
  op(stack::Op::STORE_LOCAL, {0});
  op(stack::Op::JUMP, {static_cast<uint32_t>(jump_to - 21)});
  op(stack::Op::HALT, {});
  return c;
}

TEST_CASE(
    "stack: fuse_superinstructions chains its rules, retargets jumps, and never fuses across a "
    "jump target") {
  Module m;
  stack::Chunk c = hand_chunk(0);
  // CONST+ADD_INT -> ADD_CONST_INT; LOAD_LOCAL+that -> ADD_LOCAL_CONST_INT; +STORE -> INC.
  CHECK(stack::fuse_superinstructions(c) == 3);
  testing::check_golden_file("vm/golden/stack_hand_fused.txt", stack::disassemble(c, m));
  stack::Chunk d = hand_chunk(10);  // lands on ADD_INT: nothing around it may be fused
  std::string before = stack::disassemble(d, m);
  CHECK(stack::fuse_superinstructions(d) == 0);
  CHECK(stack::disassemble(d, m) == before);
  // Int division by the constant 0 is left alone: it must fail, at its own location.
  CHECK(dump("x = 4\nprint(x / 0, x / 2)\n", false, true).find("DIV_INT\n") != std::string::npos);
  CHECK(dump("x = 4\nprint(x / 0, x / 2)\n", false, true).find("DIV_CONST_INT") !=
        std::string::npos);
}

TEST_CASE("stack: apply_peephole_rule runs a rule of its own; make_stack_vm_with_pass runs it") {
  Module m;
  // CONST k; ADD_INT -> ADD_CONST_INT k, with or without the jump-target check.
  auto rule = [](bool careful) {
    return [careful](stack::Chunk&, const std::vector<stack::Instruction>& code, size_t i,
                     stack::Rewrite& r) {
      if (i + 2 > code.size() || code[i].op != stack::Op::CONST || code[i + 1].op != stack::Op::ADD_INT)
        return false;
      if (careful && code[i + 1].is_target) return false;
      stack::Instruction f = code[i];
      f.op = stack::Op::ADD_CONST_INT;
      r.out = {f};
      r.used = 2;
      return true;
    };
  };
  stack::Chunk c = hand_chunk(0);
  CHECK(stack::apply_peephole_rule(c, rule(true)) == 1);
  std::string fused = stack::disassemble(c, m);
  CHECK(fused.find("ADD_CONST_INT") != std::string::npos);
  CHECK(fused.find("JUMP                       -> 0000") != std::string::npos);  // re-linked
  // The pass marks the targets and leaves the check to the rule.
  stack::Chunk d = hand_chunk(10);  // lands on ADD_INT
  CHECK(stack::apply_peephole_rule(d, rule(true)) == 0);
  stack::Chunk e = hand_chunk(10);
  CHECK(stack::apply_peephole_rule(e, rule(false)) == 1);
  // On the VM: the same output as the walker, fewer instructions than the plain code.
  const std::string text = "x = 0\nwhile x < 10 { x = x + 3 }\nprint(x + 1)\n";
  Runner mine(make_stack_vm_with_pass([&rule](stack::Chunk& ch) { stack::apply_peephole_rule(ch, rule(true)); }));
  Runner::Result got = mine.submit(text);
  CHECK(got.output == "13\n");
  CHECK(got.steps < stack_runner(false).submit(text).steps);
  CHECK(got.steps > stack_runner(true).submit(text).steps);  // one rule of seven
}

TEST_CASE("stack: the trace shows each instruction and the operand stack after it") {
  Runner s = stack_runner();
  RunOptions opts;
  opts.echo = true;
  auto r =
      s.submit("fn inc(a: int) -> int { return a + 1 }\nx = 15\nx + inc(10) - 5\n", opts, true);
  CHECK(r.error == "");
  CHECK(r.output == "21\n");
  testing::check_golden_file("vm/golden/stack_trace.txt", s.trace);
  CHECK(r.steps == 11);  // one per instruction executed, as traced
}

TEST_CASE("stack: the trace of a failing instruction names the error") {
  Runner s = stack_runner();
  auto r = s.submit("z = 0.5\nfor i in 0..2 { print(i, 1.5 * z) }\nn = 7 / int(z)\n", {}, true);
  CHECK(r.error == "3:7: division by zero");
  CHECK(r.output == "0 0.75\n1 0.75\n");
  CHECK(s.trace.find("FOR_LOOP                   .for1, -> 0029   ; l0 -34  [ 1 ]\n") !=
        std::string::npos);
  CHECK(s.trace.find("[ 0 ][ 0.75 ]\n") != std::string::npos);
  std::string last = s.trace.substr(s.trace.rfind('\n', s.trace.size() - 2) + 1);
  CHECK(last ==
        "<script>  0074    | DIV_INT                                               error: division "
        "by zero\n");
}

TEST_CASE("stack: a run counts one step per instruction executed") {
  Runner s = stack_runner();
  CHECK(s.submit("x = 15\n").steps == 3);  // CONST, STORE_GLOBAL, HALT
  // 10 iterations of FOR_LOOP + STORE_GLOBAL, plus CONST CONST FOR_PREP STORE_GLOBAL HALT
  CHECK(s.submit("for i in 0..10 { }\n").steps == 2 + 1 + 10 + 10 + 1);
}

TEST_CASE("stack: a multi-input session agrees with the walker, including a redefined function") {
  agree(
      {
          "fn f() -> int { return 1 }\nfn g() -> int { return f() + 10 }\nprint(g())",
          "x = 5\nx * 2\nx += g()\nx",
          "fn f() -> int { return 2 }\nprint(g())",
          "g()\nprint(1 / (x - x))",  // a runtime error leaves the session usable
          "y = x * 1.5\ny\nfn h(a: float) -> bool { return a > y }\nh(7)\nh(x)",
          "fn f() -> int { return limit }\nprint(g())",  // undefined variable 'limit' at run time
          "limit = 3\nprint(g())\nfor i in 0..3 { i }\ni",
      },
      /*echo=*/true);
}

TEST_CASE("stack: the same engine object serves fresh sessions (no stale function cache)") {
  auto engine = make_stack_vm();
  for (int round = 0; round < 3; ++round) {
    Runner r(nullptr);
    r.engine = std::move(engine);
    std::string body = std::to_string(round);
    r.submit("fn f() -> int { return " + body + " }\nprint(f())");
    CHECK(r.out == body + "\n");
    engine = std::move(r.engine);
  }
}

TEST_CASE("stack: echo prints every type and skips void calls") {
  agree({"fn v() { print(\"v\") }\n1\n2.5\ntrue\nv()\n-0.0\n1e300 * 10.0\n7 / 2\n"}, true);
}

TEST_CASE("stack: an interrupt flag stops a loop and a recursion") {
  std::atomic<bool> flag{true};
  RunOptions opts;
  opts.interrupt = &flag;
  Runner s = stack_runner();
  testing::check_interrupt_stops(s, flag, opts);
}

TEST_CASE("stack: a step limit stops the program with interrupted") {
  RunOptions opts;
  opts.step_limit = 1000;
  Runner s = stack_runner();
  auto r = s.submit("n = 0\nwhile true { n += 1 }\n", opts);
  CHECK(r.error == "2:1: interrupted");
  CHECK(r.steps > 1000);
  CHECK(r.steps < 1010);
  // Under the limit nothing happens.
  CHECK(s.submit("for i in 0..10 { }\n", opts).error == "");
}

TEST_CASE("stack: stack overflow at exactly 10,001 frames, at the call that would make it") {
  std::string depth = "fn d(n: int) -> int {\n  if n == 0 { return 0 }\n  return 1 + d(n - 1)\n}\n";
  Runner s = stack_runner();
  auto ok = s.submit(depth + "print(d(9999))\n");  // 10,000 frames
  CHECK(ok.error == "");
  CHECK(ok.output == "9999\n");
  CHECK(s.submit("print(d(10000))\n").error == "3:14: stack overflow");
  // The session goes on, and the stack is whole again.
  CHECK(s.submit("print(d(5))\n").output == "5\n");
  // The walker checks the depth before evaluating the arguments: so does the VM (PRECALL).
  std::string args =
      "fn id(n: int) -> int { return n }\n"
      "fn e(n: int) -> int {\n  if n == 0 { return id(id(1) + 1 / n) }\n  return e(n - 1)\n}\n";
  agree({args + "print(e(9998))\n", "print(e(9999))\n", "print(e(10000))\n"});
}

TEST_CASE("stack: frames bigger than the preallocated stack grow it") {
  // 300 locals per frame x 5000 frames is more than the initial value stack holds.
  std::string fn = "fn big(n: int) -> int {\n";
  for (int i = 0; i < 300; ++i)
    fn += "  v" + std::to_string(i) + " = n + " + std::to_string(i) + "\n";
  fn += "  if n == 0 { return v299 }\n  return big(n - 1) + v1 - n - 1\n}\nprint(big(5000))\n";
  agree(fn);
}

TEST_CASE("stack: corner cases agree with the walker") {
  agree("x = -9223372036854775807 - 1\nprint(x, -x, x / -1, x % -1, abs(x), -(x + 0))\n");
  agree("print(-0.0, 0.0, 0.0 * -1.0)\nz = 0.0\nprint(z / z, -1.0 / z, 1.0 / z)\n");
  agree(
      "n = 0.0 / 0.0\n"
      "if n < 1.0 { print(\"lt\") } else { print(\"not lt\") }\n"
      "if !(n >= 1.0) { print(\"not ge\") }\n"
      "while n > 0.0 || n <= 0.0 { print(\"never\") }\n"
      "print(n == n, n != n, n < n, min(n, 1.0), max(1.0, n), min(1.0, n))\n"
      "k = 0\nwhile !(n == n) && k < 2 { k += 1 }\nprint(k)\n");
  agree(
      "fn f(a: float, b: int) -> float {\n"
      "  t = a\n  t += b\n  t -= 0.5\n  t *= 2\n  t /= 3\n  t %= 2.0\n"
      "  u = b\n  u += 7\n  u -= 2\n  u *= -3\n  u /= 2\n  u %= 5\n"
      "  for i in u..b { u += i; t += float(i) }\n"
      "  return t + float(u)\n}\n"
      "print(f(1.5, 4), f(-2.0, -9))\n"
      "g = 3\ng %= 2\ng += 10\nprint(g, int(f(0.0, 0)), sqrt(2.0), floor(-1.5), abs(-2.5), "
      "exp(1.0))\n"
      "print(log(10.0), sin(1.0), cos(1), min(3, 4), max(3, 4.5), min(2.0, 1))\n");
  agree(
      "fn side(t: int, v: bool) -> bool {\n  print(\"side\", t)\n  return v\n}\n"
      "a = side(1, true) && side(2, false) || side(3, true)\nprint(a)\n"
      "if side(4, false) || !side(5, false) && side(6, true) { print(\"yes\") }\n"
      "while side(7, false) && side(8, true) { }\n"
      "b = !(side(9, true) || side(10, true)) == false\nprint(b, true == false, true != false)\n");
  agree(
      "for i in 0..3 {\n  for j in i..4 {\n    if j == 2 { continue }\n    if j == 3 { break }\n"
      "    print(i, j)\n  }\n  i = 100\n}\nprint(i)\n"
      "for q in 5..2 { print(q) }\n"
      "for r in 0..3 { print(r) }\nprint(r)\n"
      "fn loops() -> int {\n  for a in 0..3 { for b in 0..3 { if a * b == 2 { return a * 10 + b } "
      "} }\n"
      "  return -1\n}\nprint(loops())\n");
  agree(
      "print()\nprint(\"a\\tb\", \"\\\"q\\\"\", 1, \"\")\nprint(1e16, 1e-5, 123456789.0, 0.1 + "
      "0.2)\n");
  agree("fn v(n: int) {\n  if n > 2 { return }\n  print(n)\n  v(n + 1)\n}\nv(0)\nv(5)\n");
  agree("fn w() -> float {\n  if true { return 1 }\n  return 2.5\n}\nprint(w())\n");
  agree("i = 0\nwhile true {\n  i += 1\n  if i < 3 { continue }\n  break\n}\nprint(i)\n");
}

// Random well-typed programs: every construct the compiler has a special case for (fused
// jumps, short-circuit, superinstructions, for/while with break and continue, promotions,
// runtime errors) in random combinations.
class ProgramGen {
 public:
  explicit ProgramGen(uint32_t seed) : rng_(seed) {}

  std::string program() {
    std::string fn =
        "fn f(a: int, b: int, x: float, p: bool) -> int {\n"
        "  i1 = a\n  i2 = b\n  f1 = x\n  b1 = p\n";
    ints_ = {"a", "b", "i1", "i2"};
    for (int n = 1 + pick(6); n > 0; --n) fn += stmt(1, 0);
    fn += "  print(i1, i2, f1, b1)\n  return i1 - i2\n}\n";
    std::string top = fn;
    if (pick(5)) top += "gv = " + std::to_string(pick(9) - 4) + "\n";
    top += "print(f(3, -4, 2.5, true))\n";
    top += "for t in 0..4 { print(f(t, t - 2, float(t) * 0.7, t % 2 == 0)) }\n";
    top += "gv = 2\nprint(f(-7, 9, -0.0, false))\n";
    return top;
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::string ind(int d) { return std::string(2 * static_cast<size_t>(d), ' '); }

  std::string int_expr(int d) {
    if (d <= 0 || pick(4) == 0) {
      int r = pick(8);
      if (r < 3) return std::to_string(pick(21) - 10);
      if (r == 3) return "gv";
      return ints_[static_cast<size_t>(pick(static_cast<int>(ints_.size())))];
    }
    static const char* ops[] = {"+", "-", "*", "/", "%"};
    switch (pick(9)) {
      case 0:
      case 1:
      case 2:
      case 3: return "(" + int_expr(d - 1) + " " + ops[pick(5)] + " " + int_expr(d - 1) + ")";
      case 4: return "-(" + int_expr(d - 1) + ")";
      case 5: return "abs(" + int_expr(d - 1) + ")";
      case 6:
        return std::string(pick(2) ? "min(" : "max(") + int_expr(d - 1) + ", " + int_expr(d - 1) +
               ")";
      case 7: return "int(" + float_expr(d - 1) + ")";
      default: return ints_[static_cast<size_t>(pick(static_cast<int>(ints_.size())))] + " + 1";
    }
  }

  std::string float_expr(int d) {
    if (d <= 0 || pick(4) == 0) {
      static const char* lits[] = {"1.5", "0.0", "-2.25", "1e10", "0.1", "3.0"};
      int r = pick(4);
      if (r == 0) return lits[pick(6)];
      return pick(2) ? "x" : "f1";
    }
    static const char* ops[] = {"+", "-", "*", "/", "%"};
    switch (pick(7)) {
      case 0:
      case 1:
      case 2: return "(" + float_expr(d - 1) + " " + ops[pick(5)] + " " + float_expr(d - 1) + ")";
      case 3: return "(" + float_expr(d - 1) + " * " + int_expr(d - 1) + ")";  // promotion
      case 4: return "float(" + int_expr(d - 1) + ")";
      case 5: return std::string(pick(2) ? "sqrt(abs(" : "floor((") + float_expr(d - 1) + "))";
      default: return "-" + float_expr(d - 1);
    }
  }

  std::string bool_expr(int d) {
    static const char* cmps[] = {"<", "<=", ">", ">=", "==", "!="};
    if (d <= 0 || pick(5) == 0) {
      int r = pick(5);
      if (r == 0) return pick(2) ? "true" : "false";
      if (r == 1) return pick(2) ? "p" : "b1";
      if (r == 2) return "(" + float_expr(1) + " " + cmps[pick(6)] + " " + float_expr(1) + ")";
      return "(" + int_expr(1) + " " + cmps[pick(6)] + " " + int_expr(1) + ")";
    }
    switch (pick(6)) {
      case 0:
      case 1: return "(" + bool_expr(d - 1) + " && " + bool_expr(d - 1) + ")";
      case 2:
      case 3: return "(" + bool_expr(d - 1) + " || " + bool_expr(d - 1) + ")";
      case 4: return "!(" + bool_expr(d - 1) + ")";
      default: return "(" + bool_expr(d - 1) + " == " + bool_expr(d - 1) + ")";
    }
  }

  std::string block(int d, int loops) {
    std::string b;
    for (int n = 1 + pick(3); n > 0; --n) b += stmt(d, loops);
    return b;
  }

  std::string stmt(int d, int loops) {
    static const char* aops[] = {"=", "+=", "-=", "*=", "/=", "%="};
    int r = pick(d >= 4 ? 6 : 10);
    switch (r) {
      case 0: return ind(d) + (pick(2) ? "i1 " : "i2 ") + aops[pick(6)] + " " + int_expr(2) + "\n";
      case 1:
        return ind(d) + "f1 " + aops[pick(6)] + " " + (pick(3) ? float_expr(2) : int_expr(1)) +
               "\n";
      case 2: return ind(d) + "b1 = " + bool_expr(2) + "\n";
      case 3:
        return ind(d) + "print(\"s\", " + int_expr(1) + ", " + float_expr(1) + ", " + bool_expr(1) +
               ")\n";
      case 4:
        if (loops > 0) return ind(d) + (pick(2) ? "break\n" : "continue\n");
        return ind(d) + "i1 += 1\n";
      case 5:
        if (pick(3) == 0)
          return ind(d) + "if " + bool_expr(2) + " { return " + int_expr(1) + " }\n";
        return ind(d) + "i2 -= 1\n";
      case 6:
      case 7: {
        std::string s = ind(d) + "if " + bool_expr(2) + " {\n" + block(d + 1, loops) + ind(d) + "}";
        if (pick(2)) s += " else {\n" + block(d + 1, loops) + ind(d) + "}";
        return s + "\n";
      }
      case 8: {
        std::string w = "w" + std::to_string(++counter_);
        return ind(d) + w + " = 0\n" + ind(d) + "while " + w + " < " + std::to_string(pick(6)) +
               (pick(2) ? " && " + bool_expr(1) : "") + " {\n" + ind(d + 1) + w + " += 1\n" +
               block(d + 1, loops + 1) + ind(d) + "}\n";
      }
      default: {
        std::string k = "k" + std::to_string(++counter_);
        std::string head =
            ind(d) + "for " + k + " in (" + int_expr(1) + ") % 5..(" + int_expr(1) + ") % 7 {\n";
        ints_.push_back(k);
        std::string body = block(d + 1, loops + 1);
        if (pick(4) == 0) body += ind(d + 1) + k + " = " + k + " * 3\n";
        ints_.pop_back();
        return head + body + ind(d) + "}\n";
      }
    }
  }

  std::mt19937 rng_;
  std::vector<std::string> ints_;
  int counter_ = 0;
};

TEST_CASE("stack: 400 random programs agree with the walker") {
  int compiled = 0, failed_at_run_time = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    std::string text = ProgramGen(seed).program();
    Runner s = stack_runner(), p = stack_runner(false), w = walker_runner();
    auto a = s.submit(text);
    auto b = w.submit(text);
    auto c = p.submit(text);
    INFO("seed ", seed, "\n", text);
    CHECK(a.output == b.output);
    CHECK(a.error == b.error);
    CHECK(c.output == b.output);
    CHECK(c.error == b.error);
    compiled += a.compiled;
    failed_at_run_time += a.compiled && !a.error.empty();
  }
  CHECK(compiled >= 360);           // the generator writes well-typed programs
  CHECK(failed_at_run_time >= 20);  // and some of them stop with runtime errors
  MESSAGE(compiled, " compiled, ", failed_at_run_time, " stopped with a runtime error");
}

TEST_CASE("stack: docs/stack_vm.md lists every opcode") {
  std::string doc = testing::read_text(std::string(DESCENT_TESTS_DIR) + "/../docs/stack_vm.md");
  REQUIRE(!doc.empty());
  for (int i = 0; i < stack::kOpCount; ++i) {
    std::string name = stack::op_name(static_cast<stack::Op>(i));
    INFO(name);
    CHECK(doc.find("`" + name + "`") != std::string::npos);
  }
}

TEST_CASE("stack: a control-flow hook compiles if and while through the Emitter") {
  // The clox way, through the hook: a condition's value and JUMP_IF_FALSE, forward jumps
  // patched, one LOOP back-edge per while.
  int calls = 0;
  stack::CompileHooks hooks;
  hooks.control_flow = [&calls](const Stmt& s, stack::Emitter& e) {
    ++calls;
    CHECK(e.emit_jump(stack::Op::ADD_INT, s.loc) == SIZE_MAX);  // not a jump: nothing emitted
    size_t start = e.here();
    e.expr(*s.expr);
    size_t exit = e.emit_jump(stack::Op::JUMP_IF_FALSE, s.loc);
    if (s.kind == StmtKind::While) {
      e.begin_loop();
      e.block(s.body);
      stack::LoopJumps j = e.end_loop();
      for (size_t c : j.continues) e.patch_jump(c);
      e.emit_loop(start, s.loc);
      e.patch_jump(exit);
      for (size_t b : j.breaks) e.patch_jump(b);
      return;
    }
    e.block(s.body);
    size_t end = e.emit_jump(stack::Op::JUMP, s.loc);
    e.patch_jump(exit);
    e.block(s.else_body);
    e.patch_jump(end);
  };
  std::string text =
      "fn classify(n: int) -> int {\n"
      "  if n < 0 { return -1 } else if n == 0 { return 0 } else { return 1 }\n"
      "}\n"
      "i = 0\n"
      "s = 0\n"
      "while i < 20 {\n"
      "  i += 1\n"
      "  if i % 2 == 0 { continue }\n"
      "  j = 0\n"
      "  while true { j += 1; if j > i { break } }\n"
      "  if i > 15 { break }\n"
      "  s += j\n"
      "}\n"
      "print(s, i, classify(-4), classify(0), classify(9))\n";
  for (bool fused : {false, true}) {
    calls = 0;
    Runner hooked(make_stack_vm(fused, hooks)), w = walker_runner();
    auto a = hooked.submit(text), b = w.submit(text);
    CHECK(a.output == "72 17 -1 0 1\n");
    CHECK(a.output == b.output);
    CHECK(a.error == b.error);
    CHECK(calls == 7);  // every if (the else-if one too) and while, each compiled once
  }
  // The dump through the hook has exactly one LOOP per while; unhooked code is unchanged.
  auto src = std::make_shared<SourceFile>("test.ds", text);
  std::vector<Diagnostic> diags;
  auto prog = std::make_shared<Program>(parse(src, diags));
  Module m;
  GlobalStore g;
  REQUIRE(check(*prog, m, g.defined, diags));
  stack::Chunk plain = stack::compile_script(*prog, m, false);
  stack::Chunk hooked = stack::compile_script(*prog, m, false, &hooks);
  stack::CompileHooks none;
  CHECK(stack::compile_script(*prog, m, false, &none).code == plain.code);
  int loops = 0;
  for (size_t at = 0; at < hooked.code.size(); at += stack::instruction_length(hooked.op_at(at)))
    loops += hooked.op_at(at) == stack::Op::LOOP;
  CHECK(loops == 2);
  CHECK(hooked.code != plain.code);  // the compiler's own code fuses conditions into jumps
}

TEST_CASE("stack: a control-flow hook that forgets begin_loop gets unpatched jumps, not a crash") {
  // Sema puts every break inside a loop; only a hook can compile one outside begin_loop.
  stack::CompileHooks hooks;
  size_t handed_back = 99;
  hooks.control_flow = [&handed_back](const Stmt& s, stack::Emitter& e) {
    if (s.kind == StmtKind::While) {
      e.block(s.body);  // no begin_loop: the break has no loop to belong to
      handed_back = e.end_loop().breaks.size() + e.end_loop().breaks.size();
    }
  };
  auto src = std::make_shared<SourceFile>("test.ds", "i = 0\nwhile i < 3 { i += 1; break }\n");
  std::vector<Diagnostic> diags;
  Program prog = parse(src, diags);
  Module m;
  GlobalStore g;
  REQUIRE(check(prog, m, g.defined, diags));
  stack::Chunk c = stack::compile_script(prog, m, false, &hooks);
  CHECK(handed_back == 1);  // the break's JUMP, once; the second end_loop has nothing
  CHECK(c.op_at(c.code.size() - 1) == stack::Op::HALT);
}
