#include "vm/reg_compiler.h"

#include "lang/promotable.h"
#include "vm/reg_ops.h"

#include <algorithm>
#include <map>
#include <set>

namespace descent {
namespace {

using namespace reg_ops;

// Thrown when a function outgrows the 16-bit fields; caught at the API boundary.
struct TooLarge {};

// A value operand: a register, or (is_k) a constant-table index.
struct Opnd {
  bool is_k = false;
  int v = 0;
};


// A literal (possibly negated or promoted): usable as a K operand.
bool as_const(const Expr& e, Value* v) {
  switch (e.kind) {
    case ExprKind::IntLit: *v = Value::of_int(e.int_value); return true;
    case ExprKind::FloatLit: *v = Value::of_float(e.float_value); return true;
    case ExprKind::BoolLit: *v = Value::of_bool(e.bool_value); return true;
    case ExprKind::Promote: {
      Value k;
      if (!as_const(*e.kids[0], &k)) return false;
      *v = Value::of_float(static_cast<double>(k.i));
      return true;
    }
    case ExprKind::Unary: {
      Value k;
      if (e.unary_op != UnaryOp::Neg || !as_const(*e.kids[0], &k)) return false;
      *v = e.type == Type::Int ? Value::of_int(wrap_neg(k.i)) : Value::of_float(-k.f);
      return true;
    }
    default: return false;
  }
}

// Whether evaluating e can fail or have an effect (output, a call). Arguments like that
// are preceded by PRECALL so that the depth check comes first, as in the walker.
bool may_fail(const Expr& e) {
  // Tensor operations (but .shape) can fail: a dimension below 1, an index out of range, a
  // kernel's shapes, memory.
  if (is_tensor_expr(e) && e.kind != ExprKind::Field) return true;
  if (e.kind == ExprKind::Call && (e.builtin == Builtin::None ||
                                   (e.builtin == Builtin::ToInt && e.kids[0]->type == Type::Float)))
    return true;
  if (e.kind == ExprKind::Binary && e.operand_type == Type::Int &&
      (e.binary_op == BinaryOp::Div || e.binary_op == BinaryOp::Mod))
    return true;
  if (e.kind == ExprKind::Var && e.check_defined) return true;
  for (const auto& k : e.kids)
    if (may_fail(*k)) return true;
  return false;
}

class RegCompiler {
 public:
  RegCompiler(const Module& m, RegFunction& f) : m_(m), f_(f) {}

  void function(const FnDecl& fn) {
    f_.name = fn.name;
    f_.fn_index = fn.index;
    for (const auto& p : fn.params) f_.param_types.push_back(p.type);
    f_.ret = fn.return_type;
    f_.uses_tensors = fn.uses_tensors;
    fn_ = &fn;
    // Tensor and Shape values are handles: ints to the registers (and the trace).
    for (size_t i = 0; i < fn.local_names.size(); ++i) {
      Type t = fn.local_types[i];
      if (t == Type::Tensor) tensor_locals_.push_back(field(static_cast<int>(i)));
      if (t == Type::Tensor || t == Type::Shape) t = Type::Int;
      new_vreg(t, fn.local_names[i]);
    }
    for (size_t i = 0; i < fn.params.size(); ++i) f_.param_locs.push_back(static_cast<uint16_t>(i));
    block(fn.body);
    if (end_reachable()) emit(Op::RETURN0, 0, 0, 0, fn.loc);
  }

  void toplevel(const Program& p, bool echo) {
    f_.name = "<top>";
    f_.uses_tensors = p.uses_tensors;
    echo_ = echo;
    SourceLoc end, start = p.body.empty() ? SourceLoc{} : p.body.front()->loc;
    // Top-level variables in registers (lang/promotable.h). Each starts as the global's value, so that writing it back
    // before the input assigned it (an error in the first lines) changes nothing.
    std::vector<uint16_t> homes;
    for (int g : promotable_globals(p, m_)) {
      Type t = m_.globals[size_t(g)].type;
      int r = new_vreg(t, m_.globals[size_t(g)].name);
      promoted_[g] = r;
      f_.promoted.push_back(field(g));
      homes.push_back(field(r));
      emit(Op::GETGLOBAL, r, g, 0, start);
    }
    marked_.emplace_back();  // the top-level statements' block
    for (const auto& s : p.body) {
      stmt(*s);
      safe_point(*s);
      end = s->loc;
    }
    emit(Op::HALT, homes.empty() ? 0 : list(homes), 0, 0, end);
  }

 private:
  struct Loop {
    std::vector<int> breaks, continues;
  };

  // The register of a variable: a local's slot, a promoted global's register, else -1.
  int reg_of(Storage storage, int slot) const {
    if (storage == Storage::Local) return slot;
    if (storage != Storage::Global) return -1;
    auto it = promoted_.find(slot);
    return it == promoted_.end() ? -1 : it->second;
  }
  bool promoted(Storage storage, int slot) const {
    return storage == Storage::Global && promoted_.count(slot);
  }
  // Whether a block assigns the variable in register `reg` (then a for loop keeps a
  // hidden counter, and a loop bound in it is copied first).
  bool assigns_reg(const Block& b, int reg) const {
    for (const auto& s : b) {
      if ((s->kind == StmtKind::Assign || s->kind == StmtKind::For) && reg_of(s->storage, s->slot) == reg)
        return true;
      if (assigns_reg(s->body, reg) || assigns_reg(s->else_body, reg)) return true;
    }
    return false;
  }

  // ---- emission ----
  int here() const { return static_cast<int>(f_.code.size()); }
  static uint16_t field(int v) {
    if (v < 0 || v > kMaxOperand) throw TooLarge{};
    return static_cast<uint16_t>(v);
  }
  int emit(Op op, int a, int b, int c, SourceLoc loc) {
    if (here() > kMaxOperand) throw TooLarge{};
    f_.code.push_back(Instr{op, field(a), field(b), field(c)});
    f_.locs.push_back(loc);
    return here() - 1;
  }
  // Marks the current position as a jump target and returns it.
  int label() {
    last_label_ = here();
    return here();
  }
  void patch(const std::vector<int>& jumps, int target) {
    for (int j : jumps) f_.code[static_cast<size_t>(j)].c = field(target);
  }
  void patch_here(const std::vector<int>& jumps) {
    if (!jumps.empty()) patch(jumps, label());
  }
  bool end_reachable() const {
    return f_.code.empty() || falls_through(f_.code.back().op) || last_label_ == here();
  }

  int new_vreg(Type t, std::string name = "") {
    f_.vreg_types.push_back(t);
    f_.vreg_names.push_back(std::move(name));
    return field(f_.num_vregs++);
  }
  int temp(Type t) { return new_vreg(t); }
  int target(int dest, Type t) { return dest >= 0 ? dest : temp(t); }

  int konst(Value v, Type t) {
    for (size_t i = 0; i < f_.k.size(); ++i)
      if (f_.k[i].i == v.i && f_.k_types[i] == t) return static_cast<int>(i);
    f_.k.push_back(v);
    f_.k_types.push_back(t);
    return field(static_cast<int>(f_.k.size()) - 1);
  }
  int list(const std::vector<uint16_t>& entries) {
    int at = static_cast<int>(f_.lists.size());
    f_.lists.push_back(field(static_cast<int>(entries.size())));
    f_.lists.insert(f_.lists.end(), entries.begin(), entries.end());
    f_.list_locs.resize(f_.lists.size(), cur_loc_);
    return field(at);
  }

  // ---- tensors ----
  int site(TensorSite t) {
    f_.tensor_sites.push_back(t);
    return field(static_cast<int>(f_.tensor_sites.size()) - 1);
  }
  void check(TensorSite t, const std::vector<uint16_t>& regs, SourceLoc loc) {
    int s = site(t);
    emit(Op::TCHECK, 0, s, list(regs), loc);
  }

  // The operands left to right, then one TENSOR; a shape literal checks a dimension at once
  // when a later one could fail first (the walker checks each as it evaluates it).
  int tensor(const Expr& e, int dest) {
    std::vector<uint16_t> in;
    if (e.kind == ExprKind::Index) {  // the variable, then the indices
      if (e.storage == Storage::Local) {
        in.push_back(field(e.slot));
      } else {
        int g = temp(Type::Int);
        emit(e.check_defined ? Op::GETGLOBALCHK : Op::GETGLOBAL, g, e.slot, 0, e.loc);
        in.push_back(field(g));
      }
    }
    for (size_t i = 0; i < e.kids.size(); ++i) {
      const Expr& k = *e.kids[i];
      if (k.kind == ExprKind::StrLit) continue;  // load and save's file names
      int r = expr(k);
      in.push_back(field(r));
      if (e.kind != ExprKind::List || k.kind == ExprKind::IntLit) continue;
      bool later_may_fail = false;
      for (size_t j = i + 1; j < e.kids.size(); ++j) later_may_fail |= may_fail(*e.kids[j]);
      if (later_may_fail) check(TensorSite{TensorStep::Dim, &k, -1, 1, false}, {field(r)}, k.loc);
    }
    Type t = e.type == Type::Tensor || e.type == Type::Shape || e.type == Type::Void ? Type::Int
                                                                                       : e.type;
    int r = target(dest, t);
    int s = site(TensorSite{TensorStep::Expr, &e, -1, static_cast<uint32_t>(in.size()),
                            e.type != Type::Void});
    emit(Op::TENSOR, r, s, list(in), e.loc);
    return r;
  }

  // After each statement of code that uses tensors (the walker's safe points): the roots
  // are the tensor globals and the frame's tensor locals, which the list names (as uses, so
  // each keeps its location from its definition on).
  void safe_point(const Stmt& s) {
    if (!f_.uses_tensors) return;
    switch (s.kind) {
      case StmtKind::Return: case StmtKind::Break: case StmtKind::Continue:
      case StmtKind::FnDecl: case StmtKind::KernelDecl:
        return;
      default: break;
    }
    if (!end_reachable()) return;
    emit(Op::SAFEPOINT, list(tensor_locals_), 0, 0, s.loc);
  }

  // ---- expressions ----
  Opnd operand(const Expr& e) {
    Value v;
    if (as_const(e, &v)) return Opnd{true, konst(v, e.type)};
    return Opnd{false, expr(e)};
  }
  int in_register(Opnd o, Type t) {
    if (!o.is_k) return o.v;
    int r = temp(t);
    emit(Op::LOADK, r, o.v, 0, cur_loc_);
    return r;
  }

  // Evaluates e and returns the register holding it; with dest >= 0, into dest.
  int expr(const Expr& e, int dest = -1) {
    SourceLoc saved = cur_loc_;
    cur_loc_ = e.loc;
    int r = expr_inner(e, dest);
    cur_loc_ = saved;
    return r;
  }

  int expr_inner(const Expr& e, int dest) {
    Value kv;
    if (as_const(e, &kv)) {
      int r = target(dest, e.type);
      emit(Op::LOADK, r, konst(kv, e.type), 0, e.loc);
      return r;
    }
    switch (e.kind) {
      case ExprKind::Var: {
        if (int v = reg_of(e.storage, e.slot); v >= 0) {
          if (dest < 0 || dest == v) return v;
          emit(Op::MOVE, dest, v, 0, e.loc);
          return dest;
        }
        int r = target(dest, e.type);
        emit(e.check_defined ? Op::GETGLOBALCHK : Op::GETGLOBAL, r, e.slot, 0, e.loc);
        return r;
      }
      case ExprKind::Promote: {
        int s = expr(*e.kids[0]);
        int r = target(dest, Type::Float);
        emit(Op::ITOF, r, s, 0, e.loc);
        return r;
      }
      case ExprKind::Unary: {
        int s = expr(*e.kids[0]);
        int r = target(dest, e.type);
        Op op = e.unary_op == UnaryOp::Not ? Op::NOT
                : e.type == Type::Int      ? Op::NEG_INT
                                           : Op::NEG_FLOAT;
        emit(op, r, s, 0, e.loc);
        return r;
      }
      case ExprKind::Binary: return binary(e, dest);
      case ExprKind::Call: return call(e, dest);
      case ExprKind::List: case ExprKind::Index: case ExprKind::Field: return tensor(e, dest);
      default: return target(dest, e.type);  // StrLit: only in print, handled there
    }
  }

  int binary(const Expr& e, int dest) {
    if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) {
      // t := a; if t decides it, skip b; t := b. A fresh t: dest may be read by b.
      int t = temp(Type::Bool);
      expr(*e.kids[0], t);
      int j = emit(e.binary_op == BinaryOp::And ? Op::JFALSE : Op::JTRUE, t, 0, 0, e.loc);
      expr(*e.kids[1], t);
      patch_here({j});
      if (dest >= 0 && dest != t) {
        emit(Op::MOVE, dest, t, 0, e.loc);
        return dest;
      }
      return t;
    }
    Opnd a = operand(*e.kids[0]);
    Opnd b = operand(*e.kids[1]);
    int r = target(dest, e.type);
    if (is_compare(e.binary_op))
      emit_compare(cond_of(e.binary_op), e.operand_type, r, a, b, e.loc);
    else
      emit_arith(e.binary_op, e.operand_type, r, a, b, e.loc);
    return r;
  }

  void emit_arith(BinaryOp op, Type t, int r, Opnd a, Opnd b, SourceLoc loc) {
    bool f = t == Type::Float;
    bool commutes = op == BinaryOp::Add || op == BinaryOp::Mul;
    if (a.is_k && !b.is_k && commutes) std::swap(a, b);
    int ra = in_register(a, t);
    int64_t d = b.is_k ? f_.k[static_cast<size_t>(b.v)].i : 0;
    if (b.is_k && !f && (op == BinaryOp::Div || op == BinaryOp::Mod) && d >= 2 &&
        (d & (d - 1)) == 0)
      emit(op == BinaryOp::Div ? Op::DIVP2_INT : Op::MODP2_INT, r, ra,
           __builtin_ctzll(static_cast<uint64_t>(d)), loc);
    else if (b.is_k)
      emit(arith_rk(op, f), r, ra, b.v, loc);
    else
      emit(arith_rr(op, f), r, ra, b.v, loc);
  }

  void emit_compare(Cond c, Type t, int r, Opnd a, Opnd b, SourceLoc loc) {
    if (t == Type::Bool) {
      emit(c == Cond::EQ ? Op::EQ_BOOL : Op::NE_BOOL, r, in_register(a, t), in_register(b, t), loc);
      return;
    }
    bool f = t == Type::Float;
    if (a.is_k && !b.is_k) {
      std::swap(a, b);
      c = mirror(c);
    }
    int ra = in_register(a, t);
    if (b.is_k) {
      emit(compare_rk(c, f), r, ra, b.v, loc);
    } else if (c == Cond::GT || c == Cond::GE) {
      emit(compare_rr(c, f), r, b.v, ra, loc);
    } else {
      emit(compare_rr(c, f), r, ra, b.v, loc);
    }
  }

  int call(const Expr& e, int dest) {
    if (is_tensor_expr(e)) return tensor(e, dest);
    switch (e.builtin) {
      case Builtin::None: return user_call(e, dest);
      case Builtin::Print: print(e); return dest >= 0 ? dest : 0;  // void: never read
      case Builtin::ToFloat: return expr(*e.kids[0], dest);        // sema promoted the argument
      case Builtin::ToInt: {
        const Expr& k = *e.kids[0];
        if (k.type == Type::Int) return expr(k, dest);
        int s = expr(k);
        int r = target(dest, Type::Int);
        emit(Op::FTOI, r, s, 0, e.loc);
        return r;
      }
      case Builtin::Abs: {
        int s = expr(*e.kids[0]);
        int r = target(dest, e.type);
        emit(e.type == Type::Int ? Op::ABS_INT : Op::ABS_FLOAT, r, s, 0, e.loc);
        return r;
      }
      case Builtin::Min:
      case Builtin::Max: {
        int a = expr(*e.kids[0]);
        int b = expr(*e.kids[1]);
        int r = target(dest, e.type);
        bool mn = e.builtin == Builtin::Min, i = e.type == Type::Int;
        Op op = mn ? (i ? Op::MIN_INT : Op::MIN_FLOAT) : (i ? Op::MAX_INT : Op::MAX_FLOAT);
        emit(op, r, a, b, e.loc);
        return r;
      }
      default: {
        int s = expr(*e.kids[0]);
        int r = target(dest, Type::Float);
        emit(Op::MATH, r, s, static_cast<int>(e.builtin), e.loc);
        return r;
      }
    }
  }

  int user_call(const Expr& e, int dest) {
    const FnDecl* callee = m_.functions[static_cast<size_t>(e.slot)].decl;
    // Tensor parameters are checked after the arguments, so the depth check comes first.
    bool checked = callee && has_tensor_signature(*callee);
    bool effects = checked;
    for (const auto& k : e.kids) effects = effects || may_fail(*k);
    if (effects) emit(Op::PRECALL, 0, e.slot, 0, e.loc);
    std::vector<uint16_t> args;
    for (const auto& k : e.kids) args.push_back(field(expr(*k)));
    if (checked)
      check(TensorSite{TensorStep::Args, &e, e.slot, static_cast<uint32_t>(args.size()), false},
            args, e.loc);
    int r = target(dest, e.type == Type::Void ? Type::Int : e.type);
    if (args.empty())
      emit(Op::CALL0, r, e.slot, 0, e.loc);
    else if (args.size() == 1)
      emit(Op::CALL1, r, e.slot, args[0], e.loc);
    else
      emit(Op::CALL, r, e.slot, list(args), e.loc);
    return r;
  }

  void print(const Expr& e) {
    std::vector<uint16_t> items;
    for (const auto& k : e.kids) {
      if (k->kind == ExprKind::StrLit) {
        items.push_back(kPrintStr);
        items.push_back(field(static_cast<int>(f_.strings.size())));
        f_.strings.push_back(k->text);
      } else {
        items.push_back(static_cast<uint16_t>(k->type));
        items.push_back(field(expr(*k)));
      }
    }
    // L[A] counts items, not entries: each item is a (type, operand) pair.
    int l = list(items);
    f_.lists[static_cast<size_t>(l)] = field(static_cast<int>(items.size() / 2));
    for (size_t i = 0; i < e.kids.size(); ++i)  // showing a tensor fails at its argument
      f_.list_locs[static_cast<size_t>(l) + 2 + 2 * i] = e.kids[i]->loc;
    emit(Op::PRINT, l, 0, 0, e.loc);
  }

  // ---- conditions: jump (to be patched) when e == when, fall through otherwise ----
  void cond(const Expr& e, bool when, std::vector<int>& jumps) {
    if (e.kind == ExprKind::BoolLit) {
      if (e.bool_value == when) jumps.push_back(emit(Op::JMP, 0, 0, 0, e.loc));
      return;
    }
    if (e.kind == ExprKind::Unary && e.unary_op == UnaryOp::Not) {
      cond(*e.kids[0], !when, jumps);
      return;
    }
    if (e.kind == ExprKind::Binary) {
      BinaryOp op = e.binary_op;
      if (op == BinaryOp::And || op == BinaryOp::Or) {
        // And jumps on false as soon as a is false; Or jumps on true as soon as a is true.
        bool shortcut = op == BinaryOp::Or;
        if (when == shortcut) {
          cond(*e.kids[0], when, jumps);
          cond(*e.kids[1], when, jumps);
        } else {
          std::vector<int> skip;
          cond(*e.kids[0], shortcut, skip);
          cond(*e.kids[1], when, jumps);
          patch_here(skip);
        }
        return;
      }
      if (is_compare(op) && e.operand_type != Type::Bool) {
        compare_branch(e, when, jumps);
        return;
      }
    }
    int r = expr(e);
    jumps.push_back(emit(when ? Op::JTRUE : Op::JFALSE, r, 0, 0, e.loc));
  }

  void compare_branch(const Expr& e, bool when, std::vector<int>& jumps) {
    bool f = e.operand_type == Type::Float;
    Cond c = cond_of(e.binary_op);
    Opnd a = operand(*e.kids[0]);
    Opnd b = operand(*e.kids[1]);
    if (a.is_k && b.is_k) {  // decided now
      Value out;
      apply_binary(e.binary_op, e.operand_type, f_.k[static_cast<size_t>(a.v)],
                   f_.k[static_cast<size_t>(b.v)], &out);
      if (out.b == when) jumps.push_back(emit(Op::JMP, 0, 0, 0, e.loc));
      return;
    }
    if (!when) c = negate(c, f);
    if (a.is_k) {
      std::swap(a, b);
      c = mirror(c);
    }
    if (b.is_k)
      jumps.push_back(emit(branch_rk(c, f), a.v, b.v, 0, e.loc));
    else if (needs_swap(c))
      jumps.push_back(emit(branch_rr(c, f), b.v, a.v, 0, e.loc));
    else
      jumps.push_back(emit(branch_rr(c, f), a.v, b.v, 0, e.loc));
  }

  // ---- statements ----
  void block(const Block& b, int assigned = -1) {
    marked_.emplace_back();
    if (assigned >= 0) marked_.back().insert(assigned);
    for (const auto& s : b) {
      stmt(*s);
      safe_point(*s);
    }
    marked_.pop_back();
  }
  // A promoted global certainly marked assigned by now: by an earlier statement of this
  // block or of an enclosing one (each of which stored to the global when it ran).
  bool marked(int g) const {
    for (const auto& m : marked_)
      if (m.count(g)) return true;
    return false;
  }

  void stmt(const Stmt& s) {
    cur_loc_ = s.loc;
    switch (s.kind) {
      case StmtKind::Expr:
        if (echo_ && s.expr->type != Type::Void) {
          int r = expr(*s.expr);
          emit(Op::ECHO, r, static_cast<int>(s.expr->type), 0, s.expr->loc);
        } else {
          expr(*s.expr);
        }
        break;
      case StmtKind::Assign: assign(s); break;
      case StmtKind::If: if_stmt(s); break;
      case StmtKind::While: while_stmt(s); break;
      case StmtKind::For: for_stmt(s); break;
      case StmtKind::Break: loops_.back().breaks.push_back(emit(Op::JMP, 0, 0, 0, s.loc)); break;
      case StmtKind::Continue:
        loops_.back().continues.push_back(emit(Op::JMP, 0, 0, 0, s.loc));
        break;
      case StmtKind::Return:
        if (s.expr) {
          int r = expr(*s.expr);
          if (fn_ && fn_->declared_return == Type::Tensor)
            check(TensorSite{TensorStep::Result, s.expr.get(), fn_->index, 1, false},
                  {field(r)}, s.expr->loc);
          emit(Op::RETURN, r, 0, 0, s.loc);
        } else
          emit(Op::RETURN0, 0, 0, 0, s.loc);
        break;
      case StmtKind::FnDecl: break;
      case StmtKind::KernelDecl: break;  // kernels run when called
    }
  }

  void assign(const Stmt& s) {
    if (int v = reg_of(s.storage, s.slot); v >= 0) {
      if (s.has_op)
        emit_arith(s.assign_op, s.var_type, v, Opnd{false, v}, operand(*s.expr), s.op_loc);
      else
        expr(*s.expr, v);
      // The first assignment on its way also stores to the global, which marks it assigned
      // (a later input may read it); the ones after it need not.
      if (promoted(s.storage, s.slot) && !marked(s.slot)) {
        emit(Op::SETGLOBAL, v, s.slot, 0, s.loc);
        marked_.back().insert(s.slot);
      }
      return;
    }
    int r;
    if (s.has_op) {
      Opnd b = operand(*s.expr);  // the walker evaluates the value first, then reads x
      int cur = temp(s.var_type);
      emit(Op::GETGLOBAL, cur, s.slot, 0, s.loc);
      r = temp(s.var_type);
      emit_arith(s.assign_op, s.var_type, r, Opnd{false, cur}, b, s.op_loc);
    } else {
      r = expr(*s.expr);
    }
    emit(Op::SETGLOBAL, r, s.slot, 0, s.loc);
  }

  void if_stmt(const Stmt& s) {
    std::vector<int> to_else;
    cond(*s.expr, false, to_else);
    block(s.body);
    if (!s.has_else || s.else_body.empty()) {
      patch_here(to_else);
      return;
    }
    std::vector<int> to_end;
    if (end_reachable()) to_end.push_back(emit(Op::JMP, 0, 0, 0, s.loc));
    patch_here(to_else);
    block(s.else_body);
    patch_here(to_end);
  }

  //   top: if !cond goto exit; body; continue: LOOP top; exit:
  void while_stmt(const Stmt& s) {
    int top = label();
    std::vector<int> exits;
    cond(*s.expr, false, exits);
    loops_.emplace_back();
    block(s.body);
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    patch_here(loop.continues);
    emit(Op::LOOP, 0, 0, top, s.loc);
    patch_here(exits);
    patch_here(loop.breaks);
  }

  // Bounds are evaluated once. When the body never assigns the variable, the variable is
  // the counter itself; FORLOOP only increments it when another iteration follows, so it
  // ends holding the last value, as in the walker. Otherwise a hidden counter is copied
  // into the variable at the top of each iteration.
  void for_stmt(const Stmt& s) {
    const int var = reg_of(s.storage, s.slot);
    bool direct = var >= 0 && !assigns_reg(s.body, var);
    Opnd lo, hi;
    int counter;
    if (direct) {
      lo = operand(*s.expr);
      counter = var;
    } else {
      counter = temp(Type::Int);
      expr(*s.expr, counter);
      lo = Opnd{false, counter};
    }
    hi = operand(*s.expr2);
    if (!hi.is_k && hi.v < static_cast<int>(f_.vreg_names.size()) &&
        !f_.vreg_names[static_cast<size_t>(hi.v)].empty() &&
        (assigns_reg(s.body, hi.v) || (direct && hi.v == counter))) {
      int t = temp(Type::Int);  // a local bound that the loop itself would overwrite
      emit(Op::MOVE, t, hi.v, 0, s.loc);
      hi.v = t;
    }
    std::vector<int> exits;
    if (lo.is_k && hi.is_k) {
      if (!(f_.k[static_cast<size_t>(lo.v)].i < f_.k[static_cast<size_t>(hi.v)].i))
        exits.push_back(emit(Op::JMP, 0, 0, 0, s.loc));
    } else if (lo.is_k) {
      exits.push_back(emit(Op::JLEK_INT, hi.v, lo.v, 0, s.loc));
    } else if (hi.is_k) {
      exits.push_back(emit(Op::JGEK_INT, lo.v, hi.v, 0, s.loc));
    } else {
      exits.push_back(emit(Op::JLE_INT, hi.v, lo.v, 0, s.loc));
    }
    if (direct) {
      if (lo.is_k)
        emit(Op::LOADK, counter, lo.v, 0, s.loc);
      else if (lo.v != counter)
        emit(Op::MOVE, counter, lo.v, 0, s.loc);
    }
    // A promoted loop variable is marked assigned once, before the first iteration (which
    // assigns it the value it stores), not on each one.
    const bool mark = promoted(s.storage, s.slot) && !marked(s.slot);
    if (mark) emit(Op::SETGLOBAL, counter, s.slot, 0, s.loc);
    int top = label();
    if (!direct) {
      if (var >= 0)
        emit(Op::MOVE, var, counter, 0, s.loc);
      else
        emit(Op::SETGLOBAL, counter, s.slot, 0, s.loc);
    }
    loops_.emplace_back();
    block(s.body, promoted(s.storage, s.slot) ? s.slot : -1);
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    patch_here(loop.continues);
    emit(hi.is_k ? Op::FORLOOPK : Op::FORLOOP, counter, hi.v, top, s.loc);
    patch_here(exits);
    patch_here(loop.breaks);
  }

  const Module& m_;
  RegFunction& f_;
  const FnDecl* fn_ = nullptr;          // the function being compiled (null: top-level code)
  std::map<int, int> promoted_;         // top-level code: global index -> its register
  std::vector<std::set<int>> marked_;   // per block entered: promoted globals marked assigned
  std::vector<uint16_t> tensor_locals_;  // its Tensor-typed locals: the safe points' roots
  bool echo_ = false;
  int last_label_ = -1;
  SourceLoc cur_loc_;
  std::vector<Loop> loops_;
};

Diagnostic too_large(SourceLoc loc, const std::string& name) {
  return Diagnostic{Severity::Error, ErrorKind::Runtime, loc,
                    "'" + name + "' is too large for the register VM (16-bit operands)"};
}

}  // namespace

std::unique_ptr<RegFunction> compile_reg_function(const FnDecl& fn, const Module& module,
                                                  Diagnostic* error) {
  auto f = std::make_unique<RegFunction>();
  try {
    RegCompiler(module, *f).function(fn);
  } catch (TooLarge&) {
    if (error) *error = too_large(fn.loc, fn.name);
    return nullptr;
  }
  return f;
}

std::unique_ptr<RegFunction> compile_reg_toplevel(const Program& program, const Module& module,
                                                  bool echo, Diagnostic* error) {
  auto f = std::make_unique<RegFunction>();
  try {
    RegCompiler(module, *f).toplevel(program, echo);
  } catch (TooLarge&) {
    SourceLoc loc;
    if (!program.body.empty()) loc = program.body.front()->loc;
    if (error) *error = too_large(loc, "top-level code");
    return nullptr;
  }
  return f;
}

}  // namespace descent
