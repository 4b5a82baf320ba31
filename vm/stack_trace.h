// The stack VM's execution trace: one line per executed instruction, the instruction as the
// disassembler prints it followed by the operand stack after it ran:
//
//   <script>  0015    | CONST                      10               ; k1      [ 15 ][ 10 ]
//   <script>  0020    | ADD_INT                                               [ 25 ]
//
// Values on the VM's stack are untyped words, so the tracer follows the static type of each
// operand-stack slot alongside (a shadow stack, one segment per frame) to print them.
// Only the traced run pays for any of this (StackVM runs a separate instantiation of its loop).
// The same steps can go to a TraceStep callback (RunOptions::trace_steps) as data, for a
// step debugger; either output may be off.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "lang/engine.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

class Tracer {
 public:
  Tracer(const Module& module, const OutputSink& sink,
         const std::function<void(const TraceStep&)>& steps = {})
      : module_(module), sink_(sink), steps_(steps) {}

  // The instruction at `offset` of `chunk` has run. fell_through: execution went on to the
  // next instruction (false when it jumped, called or returned). [base, top) is the current
  // frame's operand stack now.
  void step(const Chunk& chunk, size_t offset, bool fell_through, const Value* base,
            const Value* top);
  // The instruction at `offset` of `chunk` stopped the run with this error; [base, top) is
  // the current frame's operand stack as the instruction found it.
  void fail(const Chunk& chunk, size_t offset, const std::string& message, const Value* base,
            const Value* top);

 private:
  void simulate(const Chunk& chunk, size_t offset, bool fell_through);
  std::vector<Type>& top_segment();
  std::vector<std::string> stack_texts(const Value* base, const Value* top);
  void report(const Chunk& chunk, size_t offset, const Value* base, const Value* top,
              const std::string& error);

  const Module& module_;
  const OutputSink& sink_;
  const std::function<void(const TraceStep&)>& steps_;
  std::vector<std::vector<Type>> frames_{1};  // static types of each frame's operand stack
};

}  // namespace descent::stack
