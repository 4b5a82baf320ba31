#include <cctype>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "lang/token.h"

namespace descent {

const std::vector<std::string_view>& keywords() {
  static const std::vector<std::string_view> k = {
#define X(name, text) text,
      DESCENT_KEYWORDS(X)
#undef X
  };
  return k;
}

const char* tok_name(Tok t) {
  switch (t) {
#define X(name, text) \
  case Tok::name:     \
    return text;
    DESCENT_TOKENS(X)
#undef X
  }
  return "?";
}

// Length of the UTF-8 sequence starting at s[i], or 0 if it is not valid UTF-8: the
// shape must be right, and the code point must be in range (no overlong forms, no UTF-16
// surrogates, nothing above U+10FFFF), as RFC 3629 requires.
size_t utf8_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) {
    unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static const uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

namespace {

const std::unordered_map<std::string_view, Tok>& keyword_tokens() {
  static const std::unordered_map<std::string_view, Tok> k = {
#define X(name, text) {text, Tok::name},
      DESCENT_KEYWORDS(X)
#undef X
  };
  return k;
}

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), src_(file.text()) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      Token t = next();
      // Newlines inside ( ) or [ ] are layout, not statement ends; runs of blank lines
      // collapse to one token.
      if (t.kind == Tok::Newline && (depth_ > 0 || out.empty() || out.back().kind == Tok::Newline))
        continue;
      if (t.kind == Tok::LParen || t.kind == Tok::LBracket) ++depth_;
      if ((t.kind == Tok::RParen || t.kind == Tok::RBracket) && depth_ > 0) --depth_;
      // A brace always starts or ends a block, so it resets the ( [ depth: an unbalanced
      // '(' before '{' must not swallow the block's newlines.
      if (t.kind == Tok::LBrace || t.kind == Tok::RBrace) depth_ = 0;
      out.push_back(t);
      if (t.kind == Tok::Eof) break;
    }
    return out;
  }

 private:
  Token make(Tok kind, size_t start) {
    Token t;
    t.kind = kind;
    t.text = src_.substr(start, pos_ - start);
    t.loc = loc_of(start);
    return t;
  }
  // Tokens come in order, so their positions are found by walking forward from the last
  // one: linear in the file's size, even for a single very long line.
  SourceLoc loc_of(size_t offset) {
    for (; cursor_ < offset; ++cursor_) {
      char c = src_[cursor_];
      if (c == '\n') {
        ++line_;
        col_ = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++col_;
      }
    }
    return SourceLoc{static_cast<uint32_t>(offset), line_, col_, &file_};
  }
  Token error(size_t start, std::string msg) {
    Token t = make(Tok::Error, start);
    t.error = std::move(msg);
    return t;
  }
  bool match(char c) {
    if (pos_ < src_.size() && src_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }

  // Skips spaces and comments; comments may hold any valid UTF-8.
  bool skip_space(Token* err) {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') {
          size_t n = utf8_length(src_, pos_);
          if (n == 0) {
            size_t start = pos_++;
            *err = error(start, "invalid UTF-8");
            return false;
          }
          pos_ += n;
        }
      } else {
        break;
      }
    }
    return true;
  }

  Token next() {
    Token err;
    if (!skip_space(&err)) return err;
    size_t start = pos_;
    if (pos_ >= src_.size()) return make(Tok::Eof, start);
    char c = src_[pos_++];
    if (c == '\n') return make(Tok::Newline, start);
    if (std::isdigit(static_cast<unsigned char>(c))) return number(start);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
      auto kw = keyword_tokens().find(src_.substr(start, pos_ - start));
      return make(kw == keyword_tokens().end() ? Tok::Ident : kw->second, start);
    }
    switch (c) {
      case '"': return string(start);
      case '(': return make(Tok::LParen, start);
      case ')': return make(Tok::RParen, start);
      case '{': return make(Tok::LBrace, start);
      case '}': return make(Tok::RBrace, start);
      case '[': return make(Tok::LBracket, start);
      case ']': return make(Tok::RBracket, start);
      case ',': return make(Tok::Comma, start);
      case ';': return make(Tok::Semicolon, start);
      case ':': return make(Tok::Colon, start);
      case '.': return make(match('.') ? Tok::DotDot : Tok::Dot, start);
      case '+': return make(match('=') ? Tok::PlusAssign : Tok::Plus, start);
      case '-':
        if (match('>')) return make(Tok::Arrow, start);
        return make(match('=') ? Tok::MinusAssign : Tok::Minus, start);
      case '*': return make(match('=') ? Tok::StarAssign : Tok::Star, start);
      case '/': return make(match('=') ? Tok::SlashAssign : Tok::Slash, start);
      case '%': return make(match('=') ? Tok::PercentAssign : Tok::Percent, start);
      case '!': return make(match('=') ? Tok::BangEq : Tok::Bang, start);
      case '=': return make(match('=') ? Tok::EqEq : Tok::Assign, start);
      case '<': return make(match('=') ? Tok::LessEq : Tok::Less, start);
      case '>': return make(match('=') ? Tok::GreaterEq : Tok::Greater, start);
      case '&':
        if (match('&')) return make(Tok::AndAnd, start);
        return error(start, "unexpected character '&' (did you mean '&&'?)");
      case '|':
        if (match('|')) return make(Tok::OrOr, start);
        return error(start, "unexpected character '|' (did you mean '||'?)");
    }
    // Not a token: report the whole character, even if it is several UTF-8 bytes.
    size_t n = utf8_length(src_, start);
    if (n == 0) return error(start, "invalid UTF-8");
    pos_ = start + n;
    std::string shown(src_.substr(start, n));
    if (n == 1 && !std::isprint(static_cast<unsigned char>(c))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      shown = buf;
    }
    return error(start, "unexpected character '" + shown + "'");
  }

  // INT: digits. FLOAT: digits '.' digits [exponent] | digits exponent.
  // "1..5" is INT DOTDOT INT because a float needs a digit after its dot.
  Token number(size_t start) {
    auto digits = [&] {
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    };
    digits();
    bool is_float = false;
    if (peek() == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
      ++pos_;
      digits();
      is_float = true;
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (std::isdigit(static_cast<unsigned char>(peek(1))) ||
         ((peek(1) == '+' || peek(1) == '-') && std::isdigit(static_cast<unsigned char>(peek(2)))))) {
      pos_ += 2;
      digits();
      is_float = true;
    }
    // "12abc" is one bad token, not a number followed by a name.
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_') {
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
      return error(start, "invalid number '" + std::string(src_.substr(start, pos_ - start)) + "'");
    }
    return make(is_float ? Tok::Float : Tok::Int, start);
  }

  Token string(size_t start) {
    while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') {
        pos_ += 2;
        continue;
      }
      size_t n = utf8_length(src_, pos_);
      if (n == 0) {
        size_t bad = pos_++;
        return error(bad, "invalid UTF-8");
      }
      pos_ += n;
    }
    if (pos_ >= src_.size() || src_[pos_] != '"') return error(start, "unterminated string");
    ++pos_;
    return make(Tok::String, start);
  }

  const SourceFile& file_;
  std::string_view src_;
  size_t pos_ = 0;
  int depth_ = 0;
  size_t cursor_ = 0;  // loc_of()'s position: offset, line and column
  uint32_t line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> tokenize(const SourceFile& file) { return Lexer(file).run(); }

bool needs_more_input(std::string_view text) {
  SourceFile file("<input>", std::string(text));
  int depth = 0;
  // At the top level: where the current statement began, whether it is an `if`, and whether
  // the last block opened is one an `else` may follow (an if's, not a final else's).
  uint32_t stmt_line = 0, close_line = 0;
  bool stmt_is_if = false, after_else = false, block_takes_else = false;
  bool boundary = true;         // the next top-level token begins a statement...
  bool closed_if_block = false; // ...unless it is an `else` right after an if's '}'
  for (const Token& t : tokenize(file)) {
    if (t.kind == Tok::Eof) continue;
    if (t.kind == Tok::Newline) {
      boundary = boundary || depth == 0;
      continue;
    }
    if (depth == 0) {
      if (t.kind == Tok::Semicolon) {
        boundary = true;
        closed_if_block = false;
        continue;
      }
      if (boundary && !(t.kind == Tok::Else && closed_if_block)) {
        stmt_line = t.loc.line;
        stmt_is_if = t.kind == Tok::If;
      }
      boundary = false;
      if (t.kind == Tok::Else) after_else = true;
      if (t.kind == Tok::If) after_else = false;
      if (t.kind == Tok::LBrace) block_takes_else = stmt_is_if && !after_else;
    }
    closed_if_block = false;
    switch (t.kind) {
      case Tok::LParen: case Tok::LBracket: case Tok::LBrace: ++depth; break;
      case Tok::RParen: case Tok::RBracket: --depth; break;
      case Tok::RBrace:
        if (--depth == 0) {
          closed_if_block = block_takes_else;
          close_line = t.loc.line;
        }
        break;
      default: break;
    }
  }
  if (depth > 0) return true;
  // A one-line `if c { ... }` runs at once (its else would be on the same line).
  if (!closed_if_block || close_line == stmt_line) return false;
  // The REPL adds '\n' to every line: "}\n\n" is the '}' and then a blank line.
  size_t last = text.find_last_not_of(" \t\r\n");
  size_t newlines = 0;
  for (size_t i = last + 1; i < text.size(); ++i) newlines += text[i] == '\n';
  return newlines < 2;
}

std::string print_tokens(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) {
    char pos[32];
    std::snprintf(pos, sizeof pos, "%u:%u", t.loc.line, t.loc.col);
    std::string line = pos;
    line.resize(8, ' ');
    std::string kind = tok_name(t.kind);
    line += kind;
    if (t.kind == Tok::Error) {
      line += "  " + t.error;
    } else if (t.kind != Tok::Newline && t.kind != Tok::Eof && std::string_view(kind) != t.text) {
      line.resize(std::max<size_t>(line.size() + 1, 18), ' ');
      line += t.text;
    }
    out += line + '\n';
  }
  return out;
}

}  // namespace descent
