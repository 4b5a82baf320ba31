// The control-flow graph of a checked program: what the abstract interpreter (analysis.h) walks
// and the visualizer draws. One graph per function, and one for the input's top-level code
// ("<script>"), each a list of basic blocks: straight-line instructions, then one way out.
//
// The instructions stay close to the source, so a fact can be shown next to the line it
// belongs to: an assignment keeps its AST expression (calls, && and || included) rather than
// three-address code. What the source leaves implicit is spelled out:
//
//   for i in lo..hi { body }           B0: i.next = lo; i.end = hi      (both once: LANGUAGE.md)
//                                      B1 (loop head): if i.next < i.end -> B2, B3
//                                      B2: i = i.next; body...; i.next = i.next + 1 -> B1
//
// `i.next` and `i.end` are hidden variables: assigning `i` in the body does not change which
// values the loop takes next, exactly as every engine runs it.
#pragma once
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/module.h"

namespace descent::analysis {

// A variable of one graph: a local slot of the function (or a global, at top level), or a
// hidden loop variable. Indexes into FunctionCfg::vars.
struct VarInfo {
  std::string name;  // "i", "i.next", "i.end"
  Type type = Type::Int;
  Storage storage = Storage::Local;  // Local (slot in the frame) or Global (top level)
  int slot = -1;                     // the frame slot or global index; -1 for hidden ones
};

enum class InstrKind : uint8_t {
  Assign,    // vars[var] = expr (or vars[var] op= expr when stmt->has_op)
  Eval,      // expr for its effects: a call, print
  LoopInit,  // vars[var] (i.next) = expr (lo); vars[var2] (i.end) = expr2 (hi)
  LoopBind,  // vars[var] (i) = vars[var2] (i.next): the loop variable at the body's start
  LoopStep,  // vars[var] (i.next) = vars[var] + 1
};

struct Instr {
  InstrKind kind = InstrKind::Assign;
  const Stmt* stmt = nullptr;  // the statement it comes from (For for the loop kinds)
  const Expr* expr = nullptr;  // Assign/Eval: the value; LoopInit: lo
  const Expr* expr2 = nullptr; // LoopInit: hi
  int var = -1, var2 = -1;     // see the kinds
  SourceLoc loc;
};

// How a block ends.
enum class TermKind : uint8_t {
  Jump,      // -> succs[0]
  Branch,    // if cond -> succs[0] else succs[1]
  LoopTest,  // if vars[var] < vars[var2] -> succs[0] (body) else succs[1] (exit)
  Return,    // return expr (may be null) -> the exit block
  Exit,      // the function's end (its one exit block)
};

struct BasicBlock {
  int id = 0;
  std::string label;  // "entry", "if.then", "while.head", "for.body", "exit", ...
  std::vector<Instr> instrs;
  TermKind term = TermKind::Jump;
  const Expr* cond = nullptr;   // Branch: the condition; Return: the value (or null)
  const Stmt* term_stmt = nullptr;  // the If/While/For/Return that ends it (null for Jump/Exit)
  int var = -1, var2 = -1;      // LoopTest
  std::vector<int> succs, preds;
  bool loop_head = false;       // the target of a back edge: widening happens here
  SourceLoc loc;                // its first line (for views)
};

struct FunctionCfg {
  std::string name;              // "<script>" for the top level, else the function's name
  const FnDecl* fn = nullptr;    // null for the top level
  std::vector<VarInfo> vars;     // locals (params first) or globals, then hidden loop vars
  std::vector<BasicBlock> blocks;  // blocks[0] is the entry
  int exit = -1;                 // the exit block
  int num_params = 0;
};

struct ProgramCfg {
  const Program* program = nullptr;
  const Module* module = nullptr;
  std::vector<FunctionCfg> functions;  // [0]: the top level; the functions it may call; the rest
  int function_index(const FnDecl* fn) const;  // -1 if absent
};

// The graph of a checked program's top-level code and of every function of the Module that
// code can reach (declared by this input or an earlier one), then of the input's own
// functions that nothing calls (and what they call).
ProgramCfg build_cfg(const Program& program, const Module& module);

// Views: blocks with their instructions in source syntax, as text and as Graphviz DOT (one
// cluster per function). `function` picks one graph by name ("" for all).
std::string cfg_text(const ProgramCfg& cfg, const std::string& function = "");
std::string cfg_dot(const ProgramCfg& cfg, const std::string& function = "");
// One instruction or terminator as a line of source-like text ("i.next = i.next + 1").
std::string instr_text(const FunctionCfg& f, const Instr& in);
std::string term_text(const FunctionCfg& f, const BasicBlock& b);
// Binding power of a binary operator as LANGUAGE.md orders them (|| 1, && 2, == != 3,
// < <= > >= 4, + - 5, * / % 6); C orders them the same way (the C twin uses it too).
int binary_precedence(BinaryOp op);
// An expression in source syntax (variables by name); the second cut after max_chars ("...").
std::string expr_text(const Expr& e);
std::string expr_text(const Expr& e, size_t max_chars);

}  // namespace descent::analysis
