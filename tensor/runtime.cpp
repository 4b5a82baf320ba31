// GraphRuntime: tensor handles, lazy kernel calls, and evaluation through the graph passes.
// Its memory (accounting, limits, collection) is runtime_memory.cpp; its installed schedules
// and lowering, runtime_schedules.cpp; replaying a kept plan, runtime_replay.cpp.
#include "tensor/runtime.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <new>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "lang/text.h"
#include "tensor/host_ops.h"
#include "tensor/lower.h"
#include "tensor/prelude_text.h"  // generated from prelude.ds (tensor/CMakeLists.txt)
#include "tensor/schedule.h"

namespace descent::tensor {

std::string_view prelude_source() { return kPreludeText; }

GraphRuntime::GraphRuntime() = default;
GraphRuntime::~GraphRuntime() = default;

int64_t GraphRuntime::add_node(Node n) {
  n.id = int64_t(nodes_.size());
  nodes_.push_back(std::move(n));
  freed_.push_back(0);
  account(nodes_.back());
  return nodes_.back().id;
}

int64_t GraphRuntime::add_tensor(Tensor t, const std::string& label) {
  Node n;
  n.kind = NodeKind::Input;
  n.label = label;
  n.shape = t.shape;
  n.value = std::make_shared<const Tensor>(std::move(t));
  return add_node(std::move(n));
}

// ---- Shapes and creation --------------------------------------------------------------

int64_t GraphRuntime::make_shape(const std::vector<int64_t>& dims) {
  shapes_.push_back(dims);
  return int64_t(shapes_.size() - 1);
}

const std::vector<int64_t>& GraphRuntime::shape_dims(int64_t shape_handle) const {
  if (shape_handle < 0 || size_t(shape_handle) >= shapes_.size()) return no_dims_;
  return shapes_[size_t(shape_handle)];
}

const std::vector<int64_t>& GraphRuntime::tensor_dims(int64_t tensor) const {
  return valid(tensor) ? nodes_[size_t(tensor)].shape : no_dims_;
}

bool GraphRuntime::create(Builtin which, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& args, int64_t* tensor, std::string* error) {
  if (!within_limit(std::string(builtin_name(which)), dims, error)) return false;
  auto t = std::make_shared<Tensor>();
  Node n;
  n.kind = NodeKind::Constant;
  bool ok = false;
  switch (which) {
    case Builtin::Zeros: ok = zeros(dims, t.get(), error); n.label = "zeros"; break;
    case Builtin::Ones: ok = ones(dims, t.get(), error); n.label = "ones"; break;
    case Builtin::Rand:
      if (args.size() != 1) {
        *error = "rand expects a shape and a seed";
        return false;
      }
      // Random data is an input, not a constant: folding a kernel over it would bake one
      // sample into the program.
      n.kind = NodeKind::Input;
      n.label = "rand";
      ok = tensor::rand(dims, args[0], t.get(), error);
      break;
    case Builtin::Full:
      if (args.size() != 1) {
        *error = "full expects a shape and a value";
        return false;
      }
      n.label = "full";
      ok = full(dims, float(full_value(args[0])), t.get(), error);
      break;
    case Builtin::Arange:
      if (dims.size() != 1) {
        *error = "arange expects one length";
        return false;
      }
      n.label = "arange";
      ok = arange(dims[0], t.get(), error);
      break;
    default:
      *error = std::string("'") + builtin_name(which) + "' does not create a tensor";
      return false;
  }
  if (!ok) return false;
  n.shape = t->shape;
  n.value = std::move(t);
  *tensor = add_node(std::move(n));
  return true;
}

// `path` as the program wrote it, resolved against the file base when it is relative.
static std::string resolve(const std::string& base, const std::string& path) {
  if (base.empty() || path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base) / path).string();
}

bool GraphRuntime::load(const std::string& written, int64_t* tensor, std::string* error) {
  std::string path = resolve(file_base_, written);
  // The file's size bounds its data: refuse before reading, not after the allocation.
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit_bytes_) {
    *error = "'" + path + "' holds " + bytes_text(size) + ", more than the tensor limit of " +
             bytes_text(limit_bytes_) + " (set it with :memory LIMIT or --tensor-limit)";
    return false;
  }
  Tensor t;
  if (!load_npy(path, &t, error)) return false;
  *tensor = add_tensor(std::move(t), "load");
  return true;
}

// ---- Kernel calls -----------------------------------------------------------------------

bool GraphRuntime::call_kernel(const KernelDecl& kernel, const std::vector<int64_t>& args,
                               int64_t* tensor, std::string* error) {
  if (args.size() != kernel.params.size()) {
    *error = "kernel '" + kernel.name + "' expects " + std::to_string(kernel.params.size()) +
             " arguments, got " + std::to_string(args.size());
    return false;
  }
  shape_key_.clear();
  shape_key_.push_back(int64_t(reinterpret_cast<uintptr_t>(&kernel)));
  for (int64_t a : args) {
    if (!valid(a)) {
      *error = "kernel '" + kernel.name + "': argument is not a tensor";
      return false;
    }
    const auto& dims = nodes_[size_t(a)].shape;
    shape_key_.push_back(int64_t(dims.size()));
    shape_key_.insert(shape_key_.end(), dims.begin(), dims.end());
  }
  std::vector<int64_t> shape;
  if (auto known = result_shapes_.find(shape_key_); known != result_shapes_.end()) {
    shape = known->second;
    // Valid when it was first worked out; the limit may have changed since (:memory).
    double bytes = sizeof(float);
    for (int64_t d : shape) bytes *= double(d);
    if (bytes > double(limit_bytes_) &&
        !within_limit("the result of '" + kernel.name + "'", shape, error))
      return false;
  } else {
    std::vector<std::vector<int64_t>> shapes;
    for (int64_t a : args) shapes.push_back(nodes_[size_t(a)].shape);
    Diagnostic d;
    if (!result_shape(kernel, shapes, &shape, &d)) {
      *error = d.message;
      return false;
    }
    // Checked now, at the call, where the student can see it: the kernel runs later.
    if (!within_limit("the result of '" + kernel.name + "'", shape, error)) return false;
    if (result_shapes_.size() >= 1024) result_shapes_.clear();  // ever-new shapes: start over
    result_shapes_.emplace(shape_key_, shape);
  }
  Node n;
  n.kind = NodeKind::Kernel;
  n.label = kernel.name;
  n.kernel = &kernel;
  n.inputs = args;
  n.shape = std::move(shape);
  for (int64_t a : args) n.tape = n.tape || nodes_[size_t(a)].tape;
  *tensor = add_node(std::move(n));
  return true;
}

// ---- Evaluation -------------------------------------------------------------------------

bool GraphRuntime::set_device(std::string_view name, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  Backend* b = backend_or_error(name, error);
  if (!b || !b->open(error)) return false;
  backend_ = b;
  device_ = b->name();
  DeviceSummary summary;
  std::string why;
  device_name_ = b->device(&summary, &why) ? summary.name : device_;
  return true;
}

// The compiled-kernel cache's key: the device, the thread count and the printed function.
std::string GraphRuntime::kernel_key(const Node& n) const {
  return device_ + "\n" + std::to_string(threads_) + "\n" + tir::print_script(*n.func);
}

bool GraphRuntime::run_kernel(const Node& n, const std::string& key,
                              const std::vector<const Tensor*>& args, Tensor* out,
                              std::string* error, Compiled** cached) {
  Backend* b = backend_ ? backend_ : &reference_backend();
  LaunchRecord rec;
  rec.kernel = n.label;
  rec.device = device_;
  rec.device_name = device_name_;
  rec.schedule = n.schedule;
  // A replayed plan remembers its kernels (compiled_ never drops an entry): no lookup by the
  // key, which is the kernel's whole printed nest.
  Compiled* c = cached ? *cached : nullptr;
  auto it = c ? compiled_.end() : compiled_.find(key);
  if (!c && it == compiled_.end()) {
    auto t0 = std::chrono::steady_clock::now();
    BackendOptions options;
    options.threads = threads_;
    options.interrupt = interrupt_;
    std::unique_ptr<CompiledKernel> k;
    std::string why;
    if (!b->compile(*n.func, options, &k, &why)) {
      *error = "kernel '" + n.label + "': " + device_ + " code generation failed: " + why;
      return false;
    }
    ++compilations_;
    // The cost (a walk of the nest) is the kernel's, not the launch's: counted once.
    it = compiled_.emplace(key, Compiled{std::move(k), kernel_cost(*n.func)}).first;
    rec.compiled = true;
    rec.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!c) c = &it->second;
  if (cached) *cached = c;
  rec.flops = c->cost.flops;
  rec.bytes = c->cost.bytes;
  std::string why;
  // Backends allocate their outputs as error values; a backend that lets std::bad_alloc out
  // (a container in its host code) still must not take the session down.
  try {
    KernelTiming t;
    auto t0 = std::chrono::steady_clock::now();
    if (c->kernel->run(args, out, &t, &why)) {
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // A build the backend did lazily on the first run is compiling, not the kernel.
      rec.compile_s += t.build_s;
      rec.seconds = t.kernel_s;
      rec.transfer_s = t.setup_s + t.download_s;
      times_.compile_s += rec.compile_s;
      times_.kernels_s += wall - t.build_s;
      launch_totals_.add(rec);
      if (launches_.size() < kLaunchLogLimit) launches_.push_back(rec);
      if (observer_) observer_(rec);
      return true;
    }
  } catch (const std::bad_alloc&) {
    why = out_of_memory_text(n.shape);
  } catch (const std::length_error&) {
    why = out_of_memory_text(n.shape);
  }
  // The interpreter's messages already name the block and buffer; others get the kernel.
  bool interrupted = why.rfind("interrupted", 0) == 0;
  *error = device_ == "ref" || interrupted ? why : "kernel '" + n.label + "' on " + device_ + ": " + why;
  return false;
}

// Every allocation below (graph copies, pass snapshots, kernel outputs) can fail; the caller
// gets an error value and the runtime stays usable, its table unchanged.
bool GraphRuntime::evaluate(int64_t tensor, std::string* error) {
  try {
    return evaluate_unguarded(tensor, error);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  std::string why = valid(tensor) ? out_of_memory_text(nodes_[size_t(tensor)].shape)
                                  : std::string("out of memory");
  last_.ok = false;
  last_.error = why;
  *error = why;
  return false;
}

bool GraphRuntime::evaluate_unguarded(int64_t tensor, std::string* error) {
  if (!valid(tensor)) {
    *error = "not a tensor";
    return false;
  }
  if (nodes_[size_t(tensor)].value) return true;

  // The pending nodes the request depends on. A node's inputs were created before it, so
  // ascending ids are a topological order. A model in a loop asks this once per batch:
  // marks in a table kept between calls (a generation number per node, nothing cleared)
  // rather than sets made and dropped each time.
  if (++mark_generation_ == 0) {
    std::fill(mark_.begin(), mark_.end(), 0);
    mark_generation_ = 1;
  }
  if (mark_.size() < nodes_.size()) mark_.resize(nodes_.size() + nodes_.size() / 2, 0);
  auto mark = [&](int64_t id) {  // false when already marked this time
    if (mark_[size_t(id)] == mark_generation_) return false;
    mark_[size_t(id)] = mark_generation_;
    return true;
  };
  std::vector<int64_t> all, leaf_ids;
  std::vector<int64_t> stack = {tensor};
  while (!stack.empty()) {
    int64_t id = stack.back();
    stack.pop_back();
    if (!mark(id)) continue;
    all.push_back(id);
    const Node& n = nodes_[size_t(id)];
    if (n.value) {
      leaf_ids.push_back(id);
      continue;
    }
    for (int64_t in : n.inputs) stack.push_back(in);
  }
  std::sort(all.begin(), all.end());
  std::sort(leaf_ids.begin(), leaf_ids.end());

  // The plan's names for the nodes: their order in a depth-first walk from the request,
  // inputs in parameter order. Unlike ids it does not depend on when each tensor was made
  // (reassigning x makes a newer tensor than w, and the same model). The same nodes as
  // `all`, so the walk marks with a new generation.
  std::vector<int64_t> canon;
  canon.reserve(all.size());
  {
    if (++mark_generation_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      mark_generation_ = 1;
    }
    std::vector<std::pair<int64_t, size_t>> walk = {{tensor, 0}};
    mark(tensor);
    while (!walk.empty()) {
      auto& [id, next] = walk.back();
      const Node& n = nodes_[size_t(id)];
      if (!n.value && next < n.inputs.size()) {
        int64_t in = n.inputs[next++];
        if (mark(in)) walk.push_back({in, 0});
        continue;
      }
      canon.push_back(id);
      walk.pop_back();
    }
  }

  // Training: a pending node of this request that a pending node outside it reads too is
  // kept (an output, so fusion keeps and stores it): the gradients of one loss, asked for one
  // at a time, then share their forward pass and backward chain instead of each recomputing it.
  std::vector<int64_t> keep;
  if (!backward_.empty()) keep = shared_pending(all, tensor);
  ++times_.evaluations;
  std::string key = plan_key(canon, tensor);
  if (!keep.empty()) {
    key += "|keep";
    for (int64_t id : keep)
      key += " " + std::to_string(std::find(canon.begin(), canon.end(), id) - canon.begin());
  }
  auto found = plans_.find(key);
  if (found != plans_.end()) return replay(found->second, canon, tensor, error);

  pending_plan_.reset();
  last_ = Evaluation{};
  last_.device = device_;
  auto t_lower = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& why) {
    last_.ok = false;
    last_.error = why;
    *error = why;
    return false;
  };
  Graph g;
  g.outputs = {tensor};
  g.outputs.insert(g.outputs.end(), keep.begin(), keep.end());
  for (int64_t id : all) {
    Node n = nodes_[size_t(id)];
    if (n.value) {
      // Already computed: data fed in. A folded value stays a Constant.
      if (n.kind == NodeKind::Kernel) n.kind = NodeKind::Input;
      n.inputs.clear();
      n.func.reset();
      n.kernel = nullptr;
    } else if (!lower_node(n, &n.func, error)) {
      return fail(*error);
    } else if (schedules_.count(n.label)) {
      n.schedule = "user";
    }
    g.nodes.push_back(std::move(n));
  }
  last_.before = g;
  auto t_passes = std::chrono::steady_clock::now();
  times_.lower_s += std::chrono::duration<double>(t_passes - t_lower).count();
  if (passes_on_) {
    for (const auto& pass : graph_passes()) {
      PassStats st;
      Graph next = pass.run(g, &st);
      if (!st.error.empty()) return fail(st.error);
      last_.passes.push_back({pass.name, st.changed, st.summary, next});
      g = std::move(next);
    }
  }
  times_.passes_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_passes).count();

  // The kernels nobody scheduled get the auto-scheduler's schedule, after fusion: the nest
  // that runs is the one it schedules.
  for (const auto& n : g.nodes) {
    if (n.kind != NodeKind::Kernel || !n.func || !n.schedule.empty() || tasks_.size() >= 256) continue;
    if (task_keys_.insert(n.label + "\n" + tir::print_script(*n.func)).second)
      tasks_.push_back({n.label, n.func});
  }
  if (auto_scheduler_ && backend_ && device_ != "ref") {
    for (auto& n : g.nodes) {
      if (n.kind != NodeKind::Kernel || !n.func || !n.schedule.empty()) continue;
      auto scheduled = std::make_shared<tir::PrimFunc>();
      std::string source;
      if (!auto_scheduler_->schedule(n.label, *n.func, device_, scheduled.get(), &source)) continue;
      n.func = std::move(scheduled);
      n.schedule = source;
    }
  }

  // Copies that only re-lay out inputs (transform_layout's) leave their kernel: the runtime
  // makes each once per input tensor (execute, packed_input), where the kernel would make it
  // on every launch. The copy keeps the schedule the kernel's gave its nest.
  for (auto& n : g.nodes) {
    if (n.kind != NodeKind::Kernel || !n.func) continue;
    tir::PrimFunc f = *n.func;
    std::vector<LayoutPrologue> packs = hoist_layout_prologues(f);
    if (packs.empty()) continue;
    n.func = std::make_shared<const tir::PrimFunc>(std::move(f));
    n.packs = std::move(packs);
  }

  std::vector<std::string> keys;
  if (!execute(g, &keys, error)) return fail(*error);
  last_.executed = g;

  // Constants folded on the way are stored too, even one a later fold made dead.
  for (const auto& snap : last_.passes) store(snap.after);
  store(g);
  if (!nodes_[size_t(tensor)].value)
    return fail("internal error: the requested tensor was not computed");

  // Keep the plan, without data: the leaves' and the kernels' values belong to this
  // evaluation (and to the collector); a constant the passes folded is the plan's own.
  // A pass that made a node of its own (none does today) would have no place in a replay.
  auto known = [&](const Graph& graph) {
    for (const auto& n : graph.nodes)
      if (!std::binary_search(all.begin(), all.end(), n.id)) return false;
    return true;
  };
  bool replayable = known(last_.executed);
  for (const auto& snap : last_.passes) replayable = replayable && known(snap.after);
  if (!replayable) return true;
  auto plan = std::make_shared<Plan>();
  plan->ids = canon;
  plan->eval = last_;
  plan->keys = std::move(keys);
  {
    std::unordered_map<int64_t, size_t> place, index;
    for (size_t p = 0; p < canon.size(); ++p) place[canon[p]] = p;
    const auto& nodes = plan->eval.executed.nodes;
    for (size_t k = 0; k < nodes.size(); ++k) index[nodes[k].id] = k;
    for (const auto& n : nodes) {
      plan->position.push_back(place.at(n.id));
      std::vector<size_t> ins;
      for (int64_t in : n.inputs) {
        auto at = index.find(in);
        if (at == index.end()) return true;  // an input the graph does not hold: no replay
        ins.push_back(at->second);
      }
      plan->input_nodes.push_back(std::move(ins));
    }
    plan->compiled.assign(nodes.size(), nullptr);
  }
  auto strip = [&](Graph& graph) {
    for (auto& n : graph.nodes)
      if (n.kind == NodeKind::Kernel || std::binary_search(leaf_ids.begin(), leaf_ids.end(), n.id))
        n.value.reset();
  };
  strip(plan->eval.before);
  for (auto& snap : plan->eval.passes) strip(snap.after);
  strip(plan->eval.executed);
  if (plans_.size() >= 256) plans_.clear();  // a program of ever-new shapes: start over
  plans_.emplace(std::move(key), std::move(plan));
  return true;
}

// Values go back to the table from an evaluated graph: every kernel that ran, and every
// constant folded on the way. A node fused away keeps no value: it never existed in memory.
void GraphRuntime::store_value(int64_t id, const std::shared_ptr<const Tensor>& value, NodeKind kind) {
  Node& mine = nodes_[size_t(id)];
  if (mine.value || !value || freed_[size_t(id)]) return;
  mine.value = value;
  account(mine);
  if (kind == NodeKind::Constant) mine.kind = NodeKind::Constant;
}

void GraphRuntime::store(const Graph& from) {
  for (const auto& n : from.nodes) store_value(n.id, n.value, n.kind);
}

bool GraphRuntime::packed_input(const Node& n, const LayoutPrologue& p,
                                const std::vector<std::shared_ptr<const Tensor>>& inputs,
                                const Tensor** out, std::string* error) {
  std::vector<const Tensor*> args;
  for (int k : p.inputs) {
    if (k < 0 || size_t(k) >= inputs.size()) {
      *error = "internal error: " + n.label + "'s copy " + p.buffer + " reads a missing input";
      return false;
    }
    args.push_back(inputs[size_t(k)].get());
  }
  auto key = std::make_pair(p.func.get(), args.empty() ? nullptr : args[0]);
  auto it = packed_.find(key);
  if (it != packed_.end()) {
    bool same = it->second.sources.size() == args.size();
    for (size_t k = 0; same && k < args.size(); ++k) same = it->second.sources[k].lock().get() == args[k];
    if (same) {
      *out = it->second.value.get();
      return true;
    }
    packed_.erase(it);
  }
  // A miss: drop the copies of tensors that are gone, then make this one as a launch of its
  // own (the log shows it, "linear.W_t", with its time: the price of the layout, paid once).
  for (auto e = packed_.begin(); e != packed_.end();) {
    bool live = true;
    for (const auto& w : e->second.sources) live = live && !w.expired();
    e = live ? std::next(e) : packed_.erase(e);
  }
  // The same weights under ever new schedules (a REPL session re-scheduling a layer) would
  // keep a copy per schedule while the weights live: a cache, so past a bound start over.
  if (packed_.size() >= 64) packed_.clear();
  Node pn;
  pn.kind = NodeKind::Kernel;
  pn.label = n.label + "." + p.buffer;
  pn.func = p.func;
  pn.schedule = n.schedule;
  pn.shape = p.func->buffers[size_t(p.func->output)].shape;
  auto value = std::make_shared<Tensor>();
  if (!run_kernel(pn, kernel_key(pn), args, value.get(), error)) return false;
  ++packings_;
  Packed entry;
  for (int k : p.inputs) entry.sources.push_back(inputs[size_t(k)]);
  entry.func = p.func;
  entry.value = std::move(value);
  *out = entry.value.get();
  packed_[key] = std::move(entry);
  return true;
}

bool GraphRuntime::execute(Graph& g, std::vector<std::string>* keys, std::string* error) {
  keys->resize(g.nodes.size());
  std::unordered_map<int64_t, const Node*> by_id;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    by_id[n.id] = &n;
    if (n.kind != NodeKind::Kernel) continue;
    if (interrupt_ && interrupt_->load()) {
      *error = "interrupted";
      return false;
    }
    std::vector<const Tensor*> args;
    std::vector<std::shared_ptr<const Tensor>> values;
    for (int64_t in : n.inputs) {
      const Node* src = by_id.count(in) ? by_id[in] : nullptr;
      if (!src || !src->value) {
        *error = "internal error: input %" + std::to_string(in) + " of " + n.label + " has no value";
        return false;
      }
      args.push_back(src->value.get());
      values.push_back(src->value);
    }
    for (const LayoutPrologue& p : n.packs) {
      const Tensor* packed = nullptr;
      if (!packed_input(n, p, values, &packed, error)) return false;
      args.push_back(packed);
    }
    if ((*keys)[i].empty()) (*keys)[i] = kernel_key(n);
    auto out = std::make_shared<Tensor>();
    if (!run_kernel(n, (*keys)[i], args, out.get(), error)) return false;
    n.value = std::move(out);
    last_.kernels.push_back(n.func);
  }
  return true;
}

std::shared_ptr<const Tensor> GraphRuntime::value(int64_t tensor, std::string* error) {
  if (!evaluate(tensor, error)) return nullptr;
  return nodes_[size_t(tensor)].value;
}

bool GraphRuntime::element(int64_t tensor, const std::vector<int64_t>& index, double* out,
                           std::string* error) {
  if (!valid(tensor)) {
    *error = "not a tensor";
    return false;
  }
  const auto& shape = nodes_[size_t(tensor)].shape;
  if (index.size() != shape.size()) {
    *error = "a tensor of shape " + shape_text(shape) + " needs " + std::to_string(shape.size()) +
             " indices, got " + std::to_string(index.size());
    return false;
  }
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) {
      *error = "index " + shape_text(index) + " is out of range for shape " + shape_text(shape);
      return false;
    }
    flat = flat * shape[d] + index[d];
  }
  auto v = value(tensor, error);
  if (!v) return false;
  *out = double(v->data[size_t(flat)]);
  return true;
}

bool GraphRuntime::sum_all(int64_t tensor, double* out, std::string* error) {
  auto v = value(tensor, error);
  if (!v) return false;
  *out = tensor::sum_all(*v);
  return true;
}

bool GraphRuntime::format(int64_t tensor, std::string* out, std::string* error) {
  auto v = value(tensor, error);
  if (!v) return false;
  *out = format_tensor(*v);
  return true;
}

bool GraphRuntime::save(int64_t tensor, const std::string& path, std::string* error) {
  if (!saves_allowed_) {
    *error = "save() is turned off while a lab checks a program (it could change the files the "
             "checker reads)";
    return false;
  }
  auto v = value(tensor, error);
  if (!v) return false;
  return save_npy(*v, resolve(file_base_, path), error);
}

// The shape first (from the table, nothing evaluated), then the limit, then the values: a
// wrong call costs nothing, and the graph so far runs only for a call that can succeed.
bool GraphRuntime::host_op(Builtin which, const std::vector<int64_t>& tensors,
                           const std::vector<int64_t>& ints, int64_t* tensor, std::string* error) {
  if (which == Builtin::Grad && tensors.size() == 2) return grad(tensors[0], tensors[1], tensor, error);
  if (which == Builtin::Param && tensors.size() == 1) return param(tensors[0], tensor, error);
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t t : tensors) {
    if (!valid(t)) {
      *error = std::string(builtin_name(which)) + ": argument is not a tensor";
      return false;
    }
    shapes.push_back(nodes_[size_t(t)].shape);
  }
  std::vector<int64_t> shape;
  if (!host_op_shape(which, shapes, ints, &shape, error)) return false;
  if (!within_limit(std::string("the result of '") + builtin_name(which) + "'", shape, error))
    return false;
  std::vector<std::shared_ptr<const Tensor>> values;  // held: evaluating b may not drop a
  std::vector<const Tensor*> args;
  for (int64_t t : tensors) {
    values.push_back(value(t, error));
    if (!values.back()) return false;
    args.push_back(values.back().get());
  }
  Tensor out;
  if (!run_host_op(which, args, ints, shape, &out)) {
    *error = out_of_memory_text(shape);
    return false;
  }
  *tensor = add_tensor(std::move(out), builtin_name(which));
  // Data now, but made from these: grad must not mistake it for a constant (runtime_grad.cpp).
  nodes_[size_t(*tensor)].made_from = tensors;
  return true;
}

bool GraphRuntime::mean(int64_t tensor, double* out, std::string* error) {
  auto v = value(tensor, error);
  if (!v) return false;
  *out = tensor::sum_all(*v) / double(v->numel());
  return true;
}

Graph GraphRuntime::pending_graph() const {
  Graph g;
  std::set<int64_t> used, leaves;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (freed_[i]) continue;
    const Node& n = nodes_[i];
    if (n.value || n.kind != NodeKind::Kernel) continue;
    for (int64_t in : n.inputs) {
      used.insert(in);
      if (nodes_[size_t(in)].value) leaves.insert(in);
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (freed_[i]) continue;
    const Node& n = nodes_[i];
    bool pending = !n.value && n.kind == NodeKind::Kernel;
    if (!pending && !leaves.count(n.id)) continue;
    Node copy = n;
    if (!pending && copy.kind == NodeKind::Kernel) {
      copy.kind = NodeKind::Input;
      copy.inputs.clear();
    }
    g.nodes.push_back(std::move(copy));
    if (pending && !used.count(n.id)) g.outputs.push_back(n.id);
  }
  return g;
}

}  // namespace descent::tensor
