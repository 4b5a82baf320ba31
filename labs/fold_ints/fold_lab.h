// Lab fold_ints: the function you write (in fold.cpp), and what the checker does with it.
//
// The checker parses and checks a program, then walks its expressions bottom-up (children
// first) and calls fold_int_binary on each one; whatever it returns replaces the expression.
// Then it runs the program on the AST walker, folded and unfolded, and compares.
#pragma once
#include "lang/ast.h"

// If `e` is a Binary +, - or * (e.binary_op Add, Sub, Mul) whose two operands (e.kids[0],
// e.kids[1]) are int literals (ExprKind::IntLit, their value in int_value), return a new
// IntLit holding what it computes, with e's loc and type Type::Int. Otherwise return nullptr:
// the expression stays as it is. Ints are 64-bit and wrap around (LANGUAGE.md), as the
// engines compute them.
descent::ExprPtr fold_int_binary(const descent::Expr& e);
