// The C-style printer: one expression printer and one statement walker for every language
// that writes a loop nest (tensor/tir.h) as C-like text, with virtual hooks for what differs.
//
// The shape follows tinygrad's CStyleLanguage (one base, a subclass per language):
//   - ExprPrinter prints expressions: numbers (the shortest f32 text), operator precedence,
//     infix operators, parentheses. Its spellings are C's; the TVMScript printer
//     (tir_print.cpp) overrides them (T.max, `//`, `and`, T.float32(...), A[i, j]).
//   - CPrinter adds statements: loops, blocks (bindings substituted, init as
//     `if (k == 0)`), stores, allocations, barriers. The base prints tir::print_c's C99; the
//     OpenCL generator (gpu/opencl_printer.h) overrides the hooks for address spaces,
//     work-item ids, barriers and floatN vectors.
//
// Printers also show unverified functions (a schedule bug being debugged), so the base never
// indexes past a table: a malformed node prints as `<malformed add>`, not a crash.
#pragma once
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tir {

// The shortest decimal text that reads back to the same f32 ("0.5", "1e-05", "3").
std::string shortest_f32(float v);
// "1.0f", "0.5f", "NAN", "-INFINITY": an f32 constant in C.
std::string c_float_literal(double v);
// Binding strength, loosest first (Select 0 ... calls and atoms 9); one ladder for every
// language, so parentheses go to the same places in the script and in C.
int precedence(const Expr& e);
// The row-major flat index of an access (each index times its stride), simplified; 0 for
// no indices.
ExprPtr flat_index(const Buffer& b, const std::vector<ExprPtr>& idx);

// The function's arguments: its parameters then the output, skipping any index that names
// no buffer.
std::vector<int> argument_buffers(const PrimFunc& f);
// The buffers an Allocate statement in s declares (the others live for the whole call).
std::set<int> allocated_buffers(const Stmt* s);

class ExprPrinter {
 public:
  explicit ExprPrinter(const PrimFunc& fn) : f(fn) {}
  virtual ~ExprPrinter() = default;

  std::string print(const Expr& e) const;
  std::string print_ptr(const ExprPtr& e) const { return e ? print(*e) : "<missing>"; }
  // e, parenthesised when it binds looser than min_prec.
  std::string operand(const Expr& e, int min_prec) const;
  // buffer[indices], as a load reads it and a store writes it.
  virtual std::string access(int buffer, const std::vector<ExprPtr>& idx) const;

  // The helper functions (ds_max, ...) the printed text calls: the prelude declares only these.
  const std::set<std::string>& helpers() const { return helpers_; }

  const PrimFunc& f;

 protected:
  // ---- spelling hooks (the defaults are C's) ----
  virtual std::string name(const std::string& n) const { return n; }  // variables
  virtual std::string bool_literal(bool v) const { return v ? "1" : "0"; }
  virtual std::string float_literal(double v) const { return c_float_literal(v); }
  virtual const char* infix(Op op, ScalarType operand) const;
  // Max and Min: a call, never fmax/fmin (their nan rule differs from the interpreter's).
  virtual std::string min_max(const Expr& e) const;
  virtual std::string math(const Expr& e) const;       // Unary Exp, Log, Sqrt, Abs
  virtual std::string float_mod(const Expr& e) const;  // Binary Mod on F32
  virtual std::string select(const Expr& e) const;
  // a * b + c rounded once: C's fmaf (OpenCL's fma, the script's T.fma).
  virtual std::string fused_multiply_add(const Expr& e) const;
  // An Int operand of an F32 (or F32-comparing) binary operation: C converts implicitly.
  virtual std::string int_as_float(const Expr& e, int min_prec) const { return operand(e, min_prec); }

  // The infix form of a binary operation, with the parentheses precedence asks for.
  std::string infix_binary(const Expr& e) const;
  // Records a helper the text calls, and returns its name.
  std::string call(const std::string& helper) const {
    helpers_.insert(helper);
    return helper;
  }

  // Printing is const (a printer is asked for text); which helpers it called is a record
  // the prelude reads afterwards, hence mutable.
  mutable std::set<std::string> helpers_;
};

class CPrinter : public ExprPrinter {
 public:
  explicit CPrinter(const PrimFunc& fn) : ExprPrinter(fn) {}

  // The whole function as tir::print_c prints it (prelude, temporaries, body).
  std::string print_function();

  // Statements print into out at depth (two spaces each); false when the language cannot
  // express one (the error is the subclass's to keep: the C printer never fails).
  virtual bool stmt(const Stmt* s, int depth);

  // One parameter of the function: a pointer, with its address space where there is one.
  virtual std::string param(int buffer, bool input) const;

 protected:
  virtual void line(int depth, const std::string& s) {
    out << std::string(size_t(depth) * 2, ' ') << s << "\n";
  }
  // A comment on a line of its own: `/* text */`.
  virtual std::string comment(const std::string& text) const { return "/* " + text + " */"; }

  // ---- statement hooks ----
  // C keeps every loop a loop (a pragma names its kind, a comment its work-item id); OpenCL
  // turns bound loops into work-item ids and vectorizes or unrolls the others.
  virtual bool loop(const Stmt* s, int depth);
  // `for (int64_t i = 0; i < 16; i++) {`
  virtual std::string for_header(const Stmt* s) const;
  virtual bool store(const Stmt* s, int depth);
  // What makes a store happen as the IR means it (OpenCL: only on work-item 0); "" in C.
  virtual std::string store_prefix(int /*buffer*/) const { return ""; }
  virtual bool seq(const Stmt* s, int depth);
  virtual bool allocate(const Stmt* s, int depth);
  // The declaration of a buffer an Allocate scopes ("" for none): a zeroed array in C;
  // private or floatN arrays in OpenCL (__local ones are at kernel scope).
  virtual std::string local_decl(int buffer) const;
  virtual bool barrier(int depth);
  // The body of a loop or an if (OpenCL notes that it is alone in its C scope).
  virtual bool body(const Stmt* s, int depth) { return stmt(s, depth); }

  bool block(const Stmt* b, int depth);
  bool if_then(const Stmt* s, int depth);
  // When a block's init runs: every reduce variable's binding is 0 ("" when it has none).
  std::string init_condition(const Stmt* b) const;

  std::ostringstream out;
};

}  // namespace descent::tir
