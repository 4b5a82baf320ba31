// GraphRuntime's replayed plans: the key naming a graph's structure, and running a kept
// plan again on new tensors as its list of launches, without lowering, passes, compile-cache
// lookups or graph copies; the views' graphs are made from the plan only when asked for.
// Making a plan, its list of launches included, is evaluate_unguarded's (runtime.cpp).
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/runtime.h"

namespace descent::tensor {

// Position p of a node is its place in `all`; inputs are named by position, so the same
// program run again on new tensors gives the same key. The key is built on every evaluation
// (a model in a loop asks for one per batch), so it is bytes, not text: each number as its
// 8 bytes, no formatting, and positions found by a scan of the few nodes of a graph.
std::string GraphRuntime::plan_key(const std::vector<int64_t>& all, int64_t tensor) const {
  std::unordered_map<int64_t, size_t> many;
  if (all.size() > 32)
    for (size_t p = 0; p < all.size(); ++p) many[all[p]] = p;
  auto pos = [&](int64_t id) -> int64_t {
    if (all.size() > 32) return static_cast<int64_t>(many.at(id));
    for (size_t p = 0; p < all.size(); ++p)
      if (all[p] == id) return static_cast<int64_t>(p);
    return -1;
  };
  std::string key;
  key.reserve(48 + all.size() * 64);
  auto put = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  key += device_;
  key += '\0';
  put(threads_);
  put(passes_on_ ? 1 : 0);
  put(auto_scheduler_ ? auto_generation_ : 0);
  put(pos(tensor));
  for (int64_t id : all) {
    const Node& n = nodes_[size_t(id)];
    if (n.value) {
      // Data fed in. zeros/ones/arange of a shape are the same data every time; any other
      // constant (a fold's result) may be folded further into the plan, so only this very
      // tensor matches.
      bool same_data = n.label == "zeros" || n.label == "ones" || n.label == "arange";
      if (n.kind == NodeKind::Constant) {
        key += 'C';
        key += n.label;
        key += '\0';
        put(same_data ? 0 : static_cast<int64_t>(uintptr_t(n.value.get())));
      } else {
        key += 'I';
      }
    } else {
      key += 'K';
      put(static_cast<int64_t>(uintptr_t(n.kernel)));
      put(n.version);
      put(static_cast<int64_t>(n.inputs.size()));
      for (int64_t in : n.inputs) put(pos(in));
      if (!schedules_.empty()) {
        auto sched = schedules_.find(n.label);
        if (sched != schedules_.end()) key += std::to_string(sched->second.version);
        key += '\0';
      }
    }
    put(static_cast<int64_t>(n.shape.size()));
    for (int64_t d : n.shape) put(d);
  }
  return key;
}

// The plan's ids -> this evaluation's, and a graph of the plan renamed onto them. A leaf
// (data fed in) takes this evaluation's data; a constant the passes folded keeps the plan's.
namespace {
Graph renamed(const Graph& plan_graph, const std::unordered_map<int64_t, int64_t>& now,
              const NodeTable& nodes) {
  auto map_id = [&](int64_t id) {
    auto it = now.find(id);
    return it == now.end() ? id : it->second;
  };
  Graph g = plan_graph;
  for (auto& n : g.nodes) {
    n.id = map_id(n.id);
    for (auto& in : n.inputs) in = map_id(in);
    if (!n.value && n.kind != NodeKind::Kernel) n.value = nodes[size_t(n.id)].value;
  }
  for (auto& o : g.outputs) o = map_id(o);
  return g;
}
std::unordered_map<int64_t, int64_t> id_map(const std::vector<int64_t>& plan_ids,
                                            const std::vector<int64_t>& all) {
  std::unordered_map<int64_t, int64_t> now;
  for (size_t p = 0; p < all.size(); ++p) now[plan_ids[p]] = all[p];
  return now;
}
}  // namespace

bool GraphRuntime::replay(const std::shared_ptr<const Plan>& plan, const std::vector<int64_t>& all,
                          int64_t tensor, std::string* error) {
  last_.before = Graph{};
  last_.executed = Graph{};
  last_.passes.clear();
  last_.kernels.clear();
  last_.ok = true;
  last_.error.clear();
  last_.replayed = true;
  last_.device = device_;
  pending_plan_ = plan;
  pending_ids_ = all;
  ++replays_;
  // The plan's launches on this evaluation's tensors: each kernel reads its inputs' values
  // from the table (the leaves', and those of kernels that ran before it) and its result
  // goes straight back there. The graphs for the views are made only if someone asks.
  const auto& nodes = plan->eval.executed.nodes;
  std::vector<const Tensor*> args;
  std::vector<std::shared_ptr<const Tensor>> values;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    int64_t id = all[plan->position[k]];
    if (n.kind != NodeKind::Kernel) {
      if (n.value) store_value(id, n.value, n.kind);  // a constant the passes folded
      continue;
    }
    if (interrupt_ && interrupt_->load()) {
      *error = last_.error = "interrupted";
      last_.ok = false;
      return false;
    }
    args.clear();
    values.clear();
    for (size_t in : plan->input_nodes[k]) {
      const Node& src = nodes[in];
      std::shared_ptr<const Tensor> v = src.value ? src.value : nodes_[size_t(all[plan->position[in]])].value;
      if (!v) {
        *error = last_.error = "internal error: input %" + std::to_string(all[plan->position[in]]) +
                               " of " + n.label + " has no value";
        last_.ok = false;
        return false;
      }
      args.push_back(v.get());
      values.push_back(std::move(v));
    }
    for (const LayoutPrologue& p : n.packs) {
      const Tensor* packed = nullptr;
      if (!packed_input(n, p, values, &packed, error)) {
        last_.ok = false;
        last_.error = *error;
        return false;
      }
      args.push_back(packed);
    }
    auto out = std::make_shared<Tensor>();
    if (!run_kernel(n, plan->keys[k], args, out.get(), error, &plan->compiled[k])) {
      last_.ok = false;
      last_.error = *error;
      return false;
    }
    store_value(id, out, NodeKind::Kernel);
    last_.kernels.push_back(n.func);
  }
  if (!nodes_[size_t(tensor)].value) {
    *error = last_.error = "internal error: the replayed plan did not compute the tensor";
    last_.ok = false;
    return false;
  }
  return true;
}

void GraphRuntime::materialize() const {
  if (!pending_plan_) return;
  std::shared_ptr<const Plan> plan = std::move(pending_plan_);
  pending_plan_.reset();
  auto now = id_map(plan->ids, pending_ids_);
  last_.before = renamed(plan->eval.before, now, nodes_);
  last_.executed = renamed(plan->eval.executed, now, nodes_);
  for (auto& n : last_.executed.nodes)
    if (n.kind == NodeKind::Kernel) n.value = nodes_[size_t(n.id)].value;  // null once collected
  last_.passes = plan->eval.passes;
  for (size_t i = 0; i < last_.passes.size(); ++i)
    last_.passes[i].after = renamed(plan->eval.passes[i].after, now, nodes_);
}

}  // namespace descent::tensor
