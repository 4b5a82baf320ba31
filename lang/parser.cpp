#include "lang/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

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
    try {
      StmtPtr s = statement(top_level);
      terminator();
      return s;
    } catch (SyntaxError&) {
      synchronize();
      return nullptr;
    }
  }

  // terminator := NEWLINE | ';' | (before) '}' | EOF
  void terminator() {
    if (check(Tok::Newline) || check(Tok::Semicolon)) {
      advance();
      return;
    }
    if (check(Tok::RBrace) || check(Tok::Eof)) return;
    fail_at_current("expected newline or ';' after statement");
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
        fail(t.loc, "kernels are part of the tensor layer, which this build does not have yet");
      default: return simple_stmt();
    }
  }

  // fn_decl := 'fn' IDENT '(' [param {',' param}] ')' ['->' type] block
  // param   := IDENT [':' type]
  StmtPtr fn_decl() {
    SourceLoc fn_loc = advance().loc;
    auto fn = std::make_unique<FnDecl>();
    const Token& name = expect(Tok::Ident, "function name");
    fn->name = std::string(name.text);
    fn->loc = name.loc;
    expect(Tok::LParen, "'('");
    if (!check(Tok::RParen)) {
      do {
        const Token& pn = expect(Tok::Ident, "parameter name");
        Param p{std::string(pn.text), pn.loc, Type::Int, pn.loc};
        if (match(Tok::Colon)) p.type = type_name_here(&p.type_loc);
        fn->params.push_back(std::move(p));
      } while (match(Tok::Comma));
    }
    expect(Tok::RParen, "')'");
    if (match(Tok::Arrow)) fn->declared_return = type_name_here(&fn->return_loc);
    fn->body = block();
    auto s = std::make_unique<Stmt>(StmtKind::FnDecl, fn_loc);
    s->fn = std::move(fn);
    return s;
  }

  // type := 'int' | 'float' | 'bool'
  Type type_name_here(SourceLoc* loc) {
    const Token& t = expect(Tok::Ident, "type name");
    *loc = t.loc;
    if (t.text == "int") return Type::Int;
    if (t.text == "float") return Type::Float;
    if (t.text == "bool") return Type::Bool;
    fail(t.loc, "unknown type '" + std::string(t.text) + "'");
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

  // call := primary [ '(' [expression {',' expression}] ')' ]
  ExprPtr call() {
    ExprPtr e = primary();
    if (!check(Tok::LParen)) return e;
    if (e->kind != ExprKind::Var) fail_at_current("expected newline or ';' after statement");
    DepthGuard guard(*this, peek().loc);
    advance();
    e->kind = ExprKind::Call;
    if (!check(Tok::RParen)) {
      do {
        e->kids.push_back(expression());
      } while (match(Tok::Comma));
    }
    expect(Tok::RParen, "')'");
    return finish(std::move(e));
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
        auto e = std::make_unique<Expr>(ExprKind::Var, t.loc);
        e->text = std::string(t.text);
        return e;
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
