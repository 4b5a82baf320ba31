// The JIT's tiers (llvm_backend/jit.h, docs/llvm.md "Tiers"): which units start at -O0, that
// the background compile publishes its code, and that code reached through the slots after
// the switch behaves exactly as the walker does: results, runtime errors with their
// locations, the call-depth limit, step limits and redefinition.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "llvm_backend/jit.h"
#include "lang/walker.h"
#include "pipeline/pipeline.h"
#include "tests/engine_util.h"

using namespace descent;

namespace {

using Runner = testing::EngineRunner;

llvmbe::JitEngine& jit_of(Runner& r) { return static_cast<llvmbe::JitEngine&>(*r.engine); }

const char* const kFib =
    "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\n";

// Runs each input on a tiered JIT and on the walker, waiting after each for the JIT's
// background compile, so that every input after the first calls the second tier's code.
void agree_after_tiers(const std::vector<std::string>& inputs, RunOptions opts = {}) {
  Runner j(llvmbe::make_jit_engine(2)), w(make_ast_walker());
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("input ", i, ":\n", inputs[i]);
    auto a = j.submit(inputs[i], opts);
    auto b = w.submit(inputs[i], opts);
    CHECK(a.output == b.output);
    CHECK(a.error == b.error);
    jit_of(j).wait_for_tiers();
  }
}

}  // namespace

TEST_CASE("tiers: loop-free units start at -O0 and publish the -O level's code") {
  Runner j(llvmbe::make_jit_engine(2));
  auto& jit = jit_of(j);
  CHECK(j.submit(std::string(kFib) + "print(fib(15))").output == "610\n");
  llvmbe::JitEngine::Stats st = jit.last_stats();
  CHECK(st.functions_compiled == 1);
  CHECK(st.functions_tiered == 1);
  jit.wait_for_tiers();
  st = jit.last_stats();
  CHECK_FALSE(st.tier2_pending);
  CHECK(st.tier2_seconds > 0);  // published: the compile finished and took time
  CHECK(st.tier2_ready_seconds >= st.tier2_seconds);
  // The next input reuses the code (nothing compiled) and calls the second tier.
  CHECK(j.submit("print(fib(20))").output == "6765\n");
  CHECK(jit.last_stats().functions_compiled == 0);
  CHECK(jit.last_stats().functions_tiered == 0);
}

TEST_CASE("tiers: a loop anywhere in the unit, tensor code, -O0, no tiers or an IR transform: compiled before it runs") {
  SUBCASE("a loop in a function") {
    Runner j(llvmbe::make_jit_engine(2));
    CHECK(j.submit("fn s(n: int) -> int {\n  t = 0\n  for i in 0..n { t += i }\n  return t\n}\n"
                   "print(s(10))")
              .output == "45\n");
    CHECK(jit_of(j).last_stats().functions_tiered == 0);
  }
  SUBCASE("a loop in the top-level code") {
    Runner j(llvmbe::make_jit_engine(2));
    CHECK(j.submit(std::string(kFib) + "for i in 0..3 { print(fib(i)) }").output == "0\n1\n1\n");
    CHECK(jit_of(j).last_stats().functions_tiered == 0);
  }
  SUBCASE("tensor code (its kernels compile on the program's thread)") {
    Session session;  // a whole Session: the tensor runtime is the Session's
    REQUIRE(session.set_engine("jit"));
    std::string out;
    RunOptions opts;
    opts.out = [&out](std::string_view s) { out += s; };
    Outcome o = session.submit("fn twice(x: int) -> int { return 2 * x }\nt = ones([2, 2])\n"
                               "print(twice(3), sum_all(t))\n", "t.ds", opts);
    INFO(o.message);
    CHECK(o.status == Outcome::Ok);
    CHECK(out == "6 4.0\n");
    Session::JitStats st;
    REQUIRE(session.jit_stats(&st));
    CHECK(st.functions_compiled == 1);
    CHECK(st.functions_tiered == 0);
  }
  SUBCASE("-O0 has nothing faster to wait for") {
    Runner j(llvmbe::make_jit_engine(0));
    CHECK(j.submit(std::string(kFib) + "print(fib(10))").output == "55\n");
    CHECK(jit_of(j).last_stats().functions_tiered == 0);
  }
  SUBCASE("tiers off") {
    Runner j(llvmbe::make_jit_engine(2));
    jit_of(j).set_tiers(false);
    CHECK(j.submit(std::string(kFib) + "print(fib(10))").output == "55\n");
    CHECK(jit_of(j).last_stats().functions_tiered == 0);
  }
  SUBCASE("an IR transform sees every unit once, as it will run") {
    Runner j(llvmbe::make_jit_engine(2));
    int units = 0;
    jit_of(j).set_ir_transform([&units](llvm::Module&) {
      ++units;
      return std::string();
    });
    CHECK(j.submit(std::string(kFib) + "print(fib(10))").output == "55\n");
    CHECK(jit_of(j).last_stats().functions_tiered == 0);
    CHECK(units == 1);
  }
}

TEST_CASE("tiers: the second tier's code agrees with the walker, errors and limits included") {
  agree_after_tiers({std::string(kFib) +
                         "fn twice(x: int) -> int { return fib(x) * 2 }\n"
                         "fn half(x: float) -> float { return x / 2.0 }\nprint(twice(10), half(3.0))",
                     "print(twice(20), fib(15), half(-1.5))",
                     // A caller compiled later calls the published code through the slot.
                     "fn more(x: int) -> int { return twice(x) + fib(x) }\nprint(more(12))",
                     "print(more(13))"});
  // Runtime errors raised in second-tier code: the walker's message at the walker's place.
  agree_after_tiers({"fn q(a: int, b: int) -> int { return a / b }\nprint(q(7, 2))",
                     "print(q(1, 0))", "print(q(9, 3))"});
  // The call-depth limit counts second-tier frames as first-tier ones.
  agree_after_tiers({"fn down(n: int) -> int {\n  if n == 0 { return 0 }\n  return 1 + down(n - 1)\n}\n"
                     "print(down(5))",
                     "print(down(9999))", "print(down(10000))", "print(down(20000))"});
  // Redefinition after the switch: callers compiled before it call the new version.
  agree_after_tiers({"fn sq(n: int) -> int { return n * n }\nfn use(n: int) -> int { return sq(n) + 1 }\n"
                     "print(use(3))",
                     "print(use(4))", "fn sq(n: int) -> int { return n * n * n }\nprint(use(2))",
                     "print(use(5))"});
  // Globals read and written by tiered functions.
  agree_after_tiers({"g = 1\nfn bump(k: int) -> int {\n  g = g + k\n  return g\n}\nprint(bump(2))",
                     "print(bump(3), g)", "g = 100\nprint(bump(1))"});
}

TEST_CASE("tiers: a step limit stops second-tier code where it stops untiered code") {
  // Steps are each engine's own unit (the walker counts differently), so the JIT is compared
  // with itself: tiered, after the switch, against the same level with tiers off.
  RunOptions opts;
  opts.step_limit = 5000;
  Runner tiered(llvmbe::make_jit_engine(2)), plain(llvmbe::make_jit_engine(2));
  jit_of(plain).set_tiers(false);
  for (const std::string& input : {std::string(kFib) + "print(fib(5))", std::string("print(fib(30))"),
                                   std::string("print(fib(8))"), std::string("print(fib(25))")}) {
    INFO(input);
    auto a = tiered.submit(input, opts);
    auto b = plain.submit(input, opts);
    CHECK(a == b);
    CHECK(a.steps == b.steps);
    jit_of(tiered).wait_for_tiers();
  }
  CHECK(jit_of(plain).last_stats().functions_tiered == 0);
}

TEST_CASE("tiers: an engine ended while its background compile runs waits for it, then frees all") {
  for (int i = 0; i < 5; ++i) {
    Runner j(llvmbe::make_jit_engine(2));
    CHECK(j.submit(std::string(kFib) + "print(fib(3))").output == "2\n");
    // j goes out of scope now, most likely before the -O2 code exists.
  }
}
