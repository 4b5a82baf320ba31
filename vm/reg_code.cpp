#include "vm/reg_code.h"

#include <cctype>

namespace descent {
namespace {

// "ADD_INT" -> "add_int", once, at start-up.
struct Table {
  OpInfo ops[kNumRegOps];
  std::string names[kNumRegOps];
  Table() {
    int i = 0;
#define DESCENT_REG_INFO(name, a, b, c, res, doc)                                                 \
  names[i] = #name;                                                                               \
  for (char& ch : names[i]) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); \
  ops[i] = OpInfo{names[i].c_str(), Arg::a, Arg::b, Arg::c, Res::res, doc};                       \
  ++i;
    DESCENT_REG_OPCODES(DESCENT_REG_INFO)
#undef DESCENT_REG_INFO
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const OpInfo& op_info(Op op) { return table().ops[static_cast<int>(op)]; }

bool is_jump(Op op) { return op_info(op).c == Arg::Target; }

bool falls_through(Op op) {
  switch (op) {
    case Op::JMP:
    case Op::LOOP:
    case Op::RETURN:
    case Op::RETURN_ADD_INT:
    case Op::RETURN_ADDK_INT:
    case Op::RETURN0:
    case Op::HALT: return false;
    default: return true;
  }
}

bool returns_value(Op op) {
  switch (op) {
    case Op::RETURN:
    case Op::RETURN_ADD_INT:
    case Op::RETURN_ADDK_INT:
    case Op::RETEQK_INT:
    case Op::RETNEK_INT:
    case Op::RETLTK_INT:
    case Op::RETLEK_INT:
    case Op::RETGTK_INT:
    case Op::RETGEK_INT: return true;
    default: return false;
  }
}

const uint16_t* location_list(const RegFunction& f, const Instr& in) {
  switch (in.op) {
    case Op::CALL: case Op::TENSOR: case Op::TCHECK: return &f.lists[in.c];
    case Op::SAFEPOINT: return &f.lists[in.a];
    case Op::HALT: return f.promoted.empty() ? nullptr : &f.lists[in.a];
    default: return nullptr;
  }
}

void instr_uses(const RegFunction& f, int pc, std::vector<int>& out) {
  const Instr& in = f.code[static_cast<size_t>(pc)];
  const OpInfo& info = op_info(in.op);
  auto field = [&](Arg role, uint16_t v) {
    if (role == Arg::Use || role == Arg::UseDef) out.push_back(v);
    if (role == Arg::UseImm) out.push_back(imm_reg(v));
  };
  field(info.a, in.a);
  field(info.b, in.b);
  field(info.c, in.c);
  if (const uint16_t* l = location_list(f, in)) {
    for (int i = 0; i < l[0]; ++i) out.push_back(l[1 + i]);
  } else if (in.op == Op::PRINT) {
    const uint16_t* l = &f.lists[in.a];
    for (int i = 0; i < l[0]; ++i)
      if (l[1 + 2 * i] != kPrintStr) out.push_back(l[2 + 2 * i]);
  }
}

void instr_defs(const RegFunction& f, int pc, std::vector<int>& out) {
  const Instr& in = f.code[static_cast<size_t>(pc)];
  const OpInfo& info = op_info(in.op);
  if (info.a == Arg::Def || info.a == Arg::UseDef) out.push_back(in.a);
}

}  // namespace descent
