// test_tensor_prelude: every kernel of tensor/prelude.ds against the same computation
// written as plain C++ loops, on both devices (the reference interpreter and LLVM-compiled
// code). The prelude is what users read to learn the notation, so it must be right.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "pipeline/pipeline.h"
#include "tensor/runtime.h"

using namespace descent;
using namespace descent::tensor;

namespace {

// The prelude checked into a Module, and a runtime to call its kernels on.
struct Prelude {
  Module module;
  std::shared_ptr<Program> program = std::make_shared<Program>();
  GraphRuntime rt;

  explicit Prelude(const std::string& device = "ref") {
    std::vector<Diagnostic> d;
    *program = parse(std::make_shared<SourceFile>("prelude.ds", std::string(prelude_source())), d);
    REQUIRE_MESSAGE(d.empty(), (d.empty() ? "" : d[0].message));
    REQUIRE(check(*program, module, {}, d));
    module.programs.push_back(program);
    std::string error;
    REQUIRE_MESSAGE(rt.set_device(device, &error), error);
    rt.set_threads(1);
  }

  const KernelDecl& kernel(const std::string& name) {
    int k = module.find_kernel(name);
    REQUIRE_MESSAGE(k >= 0, name);
    return *module.kernels[size_t(k)].decl;
  }

  // Calls a prelude kernel on tensors and returns the result's value.
  Tensor call(const std::string& name, const std::vector<const Tensor*>& args) {
    std::vector<int64_t> handles;
    for (const Tensor* t : args) handles.push_back(rt.add_tensor(*t));
    int64_t out = -1;
    std::string error;
    REQUIRE_MESSAGE(rt.call_kernel(kernel(name), handles, &out, &error), error);
    auto v = rt.value(out, &error);
    REQUIRE_MESSAGE(v, error);
    return *v;
  }

  // The error message of a call that must fail at call time.
  std::string call_error(const std::string& name, const std::vector<const Tensor*>& args) {
    std::vector<int64_t> handles;
    for (const Tensor* t : args) handles.push_back(rt.add_tensor(*t));
    int64_t out = -1;
    std::string error;
    CHECK_FALSE(rt.call_kernel(kernel(name), handles, &out, &error));
    return error;
  }
};

Tensor random(std::vector<int64_t> shape, int64_t seed, float scale = 1) {
  Tensor t;
  std::string error;
  REQUIRE(tensor::rand(shape, seed, &t, &error));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] *= scale;
  return t;
}

// A tensor of `shape` whose element (i, j) is f(i, j), computed in double like a textbook.
Tensor make2(int64_t n, int64_t m, const std::function<double(int64_t, int64_t)>& f) {
  Tensor t;
  std::string error;
  REQUIRE(zeros({n, m}, &t, &error));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) t.data[size_t(i * m + j)] = float(f(i, j));
  return t;
}

float at(const Tensor& t, int64_t i, int64_t j) { return t.data[size_t(i * t.shape[1] + j)]; }

void check_close(const Tensor& got, const Tensor& want) {
  std::string why;
  CHECK_MESSAGE(allclose(got, want, 1e-4, &why), why);
}

const char* const kDevices[] = {"ref", "cpu"};

}  // namespace

TEST_CASE("prelude: parses, checks, and defines the documented kernels") {
  Prelude p;
  std::vector<std::string> names;
  for (const auto& k : p.module.kernels) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"add", "mul", "relu", "bias_add", "matmul", "linear",
                                          "linear_relu", "transpose", "softmax",
                                          "cross_entropy", "sigmoid", "tanh", "bmm",
                                          "layer_norm", "gelu", "gelu_erf", "softmax3", "attention",
                                          "causal_attention", "momentum",
                                          "momentum_vec", "sgd_step", "sgd_step_vec",
                                          "adam_betas", "adam_powers", "adam_mean", "adam_mean_vec",
                                          "adam_square", "adam_square_vec", "adam_step",
                                          "adam_step_vec"});
  CHECK(p.kernel("linear_relu").stages.size() == 1);  // fused by hand: one statement
  CHECK(p.kernel("softmax").stages.size() == 4);
}

TEST_CASE("prelude: elementwise kernels against loops") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    Tensor a = random({5, 7}, 1), b = random({5, 7}, 2), bias = random({7}, 3);
    check_close(p.call("add", {&a, &b}), make2(5, 7, [&](auto i, auto j) {
                  return double(at(a, i, j)) + at(b, i, j);
                }));
    check_close(p.call("mul", {&a, &b}), make2(5, 7, [&](auto i, auto j) {
                  return double(at(a, i, j)) * at(b, i, j);
                }));
    check_close(p.call("relu", {&a}), make2(5, 7, [&](auto i, auto j) {
                  return std::max(0.0, double(at(a, i, j)));
                }));
    check_close(p.call("bias_add", {&a, &bias}), make2(5, 7, [&](auto i, auto j) {
                  return double(at(a, i, j)) + bias.data[size_t(j)];
                }));
  }
}

TEST_CASE("prelude: matmul, linear and the hand-fused linear_relu against loops") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    Tensor A = random({6, 33}, 4), B = random({33, 9}, 5), W = random({9, 33}, 6);
    check_close(p.call("matmul", {&A, &B}), make2(6, 9, [&](auto i, auto j) {
                  double s = 0;
                  for (int64_t r = 0; r < 33; ++r) s += double(at(A, i, r)) * at(B, r, j);
                  return s;
                }));
    auto linear = [&](int64_t i, int64_t j) {
      double s = 0;
      for (int64_t r = 0; r < 33; ++r) s += double(at(A, i, r)) * at(W, j, r);
      return s;
    };
    check_close(p.call("linear", {&A, &W}), make2(6, 9, linear));
    Tensor lr = p.call("linear_relu", {&A, &W});
    check_close(lr, make2(6, 9, [&](auto i, auto j) { return std::max(0.0, linear(i, j)); }));
    // Random weights give both signs: relu really clipped something.
    int clipped = 0;
    for (size_t k = 0; k < lr.data.size(); ++k) clipped += lr.data[k] == 0.0f;
    CHECK(clipped > 0);
    CHECK(clipped < int(lr.data.size()));
  }
}

TEST_CASE("prelude: transpose against loops, and transposing twice is the identity") {
  for (const std::string& dev : Session::devices()) {  // opencl too (PoCL here)
    INFO("device ", dev);
    Prelude p(dev);
    Tensor a = random({3, 17}, 8);  // not square: a swapped extent would read out of range
    Tensor t = p.call("transpose", {&a});
    REQUIRE(t.shape == std::vector<int64_t>{17, 3});
    check_close(t, make2(17, 3, [&](auto i, auto j) { return double(at(a, j, i)); }));
    Tensor back = p.call("transpose", {&t});
    CHECK(std::memcmp(back.data.data(), a.data.data(), a.data.size() * sizeof(float)) == 0);
  }
  Prelude p;
  Tensor v = random({4}, 9);
  CHECK(p.call_error("transpose", {&v}).find("'transpose'") != std::string::npos);
}

TEST_CASE("prelude: softmax is row-wise, sums to 1, and survives large inputs") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    // Scaled by 1000: exp of the raw inputs would overflow f32 (above ~88.7).
    for (float scale : {1.0f, 1000.0f}) {
      INFO("scale ", scale);
      Tensor x = random({4, 50}, 7, scale);
      Tensor y = p.call("softmax", {&x});
      check_close(y, make2(4, 50, [&](auto i, auto j) {
                    double mx = -INFINITY, s = 0;
                    for (int64_t c = 0; c < 50; ++c) mx = std::max(mx, double(at(x, i, c)));
                    for (int64_t c = 0; c < 50; ++c) s += std::exp(double(at(x, i, c)) - mx);
                    return std::exp(double(at(x, i, j)) - mx) / s;
                  }));
      for (int64_t i = 0; i < 4; ++i) {
        double row = 0;
        for (int64_t j = 0; j < 50; ++j) {
          CHECK(std::isfinite(at(y, i, j)));
          row += at(y, i, j);
        }
        CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("prelude: cross_entropy is -log softmax at the label, finite for large logits") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    for (float scale : {1.0f, 1000.0f}) {
      INFO("scale ", scale);
      Tensor x = random({5, 7}, 11, scale);
      Tensor labels;
      std::string error;
      REQUIRE(zeros({5}, &labels, &error));
      for (int64_t i = 0; i < 5; ++i) labels.data[size_t(i)] = float((i * 3) % 7);
      Tensor y = p.call("cross_entropy", {&x, &labels});
      REQUIRE(y.shape == std::vector<int64_t>{5});
      for (int64_t i = 0; i < 5; ++i) {
        double mx = -INFINITY, s = 0;
        for (int64_t c = 0; c < 7; ++c) mx = std::max(mx, double(at(x, i, c)));
        for (int64_t c = 0; c < 7; ++c) s += std::exp(double(at(x, i, c)) - mx);
        double want = std::log(s) + mx - double(at(x, i, (i * 3) % 7));
        CHECK(std::isfinite(y.data[size_t(i)]));
        CHECK(y.data[size_t(i)] == doctest::Approx(want).epsilon(1e-4).scale(std::max(1.0, mx)));
      }
    }
  }
}

TEST_CASE("prelude: sigmoid and tanh against libm, finite at +-100 and exact at 0") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    // Ordinary values, the points around 0, and far out where exp(-x) overflows f32.
    Tensor x = make2(4, 6, [](auto i, auto j) {
      static const double v[24] = {-100, -30, -9, -3, -1, -0.5, -1e-3, -1e-6, 0, 1e-6, 1e-3, 0.25,
                                   0.5,  1,   2,  3,  5,  9,    15,    30,    88, 89, 100, 1e4};
      return v[i * 6 + j];
    });
    Tensor s = p.call("sigmoid", {&x}), t = p.call("tanh", {&x});
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 6; ++j) {
        double v = at(x, i, j);
        CAPTURE(v);
        CHECK(at(s, i, j) == doctest::Approx(1 / (1 + std::exp(-v))).epsilon(1e-6).scale(1e-30));
        // Relative 1e-5, or 1e-7 absolute near 0: 1 - exp(-2x) loses the digits of a tiny x
        // (no expm1 in the kernel language); sigmoid has no such cancellation.
        CHECK(at(t, i, j) == doctest::Approx(std::tanh(v)).epsilon(1e-5).scale(0.01));
      }
    CHECK(at(s, 1, 2) == 0.5f);  // x = 0
    CHECK(at(t, 1, 2) == 0.0f);
  }
}

TEST_CASE("prelude: the transformer kernels against double-precision loops") {
  // Attention for each head: softmax(q k^T / sqrt(d)) v, and with the causal mask (j <= i);
  // a batched matmul; layer norm; GELU's tanh form; softmax along the last of three axes.
  const int64_t H = 2, S = 5, T = 6, D = 4, E = 3;
  auto at3 = [](const Tensor& t, int64_t a, int64_t b, int64_t c) {
    return double(t.data[size_t((a * t.shape[1] + b) * t.shape[2] + c)]);
  };
  auto attention_want = [&](const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
    int64_t t_len = k.shape[1];
    std::vector<double> out(static_cast<size_t>(H * S * E));
    for (int64_t g = 0; g < H; ++g)
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> sc(static_cast<size_t>(t_len));
        double mx = -INFINITY, l = 0;
        for (int64_t j = 0; j < t_len; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c) dot += at3(q, g, i, c) * at3(k, g, j, c);
          sc[size_t(j)] = causal && j > i ? -INFINITY : dot / std::sqrt(double(D));
          mx = std::max(mx, sc[size_t(j)]);
        }
        for (int64_t j = 0; j < t_len; ++j) l += std::exp(sc[size_t(j)] - mx);
        for (int64_t c = 0; c < E; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < t_len; ++j) acc += std::exp(sc[size_t(j)] - mx) * at3(v, g, j, c);
          out[size_t((g * S + i) * E + c)] = acc / l;
        }
      }
    return out;
  };
  auto close_to = [](const Tensor& got, const std::vector<double>& want) {
    REQUIRE(size_t(got.numel()) == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(got.data[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1e-3));
  };
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    Tensor q = random({H, S, D}, 1, 2.0f), k = random({H, T, D}, 2, 2.0f), v = random({H, T, E}, 3);
    Tensor kc = random({H, S, D}, 4, 2.0f), vc = random({H, S, E}, 5);
    close_to(p.call("attention", {&q, &k, &v}), attention_want(q, k, v, false));
    close_to(p.call("causal_attention", {&q, &kc, &vc}), attention_want(q, kc, vc, true));
    // The first row attends to itself only: its output is v's first row, exactly.
    Tensor causal = p.call("causal_attention", {&q, &kc, &vc});
    for (int64_t c = 0; c < E; ++c) CHECK(at3(causal, 1, 0, c) == doctest::Approx(at3(vc, 1, 0, c)));
    Tensor b = random({H, D, T}, 6);
    std::vector<double> bmm_want;
    for (int64_t g = 0; g < H; ++g)
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < T; ++j) {
          double acc = 0;
          for (int64_t r = 0; r < D; ++r) acc += at3(q, g, i, r) * at3(b, g, r, j);
          bmm_want.push_back(acc);
        }
    close_to(p.call("bmm", {&q, &b}), bmm_want);
    std::vector<double> sm3_want;
    for (int64_t g = 0; g < H; ++g)
      for (int64_t i = 0; i < S; ++i) {
        double mx = -INFINITY, l = 0;
        for (int64_t c = 0; c < D; ++c) mx = std::max(mx, at3(q, g, i, c));
        for (int64_t c = 0; c < D; ++c) l += std::exp(at3(q, g, i, c) - mx);
        for (int64_t c = 0; c < D; ++c) sm3_want.push_back(std::exp(at3(q, g, i, c) - mx) / l);
      }
    close_to(p.call("softmax3", {&q}), sm3_want);
    // Layer norm of rows with a gamma and beta; GELU from -6 to 6.
    Tensor x = random({4, 9}, 7, 3.0f), gamma = random({9}, 8), beta = random({9}, 9);
    check_close(p.call("layer_norm", {&x, &gamma, &beta}), make2(4, 9, [&](auto i, auto j) {
                  double mu = 0, var = 0;
                  for (int64_t c = 0; c < 9; ++c) mu += at(x, i, c) / 9.0;
                  for (int64_t c = 0; c < 9; ++c) var += (at(x, i, c) - mu) * (at(x, i, c) - mu) / 9.0;
                  return (at(x, i, j) - mu) / std::sqrt(var + 1e-5) * gamma.data[size_t(j)] + beta.data[size_t(j)];
                }));
    Tensor g = random({4, 9}, 10, 6.0f);
    check_close(p.call("gelu", {&g}), make2(4, 9, [&](auto i, auto j) {
                  double u = at(g, i, j);
                  return 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
                }));
    check_close(p.call("gelu_erf", {&g}), make2(4, 9, [&](auto i, auto j) {
                  double u = at(g, i, j);
                  return 0.5 * u * (1 + std::erf(u / std::sqrt(2.0)));
                }));
  }
}

TEST_CASE("prelude: the optimizers' kernels against the update written out") {
  for (const char* dev : kDevices) {
    INFO("device ", std::string(dev));
    Prelude p(dev);
    Tensor w = random({3, 5}, 1), g = random({3, 5}, 2), v = random({3, 5}, 3);
    Tensor wb = random({5}, 4), gb = random({5}, 5), vb = random({5}, 6);
    Tensor lr, beta, betas, powers;
    std::string error;
    REQUIRE(full({1}, 0.05f, &lr, &error));
    REQUIRE(full({1}, 0.9f, &beta, &error));
    REQUIRE(zeros({2}, &betas, &error));
    betas.data[0] = 0.8f, betas.data[1] = 0.99f;
    REQUIRE(zeros({2}, &powers, &error));
    powers.data[0] = 0.8f * 0.8f, powers.data[1] = 0.99f * 0.99f;  // after two steps
    // SGD with momentum.
    Tensor v2 = p.call("momentum", {&v, &g, &beta});
    check_close(v2, make2(3, 5, [&](auto i, auto j) { return 0.9 * at(v, i, j) + at(g, i, j); }));
    check_close(p.call("sgd_step", {&w, &v2, &lr}),
                make2(3, 5, [&](auto i, auto j) { return at(w, i, j) - 0.05 * at(v2, i, j); }));
    Tensor vb2 = p.call("momentum_vec", {&vb, &gb, &beta});
    Tensor wb2 = p.call("sgd_step_vec", {&wb, &vb2, &lr});
    for (size_t k = 0; k < 5; ++k) {
      CHECK(vb2.data[k] == doctest::Approx(0.9 * vb.data[k] + gb.data[k]));
      CHECK(wb2.data[k] == doctest::Approx(wb.data[k] - 0.05 * vb2.data[k]));
    }
    // Adam: one step from (m, s) = (g, g^2)-ish states, with the powers after two steps.
    Tensor p3 = p.call("adam_powers", {&powers, &betas});
    CHECK(p3.data[0] == doctest::Approx(0.8 * 0.8 * 0.8));
    CHECK(p3.data[1] == doctest::Approx(0.99 * 0.99 * 0.99));
    Tensor s = p.call("mul", {&v, &v});
    Tensor m2 = p.call("adam_mean", {&v, &g, &betas});
    Tensor s2 = p.call("adam_square", {&s, &g, &betas});
    check_close(m2, make2(3, 5, [&](auto i, auto j) { return 0.8 * at(v, i, j) + 0.2 * at(g, i, j); }));
    check_close(s2, make2(3, 5, [&](auto i, auto j) {
                  return 0.99 * at(s, i, j) + 0.01 * double(at(g, i, j)) * at(g, i, j);
                }));
    check_close(p.call("adam_step", {&w, &m2, &s2, &p3, &lr}), make2(3, 5, [&](auto i, auto j) {
                  double mh = at(m2, i, j) / (1 - 0.8 * 0.8 * 0.8);
                  double sh = at(s2, i, j) / (1 - 0.99 * 0.99 * 0.99);
                  return at(w, i, j) - 0.05 * mh / (std::sqrt(sh) + 1e-8);
                }));
    Tensor sq = vb;  // a running square is never negative
    for (size_t k = 0; k < sq.data.size(); ++k) sq.data[k] *= sq.data[k];
    Tensor sb = p.call("adam_square_vec", {&sq, &gb, &betas});
    Tensor mb = p.call("adam_mean_vec", {&vb, &gb, &betas});
    Tensor wb3 = p.call("adam_step_vec", {&wb, &mb, &sb, &p3, &lr});
    for (size_t k = 0; k < 5; ++k) {
      CHECK(mb.data[k] == doctest::Approx(0.8 * vb.data[k] + 0.2 * gb.data[k]));
      double want_s = 0.99 * sq.data[k] + 0.01 * double(gb.data[k]) * gb.data[k];
      CHECK(sb.data[k] == doctest::Approx(want_s));
      double mh = mb.data[k] / (1 - 0.8 * 0.8 * 0.8), sh = want_s / (1 - 0.99 * 0.99 * 0.99);
      CHECK(wb3.data[k] == doctest::Approx(wb.data[k] - 0.05 * mh / (std::sqrt(sh) + 1e-8)).epsilon(1e-4));
    }
  }
}

TEST_CASE("prelude: mismatched shapes are call-time errors naming the kernel") {
  Prelude p;
  Tensor a = random({2, 3}, 1), b = random({3, 2}, 2), c = random({4, 3}, 3), v = random({4}, 4);
  CHECK(p.call_error("add", {&a, &b}).find("'add'") != std::string::npos);
  CHECK(p.call_error("matmul", {&a, &c}).find("'matmul'") != std::string::npos);
  CHECK(p.call_error("linear", {&a, &b}).find("'linear'") != std::string::npos);
  CHECK(p.call_error("bias_add", {&a, &v}).find("'bias_add'") != std::string::npos);
  CHECK(p.call_error("relu", {&v}).find("'relu'") != std::string::npos);
  CHECK(p.rt.pending_graph().nodes.empty());
}
