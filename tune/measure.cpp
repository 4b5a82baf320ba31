// The real measurer: build, check against the reference interpreter, time (measure.h).
#include "tune/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
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

// The key of the reference computed by the compiled unscheduled nest in cases_ (the others
// are shrink counts, 0 for the interpreter at the tuning size).
constexpr int kCompiled = -1;

// tir::substitute for every expression of a statement tree, in place.
void substitute_all(tir::Stmt* s, const std::string& name, const tir::Expr& with) {
  if (!s) return;
  auto sub = [&](tir::ExprPtr& e) {
    if (e) e = tir::substitute(*e, name, with);
  };
  for (auto& it : s->iters) sub(it.binding);
  sub(s->predicate);
  for (auto& i : s->indices) sub(i);
  sub(s->value);
  substitute_all(s->init.get(), name, with);
  substitute_all(s->body.get(), name, with);
  for (auto& c : s->stmts) substitute_all(c.get(), name, with);
}

// Whether `pred` holds for some statement of the tree.
bool any_stmt(const tir::Stmt* s, const std::function<bool(const tir::Stmt&)>& pred) {
  if (!s) return false;
  if (pred(*s) || any_stmt(s->init.get(), pred) || any_stmt(s->body.get(), pred)) return true;
  for (const auto& c : s->stmts)
    if (any_stmt(c.get(), pred)) return true;
  return false;
}

bool has_loop(const tir::Stmt* s, const std::string& name) {
  return any_stmt(s, [&](const tir::Stmt& t) { return t.kind == tir::StmtKind::For && t.var == name; });
}

bool writes(const tir::Stmt* s, int buffer) {
  return any_stmt(s, [&](const tir::Stmt& t) { return t.kind == tir::StmtKind::Store && t.buffer == buffer; });
}

// Whether a reduce iterator of some block in the tree is bound to loop `var`.
bool reduce_uses(const tir::Stmt* s, const std::string& var) {
  return any_stmt(s, [&](const tir::Stmt& t) {
    for (const auto& it : t.iters)
      if (it.kind == tir::IterKind::Reduce && it.binding && tir::uses_var(*it.binding, var)) return true;
    return false;
  });
}

}  // namespace

// The stages before the last run whole; the last one's spatial loops i, j, ... become one
// loop s over the samples, with (i, j, ...) the indices of the output's element number
// (s * step) % elements: one nest the interpreter runs as is.
bool sampled_nest(const tir::PrimFunc& f, int64_t count, SampledNest* out) {
  if (!f.body || f.output < 0) return false;
  tir::PrimFunc g = f;
  std::vector<tir::StmtPtr>* stages = nullptr;
  tir::StmtPtr* last = &g.body;
  if (g.body->kind == tir::StmtKind::Seq) {
    stages = &g.body->stmts;
    if (stages->empty()) return false;
    last = &stages->back();
    for (size_t k = 0; k + 1 < stages->size(); ++k)
      if (writes((*stages)[k].get(), g.output)) return false;
  }
  if (!writes(last->get(), g.output)) return false;
  // The last stage's spatial loops: the leading chain of loops no reduce iterator uses.
  std::vector<std::pair<std::string, int64_t>> spatial;
  tir::StmtPtr* inner = last;
  while ((*inner)->kind == tir::StmtKind::For && !reduce_uses(inner->get(), (*inner)->var)) {
    spatial.push_back({(*inner)->var, (*inner)->extent});
    inner = &(*inner)->body;
  }
  const std::vector<int64_t>& shape = g.buffers[size_t(g.output)].shape;
  if (spatial.empty() || spatial.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (spatial[d].second != shape[d]) return false;
  // Sample s is the output element (s * step) % elements in row-major order: a step coprime
  // with the count visits every element before one comes again, and a step near the golden
  // section of the count scatters them over the whole output (never one row, or only the
  // diagonal).
  double elements = 1;
  for (int64_t n : shape) elements *= double(n);
  const int64_t total = int64_t(elements);
  int64_t step = std::max<int64_t>(1, int64_t(double(total) * 0.6180339887));
  while (std::gcd(step, total) != 1) ++step;
  std::string s = "sample";
  while (has_loop(g.body.get(), s)) s += "_";
  tir::StmtPtr body = std::move(*inner);
  int64_t stride = total;
  for (size_t d = 0; d < shape.size(); ++d) {
    stride /= shape[d];
    tir::ExprPtr flat = tir::binary(tir::Op::Mod, tir::binary(tir::Op::Mul, tir::var(s), tir::int_imm(step)),
                                    tir::int_imm(total));
    tir::ExprPtr at = tir::binary(tir::Op::Mod, tir::binary(tir::Op::Div, std::move(flat), tir::int_imm(stride)),
                                  tir::int_imm(shape[d]));
    substitute_all(body.get(), spatial[d].first, *at);
  }
  tir::PrimFunc stage;
  stage.body = tir::clone(f.body->kind == tir::StmtKind::Seq ? *f.body->stmts.back() : *f.body);
  double last_flops = tensor::kernel_cost(stage).flops;
  out->flops = tensor::kernel_cost(f).flops - last_flops + last_flops * double(count) / elements;
  *last = tir::make_for(s, count, std::move(body));
  out->flat.clear();
  for (int64_t k = 0; k < count; ++k) out->flat.push_back(k * step % total);
  out->func = std::move(g);
  return true;
}


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

// The reference of last resort, at the tuning size: the unscheduled nest compiled by the cpu
// backend and run once on the seeded inputs. The backend is checked against the interpreter
// on every kernel of the test suite, so its plain nest is an oracle one step removed; to
// keep that step honest here too, a few hundred of its output elements are recomputed by
// the interpreter (sampled_nest) before any candidate is compared with it.
BackendMeasurer::Case* BackendMeasurer::compiled_case() {
  auto it = cases_.find(kCompiled);
  if (it != cases_.end()) return it->second.get();
  auto c = std::make_unique<Case>();
  Case* raw = (cases_[kCompiled] = std::move(c)).get();
  Case& cc = *raw;
  cc.reference = unscheduled_;
  const tir::PrimFunc& f = unscheduled_;
  cc.inputs.resize(f.params.size());
  std::vector<const tensor::Tensor*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!tensor::rand(f.buffers[size_t(f.params[i])].shape, int64_t(options_.seed + i),
                      &cc.inputs[i], &cc.error))
      return raw;
    args.push_back(&cc.inputs[i]);
  }
  auto t0 = Clock::now();
  // The cpu backend whatever the device: the reference must not share the code generator
  // of the candidates it judges when they are built for OpenCL.
  tensor::Backend* cpu = tensor::find_backend("cpu");
  std::string why;
  if (!cpu || !cpu->open(&why)) cpu = backend_;
  std::unique_ptr<tensor::CompiledKernel> k;
  tensor::BackendOptions o;
  o.threads = options_.threads;
  o.interrupt = &stop_;
  if (!cpu || !cpu->compile(f, o, &k, &why)) {
    cc.error = "the unscheduled nest does not build: " + why;
    return raw;
  }
  // The plain nest is the slowest there is: it gets ten candidates' time limit.
  double limit = 10 * options_.time_limit_s;
  stop_ = false;
  Watchdog dog(limit, [this] { stop_ = true; }, user_interrupt());
  if (!k->run(args, &cc.want, nullptr, &why)) {
    cc.error = dog.fired() ? "the unscheduled nest ran past " + std::to_string(int(limit)) + " s"
                           : "the unscheduled nest does not run: " + why;
    check_s_ += since(t0);
    return raw;
  }
  // Sampling: as many elements as the interpreter's budget allows, at most 256.
  SampledNest sampled;
  int64_t count = std::min<int64_t>(256, cc.want.numel());
  while (count >= 1 && (!sampled_nest(f, count, &sampled) || sampled.flops > options_.check_flops))
    count = sampled.flat.empty() ? 0 : count / 2;
  cc.how = "against the compiled unscheduled nest";
  if (count >= 1) {
    tensor::Tensor some;
    if (!tir::interpret(sampled.func, args, &some, &cc.error, options_.interrupt)) {
      cc.error = "the interpreter on the sampled nest: " + cc.error;
      check_s_ += since(t0);
      return raw;
    }
    for (int64_t at : sampled.flat) {
      float a = cc.want.data[size_t(at)], b = some.data[size_t(at)];
      bool close = std::isnan(a) ? std::isnan(b)
                                 : std::fabs(a - b) <= 1e-4 * std::max({1.0f, std::fabs(a), std::fabs(b)});
      if (!close) {
        cc.error = "the compiled unscheduled nest disagrees with the interpreter at element " +
                   std::to_string(at) + ": " + tensor::format_f32(a) + " vs " + tensor::format_f32(b);
        check_s_ += since(t0);
        return raw;
      }
    }
    cc.how += " (itself checked against the interpreter at " + std::to_string(sampled.flat.size()) +
              " output elements)";
  }
  cc.ok = true;
  check_s_ += since(t0);
  return raw;
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
      *error = !c.how.empty()
                   ? "computes something else than the unscheduled nest (checked " + last_check_ + "): " + why
                   : "computes something else than the reference interpreter (" + last_check_ + "): " + why;
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
  // Too big to interpret and no smaller size fits the schedule (a kernel with literal
  // shapes has none): the compiled unscheduled nest at the tuning size.
  if (full->error != "too big for the interpreter") {
    *error = "could not be checked against the reference interpreter: " + full->error;
    return false;
  }
  Case* compiled = compiled_case();
  if (!compiled->ok) {
    *error = "could not be checked: " + compiled->error;
    return false;
  }
  last_check_ = compiled->how;
  auto t0 = Clock::now();
  bool ok = compare(*compiled, kernel);
  check_s_ += since(t0);
  return ok;
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
  if (auto it = cases_.find(kCompiled); full->inputs.empty() && it != cases_.end()) full = it->second.get();
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
