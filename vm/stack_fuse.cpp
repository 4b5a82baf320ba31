#include "vm/stack_fuse.h"

#include <cstring>

namespace descent::stack {
namespace {

using Ins = Instruction;

bool is_jump(Op op) {
  Format f = op_format(op);
  return f == Format::J || f == Format::LJ || f == Format::LKJ;
}
int jump_slot(Op op) { return operand_count(op_format(op)) - 1; }

void mark_targets(std::vector<Ins>& code) {
  for (auto& i : code) i.is_target = false;
  for (auto& i : code)
    if (is_jump(i.op) && i.target < code.size()) code[i.target].is_target = true;
}

std::vector<Ins> decode(const Chunk& c) {
  std::vector<Ins> code;
  std::vector<size_t> index_at(c.code.size() + 1, 0);
  for (size_t off = 0; off < c.code.size(); off += instruction_length(c.op_at(off))) {
    Ins i;
    i.op = c.op_at(off);
    for (int k = 0; k < operand_count(op_format(i.op)); ++k) i.arg[k] = c.operand(off, k);
    i.loc = c.locs[off];
    index_at[off] = code.size();
    code.push_back(i);
  }
  index_at[c.code.size()] = code.size();
  size_t n = 0;
  for (size_t off = 0; off < c.code.size(); off += instruction_length(c.op_at(off)), ++n)
    if (is_jump(code[n].op)) code[n].target = index_at[c.jump_target(off, jump_slot(code[n].op))];
  mark_targets(code);
  return code;
}

void encode(const std::vector<Ins>& code, Chunk& c) {
  std::vector<size_t> offset(code.size() + 1, 0);
  for (size_t n = 0; n < code.size(); ++n)
    offset[n + 1] = offset[n] + instruction_length(code[n].op);
  c.code.clear();
  c.locs.clear();
  for (size_t n = 0; n < code.size(); ++n) {
    const Ins& i = code[n];
    uint32_t args[3] = {i.arg[0], i.arg[1], i.arg[2]};
    int count = operand_count(op_format(i.op));
    if (is_jump(i.op)) {
      int64_t rel = static_cast<int64_t>(offset[i.target]) - static_cast<int64_t>(offset[n + 1]);
      args[jump_slot(i.op)] = static_cast<uint32_t>(static_cast<int32_t>(rel));
    }
    c.code.push_back(static_cast<uint8_t>(i.op));
    for (int k = 0; k < count; ++k) {
      uint8_t b[4];
      std::memcpy(b, &args[k], 4);
      c.code.insert(c.code.end(), b, b + 4);
    }
    c.locs.resize(c.code.size(), i.loc);
  }
}

// ---- the rules: each looks at code[i...] and, when it matches, appends the replacement ----

// code[i .. i+n) exists and no jump lands strictly inside it.
bool window(const std::vector<Ins>& code, size_t i, size_t n) {
  if (i + n > code.size()) return false;
  for (size_t k = i + 1; k < i + n; ++k)
    if (code[k].is_target) return false;
  return true;
}

Ins make(Op op, SourceLoc loc, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0) {
  Ins i;
  i.op = op;
  i.arg[0] = a, i.arg[1] = b, i.arg[2] = c;
  i.loc = loc;
  return i;
}

// The instruction that does `op` with a constant right operand, or HALT if there is none.
// Int / and % by the constant 0 stay as they are: they must fail, at their location.
Op with_const(Op op, Value k) {
  switch (op) {
    case Op::ADD_INT: return Op::ADD_CONST_INT;
    case Op::SUB_INT: return Op::SUB_CONST_INT;
    case Op::MUL_INT: return Op::MUL_CONST_INT;
    case Op::DIV_INT: return k.i != 0 ? Op::DIV_CONST_INT : Op::HALT;
    case Op::MOD_INT: return k.i != 0 ? Op::MOD_CONST_INT : Op::HALT;
    case Op::ADD_FLOAT: return Op::ADD_CONST_FLOAT;
    case Op::SUB_FLOAT: return Op::SUB_CONST_FLOAT;
    case Op::MUL_FLOAT: return Op::MUL_CONST_FLOAT;
    case Op::DIV_FLOAT: return Op::DIV_CONST_FLOAT;
    default: return Op::HALT;
  }
}

bool is_load(Op op) {
  return op == Op::LOAD_LOCAL || op == Op::LOAD_GLOBAL || op == Op::LOAD_GLOBAL_CHECKED;
}

// CONST k; ADD_INT  ->  ADD_CONST_INT k
bool const_operand(Chunk& c, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 2) || code[i].op != Op::CONST) return false;
  Op op = with_const(code[i + 1].op, c.constants[code[i].arg[0]]);
  if (op == Op::HALT) return false;
  r.out = {make(op, code[i].loc, code[i].arg[0])};
  r.used = 2;
  return true;
}

// CONST k; LOAD x; MUL_INT  ->  LOAD x; MUL_CONST_INT k   (+ and * only: they commute)
bool commuted_const_operand(Chunk& c, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 3) || code[i].op != Op::CONST || !is_load(code[i + 1].op)) return false;
  Op op = code[i + 2].op;
  if (op != Op::ADD_INT && op != Op::MUL_INT && op != Op::ADD_FLOAT && op != Op::MUL_FLOAT)
    return false;
  r.out = {code[i + 1],
           make(with_const(op, c.constants[code[i].arg[0]]), code[i].loc, code[i].arg[0])};
  r.out[0].is_target = false;
  r.used = 3;
  return true;
}

// LOAD_LOCAL l; ADD_CONST_INT k  ->  ADD_LOCAL_CONST_INT l, k   (and SUB)
bool local_const_operand(Chunk&, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 2) || code[i].op != Op::LOAD_LOCAL) return false;
  Op op = code[i + 1].op;
  if (op != Op::ADD_CONST_INT && op != Op::SUB_CONST_INT) return false;
  r.out = {make(op == Op::ADD_CONST_INT ? Op::ADD_LOCAL_CONST_INT : Op::SUB_LOCAL_CONST_INT,
                code[i].loc, code[i].arg[0], code[i + 1].arg[0])};
  r.used = 2;
  return true;
}

uint32_t add_constant(Chunk& c, Value v, Type t) {
  for (size_t k = 0; k < c.constants.size(); ++k)
    if (c.constant_types[k] == t && c.constants[k].i == v.i) return static_cast<uint32_t>(k);
  c.constants.push_back(v);
  c.constant_types.push_back(t);
  return static_cast<uint32_t>(c.constants.size() - 1);
}

// ADD_LOCAL_CONST_INT l, k; STORE_LOCAL l  ->  INC_LOCAL_INT l, k   (SUB: by -k, same bits)
bool increment_local(Chunk& c, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 2) || code[i + 1].op != Op::STORE_LOCAL ||
      code[i + 1].arg[0] != code[i].arg[0])
    return false;
  uint32_t k = code[i].arg[1];
  if (code[i].op == Op::SUB_LOCAL_CONST_INT)
    k = add_constant(c, Value::of_int(wrap_neg(c.constants[k].i)), Type::Int);
  else if (code[i].op != Op::ADD_LOCAL_CONST_INT)
    return false;
  r.out = {make(Op::INC_LOCAL_INT, code[i].loc, code[i].arg[0], k)};
  r.used = 2;
  return true;
}

// LOAD_LOCAL l; LOAD v; ADD_INT; STORE_LOCAL l  ->  LOAD v; ADD_TO_LOCAL_INT l
// (v cannot change L[l]: expressions assign nothing, callees cannot see the caller's locals)
bool add_to_local(Chunk&, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 4) || code[i].op != Op::LOAD_LOCAL) return false;
  if (!is_load(code[i + 1].op) && code[i + 1].op != Op::CONST) return false;
  Op op = code[i + 2].op;
  if ((op != Op::ADD_INT && op != Op::ADD_FLOAT) || code[i + 3].op != Op::STORE_LOCAL ||
      code[i + 3].arg[0] != code[i].arg[0])
    return false;
  r.out = {code[i + 1], make(op == Op::ADD_INT ? Op::ADD_TO_LOCAL_INT : Op::ADD_TO_LOCAL_FLOAT,
                             code[i].loc, code[i].arg[0])};
  r.out[0].is_target = false;
  r.used = 4;
  return true;
}

// LT_INT; JUMP_IF_FALSE j  ->  JUMP_IF_GE_INT j    (and every comparison, both senses)
bool compare_jump(Chunk&, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 2)) return false;
  Op cmp = code[i].op, jump = code[i + 1].op;
  if (jump != Op::JUMP_IF_FALSE && jump != Op::JUMP_IF_TRUE) return false;
  bool is_int = cmp >= Op::EQ_INT && cmp <= Op::GE_INT;
  bool is_float = cmp >= Op::EQ_FLOAT && cmp <= Op::GE_FLOAT;
  if (!is_int && !is_float) return false;
  // Comparisons are in the order EQ NE LT LE GT GE, as are the fused jumps.
  int which = static_cast<int>(cmp) - static_cast<int>(is_int ? Op::EQ_INT : Op::EQ_FLOAT);
  static const int kNegated[] = {1, 0, 5, 4, 3, 2};  // !(a < b) is a >= b, on ints
  Op fused;
  if (jump == Op::JUMP_IF_TRUE) {
    fused = static_cast<Op>(static_cast<int>(is_int ? Op::JUMP_IF_EQ_INT : Op::JUMP_IF_EQ_FLOAT) +
                            which);
  } else if (is_int || which < 2) {  // != is !(==) even with nan
    fused = static_cast<Op>(static_cast<int>(is_int ? Op::JUMP_IF_EQ_INT : Op::JUMP_IF_EQ_FLOAT) +
                            kNegated[which]);
  } else {  // !(a < b) is not a >= b when a or b is nan
    fused = static_cast<Op>(static_cast<int>(Op::JUMP_IF_NOT_LT_FLOAT) + which - 2);
  }
  Ins j = make(fused, code[i].loc);
  j.target = code[i + 1].target;
  r.out = {j};
  r.used = 2;
  return true;
}

// LOAD_LOCAL l; CONST k; JUMP_IF_LT_INT j  ->  JUMP_IF_LT_LOCAL_CONST_INT l, k, j
bool local_const_jump(Chunk&, const std::vector<Ins>& code, size_t i, Rewrite& r) {
  if (!window(code, i, 3) || code[i].op != Op::LOAD_LOCAL || code[i + 1].op != Op::CONST)
    return false;
  Op jump = code[i + 2].op;
  if (jump < Op::JUMP_IF_EQ_INT || jump > Op::JUMP_IF_GE_INT) return false;
  Ins j = make(static_cast<Op>(static_cast<int>(Op::JUMP_IF_EQ_LOCAL_CONST_INT) +
                               static_cast<int>(jump) - static_cast<int>(Op::JUMP_IF_EQ_INT)),
               code[i].loc, code[i].arg[0], code[i + 1].arg[0]);
  j.target = code[i + 2].target;
  r.out = {j};
  r.used = 3;
  return true;
}

using Rule = bool (*)(Chunk&, const std::vector<Ins>&, size_t, Rewrite&);

// The pass: each rule over the whole chunk, in an order where a rule's output can feed the
// next (CONST + ADD_INT -> ADD_CONST_INT, then LOAD_LOCAL + that -> ADD_LOCAL_CONST_INT ...).
constexpr Rule kRules[] = {const_operand,   commuted_const_operand, local_const_operand,
                           increment_local, add_to_local,           compare_jump,
                           local_const_jump};

template <class R>
int apply(const R& rule, Chunk& c, std::vector<Ins>& code) {
  std::vector<Ins> out;
  std::vector<size_t> moved(code.size() + 1, 0);  // old index -> new index
  int count = 0;
  for (size_t i = 0; i < code.size();) {
    Rewrite r;
    if (rule(c, code, i, r)) {
      for (size_t k = i; k < i + r.used; ++k) moved[k] = out.size();
      out.insert(out.end(), r.out.begin(), r.out.end());
      i += r.used;
      ++count;
    } else {
      moved[i] = out.size();
      out.push_back(code[i++]);
    }
  }
  moved[code.size()] = out.size();
  for (auto& i : out)
    if (is_jump(i.op)) i.target = moved[i.target];
  mark_targets(out);
  code.swap(out);
  return count;
}

}  // namespace

int fuse_superinstructions(Chunk& chunk) {
  std::vector<Ins> code = decode(chunk);
  int count = 0;
  for (Rule rule : kRules) count += apply(rule, chunk, code);
  encode(code, chunk);
  return count;
}

int apply_peephole_rule(Chunk& chunk, const PeepholeRule& rule) {
  std::vector<Ins> code = decode(chunk);
  int count = apply(rule, chunk, code);
  encode(code, chunk);
  return count;
}

int fuse_superinstructions(StackProgram& program) {
  int count = fuse_superinstructions(program.script);
  for (auto& f : program.functions) count += fuse_superinstructions(f);
  return count;
}

}  // namespace descent::stack
