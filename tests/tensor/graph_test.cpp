// test_tensor_graph: the dataflow graph (printers, fold_constants, fuse_elementwise,
// eliminate_dead_code) on hand-built graphs, and GraphRuntime driven by scalar Descent code
// through the AST walker. Every pass is checked for the one thing it must never do: change a
// result (the fused, folded or pruned graph gives the same numbers as the original).
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <sstream>

#include "lang/engine.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tensor/graph.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tests/programs_test.h"

// Readable failure messages for lists of lines.
namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
    return String((s + "}").c_str());
  }
};
}  // namespace doctest

using namespace descent;
using namespace descent::tensor;

namespace {

// The prelude checked into a Module, then scalar programs run against a GraphRuntime: what
// the Session does, assembled by hand.
struct Machine {
  Module module;
  GlobalStore globals;
  std::unique_ptr<Engine> engine = make_ast_walker();
  GraphRuntime rt;
  std::string out;
  RunResult last;
  std::vector<std::string> compile_errors;

  Machine() { REQUIRE(run(std::string(prelude_source()), "prelude.ds")); }

  bool run(const std::string& text, const std::string& name = "t.ds") {
    auto program = std::make_shared<Program>();
    std::vector<Diagnostic> d;
    *program = parse(std::make_shared<SourceFile>(name, text), d);
    globals.resize(module.globals.size());
    compile_errors.clear();
    if (d.empty()) check(*program, module, globals.defined, d);
    for (const auto& e : d)
      compile_errors.push_back(std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) +
                               ": " + e.message);
    if (!d.empty()) return false;
    globals.resize(module.globals.size());
    module.programs.push_back(program);
    out.clear();
    RunOptions o;
    o.out = [this](std::string_view t) { out += t; };
    o.tensors = &rt;
    last = engine->run(*program, module, globals, o);
    return true;
  }

  const KernelDecl& kernel(const std::string& name) {
    int k = module.find_kernel(name);
    REQUIRE(k >= 0);
    return *module.kernels[size_t(k)].decl;
  }
  int64_t handle(const std::string& global) {
    int g = module.find_global(global);
    REQUIRE(g >= 0);
    return globals.values[size_t(g)].i;
  }
  std::string error() const {
    return std::to_string(last.error.loc.line) + ":" + std::to_string(last.error.loc.col) + ": " +
           last.error.message;
  }
};

// Hand-built graphs: leaves hold data, kernel nodes hold a lowered function.
Node leaf(int64_t id, NodeKind kind, const std::string& label, Tensor t) {
  Node n;
  n.id = id;
  n.kind = kind;
  n.label = label;
  n.shape = t.shape;
  n.value = std::make_shared<const Tensor>(std::move(t));
  return n;
}

Tensor random(std::vector<int64_t> shape, int64_t seed) {
  Tensor t;
  std::string error;
  REQUIRE(tensor::rand(shape, seed, &t, &error));
  return t;
}

Tensor filled(std::vector<int64_t> shape, float v) {
  Tensor t;
  std::string error;
  REQUIRE(full(shape, v, &t, &error));
  return t;
}

Node call(Machine& m, const Graph& g, int64_t id, const std::string& kernel,
          std::vector<int64_t> inputs) {
  Node n;
  n.id = id;
  n.kind = NodeKind::Kernel;
  n.label = kernel;
  n.kernel = &m.kernel(kernel);
  n.inputs = inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t in : inputs) shapes.push_back(g.find(in)->shape);
  auto f = std::make_shared<tir::PrimFunc>();
  Diagnostic d;
  REQUIRE_MESSAGE(lower(*n.kernel, shapes, f.get(), &d), d.message);
  n.shape = f->buffers[size_t(f->output)].shape;
  n.func = f;
  return n;
}

// Runs a graph with the reference interpreter; returns the value of node `id`.
Tensor execute(Graph g, int64_t id) {
  for (auto& n : g.nodes) {
    if (n.kind != NodeKind::Kernel) continue;
    std::vector<const Tensor*> args;
    for (int64_t in : n.inputs) args.push_back(g.find(in)->value.get());
    auto out = std::make_shared<Tensor>();
    std::string error;
    REQUIRE_MESSAGE(tir::interpret(*n.func, args, out.get(), &error), error);
    n.value = out;
  }
  REQUIRE(g.find(id));
  REQUIRE(g.find(id)->value);
  return *g.find(id)->value;
}

void check_close(const Tensor& a, const Tensor& b) {
  std::string why;
  CHECK_MESSAGE(allclose(a, b, 1e-4, &why), why);
}

// x[1, 64] -> linear(w[32, 64]) -> relu: the seed notes' program, smaller.
Graph linear_relu_graph(Machine& m) {
  Graph g;
  g.nodes.push_back(leaf(0, NodeKind::Input, "rand", random({1, 64}, 1)));
  g.nodes.push_back(leaf(1, NodeKind::Input, "rand", random({32, 64}, 2)));
  g.nodes.push_back(call(m, g, 2, "linear", {0, 1}));
  g.nodes.push_back(call(m, g, 3, "relu", {2}));
  g.outputs = {3};
  return g;
}

}  // namespace

TEST_CASE("graph: text and dot printers") {
  Machine m;
  Graph g = linear_relu_graph(m);
  CHECK(graph_to_text(g) ==
        "%0 = input rand  [1, 64]\n"
        "%1 = input rand  [32, 64]\n"
        "%2 = linear(%0, %1)  [1, 32]\n"
        "%3 = relu(%2)  [1, 32]\n"
        "outputs: %3\n");
  std::string dot = graph_to_dot(g, "g");
  CHECK(dot.find("digraph \"g\" {") == 0);
  CHECK(dot.find("n2 [label=\"%2 linear\", shape=box];") != std::string::npos);
  CHECK(dot.find("n3 [label=\"%3 relu\", shape=box, peripheries=2];") != std::string::npos);
  CHECK(dot.find("n0 [label=\"%0 rand\", shape=ellipse];") != std::string::npos);
  CHECK(dot.find("n2 -> n3 [label=\"[1, 32]\"];") != std::string::npos);
  CHECK(dot.find("n1 -> n2 [label=\"[32, 64]\"];") != std::string::npos);
  CHECK(g.num_kernels() == 2);
  CHECK(g.index_of(3) == 3);
  CHECK(g.index_of(7) == -1);
}

TEST_CASE("fuse_elementwise: linear then relu becomes the seed notes' linear_relu") {
  Machine m;
  Graph g = linear_relu_graph(m);
  PassStats st;
  Graph f = fuse_elementwise(g, &st);
  CHECK(st.name == "fuse_elementwise");
  CHECK(st.changed);
  CHECK(st.summary == "fused linear + relu -> linear_relu");
  CHECK(graph_to_text(f) ==
        "%0 = input rand  [1, 64]\n"
        "%1 = input rand  [32, 64]\n"
        "%3 = linear_relu(%0, %1)  [1, 32]\n"
        "outputs: %3\n");
  const Node& n = *f.find(3);
  REQUIRE(n.func);
  std::string why;
  CHECK_MESSAGE(tir::verify(*n.func, &why), why);
  // One loop nest: the relu block sits inside the linear block's j loop, after the r loop.
  tir::PrimFunc fused = *n.func;
  auto sites = tir::blocks(fused);
  REQUIRE(sites.size() == 2);
  CHECK(sites[0].block->name == "linear");
  CHECK(sites[1].block->name == "out");
  REQUIRE(sites[1].loops.size() == 2);
  CHECK(sites[0].loops[0] == sites[1].loops[0]);
  CHECK(sites[0].loops[1] == sites[1].loops[1]);
  CHECK(fused.buffers[size_t(fused.find_buffer("linear"))].role == tir::BufferRole::Temp);
  CHECK(tir::print_script(*n.func) ==
        "@T.prim_func\n"
        "def linear_relu(x: T.Buffer((1, 64), \"float32\"), w: T.Buffer((32, 64), \"float32\"), "
        "out: T.Buffer((1, 32), \"float32\")):\n"
        "    linear = T.alloc_buffer((1, 32), \"float32\")\n"
        "    for i, j in T.grid(1, 32):\n"
        "        for r in range(64):\n"
        "            with T.block(\"linear\"):\n"
        "                vi, vj, vr = T.axis.remap(\"SSR\", [i, j, r])\n"
        "                with T.init():\n"
        "                    linear[vi, vj] = T.float32(0)\n"
        "                linear[vi, vj] = linear[vi, vj] + x[vi, vr] * w[vj, vr]\n"
        "        with T.block(\"out\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            out[vi, vj] = T.max(linear[vi, vj], T.float32(0))\n");
  check_close(execute(f, 3), execute(g, 3));
  // And it is the same loop nest as the hand-fused prelude kernel, up to names.
  Graph hand;
  hand.nodes = {g.nodes[0], g.nodes[1]};
  hand.nodes.push_back(call(m, hand, 3, "linear_relu", {0, 1}));
  check_close(execute(f, 3), execute(hand, 3));
}

TEST_CASE("fuse_elementwise: chains fuse link by link; a reduction is never the consumer") {
  Machine m;
  Graph g;
  g.nodes.push_back(leaf(0, NodeKind::Input, "x", random({4, 16}, 1)));
  g.nodes.push_back(leaf(1, NodeKind::Input, "w", random({8, 16}, 2)));
  g.nodes.push_back(leaf(2, NodeKind::Input, "b", random({8}, 3)));
  g.nodes.push_back(call(m, g, 3, "linear", {0, 1}));
  g.nodes.push_back(call(m, g, 4, "bias_add", {3, 2}));
  g.nodes.push_back(call(m, g, 5, "relu", {4}));
  g.nodes.push_back(call(m, g, 6, "softmax", {5}));
  g.outputs = {6};
  PassStats st;
  Graph f = fuse_elementwise(g, &st);
  CHECK(st.summary ==
        "fused linear + bias_add -> linear_bias_add, "
        "linear_bias_add + relu -> linear_bias_add_relu");
  CHECK(graph_to_text(f) ==
        "%0 = input x  [4, 16]\n"
        "%1 = input w  [8, 16]\n"
        "%2 = input b  [8]\n"
        "%5 = linear_bias_add_relu(%0, %1, %2)  [4, 8]\n"
        "%6 = softmax(%5)  [4, 8]\n"
        "outputs: %6\n");
  check_close(execute(f, 6), execute(g, 6));
  tir::PrimFunc fused = *f.find(5)->func;
  auto sites = tir::blocks(fused);
  REQUIRE(sites.size() == 3);
  for (const auto& s : sites) CHECK(s.loops[1] == sites[0].loops[1]);  // all under one j loop
}

TEST_CASE("fuse_elementwise: a producer that is an output or has two consumers stays") {
  Machine m;
  Graph g = linear_relu_graph(m);
  g.outputs = {2, 3};
  PassStats st;
  Graph f = fuse_elementwise(g, &st);
  CHECK_FALSE(st.changed);
  CHECK(st.summary == "nothing to fuse");
  CHECK(f.num_kernels() == 2);

  Graph two = linear_relu_graph(m);
  two.nodes.push_back(call(m, two, 4, "add", {2, 3}));
  two.outputs = {4};
  Graph f2 = fuse_elementwise(two, &st);
  // linear feeds relu and add: it stays; relu's only consumer add is elementwise: fused.
  CHECK(graph_to_text(f2) ==
        "%0 = input rand  [1, 64]\n"
        "%1 = input rand  [32, 64]\n"
        "%2 = linear(%0, %1)  [1, 32]\n"
        "%4 = relu_add(%2)  [1, 32]\n"
        "outputs: %4\n");
  check_close(execute(f2, 4), execute(two, 4));
}

TEST_CASE("fuse_elementwise: a consumer reading the producer twice, or the producer's input") {
  Machine fused, plain;
  plain.rt.set_graph_passes(false);
  const char* first = "a = rand([3, 5], 1)\nr = relu(linear(a, rand([5, 5], 2)))\ny = mul(r, r)\n"
                      "print(sum_all(y))\n";
  const char* second = "z = add(relu(a), a)\nprint(sum_all(z), z[2, 4])\n";
  for (Machine* m : {&fused, &plain}) {
    REQUIRE(m->run(first));
    REQUIRE_MESSAGE(m->last.ok, m->error());
  }
  CHECK(fused.out == plain.out);
  CHECK(fused.rt.last_evaluation().executed.num_kernels() == 1);
  CHECK(fused.rt.last_kernels().at(0)->name == "linear_relu_mul");
  CHECK(fused.rt.last_kernels().at(0)->params.size() == 2);
  for (Machine* m : {&fused, &plain}) {
    REQUIRE(m->run(second));
    REQUIRE_MESSAGE(m->last.ok, m->error());
  }
  CHECK(fused.out == plain.out);
  CHECK(graph_to_text(fused.rt.last_evaluation().executed) ==
        "%0 = input rand  [3, 5]\n"
        "%6 = relu_add(%0)  [3, 5]\n"
        "outputs: %6\n");
  CHECK(fused.rt.last_kernels().at(0)->params.size() == 1);  // one buffer for a, read twice
}

TEST_CASE("fold_constants folds add(ones, ones); eliminate_dead_code removes what is unused") {
  Machine m;
  Graph g;
  g.nodes.push_back(leaf(0, NodeKind::Constant, "ones", filled({2, 3}, 1)));
  g.nodes.push_back(leaf(1, NodeKind::Constant, "ones", filled({2, 3}, 1)));
  g.nodes.push_back(leaf(2, NodeKind::Input, "rand", random({2, 3}, 5)));
  g.nodes.push_back(call(m, g, 3, "add", {0, 1}));
  g.nodes.push_back(call(m, g, 4, "mul", {3, 2}));
  g.nodes.push_back(call(m, g, 5, "relu", {2}));  // dead: nothing asks for it
  g.outputs = {4};
  PassStats st;
  Graph folded = fold_constants(g, &st);
  CHECK(st.name == "fold_constants");
  CHECK(st.changed);
  CHECK(st.summary == "folded %3 add");
  const Node& c = *folded.find(3);
  CHECK(c.kind == NodeKind::Constant);
  REQUIRE(c.value);
  CHECK(tensor::sum_all(*c.value) == 12.0);
  CHECK(folded.find(4)->kind == NodeKind::Kernel);  // reads rand: not a constant

  Graph live = eliminate_dead_code(folded, &st);
  CHECK(st.name == "eliminate_dead_code");
  CHECK(st.summary == "removed %0, %1, %5");
  CHECK(graph_to_text(live) ==
        "%2 = input rand  [2, 3]\n"
        "%3 = const add  [2, 3]\n"
        "%4 = mul(%3, %2)  [2, 3]\n"
        "outputs: %4\n");
  check_close(execute(live, 4), execute(g, 4));
  eliminate_dead_code(live, &st);
  CHECK_FALSE(st.changed);
  CHECK(st.summary == "nothing dead");

  CHECK(graph_passes().size() == 3);
  CHECK(std::string(graph_passes()[1].name) == "fuse_elementwise");
}

TEST_CASE("runtime: relu(linear(x, w)) fuses and prints what the unfused graph prints") {
  const char* program =
      "x = rand([1, 3072], 1)\n"
      "w = rand([200, 3072], 2)\n"
      "y = relu(linear(x, w))\n"
      "print(y.shape, sum_all(y))\n"
      "print(y[0, 0] >= 0.0)\n";
  Machine fused, plain;
  plain.rt.set_graph_passes(false);
  REQUIRE(fused.run(program));
  REQUIRE(plain.run(program));
  REQUIRE_MESSAGE(fused.last.ok, fused.error());
  REQUIRE_MESSAGE(plain.last.ok, plain.error());
  CHECK(fused.out == plain.out);
  CHECK(fused.out.rfind("[1, 200] ", 0) == 0);

  const Evaluation& ev = fused.rt.last_evaluation();
  CHECK(ev.ok);
  CHECK(ev.before.num_kernels() == 2);
  REQUIRE(ev.passes.size() == 3);
  CHECK(ev.passes[0].name == "fold_constants");
  CHECK_FALSE(ev.passes[0].changed);
  CHECK(ev.passes[1].name == "fuse_elementwise");
  CHECK(ev.passes[1].changed);
  CHECK(ev.passes[1].after.num_kernels() == 1);
  int kernels = 0;
  for (const auto& n : ev.passes[1].after.nodes)
    if (n.kind == NodeKind::Kernel) {
      ++kernels;
      CHECK(n.label == "linear_relu");
    }
  CHECK(kernels == 1);
  REQUIRE(fused.rt.last_kernels().size() == 1);
  CHECK(fused.rt.last_kernels()[0]->name == "linear_relu");
  REQUIRE(plain.rt.last_kernels().size() == 2);
  CHECK(plain.rt.last_evaluation().passes.empty());
}

TEST_CASE("runtime: a fused intermediate stays pending and is computed when asked for") {
  Machine m;
  REQUIRE(m.run("x = rand([2, 8], 1)\nw = rand([4, 8], 2)\na = linear(x, w)\ny = relu(a)\n"
                "print(sum_all(y))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.rt.last_kernels().size() == 1);
  Graph p = m.rt.pending_graph();
  CHECK(graph_to_text(p) ==
        "%0 = input rand  [2, 8]\n"
        "%1 = input rand  [4, 8]\n"
        "%2 = linear(%0, %1)  [2, 4]\n"
        "outputs: %2\n");
  // Fusion changes no bits on the reference device: relu of the separately computed linear
  // sums to exactly what the fused kernel gave.
  REQUIRE(m.run("print(sum_all(relu(a)) == sum_all(y))\n"
                "b = linear(x, w)\nprint(a[1, 3] == b[1, 3])"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == "true\ntrue\n");
  CHECK(m.rt.pending_graph().nodes.empty());
}

TEST_CASE("runtime: constants fold through the program; dead calls never run") {
  Machine m;
  REQUIRE(m.run("s = [2, 3]\nc = add(ones(s), ones(s))\nunused = relu(rand(s, 4))\n"
                "print(sum_all(mul(c, c)))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == "24.0\n");
  const Evaluation& ev = m.rt.last_evaluation();
  REQUIRE(ev.passes.size() == 3);
  CHECK(ev.passes[0].summary == "folded %2 add, %5 mul");
  CHECK(ev.executed.num_kernels() == 0);
  CHECK(m.rt.last_kernels().empty());
  // The pending relu was never part of that evaluation.
  CHECK(ev.before.find(4) == nullptr);
  CHECK(graph_to_text(m.rt.pending_graph()) ==
        "%3 = input rand  [2, 3]\n%4 = relu(%3)  [2, 3]\noutputs: %4\n");
}

TEST_CASE("runtime: shape errors are reported at the call, with the call's location") {
  Machine m;
  REQUIRE(m.run("x = rand([1, 30], 1)\nw = rand([20, 31], 2)\ny = linear(x, w)\nprint(1)"));
  CHECK_FALSE(m.last.ok);
  CHECK(m.last.error.loc.line == 3);
  CHECK(m.last.error.loc.col == 5);
  CHECK(m.last.error.message.find("'k'") != std::string::npos);
  CHECK(m.out.empty());
  CHECK(m.rt.num_tensors() == 2);  // the failed call added nothing
}

TEST_CASE("runtime: schedules apply per kernel; an illegal one names the kernel and step") {
  Machine m;
  REQUIRE(m.run("x = rand([4, 16], 1)\nw = rand([8, 16], 2)\ny = linear(x, w)\nprint(sum_all(y))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  std::string plain = m.out;
  m.rt.set_schedule("linear", "split j 4   # two tiles of four\nreorder i j_0 j_1 r\n");
  REQUIRE(m.run("y2 = linear(x, w)\nprint(sum_all(y2))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == plain);
  REQUIRE(m.rt.last_kernels().size() == 1);
  CHECK(tir::print_script(*m.rt.last_kernels()[0]).find("j_1") != std::string::npos);

  m.rt.set_schedule("linear", "split j 4\nsplit nosuchloop 2\n");
  REQUIRE(m.run("y3 = linear(x, w)\nprint(sum_all(y3))"));
  CHECK_FALSE(m.last.ok);
  CHECK(m.last.error.message.rfind("schedule of kernel 'linear', step 'split nosuchloop 2': ", 0) ==
        0);
  CHECK_FALSE(m.rt.last_evaluation().ok);
  m.rt.set_schedule("linear", "");
  REQUIRE(m.run("print(sum_all(y3))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == plain);
}

TEST_CASE("runtime: the Ref and Cpu devices agree, and compiled kernels are cached") {
  const char* program =
      "x = rand([3, 40], 1)\nw = rand([24, 40], 2)\nb = rand([24, 1], 3)\n"
      "h = relu(linear(x, w))\n"
      "p = softmax(linear(h, rand([10, 24], 4)))\n"
      "print(p.shape, sum_all(p), sum_all(h))\n";
  Machine ref, cpu;
  cpu.rt.set_device("cpu", nullptr);
  cpu.rt.set_threads(1);
  REQUIRE(ref.run(program));
  REQUIRE(cpu.run(program));
  REQUIRE_MESSAGE(ref.last.ok, ref.error());
  REQUIRE_MESSAGE(cpu.last.ok, cpu.error());
  std::string why;
  auto a = ref.rt.value(ref.handle("p"), &why), b = cpu.rt.value(cpu.handle("p"), &why);
  REQUIRE(a);
  REQUIRE(b);
  check_close(*a, *b);
  CHECK(cpu.rt.last_evaluation().device == "cpu");
  int compiled = cpu.rt.compilations();
  CHECK(compiled >= 2);
  REQUIRE(cpu.run("q = softmax(linear(relu(linear(x, w)), rand([10, 24], 4)))\nprint(sum_all(q))"));
  REQUIRE_MESSAGE(cpu.last.ok, cpu.error());
  CHECK(cpu.rt.compilations() == compiled);  // same functions, same shapes: no recompiling
}

TEST_CASE("runtime: fold_constants leaves big constant work to the device") {
  Machine m;
  m.rt.set_device("cpu", nullptr);
  // 128 * 300 * 128 = 4.9M multiply-adds: more than folding may spend at compile time.
  REQUIRE(m.run("c = matmul(ones([128, 128]), ones([128, 300]))\nprint(c[5, 7], sum_all(c))\n"
                "d = matmul(ones([16, 16]), ones([16, 16]))\nprint(d[1, 1])"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == "128.0 4915200.0\n16.0\n");
  CHECK(m.rt.last_evaluation().passes[0].summary == "folded %5 matmul");
  CHECK(m.rt.compilations() == 1);  // only the big one was compiled
}

TEST_CASE("runtime: errors for bad handles and creation arguments, never a crash") {
  GraphRuntime rt;
  std::string error;
  double v = 0;
  CHECK_FALSE(rt.sum_all(5, &v, &error));
  CHECK(error == "not a tensor");
  CHECK(rt.tensor_dims(-1).empty());
  CHECK(rt.shape_dims(3).empty());
  int64_t t = -1;
  CHECK_FALSE(rt.create(Builtin::Zeros, {2, 0}, {}, &t, &error));
  CHECK_FALSE(error.empty());
  CHECK_FALSE(rt.create(Builtin::Rand, {2}, {}, &t, &error));
  CHECK(error == "rand expects a shape and a seed");
  REQUIRE(rt.create(Builtin::Arange, {4}, {}, &t, &error));
  CHECK_FALSE(rt.element(t, {4}, &v, &error));
  CHECK(error == "index [4] is out of range for shape [4]");
  REQUIRE(rt.element(t, {3}, &v, &error));
  CHECK(v == 3.0);
  std::string text;
  REQUIRE(rt.format(t, &text, &error));
  CHECK(text == "tensor([4], [0.0, 1.0, 2.0, 3.0])");
  CHECK_FALSE(rt.load("/nonexistent/dir/x.npy", &t, &error));
  CHECK_FALSE(error.empty());
}

TEST_CASE("runtime: an interrupt stops evaluation with \"interrupted\"") {
  Machine m;
  std::atomic<bool> stop{true};
  m.rt.set_interrupt(&stop);
  REQUIRE(m.run("x = rand([8, 8], 1)\ny = relu(x)\nprint(sum_all(y))"));
  CHECK_FALSE(m.last.ok);
  CHECK(m.last.error.message == "interrupted");
  stop = false;
  REQUIRE(m.run("print(sum_all(y) >= 0.0)"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == "true\n");
}

// The golden tensor programs (tests/tensor_programs/*.ds, `# expect:` / `# error:` /
// `# exit:` lines as in tests/programs and tests/errors), run here on both devices, with and
// without graph passes: fusion, folding and code generation must not change one printed
// character.
TEST_CASE("tensor programs: every golden gives its output on every device, fused or not") {
  auto files = testing::ds_files("tensor_programs");
  REQUIRE(files.size() >= 10);
  for (const auto& path : files)
    for (std::string dev : {"ref", "cpu"})
      for (bool passes : {true, false}) {
        std::string where = path.filename().string() + " on " + dev +
                            (passes ? ", passes on" : ", passes off");
        INFO(where);
        testing::Expectation want = testing::parse_expectations(testing::read_text(path.string()));
        Machine m;
        m.rt.set_device(dev);
        m.rt.set_graph_passes(passes);
        std::vector<std::string> errors;
        int exit_code = 0;
        if (!m.run(testing::read_text(path.string()), path.filename().string())) {
          errors = m.compile_errors;
          exit_code = 2;
        } else if (!m.last.ok) {
          errors = {m.error()};
          exit_code = 1;
        }
        std::vector<std::string> output;
        std::istringstream lines(m.out);
        for (std::string l; std::getline(lines, l);) output.push_back(l);
        CHECK(output == want.output);
        CHECK(errors == want.errors);
        CHECK(exit_code == want.exit_code);
      }
}

TEST_CASE("runtime: a long chain of calls evaluates quickly; fused kernels stay bounded") {
  Machine m;
  // rand * 0: data the graph cannot fold, and exact sums.
  REQUIRE(m.run("x = ones([2, 3])\nacc = mul(rand([2, 3], 1), zeros([2, 3]))\n"
                "for i in 0..3000 { acc = add(acc, x) }\nprint(sum_all(acc))"));
  REQUIRE_MESSAGE(m.last.ok, m.error());
  CHECK(m.out == "18000.0\n");
  const Evaluation& ev = m.rt.last_evaluation();
  CHECK(ev.before.num_kernels() == 3001);
  // 3000 adds in fused groups of at most 32 blocks each.
  CHECK(ev.executed.num_kernels() >= 3001 / 32);
  CHECK(ev.executed.num_kernels() <= 3001 / 16);
}

TEST_CASE("runtime: fusion respects a producer's schedule and never changes the result") {
  // With the reduction outermost no loop of linear's finishes an element before the last
  // r iteration, so relu stays in its own nest after it ("loops not merged").
  const std::pair<const char*, bool> cases[] = {
      {"split j 4", true}, {"split j 3", true}, {"tile i j 2 4", true},
      {"reorder r i j", false}, {"split r 5\nreorder r_0 i j r_1", false}};
  for (auto [schedule, merged] : cases) {
    INFO(std::string(schedule));
    Machine fused, plain;
    plain.rt.set_graph_passes(false);
    for (Machine* m : {&fused, &plain}) {
      m->rt.set_schedule("linear", schedule);
      REQUIRE(m->run("x = rand([6, 20], 1)\nw = rand([10, 20], 2)\ny = relu(linear(x, w))\n"
                     "z = linear(x, w)\nprint(sum_all(y))"));
      REQUIRE_MESSAGE(m->last.ok, m->error());
    }
    std::string why;
    auto a = fused.rt.value(fused.handle("y"), &why), b = plain.rt.value(plain.handle("y"), &why);
    REQUIRE(a);
    REQUIRE(b);
    check_close(*a, *b);
    REQUIRE(fused.rt.last_kernels().size() == 1);
    std::string f = tir::verify(*fused.rt.last_kernels()[0], &why) ? "" : why;
    CHECK(f == "");
    CHECK(fused.rt.last_evaluation().passes[1].summary ==
          std::string("fused linear + relu -> linear_relu") +
              (merged ? "" : " (loops not merged)"));
    tir::PrimFunc k = *fused.rt.last_kernels()[0];
    auto sites = tir::blocks(k);
    REQUIRE(sites.size() == 2);
    CHECK((sites[0].loops[0] == sites[1].loops[0]) == merged);
  }
}
