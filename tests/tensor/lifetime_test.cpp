// Tensor lifetime (issue 15): tensors nothing can reach any more are freed at the walker's
// safe points, temporaries an enclosing expression still holds are not, and a tensor larger
// than the limit is a located error before anything is allocated.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "pipeline/pipeline.h"
#include "session_util.h"
#include "tensor/runtime.h"

using namespace descent;
using descent::testing::contains;
using descent::testing::printed_by;
using descent::testing::submit;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

}  // namespace

// The walker and both VMs collect at their own safe points (the jit's roots are tested in
// tests/llvm/jit_tensor_test.cpp): every case below runs on each of them.
const char* const kEngines[] = {"ast", "stack", "reg"};

TEST_CASE("a loop that makes and drops a 4 MB tensor 2,000 times stays far below 100 MB") {
  for (const char* engine : kEngines) {
    CAPTURE(std::string(engine));
    Session s;
    REQUIRE(s.set_engine(engine));
    auto start = s.tensors().memory();
    // [1024, 1024] f32 is 4 MiB; 2,000 of them would be 8 GiB if none were freed.
    std::string out = printed_by(s, "total = 0.0\n"
                                    "for i in 0..2000 {\n"
                                    "  t = ones([1024, 1024])\n"
                                    "  total = total + t[i % 1024, 3]\n"
                                    "}\n"
                                    "print(total)\n");
    CHECK(out == "2000.0\n");
    auto end = s.tensors().memory();
    CHECK(end.peak_bytes < 100 * kMiB);
    CHECK(end.collections > 0);
    CHECK(end.freed_tensors >= 1900);
    // Only the last t is still reachable: the count is back where it started, plus one.
    CHECK(end.live_tensors == start.live_tensors + 1);
    CHECK(end.live_bytes == start.live_bytes + 4 * kMiB);
  }
}

TEST_CASE("a long loop of small tensors: the node table and the launch log stay bounded") {
  // 150,000 tiny tensors never reach the 16 MiB that calls for a collection by bytes; the
  // table's growth must call for one by count, and the freed slots' memory must go back.
  // Kernel launches are logged one by one up to a limit and counted beyond it.
  for (const char* engine : {"ast", "reg"}) {
    CAPTURE(std::string(engine));
    Session s;
    REQUIRE(s.set_engine(engine));
    // A host op's result is data fed in (like load's), so relu of it is not folded away:
    // every iteration launches a kernel.
    printed_by(s, "w = reshape(ones([4]), [2, 2])\n");
    RunOptions opts;
    std::string out;
    opts.out = [&out](std::string_view t) { out += t; };
    Outcome o = s.submit("total = 0.0\n"
                         "for i in 0..150000 {\n"
                         "  t = relu(w)\n"
                         "  total = total + t[1, 1]\n"
                         "}\n"
                         "print(total)\n",
                         "loop", opts);
    REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
    CHECK(out == "150000.0\n");
    auto m = s.tensors().memory();
    CHECK(m.collections > 0);
    CHECK(m.freed_tensors >= 100000);
    // 150,000 nodes would fill 147 chunks of 1024; what stays held is what was live at the
    // last collection plus what came after it (at most 65,536 nodes: 64 chunks).
    CHECK(m.table_chunks < 80);
    CHECK(o.launches.size() == tensor::kLaunchLogLimit);
    CHECK(o.launch_totals.count == 150000);
    CHECK(o.launch_totals.device == "ref");
  }
}

TEST_CASE("locals of a function are freed when it returns, kept while it runs") {
  for (const char* engine : kEngines) {
    CAPTURE(std::string(engine));
    Session s;
    REQUIRE(s.set_engine(engine));
    printed_by(s, "fn churn(n: int) -> float {\n"
                  "  s = 0.0\n"
                  "  keep = ones([4, 4])\n"
                  "  for i in 0..n {\n"
                  "    t = ones([1024, 1024])\n"
                  "    s = s + t[0, 0] + keep[1, 1]\n"
                  "  }\n"
                  "  return s\n"
                  "}\n");
    auto start = s.tensors().memory();
    CHECK(printed_by(s, "print(churn(300))\n") == "600.0\n");
    auto end = s.tensors().memory();
    CHECK(end.peak_bytes < 100 * kMiB);
    CHECK(end.collections > 0);
    CHECK(end.live_tensors == start.live_tensors);  // keep and the last t went with the frame
  }
}

TEST_CASE("a temporary of an enclosing expression survives collections in a call") {
  for (const char* engine : kEngines) {
    CAPTURE(std::string(engine));
    Session s;
    REQUIRE(s.set_engine(engine));
    // relu(x) is computed (pending) before garbage() runs; garbage allocates enough to
    // collect several times inside its own frame. The pending relu, and x under it, must
    // survive.
    printed_by(s, "fn garbage(n: int) -> f32[4, 4] {\n"
                  "  for i in 0..n {\n"
                  "    t = ones([1024, 1024])\n"
                  "  }\n"
                  "  return ones([4, 4])\n"
                  "}\n"
                  "fn twice(a: f32[4, 4], b: f32[4, 4]) -> f32[4, 4] {\n"
                  "  return add(a, b)\n"
                  "}\n");
    auto before = s.tensors().memory();
    CHECK(printed_by(s, "x = ones([4, 4])\n"
                        "y = add(relu(x), garbage(40))\n"
                        "print(y[2, 3])\n"
                        "z = twice(relu(add(x, x)), garbage(40))\n"
                        "print(z[0, 0])\n") == "2.0\n3.0\n");
    CHECK(s.tensors().memory().collections > before.collections);
  }
}

TEST_CASE("a pending computation keeps what it reads; a global outlives its input") {
  Session s;
  printed_by(s, "a = ones([8, 8])\n"
                "y = relu(a)\n"
                "a = zeros([8, 8])\n");  // y is still pending and reads the old a
  // Enough garbage to collect more than once before y is needed.
  printed_by(s, "for i in 0..40 {\n  g = ones([1024, 1024])\n}\n");
  CHECK(s.tensors().memory().collections > 0);
  CHECK(printed_by(s, "print(y[7, 7], a[0, 0])\n") == "1.0 0.0\n");
}

TEST_CASE("the globals a run started from stay, for :compare") {
  Session s;
  printed_by(s, "x = ones([4, 4])\n");
  // This input drops x's tensor and collects; compare() runs it again from the globals it
  // started from, where x is the ones.
  printed_by(s, "x = add(x, x)\nfor i in 0..40 {\n  g = ones([1024, 1024])\n}\nprint(x[0, 0])\n");
  auto rows = s.compare({});
  bool ran_ast = false;
  for (auto& c : rows) {
    if (c.engine != "ast") continue;
    ran_ast = true;
    CHECK(c.outcome.status == Outcome::Ok);
    CHECK(c.output == "2.0\n");
  }
  CHECK(ran_ast);
}

TEST_CASE("a tensor over the limit is a located error before allocation; the session goes on") {
  Session s;
  std::string printed;
  Outcome o = submit(s, "x = 1\ny = zeros([100000, 100000])\n", &printed);
  REQUIRE(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, "<test>:2:"));
  CHECK(contains(o.message, "zeros of shape [100000, 100000] would need 37.3 GiB"));
  CHECK(contains(o.message, "more than the tensor limit"));
  CHECK(printed_by(s, "print(x + 1)\n") == "2\n");

  // A small limit: creation, a kernel's result (checked at the call) and load are refused.
  s.tensors().set_tensor_limit(1 * kMiB);
  CHECK(printed_by(s, "a = ones([256, 256])\nprint(a[0, 0])\n") == "1.0\n");  // 256 KiB
  o = submit(s, "b = ones([1024, 1024])\n");
  CHECK(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, "ones of shape [1024, 1024] would need 4.0 MiB"));
  o = submit(s, "p = ones([512, 1])\nq = ones([1, 1024])\nr = matmul(p, q)\n");
  REQUIRE(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, "<test>:3:5"));
  CHECK(contains(o.message, "the result of 'matmul' of shape [512, 1024] would need 2.0 MiB"));
  CHECK(printed_by(s, "print(a[1, 1] + 1.0)\n") == "2.0\n");
  // A call whose result shape the runtime already knows is checked against the limit of now.
  s.tensors().set_tensor_limit(64 * kMiB);
  CHECK(printed_by(s, "c = matmul(p, q)\nprint(c[0, 0])\n") == "1.0\n");
  s.tensors().set_tensor_limit(1 * kMiB);
  o = submit(s, "d = matmul(p, q)\n");
  REQUIRE(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, "the result of 'matmul' of shape [512, 1024] would need 2.0 MiB"));
}

TEST_CASE("the file base: relative load and save paths are read from it, absolute ones are not") {
  namespace fs = std::filesystem;
  fs::path base = fs::temp_directory_path() / ("descent-file-base-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  Session s;
  s.set_file_base(base.string());
  CHECK(printed_by(s, "save(ones([2, 3]), \"w.npy\")\nprint(load(\"w.npy\").shape)\n") == "[2, 3]\n");
  CHECK(fs::exists(base / "w.npy"));
  CHECK(!fs::exists("w.npy"));  // not in the current directory
  // An absolute path means itself.
  std::string abs = (base / "abs.npy").string();
  CHECK(printed_by(s, "save(zeros([4]), \"" + abs + "\")\nprint(load(\"" + abs + "\").shape)\n") == "[4]\n");
  // A missing file: the error names where it looked.
  Outcome o = submit(s, "x = load(\"missing.npy\")\n");
  REQUIRE(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, (base / "missing.npy").string()));
  fs::remove_all(base);
}
