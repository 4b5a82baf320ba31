// Lab a64_constants: the function you write (in a64_constants.cpp), and what the checker does
// with it.
//
// A 64-bit constant is a DAG node (`const`) like any other, and on AArch64 covering it is a
// real choice: no instruction takes more than 16 bits of immediate, so the AArch64 table
// (native/a64_isel.cpp, `descent dump F --stage native-patterns --target aarch64`) has a
// pattern per shape of constant, each with its cost. Your build_constant is what those
// patterns emit: the native backend's AArch64 emitter (native/a64_emit.cpp) calls it for
// every constant of the program, and the program runs under qemu-aarch64.
#pragma once
#include <cstdint>
#include <vector>

#include "native/a64.h"

// The instructions that put `value` into register x<reg> (0..30), in order. Use only:
//   movz x, #imm16, lsl #s    x = imm16 << s                     (Form::MOVZ; imm, shift)
//   movn x, #imm16, lsl #s    x = ~(imm16 << s)                  (Form::MOVN)
//   movk x, #imm16, lsl #s    bits s..s+15 of x = imm16, the rest kept   (Form::MOVK)
//   orr  x, xzr, #logical     x = a logical immediate            (Form::ORR_RRI; r[1] = 31,
//                             imm = the value; a64::encode_logical_imm says which encode)
// Every instruction writes x<reg> (r[0] = reg) and no other register. As few as you can.
std::vector<descent::native::a64::A64Inst> build_constant(int64_t value, int reg);
