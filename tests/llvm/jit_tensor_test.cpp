// Tensor code on the JIT (issue 15): it runs there (no fallback to the walker), prints and
// fails as the walker does, at the same places; the collector frees what no global or open
// frame holds, also inside functions; `descent build` refuses tensor code clearly.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "tensor/runtime.h"

using namespace descent;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Result {
  std::string output, message, note;
  Outcome::Status status = Outcome::Ok;
};

Result submit(Session& s, const std::string& source, bool echo = false) {
  Result r;
  RunOptions opts;
  opts.echo = echo;
  opts.out = [&r](std::string_view t) { r.output += t; };
  Outcome o = s.submit(source, "<test>", opts);
  r.message = o.message;
  r.note = o.note;
  r.status = o.status;
  return r;
}

// A fresh session (Session is not movable) running on `engine`.
std::unique_ptr<Session> on(const std::string& engine) {
  auto s = std::make_unique<Session>();
  REQUIRE(s->set_engine(engine));
  return s;
}

// The inputs, in turn, on a jit session and on an ast session: the same output, the same
// error at the same place, and the jit really ran them (no fallback note).
void agree(const std::vector<std::string>& inputs, bool echo = false) {
  auto jit = on("jit"), ast = on("ast");
  for (const auto& input : inputs) {
    INFO("input:\n", input);
    Result j = submit(*jit, input, echo), a = submit(*ast, input, echo);
    CHECK(j.note == "");
    CHECK(j.status == a.status);
    CHECK(j.output == a.output);
    CHECK(j.message == a.message);
  }
}

}  // namespace

TEST_CASE("jit: tensor code runs on the jit and prints what the walker prints") {
  agree({"s = [2, 3]\nprint(s, s[1], s[0] + s[1])\n",
         "t = relu(rand(s, 5))\nprint(t.shape, t[1, 2] >= 0.0, t.shape[0])\n",
         "fn f(x: f32[1, n]) -> f32[1, n] {\n  y = relu(x)\n  return y\n}\n"
         "print(f(ones([1, 4])), sum_all(f(ones([1, 3]))))\n",
         "a = arange(6)\nprint(a, zeros([2, 2]))\n",
         "fn total(k: int) -> float {\n  acc = 0.0\n  for i in 0..k {\n"
         "    acc = acc + sum_all(add(t, ones(t.shape)))\n  }\n  return acc\n}\nprint(total(3) > 17.9)\n"});
  // The REPL's echo shows tensors and shapes too.
  agree({"t = ones([1, 2])\n", "t\n", "t.shape\n", "sum_all(t)\n"}, /*echo=*/true);
}

TEST_CASE("jit: tensor errors say what the walker says, at the same place") {
  const char* fn_decls =
      "fn first(x: f32[1, 4]) -> f32[1, 2] {\n  return linear(x, ones([2, 4]))\n}\n"
      "fn wrong(x: f32[1, n]) -> f32[1, n] {\n  return ones([1, 3])\n}\n"
      "fn mix(k: int, a: f32[n, m], b: f32[m, n]) -> f32[n, n] {\n  return matmul(a, b)\n}\n";
  const std::vector<std::string> cases = {
      "s = [2, 0, 3]\n",                        // a dim below 1: at that dim
      "s = [2, 3]\nprint(s[2])\n",              // a shape index: at the index
      "t = ones([2, 3])\nprint(t[1])\n",        // the wrong number of indices: at t[...]
      "t = ones([2, 3])\nprint(t[1, -1])\n",    // out of range: at that index
      "print(arange(0))\n",                     // at the call
      "print(add(ones([2, 2]), ones([3, 3])))\n",  // the kernel's shape check
      "print(first(ones([2, 4])))\n",           // an argument: at that argument
      "print(wrong(ones([1, 4])))\n",           // a result: at the return's value
      "print(mix(1, ones([2, 3]), ones([2, 3])))\n",  // a named dim bound by an earlier arg
      "print(load(\"/nonexistent/x.npy\"))\n",
  };
  for (const auto& c : cases) {
    INFO(c);
    auto jit = on("jit"), ast = on("ast");
    REQUIRE(submit(*jit, fn_decls).status == Outcome::Ok);
    REQUIRE(submit(*ast, fn_decls).status == Outcome::Ok);
    Result j = submit(*jit, c), a = submit(*ast, c);
    CHECK(a.status == Outcome::RuntimeError);
    CHECK(j.status == Outcome::RuntimeError);
    CHECK(j.message == a.message);
    CHECK(j.output == a.output);
    // The session goes on, with its functions.
    CHECK(submit(*jit, "print(sum_all(first(ones([1, 4]))))\n").output == "8.0\n");
  }
  // A function of an earlier input fails in that input, as on the walker.
  agree({fn_decls, "y = 1\n", "print(wrong(ones([1, 7])))\n"});
  // Reading a tensor global before it is assigned, from a function.
  agree({"fn peek() -> float {\n  return g[0, 0]\n}\nprint(peek())\n"});
}

TEST_CASE("jit: a top-level loop that makes and drops a 4 MB tensor 2,000 times stays small") {
  auto sp = on("jit");
  Session& s = *sp;
  auto start = s.tensors().memory();
  Result r = submit(s, "total = 0.0\n"
                       "for i in 0..2000 {\n"
                       "  t = ones([1024, 1024])\n"
                       "  total = total + t[i % 1024, 3]\n"
                       "}\n"
                       "print(total)\n");
  CHECK(r.note == "");
  CHECK(r.output == "2000.0\n");
  auto end = s.tensors().memory();
  CHECK(end.peak_bytes < 100 * kMiB);
  CHECK(end.collections > 0);
  CHECK(end.freed_tensors >= 1900);
  CHECK(end.live_tensors == start.live_tensors + 1);  // only the last t
}

TEST_CASE("jit: a function's tensor locals are roots while it runs and freed when it returns") {
  auto sp = on("jit");
  Session& s = *sp;
  // keep (a parameter: an argument no variable of the caller holds) and bits must survive
  // the collections the loop's 4 MB garbage triggers inside the function.
  const char* program = "fn churn(n: int, keep: f32[4, 4]) -> float {\n"
                        "  total = 0.0\n"
                        "  bits = relu(keep)\n"
                        "  for i in 0..n {\n"
                        "    big = zeros([1024, 1024])\n"
                        "    total = total + keep[1, 1] + sum_all(bits) + big[i % 1024, 0]\n"
                        "  }\n"
                        "  return total\n"
                        "}\n";
  REQUIRE(submit(s, program).status == Outcome::Ok);
  auto start = s.tensors().memory();
  CHECK(submit(s, "print(churn(300, ones([4, 4])))\n").output == "5100.0\n");
  auto end = s.tensors().memory();
  CHECK(end.peak_bytes < 100 * kMiB);  // collected inside the loop of the function
  CHECK(end.collections > start.collections);
  CHECK(end.live_tensors == start.live_tensors);  // the frame's tensors went with it
}

TEST_CASE("jit: a temporary of an enclosing expression survives collections in a call") {
  auto sp = on("jit");
  Session& s = *sp;
  // garbage collects several times in its own frame while the caller holds the pending
  // relu(x) (and, in the second line, relu(add(x, x)) as twice's first argument).
  const char* fns = "fn garbage(n: int) -> f32[4, 4] {\n"
                    "  k = 0\n"
                    "  while k < n {\n"
                    "    waste = zeros([1024, 1024])\n"
                    "    k = k + 1\n"
                    "  }\n"
                    "  return zeros([4, 4])\n"
                    "}\n"
                    "fn twice(a: f32[4, 4], b: f32[4, 4]) -> f32[4, 4] {\n"
                    "  return add(b, add(a, a))\n"
                    "}\n";
  REQUIRE(submit(s, fns).status == Outcome::Ok);
  auto before = s.tensors().memory();
  Result r = submit(s, "x = ones([4, 4])\n"
                       "y = add(relu(x), garbage(40))\n"
                       "print(y[2, 3])\n"
                       "z = twice(relu(add(x, x)), garbage(40))\n"
                       "print(z[0, 0])\n");
  CHECK(r.message == "");
  CHECK(r.output == "1.0\n4.0\n");
  CHECK(s.tensors().memory().collections > before.collections);
  // After a runtime error inside a function with a frame, the next run starts clean.
  CHECK(submit(s, "w = twice(garbage(1), ones([2, 2]))\n").status == Outcome::RuntimeError);
  CHECK(submit(s, "for i in 0..40 {\n  g = ones([1024, 1024])\n}\nprint(y[0, 0], z[1, 1])\n")
            .output == "1.0 4.0\n");
}

TEST_CASE("jit: :compare runs tensor code on the jit too") {
  Session s;
  REQUIRE(submit(s, "t = ones([2, 2])\nprint(sum_all(t))\n").status == Outcome::Ok);
  bool ran = false;
  for (const auto& c : s.compare(RunOptions{})) {
    if (c.engine != "jit") continue;
    ran = true;
    CHECK(c.not_run.empty());
    CHECK(c.output == "4.0\n");
  }
  CHECK(ran);
}

TEST_CASE("jit: the IR of tensor code names the helpers; an object file refuses it") {
  auto sp = on("jit");
  Session& s = *sp;
  REQUIRE(s.compile("fn f(x: f32[1, 4]) -> f32[1, 4] {\n  return relu(x)\n}\n"
                    "y = f(ones([1, 4]))\nprint(y, y[0, 1], y.shape)\n", "t.ds")
              .status == Outcome::Ok);
  StageResult view = s.stage("llvm");
  REQUIRE_MESSAGE(view.ok, view.text);
  const std::string& ir = view.text;
  std::string error;
  for (const char* helper : {"@ds_tensor_frame_enter(i64 1)", "@ds_tensor_kernel(", "@ds_shape(",
                             "@ds_tensor_ones(", "@ds_tensor_check_args(",
                             "@ds_tensor_check_result(", "@ds_print_tensor(", "@ds_print_shape(",
                             "@ds_tensor_element(", "@ds_tensor_shape(", "@ds_tensor_safe_point()",
                             "@ds_tensor_frame_leave()"})
    CHECK_MESSAGE(contains(ir, helper), helper);
  CHECK_FALSE(s.build_object("/tmp/descent_jit_tensor_test.o", &error));
  CHECK(contains(error, "tensor code cannot be built into an object file"));
  // Scalar code still builds.
  REQUIRE(s.compile("print(1 + 2)\n", "u.ds").status == Outcome::Ok);
  CHECK(s.build_object("/tmp/descent_jit_tensor_test.o", &error));
}
