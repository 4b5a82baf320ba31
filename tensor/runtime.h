// GraphRuntime: the tensor layer behind the AST walker (lang/tensor_api.h).
//
// Tensor values are handles to nodes of one growing table. Creating a tensor (zeros, rand,
// load) computes it at once: it is data. Calling a kernel only records a pending Kernel
// node, with its shape checked and known. When a value is needed (t[i, j], sum_all, print,
// save), the runtime
//   1. cuts out the Graph of pending nodes the requested tensor depends on (graph.h),
//   2. lowers each kernel for its argument shapes and applies the user's schedule, if any,
//   3. runs the graph passes (fold_constants, fuse_elementwise, eliminate_dead_code),
//      keeping a snapshot after each for the REPL's and the GUI's views,
//   4. executes the kernels in order on the chosen device and stores each value back.
// An intermediate that fusion folded into another kernel is never materialised, so it stays
// pending: asking for it later computes it then.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lang/tensor_api.h"
#include "tensor/backend.h"
#include "tensor/graph.h"
#include "tensor/launch.h"

namespace descent::tensor {

struct Adjoint;  // tensor/autodiff.h

// The prelude's source text (tensor/prelude.ds, compiled in): add, mul, relu, bias_add,
// matmul, linear, linear_relu, transpose, softmax. A session parses it before the user's code.
std::string_view prelude_source();

// One graph pass as it ran during an evaluation.
struct PassSnapshot {
  std::string name;
  bool changed = false;
  std::string summary;
  Graph after;
};

// What the last evaluation did, for the views (`:graph`, the GUI's graph pane).
struct Evaluation {
  Graph before;                       // the graph as the program built it (lowered)
  std::vector<PassSnapshot> passes;   // empty when graph passes are off
  Graph executed;                     // the graph that ran
  std::vector<std::shared_ptr<const tir::PrimFunc>> kernels;  // in execution order
  std::string device = "ref";        // the backend the kernels ran on
  bool ok = true;
  std::string error;
  // The plan of an earlier evaluation of the same graph ran again: no lowering, no passes,
  // no compilation (tinygrad's TinyJit, a compiled Relax module). The graphs above are that
  // plan's, on this evaluation's tensors.
  bool replayed = false;
};

// The memory plan of an evaluation that ran backward kernels (`:graph backward`): the bytes
// its kernels wrote, forward and backward apart, in the graph as built and in the graph that
// ran (an intermediate fused into its consumer stays in registers and never reaches memory),
// and the tape: the forward tensors the backward kernels read, kept alive for them. "" when
// the evaluation ran no backward kernel.
std::string backward_memory_plan(const Evaluation& ev);

// Where evaluation time went besides the kernels themselves (LaunchRecord has those), summed
// over the evaluations since GraphRuntime::clear_launches(): `:time` shows it stage by stage.
struct EvaluationTimes {
  double lower_s = 0;   // kernels lowered to loop nests, schedules applied
  double passes_s = 0;  // the graph passes
  double compile_s = 0;  // code generation and builds (the launches that compiled)
  double kernels_s = 0;  // the launches, from the runtime's side (transfers included)
  int evaluations = 0;
};

// The runtime's table of nodes: index = handle = node id, and handles are never reused (a
// stale handle must not name a newer tensor). A loop that runs a model adds a few nodes per
// iteration for as long as it runs, so the table is kept in chunks of 1024 nodes, and a
// chunk whose every node the collector freed gives its memory back: what stays is one
// pointer per chunk. A freed node is never read (valid() says so first); one in a released
// chunk reads as an empty node rather than as freed memory.
class NodeTable {
 public:
  size_t size() const { return size_; }
  Node& operator[](size_t i) {
    Chunk* c = chunks_[i >> kShift].get();
    if (!c) return scratch_ = Node{};
    return c->nodes[i & kMask];
  }
  const Node& operator[](size_t i) const {
    const Chunk* c = chunks_[i >> kShift].get();
    return c ? c->nodes[i & kMask] : empty_;
  }
  Node& push_back(Node n);
  Node& back() { return (*this)[size_ - 1]; }
  // Node i was freed: its chunk goes once all 1024 of its nodes are.
  void release(size_t i);
  size_t chunks_held() const;  // chunks whose memory is still held

 private:
  static constexpr size_t kShift = 10, kChunk = size_t(1) << kShift, kMask = kChunk - 1;
  struct Chunk {
    std::vector<Node> nodes;
    size_t freed = 0;
  };
  std::vector<std::unique_ptr<Chunk>> chunks_;
  size_t size_ = 0;
  Node scratch_;
  static const Node empty_;
};

// Schedules for the kernels nobody scheduled (issue 17). After the graph passes, every kernel
// node that carries no user schedule asks this for one, so a kernel that fusion made (a
// linear_relu inside an MLP, which no user could have scheduled) runs scheduled too. The
// Session installs the tuner's (tune/: the tuning database's best record for the kernel,
// its shapes and the device, else the rule-based default schedule), so tensor/ never
// depends on the tuner. Never asked for the reference interpreter: the oracle runs every
// nest as lowered.
class AutoScheduler {
 public:
  virtual ~AutoScheduler() = default;
  // f (kernel `label`, about to run on `device`) scheduled into *out, and where the schedule
  // came from in *source ("tuned", "default"); false to leave f as it is.
  virtual bool schedule(const std::string& label, const tir::PrimFunc& f,
                        const std::string& device, tir::PrimFunc* out, std::string* source) = 0;
};

class GraphRuntime : public TensorRuntime {
 public:
  GraphRuntime();
  ~GraphRuntime() override;

  // ---- TensorRuntime ----
  int64_t make_shape(const std::vector<int64_t>& dims) override;
  const std::vector<int64_t>& shape_dims(int64_t shape_handle) const override;
  bool create(Builtin which, const std::vector<int64_t>& dims, const std::vector<int64_t>& args,
              int64_t* tensor, std::string* error) override;
  bool call_kernel(const KernelDecl& kernel, const std::vector<int64_t>& args, int64_t* tensor,
                   std::string* error) override;
  const std::vector<int64_t>& tensor_dims(int64_t tensor) const override;
  bool element(int64_t tensor, const std::vector<int64_t>& index, double* out,
               std::string* error) override;
  bool sum_all(int64_t tensor, double* out, std::string* error) override;
  bool format(int64_t tensor, std::string* out, std::string* error) override;
  bool load(const std::string& path, int64_t* tensor, std::string* error) override;
  bool save(int64_t tensor, const std::string& path, std::string* error) override;
  // argmax, reshape, flatten, rows, eq (host_ops.h): the result is an Input node, data.
  bool host_op(Builtin which, const std::vector<int64_t>& tensors, const std::vector<int64_t>& ints,
               int64_t* tensor, std::string* error) override;
  bool mean(int64_t tensor, double* out, std::string* error) override;
  bool wants_collect() const override;
  int64_t next_handle() const override { return int64_t(nodes_.size()); }
  void collect(const std::vector<int64_t>& roots, int64_t from) override;

  // ---- Training (runtime_grad.cpp, docs/training.md) ----
  // grad(loss, x): the gradient of the sum of loss's elements with respect to x, a tensor of
  // x's shape. Reverse mode over the graph: from loss back to x, each kernel node on the way
  // gets its adjoint kernels (tensor/autodiff.h) as new pending nodes, which the graph passes
  // then fuse and schedule like any others; a tensor used twice sums its gradients. Nodes
  // made for one loss are kept with it: grad(loss, b) after grad(loss, w) reuses them. x not
  // reached from loss: zeros.
  bool grad(int64_t loss, int64_t wrt, int64_t* out, std::string* error);
  // param(t): t computed now, as a new tensor with t's data (shared, not copied) and no
  // history: a parameter. What is computed from a parameter keeps its tape (the inputs a
  // gradient needs) while it lives, even once computed, so grad(loss, w) works after the
  // loss was read. An optimizer step is `w = param(sgd(w, dw))`: the old w goes when nothing
  // reads it, and its storage back to the pool the new step's tensors come from.
  bool param(int64_t t, int64_t* out, std::string* error);

  // ---- Memory ----
  // What the tensors of this runtime hold (data only, not the graph or compiled kernels).
  struct MemoryStats {
    size_t live_tensors = 0;  // computed tensors and pending computations not yet freed
    size_t live_bytes = 0;    // bytes of data held by the runtime's table
    size_t peak_bytes = 0;    // the most live_bytes has been
    size_t freed_tensors = 0; // freed by collect() so far
    size_t collections = 0;
    size_t limit_bytes = 0;   // the largest one tensor may be
    size_t table_chunks = 0;  // chunks of 1024 node slots whose memory is held
  };
  MemoryStats memory() const;
  // A tensor larger than this is an error before anything is allocated. The default is
  // half of the machine's physical memory: a clear message instead of the kernel's OOM
  // killer taking the REPL (and the student's session) down.
  void set_tensor_limit(size_t bytes) { limit_bytes_ = bytes; }
  size_t tensor_limit() const { return limit_bytes_; }
  // The folder a relative path in load() and save() is read from ("": the process's current
  // directory). A lab's checker runs the student's program against the student's work folder
  // this way, since it cannot change the directory of a process that runs other things.
  void set_file_base(std::string dir) { file_base_ = std::move(dir); }
  const std::string& file_base() const { return file_base_; }
  // Off while a lab checks a program: save() is then an error, so the student's code cannot
  // write over the files the checker's driver loads after it (the held-out images).
  void set_saves_allowed(bool on) { saves_allowed_ = on; }
  static size_t default_tensor_limit();
  // Handles the Session holds outside any engine's variables (the globals as they were
  // before the last run, which `:compare` and the debugger run again): roots of every
  // collection, like the engine's own.
  void set_pinned(std::vector<int64_t> handles) { pinned_ = std::move(handles); }

  // ---- Options ----
  // Where kernels run: a backend's name from the registry (tensor/backend.h). Opens it;
  // false with *error (unknown name, no device) and the previous device stays.
  bool set_device(std::string_view name, std::string* error = nullptr);
  const std::string& device() const { return device_; }
  void set_threads(int threads) { threads_ = threads; }
  // A schedule (schedule.h text) applied to every lowering of this kernel; "" removes it.
  // Checked when the kernel is evaluated: an illegal step for the shapes of that call is an
  // evaluation error naming the kernel and the step. Each call makes a new version: a call
  // lowers and applies its kernel's schedule once per (kernel, shapes, version), and plans
  // made with an older version are not reused.
  void set_schedule(const std::string& kernel_name, const std::string& text);
  // The same from a schedule object (the Session's): `func` is what the steps give for
  // `kernel` (the declaration) at the input `shapes` it was made at, so a call at those
  // shapes runs it as it is.
  void set_schedule(const std::string& kernel_name, const std::string& text,
                    const KernelDecl* kernel, std::vector<std::vector<int64_t>> shapes,
                    std::shared_ptr<const tir::PrimFunc> func);
  struct InstalledSchedule {
    std::string text;      // the steps, one per line
    uint64_t version = 0;  // new with every set_schedule
    const KernelDecl* kernel = nullptr;        // with func: the object's declaration,
    std::vector<std::vector<int64_t>> shapes;  // its input shapes
    std::shared_ptr<const tir::PrimFunc> func;  // and its scheduled nest (may be null)
  };
  const std::map<std::string, InstalledSchedule>& schedules() const { return schedules_; }
  // The scheduler of the kernels with no user schedule; null: they run as lowered. Setting
  // it (again) forgets the plans made with the one before.
  void set_auto_scheduler(std::shared_ptr<AutoScheduler> s) {
    auto_scheduler_ = std::move(s);
    ++auto_generation_;
  }
  // Every kernel nest that ran with no user schedule, as lowered and fused (before any
  // automatic schedule), once each: what `descent tune` tunes for a whole program
  // (MetaSchedule extracts its tuning tasks from a model the same way).
  struct KernelTask {
    std::string label;
    std::shared_ptr<const tir::PrimFunc> func;
  };
  const std::vector<KernelTask>& kernel_tasks() const { return tasks_; }
  void clear_kernel_tasks() {
    tasks_.clear();
    task_keys_.clear();
  }
  void set_graph_passes(bool on) { passes_on_ = on; }
  bool graph_passes_on() const { return passes_on_; }
  void set_interrupt(const std::atomic<bool>* flag) { interrupt_ = flag; }

  // Adds a tensor computed elsewhere (tests, the GUI) as an Input node.
  int64_t add_tensor(Tensor t, const std::string& label = "tensor");
  // The value, evaluating first if needed; null with *error on failure.
  std::shared_ptr<const Tensor> value(int64_t tensor, std::string* error);
  bool evaluate(int64_t tensor, std::string* error);

  // ---- Views ----
  // Every node not yet computed, with what it reads (outputs: none).
  Graph pending_graph() const;
  const Evaluation& last_evaluation() const {
    materialize();
    return last_;
  }
  const std::vector<std::shared_ptr<const tir::PrimFunc>>& last_kernels() const {
    return last_.kernels;
  }
  size_t num_tensors() const { return nodes_.size(); }

  // ---- The launch log ----
  // Every kernel launch since clear_launches(), in order, and an observer told of each as
  // it happens, so a front end can print it between the program's output lines (`:debug 2`).
  using LaunchObserver = std::function<void(const LaunchRecord&)>;
  void set_launch_observer(LaunchObserver observer) { observer_ = std::move(observer); }
  // The first kLaunchLogLimit launches, and the totals over all of them.
  const std::vector<LaunchRecord>& launches() const { return launches_; }
  const LaunchTotals& launch_totals() const { return launch_totals_; }
  const EvaluationTimes& evaluation_times() const { return times_; }
  void clear_launches() {
    launches_.clear();
    launch_totals_ = LaunchTotals{};
    times_ = EvaluationTimes{};
  }
  int compilations() const { return compilations_; }  // kernel cache misses so far
  int lowerings() const { return lowerings_; }  // kernel nests lowered (and scheduled) so far
  int replays() const { return replays_; }            // evaluations that replayed a plan
  int packings() const { return packings_; }  // input re-layouts computed (cache misses)

 private:
  bool valid(int64_t tensor) const {
    return tensor >= 0 && size_t(tensor) < nodes_.size() && !freed_[size_t(tensor)];
  }
  // false with the message when a tensor of `shape` would be larger than the limit.
  bool within_limit(const std::string& what, const std::vector<int64_t>& shape,
                    std::string* error) const;
  void account(const Node& n);  // n just got its value
  int64_t add_node(Node n);
  struct Compiled;  // a compiled kernel and its cost (below)
  bool lower_node(const Node& n, std::shared_ptr<const tir::PrimFunc>* func, std::string* error);
  bool run_kernel(const Node& n, const std::string& key, const std::vector<const Tensor*>& args,
                  Tensor* out, std::string* error, Compiled** cached = nullptr);
  bool evaluate_unguarded(int64_t tensor, std::string* error);
  // Runs the kernels of g in order (its leaves have values), storing each result in g.
  // keys: the compiled-kernel cache key of each node of g, when already known.
  bool execute(Graph& g, std::vector<std::string>* keys, std::string* error);
  void store(const Graph& from);
  std::string kernel_key(const Node& n) const;

  // ---- Replayed graphs ----
  // A plan: what evaluating a graph of this structure did (the lowered, scheduled and fused
  // graphs, ids as they were then), found again by plan_key, which names every node's
  // structure (kernel and version, which earlier node each input is, shape, schedule) but
  // no tensor's data, except a folded-away constant's.
  struct Plan {
    std::vector<int64_t> ids;  // the evaluated nodes then, in plan order (see evaluate_unguarded)
    Evaluation eval;           // with no data but the constants the passes folded
    std::vector<std::string> keys;  // per node of eval.executed: its compiled kernel's key
    // The plan as a list of launches, worked out once so that a replay copies no graph and
    // looks nothing up by name: per node of eval.executed, its place in `ids`, and per input
    // the input's node index in eval.executed.
    std::vector<size_t> position;
    std::vector<std::vector<size_t>> input_nodes;
    mutable std::vector<Compiled*> compiled;  // per node: its kernel, once the first replay found it
  };
  std::string plan_key(const std::vector<int64_t>& all, int64_t tensor) const;
  bool replay(const std::shared_ptr<const Plan>& plan, const std::vector<int64_t>& all,
              int64_t tensor, std::string* error);
  // Stores a value computed for node `id` in the table (store's rule for one node).
  void store_value(int64_t id, const std::shared_ptr<const Tensor>& value, NodeKind kind);
  std::unordered_map<std::string, std::shared_ptr<const Plan>> plans_;
  std::vector<uint32_t> mark_;  // evaluate_unguarded's visited marks, by node id
  uint32_t mark_generation_ = 0;
  // A replay copies only the graph it runs; the plan's other snapshots (before, after each
  // pass), which only `:graph` and the visualizer read, are copied onto this evaluation's
  // tensors when last_evaluation() is first asked for them. A model in a loop never asks.
  void materialize() const;
  mutable std::shared_ptr<const Plan> pending_plan_;
  mutable std::vector<int64_t> pending_ids_;
  int replays_ = 0;
  // A kernel call's result shape by (kernel, argument shapes): the shape analysis walks the
  // kernel's statements and costs more than the rest of a call, and a loop that runs a model
  // asks the same question every iteration. Keyed by the declaration's address, as plans
  // are (a Session keeps every declaration it compiled).
  // The key is flat (the address, then each argument's rank and dims) and built in a
  // buffer kept between calls, so a hit allocates nothing.
  struct FlatKeyHash {
    size_t operator()(const std::vector<int64_t>& k) const {
      uint64_t h = 1469598103934665603ull;
      for (int64_t x : k) h = (h ^ uint64_t(x)) * 1099511628211ull;
      return size_t(h);
    }
  };
  std::unordered_map<std::vector<int64_t>, std::vector<int64_t>, FlatKeyHash> result_shapes_;
  std::vector<int64_t> shape_key_;

  // ---- Training (runtime_grad.cpp) ----
  struct Backward {
    std::unordered_map<int64_t, int64_t> grads;  // node id -> its gradient's node id
    std::set<int64_t> done;  // nodes whose gradient has every contribution
  };
  std::unordered_map<int64_t, Backward> backward_;  // by the loss's id
  // Adjoint kernels derived so far, by (declaration, parameter); accumulation kernels by rank.
  std::map<std::pair<const KernelDecl*, size_t>, std::shared_ptr<const Adjoint>> adjoints_;
  std::map<size_t, std::shared_ptr<Program>> accumulators_;
  const Adjoint* adjoint(const KernelDecl& k, size_t param, std::string* error);
  const KernelDecl* accumulator(size_t rank, std::string* error);
  void backward_roots(const std::vector<int64_t>& roots, const std::function<void(int64_t)>& push);
  // The pending nodes of `all` (sorted ids, a request for `tensor`) that a live pending node
  // outside it also reads.
  std::vector<int64_t> shared_pending(const std::vector<int64_t>& all, int64_t tensor) const;
  void prune_backward();

  NodeTable nodes_;  // index = handle = node id
  std::vector<uint8_t> freed_;  // per node: 1 once collect() freed it (handles never reused)
  std::vector<int64_t> pinned_;
  size_t limit_bytes_ = default_tensor_limit();
  std::string file_base_;
  bool saves_allowed_ = true;
  size_t live_bytes_ = 0, peak_bytes_ = 0, allocated_since_collect_ = 0;
  size_t live_after_collect_ = 0, freed_count_ = 0, collections_ = 0;
  size_t nodes_at_collect_ = 0;  // the table's size after the last collection
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<int64_t> no_dims_;  // what a bad handle's dims are
  std::string device_ = "ref";
  std::string device_name_ = "reference interpreter";  // DeviceSummary::name, for the log
  Backend* backend_ = nullptr;  // device_'s backend (null until the first set_device: ref)
  int threads_ = 0;
  bool passes_on_ = true;
  const std::atomic<bool>* interrupt_ = nullptr;
  std::map<std::string, InstalledSchedule> schedules_;
  uint64_t schedule_versions_ = 0;
  // Lowered (and scheduled) nests by kernel declaration, its version, the input shapes and
  // the schedule's version: what lower_node made before, shared by every plan that needs it.
  std::map<std::string, std::shared_ptr<const tir::PrimFunc>> lowered_;
  std::string lowered_key(const Node& n, const std::vector<std::vector<int64_t>>& shapes) const;
  std::shared_ptr<AutoScheduler> auto_scheduler_;
  int64_t auto_generation_ = 0;  // in plan keys: a new scheduler makes new plans
  std::vector<KernelTask> tasks_;
  std::set<std::string> task_keys_;  // label + printed nest of each task
  // Compiled kernels, keyed by the device, the thread count and the printed function: the
  // text is exactly what gets compiled, so a fused function (which belongs to no single
  // kernel) or a changed schedule can never hit a stale entry.
  struct Compiled {
    std::unique_ptr<CompiledKernel> kernel;
    KernelCost cost;
  };
  std::map<std::string, Compiled> compiled_;
  // Inputs re-laid out outside their kernel (Node::packs), by (copy function, input tensor):
  // valid while that very tensor lives (the weak pointer still locks to it), so a layer's
  // weights are packed on the first launch and never again. Tensors are immutable once made.
  struct Packed {
    std::vector<std::weak_ptr<const Tensor>> sources;
    std::shared_ptr<const tir::PrimFunc> func;  // held: its address is the key
    std::shared_ptr<const Tensor> value;
  };
  std::map<std::pair<const tir::PrimFunc*, const Tensor*>, Packed> packed_;
  bool packed_input(const Node& n, const LayoutPrologue& p,
                    const std::vector<std::shared_ptr<const Tensor>>& inputs,
                    const Tensor** out, std::string* error);
  int packings_ = 0;
  int compilations_ = 0;
  int lowerings_ = 0;
  mutable Evaluation last_;
  LaunchObserver observer_;
  std::vector<LaunchRecord> launches_;
  LaunchTotals launch_totals_;
  EvaluationTimes times_;
};

}  // namespace descent::tensor
