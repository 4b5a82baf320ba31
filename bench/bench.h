// descent_bench: the runner behind `descent bench`.
//
// A suite is a list of workloads. A workload is one program (bench/programs/<name>.ds) with a
// known checksum, plus "twins" of it in other languages (<name>.lua, <name>.py, ...). Every
// workload runs on every Descent engine in-process through descent::Session, and each twin
// runs on its external baseline (lua5.4, python3, ...) as a child process when that program
// is on PATH. Each (workload, engine) cell is run `repeats` times; a record keeps the median,
// the checksum verdict and the time relative to a baseline engine measured in the same call.
//
//   BenchOptions o;                      // suite "vm", 5 repeats, every engine and baseline
//   o.quick = true;                      // small sizes: seconds in all, for tests and CI
//   o.progress = [](std::string_view line) { fmt::print(stderr, "{}\n", line); };
//   std::string error;
//   auto records = run_benchmarks(o, &error);
//   fmt::print("{}", format_table(records));
//
// The library never prints: progress lines and notes (a baseline not installed, ...) go
// through the callback, results come back as values and as text from the formatters.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace descent::bench {

// A size knob of a workload. In the .ds program it is a top-level line `NAME = <int>` that
// the runner rewrites to the chosen scale's value; twins take the values as command-line
// arguments, in the order of Workload::params.
struct Param {
  std::string name;    // the global's name in the .ds program: "N"
  int64_t full = 0;    // value at full scale (the program file's own value)
  int64_t quick = 0;   // value at quick scale
};

struct Workload {
  std::string suite;           // "vm"
  std::string name;            // "b1_fib": the programs' file stem and the record's key
  std::string title;           // "recursive fib(32)"
  std::string measures;        // one line: what the workload stresses
  std::vector<Param> params;   // size knobs, in twin argument order
  std::string expected;        // the whole stdout at full scale, trailing whitespace trimmed
  std::string expected_quick;  // the same at quick scale
};

// Every workload of every suite, in run order.
const std::vector<Workload>& workloads();
// Suite names in the order they appear ("vm"); "all" is accepted by run_benchmarks too.
std::vector<std::string> suites();

// An implementation outside the process that runs a workload's twin file
// <programs_dir>/<workload>.<extension>. Placeholders in `build` and `run`: {tool} (the
// resolved path of `tool`), {src} (the twin file), {exe} (a path in a scratch directory for
// `build` to write). Parameters are appended to `run` as decimal arguments.
struct Baseline {
  std::string name;                // the record's engine column: "lua5.4"
  std::string extension;           // twin file extension without the dot: "lua"
  std::string tool;                // looked up on PATH (or a path); absent: skipped with a note
  std::vector<std::string> build;  // untimed, once per workload; empty: nothing to build
  std::vector<std::string> run;    // the timed command
  // A run that does nothing (e.g. `python3 -c pass`), timed like the workloads to report the
  // process start-up cost that their times include; empty: not measured.
  std::vector<std::string> startup;
};
// lua5.4, python3, and the C twins built with clang -O2 (each skipped when its tool is absent).
std::vector<Baseline> default_baselines();

struct BenchOptions {
  std::string suite = "vm";          // a suite name, or "all"
  int repeats = 5;                   // timed runs per cell; the record keeps their median
  int warmup = 0;                    // untimed runs per cell before those
  bool quick = false;                // run at quick scale (small sizes; for tests and CI)
  std::vector<std::string> engines;  // Descent engines and/or baseline names to run; empty:
                                     // every Session::engines() entry and every baseline
  std::vector<std::string> workloads;  // workload names to run; empty: the whole suite
  std::vector<Baseline> baselines = default_baselines();
  std::string baseline = "ast";      // ratios are medians divided by this engine's median
  std::string programs_dir;          // empty: default_programs_dir()
  std::string csv, json;             // when set, the records are also written there
  std::function<void(std::string_view)> progress;  // one line per call, no trailing newline
  // Set to stop (e.g. from a SIGINT handler): the run returns the records finished so far
  // with *error "interrupted", and writes no --csv/--json (a partial run must not replace
  // the file of an earlier complete one).
  const std::atomic<bool>* interrupt = nullptr;
  // Tensor suite: the thread counts every cell runs at (parallel loops and OpenBLAS alike),
  // and where the shipped schedules are (empty: this source tree's bench/schedules).
  std::vector<int> threads = {1, 2};
  std::string schedules_dir;
  // Tensor suite: when > 0, a cell whose untimed first run took longer than
  // cell_budget_s / repeats gets fewer timed runs (at least one), so a naive 1024^3 matmul
  // (seconds per run) does not hold a classroom run up for minutes. 0: always `repeats`.
  double cell_budget_s = 0;
  // Tune suite: candidates measured per search (0: 200 at full scale, 4 quick; the
  // strategies workload runs a third of it per search, 64 at full scale).
  int tune_trials = 0;
};

struct BenchRecord {
  std::string suite;      // "vm"
  std::string workload;   // "b1_fib"
  std::string engine;     // a Descent engine ("ast", "stack", ...) or a baseline ("python3")
  std::string kind;       // "descent" (in-process Session) or "external" (child process)
  std::string scale;      // "full" or "quick"
  double median_s = 0;    // median wall time of the timed runs (Descent: compile + run;
                          // external: the whole process, start-up included)
  double min_s = 0, max_s = 0;
  double cpu_s = 0;       // median user + system CPU time of the same runs: steadier than wall
                          // time on a busy machine (Descent: this process; external: the child)
  std::vector<double> runs_s;  // every timed run, in order
  int runs = 0;                // runs_s.size()
  // Descent: median time in Session::compile (part of median_s); NaN for external ones.
  double compile_s = std::numeric_limits<double>::quiet_NaN();
  uint64_t steps = 0;          // Descent: the engine's step count of one run; else 0
  // External: the median time of the baseline's do-nothing run (process start-up, included
  // in median_s); NaN for Descent engines and where not measured.
  double startup_s = std::numeric_limits<double>::quiet_NaN();
  std::string baseline;        // the engine ratio_vs_baseline refers to
  // median_s / the baseline's median_s for this workload (0.25: four times faster); NaN
  // when the baseline did not run or failed.
  double ratio_vs_baseline = std::numeric_limits<double>::quiet_NaN();
  bool checksum_ok = false;    // every run succeeded and printed `expected`
  std::string expected;        // the checksum it had to print
  std::string output;          // what the last run printed (trimmed; cut at 200 bytes)
  std::string note;            // why it failed, when !checksum_ok
  // Tensor suite (0 / NaN elsewhere): the thread count, the achieved rates, and the rate as a
  // fraction of the roofline measured at that thread count in the same run (the FMA peak,
  // or bandwidth x arithmetic intensity where that is lower, with the bandwidth of the
  // memory level the kernel's data fits in: roof_level, "L2" or "DRAM").
  int threads = 0;
  double gflops = std::numeric_limits<double>::quiet_NaN();
  double gbs = std::numeric_limits<double>::quiet_NaN();
  double roof_fraction = std::numeric_limits<double>::quiet_NaN();
  std::string roof_level;
  // Tensor suite: the cell could not run here and that is not a failure (no OpenCL device,
  // no schedule file for the column); `note` says why. all_ok() ignores skipped records.
  bool skipped = false;
  // Tune suite (0 / NaN elsewhere): the candidates a search measured (the strategies
  // workload's evolutionary record: the median trials it needed to reach random's best),
  // and the search's wall time.
  int trials = 0;
  double search_s = std::numeric_limits<double>::quiet_NaN();
  // A library baseline (kind "library"): what it was and which kernels it ran, e.g.
  // "OpenBLAS 0.3.21 ... Zen ...; running its Zen kernels", so a comparison says whether the
  // library ran its best kernel or one the environment forced (OPENBLAS_CORETYPE). Else "".
  std::string library;
};

// Runs the suite. Returns the records of the cells that ran (a failing cell is a record with
// checksum_ok false, not an error). Returns no records and sets *error for bad options (unknown
// suite, engine or workload; no programs directory); returns the records so far and sets
// *error when interrupted or when the CSV/JSON file cannot be written.
std::vector<BenchRecord> run_benchmarks(const BenchOptions& options, std::string* error);

// True when there is at least one record and every record's checksum_ok.
bool all_ok(const std::vector<BenchRecord>& records);

// Where the programs are: $DESCENT_BENCH_DIR when set, else this source tree's bench/programs.
std::string default_programs_dir();

// One line describing this machine: CPU model and logical CPU count.
std::string host_description();

// CSV with a header line: suite,workload,engine,kind,scale,median_s,min_s,max_s,cpu_s,runs,
// compile_s,startup_s,steps,baseline,ratio_vs_baseline,checksum_ok,note,threads,gflops,gbs,
// roof_fraction,roof_level,trials,search_s,library. NaN is an empty field.
std::string to_csv(const std::vector<BenchRecord>& records);
// JSON: {"schema": "descent-bench/1", "host": ..., "records": [{suite, workload, engine,
// kind, scale, median_s, min_s, max_s, cpu_s, runs, runs_s, compile_s, startup_s, steps, baseline,
// ratio_vs_baseline, checksum_ok, expected, output, note}, ...]}. NaN is null.
std::string to_json(const std::vector<BenchRecord>& records);
bool write_csv(const std::string& path, const std::vector<BenchRecord>& records,
               std::string* error);
bool write_json(const std::string& path, const std::vector<BenchRecord>& records,
                std::string* error);

// The tensor suite alone (run_benchmarks calls it for "tensor" and "all"): kernels from the
// prelude, lowered, and run on the columns (engines) ref, cpu-naive, cpu-sched (with
// bench/schedules/<workload>.sched, else <kernel>.sched), opencl-naive, opencl-sched (with
// <workload>.opencl.sched, else <kernel>.opencl.sched) and the workload's baseline:
// "openblas" (sgemm; sgemv + relu) or "cpp" (a plain C++ loop, for vector_add and softmax).
// The CPU columns and the baseline run at each thread count; ref once on one thread; the
// OpenCL columns once, on the default device (threads = its compute units). Every output is
// checked against the reference interpreter where it runs (quick scale, and small workloads
// at full scale), else against the baseline's. A column that cannot run here (no OpenCL
// device; no .opencl.sched file) gives skipped records that say why, not failures.
// Progress lines that start with '[' are the progress bar ("[=====>    ]  7/40 ..."): one
// per cell start and end, which a terminal front end may redraw in place.
std::vector<BenchRecord> run_tensor_benchmarks(const BenchOptions& options, std::string* error);
// The tensor workloads' names ("vector_add", "matmul_128", ..., "softmax").
std::vector<std::string> tensor_workloads();
// The tensor columns, in table order.
std::vector<std::string> tensor_engines();
// One row per tensor record: workload, engine, threads, median, compile time, GFLOP/s, GB/s,
// % of roof, time relative to the workload's baseline, check; then the notes of the failed
// and skipped cells.
std::string format_tensor_table(const std::vector<BenchRecord>& records);
std::string schedules_dir();

// The model suite alone (run_benchmarks calls it for "model" and "all"): the digits MLP
// (64-32-10, trained) and an MNIST-shaped MLP (784-128-10, random) at batch 1 and 64, each
// written as ONNX and imported as `descent import` does; timed per batch on the columns
// cpu-ast, cpu-stack, cpu-reg, cpu-jit (the engines driving the cpu device) and opencl-ast,
// and in a child python3 with NumPy (OpenBLAS) and ONNX Runtime's CPU provider when those
// are installed (absent otherwise, with a progress note; never a failure). Every output is
// checked against the reference interpreter. ratio_vs_baseline is against ONNX Runtime at
// the same thread count (NumPy where ONNX Runtime is absent).
std::vector<BenchRecord> run_model_benchmarks(const BenchOptions& options, std::string* error);
std::vector<std::string> model_workloads();  // "digits_b1", "digits_b64", "mnist_b1", "mnist_b64"
std::vector<std::string> model_engines();    // the columns, in table order
// One row per model record: workload, engine, threads, time per batch, images/s, GFLOP/s,
// the ratio to the baseline, check; then the notes of skipped and failed cells.
std::string format_model_table(const std::vector<BenchRecord>& records);

// The train suite alone (run_benchmarks calls it for "train"; "all" leaves it out): one
// epoch of MLP training (digits 64-128-10 and MNIST-shaped 784-128-10, batch 64, 22 steps)
// on cpu-ast, cpu-reg, cpu-jit and, in a child python3, NumPy (backward by hand) and PyTorch
// when installed; each column's first-epoch loss checked against NumPy's (train_bench.cpp).
std::vector<BenchRecord> run_train_benchmarks(const BenchOptions& options, std::string* error);
std::vector<std::string> train_workloads();  // "digits_train", "mnist_train"
std::string format_train_table(const std::vector<BenchRecord>& records);

// The tune suite alone (run_benchmarks calls it for "tune"; "all" leaves it out: minutes per
// workload): kernels searched from their naive nests by the evolutionary strategy, on the
// columns <device>-naive, -default, -sched (bench/schedules) and -tuned, all measured by the
// tuner's measurer in the same run; and "strategies", random against evolutionary over five
// seeds (bench/tune_bench.cpp says how each is counted).
std::vector<BenchRecord> run_tune_benchmarks(const BenchOptions& options, std::string* error);
std::vector<std::string> tune_workloads();
// One row per record: workload, engine, threads, median, GFLOP/s, % roof, time/base, trials,
// search time, check; then a legend and the notes.
std::string format_tune_table(const std::vector<BenchRecord>& records);

// The analysis suite alone (run_benchmarks calls it for "analysis"; "all" leaves it out):
// abstract interpretation per domain on the vm programs and on big and hostile inputs, each
// against the front end (compile) of the same program in the same run (analysis_bench.cpp).
std::vector<BenchRecord> run_analysis_benchmarks(const BenchOptions& options, std::string* error);
std::vector<std::string> analysis_workloads();
std::string format_analysis_table(const std::vector<BenchRecord>& records);

// The isa suite alone (run_benchmarks calls it for "isa"; "all" leaves it out): the vm
// programs' dynamic instruction counts per target (x86_64, aarch64, riscv64) and LLVM -O0/-O2,
// under qemu-user; ratios against x86-64 -O2 (isa_bench.cpp). Needs the cross gcc and qemu.
std::vector<BenchRecord> run_isa_benchmarks(const BenchOptions& options, std::string* error);
std::string format_isa_table(const std::vector<BenchRecord>& records);

// The start-up suite alone: `descent run` of print(1) as a whole process on each engine,
// against lua5.4 and python3 in the same run; ratios against python3 (startup_bench.cpp).
std::vector<BenchRecord> run_startup_benchmarks(const BenchOptions& options, std::string* error);

// A plain-text table, one row per record: workload, engine, median, min, CPU, runs, ratio,
// start-up, check.
std::string format_table(const std::vector<BenchRecord>& records);
// A compact matrix: one row per workload, one column per engine, "median (ratio)" cells.
std::string format_summary(const std::vector<BenchRecord>& records);

}  // namespace descent::bench
