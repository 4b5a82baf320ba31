// Small helpers shared by the unit tests of tests/lang/*.cpp and tests/pipeline/*.cpp.
#pragma once
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "lang/ast_print.h"
#include "lang/module.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "lang/token.h"
#include "lang/tree.h"
#include "pipeline/pipeline.h"
#include "tests/programs_test.h"

// Readable failure messages for lists of lines.
namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
    s += "}";
    return String(s.c_str());
  }
};
}  // namespace doctest

namespace descent::unit {

// "L:C: message" for each diagnostic, the form the must-fail tests use.
inline std::vector<std::string> locs(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds)
    out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
  return out;
}

// Tokens keep string_views into their SourceFile, so keep the file alive with them.
struct Lexed {
  std::shared_ptr<SourceFile> file;
  std::vector<Token> tokens;
  std::vector<Tok> kinds() const {
    std::vector<Tok> k;
    for (const auto& t : tokens) k.push_back(t.kind);
    return k;
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> k;
    for (const auto& t : tokens) k.emplace_back(t.text);
    return k;
  }
};

inline Lexed lex(const std::string& text) {
  Lexed l;
  l.file = std::make_shared<SourceFile>("t.ds", text);
  l.tokens = tokenize(*l.file);
  return l;
}

struct Parsed {
  Program program;
  std::vector<Diagnostic> diags;
  std::vector<std::string> errors() const { return locs(diags); }
  std::string sexpr() const {
    std::string s = print_tree_sexpr(ast_to_tree(program));
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
};

inline Parsed parse_text(const std::string& text) {
  Parsed p;
  p.program = parse(std::make_shared<SourceFile>("t.ds", text), p.diags);
  return p;
}

// The s-expression of a program as parsed (before semantic analysis).
inline std::string parsed_sexpr(const std::string& text) { return parse_text(text).sexpr(); }

// Compiles one input in a fresh Session and returns the checked tree ("ast" stage).
inline std::string checked_sexpr(const std::string& text) {
  Session s;
  Outcome o = s.compile(text, "t.ds");
  if (o.status != Outcome::Ok) return "COMPILE ERROR: " + o.message;
  std::string t = s.stage("ast", Format::Sexpr).text;
  if (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

// Compile errors of one input in a fresh Session, as "L:C: message".
inline std::vector<std::string> compile_errors(const std::string& text) {
  Session s;
  return locs(s.compile(text, "t.ds").diagnostics);
}

// Runs a program on the AST walker: its output lines, errors and exit code.
inline testing::Actual run(const std::string& text, uint64_t step_limit = 0) {
  return testing::run_program(text, "t.ds", "ast", step_limit);
}

// A Session with a string sink, for REPL-style tests that submit several inputs.
struct Repl {
  Session session;
  std::string out;
  RunOptions opts;
  explicit Repl(bool echo = false) {
    opts.out = [this](std::string_view t) { out += t; };
    opts.echo = echo;
  }
  // Submits one input; returns what it printed (or the first error as "L:C: message").
  std::string submit(const std::string& text) {
    out.clear();
    last = session.submit(text, "<repl>", opts);
    if (last.status != Outcome::Ok) {
      auto e = locs(last.diagnostics);
      return out + "ERROR " + (e.empty() ? last.message : e[0]);
    }
    return out;
  }
  Outcome last;
};

}  // namespace descent::unit
