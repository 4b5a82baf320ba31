// The parser: tokens -> AST, by recursive descent for statements and Pratt precedence
// climbing for expressions. After a syntax error it skips to the end of the statement
// (panic mode, as in clox) and goes on, so one run reports every independent mistake.
#pragma once
#include <memory>
#include <vector>

#include "lang/ast.h"
#include "lang/token.h"

namespace descent {

// Limits that keep every later tree walk's recursion bounded, whatever the input.
constexpr int kMaxNesting = 256;       // blocks, parentheses and unary operators
// A flat chain (1 + 1 + ... + 1, a long && of conditions) makes a tree as tall as it is
// long; every walker recurses on it, on the Session's 512 MB stack (lang/engine.h).
constexpr uint32_t kMaxExprHeight = 100000;  // e.g. 1 + 1 + ... + 1 with 100,000 terms

// Parses a whole unit. Syntax errors are appended to diags; the returned Program holds every
// statement that parsed.
Program parse(std::shared_ptr<const SourceFile> source, std::vector<Diagnostic>& diags);
// The same, from tokens already made by tokenize(*source).
Program parse(std::shared_ptr<const SourceFile> source, std::vector<Token> tokens,
              std::vector<Diagnostic>& diags);

}  // namespace descent
