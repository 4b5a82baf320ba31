// What the register VM's two files share: reg_vm.cpp holds the engine (RegVM) and its
// dispatch loop, reg_trace.cpp the trace, which only the traced instantiation of the loop
// calls (as the stack VM's loop calls stack_trace.cpp's Tracer). RegVM itself stays local to
// reg_vm.cpp, so the untraced loop and everything it calls keep internal linkage, which the
// compiler inlines and lays out as it always did. Internal to descent_vm: the public
// interface is make_reg_vm (vm/reg_vm.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lang/engine.h"
#include "vm/reg_code.h"

namespace descent::reg_vm_internal {

// What the dispatch loop needs of a function, as raw pointers (one load each on a call).
struct FnRt {
  const Instr* code = nullptr;
  const Value* k = nullptr;
  const uint16_t* lists = nullptr;
  const uint16_t* param_locs = nullptr;
  uint32_t nparams = 0;
  uint32_t frame_size = 0;
  uint32_t param0 = 0;  // param_locs[0]: one load less for CALL1 and its fused forms
  bool uses_tensors = false;
  const RegFunction* src = nullptr;
};


// The trace of a run: after each instruction, a text line (RunOptions::trace) and a
// TraceStep (RunOptions::trace_steps). Values on the value stack are untyped, so the tracer
// keeps the type of the value last written to each slot (a shadow of the stack) to print
// them. What the running instruction printed is held until its trace line is out, so that
// the output never comes ahead of the line that explains it.
class Tracer {
 public:
  // A traced run begins on the value stack [stack, stack + size): no slot's type is known.
  void start(const Value* stack, size_t size);
  // A frame begins at base (a call, or the top level): only its parameters' types are known.
  void reset_frame(const FnRt& f, Value* base);
  // Output of the instruction that is running, written after its trace line.
  void hold(const std::string& text) { held_ += text; }
  // `ran` (an instruction of ran_in) has run; now, base and pc are the frame and the next
  // instruction (the callee's after a call, the caller's after a return); depth: the calls.
  void step(const FnRt& ran_in, const Instr* ran, const FnRt& now, Value* base,
            const Instr* pc, const Module& module, const RunOptions& options, int depth);
  // The instruction `ran` of f stopped the run with this error.
  void fail(const FnRt& f, const Instr* ran, Value* base, const Module& module,
            const RunOptions& options, int depth, const char* error);

 private:
  std::vector<std::pair<std::string, std::string>> registers(const FnRt& f, Value* base);
  static std::string head(const RegFunction& f, int at, const Module& module);
  void release(const RunOptions& options);  // writes the held output

  const Value* stack_ = nullptr;  // the bottom of the value stack
  std::vector<Type> shadow_;      // the type of the value in each stack slot
  std::string held_;
};

}  // namespace descent::reg_vm_internal
