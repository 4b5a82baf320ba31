// Tokens and the lexer that makes them.
//
// The lexer is a loop over bytes that never fails: a bad character becomes an Error token
// carrying its message, and the parser reports it. Newlines are tokens because they end
// statements, except inside ( ) and [ ], where a long call may span lines.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "lang/source.h"

namespace descent {

// The keywords: the lexer recognises them by this table, and keywords() lists it (for
// completion), so a new keyword is one line here.
#define DESCENT_KEYWORDS(X)                                                           \
  X(Fn, "fn") X(Return, "return") X(If, "if") X(Else, "else") X(While, "while")     \
  X(For, "for") X(In, "in") X(Break, "break") X(Continue, "continue")               \
  X(True, "true") X(False, "false") X(Kernel, "kernel")

#define DESCENT_TOKENS(X)                                                             \
  /* literals and names */                                                          \
  X(Int, "INT") X(Float, "FLOAT") X(String, "STRING") X(Ident, "IDENT")             \
  /* keywords */                                                                    \
  DESCENT_KEYWORDS(X)                                                               \
  /* punctuation */                                                                 \
  X(LParen, "(") X(RParen, ")") X(LBrace, "{") X(RBrace, "}") X(LBracket, "[")      \
  X(RBracket, "]") X(Comma, ",") X(Semicolon, ";") X(Colon, ":") X(Arrow, "->")     \
  X(DotDot, "..") X(Dot, ".")                                                       \
  /* operators */                                                                   \
  X(Plus, "+") X(Minus, "-") X(Star, "*") X(Slash, "/") X(Percent, "%")             \
  X(Bang, "!") X(AndAnd, "&&") X(OrOr, "||") X(EqEq, "==") X(BangEq, "!=")          \
  X(Less, "<") X(LessEq, "<=") X(Greater, ">") X(GreaterEq, ">=") X(Assign, "=")    \
  X(PlusAssign, "+=") X(MinusAssign, "-=") X(StarAssign, "*=")                      \
  X(SlashAssign, "/=") X(PercentAssign, "%=")                                       \
  /* layout and the end */                                                          \
  X(Newline, "NEWLINE") X(Eof, "EOF") X(Error, "ERROR")

enum class Tok {
#define X(name, text) name,
  DESCENT_TOKENS(X)
#undef X
};

// The spelling used in messages and dumps: "(" for punctuation, "fn" for keywords,
// "INT"/"IDENT" for classes of tokens.
const char* tok_name(Tok t);

struct Token {
  Tok kind = Tok::Eof;
  std::string_view text;  // the lexeme, pointing into the SourceFile's text
  SourceLoc loc;          // where it starts
  std::string error;      // for Tok::Error: what is wrong with it
};

// The keywords' spellings ("fn", "kernel", ...), in DESCENT_KEYWORDS order.
const std::vector<std::string_view>& keywords();

// Splits a whole file into tokens, always ending with one Eof token.
std::vector<Token> tokenize(const SourceFile& file);

// For the REPL: does this text end inside an open ( [ or {, so that the next line should
// continue it? (Strings cannot span lines, so an open string is simply an error.) Also when
// it ends with the '}' of an `if` written over several lines: the language allows `else`
// on the next line, so that line decides; a blank line ends the statement.
bool needs_more_input(std::string_view text);

// The tokens stage view: one token per line, "line:col  KIND  lexeme".
std::string print_tokens(const std::vector<Token>& tokens);

// The length of the UTF-8 sequence at s[i], or 0 when it is not valid UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF): what the lexer accepts.
size_t utf8_length(std::string_view s, size_t i);

}  // namespace descent
