// The JIT engine (--engine jit): Descent compiled to native code with ORC's LLJIT.
//
// Each run() compiles one unit: the input's top-level code (a fresh `descent_main.N`) plus
// every function it can reach that has no up-to-date machine code yet, optimised at the
// engine's -O level, and calls it. Earlier inputs' machine code stays and is called directly.
// One LLJIT serves the whole process: each engine (one per Session) has a JITDylib of its
// own in it, so neither a new input nor a new Session pays for LLJIT and TargetMachine set-up.
//
// Redefinition: every compiled version of a function gets its own symbol (ds.f, then
// ds.f.7, ...). A function is recompiled when it is new, was redefined, or calls a function
// whose symbol changed since it was compiled; so callers are re-linked to the new version
// when they are next needed, and calls stay direct (inlinable, no pointer table), except
// calls to a function that started in the first tier (below): those go through its slot.
//
// Tiers: a unit whose functions and top-level code have no loop and no tensor code (fib:
// every call is short, many calls are hot) is first compiled at -O0, which the code
// generator does in a third of the time, and runs at once; meanwhile a background thread
// compiles the same functions again at the engine's level and publishes them through one
// pointer per function (ds.f.slot),
// which every call to a tiered function loads. Frames already running finish at -O0; every
// call made after the switch runs the optimised code. A unit with a loop is compiled at the
// engine's level before it runs, as before (a loop running at -O0 could not switch: no
// on-stack replacement). docs/llvm.md, "Tiers".
//
// Globals: the engine keeps every global at a fixed address (ds.x, ds.x.defined are absolute
// symbols into it) and copies the session's GlobalStore in before a run and back after, even
// after a runtime error; so the REPL can switch engines between lines and keep its variables.
//
// Errors, interrupts, steps: see runtime.h (longjmp back to run(); a load and a branch at
// back-edges and calls, which call the runtime only while it watches). JIT code runs on a
// thread with a 512 MB stack; the thread that called run() watches the interrupt flag.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "lang/engine.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace descent::llvmbe {

// A change to each unit's IR after codegen and before the -O pipeline: the extension point
// through which a lab runs a student's pass on the code the JIT then runs (at -O0 nothing
// else touches it). It returns "" to go on, or why the unit must not run (the verifier's
// message on a module it broke): that run fails with "jit: " and the reason.
using IRTransform = std::function<std::string(llvm::Module&)>;

class JitEngine : public Engine {
 public:
  // -O level (0..3) of code compiled from now on: the IR pipeline and the code generator.
  virtual void set_opt_level(int level) = 0;
  virtual int opt_level() const = 0;
  // Runs on every unit compiled from now on; null (the default) runs nothing.
  virtual void set_ir_transform(IRTransform transform) = 0;
  // Whether loop-free units start at -O0 and tier up in the background (the default; off:
  // every unit is compiled at the engine's level before it runs). Never with a transform.
  virtual void set_tiers(bool on) = 0;
  // Waits for a background compile under way (a test's way to see the second tier in use).
  virtual void wait_for_tiers() = 0;

  struct Stats {
    double compile_seconds = 0;  // codegen + IR passes + machine code, for the last run()
    double run_seconds = 0;      // the program itself
    int functions_compiled = 0;  // Descent functions (re)compiled by the last run()
    // Where compile_seconds went (steady clock, last run()):
    double setup_seconds = 0;     // the process's LLJIT and TargetMachine when first needed,
                                  // this engine's library in it when new, new globals
    double generate_seconds = 0;  // Descent -> LLVM IR
    double optimize_seconds = 0;  // the IR pipeline (and a set_ir_transform pass)
    double codegen_seconds = 0;   // IR -> object code: instruction selection ... emission
    double link_seconds = 0;      // the rest of the lookup: loading, relocation, symbols
    // LLJITs made in this process so far: one, shared by every engine and every input.
    int jit_instances = 0;
    // Tiers (set_tiers): of functions_compiled, those compiled at -O0 to start at once and
    // again at the engine's level in the background; that compile's seconds and when, from
    // the start of run(), its code was published (0 and pending while it is not).
    int functions_tiered = 0;
    double tier2_seconds = 0;
    double tier2_ready_seconds = 0;
    bool tier2_pending = false;
    bool tier2_failed = false;  // the background compile made nothing: the -O0 code stays
  };
  virtual Stats last_stats() const = 0;
};

// Engine::name() is "jit".
std::unique_ptr<JitEngine> make_jit_engine(int opt_level = 2);

}  // namespace descent::llvmbe
