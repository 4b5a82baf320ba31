#include "vm/stack_trace.h"

#include "vm/stack_disasm.h"

namespace descent::stack {

namespace {
constexpr size_t kNameColumn = 10;   // the chunk's name
constexpr size_t kStackColumn = 74;  // where the operand stack starts

void pad(std::string& s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  else s += ' ';
}
}  // namespace

std::vector<Type>& Tracer::top_segment() {
  if (frames_.empty()) frames_.emplace_back();
  return frames_.back();
}

// The stack effect of each opcode on the types (the VM does the same to the values).
void Tracer::simulate(const Chunk& c, size_t off, bool fell_through) {
  Op op = c.op_at(off);
  uint32_t a = operand_count(op_format(op)) > 0 ? c.operand(off, 0) : 0;
  auto pop = [this](size_t n) {
    auto& s = top_segment();
    s.resize(s.size() >= n ? s.size() - n : 0);
  };
  auto push = [this](Type t) { top_segment().push_back(t); };
  switch (op) {
    case Op::CONST: push(c.constant_types[a]); break;
    case Op::LOAD_LOCAL: push(a < c.local_types.size() ? c.local_types[a] : Type::Int); break;
    case Op::LOAD_GLOBAL:
    case Op::LOAD_GLOBAL_CHECKED: push(module_.globals[a].type); break;
    case Op::ADD_LOCAL_CONST_INT:
    case Op::SUB_LOCAL_CONST_INT: push(Type::Int); break;
    case Op::ADD_INT: case Op::SUB_INT: case Op::MUL_INT: case Op::DIV_INT: case Op::MOD_INT:
    case Op::MIN_INT: case Op::MAX_INT:
      pop(2), push(Type::Int);
      break;
    case Op::ADD_FLOAT: case Op::SUB_FLOAT: case Op::MUL_FLOAT: case Op::DIV_FLOAT:
    case Op::MOD_FLOAT: case Op::MIN_FLOAT: case Op::MAX_FLOAT:
      pop(2), push(Type::Float);
      break;
    case Op::EQ_INT: case Op::NE_INT: case Op::LT_INT: case Op::LE_INT: case Op::GT_INT:
    case Op::GE_INT: case Op::EQ_FLOAT: case Op::NE_FLOAT: case Op::LT_FLOAT: case Op::LE_FLOAT:
    case Op::GT_FLOAT: case Op::GE_FLOAT: case Op::EQ_BOOL: case Op::NE_BOOL:
      pop(2), push(Type::Bool);
      break;
    case Op::NEG_INT: case Op::ABS_INT: case Op::FLOAT_TO_INT: case Op::ADD_CONST_INT:
    case Op::SUB_CONST_INT: case Op::MUL_CONST_INT: case Op::DIV_CONST_INT: case Op::MOD_CONST_INT:
      pop(1), push(Type::Int);
      break;
    case Op::NEG_FLOAT: case Op::INT_TO_FLOAT: case Op::MATH: case Op::ADD_CONST_FLOAT:
    case Op::SUB_CONST_FLOAT: case Op::MUL_CONST_FLOAT: case Op::DIV_CONST_FLOAT:
      pop(1), push(Type::Float);
      break;
    case Op::NOT: pop(1), push(Type::Bool); break;
    case Op::POP: case Op::STORE_LOCAL: case Op::STORE_GLOBAL: case Op::ECHO:
    case Op::JUMP_IF_FALSE: case Op::JUMP_IF_TRUE: case Op::ADD_TO_LOCAL_INT:
    case Op::ADD_TO_LOCAL_FLOAT:
      pop(1);
      break;
    case Op::JUMP_IF_FALSE_OR_POP:
    case Op::JUMP_IF_TRUE_OR_POP:
      if (fell_through) pop(1);
      break;
    case Op::PRINT: {
      size_t n = 0;
      for (const auto& item : c.prints[a]) n += item.type != Type::Str;
      pop(n);
      break;
    }
    case Op::TENSOR: {
      const TensorSite& t = c.tensor_sites[a];
      if (t.step != TensorStep::Expr) break;  // checks leave the stack as it is
      pop(t.operands);
      if (t.has_value) push(t.expr->type);
      break;
    }
    case Op::FOR_PREP:
      pop(2);
      if (fell_through) push(Type::Int);
      break;
    case Op::FOR_LOOP:
      if (!fell_through) push(Type::Int);
      break;
    case Op::CALL:
      pop(c.operand(off, 1));
      frames_.emplace_back();
      break;
    case Op::RETURN:
      frames_.pop_back();
      push(c.return_type);
      break;
    case Op::RETURN_VOID: frames_.pop_back(); break;
    default:
      if (op >= Op::JUMP_IF_EQ_INT && op <= Op::JUMP_IF_NOT_GE_FLOAT) pop(2);
      break;  // the other jumps, LOOP, PRECALL, INC_LOCAL_INT, HALT: no operand change
  }
}

std::vector<std::string> Tracer::stack_texts(const Value* base, const Value* top) {
  const auto& types = top_segment();
  size_t n = top > base ? static_cast<size_t>(top - base) : 0;
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // The shadow matches the real stack unless something is badly wrong; then show bits.
    out.push_back(i < types.size() && types.size() == n ? format_value(base[i], types[i])
                                                        : std::to_string(base[i].i) + "?");
  }
  return out;
}

// The step as data; instruction is the row's text after its offset and line columns.
void Tracer::report(const Chunk& chunk, size_t offset, const Value* base, const Value* top,
                    const std::string& error) {
  TraceStep t;
  t.function = chunk.name;
  t.pc = static_cast<int>(offset);
  std::string row = disassemble_instruction(chunk, offset, module_);
  t.instruction = row.size() > 10 ? row.substr(10) : row;
  if (offset < chunk.locs.size()) t.loc = chunk.locs[offset];
  t.depth = frames_.empty() ? 0 : static_cast<int>(frames_.size()) - 1;
  t.stack = stack_texts(base, top);
  t.error = error;
  steps_(t);
}

void Tracer::release() {
  if (!held_.empty() && out_) out_(held_);
  held_.clear();
}

// The text line, then the instruction's output, then the step as data: a step's output_size
// (Session::record) counts what the instruction printed.
void Tracer::step(const Chunk& chunk, size_t offset, bool fell_through, const Value* base,
                  const Value* top) {
  simulate(chunk, offset, fell_through);
  if (sink_) {
    std::string line = chunk.name;
    pad(line, kNameColumn);
    line += disassemble_instruction(chunk, offset, module_);
    std::vector<std::string> values = stack_texts(base, top);
    if (!values.empty()) {
      pad(line, kStackColumn);
      for (const auto& v : values) line += "[ " + v + " ]";
    }
    sink_(line + "\n");
  }
  release();
  if (steps_) report(chunk, offset, base, top, "");
}

void Tracer::fail(const Chunk& chunk, size_t offset, const std::string& message,
                  const Value* base, const Value* top) {
  if (sink_) {
    std::string line = chunk.name;
    pad(line, kNameColumn);
    line += disassemble_instruction(chunk, offset, module_);
    pad(line, kStackColumn);
    line += "error: " + message;
    sink_(line + "\n");
  }
  release();
  if (steps_) report(chunk, offset, base, top, message);
}

}  // namespace descent::stack
