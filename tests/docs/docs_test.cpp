// The docs' examples are checked: a command in docs/*.md or README.md marked
//
//   <!-- check: descent dump examples/tour.ds --stage tokens -->
//   ```
//   what it prints
//   ```
//
// (the comment is invisible on a rendered page) is run with /bin/sh from the project root,
// `descent` being the binary just built, and its output (stdout, then stderr) must equal the
// fenced block that follows. A line `...` in the block stands for any number of lines, for
// the parts of a listing the text skips. Trailing spaces are ignored. A check's command may
// use {prev}: the nearest fenced block above it that is not itself a check's output (the
// program the text shows), written to a file.
//
// A doc that shows output it no longer prints fails here, naming the file and line.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../lines_match.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = DESCENT_SOURCE_DIR;

struct Check {
  std::string file;
  int line = 0;          // the comment's line
  std::string command;
  std::string expected;  // the fenced block after it
  std::string previous;  // the nearest unchecked fenced block before it ({prev})
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
    out.push_back(l);
  }
  return out;
}

std::vector<Check> find_checks(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<std::string> lines = lines_of(ss.str());
  std::vector<Check> checks;
  std::string previous;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("```", 0) == 0) {  // a fenced block not claimed by a check: remember it
      std::string block;
      for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) block += lines[i] + "\n";
      previous = block;
      continue;
    }
    if (l.rfind("<!-- check: ", 0) != 0) continue;
    Check c;
    c.file = fs::relative(path, kRoot).string();
    c.line = static_cast<int>(i + 1);
    c.command = l.substr(12, l.rfind(" -->") - 12);
    c.previous = previous;
    size_t j = i + 1;
    REQUIRE_MESSAGE(j < lines.size(), c.file << ":" << c.line << ": a check needs a fenced block");
    REQUIRE_MESSAGE(lines[j].rfind("```", 0) == 0,
                    c.file << ":" << c.line << ": a check needs a fenced block right after it");
    for (++j; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) c.expected += lines[j] + "\n";
    i = j;
    checks.push_back(c);
  }
  return checks;
}

std::string run(const std::string& command) {
  std::string sh = "cd '" + kRoot.string() + "' && export PATH='" +
                   fs::path(DESCENT_BIN).parent_path().string() + "':\"$PATH\" && { " + command +
                   "; } 2>&1";
  FILE* p = popen(sh.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// Does `got` match `want`, where a "..." line in want matches any run of lines?
bool matches(const std::vector<std::string>& want, size_t wi, const std::vector<std::string>& got,
             size_t gi) {
  return lines_match(want, wi, got, gi, [](const std::string& a, const std::string& b) { return a == b; });
}

}  // namespace

TEST_CASE("every checked example in README.md and docs/ prints what the page shows") {
  std::vector<fs::path> pages = {kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  int checked = 0;
  for (const auto& page : pages) {
    for (const Check& c : find_checks(page)) {
      std::string command = c.command;
      fs::path prev = fs::temp_directory_path() / "descent-docs-prev.ds";
      for (size_t at; (at = command.find("{prev}")) != std::string::npos;) {
        std::ofstream(prev) << c.previous;
        command.replace(at, 6, prev.string());
      }
      std::string got = run(command);
      INFO(c.file << ":" << c.line << ": " << c.command << "\n--- the page shows ---\n"
                  << c.expected << "--- it prints ---\n" << got);
      CHECK(matches(lines_of(c.expected), 0, lines_of(got), 0));
      ++checked;
    }
  }
  // The pages mark their examples; losing the marks would make this test pass vacuously.
  CHECK(checked >= 6);
}

TEST_CASE("the matcher: ... stands for any lines, nothing else is loose") {
  CHECK(matches({"a", "...", "d"}, 0, {"a", "b", "c", "d"}, 0));
  CHECK(matches({"a", "...", "d"}, 0, {"a", "d"}, 0));
  CHECK_FALSE(matches({"a", "...", "d"}, 0, {"a", "b"}, 0));
  CHECK_FALSE(matches({"a", "b"}, 0, {"a", "b", "c"}, 0));
  CHECK_FALSE(matches({"a"}, 0, {"A"}, 0));
}
