#include "vm/stack_compiler.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

namespace descent::stack {
namespace {

bool is_int_literal(const Expr& e) { return e.kind == ExprKind::IntLit; }

// True when evaluating e could stop with a runtime error or call a function. Call arguments
// like that get a PRECALL first: the walker checks call depth and interrupts before it
// evaluates the arguments, so at depth 10,000 `f(g())` fails at f, not at g.
bool may_fail(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Var: return e.check_defined;
    case ExprKind::Index: return true;  // out of range
    case ExprKind::List:                // a dimension below 1
      for (const auto& k : e.kids)
        if (!is_int_literal(*k) || k->int_value < 1) return true;
      break;
    case ExprKind::Call:
      if (e.builtin == Builtin::None || is_tensor_expr(e)) return true;
      if (e.builtin == Builtin::ToInt && e.kids[0]->type == Type::Float) return true;
      break;
    case ExprKind::Binary:
      if ((e.binary_op == BinaryOp::Div || e.binary_op == BinaryOp::Mod) &&
          e.operand_type == Type::Int &&
          !(is_int_literal(*e.kids[1]) && e.kids[1]->int_value != 0))
        return true;
      break;
    default: break;
  }
  for (const auto& k : e.kids)
    if (may_fail(*k)) return true;
  return false;
}

// A block that always leaves by return: no fall-through code is needed after it.
bool ends_in_return(const Block& b) {
  if (b.empty()) return false;
  const Stmt& s = *b.back();
  if (s.kind == StmtKind::Return) return true;
  return s.kind == StmtKind::If && s.has_else && ends_in_return(s.body) &&
         ends_in_return(s.else_body);
}

// A block whose last statement jumps away (the `if` needs no jump over its else).
bool ends_in_jump(const Block& b) {
  if (b.empty()) return false;
  StmtKind k = b.back()->kind;
  return k == StmtKind::Return || k == StmtKind::Break || k == StmtKind::Continue;
}

Op arith_op(BinaryOp op, Type t) {
  bool f = t == Type::Float;
  switch (op) {
    case BinaryOp::Add: return f ? Op::ADD_FLOAT : Op::ADD_INT;
    case BinaryOp::Sub: return f ? Op::SUB_FLOAT : Op::SUB_INT;
    case BinaryOp::Mul: return f ? Op::MUL_FLOAT : Op::MUL_INT;
    case BinaryOp::Div: return f ? Op::DIV_FLOAT : Op::DIV_INT;
    case BinaryOp::Mod: return f ? Op::MOD_FLOAT : Op::MOD_INT;
    case BinaryOp::Eq: return t == Type::Bool ? Op::EQ_BOOL : f ? Op::EQ_FLOAT : Op::EQ_INT;
    case BinaryOp::Ne: return t == Type::Bool ? Op::NE_BOOL : f ? Op::NE_FLOAT : Op::NE_INT;
    case BinaryOp::Lt: return f ? Op::LT_FLOAT : Op::LT_INT;
    case BinaryOp::Le: return f ? Op::LE_FLOAT : Op::LE_INT;
    case BinaryOp::Gt: return f ? Op::GT_FLOAT : Op::GT_INT;
    case BinaryOp::Ge: return f ? Op::GE_FLOAT : Op::GE_INT;
    default: return Op::HALT;  // And/Or are jumps, never reach here
  }
}

class Compiler {
 public:
  Compiler(const Module& module, Chunk& chunk, const CompileHooks* hooks)
      : m_(module), c_(chunk), hooks_(hooks && hooks->control_flow ? hooks : nullptr) {}

  void script(const Program& program, bool echo) {
    c_.name = "<script>";
    hidden_base_ = next_hidden_ = 0;
    SourceLoc last{0, 1, 1};
    c_.uses_tensors = program.uses_tensors;
    for (const auto& s : program.body) {
      if (s->kind == StmtKind::FnDecl || s->kind == StmtKind::KernelDecl) continue;
      last = s->loc;
      if (echo && s->kind == StmtKind::Expr && s->expr->type != Type::Void) {
        expr(*s->expr);
        Type t = s->expr->type;
        // Showing a tensor evaluates it: a failure points at the expression, as in the walker.
        bool tensor = t == Type::Tensor || t == Type::Shape;
        emit(Op::ECHO, tensor ? s->expr->loc : s->loc, {static_cast<uint32_t>(t)});
      } else {
        stmt(*s);
      }
      safe_point(*s);
    }
    emit(Op::HALT, last);
    finish();
  }

  void function(const FnDecl& fn) {
    c_.name = fn.name;
    c_.local_names = fn.local_names;
    c_.local_types = fn.local_types;
    c_.num_params = static_cast<uint32_t>(fn.params.size());
    c_.return_type = fn.return_type;
    c_.fn_index = fn.index;
    c_.uses_tensors = fn.uses_tensors;
    fn_ = &fn;
    hidden_base_ = next_hidden_ = static_cast<uint32_t>(fn.local_names.size());
    block(fn.body);
    if (!ends_in_return(fn.body)) {
      SourceLoc end = fn.body.empty() ? fn.loc : fn.body.back()->loc;
      if (fn.return_type == Type::Void) {
        emit(Op::RETURN_VOID, end);
      } else {
        // Unreachable (sema rejects a value function that can fall off its end); kept so
        // the code can never run past the chunk, and returning 0 like the walker would.
        emit_const(Value{}, fn.return_type, end);
        emit(Op::RETURN, end);
      }
    }
    finish();
  }

 private:
  // ---- emitting ----
  size_t here() const { return c_.code.size(); }

  size_t emit(Op op, SourceLoc loc, std::initializer_list<uint32_t> operands = {}) {
    size_t at = here();
    c_.code.push_back(static_cast<uint8_t>(op));
    for (uint32_t v : operands) {
      uint8_t b[4];
      std::memcpy(b, &v, 4);
      c_.code.insert(c_.code.end(), b, b + 4);
    }
    c_.locs.resize(c_.code.size(), loc);
    track(op, operands.size() ? *operands.begin() : 0,
          operands.size() > 1 ? *(operands.begin() + 1) : 0);
    return at;
  }

  // Keeps depth_ equal to the operand stack's height on the fall-through path, and
  // max_depth_ at the highest it gets (the frame's operand stack size). Covers the opcodes
  // the compiler emits; fuse_superinstructions only ever lowers the peak.
  void track(Op op, uint32_t a, uint32_t b) {
    int d = -1;  // binary operators, stores, POP, ECHO, RETURN, one-value jumps, FOR_PREP
    switch (op) {
      case Op::CONST: case Op::LOAD_LOCAL: case Op::LOAD_GLOBAL: case Op::LOAD_GLOBAL_CHECKED:
        d = 1;
        break;
      case Op::NEG_INT: case Op::NEG_FLOAT: case Op::NOT: case Op::INT_TO_FLOAT:
      case Op::FLOAT_TO_INT: case Op::MATH: case Op::ABS_INT: case Op::JUMP: case Op::LOOP:
      case Op::FOR_LOOP: case Op::PRECALL: case Op::RETURN_VOID: case Op::HALT:
        d = 0;
        break;
      case Op::SAFEPOINT: d = 0; break;
      case Op::TENSOR: {
        const TensorSite& t = c_.tensor_sites[a];
        d = t.step != TensorStep::Expr ? 0 : t.has_value - static_cast<int>(t.operands);
        break;
      }
      case Op::PRINT:
        d = 0;
        for (const auto& item : c_.prints[a]) d -= item.type != Type::Str;
        break;
      case Op::CALL: d = -static_cast<int>(b) + (m_.functions[a].ret != Type::Void); break;
      default: break;
    }
    depth_ += d;
    max_depth_ = std::max(max_depth_, depth_);
  }

  // Jumps: the jump offset is always an instruction's last operand.
  size_t emit_jump(Op op, SourceLoc loc, std::initializer_list<uint32_t> operands = {}) {
    std::vector<uint32_t> ops(operands);
    ops.push_back(0);
    size_t at = here();
    switch (ops.size()) {
      case 1: emit(op, loc, {ops[0]}); break;
      case 2: emit(op, loc, {ops[0], ops[1]}); break;
      default: emit(op, loc, {ops[0], ops[1], ops[2]}); break;
    }
    return at;
  }
  void set_jump(size_t at, size_t target) {
    size_t len = instruction_length(c_.op_at(at));
    int64_t off = static_cast<int64_t>(target) - static_cast<int64_t>(at + len);
    int32_t rel = static_cast<int32_t>(off);
    std::memcpy(&c_.code[at + len - 4], &rel, 4);
  }
  void patch(size_t at) { set_jump(at, here()); }
  void patch_all(std::vector<size_t>& jumps) {
    for (size_t j : jumps) patch(j);
    jumps.clear();
  }

  uint32_t constant(Value v, Type t) {
    auto key = std::make_pair(static_cast<int>(t), v.i);
    auto it = const_index_.find(key);
    if (it != const_index_.end()) return it->second;
    uint32_t k = static_cast<uint32_t>(c_.constants.size());
    c_.constants.push_back(v);
    c_.constant_types.push_back(t);
    const_index_[key] = k;
    return k;
  }
  void emit_const(Value v, Type t, SourceLoc loc) { emit(Op::CONST, loc, {constant(v, t)}); }

  void finish() {
    c_.max_stack = static_cast<uint32_t>(max_depth_);
  }

  // ---- statements ----
  void block(const Block& b) {
    for (const auto& s : b) {
      stmt(*s);
      safe_point(*s);
    }
  }

  // ---- tensors ----
  // After each statement of code that uses tensors (where the walker has its safe points):
  // every tensor the frame holds is then in a variable.
  void safe_point(const Stmt& s) {
    if (c_.uses_tensors && s.kind != StmtKind::Return && s.kind != StmtKind::Break &&
        s.kind != StmtKind::Continue && s.kind != StmtKind::FnDecl &&
        s.kind != StmtKind::KernelDecl)
      emit(Op::SAFEPOINT, s.loc);
  }

  void site(TensorSite t, SourceLoc loc) {
    c_.tensor_sites.push_back(t);
    emit(Op::TENSOR, loc, {static_cast<uint32_t>(c_.tensor_sites.size() - 1)});
  }

  // Operands left to right, then one TENSOR; a shape literal checks a dimension at once when
  // a later one could fail first (the walker checks each as it evaluates it).
  void tensor(const Expr& e) {
    if (e.kind == ExprKind::Index) load(e);  // the variable, then the indices
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const Expr& k = *e.kids[i];
      if (k.kind == ExprKind::StrLit) continue;  // load and save's file names
      expr(k);
      if (e.kind != ExprKind::List || is_int_literal(k)) continue;
      bool later_may_fail = false;
      for (size_t j = i + 1; j < e.kids.size(); ++j) later_may_fail |= may_fail(*e.kids[j]);
      if (later_may_fail) site(TensorSite{TensorStep::Dim, &k, -1, 1, false}, k.loc);
    }
    site(TensorSite{TensorStep::Expr, &e, -1, static_cast<uint32_t>(tensor_operand_count(e)),
                    e.type != Type::Void},
         e.loc);
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr:
        expr(*s.expr);
        if (s.expr->type != Type::Void) emit(Op::POP, s.loc);
        break;
      case StmtKind::Assign: assign(s); break;
      case StmtKind::If:
      case StmtKind::While:
        if (hooks_) {
          Hooked e(*this);
          hooks_->control_flow(s, e);
        } else if (s.kind == StmtKind::If) {
          if_stmt(s);
        } else {
          while_stmt(s);
        }
        break;
      case StmtKind::For: for_stmt(s); break;
      case StmtKind::Break: loop().breaks.push_back(emit_jump(Op::JUMP, s.loc)); break;
      case StmtKind::Continue: loop().continues.push_back(emit_jump(Op::JUMP, s.loc)); break;
      case StmtKind::Return:
        if (s.expr) {
          expr(*s.expr);
          if (fn_ && fn_->declared_return == Type::Tensor)
            site(TensorSite{TensorStep::Result, s.expr.get(), fn_->index, 1, false}, s.expr->loc);
          emit(Op::RETURN, s.loc);
        } else {
          emit(Op::RETURN_VOID, s.loc);
        }
        break;
      case StmtKind::FnDecl: break;  // compiled on its own
      case StmtKind::KernelDecl: break;  // kernels run when called
    }
  }

  // The innermost loop. Sema puts every break and continue inside one; only a control-flow
  // hook that forgot begin_loop gets here without one, and then gets a jump nobody patches
  // rather than undefined behaviour.
  LoopJumps& loop() {
    if (loops_.empty()) loops_.emplace_back();
    return loops_.back();
  }

  void store(Storage st, int32_t slot, SourceLoc loc) {
    emit(st == Storage::Local ? Op::STORE_LOCAL : Op::STORE_GLOBAL, loc,
         {static_cast<uint32_t>(slot)});
  }

  void assign(const Stmt& s) {
    if (!s.has_op) {
      expr(*s.expr);
      store(s.storage, s.slot, s.loc);
      return;
    }
    // x op= v  is  x = x op v, with the operator's errors at the op= token.
    emit(s.storage == Storage::Local ? Op::LOAD_LOCAL : Op::LOAD_GLOBAL, s.loc,
         {static_cast<uint32_t>(s.slot)});
    expr(*s.expr);
    emit(arith_op(s.assign_op, s.var_type), s.op_loc);
    store(s.storage, s.slot, s.loc);
  }

  void if_stmt(const Stmt& s) {
    std::vector<size_t> to_else;
    cond(*s.expr, false, to_else);
    block(s.body);
    if (!s.has_else) {
      patch_all(to_else);
      return;
    }
    bool falls = !ends_in_jump(s.body);
    size_t to_end = falls ? emit_jump(Op::JUMP, s.loc) : 0;
    patch_all(to_else);
    block(s.else_body);
    if (falls) patch(to_end);
  }

  // while c { body }:   start: [c false -> exit]  body  LOOP start  exit:
  void while_stmt(const Stmt& s) {
    size_t start = here();
    std::vector<size_t> exits;
    cond(*s.expr, false, exits);
    loops_.emplace_back();
    block(s.body);
    patch_all(loops_.back().continues);  // continue goes through LOOP's interrupt check
    size_t back = emit_jump(Op::LOOP, s.loc);
    set_jump(back, start);
    patch_all(exits);
    patch_all(loops_.back().breaks);
    loops_.pop_back();
  }

  // for i in lo..hi { body }:
  //   [lo] [hi] FOR_PREP h -> exit;  body: STORE i  body  FOR_LOOP h -> body;  exit:
  void for_stmt(const Stmt& s) {
    expr(*s.expr);
    expr(*s.expr2);
    uint32_t h = hidden_slots();
    size_t prep = emit_jump(Op::FOR_PREP, s.loc, {h});
    size_t body = here();
    store(s.storage, s.slot, s.loc);
    loops_.emplace_back();
    block(s.body);
    patch_all(loops_.back().continues);
    size_t back = emit_jump(Op::FOR_LOOP, s.loc, {h});
    set_jump(back, body);
    patch(prep);
    patch_all(loops_.back().breaks);
    loops_.pop_back();
    next_hidden_ -= 2;
  }

  // Two hidden locals (counter, bound) for a for loop; nested loops stack them, siblings
  // share them (a stack discipline, like Lua's register reservation).
  uint32_t hidden_slots() {
    uint32_t h = next_hidden_;
    next_hidden_ += 2;
    if (c_.local_names.size() < next_hidden_) {
      std::string n = std::to_string((h - hidden_base_) / 2 + 1);
      c_.local_names.push_back(".for" + n);
      c_.local_names.push_back(".end" + n);
      c_.local_types.push_back(Type::Int);
      c_.local_types.push_back(Type::Int);
    }
    return h;
  }

  // ---- conditions: jump to a patch in `out` when e is `when`, fall through otherwise ----
  void cond(const Expr& e, bool when, std::vector<size_t>& out) {
    if (e.kind == ExprKind::BoolLit) {
      if (e.bool_value == when) out.push_back(emit_jump(Op::JUMP, e.loc));
      return;
    }
    if (e.kind == ExprKind::Unary && e.unary_op == UnaryOp::Not) {
      cond(*e.kids[0], !when, out);
      return;
    }
    if (e.kind == ExprKind::Binary) {
      BinaryOp op = e.binary_op;
      if (op == BinaryOp::And || op == BinaryOp::Or) {
        // a && b jumps on false as soon as a is false; on true only when both are.
        bool short_on = op == BinaryOp::Or;  // the value of a that decides alone
        if (when == short_on) {
          cond(*e.kids[0], when, out);
          cond(*e.kids[1], when, out);
        } else {
          std::vector<size_t> skip;
          cond(*e.kids[0], short_on, skip);
          cond(*e.kids[1], when, out);
          patch_all(skip);
        }
        return;
      }
    }
    expr(e);
    out.push_back(emit_jump(when ? Op::JUMP_IF_TRUE : Op::JUMP_IF_FALSE, e.loc));
  }

  // ---- expressions: each leaves exactly one value (none for a Void call) ----
  void expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: emit_const(Value::of_int(e.int_value), Type::Int, e.loc); break;
      case ExprKind::FloatLit:
        emit_const(Value::of_float(e.float_value), Type::Float, e.loc);
        break;
      case ExprKind::BoolLit: emit_const(Value::of_bool(e.bool_value), Type::Bool, e.loc); break;
      case ExprKind::StrLit: break;  // only ever a print argument, handled there
      case ExprKind::List: case ExprKind::Index: case ExprKind::Field: tensor(e); break;
      // Kernel bodies only (sema): never in code that runs; a constant keeps the
      // one-value-per-expression rule.
      case ExprKind::Reduce: case ExprKind::Axis: emit_const(Value{}, Type::Int, e.loc); break;
      case ExprKind::Promote: {
        const Expr& k = *e.kids[0];
        if (is_int_literal(k)) {  // convert literals now rather than at every run
          emit_const(Value::of_float(static_cast<double>(k.int_value)), Type::Float, k.loc);
        } else {
          expr(k);
          emit(Op::INT_TO_FLOAT, e.loc);
        }
        break;
      }
      case ExprKind::Var: load(e); break;
      case ExprKind::Unary: unary(e); break;
      case ExprKind::Binary: binary(e); break;
      case ExprKind::Call: call(e); break;
    }
  }

  void load(const Expr& e) {
    uint32_t slot = static_cast<uint32_t>(e.slot);
    if (e.storage == Storage::Local) emit(Op::LOAD_LOCAL, e.loc, {slot});
    else emit(e.check_defined ? Op::LOAD_GLOBAL_CHECKED : Op::LOAD_GLOBAL, e.loc, {slot});
  }

  void unary(const Expr& e) {
    const Expr& k = *e.kids[0];
    if (e.unary_op == UnaryOp::Not) {
      expr(k);
      emit(Op::NOT, e.loc);
      return;
    }
    // A negative literal is one constant, not a literal and a NEG.
    if (k.kind == ExprKind::IntLit)
      return emit_const(Value::of_int(wrap_neg(k.int_value)), Type::Int, e.loc);
    if (k.kind == ExprKind::FloatLit)
      return emit_const(Value::of_float(-k.float_value), Type::Float, e.loc);
    expr(k);
    emit(e.type == Type::Int ? Op::NEG_INT : Op::NEG_FLOAT, e.loc);
  }

  void binary(const Expr& e) {
    const Expr& a = *e.kids[0];
    const Expr& b = *e.kids[1];
    if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) {
      expr(a);
      size_t j = emit_jump(e.binary_op == BinaryOp::And ? Op::JUMP_IF_FALSE_OR_POP
                                                        : Op::JUMP_IF_TRUE_OR_POP,
                           e.loc);
      expr(b);
      patch(j);
      return;
    }
    expr(a);
    expr(b);
    emit(arith_op(e.binary_op, e.operand_type), e.loc);
  }

  void call(const Expr& e) {
    if (is_tensor_expr(e)) return tensor(e);
    switch (e.builtin) {
      case Builtin::None: {
        uint32_t f = static_cast<uint32_t>(e.slot), n = static_cast<uint32_t>(e.kids.size());
        const FnDecl* callee = m_.functions[f].decl;
        // Tensor parameters are checked after the arguments, so the depth check comes first.
        bool checked = callee && has_tensor_signature(*callee);
        bool risky = checked;
        for (const auto& k : e.kids) risky = risky || may_fail(*k);
        if (risky) emit(Op::PRECALL, e.loc, {f, n});
        for (const auto& k : e.kids) expr(*k);
        if (checked) site(TensorSite{TensorStep::Args, &e, static_cast<int32_t>(f), n, false}, e.loc);
        emit(Op::CALL, e.loc, {f, n});
        return;
      }
      case Builtin::Print: {
        PrintFormat fmt;
        for (const auto& k : e.kids) {
          if (k->kind == ExprKind::StrLit) {
            fmt.push_back(PrintItem{Type::Str, k->text, k->loc});
          } else {
            expr(*k);
            fmt.push_back(PrintItem{k->type, "", k->loc});
          }
        }
        c_.prints.push_back(std::move(fmt));
        emit(Op::PRINT, e.loc, {static_cast<uint32_t>(c_.prints.size() - 1)});
        return;
      }
      case Builtin::ToFloat: expr(*e.kids[0]); return;  // sema promoted an int argument
      case Builtin::ToInt:
        expr(*e.kids[0]);
        if (e.kids[0]->type == Type::Float) emit(Op::FLOAT_TO_INT, e.loc);
        return;
      case Builtin::Abs:
        expr(*e.kids[0]);
        if (e.type == Type::Int) emit(Op::ABS_INT, e.loc);
        else emit(Op::MATH, e.loc, {static_cast<uint32_t>(Builtin::Abs)});
        return;
      case Builtin::Min:
      case Builtin::Max: {
        expr(*e.kids[0]);
        expr(*e.kids[1]);
        bool mn = e.builtin == Builtin::Min, i = e.type == Type::Int;
        emit(mn ? (i ? Op::MIN_INT : Op::MIN_FLOAT) : (i ? Op::MAX_INT : Op::MAX_FLOAT), e.loc);
        return;
      }
      default:
        expr(*e.kids[0]);
        emit(Op::MATH, e.loc, {static_cast<uint32_t>(e.builtin)});
        return;
    }
  }

  using Loop = LoopJumps;

  // The Emitter a control-flow hook writes through: the compiler's own emitting, a few
  // calls wide.
  class Hooked final : public Emitter {
   public:
    explicit Hooked(Compiler& c) : c_(c) {}
    size_t here() const override { return c_.here(); }
    void expr(const Expr& e) override { c_.expr(e); }
    void block(const Block& b) override { c_.block(b); }
    size_t emit_jump(Op op, SourceLoc loc) override {
      if (op_format(op) != Format::J) return SIZE_MAX;
      return c_.emit_jump(op, loc);
    }
    void patch_jump(size_t at) override { c_.patch(at); }
    void emit_loop(size_t target, SourceLoc loc) override {
      c_.set_jump(c_.emit_jump(Op::LOOP, loc), target);
    }
    void begin_loop() override { c_.loops_.emplace_back(); }
    LoopJumps end_loop() override {
      if (c_.loops_.empty()) return {};  // no begin_loop: nothing to hand back
      LoopJumps j = std::move(c_.loops_.back());
      c_.loops_.pop_back();
      return j;
    }

   private:
    Compiler& c_;
  };

  const Module& m_;
  Chunk& c_;
  const CompileHooks* hooks_;  // null: if and while are the compiler's own
  std::vector<Loop> loops_;
  std::map<std::pair<int, int64_t>, uint32_t> const_index_;
  const FnDecl* fn_ = nullptr;  // the function being compiled (null: the script)
  uint32_t hidden_base_ = 0, next_hidden_ = 0;
  int depth_ = 0, max_depth_ = 0;
};

}  // namespace

Chunk compile_script(const Program& program, const Module& module, bool echo,
                     const CompileHooks* hooks) {
  Chunk c;
  Compiler(module, c, hooks).script(program, echo);
  return c;
}

Chunk compile_function(const FnDecl& fn, const Module& module, const CompileHooks* hooks) {
  Chunk c;
  Compiler(module, c, hooks).function(fn);
  return c;
}

StackProgram compile_stack(const Program& program, const Module& module, bool echo,
                           const CompileHooks* hooks) {
  StackProgram p;
  p.script = compile_script(program, module, echo, hooks);
  for (const auto& s : program.body)
    if (s->kind == StmtKind::FnDecl && s->fn)
      p.functions.push_back(compile_function(*s->fn, module, hooks));
  return p;
}

}  // namespace descent::stack
