// Session::run_on_target and run_native_on_target: the last input built for the Session's
// target (the LLVM tier's object, or the native backend's program image), linked and run
// (pipeline.h). The REPL's `:asm TARGET run` and `descent build --run [--native]` call them,
// so the temporary directory, the Ctrl-C flag and the clean-up live in one place.
#include <stdlib.h>

#include <filesystem>

#include "native/native.h"
#include "pipeline/pipeline.h"
#include "proc/cross.h"

namespace descent {

namespace {

// A directory of our own for a build the caller does not keep; removed with this object.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(bool wanted) {
    char dir[] = "/tmp/descent-run-XXXXXX";
    if (wanted && mkdtemp(dir)) path = dir;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

bool Session::run_on_target(const proc::Limits& limits, proc::Result* result, std::string* error,
                            const std::string& object, const std::string& exe) const {
  ScratchDir scratch(object.empty());
  if (object.empty() && scratch.path.empty()) {
    *error = "cannot make a temporary directory";
    return false;
  }
  std::string obj = object.empty() ? scratch.path + "/program.o" : object;
  return build_object(obj, error) &&
         proc::link_and_run(target_, obj, exe.empty() ? obj + ".exe" : exe, limits, &interrupt_, result, error);
}

bool Session::run_native_on_target(const proc::Limits& limits, proc::Result* result, std::string* error,
                                   const std::string& exe) const {
  const native::Target* t = native_target(error);
  if (!t) return false;
  proc::CrossTools tools;
  if (!proc::find_cross_tools(t->arch == native::Arch::AArch64 ? "aarch64" : "x86_64", &tools, error)) return false;
  ScratchDir scratch(exe.empty());
  if (exe.empty() && scratch.path.empty()) {
    *error = "cannot make a temporary directory";
    return false;
  }
  std::string path = exe.empty() ? scratch.path + "/prog" : exe;
  if (!write_native_executable(path, error)) return false;
  *result = proc::run_executable(tools, path, limits, &interrupt_);
  return true;
}

}  // namespace descent
