// The engine "native": compiles each function once (again when the REPL redefines it),
// the top-level code on every run, and runs the bytes from executable memory.
//
// Generated code reaches everything outside itself through the context in r15 (backend.h's
// Context): the globals, the poll byte, the call depth, the function table and the helpers
// below. Helpers print (into the line being built, handed to RunOptions::out at its end),
// call libm, and report runtime errors by siglongjmp back to the run, over the native frames
// (they own nothing that needs a destructor), as the JIT's runtime does.
#include "native/native.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <chrono>
#include <csetjmp>
#include <new>
#include <thread>
#include <cstring>
#include <unordered_map>

#include "lang/runtime_errors.h"
#include "lang/value.h"
#include "native/backend.h"
#include "native/compile.h"
#include "vm/reg_compiler.h"

namespace descent::native {

bool host_supported() {
#if defined(__x86_64__) && defined(__linux__)
  return true;
#else
  return false;
#endif
}

// ---- [SECTION] executable memory ----

ExecMemory::ExecMemory(const std::vector<uint8_t>& bytes) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_ = (bytes.size() + page - 1) / page * page;
  if (size_ == 0) size_ = page;
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    size_ = 0;
    return;
  }
  std::memcpy(p, bytes.data(), bytes.size());
  // Written, then executable: never both at once (W^X).
  if (mprotect(p, size_, PROT_READ | PROT_EXEC) != 0) {
    munmap(p, size_);
    size_ = 0;
    return;
  }
  code_ = p;
}
ExecMemory::~ExecMemory() {
  if (code_) munmap(code_, size_);
}

namespace {

// ---- [SECTION] the runtime ----

struct SiteRec {
  SourceLoc loc;
  Fail kind;
  std::string name;  // UndefinedVariable: the global
};

struct RunState {
  const RunOptions* opts = nullptr;
  Context* ctx = nullptr;
  const std::vector<SiteRec>* sites = nullptr;
  std::string line;
  uint64_t steps = 0;
  sigjmp_buf jump;
  int64_t failed_site = -1;
  bool interrupted = false;
  int trap = 0;  // a signal the generated code raised (a backend bug), 0 if none
};
thread_local RunState* current = nullptr;

// A safety net under the backend: generated code must never trap (every division is
// checked; idiv's INT_MIN / -1 is special-cased), but if a bug lets it, the run ends with
// an error instead of killing the process, and what the program printed before is kept
// (a killed process loses its buffered output). Only a trap raised while this thread runs
// native code is caught; any other goes to the handler that was there before.
struct sigaction previous_fpe, previous_ill;

void on_trap(int sig, siginfo_t* info, void* uc) {
  if (RunState* s = current) {
    s->trap = sig;
    siglongjmp(s->jump, 1);
  }
  const struct sigaction& prev = sig == SIGFPE ? previous_fpe : previous_ill;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uc);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // The default action: put it back; returning re-runs the instruction, which kills.
  sigaction(sig, &prev, nullptr);
}

void install_trap_handler() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_trap;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGFPE, &sa, &previous_fpe);
    sigaction(SIGILL, &sa, &previous_ill);
    return true;
  }();
  (void)installed;
}

[[noreturn]] void fail_at(int64_t site, bool interrupted) {
  current->failed_site = site;
  current->interrupted = interrupted;
  siglongjmp(current->jump, 1);
}

extern "C" {
void ds_native_print_int(int64_t v) { current->line += std::to_string(v); }
void ds_native_print_float(double v) { current->line += format_float(v); }
void ds_native_print_bool(int64_t v) { current->line += v ? "true" : "false"; }
void ds_native_print_str(const char* s) { current->line += s; }
void ds_native_print_space() { current->line += ' '; }
void ds_native_print_end() {
  RunState& s = *current;
  s.line += '\n';
  if (s.opts->out) s.opts->out(s.line);
  s.line.clear();
}
double ds_native_math(double x, int64_t builtin) { return call_math(static_cast<Builtin>(builtin), x); }
double ds_native_fmod(double a, double b) { return std::fmod(a, b); }
[[noreturn]] void ds_native_fail(int64_t site) { fail_at(site, false); }
// A slow path: a loop's back-edge or a call while someone watches, or a call too deep.
void ds_native_slow(int64_t site) {
  RunState& s = *current;
  const RunOptions& o = *s.opts;
  if (o.interrupt || o.step_limit) {
    ++s.steps;
    if ((o.interrupt && o.interrupt->load(std::memory_order_relaxed)) ||
        (o.step_limit && s.steps > o.step_limit))
      fail_at(site, true);
  }
  if ((*s.sites)[static_cast<size_t>(site)].kind == Fail::StackOverflow && s.ctx->depth >= kMaxCallDepth)
    fail_at(site, false);
}
}

}  // namespace

const char* fail_message(Fail k) {
  switch (k) {
    case Fail::DivisionByZero: return runtime_error_message(RuntimeError::DivisionByZero);
    case Fail::InvalidConversion: return runtime_error_message(RuntimeError::InvalidConversion);
    case Fail::StackOverflow: return runtime_error_message(RuntimeError::StackOverflow);
    case Fail::Interrupted: return runtime_error_message(RuntimeError::Interrupted);
    case Fail::UndefinedVariable: return runtime_error_message(RuntimeError::UndefinedVariable);
  }
  return "runtime error";
}

namespace {

using Entry = void (*)(Context*);

[[gnu::noinline]] int call_entry(RunState* s, Entry entry, Context* ctx) {
  if (sigsetjmp(s->jump, 0) != 0) return 1;
  entry(ctx);
  return 0;
}

const uint8_t kZero = 0, kOne = 1;


class NativeEngine final : public Engine {
 public:
  const char* name() const override { return "native"; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    if (!host_supported())
      return failure("the native engine generates x86-64 code and this host is not x86-64; "
                     "its stages can still be viewed (:native asm)");
    globals.resize(module.globals.size());
    if (!trampoline_) {
      Emitted t;
      t.insts = slow_trampoline();
      assemble(t);
      trampoline_ = std::make_unique<ExecMemory>(t.bytes);
      if (!trampoline_->code()) return failure("could not map executable memory");
    }
    cache_.resize(module.functions.size());
    table_.assign(module.functions.size(), nullptr);
    std::string error;
    for (size_t i = 0; i < module.functions.size(); ++i) {
      const FunctionInfo& info = module.functions[i];
      CachedBody& c = cache_[i];
      if (!info.decl) continue;
      Diagnostic d;
      int fresh = refresh(c, info, module, x86_64_target(), &d);
      if (fresh < 0) return fail(d);
      if (fresh) {
        register_sites(*c.code, module);
        if (!c.code->memory || !c.code->memory->code()) return failure("could not map executable memory");
      }
      table_[i] = c.code->memory->code();
    }
    Diagnostic d;
    auto top_virt = compile_reg_toplevel(program, module, options.echo, &d);
    if (!top_virt) return fail(d);
    size_t sites_before = sites_.size();
    auto top = compile(std::move(top_virt), module, true, &error);
    if (!top) return failure(error);
    register_sites(*top, module);
    if (!top->memory || !top->memory->code()) return failure("could not map executable memory");

    // The context, then the function table right after it (one allocation, so a call
    // reaches its callee in one load from r15).
    constexpr size_t kCtxWords = kCtxTable / 8;
    static_assert(sizeof(Context) <= kCtxTable);
    frame_.assign(kCtxWords + table_.size(), nullptr);
    Context& ctx = *new (frame_.data()) Context;
    std::copy(table_.begin(), table_.end(), frame_.begin() + kCtxWords);
    ctx.globals = reinterpret_cast<int64_t*>(globals.values.data());
    ctx.defined = globals.defined.data();
    // Who watches: a step limit polls at every back-edge and takes the slow path at every
    // call; an interrupt flag is read by loops where it lives (an atomic<bool> is one byte
    // that a plain load reads) and lowers the call limit through the watcher below.
    static_assert(sizeof(std::atomic<bool>) == 1);
    bool watch = options.step_limit ||
                 (options.interrupt && options.interrupt->load(std::memory_order_relaxed));
    ctx.poll = options.step_limit ? &kOne
               : options.interrupt ? reinterpret_cast<const uint8_t*>(options.interrupt)
                                   : &kZero;
    ctx.call_limit.store(watch ? 0 : kMaxCallDepth, std::memory_order_relaxed);
    ctx.slow = trampoline_->code();
    ctx.fail = reinterpret_cast<void*>(&ds_native_fail);
    ctx.helpers[static_cast<int>(Helper::PrintInt)] = reinterpret_cast<void*>(&ds_native_print_int);
    ctx.helpers[static_cast<int>(Helper::PrintFloat)] = reinterpret_cast<void*>(&ds_native_print_float);
    ctx.helpers[static_cast<int>(Helper::PrintBool)] = reinterpret_cast<void*>(&ds_native_print_bool);
    ctx.helpers[static_cast<int>(Helper::PrintStr)] = reinterpret_cast<void*>(&ds_native_print_str);
    ctx.helpers[static_cast<int>(Helper::PrintSpace)] = reinterpret_cast<void*>(&ds_native_print_space);
    ctx.helpers[static_cast<int>(Helper::PrintEnd)] = reinterpret_cast<void*>(&ds_native_print_end);
    ctx.helpers[static_cast<int>(Helper::Math)] = reinterpret_cast<void*>(&ds_native_math);
    ctx.helpers[static_cast<int>(Helper::Fmod)] = reinterpret_cast<void*>(&ds_native_fmod);
    ctx.slow_helper = reinterpret_cast<void*>(&ds_native_slow);
    static_assert(offsetof(Context, depth) == kCtxDepth && offsetof(Context, helpers) == kCtxHelpers &&
                  offsetof(Context, slow_helper) == kCtxSlowHelper && offsetof(Context, poll) == kCtxPoll &&
                  offsetof(Context, call_limit) == kCtxCallLimit && offsetof(Context, fail) == kCtxFail &&
                  offsetof(Context, slow) == kCtxSlow);

    install_trap_handler();
    RunState s;
    s.opts = &options;
    s.ctx = &ctx;
    s.sites = &sites_;
    RunState* saved = current;
    int failed = 0;
    // A watcher: code that only calls (fib) reads no flag, so when the interrupt flag goes
    // up, the call limit goes down and the next call takes the slow path.
    std::atomic<bool> done{false};
    std::thread watcher;
    if (options.interrupt && !watch)
      watcher = std::thread([&] {
        while (!done.load(std::memory_order_acquire)) {
          if (options.interrupt->load(std::memory_order_relaxed)) {
            ctx.call_limit.store(0, std::memory_order_relaxed);
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    run_on_big_stack([&] {
      current = &s;
      failed = call_entry(&s, reinterpret_cast<Entry>(top->memory->code()), &ctx);
      current = saved;
    });
    done.store(true, std::memory_order_release);
    if (watcher.joinable()) watcher.join();
    RunResult r;
    r.steps = s.steps;
    if (failed && s.trap) {
      r.ok = false;
      r.error = Diagnostic{Severity::Error, ErrorKind::Runtime, {},
                           std::string("the native code raised ") +
                               (s.trap == SIGFPE ? "SIGFPE (an arithmetic trap)" : "SIGILL") +
                               ": a bug in the native backend (the other engines run this program)"};
    } else if (failed) {
      const SiteRec& site = sites_[static_cast<size_t>(s.failed_site)];
      r.ok = false;
      std::string msg = s.interrupted ? runtime_error_message(RuntimeError::Interrupted) : fail_message(site.kind);
      if (!s.interrupted && site.kind == Fail::UndefinedVariable) msg += " '" + site.name + "'";
      r.error = Diagnostic{Severity::Error, ErrorKind::Runtime, site.loc, msg};
    }
    // The top level's sites die with its code.
    sites_.resize(sites_before);
    return r;
  }

 private:
  // Gives the code's sites their numbers in this engine's table, then writes the bytes.
  void register_sites(Compiled& c, const Module& module) {
    std::vector<int> ids;
    for (const Site& s : c.fn.sites) {
      ids.push_back(static_cast<int>(sites_.size()));
      sites_.push_back(SiteRec{s.loc, s.kind,
                               s.global >= 0 ? module.globals[static_cast<size_t>(s.global)].name : ""});
    }
    finish(c, ids);
  }

  std::vector<CachedBody> cache_;
  std::vector<void*> table_;
  std::vector<void*> frame_;  // the Context and the function table after it
  std::vector<SiteRec> sites_;
  std::unique_ptr<ExecMemory> trampoline_;
};

}  // namespace

std::unique_ptr<Engine> make_native_engine() { return std::make_unique<NativeEngine>(); }

}  // namespace descent::native
