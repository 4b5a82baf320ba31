// GraphRuntime, training: grad(loss, x) as reverse mode over the dataflow graph, and
// param(t) (runtime.h has the contract; docs/training.md the picture).
//
// The backward pass is made of ordinary pending kernel nodes: each calls an adjoint kernel
// derived from the forward kernel's index notation (tensor/autodiff.h) on the forward node's
// inputs (the tape) and the gradient of its result. Nothing runs until a value is needed;
// then the graph passes see forward and backward together (a relu's mask fuses into the
// matmul that produced its input's gradient) and the default schedules apply as usual.
#include <algorithm>
#include <set>

#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/text.h"
#include "tensor/autodiff.h"
#include "tensor/runtime.h"

namespace descent::tensor {

const Adjoint* GraphRuntime::adjoint(const KernelDecl& k, size_t param, std::string* error) {
  auto key = std::make_pair(&k, param);
  auto it = adjoints_.find(key);
  if (it != adjoints_.end()) return it->second.get();
  auto a = std::make_shared<Adjoint>();
  Diagnostic d;
  if (!derive_adjoint(k, param, a.get(), &d)) {
    *error = "grad: cannot differentiate kernel '" + k.name + "'" +
             (d.loc.valid() ? " (line " + std::to_string(d.loc.line) + ")" : "") + ": " + d.message;
    return nullptr;
  }
  adjoints_[key] = a;
  return a.get();
}

// `a + b` at one rank, the kernel that sums two contributions to one gradient.
const KernelDecl* GraphRuntime::accumulator(size_t rank, std::string* error) {
  auto& program = accumulators_[rank];
  if (!program) {
    std::string dims, idx;
    for (size_t i = 0; i < rank; ++i) {
      dims += (i ? ", d" : "d") + std::to_string(i);
      idx += (i ? ", i" : "i") + std::to_string(i);
    }
    std::string text = "kernel accumulate(a: f32[" + dims + "], b: f32[" + dims + "]) -> f32[" +
                       dims + "] {\n  s[" + idx + "] = a[" + idx + "] + b[" + idx +
                       "]\n  return s\n}\n";
    std::vector<Diagnostic> diags;
    auto p = std::make_shared<Program>(
        parse(std::make_shared<SourceFile>("accumulate (grad)", text), diags));
    Module m;
    if (!diags.empty() || !check(*p, m, {}, diags) || p->body.empty() || !p->body[0]->kernel) {
      *error = "grad: the accumulation kernel does not check";
      program.reset();
      return nullptr;
    }
    program = std::move(p);
  }
  return program->body[0]->kernel.get();
}

bool GraphRuntime::grad(int64_t loss, int64_t wrt, int64_t* out, std::string* error) {
  if (!valid(loss) || !valid(wrt)) {
    *error = "grad: argument is not a tensor";
    return false;
  }
  // x itself becomes a parameter: what is computed from it from now on keeps its tape.
  nodes_[size_t(wrt)].tape = true;
  Backward& bw = backward_[loss];
  for (const auto& [id, g] : bw.grads)
    if (!valid(g)) {  // collected meanwhile (the loss was not held): start over
      bw = Backward{};
      break;
    }
  if (bw.done.count(wrt)) {
    auto it = bw.grads.find(wrt);
    if (it != bw.grads.end()) {
      *out = it->second;
      return true;
    }
  }
  // The nodes between: those loss depends on (walking its inputs), that depend on wrt.
  std::vector<uint8_t> above(size_t(loss - std::min(loss, wrt)) + 1, 0);  // by id - wrt
  std::vector<int64_t> on_path;
  if (wrt <= loss) {
    std::vector<uint8_t> needed(above.size(), 0);
    needed[size_t(loss - wrt)] = 1;
    for (int64_t id = loss; id >= wrt; --id) {
      if (!needed[size_t(id - wrt)]) continue;
      const Node& n = nodes_[size_t(id)];
      if (id == wrt) {
        above[0] = 1;
        continue;
      }
      std::vector<int64_t> reads = n.inputs;
      reads.insert(reads.end(), n.made_from.begin(), n.made_from.end());
      for (int64_t in : reads) {
        if (!valid(in) && !n.made_from.empty() && n.inputs.empty()) continue;  // long gone
        if (!valid(in)) {
          *error = "grad: part of how this loss was computed is gone (its tensors were freed "
                   "once it was computed); ask for grad(loss, x) before reading the loss's value";
          return false;
        }
        if (in >= wrt) needed[size_t(in - wrt)] = 1;
      }
    }
    // Forward: a needed node depends on wrt when one of its inputs does.
    for (int64_t id = wrt; id <= loss; ++id) {
      if (!needed[size_t(id - wrt)]) continue;
      bool dep = id == wrt;
      const Node& n = nodes_[size_t(id)];
      for (int64_t in : n.inputs) dep = dep || (in >= wrt && above[size_t(in - wrt)]);
      for (int64_t in : n.made_from)
        if (in >= wrt && above[size_t(in - wrt)]) {
          *error = "grad: the loss depends on x through '" + n.label + "', a host operation the "
                   "gradient does not flow through (use kernels between x and the loss)";
          return false;
        }
      above[size_t(id - wrt)] = dep;
      if (dep) on_path.push_back(id);
    }
  }
  if (on_path.empty() || on_path.back() != loss) {  // loss does not depend on wrt: zeros
    int64_t z;
    if (!create(Builtin::Zeros, nodes_[size_t(wrt)].shape, {}, &z, error)) return false;
    bw.grads[wrt] = z;
    bw.done.insert(wrt);
    *out = z;
    return true;
  }
  if (!bw.grads.count(loss)) {  // d sum(loss) / d loss: ones
    int64_t seed;
    if (!create(Builtin::Ones, nodes_[size_t(loss)].shape, {}, &seed, error)) return false;
    bw.grads[loss] = seed;
    bw.done.insert(loss);
  }
  const std::set<int64_t> done_before = bw.done;
  // Reverse topological order (ids are): a node's gradient is complete before it is used,
  // since every consumer on the path has a larger id.
  for (size_t k = on_path.size(); k-- > 0;) {
    int64_t id = on_path[k];
    Node n = nodes_[size_t(id)];  // a copy: adding nodes may move the table's storage
    if (n.kind != NodeKind::Kernel || !n.kernel) continue;
    auto g = bw.grads.find(id);
    if (g == bw.grads.end()) continue;
    int64_t dout = g->second;
    for (size_t p = 0; p < n.inputs.size(); ++p) {
      int64_t x = n.inputs[p];
      if (x < wrt || !above[size_t(x - wrt)] || done_before.count(x)) continue;
      const Adjoint* a = adjoint(*n.kernel, p, error);
      if (!a) return false;
      if (a->zero) continue;
      std::vector<int64_t> args;
      for (size_t q : a->inputs) args.push_back(n.inputs[q]);
      args.push_back(dout);
      int64_t contribution;
      if (!call_kernel(*a->kernel(), args, &contribution, error)) return false;
      nodes_[size_t(contribution)].backward = true;
      auto have = bw.grads.find(x);
      if (have == bw.grads.end()) {
        bw.grads[x] = contribution;
        continue;
      }
      const KernelDecl* acc = accumulator(nodes_[size_t(x)].shape.size(), error);
      int64_t sum;
      if (!acc || !call_kernel(*acc, {have->second, contribution}, &sum, error)) return false;
      nodes_[size_t(sum)].backward = true;
      bw.grads[x] = sum;
    }
  }
  for (int64_t id : on_path) bw.done.insert(id);
  *out = bw.grads.at(wrt);
  return true;
}

bool GraphRuntime::param(int64_t t, int64_t* out, std::string* error) {
  if (!valid(t)) {
    *error = "param: argument is not a tensor";
    return false;
  }
  std::shared_ptr<const Tensor> v = value(t, error);
  if (!v) return false;
  Node n;
  n.kind = NodeKind::Input;
  n.label = "param";
  n.shape = nodes_[size_t(t)].shape;
  n.value = std::move(v);
  n.tape = true;
  *out = add_node(std::move(n));
  return true;
}

void GraphRuntime::backward_roots(const std::vector<int64_t>& roots,
                                  const std::function<void(int64_t)>& push) {
  if (backward_.empty()) return;
  std::set<int64_t> held(roots.begin(), roots.end());
  held.insert(pinned_.begin(), pinned_.end());
  for (const auto& [loss, bw] : backward_)
    if (held.count(loss))
      for (const auto& [id, g] : bw.grads) push(g);
}

std::vector<int64_t> GraphRuntime::shared_pending(const std::vector<int64_t>& all,
                                                  int64_t tensor) const {
  std::vector<int64_t> out;
  auto pending_in_all = [&](int64_t id) {
    return std::binary_search(all.begin(), all.end(), id) && !nodes_[size_t(id)].value;
  };
  int64_t lo = -1;
  for (int64_t id : all)
    if (!nodes_[size_t(id)].value) {
      lo = id;
      break;
    }
  if (lo < 0) return out;
  for (size_t i = size_t(lo); i < nodes_.size(); ++i) {
    if (freed_[i] || nodes_[i].value || std::binary_search(all.begin(), all.end(), int64_t(i)))
      continue;
    for (int64_t in : nodes_[i].inputs)
      if (in >= lo && in != tensor && pending_in_all(in)) out.push_back(in);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void GraphRuntime::prune_backward() {
  for (auto it = backward_.begin(); it != backward_.end();)
    it = valid(it->first) ? std::next(it) : backward_.erase(it);
}

namespace {

struct Written {
  int kernels = 0;
  uint64_t bytes = 0;
};

Written written(const Graph& g, bool backward) {
  Written w;
  for (const auto& n : g.nodes)
    if (n.kind == NodeKind::Kernel && n.backward == backward) {
      ++w.kernels;
      w.bytes += bytes_of(n);
    }
  return w;
}

// The forward tensors the backward kernels of g read: their count and bytes.
Written tape_of(const Graph& g) {
  std::set<int64_t> read;
  for (const auto& n : g.nodes)
    if (n.backward)
      for (int64_t in : n.inputs) read.insert(in);
  Written w;
  for (const auto& n : g.nodes)
    if (!n.backward && read.count(n.id)) {
      ++w.kernels;
      w.bytes += bytes_of(n);
    }
  return w;
}

}  // namespace

std::string backward_memory_plan(const Evaluation& ev) {
  Written fb = written(ev.before, false), bb = written(ev.before, true);
  Written fa = written(ev.executed, false), ba = written(ev.executed, true);
  if (bb.kernels == 0 && ba.kernels == 0) return "";
  auto cell = [](const Written& w) {
    return std::to_string(w.kernels) + " kernel" + (w.kernels == 1 ? "" : "s") + ", " + bytes_text(w.bytes);
  };
  auto row = [](std::string a, std::string b, const std::string& c) {  // columns at 2, 17, 43
    a.resize(std::max<size_t>(a.size(), 15), ' ');
    b.resize(std::max<size_t>(b.size(), 26), ' ');
    return "  " + a + b + c + "\n";
  };
  Written tb = tape_of(ev.before), ta = tape_of(ev.executed);
  std::string s = "memory plan of the last evaluation (what its kernels wrote to memory):\n";
  s += row("", "forward", "backward");
  s += row("as built", cell(fb), cell(bb));
  s += row("after passes", cell(fa), cell(ba));
  s += "  tape: " + std::to_string(ta.kernels) + " forward tensor" + (ta.kernels == 1 ? "" : "s") +
       " the backward kernels read, " + bytes_text(ta.bytes) + " (" + bytes_text(tb.bytes) + " as built)\n";
  return s;
}

}  // namespace descent::tensor
