// The whole native pipeline for one body, keeping every stage's result for the views.
#pragma once
#include <memory>
#include <string>
#include <vector>

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
  Emitted code;
  std::unique_ptr<ExecMemory> memory;  // null until finish() (views never map memory)
};

// Runs every stage up to allocation. Null (and *error) when the code cannot be compiled.
// keep_snapshots: also keep the built and legal DAGs and the unscheduled selection (views).
// target: the machine (target.h); only one that can_emit goes on to finish().
std::unique_ptr<Compiled> compile(std::unique_ptr<RegFunction> virt, const Module& module,
                                  bool top_level, std::string* error, bool keep_snapshots = false,
                                  const Target& target = x86_64_target());
// Emits and encodes with the engine's site numbers; maps the bytes (when this host runs them).
void finish(Compiled& c, const std::vector<int>& site_ids, bool map = true);

}  // namespace descent::native
