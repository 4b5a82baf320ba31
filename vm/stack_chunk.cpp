#include "vm/stack_chunk.h"

namespace descent::stack {

namespace {
struct OpInfo {
  const char* name;
  Format format;
  const char* semantics;
};

constexpr OpInfo kOps[] = {
#define DESCENT_X(name, fmt, doc) {#name, Format::fmt, doc},
    DESCENT_STACK_OPCODES(DESCENT_X)
#undef DESCENT_X
};
static_assert(sizeof kOps / sizeof kOps[0] == kOpCount);
static_assert(kOpCount <= 256, "opcodes are one byte");
}  // namespace

const char* op_name(Op op) { return kOps[static_cast<int>(op)].name; }
const char* op_semantics(Op op) { return kOps[static_cast<int>(op)].semantics; }
Format op_format(Op op) { return kOps[static_cast<int>(op)].format; }

int operand_count(Format f) {
  switch (f) {
    case Format::NONE: return 0;
    case Format::LK:
    case Format::LJ:
    case Format::FN: return 2;
    case Format::LKJ: return 3;
    default: return 1;
  }
}

Operand operand_kind(Format f, int i) {
  switch (f) {
    case Format::K: return Operand::Const;
    case Format::L: return Operand::Local;
    case Format::G: return Operand::Global;
    case Format::J: return Operand::Jump;
    case Format::LK: return i == 0 ? Operand::Local : Operand::Const;
    case Format::LJ: return i == 0 ? Operand::Local : Operand::Jump;
    case Format::LKJ: return i == 0 ? Operand::Local : i == 1 ? Operand::Const : Operand::Jump;
    case Format::FN: return i == 0 ? Operand::Function : Operand::Count;
    case Format::B: return Operand::Builtin;
    case Format::P: return Operand::Print;
    case Format::T: return Operand::Type;
    case Format::S: return Operand::Site;
    case Format::NONE: break;
  }
  return Operand::Count;
}

}  // namespace descent::stack
