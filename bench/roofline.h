// The roofline: this machine's measured limits, so `descent bench --suite tensor` can state
// every kernel's speed as a fraction of what the hardware allows, not only as seconds.
//
// A kernel doing F flops over B bytes of memory traffic has arithmetic intensity I = F / B
// (flop/byte) and can run no faster than min(peak, bandwidth * I). Both roofs are measured
// here with microbenchmarks (not read from a datasheet): the FMA peak with independent FMA
// chains on the widest vector unit the CPU has, the bandwidth with a STREAM-style triad over
// arrays far larger than the last-level cache, and again over arrays that fit each cache
// level, so a kernel whose data sits in a cache is held to that cache's roof.
//
//   Roofline r = measure_roofline(4);   // ~0.5 s
//   double bound = r.attainable_gflops(flops / bytes, bytes);  // the roof of the level
//   fmt::print("{} roof\n", r.level_for(bytes).name);          // the data fits in
//   fmt::print("{:.0f}% of roof\n", 100 * achieved_gflops / bound);
//
// Measurements vary run to run (turbo, other processes); they take the best of a few runs,
// which estimates what the machine can do rather than what it did once.
#pragma once
#include <string>
#include <vector>

namespace descent::bench {

// The vector unit the FMA microbenchmark uses (the widest this CPU and build support).
struct VectorIsa {
  std::string name;   // "avx512f", "avx2+fma" or "scalar"
  int f32_lanes = 1;  // floats per vector register: 16, 8, 1
};
VectorIsa detect_vector_isa();
// Every ISA this CPU can run the FMA benchmark on, widest first (detect_vector_isa() is the
// first); "scalar" is always last. Comparing their peaks shows what vectorising is worth.
std::vector<VectorIsa> supported_vector_isas();

// Peak f32 multiply-add throughput on `threads` threads (<= 0: one per hardware thread), in
// GFLOP/s counting an FMA as 2 flops. Runs ~0.2 s. Always a positive finite number.
double measure_fma_peak_gflops(int threads);
// The same on a chosen ISA from supported_vector_isas() (an unsupported one runs scalar).
double measure_fma_peak_gflops(int threads, const VectorIsa& isa);

// Sustained memory bandwidth on `threads` threads (<= 0: one per hardware thread), in GB/s
// (1e9 bytes/s) of bytes actually read plus written by a[i] = b[i] + s * c[i] over three
// 64 MiB arrays (the write-allocate read of a[] is not counted, as in STREAM). Runs ~0.3 s.
// Always a positive finite number.
double measure_bandwidth_gbs(int threads);

// One level of the memory hierarchy: a cache this CPU reports (sysfs), or DRAM.
struct MemoryLevel {
  std::string name;        // "L1", "L2", "L3", "DRAM"
  double capacity = 0;     // bytes the measured threads have in it together (private caches
                           // count once per thread); infinity for DRAM
  double bandwidth_gbs = 0;  // triad bandwidth with a working set that fits this level
};

// The data caches of this CPU, smallest first: level, size in bytes, and how many logical
// CPUs share one (from /sys/devices/system/cpu/cpu0/cache; empty where that is missing).
struct CacheInfo {
  int level = 0;
  double bytes = 0;
  int shared_by = 1;
};
std::vector<CacheInfo> detect_data_caches();

// Triad bandwidth in GB/s on `threads` threads, each streaming its own arrays of
// `bytes_per_thread` bytes in all (three arrays), repeated until each timed run is long
// enough to measure. Sized to fit a cache, it measures that cache.
double measure_bandwidth_gbs(int threads, double bytes_per_thread);

// A cache-aware roofline: one memory roof per level. A kernel whose data (its working set)
// fits a cache runs, once warm, from that cache, so its roof is that level's bandwidth times
// its intensity; only data larger than every cache streams from DRAM. A single DRAM roof would
// let a cache-resident kernel reach "300% of the roofline".
struct Roofline {
  VectorIsa isa;
  int threads = 1;
  double peak_gflops = 0;    // compute roof
  double bandwidth_gbs = 0;  // the DRAM roof (levels.back())
  std::vector<MemoryLevel> levels;  // smallest cache first, DRAM last (never empty once measured)
  // The intensity (flop/byte) where the compute roof meets the DRAM roof.
  double ridge_intensity() const { return peak_gflops / bandwidth_gbs; }
  // The level a working set of `bytes` fits in (the smallest that holds it); DRAM without levels.
  const MemoryLevel& level_for(double bytes) const;
  // The roof at intensity `flops_per_byte` from DRAM, or from the level `working_set_bytes`
  // fits in.
  double attainable_gflops(double flops_per_byte) const {
    double mem = bandwidth_gbs * flops_per_byte;
    return mem < peak_gflops ? mem : peak_gflops;
  }
  double attainable_gflops(double flops_per_byte, double working_set_bytes) const {
    double mem = level_for(working_set_bytes).bandwidth_gbs * flops_per_byte;
    return mem < peak_gflops ? mem : peak_gflops;
  }
};
Roofline measure_roofline(int threads);

// "avx512f x 4 threads: peak 512.0 GFLOP/s, bandwidth 40.1 GB/s, ridge 12.8 flop/byte;
//  L1 (128 KiB) 800.0 GB/s, L2 (2 MiB) 300.0 GB/s, L3 (32 MiB) 150.0 GB/s"
std::string format_roofline(const Roofline& r);

}  // namespace descent::bench
