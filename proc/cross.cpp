// Cross toolchains (cross.h). Debian names every cross compiler <arch>-linux-gnu-gcc and puts
// the target's C library under /usr/<arch>-linux-gnu, which is where qemu-user looks for the
// dynamic loader (-L): so a dynamically linked executable runs as it would on the board.
#include "proc/cross.h"

#include <sys/utsname.h>

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

bool link_executable(const CrossTools& tools, const std::string& object, const std::string& exe, std::string* why) {
  Options o;
  o.argv = {tools.cc, object, "-lm", "-o", exe};
  o.limits.wall_s = 120;
  o.sandbox.drop_root = false;  // it writes exe where the caller asked
  Result r = run(o);
  if (r.ok) return true;
  if (why) *why = tools.cc + " failed: " + (r.err.empty() ? r.problem : r.err);
  return false;
}

Result run_executable(const CrossTools& tools, const std::string& exe, const Limits& limits) {
  Options o;
  if (tools.emulator.empty()) o.argv = {exe};
  else o.argv = {tools.emulator, "-L", tools.sysroot, exe};
  o.limits = limits;
  o.sandbox.drop_root = false;
  return run(o);
}

}  // namespace descent::proc
