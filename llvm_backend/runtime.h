// The runtime that Descent's LLVM code calls: printing, interrupts and step limits, and
// runtime errors.
//
// Generated code never formats a value or decides how to fail: it calls one of the functions
// named below. There are two implementations of the same functions, so the same IR runs in
// both places:
//   - JIT (class Runtime): host C++ functions. print builds the line and hands it to
//     RunOptions::out; descent_rt_error records the error and longjmps back to Runtime::run,
//     straight over every JIT frame (they hold nothing that needs cleaning up).
//   - standalone objects (define_standalone_runtime): the same functions written in IR over
//     libc (printf, snprintf, strtod, write, exit), plus C's main(), so `cc prog.o -lm` links.
//     There descent_rt_error prints the diagnostic, as `descent run` would, and exits 1.
//
// Ticks (interrupts and step limits) cost a load and a branch each while nobody watches:
//   - a loop back-edge loads the byte `descent_rt_poll` and calls
//     descent_rt_tick(input, line, col) when it is nonzero;
//   - a call compares its caller's depth with the i32 `descent_rt_call_limit` and calls
//     descent_rt_call_check(depth, input, line, col) when depth >= limit. The limit is 10,000 (so
//     the one compare is also the stack-overflow check) unless the runtime watches: then 0.
// The runtime watches every tick when a step limit is set (it counts them: steps = back-edges
// + calls) or when an interrupt was requested (the flag was set before the run, or the JIT
// engine saw it go up while the code ran). Without a step limit, steps are not counted.
//
// The call depth needs no runtime state: every Descent function takes a hidden `i32 %depth`
// (its own frame number; top-level code is 0) and passes %depth + 1 to its callees.
//
// A source location is (input, line, col): `input` numbers the SourceFile. In the JIT it is
// the file's serial (each input has its own; the run is handed the files of Module::programs
// and of the program it runs, and finds the one by its serial); in views and objects, the
// position of its Program in Module::programs (UnitSpec::input_serials). A REPL function
// defined by an earlier input thus fails in that input, not in the one that called it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lang/engine.h"

namespace llvm {
class Module;
}

namespace descent::llvmbe {

// The names generated code uses (the IR declares them; the JIT binds them to Runtime's).
namespace rt {
inline constexpr const char* kPrintInt = "descent_rt_print_int";      // (i64)
inline constexpr const char* kPrintFloat = "descent_rt_print_float";  // (double)
inline constexpr const char* kPrintBool = "descent_rt_print_bool";    // (i32 0/1)
inline constexpr const char* kPrintStr = "descent_rt_print_str";      // (ptr C string)
inline constexpr const char* kPrintSpace = "descent_rt_print_space";  // () one ' '
inline constexpr const char* kPrintEnd = "descent_rt_print_end";      // () '\n': the line is out
inline constexpr const char* kTick = "descent_rt_tick";  // (i32 input, i32 line, i32 col)
// (i32 depth, i32 input, i32 line, i32 col)
inline constexpr const char* kCallCheck = "descent_rt_call_check";
// (i32 kind, i32 input, i32 line, i32 col, ptr name)
inline constexpr const char* kError = "descent_rt_error";
inline constexpr const char* kPoll = "descent_rt_poll";    // i8 global: nonzero = watch back-edges
inline constexpr const char* kCallLimit = "descent_rt_call_limit";  // i32 global: see above
// ptr global: functions too big for 10,000 frames to surely fit check their frame address
// against it on entry ("stack overflow" at the function's name); null: no check.
inline constexpr const char* kStackLimit = "descent_rt_stack_limit";

// Tensor code (the JIT only; `descent build` refuses it). Tensor and Shape values are i64
// handles into RunOptions::tensors; every operation is one call. `loc` points to a constant
// i32 table {input, line, col, line1, col1, ...}: the expression, then its parts (the dims of
// a shape literal, the indices of t[i, j], a call's arguments), so a helper that fails blames
// the same place as the walker. `...` is i64 values, `n` of them.
inline constexpr const char* kShape = "ds_shape";                  // i64 (loc, i64 n, ...)
inline constexpr const char* kShapeElement = "ds_shape_element";   // i64 (loc, i64 s, i64 i)
inline constexpr const char* kTensorShape = "ds_tensor_shape";     // i64 (loc, i64 t): t.shape
// double (loc, ptr name, i64 t, i64 n, ...): t[i, j]; name: the variable, for the message
inline constexpr const char* kTensorElement = "ds_tensor_element";
inline constexpr const char* kTensorKernel = "ds_tensor_kernel";   // i64 (loc, i32 kernel, i64 n, ...)
inline constexpr const char* kTensorZeros = "ds_tensor_zeros";     // i64 (loc, i64 shape)
inline constexpr const char* kTensorOnes = "ds_tensor_ones";       // i64 (loc, i64 shape)
inline constexpr const char* kTensorRand = "ds_tensor_rand";       // i64 (loc, i64 shape, i64 seed)
inline constexpr const char* kTensorFull = "ds_tensor_full";       // i64 (loc, i64 shape, f64 value)
inline constexpr const char* kTensorArange = "ds_tensor_arange";   // i64 (loc, i64 n)
inline constexpr const char* kTensorLoad = "ds_tensor_load";       // i64 (loc, ptr path)
inline constexpr const char* kTensorSave = "ds_tensor_save";       // void (loc, i64 t, ptr path)
inline constexpr const char* kTensorSumAll = "ds_tensor_sum_all";  // double (loc, i64 t)
inline constexpr const char* kTensorMean = "ds_tensor_mean";       // double (loc, i64 t)
// i64 (loc, i32 builtin, i64 n, ...): argmax reshape flatten rows eq (TensorRuntime::host_op);
// `...` is n pairs (kind, value), kind 0 a tensor, 1 an int, 2 a shape
inline constexpr const char* kTensorHostOp = "ds_tensor_host_op";
inline constexpr const char* kPrintTensor = "ds_print_tensor";     // void (loc, i64 t)
inline constexpr const char* kPrintShape = "ds_print_shape";       // void (loc, i64 s)
// void (loc, i32 function, i64 n, ...): a call's arguments against the declared tensor
// shapes (a non-tensor argument is passed as 0)
inline constexpr const char* kTensorCheckArgs = "ds_tensor_check_args";
// void (loc, i32 function, i64 result, i64 n, ...): the returned tensor against the declared
// shape, with the named dims the arguments (all n of them, as passed) bind
inline constexpr const char* kTensorCheckResult = "ds_tensor_check_result";
// The collector (lang/tensor_api.h). A function that uses tensors opens a frame on entry:
// ptr (i64 slots) gives it `slots` zeroed i64s where its tensor locals live, so the runtime
// sees them; it closes the frame before it returns. A safe point (void ()) after every
// statement of top-level code and of such functions collects when the runtime wants to,
// with the globals and every open frame's slots as roots.
inline constexpr const char* kTensorFrameEnter = "ds_tensor_frame_enter";
inline constexpr const char* kTensorFrameLeave = "ds_tensor_frame_leave";  // void ()
inline constexpr const char* kTensorSafePoint = "ds_tensor_safe_point";    // void ()
}  // namespace rt

// descent_rt_error's first argument.
enum class RtError : int32_t {
  DivisionByZero = 1,     // "division by zero"
  InvalidConversion = 2,  // "invalid conversion"
  StackOverflow = 3,      // "stack overflow"
  Interrupted = 4,        // "interrupted"
  UndefinedVariable = 5,  // "undefined variable 'NAME'" (name: the 4th argument)
  Tensor = 6,             // a tensor helper's message (the JIT's runtime only)
};
// The message, exactly as the AST walker words it.
std::string rt_error_message(RtError kind, const char* name);

// What the tensor helpers need besides RunOptions::tensors: the Module (kernels and
// functions by index) and the handles the tensor-typed globals hold now.
struct TensorContext {
  const Module* module = nullptr;
  std::function<void(std::vector<int64_t>&)> global_roots;  // appends them
};

// The JIT's runtime. One per engine; one run at a time.
class Runtime {
 public:
  // Every symbol JIT code may refer to (the functions above and this runtime's two watch
  // variables), with its address in this process.
  std::vector<std::pair<std::string, void*>> symbols();

  // Calls entry() on the current thread with output, interrupt flag and step limit taken from
  // options. A runtime error raised by JIT code comes back as {ok=false, error}; steps are
  // the ticks counted (only when a step limit is set). inputs are the SourceFiles the code's
  // input numbers (their serials) may stand for (the error's loc.file).
  // tensors: what tensor code needs (null: it has no Module, and fails as without a runtime).
  RunResult run(void (*entry)(), const RunOptions& options,
                const std::vector<const SourceFile*>& inputs = {},
                const TensorContext* tensors = nullptr);

  // From any thread, while run() runs: look at the interrupt flag at the next tick.
  void request_stop();

 private:
  std::atomic<uint8_t> poll_{0};         // descent_rt_poll
  std::atomic<int32_t> call_limit_{0};   // descent_rt_call_limit
  const char* stack_limit_ = nullptr;    // descent_rt_stack_limit
};

// One place where generated code can fail, for the standalone runtime's message table.
struct ErrorSite {
  RtError kind;
  uint32_t input = 0, line = 0, col = 0;
  std::string text;  // the whole diagnostic (format_diagnostic): "f.ds:3:9: error: ...\n ...^\n"
};

// Defines the runtime functions above in `m` in IR over libc (internal linkage), the watch
// variables as constants (nobody watches: the optimiser removes the polls; calls keep the
// depth check), and `int main()` that calls `entry` and returns 0. A runtime error prints the
// matching site's text to stderr and exits 1.
void define_standalone_runtime(llvm::Module& m, const std::vector<ErrorSite>& sites,
                               const std::string& entry);

}  // namespace descent::llvmbe
