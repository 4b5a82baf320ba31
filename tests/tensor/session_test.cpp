// The Session's tensor half as a student meets it (issue 14): a kernel redefined after it
// was scheduled, dims that the kernel does not have, and the kernel's own dataflow graph.
#include <doctest/doctest.h>

#include <string>

#include "pipeline/pipeline.h"
#include "session_util.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"

using namespace descent;
using descent::testing::contains;
using descent::testing::printed_by;
using descent::testing::submit;

namespace {

const char* kOnAxesIJ = "kernel k(A: f32[n, m]) -> f32[n, m] {\n"
                        "  B[i, j] = A[i, j] * 2.0\n"
                        "  return B\n"
                        "}\n";
const char* kOnAxesXY = "kernel k(A: f32[n, m]) -> f32[n, m] {\n"
                        "  B[x, y] = A[x, y] + 1.0\n"
                        "  return B\n"
                        "}\n";

}  // namespace

TEST_CASE("a redefined kernel drops, and says it dropped, a schedule that no longer applies") {
  Session s;
  std::string error;
  REQUIRE(submit(s, kOnAxesIJ).status == Outcome::Ok);
  REQUIRE(s.select_kernel("k", {{"n", 8}, {"m", 8}}, &error));
  REQUIRE_MESSAGE(s.schedule_step("split i 4", &error), error);
  Outcome o = submit(s, kOnAxesXY);
  REQUIRE(o.status == Outcome::Ok);
  REQUIRE(o.notes.size() == 1);
  CHECK(contains(o.notes[0], "kernel 'k' was redefined"));
  CHECK(contains(o.notes[0], "split i 4"));
  CHECK(contains(o.notes[0], "dropped"));
  CHECK(s.tensors().schedules().count("k") == 0);
  // The kernel under the microscope is the new one, at the dims it was selected with.
  CHECK(s.schedule_trace().empty());
  std::string tir = s.kernel_view("tir").text;
  CHECK_MESSAGE(contains(tir, "for x, y in T.grid(8, 8):"), tir);
  CHECK_FALSE(contains(tir, "i_0"));
  Session::KernelRun r = s.run_kernel("ref", true);
  CHECK_MESSAGE(r.ok, r.error);
  CHECK(r.shape == std::vector<int64_t>{8, 8});
  // Calls from scalar code run the new kernel with no stale schedule in the way.
  CHECK(printed_by(s, "print(sum_all(k(ones([4, 4]))))\n") == "32.0\n");
}

TEST_CASE("a redefined kernel keeps a schedule that still applies, and a kernel not selected too") {
  Session s;
  std::string error;
  REQUIRE(submit(s, kOnAxesIJ).status == Outcome::Ok);
  REQUIRE(s.select_kernel("k", {}, &error));
  REQUIRE(s.schedule_step("split i 4", &error));
  REQUIRE(s.select_kernel("matmul", {}, &error));  // k is no longer under the microscope
  // Same axes, another body: the split still applies, so nothing is dropped.
  Outcome o = submit(s, "kernel k(A: f32[n, m]) -> f32[n, m] {\n"
                        "  B[i, j] = A[i, j] - 1.0\n  return B\n}\n");
  REQUIRE(o.status == Outcome::Ok);
  CHECK(o.notes.empty());
  CHECK(s.tensors().schedules().count("k") == 1);
  // Other axes: the stored schedule is dropped although k is not selected.
  o = submit(s, kOnAxesXY);
  REQUIRE(o.notes.size() == 1);
  CHECK(s.tensors().schedules().count("k") == 0);
  CHECK(s.selected_kernel() == "matmul");
}

TEST_CASE(":kernel drops a stored schedule that does not apply instead of half-applying it") {
  Session s;
  std::string error;
  REQUIRE(submit(s, kOnAxesXY).status == Outcome::Ok);
  s.tensors().set_schedule("k", "split x 2\nsplit i 4\n");  // written for another k
  REQUIRE(s.select_kernel("k", {}, &error));
  CHECK(s.schedule_trace().empty());
  CHECK(s.tensors().schedules().count("k") == 0);
  CHECK(printed_by(s, "print(sum_all(k(ones([2, 2]))))\n") == "8.0\n");
}

TEST_CASE("a dim the kernel does not have is an error naming the kernel's dims") {
  Session s;
  std::string error;
  CHECK_FALSE(s.select_kernel("matmul", {{"N", 1024}}, &error));
  CHECK(error == "kernel 'matmul' has no dim 'N' (its dims: n, k, m)");
  CHECK(s.selected_kernel().empty());
  REQUIRE(submit(s, "kernel fixed(A: f32[2, 3]) -> f32[2, 3] {\n"
                    "  B[i, j] = A[i, j]\n  return B\n}\n").status == Outcome::Ok);
  CHECK_FALSE(s.select_kernel("fixed", {{"n", 4}}, &error));
  CHECK(error == "kernel 'fixed' has no dim 'n' (its shapes are all fixed)");
  REQUIRE_MESSAGE(s.select_kernel("matmul", {{"n", 8}, {"k", 4}, {"m", 2}}, &error), error);
  Session::KernelRun r = s.run_kernel("ref", false);
  CHECK(r.shape == std::vector<int64_t>{8, 2});
}

TEST_CASE("a function's declared result shape is checked at run time where sema cannot know it") {
  Session s;
  // The parameter is reassigned, so only the run knows the shape: a located run-time error.
  Outcome o = submit(s, "fn bad(x: f32[1, 4]) -> f32[1, 3] {\n  x = relu(x)\n  return x\n}\n"
                        "print(sum_all(bad(ones([1, 4]))))\n");
  CHECK(o.status == Outcome::RuntimeError);
  CHECK_MESSAGE(contains(o.message, "<test>:3:10: error: 'bad' must return a tensor of shape "
                                    "[1, 3], got [1, 4]"),
                o.message);
  // A named dim of the result must be what the arguments bound it to.
  o = submit(s, "fn t(x: f32[n, m]) -> f32[m, n] {\n  y = x\n  return y\n}\n"
                "print(t(ones([2, 2])).shape)\nprint(t(ones([2, 3])).shape)\n");
  CHECK(o.status == Outcome::RuntimeError);
  CHECK_MESSAGE(contains(o.message, "'t' must return a tensor of shape [m, n], got [2, 3]"),
                o.message);
  // The example of the issue is a compile-time error.
  o = submit(s, "fn bad2(x: f32[1, 4]) -> f32[1, 3] { return relu(x) }\n");
  CHECK(o.status == Outcome::CompileError);
  CHECK(contains(o.message, "'bad2' must return a tensor of shape [1, 3], got [1, 4]"));
}

TEST_CASE("a kernel whose shapes are all numbers and whose result is not the declared one fails where it is defined") {
  Session s;
  Outcome o = submit(s, "kernel k5(A: f32[4, 4]) -> f32[2, 4] {\n"
                        "  B[i, j] = A[i, j] * 2.0\n  return B\n}\n");
  CHECK(o.status == Outcome::CompileError);
  CHECK_MESSAGE(contains(o.message, "<test>:1:28: error: kernel 'k5' declares f32[2, 4] but "
                                    "computes [4, 4]"),
                o.message);
  CHECK(s.module().find_kernel("k5") < 0);  // all or nothing, as for any compile error
  // Named dims: the call binds them, so the kernel is checked there (and this one is fine).
  o = submit(s, "kernel k6(A: f32[n, 4]) -> f32[n, 4] {\n  B[i, j] = A[i, j]\n  return B\n}\n");
  CHECK(o.status == Outcome::Ok);
}

TEST_CASE(":compare on tensor code runs it on every engine") {
  Session s;
  std::string printed;
  REQUIRE(submit(s, "t = ones([2, 2])\nprint(sum_all(t))\n", &printed).status == Outcome::Ok);
  std::vector<Comparison> runs = s.compare(RunOptions{});
  REQUIRE(runs.size() == 5);
  CHECK(runs[0].engine == "ast");
  for (size_t i = 0; i < runs.size(); ++i) {  // every engine but native runs tensor code itself
    CAPTURE(runs[i].engine);
    if (runs[i].engine == "native") {  // the native backend compiles scalar code only
      CHECK(runs[i].not_run == "tensor code (this engine runs scalar code only)");
      continue;
    }
    CHECK(runs[i].not_run.empty());
    CHECK(runs[i].output == "4.0\n");
    if (runs[i].engine != "jit") CHECK(runs[i].outcome.steps > 0);  // native code counts none
  }
  // Scalar code still runs on every engine.
  REQUIRE(submit(s, "x = 2 + 3\nprint(x)\n").status == Outcome::Ok);
  for (const auto& c : s.compare(RunOptions{})) {
    CHECK(c.not_run.empty());
    CHECK(c.output == "5\n");
  }
}

TEST_CASE("the kernel view 'graph' is the selected kernel's call, before and after each graph pass") {
  Session s;
  std::string error, printed;
  REQUIRE(submit(s, "p = softmax(rand([2, 5], 3))\nprint(sum_all(p) > 0.0)\n", &printed).status ==
          Outcome::Ok);
  REQUIRE(s.select_kernel("linear", {{"n", 1}, {"k", 8}, {"m", 4}}, &error));
  StageResult g = s.kernel_view("graph");
  REQUIRE(g.ok);
  CHECK(contains(g.text, "# graph as built\n%0 = input x  [1, 8]\n%1 = input w  [4, 8]\n"
                         "%2 = linear(%0, %1)  [1, 4]"));
  CHECK(contains(g.text, "# after graph.fuse_elementwise (no change)"));
  CHECK_FALSE(contains(g.text, "softmax"));  // not the program's last evaluation
  REQUIRE(g.graph);
  CHECK(g.graph->nodes.size() == 3);
  CHECK(g.graph->edges.size() == 2);
  // With nothing pending, the pending graph is still DOT where DOT is asked for.
  StageResult dot = s.graph_view("pending", Format::Dot);
  REQUIRE(dot.ok);
  CHECK(dot.text.rfind("digraph", 0) == 0);
  CHECK(s.graph_view("pending").text == "(no pending tensor computations)\n");
}

TEST_CASE("schedules are objects: two of one kernel at different dims side by side, each with its own history") {
  Session s;
  std::string error;
  Session::ScheduleId a = s.open_schedule("matmul", {{"n", 64}, {"k", 64}, {"m", 64}}, false, &error);
  Session::ScheduleId b = s.open_schedule("matmul", {{"n", 128}, {"k", 32}, {"m", 16}}, false, &error);
  REQUIRE_MESSAGE(a > 0, error);
  REQUIRE_MESSAGE(b > 0, error);
  CHECK(a != b);
  CHECK(s.selected_kernel().empty());  // opening is not selecting
  tensor::StepResult made;
  REQUIRE_MESSAGE(s.schedule_step("split i 4", &error, &made, a), error);
  CHECK(made.loops == std::vector<std::string>{"i_0", "i_1"});
  REQUIRE_MESSAGE(s.schedule_step("split j 8", &error, &made, b), error);
  CHECK(made.loops == std::vector<std::string>{"j_0", "j_1"});
  CHECK(s.schedule_trace(a) == "split i 4\n");
  CHECK(s.schedule_trace(b) == "split j 8\n");
  std::string ta = s.kernel_view("tir", a).text, tb = s.kernel_view("tir", b).text;
  CHECK_MESSAGE((contains(ta, "i_0") && !contains(ta, "j_0") && contains(ta, "64")), ta);
  CHECK_MESSAGE((contains(tb, "j_0") && !contains(tb, "i_0") && contains(tb, "128")), tb);
  // Undo and redo move one object's history only.
  CHECK(s.schedule_undo(a));
  CHECK(s.schedule_trace(a).empty());
  CHECK(s.schedule_trace(b) == "split j 8\n");
  CHECK(s.schedule_redo(a));
  CHECK(s.schedule_trace(a) == "split i 4\n");
  // Each runs at its own dims, checked against the reference interpreter.
  Session::KernelRun rb = s.run_kernel("ref", true, 1, 1, b);
  CHECK_MESSAGE(rb.ok, rb.error);
  CHECK(rb.shape == std::vector<int64_t>{128, 16});
  Session::KernelRun ra = s.run_kernel("cpu", true, 1, 1, a);
  CHECK_MESSAGE(ra.ok, ra.error);
  CHECK(ra.shape == std::vector<int64_t>{64, 64});
  // The one stepped last is the one the program's calls use; install() chooses.
  CHECK(s.tensors().schedules().at("matmul").text == "split i 4\n");  // a's redo was last
  REQUIRE(s.install_schedule(b, &error));
  CHECK(s.tensors().schedules().at("matmul").text == "split j 8\n");
  auto open = s.open_schedules();
  REQUIRE(open.size() == 2);
  CHECK((open[0].id == a && !open[0].installed && open[0].steps == 1));
  CHECK((open[1].id == b && open[1].installed && open[1].dims.at("n") == 128));
  CHECK(printed_by(s, "print(sum_all(matmul(ones([16, 32]), ones([32, 8]))))\n") == "4096.0\n");
  // A closed schedule is gone; what it installed stays installed.
  CHECK(s.close_schedule(b));
  CHECK_FALSE(s.close_schedule(b));
  StageResult gone = s.kernel_view("tir", b);
  CHECK_FALSE(gone.ok);
  CHECK(contains(gone.text, "no schedule " + std::to_string(b)));
  CHECK(s.tensors().schedules().at("matmul").text == "split j 8\n");
  // select_kernel opens a third, under the microscope, from the installed steps.
  REQUIRE(s.select_kernel("matmul", {{"n", 32}}, &error));
  CHECK(s.current_schedule() != a);
  CHECK(s.schedule_trace() == "split j 8\n");
  CHECK(s.schedule_trace(a) == "split i 4\n");
  REQUIRE(s.use_schedule(a, &error));
  CHECK(s.schedule_trace() == "split i 4\n");
  CHECK(s.selected_kernel_dims().at("n") == 64);
  CHECK_FALSE(s.use_schedule(99, &error));
  CHECK(error == "no schedule 99 (it was closed, or never opened)");
}

TEST_CASE("a kernel call lowers and schedules its nest once per kernel, shapes and schedule version") {
  Session s;
  std::string error;
  REQUIRE(s.select_kernel("matmul", {{"n", 8}, {"k", 8}, {"m", 8}}, &error));
  REQUIRE(s.schedule_step("split i 4", &error));
  s.set_default_schedules(false);
  // At the schedule's own dims the call runs the schedule's nest: nothing to lower.
  int before = s.tensors().lowerings();
  CHECK(printed_by(s, "a = ones([8, 8])\nprint(sum_all(matmul(a, a)))\n") == "512.0\n");
  CHECK(s.tensors().lowerings() == before);
  // Elsewhere its steps are applied to those shapes once; another graph that calls matmul
  // at those shapes reuses the nest (relu is lowered: it is new).
  CHECK(printed_by(s, "b = ones([16, 8])\nprint(sum_all(matmul(b, a)))\n") == "1024.0\n");
  CHECK(s.tensors().lowerings() == before + 1);
  CHECK(printed_by(s, "print(sum_all(relu(matmul(b, a))))\n") == "1024.0\n");
  CHECK(s.tensors().lowerings() == before + 2);
  // A new step is a new version: lowered again once.
  REQUIRE(s.schedule_step("split j 2", &error));
  CHECK(printed_by(s, "print(sum_all(matmul(b, a)))\n") == "1024.0\n");
  CHECK(s.tensors().lowerings() == before + 3);
  CHECK(printed_by(s, "print(sum_all(add(matmul(b, a), ones([16, 8]))))\n") == "1152.0\n");
  CHECK(s.tensors().lowerings() == before + 4);  // the add: matmul's nest was kept
}
