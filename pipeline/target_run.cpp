// Session::run_on_target: the LLVM tier's object for the Session's target, linked and run
// (pipeline.h). The REPL's `:asm TARGET run` and `descent build --run` both call it, so the
// temporary directory, the Ctrl-C flag and the clean-up live in one place.
#include <stdlib.h>

#include <filesystem>

#include "pipeline/pipeline.h"
#include "proc/cross.h"

namespace descent {

bool Session::run_on_target(const proc::Limits& limits, proc::Result* result, std::string* error,
                            const std::string& object, const std::string& exe) const {
  std::string temp_dir, obj = object;
  if (obj.empty()) {
    char dir[] = "/tmp/descent-run-XXXXXX";
    if (!mkdtemp(dir)) {
      *error = "cannot make a temporary directory";
      return false;
    }
    temp_dir = dir;
    obj = temp_dir + "/program.o";
  }
  bool ok = build_object(obj, error) &&
            proc::link_and_run(target_, obj, exe.empty() ? obj + ".exe" : exe, limits, &interrupt_, result, error);
  if (!temp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir, ec);
  }
  return ok;
}

}  // namespace descent
