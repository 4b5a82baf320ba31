// Semantic analysis: names, types, definite assignment, arity, returns, loop placement.
//
// check() annotates a parsed Program in place (see ast.h: types, slots, callees, Promote
// nodes) and records its globals and functions in the Module. It is all-or-nothing: if any
// error is found the Module is left exactly as it was, so a REPL line with a mistake
// changes nothing.
#pragma once
#include <vector>

#include "lang/module.h"

namespace descent {

// defined[i] tells whether global i has already been assigned at run time by an earlier
// input (REPL); such globals count as definitely assigned at the top level.
// Returns true when the program is well formed; errors are appended to diags.
bool check(Program& program, Module& module, const std::vector<uint8_t>& defined,
           std::vector<Diagnostic>& diags);

}  // namespace descent
