// README.md's "A two-minute tour" is a test: every `descent> ` line of its REPL transcripts
// is fed to a REPL, and what the REPL prints must be the text the README shows under it.
// In the README a line "..." stands for any number of lines the tour leaves out, a line
// ending in "..." for any line that starts with the text before it, and times ("14.618 ms")
// are compared as "N ms": they are the only thing that may differ from run to run.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "../lines_match.h"
#include "frontend_util.h"

namespace {

struct Entry {
  std::vector<std::string> input;     // the prompt line, then its continuation lines
  std::vector<std::string> expected;  // what the README shows under it
};

// The tour's transcripts: the code blocks between "## A two-minute tour" and the next
// section that contain a `descent> ` prompt.
std::vector<std::vector<Entry>> tour_transcripts(const std::string& readme) {
  size_t from = readme.find("## A two-minute tour");
  size_t to = readme.find("\n## ", from + 1);
  std::istringstream in(readme.substr(from, to - from));
  std::vector<std::vector<Entry>> blocks;
  bool in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      if (in_block) blocks.emplace_back();
      continue;
    }
    if (!in_block) continue;
    auto& b = blocks.back();
    if (line.rfind("descent> ", 0) == 0) b.push_back(Entry{{line.substr(9)}, {}});
    else if (line.rfind("   ...> ", 0) == 0 && !b.empty()) b.back().input.push_back(line.substr(8));
    else if (!b.empty()) b.back().expected.push_back(line);
  }
  std::erase_if(blocks, [](const auto& b) { return b.empty(); });
  return blocks;
}

std::string normalize(std::string line) {
  static const std::regex time(R"(\s*\d+\.\d+ ms)");
  line = std::regex_replace(line, time, " N ms");
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

bool same_line(const std::string& expected, const std::string& actual) {
  std::string e = normalize(expected), a = normalize(actual);
  if (e.size() > 3 && e.ends_with("...")) return a.rfind(e.substr(0, e.size() - 3), 0) == 0;
  return e == a;
}

bool matches(const std::vector<std::string>& e, size_t i, const std::vector<std::string>& a,
             size_t j) {
  return lines_match(e, i, a, j, same_line);
}

}  // namespace

TEST_CASE("README's tour: each REPL input prints what the README shows") {
  std::ifstream f(std::string(DESCENT_TESTS_DIR) + "/../README.md");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  auto blocks = tour_transcripts(text.str());
  REQUIRE(blocks.size() >= 2);  // the scalar tour and the tensor tour
  for (const auto& block : blocks) {
    fe::ReplHarness h;  // each transcript is a session of its own
    for (const auto& entry : block) {
      for (const auto& line : entry.input) h.feed(line);
      std::string printed = h.take_out() + h.take_err();
      auto actual = fe::split_lines(printed);
      INFO("input: " << entry.input[0]);
      INFO("printed:\n" << printed);
      CHECK(matches(entry.expected, 0, actual, 0));
    }
  }
}

TEST_CASE("the tour's matcher: '...' skips lines, times are free, the rest must be equal") {
  std::vector<std::string> a = {"engine  steps  time", "ast  12   14.618 ms  ok", "x", "y"};
  CHECK(matches({"engine  steps  time", "ast  12    3.001 ms  ok", "..."}, 0, a, 0));
  CHECK(matches({"engine...", "...", "y"}, 0, a, 0));
  CHECK_FALSE(matches({"engine  steps  time", "ast  13   14.618 ms  ok", "..."}, 0, a, 0));
  CHECK_FALSE(matches({"engine  steps  time"}, 0, a, 0));  // unshown lines are a difference
}
