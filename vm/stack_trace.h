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
//
// A line describes an instruction that has run, so what the instruction printed is held
// back (hold) until its line is out: a student reads the PRINT's line, then its output,
// never the output ahead of the line that explains it.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/engine.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

class Tracer {
 public:
  // sink: the text trace; steps: the trace as data; out: where the program's output goes.
  Tracer(const Module& module, const OutputSink& sink,
         const std::function<void(const TraceStep&)>& steps, const OutputSink& out)
      : module_(module), sink_(sink), steps_(steps), out_(out) {}

  // Output of the instruction that is running, written after its trace line.
  void hold(std::string_view text) { held_ += text; }

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
  void release();  // writes the held output

  const Module& module_;
  const OutputSink& sink_;
  const std::function<void(const TraceStep&)>& steps_;
  const OutputSink& out_;
  std::string held_;
  std::vector<std::vector<Type>> frames_{1};  // static types of each frame's operand stack
};

}  // namespace descent::stack
