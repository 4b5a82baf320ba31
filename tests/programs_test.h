// Shared by the golden-program runner and other tests: reading the `# expect:`, `# error:`
// and `# exit:` annotations of a .ds file, and running a program through the pipeline.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"

namespace descent::testing {

struct Expectation {
  std::vector<std::string> output;  // `# expect: LINE`, in order
  std::vector<std::string> errors;  // `# error: L:C: MESSAGE`, in order
  int exit_code = 0;                // `# exit: N` (0 when absent)
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

#ifdef DESCENT_TESTS_DIR
// Every .ds file of a folder under tests/ ("programs", "errors", "malformed"), sorted.
inline std::vector<std::filesystem::path> ds_files(const char* folder) {
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::directory_iterator(std::filesystem::path(DESCENT_TESTS_DIR) / folder))
    if (e.path().extension() == ".ds") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
#endif

inline Expectation parse_expectations(const std::string& text) {
  Expectation e;
  std::istringstream in(text);
  auto after = [](const std::string& line, const std::string& tag, std::string* rest) {
    size_t p = line.find(tag);
    if (p == std::string::npos) return false;
    *rest = line.substr(p + tag.size());
    if (!rest->empty() && (*rest)[0] == ' ') rest->erase(0, 1);
    while (!rest->empty() && (rest->back() == '\r' || rest->back() == ' ')) rest->pop_back();
    return true;
  };
  for (std::string line, rest; std::getline(in, line);) {
    if (after(line, "# expect:", &rest)) e.output.push_back(rest);
    else if (after(line, "# error:", &rest)) e.errors.push_back(rest);
    else if (after(line, "# exit:", &rest)) e.exit_code = std::stoi(rest);
  }
  return e;
}

struct Actual {
  std::vector<std::string> output;
  std::vector<std::string> errors;  // "L:C: MESSAGE"
  int exit_code = 0;
  std::string message;  // the formatted diagnostics, for failure reports
};

inline Actual run_program(const std::string& text, const std::string& name,
                          const std::string& engine, uint64_t step_limit = 0,
                          const std::string& device = "ref") {
  Session s;
  s.set_engine(engine);
  s.set_device(device);
  std::string out;
  RunOptions opts;
  opts.out = [&](std::string_view t) { out += t; };
  opts.step_limit = step_limit;
  Outcome o = s.submit(text, name, opts);
  Actual a;
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) a.output.push_back(l);
  for (const auto& d : o.diagnostics)
    a.errors.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
  a.exit_code = o.exit_code();
  a.message = o.message;
  return a;
}

}  // namespace descent::testing
