// test_tensor_autodiff: adjoint kernels derived from index notation (tensor/autodiff.h).
//
// The oracle is the definition of a derivative: for a kernel K, a direction v for one
// parameter p and weights u on the result, the adjoint must give
//     sum(v * K_dp(..., u))  ==  d/dt sum(u * K(p + t v))  at t = 0,
// the right side by central differences on the reference interpreter. Every prelude kernel
// and a set of kernels for the other rules are checked on random shapes and inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "tensor/autodiff.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"

using namespace descent;
using namespace descent::tensor;

namespace {

struct Kernels {
  Module module;
  std::vector<std::shared_ptr<Program>> programs;
  void add(const std::string& text) {
    std::vector<Diagnostic> d;
    auto p = std::make_shared<Program>(parse(std::make_shared<SourceFile>("k.ds", text), d));
    REQUIRE_MESSAGE(d.empty(), (d.empty() ? "" : d[0].message));
    REQUIRE_MESSAGE(check(*p, module, {}, d), (d.empty() ? "" : d[0].message));
    programs.push_back(p);
  }
  const KernelDecl& get(const std::string& name) {
    int k = module.find_kernel(name);
    REQUIRE_MESSAGE(k >= 0, name);
    return *module.kernels[static_cast<size_t>(k)].decl;
  }
};

Tensor run(const KernelDecl& k, const std::vector<const Tensor*>& args) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* t : args) shapes.push_back(t->shape);
  tir::PrimFunc f;
  Diagnostic d;
  REQUIRE_MESSAGE(lower(k, shapes, &f, &d), d.message);
  Tensor out;
  std::string error;
  REQUIRE_MESSAGE(tir::interpret(f, args, &out, &error), error);
  return out;
}

double dot(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape == b.shape);
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += double(a.data[size_t(i)]) * double(b.data[size_t(i)]);
  return s;
}

Tensor random(const std::vector<int64_t>& shape, int64_t seed) {
  Tensor t;
  std::string error;
  REQUIRE(tensor::rand(shape, seed, &t, &error));
  return t;
}

// Checks every parameter's adjoint of `k` at the given argument shapes; returns the adjoints.
std::vector<Adjoint> check_gradients(const KernelDecl& k,
                                     const std::vector<std::vector<int64_t>>& shapes,
                                     int64_t seed = 1, double eps = 1e-3,
                                     const std::map<size_t, Tensor>& fixed = {}) {
  std::vector<Adjoint> adjoints;
  Diagnostic d;
  REQUIRE_MESSAGE(derive_adjoints(k, &adjoints, &d), d.message);
  REQUIRE(adjoints.size() == k.params.size());
  std::vector<Tensor> x;
  for (size_t p = 0; p < shapes.size(); ++p)
    x.push_back(fixed.count(p) ? fixed.at(p) : random(shapes[p], seed + int64_t(p)));
  std::vector<const Tensor*> args;
  for (const Tensor& t : x) args.push_back(&t);
  Tensor y = run(k, args);
  Tensor u = random(y.shape, seed + 100);
  for (size_t p = 0; p < shapes.size(); ++p) {
    // A fixed input (class labels) is not differentiable there: its adjoint must be zero.
    if (fixed.count(p)) {
      CHECK(adjoints[p].zero);
      continue;
    }
    CAPTURE(adjoints[p].source);
    Tensor v = random(shapes[p], seed + 200 + int64_t(p));
    // The adjoint's value.
    std::vector<const Tensor*> adj_args;
    for (size_t q : adjoints[p].inputs) adj_args.push_back(&x[q]);
    adj_args.push_back(&u);
    REQUIRE(adjoints[p].kernel() != nullptr);
    Tensor g = run(*adjoints[p].kernel(), adj_args);
    REQUIRE(g.shape == shapes[p]);
    double analytic = dot(v, g);
    // Central differences.
    auto loss_at = [&](double t) {
      Tensor moved = x[p];
      for (int64_t i = 0; i < moved.numel(); ++i)
        moved.data[size_t(i)] = float(double(x[p].data[size_t(i)]) + t * double(v.data[size_t(i)]));
      std::vector<const Tensor*> a = args;
      a[p] = &moved;
      return dot(u, run(k, a));
    };
    double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
    CAPTURE(analytic);
    CAPTURE(numeric);
    CHECK(std::fabs(analytic - numeric) <= 1e-2 * std::max(1.0, std::fabs(numeric)));
  }
  return adjoints;
}

}  // namespace

TEST_CASE("every prelude kernel's adjoints agree with central differences") {
  Kernels ks;
  ks.add(std::string(prelude_source()));
  std::mt19937 rng(7);
  auto dim = [&] { return int64_t(2 + rng() % 5); };
  for (int round = 0; round < 3; ++round) {
    int64_t n = dim(), m = dim(), k = dim();
    check_gradients(ks.get("add"), {{n, m}, {n, m}}, round);
    check_gradients(ks.get("mul"), {{n, m}, {n, m}}, round);
    check_gradients(ks.get("relu"), {{n, m}}, round);
    check_gradients(ks.get("bias_add"), {{n, m}, {m}}, round);
    check_gradients(ks.get("matmul"), {{n, k}, {k, m}}, round);
    check_gradients(ks.get("linear"), {{n, k}, {m, k}}, round);
    check_gradients(ks.get("linear_relu"), {{n, k}, {m, k}}, round);
    check_gradients(ks.get("sigmoid"), {{n, m}}, round);
    check_gradients(ks.get("tanh"), {{n, m}}, round);
    check_gradients(ks.get("transpose"), {{n, m}}, round);
    check_gradients(ks.get("softmax"), {{n, m}}, round);
    Tensor labels = random({n}, round);
    for (int64_t i = 0; i < n; ++i) labels.data[size_t(i)] = float((i * 5 + round) % m);
    check_gradients(ks.get("cross_entropy"), {{n, m}, {n}}, round, 1e-3, {{1, labels}});
  }
}

TEST_CASE("the transformer kernels' adjoints agree with central differences") {
  // Attention's gradients flow through a scale by a dim's size, a row max, exponentials, a
  // row sum and a division; the causal mask through a comparison of two axes; layer norm's
  // through a mean and a variance (each a division by d); GELU's through the tanh pieces.
  Kernels ks;
  ks.add(std::string(prelude_source()));
  for (int round = 0; round < 2; ++round) {
    check_gradients(ks.get("bmm"), {{2, 3, 4}, {2, 4, 5}}, round);
    check_gradients(ks.get("softmax3"), {{2, 3, 5}}, round);
    check_gradients(ks.get("attention"), {{2, 3, 4}, {2, 5, 4}, {2, 5, 3}}, round);
    check_gradients(ks.get("causal_attention"), {{2, 4, 3}, {2, 4, 3}, {2, 4, 2}}, round);
    check_gradients(ks.get("layer_norm"), {{3, 6}, {6}, {6}}, round);
    check_gradients(ks.get("gelu"), {{3, 5}}, round);
    check_gradients(ks.get("gelu_erf"), {{3, 5}}, round);
  }
}

TEST_CASE("a dim used as a value: its adjoint takes a parameter that binds it") {
  // dx = dout * m, where m is y's length: the adjoint reads nothing of y, but needs it for m.
  Kernels ks;
  ks.add("kernel scale(x: f32[n], y: f32[m]) -> f32[n] {\n  out[i] = x[i] * m\n  return out\n}\n");
  std::vector<Adjoint> a = check_gradients(ks.get("scale"), {{4}, {6}}, 3);
  CHECK(a[0].source.find("(y: f32[m], dout: f32[n])") != std::string::npos);
  CHECK(a[0].source.find("dx[i] = dout[i] * m") != std::string::npos);
  CHECK(a[1].zero);
}

TEST_CASE("gelu_erf's derived gradient is the closed form, at 0 too") {
  // d/dx 0.5 x (1 + erf(x / sqrt 2)) = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(2 pi).
  Kernels ks;
  ks.add(std::string(prelude_source()));
  Tensor x, ones_t;
  std::string error;
  REQUIRE(zeros({1, 7}, &x, &error));
  REQUIRE(full({1, 7}, 1.0f, &ones_t, &error));
  const float v[7] = {-9, -1.5f, -1e-3f, 0, 1e-3f, 0.7f, 9};
  for (size_t k = 0; k < 7; ++k) x.data[k] = v[k];
  std::vector<Adjoint> a;
  Diagnostic d;
  REQUIRE_MESSAGE(derive_adjoints(ks.get("gelu_erf"), &a, &d), d.message);
  Tensor g = run(*a[0].kernel(), {&x, &ones_t});
  for (size_t k = 0; k < 7; ++k) {
    double t = v[k];
    CAPTURE(t);
    double want = 0.5 * (1 + std::erf(t / std::sqrt(2.0))) + t * std::exp(-t * t / 2) / std::sqrt(2 * M_PI);
    CHECK(g.data[k] == doctest::Approx(want).epsilon(1e-5).scale(1e-5));
  }
}

TEST_CASE("sigmoid's and tanh's derived gradients are the closed forms, at 0 and far out too") {
  // s' = s (1 - s) and tanh' = 1 - tanh^2, the forms libraries hand-write. The prelude's
  // two-piece formulas must give them at exactly 0 (where abs(x) has no slope) and stay
  // finite where exp(-x) alone would overflow (x = -100: inf / inf).
  Kernels ks;
  ks.add(std::string(prelude_source()));
  Tensor x;
  std::string error;
  REQUIRE(zeros({2, 5}, &x, &error));
  const float v[10] = {-100, -20, -1, -1e-3f, 0, 1e-3f, 0.5f, 2, 20, 100};
  for (size_t k = 0; k < 10; ++k) x.data[k] = v[k];
  Tensor ones_t;
  REQUIRE(full({2, 5}, 1.0f, &ones_t, &error));
  for (const char* name : {"sigmoid", "tanh"}) {
    CAPTURE(std::string(name));
    std::vector<Adjoint> a;
    Diagnostic d;
    REQUIRE_MESSAGE(derive_adjoints(ks.get(name), &a, &d), d.message);
    REQUIRE(a.size() == 1);
    REQUIRE(a[0].inputs == std::vector<size_t>{0});
    Tensor g = run(*a[0].kernel(), {&x, &ones_t});
    for (size_t k = 0; k < 10; ++k) {
      double t = v[k];
      double want = name == std::string("tanh") ? 1 - std::tanh(t) * std::tanh(t)
                                                 : (1 / (1 + std::exp(-t))) * (1 - 1 / (1 + std::exp(-t)));
      CAPTURE(t);
      REQUIRE(std::isfinite(g.data[k]));
      CHECK(g.data[k] == doctest::Approx(want).epsilon(1e-5).scale(1e-6));
    }
  }
}

TEST_CASE("the derived adjoints read as index notation") {
  Kernels ks;
  ks.add(std::string(prelude_source()));
  std::vector<Adjoint> a;
  Diagnostic d;
  REQUIRE(derive_adjoints(ks.get("matmul"), &a, &d));
  CHECK(a[0].source ==
        "kernel matmul_dA(B: f32[k, m], dC: f32[n, m]) -> f32[n, k] {\n"
        "  dA[i, r] = sum(j) dC[i, j] * B[r, j]\n"
        "  return dA\n}\n");
  CHECK(a[1].source ==
        "kernel matmul_dB(A: f32[n, k], dC: f32[n, m]) -> f32[k, m] {\n"
        "  dB[r, j] = sum(i) dC[i, j] * A[i, r]\n"
        "  return dB\n}\n");
  REQUIRE(derive_adjoints(ks.get("relu"), &a, &d));
  CHECK(a[0].source.find("dx[i, j] = dout[i, j] * (x[i, j] >= 0.0)") != std::string::npos);
  // A broadcast becomes a reduction: the bias's gradient sums over the rows.
  REQUIRE(derive_adjoints(ks.get("bias_add"), &a, &d));
  CHECK(a[1].source.find("db[j] = sum(i) dout[i, j]") != std::string::npos);
  CHECK(a[1].inputs.empty());  // nothing of the forward pass is kept for it
  // A nested reduction is hoisted into a stage of its own and recomputed.
  REQUIRE(derive_adjoints(ks.get("linear_relu"), &a, &d));
  CHECK(a[0].source.find("out_acc[i, j] = sum(r) x[i, r] * w[j, r]") != std::string::npos);
  CHECK(a[0].source.find("(out_acc[i, j] >= 0.0)") != std::string::npos);
}

TEST_CASE("the other rules: division, log, sqrt, abs, min, max and min reductions, reuse") {
  Kernels ks;
  ks.add(R"(
kernel quotient(a: f32[n, m], b: f32[n, m]) -> f32[n, m] {
  out[i, j] = a[i, j] / (b[i, j] * b[i, j] + 1.0)
  return out
}
kernel logs(a: f32[n]) -> f32[n] {
  out[i] = log(a[i] * a[i] + 1.0) + sqrt(a[i] * a[i] + 2.0) - abs(a[i])
  return out
}
kernel mins(a: f32[n, m], b: f32[n, m]) -> f32[n, m] {
  out[i, j] = min(a[i, j], b[i, j]) * 3.0 - max(a[i, j], 0.25)
  return out
}
kernel rowmax(x: f32[n, m]) -> f32[n] {
  out[i] = max(j) x[i, j] * 2.0
  return out
}
kernel colmin(x: f32[n, m]) -> f32[m] {
  out[j] = min(i) (-x[i, j])
  return out
}
kernel gram(x: f32[n, k]) -> f32[n, n] {
  out[i, j] = sum(r) x[i, r] * x[j, r]
  return out
}
kernel chain(x: f32[n, m], w: f32[m]) -> f32[n] {
  e[i, j] = exp(x[i, j] * w[j])
  s[i] = sum(j) e[i, j]
  out[i] = log(s[i]) * s[i]
  return out
}
kernel ignores(x: f32[n], y: f32[n]) -> f32[n] {
  out[i] = x[i] * 2.0
  return out
}
)");
  check_gradients(ks.get("quotient"), {{3, 4}, {3, 4}});
  check_gradients(ks.get("logs"), {{7}});
  check_gradients(ks.get("mins"), {{3, 5}, {3, 5}});
  check_gradients(ks.get("rowmax"), {{4, 6}});
  check_gradients(ks.get("colmin"), {{4, 6}});
  // A tensor used twice: both occurrences contribute, summed.
  auto g = check_gradients(ks.get("gram"), {{3, 5}});
  CHECK(g[0].source.find("dx_1") != std::string::npos);
  check_gradients(ks.get("chain"), {{3, 4}, {4}});
  auto z = check_gradients(ks.get("ignores"), {{5}, {5}});
  CHECK(z[1].zero);
  CHECK_FALSE(z[0].zero);
}

TEST_CASE("more shapes of derivation: outer products, broadcasts, column maxima, chains") {
  Kernels ks;
  ks.add(R"(
kernel outer_sum(x: f32[n], w: f32[m]) -> f32[n] {
  t[i, j] = x[i] * w[j]
  out[i] = sum(j) t[i, j]
  return out
}
kernel bcast(x: f32[n]) -> f32[n, 4] {
  out[i, j] = x[i] * 2.0
  return out
}
kernel colmax(x: f32[n, m]) -> f32[m] {
  mx[j] = max(i) x[i, j]
  out[j] = mx[j] * mx[j]
  return out
}
kernel axisval(x: f32[n]) -> f32[n] {
  out[i] = x[i] * i
  return out
}
kernel chain3(x: f32[n, m]) -> f32[n] {
  a[i, j] = exp(x[i, j])
  b[i] = sum(j) a[i, j]
  c[i, j] = a[i, j] / b[i]
  out[i] = max(j) c[i, j]
  return out
}
kernel twostage(a: f32[n, k], b: f32[k, m], c: f32[m, p]) -> f32[n, p] {
  ab[i, j] = sum(r) a[i, r] * b[r, j]
  out[i, q] = sum(j) ab[i, j] * c[j, q]
  return out
}
)");
  // An intermediate whose gradient has an axis no access gives an extent (t's j, from
  // dout[i] alone) is substituted where it is used rather than made a stage.
  auto o = check_gradients(ks.get("outer_sum"), {{5}, {3}});
  CHECK(o[0].source.find("dt[") == std::string::npos);
  check_gradients(ks.get("bcast"), {{6}});
  check_gradients(ks.get("colmax"), {{4, 5}});
  check_gradients(ks.get("axisval"), {{7}});
  check_gradients(ks.get("chain3"), {{3, 6}});
  check_gradients(ks.get("twostage"), {{3, 4}, {4, 5}, {5, 2}});
}

TEST_CASE("bodies the rules cannot differentiate are refused with the construct named") {
  Kernels ks;
  ks.add(R"(
kernel conv1d(x: f32[n], w: f32[3]) -> f32[n] {
  out[i] = sum(r) x[i + r] * w[r]
  return out
}
kernel diag(x: f32[n, n]) -> f32[n] {
  out[i] = x[i, i]
  return out
}
kernel first(x: f32[n, m]) -> f32[m] {
  out[j] = x[0, j]
  return out
}
)");
  std::vector<Adjoint> a;
  Diagnostic d;
  CHECK_FALSE(derive_adjoints(ks.get("conv1d"), &a, &d));
  CHECK(d.message.find("'x[i + r]'") != std::string::npos);
  CHECK(d.loc.line == 3);
  CHECK_FALSE(derive_adjoints(ks.get("diag"), &a, &d));
  CHECK(d.message.find("axis 'i' indexes it twice") != std::string::npos);
  CHECK_FALSE(derive_adjoints(ks.get("first"), &a, &d));
  CHECK(d.message.find("'x[0, j]'") != std::string::npos);
  // The weights' gradient of the convolution needs no scatter, but the refusal is all or
  // nothing for derive_adjoints; derive_adjoint of w alone still refuses (x's occurrence is
  // differentiated on the way), which keeps the rule simple to state.
  Adjoint one;
  CHECK_FALSE(derive_adjoint(ks.get("conv1d"), 1, &one, &d));
}

