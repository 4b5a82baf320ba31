// lang/text.h: lines, and the line diff as data (changed_lines), which the visualizer colours.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "lang/text.h"

namespace {
std::vector<std::string> L(std::string_view text) { return descent::split_lines(text); }
}  // namespace

TEST_CASE("changed_lines marks what a pass changed, as diff does") {
  using descent::changed_lines;
  CHECK(changed_lines(L("a\nb\nc\n"), L("a\nb\nc\n")) == std::vector<bool>{false, false, false});
  CHECK(changed_lines(L("a\nb\nc\n"), L("a\nX\nc\n")) == std::vector<bool>{false, true, false});
  CHECK(changed_lines(L("a\nb\nc\n"), L("a\nc\n")) == std::vector<bool>{false, false});
  CHECK(changed_lines(L("a\nc\n"), L("z\na\nb\nc\n")) ==
        std::vector<bool>{true, false, true, false});
  CHECK(changed_lines(L(""), L("a\n")) == std::vector<bool>{true});
}

TEST_CASE("split_words: the words between runs of white space") {
  CHECK(descent::split_words(" split  i\t4 \n") == std::vector<std::string>{"split", "i", "4"});
  CHECK(descent::split_words("").empty());
  CHECK(descent::split_words(" \t ").empty());
  CHECK(descent::split_words("one") == std::vector<std::string>{"one"});
}
