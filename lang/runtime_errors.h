// The language's runtime errors, in one place: every engine (the AST walker, both VMs, the
// JIT's runtime, the native engine) and the analysis' alarms take their words from here, so
// "division by zero" is written once. Each kind names where the language reference
// (docs/language.md, "Run time"; LANGUAGE.md) defines it and where it is reported, which is
// what every engine must agree on (tests/errors/ checks it on all of them).
#pragma once
#include <cstdint>
#include <string>

namespace descent {

enum class RuntimeError : uint8_t {
  DivisionByZero,     // int / or % by 0
  InvalidConversion,  // int(f) of nan or out of int's range
  StackOverflow,      // a call that would make 10,001 active frames
  UndefinedVariable,  // a global read before any assignment ran
  Interrupted,        // Ctrl-C, or a step limit reached
};

struct RuntimeErrorInfo {
  RuntimeError kind;
  const char* message;  // the exact text after "error: " ("undefined variable" takes 'NAME')
  const char* where;    // where it is reported, as docs/language.md says
};

// Every kind, in enum order.
inline constexpr RuntimeErrorInfo kRuntimeErrors[] = {
    {RuntimeError::DivisionByZero, "division by zero", "at the /, %, /= or %= operator"},
    {RuntimeError::InvalidConversion, "invalid conversion", "at int"},
    {RuntimeError::StackOverflow, "stack overflow",
     "at the callee name of the call that would make 10,001 active frames"},
    {RuntimeError::UndefinedVariable, "undefined variable", "at the name"},
    {RuntimeError::Interrupted, "interrupted", "where the run stopped"},
};

// The message of a kind: "division by zero".
constexpr const char* runtime_error_message(RuntimeError k) {
  return kRuntimeErrors[static_cast<int>(k)].message;
}
// The full message, with the variable's name where the kind takes one.
inline std::string runtime_error_text(RuntimeError k, const std::string& name = "") {
  std::string text = runtime_error_message(k);
  if (k == RuntimeError::UndefinedVariable) text += " '" + name + "'";
  return text;
}

}  // namespace descent
