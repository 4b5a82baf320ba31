#include "lang/ast_print.h"

#include <algorithm>

#include "lang/value.h"

namespace descent {
namespace {

std::string type_label(Type t) { return t == Type::Unknown ? "" : type_name(t); }

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out + "\"";
}

TreeNode leaf(std::string head, std::string atom, const Expr& e) {
  TreeNode n;
  n.head = std::move(head);
  n.atom = std::move(atom);
  n.type = type_label(e.type);
  n.leaf = true;
  n.loc = e.loc;
  return n;
}

std::string tensor_type_text(const TensorType& t) {
  std::string out = t.elem + "[";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    out += t.dims[i].name.empty() ? std::to_string(t.dims[i].value) : t.dims[i].name;
  }
  return out + "]";
}

// A list of names as one node, "(i j)" in s-expressions: the axes of a stage or reduction.
TreeNode names_node(const std::vector<std::string>& names, SourceLoc loc) {
  TreeNode n;
  for (size_t i = 0; i < names.size(); ++i) n.head += (i ? " " : "") + names[i];
  n.loc = loc;
  return n;
}

TreeNode expr_tree(const Expr& e, bool in_kernel = false) {
  switch (e.kind) {
    case ExprKind::IntLit: return leaf("int", std::to_string(e.int_value), e);
    case ExprKind::FloatLit: return leaf("float", format_float(e.float_value), e);
    case ExprKind::BoolLit: return leaf("bool", e.bool_value ? "true" : "false", e);
    case ExprKind::StrLit: return leaf("string", quote(e.text), e);
    case ExprKind::Var: return leaf("var", e.text, e);
    case ExprKind::Axis: return leaf("axis", e.text, e);
    default: break;
  }
  TreeNode n;
  n.loc = e.loc;
  n.type = type_label(e.type);
  switch (e.kind) {
    case ExprKind::Unary: n.head = op_name(e.unary_op); break;
    case ExprKind::Binary: n.head = op_name(e.binary_op); break;
    // In a kernel only math builtins can be called: show them as operators, (max a b).
    case ExprKind::Call:
      if (in_kernel) {
        n.head = e.text;
      } else {
        n.head = "call";
        n.atom = e.text;
      }
      break;
    case ExprKind::Promote: n.head = "promote"; break;
    case ExprKind::List: n.head = "list"; break;
    case ExprKind::Index: n.head = "index"; n.atom = e.text; break;
    case ExprKind::Field: n.head = "field"; n.atom = e.text; break;
    case ExprKind::Reduce:
      n.head = e.text;
      n.kids.push_back(names_node(e.axes, e.loc));
      break;
    default: break;
  }
  for (const auto& k : e.kids) n.kids.push_back(expr_tree(*k, in_kernel));
  return n;
}

TreeNode kernel_tree(const KernelDecl& k, SourceLoc loc) {
  TreeNode n;
  n.head = "kernel";
  n.atom = k.name;
  n.loc = loc;
  if (k.has_return_type) n.type = tensor_type_text(k.return_type);
  TreeNode params;
  params.head = "params";
  params.loc = k.loc;
  for (const auto& p : k.params) {
    TreeNode pn;
    pn.head = "param";
    pn.atom = p.name;
    pn.type = p.type == Type::Tensor ? tensor_type_text(p.tensor) : type_name(p.type);
    pn.leaf = true;
    pn.loc = p.loc;
    params.kids.push_back(pn);
  }
  n.kids.push_back(params);
  for (const auto& st : k.stages) {
    TreeNode sn;
    sn.head = "stage";
    sn.atom = st.target;
    sn.loc = st.loc;
    sn.kids.push_back(names_node(st.indices, st.loc));
    if (st.value) sn.kids.push_back(expr_tree(*st.value, true));
    n.kids.push_back(sn);
  }
  TreeNode ret;
  ret.head = "return";
  ret.atom = k.result;
  ret.loc = k.result_loc;
  n.kids.push_back(ret);
  return n;
}

TreeNode block_tree(const Block& b, SourceLoc loc);

TreeNode stmt_tree(const Stmt& s) {
  TreeNode n;
  n.loc = s.loc;
  switch (s.kind) {
    case StmtKind::Expr: return expr_tree(*s.expr);
    case StmtKind::Assign:
      n.head = s.has_op ? std::string("assign-") + op_name(s.assign_op) : "assign";
      n.atom = s.name;
      n.type = type_label(s.var_type);
      n.kids.push_back(expr_tree(*s.expr));
      break;
    case StmtKind::If:
      n.head = "if";
      n.kids.push_back(expr_tree(*s.expr));
      n.kids.push_back(block_tree(s.body, s.loc));
      if (s.has_else) n.kids.push_back(block_tree(s.else_body, s.loc));
      break;
    case StmtKind::While:
      n.head = "while";
      n.kids.push_back(expr_tree(*s.expr));
      n.kids.push_back(block_tree(s.body, s.loc));
      break;
    case StmtKind::For:
      n.head = "for";
      n.atom = s.name;
      n.kids.push_back(expr_tree(*s.expr));
      n.kids.push_back(expr_tree(*s.expr2));
      n.kids.push_back(block_tree(s.body, s.loc));
      break;
    case StmtKind::Break: n.head = "break"; break;
    case StmtKind::Continue: n.head = "continue"; break;
    case StmtKind::Return:
      n.head = "return";
      if (s.expr) n.kids.push_back(expr_tree(*s.expr));
      break;
    case StmtKind::FnDecl: {
      const FnDecl& f = *s.fn;
      n.head = "fn";
      n.atom = f.name;
      TreeNode params;
      params.head = "params";
      params.loc = f.loc;
      for (const auto& p : f.params) {
        TreeNode pn;
        pn.head = "param";
        pn.atom = p.name + ":" + (p.type == Type::Tensor ? tensor_type_text(p.tensor)
                                                          : std::string(type_name(p.type)));
        pn.leaf = true;
        pn.loc = p.loc;
        params.kids.push_back(pn);
      }
      n.kids.push_back(params);
      Type r = f.return_type != Type::Unknown ? f.return_type : f.declared_return;
      if (r != Type::Unknown) n.type = type_name(r);
      n.kids.push_back(block_tree(f.body, s.loc));
      break;
    }
    case StmtKind::KernelDecl: return kernel_tree(*s.kernel, s.loc);
  }
  return n;
}

TreeNode block_tree(const Block& b, SourceLoc loc) {
  TreeNode n;
  n.head = "block";
  n.loc = loc;
  for (const auto& s : b) n.kids.push_back(stmt_tree(*s));
  return n;
}

ExprPtr clone_expr(const Expr& e) {
  auto c = std::make_unique<Expr>(e.kind, e.loc);
  c->type = e.type;
  c->height = e.height;
  c->int_value = e.int_value;
  c->float_value = e.float_value;
  c->bool_value = e.bool_value;
  c->text = e.text;
  c->unary_op = e.unary_op;
  c->binary_op = e.binary_op;
  c->operand_type = e.operand_type;
  c->storage = e.storage;
  c->slot = e.slot;
  c->check_defined = e.check_defined;
  c->builtin = e.builtin;
  c->kernel = e.kernel;
  c->axes = e.axes;
  for (const auto& k : e.kids) c->kids.push_back(clone_expr(*k));
  return c;
}

Block clone_block(const Block& b);

StmtPtr clone_stmt(const Stmt& s) {
  auto c = std::make_unique<Stmt>(s.kind, s.loc);
  if (s.expr) c->expr = clone_expr(*s.expr);
  if (s.expr2) c->expr2 = clone_expr(*s.expr2);
  c->name = s.name;
  c->op_loc = s.op_loc;
  c->has_op = s.has_op;
  c->assign_op = s.assign_op;
  c->body = clone_block(s.body);
  c->else_body = clone_block(s.else_body);
  c->has_else = s.has_else;
  c->storage = s.storage;
  c->slot = s.slot;
  c->var_type = s.var_type;
  c->fn_index = s.fn_index;
  if (s.fn) {
    c->fn = std::make_unique<FnDecl>();
    FnDecl& f = *c->fn;
    f.name = s.fn->name;
    f.loc = s.fn->loc;
    f.params = s.fn->params;
    f.declared_return = s.fn->declared_return;
    f.return_loc = s.fn->return_loc;
    f.body = clone_block(s.fn->body);
    f.index = s.fn->index;
    f.return_type = s.fn->return_type;
    f.local_names = s.fn->local_names;
    f.local_types = s.fn->local_types;
    f.return_tensor = s.fn->return_tensor;
    f.uses_tensors = s.fn->uses_tensors;
  }
  if (s.kernel) {
    c->kernel = std::make_unique<KernelDecl>();
    KernelDecl& k = *c->kernel;
    const KernelDecl& from = *s.kernel;
    k.name = from.name;
    k.loc = from.loc;
    k.params = from.params;
    k.has_return_type = from.has_return_type;
    k.return_type = from.return_type;
    for (const auto& st : from.stages) {
      KernelStage cs;
      cs.target = st.target;
      cs.loc = st.loc;
      cs.indices = st.indices;
      cs.index_locs = st.index_locs;
      if (st.value) cs.value = clone_expr(*st.value);
      k.stages.push_back(std::move(cs));
    }
    k.result = from.result;
    k.result_loc = from.result_loc;
    k.index = from.index;
  }
  return c;
}

Block clone_block(const Block& b) {
  Block out;
  for (const auto& s : b) out.push_back(clone_stmt(*s));
  return out;
}

// ---- source ranges -----------------------------------------------------------------------
// A node knows one location (a literal's token, an operator, a statement's keyword); a
// student hovering it expects the whole construct. So each node's range is the hull of its
// own token and its kids' ranges, widened until the brackets in it balance (the multiply
// of `(1 + 2) * y` reaches back to its '('), and a block is its braces.
class Ranger {
 public:
  explicit Ranger(const std::vector<Token>& tokens) : t_(tokens), match_(tokens.size(), -1) {
    std::vector<size_t> open;
    for (size_t i = 0; i < t_.size(); ++i) {
      if (opener(i)) {
        open.push_back(i);
      } else if (closer(i) && !open.empty()) {
        match_[i] = static_cast<long>(open.back());
        match_[open.back()] = static_cast<long>(i);
        open.pop_back();
      }
    }
  }

  struct Span {
    long lo = -1, hi = -1;  // token indices, inclusive; lo < 0: unknown
    bool known() const { return lo >= 0; }
    void add(const Span& o) {
      if (!o.known()) return;
      if (!known()) *this = o;
      lo = std::min(lo, o.lo), hi = std::max(hi, o.hi);
    }
  };

  Span node(TreeNode& n) {
    Span s = own(n);
    size_t first_block = n.kids.size();
    std::vector<Span> inner;  // the kids' spans, balanced already: balance skips them
    for (size_t i = 0; i < n.kids.size(); ++i) {
      if (n.kids[i].head == "block" && first_block == n.kids.size()) first_block = i;
      if (i >= first_block) continue;
      Span k = node(n.kids[i]);
      s.add(k);
      if (k.known()) inner.push_back(k);
    }
    s = balance(s, std::move(inner));
    // A call or element access with nothing inside the brackets: f(), reached by its name.
    if (s.known() && !n.leaf && t_[static_cast<size_t>(s.hi)].kind == Tok::Ident &&
        static_cast<size_t>(s.hi) + 1 < t_.size() && opener(static_cast<size_t>(s.hi) + 1) &&
        t_[static_cast<size_t>(s.hi) + 1].kind != Tok::LBrace)
      s = balance(Span{s.lo, s.hi + 1});
    // Blocks follow in order: `if c {..} else {..}`, `for i in a..b {..}`, `fn f() {..}`.
    for (size_t i = first_block; i < n.kids.size(); ++i) {
      Span b = block(n.kids[i], s.known() ? s.hi : -1);
      s.add(b);
    }
    set(n, s);
    return s;
  }

 private:
  bool opener(size_t i) const {
    Tok k = t_[i].kind;
    return k == Tok::LParen || k == Tok::LBracket || k == Tok::LBrace;
  }
  bool closer(size_t i) const {
    Tok k = t_[i].kind;
    return k == Tok::RParen || k == Tok::RBracket || k == Tok::RBrace;
  }

  // The token that starts at the node's own location.
  Span own(const TreeNode& n) const {
    if (!n.loc.valid()) return {};
    auto it = std::lower_bound(t_.begin(), t_.end(), n.loc.offset,
                               [](const Token& t, uint32_t off) { return t.loc.offset < off; });
    if (it == t_.end() || it->kind == Tok::Eof) return {};
    long i = static_cast<long>(it - t_.begin());
    return {i, i};
  }

  // Widens s until every bracket in it has its partner inside. `skip` are spans inside s that
  // are balanced already (a node's kids): their tokens need no second look, which keeps a
  // long chain (`a + b + ... `, 100,000 terms) linear instead of quadratic.
  Span balance(Span s, std::vector<Span> skip = {}) const {
    if (!s.known()) return s;
    std::sort(skip.begin(), skip.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
    // Scans [from, to], jumping over the skipped spans; widens s.
    auto scan = [&](long from, long to) {
      size_t k = 0;
      for (long i = from; i <= to; ++i) {
        while (k < skip.size() && skip[k].hi < i) ++k;
        if (k < skip.size() && skip[k].lo <= i) {
          i = skip[k].hi;
          continue;
        }
        long m = match_[static_cast<size_t>(i)];
        if (m < 0) continue;
        s.lo = std::min(s.lo, m);
        s.hi = std::max(s.hi, m);
      }
    };
    long done_lo = s.lo, done_hi = s.hi;
    scan(done_lo, done_hi);
    while (s.lo < done_lo || s.hi > done_hi) {  // the newly covered tokens only
      long lo = s.lo, hi = s.hi;
      if (lo < done_lo) scan(lo, done_lo - 1);
      if (hi > done_hi) scan(done_hi + 1, hi);
      done_lo = lo, done_hi = hi;
    }
    return s;
  }

  Tok kind(long i) const {
    return i >= 0 && static_cast<size_t>(i) < t_.size() ? t_[static_cast<size_t>(i)].kind
                                                        : Tok::Eof;
  }

  // A block whose header ends at token `after`: its braces, or (an `else if`, which has
  // none) its statements.
  Span block(TreeNode& b, long after) {
    Span s;
    for (auto& k : b.kids) s.add(node(k));
    if (after < 0) {
      set(b, s);
      return s;
    }
    long i = after + 1;
    while (kind(i) == Tok::Newline) ++i;  // `}` and `else` on separate lines
    if (kind(i) == Tok::Else) ++i;
    // `fn f(n: int) -> int {`: the return type comes before the brace; `else if`: none.
    for (long j = i; kind(j) != Tok::Eof; ++j) {
      Tok k = kind(j);
      if (k == Tok::LBrace) i = j;
      if (k == Tok::LBrace || k == Tok::Newline || k == Tok::If) break;
    }
    if (kind(i) == Tok::LBrace && match_[static_cast<size_t>(i)] > i) {
      Span braces{i, match_[static_cast<size_t>(i)]};
      if (!s.known() || (braces.lo < s.lo && braces.hi > s.hi)) s = braces;
    }
    set(b, s);
    return s;
  }

  void set(TreeNode& n, const Span& s) const {
    if (!s.known()) return;
    const Token& first = t_[static_cast<size_t>(s.lo)];
    const Token& last = t_[static_cast<size_t>(s.hi)];
    n.loc = first.loc;
    // Tokens never span lines (strings cannot), so the end is on the last token's line.
    auto len = static_cast<uint32_t>(last.text.size());
    n.end = SourceLoc{last.loc.offset + len, last.loc.line, last.loc.col + len, last.loc.file};
  }

  const std::vector<Token>& t_;
  std::vector<long> match_;  // the partner of each bracket token, -1 for the others
};

}  // namespace

TreeNode ast_to_tree(const Program& program, const std::vector<Token>& tokens) {
  TreeNode root = ast_to_tree(program);
  Ranger ranger(tokens);
  for (auto& k : root.kids) ranger.node(k);
  return root;
}

TreeNode ast_to_tree(const Program& program) {
  TreeNode root;
  root.head = "program";
  for (const auto& s : program.body) root.kids.push_back(stmt_tree(*s));
  return root;
}

Program clone_program(const Program& program) {
  Program p;
  p.source = program.source;
  p.body = clone_block(program.body);
  p.uses_tensors = program.uses_tensors;
  return p;
}

}  // namespace descent
