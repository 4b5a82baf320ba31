// Semantic analysis, names: what each name in a unit refers to, and where it lives.
//
// A name is a builtin, a function, a kernel or a variable, never two of these. Variables
// follow Python's rule: a name assigned at top level is a global; a name assigned anywhere
// in a function body is a local of that function, for the whole body. Declaring is done
// once per input, before any checking, so uses may come before definitions; resolving a
// use (variable()) or an assignment (resolve_target()) then picks the slot the engines use.
#include <algorithm>
#include <functional>

#include "lang/sema_internal.h"
#include "lang/text.h"

namespace descent::sema_internal {

// Names that cannot be variables: builtins, functions and kernels.
bool Checker::is_function_name(const std::string& name) const {
  return builtin_by_name(name) != Builtin::None || m_.find_function(name) >= 0 ||
         m_.find_kernel(name) >= 0;
}

std::string Checker::callable_kind(const std::string& name) const {
  return m_.find_kernel(name) >= 0 ? "kernel" : "function";
}

namespace {
// Short names are left alone: one edit turns 'y' into 'x', and such a guess is noise.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.size() < 3) return "";
  std::string guess = closest_name(name, candidates);
  return guess.empty() ? "" : " (did you mean '" + guess + "'?)";
}
}  // namespace

std::string Checker::callable_guess(const std::string& name) const {
  std::vector<std::string> names = builtin_names();
  for (auto& [n, i] : m_.function_index) names.push_back(n);
  for (auto& [n, i] : m_.kernel_index) names.push_back(n);
  std::sort(names.begin(), names.end());  // a tie picks the same name on every run
  return did_you_mean(name, names);
}

std::string Checker::variable_guess(const std::string& name) const {
  std::vector<std::string> names;
  if (fn_)
    for (auto& [n, i] : locals_) names.push_back(n);
  for (auto& [n, i] : m_.global_index) names.push_back(n);
  std::sort(names.begin(), names.end());
  return did_you_mean(name, names);
}

// Like functions: a later input may redefine one (the version tells engines and caches
// to drop what they built from the old one); one input may not define it twice.
void Checker::declare_kernels() {
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
void Checker::unbind_earlier_kernel(const std::string& name) { m_.kernel_index.erase(name); }

void Checker::declare_functions() {
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
void Checker::declare_globals() {
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

void Checker::check_function(int fi) {
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

void Checker::add_local(const std::string& name, Type t) {
  locals_[name] = static_cast<int>(local_names_.size());
  local_names_.push_back(name);
  local_types_.push_back(t);
}

// Decides where an assigned name lives. False when it cannot be assigned at all.
bool Checker::resolve_target(Stmt& s, SourceLoc loc) {
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

Type& Checker::var_type(const Stmt& s) {
  return s.storage == Storage::Local ? local_types_[s.slot] : m_.globals[s.slot].type;
}

void Checker::set_var_type(const Stmt& s, Type t) { var_type(s) = t; }

// Whether a variable's first assignment (in text order) was already met in this pass:
// only that one fixes the variable's type.
char& Checker::first_seen(const Stmt& s) {
  return s.storage == Storage::Local ? local_first_seen_[s.slot] : global_first_seen_[s.slot];
}

Type Checker::variable(Expr& e) {
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
    error(e.loc, "undefined variable '" + e.text + "'" + variable_guess(e.text));
  return Type::Unknown;
}

}  // namespace descent::sema_internal
