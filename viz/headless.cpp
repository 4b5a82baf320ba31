#include "viz/headless.h"

#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <X11/Xlib.h>


namespace descent::viz {

bool x_display_works(const std::string& display) {
  if (display.empty()) return false;
  Display* d = XOpenDisplay(display.c_str());
  if (!d) return false;
  XCloseDisplay(d);
  return true;
}

namespace {
std::string find_xvfb() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  dirs += ":/usr/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string cand = dirs.substr(start, colon - start) + "/Xvfb";
    if (access(cand.c_str(), X_OK) == 0) return cand;
    start = colon + 1;
  }
  return "";
}
}  // namespace

std::unique_ptr<XServer> XServer::existing(std::string* error) {
  const char* d = std::getenv("DISPLAY");
  if (!d || !*d) {
    *error = "$DISPLAY is not set";
    return nullptr;
  }
  Display* x = XOpenDisplay(d);
  if (!x) {
    *error = std::string("$DISPLAY is ") + d + " but it does not answer";
    return nullptr;
  }
  std::unique_ptr<XServer> s(new XServer());
  s->display_ = d;
  s->hold_ = x;
  return s;
}

std::unique_ptr<XServer> XServer::ensure(std::string* error) {
  std::string ignored;
  if (auto s = existing(&ignored)) return s;
  std::unique_ptr<XServer> s(new XServer());
  std::string xvfb = find_xvfb();
  if (xvfb.empty()) {
    *error = "no X display ($DISPLAY unset or not answering) and no Xvfb on PATH "
             "(install it: apt-get install xvfb)";
    return nullptr;
  }
  // -displayfd: Xvfb picks a free display number itself and writes it to our pipe once it
  // accepts connections. Choosing the number here instead races with other processes
  // starting servers at the same moment (parallel tests, several screenshots at once).
  int fds[2];
  if (pipe(fds) != 0) {
    *error = "cannot create a pipe for Xvfb";
    return nullptr;
  }
  // -noreset: the server stays up between clients (the held connection below covers a
  // server started elsewhere).
  std::vector<std::string> args = {xvfb, "-displayfd", std::to_string(fds[1]), "-noreset",
                                   "-screen", "0", "1920x1200x24", "-nolisten", "tcp"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: if this process dies without
  // running the destructor (a crash, a kill), the kernel stops its Xvfb too, instead of
  // leaving an orphaned server behind.
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    close(fds[0]);
    // Xvfb chatters on stderr about missing fonts and keymaps; keep it out of ours.
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2);
    execv(xvfb.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    *error = "cannot start " + xvfb;
    return nullptr;
  }
  // Wait (up to 10 s) for the display number, or for Xvfb to give up (EOF on the pipe).
  std::string number;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[32];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    number.append(buf, static_cast<size_t>(n));
    if (number.find('\n') != std::string::npos) break;
  }
  close(fds[0]);
  while (!number.empty() && (number.back() == '\n' || number.back() == ' ')) number.pop_back();
  std::string disp = ":" + number;
  Display* hold = number.empty() ? nullptr : XOpenDisplay(disp.c_str());
  if (!hold) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    *error = "Xvfb did not start (no display within 10 s)";
    return nullptr;
  }
  s->display_ = disp;
  s->pid_ = pid;
  s->hold_ = hold;
  setenv("DISPLAY", disp.c_str(), 1);
  return s;
}

XServer::~XServer() {
  if (hold_) XCloseDisplay(static_cast<Display*>(hold_));
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

}  // namespace descent::viz
