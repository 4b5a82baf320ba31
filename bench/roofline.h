// The roofline: this machine's measured limits, so `descent bench --suite tensor` can state
// every kernel's speed as a fraction of what the hardware allows, not only as seconds.
//
// A kernel doing F flops over B bytes of memory traffic has arithmetic intensity I = F / B
// (flop/byte) and can run no faster than min(peak, bandwidth * I). Both roofs are measured
// here with microbenchmarks (not read from a datasheet): the FMA peak with independent FMA
// chains on the widest vector unit the CPU has, the bandwidth with a STREAM-style triad over
// arrays far larger than the last-level cache.
//
//   Roofline r = measure_roofline(4);   // ~0.5 s
//   double bound = r.attainable_gflops(flops / bytes);
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

struct Roofline {
  VectorIsa isa;
  int threads = 1;
  double peak_gflops = 0;    // compute roof
  double bandwidth_gbs = 0;  // memory roof
  // The intensity (flop/byte) where the roofs meet: kernels below it are memory-bound.
  double ridge_intensity() const { return peak_gflops / bandwidth_gbs; }
  // The roof at arithmetic intensity `flops_per_byte`.
  double attainable_gflops(double flops_per_byte) const {
    double mem = bandwidth_gbs * flops_per_byte;
    return mem < peak_gflops ? mem : peak_gflops;
  }
};
Roofline measure_roofline(int threads);

// "avx512f x 4 threads: peak 512.0 GFLOP/s, bandwidth 40.1 GB/s, ridge 12.8 flop/byte"
std::string format_roofline(const Roofline& r);

}  // namespace descent::bench
