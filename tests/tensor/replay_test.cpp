// Replayed graphs (issue 15): evaluating a graph whose structure and shapes were seen before
// reuses that evaluation's plan (lowered, scheduled, fused, compiled), and anything that would
// change the plan (shapes, a redefined kernel, a schedule, the device, a folded constant's
// data) makes a new one. Results are always the freshly planned ones.
#include <doctest/doctest.h>

#include <string>

#include "pipeline/pipeline.h"
#include "session_util.h"
#include "tensor/runtime.h"

using namespace descent;
using descent::testing::contains;
using descent::testing::printed_by;
using descent::testing::submit;

namespace {

const char* kSetup = "x = rand([4, 16], 1)\n"
                     "w = rand([8, 16], 2)\n"
                     "b = rand([8], 3)\n";
const char* kModel = "print(sum_all(relu(bias_add(linear(x, w), b))))\n";

}  // namespace

TEST_CASE("the same graph again replays its plan: same result, nothing lowered or compiled") {
  for (const char* device : {"ref", "cpu"}) {
    CAPTURE(std::string(device));
    Session s;
    REQUIRE(s.set_device(device));
    printed_by(s, kSetup);
    std::string first = printed_by(s, kModel);
    int compiled = s.tensors().compilations();
    CHECK_FALSE(s.tensors().last_evaluation().replayed);
    CHECK(s.tensors().replays() == 0);
    std::string second = printed_by(s, kModel);
    CHECK(second == first);
    CHECK(s.tensors().last_evaluation().replayed);
    CHECK(s.tensors().replays() == 1);
    CHECK(s.tensors().compilations() == compiled);
    // A loop pays for the plan once.
    printed_by(s, std::string("for i in 0..50 {\n  ") + kModel + "}\n");
    CHECK(s.tensors().replays() == 51);
    CHECK(s.tensors().compilations() == compiled);
    // The views say so, with this evaluation's node ids.
    StageResult g = s.graph_view("executed", Format::Text);
    REQUIRE(g.ok);
    CHECK(g.text.rfind("# replayed: ", 0) == 0);
    // The replay ran the plan's launches without copying its graph; the view's graph is
    // made when asked, on this evaluation's tensors.
    const tensor::Evaluation& e = s.tensors().last_evaluation();
    int kernels = 0;
    for (const auto& n : e.executed.nodes) {
      if (n.kind != tensor::NodeKind::Kernel) continue;
      ++kernels;
      CHECK(contains(g.text, "%" + std::to_string(n.id) + " = " + n.label));
    }
    CHECK(kernels == 1);  // linear, bias_add and relu fused into one
    CHECK(e.kernels.size() == 1);
  }
}

TEST_CASE("new data of the same shapes replays; the result is the new data's") {
  Session s;
  printed_by(s, kSetup);
  std::string first = printed_by(s, kModel);
  printed_by(s, "x = rand([4, 16], 7)\n");
  std::string second = printed_by(s, kModel);
  CHECK(s.tensors().replays() == 1);
  CHECK(second != first);
  // The oracle: a session that never saw the first data.
  Session fresh;
  printed_by(fresh, kSetup);
  printed_by(fresh, "x = rand([4, 16], 7)\n");
  CHECK(printed_by(fresh, kModel) == second);
  CHECK(fresh.tensors().replays() == 0);
}

TEST_CASE("what changes the plan makes a new one") {
  Session s;
  printed_by(s, kSetup);
  printed_by(s, kModel);

  SUBCASE("other shapes") {
    printed_by(s, "x = rand([5, 16], 1)\n");
    printed_by(s, kModel);
    CHECK(s.tensors().replays() == 0);
  }
  SUBCASE("another device") {
    REQUIRE(s.set_device("cpu"));
    printed_by(s, kModel);
    CHECK(s.tensors().replays() == 0);
  }
  SUBCASE("the graph passes off") {
    s.tensors().set_graph_passes(false);
    printed_by(s, kModel);
    CHECK(s.tensors().replays() == 0);
  }
  SUBCASE("a redefined kernel") {
    printed_by(s, "kernel relu(x: f32[n, m]) -> f32[n, m] {\n"
                  "  y[i, j] = max(x[i, j], 0.0) * 2.0\n"
                  "  return y\n"
                  "}\n");
    std::string doubled = printed_by(s, kModel);
    CHECK(s.tensors().replays() == 0);
    Session fresh;
    printed_by(fresh, kSetup);
    double single = std::stod(printed_by(fresh, kModel));
    CHECK(std::stod(doubled) == doctest::Approx(2 * single).epsilon(1e-6));
  }
  SUBCASE("a schedule") {
    s.tensors().set_schedule("linear", "split i 2");
    printed_by(s, kModel);
    CHECK(s.tensors().replays() == 0);
  }
}

TEST_CASE("a constant the passes folded is part of the plan: other data, no replay") {
  Session s;
  printed_by(s, "x = rand([1, 4], 1)\n"
                "two = add(ones([1, 4]), ones([1, 4]))\n"
                "print(two[0, 0])\n"
                "three = add(two, ones([1, 4]))\n"
                "print(three[0, 0])\n");
  double x0 = std::stod(printed_by(s, "print(x[0, 0])\n"));
  double with_two = std::stod(printed_by(s, "y = add(x, two)\nprint(y[0, 0])\n"));
  double with_three = std::stod(printed_by(s, "y = add(x, three)\nprint(y[0, 0])\n"));
  CHECK(with_two == doctest::Approx(x0 + 2));
  CHECK(with_three == doctest::Approx(x0 + 3));
}

TEST_CASE("a call's result shape is remembered per kernel declaration: a redefinition is new") {
  // The runtime keeps result shapes by (declaration, argument shapes). The same call again
  // must give the same shape; a kernel redefined with another result must give the new one,
  // and a wrong call to it must still be an error, whatever was remembered.
  Session s;
  printed_by(s, "kernel pick(a: f32[n, m]) -> f32[n, m] { out[i, j] = a[i, j]; return out }\n"
                "x = rand([3, 5], 1)\n");
  CHECK(printed_by(s, "print(pick(x).shape)\n") == "[3, 5]\n");
  CHECK(printed_by(s, "print(pick(x).shape)\n") == "[3, 5]\n");
  printed_by(s, "kernel pick(a: f32[n, m]) -> f32[m, n] { out[i, j] = a[j, i]; return out }\n");
  CHECK(printed_by(s, "print(pick(x).shape)\n") == "[5, 3]\n");
  printed_by(s, "kernel pick(a: f32[n, n]) -> f32[n, n] { out[i, j] = a[i, j]; return out }\n");
  std::string printed;
  Outcome o = submit(s, "print(pick(x).shape)\n", &printed);
  CHECK(o.status == Outcome::RuntimeError);
  CHECK(contains(o.message, "pick"));
}
