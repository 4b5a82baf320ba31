// fold_constants: the first named pass. Replaces operations whose operands are all
// literals with the literal they compute (2 * 3 -> 6, float(2) -> 2.0, true && x -> x),
// using the very helpers the engines use at run time, so folding never changes a result.
// Operations that would fail at run time (1 / 0, int(1e300)) are left alone: the error
// must still happen when, and where, the program reaches them.
#pragma once
#include "lang/ast.h"

namespace descent {

// Folds a CHECKED program (sema's types decide the arithmetic) in place; returns how many
// nodes were replaced.
int fold_constants(Program& program);

}  // namespace descent
