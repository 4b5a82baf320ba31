// The real measurer (issue 17): a candidate loop nest built and timed through the tensor
// backend seam (tensor/backend.h), on the cpu or an OpenCL device, after checking what it
// computes against the reference interpreter.
//
//   tune::MeasureOptions o;  o.device = "cpu";  o.repeats = 5;
//   tune::BackendMeasurer m(unscheduled, o);
//   if (!m.open(&error)) ...                       // no such device, no OpenCL platform
//   tune::search(space, unscheduled, m, options);
//
// For each candidate:
//   1. build it (the backend's compile); a build that fails is the candidate's error;
//   2. check it: run it once on seeded random inputs and compare with the reference
//      interpreter's answer on the unscheduled nest (relative 1e-4, tensor::allclose).
//      The interpreter is slow (tens of MFLOP/s), so a kernel above `check_flops` is
//      checked at a smaller size instead: `small` (given by whoever can lower the kernel
//      again, the Session) lowers it with every named dim halved, quartered, ..., and the
//      candidate's trace is replayed there; the first smaller size where the trace applies
//      and the interpreter is quick enough is the one checked. Where no smaller size fits (a
//      kernel with literal shapes has no dims to halve; a factor as wide as a dim), the
//      candidate is compared at the tuning size with the unscheduled nest compiled by the
//      cpu backend (run once, its answer cached), whose own answer is first checked
//      against the interpreter at up to 256 sampled output elements (a nest rewritten to
//      compute only those). A candidate that cannot be checked at all is an error, never
//      a time;
//   3. time it: `repeats` runs, the median of the kernel's own time (KernelTiming::kernel_s:
//      no build, no transfers). A run longer than `time_limit_s` is stopped (the backend's
//      interrupt flag) and recorded as too slow.
// In a batch, the next candidate is built on a second thread while the current one is
// checked and timed (builds are most of a tuning job's time). On a 2-core machine that
// build competes with a parallel kernel's threads: `overlap_builds = false` keeps timings
// clean at the cost of the job's length.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensor/backend.h"
#include "tensor/tensor.h"
#include "tensor/tir.h"
#include "tune/search.h"

namespace descent::tune {

struct MeasureOptions {
  std::string device = "cpu";
  int repeats = 5;
  double time_limit_s = 10;         // per run of a candidate
  int threads = 0;                  // host-thread backends: 0 = every hardware thread
  uint64_t seed = 1;                // of the random inputs
  double check_flops = 3e7;         // the most the interpreter is asked to do per check
  bool overlap_builds = true;
  const std::atomic<bool>* interrupt = nullptr;  // Ctrl-C: stops the current run
};

// The kernel lowered again with every named dim divided by 2^shrink (shrink >= 1); false
// when it cannot be (a dim that does not halve, or the kernel has no named dims).
using SmallLowering = std::function<bool(int shrink, tir::PrimFunc* out)>;

// The unscheduled nest rewritten to compute only `count` elements of its output, for the
// reference interpreter: how the compiled reference is itself checked at a size the
// interpreter cannot run whole. As lowered (tensor/lower.cpp), a kernel is a sequence of
// stages, each a nest of spatial loops over its output's indices, in order, around its
// reduce loops and blocks. The other elements of the output are left as they were.
struct SampledNest {
  tir::PrimFunc func;
  std::vector<int64_t> flat;  // the row-major index in the output of each sample
  double flops = 0;  // what the interpreter does on it (kernel_cost counts block domains,
                     // which the rewrite leaves whole, so it is worked out here)
};
// False when the nest does not have that shape (a schedule already ran on it).
bool sampled_nest(const tir::PrimFunc& unscheduled, int64_t count, SampledNest* out);

class BackendMeasurer : public Measurer {
 public:
  BackendMeasurer(tir::PrimFunc unscheduled, MeasureOptions options, SmallLowering small = nullptr);
  ~BackendMeasurer() override;
  // Opens the device; false with *error (unknown device, no OpenCL platform).
  bool open(std::string* error);
  bool measure(const tir::PrimFunc& f, const std::string& trace, double* seconds,
               std::string* error) override;
  void measure_batch(std::vector<MeasureItem>& items,
                     const std::function<bool(size_t)>& next) override;
  // Seconds spent building candidates (on either thread), and checking them.
  double build_seconds() const { return build_s_; }
  double check_seconds() const { return check_s_; }
  // How the last candidate was checked: "at the tuning size", "at dims / 4", "against the
  // compiled unscheduled nest (itself checked against the interpreter at 256 output
  // elements)".
  const std::string& last_check() const { return last_check_; }

 private:
  struct Built {
    std::unique_ptr<tensor::CompiledKernel> kernel;
    std::string error;
    double seconds = 0;
  };
  Built build(const tir::PrimFunc& f);
  bool check_and_time(const tir::PrimFunc& f, const std::string& trace, Built built,
                      double* seconds, std::string* error);
  bool check(const tir::PrimFunc& f, const std::string& trace, tensor::CompiledKernel& kernel,
             std::string* error);
  // Inputs for a nest's parameters (seeded), and the interpreter's answer on `reference`.
  struct Case {
    tir::PrimFunc reference;
    std::vector<tensor::Tensor> inputs;
    tensor::Tensor want;
    bool ok = false;
    std::string error;
    std::string how;  // the compiled reference: how it was itself checked (last_check)
  };
  Case* case_for(int shrink);  // 0: the tuning size
  Case* compiled_case();       // the compiled unscheduled nest's answer at the tuning size
  std::function<bool()> user_interrupt() const;

  tir::PrimFunc unscheduled_;
  MeasureOptions options_;
  SmallLowering small_;
  tensor::Backend* backend_ = nullptr;
  std::map<int, std::unique_ptr<Case>> cases_;
  std::atomic<bool> stop_{false};  // the backend's interrupt: the time limit or the user's
  double build_s_ = 0, check_s_ = 0;
  std::string last_check_;
};

}  // namespace descent::tune
