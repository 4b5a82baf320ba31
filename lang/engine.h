// What every execution engine (ast, stack, reg, jit, native) implements, and the state they share.
//
// Globals live outside the engines, in a GlobalStore owned by the session, so a REPL can
// switch engines between lines and keep its variables.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lang/module.h"
#include "lang/value.h"

namespace descent {

class TensorRuntime;  // lang/tensor_api.h

constexpr int kMaxCallDepth = 10000;  // LANGUAGE.md: deeper is "stack overflow"

// Receives program output (print lines and REPL echoes), always whole lines ending in '\n'.
using OutputSink = std::function<void(std::string_view)>;

struct GlobalStore {
  std::vector<Value> values;
  std::vector<uint8_t> defined;  // 1 once the global has been assigned
  void resize(size_t n) {
    values.resize(n);
    defined.resize(n, 0);
  }
};

// One executed instruction, reported as data (RunOptions::trace_steps) for debuggers: the
// structured form of a trace line. Session::record collects them for the step debugger.
struct TraceStep {
  std::string function;     // where the instruction is
  int pc = -1;              // as in CodeLine::pc
  std::string instruction;  // disassembled
  SourceLoc loc;            // its source
  int depth = 0;            // call depth after it (0: top level)
  // State after it ran. Stack VM: the current frame's operand stack, bottom first.
  std::vector<std::string> stack;
  // Register VM: the current frame's registers and spill slots holding a known value,
  // (location, value) in location order: ("r0", "15"), ("s1", "2.5").
  std::vector<std::pair<std::string, std::string>> registers;
  size_t output_size = 0;   // bytes the program had printed by then (Session::record fills it)
  std::string error;        // the runtime error this instruction raised, if any
};
struct RunOptions {
  OutputSink out;                                // where print writes; null discards output
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by Ctrl-C) to stop the program
  uint64_t step_limit = 0;  // stop with "interrupted" after this many steps (0: no limit)
  bool echo = false;        // REPL: print the value of each top-level expression statement
  OutputSink trace;         // VMs: one line per executed instruction (state after it); null: off
  // VMs: the same, as data (the stack or registers after each instruction); null: off.
  std::function<void(const TraceStep&)> trace_steps;
  // The AST walker only: every value a statement gives its variable (an assignment: the value
  // after it; a for loop: the loop variable at each iteration's start). What the abstract
  // interpretation's soundness test compares with the analysed facts. Null: off.
  std::function<void(const Stmt&, Value)> observe;
  // Where Tensor and Shape values live (engines whose runs_tensors() is true). Null: tensor code fails with
  // the runtime error "tensor code needs a tensor runtime".
  TensorRuntime* tensors = nullptr;
};

struct RunResult {
  bool ok = true;
  Diagnostic error;    // when !ok: a runtime error with its location
  uint64_t steps = 0;  // work done in the engine's own unit: statements (ast), instructions (VMs)
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  // Runs one checked Program's top-level code. Functions come from the Module (which also
  // holds earlier inputs' functions).
  virtual RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                        const RunOptions& options) = 0;
  // Whether it runs tensor code (through RunOptions::tensors, collecting at its safe points
  // as lang/tensor_api.h says). The Session runs tensor programs meant for an engine that
  // does not on the AST walker instead, and says so.
  virtual bool runs_tensors() const { return false; }
};

// Runs fn on a thread with a large stack and waits for it: recursive engines (the AST
// walker) need far more than the 8 MB a main thread has for 10,000 nested calls, and every
// tree walk (parser, checker, compilers, printers) recurses once per level of an expression
// as deep as the parser allows. Already on such a thread, fn runs right here, so nested
// calls cost nothing.
void run_on_big_stack(const std::function<void()>& fn, size_t stack_bytes = 512u << 20);

// The same for a function with a result: the Session's entry points wrap their work in it.
template <class F>
auto on_big_stack(F&& f) -> decltype(f()) {
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    run_on_big_stack(std::function<void()>(std::forward<F>(f)));
  } else {
    std::optional<R> result;
    run_on_big_stack([&] { result.emplace(f()); });
    return std::move(*result);
  }
}

// Call just before throwing out of deep recursion on that big stack, with the frame address
// the recursion started from. Under AddressSanitizer it clears the poisoned red zones the
// unwound frames leave behind: ASan does that itself only for unwinds of up to 64 MB
// (google/sanitizers#189), and 10,000 instrumented walker frames are about 150 MB, so the
// next calls would trip over stale poison. In other builds it does nothing.
void forget_stack_below(const char* stack_top);

}  // namespace descent
