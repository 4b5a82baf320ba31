// test_tensor_host_ops: the builtins a classifier needs that are not kernels (argmax, reshape,
// flatten, rows, eq, mean; tensor/host_ops.h), first on hand-made tensors whose answers are
// known (ties, nan, every axis), then through the Session as a student writes them: on every
// device, with integer labels from .npy, and with located errors after which the session
// goes on.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "pipeline/pipeline.h"
#include "tensor/host_ops.h"
#include "tensor/runtime.h"

using namespace descent;
using namespace descent::tensor;

namespace {

Tensor make(std::vector<int64_t> shape, const std::vector<float>& values) {
  Tensor t;
  std::string error;
  REQUIRE(zeros(shape, &t, &error));
  REQUIRE(t.data.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) t.data[i] = values[i];
  return t;
}

// Runs one host operation on tensors, checking its shape rule first as the runtime does.
Tensor run(Builtin which, const std::vector<const Tensor*>& args, const std::vector<int64_t>& ints) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* a : args) shapes.push_back(a->shape);
  std::vector<int64_t> shape;
  std::string error;
  REQUIRE_MESSAGE(host_op_shape(which, shapes, ints, &shape, &error), error);
  Tensor out;
  REQUIRE(run_host_op(which, args, ints, shape, &out));
  return out;
}

std::string shape_error(Builtin which, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<int64_t>& ints) {
  std::vector<int64_t> shape;
  std::string error;
  CHECK_FALSE(host_op_shape(which, shapes, ints, &shape, &error));
  return error;
}

std::vector<float> values(const Tensor& t) { return {t.data.data(), t.data.data() + t.data.size()}; }

const float kNan = NAN, kInf = INFINITY;

Outcome submit(Session& s, const std::string& source, std::string* printed) {
  RunOptions opts;
  opts.out = [printed](std::string_view t) { *printed += t; };
  return s.submit(source, "<test>", opts);
}

std::string printed_by(Session& s, const std::string& source) {
  std::string printed;
  Outcome o = submit(s, source, &printed);
  CHECK_MESSAGE(o.status == Outcome::Ok, o.message);
  return printed;
}

// "L:C: message" of an input that must fail.
std::string error_of(Session& s, const std::string& source) {
  std::string printed;
  Outcome o = submit(s, source, &printed);
  CHECK(o.status != Outcome::Ok);
  if (o.diagnostics.empty()) return "(no diagnostic)";
  const Diagnostic& d = o.diagnostics[0];
  return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
}

}  // namespace

TEST_CASE("argmax: the first largest value's index, a nan counting as largest (NumPy's rule)") {
  Tensor x = make({4, 3}, {1, 3, 3,              // a tie: the first one
                           2, kNan, 5,           // a nan wins, wherever the larger values are
                           -kInf, -kInf, -kInf,  // all equal: index 0
                           -1, -2, kInf});
  Tensor p = run(Builtin::Argmax, {&x}, {-1});
  CHECK(p.shape == std::vector<int64_t>{4});
  CHECK(values(p) == std::vector<float>{1, 1, 0, 2});
  CHECK(values(run(Builtin::Argmax, {&x}, {1})) == values(p));
  Tensor down = run(Builtin::Argmax, {&x}, {0});  // along the columns
  CHECK(down.shape == std::vector<int64_t>{3});
  CHECK(values(down) == std::vector<float>{1, 1, 3});
  CHECK(values(run(Builtin::Argmax, {&x}, {-2})) == values(down));

  // The middle axis of [2, 3, 2]: x[a, b, c] = one hot at b = (a + c) % 3.
  std::vector<float> v(12, 0.0f);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) v[size_t(a * 6 + ((a + c) % 3) * 2 + c)] = 1;
  Tensor cube = make({2, 3, 2}, v);
  Tensor mid = run(Builtin::Argmax, {&cube}, {1});
  CHECK(mid.shape == std::vector<int64_t>{2, 2});
  CHECK(values(mid) == std::vector<float>{0, 1, 1, 2});

  Tensor one = make({5}, {0, 7, -1, 7, 2});  // rank 1: a tensor of one index
  Tensor r = run(Builtin::Argmax, {&one}, {-1});
  CHECK(r.shape == std::vector<int64_t>{1});
  CHECK(values(r) == std::vector<float>{1});
}

TEST_CASE("reshape, flatten and rows keep the data in C order; eq is exact equality") {
  std::vector<float> v;
  for (int i = 0; i < 24; ++i) v.push_back(float(i) * 0.5f);
  Tensor x = make({2, 3, 4}, v);
  Tensor r = run(Builtin::Reshape, {&x}, {4, 6});
  CHECK(r.shape == std::vector<int64_t>{4, 6});
  CHECK(values(r) == v);
  Tensor f = run(Builtin::Flatten, {&x}, {});
  CHECK(f.shape == std::vector<int64_t>{2, 12});  // the batch dim kept, as ONNX Flatten
  CHECK(values(f) == v);
  Tensor line = make({3}, {1, 2, 3});
  CHECK(run(Builtin::Flatten, {&line}, {}).shape == std::vector<int64_t>{3, 1});

  Tensor mid = run(Builtin::Rows, {&r}, {1, 2});  // rows 1 and 2 of [4, 6]
  CHECK(mid.shape == std::vector<int64_t>{2, 6});
  CHECK(values(mid) == std::vector<float>(v.begin() + 6, v.begin() + 18));
  Tensor last = run(Builtin::Rows, {&x}, {1, 1});  // any rank: along dim 0
  CHECK(last.shape == std::vector<int64_t>{1, 3, 4});
  CHECK(values(last) == std::vector<float>(v.begin() + 12, v.end()));

  Tensor a = make({5}, {1, kNan, 0.0f, 3, 2}), b = make({5}, {1, kNan, -0.0f, 3.0000002f, 2});
  CHECK(values(run(Builtin::Eq, {&a, &b}, {})) == std::vector<float>{1, 0, 1, 0, 1});
}

TEST_CASE("host operations: wrong shapes and arguments are errors that say what to do") {
  CHECK(shape_error(Builtin::Reshape, {{4, 10}}, {3, 10}) ==
        "reshape: [4, 10] has 40 elements, but [3, 10] has 30 (the product of the dims must match)");
  CHECK(shape_error(Builtin::Argmax, {{4, 10}}, {2}) ==
        "argmax: axis 2 is out of range for a tensor of shape [4, 10] (axes 0..1, or -1 for the last)");
  CHECK(shape_error(Builtin::Argmax, {{4, 10}}, {-3}).find("axis -3 is out of range") != std::string::npos);
  CHECK(shape_error(Builtin::Argmax, {{1, (int64_t(1) << 24) + 1}}, {-1}) ==
        "argmax: axis 1 has 16777217 elements; indices above 2^24 are not exact as f32");
  CHECK(shape_error(Builtin::Rows, {{64, 10}}, {60, 8}) ==
        "rows: rows 60..67 are out of range for a tensor of 64 rows (shape [64, 10])");
  CHECK(shape_error(Builtin::Rows, {{64, 10}}, {-1, 2}).find("rows -1..0 are out of range") !=
        std::string::npos);
  CHECK(shape_error(Builtin::Rows, {{64, 10}}, {0, 0}) == "rows: the count must be at least 1, got 0");
  CHECK(shape_error(Builtin::Eq, {{64}, {64, 1}}, {}) ==
        "eq: the shapes differ: [64] and [64, 1] (no broadcasting; reshape one of them)");
}

TEST_CASE("a classifier's accuracy on every device: lazy logits, argmax, int64 labels, mean of eq") {
  const std::string labels = DESCENT_TESTS_DIR "/tensor/npy/i64_labels.npy";
  // The predictions are also found by scalar loops in the same program: the two must agree.
  const std::string program =
      "x = rand([6, 16], 1)\n"
      "w = rand([10, 16], 2)\n"
      "logits = relu(linear(x, w))\n"  // pending until argmax needs it
      "pred = argmax(logits)\n"
      "hits = 0\n"
      "for i in 0..6 {\n"
      "  best = 0\n"
      "  for j in 1..10 { if logits[i, j] > logits[i, best] { best = j } }\n"
      "  if float(best) == pred[i] { hits += 1 }\n"
      "}\n"
      "print(pred.shape, hits)\n"
      "labels = flatten(load(\"" + labels + "\"))\n"  // [2, 3] -> [2, 3]
      "print(labels.shape, labels[1, 2])\n"
      "labels = reshape(labels, [6])\n"
      "m = 0\n"
      "for i in 0..6 { if pred[i] == labels[i] { m += 1 } }\n"
      "print(mean(eq(labels, labels)), mean(eq(pred, labels)) == float(m) / 6.0)\n"
      "batch = rows(x, 2, 3)\n"
      "print(mean(eq(argmax(relu(linear(batch, w))), rows(pred, 2, 3))))\n"
      "print(sum_all(transpose(w)) == sum_all(w), transpose(w).shape)\n";
  std::string first;
  for (const std::string& device : Session::devices()) {
    CAPTURE(device);
    Session s;
    std::string error;
    REQUIRE_MESSAGE(s.set_device(device, &error), error);
    std::string out = printed_by(s, program);
    CHECK(out.find("[6] 6\n[2, 3] 33554432.0\n1.0 true\n1.0\ntrue [16, 10]\n") == 0);
    if (first.empty()) first = out;
    CHECK(out == first);
  }
}

TEST_CASE("host operations in a program: located errors, and the session goes on") {
  Session s;
  printed_by(s, "x = rand([4, 5], 3)\n");
  CHECK(error_of(s, "y = 1\nz = reshape(x, [3, 3])\n") ==
        "2:5: reshape: [4, 5] has 20 elements, but [3, 3] has 9 (the product of the dims must match)");
  CHECK(error_of(s, "print(rows(x, 3, 2))\n") ==
        "1:7: rows: rows 3..4 are out of range for a tensor of 4 rows (shape [4, 5])");
  CHECK(error_of(s, "a = argmax(x, 2)\n").find("1:5: argmax: axis 2 is out of range") == 0);
  CHECK(error_of(s, "e = eq(x, argmax(x))\n") ==
        "1:5: eq: the shapes differ: [4, 5] and [4] (no broadcasting; reshape one of them)");
  // Compile errors point at the argument.
  CHECK(error_of(s, "a = argmax(x, 1.0)\n") == "1:15: argument 2 of 'argmax' must be int, got float");
  CHECK(error_of(s, "a = argmax(x, 1, 2)\n") ==
        "1:5: 'argmax' expects 1 or 2 arguments (a tensor, then an axis), got 3");
  CHECK(error_of(s, "r = reshape(x, 20)\n") ==
        "1:16: argument 2 of 'reshape' must be shape, got int (a shape is a list, e.g. [2, 3])");
  CHECK(error_of(s, "m = mean(3.0)\n") == "1:10: argument 1 of 'mean' must be tensor, got float");
  CHECK(error_of(s, "rows = 3\n") == "1:1: cannot assign to function 'rows'");
  CHECK(error_of(s, "print(load(\"" DESCENT_TESTS_DIR "/tensor/npy/bad_i32_inexact.npy\"))\n")
            .find("the i32 value 16777217 at index [1, 1] is not exactly representable as f32") !=
        std::string::npos);
  // Nothing above changed x, and the session still runs.
  CHECK(printed_by(s, "print(flatten(reshape(x, [2, 2, 5])).shape, mean(x) == sum_all(x) / 20.0)\n") ==
        "[2, 10] true\n");
}
