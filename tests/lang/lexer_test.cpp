// The lexer (lang/token.h): token kinds, lexemes, positions, layout and error tokens.
#include <doctest/doctest.h>


#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {
std::vector<Tok> kinds(std::initializer_list<Tok> k) { return k; }
}  // namespace

TEST_CASE("lexer: every operator and punctuation token, with its lexeme and column") {
  const std::string src = "( ) { } [ ] , ; : -> .. . + - * / % ! && || == != < <= > >= = += -= *= /= %=";
  Lexed l = lex(src);
  const std::vector<Tok> want = {
      Tok::LParen, Tok::RParen, Tok::LBrace, Tok::RBrace, Tok::LBracket, Tok::RBracket,
      Tok::Comma, Tok::Semicolon, Tok::Colon, Tok::Arrow, Tok::DotDot, Tok::Dot,
      Tok::Plus, Tok::Minus, Tok::Star, Tok::Slash, Tok::Percent, Tok::Bang,
      Tok::AndAnd, Tok::OrOr, Tok::EqEq, Tok::BangEq, Tok::Less, Tok::LessEq,
      Tok::Greater, Tok::GreaterEq, Tok::Assign, Tok::PlusAssign, Tok::MinusAssign,
      Tok::StarAssign, Tok::SlashAssign, Tok::PercentAssign, Tok::Eof};
  REQUIRE(l.tokens.size() == want.size());
  CHECK(l.kinds() == want);
  // Each lexeme is the operator itself, spelled as tok_name spells it, at its column.
  size_t pos = 0;
  int bad = 0;
  for (size_t i = 0; i + 1 < l.tokens.size(); ++i) {
    const Token& t = l.tokens[i];
    size_t at = src.find(' ', pos);
    std::string lexeme = src.substr(pos, (at == std::string::npos ? src.size() : at) - pos);
    if (std::string(t.text) != lexeme || std::string(tok_name(t.kind)) != lexeme || t.loc.line != 1 ||
        t.loc.col != pos + 1) {
      ++bad;
      MESSAGE("token ", i, " '", std::string(t.text), "' at ", t.loc.line, ":", t.loc.col,
              ", expected '", lexeme, "' at 1:", pos + 1);
    }
    pos = at + 1;
  }
  CHECK(bad == 0);
  CHECK(l.tokens.back().loc.col == src.size() + 1);
}

TEST_CASE("lexer: operators need no spaces and take the longest match") {
  Lexed l = lex("a+=b->c<=d>=e!=f==g&&h||!i");
  CHECK(l.kinds() == kinds({Tok::Ident, Tok::PlusAssign, Tok::Ident, Tok::Arrow, Tok::Ident,
                            Tok::LessEq, Tok::Ident, Tok::GreaterEq, Tok::Ident, Tok::BangEq,
                            Tok::Ident, Tok::EqEq, Tok::Ident, Tok::AndAnd, Tok::Ident, Tok::OrOr,
                            Tok::Bang, Tok::Ident, Tok::Eof}));
  CHECK(lex("x--1").kinds() == kinds({Tok::Ident, Tok::Minus, Tok::Minus, Tok::Int, Tok::Eof}));
  CHECK(lex("a...b").kinds() == kinds({Tok::Ident, Tok::DotDot, Tok::Dot, Tok::Ident, Tok::Eof}));
}

TEST_CASE("lexer: keywords, and type names that are plain identifiers") {
  Lexed l = lex("fn return if else while for in break continue true false kernel");
  CHECK(l.kinds() == kinds({Tok::Fn, Tok::Return, Tok::If, Tok::Else, Tok::While, Tok::For, Tok::In,
                            Tok::Break, Tok::Continue, Tok::True, Tok::False, Tok::Kernel, Tok::Eof}));
  CHECK(l.tokens[11].text == "kernel");
  CHECK(lex("int float bool").kinds() == kinds({Tok::Ident, Tok::Ident, Tok::Ident, Tok::Eof}));
  // A keyword is a whole word: prefixes, extensions and other cases are identifiers.
  Lexed ids = lex("fnx iff _while for2 If TRUE");
  CHECK(ids.kinds() == kinds({Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Ident, Tok::Eof}));
  CHECK(ids.texts() == std::vector<std::string>{"fnx", "iff", "_while", "for2", "If", "TRUE", ""});
}

TEST_CASE("lexer: line and column of every token, newline tokens and the final EOF") {
  Lexed l = lex("x = 15\n  y\tz\n");
  REQUIRE(l.tokens.size() == 8);
  CHECK(l.kinds() == kinds({Tok::Ident, Tok::Assign, Tok::Int, Tok::Newline, Tok::Ident, Tok::Ident,
                            Tok::Newline, Tok::Eof}));
  auto at = [&](size_t i) {
    return std::to_string(l.tokens[i].loc.line) + ":" + std::to_string(l.tokens[i].loc.col);
  };
  CHECK(at(0) == "1:1");
  CHECK(at(1) == "1:3");
  CHECK(at(2) == "1:5");
  CHECK(l.tokens[2].text == "15");
  CHECK(at(3) == "1:7");
  CHECK(at(4) == "2:3");
  CHECK(at(5) == "2:5");
  CHECK(at(6) == "2:6");
  CHECK(at(7) == "3:1");
  CHECK(l.tokens[4].loc.offset == 9);
  // Always exactly one EOF, also for empty input.
  Lexed empty = lex("");
  REQUIRE(empty.tokens.size() == 1);
  CHECK(empty.tokens[0].kind == Tok::Eof);
}

TEST_CASE("lexer: number literals") {
  Lexed r = lex("0..10");
  CHECK(r.kinds() == kinds({Tok::Int, Tok::DotDot, Tok::Int, Tok::Eof}));
  CHECK(r.texts() == std::vector<std::string>{"0", "..", "10", ""});

  for (const char* f : {"1.5e3", "1.0", "0.5", "2.5e-3", "1e9", "1E+2", "3.25E10", "007.5"}) {
    Lexed l = lex(f);
    INFO(f);
    CHECK(l.kinds() == kinds({Tok::Float, Tok::Eof}));
    CHECK(l.tokens[0].text == f);
  }
  // "1." is an int followed by a dot; "1.e5" likewise.
  CHECK(lex("1.").kinds() == kinds({Tok::Int, Tok::Dot, Tok::Eof}));
  CHECK(lex("1.x").kinds() == kinds({Tok::Int, Tok::Dot, Tok::Ident, Tok::Eof}));
  CHECK(lex("x.5").kinds() == kinds({Tok::Ident, Tok::Dot, Tok::Int, Tok::Eof}));
  CHECK(lex("123").kinds() == kinds({Tok::Int, Tok::Eof}));
  CHECK(lex("1.5..2").kinds() == kinds({Tok::Float, Tok::DotDot, Tok::Int, Tok::Eof}));
}

TEST_CASE("lexer: a number running into letters is one error token") {
  Lexed l = lex("x = 12abc + 1");
  REQUIRE(l.tokens.size() == 6);
  CHECK(l.tokens[2].kind == Tok::Error);
  CHECK(l.tokens[2].text == "12abc");
  CHECK(l.tokens[2].error == "invalid number '12abc'");
  CHECK(l.tokens[2].loc.col == 5);
  CHECK(l.tokens[3].kind == Tok::Plus);
  Lexed e = lex("1e");
  CHECK(e.tokens[0].kind == Tok::Error);
  CHECK(e.tokens[0].error == "invalid number '1e'");
  Lexed u = lex("3_000");
  CHECK(u.tokens[0].kind == Tok::Error);
}

TEST_CASE("lexer: strings") {
  Lexed l = lex(R"X(print("a\"b\n", ""))X");
  REQUIRE(l.tokens.size() == 7);
  CHECK(l.tokens[2].kind == Tok::String);
  CHECK(l.tokens[2].text == R"X("a\"b\n")X");
  CHECK(l.tokens[4].kind == Tok::String);
  CHECK(l.tokens[4].text == "\"\"");
  CHECK(lex("\"caf\xc3\xa9\"").tokens[0].kind == Tok::String);

  Lexed u = lex("print(\"abc\nx = 1");
  REQUIRE(u.tokens.size() >= 3);
  CHECK(u.tokens[2].kind == Tok::Error);
  CHECK(u.tokens[2].error == "unterminated string");
  CHECK(u.tokens[2].loc.line == 1);
  CHECK(u.tokens[2].loc.col == 7);  // the opening quote
  Lexed eof = lex("\"abc");
  CHECK(eof.tokens[0].kind == Tok::Error);
  CHECK(eof.tokens[0].error == "unterminated string");
  // A backslash before the closing quote escapes it.
  CHECK(lex(R"X("abc\")X").tokens[0].kind == Tok::Error);
}

TEST_CASE("lexer: newlines are statement ends except inside ( ) and [ ]") {
  CHECK(lex("f(1,\n2)\nx").kinds() == kinds({Tok::Ident, Tok::LParen, Tok::Int, Tok::Comma, Tok::Int,
                                             Tok::RParen, Tok::Newline, Tok::Ident, Tok::Eof}));
  CHECK(lex("a[\n1\n]\nb").kinds() == kinds({Tok::Ident, Tok::LBracket, Tok::Int, Tok::RBracket,
                                             Tok::Newline, Tok::Ident, Tok::Eof}));
  CHECK(lex("f((1\n)\n)\ny").kinds() == kinds({Tok::Ident, Tok::LParen, Tok::LParen, Tok::Int, Tok::RParen,
                                               Tok::RParen, Tok::Newline, Tok::Ident, Tok::Eof}));
  // Inside braces newlines still count.
  CHECK(lex("{\nx\n}").kinds() == kinds({Tok::LBrace, Tok::Newline, Tok::Ident, Tok::Newline, Tok::RBrace, Tok::Eof}));
  // A brace resets an unbalanced '(' so the block keeps its newlines.
  CHECK(lex("if (x {\ny\n}").kinds() == kinds({Tok::If, Tok::LParen, Tok::Ident, Tok::LBrace, Tok::Newline,
                                              Tok::Ident, Tok::Newline, Tok::RBrace, Tok::Eof}));
  // Blank lines, leading newlines and comment-only lines collapse.
  CHECK(lex("\n\na\n\n\n# note\n\nb").kinds() == kinds({Tok::Ident, Tok::Newline, Tok::Ident, Tok::Eof}));
  CHECK(lex("a;b").kinds() == kinds({Tok::Ident, Tok::Semicolon, Tok::Ident, Tok::Eof}));
  CHECK(lex("a\r\nb").kinds() == kinds({Tok::Ident, Tok::Newline, Tok::Ident, Tok::Eof}));
}

TEST_CASE("lexer: comments may hold UTF-8; elsewhere non-ASCII is an error") {
  CHECK(lex("x # caf\xc3\xa9 { ( \ny").kinds() == kinds({Tok::Ident, Tok::Newline, Tok::Ident, Tok::Eof}));
  Lexed e = lex("x = \xc3\xa9");
  REQUIRE(e.tokens.size() == 4);
  CHECK(e.tokens[2].kind == Tok::Error);
  CHECK(e.tokens[2].error == "unexpected character '\xc3\xa9'");
  CHECK(e.tokens[2].text == "\xc3\xa9");  // the whole character, not one byte
  CHECK(lex("\xff").tokens[0].error == "invalid UTF-8");
  CHECK(lex("# \xff\n").tokens[0].error == "invalid UTF-8");
  CHECK(lex("\"\xff\"").tokens[0].error == "invalid UTF-8");
  CHECK(lex("$").tokens[0].error == "unexpected character '$'");
  CHECK(lex("@x").tokens[0].error == "unexpected character '@'");
  CHECK(lex("\x01").tokens[0].error == "unexpected character '\\x01'");
  // A lone '&' or '|' is reported as a bad character (with a hint).
  Lexed amp = lex("a & b");
  CHECK(amp.tokens[1].kind == Tok::Error);
  CHECK(amp.tokens[1].error.rfind("unexpected character '&'", 0) == 0);
  CHECK(lex("a | b").tokens[1].error.rfind("unexpected character '|'", 0) == 0);
  // The lexer goes on after an error.
  CHECK(amp.kinds() == kinds({Tok::Ident, Tok::Error, Tok::Ident, Tok::Eof}));
}

TEST_CASE("lexer: needs_more_input for the REPL") {
  CHECK(needs_more_input("fn f() {"));
  CHECK(needs_more_input("fn f() {\n  x = 1\n"));
  CHECK(needs_more_input("print(1,"));
  CHECK(needs_more_input("a = [1,"));
  CHECK(needs_more_input("if x { while y {\n}"));
  CHECK(needs_more_input("print(\"abc"));
  CHECK_FALSE(needs_more_input("x = 1"));
  CHECK_FALSE(needs_more_input(""));
  CHECK_FALSE(needs_more_input("fn f() {\n}"));
  CHECK_FALSE(needs_more_input("print((1))"));
  CHECK_FALSE(needs_more_input("}"));
  CHECK_FALSE(needs_more_input("x = 1 # {"));
  CHECK_FALSE(needs_more_input("print(\"{(\")"));
}

TEST_CASE("lexer: needs_more_input waits after an if's '}' on its own line, for an else") {
  // "}" then a new line with "else {" is the language's: the REPL must not run the if first.
  CHECK(needs_more_input("if x > 1 {\n  print(1)\n}\n"));
  CHECK(needs_more_input("if x > 1 {\n  print(1)\n}\nelse {\n"));
  CHECK(needs_more_input("if a {\n  print(1)\n} else if b {\n  print(2)\n}\n"));
  CHECK(needs_more_input("x = 1\nif x > 1 {\n  print(1)\n}\n"));
  // A blank line, a final else, a one-line if, another statement after it: complete.
  CHECK_FALSE(needs_more_input("if x > 1 {\n  print(1)\n}\n\n"));
  CHECK_FALSE(needs_more_input("if x > 1 {\n  print(1)\n}\nelse {\n  print(2)\n}\n"));
  CHECK_FALSE(needs_more_input("if x > 1 { print(1) }\n"));
  CHECK_FALSE(needs_more_input("if x > 1 {\n  print(1)\n}\nprint(2)\n"));
  CHECK_FALSE(needs_more_input("fn f() {\n  if a { return 1 }\n  return 2\n}\n"));
  CHECK_FALSE(needs_more_input("while x < 3 {\n  x += 1\n}\n"));
}

TEST_CASE("lexer: print_tokens lays out line:col, kind and lexeme") {
  Lexed l = lex("x = 15\nfn f(a) -> float {}\n");
  std::string got = print_tokens(l.tokens);
  CHECK(got ==
        "1:1     IDENT     x\n"
        "1:3     =\n"
        "1:5     INT       15\n"
        "1:7     NEWLINE\n"
        "2:1     fn\n"
        "2:4     IDENT     f\n"
        "2:5     (\n"
        "2:6     IDENT     a\n"
        "2:7     )\n"
        "2:9     ->\n"
        "2:12    IDENT     float\n"
        "2:18    {\n"
        "2:19    }\n"
        "2:20    NEWLINE\n"
        "3:1     EOF\n");
  CHECK(print_tokens(lex("$ 1.5 \"s\"").tokens) ==
        "1:1     ERROR  unexpected character '$'\n"
        "1:3     FLOAT     1.5\n"
        "1:7     STRING    \"s\"\n"
        "1:10    EOF\n");
  CHECK(std::string(tok_name(Tok::Int)) == "INT");
  CHECK(std::string(tok_name(Tok::Ident)) == "IDENT");
  CHECK(std::string(tok_name(Tok::Newline)) == "NEWLINE");
}

TEST_CASE("lexer: positions stay right along one very long line") {
  // One 80 KB line of 40,000 tokens, with a multi-byte character in a string half-way:
  // the lexer finds positions by walking forward from the previous token (linear time, a
  // speed no test asserts), and every column it reports must still count characters.
  std::string line = "x = 1";
  for (int i = 0; i < 10000; ++i) line += " + 1";
  line += " + f(\"\u00e9\")";
  for (int i = 0; i < 10000; ++i) line += " + 1";
  line += "\ny = 2";
  Lexed l = lex(line);
  size_t chars = 0;  // characters before each byte offset
  std::vector<size_t> col_of(line.size() + 1);
  size_t line_start = 0;
  for (size_t b = 0; b <= line.size(); ++b) {
    col_of[b] = chars - line_start + 1;
    if (b < line.size()) {
      if (line[b] == '\n') line_start = chars + 1;
      if ((static_cast<unsigned char>(line[b]) & 0xC0) != 0x80) ++chars;
    }
  }
  REQUIRE(l.tokens.size() > 40000);
  for (const Token& t : l.tokens) {
    INFO("token at byte ", t.loc.offset);
    CHECK(t.loc.col == col_of[t.loc.offset]);
  }
  CHECK(l.tokens[l.tokens.size() - 4].text == "y");
  CHECK(l.tokens[l.tokens.size() - 4].loc.line == 2);
  CHECK(l.tokens[l.tokens.size() - 4].loc.col == 1);
}
