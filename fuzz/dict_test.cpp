// The fuzzers' dictionaries (fuzz/*.dict) are written out as files for libFuzzer's -dict,
// but the words come from the code's one lists: this test fails, naming what is missing,
// when a keyword, operator, builtin or REPL command is added without its dictionary line.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <string>

#include "apps/repl.h"
#include "lang/ast.h"
#include "lang/token.h"

using namespace descent;

namespace {

// The entries of a dictionary file: every line "..." with \\ and \" unescaped.
std::set<std::string> entries(const std::string& name) {
  std::ifstream in(std::string(DESCENT_FUZZ_DIR) + "/" + name);
  REQUIRE_MESSAGE(in, "cannot read fuzz/" << name);
  std::set<std::string> words;
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 2 || line.front() != '"' || line.back() != '"') continue;
    std::string w;
    for (size_t i = 1; i + 1 < line.size(); ++i) {
      if (line[i] == '\\' && i + 2 < line.size()) ++i;
      w += line[i];
    }
    words.insert(w);
  }
  return words;
}

// The language's words: keywords, punctuation and operators, builtins (minus `skip`).
std::set<std::string> language_words(const std::set<std::string>& skip = {}) {
  std::set<std::string> words;
  for (auto k : keywords()) words.insert(std::string(k));
#define X(name, text) words.insert(text);
  DESCENT_TOKENS(X)
#undef X
  for (const char* cls : {"INT", "FLOAT", "STRING", "IDENT", "NEWLINE", "EOF", "ERROR"})
    words.erase(cls);  // classes of tokens, not spellings
  for (int b = int(Builtin::None) + 1; b <= int(Builtin::SumAll); ++b)  // SumAll: the last
    words.insert(builtin_name(Builtin(b)));
  for (const auto& s : skip) words.erase(s);
  return words;
}

std::string missing(const std::set<std::string>& want, const std::set<std::string>& have) {
  std::string m;
  for (const auto& w : want)
    if (!have.count(w)) m += " \"" + w + "\"";
  return m;
}

}  // namespace

TEST_CASE("fuzz/frontend.dict has every keyword, operator and builtin") {
  auto have = entries("frontend.dict");
  CHECK_MESSAGE(missing(language_words(), have).empty(),
                "add to fuzz/frontend.dict:" << missing(language_words(), have));
  CHECK(have.count("kernel"));  // the parser really found entries
}

TEST_CASE("fuzz/repl.dict has every command, alias and language word") {
  auto have = entries("repl.dict");
  std::set<std::string> want = language_words({"load", "save"});  // fuzz_repl skips these
  for (const auto& c : Repl::command_table()) {
    if (std::string(c.name) != ":load") want.insert(c.name);
    for (const char* a : c.aliases) want.insert(a);
  }
  CHECK(want.count(":sched"));
  CHECK_MESSAGE(missing(want, have).empty(), "add to fuzz/repl.dict:" << missing(want, have));
}
