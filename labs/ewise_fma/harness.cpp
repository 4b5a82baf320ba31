// The checker's side of lab ewise_fma, built against the project's tensor/ library twice
// (labs/cpp_common/observe.h): with the student's fma.cpp, run as `harness observe CASE SEED`,
// it calls fuse_ewise_fma and writes what each call returned (the whole graph, and the
// PassStats) on fd 3; with the lab's starter, run as `harness check CASE SEED` on those
// records, it reaches the verdict and prints one line: "PASS" or "FAIL: why".
//   fuses                  add(mul(x, y), z) becomes one ewise_fma kernel, on the lab's graphs
//   second_operand         add(z, mul(x, y)) too, as ewise_fma(x, y, z)
//   keeps_shared_multiply  a mul that another node reads, or that is an output, stays
//   keeps_results          every graph computes the same before and after the pass: the
//                          lab's graphs and 300 random ones drawn from the run's seed
//   reports                PassStats: name, changed and summary
//
// Every graph comes from a small Descent program, run on the AST walker against the tensor
// runtime with the runtime's own passes off: the graph an evaluation builds is exactly what
// the runtime would hand to its passes (kernels lowered to loop nests, inputs holding data).
// The programs' rand() seeds come from the run's seed too.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fma_lab.h"
#include "labs/cpp_common/observe.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/walker.h"
#include "tensor/runtime.h"

using namespace descent;
using namespace descent::tensor;

namespace {

// ---- Graphs from Descent programs --------------------------------------------------------

// A Descent program run with the prelude's kernels (add, mul, relu, linear, matmul, ...).
// Kept alive as long as its graph: a kernel Node points at its declaration in `module`.
struct Machine {
  Module module;
  GlobalStore globals;
  GraphRuntime rt;
  std::string error;

  bool run(const std::string& text, const std::string& name) {
    auto program = std::make_shared<Program>();
    std::vector<Diagnostic> diags;
    *program = parse(std::make_shared<SourceFile>(name, text), diags);
    globals.resize(module.globals.size());
    if (diags.empty()) check(*program, module, globals.defined, diags);
    if (!diags.empty()) {
      error = name + ":" + std::to_string(diags[0].loc.line) + ": " + diags[0].message;
      return false;
    }
    globals.resize(module.globals.size());
    module.programs.push_back(program);
    RunOptions opts;
    opts.tensors = &rt;
    RunResult r = make_ast_walker()->run(*program, module, globals, opts);
    if (!r.ok) error = name + ":" + std::to_string(r.error.loc.line) + ": " + r.error.message;
    return r.ok;
  }
  // The node id (the runtime's handle) of a global tensor variable.
  int64_t id(const std::string& variable) const {
    int g = module.find_global(variable);
    return g < 0 ? -1 : globals.values[size_t(g)].i;
  }
};

struct Built {
  std::shared_ptr<Machine> machine;
  std::string program;  // the Descent program it came from
  Graph graph;
  std::string error;
  int64_t id(const std::string& variable) const { return machine->id(variable); }
};

// The graph that evaluating `result` builds, before any pass; `also_outputs` are variables
// someone asks for too (their values must exist after the pass).
Built build(const std::string& program, const std::string& result,
            const std::vector<std::string>& also_outputs = {}) {
  Built b;
  b.program = program;
  b.machine = std::make_shared<Machine>();
  Machine& m = *b.machine;
  m.rt.set_graph_passes(false);
  if (!m.run(std::string(prelude_source()), "prelude.ds") || !m.run(program, "lab.ds")) {
    b.error = m.error;
    return b;
  }
  if (!m.rt.evaluate(m.id(result), &b.error)) return b;
  b.graph = m.rt.last_evaluation().before;
  for (const auto& v : also_outputs)
    if (b.graph.find(m.id(v))) b.graph.outputs.push_back(m.id(v));
  return b;
}

// ---- Running a graph on the reference interpreter ----------------------------------------

std::string ref(int64_t id) { return "%" + std::to_string(id); }

// Executes g's kernels in order with tir::interpret; *values gets each output's value.
// Whatever makes a graph impossible to run (a node reading one that is missing or comes
// later, a func whose parameters do not match its inputs) is the reason it fails.
bool execute(Graph g, std::map<int64_t, Tensor>* values, std::string* why) {
  auto cannot = [&](const std::string& reason) {
    *why = reason;
    return false;
  };
  std::map<int64_t, const Node*> ready;  // the nodes before the one being run
  for (auto& n : g.nodes) {
    std::string node = ref(n.id) + " = " + n.label;
    if (ready.count(n.id)) return cannot("two nodes have the id " + ref(n.id));
    if (n.kind == NodeKind::Kernel) {
      if (!n.func) return cannot(node + " has no func");
      if (n.inputs.size() != n.func->params.size())
        return cannot(node + " has " + std::to_string(n.inputs.size()) +
                      " inputs but its func takes " + std::to_string(n.func->params.size()));
      std::vector<const Tensor*> args;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        auto it = ready.find(n.inputs[k]);
        if (it == ready.end())
          return cannot(node + " reads " + ref(n.inputs[k]) +
                        (g.find(n.inputs[k]) ? ", which comes after it (not topological order)"
                                             : ", which is no longer in the graph"));
        const auto& param = n.func->buffers[size_t(n.func->params[k])];
        if (!it->second->value || it->second->value->shape != param.shape)
          return cannot(node + ": its input " + ref(n.inputs[k]) +
                        " does not have the shape of parameter " + param.name);
        args.push_back(it->second->value.get());
      }
      auto out = std::make_shared<Tensor>();
      std::string error;
      if (!tir::interpret(*n.func, args, out.get(), &error))
        return cannot(node + " does not run: " + error);
      n.value = std::move(out);
    }
    ready[n.id] = &n;
  }
  for (int64_t o : g.outputs) {
    auto it = ready.find(o);
    if (it == ready.end() || !it->second->value)
      return cannot("the output " + ref(o) + " is no longer in the graph");
    (*values)[o] = *it->second->value;
  }
  return true;
}

// Text indented under a check's reason, one line each.
std::string indented(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string s = "\n      ";
  for (char c : text) s += c == '\n' ? std::string("\n      ") : std::string(1, c);
  return s;
}
std::string before_after(const Graph& before, const Graph& after) {
  return "\n    before:" + indented(graph_to_text(before)) + "\n    after fuse_ewise_fma:" +
         indented(graph_to_text(after));
}

// The reason the fused graph computes something else than the original, or "". The
// interpreter computes in f32 exactly as each loop nest says; 1e-5 leaves room for a
// compiler that contracts x * y + z into one rounding.
std::string compare(const Graph& before, const Graph& after) {
  std::map<int64_t, Tensor> want, got;
  std::string why;
  if (!execute(before, &want, &why)) return "the lab's own graph does not run: " + why;
  if (!execute(after, &got, &why)) return "after your pass the graph cannot run: " + why;
  for (const auto& [id, w] : want) {
    const Tensor& o = got[id];
    if (o.shape != w.shape) return "the output " + ref(id) + " changed its shape";
    for (size_t i = 0; i < size_t(w.numel()); ++i)
      if (std::fabs(o.data[i] - w.data[i]) > 1e-5f * (1 + std::fabs(w.data[i])))
        return "the output " + ref(id) + " differs at element " + std::to_string(i) + ": " +
               std::to_string(w.data[i]) + " unfused, " + std::to_string(o.data[i]) + " fused";
  }
  return "";
}

int count(const Graph& g, const std::string& label) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.kind == NodeKind::Kernel && node.label == label;
  return n;
}

// "2 kernel nodes (1 ewise_fma)"
std::string kernels(int n, int fmas) {
  return std::to_string(n) + " kernel node" + (n == 1 ? "" : "s") + " (" + std::to_string(fmas) +
         " ewise_fma)";
}

// ---- The student's pass, through the trust boundary ----------------------------------------
//
// fuse_ewise_fma's record is the whole graph it returned, every field of every node, then the
// PassStats when there are any. A node's func, value and kernel are pointers: one the pass
// shares with a node of its input graph (a node it left alone, or a Tensor it kept) is written
// as that node's index, and replayed as the same pointer of the replaying run's own input
// graph, built the same way (the pass takes that graph const: what it might still do to a
// func or Tensor it shares with it is not part of the record); any other func or value is
// written out in full.

// How deep the checker follows a nested statement or expression: no loop nest comes near it,
// and a record that nests deeper is refused rather than followed until the stack runs out.
constexpr size_t kMaxDepth = 1000;

template <class E>
size_t code(E e) { return size_t(e); }

void put_expr(lab::Record& r, const tir::Expr* e) {
  if (!e) {
    r.u64(0);
    return;
  }
  r.u64(1).u64(code(e->kind)).u64(code(e->type)).i64(e->ival).f64(e->fval).str(e->name);
  r.i64(e->buffer).u64(code(e->op)).u64(e->args.size());
  for (const auto& a : e->args) put_expr(r, a.get());
}

tir::ExprPtr get_expr(lab::Reader& in, size_t depth) {
  if (in.count(depth < kMaxDepth ? 1 : 0) == 0) return nullptr;
  auto kind = tir::ExprKind(in.count(code(tir::ExprKind::Fma)));
  auto type = tir::ScalarType(in.count(code(tir::ScalarType::Bool)));
  auto e = std::make_unique<tir::Expr>(kind, type);
  e->ival = in.i64();
  e->fval = in.f64();
  e->name = in.str();
  e->buffer = int(in.i64());
  e->op = tir::Op(in.count(code(tir::Op::Abs)));
  e->args.resize(in.count());
  for (auto& a : e->args) a = get_expr(in, depth + 1);
  return e;
}

void put_stmt(lab::Record& r, const tir::Stmt* s) {
  if (!s) {
    r.u64(0);
    return;
  }
  r.u64(1).u64(code(s->kind)).str(s->var).i64(s->extent).u64(code(s->for_kind)).str(s->thread_tag);
  r.i64(s->unroll_factor).str(s->intrinsic).str(s->name).u64(s->iters.size());
  for (const auto& it : s->iters) {
    r.str(it.name).i64(it.extent).u64(code(it.kind));
    put_expr(r, it.binding.get());
  }
  put_stmt(r, s->init.get());
  put_expr(r, s->predicate.get());
  r.i64(s->buffer).u64(s->indices.size());
  for (const auto& i : s->indices) put_expr(r, i.get());
  put_expr(r, s->value.get());
  put_stmt(r, s->body.get());
  r.u64(s->stmts.size());
  for (const auto& c : s->stmts) put_stmt(r, c.get());
}

tir::StmtPtr get_stmt(lab::Reader& in, size_t depth) {
  if (in.count(depth < kMaxDepth ? 1 : 0) == 0) return nullptr;
  auto s = std::make_unique<tir::Stmt>(tir::StmtKind(in.count(code(tir::StmtKind::Barrier))));
  s->var = in.str();
  s->extent = in.i64();
  s->for_kind = tir::ForKind(in.count(code(tir::ForKind::Bound)));
  s->thread_tag = in.str();
  s->unroll_factor = int(in.i64());
  s->intrinsic = in.str();
  s->name = in.str();
  s->iters.resize(in.count());
  for (auto& it : s->iters) {
    it.name = in.str();
    it.extent = in.i64();
    it.kind = tir::IterKind(in.count(code(tir::IterKind::Reduce)));
    it.binding = get_expr(in, depth + 1);
  }
  s->init = get_stmt(in, depth + 1);
  s->predicate = get_expr(in, depth + 1);
  s->buffer = int(in.i64());
  s->indices.resize(in.count());
  for (auto& i : s->indices) i = get_expr(in, depth + 1);
  s->value = get_expr(in, depth + 1);
  s->body = get_stmt(in, depth + 1);
  s->stmts.resize(in.count());
  for (auto& c : s->stmts) c = get_stmt(in, depth + 1);
  return s;
}

void put_ints(lab::Record& r, const std::vector<int64_t>& v) {
  r.u64(v.size());
  for (int64_t x : v) r.i64(x);
}

std::vector<int64_t> get_ints(lab::Reader& in) {
  std::vector<int64_t> v(in.count());
  for (int64_t& x : v) x = in.i64();
  return v;
}

void put_func(lab::Record& r, const tir::PrimFunc& f) {
  r.str(f.name).u64(f.buffers.size());
  for (const auto& b : f.buffers) {
    r.str(b.name);
    put_ints(r, b.shape);
    r.u64(code(b.scope)).u64(code(b.role));
  }
  r.u64(f.params.size());
  for (int p : f.params) r.i64(p);
  r.i64(f.output);
  put_stmt(r, f.body.get());
}

std::shared_ptr<const tir::PrimFunc> get_func(lab::Reader& in) {
  auto f = std::make_shared<tir::PrimFunc>();
  f->name = in.str();
  f->buffers.resize(in.count());
  for (auto& b : f->buffers) {
    b.name = in.str();
    b.shape = get_ints(in);
    b.scope = tir::Scope(in.count(code(tir::Scope::Shared)));
    b.role = tir::BufferRole(in.count(code(tir::BufferRole::Temp)));
  }
  f->params.resize(in.count());
  for (int& p : f->params) p = int(in.i64());
  f->output = int(in.i64());
  f->body = get_stmt(in, 0);
  return f;
}

// The floats bit for bit (a nan's payload and -0.0 survive).
void put_tensor(lab::Record& r, const Tensor& t) {
  put_ints(r, t.shape);
  r.u64(t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, t.data.data() + i, 4);
    r.u64(bits);
  }
}

std::shared_ptr<const Tensor> get_tensor(lab::Reader& in) {
  auto t = std::make_shared<Tensor>();
  t->shape = get_ints(in);
  t->data = AlignedFloats(in.count());
  for (size_t i = 0; i < t->data.size(); ++i) {
    auto bits = uint32_t(in.count(0xffffffffu));
    std::memcpy(&t->data[i], &bits, 4);
  }
  return t;
}

// A pointer of a returned node: 0 for null, 2 + k when node k of the input graph `g` holds the
// same one, otherwise 1 (then the pointee follows, written by `full`).
template <class P, class Full>
void put_shared(lab::Record& r, const Graph& g, const P& p, P Node::*field, Full full) {
  if (!p) {
    r.u64(0);
    return;
  }
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].*field == p) {
      r.u64(2 + k);
      return;
    }
  r.u64(1);
  full(*p);
}

// The replay of put_shared: the input graph's pointer, or what `full` reads (for a kernel
// declaration, which cannot be written out, null: the harness never reads it).
template <class P, class Full>
P get_shared(lab::Reader& in, const Graph& g, P Node::*field, Full full) {
  size_t tag = in.count(1 + g.nodes.size());
  if (tag == 0) return nullptr;
  if (tag == 1) return full();
  return g.nodes[tag - 2].*field;
}

void put_graph(lab::Record& r, const Graph& g, const Graph& out) {
  r.u64(out.nodes.size());
  for (const Node& n : out.nodes) {
    r.i64(n.id).u64(code(n.kind)).str(n.label);
    put_ints(r, n.inputs);
    put_shared(r, g, n.kernel, &Node::kernel, [](const KernelDecl&) {});
    r.u64(n.version);
    put_shared(r, g, n.func, &Node::func, [&](const tir::PrimFunc& f) { put_func(r, f); });
    r.str(n.schedule);
    put_ints(r, n.shape);
    put_shared(r, g, n.value, &Node::value, [&](const Tensor& t) { put_tensor(r, t); });
  }
  put_ints(r, out.outputs);
}

Graph get_graph(lab::Reader& in, const Graph& g) {
  Graph out;
  out.nodes.resize(in.count());
  for (Node& n : out.nodes) {
    n.id = in.i64();
    n.kind = NodeKind(in.count(code(NodeKind::Kernel)));
    n.label = in.str();
    n.inputs = get_ints(in);
    n.kernel = get_shared(in, g, &Node::kernel, [] { return static_cast<const KernelDecl*>(nullptr); });
    n.version = uint32_t(in.count(0xffffffffu));
    n.func = get_shared(in, g, &Node::func, [&] { return get_func(in); });
    n.schedule = in.str();
    n.shape = get_ints(in);
    n.value = get_shared(in, g, &Node::value, [&] { return get_tensor(in); });
  }
  out.outputs = get_ints(in);
  return out;
}

// The student's fuse_ewise_fma: the graph it returned, then (when `stats` is given) every
// field of the PassStats it filled in.
Graph student_fma(const Graph& g, PassStats* stats) {
  return lab::observed(
      "fuse_ewise_fma",
      [&](lab::Record& r) {
        Graph out = fuse_ewise_fma(g, stats);
        put_graph(r, g, out);
        if (stats) r.str(stats->name).u64(stats->changed ? 1 : 0).str(stats->summary).str(stats->error);
      },
      [&](lab::Reader& in) {
        Graph out = get_graph(in, g);
        if (stats) {
          stats->name = in.str();
          stats->changed = in.count(1) == 1;
          stats->summary = in.str();
          stats->error = in.str();
        }
        return out;
      });
}

// ---- The lab's graphs ---------------------------------------------------------------------

// x, y, z and w, with data drawn from the run's seed.
std::string inputs(uint64_t seed) {
  auto from = [seed](int k) { return std::to_string(seed % 1000000000 * 4 + uint64_t(k)); };
  return "x = rand([4, 8], " + from(1) + ")\n"
         "y = rand([4, 8], " + from(2) + ")\n"
         "z = rand([4, 8], " + from(3) + ")\n"
         "w = rand([8, 8], " + from(4) + ")\n";
}

struct LabGraph {
  std::string what, program;
  int kernels_after, fmas_after;  // kernel nodes after the pass, of which ewise_fma
};

const std::vector<LabGraph>& lab_graphs() {
  static const std::vector<LabGraph> graphs = {
      {"x * y + z", "r = add(mul(x, y), z)\n", 1, 1},
      {"relu(x * y + z): relu stays its own kernel", "r = relu(add(mul(x, y), z))\n", 2, 1},
      {"(x * y + z) * y + x: two in a chain", "r = add(mul(add(mul(x, y), z), y), x)\n", 2, 2},
      {"x * y + z * x: one mul fused, the other stays", "r = add(mul(x, y), mul(z, x))\n", 2, 1},
      {"linear(x, w) * y + z", "r = add(mul(linear(x, w), y), z)\n", 2, 1},
  };
  return graphs;
}

// A graph with one mul the pass must keep (`p`, read by `r`) and one it must fuse (`q`, read
// by `u`), `out` the result.
struct Trap {
  std::string what;  // why p must stay
  std::string program;
  std::vector<std::string> also_outputs;
};

const std::vector<Trap>& traps() {
  static const std::vector<Trap> t = {
      {"relu reads it too: fusing it would compute x * y twice, removing it would leave the "
       "relu without its input",
       "p = mul(x, y)\nr = add(p, z)\ns = relu(p)\nq = mul(y, z)\nu = add(q, x)\n"
       "out = add(add(r, s), u)\n",
       {}},
      {"it is a graph output: its value must exist after the pass",
       "p = mul(x, y)\nr = add(p, z)\nq = mul(y, z)\nu = add(q, x)\nout = add(r, u)\n",
       {"p"}},
      {"r = add(p, p) reads it twice: that is p + p, there is no z to make x * y + z",
       "p = mul(x, y)\nr = add(p, p)\nq = mul(y, z)\nu = add(q, x)\nout = add(r, u)\n",
       {}},
  };
  return t;
}

// A random program over add, mul and relu (and matmul when the shape is square), of one
// random shape; some of its intermediates are outputs too.
Built random_graph(std::mt19937_64& rng) {
  int64_t n = 1 + int64_t(rng() % 5), m = 1 + int64_t(rng() % 5);
  std::string shape = "[" + std::to_string(n) + ", " + std::to_string(m) + "]", text;
  std::vector<std::string> names;
  for (int i = 0; i < 3; ++i) {
    names.push_back("t" + std::to_string(i));
    text += names.back() + " = rand(" + shape + ", " + std::to_string(rng() % 1000) + ")\n";
  }
  auto any = [&] { return names[rng() % names.size()]; };
  int steps = 2 + int(rng() % 7);
  for (int i = 0; i < steps; ++i) {
    // Drawn first, in this order: the operands of + are evaluated in no fixed order.
    std::string a = any(), b = any(), c = any(), call;
    switch (rng() % (n == m ? 5 : 4)) {
      case 0: case 1: call = "add(" + a + ", " + b + ")"; break;
      case 2: call = "mul(" + a + ", " + b + ")"; break;
      case 3: call = "relu(" + a + ")"; break;
      default: call = "matmul(" + a + ", " + b + ")"; break;
    }
    // Half the time an add reads a fresh mul: the pattern the pass looks for.
    if (rng() % 2) call = "add(mul(" + a + ", " + b + "), " + c + ")";
    names.push_back("t" + std::to_string(names.size()));
    text += names.back() + " = " + call + "\n";
  }
  std::vector<std::string> also;
  for (size_t i = 3; i + 1 < names.size(); ++i)
    if (rng() % 4 == 0) also.push_back(names[i]);
  return build(text, names.back(), also);
}

// Builds one of the lab's graphs or stops the check: a failure here is the lab's bug.
#define BUILD_OR_FAIL(b, ...)                                            \
  Built b = build(__VA_ARGS__);                                          \
  if (!b.error.empty()) return "the lab's graph does not build: " + b.error

std::string check(const std::string& which, uint64_t seed) {
  const std::string kInputs = inputs(seed);

  if (which == "fuses") {
    for (const auto& lg : lab_graphs()) {
      BUILD_OR_FAIL(b, kInputs + lg.program, "r");
      Graph after = student_fma(b.graph, nullptr);
      if (after.num_kernels() != lg.kernels_after || count(after, "ewise_fma") != lg.fmas_after)
        return lg.what + ": after the pass the graph should have " +
               kernels(lg.kernels_after, lg.fmas_after) + "; it has " +
               kernels(after.num_kernels(), count(after, "ewise_fma")) +
               before_after(b.graph, after);
      if (std::string why = compare(b.graph, after); !why.empty())
        return lg.what + ": " + why + before_after(b.graph, after);
    }
    return "";
  }

  if (which == "second_operand") {
    BUILD_OR_FAIL(b, kInputs + "r = add(z, mul(x, y))\n", "r");
    Graph after = student_fma(b.graph, nullptr);
    const Node* r = after.find(b.id("r"));
    std::vector<int64_t> want = {b.id("x"), b.id("y"), b.id("z")};
    if (after.num_kernels() != 1 || !r || r->label != "ewise_fma")
      return "z + x * y: the add reads the mul as its second operand; it should become "
             "one ewise_fma kernel, keeping the add's id " + ref(b.id("r")) +
             before_after(b.graph, after);
    if (r->inputs != want)
      return "z + x * y should become ewise_fma(" + ref(want[0]) + ", " + ref(want[1]) +
             ", " + ref(want[2]) + "): x, y, then z (fuse_funcs gives them in that order)" +
             before_after(b.graph, after);
    if (std::string why = compare(b.graph, after); !why.empty())
      return "z + x * y: " + why + before_after(b.graph, after);
    return "";
  }

  if (which == "keeps_shared_multiply") {
    for (const auto& t : traps()) {
      BUILD_OR_FAIL(b, kInputs + t.program, "out", t.also_outputs);
      Graph after = student_fma(b.graph, nullptr);
      std::string p = ref(b.id("p")), r = ref(b.id("r"));
      std::string where = " (" + p + " = mul(x, y) must stay: " + t.what + ")";
      const Node* pn = after.find(b.id("p"));
      const Node* rn = after.find(b.id("r"));
      if (!pn || pn->label != "mul" || !rn || rn->label != "add")
        return "the mul " + p + " and the add " + r + " that reads it should stay as they are" +
               where + before_after(b.graph, after);
      const Node* u = after.find(b.id("u"));
      if (!u || u->label != "ewise_fma" || after.find(b.id("q")))
        return "u = add(q, x) should become ewise_fma: its mul " + ref(b.id("q")) +
               " is read by nobody else" + before_after(b.graph, after);
      if (std::string why = compare(b.graph, after); !why.empty())
        return why + before_after(b.graph, after);
    }
    return "";
  }

  if (which == "keeps_results") {
    for (const auto& lg : lab_graphs()) {
      BUILD_OR_FAIL(b, kInputs + lg.program, "r");
      Graph after = student_fma(b.graph, nullptr);
      if (std::string why = compare(b.graph, after); !why.empty())
        return lg.what + ": " + why + before_after(b.graph, after);
    }
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 300; ++i) {
      Built b = random_graph(rng);
      if (!b.error.empty()) return "random graph " + std::to_string(i + 1) + " does not build: " + b.error;
      Graph after = student_fma(b.graph, nullptr);
      if (std::string why = compare(b.graph, after); !why.empty())
        return "random graph " + std::to_string(i + 1) + ": " + why + "\n    the program:" +
               indented(b.program) + before_after(b.graph, after);
    }
    return "";
  }

  if (which == "reports") {
    BUILD_OR_FAIL(b, kInputs + "r = add(mul(x, y), z)\n", "r");
    PassStats st;
    st.changed = true;  // whatever was there before must not leak through
    st.summary = "stale";
    Graph after = student_fma(b.graph, &st);
    if (st.name != "fuse_ewise_fma")
      return "stats->name is \"" + st.name + "\"; it should be \"fuse_ewise_fma\"";
    if (!st.changed || st.summary.empty() || st.summary == "stale" ||
        st.summary.find("ewise_fma") == std::string::npos)
      return "after fusing x * y + z, stats->changed should be true and stats->summary say "
             "what was fused (naming ewise_fma); changed is " +
             std::string(st.changed ? "true" : "false") + ", summary \"" + st.summary + "\"";
    BUILD_OR_FAIL(nothing, kInputs + "r = relu(add(x, y))\n", "r");
    st.changed = true;
    st.summary = "stale";
    student_fma(nothing.graph, &st);
    if (st.changed || st.summary.empty() || st.summary == "stale")
      return "on relu(x + y), where there is nothing to fuse, stats->changed should be "
             "false and the summary say so (\"nothing to fuse\"); changed is " +
             std::string(st.changed ? "true" : "false") + ", summary \"" + st.summary + "\"";
    student_fma(b.graph, nullptr);  // stats may be null
    return "";
  }

  return "unknown case " + which;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::harness_main(argc, argv, 0, [](const lab::Args& a) { return check(a.which, a.seed); });
}
