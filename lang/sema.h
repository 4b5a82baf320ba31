// Semantic analysis: names, types, definite assignment, arity, returns, loop placement.
//
// check() annotates a parsed Program in place (see ast.h: types, slots, callees, Promote
// nodes) and records its globals and functions in the Module. It is all-or-nothing: if any
// error is found the Module is left exactly as it was, so a REPL line with a mistake
// changes nothing.
#pragma once
#include <functional>
#include <vector>

#include "lang/module.h"

namespace descent {

// defined[i] tells whether global i has already been assigned at run time by an earlier
// input (REPL); such globals count as definitely assigned at the top level.
// Returns true when the program is well formed; errors are appended to diags.
// kernel_shapes, when given, is asked about each kernel the program defines once the rest
// checked: the shape analysis lives in tensor/ (the lowering), above this library, and can
// reject a kernel whose shapes are all written as numbers when it is defined rather than
// when it is called (false with *error; the Module is then left as it was, as for any error).
using KernelShapeCheck = std::function<bool(const KernelDecl& kernel, Diagnostic* error)>;
bool check(Program& program, Module& module, const std::vector<uint8_t>& defined,
           std::vector<Diagnostic>& diags, const KernelShapeCheck& kernel_shapes = {});

}  // namespace descent
