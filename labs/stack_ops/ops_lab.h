// Lab stack_ops: the function you write (in ops.cpp), and what the checker does with it.
//
// The checker compiles Descent programs with the project's stack compiler (plain code, no
// superinstructions) and runs them on a small VM of its own (harness.cpp). That VM does every
// instruction itself except the 20 below: for those it calls execute_op. Then it compares
// what the program printed with what the AST walker prints.
#pragma once
#include <cstddef>
#include <vector>

#include "lang/value.h"
#include "vm/stack_chunk.h"

// Execute the instruction at offset `pc` of `chunk`; its opcode is `op`, one of
//
//   comparisons  EQ_INT NE_INT LT_INT LE_INT GT_INT GE_INT        (operands in .i)
//                EQ_FLOAT NE_FLOAT LT_FLOAT LE_FLOAT GT_FLOAT GE_FLOAT  (in .f)
//                EQ_BOOL NE_BOOL                                  (in .b)
//                "a, b := pop2; push a OP b": b is the top (stack.back()), a below it;
//                both are popped and one bool is pushed (Value::of_bool).
//   NOT          "a := pop; push !a"
//   jumps        JUMP JUMP_IF_FALSE JUMP_IF_TRUE JUMP_IF_FALSE_OR_POP JUMP_IF_TRUE_OR_POP LOOP
//                each has one operand j, a signed 32-bit offset: chunk.operand(pc, 0) read as
//                int32_t. vm/stack_chunk.h's table says what each pops, keeps and jumps on.
//
// `stack` is the current frame's operand stack; its top is stack.back().
// Return the offset of the next instruction to run: for an instruction that does not jump,
// the one right after it (pc + stack::instruction_length(op)).
size_t execute_op(descent::stack::Op op, const descent::stack::Chunk& chunk, size_t pc,
                  std::vector<descent::Value>& stack);
