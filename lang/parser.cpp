#include "lang/parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "lang/text.h"

namespace descent {
namespace {

// Binding power of each binary operator, lowest first (LANGUAGE.md's precedence table).
enum Prec { kNone, kOr, kAnd, kEquality, kComparison, kTerm, kFactor, kUnary };

Prec infix_prec(Tok t) {
  switch (t) {
    case Tok::OrOr: return kOr;
    case Tok::AndAnd: return kAnd;
    case Tok::EqEq: case Tok::BangEq: return kEquality;
    case Tok::Less: case Tok::LessEq: case Tok::Greater: case Tok::GreaterEq: return kComparison;
    case Tok::Plus: case Tok::Minus: return kTerm;
    case Tok::Star: case Tok::Slash: case Tok::Percent: return kFactor;
    default: return kNone;
  }
}

BinaryOp binary_op(Tok t) {
  switch (t) {
    case Tok::Plus: return BinaryOp::Add;
    case Tok::Minus: return BinaryOp::Sub;
    case Tok::Star: return BinaryOp::Mul;
    case Tok::Slash: return BinaryOp::Div;
    case Tok::Percent: return BinaryOp::Mod;
    case Tok::EqEq: return BinaryOp::Eq;
    case Tok::BangEq: return BinaryOp::Ne;
    case Tok::Less: return BinaryOp::Lt;
    case Tok::LessEq: return BinaryOp::Le;
    case Tok::Greater: return BinaryOp::Gt;
    case Tok::GreaterEq: return BinaryOp::Ge;
    case Tok::AndAnd: return BinaryOp::And;
    default: return BinaryOp::Or;
  }
}

bool is_assign_op(Tok t) {
  return t == Tok::Assign || t == Tok::PlusAssign || t == Tok::MinusAssign ||
         t == Tok::StarAssign || t == Tok::SlashAssign || t == Tok::PercentAssign;
}

// Thrown only inside this file, to unwind to the statement loop after a syntax error
// (it never crosses the library boundary: parse() catches it).
struct SyntaxError {};

class Parser {
 public:
  Parser(std::shared_ptr<const SourceFile> src, std::vector<Token> tokens,
         std::vector<Diagnostic>& diags)
      : src_(std::move(src)), tokens_(std::move(tokens)), diags_(diags) {}

  // program := { statement terminator }
  Program program() {
    Program p;
    p.source = src_;
    skip_separators();
    while (!check(Tok::Eof)) {
      if (auto s = statement_with_recovery(/*top_level=*/true)) p.body.push_back(std::move(s));
      // A stray '}' at top level was reported by the statement that met it; step over it.
      if (check(Tok::RBrace)) advance();
      skip_separators();
    }
    return p;
  }

 private:
  // ---- token plumbing ----
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool check(Tok t) const { return peek().kind == t; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool match(Tok t) {
    if (!check(t)) return false;
    advance();
    return true;
  }

  [[noreturn]] void fail(SourceLoc loc, std::string msg) {
    diags_.push_back(Diagnostic{Severity::Error, ErrorKind::Compile, loc, std::move(msg)});
    throw SyntaxError{};
  }
  // A lexer error token found where a token was expected: report the lexer's message.
  [[noreturn]] void fail_at_current(std::string msg) {
    const Token& t = peek();
    if (t.kind == Tok::Error) fail(t.loc, t.error);
    fail(t.loc, std::move(msg));
  }
  const Token& expect(Tok t, const char* what) {
    if (!check(t)) fail_at_current(std::string("expected ") + what);
    return advance();
  }

  void skip_separators() {
    while (check(Tok::Newline) || check(Tok::Semicolon)) advance();
  }

  // Panic mode: drop tokens up to the end of the broken statement, keeping braces balanced
  // so the next statement starts on a clean slate.
  void synchronize() {
    int depth = 0;
    while (!check(Tok::Eof)) {
      Tok k = peek().kind;
      if (depth == 0 && (k == Tok::Newline || k == Tok::Semicolon)) return;
      if (depth == 0 && k == Tok::RBrace) return;
      if (k == Tok::LBrace) ++depth;
      if (k == Tok::RBrace) --depth;
      advance();
    }
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser, SourceLoc loc) : p(parser) {
      if (++p.depth_ > kMaxNesting) {
        --p.depth_;
        p.fail(loc, "nesting too deep");
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- statements ----
  StmtPtr statement_with_recovery(bool top_level) {
    size_t start = pos_;
    try {
      StmtPtr s = statement(top_level);
      terminator(start);
      return s;
    } catch (SyntaxError&) {
      synchronize();
      return nullptr;
    }
  }

  // terminator := NEWLINE | ';' | (before) '}' | EOF
  // `start` is the statement's first token, for the misspelt-keyword hint.
  void terminator(size_t start) {
    if (check(Tok::Newline) || check(Tok::Semicolon)) {
      advance();
      return;
    }
    if (check(Tok::RBrace) || check(Tok::Eof)) return;
    misspelt_keyword(tokens_[start], /*statement_start=*/true);
    misspelt_keyword(peek(), /*statement_start=*/false);
    fail_at_current("expected newline or ';' after statement");
  }

  // A misspelt keyword parses as a name, so the error surfaces a token or two later, at a
  // place that says nothing of the cause: `whle (x < 3) {` is a call of whle followed by a
  // stray '{', and `} esle {` a statement running on after the if. When the statement began
  // with a name one edit away from a keyword that starts statements (or the stray token is
  // a name near `else`), name the keyword at the word itself.
  void misspelt_keyword(const Token& t, bool statement_start) {
    if (t.kind != Tok::Ident || t.text.size() < 2) return;
    static const std::vector<std::string> starters = {"fn", "return", "if", "while", "for",
                                                      "break", "continue", "kernel"};
    static const std::vector<std::string> followers = {"else", "in"};
    std::string guess = closest_name(t.text, statement_start ? starters : followers);
    if (guess.empty()) return;
    fail(t.loc, "'" + std::string(t.text) + "' is not a keyword (did you mean '" + guess + "'?)");
  }

  // statement := fn_decl | if_stmt | while_stmt | for_stmt | 'break' | 'continue'
  //            | return_stmt | assignment | expression
  StmtPtr statement(bool top_level) {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Fn:
        if (!top_level) fail(t.loc, "functions must be declared at top level");
        return fn_decl();
      case Tok::If: return if_stmt();
      case Tok::While: return while_stmt();
      case Tok::For: return for_stmt();
      case Tok::Break:
      case Tok::Continue: {
        advance();
        return std::make_unique<Stmt>(t.kind == Tok::Break ? StmtKind::Break : StmtKind::Continue,
                                      t.loc);
      }
      case Tok::Return: return return_stmt();
      case Tok::Kernel:
        if (!top_level) fail(t.loc, "kernels must be declared at top level");
        return kernel_decl();
      default: return simple_stmt();
    }
  }

  // fn_decl := 'fn' IDENT '(' [param {',' param}] ')' ['->' type] block
  StmtPtr fn_decl() {
    SourceLoc fn_loc = advance().loc;
    auto fn = std::make_unique<FnDecl>();
    const Token& name = expect(Tok::Ident, "function name");
    fn->name = std::string(name.text);
    fn->loc = name.loc;
    fn->params = params();
    if (match(Tok::Arrow)) fn->declared_return = type_name_here(&fn->return_loc, &fn->return_tensor);
    fn->body = block();
    auto s = std::make_unique<Stmt>(StmtKind::FnDecl, fn_loc);
    s->fn = std::move(fn);
    return s;
  }

  // params := '(' [param {',' param}] ')'
  // param  := IDENT [':' type]
  std::vector<Param> params() {
    std::vector<Param> out;
    expect(Tok::LParen, "'('");
    if (!check(Tok::RParen)) {
      do {
        const Token& pn = expect(Tok::Ident, "parameter name");
        Param p{std::string(pn.text), pn.loc, Type::Int, pn.loc, {}};
        if (match(Tok::Colon)) p.type = type_name_here(&p.type_loc, &p.tensor);
        out.push_back(std::move(p));
      } while (match(Tok::Comma));
    }
    expect(Tok::RParen, "')'");
    return out;
  }

  // type        := 'int' | 'float' | 'bool' | tensor_type
  // tensor_type := ('f32' | 'i32') '[' dim {',' dim} ']'
  // dim         := INT | IDENT
  // A tensor type fills *tensor and returns Type::Tensor.
  Type type_name_here(SourceLoc* loc, TensorType* tensor) {
    const Token& t = expect(Tok::Ident, "type name");
    *loc = t.loc;
    if (t.text == "int") return Type::Int;
    if (t.text == "float") return Type::Float;
    if (t.text == "bool") return Type::Bool;
    if (!check(Tok::LBracket)) fail(t.loc, "unknown type '" + std::string(t.text) + "'");
    // Only the element types LANGUAGE.md names are words here; sema decides which of them
    // the tensor layer supports.
    if (t.text != "f32" && t.text != "i32")
      fail(t.loc, "unknown tensor element type '" + std::string(t.text) + "' (use f32)");
    tensor->elem = std::string(t.text);
    tensor->loc = t.loc;
    tensor->dims.clear();
    advance();  // '['
    do {
      const Token& d = peek();
      Dim dim;
      dim.loc = d.loc;
      if (d.kind == Tok::Ident) {
        dim.name = std::string(d.text);
      } else if (d.kind == Tok::Int) {
        errno = 0;
        std::string digits(d.text);
        unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
        // 2^31 is far beyond any buffer this toolkit allocates; it keeps extents products
        // of a few dims inside int64.
        if (errno == ERANGE || v < 1 || v > (1ULL << 31))
          fail(d.loc, "tensor dimension must be between 1 and 2147483648");
        dim.value = static_cast<int64_t>(v);
      } else {
        fail_at_current("expected a dimension (a number or a name)");
      }
      advance();
      tensor->dims.push_back(std::move(dim));
    } while (match(Tok::Comma));
    expect(Tok::RBracket, "']'");
    return Type::Tensor;
  }

  // kernel_decl := 'kernel' IDENT params ['->' tensor_type] '{' {stage sep} 'return' IDENT '}'
  // stage       := IDENT '[' IDENT {',' IDENT} ']' '=' expression
  // A kernel is index notation, not a program: no control flow, no locals, one assignment
  // per stage, and the last statement names the buffer it returns.
  StmtPtr kernel_decl() {
    SourceLoc kw = advance().loc;
    auto k = std::make_unique<KernelDecl>();
    const Token& name = expect(Tok::Ident, "kernel name");
    k->name = std::string(name.text);
    k->loc = name.loc;
    k->params = params();
    if (match(Tok::Arrow)) {
      SourceLoc tloc;
      if (type_name_here(&tloc, &k->return_type) != Type::Tensor)
        fail(tloc, "a kernel returns a tensor type such as f32[n, m]");
      k->has_return_type = true;
    }
    DepthGuard guard(*this, peek().loc);
    expect(Tok::LBrace, "'{'");
    skip_separators();
    bool returned = false;
    while (!check(Tok::RBrace) && !check(Tok::Eof)) {
      // Each stage recovers on its own, like the statements of a block, so that a broken
      // stage does not spill the rest of the kernel out as top-level statements.
      size_t start = pos_;
      try {
        if (returned) fail(peek().loc, "'return' must be the last statement of a kernel");
        if (check(Tok::Return)) {
          advance();
          const Token& r = expect(Tok::Ident, "the name of the buffer to return");
          k->result = std::string(r.text);
          k->result_loc = r.loc;
          returned = true;
        } else {
          k->stages.push_back(kernel_stage());
        }
        terminator(start);
      } catch (SyntaxError&) {
        synchronize();
      }
      skip_separators();
    }
    expect(Tok::RBrace, "'}'");
    if (!returned) fail(kw, "kernel '" + k->name + "' must end with 'return' and a buffer name");
    auto s = std::make_unique<Stmt>(StmtKind::KernelDecl, kw);
    s->kernel = std::move(k);
    return s;
  }

  KernelStage kernel_stage() {
    KernelStage st;
    const Token& target = expect(Tok::Ident, "a stage such as 'C[i, j] = ...'");
    st.target = std::string(target.text);
    st.loc = target.loc;
    expect(Tok::LBracket, "'[' after the stage's buffer name");
    do {
      const Token& ix = expect(Tok::Ident, "an index name");
      std::string n(ix.text);
      if (std::find(st.indices.begin(), st.indices.end(), n) != st.indices.end())
        fail(ix.loc, "index '" + n + "' appears twice in '" + st.target + "[...]'");
      st.indices.push_back(std::move(n));
      st.index_locs.push_back(ix.loc);
    } while (match(Tok::Comma));
    expect(Tok::RBracket, "']'");
    expect(Tok::Assign, "'='");
    in_kernel_ = true;
    struct Reset {
      bool& b;
      ~Reset() { b = false; }
    } reset{in_kernel_};
    st.value = expression();
    return st;
  }

  // block := '{' { statement terminator } '}'
  Block block() {
    DepthGuard guard(*this, peek().loc);
    expect(Tok::LBrace, "'{'");
    Block b;
    skip_separators();
    while (!check(Tok::RBrace) && !check(Tok::Eof)) {
      if (auto s = statement_with_recovery(false)) b.push_back(std::move(s));
      skip_separators();
    }
    expect(Tok::RBrace, "'}'");
    return b;
  }

  // if_stmt := 'if' expression block [NEWLINE* 'else' (if_stmt | block)]
  StmtPtr if_stmt() {
    auto s = std::make_unique<Stmt>(StmtKind::If, advance().loc);
    s->expr = expression();
    s->body = block();
    // "}\nelse {" is allowed: look past newlines for an else.
    size_t ahead = 0;
    while (peek(ahead).kind == Tok::Newline) ++ahead;
    if (peek(ahead).kind == Tok::Else) {
      pos_ += ahead;
      advance();
      s->has_else = true;
      if (check(Tok::If)) {
        DepthGuard guard(*this, peek().loc);
        s->else_body.push_back(if_stmt());
      } else {
        s->else_body = block();
      }
    }
    return s;
  }

  // while_stmt := 'while' expression block
  StmtPtr while_stmt() {
    auto s = std::make_unique<Stmt>(StmtKind::While, advance().loc);
    s->expr = expression();
    s->body = block();
    return s;
  }

  // for_stmt := 'for' IDENT 'in' expression '..' expression block
  StmtPtr for_stmt() {
    auto s = std::make_unique<Stmt>(StmtKind::For, advance().loc);
    const Token& name = expect(Tok::Ident, "loop variable name");
    s->name = std::string(name.text);
    s->op_loc = name.loc;
    expect(Tok::In, "'in'");
    s->expr = expression();
    expect(Tok::DotDot, "'..'");
    s->expr2 = expression();
    s->body = block();
    return s;
  }

  // return_stmt := 'return' [expression]
  StmtPtr return_stmt() {
    auto s = std::make_unique<Stmt>(StmtKind::Return, advance().loc);
    if (!check(Tok::Newline) && !check(Tok::Semicolon) && !check(Tok::RBrace) && !check(Tok::Eof))
      s->expr = expression();
    return s;
  }

  // assignment := IDENT ('=' | '+=' | '-=' | '*=' | '/=' | '%=') expression
  // Parsed as an expression first, so "1 = x" can be reported as a bad target.
  StmtPtr simple_stmt() {
    ExprPtr e = expression();
    if (!is_assign_op(peek().kind)) {
      auto s = std::make_unique<Stmt>(StmtKind::Expr, e->loc);
      s->expr = std::move(e);
      return s;
    }
    const Token& op = advance();
    if (e->kind != ExprKind::Var) fail(op.loc, "invalid assignment target");
    auto s = std::make_unique<Stmt>(StmtKind::Assign, e->loc);
    s->name = e->text;
    s->op_loc = op.loc;
    if (op.kind != Tok::Assign) {
      s->has_op = true;
      s->assign_op = op.kind == Tok::PlusAssign    ? BinaryOp::Add
                     : op.kind == Tok::MinusAssign ? BinaryOp::Sub
                     : op.kind == Tok::StarAssign  ? BinaryOp::Mul
                     : op.kind == Tok::SlashAssign ? BinaryOp::Div
                                                   : BinaryOp::Mod;
    }
    s->expr = expression();
    return s;
  }

  // ---- expressions (Pratt) ----
  // expression := unary { binop unary }   with binding powers from infix_prec()
  ExprPtr expression(int min_prec = kOr) {
    ExprPtr left = unary();
    while (true) {
      Prec p = infix_prec(peek().kind);
      if (p == kNone || p < min_prec) break;
      const Token& op = advance();
      // Left associativity: the right operand only takes tighter operators.
      ExprPtr right = expression(p + 1);
      auto e = std::make_unique<Expr>(ExprKind::Binary, op.loc);
      e->binary_op = binary_op(op.kind);
      e->kids.push_back(std::move(left));
      e->kids.push_back(std::move(right));
      left = finish(std::move(e));
    }
    return left;
  }

  // unary := ('-' | '!') unary | call
  ExprPtr unary() {
    if (check(Tok::Minus) || check(Tok::Bang)) {
      const Token& op = advance();
      DepthGuard guard(*this, op.loc);
      auto e = std::make_unique<Expr>(ExprKind::Unary, op.loc);
      e->unary_op = op.kind == Tok::Minus ? UnaryOp::Neg : UnaryOp::Not;
      e->kids.push_back(unary());
      return finish(std::move(e));
    }
    return call();
  }

  // postfix := primary { '(' [args] ')' | '[' args ']' | '.' IDENT }
  // Only a name can be called or indexed: t[i, j] reads an element of tensor variable t,
  // s[0] a dimension of shape variable s. '.shape' applies to any expression.
  ExprPtr call() {
    ExprPtr e = primary();
    while (true) {
      if (check(Tok::LParen)) {
        if (e->kind != ExprKind::Var) fail_at_current("expected newline or ';' after statement");
        e = call_args(std::move(e));
        if (e->kind == ExprKind::Reduce) return e;  // its body already took what follows
      } else if (check(Tok::LBracket)) {
        if (e->kind != ExprKind::Var) fail_at_current("only a variable can be indexed");
        DepthGuard guard(*this, peek().loc);
        advance();
        e->kind = ExprKind::Index;
        do {
          e->kids.push_back(expression());
        } while (match(Tok::Comma));
        expect(Tok::RBracket, "']'");
        e = finish(std::move(e));
      } else if (check(Tok::Dot) && !in_kernel_) {
        advance();
        const Token& f = expect(Tok::Ident, "a field name after '.'");
        auto fe = std::make_unique<Expr>(ExprKind::Field, f.loc);
        fe->text = std::string(f.text);
        fe->kids.push_back(std::move(e));
        e = finish(std::move(fe));
      } else {
        return e;
      }
    }
  }

  // call := IDENT '(' [expression {',' expression}] ')'
  // In a kernel, sum/max/min followed by bare names and then the start of an expression on
  // the same line is a reduction instead: reduce := ('sum'|'max'|'min') '(' IDENT {',' IDENT}
  // ')' additive. The body is a whole additive expression, as in math notation:
  // `sum(k) A[i, k] * B[k, j] + 1.0` sums A*B + 1; parenthesize to sum less. A body cannot
  // start with '-' (`max(a, b) - 1` is a call minus one): write `sum(k) (-A[k])`.
  ExprPtr call_args(ExprPtr e) {
    DepthGuard guard(*this, peek().loc);
    advance();
    e->kind = ExprKind::Call;
    if (!check(Tok::RParen)) {
      do {
        e->kids.push_back(expression());
      } while (match(Tok::Comma));
    }
    expect(Tok::RParen, "')'");
    // `sum(k) -A[k]` reads as the call sum(k) minus A[k], which makes no sense as a call
    // (a sum of bare axes, or a max/min of one): say what was meant instead of the errors
    // that reading gives.
    if (in_kernel_ && check(Tok::Minus) && all_axes(*e) &&
        (e->text == "sum" || ((e->text == "max" || e->text == "min") && e->kids.size() == 1))) {
      std::string axes;
      for (const auto& k : e->kids) axes += (axes.empty() ? "" : ", ") + k->text;
      fail_at_current("a reduction body that starts with '-' needs parentheses: write " +
                      e->text + "(" + axes + ") (-...)");
    }
    if (in_kernel_ && is_reduction_head(*e)) {
      auto r = std::make_unique<Expr>(ExprKind::Reduce, e->loc);
      r->text = e->text;
      for (auto& k : e->kids) r->axes.push_back(k->text);
      r->kids.push_back(expression(kTerm));
      return finish(std::move(r));
    }
    return finish(std::move(e));
  }

  static bool all_axes(const Expr& call) {
    if (call.kids.empty()) return false;
    for (const auto& k : call.kids)
      if (k->kind != ExprKind::Axis) return false;
    return true;
  }

  bool is_reduction_head(const Expr& call) const {
    if (call.text != "sum" && call.text != "max" && call.text != "min") return false;
    if (call.kids.empty()) return false;
    for (const auto& k : call.kids)
      if (k->kind != ExprKind::Axis) return false;
    switch (peek().kind) {
      case Tok::Int: case Tok::Float: case Tok::Ident: case Tok::LParen: case Tok::Bang:
      case Tok::True: case Tok::False:
        return true;
      default:
        return false;
    }
  }

  // primary := INT | FLOAT | STRING | 'true' | 'false' | IDENT | '(' expression ')'
  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int: {
        advance();
        auto e = std::make_unique<Expr>(ExprKind::IntLit, t.loc);
        errno = 0;
        std::string digits(t.text);
        unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
        if (errno == ERANGE || v > 9223372036854775807ULL)
          fail(t.loc, "integer literal out of range");
        e->int_value = static_cast<int64_t>(v);
        return e;
      }
      case Tok::Float: {
        advance();
        auto e = std::make_unique<Expr>(ExprKind::FloatLit, t.loc);
        std::string text(t.text);
        e->float_value = std::strtod(text.c_str(), nullptr);
        if (std::isinf(e->float_value)) fail(t.loc, "float literal out of range");
        return e;
      }
      case Tok::String: {
        advance();
        auto e = std::make_unique<Expr>(ExprKind::StrLit, t.loc);
        e->text = decode_string(t.text.substr(1, t.text.size() - 2));
        return e;
      }
      case Tok::True:
      case Tok::False: {
        advance();
        auto e = std::make_unique<Expr>(ExprKind::BoolLit, t.loc);
        e->bool_value = t.kind == Tok::True;
        return e;
      }
      case Tok::Ident: {
        advance();
        // In a kernel a bare name is an index variable; one followed by '(' or '[' is turned
        // back into a call or buffer access by call().
        bool axis = in_kernel_ && !check(Tok::LParen) && !check(Tok::LBracket);
        auto e = std::make_unique<Expr>(axis ? ExprKind::Axis : ExprKind::Var, t.loc);
        e->text = std::string(t.text);
        return e;
      }
      case Tok::LBracket: {
        // list := '[' [expression {',' expression}] ']'   (a shape: [1, 3072])
        DepthGuard guard(*this, t.loc);
        advance();
        auto e = std::make_unique<Expr>(ExprKind::List, t.loc);
        if (!check(Tok::RBracket)) {
          do {
            e->kids.push_back(expression());
          } while (match(Tok::Comma));
        }
        expect(Tok::RBracket, "']'");
        return finish(std::move(e));
      }
      case Tok::LParen: {
        DepthGuard guard(*this, t.loc);
        advance();
        ExprPtr e = expression();
        expect(Tok::RParen, "')'");
        return e;
      }
      default: fail_at_current("expected expression");
    }
  }

  std::string decode_string(std::string_view raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\' || i + 1 == raw.size()) {
        out += raw[i];
        continue;
      }
      char c = raw[++i];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        default: out += '\\'; out += c; break;  // unknown escapes stay as written
      }
    }
    return out;
  }

  // Records the height of a new node and rejects trees too tall to walk safely.
  ExprPtr finish(ExprPtr e) {
    uint32_t h = 0;
    for (auto& k : e->kids) h = std::max(h, k->height);
    e->height = h + 1;
    if (e->height > kMaxExprHeight) fail(e->loc, "nesting too deep");
    return e;
  }

  std::shared_ptr<const SourceFile> src_;
  std::vector<Token> tokens_;
  std::vector<Diagnostic>& diags_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool in_kernel_ = false;  // parsing a kernel stage's right-hand side
};

}  // namespace

Program parse(std::shared_ptr<const SourceFile> source, std::vector<Token> tokens,
              std::vector<Diagnostic>& diags) {
  return Parser(std::move(source), std::move(tokens), diags).program();
}

Program parse(std::shared_ptr<const SourceFile> source, std::vector<Diagnostic>& diags) {
  std::vector<Token> tokens = tokenize(*source);
  return parse(std::move(source), std::move(tokens), diags);
}

}  // namespace descent

