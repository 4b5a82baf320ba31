// fuzz_repl: the bytes are a REPL session, split into lines and fed one by one to a fresh
// descent::Repl (in process, its streams captured), `:` commands included: stages and views,
// engines, :compare, kernels, schedules, :run. The REPL must never crash, trip a sanitizer
// or hang, whatever it is typed; every error is a message on its error stream.
//
// Bounds, so the fuzzer explores behaviour instead of rediscovering resource limits:
//   - programs stop after a step budget (Repl::set_step_limit), deterministically;
//   - a line that still runs after kLineSeconds is interrupted through the session's flag,
//     as Ctrl-C would (slow tensor code under the sanitizers);
//   - inputs with numbers above kMaxNumber are skipped (tensor sizes stay small);
//   - inputs mentioning load or save are skipped: they would read or write files anywhere;
//     so are `:asm ... run` ones, which start a cross linker and qemu per input;
//   - OpenCL is hidden (OCL_ICD_VENDORS points nowhere): PoCL compiling kernels is slow and
//     not ours; "no OpenCL platform" is then the path exercised.
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "fuzz/fuzz_common.h"
#include "apps/repl.h"
#include "lang/text.h"
#include "pipeline/pipeline.h"

namespace {

constexpr uint64_t kStepLimit = 20000;
constexpr uint64_t kMaxNumber = 64;
constexpr size_t kMaxLines = 40;
constexpr auto kLineSeconds = std::chrono::seconds(2);

// Sets the session's interrupt flag when a line runs for longer than kLineSeconds.
class Watchdog {
 public:
  explicit Watchdog(std::atomic<bool>& flag) : flag_(flag), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void line_started() {
    std::lock_guard<std::mutex> lock(mu_);
    ++line_;
    cv_.notify_all();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      uint64_t line = line_;
      if (!cv_.wait_for(lock, kLineSeconds, [&] { return done_ || line_ != line; }))
        flag_ = true;  // the same line for kLineSeconds
    }
  }
  std::atomic<bool>& flag_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t line_ = 0;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("OCL_ICD_VENDORS", "/nonexistent-descent-fuzz", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (descent::fuzz::has_number_above(text, kMaxNumber) || text.find("load") != std::string::npos ||
      text.find("save") != std::string::npos ||
      (text.find(":asm") != std::string::npos && text.find("run") != std::string::npos))
    return 0;
  descent::Session session;
  std::ostringstream out, err;
  descent::Repl repl(session, out, err);
  repl.set_step_limit(kStepLimit);
  Watchdog watchdog(session.interrupt_flag());
  size_t lines = 0;
  for (const std::string& line : descent::split_lines(text)) {
    if (++lines > kMaxLines) break;
    watchdog.line_started();
    if (!repl.feed(line)) break;  // :quit
  }
  return 0;
}
