#include "lang/walker.h"

#include <cstdint>

namespace descent {
namespace {

// Thrown inside the walker only, caught in run(): a runtime error unwinds every Descent
// frame at once, which is exactly what the language wants.
struct RuntimeError {
  SourceLoc loc;
  std::string message;
};

// How a statement finished: normally, or by leaving its loop or function early.
enum class Flow { Normal, Break, Continue, Return };

class Walker final : public Engine {
 public:
  const char* name() const override { return "ast"; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    module_ = &module;
    globals_ = &globals;
    opts_ = &options;
    globals.resize(module.globals.size());
    steps_ = 0;
    depth_ = 0;
    stack_.clear();
    base_ = 0;
    RunResult result;
    run_on_big_stack([&] {
      char marker;
      stack_top_ = &marker;
      try {
        for (const auto& s : program.body) {
          if (options.echo && s->kind == StmtKind::Expr && s->expr->type != Type::Void) {
            Value v = eval(*s->expr);
            ++steps_;
            emit(format_value(v, s->expr->type) + "\n");
          } else {
            exec(*s);
          }
        }
      } catch (RuntimeError& e) {
        result.ok = false;
        result.error = Diagnostic{Severity::Error, ErrorKind::Runtime, e.loc, e.message};
      }
    });
    result.steps = steps_;
    return result;
  }

 private:
  [[noreturn]] void fail(SourceLoc loc, std::string msg) { throw RuntimeError{loc, std::move(msg)}; }

  void emit(const std::string& s) {
    if (opts_->out) opts_->out(s);
  }

  // Called at loop back-edges and calls: the only places a program can spend unbounded time.
  void tick(SourceLoc loc) {
    ++steps_;
    if (opts_->interrupt && opts_->interrupt->load(std::memory_order_relaxed))
      fail(loc, "interrupted");
    if (opts_->step_limit && steps_ > opts_->step_limit) fail(loc, "interrupted");
  }

  Value& local(int slot) { return stack_[base_ + static_cast<size_t>(slot)]; }

  Value& storage(Storage st, int slot) {
    return st == Storage::Local ? local(slot) : globals_->values[static_cast<size_t>(slot)];
  }

  // ---- statements ----
  Flow exec_block(const Block& b) {
    for (const auto& s : b) {
      Flow f = exec(*s);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Flow exec(const Stmt& s) {
    ++steps_;
    switch (s.kind) {
      case StmtKind::Expr: eval(*s.expr); return Flow::Normal;
      case StmtKind::Assign: assign(s); return Flow::Normal;
      case StmtKind::If:
        if (eval(*s.expr).b) return exec_block(s.body);
        return exec_block(s.else_body);
      case StmtKind::While:
        while (eval(*s.expr).b) {
          Flow f = exec_block(s.body);
          if (f == Flow::Break) break;
          if (f == Flow::Return) return f;
          tick(s.loc);
        }
        return Flow::Normal;
      case StmtKind::For: {
        // Both bounds are evaluated once, before the first iteration (LANGUAGE.md).
        int64_t lo = eval(*s.expr).i, hi = eval(*s.expr2).i;
        for (int64_t i = lo; i < hi; ++i) {
          set(s.storage, s.slot, Value::of_int(i));
          Flow f = exec_block(s.body);
          if (f == Flow::Break) break;
          if (f == Flow::Return) return f;
          tick(s.loc);
        }
        return Flow::Normal;
      }
      case StmtKind::Break: return Flow::Break;
      case StmtKind::Continue: return Flow::Continue;
      case StmtKind::Return:
        if (s.expr) ret_ = eval(*s.expr);
        return Flow::Return;
      case StmtKind::FnDecl: return Flow::Normal;
    }
    return Flow::Normal;
  }

  void set(Storage st, int slot, Value v) {
    storage(st, slot) = v;
    if (st == Storage::Global) globals_->defined[static_cast<size_t>(slot)] = 1;
  }

  void assign(const Stmt& s) {
    Value v = eval(*s.expr);
    if (s.has_op) {
      Value cur = storage(s.storage, s.slot);
      v = arith(s.assign_op, s.var_type, cur, v, s.op_loc);
    }
    set(s.storage, s.slot, v);
  }

  // ---- expressions ----
  Value eval(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return Value::of_int(e.int_value);
      case ExprKind::FloatLit: return Value::of_float(e.float_value);
      case ExprKind::BoolLit: return Value::of_bool(e.bool_value);
      case ExprKind::StrLit: return Value{};
      case ExprKind::Promote: return Value::of_float(static_cast<double>(eval(*e.kids[0]).i));
      case ExprKind::Var:
        if (e.check_defined && !globals_->defined[static_cast<size_t>(e.slot)])
          fail(e.loc, "undefined variable '" + e.text + "'");
        return storage(e.storage, e.slot);
      case ExprKind::Unary: {
        Value v = eval(*e.kids[0]);
        if (e.unary_op == UnaryOp::Not) return Value::of_bool(!v.b);
        return e.type == Type::Int ? Value::of_int(wrap_neg(v.i)) : Value::of_float(-v.f);
      }
      case ExprKind::Binary: return binary(e);
      case ExprKind::Call: return call(e);
    }
    return Value{};
  }

  Value binary(const Expr& e) {
    // && and || decide from the left operand alone when they can.
    if (e.binary_op == BinaryOp::And)
      return Value::of_bool(eval(*e.kids[0]).b && eval(*e.kids[1]).b);
    if (e.binary_op == BinaryOp::Or)
      return Value::of_bool(eval(*e.kids[0]).b || eval(*e.kids[1]).b);
    Value a = eval(*e.kids[0]);
    Value b = eval(*e.kids[1]);
    return arith(e.binary_op, e.operand_type, a, b, e.loc);
  }

  Value arith(BinaryOp op, Type t, Value a, Value b, SourceLoc loc) {
    Value out;
    if (!apply_binary(op, t, a, b, &out)) fail(loc, "division by zero");
    return out;
  }

  Value call(const Expr& e) {
    if (e.builtin != Builtin::None) return builtin(e);
    tick(e.loc);
    char marker;
    // 10,000 frames is the language's limit; the distance to the thread's stack top guards
    // against pathological expressions making each frame enormous.
    if (depth_ >= kMaxCallDepth || static_cast<size_t>(stack_top_ - &marker) > (480u << 20))
      fail(e.loc, "stack overflow");
    const FunctionInfo& f = module_->functions[static_cast<size_t>(e.slot)];
    const FnDecl& fn = *f.decl;
    // Arguments are evaluated in the caller's frame, left to right, then the new frame
    // (parameters first, then the other locals) is pushed on top of the value stack.
    size_t new_base = stack_.size();
    size_t nlocals = fn.local_names.size();
    std::vector<Value> args;
    args.reserve(e.kids.size());
    for (const auto& k : e.kids) args.push_back(eval(*k));
    new_base = stack_.size();
    stack_.resize(new_base + nlocals);
    for (size_t i = 0; i < args.size(); ++i) stack_[new_base + i] = args[i];
    size_t saved_base = base_;
    base_ = new_base;
    ++depth_;
    ret_ = Value{};
    exec_block(fn.body);
    --depth_;
    base_ = saved_base;
    stack_.resize(new_base);
    return ret_;
  }

  Value builtin(const Expr& e) {
    switch (e.builtin) {
      case Builtin::Print: {
        std::string line;
        for (size_t i = 0; i < e.kids.size(); ++i) {
          if (i) line += ' ';
          const Expr& k = *e.kids[i];
          line += k.kind == ExprKind::StrLit ? k.text : format_value(eval(k), k.type);
        }
        emit(line + "\n");
        return Value{};
      }
      case Builtin::ToFloat: return Value::of_float(eval(*e.kids[0]).f);  // kid is promoted
      case Builtin::ToInt: {
        const Expr& k = *e.kids[0];
        Value v = eval(k);
        if (k.type == Type::Int) return v;
        int64_t out;
        if (!float_to_int(v.f, &out)) fail(e.loc, "invalid conversion");
        return Value::of_int(out);
      }
      case Builtin::Abs: {
        Value v = eval(*e.kids[0]);
        if (e.type == Type::Int) return Value::of_int(v.i < 0 ? wrap_neg(v.i) : v.i);
        return Value::of_float(std::fabs(v.f));
      }
      case Builtin::Min:
      case Builtin::Max: {
        Value a = eval(*e.kids[0]), b = eval(*e.kids[1]);
        bool mn = e.builtin == Builtin::Min;
        if (e.type == Type::Int) return mn ? int_min(a, b) : int_max(a, b);
        return mn ? float_min(a, b) : float_max(a, b);
      }
      default: return Value::of_float(call_math(e.builtin, eval(*e.kids[0]).f));
    }
  }

  const Module* module_ = nullptr;
  GlobalStore* globals_ = nullptr;
  const RunOptions* opts_ = nullptr;
  std::vector<Value> stack_;  // every active frame's locals, innermost last
  size_t base_ = 0;           // where the current frame's locals start in stack_
  Value ret_;                 // the value of the return statement being executed
  int depth_ = 0;
  uint64_t steps_ = 0;
  char* stack_top_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_ast_walker() { return std::make_unique<Walker>(); }

}  // namespace descent
