// The tensor suite of `descent bench`: the prelude's kernels compiled by Descent's CPU
// backend, naive and scheduled, against OpenBLAS at the same thread count, each figure also
// given as a fraction of the machine's roofline measured in the same run.
//
// Why these columns: "cpu-naive" is the loop nest exactly as lowered (what a student starts
// from), "cpu-sched" replays the schedule shipped in bench/schedules/<workload>.sched (the
// best a student can write with Descent's primitives), "openblas" is the tuned library a
// framework would call, and "ref" (quick scale only: it is an interpreter) is the oracle.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/bench.h"
#include "bench/blas.h"
#include "bench/roofline.h"
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

struct TensorWorkload {
  std::string name;      // the prelude kernel, and the .sched file's stem
  std::string title;
  std::map<std::string, int64_t> dims, quick_dims;  // the kernel's named dims
  // flops and bytes moved (inputs read once, output written once) at given dims
  double (*flops)(const std::map<std::string, int64_t>&);
  std::string openblas;  // what the OpenBLAS column calls
};

double matmul_flops(const std::map<std::string, int64_t>& d) {
  return 2.0 * double(d.at("n")) * double(d.at("m")) * double(d.at("k"));
}
double linear_flops(const std::map<std::string, int64_t>& d) {
  return 2.0 * double(d.at("n")) * double(d.at("m")) * double(d.at("k"));
}

const std::vector<TensorWorkload>& all_workloads() {
  static const std::vector<TensorWorkload> w = {
      {"matmul", "C = A B, f32, 1024 x 1024 x 1024",
       {{"n", 1024}, {"k", 1024}, {"m", 1024}}, {{"n", 128}, {"k", 128}, {"m", 128}},
       matmul_flops, "cblas_sgemm"},
      {"linear_relu", "relu(x w^T), x 1 x 3072, w 200 x 3072 (the seed notes' layer)",
       {{"n", 1}, {"k", 3072}, {"m", 200}}, {{"n", 1}, {"k", 256}, {"m", 40}},
       linear_flops, "cblas_sgemv + relu pass"},
  };
  return w;
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

// Times fn `repeats` times after one untimed warm-up run (which pays for page faults and
// thread start-up, as a framework's first call would).
std::vector<double> time_runs(int repeats, const std::function<void()>& fn,
                              const std::atomic<bool>* interrupt) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    if (interrupt && interrupt->load()) break;
    auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return t;
}

bool read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

}  // namespace

std::vector<std::string> tensor_workloads() {
  std::vector<std::string> names;
  for (const auto& w : all_workloads()) names.push_back(w.name);
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
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  const std::vector<std::string> engines = {"ref", "cpu-naive", "cpu-sched", "openblas"};
  for (const auto& e : o.engines) {
    if (std::find(engines.begin(), engines.end(), e) == engines.end()) {
      *error = fmt::format("unknown tensor engine '{}' (engines: ref, cpu-naive, cpu-sched, openblas)", e);
      return {};
    }
  }
  for (const auto& name : o.workloads) {
    auto names = tensor_workloads();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      *error = fmt::format("no workload '{}' in suite 'tensor' (workloads: matmul, linear_relu)", name);
      return {};
    }
  }
  if (o.repeats < 1) {
    *error = "repeats must be at least 1";
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

  // The prelude's kernels, parsed and checked once.
  Session session;
  const Module& module = session.module();

  // The roofline at each thread count, measured before any workload (so a busy machine
  // shows up in the roof as well as in the kernels).
  std::map<int, Roofline> roofs;
  for (int t : o.threads) {
    roofs[t] = measure_roofline(t);
    say(fmt::format("roofline at {} thread{}: {}", t, t == 1 ? "" : "s", format_roofline(roofs[t])));
  }
  say("OpenBLAS: " + blas_description());

  std::vector<BenchRecord> records;
  const std::string scale = o.quick ? "quick" : "full";
  for (const auto& w : all_workloads()) {
    if (!o.workloads.empty() &&
        std::find(o.workloads.begin(), o.workloads.end(), w.name) == o.workloads.end())
      continue;
    const auto& dims = o.quick ? w.quick_dims : w.dims;
    int k = module.find_kernel(w.name);
    if (k < 0) {
      *error = "the prelude has no kernel '" + w.name + "'";
      return records;
    }
    const KernelDecl& decl = *module.kernels[k].decl;
    tir::PrimFunc naive;
    Diagnostic d;
    auto shapes = tensor::shapes_for(decl, dims);
    if (!tensor::lower(decl, shapes, &naive, &d)) {
      *error = "cannot lower " + w.name + ": " + d.message;
      return records;
    }
    tensor::Schedule sched(naive);
    std::string sched_text, sched_error;
    std::string sched_path = (fs::path(sched_dir) / (w.name + ".sched")).string();
    bool have_sched = read_file(sched_path, &sched_text);
    if (!have_sched) sched_error = "no schedule file " + sched_path;
    else if (!sched.apply_text(sched_text, &sched_error))
      sched_error = sched_path + ": " + sched_error;
    else
      sched_error.clear();

    // Inputs: seeded, the same for every column.
    std::vector<tensor::Tensor> inputs(shapes.size());
    std::vector<const tensor::Tensor*> args;
    std::vector<const float*> raw;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (!tensor::rand(shapes[i], int64_t(i + 1), &inputs[i], error)) return records;
      args.push_back(&inputs[i]);
      raw.push_back(inputs[i].data.data());
    }
    double flops = w.flops(dims);
    double bytes = 0;
    for (const auto& in : inputs) bytes += 4.0 * double(in.numel());
    const tir::Buffer& outbuf = naive.buffers[naive.output];
    int64_t out_elems = 1;
    for (auto x : outbuf.shape) out_elems *= x;
    bytes += 4.0 * double(out_elems);

    // The OpenBLAS result is the reference every column is checked against at full scale
    // (the interpreter would take minutes there); at quick scale the interpreter checks too.
    tensor::Tensor blas_out;
    bool blas_ok = false;
    std::string blas_error;
    blas_set_threads(o.threads.empty() ? 1 : o.threads.front());
    if (w.name == "matmul") blas_ok = blas_matmul(inputs[0], inputs[1], &blas_out, &blas_error);
    else blas_ok = blas_linear(inputs[0], inputs[1], &blas_out, &blas_error);
    if (blas_ok && w.name == "linear_relu")
      for (size_t i = 0; i < blas_out.data.size(); ++i)
        blas_out.data[i] = blas_out.data[i] > 0 ? blas_out.data[i] : 0.0f;
    tensor::Tensor ref_out;
    bool have_ref = false;
    if (o.quick) {
      std::string e;
      have_ref = tir::interpret(naive, args, &ref_out, &e);
    }

    for (int threads : o.threads) {
      for (const auto& engine : engines) {
        if (!wanted(engine)) continue;
        if (engine == "ref" && !o.quick) continue;  // an interpreter at full scale: minutes
        if (o.interrupt && o.interrupt->load()) {
          *error = "interrupted";
          return records;
        }
        if (engine == "ref" && threads != o.threads.front()) continue;  // serial anyway
        BenchRecord r;
        r.suite = "tensor";
        r.workload = w.name;
        r.engine = engine;
        r.kind = engine == "openblas" ? "library" : "descent";
        r.scale = scale;
        r.baseline = "openblas";
        r.threads = engine == "ref" ? 1 : threads;
        r.expected = "matches " + std::string(have_ref ? "the reference interpreter" : "OpenBLAS");
        std::string tag = fmt::format("tensor/{} on {} ({} thread{})", w.name, engine, r.threads,
                                      r.threads == 1 ? "" : "s");
        say(tag + " ...");
        tensor::Tensor out;
        std::vector<double> times;
        std::string problem;
        bool ok = true;
        if (engine == "ref") {
          times = time_runs(std::max(1, std::min(o.repeats, 3)), [&] {
            ok = tir::interpret(naive, args, &out, &problem) && ok;
          }, o.interrupt);
        } else if (engine == "openblas") {
          blas_set_threads(threads);
          times = time_runs(o.repeats, [&] {
            if (w.name == "matmul") {
              ok = blas_matmul(inputs[0], inputs[1], &out, &problem) && ok;
            } else {
              ok = blas_linear(inputs[0], inputs[1], &out, &problem) && ok;
              for (size_t i = 0; i < out.data.size(); ++i)
                out.data[i] = out.data[i] > 0 ? out.data[i] : 0.0f;
            }
          }, o.interrupt);
        } else {
          bool scheduled = engine == "cpu-sched";
          if (scheduled && !sched_error.empty()) {
            ok = false;
            problem = sched_error;
          } else {
            tensor::CpuOptions opts;
            opts.threads = threads;
            std::unique_ptr<tensor::CpuKernel> kernel;
            auto t0 = Clock::now();
            ok = tensor::compile_cpu(scheduled ? sched.func() : naive, opts, &kernel, &problem);
            r.compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (ok) {
              out.shape = outbuf.shape;
              out.data = tensor::AlignedFloats(size_t(out_elems));
              times = time_runs(o.repeats, [&] { kernel->run_raw(raw, out.data.data()); },
                                o.interrupt);
            }
          }
        }
        if (ok) {
          std::string why;
          const tensor::Tensor& want = have_ref ? ref_out : blas_out;
          if ((have_ref || blas_ok) && !tensor::allclose(out, want, 1e-4, &why)) {
            ok = false;
            problem = "result differs: " + why;
          } else if (!have_ref && !blas_ok) {
            ok = false;
            problem = "nothing to check against: " + blas_error;
          }
        }
        r.runs_s = times;
        r.runs = int(times.size());
        if (!times.empty()) {
          r.median_s = median_of(times);
          r.min_s = *std::min_element(times.begin(), times.end());
          r.max_s = *std::max_element(times.begin(), times.end());
          r.cpu_s = std::numeric_limits<double>::quiet_NaN();
          r.gflops = flops / r.median_s / 1e9;
          r.gbs = bytes / r.median_s / 1e9;
          const Roofline& roof = roofs[r.threads];
          double attainable = roof.attainable_gflops(flops / bytes);
          if (attainable > 0) r.roof_fraction = r.gflops / attainable;
        }
        r.checksum_ok = ok && !times.empty();
        if (ok && times.empty()) problem = "interrupted";
        r.note = r.checksum_ok ? "" : problem;
        r.output = r.checksum_ok ? r.expected : "";
        say(r.checksum_ok ? fmt::format("{}: median {}, {:.1f} GFLOP/s", tag,
                                        seconds_text(r.median_s), r.gflops)
                          : fmt::format("{}: FAILED: {}", tag, problem));
        records.push_back(std::move(r));
      }
    }
  }
  // Ratios against OpenBLAS at the same thread count, measured in this call.
  for (auto& r : records)
    for (const auto& b : records)
      if (b.workload == r.workload && b.engine == "openblas" && b.threads == r.threads &&
          b.checksum_ok && r.checksum_ok && b.median_s > 0)
        r.ratio_vs_baseline = r.median_s / b.median_s;

  std::string write_error;
  if (!o.csv.empty() && !write_csv(o.csv, records, &write_error) && error->empty())
    *error = write_error;
  if (!o.json.empty() && !write_json(o.json, records, &write_error) && error->empty())
    *error = write_error;
  return records;
}

std::string format_tensor_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"workload", "engine", "threads", "median",
                                                 "GFLOP/s", "GB/s", "% roof", "time/openblas",
                                                 "check"}};
  for (const auto& r : records) {
    if (r.suite != "tensor") continue;
    auto num = [](double v, const char* f) {
      return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(f), v);
    };
    rows.push_back({r.workload, r.engine, std::to_string(r.threads), seconds_text(r.median_s),
                    num(r.gflops, "{:.1f}"), num(r.gbs, "{:.1f}"),
                    num(r.roof_fraction * 100, "{:.0f}%"), num(r.ratio_vs_baseline, "{:.2f}"),
                    r.checksum_ok ? "ok" : "FAILED"});
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
  for (const auto& r : records)
    if (r.suite == "tensor" && !r.checksum_ok)
      s += fmt::format("{} on {} ({} threads): {}\n", r.workload, r.engine, r.threads, r.note);
  return s;
}

}  // namespace descent::bench
