// Memory that does not grow with the number of inputs (issue 32): a REPL session of many
// lines, on every engine, and `descent run` of a loop that runs ten times longer, must peak
// at about the same resident memory as a short one. What a later input can still reach (the
// functions, the globals, the source of the lines that defined them) is kept; each input's
// own tokens, tree, diagnostics and compiled top-level code are freed with the next one.
//
// Measured as peak resident memory by tests/tools/peak_rss (fe::peak_kib), so nothing this
// test binary did before counts.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pipeline/pipeline.h"
#include "frontend_util.h"

namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("descent-input-memory-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

long peak_kib(const std::vector<std::string>& args, const std::string& input) {
  return fe::peak_kib(args, input, (scratch_dir() / "peak.txt").string());
}

// A REPL session of `lines` lines of the kinds a long session holds: assignments, echoed
// expressions, prints, a runtime error every 10th line, a compile error every 25th, and a
// function redefined (and called) every 50th.
std::string repl_session(const std::string& engine, int lines) {
  fs::path file = scratch_dir() / (engine + "-" + std::to_string(lines) + ".txt");
  std::ofstream out(file);
  out << ":engine " << engine << "\nx = 0\nfn f(a: int) -> int { return a + 1 }\n";
  for (int i = 0; i < lines; ++i) {
    if (i % 50 == 0)
      out << "fn f(a: int) -> int { return a + " << i << " }\n";
    else if (i % 25 == 0)
      out << "y = x +\n";  // a syntax error
    else if (i % 10 == 0)
      out << "x / (x - x)\n";  // division by zero
    else if (i % 3 == 0)
      out << "print(\"line\", " << i << ", f(x))\n";
    else if (i % 3 == 1)
      out << "x = x + " << i % 7 << "\n";
    else
      out << "x * 2 + " << i << "\n";
  }
  return file.string();
}

}  // namespace

TEST_CASE("a long REPL session does not grow: 1,000 lines and 5,000 peak within 3 MiB, on every engine") {
  for (const std::string& engine : descent::Session::engines()) {
    CAPTURE(engine);
    long short_run = peak_kib({}, repl_session(engine, 1000));
    long long_run = peak_kib({}, repl_session(engine, 5000));
    INFO("1,000 lines: " << short_run << " KiB, 5,000 lines: " << long_run << " KiB");
    // Before the fix each line kept about 3.7 KB: 4,000 more lines were 14 MiB more.
    CHECK(long_run - short_run < 3 * 1024);
  }
  fs::remove_all(scratch_dir());
}

TEST_CASE("descent run: a loop ten times longer peaks at the same memory") {
  auto script = [](int iterations) {
    fs::path file = scratch_dir() / ("loop-" + std::to_string(iterations) + ".ds");
    std::ofstream(file) << "fn g(a: int, b: float) -> float { return float(a) * b + 1.0 }\n"
                           "total = 0.0\n"
                           "for i in 0.." << iterations << " {\n"
                           "  total = total + g(i % 17, 0.5)\n"
                           "  if i % 1000 == 0 { print(i, total) }\n"
                           "}\n"
                           "print(total)\n";
    return file.string();
  };
  for (const std::string& engine : descent::Session::engines()) {
    CAPTURE(engine);
    long short_run = peak_kib({"run", "--engine", engine, script(20000)}, "");
    long long_run = peak_kib({"run", "--engine", engine, script(200000)}, "");
    INFO("20,000 iterations: " << short_run << " KiB, 200,000: " << long_run << " KiB");
    CHECK(long_run - short_run < 2 * 1024);
  }
  fs::remove_all(scratch_dir());
}
