// The C twin of a checked program: the same computation written in C, for Frama-C's Eva
// (analysis/eva.h compares Eva's facts about it with Descent's own, issue 37).
//
//   CTwin twin;
//   std::string error;
//   if (!make_c_twin(program, module, &twin, &error)) ...   // tensors, strings: refused
//   twin.text                -> the C file; twin.sites: where Eva is asked for a value
//
// The translation, construct by construct:
//   int -> int64_t, float -> double, bool -> int (0 or 1). Descent's ints wrap around; C's
//     signed overflow is undefined, so Eva reports an overflow alarm where Descent wraps (the
//     generated file says so in its header).
//   fn f(n: int) -> int     -> int64_t f(int64_t n), prototypes first; a function's locals
//                              are declared at its top (scope is per function in Descent too)
//   top-level code          -> main(); its variables are main's locals, or file-scope
//                              statics when a function reads them (a Descent global)
//   for i in a..b { }       -> for (int64_t i_next = a, i_end = b; i_next < i_end; i_next++)
//                              { i = i_next; ... }: both bounds evaluated once, and assigning
//                              i in the body does not change which values come next
//   print(a, "s", b)        -> descent_use_int(a); descent_use_float(b); (no output; the
//                              arguments are still evaluated, their alarms still raised)
//   min/max/abs on ints     -> small static helpers with Descent's definitions; on floats
//                              too (fabs, and min/max that keep the first argument on ties)
//   x % y on floats         -> fmod(x, y); int(f) -> (int64_t)(f); float(i) -> (double)(i)
// After every assignment, at the start of every iteration (the loop variable) and on entry
// to every function (each parameter), a call Frama_C_show_each_<var>(var) asks Eva for the
// value there: its own line of C, remembered as a TwinSite with the Descent statement's line
// and column (those of analysis::StmtFact), so the two tools' facts meet statement by
// statement. Every line of C knows the Descent line it comes from, so Eva's alarms map back.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/module.h"

namespace descent::analysis {

// One call Frama_C_show_each_<...>(var) in the twin.
struct TwinSite {
  uint32_t c_line = 0;        // its line in the C file (1-based)
  uint32_t line = 0, col = 0; // the Descent statement (an assignment's name, a for's keyword,
                              // a function's name for its parameters), as StmtFact has them
  std::string function;       // "<script>" or the Descent function's name
  std::string var;            // the Descent variable
  Type type = Type::Int;      // Int, Float or Bool
  bool param = false;         // a parameter, on entry to its function
  std::string probe;          // the C function called: "Frama_C_show_each_total"
};

struct CTwin {
  std::string file_name;              // the Descent file ("prog.ds")
  std::string text;                   // the C file
  std::vector<uint32_t> descent_line; // [C line] -> the Descent line it comes from (0: none);
                                      // index 0 unused
  std::vector<std::string> c_function;  // [C line] -> the C function it lies in ("" outside)
  std::vector<TwinSite> sites;        // in the order of the C file
  // Descent function name -> its C name, in the order of the file, and which of them the
  // top-level code never calls (directly or not): Eva analyses those from their own entry,
  // with every argument unknown ("if called with any argument").
  std::vector<std::pair<std::string, std::string>> functions;
  std::vector<std::string> uncalled;  // C names
  // The functions each function calls (C names, by the caller's C name), for which entry
  // covers which function.
  std::vector<std::pair<std::string, std::vector<std::string>>> calls;

  uint32_t line_of(uint32_t c_line) const {
    return c_line < descent_line.size() ? descent_line[c_line] : 0;
  }
  std::string function_of(uint32_t c_line) const {
    return c_line < c_function.size() ? c_function[c_line] : std::string();
  }
  // The Descent function a C name stands for ("<script>" for main), "" when none.
  std::string descent_name(const std::string& c_name) const;
  // The C functions reachable from `entry` through calls (entry included).
  std::vector<std::string> reachable_from(const std::string& entry) const;
};

// Writes the twin of a checked program (its top-level code and every function it declares or
// can call). False with *error (a sentence naming the line) for what C cannot say the same way
// here: tensors and kernels, strings beyond print's arguments, the tensor builtins. Never prints.
bool make_c_twin(const Program& program, const Module& module, CTwin* out, std::string* error);

// A 64-bit FNV-1a hash of the twin's text, as hex: recorded Eva outputs name the twin they
// were computed from.
std::string twin_hash(const CTwin& twin);

}  // namespace descent::analysis
