// Building the control-flow graph from the checked tree, and its views.
//
// One pass over each statement list: a statement either appends an instruction to the current
// block or ends it (if, while, for, break, continue, return) and starts new ones. Code after a
// return, break or continue lands in a block no edge reaches, which is how the analysis can
// report it unreachable with its line.
#include "analysis/cfg.h"

#include "lang/value.h"

#include <functional>
#include <map>
#include <set>

namespace descent::analysis {

int ProgramCfg::function_index(const FnDecl* fn) const {
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].fn == fn) return int(i);
  return -1;
}

namespace {

class Builder {
 public:
  Builder(FunctionCfg* f, const Module& m) : f_(f), module_(m) {}

  void build(const Block& body) {
    SourceLoc first;
    for (const auto& st : body)
      if (st->kind != StmtKind::FnDecl && st->kind != StmtKind::KernelDecl) {
        first = st->loc;
        break;
      }
    cur_ = new_block("entry", first);
    f_->exit = -1;
    stmts(body);
    int exit = new_block("exit", {});
    f_->exit = exit;
    f_->blocks[size_t(exit)].term = TermKind::Exit;
    if (cur_ >= 0) jump(cur_, exit);
    for (int r : returns_) f_->blocks[size_t(r)].succs.push_back(exit);
    for (auto& b : f_->blocks)
      for (int s : b.succs) f_->blocks[size_t(s)].preds.push_back(b.id);
  }

 private:
  FunctionCfg* f_;
  const Module& module_;
  int cur_ = -1;  // the block being filled; -1 after a jump (code here is unreachable)
  std::vector<int> returns_;
  struct Loop {
    int cont, brk;
  };
  std::vector<Loop> loops_;

  int new_block(const std::string& label, SourceLoc loc) {
    BasicBlock b;
    b.id = int(f_->blocks.size());
    b.label = label;
    b.loc = loc;
    f_->blocks.push_back(std::move(b));
    return f_->blocks.back().id;
  }
  BasicBlock& blk(int id) { return f_->blocks[size_t(id)]; }
  void jump(int from, int to) {
    blk(from).term = TermKind::Jump;
    blk(from).succs = {to};
  }
  // Code after a jump still gets a block (unreachable): its facts show "unreachable".
  int current(SourceLoc loc) {
    if (cur_ < 0) cur_ = new_block("dead", loc);
    if (!blk(cur_).loc.valid()) blk(cur_).loc = loc;
    return cur_;
  }

  int var_of(const Stmt& s) {
    if (s.storage == Storage::Global) {
      for (size_t i = 0; i < f_->vars.size(); ++i)
        if (f_->vars[i].storage == Storage::Global && f_->vars[i].slot == s.slot) return int(i);
      return -1;
    }
    return s.slot;  // locals: vars[slot] is the slot
  }
  int hidden(const std::string& name) {
    f_->vars.push_back({name, Type::Int, Storage::Local, -1});
    return int(f_->vars.size()) - 1;
  }

  void stmts(const Block& body) {
    for (const auto& s : body) stmt(*s);
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr: {
        Instr in;
        in.kind = InstrKind::Eval;
        in.stmt = &s;
        in.expr = s.expr.get();
        in.loc = s.loc;
        blk(current(s.loc)).instrs.push_back(in);
        return;
      }
      case StmtKind::Assign: {
        Instr in;
        in.kind = InstrKind::Assign;
        in.stmt = &s;
        in.expr = s.expr.get();
        in.var = var_of(s);
        in.loc = s.loc;
        blk(current(s.loc)).instrs.push_back(in);
        return;
      }
      case StmtKind::If: {
        int head = current(s.loc);
        blk(head).term = TermKind::Branch;
        blk(head).cond = s.expr.get();
        blk(head).term_stmt = &s;
        int then_b = new_block("if.then", s.body.empty() ? s.loc : s.body.front()->loc);
        int else_b = new_block(s.has_else ? "if.else" : "if.end",
                               s.else_body.empty() ? SourceLoc{} : s.else_body.front()->loc);
        blk(head).succs = {then_b, else_b};
        cur_ = then_b;
        stmts(s.body);
        int then_end = cur_;
        if (!s.has_else) {
          if (then_end >= 0) jump(then_end, else_b);
          cur_ = else_b;
          return;
        }
        cur_ = else_b;
        stmts(s.else_body);
        int else_end = cur_;
        if (then_end < 0 && else_end < 0) {
          cur_ = -1;
          return;
        }
        int join = new_block("if.end", {});
        if (then_end >= 0) jump(then_end, join);
        if (else_end >= 0) jump(else_end, join);
        cur_ = join;
        return;
      }
      case StmtKind::While: {
        int before = current(s.loc);
        int head = new_block("while.head", s.loc);
        jump(before, head);
        blk(head).loop_head = true;
        blk(head).term = TermKind::Branch;
        blk(head).cond = s.expr.get();
        blk(head).term_stmt = &s;
        int body = new_block("while.body", s.body.empty() ? s.loc : s.body.front()->loc);
        int exit = new_block("while.end", {});
        blk(head).succs = {body, exit};
        loops_.push_back({head, exit});
        cur_ = body;
        stmts(s.body);
        if (cur_ >= 0) jump(cur_, head);
        loops_.pop_back();
        cur_ = exit;
        return;
      }
      case StmtKind::For: {
        int before = current(s.loc);
        Instr init;
        init.kind = InstrKind::LoopInit;
        init.stmt = &s;
        init.expr = s.expr.get();
        init.expr2 = s.expr2.get();
        init.var = hidden(s.name + ".next");
        init.var2 = hidden(s.name + ".end");
        init.loc = s.loc;
        blk(before).instrs.push_back(init);
        int head = new_block("for.head", s.loc);
        jump(before, head);
        blk(head).loop_head = true;
        blk(head).term = TermKind::LoopTest;
        blk(head).term_stmt = &s;
        blk(head).var = init.var;
        blk(head).var2 = init.var2;
        int body = new_block("for.body", s.loc);
        int step = new_block("for.step", s.loc);
        int exit = new_block("for.end", {});
        blk(head).succs = {body, exit};
        Instr bind;
        bind.kind = InstrKind::LoopBind;
        bind.stmt = &s;
        bind.var = var_of(s);
        bind.var2 = init.var;
        bind.loc = s.loc;
        blk(body).instrs.push_back(bind);
        Instr inc;
        inc.kind = InstrKind::LoopStep;
        inc.stmt = &s;
        inc.var = init.var;
        inc.loc = s.loc;
        blk(step).instrs.push_back(inc);
        jump(step, head);
        loops_.push_back({step, exit});
        cur_ = body;
        stmts(s.body);
        if (cur_ >= 0) jump(cur_, step);
        loops_.pop_back();
        cur_ = exit;
        return;
      }
      case StmtKind::Break:
      case StmtKind::Continue: {
        int from = current(s.loc);
        if (!loops_.empty()) jump(from, s.kind == StmtKind::Break ? loops_.back().brk : loops_.back().cont);
        blk(from).term_stmt = &s;
        cur_ = -1;
        return;
      }
      case StmtKind::Return: {
        int from = current(s.loc);
        blk(from).term = TermKind::Return;
        blk(from).cond = s.expr.get();
        blk(from).term_stmt = &s;
        returns_.push_back(from);
        cur_ = -1;
        return;
      }
      case StmtKind::FnDecl:
      case StmtKind::KernelDecl:
        return;
    }
  }
};

// The user functions an expression calls.
void calls_in(const Expr& e, std::vector<int>* out) {
  if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.kernel < 0 && e.slot >= 0)
    out->push_back(e.slot);
  for (const auto& k : e.kids)
    if (k) calls_in(*k, out);
}

void calls_in(const Block& body, std::vector<int>* out) {
  for (const auto& s : body) {
    if (s->expr) calls_in(*s->expr, out);
    if (s->expr2) calls_in(*s->expr2, out);
    calls_in(s->body, out);
    calls_in(s->else_body, out);
  }
}

FunctionCfg build_function(const FnDecl* fn, const Program* program, const Module& m) {
  FunctionCfg f;
  if (fn) {
    f.name = fn->name;
    f.fn = fn;
    f.num_params = int(fn->params.size());
    for (size_t i = 0; i < fn->local_names.size(); ++i)
      f.vars.push_back({fn->local_names[i], i < fn->local_types.size() ? fn->local_types[i] : Type::Unknown,
                        Storage::Local, int(i)});
    Builder(&f, m).build(fn->body);
  } else {
    f.name = "<script>";
    for (size_t g = 0; g < m.globals.size(); ++g)
      f.vars.push_back({m.globals[g].name, m.globals[g].type, Storage::Global, int(g)});
    Builder(&f, m).build(program->body);
  }
  return f;
}

}  // namespace

ProgramCfg build_cfg(const Program& program, const Module& module) {
  ProgramCfg cfg;
  cfg.program = &program;
  cfg.module = &module;
  cfg.functions.push_back(build_function(nullptr, &program, module));
  // The functions reachable through calls, in the order they are first met.
  std::vector<int> todo;
  calls_in(program.body, &todo);
  std::set<int> seen;
  auto add_uncalled = [&] {  // the input's own functions that nothing called yet
    for (const auto& st : program.body)
      if (st->kind == StmtKind::FnDecl && st->fn)
        for (size_t g = 0; g < module.functions.size(); ++g)
          if (module.functions[g].decl == st->fn.get() && !seen.count(int(g))) {
            todo.push_back(int(g));
            return;
          }
  };
  if (todo.empty()) add_uncalled();
  for (size_t i = 0; i < todo.size(); ++i) {
    int fi = todo[i];
    const FnDecl* fn = fi >= 0 && size_t(fi) < module.functions.size() ? module.functions[size_t(fi)].decl : nullptr;
    if (fn && seen.insert(fi).second) {
      cfg.functions.push_back(build_function(fn, &program, module));
      calls_in(fn->body, &todo);
    }
    // Then the input's own functions that nothing calls (analysed with unknown arguments),
    // and what they call; checked after every entry, the last one may be a repeat (a
    // recursive call).
    if (i + 1 == todo.size()) add_uncalled();
  }
  return cfg;
}

// ---- views ----------------------------------------------------------------------------------

int binary_precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Eq: case BinaryOp::Ne: return 3;
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return 4;
    case BinaryOp::Add: case BinaryOp::Sub: return 5;
    default: return 6;
  }
}

namespace {

std::string float_text(double v) {
  std::string s = format_value(Value::of_float(v), Type::Float);
  return s;
}

// Appends e's source text to `out`, stopping once out is longer than `limit` (alarm
// messages quote expressions; a 45,000-term sum must not cost 45,000 copies of itself).
void expr_prec(const Expr& e, int outer, std::string& out, size_t limit) {
  if (out.size() > limit) return;
  switch (e.kind) {
    case ExprKind::IntLit: out += std::to_string(e.int_value); return;
    case ExprKind::FloatLit: out += float_text(e.float_value); return;
    case ExprKind::BoolLit: out += e.bool_value ? "true" : "false"; return;
    case ExprKind::StrLit: out += "\"" + e.text + "\""; return;
    case ExprKind::Var: out += e.text; return;
    case ExprKind::Promote: expr_prec(*e.kids[0], outer, out, limit); return;
    case ExprKind::Unary:
      out += op_symbol(e.unary_op);
      expr_prec(*e.kids[0], 7, out, limit);
      return;
    case ExprKind::Binary: {
      int p = binary_precedence(e.binary_op);
      if (p < outer) out += "(";
      expr_prec(*e.kids[0], p, out, limit);
      out += std::string(" ") + op_symbol(e.binary_op) + " ";
      expr_prec(*e.kids[1], p + 1, out, limit);
      if (p < outer) out += ")";
      return;
    }
    case ExprKind::Call:
    case ExprKind::Index:
    case ExprKind::List: {
      out += e.kind == ExprKind::List ? "[" : e.text + (e.kind == ExprKind::Call ? "(" : "[");
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (i) out += ", ";
        expr_prec(*e.kids[i], 0, out, limit);
      }
      out += e.kind == ExprKind::Call ? ")" : "]";
      return;
    }
    case ExprKind::Field:
      expr_prec(*e.kids[0], 8, out, limit);
      out += "." + e.text;
      return;
    case ExprKind::Reduce:
    case ExprKind::Axis: out += e.text; return;
  }
}

}  // namespace

std::string expr_text(const Expr& e) {
  std::string out;
  expr_prec(e, 0, out, std::string::npos);
  return out;
}

std::string expr_text(const Expr& e, size_t max_chars) {
  std::string out;
  expr_prec(e, 0, out, max_chars);
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  return out;
}

std::string instr_text(const FunctionCfg& f, const Instr& in) {
  auto name = [&](int v) { return v >= 0 && size_t(v) < f.vars.size() ? f.vars[size_t(v)].name : "?"; };
  switch (in.kind) {
    case InstrKind::Assign: {
      std::string op = in.stmt && in.stmt->has_op ? std::string(op_symbol(in.stmt->assign_op)) + "=" : "=";
      return name(in.var) + " " + op + " " + (in.expr ? expr_text(*in.expr) : "?");
    }
    case InstrKind::Eval: return in.expr ? expr_text(*in.expr) : "?";
    case InstrKind::LoopInit:
      return name(in.var) + " = " + expr_text(*in.expr) + "; " + name(in.var2) + " = " + expr_text(*in.expr2);
    case InstrKind::LoopBind: return name(in.var) + " = " + name(in.var2);
    case InstrKind::LoopStep: return name(in.var) + " = " + name(in.var) + " + 1";
  }
  return "?";
}

std::string term_text(const FunctionCfg& f, const BasicBlock& b) {
  auto id = [](int v) { return "B" + std::to_string(v); };
  switch (b.term) {
    case TermKind::Jump:
      return b.succs.empty() ? "end" : "goto " + id(b.succs[0]);
    case TermKind::Branch:
      return "if " + (b.cond ? expr_text(*b.cond) : std::string("?")) + " -> " + id(b.succs[0]) +
             " else " + id(b.succs[1]);
    case TermKind::LoopTest:
      return "if " + f.vars[size_t(b.var)].name + " < " + f.vars[size_t(b.var2)].name + " -> " +
             id(b.succs[0]) + " else " + id(b.succs[1]);
    case TermKind::Return:
      return "return" + (b.cond ? " " + expr_text(*b.cond) : std::string()) + " -> " +
             id(b.succs.empty() ? -1 : b.succs[0]);
    case TermKind::Exit: return "exit";
  }
  return "?";
}

namespace {

std::string header(const FunctionCfg& f) {
  if (!f.fn) return "<script>";
  std::string s = "fn " + f.name + "(";
  for (int i = 0; i < f.num_params; ++i)
    s += (i ? ", " : "") + f.vars[size_t(i)].name + ": " + type_name(f.vars[size_t(i)].type);
  return s + ")";
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '<' || c == '>' || c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string cfg_text(const ProgramCfg& cfg, const std::string& function) {
  std::string out;
  for (const auto& f : cfg.functions) {
    if (!function.empty() && f.name != function) continue;
    if (!out.empty()) out += "\n";
    out += header(f) + "\n";
    for (const auto& b : f.blocks) {
      out += "  B" + std::to_string(b.id) + " (" + b.label;
      if (b.loc.valid()) out += ", line " + std::to_string(b.loc.line);
      if (b.loop_head) out += ", loop head";
      out += ")";
      if (!b.preds.empty()) {
        out += " <- ";
        for (size_t i = 0; i < b.preds.size(); ++i) out += (i ? ", B" : "B") + std::to_string(b.preds[i]);
      } else if (b.id != 0) {
        out += " <- none";
      }
      out += "\n";
      for (const auto& in : b.instrs) out += "    " + instr_text(f, in) + "\n";
      out += "    " + term_text(f, b) + "\n";
    }
  }
  if (out.empty()) out = "no function '" + function + "' in the graph\n";
  return out;
}

std::string cfg_dot(const ProgramCfg& cfg, const std::string& function) {
  std::string out = "digraph cfg {\n  node [shape=record, fontname=\"monospace\", fontsize=10];\n";
  for (size_t fi = 0; fi < cfg.functions.size(); ++fi) {
    const auto& f = cfg.functions[fi];
    if (!function.empty() && f.name != function) continue;
    std::string p = "f" + std::to_string(fi) + "_";
    out += "  subgraph cluster_" + std::to_string(fi) + " {\n    label=\"" + dot_escape(header(f)) + "\";\n";
    for (const auto& b : f.blocks) {
      std::string label = "B" + std::to_string(b.id) + " " + b.label + "\\l";
      for (const auto& in : b.instrs) label += dot_escape(instr_text(f, in)) + "\\l";
      label += dot_escape(term_text(f, b)) + "\\l";
      out += "    " + p + std::to_string(b.id) + " [label=\"{" + label + "}\"" +
             (b.loop_head ? ", style=bold" : "") + "];\n";
    }
    for (const auto& b : f.blocks)
      for (size_t k = 0; k < b.succs.size(); ++k) {
        std::string attr;
        if (b.term == TermKind::Branch || b.term == TermKind::LoopTest) attr = k == 0 ? " [label=\"T\"]" : " [label=\"F\"]";
        out += "    " + p + std::to_string(b.id) + " -> " + p + std::to_string(b.succs[k]) + attr + ";\n";
      }
    out += "  }\n";
  }
  return out + "}\n";
}

}  // namespace descent::analysis
