#include "viz/headless.h"

#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <X11/Xlib.h>

extern char** environ;

namespace descent::viz {

bool x_display_works(const std::string& display) {
  if (display.empty()) return false;
  Display* d = XOpenDisplay(display.c_str());
  if (!d) return false;
  XCloseDisplay(d);
  return true;
}

namespace {
bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}
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

std::unique_ptr<XServer> XServer::ensure(std::string* error) {
  std::unique_ptr<XServer> s(new XServer());
  if (const char* d = std::getenv("DISPLAY"); d && x_display_works(d)) {
    s->display_ = d;
    return s;
  }
  std::string xvfb = find_xvfb();
  if (xvfb.empty()) {
    *error = "no X display ($DISPLAY unset or not answering) and no Xvfb on PATH "
             "(install it: apt-get install xvfb)";
    return nullptr;
  }
  // A display number nobody holds: the lock file /tmp/.X<n>-lock marks a taken one.
  for (int n = 90 + static_cast<int>(getpid() % 50); n < 400; n += 7) {
    if (file_exists("/tmp/.X" + std::to_string(n) + "-lock")) continue;
    std::string disp = ":" + std::to_string(n);
    std::vector<std::string> args = {xvfb, disp, "-screen", "0", "1920x1200x24", "-nolisten",
                                     "tcp", "-nolisten", "unix-abstract"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    // Xvfb chatters on stderr about missing fonts and keymaps; keep it out of ours.
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, xvfb.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      *error = "cannot start " + xvfb;
      return nullptr;
    }
    // Wait (up to 10 s) for it to answer, or to die (display taken after all: try another).
    bool up = false, died = false;
    for (int i = 0; i < 1000 && !up && !died; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) died = true;
      else up = x_display_works(disp);
    }
    if (up) {
      s->display_ = disp;
      s->pid_ = pid;
      setenv("DISPLAY", disp.c_str(), 1);
      return s;
    }
    if (!died) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      *error = "Xvfb " + disp + " did not answer within 10 s";
      return nullptr;
    }
  }
  *error = "Xvfb could not find a free display";
  return nullptr;
}

XServer::~XServer() {
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
