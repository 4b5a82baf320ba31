// test_tensor_grad: grad(loss, x) and param(t) (tensor/runtime_grad.cpp) through the Session,
// as a student's program uses them. The oracles: NumPy's hand-derived gradients of the
// digits MLP (examples/train_digits/make_data.py), closed forms for small cases, and the
// same training run on every engine and device.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "pipeline/pipeline.h"
#include "session_util.h"
#include "tensor/runtime.h"
#include "tensor/tensor.h"

using namespace descent;
namespace fs = std::filesystem;
using descent::testing::contains;
using descent::testing::printed_by;
using descent::testing::submit;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A Session whose relative load paths start at the project root.
void at_root(Session& s) { s.tensors().set_file_base(DESCENT_SOURCE_DIR); }

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "descent_grad_XXXXXX").string();
  REQUIRE(mkdtemp(t.data()) != nullptr);
  return t;
}

tensor::Tensor npy(const std::string& path) {
  tensor::Tensor t;
  std::string error;
  REQUIRE_MESSAGE(tensor::load_npy(path, &t, &error), error);
  return t;
}

}  // namespace

TEST_CASE("one step's gradients of the digits MLP equal NumPy's hand-derived ones") {
  for (const char* device : {"ref", "cpu"}) {
    CAPTURE(std::string(device));
    Session s;
    at_root(s);
    REQUIRE(s.set_device(device));
    std::string dir = temp_dir();
    printed_by(s,
               "x = rows(load(\"examples/train_digits/train_images.npy\"), 0, 64)\n"
               "y = rows(load(\"examples/train_digits/train_labels.npy\"), 0, 64)\n"
               "w1 = param(load(\"examples/train_digits/w1_init.npy\"))\n"
               "b1 = param(load(\"examples/train_digits/b1_init.npy\"))\n"
               "w2 = param(load(\"examples/train_digits/w2_init.npy\"))\n"
               "b2 = param(load(\"examples/train_digits/b2_init.npy\"))\n"
               "loss = cross_entropy(bias_add(linear(relu(bias_add(linear(x, w1), b1)), w2), b2), y)\n"
               "save(grad(loss, w1), \"" + dir + "/w1.npy\")\n"
               "save(grad(loss, b1), \"" + dir + "/b1.npy\")\n"
               "save(grad(loss, w2), \"" + dir + "/w2.npy\")\n"
               "save(grad(loss, b2), \"" + dir + "/b2.npy\")\n");
    for (const char* p : {"w1", "b1", "w2", "b2"}) {
      CAPTURE(std::string(p));
      tensor::Tensor got = npy(dir + "/" + p + ".npy");
      tensor::Tensor want = npy(std::string(DESCENT_SOURCE_DIR) + "/examples/train_digits/grad_" + p + ".npy");
      std::string why;
      CHECK_MESSAGE(tensor::allclose(got, want, 1e-4, &why), why);
    }
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("closed forms: a tensor used twice sums its gradients; unreached is zeros") {
  Session s;
  std::string out = printed_by(s,
      "x = rand([3, 4], 1)\n"
      "w = rand([2, 4], 2)\n"
      "g = grad(mul(x, x), x)\n"                   // 2x: both occurrences
      "print(g[1, 2] - 2.0 * x[1, 2])\n"
      "two = add(linear(x, w), linear(x, w))\n"    // one node read twice by add's two params
      "gw = grad(two, w)\n"
      "one = grad(linear(x, w), w)\n"
      "print(gw[1, 3] - 2.0 * one[1, 3])\n"
      "z = grad(relu(x), w)\n"                     // relu(x) does not depend on w
      "print(z.shape, sum_all(z))\n"
      "print(sum_all(grad(x, x)))\n");             // d sum(x) / dx: ones
  CHECK(out == "0.0\n0.0\n[2, 4] 0.0\n12.0\n");
}

TEST_CASE("the backward nodes are in the graph view, and :grad prints a kernel's adjoints") {
  Session s;
  submit(s, "x = rand([3, 4], 1)\nw = param(rand([2, 4], 2))\nl = relu(linear(x, w))\ng = grad(l, w)\n");
  std::string pending = s.graph_view("pending", Format::Text).text;
  CHECK(contains(pending, "relu_dx("));
  CHECK(contains(pending, "linear_dw("));
  CHECK(contains(pending, "(backward)"));
  // The backward pass alone, its tape as data and what keeping it costs: x [3, 4], the
  // linear's result [3, 2] and the ones [3, 2] it starts from, 4 bytes each.
  StageResult back = s.graph_view("backward", Format::Text);
  CHECK(contains(back.text, "linear_dw("));
  CHECK_FALSE(contains(back.text, "= relu("));
  CHECK(contains(back.text, "tape: 3 tensors the backward pass reads and does not make, 96 bytes"));
  REQUIRE(back.graph);
  bool coloured = false;
  for (const auto& n : back.graph->nodes) coloured = coloured || n.backward;
  CHECK(coloured);
  std::string text, error;
  REQUIRE(s.kernel_adjoints("linear", &text, &error));
  CHECK(contains(text, "dw[j, r] = sum(i) dout[i, j] * x[i, r]"));
  CHECK_FALSE(s.kernel_adjoints("nope", &text, &error));
  CHECK(contains(error, "no kernel named 'nope'"));
  // The grad stage: the kernels the input defines, then the ones it calls.
  submit(s, "kernel twice(x: f32[n]) -> f32[n] {\n  out[i] = 2.0 * x[i]\n  return out\n}\n"
            "y = relu(linear(rand([2, 3], 1), rand([4, 3], 2)))\n");
  StageResult st = s.stage("grad");
  CHECK(st.ok);
  size_t twice = st.text.find("kernel twice_dx(dout: f32[n]) -> f32[n] {\n  dx[i] = dout[i] * 2.0\n");
  size_t relu = st.text.find("kernel relu_dx("), linear = st.text.find("kernel linear_dw(");
  CHECK(twice != std::string::npos);
  CHECK(relu != std::string::npos);
  CHECK(linear != std::string::npos);
  CHECK(twice < std::min(relu, linear));
}

TEST_CASE("the memory plan: what forward and backward kernels wrote, before and after fusion") {
  // A two-layer MLP's first weight: relu_dx and bias_add_dx fuse into linear_dx, and
  // bias_add into the forward linear.
  Session s;
  submit(s, "x = rand([8, 4], 1)\ny = ones([8])\nw1 = param(rand([16, 4], 2))\n"
            "b1 = param(rand([16], 3))\nw2 = param(rand([3, 16], 4))\n"
            "loss = cross_entropy(linear(relu(bias_add(linear(x, w1), b1)), w2), y)\n");
  // Before any backward pass has run: no plan.
  CHECK(tensor::backward_memory_plan(s.tensors().last_evaluation()) == "");
  submit(s, "g = grad(loss, w1)\nprint(sum_all(g))\n");
  const tensor::Evaluation& ev = s.tensors().last_evaluation();
  int before = 0, after = 0;
  for (const auto& n : ev.before.nodes) before += n.kind == tensor::NodeKind::Kernel && n.backward;
  for (const auto& n : ev.executed.nodes) after += n.kind == tensor::NodeKind::Kernel && n.backward;
  CHECK(before == 5);  // cross_entropy_dlogits, linear_dx, relu_dx, bias_add_dx, linear_dw
  CHECK(after == 3);
  std::string plan = tensor::backward_memory_plan(ev);
  // Backward outputs as built: [8, 3] + 3 x [8, 16] + [16, 4] floats = 1,888 bytes; after:
  // [8, 3] + [8, 16] + [16, 4] = 864.
  CHECK(contains(plan, "as built       4 kernels, 1.6 KiB        5 kernels, 1.8 KiB"));
  CHECK(contains(plan, "after passes   3 kernels, 1.1 KiB        3 kernels, 864 B"));
  CHECK(contains(s.graph_view("backward", Format::Text).text, plan));
}

TEST_CASE("fused backward kernels agree with central differences") {
  // The gradient that runs is the fused one (relu_dx and bias_add_dx folded into linear_dx):
  // sum(v * dloss/dw1) must equal the loss's slope along v, measured by central differences
  // on the same device. w1 - 0.5 gives the first layer's outputs both signs, so relu's mask
  // is part of what is checked.
  const std::string net_of = "cross_entropy(linear(relu(bias_add(linear(x, W), b1)), w2), y)";
  auto net = [&](const std::string& w) {
    std::string t = net_of;
    t.replace(t.find('W'), 1, w);
    return t;
  };
  for (const char* device : {"ref", "cpu"}) {
    CAPTURE(std::string(device));
    Session s;
    REQUIRE(s.set_device(device));
    REQUIRE(submit(s, "x = rand([8, 4], 1)\ny = ones([8])\n"
                      "w1 = param(sgd_step(rand([16, 4], 2), full([16, 4], 1.0), full([1], 0.5)))\n"
                      "b1 = param(rand([16], 3))\nw2 = param(rand([3, 16], 4))\n"
                      "v = rand([16, 4], 5)\n").status == Outcome::Ok);
    std::string analytic = printed_by(s, "print(sum_all(mul(v, grad(" + net("w1") + ", w1))))\n");
    const tensor::Evaluation& ev = s.tensors().last_evaluation();
    int before = 0, after = 0;
    for (const auto& n : ev.before.nodes) before += n.kind == tensor::NodeKind::Kernel && n.backward;
    for (const auto& n : ev.executed.nodes) after += n.kind == tensor::NodeKind::Kernel && n.backward;
    CHECK(after < before);  // what ran was fused
    std::string numeric = printed_by(s,
        "eps = 0.001\n"
        "plus = sum_all(" + net("sgd_step(w1, v, full([1], 0.0 - eps))") + ")\n"
        "minus = sum_all(" + net("sgd_step(w1, v, full([1], eps))") + ")\n"
        "print((plus - minus) / (2.0 * eps))\n");
    double a = std::strtod(analytic.c_str(), nullptr), n = std::strtod(numeric.c_str(), nullptr);
    CAPTURE(analytic);
    CAPTURE(numeric);
    CHECK(std::fabs(a) > 0.1);  // a direction the loss moves along
    CHECK(std::fabs(a - n) <= 2e-2 * std::max(1.0, std::fabs(n)));
  }
}

TEST_CASE("a parameter's tape outlives a collection; without one, a clear error") {
  const std::string churn = "for i in 0..12 {\n  t = ones([1024, 1024])\n  print(t[0, 0] > 2.0)\n}\n";
  Session s;
  std::string out = printed_by(s,
      "x = rand([3, 4], 1)\n"
      "w = param(rand([2, 4], 2))\n"
      "l = relu(linear(x, w))\n"
      "before = sum_all(l)\n" + churn +  // the loss is computed, then collections run
      "g = grad(l, w)\n"
      "l2 = relu(linear(x, w))\n"
      "g2 = grad(l2, w)\n"
      "print(sum_all(g) - sum_all(g2))\n");
  CHECK(s.tensors().memory().collections > 0);
  CHECK(contains(out, "0.0\n"));
  // w made by rand alone is no parameter until grad names it: once l is computed and
  // collected, how it was made is gone. The error says what to do.
  Session t;
  std::string printed;
  submit(t, "x = rand([3, 4], 1)\nw = rand([2, 4], 2)\nl = relu(linear(x, w))\nb = sum_all(l)\n" + churn);
  Outcome o = submit(t, "g = grad(l, w)\n", &printed);
  CHECK(o.status != Outcome::Ok);
  CHECK(contains(o.message, "ask for grad(loss, x) before reading the loss's value"));
}

TEST_CASE("refusals: a kernel the rules cannot differentiate; grad's arguments are tensors") {
  Session s;
  std::string printed;
  Outcome o = submit(s,
      "kernel shift(x: f32[n], w: f32[3]) -> f32[6] {\n"
      "  out[i] = sum(r) x[i + r] * w[r]\n"
      "  return out\n"
      "}\n"
      "x = rand([8], 1)\nw = rand([3], 2)\n"
      "g = grad(shift(x, w), x)\n", &printed);
  CHECK(o.status != Outcome::Ok);
  CHECK(contains(o.message, "cannot differentiate kernel 'shift'"));
  CHECK(contains(o.message, "'x[i + r]'"));
  // A host operation on the way is data to the graph: an error, never silent zeros.
  o = submit(s, "w2 = rand([3, 2], 3)\nl = reshape(matmul(rand([4, 3], 4), w2), [8])\ng = grad(l, w2)\n", &printed);
  CHECK(o.status != Outcome::Ok);
  CHECK(contains(o.message, "through 'reshape', a host operation"));
  o = submit(s, "g = grad(1.0, x)\n", &printed);
  CHECK(o.status != Outcome::Ok);
  CHECK(contains(o.message, "argument 1 of 'grad' must be tensor"));
}

TEST_CASE("a training loop does not grow: live tensors are flat over 1,000 steps") {
  for (const char* engine : {"ast", "reg"}) {
    CAPTURE(std::string(engine));
    Session s;
    at_root(s);
    REQUIRE(s.set_engine(engine));
    REQUIRE(s.set_device("cpu"));
    const std::string loop =
        "for i in 0..n {\n"
        "  loss = cross_entropy(linear(x, w), y)\n"
        "  w = param(descend(w, grad(loss, w)))\n"
        "  total = sum_all(loss)\n"
        "}\n";
    std::string printed;
    REQUIRE(submit(s,
        "kernel descend(w: f32[n, m], g: f32[n, m]) -> f32[n, m] {\n"
        "  out[i, j] = w[i, j] - 0.01 * g[i, j]\n"
        "  return out\n"
        "}\n"
        "x = rand([16, 8], 1)\ny = rows(load(\"examples/train_digits/test_labels.npy\"), 0, 16)\n"
        "w = param(rand([10, 8], 2))\n"
        "total = 0.0\nn = 200\n" + loop + "first = total\n", &printed).status == Outcome::Ok);
    // The Session pins the globals as they were before each run (:compare runs it again),
    // and a pinned loss keeps its backward graph: measured from the second run on.
    REQUIRE(submit(s, "n = 200\n" + loop, &printed).status == Outcome::Ok);
    size_t live = s.tensors().memory().live_tensors;
    REQUIRE(submit(s, "n = 1000\n" + loop + "print(total < first)\n", &printed).status == Outcome::Ok);
    CHECK(printed == "true\n");
    CHECK(s.tensors().memory().live_tensors <= live);
    CHECK(s.tensors().memory().live_tensors < 40);
  }
}

TEST_CASE("the training example, a few steps, agrees on every engine and device") {
  std::string program = slurp(std::string(DESCENT_SOURCE_DIR) + "/examples/train_digits/train_digits.ds");
  REQUIRE(contains(program, "steps = 22"));
  REQUIRE(contains(program, "epochs = 20"));
  program.replace(program.find("steps = 22"), 10, "steps = 3");
  program.replace(program.find("epochs = 20"), 11, "epochs = 2");
  std::map<std::string, std::string> by_device;
  for (const char* device : {"ref", "cpu"}) {
    for (const char* engine : {"ast", "stack", "reg", "jit"}) {
      CAPTURE(std::string(device) + " " + engine);
      Session s;
      at_root(s);
      REQUIRE(s.set_engine(engine));
      REQUIRE(s.set_device(device));
      std::string out = printed_by(s, program);
      CHECK(contains(out, "epoch 2 loss"));
      if (!by_device.count(device)) by_device[device] = out;
      CHECK(out == by_device[device]);  // the engines run the same kernels
    }
  }
  // Devices differ in rounding only: the losses agree to 1e-4.
  auto losses = [](const std::string& out) {
    std::vector<double> v;
    for (size_t at = out.find("loss "); at != std::string::npos; at = out.find("loss ", at + 1))
      v.push_back(std::stod(out.substr(at + 5)));
    return v;
  };
  auto a = losses(by_device["ref"]), b = losses(by_device["cpu"]);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-4));
  CHECK(a[1] < a[0]);
  // OpenCL where a device is installed (PoCL's CPU device in CI; its kernels compile slowly,
  // so one engine).
  Session s;
  at_root(s);
  std::string why;
  if (s.set_device("opencl", &why)) {
    auto c = losses(printed_by(s, program));
    REQUIRE(c.size() == 2);
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(c[i]).epsilon(1e-4));
  } else {
    MESSAGE("no OpenCL device here (" << why << "): the opencl run is left out");
  }
}

TEST_CASE("both training examples reach 95% held-out accuracy (SGD with momentum, Adam)") {
  for (const char* file : {"train_digits.ds", "train_adam.ds"}) {
    CAPTURE(std::string(file));
    Session s;
    at_root(s);
    REQUIRE(s.set_device("cpu"));
    std::string out = printed_by(s, slurp(std::string(DESCENT_SOURCE_DIR) + "/examples/train_digits/" + file));
    size_t at = out.find("test accuracy ");
    REQUIRE(at != std::string::npos);
    double accuracy = std::stod(out.substr(at + 14));
    CHECK(accuracy >= 0.95);
    // The loss fell: the last epoch's is a fraction of the first's.
    double first = std::stod(out.substr(out.find("loss ") + 5));
    double last = std::stod(out.substr(out.rfind("loss ") + 5));
    CHECK(last < first / 10);
  }
}

TEST_CASE("the MNIST example runs on stand-in files of MNIST's shapes, and learns") {
  // MNIST itself is not in the repository: 640 training and 100 test images of 784 pixels,
  // labelled by a fixed random linear map (so there is something to learn), and the
  // initial weights, written where the example loads them from.
  fs::path root = temp_dir();
  fs::path dir = root / "examples" / "train_mnist";
  fs::create_directories(dir);
  auto save = [&](const std::string& name, const tensor::Tensor& t) {
    std::string error;
    REQUIRE_MESSAGE(tensor::save_npy(t, (dir / (name + ".npy")).string(), &error), error);
  };
  tensor::Tensor proj;
  std::string error;
  REQUIRE(tensor::rand({10, 784}, 77, &proj, &error));
  for (auto [name, n, seed] : {std::tuple<const char*, int64_t, int64_t>{"train", 640, 1}, {"test", 100, 2}}) {
    tensor::Tensor x, y;
    REQUIRE(tensor::rand({n, 784}, seed, &x, &error));
    REQUIRE(tensor::zeros({n}, &y, &error));
    for (int64_t i = 0; i < n; ++i) {
      int best = 0;
      double best_v = -1e30;
      for (int c = 0; c < 10; ++c) {
        double v = 0;
        for (int64_t p = 0; p < 784; ++p) {
          float& px = x.data[size_t(i * 784 + p)];
          if (c == 0) px = 0.5f + 0.5f * px;  // pixels in [0, 1]
          v += double(px) * double(proj.data[size_t(c * 784 + p)]);
        }
        if (v > best_v) best_v = v, best = c;
      }
      y.data[size_t(i)] = float(best);
    }
    save(std::string(name) + "_images", x);
    save(std::string(name) + "_labels", y);
  }
  const int64_t shapes[4][2] = {{128, 784}, {128, 0}, {10, 128}, {10, 0}};
  const char* names[4] = {"w1_init", "b1_init", "w2_init", "b2_init"};
  for (int k = 0; k < 4; ++k) {
    tensor::Tensor t;
    std::vector<int64_t> shape = shapes[k][1] ? std::vector<int64_t>{shapes[k][0], shapes[k][1]}
                                             : std::vector<int64_t>{shapes[k][0]};
    REQUIRE(tensor::rand(shape, 90 + k, &t, &error));
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] *= k < 2 ? 1.0f / 28 : 1.0f / 11.3f;
    save(names[k], t);
  }
  Session s;
  s.tensors().set_file_base(root.string());
  REQUIRE(s.set_device("cpu"));
  std::string out = printed_by(s, slurp(std::string(DESCENT_SOURCE_DIR) + "/examples/train_mnist/train_mnist.ds"));
  CHECK(contains(out, "epoch 3 loss"));
  double first = std::stod(out.substr(out.find("loss ") + 5));
  double last = std::stod(out.substr(out.rfind("loss ") + 5));
  CHECK(last < first);
  CHECK(contains(out, "test accuracy"));
  fs::remove_all(root);
}

TEST_CASE("full(shape, value): a learning rate as a one-element tensor, on every engine") {
  for (const char* engine : {"ast", "stack", "reg", "jit"}) {
    CAPTURE(std::string(engine));
    Session s;
    REQUIRE(s.set_engine(engine));
    std::string out = printed_by(s,
        "kernel sgd1(w: f32[n], g: f32[n], lr: f32[1]) -> f32[n] {\n"
        "  out[i] = w[i] - lr[0] * g[i]\n  return out\n}\n"
        "lr = full([1], 0.25)\nprint(full([2, 2], -1.5))\nprint(sgd1(ones([3]), ones([3]), lr))\n");
    CHECK(out == "tensor([2, 2], [-1.5, -1.5, -1.5, -1.5])\ntensor([3], [0.75, 0.75, 0.75])\n");
  }
  Session s;
  std::string printed;
  Outcome o = submit(s, "t = full([2], 1)\n", &printed);
  CHECK(o.status != Outcome::Ok);
  CHECK(contains(o.message, "argument 2 of 'full' must be float"));
}
