#include "cpu/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cpu/cpu.h"

namespace descent::cpu {

namespace {

// One job at a time, cut into chunks that the caller and the workers take from one shared
// counter: 64 bits holding the job's generation (high 32), its number of chunks (16) and the
// next chunk's index (low 16). The count travels with the index so that a thread holding a
// stale value can never take a chunk that does not exist: its compare-exchange succeeds only
// while the counter is exactly what it read.
// The job is done when every chunk is done, not when every worker has checked in, so a
// worker the OS has not scheduled yet (the second core busy with another program, as on any
// shared classroom machine) costs nothing: the caller takes its chunks. A worker that was
// preempted in the middle of a chunk costs at most that chunk.
//
// Why spin: a kernel like linear_relu takes ~20 us, and waking a thread that sleeps on a
// condition variable costs a futex round trip of that order. So workers poll for a short
// while before they block, as OpenMP runtimes do by default; back-to-back kernel calls then
// never pay for a wake-up. The caller only spins while another thread is inside a chunk.
constexpr int kSpinIterations = 20000;  // ~50-100 us of pause instructions
constexpr int kChunksPerThread = 4;     // enough slack for a late worker, few enough to be cheap
constexpr int kIndexBits = 16, kGenerationShift = 32;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;

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
    int64_t chunks = std::min<int64_t>(extent, int64_t(threads) * kChunksPerThread);
    // Published by the release store of the counter below; a thread reads them only after
    // taking a chunk of this generation, and the next job cannot start before that chunk is
    // done, so they never change under it.
    body_ = body;
    ctx_ = ctx;
    extent_ = extent;
    done_.store(0, std::memory_order_relaxed);
    uint64_t generation = (counter_.load(std::memory_order_relaxed) >> kGenerationShift) + 1;
    counter_.store(generation << kGenerationShift | uint64_t(chunks) << kIndexBits,
                   std::memory_order_release);
    {
      // Under the lock a sleeping worker checks the generation with, so none sleeps through
      // it; without sleepers this costs no system call.
      std::lock_guard<std::mutex> lock(mu_);
      wake_.notify_all();
    }
    in_pool = true;
    take_chunks(generation);
    in_pool = false;
    // Every chunk is taken; wait for those still running on a worker.
    for (int i = 0; i < kSpinIterations; ++i) {
      if (done_.load(std::memory_order_acquire) == chunks) return;
      cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mu_);
    finished_.wait(lock, [&] { return done_.load(std::memory_order_acquire) == chunks; });
  }

  static thread_local bool in_pool;

 private:
  // Takes and runs chunks of job `generation` until none is left (or a newer job began,
  // which can only happen once every chunk of this one is done).
  void take_chunks(uint64_t generation) {
    uint64_t v = counter_.load(std::memory_order_acquire);
    for (;;) {
      if ((v >> kGenerationShift) != generation) return;
      int64_t index = int64_t(v & kIndexMask);
      int64_t chunks = int64_t((v >> kIndexBits) & kIndexMask);
      if (index >= chunks) return;
      if (!counter_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire))
        continue;  // v now holds the current value
      // A chunk of this job is ours: the job cannot change until we count it done.
      int64_t lo = extent_ * index / chunks, hi = extent_ * (index + 1) / chunks;
      if (lo < hi) body_(ctx_, lo, hi);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(mu_);  // the caller may be about to wait
        finished_.notify_one();
      }
      v = counter_.load(std::memory_order_acquire);
    }
  }

  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      // The worker must not read the generation itself: the job about to be posted could
      // already have bumped it, and the worker would sleep through it.
      uint64_t seen = counter_.load(std::memory_order_relaxed) >> kGenerationShift;
      try {
        workers_.emplace_back([this, seen] { work(seen); });
      } catch (const std::system_error&) {
        return;  // no more threads to be had: the job runs on the ones that exist
      }
    }
  }

  uint64_t generation() const { return counter_.load(std::memory_order_acquire) >> kGenerationShift; }

  void work(uint64_t seen) {
    in_pool = true;
    for (;;) {
      for (int i = 0; i < kSpinIterations && generation() == seen; ++i) cpu_relax();
      if (generation() == seen) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stopping_ || generation() != seen; });
        if (stopping_) return;
      }
      seen = generation();
      take_chunks(seen);
    }
  }

  std::mutex call_mu_;
  std::mutex mu_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> counter_{0};
  std::atomic<int64_t> done_{0};
  bool stopping_ = false;
  ParallelBody body_ = nullptr;
  void* ctx_ = nullptr;
  int64_t extent_ = 0;
};

thread_local bool Pool::in_pool = false;

Pool& pool() {
  static Pool p;
  return p;
}

// The CPU time the process's cgroup may use, in CPUs (rounded up), or 0 without a limit:
// cgroup v2's cpu.max ("max 100000" or "QUOTA PERIOD"), else v1's cfs quota and period.
int cgroup_cpus() {
  auto read_two = [](const std::string& path, std::string* a, std::string* b) {
    std::ifstream in(path);
    return bool(in >> *a >> *b);
  };
  auto ceil_div = [](const std::string& quota, const std::string& period) -> int {
    try {
      long long q = std::stoll(quota), p = std::stoll(period);
      if (q <= 0 || p <= 0) return 0;
      return int((q + p - 1) / p);
    } catch (const std::exception&) {
      return 0;
    }
  };
  std::string q, p;
  // v2: the process's own cgroup (the "0::/path" line of /proc/self/cgroup).
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string dir = "/sys/fs/cgroup" + line.substr(3);
    if (read_two(dir + "/cpu.max", &q, &p) && q != "max") return ceil_div(q, p);
  }
  if (read_two("/sys/fs/cgroup/cpu.max", &q, &p) && q != "max") return ceil_div(q, p);
  std::ifstream quota("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
      period("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (quota >> q && period >> p) return ceil_div(q, p);
  return 0;
}

}  // namespace

int hardware_threads() {
  // The CPUs this thread may run on (taskset, cpusets), which hardware_concurrency ignores...
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  // ...and the CPU time its cgroup allows (a container given 1.5 CPUs gets 2 threads).
  static const int quota = cgroup_cpus();
  if (quota > 0) n = std::min(n, quota);
  return std::max(n, 1);
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
