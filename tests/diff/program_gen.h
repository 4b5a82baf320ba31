// A seeded generator of random, well-typed Descent programs for differential testing
// (tests/diff/differential_test.cpp runs each one on every engine and compares).
//
// Every program is valid by construction: the generator tracks, as it writes, each variable's
// type (fixed by its first assignment in the text), which variables are definitely assigned
// (if/else joins, loop bodies, code after break/continue/return), which names are locals of
// a function and which are globals, and a rough cost in AST-walker steps, so that every loop
// and every recursion is bounded and a program stays small (well under 100k steps). The only
// runtime errors are the ones it plants on purpose (see expected_error()); everything else is
// guarded: int `/` and `%` by divisors that cannot be zero (`abs(e) + 1`, `e * 2 + 1`, ...),
// `int()` of floats that cannot be nan or out of range, recursion through a depth parameter
// that strictly decreases, globals read by functions only after the top level assigned them.
//
// The same seed and options give the same text on every platform: the generator uses its
// own splitmix64 and never a <random> distribution (those are implementation-defined).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace descent::testing {

struct GenOptions {
  int max_functions = 6;               // user functions besides the helpers for planted errors
  int max_top_statements = 14;         // top-level statements after the globals' prologue
  int max_block_statements = 4;        // statements per block (nested blocks get fewer)
  int max_nesting = 3;                 // block nesting below a function body / the top level
  int64_t min_budget = 800;            // estimated AST steps the top level may spend (a random
  int64_t max_budget = 12000;          //   budget in [min, max] per program)
  int error_percent = 22;              // programs built to end in a runtime error
  int boundary_recursion_percent = 3;  // safe programs that recurse exactly 10,000 frames deep
};

// Which features a generated program contains (in its text; the planted error also runs).
struct GenFeatures {
  bool break_stmt = false, continue_stmt = false, while_loop = false, for_loop = false,
       nested_loop = false, recursion = false, mutual_recursion = false, and_op = false,
       or_op = false, short_circuit_call = false, guarded_division = false, float_div = false,
       float_div_by_zero = false, float_mod = false, int_div = false, int_mod = false,
       negative_mod = false, int_min_div = false, overflow = false, float_to_int = false,
       int_to_float = false, math_builtin = false, global_in_function = false,
       shadowed_global = false, call_before_declaration = false, else_if = false,
       early_return = false, boundary_recursion = false, nested_failing_division = false,
       several_failing_divisions = false, stack_arguments = false;
};

class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint64_t seed, GenOptions options = {});
  ~ProgramGenerator();
  ProgramGenerator(const ProgramGenerator&) = delete;
  ProgramGenerator& operator=(const ProgramGenerator&) = delete;

  // The program's source text (generated once, on the first call).
  const std::string& source();
  // Valid after source(): what the program contains.
  const GenFeatures& features();
  // Valid after source(): the message of the runtime error the program is built to stop
  // with ("division by zero", "invalid conversion", "stack overflow",
  // "undefined variable 'late0'"), or "" when it must run to completion with exit code 0.
  const std::string& expected_error();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::string source_;
  bool generated_ = false;
};

}  // namespace descent::testing
