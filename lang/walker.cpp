#include "lang/walker.h"

#include <algorithm>
#include <cstdint>

#include "lang/runtime_errors.h"
#include "lang/tensor_api.h"
#include "lang/tensor_checks.h"

namespace descent {
namespace {

// Thrown inside the walker only, caught in run(): a runtime error unwinds every Descent
// frame at once, which is exactly what the language wants.
struct Failure {
  SourceLoc loc;
  std::string message;
};

// How a statement finished: normally, or by leaving its loop or function early.
enum class Flow { Normal, Break, Continue, Return };

class Walker final : public Engine {
 public:
  const char* name() const override { return "ast"; }
  bool runs_tensors() const override { return true; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    module_ = &module;
    globals_ = &globals;
    opts_ = &options;
    globals.resize(module.globals.size());
    steps_ = 0;
    depth_ = 0;
    stack_.clear();
    frames_.clear();
    base_ = 0;
    RunResult result;
    run_on_big_stack([&] {
      // The frame address, not a local's: under AddressSanitizer locals live on a separate
      // "fake stack", so their addresses say nothing about the depth of the real one.
      stack_top_ = static_cast<char*>(__builtin_frame_address(0));
      try {
        for (const auto& s : program.body) {
          if (options.echo && s->kind == StmtKind::Expr && s->expr->type != Type::Void) {
            Value v = eval(*s->expr);
            ++steps_;
            emit(show(v, s->expr->type, s->expr->loc) + "\n");
          } else {
            exec(*s);
          }
          safe_point();
        }
        // The end of a run is a safe point with nothing on the stack: what no global holds
        // now is garbage, whichever input made it.
        if (opts_->tensors) collect_tensors();
      } catch (Failure& e) {
        result.ok = false;
        result.error = Diagnostic{Severity::Error, ErrorKind::Runtime, e.loc, e.message};
      }
    });
    result.steps = steps_;
    return result;
  }

 private:
  [[noreturn]] void fail(SourceLoc loc, std::string msg) {
    forget_stack_below(stack_top_);
    throw Failure{loc, std::move(msg)};
  }

  void emit(const std::string& s) {
    if (opts_->out) opts_->out(s);
  }

  // Called at loop back-edges and calls: the only places a program can spend unbounded time.
  void tick(SourceLoc loc) {
    ++steps_;
    if (opts_->interrupt && opts_->interrupt->load(std::memory_order_relaxed))
      fail(loc, runtime_error_message(RuntimeError::Interrupted));
    if (opts_->step_limit && steps_ > opts_->step_limit) fail(loc, runtime_error_message(RuntimeError::Interrupted));
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
      safe_point();
    }
    return Flow::Normal;
  }

  // ---- tensor lifetime ----
  // Between two statements every tensor this frame holds is in a variable (a temporary of
  // the statement is gone), and any temporary an enclosing call holds mid-expression is
  // older than this frame (lang/tensor_api.h, collect()).
  void safe_point() {
    if (opts_->tensors && opts_->tensors->wants_collect()) collect_tensors();
  }

  void collect_tensors() {
    std::vector<int64_t> roots;
    for (size_t g = 0; g < module_->globals.size() && g < globals_->values.size(); ++g)
      if (module_->globals[g].type == Type::Tensor && globals_->defined[g])
        roots.push_back(globals_->values[g].i);
    for (const Frame& f : frames_)
      for (size_t i = 0; i < f.fn->local_types.size(); ++i)
        if (f.fn->local_types[i] == Type::Tensor) roots.push_back(stack_[f.base + i].i);
    opts_->tensors->collect(roots, frames_.empty() ? 0 : frames_.back().first_handle);
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
          if (opts_->observe) opts_->observe(s, Value::of_int(i));
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
        ret_loc_ = s.expr ? s.expr->loc : s.loc;
        return Flow::Return;
      case StmtKind::FnDecl: return Flow::Normal;
      case StmtKind::KernelDecl: return Flow::Normal;  // kernels run when called
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
    if (opts_->observe) opts_->observe(s, v);
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
          fail(e.loc, runtime_error_text(RuntimeError::UndefinedVariable, e.text));
        return storage(e.storage, e.slot);
      case ExprKind::Unary: {
        Value v = eval(*e.kids[0]);
        if (e.unary_op == UnaryOp::Not) return Value::of_bool(!v.b);
        return e.type == Type::Int ? Value::of_int(wrap_neg(v.i)) : Value::of_float(-v.f);
      }
      case ExprKind::Binary: return binary(e);
      case ExprKind::Call: return call(e);
      case ExprKind::List: return shape_literal(e);
      case ExprKind::Index: return element(e);
      case ExprKind::Field: {
        int64_t t = eval(*e.kids[0]).i;
        TensorRuntime& r = rt(e.loc);
        return Value::of_int(r.make_shape(r.tensor_dims(t)));
      }
      case ExprKind::Reduce:
      case ExprKind::Axis: fail(e.loc, "kernel expressions run only inside kernels");
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
    if (!apply_binary(op, t, a, b, &out)) fail(loc, runtime_error_message(RuntimeError::DivisionByZero));
    return out;
  }

  Value call(const Expr& e) {
    if (e.builtin != Builtin::None) return builtin(e);
    tick(e.loc);
    if (e.kernel >= 0) return kernel_call(e);
    // 10,000 frames is the language's limit; the distance to the thread's stack top guards
    // against pathological expressions making each frame enormous.
    char* frame = static_cast<char*>(__builtin_frame_address(0));
    if (depth_ >= kMaxCallDepth || static_cast<size_t>(stack_top_ - frame) > (480u << 20))
      fail(e.loc, runtime_error_message(RuntimeError::StackOverflow));
    const FunctionInfo& f = module_->functions[static_cast<size_t>(e.slot)];
    const FnDecl& fn = *f.decl;
    // Arguments are evaluated in the caller's frame, left to right, then the new frame
    // (parameters first, then the other locals) is pushed on top of the value stack.
    size_t new_base = stack_.size();
    size_t nlocals = fn.local_names.size();
    std::vector<Value> args;
    args.reserve(e.kids.size());
    for (const auto& k : e.kids) args.push_back(eval(*k));
    std::vector<std::pair<std::string, int64_t>> bound = check_tensor_params(e, fn, args);
    new_base = stack_.size();
    stack_.resize(new_base + nlocals);
    for (size_t i = 0; i < args.size(); ++i) stack_[new_base + i] = args[i];
    size_t saved_base = base_;
    base_ = new_base;
    ++depth_;
    frames_.push_back({new_base, &fn, opts_->tensors ? opts_->tensors->next_handle() : 0});
    ret_ = Value{};
    exec_block(fn.body);
    if (fn.declared_return == Type::Tensor) check_tensor_result(fn, bound);
    frames_.pop_back();
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
          line += k.kind == ExprKind::StrLit ? k.text : show(eval(k), k.type, k.loc);
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
        if (!float_to_int(v.f, &out)) fail(e.loc, runtime_error_message(RuntimeError::InvalidConversion));
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
      case Builtin::Zeros: case Builtin::Ones: case Builtin::Rand: case Builtin::Arange:
      case Builtin::Load: case Builtin::Save: case Builtin::SumAll:
      case Builtin::Argmax: case Builtin::Reshape: case Builtin::Flatten: case Builtin::Rows:
      case Builtin::Eq: case Builtin::Mean: case Builtin::Grad: case Builtin::Param:
      case Builtin::Full:
        return tensor_builtin(e);
      default: return Value::of_float(call_math(e.builtin, eval(*e.kids[0]).f));
    }
  }

  // ---- tensors: every operation goes through the TensorRuntime; values are handles ----
  TensorRuntime& rt(SourceLoc loc) {
    if (!opts_->tensors) fail(loc, "tensor code needs a tensor runtime");
    return *opts_->tensors;
  }

  // A value as print and the REPL echo show it.
  std::string show(Value v, Type t, SourceLoc loc) {
    if (t == Type::Shape) return format_shape(rt(loc).shape_dims(v.i));
    if (t != Type::Tensor) return format_value(v, t);
    std::string out, err;
    if (!rt(loc).format(v.i, &out, &err)) fail(loc, err);
    return out;
  }

  Value shape_literal(const Expr& e) {
    std::vector<int64_t> dims;
    for (const auto& k : e.kids) {
      int64_t d = eval(*k).i;
      if (d < 1) fail(k->loc, check_shape_dim(d));
      dims.push_back(d);
    }
    return Value::of_int(rt(e.loc).make_shape(dims));
  }

  // t[i, j] (a float) or s[i] (an int); both check rank and bounds before asking the runtime.
  Value element(const Expr& e) {
    if (e.check_defined && !globals_->defined[static_cast<size_t>(e.slot)])
      fail(e.loc, runtime_error_text(RuntimeError::UndefinedVariable, e.text));
    int64_t h = storage(e.storage, e.slot).i;
    std::vector<int64_t> index;
    for (const auto& k : e.kids) index.push_back(eval(*k).i);
    TensorRuntime& r = rt(e.loc);
    const std::vector<int64_t>& dims =
        e.type == Type::Int ? r.shape_dims(h) : r.tensor_dims(h);
    std::string err;
    if (e.type == Type::Int) {
      err = check_shape_index(index[0], dims.size());
      if (!err.empty()) fail(e.kids[0]->loc, err);
      return Value::of_int(dims[static_cast<size_t>(index[0])]);
    }
    int blame = check_element_index(dims, index, e.text, &err);
    if (blame == 0) fail(e.loc, err);
    if (blame > 0) fail(e.kids[size_t(blame - 1)]->loc, err);
    double out;
    if (!r.element(h, index, &out, &err)) fail(e.loc, err);
    return Value::of_float(out);
  }

  Value kernel_call(const Expr& e) {
    std::vector<int64_t> args;
    for (const auto& k : e.kids) args.push_back(eval(*k).i);
    const KernelDecl& k = *module_->kernels[static_cast<size_t>(e.kernel)].decl;
    int64_t out;
    std::string err;
    if (!rt(e.loc).call_kernel(k, args, &out, &err)) fail(e.loc, err);
    return Value::of_int(out);
  }

  Value tensor_builtin(const Expr& e) {
    TensorRuntime& r = rt(e.loc);
    int64_t out = 0;
    std::string err;
    bool ok = true;
    switch (e.builtin) {
      case Builtin::Zeros:
      case Builtin::Ones: {
        std::vector<int64_t> dims = r.shape_dims(eval(*e.kids[0]).i);
        ok = r.create(e.builtin, dims, {}, &out, &err);
        break;
      }
      case Builtin::Rand: {
        std::vector<int64_t> dims = r.shape_dims(eval(*e.kids[0]).i);
        int64_t seed = eval(*e.kids[1]).i;
        ok = r.create(e.builtin, dims, {seed}, &out, &err);
        break;
      }
      case Builtin::Full: {
        std::vector<int64_t> dims = r.shape_dims(eval(*e.kids[0]).i);
        double value = eval(*e.kids[1]).f;
        ok = r.create(e.builtin, dims, {full_value_bits(value)}, &out, &err);
        break;
      }
      case Builtin::Arange: {
        int64_t n = eval(*e.kids[0]).i;
        if (n < 1) fail(e.loc, check_arange(n));
        ok = r.create(e.builtin, {n}, {}, &out, &err);
        break;
      }
      case Builtin::Load: ok = r.load(e.kids[0]->text, &out, &err); break;
      case Builtin::Save: {
        int64_t t = eval(*e.kids[0]).i;
        ok = r.save(t, e.kids[1]->text, &err);
        break;
      }
      case Builtin::Argmax: case Builtin::Reshape: case Builtin::Flatten: case Builtin::Rows:
      case Builtin::Eq: case Builtin::Grad: case Builtin::Param: {
        // Arguments left to right; tensors and ints apart, as TensorRuntime::host_op takes them.
        std::vector<int64_t> tensors, ints;
        for (const auto& k : e.kids) {
          Value v = eval(*k);
          if (k->type == Type::Tensor) tensors.push_back(v.i);
          else if (k->type == Type::Shape) ints = r.shape_dims(v.i);
          else ints.push_back(v.i);
        }
        if (e.builtin == Builtin::Argmax && ints.empty()) ints.push_back(-1);  // the last axis
        ok = r.host_op(e.builtin, tensors, ints, &out, &err);
        break;
      }
      default: {  // mean, sum_all
        double v = 0;
        int64_t t = eval(*e.kids[0]).i;
        if (!(e.builtin == Builtin::Mean ? r.mean(t, &v, &err) : r.sum_all(t, &v, &err)))
          fail(e.loc, err);
        return Value::of_float(v);
      }
    }
    if (!ok) fail(e.loc, err);
    return Value::of_int(out);
  }

  // fn f(x: f32[1, 784]): the declared shape is checked when the call happens. A named dim
  // must have the same size everywhere it appears in one call; the sizes bound are returned
  // for the result's check.
  std::vector<std::pair<std::string, int64_t>> check_tensor_params(
      const Expr& call, const FnDecl& fn, const std::vector<Value>& args) {
    std::vector<std::pair<std::string, int64_t>> bound;
    for (size_t i = 0; i < fn.params.size() && i < args.size(); ++i) {
      const Param& p = fn.params[i];
      if (p.type != Type::Tensor) continue;
      const std::vector<int64_t>& dims = rt(call.loc).tensor_dims(args[i].i);
      if (!fits_declared(p.tensor, dims, bound))
        fail(call.kids[i]->loc, "argument '" + p.name + "' of '" + fn.name + "' must have shape " +
                                    declared_shape(p.tensor) + ", got " + format_shape(dims));
    }
    return bound;
  }

  // fn f(...) -> f32[1, 3]: the tensor returned must have the declared shape (named dims as
  // the arguments bound them, or consistently among themselves where no argument did);
  // sema rejects it at compile time where the shapes are known there, this is the rest.
  void check_tensor_result(const FnDecl& fn, std::vector<std::pair<std::string, int64_t>> bound) {
    const std::vector<int64_t>& dims = rt(ret_loc_).tensor_dims(ret_.i);
    if (!fits_declared(fn.return_tensor, dims, bound))
      fail(ret_loc_, "'" + fn.name + "' must return a tensor of shape " +
                         declared_shape(fn.return_tensor) + ", got " + format_shape(dims));
  }

  const Module* module_ = nullptr;
  GlobalStore* globals_ = nullptr;
  const RunOptions* opts_ = nullptr;
  std::vector<Value> stack_;  // every active frame's locals, innermost last
  // The active calls, for the collector: where each frame's locals start, their types, and
  // the handle count when it began.
  struct Frame {
    size_t base;
    const FnDecl* fn;
    int64_t first_handle;
  };
  std::vector<Frame> frames_;
  size_t base_ = 0;           // where the current frame's locals start in stack_
  Value ret_;                 // the value of the return statement being executed
  SourceLoc ret_loc_;         // and where its value was written
  int depth_ = 0;
  uint64_t steps_ = 0;
  char* stack_top_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_ast_walker() { return std::make_unique<Walker>(); }

}  // namespace descent
