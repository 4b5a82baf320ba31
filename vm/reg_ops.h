// The register compiler's choice of opcode for an operator: the arithmetic, compare and
// compare-and-branch forms, with a register or a constant (K) right operand, int or float.
// Tables, apart from the compiler's walk over the tree (reg_compiler.cpp).
#pragma once
#include "lang/ast.h"
#include "vm/reg_code.h"

namespace descent::reg_ops {

// Comparison kinds for compare-and-branch; the N* forms exist for floats only, where
// !(a < b) is not a >= b (nan).
enum class Cond { EQ, NE, LT, LE, GT, GE, NLT, NLE, NGT, NGE };

inline Cond cond_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq: return Cond::EQ;
    case BinaryOp::Ne: return Cond::NE;
    case BinaryOp::Lt: return Cond::LT;
    case BinaryOp::Le: return Cond::LE;
    case BinaryOp::Gt: return Cond::GT;
    default: return Cond::GE;
  }
}
inline Cond negate(Cond c, bool is_float) {
  switch (c) {
    case Cond::EQ: return Cond::NE;
    case Cond::NE: return Cond::EQ;
    case Cond::LT: return is_float ? Cond::NLT : Cond::GE;
    case Cond::LE: return is_float ? Cond::NLE : Cond::GT;
    case Cond::GT: return is_float ? Cond::NGT : Cond::LE;
    case Cond::GE: return is_float ? Cond::NGE : Cond::LT;
    case Cond::NLT: return Cond::LT;
    case Cond::NLE: return Cond::LE;
    case Cond::NGT: return Cond::GT;
    default: return Cond::GE;
  }
}
// a OP b  ==  b MIRROR(OP) a
inline Cond mirror(Cond c) {
  switch (c) {
    case Cond::LT: return Cond::GT;
    case Cond::LE: return Cond::GE;
    case Cond::GT: return Cond::LT;
    case Cond::GE: return Cond::LE;
    case Cond::NLT: return Cond::NGT;
    case Cond::NLE: return Cond::NGE;
    case Cond::NGT: return Cond::NLT;
    case Cond::NGE: return Cond::NLE;
    default: return c;
  }
}

// Register-register branch opcodes exist for EQ NE LT LE (and NLT NLE on floats); the
// others are the same ops with the operands swapped.
inline bool needs_swap(Cond c) {
  return c == Cond::GT || c == Cond::GE || c == Cond::NGT || c == Cond::NGE;
}
inline Op branch_rr(Cond c, bool f) {
  switch (c) {
    case Cond::EQ: return f ? Op::JEQ_FLOAT : Op::JEQ_INT;
    case Cond::NE: return f ? Op::JNE_FLOAT : Op::JNE_INT;
    case Cond::LT:
    case Cond::GT: return f ? Op::JLT_FLOAT : Op::JLT_INT;
    case Cond::LE:
    case Cond::GE: return f ? Op::JLE_FLOAT : Op::JLE_INT;
    case Cond::NLT:
    case Cond::NGT: return Op::JNLT_FLOAT;
    default: return Op::JNLE_FLOAT;
  }
}
inline Op branch_rk(Cond c, bool f) {
  switch (c) {
    case Cond::EQ: return f ? Op::JEQK_FLOAT : Op::JEQK_INT;
    case Cond::NE: return f ? Op::JNEK_FLOAT : Op::JNEK_INT;
    case Cond::LT: return f ? Op::JLTK_FLOAT : Op::JLTK_INT;
    case Cond::LE: return f ? Op::JLEK_FLOAT : Op::JLEK_INT;
    case Cond::GT: return f ? Op::JGTK_FLOAT : Op::JGTK_INT;
    case Cond::GE: return f ? Op::JGEK_FLOAT : Op::JGEK_INT;
    case Cond::NLT: return Op::JNLTK_FLOAT;
    case Cond::NLE: return Op::JNLEK_FLOAT;
    case Cond::NGT: return Op::JNGTK_FLOAT;
    default: return Op::JNGEK_FLOAT;
  }
}

// Typed arithmetic opcodes: register-register, and register-constant (K in C).
inline Op arith_rr(BinaryOp op, bool f) {
  switch (op) {
    case BinaryOp::Add: return f ? Op::ADD_FLOAT : Op::ADD_INT;
    case BinaryOp::Sub: return f ? Op::SUB_FLOAT : Op::SUB_INT;
    case BinaryOp::Mul: return f ? Op::MUL_FLOAT : Op::MUL_INT;
    case BinaryOp::Div: return f ? Op::DIV_FLOAT : Op::DIV_INT;
    default: return f ? Op::MOD_FLOAT : Op::MOD_INT;
  }
}
inline Op arith_rk(BinaryOp op, bool f) {
  switch (op) {
    case BinaryOp::Add: return f ? Op::ADDK_FLOAT : Op::ADDK_INT;
    case BinaryOp::Sub: return f ? Op::SUBK_FLOAT : Op::SUBK_INT;
    case BinaryOp::Mul: return f ? Op::MULK_FLOAT : Op::MULK_INT;
    case BinaryOp::Div: return f ? Op::DIVK_FLOAT : Op::DIVK_INT;
    default: return f ? Op::MODK_FLOAT : Op::MODK_INT;
  }
}
// Value-producing comparisons: EQ NE LT LE register-register (GT GE swap), all six with K.
inline Op compare_rr(Cond c, bool f) {
  switch (c) {
    case Cond::EQ: return f ? Op::EQ_FLOAT : Op::EQ_INT;
    case Cond::NE: return f ? Op::NE_FLOAT : Op::NE_INT;
    case Cond::LT:
    case Cond::GT: return f ? Op::LT_FLOAT : Op::LT_INT;
    default: return f ? Op::LE_FLOAT : Op::LE_INT;
  }
}
inline Op compare_rk(Cond c, bool f) {
  switch (c) {
    case Cond::EQ: return f ? Op::EQK_FLOAT : Op::EQK_INT;
    case Cond::NE: return f ? Op::NEK_FLOAT : Op::NEK_INT;
    case Cond::LT: return f ? Op::LTK_FLOAT : Op::LTK_INT;
    case Cond::LE: return f ? Op::LEK_FLOAT : Op::LEK_INT;
    case Cond::GT: return f ? Op::GTK_FLOAT : Op::GTK_INT;
    default: return f ? Op::GEK_FLOAT : Op::GEK_INT;
  }
}

inline bool is_compare(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

}  // namespace descent::reg_ops
