// Running a program under limits (process.h).
#include "proc/process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

extern char** environ;

namespace descent::proc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uid_t kNobody = 65534;

std::string find_bwrap() {
  for (const char* p : {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// The bubblewrap command line that puts argv in a sandbox: /usr read-only (with Debian's
// merged-/usr links), a private /tmp, /proc and /dev of its own, no network, a new PID
// namespace and session, and only the named paths besides.
std::vector<std::string> bwrap_argv(const std::string& bwrap, const Options& o) {
  std::vector<std::string> a = {bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                                "--ro-bind", "/usr", "/usr"};
  for (const char* link : {"lib", "lib64", "bin", "sbin"}) {
    fs::path host = fs::path("/") / link;
    std::error_code ec;
    if (fs::is_symlink(host, ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(host, ec).string(), host.string()});
    } else if (fs::exists(host, ec)) {
      a.insert(a.end(), {"--ro-bind", host.string(), host.string()});
    }
  }
  // The dynamic loader's cache and the compiler's alternatives (/usr/bin/c++ -> /etc/...).
  for (const char* p : {"/etc/ld.so.cache", "/etc/alternatives"}) {
    std::error_code ec;
    if (fs::exists(p, ec)) a.insert(a.end(), {"--ro-bind", p, p});
  }
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  for (const auto& p : o.sandbox.read_only) a.insert(a.end(), {"--ro-bind", p, p});
  for (const auto& p : o.sandbox.writable) a.insert(a.end(), {"--bind", p, p});
  a.insert(a.end(), {"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
                     "--setenv", "LANG", "C.UTF-8"});
  for (const auto& e : o.env) {
    size_t eq = e.find('=');
    if (eq != std::string::npos) a.insert(a.end(), {"--setenv", e.substr(0, eq), e.substr(eq + 1)});
  }
  if (!o.cwd.empty()) a.insert(a.end(), {"--chdir", o.cwd});
  a.push_back("--");
  a.insert(a.end(), o.argv.begin(), o.argv.end());
  return a;
}

// The tasks (processes and threads) a user has now: RLIMIT_NPROC counts them all, so a
// limit of "n more" is their count plus n.
uint64_t tasks_of(uid_t uid) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0 && st.st_uid == uid && std::isdigit(e.path().filename().string()[0])) {
      std::error_code ec2;
      uint64_t threads = 0;
      for (auto it = fs::directory_iterator(e.path() / "task", ec2); !ec2 && it != fs::directory_iterator();
           it.increment(ec2))
        ++threads;
      n += threads ? threads : 1;
    }
  }
  return n;
}

void set_limit(int resource, uint64_t value) {
  rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &r);
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void child(const Options& o, char* const* argv, char* const* envp, int out_fd, int err_fd,
                        int chan_fd, bool drop, uint64_t nproc, bool sandboxed) {
  ::setpgid(0, 0);  // its own process group: the deadline kills the group
  int in = ::open(o.stdin_file.empty() ? "/dev/null" : o.stdin_file.c_str(), O_RDONLY);
  if (in < 0) {
    static const char msg[] = "cannot open its input\n";
    (void)!::write(err_fd, msg, sizeof msg - 1);
    ::_exit(126);
  }
  ::dup2(in, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (chan_fd >= 0) ::dup2(chan_fd, 3);
  // Everything else the caller had open stays behind (its pipes, its files).
  ::syscall(SYS_close_range, chan_fd >= 0 ? 4u : 3u, ~0u, 0u);
  const Limits& l = o.limits;
  set_limit(RLIMIT_CORE, 0);
  if (l.cpu_s > 0) set_limit(RLIMIT_CPU, static_cast<uint64_t>(std::ceil(l.cpu_s)));
  if (l.address_space) set_limit(RLIMIT_AS, l.address_space);
  if (l.file_size) set_limit(RLIMIT_FSIZE, l.file_size);
  if (l.open_files) set_limit(RLIMIT_NOFILE, l.open_files);
  if (nproc) set_limit(RLIMIT_NPROC, nproc);
  if (drop) {
    gid_t g = kNobody;
    if (::setgroups(1, &g) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
      static const char msg[] = "cannot become nobody\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(126);
    }
  }
  if (!o.cwd.empty() && !sandboxed && ::chdir(o.cwd.c_str()) != 0) {
    static const char msg[] = "cannot enter the working folder\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(126);
  }
  ::execve(argv[0], argv, envp);
  static const char msg[] = "cannot start the program\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

}  // namespace

std::string find_on_path(const std::string& tool) {
  if (tool.find('/') != std::string::npos) return ::access(tool.c_str(), X_OK) == 0 ? tool : "";
  const char* path = std::getenv("PATH");
  std::string rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = rest.find(':');
    std::string dir = rest.substr(0, colon);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + tool;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate, ec)) return candidate;
    if (colon == std::string::npos) break;
    rest = rest.substr(colon + 1);
  }
  return "";
}

std::string signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (a null or dangling pointer, or an out-of-range index)";
    case SIGFPE: return "SIGFPE (an integer division by zero, or INT64_MIN / -1)";
    case SIGABRT: return "SIGABRT (an exception nobody caught, or a failed assertion)";
    case SIGBUS: return "SIGBUS (a misaligned or unmapped access)";
    case SIGILL: return "SIGILL (an illegal instruction)";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU (its CPU time ran out)";
    case SIGXFSZ: return "SIGXFSZ (it wrote a file larger than the limit)";
    case SIGPIPE: return "SIGPIPE (it wrote to a closed pipe)";
    default: return "signal " + std::to_string(sig);
  }
}

bool bwrap_works(std::string* why) {
  static std::once_flag once;
  static bool works = false;
  static std::string reason;
  std::call_once(once, [] {
    if (find_bwrap().empty()) {
      reason = "bubblewrap is not installed (Debian: apt-get install bubblewrap)";
      return;
    }
    Options o;
    o.argv = {"/usr/bin/true"};
    o.sandbox.mode = SandboxMode::Bwrap;
    o.limits.wall_s = 20;
    Result r = run(o);
    works = r.ok;
    if (!works) {
      std::string err = r.err.empty() ? r.problem : r.err;
      while (!err.empty() && err.back() == '\n') err.pop_back();
      reason = "bubblewrap does not run here: " + err;
    }
  });
  if (why) *why = reason;
  return works;
}

Result run(const Options& o) {
  Result r;
  if (o.argv.empty()) {
    r.problem = "no program to run";
    return r;
  }
  std::vector<std::string> argv = o.argv;
  bool sandbox = o.sandbox.mode == SandboxMode::Bwrap ||
                 (o.sandbox.mode == SandboxMode::Auto && bwrap_works());
  if (sandbox) {
    std::string bwrap = find_bwrap();
    if (bwrap.empty()) {
      r.problem = "bubblewrap is not installed (Debian: apt-get install bubblewrap)";
      return r;
    }
    argv = bwrap_argv(bwrap, o);
    r.sandboxed = true;
  }
  bool limited = o.sandbox.mode != SandboxMode::None || o.limits.processes;
  bool drop = limited && o.sandbox.drop_root && ::geteuid() == 0;
  uint64_t nproc = 0;
  if (o.limits.processes) nproc = o.limits.processes + tasks_of(drop ? kNobody : ::getuid());

  // Everything the child needs is made before fork: it may only make system calls after.
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) env_store.push_back(*e);
  for (const auto& e : o.env) env_store.push_back(e);
  for (auto& e : env_store) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  int streams = o.channel ? 3 : 2;
  for (int i = 0; i < streams; ++i)
    if (::pipe2(pipes[i], O_CLOEXEC) != 0) {
      r.problem = std::string("pipe: ") + std::strerror(errno);
      for (auto& p : pipes)
        for (int fd : p)
          if (fd >= 0) ::close(fd);
      return r;
    }
  auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    r.problem = std::string("fork: ") + std::strerror(errno);
    for (auto& p : pipes)
      for (int fd : p)
        if (fd >= 0) ::close(fd);
    return r;
  }
  if (pid == 0) child(o, cargv.data(), cenv.data(), pipes[0][1], pipes[1][1], o.channel ? pipes[2][1] : -1, drop, nproc,
                     r.sandboxed);
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  r.started = true;
  for (int i = 0; i < streams; ++i) ::close(pipes[i][1]);

  std::string* sinks[3] = {&r.out, &r.err, &r.channel};
  uint64_t* totals[3] = {&r.out_total, &r.err_total, &r.channel_total};
  size_t caps[3] = {o.limits.output_cap, o.limits.output_cap, o.limits.channel_cap};
  pollfd fds[3];
  for (int i = 0; i < 3; ++i) fds[i] = {i < streams ? pipes[i][0] : -1, POLLIN, 0};
  int open_fds = streams;
  bool exited = false, killed = false;
  int status = 0;
  rusage usage{};
  Clock::time_point exit_time{};
  auto kill_all = [&] {
    if (killed) return;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    killed = true;
  };
  std::vector<char> buf(1 << 16);
  while (true) {
    auto now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - t0).count();
    if (!exited && o.limits.wall_s > 0 && elapsed >= o.limits.wall_s) {
      r.timed_out = true;
      kill_all();
      break;  // its pipes are read no further
    }
    if (!exited && o.interrupt && o.interrupt->load()) {
      r.interrupted = true;
      kill_all();
      break;
    }
    if (!exited) {
      pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
      if (w == pid) {
        exited = true;
        exit_time = now;
        // What is left of its group is a leftover that may hold the pipes open: gone.
        ::kill(-pid, SIGKILL);
      }
    }
    if (open_fds == 0 && exited) break;
    // After the child exits, what its descendants still hold is read for a moment only.
    if (exited && std::chrono::duration<double>(now - exit_time).count() > 0.2) break;
    int n = ::poll(fds, 3, exited ? 20 : 50);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 3; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf.data(), buf.size());
      if (got > 0) {
        *totals[i] += static_cast<uint64_t>(got);
        size_t room = sinks[i]->size() < caps[i] ? caps[i] - sinks[i]->size() : 0;
        sinks[i]->append(buf.data(), std::min(room, static_cast<size_t>(got)));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (!exited)
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  r.peak_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  // bubblewrap exits with 128 + N when a signal N ended the program it ran, as a shell does.
  if (r.sandboxed && r.exit_code > 128 && r.exit_code < 128 + 65) {
    r.signal = r.exit_code - 128;
    r.exit_code = -1;
  }
  if (r.timed_out) {
    r.problem = "stopped at the time limit";
  } else if (r.interrupted) {
    r.problem = "interrupted";
  } else if (r.exit_code == 0) {
    r.ok = true;
  } else if (r.exit_code > 0) {
    r.problem = "exit status " + std::to_string(r.exit_code);
  } else if (r.signal) {
    r.problem = "killed by " + signal_text(r.signal);
  } else {
    r.problem = "ended abnormally";
  }
  return r;
}

}  // namespace descent::proc
