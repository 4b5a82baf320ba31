// Watch mode (watch.h): the lab's files polled for a change, with std::filesystem and nothing
// else of the platform; half a second between polls is short beside a check.
#include "labs/runner/watch.h"

#include <chrono>
#include <filesystem>
#include <thread>

namespace descent::labs {

LabWatch::LabWatch(const Lab& lab, std::string work_dir)
    : files_(lab.files), work_dir_(std::move(work_dir)), seen_(stamp()) {}

std::string LabWatch::stamp() const {
  std::string s;
  for (const auto& f : files_) {
    std::error_code ec;
    auto t = std::filesystem::last_write_time(std::filesystem::path(work_dir_) / f, ec);
    s += ec ? "-" : std::to_string(t.time_since_epoch().count());
    s += ";";
  }
  return s;
}

bool LabWatch::wait_for_change(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::string now = stamp();
    if (now == seen_) continue;
    seen_ = now;
    return true;
  }
  return false;
}

}  // namespace descent::labs
