// Memory that does not grow with the number of inputs (issue 32): a REPL session of many
// lines, on every engine, and `descent run` of a loop that runs ten times longer, must peak
// at about the same resident memory as a short one. What a later input can still reach (the
// functions, the globals, the source of the lines that defined them) is kept; each input's
// own tokens, tree, diagnostics and compiled top-level code are freed with the next one.
//
// Measured as peak resident memory by tests/tools/peak_rss (a fresh process that forks the
// one it measures), so nothing this test binary did before counts.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pipeline/pipeline.h"

namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("descent-input-memory-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

// Peak resident KiB of `descent ARGS...` with stdin from `input` (may be empty).
long peak_kib(const std::vector<std::string>& args, const std::string& input) {
  fs::path report = scratch_dir() / "peak.txt";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int in = open(input.empty() ? "/dev/null" : input.c_str(), O_RDONLY);
    int null = open("/dev/null", O_WRONLY);
    int err = open(report.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(null, 1);
    dup2(err, 2);
    std::vector<char*> argv = {const_cast<char*>(DESCENT_PEAK_RSS), const_cast<char*>(DESCENT_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(DESCENT_PEAK_RSS, argv.data());
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  std::ifstream in(report);
  std::string word;
  long kib = -1;
  while (in >> word)
    if (word == "peak_kib") in >> kib;
  REQUIRE(kib > 0);
  return kib;
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
