// The reference interpreter (tir::interpret) on hand-built loop nests: numbers against plain
// C++ loops, the shared max/min rule, init/predicate handling, and every failure it reports.
#include <doctest/doctest.h>

#include "tests/tensor/kernel_util.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>

#include "tensor/index_eval.h"
#include "tensor/lower.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tir;

namespace {

IterVar iter(const std::string& name, int64_t extent, IterKind kind, tir::ExprPtr binding) {
  IterVar v;
  v.name = name;
  v.extent = extent;
  v.kind = kind;
  v.binding = std::move(binding);
  return v;
}

tir::StmtPtr block(const std::string& name, std::vector<IterVar> iters, tir::StmtPtr init,
                   tir::StmtPtr body) {
  auto b = std::make_unique<tir::Stmt>(tir::StmtKind::Block);
  b->name = name;
  b->iters = std::move(iters);
  b->init = std::move(init);
  b->body = std::move(body);
  return b;
}

std::vector<tir::ExprPtr> idx(tir::ExprPtr a, tir::ExprPtr b = nullptr) {
  std::vector<tir::ExprPtr> v;
  v.push_back(std::move(a));
  if (b) v.push_back(std::move(b));
  return v;
}

// The mm_relu of the seed notes, built by hand: Y = A @ B (n x n), C = max(Y, 0).
PrimFunc mm_relu(int64_t n) {
  PrimFunc f;
  f.name = "mm_relu";
  f.buffers = {{"A", {n, n}, Scope::Global, BufferRole::Input},
               {"B", {n, n}, Scope::Global, BufferRole::Input},
               {"Y", {n, n}, Scope::Global, BufferRole::Temp},
               {"C", {n, n}, Scope::Global, BufferRole::Output}};
  f.params = {0, 1};
  f.output = 3;
  std::vector<IterVar> its;
  its.push_back(iter("vi", n, IterKind::Spatial, var("i")));
  its.push_back(iter("vj", n, IterKind::Spatial, var("j")));
  its.push_back(iter("vk", n, IterKind::Reduce, var("k")));
  auto init = make_store(2, idx(var("vi"), var("vj")), float_imm(0));
  auto body = make_store(
      2, idx(var("vi"), var("vj")),
      binary(Op::Add, load(2, idx(var("vi"), var("vj"))),
             binary(Op::Mul, load(0, idx(var("vi"), var("vk"))),
                    load(1, idx(var("vk"), var("vj"))))));
  auto y = make_for("i", n, make_for("j", n, make_for("k", n,
              block("Y", std::move(its), std::move(init), std::move(body)))));
  std::vector<IterVar> its2;
  its2.push_back(iter("vi", n, IterKind::Spatial, var("i")));
  its2.push_back(iter("vj", n, IterKind::Spatial, var("j")));
  auto relu = make_store(3, idx(var("vi"), var("vj")),
                         binary(Op::Max, load(2, idx(var("vi"), var("vj"))), float_imm(0)));
  auto c = make_for("i", n, make_for("j", n, block("C", std::move(its2), nullptr, std::move(relu))));
  std::vector<tir::StmtPtr> stages;
  stages.push_back(std::move(y));
  stages.push_back(std::move(c));
  f.body = make_seq(std::move(stages));
  return f;
}

tensor::Tensor random(std::vector<int64_t> shape, int64_t seed) {
  tensor::Tensor t;
  std::string err;
  REQUIRE(tensor::rand(shape, seed, &t, &err));
  return t;
}

}  // namespace

TEST_CASE("mm_relu by hand matches plain C++ loops") {
  const int64_t n = 64;
  PrimFunc f = mm_relu(n);
  std::string err;
  REQUIRE_MESSAGE(verify(f, &err), err);
  tensor::Tensor a = random({n, n}, 1), b = random({n, n}, 2), out, want;
  REQUIRE(tensor::zeros({n, n}, &want, &err));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t k = 0; k < n; k++) acc = acc + a.data[size_t(i * n + k)] * b.data[size_t(k * n + j)];
      want.data[size_t(i * n + j)] = acc > 0 ? acc : 0;
    }
  REQUIRE_MESSAGE(interpret(f, {&a, &b}, &out, &err), err);
  CHECK(out.shape == std::vector<int64_t>{n, n});
  std::string why;
  CHECK_MESSAGE(tensor::allclose(out, want, 1e-5, &why), why);
  // Same order of f32 operations as the loops above: the oracle is exact, not just close.
  bool exact = true;
  for (int64_t i = 0; i < n * n; i++) exact = exact && out.data[size_t(i)] == want.data[size_t(i)];
  CHECK(exact);
}

// ---- kernels lowered from source, against plain C++ loops -----------------------------------

namespace {

using testing::lower_kernel_text;

tensor::Tensor run(const PrimFunc& f, const std::vector<const tensor::Tensor*>& args) {
  tensor::Tensor out;
  std::string err;
  REQUIRE_MESSAGE(interpret(f, args, &out, &err), err);
  return out;
}

tensor::Tensor make(std::vector<int64_t> shape, std::vector<float> values) {
  tensor::Tensor t;
  std::string err;
  REQUIRE(tensor::zeros(shape, &t, &err));
  REQUIRE(values.size() == size_t(t.numel()));
  for (size_t i = 0; i < values.size(); i++) t.data[i] = values[i];
  return t;
}

void check_close(const tensor::Tensor& got, const tensor::Tensor& want) {
  std::string why;
  CHECK_MESSAGE(tensor::allclose(got, want, 1e-5, &why), why);
}

}  // namespace

TEST_CASE("softmax: four stages against a direct computation") {
  const int64_t n = 5, m = 37;
  PrimFunc f = lower_kernel_text(R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
}
)", {{n, m}});
  tensor::Tensor x = random({n, m}, 7);
  tensor::Tensor want = make({n, m}, std::vector<float>(size_t(n * m), 0.0f));
  for (int64_t i = 0; i < n; i++) {
    float mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < m; j++) mx = std::max(mx, x.data[size_t(i * m + j)]);
    for (int64_t j = 0; j < m; j++) s += std::exp(x.data[size_t(i * m + j)] - mx);
    for (int64_t j = 0; j < m; j++)
      want.data[size_t(i * m + j)] = std::exp(x.data[size_t(i * m + j)] - mx) / s;
  }
  check_close(run(f, {&x}), want);
}

TEST_CASE("conv2d and the hand-fused linear_relu against plain loops") {
  PrimFunc conv = lower_kernel_text(R"(kernel conv2d(x: f32[h, w], k: f32[r, s]) -> f32[oh, ow] {
  out[i, j] = sum(p, q) x[i + p, j + q] * k[p, q]
  return out
}
)", {{9, 11}, {3, 4}});
  tensor::Tensor x = random({9, 11}, 11), k = random({3, 4}, 12);
  tensor::Tensor want = make({7, 8}, std::vector<float>(56, 0.0f));
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 8; j++) {
      float acc = 0;
      for (int p = 0; p < 3; p++)
        for (int q = 0; q < 4; q++) acc += x.data[size_t((i + p) * 11 + j + q)] * k.data[size_t(p * 4 + q)];
      want.data[size_t(i * 8 + j)] = acc;
    }
  check_close(run(conv, {&x, &k}), want);

  PrimFunc lr = lower_kernel_text(R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)", {{3, 300}, {20, 300}});
  tensor::Tensor a = random({3, 300}, 13), b = random({20, 300}, 14);
  tensor::Tensor want2 = make({3, 20}, std::vector<float>(60, 0.0f));
  int positive = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 20; j++) {
      float acc = 0;
      for (int r = 0; r < 300; r++) acc += a.data[size_t(i * 300 + r)] * b.data[size_t(j * 300 + r)];
      want2.data[size_t(i * 20 + j)] = acc > 0 ? acc : 0;
      positive += acc > 0;
    }
  CHECK(positive > 0);
  CHECK(positive < 60);  // both sides of the relu are exercised
  check_close(run(lr, {&a, &b}), want2);
}

TEST_CASE("max and min follow Python's rule; max/min reductions skip nan elements") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  PrimFunc mx = lower_kernel_text(R"(kernel mx(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = max(a[i], b[i])
  return c
}
)", {{4}, {4}});
  PrimFunc mn = lower_kernel_text(R"(kernel mn(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = min(a[i], b[i])
  return c
}
)", {{4}, {4}});
  tensor::Tensor a = make({4}, {nan, 1, nan, 2}), b = make({4}, {1, nan, nan, 3});
  tensor::Tensor c = run(mx, {&a, &b});
  CHECK(std::isnan(c.data[0]));  // (1 > nan) is false: keeps a
  CHECK(c.data[1] == 1);         // (nan > 1) is false: keeps a
  CHECK(std::isnan(c.data[2]));
  CHECK(c.data[3] == 3);
  tensor::Tensor d = run(mn, {&a, &b});
  CHECK(std::isnan(d.data[0]));
  CHECK(d.data[1] == 1);
  CHECK(d.data[3] == 2);

  PrimFunc red = lower_kernel_text(R"(kernel rowmax(x: f32[n, m]) -> f32[n] {
  y[i] = max(j) x[i, j]
  return y
}
)", {{3, 3}});
  tensor::Tensor x = make({3, 3}, {nan, 2, 1, 1, nan, -5, nan, nan, nan});
  tensor::Tensor y = run(red, {&x});
  CHECK(y.data[0] == 2);
  CHECK(y.data[1] == 1);
  CHECK(y.data[2] == -INFINITY);  // nothing but nan: the identity survives
}

TEST_CASE("a comparison in a kernel is a 0/1 mask; nan compares false but for !=") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  PrimFunc cmp = lower_kernel_text(R"(kernel cmp(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = (a[i] < b[i]) + 2.0 * (a[i] <= b[i]) + 4.0 * (a[i] == b[i]) + 8.0 * (a[i] != b[i]) + 16.0 * (a[i] >= b[i]) + 32.0 * (a[i] > b[i])
  return c
}
)", {{4}, {4}});
  tensor::Tensor a = make({4}, {1, 2, 3, nan}), b = make({4}, {2, 2, 1, 0});
  tensor::Tensor c = run(cmp, {&a, &b});
  CHECK(c.data[0] == 1 + 2 + 8);    // 1 < 2
  CHECK(c.data[1] == 2 + 4 + 16);   // 2 == 2
  CHECK(c.data[2] == 8 + 16 + 32);  // 3 > 1
  CHECK(c.data[3] == 8);            // nan: only != holds
  // relu's gradient, the use it is for, and a count by a reduction of masks.
  PrimFunc grad = lower_kernel_text(R"(kernel relu_grad(x: f32[n], dy: f32[n]) -> f32[n] {
  dx[i] = dy[i] * (x[i] > 0.0)
  return dx
}
)", {{4}, {4}});
  tensor::Tensor x = make({4}, {-1, 0, 0.5f, 3}), dy = make({4}, {10, 20, 30, 40});
  tensor::Tensor dx = run(grad, {&x, &dy});
  CHECK(dx.data[0] == 0);
  CHECK(dx.data[1] == 0);  // relu'(0) is taken as 0, as PyTorch does
  CHECK(dx.data[2] == 30);
  CHECK(dx.data[3] == 40);
  PrimFunc count = lower_kernel_text(R"(kernel count(x: f32[n, m]) -> f32[n] {
  c[i] = sum(j) (x[i, j] > 0.0)
  return c
}
)", {{2, 3}});
  tensor::Tensor m = make({2, 3}, {1, -1, 2, -3, -4, 0});
  tensor::Tensor counted = run(count, {&m});
  CHECK(counted.data[0] == 2);
  CHECK(counted.data[1] == 0);
}

// ---- blocks: predicates, init, allocation; every failure -------------------------------------

namespace {

// out[vi] = A[vi + shift] over a loop of `extent`, with an optional block predicate.
PrimFunc shifted(int64_t size, int64_t extent, int64_t shift, tir::ExprPtr predicate = nullptr) {
  PrimFunc f;
  f.name = "shifted";
  f.buffers = {{"A", {size}, Scope::Global, BufferRole::Input},
               {"out", {size}, Scope::Global, BufferRole::Output}};
  f.params = {0};
  f.output = 1;
  std::vector<IterVar> its;
  its.push_back(iter("vi", extent, IterKind::Spatial, var("i")));
  auto body = make_store(1, idx(var("vi")),
                         load(0, idx(binary(Op::Add, var("vi"), int_imm(shift)))));
  auto b = block("B", std::move(its), nullptr, std::move(body));
  b->predicate = std::move(predicate);
  f.body = make_for("i", extent, std::move(b));
  return f;
}

std::string failure(const PrimFunc& f, const std::vector<const tensor::Tensor*>& args,
                    const std::atomic<bool>* interrupt = nullptr) {
  tensor::Tensor out;
  std::string err;
  CHECK_FALSE(interpret(f, args, &out, &err, interrupt));
  return err;
}

}  // namespace

TEST_CASE("a block predicate skips iterations, bindings and all") {
  tensor::Tensor a = make({4}, {1, 2, 3, 4});
  PrimFunc f = shifted(4, 4, 0, binary(Op::Lt, var("i"), int_imm(3)));
  tensor::Tensor out = run(f, {&a});
  CHECK(out.data[0] == 1);
  CHECK(out.data[2] == 3);
  CHECK(out.data[3] == 0);
  // The predicate guards an access that would be out of range.
  PrimFunc g = shifted(4, 4, 1, binary(Op::Lt, var("i"), int_imm(3)));
  tensor::Tensor out2 = run(g, {&a});
  CHECK(out2.data[0] == 2);
  CHECK(out2.data[2] == 4);
}

TEST_CASE("init runs when every reduce binding is 0, even with a split reduce loop") {
  // s[0] = sum over k = ko * 4 + ki of A[k]; init must run once, at ko = ki = 0.
  PrimFunc f;
  f.name = "split_sum";
  f.buffers = {{"A", {8}, Scope::Global, BufferRole::Input},
               {"s", {1}, Scope::Global, BufferRole::Output}};
  f.params = {0};
  f.output = 1;
  std::vector<IterVar> its;
  its.push_back(iter("vk", 8, IterKind::Reduce,
                     binary(Op::Add, binary(Op::Mul, var("ko"), int_imm(4)), var("ki"))));
  auto init = make_store(1, idx(int_imm(0)), float_imm(100));
  auto body = make_store(1, idx(int_imm(0)),
                         binary(Op::Add, load(1, idx(int_imm(0))), load(0, idx(var("vk")))));
  f.body = make_for("ko", 2, make_for("ki", 4, block("s", std::move(its), std::move(init),
                                                     std::move(body))));
  std::string err;
  REQUIRE_MESSAGE(verify(f, &err), err);
  tensor::Tensor a = make({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(run(f, {&a}).data[0] == 136);
}

TEST_CASE("an allocated local buffer starts zeroed each time it is entered") {
  // for i: alloc t[1]; t[0] = t[0] + A[i]; out[i] = t[0]  -> out == A (never accumulates).
  PrimFunc f;
  f.name = "local";
  f.buffers = {{"A", {3}, Scope::Global, BufferRole::Input},
               {"out", {3}, Scope::Global, BufferRole::Output},
               {"t", {1}, Scope::Local, BufferRole::Temp}};
  f.params = {0};
  f.output = 1;
  std::vector<tir::StmtPtr> body;
  body.push_back(make_store(2, idx(int_imm(0)),
                            binary(Op::Add, load(2, idx(int_imm(0))), load(0, idx(var("i"))))));
  body.push_back(make_store(1, idx(var("i")), load(2, idx(int_imm(0)))));
  auto alloc = std::make_unique<tir::Stmt>(tir::StmtKind::Allocate);
  alloc->buffer = 2;
  alloc->body = make_seq(std::move(body));
  f.body = make_for("i", 3, std::move(alloc));
  tensor::Tensor a = make({3}, {5, 6, 7});
  tensor::Tensor out = run(f, {&a});
  CHECK(out.data[0] == 5);
  CHECK(out.data[2] == 7);
  CHECK(print_script(f) ==
        "@T.prim_func\n"
        "def local(A: T.Buffer((3,), \"float32\"), out: T.Buffer((3,), \"float32\")):\n"
        "    for i in range(3):\n"
        "        t = T.alloc_buffer((1,), \"float32\", scope=\"local\")\n"
        "        t[0] = t[0] + A[i]\n"
        "        out[i] = t[0]\n");
}

TEST_CASE("out-of-range accesses are reported, never performed") {
  tensor::Tensor a = make({4}, {1, 2, 3, 4});
  CHECK(failure(shifted(4, 4, 1), {&a}) ==
        "load of A[4] is out of range of its shape [4] in block 'B'");
  CHECK(failure(shifted(4, 4, -1), {&a}) ==
        "load of A[-1] is out of range of its shape [4] in block 'B'");
  PrimFunc store = shifted(4, 4, 0);
  store.body->body->body->indices[0] = binary(Op::Mul, var("vi"), int_imm(2));
  CHECK(failure(store, {&a}) == "store to out[4] is out of range of its shape [4] in block 'B'");
  PrimFunc dom = shifted(4, 4, 0);
  dom.body->body->iters[0].extent = 3;
  CHECK(failure(dom, {&a}) ==
        "iteration variable 'vi' = 3 is outside its domain [0, 3) in block 'B'");
}

TEST_CASE("malformed functions and bad arguments are errors") {
  tensor::Tensor a = make({4}, {1, 2, 3, 4}), b = make({5}, {1, 2, 3, 4, 5});
  PrimFunc unbound = shifted(4, 4, 0);
  unbound.body->body->iters[0].binding = var("q");
  CHECK(failure(unbound, {&a}) == "function 'shifted': variable 'q' is not bound");
  CHECK(failure(shifted(4, 4, 0), {}) == "function 'shifted' takes 1 arguments but got 0");
  CHECK(failure(shifted(4, 4, 0), {&b}) == "argument 'A' does not have the buffer's shape");
  PrimFunc rank = shifted(4, 4, 0);
  rank.body->body->body->value->args.push_back(int_imm(0));
  CHECK(failure(rank, {&a}) == "function 'shifted': load of 'A' with 2 indices, but it has rank 1");
}

TEST_CASE("the interrupt flag stops a long run") {
  PrimFunc f = mm_relu(128);
  tensor::Tensor a = random({128, 128}, 3), b = random({128, 128}, 4);
  std::atomic<bool> stop{true};
  CHECK(failure(f, {&a, &b}, &stop) == "interrupted");
  stop = false;
  tensor::Tensor out;
  std::string err;
  CHECK(interpret(f, {&a, &b}, &out, &err, &stop));
}

TEST_CASE("verify rejects what the interpreter would trip on") {
  std::string err;
  PrimFunc dup = mm_relu(4);
  dup.body->stmts[0]->body->var = "i";  // j renamed to i: two loops i on one path
  CHECK_FALSE(verify(dup, &err));
  CHECK(err == "loop 'i' reuses a name already bound around it");
  PrimFunc over = shifted(4, 4, 0);
  over.body->body->iters[0].extent = 3;
  CHECK_FALSE(verify(over, &err));
  CHECK(err == "binding of 'vi' in block 'B' ranges over [0, 3] but its extent is 3");
  PrimFunc unbound = shifted(4, 4, 0);
  unbound.body->body->iters[0].binding = var("q");
  CHECK_FALSE(verify(unbound, &err));
  CHECK(err == "variable 'q' is not bound (in block 'B')");
}

TEST_CASE("simplify folds constants and index identities exactly") {
  PrimFunc f = shifted(4, 4, 0);
  auto s = [&](tir::ExprPtr e) { return print_expr(f, *simplify(*e)); };
  CHECK(s(binary(Op::Add, var("i"), int_imm(0))) == "i");
  CHECK(s(binary(Op::Mul, int_imm(1), var("i"))) == "i");
  CHECK(s(binary(Op::Mul, var("i"), int_imm(0))) == "0");
  CHECK(s(binary(Op::Mul, binary(Op::Mul, int_imm(4), var("i")), int_imm(8))) == "i * 32");
  CHECK(s(binary(Op::Add, binary(Op::Add, var("i"), int_imm(3)), int_imm(-3))) == "i");
  CHECK(s(binary(Op::Add, int_imm(2), binary(Op::Mul, int_imm(3), int_imm(4)))) == "14");
  CHECK(s(binary(Op::Div, int_imm(7), int_imm(0))) == "7 // 0");  // never folded
  CHECK(s(binary(Op::Div, int_imm(-7), int_imm(2))) == "-3");     // truncates
  CHECK(s(binary(Op::Add, float_imm(0.5), float_imm(0.25))) == "0.75");
  CHECK(s(binary(Op::Mul, load(0, idx(var("i"))), float_imm(1))) == "A[i]");
  // f32 x + 0 is not x when x is -0, and x * 0 is not 0 when x is inf: both left alone.
  CHECK(s(binary(Op::Add, load(0, idx(var("i"))), float_imm(0))) == "A[i] + T.float32(0)");
  CHECK(s(binary(Op::Mul, load(0, idx(var("i"))), float_imm(0))) == "A[i] * T.float32(0)");
  CHECK(equal(*simplify(*binary(Op::Sub, var("i"), var("i"))), *int_imm(0)));
  CHECK(uses_var(*binary(Op::Add, int_imm(1), var("k")), "k"));
  CHECK_FALSE(uses_var(*binary(Op::Add, int_imm(1), var("k")), "j"));
  auto sub = substitute(*binary(Op::Add, var("k"), var("j")), "k", *int_imm(5));
  CHECK(print_expr(f, *sub) == "5 + j");
}

// The one index evaluator (tensor/index_eval.h) that the interpreter's arithmetic, the
// iteration-order walk, the cost features and the cost_features lab share.
TEST_CASE("index_eval: C's truncating / and %, min/max, select, and each fault with its place") {
  std::map<std::string, int64_t> env = {{"i", 7}, {"j", 3}};
  auto lookup = [&](const std::string& name, int64_t* v) {
    auto it = env.find(name);
    if (it == env.end()) return false;
    *v = it->second;
    return true;
  };
  auto eval = [&](const tir::Expr& e, IndexFault* fault, const tir::Expr** at) {
    *fault = IndexFault::None;
    return eval_index(e, lookup, fault, at);
  };
  IndexFault fault;
  const tir::Expr* at = nullptr;
  // i * 4 + j / 2 - i % j = 28 + 1 - 1
  auto e = binary(Op::Sub, binary(Op::Add, binary(Op::Mul, var("i"), int_imm(4)),
                                  binary(Op::Div, var("j"), int_imm(2))),
                  binary(Op::Mod, var("i"), var("j")));
  CHECK(eval(*e, &fault, &at) == 28);
  CHECK(fault == IndexFault::None);
  CHECK(eval(*binary(Op::Div, int_imm(-7), int_imm(2)), &fault, &at) == -3);  // truncates
  CHECK(eval(*binary(Op::Min, var("i"), var("j")), &fault, &at) == 3);
  CHECK(eval(*binary(Op::Max, var("i"), var("j")), &fault, &at) == 7);
  CHECK(eval(*select(binary(Op::Lt, var("j"), var("i")), int_imm(1), int_imm(2)), &fault, &at) == 1);
  CHECK(eval(*unary(Op::Abs, unary(Op::Neg, var("i"))), &fault, &at) == 7);

  auto by_zero = binary(Op::Add, int_imm(1), binary(Op::Mod, var("i"), binary(Op::Sub, var("j"), int_imm(3))));
  CHECK(eval(*by_zero, &fault, &at) == 0);
  CHECK(fault == IndexFault::DivByZero);
  CHECK(at == by_zero->args[1].get());  // the % itself, not the whole expression

  auto unbound = binary(Op::Add, var("i"), var("k"));
  eval(*unbound, &fault, &at);
  CHECK(fault == IndexFault::Unbound);
  CHECK(at->name == "k");

  std::vector<tir::ExprPtr> idx;
  idx.push_back(var("i"));
  auto data = binary(Op::Add, var("i"), load(0, std::move(idx)));
  eval(*data, &fault, &at);
  CHECK(fault == IndexFault::NeedsData);
  CHECK(at->kind == tir::ExprKind::Load);
  eval(*unary(Op::Exp, var("i")), &fault, &at);
  CHECK(fault == IndexFault::NeedsData);

  // The cost features' form: unknown variables are 0, a fault makes the whole value 0.
  CHECK(eval_index_at(*e, {{"i", 1}, {"j", 5}, {"unused", 9}}) == 5);  // 4 + 2 - 1
  CHECK(eval_index_at(*binary(Op::Add, var("i"), var("k")), {{"i", 2}}) == 2);  // k is 0
  CHECK(eval_index_at(*by_zero, env) == 0);
  // And simplify folds with the same arithmetic: a division by zero is left unfolded.
  CHECK(simplify(*binary(Op::Div, int_imm(7), int_imm(0)))->kind == tir::ExprKind::Binary);
  CHECK(simplify(*binary(Op::Mod, int_imm(-7), int_imm(2)))->ival == -1);
}
