// Private to the JIT's runtime (runtime.cpp, tensor_runtime.cpp): one run's state, which the
// runtime's functions reach through `current`, a thread_local, because JIT code passes them
// only what the program knows (values and source locations).
#pragma once
#include <csetjmp>
#include <cstdint>
#include <string>
#include <vector>

#include "llvm_backend/runtime.h"

namespace descent::llvmbe {

struct RunState {
  const RunOptions* opts = nullptr;
  uint64_t steps = 0;          // ticks seen while watching
  std::string line;            // the print line being built
  sigjmp_buf jump;             // where descent_rt_error returns to
  RtError kind = RtError::DivisionByZero;
  int32_t err_input = 0, err_line = 0, err_col = 0;
  const char* err_name = nullptr;  // a constant string in JIT code (never freed)
  std::string message;             // RtError::Tensor: what the tensor runtime said

  // ---- tensor code ----
  const TensorContext* tensors = nullptr;
  // The open frames of functions that use tensors, innermost last (the first `depth` of
  // `frames`; the rest are kept for their buffers). slots is where the function's tensor
  // locals live; first_handle is next_handle() when it began (TensorRuntime::collect).
  struct Frame {
    std::vector<int64_t> slots;
    int64_t first_handle = 0;
  };
  std::vector<Frame> frames;
  size_t depth = 0;
};

extern thread_local RunState* current;

// Reports a runtime error at (input, line, col): longjmps back to Runtime::run. Call it only
// from a frame that owns nothing needing a destructor.
extern "C" [[noreturn]] void descent_rt_error(int32_t kind, int32_t input, int32_t line,
                                              int32_t col, const char* name);

// The tensor helpers' addresses (tensor_runtime.cpp), for Runtime::symbols().
std::vector<std::pair<std::string, void*>> tensor_symbols();
// The end of a run without error: collect what no global holds (no frame is open).
void collect_at_end(RunState& s);

}  // namespace descent::llvmbe
