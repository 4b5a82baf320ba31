// Cross toolchains (cross.h). Debian names every cross compiler <arch>-linux-gnu-gcc and puts
// the target's C library under /usr/<arch>-linux-gnu, which is where qemu-user looks for the
// dynamic loader (-L): so a dynamically linked executable runs as it would on the board.
#include "proc/cross.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace descent::proc {

std::string host_arch() {
  struct utsname u {};
  if (uname(&u) != 0) return "";
  return u.machine;
}

bool find_cross_tools(const std::string& arch, CrossTools* out, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (arch != "x86_64" && arch != "aarch64" && arch != "riscv64")
    return fail("no cross toolchain for '" + arch + "' (x86_64, aarch64 or riscv64)");
  CrossTools t;
  t.arch = arch;
  if (arch == host_arch()) {
    t.cc = find_on_path("cc");
    if (t.cc.empty()) return fail("no C compiler (cc) to link with: apt-get install build-essential");
    *out = t;
    return true;
  }
  const std::string debian_arch = arch == "aarch64" ? "arm64" : arch == "x86_64" ? "amd64" : arch;
  t.cc = find_on_path(arch + "-linux-gnu-gcc");
  if (t.cc.empty())
    return fail("no " + arch + " linker (" + arch + "-linux-gnu-gcc): apt-get install gcc-" + arch +
                "-linux-gnu libc6-dev-" + debian_arch + "-cross (scripts/setup.sh installs them)");
  t.emulator = find_on_path("qemu-" + arch);
  if (t.emulator.empty())
    return fail("no qemu-" + arch + " to run " + arch + " code on this " + host_arch() +
                " machine: apt-get install qemu-user (scripts/setup.sh installs it)");
  t.sysroot = "/usr/" + arch + "-linux-gnu";
  *out = t;
  return true;
}

bool link_executable(const CrossTools& tools, const std::string& object, const std::string& exe, std::string* why,
                     bool static_link) {
  Options o;
  o.argv = {tools.cc, object, "-lm", "-o", exe};
  if (static_link) o.argv.push_back("-static");
  o.limits.wall_s = 120;
  o.sandbox.drop_root = false;  // it writes exe where the caller asked
  Result r = run(o);
  if (r.ok) return true;
  if (why) *why = tools.cc + " failed: " + (r.err.empty() ? r.problem : r.err);
  return false;
}

Result run_executable(const CrossTools& tools, const std::string& exe, const Limits& limits,
                      const std::atomic<bool>* interrupt) {
  Options o;
  if (tools.emulator.empty()) o.argv = {exe};
  else o.argv = {tools.emulator, "-L", tools.sysroot, exe};
  o.limits = limits;
  o.sandbox.drop_root = false;
  o.interrupt = interrupt;
  return run(o);
}

bool link_and_run(const std::string& triple, const std::string& object, const std::string& exe,
                  const Limits& limits, const std::atomic<bool>* interrupt, Result* result, std::string* why) {
  std::string arch = triple.substr(0, triple.find('-'));
  if (arch == "wasm32") {
    if (why) *why = "wasm32 objects are not linked or run here (no wasm runtime)";
    return false;
  }
  CrossTools tools;
  if (!find_cross_tools(arch.empty() ? host_arch() : arch, &tools, why)) return false;
  if (!link_executable(tools, object, exe, why)) return false;
  *result = run_executable(tools, exe, limits, interrupt);
  return true;
}

Result count_instructions(const CrossTools& tools, const std::string& exe, const Limits& limits,
                          uint64_t* instructions) {
  *instructions = 0;
  Result failed;
  std::string emulator = tools.emulator.empty() ? find_on_path("qemu-" + tools.arch) : tools.emulator;
  if (emulator.empty()) {
    failed.problem = "no qemu-" + tools.arch + " to count instructions with: apt-get install qemu-user";
    return failed;
  }
  char dir[] = "/tmp/descent-count-XXXXXX";
  if (!mkdtemp(dir)) {
    failed.problem = std::string("cannot make a temporary directory: ") + std::strerror(errno);
    return failed;
  }
  const std::string fifo = std::string(dir) + "/exec.log";
  if (mkfifo(fifo.c_str(), 0600) != 0) {
    failed.problem = std::string("cannot make a pipe: ") + std::strerror(errno);
    rmdir(dir);
    return failed;
  }
  // qemu writes one "Trace N: ..." line per executed block, here one instruction each; the
  // log of a second of emulation is gigabytes, so it is counted as it streams, never kept.
  uint64_t count = 0;
  // The reader holds the pipe open for reading and writing (a FIFO opened O_RDWR never
  // blocks), so it never waits for qemu to open it and never sees an early end of file; it
  // stops at a last line this thread writes once qemu has exited, whatever qemu did.
  int fd = open(fifo.c_str(), O_RDWR);
  if (fd < 0) {
    failed.problem = std::string("cannot open a pipe: ") + std::strerror(errno);
    unlink(fifo.c_str());
    rmdir(dir);
    return failed;
  }
  static const std::string kTrace = "Trace ", kEnd = "#descent-end";
  std::thread reader([&] {
    char buf[1 << 16];
    std::string head;  // the first characters of the current line (enough to classify it)
    bool done = false;
    for (ssize_t n; !done && (n = read(fd, buf, sizeof buf)) > 0;)
      for (ssize_t i = 0; i < n && !done; ++i) {
        if (buf[i] == '\n') {
          if (head == kEnd) done = true;
          head.clear();
        } else if (head.size() < kEnd.size()) {
          head += buf[i];
          if (head == kTrace) ++count;
        }
      }
  });
  Options o;
  o.argv = {emulator, "-singlestep", "-d", "nochain,exec", "-D", fifo};
  if (!tools.sysroot.empty()) {
    o.argv.push_back("-L");
    o.argv.push_back(tools.sysroot);
  }
  o.argv.push_back(exe);
  o.limits = limits;
  o.sandbox.drop_root = false;
  Result r = run(o);
  const std::string end_line = "\n" + kEnd + "\n";
  if (write(fd, end_line.data(), end_line.size()) != ssize_t(end_line.size())) r.problem += " (the log's end was not written)";
  reader.join();
  close(fd);
  unlink(fifo.c_str());
  rmdir(dir);
  *instructions = count;
  return r;
}

}  // namespace descent::proc
