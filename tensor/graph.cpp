// The dataflow graph: printers and the three passes (fold_constants, fuse_elementwise,
// eliminate_dead_code). See graph.h for what each promises.
#include "tensor/graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "tensor/schedule.h"

namespace descent::tensor {

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Constant: return "const";
    case NodeKind::Input: return "input";
    case NodeKind::Kernel: return "kernel";
  }
  return "?";
}

int Graph::index_of(int64_t id) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id) return int(i);
  return -1;
}

const Node* Graph::find(int64_t id) const {
  int i = index_of(id);
  return i < 0 ? nullptr : &nodes[size_t(i)];
}

int Graph::num_kernels() const {
  int n = 0;
  for (const auto& node : nodes) n += node.kind == NodeKind::Kernel;
  return n;
}

// ---- Printers -------------------------------------------------------------------------

static std::string node_ref(int64_t id) { return "%" + std::to_string(id); }

std::string graph_to_text(const Graph& g) {
  std::string s;
  for (const auto& n : g.nodes) {
    s += node_ref(n.id) + " = ";
    if (n.kind == NodeKind::Kernel) {
      s += n.label + "(";
      for (size_t i = 0; i < n.inputs.size(); ++i) s += (i ? ", " : "") + node_ref(n.inputs[i]);
      s += ")";
    } else {
      s += std::string(node_kind_name(n.kind)) + " " + n.label;
    }
    s += "  " + shape_text(n.shape);
    if (n.backward) s += "  (backward)";
    // Inputs the kernel reads re-laid out (transform_layout), made once per input tensor.
    for (const auto& p : n.packs) s += "  [" + p.buffer + ": made once per tensor]";
    s += "\n";
  }
  s += "outputs:";
  for (int64_t id : g.outputs) s += " " + node_ref(id);
  return s + "\n";
}

std::string graph_to_dot(const Graph& g, const std::string& title) {
  std::string quoted;
  for (char c : title) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  std::string s = "digraph \"" + quoted + "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  for (const auto& n : g.nodes) {
    bool out = std::find(g.outputs.begin(), g.outputs.end(), n.id) != g.outputs.end();
    s += "  n" + std::to_string(n.id) + " [label=\"" + node_ref(n.id) + " " + n.label + "\"";
    if (n.kind == NodeKind::Kernel && n.backward)  // the backward pass, in the views' orange
      s += ", shape=box, style=filled, fillcolor=\"#f6c38b\"";
    else if (n.kind == NodeKind::Kernel) s += ", shape=box";
    else if (n.kind == NodeKind::Constant)
      s += ", shape=ellipse, style=filled, fillcolor=lightgrey";
    else s += ", shape=ellipse";
    if (out) s += ", peripheries=2";
    s += "];\n";
  }
  std::unordered_map<int64_t, const Node*> by_id;
  for (const auto& n : g.nodes) by_id[n.id] = &n;
  for (const auto& n : g.nodes)
    for (int64_t in : n.inputs) {
      const Node* src = by_id.count(in) ? by_id[in] : nullptr;
      s += "  n" + std::to_string(in) + " -> n" + std::to_string(n.id) + " [label=\"" +
           (src ? shape_text(src->shape) : std::string("?")) + "\"];\n";
    }
  return s + "}\n";
}

// ---- Small helpers over the loop-nest IR ------------------------------------------------

namespace {

// Total block executions of a function: the product of the loop extents around each block,
// summed. What constant folding would cost in the reference interpreter.
int64_t work_estimate(const tir::PrimFunc& f) {
  tir::PrimFunc copy = f;
  int64_t total = 0;
  for (const auto& site : tir::blocks(copy)) {
    int64_t n = 1;
    for (const tir::Stmt* loop : site.loops) {
      n *= std::max<int64_t>(loop->extent, 1);
      if (n > (int64_t(1) << 40)) return n;
    }
    total += n;
    if (total > (int64_t(1) << 40)) return total;
  }
  return total;
}

void remap_expr(tir::Expr& e, const std::vector<int>& map) {
  if (e.kind == tir::ExprKind::Load && e.buffer >= 0) e.buffer = map[size_t(e.buffer)];
  for (auto& a : e.args)
    if (a) remap_expr(*a, map);
}

// Rewrites every buffer index in a statement tree (Loads, Stores, Allocates) through map.
void remap_stmt(tir::Stmt& s, const std::vector<int>& map) {
  if ((s.kind == tir::StmtKind::Store || s.kind == tir::StmtKind::Allocate) && s.buffer >= 0)
    s.buffer = map[size_t(s.buffer)];
  for (auto& i : s.indices)
    if (i) remap_expr(*i, map);
  if (s.value) remap_expr(*s.value, map);
  if (s.predicate) remap_expr(*s.predicate, map);
  for (auto& it : s.iters)
    if (it.binding) remap_expr(*it.binding, map);
  if (s.init) remap_stmt(*s.init, map);
  if (s.body) remap_stmt(*s.body, map);
  for (auto& c : s.stmts)
    if (c) remap_stmt(*c, map);
}

void rename_blocks(tir::Stmt& s, const std::map<std::string, std::string>& names) {
  if (s.kind == tir::StmtKind::Block) {
    auto it = names.find(s.name);
    if (it != names.end()) s.name = it->second;
  }
  if (s.init) rename_blocks(*s.init, names);
  if (s.body) rename_blocks(*s.body, names);
  for (auto& c : s.stmts)
    if (c) rename_blocks(*c, names);
}

bool stmt_writes(const tir::Stmt& s, int buffer) {
  if (s.kind == tir::StmtKind::Store && s.buffer == buffer) return true;
  if (s.init && stmt_writes(*s.init, buffer)) return true;
  if (s.body && stmt_writes(*s.body, buffer)) return true;
  for (const auto& c : s.stmts)
    if (c && stmt_writes(*c, buffer)) return true;
  return false;
}

// True when every Load of `buffer` in e indexes it exactly by `vars`, in order: the
// consumer reads the producer's element at its own position and nowhere else.
bool loads_are_identity(const tir::Expr& e, int buffer, const std::vector<std::string>& vars) {
  if (e.kind == tir::ExprKind::Load && e.buffer == buffer) {
    if (e.args.size() != vars.size()) return false;
    for (size_t i = 0; i < vars.size(); ++i)
      if (!e.args[i] || e.args[i]->kind != tir::ExprKind::Var || e.args[i]->name != vars[i])
        return false;
    return true;
  }
  for (const auto& a : e.args)
    if (a && !loads_are_identity(*a, buffer, vars)) return false;
  return true;
}

bool stmt_loads_are_identity(const tir::Stmt& s, int buffer,
                             const std::vector<std::string>& vars) {
  for (const auto& i : s.indices)
    if (i && !loads_are_identity(*i, buffer, vars)) return false;
  if (s.value && !loads_are_identity(*s.value, buffer, vars)) return false;
  if (s.predicate && !loads_are_identity(*s.predicate, buffer, vars)) return false;
  for (const auto& it : s.iters)
    if (it.binding && !loads_are_identity(*it.binding, buffer, vars)) return false;
  if (s.init && !stmt_loads_are_identity(*s.init, buffer, vars)) return false;
  if (s.body && !stmt_loads_are_identity(*s.body, buffer, vars)) return false;
  for (const auto& c : s.stmts)
    if (c && !stmt_loads_are_identity(*c, buffer, vars)) return false;
  return true;
}

// Why a kernel is not elementwise with respect to parameter `param`, or "" when it is: one
// block, spatial axes only, reading that parameter only at the element it writes.
std::string not_elementwise(const tir::PrimFunc& f, const std::vector<int>& params) {
  tir::PrimFunc copy = f;
  auto sites = tir::blocks(copy);
  if (sites.size() != 1) return "it has " + std::to_string(sites.size()) + " blocks";
  const tir::Stmt& block = *sites[0].block;
  std::vector<std::string> vars;
  for (const auto& it : block.iters) {
    if (it.kind == tir::IterKind::Reduce) return "block '" + block.name + "' reduces";
    vars.push_back(it.name);
  }
  for (int p : params)
    if (!stmt_loads_are_identity(block, f.params[size_t(p)], vars))
      return "block '" + block.name + "' reads " + f.buffers[size_t(f.params[size_t(p)])].name +
             " at other positions";
  return "";
}

std::string unique_name(const std::string& want, const std::set<std::string>& taken) {
  if (!taken.count(want)) return want;
  for (int k = 1;; ++k) {
    std::string s = want + "_" + std::to_string(k);
    if (!taken.count(s)) return s;
  }
}

// The loop to move a consumer under: walking from the outermost loop around the producer's
// block inward, the last loop that a spatial axis uses before the first loop a reduce axis
// uses. Below a reduce loop the producer's element is not final yet.
std::string innermost_spatial_loop(const tir::Stmt& block, const std::vector<tir::Stmt*>& loops) {
  std::string found;
  for (const tir::Stmt* loop : loops) {
    bool spatial = false, reduce = false;
    for (const auto& it : block.iters) {
      if (!it.binding || !tir::uses_var(*it.binding, loop->var)) continue;
      (it.kind == tir::IterKind::Reduce ? reduce : spatial) = true;
    }
    if (reduce) break;
    if (spatial) found = loop->var;
  }
  return found;
}

}  // namespace

// ---- Fusion of two loop nests ---------------------------------------------------------

bool fuse_funcs(const tir::PrimFunc& producer, const std::vector<int64_t>& producer_inputs,
                int64_t producer_id, const tir::PrimFunc& consumer,
                const std::vector<int64_t>& consumer_inputs, const std::string& name,
                const std::string& temp_name, tir::PrimFunc* out, std::vector<int64_t>* inputs,
                bool* moved, std::string* error) {
  *moved = false;
  if (producer_inputs.size() != producer.params.size() ||
      consumer_inputs.size() != consumer.params.size()) {
    *error = "fuse: argument count does not match the functions' parameters";
    return false;
  }
  if (producer.output < 0 || consumer.output < 0 || !producer.body || !consumer.body) {
    *error = "fuse: a function has no output or no body";
    return false;
  }
  // The new buffer list, inputs first: P's parameters, then E's parameters fed by nodes P
  // does not already take; then P's other buffers (its output now a Temp); then E's.
  tir::PrimFunc f;
  f.name = name;
  std::vector<int> pmap(producer.buffers.size(), -1), emap(consumer.buffers.size(), -1);
  std::set<std::string> taken;
  std::vector<int64_t> arg_nodes;
  auto add = [&](tir::Buffer b, const std::string& want) {
    b.name = unique_name(want, taken);
    taken.insert(b.name);
    f.buffers.push_back(b);
    return int(f.buffers.size() - 1);
  };
  for (size_t k = 0; k < producer.params.size(); ++k) {
    int b = producer.params[k];
    pmap[size_t(b)] = add(producer.buffers[size_t(b)], producer.buffers[size_t(b)].name);
    f.params.push_back(pmap[size_t(b)]);
    arg_nodes.push_back(producer_inputs[k]);
  }
  std::vector<size_t> reads_producer;  // E's parameter positions fed by P
  for (size_t k = 0; k < consumer.params.size(); ++k) {
    int b = consumer.params[k];
    if (consumer_inputs[k] == producer_id) {
      reads_producer.push_back(k);
      continue;
    }
    auto same = std::find(arg_nodes.begin(), arg_nodes.end(), consumer_inputs[k]);
    if (same != arg_nodes.end()) {
      emap[size_t(b)] = f.params[size_t(same - arg_nodes.begin())];
      continue;
    }
    emap[size_t(b)] = add(consumer.buffers[size_t(b)], consumer.buffers[size_t(b)].name);
    f.params.push_back(emap[size_t(b)]);
    arg_nodes.push_back(consumer_inputs[k]);
  }
  if (reads_producer.empty()) {
    *error = "fuse: the consumer does not read the producer";
    return false;
  }
  for (size_t b = 0; b < producer.buffers.size(); ++b) {
    if (pmap[b] >= 0) continue;
    tir::Buffer buf = producer.buffers[b];
    std::string want = buf.name;
    if (int(b) == producer.output) {
      buf.role = tir::BufferRole::Temp;
      want = temp_name;
    }
    pmap[b] = add(buf, want);
  }
  for (size_t k : reads_producer)
    emap[size_t(consumer.params[k])] = pmap[size_t(producer.output)];
  for (size_t b = 0; b < consumer.buffers.size(); ++b)
    if (emap[b] < 0) emap[b] = add(consumer.buffers[b], consumer.buffers[b].name);
  f.output = emap[size_t(consumer.output)];

  // Blocks: P's block writing its output takes the temp's name (the seed's linear_relu
  // reads as "block linear, then block out"); E's blocks are renamed where they collide.
  tir::StmtPtr pbody = tir::clone(*producer.body);
  tir::StmtPtr ebody = tir::clone(*consumer.body);
  remap_stmt(*pbody, pmap);
  remap_stmt(*ebody, emap);
  std::vector<std::string> pblocks = sched::block_names(producer);
  std::set<std::string> block_taken(pblocks.begin(), pblocks.end());
  std::string producer_block;  // the last block of P that writes its output
  {
    tir::PrimFunc probe = producer;
    for (const auto& site : tir::blocks(probe))
      if (stmt_writes(*site.block, producer.output)) producer_block = site.block->name;
  }
  const std::string& renamed = f.buffers[size_t(pmap[size_t(producer.output)])].name;
  if (!producer_block.empty() && !block_taken.count(renamed)) {
    rename_blocks(*pbody, {{producer_block, renamed}});
    block_taken.erase(producer_block);
    block_taken.insert(renamed);
    producer_block = renamed;
  }
  std::map<std::string, std::string> erename;
  for (const auto& b : sched::block_names(consumer)) {
    std::string n = unique_name(b, block_taken);
    block_taken.insert(n);
    if (n != b) erename[b] = n;
  }
  rename_blocks(*ebody, erename);

  std::vector<tir::StmtPtr> seq;
  for (tir::StmtPtr* part : {&pbody, &ebody}) {
    if ((*part)->kind == tir::StmtKind::Seq)
      for (auto& s : (*part)->stmts) seq.push_back(std::move(s));
    else
      seq.push_back(std::move(*part));
  }
  f.body = tir::make_seq(std::move(seq));
  std::string why;
  if (!tir::verify(f, &why)) {
    *error = "fuse: the concatenated function is malformed: " + why;
    return false;
  }

  // Move E's block (there is one) inside P's innermost spatial loop.
  std::vector<std::string> eblocks = sched::block_names(consumer);
  if (eblocks.size() == 1 && !producer_block.empty()) {
    std::string eblock = erename.count(eblocks[0]) ? erename[eblocks[0]] : eblocks[0];
    tir::PrimFunc moved_f = f;
    std::string loop;
    for (const auto& site : tir::blocks(moved_f))
      if (site.block->name == producer_block)
        loop = innermost_spatial_loop(*site.block, site.loops);
    std::string err;
    if (!loop.empty() &&
        sched::reverse_compute_at(moved_f, eblock, producer_block + "." + loop, &err) &&
        tir::verify(moved_f, &err)) {
      f = std::move(moved_f);
      *moved = true;
    }
  }
  *out = std::move(f);
  *inputs = std::move(arg_nodes);
  return true;
}

// ---- Passes ---------------------------------------------------------------------------

// Beyond this many block executions, folding would make compilation itself slow (the
// reference interpreter runs it); such a kernel is left for the device.
static constexpr int64_t kMaxFoldWork = int64_t(1) << 22;

Graph fold_constants(const Graph& g, PassStats* stats) {
  PassStats local;
  PassStats& st = stats ? *stats : local;
  st = PassStats{};
  st.name = "fold_constants";
  Graph out = g;
  std::unordered_map<int64_t, size_t> index;
  for (size_t i = 0; i < out.nodes.size(); ++i) index[out.nodes[i].id] = i;
  std::vector<std::string> folded;
  for (auto& n : out.nodes) {
    if (n.kind != NodeKind::Kernel || !n.func) continue;
    std::vector<const Tensor*> args;
    bool all_constant = true;
    for (int64_t in : n.inputs) {
      auto it = index.find(in);
      const Node* src = it == index.end() ? nullptr : &out.nodes[it->second];
      if (!src || src->kind != NodeKind::Constant || !src->value) {
        all_constant = false;
        break;
      }
      args.push_back(src->value.get());
    }
    if (!all_constant || work_estimate(*n.func) > kMaxFoldWork) continue;
    auto value = std::make_shared<Tensor>();
    std::string error;
    if (!tir::interpret(*n.func, args, value.get(), &error)) {
      st.error = "cannot fold " + node_ref(n.id) + " = " + n.label + ": " + error;
      st.changed = false;
      st.summary = st.error;
      return g;
    }
    n.kind = NodeKind::Constant;
    n.value = std::move(value);
    n.inputs.clear();
    n.func.reset();
    n.kernel = nullptr;
    folded.push_back(node_ref(n.id) + " " + n.label);
  }
  st.changed = !folded.empty();
  if (folded.empty()) {
    st.summary = "nothing to fold";
  } else {
    st.summary = "folded";
    for (size_t i = 0; i < folded.size(); ++i) st.summary += (i ? ", " : " ") + folded[i];
  }
  return out;
}

// Beyond this many blocks a fused function stops growing: a long chain of elementwise calls
// (a loop that adds to an accumulator a thousand times) would otherwise become one enormous
// loop body that is slow to verify and to compile, for no gain in memory traffic worth it.
static constexpr size_t kMaxFusedBlocks = 32;

Graph fuse_elementwise(const Graph& g, PassStats* stats) {
  PassStats local;
  PassStats& st = stats ? *stats : local;
  st = PassStats{};
  st.name = "fuse_elementwise";
  Graph out = g;
  std::unordered_map<int64_t, size_t> index;          // node id -> position in out.nodes
  std::unordered_map<int64_t, std::set<int64_t>> users;  // node id -> the ids that read it
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    index[out.nodes[i].id] = i;
    for (int64_t in : out.nodes[i].inputs) users[in].insert(out.nodes[i].id);
  }
  std::set<int64_t> outputs(out.outputs.begin(), out.outputs.end());
  std::vector<bool> removed(out.nodes.size(), false);
  std::vector<std::string> done;
  // One sweep in topological order: a fused node stays where its consumer was, so it is
  // already fused when a later consumer looks at it (chains fuse link by link).
  for (size_t ei = 0; ei < out.nodes.size(); ++ei) {
    Node& e = out.nodes[ei];
    if (e.kind != NodeKind::Kernel || !e.func) continue;
    for (int64_t pid : std::vector<int64_t>(e.inputs)) {
      auto pit = index.find(pid);
      if (pit == index.end() || removed[pit->second]) continue;
      const Node& p = out.nodes[pit->second];
      if (p.kind != NodeKind::Kernel || !p.func || p.shape != e.shape) continue;
      if (outputs.count(pid) || users[pid].size() != 1) continue;
      std::vector<int> from_p;
      for (size_t k = 0; k < e.inputs.size(); ++k)
        if (e.inputs[k] == pid) from_p.push_back(int(k));
      if (!not_elementwise(*e.func, from_p).empty()) continue;
      if (sched::block_names(*p.func).size() + 1 > kMaxFusedBlocks) continue;

      auto fused = std::make_shared<tir::PrimFunc>();
      std::vector<int64_t> inputs;
      bool moved = false;
      std::string label = p.label + "_" + e.label, error;
      if (!fuse_funcs(*p.func, p.inputs, pid, *e.func, e.inputs, label, p.label, fused.get(),
                      &inputs, &moved, &error))
        continue;  // not fusable after all: both nodes stay as they are
      done.push_back(p.label + " + " + e.label + " -> " + label +
                     (moved ? "" : " (loops not merged)"));
      for (int64_t in : p.inputs) users[in].erase(pid);
      for (int64_t in : e.inputs) users[in].erase(e.id);
      for (int64_t in : inputs) users[in].insert(e.id);
      users.erase(pid);
      removed[pit->second] = true;
      e.label = label;
      e.backward = e.backward || p.backward;
      if (p.schedule == "user") e.schedule = "user";  // the user's steps are in the fused nest
      e.inputs = std::move(inputs);
      e.kernel = nullptr;
      e.version = 0;
      e.func = std::move(fused);
      e.value.reset();
      break;  // e is now a multi-block function: no longer an elementwise consumer
    }
  }
  if (!done.empty()) {
    std::vector<Node> kept;
    for (size_t i = 0; i < out.nodes.size(); ++i)
      if (!removed[i]) kept.push_back(std::move(out.nodes[i]));
    out.nodes = std::move(kept);
  }
  st.changed = !done.empty();
  if (done.empty()) {
    st.summary = "nothing to fuse";
  } else {
    st.summary = "fused";
    for (size_t i = 0; i < done.size(); ++i) st.summary += (i ? ", " : " ") + done[i];
  }
  return out;
}

Graph eliminate_dead_code(const Graph& g, PassStats* stats) {
  PassStats local;
  PassStats& st = stats ? *stats : local;
  st = PassStats{};
  st.name = "eliminate_dead_code";
  std::set<int64_t> live(g.outputs.begin(), g.outputs.end());
  // Backwards over a topological order: a node's users are all seen before it.
  for (size_t i = g.nodes.size(); i-- > 0;)
    if (live.count(g.nodes[i].id))
      for (int64_t in : g.nodes[i].inputs) live.insert(in);
  Graph out;
  out.outputs = g.outputs;
  std::vector<std::string> removed;
  for (const auto& n : g.nodes) {
    if (live.count(n.id)) out.nodes.push_back(n);
    else removed.push_back(node_ref(n.id));
  }
  st.changed = !removed.empty();
  if (removed.empty()) {
    st.summary = "nothing dead";
  } else {
    st.summary = "removed";
    for (size_t i = 0; i < removed.size(); ++i) st.summary += (i ? ", " : " ") + removed[i];
  }
  return out;
}

const std::vector<GraphPass>& graph_passes() {
  static const std::vector<GraphPass> passes = {
      {"fold_constants", fold_constants},
      {"fuse_elementwise", fuse_elementwise},
      {"eliminate_dead_code", eliminate_dead_code},
  };
  return passes;
}

}  // namespace descent::tensor
