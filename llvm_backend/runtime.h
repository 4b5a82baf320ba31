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
// A source location is (input, line, col): `input` numbers the SourceFile, as the position of
// its Program in Module::programs (the program being compiled, when the Module does not hold
// it, is programs.size()). A REPL function defined by an earlier input thus fails in that
// input, not in the one that called it.
#pragma once
#include <atomic>
#include <cstdint>
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
}  // namespace rt

// descent_rt_error's first argument.
enum class RtError : int32_t {
  DivisionByZero = 1,     // "division by zero"
  InvalidConversion = 2,  // "invalid conversion"
  StackOverflow = 3,      // "stack overflow"
  Interrupted = 4,        // "interrupted"
  UndefinedVariable = 5,  // "undefined variable 'NAME'" (name: the 4th argument)
};
// The message, exactly as the AST walker words it.
std::string rt_error_message(RtError kind, const char* name);

// The JIT's runtime. One per engine; one run at a time.
class Runtime {
 public:
  // Every symbol JIT code may refer to (the functions above and this runtime's two watch
  // variables), with its address in this process.
  std::vector<std::pair<std::string, void*>> symbols();

  // Calls entry() on the current thread with output, interrupt flag and step limit taken from
  // options. A runtime error raised by JIT code comes back as {ok=false, error}; steps are
  // the ticks counted (only when a step limit is set). inputs[i] is the SourceFile that the
  // code's input number i stands for (the error's loc.file).
  RunResult run(void (*entry)(), const RunOptions& options,
                const std::vector<const SourceFile*>& inputs = {});

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
