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
#include "bench/roofline.h"
#include "gpu/opencl_codegen.h"
#include "gpu/runtime.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "pipeline/pipeline.h"
#include "tensor/cpu.h"
#include "tensor/lower.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"

namespace descent::bench {

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Dims = std::map<std::string, int64_t>;

struct TensorWorkload {
  std::string name;    // the record's workload, and the first .sched file stem tried
  std::string kernel;  // the prelude kernel (the second stem tried)
  std::string title;
  Dims dims, quick_dims;  // the kernel's named dims
  // Flops at given dims (the useful arithmetic: a multiply-add is 2, an exp is 1).
  double (*flops)(const Dims&);
  std::string baseline;  // "openblas" or "cpp"
  // The reference interpreter finishes in a few seconds at full scale (at quick scale it
  // always runs).
  bool ref_full;
};

double mnk_flops(const Dims& d) {
  return 2.0 * double(d.at("n")) * double(d.at("m")) * double(d.at("k"));
}
double add_flops(const Dims& d) { return double(d.at("n")) * double(d.at("m")); }
// Per element: the max, the subtraction, the exp, the sum and the division.
double softmax_flops(const Dims& d) { return 5.0 * double(d.at("n")) * double(d.at("m")); }

Dims cube(int64_t s) { return {{"n", s}, {"k", s}, {"m", s}}; }

const std::vector<TensorWorkload>& all_workloads() {
  static const std::vector<TensorWorkload> w = {
      {"vector_add", "add", "c = a + b, 16M floats (memory bound)",
       {{"n", 1}, {"m", 16777216}}, {{"n", 1}, {"m", 65536}}, add_flops, "cpp", false},
      // Quick sizes stay large enough for the shipped OpenCL schedules (16 x 16 tiles of
      // work-items) to apply: 128 is already quick, 256 is the smallest the others take.
      {"matmul_128", "matmul", "C = A B, 128^3", cube(128), cube(128), mnk_flops, "openblas",
       true},
      {"matmul_512", "matmul", "C = A B, 512^3", cube(512), cube(256), mnk_flops, "openblas",
       false},
      {"matmul_1024", "matmul", "C = A B, 1024^3", cube(1024), cube(256), mnk_flops,
       "openblas", false},
      {"linear_relu", "linear_relu",
       "relu(x w^T), x 1 x 3072, w 200 x 3072 (the seed notes' layer)",
       {{"n", 1}, {"k", 3072}, {"m", 200}}, {{"n", 1}, {"k", 256}, {"m", 40}}, mnk_flops,
       "openblas", true},
      {"softmax", "softmax", "row softmax, 256 x 1024", {{"n", 256}, {"m", 1024}},
       {{"n", 16}, {"m", 64}}, softmax_flops, "cpp", true},
  };
  return w;
}

// The hand-written OpenCL matmul (bench/opencl/matmul_4x16.cl: a 4 x 16 register block per
// work-item, float16 accumulators), run on the same inputs as the generated kernels: issue 6's
// yardstick for the scheduled OpenCL matmul. Times are the kernel's profiling-event times.
bool run_hand_matmul(gpu::Context& cl, const std::vector<tensor::Tensor>& in,
                     const std::vector<int64_t>& out_shape, int repeats, tensor::Tensor* out,
                     std::vector<double>* times, double* build_s, std::string* error) {
  int64_t n = in[0].shape[0], k = in[0].shape[1], m = in[1].shape[1];
  if (n % 4 || m % 16) {
    *error = "matmul_4x16.cl needs n % 4 == 0 and m % 16 == 0";
    return false;
  }
  std::string path = (fs::path(schedules_dir()) / ".." / "opencl" / "matmul_4x16.cl").string();
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot read " + path;
    return false;
  }
  std::stringstream source;
  source << file.rdbuf();
  gpu::Program program;
  if (!cl.build(source.str(), "", &program, build_s, error)) return false;
  gpu::DeviceBuffer a, b, c;
  size_t abytes = size_t(n * k) * 4, bbytes = size_t(k * m) * 4, cbytes = size_t(n * m) * 4;
  if (!cl.alloc(abytes, &a, error) || !cl.alloc(bbytes, &b, error) || !cl.alloc(cbytes, &c, error) ||
      !cl.write(a, in[0].data.data(), abytes, nullptr, error) ||
      !cl.write(b, in[1].data.data(), bbytes, nullptr, error))
    return false;
  gpu::LaunchDims dims;
  dims.dims = 2;
  dims.global[0] = m / 16;
  dims.global[1] = n / 4;
  dims.local[0] = std::min<int64_t>(16, m / 16);
  dims.local[1] = 1;
  std::vector<gpu::KernelArg> args = {{&a, 0}, {&b, 0}, {&c, 0}, {nullptr, int32_t(n)},
                                      {nullptr, int32_t(k)}, {nullptr, int32_t(m)}};
  for (int i = 0; i < repeats + 1; ++i) {  // the first launch is the warm-up
    double s = 0;
    if (!cl.launch(program, "matmul_4x16", args, dims, &s, error)) return false;
    if (i > 0) times->push_back(s);
  }
  out->shape = out_shape;
  out->data = tensor::AlignedFloats(size_t(n * m));
  return cl.read(c, out->data.data(), cbytes, nullptr, error);
}

const std::vector<std::string>& engine_list() {
  static const std::vector<std::string> e = {"ref",          "cpu-naive",    "cpu-sched",
                                             "opencl-naive", "opencl-sched", "opencl-hand",
                                             "openblas", "cpp"};
  return e;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string seconds_text(double s) {
  if (std::isnan(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

bool read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
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

// The "cpp" column: what a C++ programmer writes without a library, split over threads by
// rows (std::thread per call: tens of microseconds, negligible next to 16M elements).
void parallel_rows(int64_t rows, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  threads = int(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  if (threads == 1) return fn(0, rows);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(fn, rows * t / threads, rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

void cpp_add(const tensor::Tensor& a, const tensor::Tensor& b, tensor::Tensor* c, int threads) {
  c->shape = a.shape;
  if (c->data.size() != a.data.size()) c->data = tensor::AlignedFloats(a.data.size());
  const float* x = a.data.data();
  const float* y = b.data.data();
  float* z = c->data.data();
  // Chunks of whole cache lines, so no two threads write the same line.
  int64_t n = int64_t(a.data.size()), lines = (n + 15) / 16;
  parallel_rows(lines, threads, [&](int64_t l0, int64_t l1) {
    for (int64_t i = l0 * 16, e = std::min(n, l1 * 16); i < e; ++i) z[i] = x[i] + y[i];
  });
}

// The stable softmax of the prelude, row by row: the same four passes, fused per row.
void cpp_softmax(const tensor::Tensor& x, tensor::Tensor* out, int threads) {
  out->shape = x.shape;
  if (out->data.size() != x.data.size()) out->data = tensor::AlignedFloats(x.data.size());
  int64_t rows = x.shape[0], cols = x.shape[1];
  const float* in = x.data.data();
  float* o = out->data.data();
  parallel_rows(rows, threads, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = in + r * cols;
      float* dst = o + r * cols;
      float mx = row[0];
      for (int64_t c = 1; c < cols; ++c) mx = row[c] > mx ? row[c] : mx;
      float s = 0;
      for (int64_t c = 0; c < cols; ++c) s += dst[c] = std::exp(row[c] - mx);
      for (int64_t c = 0; c < cols; ++c) dst[c] /= s;
    }
  });
}

std::string progress_bar(size_t done, size_t total) {
  const int width = 24;
  int filled = total ? int(double(done) / double(total) * width) : width;
  std::string bar(size_t(filled), '=');
  if (filled < width) bar += '>' + std::string(size_t(width - filled - 1), ' ');
  int digits = int(std::to_string(total).size());
  return fmt::format("[{}] {:>{}}/{}", bar, done, digits, total);
}

struct Cell {
  size_t workload;
  std::string engine;
  int threads;  // 0 for the OpenCL columns: the device decides
};

}  // namespace

std::vector<std::string> tensor_workloads() {
  std::vector<std::string> names;
  for (const auto& w : all_workloads()) names.push_back(w.name);
  return names;
}

std::vector<std::string> tensor_engines() { return engine_list(); }

std::string schedules_dir() {
  if (const char* d = std::getenv("DESCENT_SCHEDULES_DIR")) return d;
  return DESCENT_BENCH_SCHEDULES_DIR;
}

std::vector<BenchRecord> run_tensor_benchmarks(const BenchOptions& o, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  error->clear();
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  const auto& engines = engine_list();
  for (const auto& e : o.engines) {
    if (std::find(engines.begin(), engines.end(), e) == engines.end()) {
      *error = fmt::format("unknown tensor engine '{}' (engines: {})", e, join(engines));
      return {};
    }
  }
  auto names = tensor_workloads();
  for (const auto& name : o.workloads) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      *error = fmt::format("no workload '{}' in suite 'tensor' (workloads: {})", name, join(names));
      return {};
    }
  }
  if (o.repeats < 1) {
    *error = "repeats must be at least 1";
    return {};
  }
  if (o.threads.empty()) {
    *error = "no thread counts to run at";
    return {};
  }
  for (int t : o.threads) {
    if (t < 1 || t > 256) {
      *error = fmt::format("thread counts must be 1..256, not {}", t);
      return {};
    }
  }
  auto wanted = [&](const std::string& e) {
    return o.engines.empty() || std::find(o.engines.begin(), o.engines.end(), e) != o.engines.end();
  };
  std::string sched_dir = o.schedules_dir.empty() ? schedules_dir() : o.schedules_dir;
  const std::string scale = o.quick ? "quick" : "full";

  // The cells, listed first so the progress bar knows the total.
  std::vector<Cell> cells;
  for (size_t wi = 0; wi < all_workloads().size(); ++wi) {
    const auto& w = all_workloads()[wi];
    if (!o.workloads.empty() &&
        std::find(o.workloads.begin(), o.workloads.end(), w.name) == o.workloads.end())
      continue;
    if (wanted("ref") && (o.quick || w.ref_full)) cells.push_back({wi, "ref", 1});
    for (int t : o.threads)
      for (const char* e : {"cpu-naive", "cpu-sched"})
        if (wanted(e)) cells.push_back({wi, e, t});
    for (const char* e : {"opencl-naive", "opencl-sched"})
      if (wanted(e)) cells.push_back({wi, e, 0});
    // The hand-written OpenCL yardstick exists for matmul only (bench/opencl/matmul_4x16.cl).
    if (w.kernel == std::string("matmul") && wanted("opencl-hand"))
      cells.push_back({wi, "opencl-hand", 0});
    for (int t : o.threads)
      if (wanted(w.baseline)) cells.push_back({wi, w.baseline, t});
  }

  // The prelude's kernels, parsed and checked once.
  Session session;
  const Module& module = session.module();

  // The OpenCL device, opened once (its program cache then lives as long as this run, so
  // every build time below is a real compilation). None: the OpenCL cells are skipped.
  std::unique_ptr<gpu::Context> cl;
  std::string cl_error;
  bool any_opencl = std::any_of(cells.begin(), cells.end(), [](const Cell& c) {
    return c.engine.rfind("opencl", 0) == 0;
  });
  if (any_opencl) {
    if (gpu::Context::open(gpu::DeviceChoice{}, &cl, &cl_error)) {
      const auto& d = cl->device();
      say(fmt::format("OpenCL: {} ({}, {}, {} compute units)", d.name, d.type, d.platform,
                      d.compute_units));
    } else {
      say("OpenCL: no device, the opencl columns are skipped: " + cl_error);
    }
  }
  const int cl_threads = cl ? int(std::max<int64_t>(1, cl->device().compute_units)) : 0;
  // The CPU roofline applies to an OpenCL device only when that device is this CPU (PoCL).
  const bool cl_on_cpu = cl && cl->device().type == "CPU";

  // The roofline at each thread count, measured before any workload (so a busy machine
  // shows up in the roof as well as in the kernels).
  std::map<int, Roofline> roofs;
  std::vector<int> roof_threads = o.threads;
  if (cl_on_cpu) roof_threads.push_back(cl_threads);
  for (int t : roof_threads) {
    if (roofs.count(t)) continue;
    roofs[t] = measure_roofline(t);
    say(fmt::format("roofline at {} thread{}: {}", t, t == 1 ? "" : "s", format_roofline(roofs[t])));
  }
  say("OpenBLAS: " + blas_description());

  std::vector<BenchRecord> records;
  size_t done = 0;
  size_t last_workload = SIZE_MAX;
  // Per workload, prepared when its first cell comes up.
  const TensorWorkload* w = nullptr;
  tir::PrimFunc naive;
  std::unique_ptr<tensor::Schedule> sched, cl_sched;
  std::string sched_error, cl_sched_error, cl_sched_missing;
  std::vector<tensor::Tensor> inputs;
  std::vector<const tensor::Tensor*> args;
  std::vector<const float*> raw;
  double flops = 0, bytes = 0;
  int64_t out_elems = 1;
  std::vector<int64_t> out_shape;
  tensor::Tensor ref_out;
  bool have_ref = false;
  tensor::Tensor base_out;  // the baseline's result, the check where the reference is too slow
  bool have_base = false;
  std::string base_error;

  // Runs `fn` once untimed (page faults, thread start-up, program builds: what a framework's
  // first call pays), then up to `repeats` times. `fn` returns the time to record for its
  // run (the wall time it measured, or a device's own kernel time), or a negative number
  // when it failed.
  auto time_runs = [&](const std::function<double()>& fn, int repeats, std::vector<double>* t) {
    auto t0 = Clock::now();
    if (fn() < 0) return false;
    double first = std::chrono::duration<double>(Clock::now() - t0).count();
    if (o.cell_budget_s > 0 && first * repeats > o.cell_budget_s)
      repeats = std::max(1, int(o.cell_budget_s / first));
    for (int i = 0; i < repeats; ++i) {
      if (o.interrupt && o.interrupt->load()) break;
      double s = fn();
      if (s < 0) return false;
      t->push_back(s);
    }
    return true;
  };
  // The baseline column's computation (OpenBLAS, or the plain loops).
  auto run_baseline = [&](int threads, tensor::Tensor* out, std::string* problem) {
    blas_set_threads(threads);
    if (w->kernel == "add") cpp_add(inputs[0], inputs[1], out, threads);
    else if (w->kernel == "softmax") cpp_softmax(inputs[0], out, threads);
    else if (w->kernel == "matmul") return blas_matmul(inputs[0], inputs[1], out, problem);
    else {
      if (!blas_linear(inputs[0], inputs[1], out, problem)) return false;
      for (size_t i = 0; i < out->data.size(); ++i)
        out->data[i] = out->data[i] > 0 ? out->data[i] : 0.0f;
    }
    return true;
  };
  auto wall = [](const std::function<void()>& fn) {
    auto t0 = Clock::now();
    fn();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };

  for (const Cell& cell : cells) {
    if (o.interrupt && o.interrupt->load()) {
      *error = "interrupted";
      break;
    }
    if (cell.workload != last_workload) {
      last_workload = cell.workload;
      w = &all_workloads()[cell.workload];
      const Dims& dims = o.quick ? w->quick_dims : w->dims;
      int k = module.find_kernel(w->kernel);
      if (k < 0) {
        *error = "the prelude has no kernel '" + w->kernel + "'";
        return records;
      }
      const KernelDecl& decl = *module.kernels[k].decl;
      Diagnostic d;
      auto shapes = tensor::shapes_for(decl, dims);
      naive = tir::PrimFunc();
      if (!tensor::lower(decl, shapes, &naive, &d)) {
        *error = "cannot lower " + w->name + ": " + d.message;
        return records;
      }
      // The schedules: a file that does not apply fails its column with the line and the
      // reason; a missing CPU schedule too (the suite ships one for every workload), a
      // missing OpenCL one only skips its column (they are written per device family).
      auto load = [&](const std::string& suffix, std::unique_ptr<tensor::Schedule>* s,
                      std::string* problem) {
        s->reset(new tensor::Schedule(naive));
        problem->clear();
        std::string path = find_schedule(sched_dir, {w->name, w->kernel}, suffix);
        std::string text;
        if (path.empty()) {
          *problem = fmt::format("no schedule file {}/{}{} (or {}{})", sched_dir, w->name, suffix,
                                 w->kernel, suffix);
          return false;
        }
        if (!read_file(path, &text)) *problem = "cannot read " + path;
        else if (!(*s)->apply_text(text, problem)) *problem = path + ": " + *problem;
        return true;
      };
      load(".sched", &sched, &sched_error);
      cl_sched_missing.clear();
      if (!load(".opencl.sched", &cl_sched, &cl_sched_error)) {
        cl_sched_missing = cl_sched_error;
        cl_sched_error.clear();
      }

      // Inputs: seeded, the same for every column.
      inputs.assign(shapes.size(), tensor::Tensor());
      args.clear();
      raw.clear();
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (!tensor::rand(shapes[i], int64_t(i + 1), &inputs[i], error)) return records;
        args.push_back(&inputs[i]);
        raw.push_back(inputs[i].data.data());
      }
      flops = w->flops(dims);
      bytes = 0;
      for (const auto& in : inputs) bytes += 4.0 * double(in.numel());
      out_shape = naive.buffers[naive.output].shape;
      out_elems = 1;
      for (auto x : out_shape) out_elems *= x;
      bytes += 4.0 * double(out_elems);
      have_ref = false;
      if (o.quick || w->ref_full) {
        std::string e;
        have_ref = tir::interpret(naive, args, &ref_out, &e);
      }
      // Where the interpreter would take minutes, the baseline's result is the check.
      have_base = !have_ref && run_baseline(*std::max_element(o.threads.begin(), o.threads.end()), &base_out,
                                             &base_error);
    }

    BenchRecord r;
    r.suite = "tensor";
    r.workload = w->name;
    r.engine = cell.engine;
    // "library": OpenBLAS; "native": the plain C++ loops compiled into this program.
    r.kind = cell.engine == "openblas" ? "library" : cell.engine == "cpp" ? "native" : "descent";
    r.scale = scale;
    r.baseline = w->baseline;
    bool opencl = cell.engine.rfind("opencl", 0) == 0;
    r.threads = opencl ? cl_threads : cell.threads;
    r.expected = "matches " + std::string(have_ref ? "the reference interpreter" : w->baseline);
    std::string tag = opencl ? fmt::format("{} on {}", w->name, cell.engine)
                             : fmt::format("{} on {} x{}", w->name, cell.engine, r.threads);
    say(fmt::format("{} {} ...", progress_bar(done, cells.size()), tag));

    tensor::Tensor out;
    std::vector<double> times;
    std::string problem, skip;
    bool ok = true;
    if (cell.engine == "ref") {
      // The interpreter: at most 3 runs, it is the slow oracle.
      ok = time_runs([&] {
        bool good = true;
        double s = wall([&] { good = tir::interpret(naive, args, &out, &problem); });
        return good ? s : -1.0;
      }, std::min(o.repeats, 3), &times);
    } else if (cell.engine == "openblas" || cell.engine == "cpp") {
      ok = time_runs([&] {
        bool good = true;
        double s = wall([&] { good = run_baseline(cell.threads, &out, &problem); });
        return good ? s : -1.0;
      }, o.repeats, &times);
    } else if (!opencl) {
      bool scheduled = cell.engine == "cpu-sched";
      if (scheduled && !sched_error.empty()) {
        ok = false;
        problem = sched_error;
      } else {
        tensor::CpuOptions opts;
        opts.threads = cell.threads;
        std::unique_ptr<tensor::CpuKernel> kernel;
        auto t0 = Clock::now();
        ok = tensor::compile_cpu(scheduled ? sched->func() : naive, opts, &kernel, &problem);
        r.compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (ok) {
          out.shape = out_shape;
          out.data = tensor::AlignedFloats(size_t(out_elems));
          ok = time_runs([&] { return wall([&] { kernel->run_raw(raw, out.data.data()); }); },
                         o.repeats, &times);
        }
      }
    } else if (cell.engine == "opencl-hand") {
      if (!cl) skip = "no OpenCL device: " + cl_error;
      else ok = run_hand_matmul(*cl, inputs, out_shape, o.repeats, &out, &times, &r.compile_s, &problem);
    } else {
      bool scheduled = cell.engine == "opencl-sched";
      if (!cl) {
        skip = "no OpenCL device: " + cl_error;
      } else if (scheduled && !cl_sched_missing.empty()) {
        skip = cl_sched_missing;
      } else if (scheduled && !cl_sched_error.empty()) {
        ok = false;
        problem = cl_sched_error;
      } else {
        const tir::PrimFunc& f = scheduled ? cl_sched->func() : naive;
        gpu::OpenCLProgram program;
        auto t0 = Clock::now();
        ok = gpu::generate_opencl(f, &program, &problem);
        double gen_s = std::chrono::duration<double>(Clock::now() - t0).count();
        double build_s = 0;
        bool first = true;
        // The recorded time is the kernels' own time from the profiling events: the
        // transfers to and from the device are not part of the kernel (on a real GPU they
        // cross PCIe and would dominate a vector add).
        if (ok)
          ok = time_runs([&] {
            gpu::Timing t;
            if (!gpu::run_program(f, program, *cl, args, &out, &t, &problem)) return -1.0;
            if (first) build_s = t.build_s;
            first = false;
            return t.kernel_s;
          }, o.repeats, &times);
        r.compile_s = gen_s + build_s;
      }
    }
    if (ok && skip.empty()) {
      std::string why;
      if (have_ref) {
        if (!tensor::allclose(out, ref_out, 1e-4, &why)) {
          ok = false;
          problem = "result differs from the reference interpreter: " + why;
        }
      } else if (have_base) {
        if (!tensor::allclose(out, base_out, 1e-4, &why)) {
          ok = false;
          problem = "result differs from " + w->baseline + ": " + why;
        }
      } else {
        ok = false;
        problem = "nothing to check against: " + base_error;
      }
    }
    r.runs_s = times;
    r.runs = int(times.size());
    if (!times.empty() && skip.empty()) {
      r.median_s = median_of(times);
      r.min_s = *std::min_element(times.begin(), times.end());
      r.max_s = *std::max_element(times.begin(), times.end());
      r.cpu_s = std::numeric_limits<double>::quiet_NaN();
      if (r.median_s > 0) {
        r.gflops = flops / r.median_s / 1e9;
        r.gbs = bytes / r.median_s / 1e9;
        auto roof = roofs.find(r.threads);
        if (roof != roofs.end() && (!opencl || cl_on_cpu)) {
          double attainable = roof->second.attainable_gflops(flops / bytes);
          if (attainable > 0) r.roof_fraction = r.gflops / attainable;
        }
      }
    }
    r.skipped = !skip.empty();
    r.checksum_ok = ok && skip.empty() && !times.empty();
    if (ok && skip.empty() && times.empty()) problem = "interrupted";
    r.note = r.skipped ? "skipped: " + skip : r.checksum_ok ? "" : problem;
    r.output = r.checksum_ok ? r.expected : "";
    ++done;
    std::string result = r.skipped       ? "skipped: " + skip
                         : r.checksum_ok ? fmt::format("median {}, {:.2f} GFLOP/s",
                                                       seconds_text(r.median_s), r.gflops)
                                         : "FAILED: " + problem;
    say(fmt::format("{} {}: {}", progress_bar(done, cells.size()), tag, result));
    records.push_back(std::move(r));
  }

  // Ratios against the workload's baseline at the same thread count (the OpenCL columns,
  // whose thread count the device chooses: against the baseline's highest thread count).
  for (auto& r : records) {
    const BenchRecord* best = nullptr;
    for (const auto& b : records) {
      if (b.workload != r.workload || b.engine != r.baseline || !b.checksum_ok || b.median_s <= 0)
        continue;
      if (b.threads == r.threads) {
        best = &b;
        break;
      }
      if (r.engine.rfind("opencl", 0) == 0 && (!best || b.threads > best->threads)) best = &b;
    }
    if (best && r.checksum_ok) r.ratio_vs_baseline = r.median_s / best->median_s;
  }

  std::string write_error;
  if (!o.csv.empty() && !write_csv(o.csv, records, &write_error) && error->empty())
    *error = write_error;
  if (!o.json.empty() && !write_json(o.json, records, &write_error) && error->empty())
    *error = write_error;
  return records;
}

std::string format_tensor_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"workload", "engine", "threads", "median",
                                                 "compile", "GFLOP/s", "GB/s", "% roof",
                                                 "time/base", "check"}};
  std::map<std::string, std::string> bases;
  for (const auto& r : records) {
    if (r.suite != "tensor") continue;
    auto num = [](double v, const char* f) {
      return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(f), v);
    };
    bases[r.workload] = r.baseline;
    rows.push_back({r.workload, r.engine, std::to_string(r.threads),
                    r.runs ? seconds_text(r.median_s) : "-", seconds_text(r.compile_s),
                    num(r.gflops, "{:.2f}"), num(r.gbs, "{:.1f}"),
                    num(r.roof_fraction * 100, "{:.0f}%"), num(r.ratio_vs_baseline, "{:.2f}"),
                    r.skipped ? "skipped" : r.checksum_ok ? "ok" : "FAILED"});
  }
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string s;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      line += c < 2 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  std::map<std::string, std::string> by_base;
  for (const auto& [wl, b] : bases) by_base[b] += (by_base[b].empty() ? "" : ", ") + wl;
  std::string legend;
  for (const auto& [b, wls] : by_base) legend += (legend.empty() ? "" : "; ") + b + " for " + wls;
  if (!legend.empty()) s += "time/base: median / the baseline's median (" + legend + ")\n";
  for (const auto& r : records)
    if (r.suite == "tensor" && !r.checksum_ok)
      s += r.engine.rfind("opencl", 0) == 0
               ? fmt::format("{} on {}: {}\n", r.workload, r.engine, r.note)
               : fmt::format("{} on {} ({} thread{}): {}\n", r.workload, r.engine, r.threads,
                             r.threads == 1 ? "" : "s", r.note);
  return s;
}

}  // namespace descent::bench
