// The whole native pipeline for one body, keeping every stage's result for the views.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lang/engine.h"
#include "native/backend.h"

namespace descent::native {

class ExecMemory {
 public:
  explicit ExecMemory(const std::vector<uint8_t>& bytes);
  ~ExecMemory();
  ExecMemory(const ExecMemory&) = delete;
  ExecMemory& operator=(const ExecMemory&) = delete;
  void* code() const { return code_; }

 private:
  void* code_ = nullptr;
  size_t size_ = 0;
};

struct Compiled {
  const Target* target = &x86_64_target();
  std::unique_ptr<RegFunction> src;  // owns what the code points into (print's strings)
  bool top_level = false;
  Function built;     // the DAGs as built (views)
  Function legal;     // after legalize (views)
  Function fn;        // after combine: what selection read
  MFunction selected; // after isel (views)
  MFunction mf;       // after scheduling
  std::vector<std::string> sched_log;
  Allocation alloc;
  Emitted code;       // x86-64
  A64Emitted a64_code; // AArch64
  std::unique_ptr<ExecMemory> memory;  // null until finish() (views never map memory)
};

// Runs every stage up to allocation. Null (and *error) when the code cannot be compiled.
// keep_snapshots: also keep the built and legal DAGs and the unscheduled selection (views).
// target: the machine (target.h).
std::unique_ptr<Compiled> compile(std::unique_ptr<RegFunction> virt, const Module& module,
                                  bool top_level, std::string* error, bool keep_snapshots = false,
                                  const Target& target = x86_64_target());
// A run that ended with an error: the diagnostic as it is, or a message at a location.
inline RunResult fail(const Diagnostic& d) {
  RunResult r;
  r.ok = false;
  r.error = d;
  return r;
}
inline RunResult failure(const std::string& msg, SourceLoc loc = {}) {
  return fail(Diagnostic{Severity::Error, ErrorKind::Runtime, loc, msg});
}

// A function's compiled code, kept while its declaration and version stay (the REPL redefines
// functions). Both engines hold one per Module function.
struct CachedBody {
  std::unique_ptr<Compiled> code;
  const FnDecl* decl = nullptr;
  uint32_t version = 0;
};
// Compiles the function again when `c` is stale: 1 when it did, 0 when `c` was current, -1 with
// *error (at the function) when the function cannot be compiled.
int refresh(CachedBody& c, const FunctionInfo& info, const Module& module, const Target& target, Diagnostic* error);

// Emits and encodes with the engine's site numbers; maps the bytes (when this host runs them).
// AArch64: into a64_code, never mapped. string_base: print's strings by address (-1, the
// in-process engine) or numbered from it (a program image, image.h).
// constants: AArch64's constant builder (null: a64::materialize).
void finish(Compiled& c, const std::vector<int>& site_ids, bool map = true, int string_base = -1,
            const ConstantBuilder* constants = nullptr);

}  // namespace descent::native
