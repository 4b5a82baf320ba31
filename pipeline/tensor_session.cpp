// The Session's tensor half: the device kernels run on, the views and runs of a schedule
// object (schedules.cpp holds the objects), and the dataflow graph views. Every front end (CLI `descent kernel`, the
// REPL's :kernel/:sched/:graph, the visualizer) goes through these.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "lang/text.h"
#include "pipeline/kernel_lookup.h"
#include "pipeline/open_schedule.h"
#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/iteration_order.h"
#include "tensor/launch.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"
#include "tensor/traffic.h"

namespace descent {

namespace {
StageResult fail(std::string text) {
  return StageResult{false, std::move(text), std::nullopt, std::nullopt};
}
StageResult okay(std::string text) {
  return StageResult{true, std::move(text), std::nullopt, std::nullopt};
}

// The graph as data, for front ends that lay it out themselves (the same facts as the DOT).
GraphData graph_data(const tensor::Graph& g) {
  GraphData d;
  for (const auto& n : g.nodes) {
    GraphData::Node dn;
    dn.id = n.id;
    dn.label = n.label;
    dn.kind = tensor::node_kind_name(n.kind);
    dn.shape = tensor::shape_text(n.shape);
    dn.output = std::find(g.outputs.begin(), g.outputs.end(), n.id) != g.outputs.end();
    dn.backward = n.backward;
    d.nodes.push_back(std::move(dn));
    for (int64_t in : n.inputs) {
      const tensor::Node* from = g.find(in);
      d.edges.push_back(GraphData::Edge{in, n.id, from ? tensor::shape_text(from->shape) : ""});
    }
  }
  return d;
}

// ---- the loop nest as a tree (kernel_view's StageResult::tree; pipeline.h has the heads) ----
// The same nesting the TVMScript printer indents, as nodes a front end can fold and colour:
// Seq is flattened into its parent and an Allocate's body follows its "alloc" node, as the
// printer writes them.
TreeNode alloc_node(const tir::Buffer& b) {
  TreeNode n;
  n.head = "alloc";
  n.atom = b.name + tensor::shape_text(b.shape) + " " + tir::scope_name(b.scope);
  n.leaf = true;
  return n;
}

TreeNode stmt_node(std::string text) {
  TreeNode n;
  n.head = "stmt";
  n.atom = std::move(text);
  n.leaf = true;
  return n;
}

void loop_nest(const tir::PrimFunc& f, const tir::Stmt* s, std::vector<TreeNode>& out) {
  if (!s) return;
  auto expr = [&f](const tir::ExprPtr& e) { return e ? tir::print_expr(f, *e) : "?"; };
  switch (s->kind) {
    case tir::StmtKind::Seq:
      for (const auto& k : s->stmts) loop_nest(f, k.get(), out);
      return;
    case tir::StmtKind::For: {
      TreeNode n;
      n.head = "for";
      n.atom = s->var;
      n.type = tir::for_kind_name(s->for_kind);
      n.detail = "0.." + std::to_string(s->extent);
      if (s->for_kind == tir::ForKind::Bound) n.detail += " " + s->thread_tag;
      loop_nest(f, s->body.get(), n.kids);
      out.push_back(std::move(n));
      return;
    }
    case tir::StmtKind::Block: {
      TreeNode n;
      n.head = "block";
      n.atom = s->name;
      for (size_t i = 0; i < s->iters.size(); ++i) {
        const auto& it = s->iters[i];
        n.detail += (i ? ", " : "") + it.name + "=" +
                    (it.kind == tir::IterKind::Spatial ? "S(" : "R(") + expr(it.binding) + ")";
      }
      if (s->predicate) n.detail += " where " + expr(s->predicate);
      if (s->init) {
        TreeNode init;
        init.head = "init";
        loop_nest(f, s->init.get(), init.kids);
        n.kids.push_back(std::move(init));
      }
      loop_nest(f, s->body.get(), n.kids);
      out.push_back(std::move(n));
      return;
    }
    case tir::StmtKind::Store: {
      std::string target = s->buffer >= 0 && size_t(s->buffer) < f.buffers.size()
                               ? f.buffers[size_t(s->buffer)].name
                               : "#" + std::to_string(s->buffer);
      target += "[";
      for (size_t i = 0; i < s->indices.size(); ++i)
        target += (i ? ", " : "") + expr(s->indices[i]);
      out.push_back(stmt_node(target + "] = " + expr(s->value)));
      return;
    }
    case tir::StmtKind::If: {
      TreeNode n;
      n.head = "if";
      n.atom = expr(s->predicate);
      loop_nest(f, s->body.get(), n.kids);
      out.push_back(std::move(n));
      return;
    }
    case tir::StmtKind::Allocate:
      if (s->buffer >= 0 && size_t(s->buffer) < f.buffers.size())
        out.push_back(alloc_node(f.buffers[size_t(s->buffer)]));
      loop_nest(f, s->body.get(), out);
      return;
    case tir::StmtKind::Barrier: out.push_back(stmt_node("T.barrier()")); return;
  }
}

void collect_allocated(const tir::Stmt* s, std::vector<bool>& allocated) {
  if (!s) return;
  if (s->kind == tir::StmtKind::Allocate && s->buffer >= 0 &&
      size_t(s->buffer) < allocated.size())
    allocated[size_t(s->buffer)] = true;
  collect_allocated(s->init.get(), allocated);
  collect_allocated(s->body.get(), allocated);
  for (const auto& k : s->stmts) collect_allocated(k.get(), allocated);
}

TreeNode loop_nest_tree(const tir::PrimFunc& f) {
  TreeNode root;
  root.head = "func";
  root.atom = f.name;
  // Function-wide temporaries (the stages between input and output), as T.alloc_buffer
  // lines at the top of the script; scoped ones appear where their Allocate is.
  std::vector<bool> skip(f.buffers.size(), false);
  collect_allocated(f.body.get(), skip);
  for (int p : f.params)
    if (p >= 0 && size_t(p) < skip.size()) skip[size_t(p)] = true;
  if (f.output >= 0 && size_t(f.output) < skip.size()) skip[size_t(f.output)] = true;
  for (size_t b = 0; b < f.buffers.size(); ++b)
    if (!skip[b]) root.kids.push_back(alloc_node(f.buffers[b]));
  loop_nest(f, f.body.get(), root.kids);
  // Each loop's name as schedule steps address it, from the schedule's own naming
  // (sched::loop_names lists the loops in program order: the tree's preorder, since
  // loop_nest visits a block's init before its body, as the schedule's walk does).
  std::vector<std::string> names = tensor::sched::loop_names(f);
  std::vector<TreeNode*> fors;
  auto collect = [&fors](auto& self, TreeNode& n) -> void {
    if (n.head == "for") fors.push_back(&n);
    for (auto& k : n.kids) self(self, k);
  };
  collect(collect, root);
  if (fors.size() == names.size())
    for (size_t i = 0; i < fors.size(); ++i) fors[i]->ref = names[i];
  return root;
}

// The kernel under the microscope as the graph passes see a call of it: one input node per
// parameter (with the shapes it was selected for), the call, and what each pass makes of
// that (`descent kernel F K --dump graph`): the kernel's own graph, not whatever the
// program's last evaluation happened to compute.
StageResult kernel_graph(const std::string& name, const tir::PrimFunc& f) {
  tensor::Graph g;
  tensor::Node call;
  call.id = int64_t(f.params.size());
  call.kind = tensor::NodeKind::Kernel;
  call.label = name;
  call.func = std::make_shared<const tir::PrimFunc>(f);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const tir::Buffer& b = f.buffers[size_t(f.params[i])];
    tensor::Node in;
    in.id = int64_t(i);
    in.kind = tensor::NodeKind::Input;
    in.label = b.name;
    in.shape = b.shape;
    g.nodes.push_back(std::move(in));
    call.inputs.push_back(int64_t(i));
  }
  if (f.output >= 0 && size_t(f.output) < f.buffers.size())
    call.shape = f.buffers[size_t(f.output)].shape;
  g.nodes.push_back(std::move(call));
  g.outputs = {int64_t(f.params.size())};
  std::string text = "# graph as built\n" + tensor::graph_to_text(g);
  tensor::Graph at = g;
  for (const auto& pass : tensor::graph_passes()) {
    tensor::PassStats stats;
    at = pass.run(at, &stats);
    text += std::string("\n# after graph.") + pass.name + " (" +
            (stats.changed ? stats.summary : "no change") + ")\n" + tensor::graph_to_text(at);
  }
  StageResult r = okay(std::move(text));
  r.graph = graph_data(g);
  return r;
}

}  // namespace

const KernelDecl* find_kernel_or_error(const Module& module, const std::string& name,
                                       std::string* error) {
  int k = module.find_kernel(name);
  if (k >= 0) return module.kernels[size_t(k)].decl;
  std::string known;
  for (const auto& info : module.kernels) known += (known.empty() ? "" : ", ") + info.name;
  *error = "no kernel named '" + name + "' (kernels: " + (known.empty() ? "none" : known) + ")";
  return nullptr;
}

std::vector<std::string> Session::devices() {
  register_tensor_backends();
  return tensor::backend_names();
}

std::vector<std::pair<std::string, std::string>> Session::device_descriptions() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : devices())
    out.emplace_back(name, tensor::find_backend(name)->description());
  return out;
}

std::string Session::describe_devices() {
  std::string text;
  for (const auto& name : devices()) text += tensor::find_backend(name)->describe();
  return text;
}

bool Session::set_device(std::string_view name, std::string* error) {
  return tensors_->set_device(name, error);
}

std::string Session::device() const { return tensors_->device(); }

void Session::set_threads(int threads) {
  threads_ = threads;
  tensors_->set_threads(threads);
}

std::string Session::memory_report() const {
  tensor::GraphRuntime::MemoryStats m = tensors_->memory();
  return "tensors: " + std::to_string(m.live_tensors) + " live, " + bytes_text(m.live_bytes) +
         " (peak " + bytes_text(m.peak_bytes) + ")\n" + "collector: ran " +
         std::to_string(m.collections) + (m.collections == 1 ? " time" : " times") + ", freed " +
         std::to_string(m.freed_tensors) + " tensors\n" + "limit: " + bytes_text(m.limit_bytes) + " per tensor\n";
}

bool Session::set_tensor_limit(std::string_view size, std::string* error) {
  uint64_t bytes = 0;
  if (!parse_bytes(size, &bytes) || bytes == 0) {
    *error = "'" + std::string(size) + "' is not a size (examples: 512M, 2G, 1.5GiB, 1000000)";
    return false;
  }
  tensors_->set_tensor_limit(bytes);
  return true;
}

void Session::set_file_base(const std::string& dir) { tensors_->set_file_base(dir); }
void Session::set_saves_allowed(bool on) { tensors_->set_saves_allowed(on); }

void Session::set_launch_observer(std::function<void(const tensor::LaunchRecord&)> observer) {
  tensors_->set_launch_observer(std::move(observer));
}

bool Session::parse_dims(const std::vector<std::string>& words,
                         std::map<std::string, int64_t>* dims, std::string* error) {
  for (const auto& w : words) {
    auto eq = w.find('=');
    char* end = nullptr;
    errno = 0;
    long long v = eq == std::string::npos ? 0 : std::strtoll(w.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size() || !end || *end || errno ||
        v < 1) {
      *error = "dims are NAME=SIZE with SIZE >= 1, not '" + w + "'";
      return false;
    }
    (*dims)[w.substr(0, eq)] = v;
  }
  return true;
}

bool Session::check_kernel_shapes(const KernelDecl& kernel, Diagnostic* error) {
  for (const auto& p : kernel.params)
    for (const auto& d : p.tensor.dims)
      if (!d.name.empty()) return true;  // the call binds the shapes: checked then
  return tensor::result_shape(kernel, tensor::shapes_for(kernel, {}), nullptr, error);
}

bool Session::lower_kernel(const std::string& name, const std::map<std::string, int64_t>& dims,
                           std::string_view schedule, tir::PrimFunc* out,
                           std::string* error) const {
  int k = module_.find_kernel(name);
  if (k < 0) {
    *error = "no kernel named '" + name + "'";
    return false;
  }
  const KernelDecl& decl = *module_.kernels[size_t(k)].decl;
  Diagnostic d;
  tir::PrimFunc f;
  if (!tensor::lower(decl, tensor::shapes_for(decl, dims), &f, &d)) {
    *error = "cannot lower kernel '" + name + "': " + d.message;
    return false;
  }
  if (schedule.empty()) {
    *out = std::move(f);
    return true;
  }
  tensor::Schedule s(std::move(f));
  if (!s.apply_text(schedule, error)) return false;
  *out = s.func();
  return true;
}

bool Session::kernel_script(const std::string& name, const std::map<std::string, int64_t>& dims,
                            std::string_view schedule, std::string* text, std::string* error) const {
  tir::PrimFunc f;
  if (!lower_kernel(name, dims, schedule, &f, error)) return false;
  *text = tir::print_script(f);
  return true;
}

std::vector<StageInfo> Session::kernel_views() {
  std::vector<StageInfo> v = {
      {"tir", "the loop nest after the schedule (TVMScript-like)"},
      {"tir-original", "the loop nest as lowered from the kernel, before any schedule"},
      {"c", "the scheduled loop nest as the equivalent C"},
      {"schedule", "the schedule steps in effect (replayable)"},
      {"traffic", "the bytes each global buffer moves through a cache (an ideal-cache model "
                  "of the scheduled nest: what fusion and tiling save)"},
      {"graph", "the kernel called on its parameters as a dataflow graph, before and after "
                "each graph pass"},
  };
  for (const auto& name : devices())
    for (const auto& view : tensor::find_backend(name)->views()) v.push_back({view.name, view.help});
  return v;
}

StageResult Session::kernel_view(std::string_view view, ScheduleId id) const {
  settle_jit();
  std::string error;
  const OpenSchedule* s = schedule_or_error(id, &error);
  if (!s) return fail(error);
  const tir::PrimFunc& f = s->schedule.func();
  if (view == "tir" || view == "tir-original") {
    const tir::PrimFunc& g = view == "tir" ? f : s->schedule.original();
    StageResult r = okay(tir::print_script(g));
    r.tree = loop_nest_tree(g);
    return r;
  }
  if (view == "c") return okay(tir::print_c(f));
  if (view == "schedule") return okay(s->schedule.trace());
  if (view == "traffic") {
    tensor::Traffic moved = tensor::data_movement(f, traffic_cache_);
    tensor::KernelCost cost = tensor::kernel_cost(f);
    std::string text = tensor::format_traffic(moved);
    char line[160];
    std::snprintf(line, sizeof line,
                  "%.3g flop over %.3g bytes moved: %.2f flop/byte (compulsory traffic alone: "
                  "%.2f)\n",
                  cost.flops, moved.moved_bytes(),
                  moved.moved_bytes() > 0 ? cost.flops / moved.moved_bytes() : 0,
                  cost.bytes > 0 ? cost.flops / cost.bytes : 0);
    return okay(text + line);
  }
  if (view == "graph") return kernel_graph(s->kernel, f);
  // A device's view of the code it generates ("llvm", "opencl", ...).
  for (const auto& name : tensor::backend_names()) {
    tensor::Backend* b = tensor::find_backend(name);
    for (const auto& v : b->views()) {
      if (view != v.name) continue;
      std::string text, error;
      if (!b->view(f, view, &text, &error)) return fail(error);
      return okay(text);
    }
  }
  std::vector<std::string> known;
  for (const auto& v : kernel_views()) known.push_back(v.name);
  return fail("unknown kernel view '" + std::string(view) + "' (views: " + join(known) + ")");
}

bool Session::kernel_iteration_order(tensor::IterationOrder* out, std::string* error,
                                     ScheduleId id) const {
  const OpenSchedule* s = schedule_or_error(id, error);
  return s && tensor::iteration_order(s->schedule.func(), out, error);
}

Session::KernelRun Session::run_kernel(std::string_view device, bool check, uint64_t seed,
                                       int repeats, ScheduleId id) {
  KernelRun r;
  const OpenSchedule* s = schedule_or_error(id, &r.error);
  if (!s) return r;
  tensor::Backend* backend = tensor::backend_or_error(device, &r.error);
  if (!backend || !backend->open(&r.error)) return r;
  const tir::PrimFunc& f = s->schedule.func();
  // Inputs: one seeded random tensor per parameter, so a run can be reproduced exactly.
  std::vector<tensor::Tensor> inputs(f.params.size());
  std::vector<const tensor::Tensor*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!tensor::rand(f.buffers[f.params[i]].shape, int64_t(seed + i), &inputs[i], &r.error))
      return r;
    args.push_back(&inputs[i]);
  }
  tensor::BackendOptions options;
  options.threads = threads_;
  options.interrupt = &interrupt_;
  std::unique_ptr<tensor::CompiledKernel> kernel;
  if (!backend->compile(f, options, &kernel, &r.error)) return r;
  r.compile_seconds = kernel->compile_seconds();
  tensor::Tensor out;
  std::vector<double> times;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    tensor::KernelTiming t;
    if (!kernel->run(args, &out, &t, &r.error)) return r;
    // The kernel's own time, apart from transfers; a build the first run did is compiling.
    times.push_back(t.kernel_s);
    r.compile_seconds += t.build_s;
  }
  std::sort(times.begin(), times.end());
  r.seconds = times[times.size() / 2];
  r.min_seconds = times.front();
  r.shape = out.shape;
  r.checksum = tensor::sum_all(out);
  if (check) {
    // The oracle is the reference interpreter on the loop nest as lowered, before any
    // schedule: this checks the schedule and the backend at once.
    tensor::Tensor ref;
    if (!tir::interpret(s->schedule.original(), args, &ref, &r.error, &interrupt_)) {
      r.error = "reference interpreter: " + r.error;
      return r;
    }
    std::string why;
    r.checked = true;
    if (!tensor::allclose(out, ref, 1e-4, &why)) {
      r.error = "results differ from the reference interpreter: " + why;
      return r;
    }
  }
  r.ok = true;
  return r;
}

StageResult Session::graph_view(std::string_view which, Format format) const {
  settle_jit();
  const tensor::Evaluation& ev = tensors_->last_evaluation();
  auto render = [&](const tensor::Graph& g, const std::string& title) {
    // A replayed evaluation says so: the student sees why no lowering or compiling happened.
    std::string replayed = ev.replayed && title != "pending"
                               ? "# replayed: this graph's plan from an earlier evaluation "
                                 "(no lowering, passes or compilation)\n"
                               : "";
    StageResult r = okay(format == Format::Dot ? tensor::graph_to_dot(g, title)
                                               : replayed + tensor::graph_to_text(g));
    r.graph = graph_data(g);
    return r;
  };
  if (which == "pending") {
    tensor::Graph g = tensors_->pending_graph();
    // DOT stays DOT when there is nothing to draw: an empty digraph, not a sentence.
    if (g.nodes.empty() && format != Format::Dot)
      return okay("(no pending tensor computations)\n");
    return render(g, "pending");
  }
  if (which == "backward") {
    // The backward pass still to run: grad's nodes, and the forward tensors they read (the
    // tape), with what keeping the tape costs.
    tensor::Graph all = tensors_->pending_graph(), g;
    std::set<int64_t> keep;
    for (const auto& n : all.nodes)
      if (n.backward) {
        keep.insert(n.id);
        keep.insert(n.inputs.begin(), n.inputs.end());
      }
    // The last evaluation's memory plan, when it ran backward kernels: before and after fusion.
    std::string plan = tensor::backward_memory_plan(ev);
    if (keep.empty() && format != Format::Dot)
      return okay("(no backward pass pending: grad(loss, x) makes one)\n" + plan);
    double tape_bytes = 0;
    size_t tape = 0;
    for (const auto& n : all.nodes) {
      if (!keep.count(n.id)) continue;
      g.nodes.push_back(n);
      if (!n.backward) {
        // A leaf here, shown as data: the tape's side of the picture.
        g.nodes.back().inputs.clear();
        g.nodes.back().kind = tensor::NodeKind::Input;
        tape_bytes += double(tensor::bytes_of(n));
        ++tape;
      }
    }
    for (int64_t o : all.outputs)
      if (keep.count(o)) g.outputs.push_back(o);
    StageResult r = render(g, "backward");
    if (format != Format::Dot)
      r.text += "tape: " + std::to_string(tape) + " tensor" + (tape == 1 ? "" : "s") +
                " the backward pass reads and does not make, " + std::to_string(int64_t(tape_bytes)) +
                " bytes kept alive for it\n" + plan;
    return r;
  }
  if (ev.before.nodes.empty() && ev.executed.nodes.empty())
    return fail("no tensor evaluation yet (print or sum_all a kernel's result first)");
  if (which == "before") return render(ev.before, "before");
  if (which == "executed") return render(ev.executed, "executed");
  for (const auto& p : ev.passes)
    if (p.name == which) return render(p.after, p.name);
  std::string known = "pending, backward, before, executed";
  for (const auto& p : ev.passes) known += ", " + p.name;
  return fail("unknown graph view '" + std::string(which) + "' (views: " + known + ")");
}

}  // namespace descent
