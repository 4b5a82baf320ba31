// AST -> register bytecode on unlimited VIRTUAL registers.
//
// Every local (parameters first) gets a fixed virtual register v0, v1, ... (its sema slot);
// every temporary gets a fresh one, so the code says what it computes and nothing about
// where values live: allocate_registers (reg_alloc.h) decides that afterwards.
//
// The compiler targets results straight into their destination (`x = a + b` is one
// `add_int vx, va, vb`), uses the K forms when an operand is a constant (`addk_int v1, v0,
// k0`), and compiles conditions into fused compare-and-branch instructions.
#pragma once
#include <memory>

#include "lang/module.h"
#include "vm/reg_code.h"

namespace descent {

// A function's body (module.functions[fn.index] must describe fn). Null (and *error set)
// only when the function exceeds the 16-bit operand limits of the encoding.
std::unique_ptr<RegFunction> compile_reg_function(const FnDecl& fn, const Module& module,
                                                  Diagnostic* error);

// One input's top-level code, ending in HALT. With echo, every top-level expression
// statement with a value is followed by ECHO (the REPL prints it).
std::unique_ptr<RegFunction> compile_reg_toplevel(const Program& program, const Module& module,
                                                  bool echo, Diagnostic* error);

}  // namespace descent
