// The real measurer: build, check against the reference interpreter, time (measure.h).
#include "tune/measure.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "lang/watchdog.h"
#include "tensor/launch.h"
#include "tensor/schedule.h"

namespace descent::tune {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// The user's interrupt (Ctrl-C) as the watchdog's second flag: it stops the run at once.
std::function<bool()> BackendMeasurer::user_interrupt() const {
  const std::atomic<bool>* user = options_.interrupt;
  if (!user) return nullptr;
  return [user] { return user->load(); };
}

BackendMeasurer::BackendMeasurer(tir::PrimFunc unscheduled, MeasureOptions options,
                                 SmallLowering small)
    : unscheduled_(std::move(unscheduled)), options_(std::move(options)), small_(std::move(small)) {}

BackendMeasurer::~BackendMeasurer() = default;

bool BackendMeasurer::open(std::string* error) {
  backend_ = tensor::backend_or_error(options_.device, error);
  return backend_ && backend_->open(error);
}

BackendMeasurer::Built BackendMeasurer::build(const tir::PrimFunc& f) {
  Built b;
  auto t0 = Clock::now();
  tensor::BackendOptions o;
  o.threads = options_.threads;
  o.interrupt = &stop_;
  if (!backend_) b.error = "the measurer's device is not open";
  else if (!backend_->compile(f, o, &b.kernel, &b.error)) b.error = "does not build: " + b.error;
  b.seconds = since(t0);
  return b;
}

BackendMeasurer::Case* BackendMeasurer::case_for(int shrink) {
  auto it = cases_.find(shrink);
  if (it != cases_.end()) return it->second.get();
  auto c = std::make_unique<Case>();
  if (shrink == 0) {
    c->reference = unscheduled_;
  } else if (!small_ || !small_(shrink, &c->reference)) {
    c->error = "the kernel cannot be lowered at a smaller size";
    return (cases_[shrink] = std::move(c)).get();
  }
  if (tensor::kernel_cost(c->reference).flops > options_.check_flops) {
    c->error = "too big for the interpreter";
    return (cases_[shrink] = std::move(c)).get();
  }
  const tir::PrimFunc& f = c->reference;
  c->inputs.resize(f.params.size());
  std::vector<const tensor::Tensor*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(options_.seed + i),
                      &c->inputs[i], &c->error))
      return (cases_[shrink] = std::move(c)).get();
    args.push_back(&c->inputs[i]);
  }
  auto t0 = Clock::now();
  c->ok = tir::interpret(f, args, &c->want, &c->error, options_.interrupt);
  check_s_ += since(t0);
  return (cases_[shrink] = std::move(c)).get();
}

bool BackendMeasurer::check(const tir::PrimFunc& f, const std::string& trace,
                            tensor::CompiledKernel& kernel, std::string* error) {
  auto compare = [&](Case& c, tensor::CompiledKernel& k) {
    std::vector<const tensor::Tensor*> args;
    for (const auto& t : c.inputs) args.push_back(&t);
    tensor::Tensor got;
    stop_ = false;
    Watchdog dog(options_.time_limit_s, [this] { stop_ = true; }, user_interrupt());
    if (!k.run(args, &got, nullptr, error)) {
      if (dog.fired()) *error = "stopped after " + std::to_string(int(options_.time_limit_s)) + " s";
      return false;
    }
    std::string why;
    if (!tensor::allclose(got, c.want, 1e-4, &why)) {
      *error = "computes something else than the reference interpreter (" + last_check_ + "): " + why;
      return false;
    }
    return true;
  };
  (void)f;
  Case* full = case_for(0);
  if (full->ok) {
    last_check_ = "at the tuning size";
    return compare(*full, kernel);
  }
  // Too big to interpret: the same schedule on the kernel lowered smaller.
  for (int shrink = 1; shrink <= 8; ++shrink) {
    Case* c = case_for(shrink);
    if (!c->ok) {
      if (c->error == "too big for the interpreter") continue;
      break;  // cannot lower smaller (or the interpreter failed): no smaller size will do
    }
    tensor::Schedule s(c->reference);
    std::string why;
    if (!s.apply_text(trace, &why)) continue;  // the trace's factors do not fit this size
    Built small = build(s.func());
    if (!small.kernel) {
      *error = small.error + " (at a smaller size, for the check)";
      return false;
    }
    last_check_ = "at dims / " + std::to_string(1 << shrink);
    auto t0 = Clock::now();
    bool ok = compare(*c, *small.kernel);
    check_s_ += since(t0);
    return ok;
  }
  *error = "could not be checked against the reference interpreter: the kernel is too big to "
           "interpret (" + std::to_string(int64_t(tensor::kernel_cost(unscheduled_).flops / 1e6)) +
           " MFLOP) and the schedule does not apply to it at a smaller size";
  return false;
}

bool BackendMeasurer::check_and_time(const tir::PrimFunc& f, const std::string& trace, Built built,
                                     double* seconds, std::string* error) {
  build_s_ += built.seconds;
  if (!built.kernel) {
    *error = built.error;
    return false;
  }
  if (options_.interrupt && options_.interrupt->load()) {
    *error = "interrupted";
    return false;
  }
  if (!check(f, trace, *built.kernel, error)) return false;
  // Inputs of the tuning size (the check may have used smaller ones).
  Case* full = case_for(0);
  std::vector<tensor::Tensor> own;
  std::vector<const tensor::Tensor*> args;
  if (!full->inputs.empty()) {
    for (const auto& t : full->inputs) args.push_back(&t);
  } else {
    own.resize(f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(options_.seed + i), &own[i], error))
        return false;
      args.push_back(&own[i]);
    }
  }
  std::vector<double> times;
  tensor::Tensor out;
  for (int r = 0; r < std::max(1, options_.repeats); ++r) {
    tensor::KernelTiming t;
    stop_ = false;
    Watchdog dog(options_.time_limit_s, [this] { stop_ = true; }, user_interrupt());
    if (!built.kernel->run(args, &out, &t, error)) {
      if (dog.fired())
        *error = "too slow: stopped after " + std::to_string(int(options_.time_limit_s)) + " s";
      return false;
    }
    times.push_back(t.kernel_s);
  }
  std::sort(times.begin(), times.end());
  *seconds = times[times.size() / 2];
  return true;
}

bool BackendMeasurer::measure(const tir::PrimFunc& f, const std::string& trace, double* seconds,
                              std::string* error) {
  return check_and_time(f, trace, build(f), seconds, error);
}

void BackendMeasurer::measure_batch(std::vector<MeasureItem>& items,
                                    const std::function<bool(size_t)>& next) {
  // Builds on a second thread only for the cpu backend: each of its kernels has an LLVM
  // context and JIT of its own. An OpenCL implementation's compiler may not like two
  // threads, so the others build in turn.
  const bool overlap = options_.overlap_builds && options_.device == "cpu";
  std::future<Built> ahead;
  for (size_t k = 0; k < items.size(); ++k) {
    Built b = ahead.valid() ? ahead.get() : build(*items[k].func);
    if (overlap && k + 1 < items.size()) {
      const tir::PrimFunc* f = items[k + 1].func;
      ahead = std::async(std::launch::async, [this, f] { return build(*f); });
    }
    MeasureItem& it = items[k];
    it.ok = check_and_time(*it.func, *it.trace, std::move(b), &it.seconds, &it.error);
    it.measured = true;
    if (!next(k)) {
      if (ahead.valid()) ahead.wait();
      return;
    }
  }
}

}  // namespace descent::tune
