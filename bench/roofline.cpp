// The roofline microbenchmarks (see roofline.h).
#include "bench/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DESCENT_X86 1
#else
#define DESCENT_X86 0
#endif

namespace descent::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

// Keeps results alive: a computation whose result is never used may be deleted by the
// optimiser, and then we would be timing nothing.
volatile float g_sink;

// Runs work(tid, count) on `threads` threads released together, the calling thread being
// tid 0, and returns the wall time from the release to the last one finishing. *ran gets the
// number that actually ran: if the OS refuses a thread we measure with the ones we have
// rather than throw out of the library.
template <class Work>
double run_together(int threads, const Work& work, int* ran) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<int> count{1};
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back([&, t] {
        ready.fetch_add(1);
        // Yield rather than spin hard: the machine may have fewer cores than threads.
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        work(t, count.load());
      });
    } catch (...) {
      break;
    }
  }
  int n = static_cast<int>(pool.size()) + 1;
  count.store(n);
  while (ready.load() < n - 1) std::this_thread::yield();
  auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  work(0, n);
  for (auto& th : pool) th.join();
  double s = seconds_since(t0);
  *ran = n;
  return std::max(s, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// FMA peak
//
// Each kernel keeps 12 independent accumulator chains: an FMA has a latency of ~4 cycles and
// current cores issue 2 per cycle, so at least 8 chains must be in flight to keep both units
// busy; one chain would measure latency, not throughput. acc = acc * m + c with m just below
// 1 converges to c / (1 - m), so values stay normal (denormals would be slow) and finite.

#define DESCENT_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
constexpr int kChains = 12;

#if DESCENT_X86
__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters) {
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
#define DECL(i) __m512 a##i = _mm512_set1_ps(0.01f * (i + 1));
  DESCENT_REP12(DECL)
#undef DECL
  for (int64_t k = 0; k < iters; ++k) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, m, c);
    DESCENT_REP12(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  DESCENT_REP12(SUM)
#undef SUM
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters) {
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
#define DECL(i) __m256 a##i = _mm256_set1_ps(0.01f * (i + 1));
  DESCENT_REP12(DECL)
#undef DECL
  for (int64_t k = 0; k < iters; ++k) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, m, c);
    DESCENT_REP12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, a##i);
  DESCENT_REP12(SUM)
#undef SUM
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}
#endif

// No FMA unit: a multiply and an add (still 2 flops). Vectorisation is turned off so the
// figure is what "scalar" says, not whatever the auto-vectoriser made of it.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
float fma_chains_scalar(int64_t iters) {
  const float m = 0.999999f, c = 1e-6f;
#define DECL(i) float a##i = 0.01f * (i + 1);
  DESCENT_REP12(DECL)
#undef DECL
  for (int64_t k = 0; k < iters; ++k) {
#define STEP(i) a##i = a##i * m + c;
    DESCENT_REP12(STEP)
#undef STEP
  }
  float s = 0;
#define SUM(i) s += a##i;
  DESCENT_REP12(SUM)
#undef SUM
  return s;
}

#undef DESCENT_REP12

using FmaKernel = float (*)(int64_t);

FmaKernel fma_kernel(const VectorIsa& isa) {
#if DESCENT_X86
  if (isa.name == "avx512f") return fma_chains_avx512;
  if (isa.name == "avx2+fma") return fma_chains_avx2;
#endif
  (void)isa;
  return fma_chains_scalar;
}

}  // namespace

std::vector<VectorIsa> supported_vector_isas() {
  std::vector<VectorIsa> isas;
#if DESCENT_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) isas.push_back({"avx512f", 16});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    isas.push_back({"avx2+fma", 8});
#endif
  isas.push_back({"scalar", 1});
  return isas;
}

VectorIsa detect_vector_isa() { return supported_vector_isas().front(); }

double measure_fma_peak_gflops(int threads) {
  return measure_fma_peak_gflops(threads, detect_vector_isa());
}

double measure_fma_peak_gflops(int threads, const VectorIsa& requested) {
  threads = resolve_threads(threads);
  // Only run an ISA the CPU has: an AVX-512 instruction on a CPU without it is SIGILL.
  VectorIsa isa = supported_vector_isas().back();
  for (const VectorIsa& s : supported_vector_isas())
    if (s.name == requested.name) isa = s;
  FmaKernel kernel = fma_kernel(isa);
  const double flops_per_iter = 2.0 * kChains * isa.f32_lanes;

  // Calibrate on one thread: grow the iteration count until a run takes >= 2 ms, then size
  // each timed run to ~40 ms, so the whole measurement is ~0.2 s on any machine.
  int64_t iters = 1 << 12;
  double t = 0;
  for (;;) {
    auto t0 = Clock::now();
    g_sink = kernel(iters);
    t = seconds_since(t0);
    if (t >= 2e-3 || iters >= (int64_t(1) << 40)) break;
    iters *= 4;
  }
  iters = std::max<int64_t>(1, static_cast<int64_t>(iters * (0.04 / std::max(t, 1e-9))));

  double best = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<float> out(static_cast<size_t>(threads), 0.0f);
    int ran = 1;
    double s = run_together(
        threads, [&](int tid, int) { out[static_cast<size_t>(tid)] = kernel(iters); }, &ran);
    g_sink = out[0];
    best = std::max(best, ran * static_cast<double>(iters) * flops_per_iter / s / 1e9);
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Bandwidth

namespace {

// a = b + s * c over [lo, hi). Written 8 at a time so the compiler's straight-line (SLP)
// vectoriser packs it at -O2; the loop is memory-bound either way on any recent core.
void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float s,
           size_t lo, size_t hi) {
  size_t i = lo;
  for (; i + 8 <= hi; i += 8)
    for (size_t j = 0; j < 8; ++j) a[i + j] = b[i + j] + s * c[i + j];
  for (; i < hi; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace

double measure_bandwidth_gbs(int threads) {
  threads = resolve_threads(threads);
  // 3 x 64 MiB: several times any last-level cache of a desktop or small server part, so the
  // triad streams from DRAM. If the memory is not there, use smaller arrays rather than fail.
  size_t n = size_t(16) << 20;
  std::unique_ptr<float[]> a, b, c;
  for (; n >= (size_t(1) << 18); n /= 2) {
    a.reset(new (std::nothrow) float[n]);
    b.reset(new (std::nothrow) float[n]);
    c.reset(new (std::nothrow) float[n]);
    if (a && b && c) break;
  }
  if (!a || !b || !c) return 1.0;  // cannot measure; a positive placeholder, never 0 or nan

  auto range = [n](int tid, int count, size_t* lo, size_t* hi) {
    *lo = n * static_cast<size_t>(tid) / static_cast<size_t>(count);
    *hi = n * static_cast<size_t>(tid + 1) / static_cast<size_t>(count);
  };
  // Each thread first touches the part it will stream, so on a multi-socket machine its
  // pages live on its own node (Linux places a page where it is first written).
  int ran = 1;
  run_together(
      threads,
      [&](int tid, int count) {
        size_t lo, hi;
        range(tid, count, &lo, &hi);
        for (size_t i = lo; i < hi; ++i) {
          a[i] = 0.0f;
          b[i] = 1.0f;
          c[i] = 2.0f;
        }
      },
      &ran);

  double best = 0;
  for (int run = 0; run < 5; ++run) {
    float s = 0.5f + static_cast<float>(run);
    double sec = run_together(
        threads,
        [&](int tid, int count) {
          size_t lo, hi;
          range(tid, count, &lo, &hi);
          triad(a.get(), b.get(), c.get(), s, lo, hi);
        },
        &ran);
    g_sink = a[n / 2];
    best = std::max(best, 3.0 * sizeof(float) * static_cast<double>(n) / sec / 1e9);
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Caches

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32K", "2048K", "32M" -> bytes; 0 when unreadable.
double parse_size(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0) return 0;
  if (*end == 'K') v *= 1024;
  if (*end == 'M') v *= 1024 * 1024;
  if (*end == 'G') v *= 1024.0 * 1024 * 1024;
  return v;
}

// "0-1,4,6-7" -> 5
int count_cpus(const std::string& list) {
  int n = 0;
  size_t i = 0;
  while (i < list.size()) {
    size_t comma = list.find(',', i);
    std::string part = list.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
    size_t dash = part.find('-');
    if (dash == std::string::npos) n += part.empty() ? 0 : 1;
    else n += std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
    if (comma == std::string::npos) break;
    i = comma + 1;
  }
  return std::max(n, 1);
}

// Triad repeated `reps` times over each thread's own arrays of n floats.
double time_private_triads(int threads, size_t n, int64_t reps, int* ran) {
  std::vector<std::unique_ptr<float[]>> arrays(static_cast<size_t>(threads) * 3);
  return run_together(
      threads,
      [&](int tid, int) {
        // Allocated and first touched by the thread that streams them (its own node).
        auto& a = arrays[static_cast<size_t>(tid) * 3];
        auto& b = arrays[static_cast<size_t>(tid) * 3 + 1];
        auto& c = arrays[static_cast<size_t>(tid) * 3 + 2];
        if (!a) {
          a.reset(new float[n]());
          b.reset(new float[n]);
          c.reset(new float[n]);
          std::fill(b.get(), b.get() + n, 1.0f);
          std::fill(c.get(), c.get() + n, 2.0f);
        }
        for (int64_t r = 0; r < reps; ++r) triad(a.get(), b.get(), c.get(), 0.5f + float(r & 7), 0, n);
        g_sink = a[n / 2];
      },
      ran);
}

}  // namespace

std::vector<CacheInfo> detect_data_caches() {
  std::vector<CacheInfo> caches;
  for (int i = 0; i < 16; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string type = read_line(dir + "type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    CacheInfo c;
    c.level = std::atoi(read_line(dir + "level").c_str());
    c.bytes = parse_size(read_line(dir + "size"));
    c.shared_by = count_cpus(read_line(dir + "shared_cpu_list"));
    if (c.level > 0 && c.bytes > 0) caches.push_back(c);
  }
  std::sort(caches.begin(), caches.end(),
            [](const CacheInfo& a, const CacheInfo& b) { return a.level < b.level; });
  return caches;
}

double measure_bandwidth_gbs(int threads, double bytes_per_thread) {
  threads = resolve_threads(threads);
  size_t n = std::max<size_t>(64, static_cast<size_t>(bytes_per_thread / (3 * sizeof(float))));
  n -= n % 8;
  // Calibrate on the first run (which also allocates and warms the arrays): grow the
  // repetitions until a run takes >= 2 ms, then size each timed run to ~20 ms.
  int ran = 1;
  int64_t reps = 1;
  double t = time_private_triads(threads, n, reps, &ran);  // allocation and first touch
  for (;;) {
    t = time_private_triads(threads, n, reps, &ran);
    if (t >= 2e-3 || reps >= (int64_t(1) << 30)) break;
    reps *= 4;
  }
  reps = std::max<int64_t>(1, static_cast<int64_t>(reps * (0.02 / std::max(t, 1e-9))));
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    double sec = time_private_triads(threads, n, reps, &ran);
    best = std::max(best, ran * 3.0 * sizeof(float) * double(n) * double(reps) / sec / 1e9);
  }
  return best;
}

const MemoryLevel& Roofline::level_for(double bytes) const {
  static const MemoryLevel unknown{"DRAM", std::numeric_limits<double>::infinity(), 0};
  for (const MemoryLevel& l : levels)
    if (bytes <= l.capacity) return l;
  return levels.empty() ? unknown : levels.back();
}

Roofline measure_roofline(int threads) {
  Roofline r;
  r.isa = detect_vector_isa();
  r.threads = resolve_threads(threads);
  r.peak_gflops = measure_fma_peak_gflops(r.threads);
  r.bandwidth_gbs = measure_bandwidth_gbs(r.threads);
  double smaller = 0;  // the capacity of the level before
  for (const CacheInfo& c : detect_data_caches()) {
    // The threads are spread over cores: a cache shared by k CPUs serves ceil(threads / k)
    // copies of itself.
    int copies = (r.threads + c.shared_by - 1) / c.shared_by;
    MemoryLevel l;
    l.name = "L" + std::to_string(c.level);
    l.capacity = c.bytes * copies;
    // Measured with data just past the level before (twice its size), at most half this one:
    // the fastest this level serves, so the roof bounds every working set it holds. (A big
    // shared L3 filled to half is, on a busy or virtual machine, often half DRAM already.)
    double bytes = l.capacity / 2;
    if (smaller > 0) bytes = std::min(bytes, 2 * smaller);
    l.bandwidth_gbs = measure_bandwidth_gbs(r.threads, bytes / r.threads);
    r.levels.push_back(l);
    smaller = l.capacity;
  }
  r.levels.push_back({"DRAM", std::numeric_limits<double>::infinity(), r.bandwidth_gbs});
  // A level measured slower than a bigger one is noise: the roof never drops as the data
  // gets closer to the core, so it takes the bigger level's figure.
  for (size_t i = r.levels.size() - 1; i-- > 0;)
    r.levels[i].bandwidth_gbs = std::max(r.levels[i].bandwidth_gbs, r.levels[i + 1].bandwidth_gbs);
  return r;
}

std::string format_roofline(const Roofline& r) {
  std::string text = fmt::format(
      "{} x {} thread{}: peak {:.1f} GFLOP/s, bandwidth {:.1f} GB/s, ridge {:.1f} "
      "flop/byte",
      r.isa.name, r.threads, r.threads == 1 ? "" : "s", r.peak_gflops, r.bandwidth_gbs,
      r.ridge_intensity());
  std::string caches;
  for (const MemoryLevel& l : r.levels) {
    if (l.name == "DRAM") continue;
    caches += fmt::format("{}{} ({} KiB) {:.1f} GB/s", caches.empty() ? "; " : ", ", l.name,
                          static_cast<long long>(l.capacity / 1024), l.bandwidth_gbs);
  }
  return text + caches;
}

}  // namespace descent::bench
