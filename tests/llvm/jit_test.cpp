// The JIT engine against the AST walker (the reference engine): every golden and must-fail
// program, multi-input sessions with redefinition, globals shared with other engines through
// the GlobalStore, interrupts, step limits, call depth, and the -O levels.
#include "llvm_backend/jit.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tests/engine_util.h"
#include "tests/programs_test.h"
#include "vm/stack_vm.h"

using namespace descent;
using descent::testing::ds_files;

namespace {

using Runner = testing::EngineRunner;

Runner jit_runner(int level = 2) { return Runner(llvmbe::make_jit_engine(level)); }
Runner walker_runner() { return Runner(make_ast_walker()); }

// Runs the inputs in turn on the JIT and on the walker (each its own session) and checks
// that every input prints the same and fails the same.
void agree(const std::vector<std::string>& inputs, bool echo = false, int level = 2) {
  Runner j = jit_runner(level), w = walker_runner();
  RunOptions opts;
  opts.echo = echo;
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("-O", level, ", input ", i, ":\n", inputs[i]);
    auto a = j.submit(inputs[i], opts);
    auto b = w.submit(inputs[i], opts);
    CHECK(a.output == b.output);
    CHECK(a.error == b.error);
  }
}
void agree(const std::string& program, int level = 2) { agree(std::vector<std::string>{program}, false, level); }

}  // namespace

TEST_CASE("jit: the engine is called jit and keeps its -O level") {
  auto e = llvmbe::make_jit_engine(3);
  CHECK(std::string(e->name()) == "jit");
  CHECK(e->opt_level() == 3);
  e->set_opt_level(7);
  CHECK(e->opt_level() == 3);
  e->set_opt_level(0);
  CHECK(e->opt_level() == 0);
}

TEST_CASE("jit: every golden program prints what the walker prints and its # expect: lines") {
  auto files = ds_files("programs");
  REQUIRE(files.size() >= 60);
  for (int level : {0, 2}) {
    auto engine = llvmbe::make_jit_engine(level);
    for (const auto& f : files) {
      std::string text = testing::read_text(f.string());
      auto want = testing::parse_expectations(text);
      Runner j(nullptr), w = walker_runner();
      auto a = j.submit(text, {}, false, engine.get());
      auto b = w.submit(text);
      INFO(f.filename().string(), " -O", level, "\n", a.output, a.error);
      CHECK(a.compiled);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
      std::string expected;
      for (const auto& l : want.output) expected += l + "\n";
      CHECK(a.output == expected);
    }
  }
}

TEST_CASE("jit: every must-fail program fails as on the walker, at the same line:col") {
  auto files = ds_files("errors");
  REQUIRE(files.size() >= 40);
  int runtime = 0;
  for (int level : {0, 2}) {
    auto engine = llvmbe::make_jit_engine(level);
    for (const auto& f : files) {
      std::string text = testing::read_text(f.string());
      auto want = testing::parse_expectations(text);
      Runner j(nullptr), w = walker_runner();
      auto a = j.submit(text, {}, false, engine.get());
      auto b = w.submit(text);
      INFO(f.filename().string(), " -O", level, "\n", a.output, a.error);
      CHECK(a.output == b.output);
      CHECK(a.error == b.error);
      if (want.exit_code == 1) {
        ++runtime;
        REQUIRE(!want.errors.empty());
        CHECK(a.error == want.errors[0]);
      }
    }
  }
  CHECK(runtime >= 20);
}

TEST_CASE("jit: a multi-input session agrees with the walker, including redefined functions") {
  for (int level : {0, 2})
    agree(
        {
            "fn f() -> int { return 1 }\nfn g() -> int { return f() + 10 }\nprint(g())",
            "x = 5\nx * 2\nx += g()\nx",
            "fn f() -> int { return 2 }\nprint(g())",  // g is re-linked to the new f
            "g()\nprint(1 / (x - x))",                 // a runtime error leaves the session usable
            "y = x * 1.5\ny\nfn h(a: float) -> bool { return a > y }\nh(7)\nh(x)",
            "fn f() -> int { return limit }\nprint(g())",  // undefined variable 'limit' at run time
            "limit = 3\nprint(g())\nfor i in 0..3 { i }\ni",
            "fn k() -> int { return g() * 2 }\nprint(k())",
            "fn f() -> int { return -1 }\nprint(k(), g(), f())",  // k -> g -> f: both re-linked
        },
        /*echo=*/true, level);
}

TEST_CASE("jit: one LLJIT serves every input and every session of the process") {
  // Set-up (LLJIT, TargetMachines) is made once per process; a session gets a library in it.
  Runner j = jit_runner();
  auto* engine = static_cast<llvmbe::JitEngine*>(j.engine.get());
  CHECK(j.submit("fn f(n: int) -> int { return n + 1 }\nprint(f(1))").output == "2\n");
  int instances = engine->last_stats().jit_instances;
  CHECK(instances >= 1);
  // Many inputs, each redefining f or calling it: the same instance, the newest f.
  for (int i = 0; i < 30; ++i) {
    std::string k = std::to_string(i);
    INFO("input ", i);
    CHECK(j.submit("fn f(n: int) -> int { return n + " + k + " }\nprint(f(1))").output ==
          std::to_string(1 + i) + "\n");
    CHECK(j.submit("x = f(2)\nprint(x)").output == std::to_string(2 + i) + "\n");
    CHECK(engine->last_stats().jit_instances == instances);
  }
  // A second session (and another -O level) shares it, with functions of its own.
  Runner other = jit_runner(0);
  auto* second = static_cast<llvmbe::JitEngine*>(other.engine.get());
  CHECK(other.submit("fn f(n: int) -> int { return n * 100 }\nprint(f(2))").output == "200\n");
  CHECK(second->last_stats().jit_instances == instances);
  CHECK(j.submit("print(f(1))").output == "30\n");  // the first session's f is untouched
  // The phases add up to no more than the compile time, and machine code was made.
  llvmbe::JitEngine::Stats st = second->last_stats();
  CHECK(st.codegen_seconds > 0);
  CHECK(st.setup_seconds + st.generate_seconds + st.optimize_seconds + st.codegen_seconds +
            st.link_seconds <= st.compile_seconds);
}

TEST_CASE("jit: a redefinition takes effect for callers compiled before it, and recompiles only them") {
  Runner j = jit_runner();
  auto* jit = static_cast<llvmbe::JitEngine*>(j.engine.get());
  CHECK(j.submit("fn sq(n: int) -> int { return n * n }\nfn use(n: int) -> int { return sq(n) + 1 }\n"
                 "fn other() -> int { return 5 }\nprint(use(3), other())")
            .output == "10 5\n");
  CHECK(jit->last_stats().functions_compiled == 3);
  CHECK(j.submit("print(use(4))").output == "17\n");
  CHECK(jit->last_stats().functions_compiled == 0);  // all machine code reused
  CHECK(j.submit("fn sq(n: int) -> int { return n * n * n }\nprint(use(2), other())").output ==
        "9 5\n");
  CHECK(jit->last_stats().functions_compiled == 2);  // sq and its caller use; not other
  CHECK(jit->last_stats().compile_seconds > 0);
}

TEST_CASE("jit: globals live in the GlobalStore, so engines can take turns in one session") {
  Runner s = jit_runner();
  auto walker = make_ast_walker();
  auto stack = make_stack_vm();
  CHECK(s.submit("x = 40\nfn bump(d: int) -> int { return x + d }\nflag = true\nr = 0.5").error == "");
  CHECK(s.globals.values[static_cast<size_t>(s.module.find_global("x"))].i == 40);
  CHECK(s.submit("x += 1\nprint(x, bump(1), flag, r)", {}, false, walker.get()).output == "41 42 true 0.5\n");
  CHECK(s.submit("x += 1\nflag = !flag\nr *= 3.0\nprint(x, bump(1), flag, r)").output ==
        "42 43 false 1.5\n");
  CHECK(s.submit("print(x, bump(2), flag, r)", {}, false, stack.get()).output == "42 44 false 1.5\n");
  CHECK(s.submit("y = 1\nx = 7\nprint(x / (y - 1))").error == "3:9: division by zero");
  // What ran before the error stays: the globals went back to the store.
  CHECK(s.submit("print(x, y)", {}, false, walker.get()).output == "7 1\n");
  CHECK(s.submit("print(x, y)").output == "7 1\n");
  // A function reads a global set by another engine (and checks it is defined).
  CHECK(s.submit("fn later() -> int { return z }\nif false { z = 1 }\nprint(later())").error ==
        "1:28: undefined variable 'z'");
  CHECK(s.submit("z = 9", {}, false, walker.get()).error == "");
  CHECK(s.submit("print(later())").output == "9\n");
}

TEST_CASE("jit: the same engine object serves fresh sessions (no stale code or globals)") {
  std::unique_ptr<Engine> engine = llvmbe::make_jit_engine();
  for (int round = 0; round < 3; ++round) {
    Runner r(nullptr);
    r.engine = std::move(engine);
    std::string body = std::to_string(round);
    std::string g = round == 1 ? "b" : "a";  // a different global in slot 0 in round 1
    r.submit(g + " = " + body + "\nfn f() -> int { return " + body + " + " + g + " }\nprint(f())");
    CHECK(r.out == std::to_string(2 * round) + "\n");
    engine = std::move(r.engine);
  }
}

TEST_CASE("jit: echo prints every type and skips void calls") {
  agree({"fn v() { print(\"v\") }\n1\n2.5\ntrue\nv()\n-0.0\n1e300 * 10.0\n7 / 2\n"}, true);
}

TEST_CASE("jit: an interrupt flag stops a loop and a recursion") {
  std::atomic<bool> flag{true};
  RunOptions opts;
  opts.interrupt = &flag;
  Runner s = jit_runner();
  testing::check_interrupt_stops(s, flag, opts);
  // Exponential recursion without loops is stopped at a call.
  flag = false;
  std::thread t2([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    flag = true;
  });
  auto r = s.submit("fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(90))\n",
               opts);
  t2.join();
  CHECK(r.error.find(": interrupted") != std::string::npos);
  CHECK(r.output == "");
  // And the session goes on.
  flag = false;
  CHECK(s.submit("print(fib(10))", opts).output == "55\n");
}

TEST_CASE("jit: a step limit stops the program with interrupted; it counts back-edges and calls") {
  RunOptions opts;
  opts.step_limit = 1000;
  Runner s = jit_runner();
  auto r = s.submit("n = 0\nwhile true { n += 1 }\n", opts);
  CHECK(r.error == "2:1: interrupted");
  CHECK(r.steps == 1001);
  CHECK(s.globals.values[0].i == 1001);  // the iterations that ran
  // Under the limit nothing happens; a tick is a back-edge or a call.
  auto ok = s.submit("fn id(a: int) -> int { return a }\nfor i in 0..10 { id(i) }\n", opts);
  CHECK(ok.error == "");
  CHECK(ok.steps == 20);
  // A long loop without a limit.
  CHECK(s.submit("t = 0\nfor i in 0..1000000 { t += i }\nprint(t)").output == "499999500000\n");
  CHECK(s.submit("for i in 0..1000000 { }").steps == 0);  // nobody counts without a limit
  opts.step_limit = 10'000'000;
  CHECK(s.submit("for i in 0..1000000 { }", opts).steps == 1000000);
}

TEST_CASE("jit: stack overflow at exactly 10,001 frames, at the call that would make it") {
  std::string depth = "fn d(n: int) -> int {\n  if n == 0 { return 0 }\n  return 1 + d(n - 1)\n}\n";
  for (int level : {0, 2}) {
    Runner s = jit_runner(level);
    auto ok = s.submit(depth + "print(d(9999))\n");  // 10,000 frames
    CHECK(ok.error == "");
    CHECK(ok.output == "9999\n");
    CHECK(s.submit("print(d(10000))\n").error == "3:14: stack overflow");
    CHECK(s.submit("print(d(5))\n").output == "5\n");
    // The depth is checked before the arguments are evaluated, as on the walker.
    std::string args =
        "fn id(n: int) -> int { return n }\n"
        "fn e(n: int) -> int {\n  if n == 0 { return id(id(1) + 1 / n) }\n  return e(n - 1)\n}\n";
    agree({args + "print(e(9998))\n", "print(e(9999))\n", "print(e(10000))\n"}, false, level);
    // Mutual recursion counts every frame.
    agree({"fn a(n: int) -> int {\n  if n == 0 { return 0 }\n  return b(n - 1)\n}\n"
           "fn b(n: int) -> int { return a(n) }\nprint(a(4999))\nprint(a(5000))\n"},
          false, level);
  }
}

TEST_CASE("jit: frames with many locals, 10,000 deep") {
  std::string fn = "fn big(n: int) -> int {\n";
  for (int i = 0; i < 300; ++i) fn += "  v" + std::to_string(i) + " = n + " + std::to_string(i) + "\n";
  fn += "  if n == 0 { return v299 }\n  return big(n - 1) + v1 - n - 1\n}\nprint(big(9999))\n";
  agree(fn, 0);
  agree(fn, 2);
}

TEST_CASE("jit: corner cases agree with the walker at -O0 and -O2") {
  for (int level : {0, 2}) {
    agree("x = -9223372036854775807 - 1\nprint(x, -x, x / -1, x % -1, abs(x), -(x + 0))\n", level);
    agree("fn d(a: int, b: int) -> int { return a / b }\nfn m(a: int, b: int) -> int { return a % b }\n"
          "x = -9223372036854775807 - 1\nprint(d(x, -1), m(x, -1), d(7, -2), m(-7, 2), d(x, 1))\n"
          "print(d(1, 0))\n",
          level);
    agree("print(-0.0, 0.0, 0.0 * -1.0)\nz = 0.0\nprint(z / z, -1.0 / z, 1.0 / z)\n", level);
    agree(
        "n = 0.0 / 0.0\n"
        "if n < 1.0 { print(\"lt\") } else { print(\"not lt\") }\n"
        "if !(n >= 1.0) { print(\"not ge\") }\n"
        "while n > 0.0 || n <= 0.0 { print(\"never\") }\n"
        "print(n == n, n != n, n < n, min(n, 1.0), max(1.0, n), min(1.0, n))\n"
        "k = 0\nwhile !(n == n) && k < 2 { k += 1 }\nprint(k)\n",
        level);
    agree(
        "fn f(a: float, b: int) -> float {\n"
        "  t = a\n  t += b\n  t -= 0.5\n  t *= 2\n  t /= 3\n  t %= 2.0\n"
        "  u = b\n  u += 7\n  u -= 2\n  u *= -3\n  u /= 2\n  u %= 5\n"
        "  for i in u..b { u += i; t += float(i) }\n"
        "  return t + float(u)\n}\n"
        "print(f(1.5, 4), f(-2.0, -9))\n"
        "g = 3\ng %= 2\ng += 10\nprint(g, int(f(0.0, 0)), sqrt(2.0), floor(-1.5), abs(-2.5), "
        "exp(1.0))\n"
        "print(log(10.0), sin(1.0), cos(1), min(3, 4), max(3, 4.5), min(2.0, 1))\n",
        level);
    agree(
        "fn side(t: int, v: bool) -> bool {\n  print(\"side\", t)\n  return v\n}\n"
        "a = side(1, true) && side(2, false) || side(3, true)\nprint(a)\n"
        "if side(4, false) || !side(5, false) && side(6, true) { print(\"yes\") }\n"
        "while side(7, false) && side(8, true) { }\n"
        "b = !(side(9, true) || side(10, true)) == false\nprint(b, true == false, true != false)\n"
        "print(side(11, true), 1, side(12, false))\n",
        level);
    agree(
        "for i in 0..3 {\n  for j in i..4 {\n    if j == 2 { continue }\n    if j == 3 { break }\n"
        "    print(i, j)\n  }\n  i = 100\n}\nprint(i)\n"
        "for q in 5..2 { print(q) }\n"
        "for r in 0..3 { print(r) }\nprint(r)\n"
        "fn loops() -> int {\n  for a in 0..3 { for b in 0..3 { if a * b == 2 { return a * 10 + b } "
        "} }\n"
        "  return -1\n}\nprint(loops())\n",
        level);
    agree("print()\nprint(\"a\\tb\", \"\\\"q\\\"\", 1, \"\")\nprint(1e16, 1e-5, 123456789.0, 0.1 + 0.2)\n",
          level);
    agree("fn v(n: int) {\n  if n > 2 { return }\n  print(n)\n  v(n + 1)\n}\nv(0)\nv(5)\n", level);
    agree("fn w() -> float {\n  if true { return 1 }\n  return 2.5\n}\nprint(w())\n", level);
    agree("i = 0\nwhile true {\n  i += 1\n  if i < 3 { continue }\n  break\n}\nprint(i)\n", level);
    agree("x = 2.5\nprint(int(x), int(-x), int(1e18))\nprint(int(1e19))\n", level);
    agree("x = 0.0 / 0.0\nprint(int(x))\n", level);
    agree("x = 9223372036854775807\nprint(x + 1, x * 2, -x - 2, abs(-x - 1))\n", level);
    agree("fn b(p: bool) -> bool { return !p }\nt = b(false)\nprint(t, b(t), t == b(t))\n", level);
  }
}

TEST_CASE("jit: an IR transform changes the code that runs; its reason stops the run") {
  auto jit = llvmbe::make_jit_engine(0);
  llvmbe::JitEngine* engine = jit.get();
  int units = 0;
  // Every add becomes a sub: 5 + 3 printing 2 shows that the transformed IR is what ran.
  engine->set_ir_transform([&units](llvm::Module& m) {
    ++units;
    for (auto& f : m)
      for (auto& bb : f)
        for (auto& i : llvm::make_early_inc_range(bb))
          if (auto* add = llvm::dyn_cast<llvm::BinaryOperator>(&i);
              add && add->getOpcode() == llvm::Instruction::Add) {
            auto* sub = llvm::BinaryOperator::CreateSub(add->getOperand(0), add->getOperand(1), "", add);
            add->replaceAllUsesWith(sub);
            add->eraseFromParent();
          }
    return std::string();
  });
  Runner r(std::move(jit));
  CHECK(r.submit("x = 5\nprint(x + 3)\n").output == "2\n");
  CHECK(units == 1);
  engine->set_ir_transform([](llvm::Module&) { return std::string("the verifier says no"); });
  auto failed = r.submit("print(x)\n");
  CHECK(failed.output == "");
  CHECK(failed.error.find("jit: the verifier says no") != std::string::npos);
  engine->set_ir_transform(nullptr);
  CHECK(r.submit("print(x + 3)\n").output == "8\n");
}

TEST_CASE("jit: a function too big for 10,000 frames on the stack fails cleanly, not by crashing") {
  auto big = [](int locals) {
    std::string fn = "fn big(n: int) -> int {\n";
    for (int i = 0; i < locals; ++i)
      fn += "  v" + std::to_string(i) + " = n + " + std::to_string(i) + "\n";
    fn += "  if n == 0 { return v" + std::to_string(locals - 1) +
          " }\n  return big(n - 1) + v1 - n - 1\n}\n";
    return fn;
  };
  // Big enough to carry the check, small enough to fit: same as the walker.
  agree(big(1000) + "print(big(9999))\n", 0);
  // 20,000 locals at -O0 (each in its own stack slot) would need gigabytes for 10,000 frames.
  Runner s = jit_runner(0);
  auto r = s.submit(big(20000) + "print(big(100))\nprint(big(9999))\n");
  CHECK(r.output == "19999\n");
  CHECK(r.error == "1:4: stack overflow");
  CHECK(s.submit("print(big(3))").output == "19999\n");  // and the session goes on
}

TEST_CASE("jit: top-level loop variables live in registers and go back to their globals") {
  // B2 at top level (codegen_test.cpp checks its IR: no load of a global in the loop).
  std::string b2 = "n = 1000\ntotal = 0\nfor i in 0..n {\n  total = (total + i * i) % 1000003\n}\nprint(total)\n";
  agree(b2);
  // Sessions: what a later input reads is what the walker's would read, after a normal end,
  // an error in the loop (its longjmp skips the end), a loop of no iteration, a function
  // reading a global, a float and a bool, a break, and a call that fails inside the loop.
  for (int level : {0, 2})
    agree({"total = 0\nseen_i = 0\nfor i in 0..10 {\n  total = total + i\n  seen_i = i\n  if i == 5 { print(1 / (i - 5)) }\n}\n",
           "print(total, seen_i)\n",
           "m = 0\nfor j in 0..m {\n  q = j\n}\n", "print(q)\n",
           "acc = 5\n", "acc = 1\nfor k in 0..4 { acc = acc * 2 }\nprint(acc)\n", "print(acc + 1)\n",
           "fn peek() -> int { return seen }\nseen = 0\nfor t in 0..3 {\n  seen = seen + 10\n  print(peek())\n}\n",
           "x = 0.5\nflag = false\nfor s in 0..3 {\n  x = x * 2.0\n  flag = x > 3.0\n}\nprint(x, flag)\n",
           "for v in 0..10 {\n  w = v * 2\n  if v == 3 { print(1 / (v - 3)) }\n}\n", "print(v, w)\n",
           "fresh = 0\nfor b in 0..100 {\n  fresh = fresh + 1\n  if b == 7 { break }\n}\n", "print(fresh)\n",
           "fn boom(a: int) -> int { return 10 / (a - 4) }\nsum = 0\nfor c in 0..9 {\n  sum = sum + boom(c)\n}\n",
           "print(sum, c)\n"},
          false, level);
}

TEST_CASE("jit: an interrupted top-level loop leaves its variables as far as it got") {
  Runner j = jit_runner();
  RunOptions limited;
  limited.step_limit = 10000;
  auto res = j.submit("count = 0\nlast = 0\nfor i in 0..100000000 {\n  count = count + 1\n  last = i\n}\n", limited);
  CHECK(res.error.find("interrupted") != std::string::npos);
  // Each iteration adds one to count and copies i: they agree, far from the end.
  auto after = j.submit("print(count > 100, count <= 10001, count - last)\n");
  CHECK(after.error == "");
  CHECK(after.output == "true true 1\n");
}
