// The stack VM's execution trace: one line per executed instruction, the instruction as the
// disassembler prints it followed by the operand stack after it ran:
//
//   <script>  0015    | CONST                      10               ; k1      [ 15 ][ 10 ]
//   <script>  0020    | ADD_INT                                               [ 25 ]
//
// Values on the VM's stack are untyped words, so the tracer follows the static type of each
// operand-stack slot alongside (a shadow stack, one segment per frame) to print them.
// Only the traced run pays for any of this (StackVM runs a separate instantiation of its loop).
#pragma once
#include <string>
#include <vector>

#include "lang/engine.h"
#include "vm/stack_chunk.h"

namespace descent::stack {

class Tracer {
 public:
  Tracer(const Module& module, const OutputSink& sink) : module_(module), sink_(sink) {}

  // The instruction at `offset` of `chunk` has run. fell_through: execution went on to the
  // next instruction (false when it jumped, called or returned). [base, top) is the current
  // frame's operand stack now.
  void step(const Chunk& chunk, size_t offset, bool fell_through, const Value* base,
            const Value* top);
  // The instruction at `offset` of `chunk` stopped the run with this error.
  void fail(const Chunk& chunk, size_t offset, const std::string& message);

 private:
  void simulate(const Chunk& chunk, size_t offset, bool fell_through);
  std::vector<Type>& top_segment();

  const Module& module_;
  const OutputSink& sink_;
  std::vector<std::vector<Type>> frames_{1};  // static types of each frame's operand stack
};

}  // namespace descent::stack
