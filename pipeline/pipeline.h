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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/engine.h"
#include "lang/module.h"
#include "lang/token.h"
#include "lang/tree.h"

namespace descent {

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

struct StageResult {
  bool ok = false;
  std::string text;               // the view, or (when !ok) why it is not available
  std::optional<TreeNode> tree;   // for tree-shaped stages
};

// What happened to one input.
struct Outcome {
  enum Status { Ok, CompileError, RuntimeError } status = Ok;
  std::vector<Diagnostic> diagnostics;
  std::string message;  // the diagnostics rendered with source line and caret
  uint64_t steps = 0;
  double compile_seconds = 0, run_seconds = 0;
  // `descent run`'s exit code: 0, 1 for a runtime error, 2 for a compile error.
  int exit_code() const { return status == Ok ? 0 : status == RuntimeError ? 1 : 2; }
};

// One engine's run of the same input, for side-by-side comparison (:compare).
struct Comparison {
  std::string engine;
  std::string output;
  Outcome outcome;  // steps: statements for ast, instructions for the VMs
};

class Session {
 public:
  Session();
  ~Session();

  // The engines this build has, by name ("ast", ...), and the one runs use.
  static std::vector<std::string> engines();
  bool set_engine(std::string_view name);  // false if there is no such engine
  const std::string& engine() const { return engine_; }
  // The -O level (0..3, default 2) of the LLVM views and the jit engine, and the target
  // triple (or alias: x86-64, aarch64, riscv64, wasm32; "" = this machine) of asm/mir.
  bool set_opt_level(int level);
  int opt_level() const { return opt_level_; }
  bool set_target(const std::string& target, std::string* error);
  const std::string& target() const { return target_; }
  static std::vector<std::string> targets();
  // `descent build`: the last input as a standalone object file (links with `cc F.o -lm`).
  bool build_object(const std::string& path, std::string* error) const;
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
  static const std::vector<StageInfo>& stages();
  StageResult stage(std::string_view name, Format format = Format::Text) const;
  // Passes that ran on the last input, in order, and each one's before/after view.
  std::vector<PassInfo> passes() const;
  StageResult pass_snapshot(std::string_view pass, bool after, Format format = Format::Text) const;

  // Names for completion: globals and functions defined so far, and builtins.
  std::vector<std::string> known_names() const;

  // Set it (from a signal handler too: it is a lock-free atomic) to interrupt a run.
  std::atomic<bool>& interrupt_flag() { return interrupt_; }

  // Read access for front ends that draw the data structures themselves.
  const Module& module() const { return module_; }

 private:
  struct Unit;  // one input's artefacts
  Engine& engine_for(const std::string& name);

  Module module_;
  GlobalStore globals_;
  GlobalStore globals_before_last_run_;
  int num_registers_ = 16;
  int opt_level_ = 2;
  std::string target_;
  std::string engine_ = "ast";
  std::map<std::string, std::unique_ptr<Engine>> engine_cache_;
  std::unique_ptr<Unit> last_;
  std::atomic<bool> interrupt_{false};
};

}  // namespace descent
