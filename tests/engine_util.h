// Shared by the engine tests (tests/vm, tests/llvm): one engine with its own Module and
// GlobalStore, a session without the pipeline, so an engine can be compared with the walker
// input by input and its trace and step counts read directly.
#pragma once
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <string>
#include <string_view>
#include <vector>

#include "lang/engine.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"

namespace descent::testing {

struct EngineRunner {
  std::unique_ptr<Engine> engine;
  Module module;
  GlobalStore globals;
  std::string out;    // what the last input printed
  std::string trace;  // everything traced so far (submit with with_trace)

  explicit EngineRunner(std::unique_ptr<Engine> e) : engine(std::move(e)) {}

  struct Result {
    bool compiled = false;
    std::string output;  // what this input printed
    std::string error;   // "L:C: message" of a runtime error, or "" (compile errors: "compile")
    uint64_t steps = 0;
    bool operator==(const Result& o) const {
      return compiled == o.compiled && output == o.output && error == o.error;
    }
  };

  // Parses and checks text against this runner's Module; null on a compile error.
  std::shared_ptr<Program> compile(const std::string& text) {
    auto src = std::make_shared<SourceFile>("test.ds", text);
    std::vector<Diagnostic> diags;
    auto prog = std::make_shared<Program>(parse(src, diags));
    globals.resize(module.globals.size());
    if (!diags.empty() || !check(*prog, module, globals.defined, diags)) return nullptr;
    module.programs.push_back(prog);
    return prog;
  }

  // Compiles one input into this session and runs it on `on` (default: this runner's
  // engine, which may share the session's globals with another engine).
  Result submit(const std::string& text, RunOptions opts = {}, bool with_trace = false,
                Engine* on = nullptr) {
    Result r;
    auto prog = compile(text);
    if (!prog) {
      r.error = "compile";
      return r;
    }
    r.compiled = true;
    out.clear();
    opts.out = [this](std::string_view s) { out += s; };
    if (with_trace) opts.trace = [this](std::string_view s) { trace += s; };
    RunResult rr = (on ? on : engine.get())->run(*prog, module, globals, opts);
    r.output = out;
    r.steps = rr.steps;
    if (!rr.ok)
      r.error = std::to_string(rr.error.loc.line) + ":" + std::to_string(rr.error.loc.col) + ": " +
                rr.error.message;
    return r;
  }
  // An engine pointer where with_trace goes would silently mean "trace": name both.
  Result submit(const std::string& text, RunOptions opts, Engine* on) = delete;
};

// The interrupt flag stops an engine wherever it spins: set before a loop, a recursion and a
// range loop, then set from another thread while compiled code loops (the stack VM and the
// JIT check the same places; each test adds its engine's own cases after).
inline void check_interrupt_stops(EngineRunner& s, std::atomic<bool>& flag, const RunOptions& opts) {
  flag = true;
  CHECK(s.submit("print(1)\nwhile true { }\n", opts).error == "2:1: interrupted");
  CHECK(s.out == "1\n");
  CHECK(s.submit("fn f(n: int) -> int { return f(n + 1) }\nx = 0\nx = f(1)\n", opts).error ==
        "3:5: interrupted");
  CHECK(s.submit("for i in 0..3 { print(i) }\n", opts).error == "1:1: interrupted");
  CHECK(s.out == "0\n");
  flag = false;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    flag = true;
  });
  auto r = s.submit(
      "fn spin() -> int {\n  n = 0\n  while n >= 0 { n = (n + 1) % 1000 }\n  return n\n}\nspin()\n",
      opts);
  t.join();
  CHECK(r.error == "3:3: interrupted");
}

}  // namespace descent::testing
