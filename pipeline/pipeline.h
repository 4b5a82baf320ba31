// The spine of Descent: one Session object that every front end (REPL, CLI, visualizer,
// labs, tests) uses to compile input, run it on an engine, and look at any stage.
//
//   Session s;
//   Outcome o = s.submit("x = 15\nx + 10 - 5\n", "<stdin>", opts);  // compile + run
//   StageResult ast = s.stage("ast", Format::Sexpr);                  // a view of it
//   s.pass_snapshot("fold_constants", /*after=*/true);                // a pass's after view
//
// A Session accumulates: each input is compiled against the globals and functions of the
// ones before it, which is what a REPL needs and what a file run is a special case of.
// Nothing here prints; every view comes back as text (plus a tree where the stage is one).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "lang/engine.h"
#include "lang/module.h"
#include "lang/token.h"
#include "lang/tree.h"
#include "native/native.h"
#include "tensor/launch.h"
#include "tune/search.h"

namespace descent {

// Registers the tensor backends that live above tensor/ (OpenCL); every Session does it
// once per process (pipeline/backends.cpp, the one registration point).
void register_tensor_backends();

namespace tensor {
class GraphRuntime;
class Schedule;
struct IterationOrder;
struct StepResult;
}  // namespace tensor
namespace tir {
struct PrimFunc;
}
namespace proc {
struct Limits;
struct Result;
}

enum class Format { Text, Sexpr, Dot };

struct StageInfo {
  const char* name;         // the key: "tokens", "ast", ...
  const char* description;  // one line for --help and :help
};

struct PassInfo {
  std::string name;   // the key for pass_snapshot(): "fold_constants"
  std::string stage;  // the stage whose pipeline it belongs to: "ast"
  bool changed = false;
  std::string summary;  // e.g. "folded 3 expressions"
};

// The structured form of a graph-shaped view (the tensor dataflow graph), for front ends
// that lay it out themselves; DOT is the same data for Graphviz.
struct GraphData {
  struct Node {
    int64_t id = -1;
    std::string label;   // "matmul", "linear_relu", "rand"
    std::string kind;    // "const", "input", "kernel"
    std::string shape;   // "[1, 200]"
    bool output = false; // someone asked for this value
    bool backward = false;  // made by grad(): part of the backward pass (docs/training.md)
  };
  struct Edge {
    int64_t from = -1, to = -1;  // node ids: `from` is an input of `to`
    std::string label;           // the shape the edge carries
  };
  std::vector<Node> nodes;  // topological order
  std::vector<Edge> edges;
};

struct StageResult {
  bool ok = false;
  std::string text;               // the view, or (when !ok) why it is not available
  std::optional<TreeNode> tree;   // for tree-shaped stages (ast, the loop nest of "tir")
  std::optional<GraphData> graph; // for graph-shaped views (graph_view)
  // For "llvm", "llvm-opt" and "asm": per line of text (each line ends in '\n'), the
  // source line it came from (1-based, in the input that defined the code; 0: none), from
  // the debug locations codegen emits. Empty for the other stages.
  std::vector<int> source_lines = {};  // (= {}: brace-initialised results may leave it out)
};


// One stage of an input's way through the Session and its time (`:time` lists them).
struct StageTime {
  std::string stage;  // "parse", "check", "fold_constants", "run"; within run: "lower",
                      // "graph passes", "compile", "kernels" (tensor code only), and on
                      // the jit engine "jit: N functions" (its machine code compile) and,
                      // for a tiered unit, "jit: -O2 behind it, ..." (the background compile)
  double seconds = 0;  // negative: none to show (that compile not finished by the end)
  int depth = 0;      // 1: part of the depth-0 stage before it (tensor work within "run")
};

// What happened to one input.
struct Outcome {
  enum Status { Ok, CompileError, RuntimeError } status = Ok;
  std::vector<Diagnostic> diagnostics;
  std::string message;  // the diagnostics rendered with source line and caret
  uint64_t steps = 0;
  double compile_seconds = 0, run_seconds = 0;
  // The same time stage by stage, in the order they ran. The engine's own translation
  // (bytecode, LLVM) happens within "run".
  std::vector<StageTime> stages;
  // Every tensor kernel launch of the run, in order (`:debug 2` prints them as they happen
  // through Session::set_launch_observer).
  std::vector<tensor::LaunchRecord> launches;  // the first tensor::kLaunchLogLimit of them
  tensor::LaunchTotals launch_totals;          // all of them, added up
  // Something the front end should tell the user, e.g. that tensor code ran on the ast
  // engine although another engine was chosen.
  std::string note;
  // What this input changed that the user must hear every time, one line each: e.g. that a
  // redefined kernel's schedule no longer applies and was dropped.
  std::vector<std::string> notes;
  // `descent run`'s exit code: 0, 1 for a runtime error, 2 for a compile error.
  int exit_code() const { return status == Ok ? 0 : status == RuntimeError ? 1 : 2; }
};

// One engine's run of the same input, for side-by-side comparison (:compare).
struct Comparison {
  std::string engine;
  std::string output;
  Outcome outcome;  // steps: statements for ast, instructions for the VMs
  // Why this engine did not run the input (tensor code on an engine that does not run it), or ""
  // when it ran: its output and outcome are then empty, not a result.
  std::string not_run;
};

// One row of a bytecode listing, addressable by (function, pc) so a debugger can point at it.
struct CodeLine {
  std::string function;  // the chunk or function: "<script>", "fib"
  int pc = -1;           // stack: byte offset; reg: instruction index; -1: a header/blank row
  std::string text;      // the row as the disassembler prints it
  SourceLoc loc;         // the source of the instruction (invalid on header rows)
};

// Live intervals of one function's virtual registers and where the allocator put each.
struct LiveRange {
  std::string value;     // the virtual register: "v3" (or the variable it holds: "v3 n")
  int start = 0, end = 0;  // instruction indices of the virtual code, end inclusive
  std::string location;  // "r2", or a spill slot "s1"
  bool spilled = false;
  std::string type;      // the value's type: "int", "float", "bool"
};
struct LiveFunction {
  std::string function;
  int num_instructions = 0;
  std::vector<LiveRange> ranges;  // sorted by start
};

struct Recording {
  std::string engine;              // "stack" or "reg"
  std::vector<TraceStep> steps;
  std::string output;              // everything the run printed
  bool truncated = false;          // stopped after max_steps
  Outcome outcome;                 // how the run ended (a runtime error is in the last step)
  std::string error;               // why nothing could be recorded (no input, tensor code, ...)
};

// The Session's public API, by tier: each part below opens with a "// ----" banner naming the
// file that implements it, so a reader finds a tier's API in one place:
//   the scalar tier     engines, settings, compile and run, stage and pass views  pipeline.cpp
//   drawn views         rows, trees and graphs for the visualizer     structured.cpp, pipeline.cpp
//   the tensor tier     devices, tensors, kernels and their views, running them   tensor_session.cpp
//   schedules           schedule objects by id: open, step, undo, install, views  schedules.cpp
//   tuning              the auto-tuner, default schedules, the tuning database    tune_session.cpp
//   host values         tensors and scalars to and from a host language (Python)  host.cpp
// The labs, the benchmark and every front end use only this API.
class Session {
 public:
  Session();
  ~Session();

  // ---- The scalar tier: engines, settings, compile and run, views (pipeline.cpp) ---------
  // The engines this build has, by name ("ast", ...), and the one runs use.
  static std::vector<std::string> engines();
  bool set_engine(std::string_view name);  // false if there is no such engine
  const std::string& engine() const { return engine_; }
  // The -O level (0..3, default 2) of the LLVM views and the jit engine, and the target
  // triple (or alias: x86-64, aarch64, riscv64, wasm32; "" = this machine) of asm/mir.
  bool set_opt_level(int level);
  int opt_level() const { return opt_level_; }
  // Whether the jit engine may start loop-free code at -O0 and compile it at the -O level in
  // the background (default on; llvm_backend/jit.h).
  void set_jit_tiers(bool on);
  // The abstract domain of the "analysis" stage (constants, signs, intervals, congruences,
  // sets, product; default product, the reduced product of the last four).
  void set_analysis_domain(analysis::Domain d) { analysis_domain_ = d; }
  analysis::Domain analysis_domain() const { return analysis_domain_; }
  // How many iterations a loop is unrolled before it is widened (analysis::Options::unroll;
  // 0: never), and whether the report says how each loop was solved (--explain).
  void set_analysis_unroll(int n);
  int analysis_unroll() const { return analysis_unroll_; }
  void set_analysis_thresholds(bool on);  // widening thresholds (analysis::Options::thresholds)
  bool analysis_thresholds() const { return analysis_thresholds_; }
  void set_analysis_contexts(bool on);  // calls in their caller's state (analysis::Options::contexts)
  // The flag analyze() polls for Ctrl-C instead of this Session's own (a front end's flag
  // that outlives the Session: `descent analyze` makes one Session per file).
  void set_analysis_interrupt(const std::atomic<bool>* flag) { analysis_interrupt_ = flag; }
  bool analysis_contexts() const { return analysis_contexts_; }
  void set_analysis_explain(bool on) { analysis_explain_ = on; }
  bool analysis_explain() const { return analysis_explain_; }
  // The abstract interpretation of the last input (its top-level code and the functions it
  // can call) in a domain (default: analysis_domain()): facts per line, alarms, the control-
  // flow graph, every block's entry state and the solver's steps. Null when the input did
  // not check. Computed once per input and domain.
  std::shared_ptr<const analysis::Result> analyze(std::optional<analysis::Domain> domain = {}) const;
  bool set_target(const std::string& target, std::string* error);
  // The machine the native backend's views describe: "" follows the target above (x86-64
  // for this machine), else "x86-64" or "aarch64" (the REPL's `:native isel aarch64`).
  bool set_native_target(const std::string& name, std::string* error);
  const std::string& target() const { return target_; }
  static std::vector<std::string> targets();
  // What the asm stage keeps, as Compiler Explorer's filters choose: each instruction's
  // encoded bytes (default on) and the assembler directives (.text, .p2align, .cfi_*,
  // .loc, .section, ...; default off: instructions, labels in use and data are shown).
  struct AsmOptions {
    bool encodings = true;
    bool directives = false;
  };
  void set_asm_options(const AsmOptions& options) { asm_options_ = options; }
  const AsmOptions& asm_options() const { return asm_options_; }
  // `descent build`: the last input as a standalone object file (links with `cc F.o -lm`).
  bool build_object(const std::string& path, std::string* error) const;
  // `descent build --run`, `:asm TARGET run`: the last input built as above for the target,
  // linked with that target's C compiler and run (under qemu-user for another architecture;
  // proc/cross.h), Ctrl-C through interrupt_flag(). `object` "" builds in a temporary
  // directory, removed after; `exe` "" puts the executable beside the object. False with
  // *error when building or linking fails (a missing tool named with its package; wasm32
  // refused); otherwise *result is the run: its output, exit code or signal.
  bool run_on_target(const proc::Limits& limits, proc::Result* result, std::string* error,
                     const std::string& object = "", const std::string& exe = "") const;
  // `descent build --native`: the last input through the native backend for the Session's
  // native target, as a statically linked executable at `exe` with the small runtime around
  // the code (its C file beside it, exe + ".c"); native/image.h. False with *error.
  bool write_native_executable(const std::string& exe, std::string* error) const;
  // `descent build --native --run`: the same, then run as run_on_target runs its object (under
  // qemu-user for another architecture, Ctrl-C through interrupt_flag()); `exe` "" builds in
  // a temporary directory, removed after. False with *error when a tool is missing or the
  // build fails; otherwise *result is the run (standalone: an error on stderr, exit code 1).
  bool run_native_on_target(const proc::Limits& limits, proc::Result* result, std::string* error,
                            const std::string& exe = "") const;
  // What the JIT did in its last run: compile and run time, and how many Descent functions
  // it (re)compiled (a function is compiled when first reached, and again when it, or a
  // function it calls, was redefined). False when no input ran on the jit engine yet.
  struct JitStats {
    double compile_seconds = 0, run_seconds = 0;
    int functions_compiled = 0;
    // Of those, started at -O0 while the -O level's code is compiled in the background: that
    // compile's seconds, and when it was in use (from the run's start); pending: not by the end.
    int functions_tiered = 0;
    double tier2_seconds = 0, tier2_ready_seconds = 0;
    bool tier2_pending = false, tier2_failed = false;
  };
  bool jit_stats(JitStats* out) const;
  // Waits for the jit engine's background compile, if one is under way (llvm_backend/jit.h,
  // "Tiers"): every view, kernel and run of this Session calls it first, so that nothing else
  // of the Session uses LLVM while that compile does.
  void settle_jit() const;
  // A unified diff of the IR after two LLVM passes (labels as passes() gives them).
  StageResult diff_passes(std::string_view a, std::string_view b) const;

  // The register VM's register file size (3..250, default 16); affects `reg-alloc`, `live`
  // and the reg engine.
  bool set_num_registers(int n);
  int num_registers() const { return num_registers_; }

  // Compiles one input against everything before it. On success it becomes the "last
  // input" whose stages can be viewed and which run() executes.
  Outcome compile(std::string source, std::string name);
  // Runs the last successfully compiled input on the current engine.
  Outcome run(const RunOptions& options);
  // Runs the last input again on every engine, each starting from the globals it started
  // from the first time, and returns what each printed, its steps and its time.
  std::vector<Comparison> compare(const RunOptions& options);
  // compile() then, if it succeeded, run().
  Outcome submit(std::string source, std::string name, const RunOptions& options);

  // Stage views of the last input (also of one that failed to compile, as far as it got).
  // "ast" and "ast-folded" fill StageResult::tree, each node with its source range [loc, end).
  // The code stages (stack.., reg.., live, llvm.., mir.., asm) show the code that ran: the
  // last input's top-level code (with the REPL's echo where it ran with one) and the
  // functions it defined; given a `function`, that function of the session alone, whichever
  // input defined it (like Python's dis.dis(fib)). A name that is no function is an error
  // that lists the functions.
  static const std::vector<StageInfo>& stages();
  StageResult stage(std::string_view name, Format format = Format::Text,
                    std::string_view function = {}) const;
  // Whether a stage takes a function name (the code stages above).
  static bool stage_takes_function(std::string_view name);
  // Whether an engine can trace (RunOptions::trace): the stack and reg VMs. The others
  // ignore it, so a front end says so rather than print nothing.
  static bool engine_traces(std::string_view engine) { return engine == "stack" || engine == "reg"; }
  // Passes that ran on the last input, in order, and each one's before/after view.
  std::vector<PassInfo> passes() const;
  StageResult pass_snapshot(std::string_view pass, bool after, Format format = Format::Text) const;

  // Names for completion: globals and functions defined so far, and builtins.
  std::vector<std::string> known_names() const;

  // Set it (from a signal handler too: it is a lock-free atomic) to interrupt a run.
  std::atomic<bool>& interrupt_flag() { return interrupt_; }

  // Read access for front ends that draw the data structures themselves.
  const Module& module() const { return module_; }

  // ---- Drawn views for the visualizer (structured.cpp, pipeline.cpp) ---------------------
  // The last input's source and tokens (null / empty before any input).
  const SourceFile* last_source() const;
  const std::vector<Token>& last_tokens() const;
  // A bytecode stage ("stack", "stack-fused", "reg", "reg-alloc", "reg-fused") as rows; the
  // rows' text joined with newlines is what stage() shows (each row followed by '\n': the
  // text's final newline does not make an empty last row; blank separator rows are rows).
  // Empty when it has no bytecode.
  // With a function: that function alone, as stage() shows it.
  std::vector<CodeLine> listing(std::string_view stage, std::string_view function = {}) const;
  // The register allocator's live intervals for every function of the last input (or for
  // `function` alone).
  std::vector<LiveFunction> live_ranges(std::string_view function = {}) const;
  // A native backend stage of the last input (or of `function` alone), body by body: each
  // body's text, and for the DAG stages ("dag", "legal", "combine", "isel") the graph to
  // draw; isel colours each node by the pattern covering it.
  std::vector<native::BodyGraph> native_graphs(std::string_view stage, std::string_view function = {}) const;
  // Runs the last input again on "stack" or "reg" from the globals it started from, and
  // records every instruction (at most max_steps; then `truncated`). The session's globals
  // are left as they were. Tensor code is recorded where the engine runs it.
  // Steps name the code the VM runs: their (function, pc) are rows of listing("stack-fused")
  // for "stack" and of listing("reg-fused") for "reg".
  Recording record(std::string_view engine, size_t max_steps = 100000);

  // ---- The tensor tier (tensor/, the devices; tensor_session.cpp) ----------------------
  // Tensor code in scalar programs (kernel calls, rand, sum_all, ...) runs on the ast
  // engine whatever engine is chosen (Outcome::note says so); its kernels run on the tensor
  // device, a tensor backend from the registry (tensor/backend.h).
  tensor::GraphRuntime& tensors() { return *tensors_; }
  const tensor::GraphRuntime& tensors() const { return *tensors_; }
  // Devices, in the registry's order: "ref" (the reference interpreter, the default), "cpu"
  // (LLVM-compiled), "opencl" (the default OpenCL device: a GPU where there is one, else
  // PoCL on the CPU), and whatever else is registered. Choosing one opens it; without a
  // platform or device that fails with *error saying why, and the previous device stays.
  static std::vector<std::string> devices();
  // Each device and what it is, for help texts: ("cpu", "LLVM-compiled machine code ...").
  static std::vector<std::pair<std::string, std::string>> device_descriptions();
  // `descent devices`: a paragraph per device about what it runs on, or why it cannot.
  static std::string describe_devices();
  bool set_device(std::string_view name, std::string* error = nullptr);
  std::string device() const;
  void set_threads(int threads);  // parallel loops of cpu kernels (0: every hardware thread)
  int threads() const { return threads_; }
  // The cache the "traffic" kernel view models (tensor/traffic.h), in bytes (> 0; default
  // 1 MiB, one core's L2 on the machines docs/benchmarks.md's figures come from).
  void set_traffic_cache(double bytes) { traffic_cache_ = bytes > 0 ? bytes : traffic_cache_; }
  double traffic_cache() const { return traffic_cache_; }
  // The tensor memory (`:memory`): live tensors and bytes, the peak, what the collector
  // freed, and the per-tensor limit; set_tensor_limit takes "512M", "2G", "1.5GiB" or bytes.
  std::string memory_report() const;
  bool set_tensor_limit(std::string_view size, std::string* error);
  // The folder a relative path in load() and save() means ("": the current directory).
  void set_file_base(const std::string& dir);
  // False: save() is an error (a lab's checker, so student code cannot rewrite its files).
  void set_saves_allowed(bool on);
  // Told of each kernel launch as it happens (null: nobody); Outcome::launches has them all
  // after the run.
  void set_launch_observer(std::function<void(const tensor::LaunchRecord&)> observer);

  // ---- Schedules as objects (pipeline/schedules.cpp) ----
  // A schedule object is one kernel of the module lowered for concrete shapes (named dims
  // from `dims`, others 64) with its own history of steps (undo, redo, trace), its views, and
  // runs and timings. The Session holds any number of them, side by side, by id (from 1).
  // Stepping one installs it: the program's calls of its kernel then use it (at other shapes
  // its steps are applied to those), until another schedule of that kernel is stepped or
  // installed. The kernel under the microscope (`descent kernel`, the REPL's :kernel, the
  // visualizer) is the current schedule; every call below without an id means that one.
  using ScheduleId = int;
  // Opens a schedule of kernel `name` at `dims` and returns its id (0 with *error naming
  // the kernel or the bad dim). restore: it starts from the steps installed for the kernel
  // (when they apply at these dims); otherwise from the nest as lowered.
  ScheduleId open_schedule(const std::string& name, const std::map<std::string, int64_t>& dims,
                           bool restore, std::string* error);
  bool close_schedule(ScheduleId id);  // false when there is no such schedule
  // Puts schedule `id` under the microscope.
  bool use_schedule(ScheduleId id, std::string* error);
  ScheduleId current_schedule() const { return current_; }
  // Makes the program's calls of its kernel use schedule `id` (its steps as they are now).
  bool install_schedule(ScheduleId id, std::string* error);
  struct ScheduleInfo {
    ScheduleId id = 0;
    std::string kernel;
    std::map<std::string, int64_t> dims;
    size_t steps = 0;
    bool installed = false;  // the kernel's calls use it
    bool current = false;    // under the microscope
  };
  std::vector<ScheduleInfo> open_schedules() const;
  // Moves schedule `id` (0: the current one) of another Session, `from` (the one before an
  // edit of the program, as the visualizer makes a fresh Session per run), into this one,
  // under the microscope and installed. Where the kernel lowers here to the nest it was
  // opened on, the object moves as it is, history and redo included (*reapplied false);
  // where the edit changed the kernel, its steps are applied to the new nest as far as they
  // go (*reapplied true; *note says where they stopped). 0 with *error when this program
  // has no such kernel or it does not lower at those dims; `from` keeps it then.
  ScheduleId adopt_schedule(Session& from, ScheduleId id, bool* reapplied, std::string* note,
                            std::string* error);
  // Opens a schedule (restored) and puts it under the microscope: `descent kernel`, :kernel.
  bool select_kernel(const std::string& name, const std::map<std::string, int64_t>& dims,
                     std::string* error);
  // "n=1024" words (the CLI's --dim, the REPL's :kernel arguments) -> dims; false with
  // *error naming the first bad word.
  static bool parse_dims(const std::vector<std::string>& words,
                         std::map<std::string, int64_t>* dims, std::string* error);
  const std::string& selected_kernel() const;  // the current schedule's kernel, or ""
  const std::map<std::string, int64_t>& selected_kernel_dims() const;
  // One step; *made (may be null) says which loops and blocks it made.
  bool schedule_step(std::string_view step, std::string* error, tensor::StepResult* made = nullptr,
                     ScheduleId id = 0);
  bool schedule_text(std::string_view text, std::string* error);  // a whole schedule file
  // What a schedule step's words can be, for completion: the primitives' names, and the
  // loops and blocks of the selected kernel's current loop nest (empty without one).
  static std::vector<std::string> schedule_primitives();
  std::vector<std::string> schedule_names(ScheduleId id = 0) const;
  bool schedule_undo(ScheduleId id = 0);
  bool schedule_redo(ScheduleId id = 0);
  std::string schedule_trace(ScheduleId id = 0) const;
  // Views of the selected kernel: "tir" (scheduled loop nest, TVMScript-like), "tir-original"
  // (as lowered), "c" (the C loop nest), "llvm" / "llvm-opt" (the CPU backend's IR),
  // "opencl" (the OpenCL C and its launch sizes): each device lists its own.
  // "tir" and "tir-original" also fill StageResult::tree with the loop nest:
  //   head "func"  atom: the kernel's name; kids: its allocations and nests
  //   head "alloc" atom: the buffer and its shape and scope ("C_local[4, 16] local")
  //   head "for"   atom: the loop variable ("i_0"), type: its kind ("serial", "parallel",
  //                "vectorized", "unrolled", "bound"), detail: "0..64" or the thread axis,
  //                ref: the loop's name in schedule steps ("i_0", or "C.i" where the
  //                variable alone is ambiguous: tensor/schedule.h's loop_names)
  //   head "block" atom: the block's name, detail: its iteration variables and bindings
  //   head "init"  the reduction's init statement(s) as kids
  //   head "if"    atom: the predicate
  //   head "stmt"  atom: one statement as the TVMScript printer writes it (a leaf)
  // The list: the Session's own views, then each device's views of its generated code.
  static std::vector<StageInfo> kernel_views();
  StageResult kernel_view(std::string_view view, ScheduleId id = 0) const;
  // The order the selected kernel's scheduled loop nest writes its output in, element by
  // element and tile by tile (tensor/iteration_order.h): the loop-nest pane's picture.
  // False with *error without a kernel, or when the nest is too big to walk.
  bool kernel_iteration_order(tensor::IterationOrder* out, std::string* error,
                              ScheduleId id = 0) const;
  // Runs the selected kernel on seeded random inputs on a device (a name from devices());
  // with check, also on the reference interpreter, and compares (relative 1e-4).
  struct KernelRun {
    bool ok = false;
    std::string error;     // why it did not run, or (check) where the results differ
    double seconds = 0;    // the kernel's own time (median of `repeats`), compilation and
                           // transfers excluded (tensor::KernelTiming::kernel_s)
    double min_seconds = 0;  // the fastest of the repeats: what the kernel takes when nothing
                             // else had the core (a comparison on a busy machine uses it)
    double compile_seconds = 0;  // code generation and the device's build
    bool checked = false;  // compared against the reference
    double checksum = 0;   // sum of the output's elements
    std::vector<int64_t> shape;
  };
  KernelRun run_kernel(std::string_view device, bool check, uint64_t seed = 1, int repeats = 1,
                       ScheduleId id = 0);
  // A kernel of the module lowered for `dims` (as select_kernel) with a whole schedule's
  // text applied, without touching the kernel under the microscope: what a benchmark or a
  // tuner measures. False with *error naming the kernel, or the schedule line that failed.
  bool lower_kernel(const std::string& name, const std::map<std::string, int64_t>& dims,
                    std::string_view schedule, tir::PrimFunc* out, std::string* error) const;
  // The same, as the "tir" view prints it (TVMScript-like): a tuning candidate's loop nest.
  bool kernel_script(const std::string& name, const std::map<std::string, int64_t>& dims,
                     std::string_view schedule, std::string* text, std::string* error) const;
  // ---- Training (tensor/autodiff.h, docs/training.md; grad_session.cpp) ----
  // The adjoint kernels of kernel `name`, derived from its index notation, as Descent
  // source (`:grad NAME`). False with *error: no such kernel, or the construct the rules
  // cannot differentiate, with its location.
  bool kernel_adjoints(const std::string& name, std::string* text, std::string* error) const;
  // The same one by one, for a front end that calls them (the Python module's grad).
  struct AdjointInfo {
    std::string param;           // the parameter it is the gradient of
    std::string name;            // the adjoint kernel's name ("linear_dw")
    std::string source;          // its Descent source
    std::vector<size_t> inputs;  // what it takes: these parameters of the kernel, then dout
    bool zero = false;           // the kernel does not depend on the parameter
  };
  bool kernel_adjoint_list(const std::string& name, std::vector<AdjointInfo>* out,
                           std::string* error) const;
  // The "grad" stage: the same for every kernel the last input defines or calls.
  StageResult grad_view() const;
  // ---- Tuning (tune/, docs/tuning.md; tune_session.cpp) ----
  // Kernels nobody scheduled run with the rule-based default schedule on cpu and OpenCL
  // (on unless turned off: `--no-default-schedule`, `:defaults off`); off, they run as
  // lowered. The reference interpreter always runs the nest as lowered.
  void set_default_schedules(bool on);
  bool default_schedules() const { return default_schedules_; }
  // The tuning database whose best records schedule the kernels nobody scheduled, before the
  // defaults; "" for none. A missing file is an empty database (`descent tune --db` then
  // creates it); malformed lines are skipped and listed in tuning_problems().
  void set_tuning_database(const std::string& path);
  // The same for a database that must already exist (`--tuned DB`, `:tuned DB`): false, and
  // nothing changed, when it does not (or is not a readable file), with *error saying so.
  bool read_tuning_database(const std::string& path, std::string* error);
  const std::string& tuning_database() const { return tuning_path_; }
  const std::vector<std::string>& tuning_problems() const;
  size_t tuning_records() const;
  // The schedule the runtime gives a nest nobody scheduled on `device`: the database's best
  // record for its kernel and shapes, else the default rules. *source: "tuned", "default" or
  // "" (none: the nest runs as lowered); *notes: what the rules saw and skipped.
  std::string automatic_schedule(const std::string& kernel, const tir::PrimFunc& f,
                                 const std::string& device, std::string* source,
                                 std::vector<std::string>* notes = nullptr) const;
  // Applies that schedule to the kernel under the microscope as ordinary steps (what
  // `descent kernel` does when no --schedule is given). False with *error without a kernel.
  bool schedule_automatically(const std::string& device, std::string* source, std::string* error);

  struct TuneRequest {
    std::string kernel;  // a kernel of the module; "" = every kernel the last run launched
    std::map<std::string, int64_t> dims;  // its named dims (others 64)
    std::string device = "cpu";
    std::string strategy = "evolutionary";  // tune::strategies()
    int trials = 32;                         // candidates measured per kernel
    uint64_t seed = 1;
    std::string space;     // a space (tune/space.h) for `kernel`; "" = built from rules
    std::string database;  // appended to and resumed from; "" = the session's own database
    int repeats = 5;
    double time_limit_s = 10;
    bool overlap_builds = true;
    // Schedules to measure beside the search, the same way (a hand-written one, a teacher's
    // target): name and schedule text. Each is a yardstick, not a candidate.
    std::vector<std::pair<std::string, std::string>> compare;
  };
  struct Compared {
    std::string name, trace;
    double seconds = 0;  // 0 when it failed
    std::string error;   // why: it does not apply, build, run or match the reference
  };
  struct TuneTask {
    std::string kernel, shape;  // the database's key
    std::string space;          // the space searched
    tune::SearchResult result;
    double naive_seconds = 0;    // the nest as lowered (0: it failed; error in naive_error)
    double default_seconds = 0;  // the default schedule (0 when the rules had none)
    std::string naive_error, default_trace;
    std::vector<std::string> default_notes;  // what the rules saw, and the steps they skipped
    // The fastest of the search's best and the default schedule: what the kernel now runs.
    double best_seconds = 0;
    std::string best_trace;
    bool best_is_default = false;
    double flops = 0;
    std::vector<Compared> compared;  // TuneRequest::compare, in order
    double search_seconds = 0;       // the search's wall time (building, checking, timing)
  };
  struct TuneReport {
    bool ok = false;
    std::string error;
    std::vector<TuneTask> tasks;
    std::string database;  // where the records went ("" when only in memory)
  };
  // Searches a schedule for a kernel (or for every kernel the last run launched), measuring
  // on a device: each candidate checked against the reference interpreter and timed; the
  // records go to the database and to the session, so the kernel runs tuned from then on.
  // `progress` (may be null) hears a line per candidate, `observe` (may be null) each
  // candidate itself as it is recorded (a live chart). Stops early on interrupt().
  TuneReport tune(const TuneRequest& request,
                  const std::function<void(const std::string&)>& progress = nullptr,
                  const std::function<void(const tune::Candidate&)>& observe = nullptr);
  // A report's candidates for a spreadsheet or a script (`descent tune --csv/--json`). CSV,
  // one row per candidate: kernel,shape,device,strategy,trial,ok,seconds,gflops,predicted,
  // from_database,trace,error (a trace's lines joined by "; "; predicted empty where the
  // model gave none). JSON: {"schema": "descent-tune/1", "device", "strategy", "tasks":
  // [{kernel, shape, space, flops, naive_s, default_s, best_s, best_trace, search_s,
  // rank_correlation, ranked, compared: [{name, seconds, error}], candidates: [{trial, ok,
  // seconds, predicted, from_database, trace, decisions, error}], best_so_far: [...]}]}.
  static std::string tune_csv(const TuneReport& report, const TuneRequest& request);
  static std::string tune_json(const TuneReport& report, const TuneRequest& request);

  // ---- Values from a host language (the Python module, python/; pipeline/host.cpp) ----
  // A global by name: its value and type (a Tensor's value is a handle into tensors()).
  // False when there is no such global or it was never assigned.
  bool global(const std::string& name, Value* value, Type* type) const;
  // Sets a global from outside any program, as the statement `name = value` would: a new
  // global takes `type`; an existing one keeps its type and another is an error naming both,
  // as in a program. The name must be an identifier that is no keyword, builtin, function
  // or kernel. A Tensor's value is a handle (add_tensor()).
  bool set_global(const std::string& name, Value value, Type type, std::string* error);
  // A tensor made outside (a NumPy array, borrowed or copied) as data in the tensor table:
  // its handle. Freed by the next collection unless a global holds it.
  int64_t add_tensor(tensor::Tensor t);
  // The value of a tensor handle, computing it (and what it reads) first when pending.
  std::shared_ptr<const tensor::Tensor> tensor_value(int64_t handle, std::string* error);
  // Calls a kernel of the module (a prelude kernel, or one an input defined) on tensors made
  // outside, and computes the result, as `name(args...)` in a program would: with the
  // kernel's schedule (the microscope's, or the automatic one), the graph passes and a
  // check of the shapes. `device` "" is the session's device; another is used for this
  // call alone. What the call added to the tensor table is freed again.
  bool call_kernel(const std::string& name, std::vector<tensor::Tensor> args,
                   std::string_view device, std::shared_ptr<const tensor::Tensor>* out,
                   std::string* error);
  // The kernels of the module by name (the prelude's first) and each one's parameters
  // and result as declared ("linear(x: f32[n, k], w: f32[m, k]) -> f32[n, m]").
  std::vector<std::pair<std::string, std::string>> kernel_signatures() const;
  // The loops around a block of the selected kernel's scheduled nest, outermost first, as
  // steps name them (tensor::sched::block_loops); false with *error without a kernel or
  // such a block.
  bool schedule_loops(const std::string& block, std::vector<std::string>* out,
                      std::string* error, ScheduleId id = 0) const;

  // The dataflow graph: "pending" (built but not computed yet), or what the last evaluation
  // did: "before" (as built), a graph pass's name (its result), "executed". Also fills
  // StageResult::graph.
  StageResult graph_view(std::string_view which, Format format = Format::Text) const;

 private:
  struct Unit;  // one input's artefacts
  // The stages as one table (pipeline.cpp): stages() lists it and stage() dispatches
  // through it, so a stage cannot be listed without a view or viewed without being listed.
  struct StageEntry;
  static const std::vector<StageEntry>& stage_table();
  Engine& engine_for(const std::string& name);
  // The last input's checked program (null unless it compiled) and whether it was compiled
  // with REPL echo: structured.cpp builds its views from these without seeing Unit.
  const Program* last_checked_program() const;
  bool last_echo() const;
  // What a code view shows: the last input's scope (function empty) or one function's.
  // False with *error when `function` is no function, or there is no input that compiled.
  bool code_scope(std::string_view function, CodeScope* scope, std::string* error) const;
  // After an input that redefined kernels (versions: each kernel's version before it):
  // drops the schedules that no longer apply to the new definitions and lowers the
  // selected kernel again; returns a line for each schedule dropped (tensor_session.cpp).
  std::vector<std::string> forget_stale_schedules(const std::vector<uint32_t>& versions);
  // A kernel whose shapes are all numbers is lowered when defined, so that a declared result
  // shape it does not compute is an error at the kernel (sema's KernelShapeCheck).
  static bool check_kernel_shapes(const KernelDecl& kernel, Diagnostic* error);
  // A schedule stored for `name` applied to a fresh `sched`; where it does not apply in
  // full it is dropped from the runtime too, and false says so.
  bool restore_schedule(const std::string& name, tensor::Schedule& sched);
  // Who installed the kernel's schedule in the runtime: a schedule's id, or 0 (a schedule
  // file, a text set by schedule_text's callers, or nobody).
  std::map<std::string, ScheduleId> installed_;

  Module module_;
  GlobalStore globals_;
  GlobalStore globals_before_last_run_;
  // Tensor handles held outside the running engine's variables (the globals a run started
  // from, kept for :compare and the debugger; the globals record() set aside): the tensor
  // collector must not free them.
  std::vector<int64_t> tensor_handles(const GlobalStore& store) const;
  std::vector<int64_t> set_aside_tensors_;
  int num_registers_ = 16;
  int opt_level_ = 2;
  bool jit_tiers_ = true;
  analysis::Domain analysis_domain_ = analysis::Domain::Product;
  int analysis_unroll_ = analysis::Options{}.unroll;
  bool analysis_thresholds_ = true;
  bool analysis_contexts_ = true;
  const std::atomic<bool>* analysis_interrupt_ = nullptr;  // nullptr: interrupt_
  std::string native_target_;  // set_native_target
  const native::Target* native_target(std::string* why) const;  // nullptr: *why
  bool analysis_explain_ = false;
  std::string target_;
  AsmOptions asm_options_;
  std::string engine_ = "ast";
  std::map<std::string, std::unique_ptr<Engine>> engine_cache_;
  std::unique_ptr<Unit> last_;
  // mutable: analyze() (const, it caches) clears it when it starts, as a run does.
  mutable std::atomic<bool> interrupt_{false};
  std::unique_ptr<tensor::GraphRuntime> tensors_;
  int threads_ = 0;          // parallel loops of cpu kernels (0: every hardware thread)
  double traffic_cache_ = 1 << 20;  // the "traffic" view's cache
  // The schedule objects (schedules.cpp), the current one (0: none) and the next id.
  struct OpenSchedule;
  std::map<ScheduleId, std::unique_ptr<OpenSchedule>> schedules_;
  ScheduleId current_ = 0, next_schedule_id_ = 1;
  // Schedule `id` (0: the current one), or null with *error ("no kernel selected", "no
  // schedule #3").
  OpenSchedule* schedule_or_error(ScheduleId id, std::string* error) const;
  // Lowers `name` at dims into a fresh tensor::Schedule; false with *error.
  bool lower_for_schedule(const std::string& name, const std::map<std::string, int64_t>& dims,
                          std::unique_ptr<OpenSchedule>* out, std::string* error) const;
  void install(const OpenSchedule& s);  // into the runtime
  // Tuning (tune_session.cpp): the scheduler the runtime asks, and what it knows.
  struct AutoScheduling;
  std::shared_ptr<AutoScheduling> auto_;
  bool default_schedules_ = true;
  std::string tuning_path_;
  void install_auto_scheduler();
  // What the automatic scheduler skipped since last asked (stale tuned records), once each.
  std::vector<std::string> take_tuning_notes();
};

}  // namespace descent
