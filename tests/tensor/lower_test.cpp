// test_tensor_lower: kernels (parsed and checked like any program) -> loop-nest IR.
// Each kernel is compared against golden TVMScript and C text (tests/tensor/golden/
// lower_*.tir and lower_*.c; DESCENT_UPDATE_GOLDEN=1 rewrites them), the C must compile as
// C99, and every lowering error is checked word for word with its location.
#include <doctest/doctest.h>

#include "tests/golden.h"
#include "tests/tensor/kernel_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include <unistd.h>

#include "tensor/lower.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

using namespace descent;
using namespace descent::tensor;

namespace {

using testing::parse_and_check;

// The kernel of `text`, lowered and verified.
tir::PrimFunc lowered(const std::string& text, const std::vector<std::vector<int64_t>>& shapes) {
  tir::PrimFunc f = testing::lower_kernel_text(text, shapes);
  std::string why;
  CHECK_MESSAGE(tir::verify(f, &why), why);
  return f;
}

// "L:C: message" of the lowering error (empty when it lowers).
std::string lower_error(const std::string& text, const std::vector<std::vector<int64_t>>& shapes) {
  auto p = parse_and_check(text);
  tir::PrimFunc f;
  Diagnostic d;
  if (lower(*p->kernel(), shapes, &f, &d)) return "";
  CHECK(d.kind == ErrorKind::Runtime);
  return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  descent::testing::check_golden_file("tensor/golden/" + name, actual);
}

// The printed C must be valid C99: compile it with the system compiler when there is one.
void check_c_compiles(const tir::PrimFunc& f) {
  if (std::system("command -v cc >/dev/null 2>&1") != 0) return;
  std::string base = "/tmp/descent_lower_" + f.name + "_" + std::to_string(::getpid());
  std::ofstream(base + ".c") << tir::print_c(f);
  std::string cmd = "cc -std=c99 -pedantic -Wall -Wno-unknown-pragmas -Werror -c " + base + ".c -o " + base +
                    ".o 2>" + base + ".log";
  int rc = std::system(cmd.c_str());
  INFO(read_file(base + ".log"));
  CHECK(rc == 0);
  std::remove((base + ".c").c_str());
  std::remove((base + ".o").c_str());
  std::remove((base + ".log").c_str());
}

// Compiles the printed C with a driver that feeds it `args` and prints the output as hex
// floats, and checks it against the reference interpreter: the C text means what the IR does.
void check_c_runs(const tir::PrimFunc& f, const std::vector<const Tensor*>& args) {
  if (std::system("command -v cc >/dev/null 2>&1") != 0) return;
  std::string base = "/tmp/descent_run_" + f.name + "_" + std::to_string(::getpid());
  std::ofstream src(base + ".c");
  src << tir::print_c(f) << "\n#include <stdio.h>\n";
  std::string call;
  for (size_t a = 0; a < args.size(); a++) {
    src << "static const float in" << a << "[] = {";
    char buf[64];
    for (int64_t i = 0; i < args[a]->numel(); i++) {
      std::snprintf(buf, sizeof buf, "%a", double(args[a]->data[size_t(i)]));
      src << (i ? ", " : "") << buf;
    }
    src << "};\n";
    call += "in" + std::to_string(a) + ", ";
  }
  int64_t n = 1;
  for (int64_t d : f.buffers[size_t(f.output)].shape) n *= d;
  src << "static float out[" << n << "];\nint main(void) {\n  " << f.name << "(" << call
      << "out);\n  for (int i = 0; i < " << n << "; i++) printf(\"%a\\n\", out[i]);\n"
      << "  return 0;\n}\n";
  src.close();
  std::string cmd = "cc -std=c99 -O1 -w " + base + ".c -o " + base + " -lm 2>" + base +
                    ".log && " + base + " > " + base + ".out";
  int rc = std::system(cmd.c_str());
  INFO(read_file(base + ".log"));
  REQUIRE(rc == 0);
  Tensor want, got;
  std::string err;
  REQUIRE_MESSAGE(tir::interpret(f, args, &want, &err), err);
  got = want;
  std::istringstream lines(read_file(base + ".out"));
  std::string line;
  int64_t i = 0;
  while (std::getline(lines, line) && i < n) got.data[size_t(i++)] = std::strtof(line.c_str(), nullptr);
  CHECK(i == n);
  CHECK_MESSAGE(allclose(got, want, 1e-5, &err), err);
  for (const char* ext : {".c", ".log", ".out", ""}) std::remove((base + ext).c_str());
}

void check_lowering(const std::string& name, const std::string& text,
                    const std::vector<std::vector<int64_t>>& shapes) {
  tir::PrimFunc f = lowered(text, shapes);
  check_golden("lower_" + name + ".tir", tir::print_script(f));
  check_golden("lower_" + name + ".c", tir::print_c(f));
  check_c_compiles(f);
}

const char* kMmRelu = R"(kernel mm_relu(A: f32[128, 128], B: f32[128, 128]) -> f32[128, 128] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
)";

const char* kLinear = R"(kernel linear(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = sum(r) x[i, r] * w[j, r]
  return out
}
)";

const char* kRelu = R"(kernel relu(x: f32[n, m]) -> f32[n, m] { out[i, j] = max(x[i, j], 0.0); return out }
)";

const char* kSoftmax = R"(kernel softmax(x: f32[n, m]) -> f32[n, m] {
  mx[i] = max(j) x[i, j]
  e[i, j] = exp(x[i, j] - mx[i])
  s[i] = sum(j) e[i, j]
  out[i, j] = e[i, j] / s[i]
  return out
}
)";

const char* kAdd = R"(kernel add(a: f32[n], b: f32[n]) -> f32[n] {
  c[i] = a[i] + b[i]
  return c
}
)";

const char* kConv2d = R"(kernel conv2d(x: f32[h, w], k: f32[r, s]) -> f32[oh, ow] {
  out[i, j] = sum(p, q) x[i + p, j + q] * k[p, q]
  return out
}
)";

const char* kLinearRelu = R"(kernel linear_relu(x: f32[1, 3072], w: f32[200, 3072]) -> f32[1, 200] {
  out[i, j] = max(sum(k) x[i, k] * w[j, k], 0.0)
  return out
}
)";

}  // namespace

TEST_CASE("mm_relu lowers to the seed notes' two loop nests") {
  check_lowering("mm_relu", kMmRelu, {{128, 128}, {128, 128}});
}

TEST_CASE("linear: named dims bound from the arguments") {
  check_lowering("linear", kLinear, {{1, 3072}, {200, 3072}});
}

TEST_CASE("relu: one elementwise stage") { check_lowering("relu", kRelu, {{4, 8}}); }

TEST_CASE("softmax: max-reduce, exp, sum-reduce, divide") {
  check_lowering("softmax", kSoftmax, {{4, 10}});
}

TEST_CASE("add: a one-dimensional stage") { check_lowering("add", kAdd, {{128}, {128}}); }

TEST_CASE("conv2d: axes in compound indices take the largest extent in range") {
  tir::PrimFunc f = lowered(kConv2d, {{8, 10}, {3, 4}});
  CHECK(f.buffers[size_t(f.output)].shape == std::vector<int64_t>{6, 7});
  check_lowering("conv2d", kConv2d, {{8, 8}, {3, 3}});
}

TEST_CASE("linear_relu: a nested reduction becomes out_acc inside the same spatial loops") {
  check_lowering("linear_relu", kLinearRelu, {{1, 3072}, {200, 3072}});
}

TEST_CASE("buffers: inputs in order, then each stage, the returned one as Output") {
  tir::PrimFunc f = lowered(kSoftmax, {{2, 3}});
  REQUIRE(f.buffers.size() == 5);
  std::vector<std::string> names;
  for (const auto& b : f.buffers) names.push_back(b.name);
  CHECK(names == std::vector<std::string>{"x", "mx", "e", "s", "out"});
  CHECK(f.buffers[0].role == tir::BufferRole::Input);
  CHECK(f.buffers[1].role == tir::BufferRole::Temp);
  CHECK(f.buffers[4].role == tir::BufferRole::Output);
  CHECK(f.params == std::vector<int>{0});
  CHECK(f.output == 4);
  CHECK(f.buffers[1].shape == std::vector<int64_t>{2});
  CHECK(tir::find_block(f, "s") != nullptr);
  CHECK(tir::blocks(f).size() == 4);
}

TEST_CASE("a spatial axis used nowhere on the right takes the declared return dim") {
  const char* text = R"(kernel bcast(x: f32[n]) -> f32[n, 5] {
  out[i, j] = x[i]
  return out
}
)";
  tir::PrimFunc f = lowered(text, {{3}});
  CHECK(f.buffers[size_t(f.output)].shape == std::vector<int64_t>{3, 5});
  // Without a declared return type the extent is unknown (sema reports this first; the
  // lowering must still refuse a hand-made declaration).
  auto p = parse_and_check(text);
  p->kernel()->has_return_type = false;
  tir::PrimFunc g;
  Diagnostic d;
  CHECK_FALSE(lower(*p->kernel(), {{3}}, &g, &d));
  CHECK(d.message == "axis 'j' of 'out' is not used on the right-hand side, so its extent is "
                     "unknown");
  CHECK(d.loc.line == 2);
  CHECK(d.loc.col == 10);
}

TEST_CASE("result_shape and shapes_for") {
  auto p = parse_and_check(kLinear);
  std::vector<int64_t> shape;
  Diagnostic d;
  REQUIRE(result_shape(*p->kernel(), {{2, 7}, {5, 7}}, &shape, &d));
  CHECK(shape == std::vector<int64_t>{2, 5});
  CHECK(shapes_for(*p->kernel(), {{"k", 3}}) == std::vector<std::vector<int64_t>>{{64, 3}, {64, 3}});
  CHECK(shapes_for(*p->kernel(), {}, 8) == std::vector<std::vector<int64_t>>{{8, 8}, {8, 8}});
  auto q = parse_and_check(kMmRelu);
  CHECK(shapes_for(*q->kernel(), {{"n", 5}}) ==
        std::vector<std::vector<int64_t>>{{128, 128}, {128, 128}});
}

TEST_CASE("lowering errors, word for word, at the offending name") {
  // Argument shapes against the declaration.
  CHECK(lower_error(kLinear, {{1, 3072}}) == "1:8: kernel 'linear' takes 2 arguments but got 1");
  CHECK(lower_error(kLinear, {{1, 3072}, {200, 2048}}) ==
        "1:39: argument 'w' of kernel 'linear': dim 'k' is 3072 in 'x' but 2048 here");
  CHECK(lower_error(kLinear, {{3072}, {200, 3072}}) ==
        "1:15: argument 'x' of kernel 'linear' has shape [3072] but is declared f32[n, k]");
  CHECK(lower_error(kMmRelu, {{128, 64}, {128, 128}}) ==
        "1:28: argument 'A' of kernel 'mm_relu': dim 1 is 64 but is declared 128");

  // Axes whose whole-index uses disagree.
  CHECK(lower_error(R"(kernel bad(a: f32[n], b: f32[m]) -> f32[n] {
  c[i] = a[i] + b[i]
  return c
}
)", {{128}, {64}}) == "2:17: axis 'i' has extent 128 in a but 64 in b");

  // Compound indices with no room left.
  CHECK(lower_error(kConv2d, {{2, 8}, {3, 3}}) ==
        "2:25: axis 'i' has no valid extent: 'x' has size 2 along dim 0, too small for this "
        "index");

  // A compound index that leaves the buffer once the extents are fixed elsewhere.
  CHECK(lower_error(R"(kernel shift(x: f32[n]) -> f32[n] {
  y[i] = x[i] + x[i + 1]
  return y
}
)", {{8}}) == "2:19: index 0 of 'x' ranges over [1, 8] but its size is 8");

  // The declared return shape against the computed one.
  CHECK(lower_error(R"(kernel linear(x: f32[1, 3072], w: f32[200, 3072]) -> f32[1, 100] {
  out[i, j] = sum(k) x[i, k] * w[j, k]
  return out
}
)", {{1, 3072}, {200, 3072}}) == "1:54: kernel 'linear' declares f32[1, 100] but computes [1, 200]");
  CHECK(lower_error(R"(kernel valid(x: f32[n]) -> f32[n] {
  y[i] = x[i + 1]
  return y
}
)", {{8}}) == "1:28: kernel 'valid' declares f32[8] but computes [7]");

  // Two reductions in one stage.
  CHECK(lower_error(R"(kernel two(x: f32[n, m]) -> f32[n] {
  y[i] = max(sum(j) x[i, j], sum(l) x[i, l])
  return y
}
)", {{2, 3}}) == "2:30: stage 'y' has more than one reduction; compute each in a stage of its own");
}

// ---- the printers on what schedules produce -----------------------------------------------

namespace {

tir::ExprPtr v(const char* n) { return tir::var(n); }
tir::ExprPtr c(int64_t x) { return tir::int_imm(x); }
tir::ExprPtr add(tir::ExprPtr a, tir::ExprPtr b) {
  return tir::binary(tir::Op::Add, std::move(a), std::move(b));
}
tir::ExprPtr mul(tir::ExprPtr a, tir::ExprPtr b) {
  return tir::binary(tir::Op::Mul, std::move(a), std::move(b));
}
std::vector<tir::ExprPtr> ix(tir::ExprPtr a) {
  std::vector<tir::ExprPtr> r;
  r.push_back(std::move(a));
  return r;
}

// rowsum of a 7 x 8 matrix, scheduled by hand: i split by 4 (parallel outer, predicate for
// the ragged edge), k split by 2 with the inner loop unrolled, accumulation in a local
// buffer, then a copy-out under a bound loop and a barrier.
tir::PrimFunc scheduled() {
  tir::PrimFunc f;
  f.name = "rowsum";
  f.buffers = {{"A", {7, 8}, tir::Scope::Global, tir::BufferRole::Input},
               {"s", {7}, tir::Scope::Global, tir::BufferRole::Output},
               {"acc", {1}, tir::Scope::Local, tir::BufferRole::Temp}};
  f.params = {0};
  f.output = 1;
  auto blk = std::make_unique<tir::Stmt>(tir::StmtKind::Block);
  blk->name = "acc";
  tir::IterVar vi, vk;
  vi.name = "vi";
  vi.extent = 7;
  vi.binding = add(mul(v("i_0"), c(4)), v("i_1"));
  vk.name = "vk";
  vk.extent = 8;
  vk.kind = tir::IterKind::Reduce;
  vk.binding = add(mul(v("k_0"), c(2)), v("k_1"));
  blk->iters.push_back(std::move(vi));
  blk->iters.push_back(std::move(vk));
  blk->predicate = tir::binary(tir::Op::Lt, add(mul(v("i_0"), c(4)), v("i_1")), c(7));
  blk->init = tir::make_store(2, ix(c(0)), tir::float_imm(0));
  blk->body = tir::make_store(
      2, ix(c(0)),
      tir::binary(tir::Op::Add, tir::load(2, ix(c(0))),
                  tir::load(0, [] {
                    std::vector<tir::ExprPtr> r;
                    r.push_back(tir::var("vi"));
                    r.push_back(tir::var("vk"));
                    return r;
                  }())));
  auto reduce = tir::make_for("k_0", 4, tir::make_for("k_1", 2, std::move(blk),
                                                      tir::ForKind::Unrolled));
  std::vector<tir::StmtPtr> seq;
  seq.push_back(std::move(reduce));
  seq.push_back(std::make_unique<tir::Stmt>(tir::StmtKind::Barrier));
  auto copy = tir::make_if(tir::binary(tir::Op::Lt, add(mul(v("i_0"), c(4)), v("i_1")), c(7)),
                           tir::make_store(1, ix(add(mul(v("i_0"), c(4)), v("i_1"))),
                                           tir::load(2, ix(c(0)))));
  auto bound = tir::make_for("t", 1, std::move(copy), tir::ForKind::Bound);
  bound->thread_tag = "local.x";
  seq.push_back(std::move(bound));
  auto alloc = std::make_unique<tir::Stmt>(tir::StmtKind::Allocate);
  alloc->buffer = 2;
  alloc->body = tir::make_seq(std::move(seq));
  f.body = tir::make_for("i_0", 2, tir::make_for("i_1", 4, std::move(alloc),
                                                 tir::ForKind::Vectorized),
                         tir::ForKind::Parallel);
  return f;
}

}  // namespace

TEST_CASE("printers: loop kinds, explicit bindings, predicates, local buffers, barriers") {
  tir::PrimFunc f = scheduled();
  std::string why;
  CHECK_MESSAGE(tir::verify(f, &why), why);
  CHECK(tir::print_script(f) ==
        "@T.prim_func\n"
        "def rowsum(A: T.Buffer((7, 8), \"float32\"), s: T.Buffer((7,), \"float32\")):\n"
        "    for i_0 in T.parallel(2):\n"
        "        for i_1 in T.vectorized(4):\n"
        "            acc = T.alloc_buffer((1,), \"float32\", scope=\"local\")\n"
        "            for k_0 in range(4):\n"
        "                for k_1 in T.unroll(2):\n"
        "                    with T.block(\"acc\"):\n"
        "                        vi = T.axis.spatial(7, i_0 * 4 + i_1)\n"
        "                        vk = T.axis.reduce(8, k_0 * 2 + k_1)\n"
        "                        T.where(i_0 * 4 + i_1 < 7)\n"
        "                        with T.init():\n"
        "                            acc[0] = T.float32(0)\n"
        "                        acc[0] = acc[0] + A[vi, vk]\n"
        "            T.barrier()\n"
        "            for t in T.thread_binding(1, thread=\"local.x\"):\n"
        "                if i_0 * 4 + i_1 < 7:\n"
        "                    s[i_0 * 4 + i_1] = acc[0]\n");
  check_golden("lower_printers.c", tir::print_c(f));
  check_c_compiles(f);
  Tensor a;
  std::string err;
  REQUIRE(rand({7, 8}, 5, &a, &err));
  check_c_runs(f, {&a});
  // The interpreter agrees with plain row sums (in the same order).
  Tensor s;
  REQUIRE(tir::interpret(f, {&a}, &s, &err));
  for (int64_t i = 0; i < 7; i++) {
    float acc = 0;
    for (int64_t k = 0; k < 8; k++) acc = acc + a.data[size_t(i * 8 + k)];
    CHECK(s.data[size_t(i)] == acc);
  }
}

TEST_CASE("the printed C computes what the interpreter computes") {
  Tensor x, w, k;
  std::string err;
  REQUIRE(rand({4, 10}, 1, &x, &err));
  check_c_runs(lowered(kSoftmax, {{4, 10}}), {&x});
  REQUIRE(rand({9, 8}, 2, &x, &err));
  REQUIRE(rand({3, 3}, 3, &k, &err));
  check_c_runs(lowered(kConv2d, {{9, 8}, {3, 3}}), {&x, &k});
  REQUIRE(rand({2, 50}, 4, &x, &err));
  REQUIRE(rand({7, 50}, 5, &w, &err));
  check_c_runs(lowered(kLinear, {{2, 50}, {7, 50}}), {&x, &w});
  const char* lr = R"(kernel linear_relu(x: f32[n, k], w: f32[m, k]) -> f32[n, m] {
  out[i, j] = max(sum(r) x[i, r] * w[j, r], 0.0)
  return out
}
)";
  check_c_runs(lowered(lr, {{2, 50}, {7, 50}}), {&x, &w});
}
