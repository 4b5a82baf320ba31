// Issue 14's REPL view defects: views of the code that ran (#3), views of the functions of
// earlier inputs by name (#4), no silently ignored argument (#12), completion that depends
// on the command being completed (#15), and "did you mean" for misspelt names.
#include <doctest/doctest.h>

#include "frontend_util.h"

using fe::contains;

namespace {
void feed_fib(fe::ReplHarness& h) {
  h.feed("fn fib(n: int) -> int {");
  h.feed("  if n < 2 { return n }");
  h.feed("  return fib(n - 1) + fib(n - 2)");
  h.feed("}");
}
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST_CASE("#3: the LLVM and live views show the echo of the expression that ran") {
  fe::ReplHarness h;
  h.feed("x = 15");
  h.feed(":engine jit");
  h.feed("x + 10 - 5");
  CHECK(h.take_out() == "20\n");
  h.feed(":llvm opt");
  std::string ir = h.take_out();
  CHECK(contains(ir, "call void @descent_rt_print_int"));  // not just `ret void`
  h.feed(":reg live");
  std::string live = h.take_out();
  CHECK(contains(live, "echo        v2, int"));
  CHECK(contains(live, "v2         int   [2..3]"));  // used by the echo at 3, not [2..2]
  CHECK(h.take_err().empty());
}

TEST_CASE("#4: every code view takes a function of an earlier input, like dis.dis(fib)") {
  fe::ReplHarness h;
  feed_fib(h);
  h.feed(":engine reg");
  h.feed("fib(15)");
  CHECK(h.take_out() == "610\n");
  // Each view, what it must show, and what it must not: the default is the last input's
  // code (and the functions it defined); with a name, that function alone.
  const std::tuple<const char*, const char*, const char*> views[] = {
      {":reg alloc", "<top>", "fn fib"},
      {":reg alloc fib", "fn fib(n: int) -> int  [16-register file", "<top>"},
      {":stack fib", "== fib ==", "<script>"},
      {":stack fused fib", "== fib ==", "<script>"},
      {":llvm fib", "define i64 @ds.fib", "descent_main"},
      {":stage reg fib", "fn fib(n: int) -> int  [virtual", "<top>"},
      {":asm aarch64 fib", "ds.fib", "descent_main"},
  };
  for (const auto& [input, shown, absent] : views) {
    INFO(input);
    h.feed(input);
    std::string text = h.take_out();
    CHECK(contains(text, shown));
    CHECK_FALSE(contains(text, absent));
  }
  CHECK(h.take_err().empty());
  // The spill lesson: a function with more values live than registers.
  h.feed("fn mix(a: int, b: int, c: int) -> int { return (a + b) * (b + c) * (a + c) }");
  h.feed("mix(1, 2, 3)");
  h.feed(":registers 3");
  h.take_out();
  h.feed(":reg live mix");
  CHECK(contains(h.take_out(), "(8, 4 spilled) for a 3-register file"));
  // The structured views take the same name.
  CHECK(h.session.listing("reg", "fib").front().text.rfind("fn fib", 0) == 0);
  REQUIRE(h.session.live_ranges("mix").size() == 1);
  CHECK(h.session.live_ranges("mix")[0].function == "mix");
}

TEST_CASE("#12: no argument is silently ignored") {
  fe::ReplHarness h;
  feed_fib(h);
  // Each input, and the error it must give.
  const std::pair<const char*, const char*> refused[] = {
      {":engine reg extra", "error: :engine takes at most 1 argument, not 'extra'"},
      {":stack xyz", "error: no function 'xyz' (functions: fib)"},
      {":stack fbi", "error: no function 'fbi' (did you mean 'fib'?)"},
      {":llvm opt fib extra", "error: :llvm takes at most 2 arguments, not 'extra'"},
      {":reg alloc live", "usage: :reg [alloc|fused|live] [FUNCTION]"},
      {":tokens fib", "error: :tokens takes no arguments, not 'fib'"},
      {":stage tokens text fib", "the tokens stage shows the last input only"},
  };
  for (const auto& [input, error] : refused) {
    h.feed(input);
    CHECK(contains(h.take_err(), error));
    CHECK(h.take_out().empty());
  }
  h.feed(":engine");
  CHECK(contains(h.take_out(), "engine: ast"));  // unchanged
  // :trace says whether the engine traces, and which engines do.
  h.feed(":trace");
  CHECK(contains(h.take_err(), "note: the ast engine does not trace"));
  h.feed(":trace");
  h.feed(":engine stack");
  h.take_out();
  h.feed(":trace");
  CHECK(h.take_out() == "trace on\n");
  CHECK(h.take_err().empty());
  h.feed(":engine jit");
  CHECK(contains(h.take_err(), "note: the jit engine does not trace"));
  h.feed(":device cpu   # a comment is not an argument");
  CHECK(h.take_err().empty());
}

TEST_CASE("#12: the CLI says when --trace or --registers has no effect") {
  fe::TempDir dir;
  std::string file = dir.write("p.ds", "print(1 + 2)\n");
  for (const char* engine : {"ast", "jit"}) {
    auto r = fe::run_descent({"run", file, "--engine", engine, "--trace"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "3\n");
    CHECK(contains(r.err, std::string("note: the ") + engine + " engine does not trace"));
  }
  auto r = fe::run_descent({"run", file, "--registers", "3"});
  CHECK(contains(r.err, "no effect without --engine reg"));
  r = fe::run_descent({"run", file, "--engine", "reg", "--registers", "3"});
  CHECK(r.err.empty());
}

TEST_CASE("#15: completion candidates depend on the command being completed") {
  fe::ReplHarness h;
  feed_fib(h);
  auto& r = h.repl;
  CHECK(r.complete(":device ", "o") == std::vector<std::string>{"opencl"});
  CHECK(has(r.complete(":sched ", "sp"), "split"));
  for (const char* cmd : {":stage ", ":asm "}) {
    auto v = r.complete(cmd, "");
    CHECK_FALSE(has(v, "int"));
    CHECK_FALSE(has(v, "float"));
  }
  CHECK(has(r.complete(":stage ", "as"), "asm"));
  CHECK(has(r.complete(":asm ", ""), "aarch64"));
  CHECK(r.complete(":engine ", "r") == std::vector<std::string>{"reg"});
  CHECK(r.complete(":engine reg ", "").empty());  // :engine takes one word
  CHECK(r.complete(":reg ", "f") == std::vector<std::string>{"fused", "fib"});
  CHECK(r.complete(":reg alloc ", "f") == std::vector<std::string>{"fib"});
  CHECK(r.complete(":stage reg ", "f") == std::vector<std::string>{"fib"});
  CHECK(r.complete("", "fi") == std::vector<std::string>{"fib("});  // no space: fib(10)
  CHECK(has(r.complete("x = ", "flo"), "float"));
  CHECK(r.complete("x = ", "pri") == std::vector<std::string>{"print("});
  CHECK(has(r.complete("", ":st"), ":stack"));
  h.feed(":kernel matmul");
  CHECK(has(r.complete(":sched split ", ""), "i"));
}

TEST_CASE("did you mean: misspelt commands, stages and engines") {
  fe::ReplHarness h;
  h.feed("1 + 1");
  h.feed(":stakc");
  CHECK(contains(h.take_err(), "unknown command ':stakc' (did you mean :stack? try :help)"));
  h.feed(":stage reg-aloc");
  CHECK(contains(h.take_err(), "unknown stage 'reg-aloc' (did you mean 'reg-alloc'?"));
  h.feed(":engine stak");
  CHECK(contains(h.take_err(), "unknown engine 'stak' (did you mean 'stack'?"));
  h.feed(":qwertyuiop");
  CHECK(contains(h.take_err(), "unknown command ':qwertyuiop' (try :help)"));
}

TEST_CASE(":analyze and :cfg: the abstract interpretation of the last input, in each domain") {
  fe::ReplHarness h;
  h.feed("fn f(n: int) -> int { return n * 2 }");
  h.feed("s = 0; for i in 0..10 { s = f(i) }");
  h.feed(":analyze");
  std::string facts = h.take_out();
  CHECK(contains(facts, "facts after each line (product):"));
  CHECK(contains(facts, "# s = 0; i in [0, 9]; s in [0, 18], = 0 mod 2"));
  h.feed(":analyze intervals unroll=0 explain");
  std::string classic = h.take_out();
  CHECK(contains(classic, "# s = 0; i in [0, 9]; s in [0, 18]\n"));
  CHECK(contains(classic, "widened (not unrolled)"));
  h.feed(":analyze unroll=64 explain");
  std::string unrolled = h.take_out();
  CHECK(contains(unrolled, "unrolled: its head reached 11 times"));
  // Each iteration calls f with its own i: ten calling contexts, or one summary for all.
  CHECK(contains(unrolled, "fn f: analysed in 10 calling contexts"));
  h.feed(":analyze summaries explain");
  std::string summaries = h.take_out();
  CHECK(contains(summaries, "fn f: its summary (arguments joined over every call)"));
  h.feed(":analyze contexts");
  h.take_out();
  h.feed(":analyze signs");
  CHECK(contains(h.take_out(), "facts after each line (signs):"));
  h.feed(":analyze states");  // the domain stays signs
  std::string states = h.take_out();
  CHECK(contains(states, "(for.head, loop head)"));
  h.feed(":analyze multiply");
  CHECK(contains(h.take_out(), "fn f: syntactically multiplies"));
  h.feed(":cfg");
  CHECK(contains(h.take_out(), "if i.next < i.end -> B"));
  h.feed(":cfg dot");
  CHECK(contains(h.take_out(), "digraph cfg {"));
  CHECK(h.take_err().empty());
  h.feed(":analyze octagons");
  CHECK(contains(h.take_err(), "usage: :analyze [constants|signs|intervals|congruences|sets|product] [states|multiply] [explain] [unroll=N] "
                                  "[contexts|summaries]"));
  // An input that did not check has nothing to analyse, and the REPL goes on.
  h.feed("y = undefined_name + 1");
  h.take_err();
  h.feed(":analyze");
  CHECK(contains(h.take_err() + h.take_out(), "the input has errors, so it was not analysed"));
  CHECK(h.repl.complete(":analyze ", "pr") == std::vector<std::string>{"product"});
}
