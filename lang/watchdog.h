// A time limit for something that runs on this thread and polls an interrupt flag: a
// student's program in a lab (labs/runner), a tuning candidate's run (tune/measure.cpp).
//
//   { Watchdog dog(10.0, [&] { flag = true; });   // fire() once, 10 s from now, if still alive
//     run(...);                                    // the work polls `flag`
//   }                                              // leaving the scope disarms it
//   dog.fired()                                    // the limit passed
//
// With `poll`, fire() also happens as soon as poll() is true (checked every 5 ms): a second
// flag to forward, such as the user's Ctrl-C; fired() stays false then.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace descent {

class Watchdog {
 public:
  Watchdog(double limit_s, std::function<void()> fire, std::function<bool()> poll = nullptr)
      : thread_([this, limit_s, fire = std::move(fire), poll = std::move(poll)] {
          auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(limit_s));
          std::unique_lock<std::mutex> lock(mu_);
          while (!done_) {
            if (poll && poll()) {
              fire();
              return;
            }
            auto now = std::chrono::steady_clock::now();
            if (now >= deadline) {
              fired_ = true;
              fire();
              return;
            }
            auto wait = poll ? std::min<std::chrono::steady_clock::duration>(
                                   deadline - now, std::chrono::milliseconds(5))
                             : deadline - now;
            cv_.wait_for(lock, wait);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  bool fired() const { return fired_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace descent
