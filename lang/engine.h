// What every execution engine (ast, stack, reg, jit) implements, and the state they share.
//
// Globals live outside the engines, in a GlobalStore owned by the session, so a REPL can
// switch engines between lines and keep its variables.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
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

struct RunOptions {
  OutputSink out;                                // where print writes; null discards output
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by Ctrl-C) to stop the program
  uint64_t step_limit = 0;  // stop with "interrupted" after this many steps (0: no limit)
  bool echo = false;        // REPL: print the value of each top-level expression statement
  OutputSink trace;         // VMs: one line per executed instruction (state after it); null: off
  // Where Tensor and Shape values live (the ast engine only). Null: tensor code fails with
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
};

// Runs fn on a thread with a large stack and waits for it: recursive engines (the AST
// walker) need far more than the 8 MB a main thread has for 10,000 nested calls.
void run_on_big_stack(const std::function<void()>& fn, size_t stack_bytes = 512u << 20);

}  // namespace descent
