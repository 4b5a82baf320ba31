// The Module: everything compiled so far in one session, so that a REPL line can call a
// function or read a global defined by an earlier line. Each engine keeps its own code for
// the functions, but names, types and slots are decided here, once.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/ast.h"

namespace descent {

struct GlobalInfo {
  std::string name;
  Type type = Type::Unknown;  // fixed by the first assignment in program text
};

struct FunctionInfo {
  std::string name;
  std::vector<Type> params;
  Type ret = Type::Unknown;
  const FnDecl* decl = nullptr;  // the latest definition (a REPL may redefine a function)
  uint32_t version = 0;          // bumped on each redefinition, so engines can recompile
};

struct KernelInfo {
  std::string name;
  const KernelDecl* decl = nullptr;  // the latest definition
  uint32_t version = 0;              // bumped on each redefinition
};

struct Module {
  std::vector<GlobalInfo> globals;
  std::unordered_map<std::string, int> global_index;
  std::vector<FunctionInfo> functions;
  std::unordered_map<std::string, int> function_index;
  std::vector<KernelInfo> kernels;
  std::unordered_map<std::string, int> kernel_index;
  // The checked Programs that declared a function or a kernel (declarations point into
  // them, and caches know declarations by address), then the newest input, whatever it
  // holds. The Session drops an input of statements alone when the next one comes.
  std::vector<std::shared_ptr<Program>> programs;

  int find_global(const std::string& name) const {
    auto it = global_index.find(name);
    return it == global_index.end() ? -1 : it->second;
  }
  int find_kernel(const std::string& name) const {
    auto it = kernel_index.find(name);
    return it == kernel_index.end() ? -1 : it->second;
  }
  int find_function(const std::string& name) const {
    auto it = function_index.find(name);
    return it == function_index.end() ? -1 : it->second;
  }
};

// What a view of compiled code covers (the bytecode listings, live intervals, LLVM IR,
// machine code): some input's top-level code, or none, and some functions of the Module.
// The REPL's `:reg alloc` is the last input's code and the functions it declares (of());
// `:reg alloc fib` is fib's latest definition alone, whichever input defined it, as Python's
// dis.dis(fib) shows one function.
struct CodeScope {
  const Program* script = nullptr;       // whose top-level code is shown; null: none
  std::vector<const FnDecl*> functions;  // shown in this order, after the script
  bool echo = false;  // the script ran in the REPL: expression statements end in an echo

  static CodeScope of(const Program& program, bool echo = false) {
    CodeScope s{&program, {}, echo};
    for (const auto& st : program.body)
      if (st->kind == StmtKind::FnDecl && st->fn) s.functions.push_back(st->fn.get());
    return s;
  }
};

}  // namespace descent
