// The model suite of `descent bench` (bench.h): whole models, not kernels. Two MLPs, the
// trained digits classifier (64-32-10, examples/mlp_digits) and an MNIST-shaped one
// (784-128-10, seeded random weights), at batch 1 and 64. Each model is written as ONNX
// (importer::mlp_onnx_bytes, as torch.onnx.export would) and imported with `descent import`'s
// translator, so the program timed is the one a student gets from a framework; the same
// .onnx file goes to ONNX Runtime.
//
// A Descent cell times the program's own loop, `for i in 0..K { y = model(x); v = y[0, 0] }`:
// building the graph, finding its replayed plan, running the kernels and reading a value,
// per batch, as a program pays it. The loop is compiled once and run `repeats` times
// (Session::run); K is chosen so that one run takes about 200 ms (5 ms quick), and the cost of
// a run with no batches (an empty loop) is taken off each. The baselines
// run in a child python3 (bench/models/mlp_baseline.py) with the same batch and threads.
// Every output is checked against the reference interpreter's (device ref) to 1e-4.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/bench.h"
#include "bench/internal.h"
#include "importer/onnx_import.h"
#include "plugins/import_lazy.h"  // importer/ through libdescent_import.so, opened on first use
#include "lang/text.h"
#include "pipeline/pipeline.h"
#include "tensor/tensor.h"

namespace descent::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ModelWorkload {
  std::string name;       // "mnist_b64"
  std::string model;      // "digits" or "mnist"
  int64_t batch = 1;
};

const std::vector<ModelWorkload>& model_list() {
  static const std::vector<ModelWorkload> all = {
      {"digits_b1", "digits", 1}, {"digits_b64", "digits", 64},
      {"mnist_b1", "mnist", 1},   {"mnist_b64", "mnist", 64}};
  return all;
}

// Columns: the Descent engines driving the cpu device, the ast engine on OpenCL, then the
// yardsticks.
const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {"cpu-ast", "cpu-stack", "cpu-reg", "cpu-jit",
                                             "opencl-ast", "numpy", "onnxruntime"};
  return c;
}

std::string examples_dir() {
  const char* env = std::getenv("DESCENT_EXAMPLES_DIR");
  return env ? env : DESCENT_BENCH_EXAMPLES_DIR;
}

struct Model {
  std::vector<tensor::Tensor> weights, biases;  // nn.Linear layout
  tensor::Tensor images;                         // rows to take batches from
};

bool make_model(const std::string& which, Model* m, std::string* error) {
  if (which == "digits") {
    std::string d = examples_dir() + "/mlp_digits/";
    m->weights.resize(2);
    m->biases.resize(2);
    return tensor::load_npy(d + "w1.npy", &m->weights[0], error) &&
           tensor::load_npy(d + "b1.npy", &m->biases[0], error) &&
           tensor::load_npy(d + "w2.npy", &m->weights[1], error) &&
           tensor::load_npy(d + "b2.npy", &m->biases[1], error) &&
           tensor::load_npy(d + "images.npy", &m->images, error);
  }
  // MNIST-shaped: 784 pixels, 128 hidden units, 10 classes; weights scaled by 1/sqrt(fan-in)
  // (as nn.Linear initialises them) so the logits stay of order 1.
  const int64_t dims[] = {784, 128, 10};
  m->weights.resize(2);
  m->biases.resize(2);
  for (int l = 0; l < 2; ++l) {
    if (!tensor::rand({dims[l + 1], dims[l]}, 100 + l, &m->weights[l], error) ||
        !tensor::rand({dims[l + 1]}, 200 + l, &m->biases[l], error))
      return false;
    float scale = 1.0f / std::sqrt(static_cast<float>(dims[l]));
    for (size_t i = 0; i < m->weights[l].data.size(); ++i) m->weights[l].data[i] *= scale;
    for (size_t i = 0; i < m->biases[l].data.size(); ++i) m->biases[l].data[i] *= scale;
  }
  if (!tensor::rand({64, 784}, 300, &m->images, error)) return false;
  for (size_t i = 0; i < m->images.data.size(); ++i) m->images.data[i] = 0.5f + 0.5f * m->images.data[i];
  return true;
}

// The first `batch` rows of the images.
tensor::Tensor first_rows(const tensor::Tensor& t, int64_t batch) {
  tensor::Tensor out;
  std::string error;
  int64_t cols = t.numel() / t.shape[0];
  tensor::zeros({batch, cols}, &out, &error);
  std::copy(t.data.data(), t.data.data() + batch * cols, out.data.data());
  return out;
}

double flops_of(const Model& m, int64_t batch) {
  double f = 0;
  for (const auto& w : m.weights) f += 2.0 * batch * static_cast<double>(w.numel());
  return f;
}

class ModelSuite {
 public:
  explicit ModelSuite(const BenchOptions& o) : o_(o) {}

  std::vector<BenchRecord> run(std::string* error);

 private:
  void say(const std::string& line) {
    if (o_.progress) o_.progress(line);
  }
  bool wants(const std::string& column) const {
    return o_.engines.empty() || std::find(o_.engines.begin(), o_.engines.end(), column) != o_.engines.end();
  }
  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }
  BenchRecord record(const ModelWorkload& w, const std::string& engine, int threads) const {
    BenchRecord r;
    r.suite = "model";
    r.workload = w.name;
    r.engine = engine;
    r.kind = engine == "numpy" || engine == "onnxruntime" ? "external" : "descent";
    r.scale = o_.quick ? "quick" : "full";
    r.threads = threads;
    return r;
  }
  void finish(BenchRecord* r, std::vector<double> runs, double flops) const {
    r->runs_s = runs;
    r->runs = static_cast<int>(runs.size());
    r->median_s = median_of(runs);
    r->min_s = *std::min_element(runs.begin(), runs.end());
    r->max_s = *std::max_element(runs.begin(), runs.end());
    r->gflops = flops / r->median_s * 1e-9;
  }
  bool check(BenchRecord* r, const std::string& file, const tensor::Tensor& reference) const {
    tensor::Tensor got;
    std::string why;
    if (!tensor::load_npy(file, &got, &why) || !tensor::allclose(got, reference, 1e-4, &why)) {
      r->checksum_ok = false;
      r->note = "output differs from the reference interpreter's: " + why;
      return false;
    }
    r->checksum_ok = true;
    r->expected = "the reference interpreter's output";
    r->output = tensor::format_tensor(got);
    return true;
  }
  BenchRecord descent_cell(const ModelWorkload& w, const std::string& column, int threads,
                           const std::string& program, const fs::path& dir,
                           const tensor::Tensor& reference, double flops);
  std::vector<BenchRecord> python_cells(const ModelWorkload& w, int threads, const fs::path& dir,
                                        const tensor::Tensor& reference, double flops);

  const BenchOptions& o_;
  std::set<std::string> notes_said_;  // each python note once, not once per cell
};

// Runs `source` in `s`; false with the message when it fails.
bool submit(Session& s, const std::string& source, std::string* error) {
  RunOptions opts;
  opts.out = [](std::string_view) {};
  Outcome out = s.submit(source, "model.ds", opts);
  if (out.status != Outcome::Ok) *error = out.message;
  return out.status == Outcome::Ok;
}

BenchRecord ModelSuite::descent_cell(const ModelWorkload& w, const std::string& column, int threads,
                                     const std::string& program, const fs::path& dir,
                                     const tensor::Tensor& reference, double flops) {
  std::string device = column.substr(0, column.find('-')), engine = column.substr(column.find('-') + 1);
  BenchRecord r = record(w, column, threads);
  Session s;
  std::string error;
  s.set_engine(engine);
  if (!s.set_device(device, &error)) {
    r.skipped = true;
    r.note = "device " + device + " is not available here: " + error;
    return r;
  }
  s.set_threads(threads);
  // The program as imported (weights, model, one run on its input), then the timed loop.
  if (!submit(s, program, &error)) {
    r.note = error;
    return r;
  }
  auto loop = [](int64_t k) { return fmt::format("for i in 0..{} {{ y = model(x); v = y[0, 0] }}\n", k); };
  auto time_run = [&](double* seconds) {
    RunOptions opts;
    opts.out = [](std::string_view) {};
    auto t0 = Clock::now();
    Outcome out = s.run(opts);
    *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (out.status != Outcome::Ok) error = out.message;
    return out.status == Outcome::Ok;
  };
  // Calibrate K: loops of 4, 16, 64, ... batches until one takes a quarter of the target.
  // Each size is run twice and the second time kept: the first run of a new loop pays its
  // compilation (the jit engine's LLVM, milliseconds) and nothing in the timed runs does.
  double t = 0, target = o_.quick ? 0.005 : 0.2;
  int64_t k = 4;
  for (;; k *= 4) {
    if (!submit(s, loop(k), &error) || !time_run(&t) || !time_run(&t)) {
      r.note = error;
      return r;
    }
    if (t >= target / 4 || k >= 100000) break;
  }
  k = std::clamp<int64_t>(static_cast<int64_t>(static_cast<double>(k) * target / std::max(t, 1e-9)), 1, 400000);
  // What a run costs besides its batches (the jit engine translates the program to LLVM on
  // every run, milliseconds): timed on an empty loop and taken off each timed run, so a
  // column's time per batch is the same quantity on every engine. It is reported as the
  // record's compile_s.
  std::vector<double> empty;
  if (!submit(s, loop(0), &error)) {
    r.note = error;
    return r;
  }
  for (int i = 0; i < 3; ++i) {
    if (!time_run(&t)) {
      r.note = error;
      return r;
    }
    empty.push_back(t);
  }
  double fixed = median_of(empty);
  r.compile_s = fixed;
  std::vector<double> runs;
  if (!submit(s, loop(k), &error) || !time_run(&t)) {
    r.note = error;
    return r;
  }
  for (int i = 0; i < std::max(1, o_.repeats) && !interrupted(); ++i) {
    if (!time_run(&t)) {
      r.note = error;
      return r;
    }
    runs.push_back(std::max(t - fixed, t / 2) / static_cast<double>(k));
  }
  if (runs.empty()) return r;
  finish(&r, runs, flops);
  std::string out = (dir / ("out_" + column + ".npy")).string();
  if (!submit(s, fmt::format("save(y, \"{}\")\n", out), &error)) {
    r.note = error;
    return r;
  }
  check(&r, out, reference);
  return r;
}

std::vector<BenchRecord> ModelSuite::python_cells(const ModelWorkload& w, int threads, const fs::path& dir,
                                                  const tensor::Tensor& reference, double flops) {
  std::vector<BenchRecord> records;
  std::string python = find_on_path("python3");
  if (python.empty()) {
    say("python3 is not on PATH: no numpy or onnxruntime column");
    return records;
  }
  std::string script = (fs::path(DESCENT_BENCH_MODELS_DIR) / "mlp_baseline.py").string();
  ProcResult p = run_process({python, script, dir.string(), std::to_string(threads),
                              o_.quick ? "0.005" : "0.05", std::to_string(std::max(1, o_.repeats))},
                             o_.interrupt);
  if (!p.ok) {
    // A baseline that cannot run is a note, never a failure of the suite.
    if (!p.was_interrupted) say("the python baselines did not run: " + p.problem);
    return records;
  }
  nlohmann::json j = nlohmann::json::parse(p.out, nullptr, false);
  if (j.is_discarded()) {
    say("the python baselines printed something that is not JSON: " + p.out.substr(0, 200));
    return records;
  }
  for (const auto& note : j.value("notes", nlohmann::json::array())) {
    std::string text = note.get<std::string>();
    if (notes_said_.insert(text).second) say(text);
  }
  for (const std::string engine : {"numpy", "onnxruntime"}) {
    if (!j.contains(engine) || !wants(engine)) continue;
    BenchRecord r = record(w, engine, threads);
    std::vector<double> runs = j[engine]["runs_s"].get<std::vector<double>>();
    if (runs.empty()) continue;
    finish(&r, runs, flops);
    r.note = j[engine].value("version", "");
    check(&r, (dir / ("out_" + engine + ".npy")).string(), reference);
    records.push_back(r);
  }
  return records;
}

std::vector<BenchRecord> ModelSuite::run(std::string* error) {
  for (const auto& e : o_.engines)
    if (std::find(columns().begin(), columns().end(), e) == columns().end()) {
      *error = fmt::format("no engine '{}' in suite 'model' (engines: {})", e, join(columns()));
      return {};
    }
  std::vector<ModelWorkload> chosen;
  for (const auto& w : model_list())
    if (o_.workloads.empty() || std::find(o_.workloads.begin(), o_.workloads.end(), w.name) != o_.workloads.end())
      chosen.push_back(w);
  for (const auto& name : o_.workloads)
    if (std::none_of(model_list().begin(), model_list().end(), [&](const ModelWorkload& w) { return w.name == name; })) {
      *error = fmt::format("no workload '{}' in suite 'model' (workloads: {})", name, join(model_workloads()));
      return {};
    }
  fs::path root = fs::temp_directory_path() / fmt::format("descent-bench-model-{}", ::getpid());
  std::vector<BenchRecord> records;
  for (const auto& w : chosen) {
    if (interrupted()) break;
    Model m;
    if (!make_model(w.model, &m, error)) return records;
    fs::path dir = root / w.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    // The files both sides read: the model as ONNX, its weights, the input batch.
    std::string bytes = import_plugin::mlp_onnx_bytes(m.weights, m.biases, error);
    if (bytes.empty()) return records;
    std::ofstream(dir / "model.onnx", std::ios::binary) << bytes;
    tensor::Tensor input = first_rows(m.images, w.batch);
    bool saved = tensor::save_npy(input, (dir / "input.npy").string(), error);
    for (size_t l = 0; saved && l < m.weights.size(); ++l)
      saved = tensor::save_npy(m.weights[l], (dir / fmt::format("w{}.npy", l + 1)).string(), error) &&
              tensor::save_npy(m.biases[l], (dir / fmt::format("b{}.npy", l + 1)).string(), error);
    if (!saved) return records;
    importer::ImportOptions io;
    io.out_dir = dir.string();
    io.input_npy = (dir / "input.npy").string();
    importer::ImportResult imported;
    if (!import_plugin::import_onnx_file((dir / "model.onnx").string(), io, &imported, error)) return records;
    const std::string& program = imported.program;

    // The oracle: the reference interpreter, once per workload.
    tensor::Tensor reference;
    {
      Session s;
      std::string ref_out = (dir / "out_ref.npy").string();
      if (!s.set_device("ref", error) || !submit(s, program + fmt::format("save(y, \"{}\")\n", ref_out), error) ||
          !tensor::load_npy(ref_out, &reference, error)) {
        *error = w.name + ": the reference run failed: " + *error;
        return records;
      }
    }
    double flops = flops_of(m, w.batch);
    for (int threads : o_.threads) {
      for (const auto& column : columns()) {
        if (column == "numpy" || column == "onnxruntime" || !wants(column) || interrupted()) continue;
        // OpenCL chooses its own parallelism: one cell, at the first thread count's turn.
        if (column.rfind("opencl", 0) == 0 && threads != o_.threads.front()) continue;
        say(fmt::format("model/{} on {} ({} thread{})", w.name, column, threads, threads == 1 ? "" : "s"));
        records.push_back(descent_cell(w, column, column.rfind("opencl", 0) == 0 ? 0 : threads, program,
                                       dir, reference, flops));
      }
      if ((wants("numpy") || wants("onnxruntime")) && !interrupted()) {
        say(fmt::format("model/{} on numpy and onnxruntime ({} thread{})", w.name, threads, threads == 1 ? "" : "s"));
        auto more = python_cells(w, threads, dir, reference, flops);
        records.insert(records.end(), more.begin(), more.end());
      }
    }
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  // Ratios: each cell against ONNX Runtime at the same threads (OpenCL: ORT's fastest), or
  // NumPy where ONNX Runtime is not installed.
  for (auto& r : records) {
    for (const std::string base : {"onnxruntime", "numpy"}) {
      const BenchRecord* best = nullptr;
      for (const auto& b : records)
        if (b.workload == r.workload && b.engine == base && b.checksum_ok &&
            (r.threads == 0 ? (!best || b.median_s < best->median_s) : b.threads == r.threads))
          best = &b;
      if (!best) continue;
      r.baseline = base;
      r.ratio_vs_baseline = r.median_s / best->median_s;
      break;
    }
  }
  if (interrupted()) *error = "interrupted";
  write_outputs(o_, records, error);
  return records;
}

}  // namespace

std::vector<std::string> model_workloads() {
  std::vector<std::string> names;
  for (const auto& w : model_list()) names.push_back(w.name);
  return names;
}

std::vector<std::string> model_engines() { return columns(); }

std::vector<BenchRecord> run_model_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  ModelSuite suite(o);
  return suite.run(error);
}

std::string format_model_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "engine", "threads", "per batch", "images/s", "GFLOP/s", "vs", "check"}};
  std::vector<std::string> notes;
  for (const auto& r : records) {
    if (r.suite != "model") continue;
    if (r.skipped || r.runs == 0) {
      notes.push_back(fmt::format("{} on {}: {}", r.workload, r.engine, r.skipped ? "skipped: " + r.note : r.note));
      continue;
    }
    int64_t batch = r.workload.size() > 3 && r.workload.substr(r.workload.size() - 3) == "b64" ? 64 : 1;
    rows.push_back({r.workload, r.engine, r.threads ? std::to_string(r.threads) : "-",
                    seconds_text(r.median_s, 3), fmt::format("{:.0f}", batch / r.median_s),
                    fmt::format("{:.2f}", r.gflops),
                    std::isnan(r.ratio_vs_baseline) ? "-" : fmt::format("{:.2f}x {}", r.ratio_vs_baseline, r.baseline),
                    r.checksum_ok ? "ok" : "FAIL"});
    if (!r.checksum_ok) notes.push_back(fmt::format("{} on {}: {}", r.workload, r.engine, r.note));
  }
  std::string s = render(rows, 2);
  s += "per batch: median time of one model(x) with its result read; vs: that time over the\n"
       "baseline's at the same thread count (below 1.00x: Descent is faster)\n";
  for (const auto& n : notes) s += "  " + n + "\n";
  return s;
}

}  // namespace descent::bench
