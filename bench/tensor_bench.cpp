// The tensor suite of `descent bench`: the classroom benchmark. The prelude's kernels on every
// backend Descent has, naive and scheduled, against a tuned library (or a plain C++ loop) at
// the same thread count, each figure also given as a fraction of the machine's roofline
// measured in the same run.
//
// Why these columns: "cpu-naive" and "opencl-naive" are the loop nest exactly as lowered
// (what a student starts from), "cpu-sched" and "opencl-sched" replay the schedules shipped in
// bench/schedules (the best a student can write with Descent's primitives), "openblas" is the
// tuned library a framework would call, "cpp" is what a C++ programmer writes in five minutes
// where BLAS has nothing to offer (vector add, softmax), and "ref" (where it finishes in
// seconds: it is an interpreter) is the oracle.
//
// Why these workloads: vector_add is pure bandwidth (1 flop per 12 bytes), matmul is pure
// compute at 1024 and shows at 128 and 512 how the fixed costs (launches, thread start) weigh
// on small problems, linear_relu is the seed notes' layer (memory bound: one pass over the
// weights), and softmax has four stages with two reductions, where fusion pays.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bench/bench.h"
#include "bench/blas.h"
#include "bench/internal.h"
#include "bench/roofline.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "tensor/backend.h"
#include "tensor/launch.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"

namespace descent::bench {

// "[=========>          ]  7/40": how far a run of `total` steps is.
std::string progress_bar(size_t done, size_t total) {
  const int width = 24;
  int filled = total ? int(double(done) / double(total) * width) : width;
  std::string bar(size_t(filled), '=');
  if (filled < width) bar += '>' + std::string(size_t(width - filled - 1), ' ');
  int digits = int(std::to_string(total).size());
  return fmt::format("[{}] {:>{}}/{}", bar, done, digits, total);
}

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Dims = std::map<std::string, int64_t>;

struct TensorWorkload {
  std::string name;    // the record's workload, and the first .sched file stem tried
  std::string kernel;  // the prelude kernel (the second stem tried)
  std::string title;
  Dims dims, quick_dims;  // the kernel's named dims
  std::string baseline;  // "openblas" or "cpp"
  // The reference interpreter finishes in a few seconds at full scale (at quick scale it
  // always runs).
  bool ref_full;
};

Dims cube(int64_t s) { return {{"n", s}, {"k", s}, {"m", s}}; }

const std::vector<TensorWorkload>& all_workloads() {
  static const std::vector<TensorWorkload> w = {
      {"vector_add", "add", "c = a + b, 16M floats (memory bound)",
       {{"n", 1}, {"m", 16777216}}, {{"n", 1}, {"m", 65536}}, "cpp", false},
      // Quick sizes stay large enough for the shipped OpenCL schedules (16 x 16 tiles of
      // work-items) to apply: 128 is already quick, 256 is the smallest the others take.
      {"matmul_128", "matmul", "C = A B, 128^3", cube(128), cube(128), "openblas",
       true},
      {"matmul_512", "matmul", "C = A B, 512^3", cube(512), cube(256), "openblas",
       false},
      {"matmul_1024", "matmul", "C = A B, 1024^3", cube(1024), cube(256), "openblas", false},
      {"matmul_2048", "matmul", "C = A B, 2048^3", cube(2048), cube(256), "openblas", false},
      {"linear_relu", "linear_relu",
       "relu(x w^T), x 1 x 3072, w 200 x 3072 (the seed notes' layer)",
       {{"n", 1}, {"k", 3072}, {"m", 200}}, {{"n", 1}, {"k", 256}, {"m", 40}}, "openblas", true},
      {"softmax", "softmax", "row softmax, 256 x 1024", {{"n", 256}, {"m", 1024}},
       {{"n", 16}, {"m", 64}}, "cpp", true},
      // Four times the rows: 4 MiB in, 4 MiB out, past L2 (the second softmax size).
      {"softmax_1024", "softmax", "row softmax, 1024 x 1024", {{"n", 1024}, {"m", 1024}},
       {{"n", 16}, {"m", 64}}, "cpp", false},
      {"layer_norm", "layer_norm", "layer norm of each row, 256 x 1024",
       {{"n", 256}, {"d", 1024}}, {{"n", 16}, {"d", 64}}, "cpp", true},
  };
  return w;
}

// The columns, from the device registry: "ref" (the oracle), then for every other device
// "<device>-naive" (the loop nest as lowered), "<device>-sched" (the shipped schedule) and,
// where the device runs hand-written kernels, "<device>-hand"; then the baselines. A new
// device gets its columns without this file changing.
struct Column {
  enum Kind { Ref, Naive, Default, Sched, Hand, Baseline, External };
  std::string engine;   // the record's engine: "cpu-sched"
  std::string device;   // the backend's name ("" for a baseline)
  Kind kind;
};

std::vector<Column> columns() {
  std::vector<Column> out = {{"ref", "ref", Column::Ref}};
  for (const auto& d : Session::devices()) {
    if (d == "ref") continue;
    out.push_back({d + "-naive", d, Column::Naive});
    out.push_back({d + "-default", d, Column::Default});
    out.push_back({d + "-sched", d, Column::Sched});
    if (tensor::find_backend(d)->has_hand_kernels()) out.push_back({d + "-hand", d, Column::Hand});
  }
  out.push_back({"openblas", "", Column::Baseline});
  out.push_back({"cpp", "", Column::Baseline});
  // ONNX Runtime's kernel for the same operator, in a child python3 (bench/models/
  // tensor_baseline.py): only when asked for by name, since it needs pip packages.
  out.push_back({"onnxruntime", "", Column::External});
  return out;
}

const Column* find_column(const std::vector<Column>& columns, const std::string& engine) {
  for (const auto& c : columns)
    if (c.engine == engine) return &c;
  return nullptr;
}

// The first of dir/<stem><suffix> for the stems that exists ("" when none does).
std::string find_schedule(const std::string& dir, const std::vector<std::string>& stems,
                          const std::string& suffix) {
  for (const auto& s : stems) {
    fs::path p = fs::path(dir) / (s + suffix);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

struct Cell {
  size_t workload;
  const Column* column;
  int threads;  // host threads (cpu columns, baselines); 0 for a device that decides itself
};

// The hand-written kernels the "-hand" columns run, beside the generated ones: issue 6's
// yardstick for the scheduled OpenCL matmul. Each knows its launch grid for the shapes.
struct HandWritten {
  std::string device, kernel, file, entry;
  // The grid and the int arguments for inputs of these shapes; false with *error when the
  // kernel cannot take them.
  bool (*launch)(const std::vector<tensor::Tensor>& in, tensor::HandKernel* k, std::string* error);
};

// bench/opencl/matmul_4x16.cl: a 4 x 16 register block per work-item, float16 accumulators.
bool matmul_4x16_launch(const std::vector<tensor::Tensor>& in, tensor::HandKernel* k,
                        std::string* error) {
  int64_t n = in[0].shape[0], kk = in[0].shape[1], m = in[1].shape[1];
  if (n % 4 || m % 16) {
    *error = "matmul_4x16.cl needs n % 4 == 0 and m % 16 == 0";
    return false;
  }
  k->dims = 2;
  k->global[0] = m / 16;
  k->global[1] = n / 4;
  k->local[0] = std::min<int64_t>(16, m / 16);
  k->local[1] = 1;
  k->scalars = {int32_t(n), int32_t(kk), int32_t(m)};
  k->output_shape = {n, m};
  return true;
}

const std::vector<HandWritten>& hand_written() {
  static const std::vector<HandWritten> h = {
      {"opencl", "matmul", "matmul_4x16.cl", "matmul_4x16", matmul_4x16_launch},
  };
  return h;
}

const HandWritten* find_hand(const std::string& device, const std::string& kernel) {
  for (const auto& h : hand_written())
    if (h.device == device && h.kernel == kernel) return &h;
  return nullptr;
}

// A workload made ready to measure: its loop nests, its inputs, and the answer to check
// every column against.
struct Prepared {
  const TensorWorkload* w = nullptr;
  tir::PrimFunc naive;
  // Per device, its scheduled loop nest, or why not: `problem` fails the column, `missing`
  // skips it.
  struct Scheduled {
    tir::PrimFunc func;
    std::string problem, missing;
    tir::PrimFunc by_rules;     // the rule-based default schedule (tune/rules.h)
    std::string rules_missing;  // why there is none (the rules found nothing to do)
  };
  std::map<std::string, Scheduled> scheduled;
  std::vector<tensor::Tensor> inputs;
  std::vector<const tensor::Tensor*> args;
  double flops = 0, bytes = 0;
  tensor::Tensor ref_out;  // the reference interpreter's answer, where it finishes in seconds
  bool have_ref = false;
  tensor::Tensor base_out;  // else the baseline's answer
  bool have_base = false;
  std::string base_error;
};

// A device the cells use: what it is, or why its columns are skipped.
struct OpenDevice {
  bool ok = false;
  tensor::DeviceSummary summary;
  std::string error;
};

double wall(const std::function<void()>& fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class TensorSuite {
 public:
  explicit TensorSuite(const BenchOptions& o)
      : o_(o), sched_dir_(o.schedules_dir.empty() ? schedules_dir() : o.schedules_dir) {}

  bool validate(std::string* error) const;
  std::vector<BenchRecord> run(std::string* error);

 private:
  void say(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  bool wanted(const std::string& engine) const {
    return o_.engines.empty() ||
           std::find(o_.engines.begin(), o_.engines.end(), engine) != o_.engines.end();
  }
  std::vector<Cell> plan() const;
  void open_devices(const std::vector<Cell>& cells);
  void measure_roofs();
  bool prepare(size_t workload, std::string* error);
  bool run_baseline(int threads, tensor::Tensor* out, std::string* problem) const;
  void run_external(int threads, BenchRecord* r, tensor::Tensor* out, std::vector<double>* times,
                    std::string* skip) const;
  bool time_runs(const std::function<double()>& fn, int repeats, std::vector<double>* t) const;
  bool run_compiled(tensor::Backend& b, const tir::PrimFunc& f, int threads, int repeats,
                    BenchRecord* r, tensor::Tensor* out, std::vector<double>* times,
                    std::string* problem) const;
  bool run_hand(const std::string& device, BenchRecord* r, tensor::Tensor* out,
                std::vector<double>* times, std::string* problem) const;
  BenchRecord run_cell(const Cell& cell, size_t done, size_t total);
  void finish_record(BenchRecord* r, const std::vector<double>& times, bool ok,
                     const std::string& problem, const std::string& skip) const;

  const BenchOptions& o_;
  std::vector<Column> columns_ = columns();  // the cells point into this
  std::string sched_dir_;
  Session session_;  // the prelude's kernels, lowered and scheduled through it
  std::map<std::string, OpenDevice> devices_;
  std::map<int, Roofline> roofs_;
  Prepared p_;
};

bool TensorSuite::validate(std::string* error) const {
  std::vector<std::string> engines;
  for (const auto& c : columns_) engines.push_back(c.engine);
  for (const auto& e : o_.engines) {
    if (!find_column(columns_, e)) {
      *error = fmt::format("unknown tensor engine '{}' (engines: {})", e, join(engines));
      return false;
    }
  }
  auto names = tensor_workloads();
  for (const auto& name : o_.workloads) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      *error = fmt::format("no workload '{}' in suite 'tensor' (workloads: {})", name, join(names));
      return false;
    }
  }
  if (o_.repeats < 1) {
    *error = "repeats must be at least 1";
    return false;
  }
  if (o_.threads.empty()) {
    *error = "no thread counts to run at";
    return false;
  }
  for (int t : o_.threads) {
    if (t < 1 || t > 256) {
      *error = fmt::format("thread counts must be 1..256, not {}", t);
      return false;
    }
  }
  return true;
}

// The cells, listed first so the progress bar knows the total: per workload, each wanted
// column, at every thread count where the column runs on host threads.
std::vector<Cell> TensorSuite::plan() const {
  std::vector<Cell> cells;
  for (size_t wi = 0; wi < all_workloads().size(); ++wi) {
    const auto& w = all_workloads()[wi];
    if (!o_.workloads.empty() &&
        std::find(o_.workloads.begin(), o_.workloads.end(), w.name) == o_.workloads.end())
      continue;
    for (const Column& c : columns_) {
      if (!wanted(c.engine)) continue;
      switch (c.kind) {
        case Column::Ref:
          if (o_.quick || w.ref_full) cells.push_back({wi, &c, 1});
          break;
        case Column::Naive:
        case Column::Default:
        case Column::Sched:
          if (tensor::find_backend(c.device)->host_threads()) {
            for (int t : o_.threads) cells.push_back({wi, &c, t});
          } else {
            cells.push_back({wi, &c, 0});
          }
          break;
        case Column::Hand:
          if (find_hand(c.device, w.kernel)) cells.push_back({wi, &c, 0});
          break;
        case Column::Baseline:
          if (c.engine == w.baseline)
            for (int t : o_.threads) cells.push_back({wi, &c, t});
          break;
        case Column::External:
          if (!o_.engines.empty())
            for (int t : o_.threads) cells.push_back({wi, &c, t});
          break;
      }
    }
  }
  // The table groups a workload's host-thread columns by thread count, as before: ref, then
  // cpu-naive and cpu-sched at each count, then the device columns, then the baseline.
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
    if (a.workload != b.workload) return a.workload < b.workload;
    auto rank = [](const Cell& c) {
      if (c.column->kind == Column::Ref) return 0;
      if (c.column->kind == Column::Baseline) return 3;
      if (c.column->kind == Column::External) return 4;
      return c.threads > 0 ? 1 : 2;
    };
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 1 && a.threads < b.threads;
  });
  return cells;
}

// Every device the cells use, opened once. One that cannot open has its columns skipped.
void TensorSuite::open_devices(const std::vector<Cell>& cells) {
  for (const Cell& c : cells) {
    const std::string& d = c.column->device;
    if (d.empty() || devices_.count(d)) continue;
    OpenDevice& od = devices_[d];
    tensor::Backend* b = tensor::find_backend(d);
    od.ok = b->open(&od.error) && b->device(&od.summary, &od.error);
    if (b->host_threads() || d == "ref") continue;
    if (od.ok) {
      say(fmt::format("{}: {} ({}, {}, {} compute units)", d, od.summary.name, od.summary.type,
                      od.summary.detail, od.summary.compute_units));
    } else {
      say(fmt::format("{}: no device, the {} columns are skipped: {}", d, d, od.error));
    }
  }
}

// The roofline at each thread count, measured before any workload (so a busy machine shows
// up in the roof as well as in the kernels); also at a device's count when the device is
// this CPU (PoCL), where the CPU roofline applies to it.
void TensorSuite::measure_roofs() {
  std::vector<int> counts = o_.threads;
  for (const auto& [name, d] : devices_)
    if (d.ok && d.summary.host_cpu && !tensor::find_backend(name)->host_threads() && name != "ref")
      counts.push_back(d.summary.compute_units);
  for (int t : counts) {
    if (roofs_.count(t)) continue;
    roofs_[t] = measure_roofline(t);
    say(fmt::format("roofline at {} thread{}: {}", t, t == 1 ? "" : "s", format_roofline(roofs_[t])));
  }
  say("OpenBLAS: " + blas_description());
}

// Lowers the workload's kernel through the Session, applies each device's schedule file,
// makes the seeded inputs (the same for every column) and computes the answer to check.
bool TensorSuite::prepare(size_t workload, std::string* error) {
  p_ = Prepared{};
  p_.w = &all_workloads()[workload];
  const TensorWorkload& w = *p_.w;
  const Dims& dims = o_.quick ? w.quick_dims : w.dims;
  if (!session_.lower_kernel(w.kernel, dims, "", &p_.naive, error)) {
    *error = "cannot lower " + w.name + ": " + *error;
    return false;
  }
  // A schedule file that does not apply fails its column with the line and the reason. The
  // suite ships a plain .sched for every workload, so a missing one fails too; a device
  // family's own schedules (.opencl.sched) exist where someone wrote one, so a missing one
  // only skips its column.
  for (const auto& device : Session::devices()) {
    if (device == "ref") continue;
    Prepared::Scheduled& s = p_.scheduled[device];
    std::string suffix = tensor::find_backend(device)->schedule_suffix();
    std::string path = find_schedule(sched_dir_, {w.name, w.kernel}, suffix);
    std::string text;
    std::string& why = suffix == ".sched" ? s.problem : s.missing;
    if (path.empty())
      why = fmt::format("no schedule file {}/{}{} (or {}{})", sched_dir_, w.name, suffix, w.kernel, suffix);
    else if (read_file(path, &text, &s.problem) &&
             !session_.lower_kernel(w.kernel, dims, text, &s.func, &s.problem))
      s.problem = path + ": " + s.problem;
    // The default schedule a kernel nobody scheduled gets: what a student's program runs.
    std::string source, trace = session_.automatic_schedule(w.kernel, p_.naive, device, &source);
    if (trace.empty())
      s.rules_missing = "the rules have no schedule for " + w.kernel + " on " + device;
    else if (!session_.lower_kernel(w.kernel, dims, trace, &s.by_rules, &s.rules_missing))
      s.rules_missing = "the default schedule does not apply: " + s.rules_missing;
  }
  const tir::PrimFunc& f = p_.naive;
  p_.inputs.assign(f.params.size(), tensor::Tensor());
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(i + 1), &p_.inputs[i], error))
      return false;
    p_.args.push_back(&p_.inputs[i]);
  }
  // The useful arithmetic and the compulsory traffic, counted from the loop nest as the
  // launch log (`:debug 2`) counts them (tensor/launch.h).
  tensor::KernelCost cost = tensor::kernel_cost(f);
  p_.flops = cost.flops;
  p_.bytes = cost.bytes;
  if (o_.quick || w.ref_full) {
    std::string e;
    p_.have_ref = tir::interpret(f, p_.args, &p_.ref_out, &e);
  }
  // Where the interpreter would take minutes, the baseline's result is the check.
  p_.have_base = !p_.have_ref &&
                 run_baseline(*std::max_element(o_.threads.begin(), o_.threads.end()),
                              &p_.base_out, &p_.base_error);
  return true;
}

// The baseline column's computation (OpenBLAS, or the plain loops).
bool TensorSuite::run_baseline(int threads, tensor::Tensor* out, std::string* problem) const {
  const auto& in = p_.inputs;
  blas_set_threads(threads);
  if (p_.w->kernel == "add") cpp_add(in[0], in[1], out, threads);
  else if (p_.w->kernel == "softmax") cpp_softmax(in[0], out, threads);
  else if (p_.w->kernel == "layer_norm") cpp_layer_norm(in[0], in[1], in[2], out, threads);
  else if (p_.w->kernel == "matmul") return blas_matmul(in[0], in[1], out, problem);
  else {
    if (!blas_linear(in[0], in[1], out, problem)) return false;
    for (size_t i = 0; i < out->data.size(); ++i)
      out->data[i] = out->data[i] > 0 ? out->data[i] : 0.0f;
  }
  return true;
}

// The onnxruntime column: the inputs as .npy files for a child python3, its times per call
// and its output back to be checked like any column's. Anything missing (python3, the pip
// packages, an operator) skips the cell with the reason: an optional column never fails.
void TensorSuite::run_external(int threads, BenchRecord* r, tensor::Tensor* out,
                               std::vector<double>* times, std::string* skip) const {
  std::string python = find_on_path("python3");
  if (python.empty()) {
    *skip = "python3 is not on PATH";
    return;
  }
  fs::path dir = fs::temp_directory_path() / fmt::format("descent-bench-tensor-{}", ::getpid());
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  std::string error;
  for (size_t i = 0; i < p_.inputs.size(); ++i)
    if (!tensor::save_npy(p_.inputs[i], (dir / fmt::format("in{}.npy", i)).string(), &error)) {
      *skip = "cannot write the inputs: " + error;
      return;
    }
  std::string script = (fs::path(DESCENT_BENCH_MODELS_DIR) / "tensor_baseline.py").string();
  ProcResult p = run_process({python, script, dir.string(), p_.w->kernel, std::to_string(threads),
                              o_.quick ? "0.005" : "0.05", std::to_string(std::max(1, o_.repeats))},
                             o_.interrupt);
  nlohmann::json j = p.ok ? nlohmann::json::parse(p.out, nullptr, false) : nlohmann::json();
  if (!p.ok || j.is_discarded()) {
    *skip = !p.ok ? "tensor_baseline.py did not run: " + p.problem
                  : "tensor_baseline.py printed something that is not JSON: " + p.out.substr(0, 200);
  } else if (!j.contains("onnxruntime")) {
    for (const auto& note : j.value("notes", nlohmann::json::array()))
      *skip += (skip->empty() ? "" : "; ") + note.get<std::string>();
    if (skip->empty()) *skip = "no onnxruntime result";
  } else {
    *times = j["onnxruntime"]["runs_s"].get<std::vector<double>>();
    r->note = j["onnxruntime"].value("version", "");
    if (!tensor::load_npy((dir / "out_onnxruntime.npy").string(), out, &error))
      *skip = "cannot read onnxruntime's output: " + error;
  }
  fs::remove_all(dir, ec);
}

// Runs `fn` once untimed (page faults, thread start-up, program builds: what a framework's
// first call pays), then up to `repeats` times. `fn` returns the time to record for its run
// (the wall time it measured, or a device's own kernel time), or a negative number when it
// failed.
bool TensorSuite::time_runs(const std::function<double()>& fn, int repeats,
                            std::vector<double>* t) const {
  auto t0 = Clock::now();
  if (fn() < 0) return false;
  double first = std::chrono::duration<double>(Clock::now() - t0).count();
  if (o_.cell_budget_s > 0 && first * repeats > o_.cell_budget_s)
    repeats = std::max(1, int(o_.cell_budget_s / first));
  for (int i = 0; i < repeats; ++i) {
    if (o_.interrupt && o_.interrupt->load()) break;
    double s = fn();
    if (s < 0) return false;
    t->push_back(s);
  }
  return true;
}

// A loop nest compiled by a backend. The recorded time is the kernel's own
// (KernelTiming::kernel_s): the device's profiling events, or the generated code's entry on
// the CPU; transfers to and from a device are not part of the kernel (on a real GPU they
// cross PCIe and would dominate a vector add). Compile time includes the build the first
// run did.
bool TensorSuite::run_compiled(tensor::Backend& b, const tir::PrimFunc& f, int threads,
                               int repeats, BenchRecord* r, tensor::Tensor* out,
                               std::vector<double>* times, std::string* problem) const {
  tensor::BackendOptions options;
  options.threads = threads;
  options.interrupt = o_.interrupt;
  std::unique_ptr<tensor::CompiledKernel> k;
  double compile_wall = wall([&] { b.compile(f, options, &k, problem); });
  if (!k) return false;
  r->compile_s = compile_wall;
  bool first = true;
  return time_runs([&] {
    tensor::KernelTiming t;
    if (!k->run(p_.args, out, &t, problem)) return -1.0;
    if (first) r->compile_s += t.build_s;
    first = false;
    return t.kernel_s;
  }, repeats, times);
}

bool TensorSuite::run_hand(const std::string& device, BenchRecord* r, tensor::Tensor* out,
                           std::vector<double>* times, std::string* problem) const {
  const HandWritten* h = find_hand(device, p_.w->kernel);
  tensor::HandKernel k;
  k.entry = h->entry;
  std::string path = (fs::path(schedules_dir()) / ".." / device / h->file).lexically_normal().string();
  if (!read_file(path, &k.source, problem)) return false;
  if (!h->launch(p_.inputs, &k, problem)) return false;
  std::unique_ptr<tensor::CompiledKernel> compiled;
  if (!tensor::find_backend(device)->compile_hand(k, &compiled, problem)) {
    // The build log's file names are the driver's temporary copy: say which file failed.
    *problem = path + ": " + *problem;
    return false;
  }
  r->compile_s = compiled->compile_seconds();
  return time_runs([&] {
    tensor::KernelTiming t;
    if (!compiled->run(p_.args, out, &t, problem)) return -1.0;
    return t.kernel_s;
  }, o_.repeats, times);
}

BenchRecord TensorSuite::run_cell(const Cell& cell, size_t done, size_t total) {
  const TensorWorkload& w = *p_.w;
  const Column& c = *cell.column;
  BenchRecord r;
  r.suite = "tensor";
  r.workload = w.name;
  r.engine = c.engine;
  // "library": OpenBLAS; "native": the plain C++ loops compiled into this program.
  r.kind = c.engine == "openblas" ? "library" : c.engine == "cpp" ? "native" : "descent";
  if (r.kind == "library") r.library = blas_description();
  r.scale = o_.quick ? "quick" : "full";
  r.baseline = w.baseline;
  const OpenDevice* dev = c.device.empty() ? nullptr : &devices_.at(c.device);
  r.threads = cell.threads > 0 ? cell.threads : dev && dev->ok ? dev->summary.compute_units : 0;
  r.expected = "matches " + std::string(p_.have_ref ? "the reference interpreter" : w.baseline);
  std::string tag = cell.threads > 0 ? fmt::format("{} on {} x{}", w.name, c.engine, r.threads)
                                     : fmt::format("{} on {}", w.name, c.engine);
  say(fmt::format("{} {} ...", progress_bar(done, total), tag));

  tensor::Tensor out;
  std::vector<double> times;
  std::string problem, skip;
  bool ok = true;
  if (dev && !dev->ok) {
    skip = "no " + c.device + " device: " + dev->error;
  } else if (c.kind == Column::Ref) {
    // The interpreter: at most 3 runs, it is the slow oracle.
    ok = run_compiled(tensor::reference_backend(), p_.naive, 1, std::min(o_.repeats, 3), &r,
                      &out, &times, &problem);
    r.compile_s = std::numeric_limits<double>::quiet_NaN();  // an interpreter compiles nothing
  } else if (c.kind == Column::External) {
    run_external(cell.threads, &r, &out, &times, &skip);
  } else if (c.kind == Column::Baseline) {
    ok = time_runs([&] {
      bool good = true;
      double s = wall([&] { good = run_baseline(cell.threads, &out, &problem); });
      return good ? s : -1.0;
    }, o_.repeats, &times);
  } else if (c.kind == Column::Hand) {
    ok = run_hand(c.device, &r, &out, &times, &problem);
  } else {
    const Prepared::Scheduled& s = p_.scheduled.at(c.device);
    bool scheduled = c.kind == Column::Sched;
    if (c.kind == Column::Default) {
      if (!s.rules_missing.empty()) skip = s.rules_missing;
      else ok = run_compiled(*tensor::find_backend(c.device), s.by_rules, cell.threads, o_.repeats,
                             &r, &out, &times, &problem);
    } else if (scheduled && !s.missing.empty()) skip = s.missing;
    else if (scheduled && !s.problem.empty()) {
      ok = false;
      problem = s.problem;
    } else {
      ok = run_compiled(*tensor::find_backend(c.device), scheduled ? s.func : p_.naive,
                        cell.threads, o_.repeats, &r, &out, &times, &problem);
    }
  }
  if (ok && skip.empty()) {
    std::string why;
    if (p_.have_ref) {
      if (!tensor::allclose(out, p_.ref_out, 1e-4, &why)) {
        ok = false;
        problem = "result differs from the reference interpreter: " + why;
      }
    } else if (p_.have_base) {
      if (!tensor::allclose(out, p_.base_out, 1e-4, &why)) {
        ok = false;
        problem = "result differs from " + w.baseline + ": " + why;
      }
    } else {
      ok = false;
      problem = "nothing to check against: " + p_.base_error;
    }
  }
  finish_record(&r, times, ok, problem, skip);
  bool on_roof = c.kind != Column::Naive && c.kind != Column::Default && c.kind != Column::Sched &&
                 c.kind != Column::Hand;
  if (!on_roof) on_roof = !dev || tensor::find_backend(c.device)->host_threads() || dev->summary.host_cpu;
  if (!on_roof) r.roof_fraction = std::numeric_limits<double>::quiet_NaN();
  std::string result = r.skipped       ? "skipped: " + skip
                       : r.checksum_ok ? fmt::format("median {}, {:.2f} GFLOP/s",
                                                     seconds_text(r.median_s), r.gflops)
                                       : "FAILED: " + problem;
  say(fmt::format("{} {}: {}", progress_bar(done + 1, total), tag, result));
  return r;
}

void TensorSuite::finish_record(BenchRecord* r, const std::vector<double>& times, bool ok,
                                const std::string& problem, const std::string& skip) const {
  r->runs_s = times;
  r->runs = int(times.size());
  if (!times.empty() && skip.empty()) {
    r->median_s = median_of(times);
    r->min_s = *std::min_element(times.begin(), times.end());
    r->max_s = *std::max_element(times.begin(), times.end());
    r->cpu_s = std::numeric_limits<double>::quiet_NaN();
    if (r->median_s > 0) {
      r->gflops = p_.flops / r->median_s / 1e9;
      r->gbs = p_.bytes / r->median_s / 1e9;
      auto roof = roofs_.find(r->threads);
      if (roof != roofs_.end()) {
        // Warm runs find the data where the last run left it: in the smallest cache that
        // holds the kernel's inputs and output, whose bandwidth is then the memory roof.
        double attainable = roof->second.attainable_gflops(p_.flops / p_.bytes, p_.bytes);
        if (attainable > 0) r->roof_fraction = r->gflops / attainable;
        r->roof_level = roof->second.level_for(p_.bytes).name;
      }
    }
  }
  r->skipped = !skip.empty();
  r->checksum_ok = ok && skip.empty() && !times.empty();
  std::string why = problem;
  if (ok && skip.empty() && times.empty()) why = "interrupted";
  // A column with something to say (the onnxruntime column: its version) keeps it when all is well.
  r->note = r->skipped ? "skipped: " + skip : r->checksum_ok ? r->note : why;
  r->output = r->checksum_ok ? r->expected : "";
}

std::vector<BenchRecord> TensorSuite::run(std::string* error) {
  std::vector<Cell> cells = plan();
  open_devices(cells);
  measure_roofs();
  std::vector<BenchRecord> records;
  size_t last_workload = SIZE_MAX;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (o_.interrupt && o_.interrupt->load()) {
      *error = "interrupted";
      break;
    }
    if (cells[i].workload != last_workload) {
      last_workload = cells[i].workload;
      if (!prepare(cells[i].workload, error)) return records;
    }
    records.push_back(run_cell(cells[i], i, cells.size()));
  }
  return records;
}

// Ratios against the workload's baseline at the same thread count (a device column, whose
// parallelism is its own: against the baseline's highest thread count).
void set_ratios(std::vector<BenchRecord>& records) {
  std::vector<Column> cols = columns();
  for (auto& r : records) {
    const Column* col = find_column(cols, r.engine);
    bool device_column = col && !col->device.empty() && col->kind != Column::Ref &&
                         !tensor::find_backend(col->device)->host_threads();
    const BenchRecord* best = nullptr;
    for (const auto& b : records) {
      if (b.workload != r.workload || b.engine != r.baseline || !b.checksum_ok || b.median_s <= 0)
        continue;
      if (!device_column && b.threads == r.threads) {
        best = &b;
        break;
      }
      if (device_column && (!best || b.threads > best->threads)) best = &b;
    }
    if (best && r.checksum_ok) r.ratio_vs_baseline = r.median_s / best->median_s;
  }
}

}  // namespace

std::vector<std::string> tensor_workloads() {
  std::vector<std::string> names;
  for (const auto& w : all_workloads()) names.push_back(w.name);
  return names;
}

std::vector<std::string> tensor_engines() {
  std::vector<std::string> names;
  for (const auto& c : columns()) names.push_back(c.engine);
  return names;
}

std::string schedules_dir() {
  if (const char* d = std::getenv("DESCENT_SCHEDULES_DIR")) return d;
  return DESCENT_BENCH_SCHEDULES_DIR;
}

std::vector<BenchRecord> run_tensor_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  TensorSuite suite(o);
  if (!suite.validate(error)) return {};
  std::vector<BenchRecord> records = suite.run(error);
  set_ratios(records);
  write_outputs(o, records, error);
  return records;
}

}  // namespace descent::bench
