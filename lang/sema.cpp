#include "lang/sema.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace descent {
namespace {

bool is_numeric(Type t) { return t == Type::Int || t == Type::Float; }

// The leftmost position of an expression, for messages about a whole expression.
SourceLoc expr_start(const Expr& e) {
  const Expr* p = &e;
  while ((p->kind == ExprKind::Binary || p->kind == ExprKind::Promote) && !p->kids.empty())
    p = p->kids[0].get();
  return p->loc;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Definite-assignment state: which variables surely hold a value here. Code after a
// return/break/continue is unreachable, and an unreachable state joins as "everything".
struct Flow {
  std::vector<bool> set;
  bool reachable = true;
};

Flow join(const Flow& a, const Flow& b) {
  if (!a.reachable) return b;
  if (!b.reachable) return a;
  Flow out = a;
  for (size_t i = 0; i < out.set.size(); ++i) out.set[i] = a.set[i] && b.set[i];
  return out;
}

// ---- kernels ----
// The static rules of index notation (LANGUAGE.md, tensor layer). Shapes are not known
// until a call binds the named dims, so what is checked here is everything that does not
// depend on them: names, ranks, the form of index expressions, and that every axis gets an
// extent from somewhere (the lowering then computes it).
class KernelChecker {
 public:
  using ErrorFn = std::function<void(SourceLoc, std::string)>;
  KernelChecker(KernelDecl& k, ErrorFn error) : k_(k), error_(std::move(error)) {}

  void run() {
    for (const auto& p : k_.params) {
      if (buffers_.count(p.name)) {
        error_(p.loc, "duplicate parameter '" + p.name + "'");
        continue;
      }
      if (p.type != Type::Tensor) {
        error_(p.loc, "kernel parameter '" + p.name + "' must be a tensor, e.g. " + p.name +
                          ": f32[n]");
        continue;
      }
      element_type(p.tensor);
      buffers_[p.name] = Buffer{p.tensor.dims.size(), true};
    }
    if (k_.has_return_type) element_type(k_.return_type);
    for (auto& st : k_.stages) stage(st);
    auto it = buffers_.find(k_.result);
    if (it == buffers_.end()) {
      error_(k_.result_loc, "unknown buffer '" + k_.result + "'");
    } else if (it->second.is_param) {
      error_(k_.result_loc, "'" + k_.result + "' is a parameter; a kernel returns a buffer one "
                            "of its stages computes");
    } else if (k_.has_return_type && it->second.rank != k_.return_type.dims.size()) {
      error_(k_.result_loc, "kernel '" + k_.name + "' returns " +
                                plural(k_.return_type.dims.size(), "dimension") + ", but '" +
                                k_.result + "' has " + plural(it->second.rank, "dimension"));
    }
  }

 private:
  struct Buffer {
    size_t rank = 0;
    bool is_param = false;
  };

  void element_type(const TensorType& t) {
    if (t.elem != "f32") error_(t.loc, t.elem + " tensors are not supported yet (use f32)");
  }

  void stage(KernelStage& st) {
    auto it = buffers_.find(st.target);
    if (it != buffers_.end()) {
      error_(st.loc, it->second.is_param
                         ? "'" + st.target + "' is a parameter; a stage must define a new buffer"
                         : "buffer '" + st.target + "' is already defined");
    }
    spatial_ = st.indices;
    reduce_.clear();
    whole_.clear();
    if (st.value) value(st.value);
    // Spatial extents come from an access that uses the axis as a whole index, or, for the
    // returned stage, from the declared return type.
    bool from_return = k_.has_return_type && st.target == k_.result;
    for (size_t i = 0; i < st.indices.size(); ++i) {
      if (whole_.count(st.indices[i]) || from_return) continue;
      error_(st.index_locs[i], "axis '" + st.indices[i] + "' of '" + st.target +
                                   "' is never a whole index of a buffer, so its extent is "
                                   "unknown (use it alone, as in x[" + st.indices[i] +
                                   "], or declare the kernel's return type)");
    }
    // Defined after its value is checked: a stage cannot read the buffer it writes.
    if (it == buffers_.end()) buffers_[st.target] = Buffer{st.indices.size(), false};
  }

  bool in_scope(const std::string& axis) const {
    return std::find(spatial_.begin(), spatial_.end(), axis) != spatial_.end() ||
           std::find(reduce_.begin(), reduce_.end(), axis) != reduce_.end();
  }

  void unknown_name(const Expr& e) {
    if (buffers_.count(e.text))
      error_(e.loc, "buffer '" + e.text + "' must be indexed, as in " + e.text + "[i]");
    else
      error_(e.loc, "unknown axis '" + e.text + "'");
  }

  // A value: f32 arithmetic on buffer elements, axes and literals.
  void value(ExprPtr& ep) {
    Expr& e = *ep;
    e.type = Type::Float;
    switch (e.kind) {
      case ExprKind::IntLit:
        // Kernel literals are f32: rewrite the node rather than wrap it, so the lowering
        // sees one kind of constant.
        e.kind = ExprKind::FloatLit;
        e.float_value = static_cast<double>(e.int_value);
        return;
      case ExprKind::FloatLit: return;
      case ExprKind::Axis:
        if (!in_scope(e.text)) unknown_name(e);
        return;
      case ExprKind::Index: access(e); return;
      case ExprKind::Unary:
        if (e.unary_op != UnaryOp::Neg)
          error_(e.loc, std::string("operator '") + op_symbol(e.unary_op) +
                            "' is not supported in kernels");
        e.operand_type = Type::Float;
        value(e.kids[0]);
        return;
      case ExprKind::Binary:
        if (e.binary_op != BinaryOp::Add && e.binary_op != BinaryOp::Sub &&
            e.binary_op != BinaryOp::Mul && e.binary_op != BinaryOp::Div)
          error_(e.loc, std::string("operator '") + op_symbol(e.binary_op) +
                            "' is not supported in kernels");
        e.operand_type = Type::Float;
        value(e.kids[0]);
        value(e.kids[1]);
        return;
      case ExprKind::Call: call(e); return;
      case ExprKind::Reduce: reduce(e); return;
      default:
        e.type = Type::Unknown;
        error_(e.loc, "only numbers, axes, buffer elements and arithmetic can appear in a kernel");
        return;
    }
  }

  void call(Expr& e) {
    Builtin b = builtin_by_name(e.text);
    size_t want = 0;
    switch (b) {
      case Builtin::Max: case Builtin::Min: want = 2; break;
      case Builtin::Exp: case Builtin::Log: case Builtin::Sqrt: case Builtin::Abs: want = 1; break;
      default:
        error_(e.loc, "'" + e.text + "' cannot be called in a kernel (only max, min, exp, log, "
                      "sqrt and abs)");
        break;
    }
    e.builtin = b;
    e.operand_type = Type::Float;
    if (want && e.kids.size() != want)
      error_(e.loc, "'" + e.text + "' expects " + plural(want, "argument") + ", got " +
                        std::to_string(e.kids.size()));
    // The arguments are checked either way: their errors are independent, and their
    // accesses give axes their extents.
    for (auto& k : e.kids) value(k);
  }

  void reduce(Expr& e) {
    size_t before = reduce_.size();
    for (const auto& a : e.axes) {
      if (in_scope(a)) {
        error_(e.loc, "reduce axis '" + a + "' shadows an axis of the same name");
        continue;
      }
      reduce_.push_back(a);
    }
    std::set<std::string> outer_whole;
    outer_whole.swap(whole_);
    value(e.kids[0]);
    for (size_t i = before; i < reduce_.size(); ++i)
      if (!whole_.count(reduce_[i]))
        error_(e.loc, "reduce axis '" + reduce_[i] + "' is never a whole index of a buffer, so "
                      "its extent is unknown (use it alone, as in x[" + reduce_[i] + "])");
    whole_.insert(outer_whole.begin(), outer_whole.end());
    reduce_.resize(before);
  }

  void access(Expr& e) {
    auto it = buffers_.find(e.text);
    if (it == buffers_.end()) {
      error_(e.loc, "unknown buffer '" + e.text + "'");
      return;
    }
    if (it->second.rank != e.kids.size()) {
      error_(e.loc, "'" + e.text + "' has " + plural(it->second.rank, "dimension") +
                        ", but is indexed with " + std::to_string(e.kids.size()));
      return;
    }
    for (auto& k : e.kids) {
      if (k->kind == ExprKind::Axis && in_scope(k->text)) whole_.insert(k->text);
      if (!affine(*k)) {
        error_(expr_start(*k), "an index must be an affine expression of axes and int literals "
                       "(+, -, and * by a literal)");
      }
    }
  }

  // Index expressions: axes and int literals with + and -, * where one side is a literal,
  // and unary minus. Reports unknown axes itself; returns false for any other form.
  bool affine(Expr& e) {
    e.type = Type::Int;
    switch (e.kind) {
      case ExprKind::IntLit: return true;
      case ExprKind::Axis:
        if (!in_scope(e.text)) unknown_name(e);
        return true;
      case ExprKind::Unary: return e.unary_op == UnaryOp::Neg && affine(*e.kids[0]);
      case ExprKind::Binary: {
        e.operand_type = Type::Int;
        bool ok = affine(*e.kids[0]) & affine(*e.kids[1]);
        if (e.binary_op == BinaryOp::Mul)
          return ok && (e.kids[0]->kind == ExprKind::IntLit || e.kids[1]->kind == ExprKind::IntLit);
        return ok && (e.binary_op == BinaryOp::Add || e.binary_op == BinaryOp::Sub);
      }
      default: return false;
    }
  }

  KernelDecl& k_;
  ErrorFn error_;
  std::map<std::string, Buffer> buffers_;
  std::vector<std::string> spatial_, reduce_;  // the axes in scope
  std::set<std::string> whole_;  // axes seen as a whole index of an access, in this scope
};

bool is_tensor_builtin(Builtin b) {
  return b >= Builtin::Zeros && b <= Builtin::SumAll;
}

class Checker {
 public:
  Checker(Program& p, Module& m, const std::vector<uint8_t>& defined, std::vector<Diagnostic>& d)
      : prog_(p), m_(m), defined_(defined), diags_(d) {}

  bool run() {
    size_t before = diags_.size();
    declare_kernels();
    declare_functions();
    declare_globals();
    // Return types and global types may depend on each other (a function returns a
    // global, a global is set from a call), so check quietly until nothing new is learnt,
    // then once more reporting errors.
    int limit = static_cast<int>(new_functions_.size() + new_globals_.size()) * 2 + 4;
    quiet_ = true;
    for (int i = 0; i < limit; ++i) {
      std::vector<Type> before = environment();
      pass();
      if (environment() == before) break;
    }
    quiet_ = false;
    pass();
    for (auto& st : prog_.body)
      if (st->kind == StmtKind::KernelDecl)
        KernelChecker(*st->kernel, [this](SourceLoc l, std::string m) { error(l, std::move(m)); })
            .run();
    mark_tensor_users();
    for (int fi : new_functions_) {
      const FunctionInfo& f = m_.functions[fi];
      auto it = redefined_.find(fi);
      if (it != redefined_.end() && (it->second.params != f.params || it->second.ret != f.ret))
        error(f.decl->loc, "cannot redefine '" + f.name + "' with a different signature");
    }
    std::stable_sort(diags_.begin() + static_cast<long>(before), diags_.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return a.loc.line != b.loc.line ? a.loc.line < b.loc.line
                                                       : a.loc.col < b.loc.col;
                     });
    return diags_.size() == before;
  }

 private:
  void error(SourceLoc loc, std::string msg) {
    if (quiet_) return;
    diags_.push_back(Diagnostic{Severity::Error, ErrorKind::Compile, loc, std::move(msg)});
  }

  // Names that cannot be variables: builtins, functions and kernels.
  bool is_function_name(const std::string& name) const {
    return builtin_by_name(name) != Builtin::None || m_.find_function(name) >= 0 ||
           m_.find_kernel(name) >= 0;
  }
  std::string callable_kind(const std::string& name) const {
    return m_.find_kernel(name) >= 0 ? "kernel" : "function";
  }

  // ---- kernels ----
  // Like functions: a later input may redefine one (the version tells engines and caches
  // to drop what they built from the old one); one input may not define it twice.
  void declare_kernels() {
    for (auto& s : prog_.body) {
      if (s->kind != StmtKind::KernelDecl) continue;
      KernelDecl& k = *s->kernel;
      if (builtin_by_name(k.name) != Builtin::None) {
        error(k.loc, "'" + k.name + "' is already a builtin function");
        continue;
      }
      bool fn_here = std::any_of(prog_.body.begin(), prog_.body.end(), [&](const StmtPtr& f) {
        return f->kind == StmtKind::FnDecl && f->fn->name == k.name;
      });
      if (fn_here || m_.find_function(k.name) >= 0) {
        error(k.loc, "'" + k.name + "' is already a function");
        continue;
      }
      if (m_.find_global(k.name) >= 0) {
        error(k.loc, "'" + k.name + "' is already a variable");
        continue;
      }
      int idx = m_.find_kernel(k.name);
      if (idx >= 0 && std::find(new_kernels_.begin(), new_kernels_.end(), idx) != new_kernels_.end()) {
        error(k.loc, "kernel '" + k.name + "' is already defined");
        continue;
      }
      if (idx >= 0) {
        m_.kernels[idx].decl = &k;
        ++m_.kernels[idx].version;
      } else {
        idx = static_cast<int>(m_.kernels.size());
        m_.kernels.push_back(KernelInfo{k.name, &k, 0});
        m_.kernel_index[k.name] = idx;
      }
      k.index = idx;
      new_kernels_.push_back(idx);
    }
  }

  // A function or global of this input takes the name of a kernel an earlier input defined
  // (typically the prelude's add, mul, relu...): the user's program must not break because
  // the prelude grew. The kernel stays in the table (earlier call sites keep their index),
  // only its name is given up.
  void unbind_earlier_kernel(const std::string& name) { m_.kernel_index.erase(name); }

  // ---- which code touches tensors ----
  // Only the ast engine runs tensor code, so the Session needs to know which inputs do, and
  // the compiled engines which functions to leave out. A function uses tensors when its own
  // body does or when it calls one that does: iterate to a fixpoint over the call graph.
  static bool is_tensor_type(Type t) { return t == Type::Tensor || t == Type::Shape; }

  bool touches(const Expr& e) const {
    if (is_tensor_type(e.type) || e.kernel >= 0 || is_tensor_builtin(e.builtin)) return true;
    if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.slot >= 0 &&
        static_cast<size_t>(e.slot) < m_.functions.size()) {
      const FnDecl* d = m_.functions[e.slot].decl;
      if (d && d->uses_tensors) return true;
    }
    for (const auto& k : e.kids)
      if (touches(*k)) return true;
    return false;
  }
  bool touches(const Block& b) const {
    for (const auto& s : b) {
      if (s->kind == StmtKind::FnDecl || s->kind == StmtKind::KernelDecl) continue;
      if (is_tensor_type(s->var_type)) return true;
      if ((s->expr && touches(*s->expr)) || (s->expr2 && touches(*s->expr2))) return true;
      if (touches(s->body) || touches(s->else_body)) return true;
    }
    return false;
  }
  void mark_tensor_users() {
    for (int fi : new_functions_) {
      FnDecl& fn = const_cast<FnDecl&>(*m_.functions[fi].decl);
      fn.uses_tensors = is_tensor_type(fn.return_type);
      for (Type t : fn.local_types) fn.uses_tensors = fn.uses_tensors || is_tensor_type(t);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int fi : new_functions_) {
        FnDecl& fn = const_cast<FnDecl&>(*m_.functions[fi].decl);
        if (!fn.uses_tensors && touches(fn.body)) fn.uses_tensors = changed = true;
      }
    }
    prog_.uses_tensors = touches(prog_.body);
  }

  // ---- declarations ----
  void declare_functions() {
    for (auto& s : prog_.body) {
      if (s->kind != StmtKind::FnDecl) continue;
      FnDecl& fn = *s->fn;
      if (builtin_by_name(fn.name) != Builtin::None) {
        error(fn.loc, "function '" + fn.name + "' is already defined");
        continue;
      }
      if (m_.find_global(fn.name) >= 0) {
        error(fn.loc, "'" + fn.name + "' is already a variable");
        continue;
      }
      int ki = m_.find_kernel(fn.name);
      if (ki >= 0) {
        // A kernel of this input with the name was already refused by declare_kernels().
        if (std::find(new_kernels_.begin(), new_kernels_.end(), ki) != new_kernels_.end())
          continue;
        unbind_earlier_kernel(fn.name);
      }
      FunctionInfo info;
      info.name = fn.name;
      for (auto& p : fn.params) info.params.push_back(p.type);
      info.ret = fn.declared_return;
      info.decl = &fn;
      int idx = m_.find_function(fn.name);
      if (idx >= 0) {
        bool this_unit = std::find(new_functions_.begin(), new_functions_.end(), idx) !=
                         new_functions_.end();
        if (this_unit) {
          error(fn.loc, "function '" + fn.name + "' is already defined");
          continue;
        }
        redefined_[idx] = m_.functions[idx];  // a REPL redefinition: same signature required
        info.version = m_.functions[idx].version + 1;
        m_.functions[idx] = info;
      } else {
        idx = static_cast<int>(m_.functions.size());
        m_.functions.push_back(info);
        m_.function_index[fn.name] = idx;
      }
      fn.index = idx;
      new_functions_.push_back(idx);
    }
  }

  // Every name assigned at top level (also inside top-level if/while/for) is a global.
  void declare_globals() {
    std::function<void(Block&)> walk = [&](Block& b) {
      for (auto& s : b) {
        if (s->kind == StmtKind::Assign || s->kind == StmtKind::For) {
          int ki = m_.find_kernel(s->name);
          if (ki >= 0 && std::find(new_kernels_.begin(), new_kernels_.end(), ki) == new_kernels_.end())
            unbind_earlier_kernel(s->name);
          if (!is_function_name(s->name) && m_.find_global(s->name) < 0) {
            m_.global_index[s->name] = static_cast<int>(m_.globals.size());
            new_globals_.push_back(static_cast<int>(m_.globals.size()));
            m_.globals.push_back(GlobalInfo{s->name, Type::Unknown});
          }
        }
        walk(s->body);
        walk(s->else_body);
      }
    };
    walk(prog_.body);
  }

  // What one pass learns and the next one uses: inferred return types and the types of
  // this input's globals. The quiet passes stop when it no longer changes.
  std::vector<Type> environment() const {
    std::vector<Type> env;
    for (int fi : new_functions_) env.push_back(m_.functions[fi].ret);
    for (int gi : new_globals_) env.push_back(m_.globals[gi].type);
    return env;
  }

  // ---- one pass over the whole unit ----
  void pass() {
    // A global's type comes from its first assignment, whose value may involve a return
    // type only guessed in an earlier pass: recompute it every pass rather than keep a guess.
    for (int gi : new_globals_) m_.globals[gi].type = Type::Unknown;
    global_first_seen_.assign(m_.globals.size(), 0);
    for (size_t i = 0; i < m_.globals.size(); ++i)
      global_first_seen_[i] = m_.globals[i].type != Type::Unknown;
    // Top level first, so function bodies see this pass's global types.
    // Flow tracks globals there; earlier inputs' globals count if they already ran.
    fn_ = nullptr;
    flow_ = Flow{};
    flow_.set.assign(m_.globals.size(), false);
    for (size_t i = 0; i < defined_.size() && i < flow_.set.size(); ++i) flow_.set[i] = defined_[i];
    loop_depth_ = 0;
    block(prog_.body);
    for (int fi : new_functions_) check_function(fi);
  }

  void check_function(int fi) {
    FunctionInfo& info = m_.functions[fi];
    FnDecl& fn = const_cast<FnDecl&>(*info.decl);
    fn_ = &fn;
    fn_index_ = fi;
    locals_.clear();
    local_types_.clear();
    local_names_.clear();
    for (auto& p : fn.params) {
      if (locals_.count(p.name)) {
        error(p.loc, "duplicate parameter '" + p.name + "'");
        continue;
      }
      if (is_function_name(p.name)) {
        error(p.loc, "cannot assign to function '" + p.name + "'");
        continue;
      }
      add_local(p.name, p.type);
    }
    size_t nparams = local_names_.size();
    // Python's rule: every name assigned anywhere in the body is a local of the function.
    std::function<void(Block&)> walk = [&](Block& b) {
      for (auto& s : b) {
        if ((s->kind == StmtKind::Assign || s->kind == StmtKind::For) && !locals_.count(s->name) &&
            !is_function_name(s->name))
          add_local(s->name, Type::Unknown);
        walk(s->body);
        walk(s->else_body);
      }
    };
    walk(fn.body);
    local_first_seen_.assign(local_names_.size(), 0);
    for (size_t i = 0; i < nparams; ++i) local_first_seen_[i] = 1;

    flow_ = Flow{};
    flow_.set.assign(local_names_.size(), false);
    for (size_t i = 0; i < nparams; ++i) flow_.set[i] = true;
    loop_depth_ = 0;
    ret_seen_value_ = Type::Unknown;
    ret_any_value_ = false;
    ret_any_void_ = false;
    block(fn.body);

    if (fn.declared_return == Type::Unknown) {
      // Inference: the join of every returned value's type (int with float is float).
      Type inferred = ret_any_value_ ? ret_seen_value_ : Type::Void;
      info.ret = inferred;
      if (!quiet_ && ret_any_value_ && inferred == Type::Unknown)
        error(fn.loc, "cannot infer the return type of '" + fn.name + "'; annotate it with '-> int'");
    }
    if (info.ret != Type::Void && info.ret != Type::Unknown && flow_.reachable)
      error(fn.loc, "function '" + fn.name + "' may end without returning a value");
    fn.return_type = info.ret;
    fn.local_names = local_names_;
    fn.local_types = local_types_;
    fn_ = nullptr;
  }

  void add_local(const std::string& name, Type t) {
    locals_[name] = static_cast<int>(local_names_.size());
    local_names_.push_back(name);
    local_types_.push_back(t);
  }

  // ---- statements ----
  void block(Block& b) {
    for (auto& s : b) stmt(*s);
  }

  void stmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr: {
        Type t = expr(s.expr);
        if (t == Type::Str) error(s.expr->loc, "strings can only be printed");
        break;
      }
      case StmtKind::Assign: assign(s); break;
      case StmtKind::If: {
        condition(s.expr);
        Flow in = flow_;
        block(s.body);
        Flow then_flow = flow_;
        flow_ = in;
        block(s.else_body);
        flow_ = join(then_flow, flow_);
        break;
      }
      case StmtKind::While: {
        condition(s.expr);
        Flow in = flow_;
        breaks_.emplace_back();
        ++loop_depth_;
        block(s.body);
        --loop_depth_;
        // "while true" ends only through a break: after it, what every break had.
        bool forever = s.expr->kind == ExprKind::BoolLit && s.expr->bool_value;
        if (forever) {
          Flow out;
          out.set = in.set;
          out.reachable = false;
          for (auto& f : breaks_.back()) out = join(out, f);
          flow_ = out;
        } else {
          flow_ = in;
        }
        breaks_.pop_back();
        break;
      }
      case StmtKind::For: {
        for (ExprPtr* bound : {&s.expr, &s.expr2}) {
          Type t = value(*bound);
          if (t != Type::Unknown && t != Type::Int)
            error(expr_start(**bound), std::string("range bound must be int, got ") + type_name(t));
        }
        if (!resolve_target(s, s.op_loc)) {
          body_of_loop(s.body, true);
          break;
        }
        Type& vt = var_type(s);
        char& first = first_seen(s);
        if (!first) {
          first = 1;
          if (vt == Type::Unknown) set_var_type(s, Type::Int);
        } else if (vt != Type::Unknown && vt != Type::Int) {
          error(s.op_loc, "loop variable '" + s.name + "' must be int, got " + type_name(vt));
        }
        s.var_type = Type::Int;
        Flow in = flow_;
        flow_.set[s.slot] = true;
        body_of_loop(s.body, false);
        flow_ = in;  // the range may be empty: the variable is not surely set afterwards
        break;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
        if (loop_depth_ == 0) {
          error(s.loc, s.kind == StmtKind::Break ? "'break' outside a loop"
                                                 : "'continue' outside a loop");
        } else if (s.kind == StmtKind::Break) {
          breaks_.back().push_back(flow_);
        }
        flow_.reachable = false;
        break;
      case StmtKind::Return: ret(s); break;
      case StmtKind::FnDecl: break;  // bodies are checked by check_function()
      case StmtKind::KernelDecl: break;  // checked once, after the passes (KernelChecker)
    }
  }

  void body_of_loop(Block& b, bool discard) {
    Flow in = flow_;
    breaks_.emplace_back();
    ++loop_depth_;
    block(b);
    --loop_depth_;
    breaks_.pop_back();
    if (discard) flow_ = in;
  }

  void condition(ExprPtr& e) {
    Type t = value(e);
    if (t != Type::Unknown && t != Type::Bool)
      error(expr_start(*e), std::string("condition must be bool, got ") + type_name(t));
  }

  // Decides where an assigned name lives. False when it cannot be assigned at all.
  bool resolve_target(Stmt& s, SourceLoc loc) {
    if (is_function_name(s.name)) {
      error(loc, "cannot assign to " + callable_kind(s.name) + " '" + s.name + "'");
      return false;
    }
    if (fn_) {
      s.storage = Storage::Local;
      s.slot = locals_.at(s.name);
    } else {
      s.storage = Storage::Global;
      s.slot = m_.find_global(s.name);
    }
    return true;
  }
  Type& var_type(const Stmt& s) {
    return s.storage == Storage::Local ? local_types_[s.slot] : m_.globals[s.slot].type;
  }
  void set_var_type(const Stmt& s, Type t) { var_type(s) = t; }
  // Whether a variable's first assignment (in text order) was already met in this pass:
  // only that one fixes the variable's type.
  char& first_seen(const Stmt& s) {
    return s.storage == Storage::Local ? local_first_seen_[s.slot] : global_first_seen_[s.slot];
  }

  void assign(Stmt& s) {
    if (!resolve_target(s, s.loc)) {
      expr(s.expr);
      return;
    }
    Type& vt = var_type(s);
    if (s.has_op) {
      if (flow_.reachable && !flow_.set[s.slot]) error(s.loc, "undefined variable '" + s.name + "'");
      Type rt = value(s.expr);
      if (vt != Type::Unknown && rt != Type::Unknown) {
        if (!is_numeric(vt) || !is_numeric(rt)) {
          error(s.op_loc, std::string("invalid operands to '") + op_symbol(s.assign_op) + "=': " +
                              type_name(vt) + " and " + type_name(rt));
        } else if (vt == Type::Int && rt == Type::Float) {
          error(s.loc, "cannot assign float to int variable '" + s.name + "'");
        } else {
          coerce(s.expr, vt);
        }
      }
    } else {
      Type rt = value(s.expr);
      char& first = first_seen(s);
      if (!first) {
        first = 1;
        if (vt == Type::Unknown && rt != Type::Unknown) set_var_type(s, rt);
      } else if (vt != Type::Unknown && rt != Type::Unknown && vt != rt &&
                 !(vt == Type::Float && rt == Type::Int)) {
        error(s.loc, std::string("cannot assign ") + type_name(rt) + " to " + type_name(vt) +
                         " variable '" + s.name + "'");
      }
      coerce(s.expr, var_type(s));
    }
    s.var_type = var_type(s);
    if (s.slot >= 0 && static_cast<size_t>(s.slot) < flow_.set.size()) flow_.set[s.slot] = true;
  }

  void ret(Stmt& s) {
    // The returned value is read before control leaves: check it while still reachable.
    struct Leave {
      Flow& f;
      ~Leave() { f.reachable = false; }
    } leave{flow_};
    if (!fn_) {
      error(s.loc, "'return' outside a function");
      if (s.expr) expr(s.expr);
      return;
    }
    s.fn_index = fn_index_;
    const FunctionInfo& info = m_.functions[fn_index_];
    bool inferring = fn_->declared_return == Type::Unknown;
    if (!s.expr) {
      ret_any_void_ = true;
      if (info.ret != Type::Void && info.ret != Type::Unknown) {
        if (inferring)
          error(s.loc, "'" + info.name + "' returns both a value and nothing");
        else
          error(s.loc, "'" + info.name + "' must return " + type_name(info.ret) + ", got nothing");
      }
      return;
    }
    Type t = value(s.expr);
    ret_any_value_ = true;
    if (t != Type::Unknown) {
      if (ret_seen_value_ == Type::Unknown)
        ret_seen_value_ = t;
      else if (is_numeric(ret_seen_value_) && is_numeric(t) && t != ret_seen_value_)
        ret_seen_value_ = Type::Float;
    }
    Type r = info.ret;
    if (r == Type::Unknown || t == Type::Unknown || r == Type::Void) return;
    if (r == Type::Float && t == Type::Int) {
      coerce(s.expr, r);
    } else if (r != t) {
      error(expr_start(*s.expr),
            "'" + info.name + "' must return " + type_name(r) + ", got " + type_name(t));
    }
  }

  // ---- expressions ----
  // Wraps an int expression in a Promote node where a float is wanted.
  void coerce(ExprPtr& e, Type want) {
    if (want != Type::Float || e->type != Type::Int) return;
    auto p = std::make_unique<Expr>(ExprKind::Promote, e->loc);
    p->type = Type::Float;
    p->height = e->height + 1;
    p->kids.push_back(std::move(e));
    e = std::move(p);
  }

  // An expression used as a value: not a string, not a call that returns nothing.
  Type value(ExprPtr& e) {
    Type t = expr(e);
    if (t == Type::Str) {
      error(e->loc, "strings can only be printed");
      return Type::Unknown;
    }
    if (t == Type::Void) {
      error(e->loc, "'" + e->text + "' does not return a value");
      return Type::Unknown;
    }
    return t;
  }

  Type expr(ExprPtr& ep) {
    Expr& e = *ep;
    switch (e.kind) {
      case ExprKind::IntLit: return e.type = Type::Int;
      case ExprKind::FloatLit: return e.type = Type::Float;
      case ExprKind::BoolLit: return e.type = Type::Bool;
      case ExprKind::StrLit: return e.type = Type::Str;
      case ExprKind::Promote: {
        // Re-checking a tree from an earlier pass: a promotion made on a guessed type is
        // dropped when the guess changed (the caller promotes again if still needed).
        Type t = expr(e.kids[0]);
        if (t != Type::Int) {
          ExprPtr kid = std::move(e.kids[0]);
          ep = std::move(kid);
          return t;
        }
        return e.type = Type::Float;
      }
      case ExprKind::Var: return e.type = variable(e);
      case ExprKind::Unary: {
        Type t = value(e.kids[0]);
        e.operand_type = t;
        if (t == Type::Unknown) return e.type = Type::Unknown;
        if (is_tensor_type(t)) return e.type = not_on_tensors(e.loc, op_symbol(e.unary_op), t);
        bool ok = e.unary_op == UnaryOp::Neg ? is_numeric(t) : t == Type::Bool;
        if (!ok) {
          error(e.loc, std::string("invalid operand to '") + op_symbol(e.unary_op) + "': " +
                           type_name(t));
          return e.type = Type::Unknown;
        }
        return e.type = t;
      }
      case ExprKind::Binary: return e.type = binary(e);
      case ExprKind::Call: return e.type = call(e);
      case ExprKind::List: return e.type = shape_literal(e);
      case ExprKind::Index: return e.type = element(e);
      case ExprKind::Field: return e.type = field(e);
      case ExprKind::Reduce:
      case ExprKind::Axis:
        // The parser makes these only inside kernels; a tree built by hand may not.
        error(e.loc, "reductions and index variables exist only inside kernels");
        return e.type = Type::Unknown;
    }
    return Type::Unknown;
  }

  Type variable(Expr& e) {
    if (fn_) {
      auto it = locals_.find(e.text);
      if (it != locals_.end()) {
        e.storage = Storage::Local;
        e.slot = it->second;
        if (flow_.reachable && !flow_.set[e.slot]) {
          error(e.loc, "undefined variable '" + e.text + "'");
          return Type::Unknown;
        }
        return local_types_[e.slot];
      }
    }
    int g = m_.find_global(e.text);
    if (g >= 0) {
      e.storage = Storage::Global;
      e.slot = g;
      if (fn_) {
        e.check_defined = true;  // the function may run before the global is assigned
      } else if (flow_.reachable && !flow_.set[g]) {
        error(e.loc, "undefined variable '" + e.text + "'");
        return Type::Unknown;
      }
      return m_.globals[g].type;
    }
    if (is_function_name(e.text))
      error(e.loc, "'" + e.text + "' is a " + callable_kind(e.text) + ", not a variable");
    else
      error(e.loc, "undefined variable '" + e.text + "'");
    return Type::Unknown;
  }

  Type binary(Expr& e) {
    Type a = value(e.kids[0]);
    Type b = value(e.kids[1]);
    if (a == Type::Unknown || b == Type::Unknown) return Type::Unknown;
    if (is_tensor_type(a) || is_tensor_type(b))
      return not_on_tensors(e.loc, op_symbol(e.binary_op), is_tensor_type(a) ? a : b);
    auto bad = [&] {
      error(e.loc, std::string("invalid operands to '") + op_symbol(e.binary_op) + "': " +
                       type_name(a) + " and " + type_name(b));
      return Type::Unknown;
    };
    switch (e.binary_op) {
      case BinaryOp::And:
      case BinaryOp::Or:
        if (a != Type::Bool || b != Type::Bool) return bad();
        e.operand_type = Type::Bool;
        return Type::Bool;
      case BinaryOp::Eq:
      case BinaryOp::Ne:
        if (a == Type::Bool && b == Type::Bool) {
          e.operand_type = Type::Bool;
          return Type::Bool;
        }
        [[fallthrough]];
      case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
        if (!is_numeric(a) || !is_numeric(b)) return bad();
        e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
        coerce(e.kids[0], e.operand_type);
        coerce(e.kids[1], e.operand_type);
        return Type::Bool;
      default:
        if (!is_numeric(a) || !is_numeric(b)) return bad();
        e.operand_type = (a == Type::Float || b == Type::Float) ? Type::Float : Type::Int;
        coerce(e.kids[0], e.operand_type);
        coerce(e.kids[1], e.operand_type);
        return e.operand_type;
    }
  }

  bool arity(Expr& e, size_t want) {
    if (e.kids.size() == want) return true;
    error(e.loc, "'" + e.text + "' expects " + plural(want, "argument") + ", got " +
                     std::to_string(e.kids.size()));
    for (auto& k : e.kids) expr(k);
    return false;
  }

  Type call(Expr& e) {
    e.builtin = builtin_by_name(e.text);
    if (e.builtin == Builtin::Print) {
      for (auto& k : e.kids) {
        Type t = expr(k);
        if (t == Type::Void) error(k->loc, "'" + k->text + "' does not return a value");
      }
      return Type::Void;
    }
    if (is_tensor_builtin(e.builtin)) return tensor_builtin(e);
    if (e.builtin != Builtin::None) return builtin(e);
    int ki = m_.find_kernel(e.text);
    if (ki >= 0) return kernel_call(e, ki);
    int fi = m_.find_function(e.text);
    if (fi < 0) {
      bool is_var = (fn_ && locals_.count(e.text)) || m_.find_global(e.text) >= 0;
      error(e.loc, is_var ? "'" + e.text + "' is not a function"
                          : "undefined function '" + e.text + "'");
      for (auto& k : e.kids) expr(k);
      return Type::Unknown;
    }
    e.slot = fi;
    const FunctionInfo& f = m_.functions[fi];
    if (!arity(e, f.params.size())) return f.ret;
    for (size_t i = 0; i < e.kids.size(); ++i) {
      Type t = value(e.kids[i]);
      Type want = f.params[i];
      if (t == Type::Unknown) continue;
      if (want == Type::Float && t == Type::Int) {
        coerce(e.kids[i], want);
      } else if (t != want) {
        error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                          "' must be " + type_name(want) + ", got " + type_name(t));
      }
    }
    return f.ret;
  }

  // ---- tensors in scalar code ----
  Type not_on_tensors(SourceLoc loc, const char* op, Type t) {
    std::string msg = std::string("operator '") + op + "' is not defined on " +
                      (t == Type::Tensor ? "tensors" : "shapes");
    std::string sym = op;
    if (t == Type::Tensor && (sym == "+" || sym == "*"))
      msg += std::string(" (use the prelude's ") + (sym == "+" ? "add" : "mul") + "(a, b))";
    error(loc, msg);
    return Type::Unknown;
  }

  // f(a, b) where f is a kernel: every argument a tensor; shapes are checked when it runs.
  Type kernel_call(Expr& e, int ki) {
    e.kernel = ki;
    const KernelDecl& k = *m_.kernels[ki].decl;
    if (!arity(e, k.params.size())) return Type::Tensor;
    for (size_t i = 0; i < e.kids.size(); ++i) {
      Type t = value(e.kids[i]);
      if (t != Type::Unknown && t != Type::Tensor)
        error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                          "' must be tensor, got " + type_name(t));
    }
    return Type::Tensor;
  }

  Type tensor_builtin(Expr& e) {
    std::vector<Type> want;
    Type ret = Type::Tensor;
    switch (e.builtin) {
      case Builtin::Zeros: case Builtin::Ones: want = {Type::Shape}; break;
      case Builtin::Rand: want = {Type::Shape, Type::Int}; break;
      case Builtin::Arange: want = {Type::Int}; break;
      case Builtin::Load: want = {Type::Str}; break;
      case Builtin::Save: want = {Type::Tensor, Type::Str}; ret = Type::Void; break;
      default: want = {Type::Tensor}; ret = Type::Float; break;  // sum_all
    }
    if (!arity(e, want.size())) return ret;
    for (size_t i = 0; i < want.size(); ++i) {
      // A file name is the one place besides print where a string literal may appear.
      Type t = want[i] == Type::Str ? expr(e.kids[i]) : value(e.kids[i]);
      if (t == Type::Unknown || t == want[i]) continue;
      std::string msg = "argument " + std::to_string(i + 1) + " of '" + e.text + "' must be " +
                        type_name(want[i]) + ", got " + type_name(t);
      if (want[i] == Type::Shape && t == Type::Int) msg += " (a shape is a list, e.g. [2, 3])";
      error(expr_start(*e.kids[i]), msg);
    }
    return ret;
  }

  // [2, 3]: a shape, every dimension an int.
  Type shape_literal(Expr& e) {
    if (e.kids.empty()) error(e.loc, "a shape needs at least one dimension");
    bool ok = !e.kids.empty();
    for (auto& k : e.kids) {
      Type t = value(k);
      if (t == Type::Unknown) {
        ok = false;
      } else if (t != Type::Int) {
        error(expr_start(*k), std::string("shape dimensions must be int, got ") + type_name(t));
        ok = false;
      }
    }
    return ok ? Type::Shape : Type::Unknown;
  }

  // t[i, j] reads one element of a tensor (a float); s[i] one dimension of a shape (an int).
  Type element(Expr& e) {
    Type vt = variable(e);
    bool ok = true;
    for (auto& k : e.kids) {
      Type t = value(k);
      if (t == Type::Unknown) {
        ok = false;
      } else if (t != Type::Int) {
        error(expr_start(*k), std::string("index must be int, got ") + type_name(t));
        ok = false;
      }
    }
    if (vt == Type::Unknown) return Type::Unknown;
    if (vt == Type::Tensor) return ok ? Type::Float : Type::Unknown;
    if (vt == Type::Shape) {
      if (e.kids.size() != 1) {
        error(e.loc, "a shape takes one index, got " + std::to_string(e.kids.size()));
        return Type::Unknown;
      }
      return ok ? Type::Int : Type::Unknown;
    }
    error(e.loc, "'" + e.text + "' is " + (vt == Type::Int ? "an " : "a ") + type_name(vt) +
                     "; only tensors and shapes can be indexed");
    return Type::Unknown;
  }

  // t.shape
  Type field(Expr& e) {
    Type t = value(e.kids[0]);
    if (e.text != "shape") {
      error(e.loc, "unknown field '" + e.text + "' (tensors have only .shape)");
      return Type::Unknown;
    }
    if (t == Type::Unknown) return Type::Unknown;
    if (t != Type::Tensor) {
      error(e.loc, std::string("'.shape' needs a tensor, got ") + type_name(t));
      return Type::Unknown;
    }
    return Type::Shape;
  }

  Type builtin(Expr& e) {
    size_t n = (e.builtin == Builtin::Min || e.builtin == Builtin::Max) ? 2 : 1;
    if (!arity(e, n)) return Type::Unknown;
    bool float_only = e.builtin != Builtin::Abs && e.builtin != Builtin::Min &&
                      e.builtin != Builtin::Max && e.builtin != Builtin::ToFloat &&
                      e.builtin != Builtin::ToInt;
    bool unknown = false, any_float = false;
    for (size_t i = 0; i < n; ++i) {
      Type t = value(e.kids[i]);
      if (t == Type::Unknown) {
        unknown = true;
      } else if (!is_numeric(t)) {
        error(expr_start(*e.kids[i]), "argument " + std::to_string(i + 1) + " of '" + e.text +
                                          "' must be " + (float_only ? "float" : "int or float") +
                                          ", got " + type_name(t));
        unknown = true;
      } else if (t == Type::Float) {
        any_float = true;
      }
    }
    switch (e.builtin) {
      case Builtin::ToInt: return Type::Int;
      case Builtin::ToFloat: coerce(e.kids[0], Type::Float); return Type::Float;
      case Builtin::Abs: return unknown ? Type::Unknown : e.kids[0]->type;
      case Builtin::Min:
      case Builtin::Max: {
        if (unknown) return Type::Unknown;
        Type t = any_float ? Type::Float : Type::Int;
        coerce(e.kids[0], t);
        coerce(e.kids[1], t);
        e.operand_type = t;
        return t;
      }
      default: coerce(e.kids[0], Type::Float); return Type::Float;
    }
  }

  Program& prog_;
  Module& m_;
  const std::vector<uint8_t>& defined_;
  std::vector<Diagnostic>& diags_;
  bool quiet_ = false;
  std::vector<int> new_functions_, new_globals_, new_kernels_;
  std::unordered_map<int, FunctionInfo> redefined_;

  FnDecl* fn_ = nullptr;  // the function being checked, or null at top level
  int fn_index_ = -1;
  std::unordered_map<std::string, int> locals_;
  std::vector<std::string> local_names_;
  std::vector<Type> local_types_;
  Flow flow_;
  std::vector<std::vector<Flow>> breaks_;  // per enclosing loop: the states at its breaks
  int loop_depth_ = 0;
  Type ret_seen_value_ = Type::Unknown;
  bool ret_any_value_ = false, ret_any_void_ = false;

  std::vector<char> local_first_seen_, global_first_seen_;
};

}  // namespace

bool check(Program& program, Module& module, const std::vector<uint8_t>& defined,
           std::vector<Diagnostic>& diags) {
  Module saved_globals_functions;
  saved_globals_functions.globals = module.globals;
  saved_globals_functions.global_index = module.global_index;
  saved_globals_functions.functions = module.functions;
  saved_globals_functions.function_index = module.function_index;
  saved_globals_functions.kernels = module.kernels;
  saved_globals_functions.kernel_index = module.kernel_index;
  Checker c(program, module, defined, diags);
  if (c.run()) return true;
  module.globals = std::move(saved_globals_functions.globals);
  module.global_index = std::move(saved_globals_functions.global_index);
  module.functions = std::move(saved_globals_functions.functions);
  module.function_index = std::move(saved_globals_functions.function_index);
  module.kernels = std::move(saved_globals_functions.kernels);
  module.kernel_index = std::move(saved_globals_functions.kernel_index);
  return false;
}

}  // namespace descent
