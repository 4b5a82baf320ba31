// The README lists every check and its points (issue 31): in each lab's README.md, the
// section "## The checks" has one numbered item per check of lab.json, in the same order,
// and item k ends with "(P point)" or "(P points)" (a final period aside), P being check k's
// points. A check added to lab.json, or points changed there, fails here until the README
// tells the student.
#include <doctest/doctest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "labs/runner/lab.h"

namespace {

// The numbered items of README's "## The checks" section (up to the next "## " heading),
// each with its indented continuation lines joined by one space.
std::vector<std::string> check_items(const std::string& readme) {
  std::vector<std::string> items;
  std::istringstream in(readme);
  std::string line;
  bool inside = false, open = false;  // in the section; the last item may still continue
  while (std::getline(in, line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.rfind("## ", 0) == 0) {
      if (inside) break;
      inside = line == "## The checks";
      continue;
    }
    if (!inside) continue;
    size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    if (digits > 0 && line.compare(digits, 2, ". ") == 0) {
      items.push_back(line);
      open = true;
    } else if (open && !line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      items.back() += " " + line.substr(line.find_first_not_of(" \t"));
    } else {
      open = false;  // a blank line or a paragraph ends the item
    }
  }
  return items;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("every lab's README lists its checks, in order, each with its points") {
  std::vector<descent::labs::Lab> labs;
  std::string error;
  REQUIRE_MESSAGE(descent::labs::load_labs(descent::labs::default_labs_dir(), &labs, &error), error);
  REQUIRE(!labs.empty());
  for (const auto& lab : labs) {
    CAPTURE(lab.name);
    std::ifstream file(lab.dir + "/README.md");
    REQUIRE_MESSAGE(file.good(), lab.dir, "/README.md is missing");
    std::stringstream text;
    text << file.rdbuf();
    std::vector<std::string> items = check_items(text.str());
    CHECK_MESSAGE(items.size() == lab.checks.size(), "README items: ", items.size(),
                  ", lab.json checks: ", lab.checks.size());
    for (size_t k = 0; k < items.size() && k < lab.checks.size(); ++k) {
      const auto& check = lab.checks[k];
      std::string item = items[k];
      if (ends_with(item, ".")) item.pop_back();
      std::string want = "(" + std::to_string(check.points) + (check.points == 1 ? " point)" : " points)");
      INFO("item ", k + 1, " should end with ", want, " for the check \"", check.name, "\": ", items[k]);
      CHECK(ends_with(item, want));
    }
  }
}
