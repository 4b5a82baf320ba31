#include "cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "cpu/cpu.h"

namespace descent::cpu {

namespace {

// One job at a time: `generation` tells sleeping workers that a new one was posted; each
// worker w < job_threads runs range w and counts itself done.
//
// Why spin: a kernel like linear_relu takes ~20 us, and waking a thread that sleeps on a
// condition variable costs a futex round trip of that order. So workers (and the caller,
// waiting for them) poll for a short while before they block, as OpenMP runtimes do by
// default; back-to-back kernel calls then never pay for a wake-up.
constexpr int kSpinIterations = 20000;  // ~50-100 us of pause instructions

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void run(ParallelBody body, void* ctx, int64_t extent, int threads) {
    std::lock_guard<std::mutex> serial(call_mu_);  // one parallel loop owns the workers
    grow(threads - 1);
    threads = std::min(threads, static_cast<int>(workers_.size()) + 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      body_ = body;
      ctx_ = ctx;
      extent_ = extent;
      threads_ = threads;
      pending_.store(threads - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    in_pool = true;
    run_range(0);
    in_pool = false;
    for (int i = 0; i < kSpinIterations; ++i) {
      if (pending_.load(std::memory_order_acquire) == 0) return;
      cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }

  static thread_local bool in_pool;

 private:
  void run_range(int index) {
    int64_t lo = extent_ * index / threads_, hi = extent_ * (index + 1) / threads_;
    if (lo < hi) body_(ctx_, lo, hi);
  }

  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      int index = static_cast<int>(workers_.size()) + 1;  // range 0 is the caller's
      // The worker must not read the generation itself: the job about to be posted could
      // already have bumped it, and the worker would sleep through its own range.
      uint64_t seen = generation_.load(std::memory_order_relaxed);
      try {
        workers_.emplace_back([this, index, seen] { work(index, seen); });
      } catch (const std::system_error&) {
        return;  // no more threads to be had: the job runs on the ones that exist
      }
    }
  }

  void work(int index, uint64_t seen) {
    in_pool = true;
    for (;;) {
      for (int i = 0; i < kSpinIterations; ++i) {
        if (generation_.load(std::memory_order_acquire) != seen) break;
        cpu_relax();
      }
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] {
          return stopping_ || generation_.load(std::memory_order_acquire) != seen;
        });
        if (stopping_) return;
        seen = generation_.load(std::memory_order_acquire);
        if (index >= threads_) continue;  // this job needs fewer threads
      }
      run_range(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);  // the caller may be about to wait
        done_.notify_one();
      }
    }
  }

  std::mutex call_mu_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  bool stopping_ = false;
  ParallelBody body_ = nullptr;
  void* ctx_ = nullptr;
  int64_t extent_ = 0;
  int threads_ = 1;
  std::atomic<int> pending_{0};
};

thread_local bool Pool::in_pool = false;

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void parallel_for(ParallelBody body, void* ctx, int64_t extent, int threads) {
  if (extent <= 0) return;
  if (threads <= 0) threads = hardware_threads();
  threads = static_cast<int>(std::min<int64_t>({threads, extent, 256}));
  if (threads <= 1 || Pool::in_pool) {
    body(ctx, 0, extent);
    return;
  }
  pool().run(body, ctx, extent, threads);
}

}  // namespace descent::cpu

extern "C" void descent_parallel_for(descent::cpu::ParallelBody body, void* ctx,
                                     int64_t extent, int64_t threads) {
  descent::cpu::parallel_for(body, ctx, extent, static_cast<int>(threads));
}
