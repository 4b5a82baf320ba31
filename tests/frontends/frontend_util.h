// Helpers shared by the front-end tests: temporary files, and running the real `descent`
// binary as a child process with its stdin, stdout and stderr on pipes (POSIX).
//
// Every wait has a deadline (10 s by default): a front end that hangs makes its test fail
// (the child is killed), it never hangs the test run. Nothing here asserts that anything is
// fast; the deadlines only bound how long a broken build can take.
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sstream>

#include "../sanitizer.h"
#include "apps/repl.h"
#include "pipeline/pipeline.h"

namespace fe {

// A REPL with its own session and captured streams, in process. take_out()/take_err() return
// what was written since the last call, so each step can be checked on its own.
struct ReplHarness {
  descent::Session session;
  std::ostringstream out, err;
  descent::Repl repl{session, out, err};

  bool feed(const std::string& line) { return repl.feed(line); }
  std::string take_out() {
    std::string s = out.str();
    out.str("");
    return s;
  }
  std::string take_err() {
    std::string s = err.str();
    err.str("");
    return s;
  }
};


namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kDeadlineSeconds = 10.0;

inline bool contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

// A fresh directory under the system temp dir, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "descent-fe-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to NAME inside the directory and returns its full path.
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream f(p, std::ios::binary);
    f << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct ProcResult {
  bool exited = false;    // exited normally (then exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;    // when killed by a signal
  bool timed_out = false; // we had to kill it at the deadline
  std::string out, err;
};

// One running `descent` (or other program) with all three standard streams on pipes.
class Child {
 public:
  // env: extra NAME=VALUE settings for the child (e.g. OCL_ICD_VENDORS to hide OpenCL).
  explicit Child(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    ::signal(SIGPIPE, SIG_IGN);  // a child that died must not kill the test by SIGPIPE
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
      throw std::runtime_error("pipe2 failed");
    std::vector<std::string> argv_store = args;
    std::vector<char*> argv;
    for (auto& a : argv_store) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // Child: a clean signal state, so SIGINT reaches descent's own handler.
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGPIPE, SIG_DFL);
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    in_ = in[1];
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  ~Child() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
    }
    close_fd(in_);
    close_fd(out_fd_);
    close_fd(err_fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // Writes to the child's stdin (all of it, unless the child has gone away).
  void write(std::string_view s) {
    while (!s.empty() && in_ >= 0) {
      ssize_t n = ::write(in_, s.data(), s.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      s.remove_prefix(static_cast<size_t>(n));
    }
  }
  void close_stdin() { close_fd(in_); }

  void send_signal(int sig) const { kill(pid_, sig); }

  // True once the child has a handler installed for `sig` (read from /proc on Linux). Where
  // /proc is unavailable it waits a moment and says true. Used so a SIGINT is never sent
  // before the program is ready to catch it, which would kill it for a reason that is not
  // the behaviour under test.
  bool wait_for_handler(int sig) {
    std::string status = "/proc/" + std::to_string(pid_) + "/status";
    auto deadline = Clock::now() + std::chrono::duration<double>(kDeadlineSeconds);
    while (Clock::now() < deadline) {
      std::ifstream f(status);
      if (!f) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return true;
      }
      std::string line;
      while (std::getline(f, line)) {
        if (line.rfind("SigCgt:", 0) == 0) {
          unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
          if (mask & (1ull << (sig - 1))) return true;
        }
      }
      pump(20);
      if (reaped_) return false;
    }
    return false;
  }

  // Reads whatever the child writes for about `ms` milliseconds.
  void pump(int ms) {
    auto until = Clock::now() + std::chrono::milliseconds(ms);
    do {
      struct pollfd fds[2];
      int n = 0;
      if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
      if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
      if (n == 0) {
        try_reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
      int r = poll(fds, n, left > 0 ? left : 0);
      if (r < 0 && errno != EINTR) break;
      for (int i = 0; i < n && r > 0; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        bool is_out = fds[i].fd == out_fd_;
        char buf[4096];
        ssize_t got = read(fds[i].fd, buf, sizeof buf);
        if (got > 0) {
          (is_out ? out_ : err_).append(buf, static_cast<size_t>(got));
        } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
          close_fd(is_out ? out_fd_ : err_fd_);
        }
      }
    } while (Clock::now() < until);
  }

  // Waits (pumping output) until `pred(stdout, stderr)` holds, the child exits, or the
  // deadline passes. Returns whether the predicate held.
  bool wait_until(const std::function<bool(const std::string&, const std::string&)>& pred,
                  double seconds = kDeadlineSeconds) {
    auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      if (pred(out_, err_)) return true;
      pump(20);
      if (reaped_ && out_fd_ < 0 && err_fd_ < 0) return pred(out_, err_);
    }
    return pred(out_, err_);
  }

  // Closes stdin, collects all output and the exit status. Kills the child (and reports
  // timed_out) if it has not finished by the deadline.
  ProcResult finish(double seconds = kDeadlineSeconds) {
    close_stdin();
    auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (!(reaped_ && out_fd_ < 0 && err_fd_ < 0)) {
      if (Clock::now() >= deadline) {
        if (!reaped_) {
          kill(pid_, SIGKILL);
          int st;
          waitpid(pid_, &st, 0);
          reaped_ = true;
          status_ = st;
        }
        timed_out_ = true;
        break;
      }
      pump(20);
      try_reap();
    }
    ProcResult r;
    r.timed_out = timed_out_;
    r.out = out_;
    r.err = err_;
    if (!timed_out_ && WIFEXITED(status_)) {
      r.exited = true;
      r.exit_code = WEXITSTATUS(status_);
    } else if (WIFSIGNALED(status_)) {
      r.term_signal = WTERMSIG(status_);
    }
    return r;
  }

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  void try_reap() {
    if (reaped_) return;
    int st;
    pid_t p = waitpid(pid_, &st, WNOHANG);
    if (p == pid_) {
      reaped_ = true;
      status_ = st;
    }
  }

  pid_t pid_ = -1;
  int in_ = -1, out_fd_ = -1, err_fd_ = -1;
  bool reaped_ = false, timed_out_ = false;
  int status_ = 0;
  std::string out_, err_;
};

// Runs `descent ARGS...` with `input` on stdin (then EOF) and returns what happened.
inline ProcResult run_descent(const std::vector<std::string>& args, const std::string& input = "",
                              const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {DESCENT_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  Child c(argv, env);
  c.write(input);
  return c.finish();
}

// Runs `descent ARGS...` under `ulimit -v KIB` (through /bin/sh, so the limit holds for the
// whole process, as a user's shell would set it), with `input` on stdin. Exit code 77 means
// the shell could not set the limit: see limit_unsupported.
inline ProcResult run_descent_limited(const std::string& kib, const std::vector<std::string>& args,
                                      const std::string& input, double seconds = 60.0) {
  if (kUnderAddressSanitizer) {
    ProcResult skipped;
    skipped.exited = true;
    skipped.exit_code = 77;
    return skipped;
  }
  std::vector<std::string> argv = {
      "/bin/sh", "-c", "ulimit -v " + kib + " 2>/dev/null || exit 77; exec \"$@\"", "sh",
      DESCENT_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  Child c(argv);
  c.write(input);
  return c.finish(seconds);
}

// True (and says so) when run_descent_limited could not set the limit here.
inline bool limit_unsupported(const ProcResult& r) {
  if (r.exited && r.exit_code == 77) {
    const char* why = kUnderAddressSanitizer ? "not run under AddressSanitizer (see tests/sanitizer.h)"
                                             : "skipped: /bin/sh cannot set ulimit -v here";
    MESSAGE(why);
    return true;
  }
  return false;
}

// Describes a result for failure messages.
inline std::string describe(const ProcResult& r) {
  std::ostringstream s;
  if (r.timed_out) s << "[timed out and killed] ";
  if (r.exited) s << "exit " << r.exit_code;
  else s << "signal " << r.term_signal;
  s << "\n--- stdout ---\n" << r.out << "--- stderr ---\n" << r.err << "--------------";
  return s.str();
}

// Checks a diagnostic block "FILE:L:C: error: MESSAGE" / source line / caret line, starting
// at line `first` of `text`. Returns an empty string when it matches, else what is wrong.
inline std::string check_diagnostic(const std::string& text, const std::string& file, int line,
                                    int col, const std::string& message,
                                    const std::string& source_line, size_t first = 0) {
  auto lines = split_lines(text);
  if (lines.size() < first + 3) return "fewer than 3 lines in: " + text;
  std::string head = file + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": error: " + message;
  if (lines[first] != head) return "header is '" + lines[first] + "', expected '" + head + "'";
  const std::string& src = lines[first + 1];
  // The source line is shown as is, after an indent of blanks only.
  size_t at = src.size() >= source_line.size() ? src.size() - source_line.size() : std::string::npos;
  if (at == std::string::npos || src.compare(at, std::string::npos, source_line) != 0 ||
      src.find_first_not_of(" \t") < at)
    return "source line is '" + src + "', expected it to show '" + source_line + "'";
  const std::string& caret = lines[first + 2];
  size_t c = caret.find('^');
  if (c == std::string::npos) return "no caret in '" + caret + "'";
  if (caret.find_first_not_of(' ') != c || caret.find_last_not_of(' ') != c)
    return "caret line is '" + caret + "', expected spaces and one '^'";
  if (c != at + static_cast<size_t>(col - 1))
    return "caret at offset " + std::to_string(c) + " of '" + caret + "', expected it under column " +
           std::to_string(col) + " of '" + src + "'";
  return "";
}

// Peak resident KiB of `descent ARGS...` (stdin from `input`, "" for none; stdout dropped),
// measured by tests/tools/peak_rss: a fresh process that forks descent, so nothing this test
// binary did before counts (a child forked from here would start its ru_maxrss from this
// process's peak). `report` is a scratch file; *status gets descent's exit code.
inline long peak_kib(const std::vector<std::string>& args, const std::string& input,
                     const std::string& report, int* status = nullptr) {
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
  int wstatus = 0;
  REQUIRE(waitpid(pid, &wstatus, 0) == pid);
  REQUIRE(WIFEXITED(wstatus));
  if (status) *status = WEXITSTATUS(wstatus);
  std::ifstream in(report);
  std::string word;
  long kib = -1;
  while (in >> word)
    if (word == "peak_kib") in >> kib;
  REQUIRE(kib > 0);
  return kib;
}

}  // namespace fe
