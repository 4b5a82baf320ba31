// The launch log as data: one record per kernel launch the graph runtime makes, with what
// it ran on, how long it took and how much work it did, so a front end can print tinygrad's
// DEBUG=2 view (`:debug 2`, `descent run --debug 2`) or `:time`'s per-kernel lines.
// Nothing here prints.
//
// The work is counted from the loop nest, so it holds for any kernel, a fused one too, and
// the benchmark's GFLOP/s and GB/s (bench/tensor_bench.cpp) come from the same count:
//   flops  every f32 arithmetic operation a block's statements do (a multiply-add is 2, an
//          exp or a max is 1) times the size of the block's iteration domain; index
//          arithmetic and comparisons are not counted. A schedule never changes a block's
//          domain, so the count is the same before and after one.
//   bytes  the compulsory traffic: every input read once and the output written once (4
//          bytes an element); what a cache saves or a bad loop order wastes is not in it.
#pragma once
#include <string>

namespace descent::tir {
struct PrimFunc;
}

namespace descent::tensor {

struct KernelCost {
  double flops = 0;  // f32 operations
  double bytes = 0;  // inputs read and output written once, 4 bytes an element
};
KernelCost kernel_cost(const tir::PrimFunc& f);

struct LaunchRecord {
  std::string kernel;       // the graph node's label: "matmul", a fused "linear+relu"
  std::string device;       // the backend: "ref", "cpu", "opencl"
  std::string device_name;  // what it ran on: "reference interpreter", "host CPU", PoCL's name
  double seconds = 0;       // the kernel alone (KernelTiming::kernel_s)
  double transfer_s = 0;    // preparing buffers and copying data (setup_s + download_s)
  bool compiled = false;    // this launch compiled the kernel (false: the cache had it)
  double compile_s = 0;     // code generation and build when compiled (a lazy build too)
  double flops = 0, bytes = 0;  // kernel_cost of the loop nest that ran
  std::string schedule;     // Node::schedule: "", "user", "tuned", "default"

  // Rates over `seconds`; 0 when the time is 0 (a clock too coarse for a tiny kernel).
  double gflops() const { return seconds > 0 ? flops / seconds / 1e9 : 0; }
  double gbs() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

// Every launch of a run added up: the log keeps the first kLaunchLogLimit launches one by
// one (a loop that runs a model a million times must not keep a million records), the
// totals count them all.
constexpr size_t kLaunchLogLimit = 10000;
struct LaunchTotals {
  size_t count = 0, compiled = 0;
  double seconds = 0, flops = 0, bytes = 0;
  std::string device, device_name;  // of the first launch
  void add(const LaunchRecord& r) {
    if (count++ == 0) {
      device = r.device;
      device_name = r.device_name;
    }
    compiled += r.compiled ? 1 : 0;
    seconds += r.seconds;
    flops += r.flops;
    bytes += r.bytes;
  }
};

}  // namespace descent::tensor
