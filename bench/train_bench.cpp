// The train suite of `descent bench` (bench.h): one epoch of MLP training, time per epoch.
// Two MLPs at batch 64, 22 steps an epoch: the digits MLP of examples/train_digits
// (64-128-10, its data and seeded initial weights) and an MNIST-shaped one (784-128-10,
// seeded random images and weights). The Descent program is the example's loop: forward,
// prelude cross_entropy, grad for the four parameters, SGD with momentum as kernels, each
// parameter renewed with param(). The baselines (bench/models/train_baseline.py, a child
// python3) train the same model from the same weights on the same batches: NumPy with the
// backward pass written by hand, PyTorch's autograd and optim.SGD, and tinygrad's autograd and
// SGD under TinyJit, the last two when installed.
//
// The check: each column's first epoch from the initial weights gives a mean loss, which
// must equal NumPy's to 1e-3 (relative); the timed epochs then continue training.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "bench/bench.h"
#include "bench/internal.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "tensor/tensor.h"

namespace descent::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int64_t kBatch = 64, kSteps = 22;

struct TrainWorkload {
  std::string name;  // "digits_train"
  int64_t in = 64, hidden = 128, out = 10;
};

const std::vector<TrainWorkload>& train_list() {
  static const std::vector<TrainWorkload> all = {{"digits_train", 64, 128, 10},
                                                 {"mnist_train", 784, 128, 10}};
  return all;
}

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {"cpu-ast", "cpu-reg", "cpu-jit", "numpy", "pytorch", "tinygrad"};
  return c;
}

// The columns the child python3 fills (bench/models/train_baseline.py).
bool is_python_column(const std::string& c) { return c == "numpy" || c == "pytorch" || c == "tinygrad"; }

std::string examples_dir() {
  const char* env = std::getenv("DESCENT_EXAMPLES_DIR");
  return env ? env : DESCENT_BENCH_EXAMPLES_DIR;
}

// The files both sides read: x.npy, y.npy and the initial weights, in `dir`.
bool write_data(const TrainWorkload& w, const fs::path& dir, std::string* error) {
  const int64_t n = kBatch * kSteps;
  tensor::Tensor x, y;
  std::vector<tensor::Tensor> params(4);
  if (w.name == "digits_train") {
    std::string d = examples_dir() + "/train_digits/";
    tensor::Tensor all_x, all_y;
    if (!tensor::load_npy(d + "train_images.npy", &all_x, error) ||
        !tensor::load_npy(d + "train_labels.npy", &all_y, error) ||
        !tensor::load_npy(d + "w1_init.npy", &params[0], error) ||
        !tensor::load_npy(d + "b1_init.npy", &params[1], error) ||
        !tensor::load_npy(d + "w2_init.npy", &params[2], error) ||
        !tensor::load_npy(d + "b2_init.npy", &params[3], error) ||
        !tensor::zeros({n, w.in}, &x, error) || !tensor::zeros({n}, &y, error))
      return false;
    std::copy(all_x.data.data(), all_x.data.data() + n * w.in, x.data.data());
    std::copy(all_y.data.data(), all_y.data.data() + n, y.data.data());
  } else {
    // Pixels in [0, 1], classes 0..9 in turn; weights scaled by 1/sqrt(fan-in) (nn.Linear's).
    if (!tensor::rand({n, w.in}, 400, &x, error) || !tensor::zeros({n}, &y, error)) return false;
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = 0.5f + 0.5f * x.data[i];
    for (int64_t i = 0; i < n; ++i) y.data[size_t(i)] = float(i % w.out);
    const int64_t dims[] = {w.in, w.hidden, w.out};
    for (int l = 0; l < 2; ++l) {
      if (!tensor::rand({dims[l + 1], dims[l]}, 500 + l, &params[2 * l], error) ||
          !tensor::rand({dims[l + 1]}, 600 + l, &params[2 * l + 1], error))
        return false;
      float scale = 1.0f / std::sqrt(float(dims[l]));
      for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < params[size_t(2 * l + k)].data.size(); ++i) params[size_t(2 * l + k)].data[i] *= scale;
    }
  }
  const char* names[] = {"w1", "b1", "w2", "b2"};
  for (int i = 0; i < 4; ++i)
    if (!tensor::save_npy(params[size_t(i)], (dir / (std::string(names[i]) + ".npy")).string(), error))
      return false;
  return tensor::save_npy(x, (dir / "x.npy").string(), error) &&
         tensor::save_npy(y, (dir / "y.npy").string(), error);
}

// The set-up (data, parameters, the optimizer's hyperparameters), then the epoch, as two inputs.
std::string setup_program(const TrainWorkload& w, const fs::path& dir) {
  std::string d = dir.string() + "/";
  return fmt::format(
      "train_x = load(\"{0}x.npy\")\ntrain_y = load(\"{0}y.npy\")\n"
      "w1 = param(load(\"{0}w1.npy\"))\nb1 = param(load(\"{0}b1.npy\"))\n"
      "w2 = param(load(\"{0}w2.npy\"))\nb2 = param(load(\"{0}b2.npy\"))\n"
      "v_w1 = zeros([{1}, {2}])\nv_b1 = zeros([{1}])\nv_w2 = zeros([{3}, {1}])\nv_b2 = zeros([{3}])\n"
      "lr = full([1], 0.1 / {4}.0)\nbeta = full([1], 0.9)\n"  // the prelude's optimizer kernels
      "total = 0.0\n",
      d, w.hidden, w.in, w.out, kBatch);
}

std::string epoch_program() {
  return fmt::format(
      "total = 0.0\n"
      "for s in 0..{1} {{\n"
      "  x = rows(train_x, s * {0}, {0})\n  y = rows(train_y, s * {0}, {0})\n"
      "  loss = cross_entropy(bias_add(linear(relu(bias_add(linear(x, w1), b1)), w2), b2), y)\n"
      "  g_w1 = grad(loss, w1)\n  g_b1 = grad(loss, b1)\n  g_w2 = grad(loss, w2)\n  g_b2 = grad(loss, b2)\n"
      "  v_w1 = param(momentum(v_w1, g_w1, beta))\n  v_b1 = param(momentum_vec(v_b1, g_b1, beta))\n"
      "  v_w2 = param(momentum(v_w2, g_w2, beta))\n  v_b2 = param(momentum_vec(v_b2, g_b2, beta))\n"
      "  w1 = param(sgd_step(w1, v_w1, lr))\n  b1 = param(sgd_step_vec(b1, v_b1, lr))\n"
      "  w2 = param(sgd_step(w2, v_w2, lr))\n  b2 = param(sgd_step_vec(b2, v_b2, lr))\n"
      "  total = total + sum_all(loss)\n"
      "}}\nprint(total / {2}.0)\n",
      kBatch, kSteps, kBatch * kSteps);
}

class TrainSuite {
 public:
  explicit TrainSuite(const BenchOptions& o) : o_(o) {}
  std::vector<BenchRecord> run(std::string* error);

 private:
  void say(const std::string& line) {
    if (o_.progress) o_.progress(line);
  }
  bool wants(const std::string& c) const {
    return o_.engines.empty() || std::find(o_.engines.begin(), o_.engines.end(), c) != o_.engines.end();
  }
  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }
  BenchRecord record(const TrainWorkload& w, const std::string& engine, int threads) const {
    BenchRecord r;
    r.suite = "train";
    r.workload = w.name;
    r.engine = engine;
    r.kind = is_python_column(engine) ? "external" : "descent";
    r.scale = o_.quick ? "quick" : "full";
    r.threads = threads;
    return r;
  }
  static void finish(BenchRecord* r, const std::vector<double>& runs, double flops) {
    r->runs_s = runs;
    r->runs = int(runs.size());
    r->median_s = median_of(runs);
    r->min_s = *std::min_element(runs.begin(), runs.end());
    r->max_s = *std::max_element(runs.begin(), runs.end());
    r->gflops = flops / r->median_s * 1e-9;
  }
  BenchRecord descent_cell(const TrainWorkload& w, const std::string& column, int threads,
                           const fs::path& dir, double flops);
  int repeats() const { return o_.quick ? 1 : std::max(1, o_.repeats); }

  const BenchOptions& o_;
  std::set<std::string> said_;
};

// A training step is 3 matmuls per layer (forward, input and weight gradients).
double epoch_flops(const TrainWorkload& w) {
  return 3.0 * 2.0 * kBatch * kSteps * double(w.in * w.hidden + w.hidden * w.out);
}

BenchRecord TrainSuite::descent_cell(const TrainWorkload& w, const std::string& column, int threads,
                                     const fs::path& dir, double flops) {
  std::string engine = column.substr(column.find('-') + 1);
  BenchRecord r = record(w, column, threads);
  Session s;
  std::string error;
  s.set_engine(engine);
  if (!s.set_device("cpu", &error)) {
    r.skipped = true;
    r.note = "the cpu device is not available here: " + error;
    return r;
  }
  s.set_threads(threads);
  std::string printed;
  RunOptions opts;
  opts.out = [&](std::string_view t) { printed += t; };
  auto go = [&](Outcome o) {
    if (o.status != Outcome::Ok) r.note = o.message;
    return o.status == Outcome::Ok;
  };
  if (!go(s.submit(setup_program(w, dir), "train.ds", opts)) ||
      !go(s.submit(epoch_program(), "epoch.ds", opts)))
    return r;
  r.output = printed.substr(0, printed.find('\n'));  // the first epoch's mean loss
  std::vector<double> runs;
  for (int i = 0; i < repeats() && !interrupted(); ++i) {
    auto t0 = Clock::now();
    if (!go(s.run(opts))) return r;
    runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  if (!runs.empty()) finish(&r, runs, flops);
  return r;
}

std::vector<BenchRecord> TrainSuite::run(std::string* error) {
  for (const auto& e : o_.engines)
    if (std::find(columns().begin(), columns().end(), e) == columns().end()) {
      *error = fmt::format("no engine '{}' in suite 'train' (engines: {})", e, join(columns()));
      return {};
    }
  std::vector<TrainWorkload> chosen;
  for (const auto& w : train_list())
    if (o_.workloads.empty() || std::find(o_.workloads.begin(), o_.workloads.end(), w.name) != o_.workloads.end())
      chosen.push_back(w);
  if (chosen.empty()) {
    *error = fmt::format("no such workload in suite 'train' (workloads: {})", join(train_workloads()));
    return {};
  }
  fs::path root = fs::temp_directory_path() / fmt::format("descent-bench-train-{}", ::getpid());
  std::vector<BenchRecord> records;
  for (const auto& w : chosen) {
    fs::path dir = root / w.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (!write_data(w, dir, error)) return records;
    double flops = epoch_flops(w);
    for (int threads : o_.threads) {
      size_t first = records.size();
      for (const auto& column : columns()) {
        if (is_python_column(column) || !wants(column) || interrupted()) continue;
        say(fmt::format("train/{} on {} ({} thread{})", w.name, column, threads, threads == 1 ? "" : "s"));
        records.push_back(descent_cell(w, column, threads, dir, flops));
      }
      std::string python = find_on_path("python3");
      if ((wants("numpy") || wants("pytorch") || wants("tinygrad")) && !python.empty() && !interrupted()) {
        say(fmt::format("train/{} on numpy, pytorch and tinygrad ({} thread{})", w.name, threads, threads == 1 ? "" : "s"));
        std::string script = (fs::path(DESCENT_BENCH_MODELS_DIR) / "train_baseline.py").string();
        ProcResult p = run_process({python, script, dir.string(), std::to_string(threads),
                                    std::to_string(repeats())}, o_.interrupt);
        nlohmann::json j = p.ok ? nlohmann::json::parse(p.out, nullptr, false) : nlohmann::json();
        if (!p.ok || j.is_discarded() || !j.is_object()) {
          if (!p.was_interrupted) say("the python baselines did not run: " + (p.ok ? p.out.substr(0, 200) : p.problem));
        } else {
          for (const auto& note : j.value("notes", nlohmann::json::array()))
            if (said_.insert(note.get<std::string>()).second) say(note.get<std::string>());
          for (const std::string engine : {"numpy", "pytorch", "tinygrad"}) {
            if (!j.contains(engine) || !wants(engine)) continue;
            BenchRecord r = record(w, engine, threads);
            finish(&r, j[engine]["runs_s"].get<std::vector<double>>(), flops);
            r.output = fmt::format("{}", j[engine]["first_loss"].get<double>());
            r.note = j[engine].value("version", "");
            records.push_back(r);
          }
        }
      }
      // The check: every column's first-epoch loss against NumPy's; ratios against PyTorch
      // (NumPy where PyTorch is absent) at the same thread count.
      const BenchRecord* numpy = nullptr;
      const BenchRecord* base = nullptr;
      for (size_t i = first; i < records.size(); ++i) {
        if (records[i].engine == "numpy") numpy = &records[i];
        if (records[i].engine == "pytorch") base = &records[i];
      }
      if (!base) base = numpy;
      for (size_t i = first; i < records.size(); ++i) {
        BenchRecord& r = records[i];
        if (r.runs == 0) continue;
        double got = std::strtod(r.output.c_str(), nullptr);
        if (numpy) {
          double want = std::strtod(numpy->output.c_str(), nullptr);
          r.checksum_ok = std::isfinite(got) && std::fabs(got - want) <= 1e-3 * std::max(1.0, std::fabs(want));
          r.expected = "NumPy's first-epoch loss " + numpy->output;
          if (!r.checksum_ok) r.note = fmt::format("first-epoch loss {} but NumPy's is {}", r.output, numpy->output);
        } else {
          r.checksum_ok = std::isfinite(got);
          r.expected = "a finite first-epoch loss (no NumPy to compare with)";
        }
        if (base && base->runs) {
          r.baseline = base->engine;
          r.ratio_vs_baseline = r.median_s / base->median_s;
        }
      }
    }
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  if (interrupted()) *error = "interrupted";
  write_outputs(o_, records, error);
  return records;
}

}  // namespace

std::vector<std::string> train_workloads() {
  std::vector<std::string> names;
  for (const auto& w : train_list()) names.push_back(w.name);
  return names;
}

std::vector<BenchRecord> run_train_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  TrainSuite suite(o);
  return suite.run(error);
}

std::string format_train_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "engine", "threads", "per epoch", "first loss", "GFLOP/s", "vs", "check"}};
  std::vector<std::string> notes;
  for (const auto& r : records) {
    if (r.suite != "train") continue;
    if (r.skipped || r.runs == 0) {
      notes.push_back(fmt::format("{} on {}: {}", r.workload, r.engine, r.skipped ? "skipped: " + r.note : r.note));
      continue;
    }
    rows.push_back({r.workload, r.engine, std::to_string(r.threads), seconds_text(r.median_s, 3),
                    r.output.substr(0, 8), fmt::format("{:.2f}", r.gflops),
                    std::isnan(r.ratio_vs_baseline) ? "-" : fmt::format("{:.2f}x {}", r.ratio_vs_baseline, r.baseline),
                    r.checksum_ok ? "ok" : "FAIL"});
    if (!r.checksum_ok) notes.push_back(fmt::format("{} on {}: {}", r.workload, r.engine, r.note));
  }
  std::string s = render(rows, 2);
  s += fmt::format("per epoch: median time of {} training steps at batch {} (forward, gradients, SGD with\n"
                   "momentum); first loss: the first epoch's mean loss, checked against NumPy's; vs: the time\n"
                   "over PyTorch's (NumPy's where PyTorch is absent) at the same threads\n", kSteps, kBatch);
  for (const auto& n : notes) s += "  " + n + "\n";
  return s;
}

}  // namespace descent::bench
