// [SECTION] index: the compiler LLJIT uses (per -O level) | Jit: set-up, globals, what to
// compile, compile, run.
#include "llvm_backend/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <deque>
#include <future>
#include <mutex>
#include <map>
#include <set>
#include <thread>

#include <pthread.h>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm_backend/codegen.h"
#include "llvm_backend/host.h"
#include "llvm_backend/passes.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Top-level code without a loop runs once, straight through: optimising it costs more than it
// can save. Marked optnone (and noinline, which optnone requires), the IR passes skip it and
// the code generator makes its machine code the -O0 way (FastISel, no machine
// optimisations), while the functions it calls get the full treatment. A top-level loop keeps
// the engine's level: students write their hot loops there too.
bool has_loop(const llvm::Function& f) {
  // A loop is a back edge: a branch to a block still on the depth-first path.
  std::map<const llvm::BasicBlock*, int> state;  // 1 on the path, 2 done
  std::vector<std::pair<const llvm::BasicBlock*, unsigned>> path{{&f.getEntryBlock(), 0}};
  state[&f.getEntryBlock()] = 1;
  while (!path.empty()) {
    auto& [block, next] = path.back();
    const llvm::Instruction* term = block->getTerminator();
    if (next < term->getNumSuccessors()) {
      const llvm::BasicBlock* succ = term->getSuccessor(next++);
      int& s = state[succ];
      if (s == 1) return true;
      if (s == 0) {
        s = 1;
        path.emplace_back(succ, 0);
      }
    } else {
      state[block] = 2;
      path.pop_back();
    }
  }
  return false;
}

void run_once_unoptimized(llvm::Module& m, const std::string& entry) {
  llvm::Function* f = m.getFunction(entry);
  if (!f || f->isDeclaration() || has_loop(*f)) return;
  f->addFnAttr(llvm::Attribute::OptimizeNone);
  f->addFnAttr(llvm::Attribute::NoInline);
}

// Whether a block has a while or for loop anywhere (the tiering rule: a loop at -O0 would run
// to its end at -O0; without loops every call is short and the next one switches).
bool has_ast_loop(const Block& block) {
  for (const auto& s : block) {
    if (!s) continue;
    if (s->kind == StmtKind::While || s->kind == StmtKind::For) return true;
    if (s->kind == StmtKind::If && (has_ast_loop(s->body) || has_ast_loop(s->else_body))) return true;
  }
  return false;
}

// ---- [SECTION] the compiler every engine shares ----
// One LLJIT and one TargetMachine per -O level for the whole process, made on first use and
// shared by every Jit engine (a Session has one; `descent bench` makes a Session per run, the
// tests one per program). Each engine keeps its code in a JITDylib of its own, so a second
// Session costs a library, not a compiler: LLJIT, the TargetMachines and their subtargets
// (this CPU's instruction tables, built when a TargetMachine first compiles) are made once.
// The IR passes and the code generator use the same TargetMachine, so the cost model matches
// the machine code. TargetMachines are not thread-safe: one engine compiles at a time (mu);
// JIT code runs without the lock.
class SharedCompiler {
 public:
  static SharedCompiler& get() {
    // Never destroyed: an engine held by a static object may be destroyed after any
    // function-local static, and the process's exit frees the memory anyway.
    static SharedCompiler* shared = new SharedCompiler;
    return *shared;
  }

  std::mutex mu;
  int level = 2;                // the -O level of the compile under way (set under mu)
  double codegen_seconds = 0;   // spent making machine code since the engine last cleared it

  // Under mu. Starts making the LLJIT on a thread of its own, so that a process's first
  // compile generates its IR meanwhile (half a millisecond each) instead of after. That
  // thread also makes the -O0 TargetMachine (a tiered first unit's) and then, once the LLJIT
  // is handed over, the one for the engine's level (the worker's, or an untiered unit's).
  void prepare(int level) {
    if (jit_ || !error_.empty() || first_.valid()) return;
    // This machine's target is registered here first, on this thread (IR generation needs
    // it next): the LLJIT's thread and this one would otherwise register it at once, a race.
    // That thread then only reads the registry and detects this CPU.
    initialize_native_target();
    auto handed = std::make_shared<std::promise<Made>>();
    first_ = handed->get_future();
    later_level_ = level;
    auto make = [this, handed, level] {
      Made made;
      HostJitOptions options;
      options.static_initializers = false;  // Descent's units have no static constructors
      options.compiler = [this](llvm::orc::JITTargetMachineBuilder host)
          -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
        return std::make_unique<LevelCompiler>(host, *this);
      };
      made.jit = make_host_jit(options, &made.error);
      const bool ok = made.jit != nullptr;
      std::string ignored;
      if (ok) made.tm0 = make_host_target_machine(0, &ignored);
      handed->set_value(std::move(made));
      return ok && level != 0 ? make_host_target_machine(level, &ignored) : nullptr;
    };
    try {
      later_ = std::async(std::launch::async, make);
    } catch (const std::system_error&) {  // no thread to be had: made here, now
      std::promise<std::unique_ptr<llvm::TargetMachine>> here;
      here.set_value(make());
      later_ = here.get_future();
    }
  }
  // Under mu. Null with *error when LLVM cannot target this machine.
  llvm::orc::LLJIT* jit(std::string* error) {
    if (!jit_ && error_.empty()) {
      prepare(2);
      Made made = first_.get();
      jit_ = std::move(made.jit);
      error_ = jit_ ? "" : made.error;
      if (!tm_[0]) tm_[0] = std::move(made.tm0);
      if (jit_) ++instances_;
    }
    if (!jit_) *error = error_;
    return jit_.get();
  }
  // Under mu. Only threads holding mu touch tm_; the LLJIT's thread hands its TargetMachines
  // over through futures.
  llvm::TargetMachine* machine(int level) {
    if (!tm_[level] && later_.valid()) {  // what the LLJIT's thread made after the LLJIT
      std::unique_ptr<llvm::TargetMachine> tm = later_.get();
      if (tm && !tm_[later_level_]) tm_[later_level_] = std::move(tm);
    }
    if (!tm_[level]) {
      std::string ignored;
      tm_[level] = make_host_target_machine(level, &ignored);
    }
    return tm_[level].get();
  }
  int instances() const { return instances_; }

 private:
  // LLJIT's IR -> object step, at the level of the compile under way.
  class LevelCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
   public:
    LevelCompiler(const llvm::orc::JITTargetMachineBuilder& host, SharedCompiler& shared)
        : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(host.getOptions())),
          shared_(shared) {}
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& m) override {
      llvm::TargetMachine* tm = shared_.machine(shared_.level);
      if (!tm)
        return llvm::make_error<llvm::StringError>("no target machine",
                                                   llvm::inconvertibleErrorCode());
      auto start = Clock::now();
      auto object = llvm::orc::SimpleCompiler(*tm)(m);
      shared_.codegen_seconds += seconds_since(start);
      return object;
    }

   private:
    SharedCompiler& shared_;
  };

  struct Made {
    std::unique_ptr<llvm::orc::LLJIT> jit;
    std::unique_ptr<llvm::TargetMachine> tm0;
    std::string error;
  };
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::future<Made> first_;                               // the LLJIT and -O0's machine
  std::future<std::unique_ptr<llvm::TargetMachine>> later_;  // then later_level_'s
  int later_level_ = 2;
  std::unique_ptr<llvm::TargetMachine> tm_[4];
  std::string error_;
  int instances_ = 0;
};

class Jit final : public JitEngine {
 public:
  explicit Jit(int level) : level_(std::clamp(level, 0, 3)) {}
  ~Jit() override {
    abandon_ = true;  // a background compile not yet started is skipped
    wait_for_tiers();
    std::lock_guard<std::mutex> lock(SharedCompiler::get().mu);
    reset();
  }

  const char* name() const override { return "jit"; }
  // Tensor code calls the runtime's tensor helpers (codegen_tensor.cpp, tensor_runtime.cpp).
  bool runs_tensors() const override { return true; }
  void set_opt_level(int level) override { level_ = std::clamp(level, 0, 3); }
  int opt_level() const override { return level_; }
  void set_ir_transform(IRTransform transform) override { transform_ = std::move(transform); }
  void set_tiers(bool on) override { tiers_ = on; }
  void wait_for_tiers() override {
    if (worker_.joinable()) worker_.join();
  }
  Stats last_stats() const override {
    Stats s = stats_;
    std::lock_guard<std::mutex> lock(tier_mu_);
    s.tier2_pending = tier_pending_;
    s.tier2_failed = tier_failed_;
    s.tier2_seconds = tier_seconds_;
    s.tier2_ready_seconds = tier_ready_seconds_;
    return s;
  }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    // The last input's background compile read nothing of the session, but it adds to this
    // engine's library, which compile() changes: it finishes first.
    wait_for_tiers();
    stats_ = Stats{};
    {
      std::lock_guard<std::mutex> lock(tier_mu_);
      tier_pending_ = tier_failed_ = false;
      tier_seconds_ = tier_ready_seconds_ = 0;
    }
    run_start_ = Clock::now();
    globals.resize(module.globals.size());
    auto start = Clock::now();
    std::string error;
    void (*entry)() = nullptr;
    {
      std::lock_guard<std::mutex> lock(SharedCompiler::get().mu);
      entry = compile(program, module, options.echo, &error);
      stats_.jit_instances = SharedCompiler::get().instances();
    }
    if (entry && tier_job_.program) start_tier2();
    stats_.compile_seconds = seconds_since(start);
    if (!entry) return failure("jit: " + error);

    // The session's globals in, the program, the globals back out (also after an error).
    for (size_t i = 0; i < module.globals.size(); ++i) {
      values_[i] = globals.values[i];
      defined_[i] = globals.defined[i];
    }
    RunResult result;
    start = Clock::now();
    // The inputs the code may name by serial (runtime.h): the Module's and this one.
    std::vector<const SourceFile*> inputs;
    for (const auto& p : module.programs) inputs.push_back(p->source.get());
    inputs.push_back(program.source.get());
    // The collector's roots outside frames: the tensor-typed globals, in their homes here.
    TensorContext tensors;
    tensors.module = &module;
    tensors.global_roots = [&](std::vector<int64_t>& roots) {
      for (size_t i = 0; i < module.globals.size(); ++i)
        if (module.globals[i].type == Type::Tensor && defined_[i]) roots.push_back(values_[i].i);
    };
    run_watched([&] { result = runtime_.run(entry, options, inputs, &tensors); },
                options.interrupt);
    stats_.run_seconds = seconds_since(start);
    {
      // The worker reads this input's program and the session until it has the second
      // tier's IR; the caller may change both once run() returns.
      std::unique_lock<std::mutex> lock(tier_mu_);
      tier_cv_.wait(lock, [&] { return !worker_.joinable() || session_read_; });
    }
    if (unit_) {  // (only this thread sets unit_; a tiered unit has functions, so none)
      std::lock_guard<std::mutex> lock(SharedCompiler::get().mu);
      release_unit();
    }
    for (size_t i = 0; i < module.globals.size(); ++i) {
      globals.values[i] = values_[i];
      globals.defined[i] = defined_[i];
    }
    return result;
  }

 private:
  static RunResult failure(std::string msg) {
    RunResult r;
    r.ok = false;
    r.error = Diagnostic{Severity::Error, ErrorKind::Runtime, SourceLoc{}, std::move(msg)};
    return r;
  }

  // ---- [SECTION] running ----
  // Runs fn on a thread with a 512 MB stack (10,000 frames of any size), like the walker.
  // Meanwhile this thread watches the interrupt flag (JIT code does not read it: it only
  // polls the runtime's variables) and asks the runtime to stop when it goes up.
  void run_watched(const std::function<void()>& fn, const std::atomic<bool>* interrupt) {
    if (!interrupt) {
      run_on_big_stack(fn);
      return;
    }
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::function<void()> body = [&] {
      fn();
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_one();
    };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t{512} << 20);
    pthread_t thread;
    auto trampoline = [](void* arg) -> void* {
      (*static_cast<std::function<void()>*>(arg))();
      return nullptr;
    };
    int rc = pthread_create(&thread, &attr, trampoline, &body);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      body();  // no thread to be had: run here, unwatched once started
      return;
    }
    std::unique_lock<std::mutex> lock(mu);
    bool asked = false;
    while (!done) {
      if (!asked && interrupt->load(std::memory_order_relaxed)) {
        runtime_.request_stop();
        asked = true;
      }
      cv.wait_for(lock, std::chrono::milliseconds(1));
    }
    lock.unlock();
    pthread_join(thread, nullptr);
  }

  // ---- [SECTION] set-up ----
  // Under the shared lock: the shared compiler (made by the first engine of the process) and
  // this engine's library in it. The library finds the process's functions (libm, libc) in
  // the JIT's main library, and the runtime's here.
  bool start(std::string* error) {
    SharedCompiler& shared = SharedCompiler::get();
    if (library_) return true;  // (the TargetMachine for a level: when a unit first needs it)
    jit_ = shared.jit(error);
    if (!jit_) return false;
    static std::atomic<int> libraries{0};
    auto library = jit_->createJITDylib("descent." + std::to_string(++libraries));
    if (!library) {
      *error = error_text(library.takeError());
      return false;
    }
    library_ = &*library;
    library_->addToLinkOrder(jit_->getMainJITDylib());
    SymbolAddresses symbols;
    for (auto& [name, address] : runtime_.symbols()) symbols.emplace_back(name, address);
    if (define_symbols(*jit_, symbols, error, library_)) return true;
    reset();  // no half-made library: the next run tries again
    return false;
  }

  // Everything compiled belongs to one session's Module. A different one (the same engine
  // object given a fresh session) starts over with an empty library. Under the shared lock.
  void reset() {
    release_unit();
    if (library_) {
      if (llvm::Error e = jit_->getExecutionSession().removeJITDylib(*library_))
        llvm::consumeError(std::move(e));
      library_ = nullptr;
    }
    compiled_.clear();
    used_symbols_.clear();
    slot_of_.clear();
    slots_.clear();
    bound_.clear();
    values_.clear();
    defined_.clear();
  }

  bool same_session(const Module& m) const {
    if (m.globals.size() < bound_.size()) return false;
    for (size_t i = 0; i < bound_.size(); ++i)
      if (m.globals[i].name != bound_[i].first || m.globals[i].type != bound_[i].second) return false;
    return true;
  }

  // ---- [SECTION] globals ----
  // New globals get a fixed home here and absolute symbols ds.x / ds.x.defined for it.
  bool bind_globals(const Module& m, std::string* error) {
    SymbolAddresses symbols;
    for (size_t i = bound_.size(); i < m.globals.size(); ++i) {
      const GlobalInfo& g = m.globals[i];
      values_.emplace_back();
      defined_.push_back(0);
      symbols.emplace_back(global_symbol(g.name), &values_.back());
      symbols.emplace_back(defined_symbol(g.name), &defined_.back());
      bound_.emplace_back(g.name, g.type);
    }
    if (symbols.empty()) return true;
    return define_symbols(*jit_, symbols, error, library_);
  }

  // ---- [SECTION] what to compile ----
  struct Compiled {
    const FnDecl* decl = nullptr;
    uint32_t version = 0;
    std::shared_ptr<const Program> owner;  // keeps decl's address from being reused
    std::string symbol;
    std::map<int, std::string> callees;  // callee index -> the symbol this code calls
  };

  static std::shared_ptr<const Program> owner_of(const Module& m, const FnDecl* decl) {
    for (const auto& p : m.programs)
      for (const auto& s : p->body)
        if (s->kind == StmtKind::FnDecl && s->fn.get() == decl) return p;
    return nullptr;
  }

  std::string fresh_symbol(const std::string& name) {
    std::string base = function_symbol(name), s = base;
    while (used_symbols_.count(s)) s = base + "." + std::to_string(++counter_);
    used_symbols_.insert(s);
    return s;
  }

  // The functions this input needs that have no current machine code: new, redefined, or
  // calling (directly) a function that is itself being recompiled or was since.
  std::vector<int> stale_functions(const Program& program, const Module& m) {
    std::vector<int> need = called_functions(program.body);
    std::set<int> seen(need.begin(), need.end());
    std::map<int, std::vector<int>> callees;
    for (size_t i = 0; i < need.size(); ++i) {
      const FnDecl* d = m.functions[static_cast<size_t>(need[i])].decl;
      callees[need[i]] = d ? called_functions(d->body) : std::vector<int>{};
      for (int g : callees[need[i]])
        if (seen.insert(g).second) need.push_back(g);
    }
    std::set<int> stale;
    for (int f : need) {
      auto it = compiled_.find(f);
      const FunctionInfo& info = m.functions[static_cast<size_t>(f)];
      if (it == compiled_.end() || it->second.decl != info.decl || it->second.version != info.version)
        stale.insert(f);
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (int f : need) {
        if (stale.count(f)) continue;
        const Compiled& c = compiled_.at(f);
        for (int g : callees[f]) {
          auto cg = compiled_.find(g);
          if (stale.count(g) || cg == compiled_.end() || c.callees.at(g) != cg->second.symbol) {
            stale.insert(f);
            grew = true;
            break;
          }
        }
      }
    }
    std::vector<int> out;
    for (int f : need)
      if (stale.count(f)) out.push_back(f);
    return out;
  }

  // ---- [SECTION] compile ----
  // Under the shared lock. Each phase is timed into stats_ (docs/llvm.md, "Compile time").
  using Entry = void (*)();
  Entry compile(const Program& program, const Module& m, bool echo, std::string* error) {
    SharedCompiler& shared = SharedCompiler::get();
    auto phase = Clock::now();
    auto lap = [&phase] {
      double s = seconds_since(phase);
      phase = Clock::now();
      return s;
    };
    shared.prepare(level_);
    if (!same_session(m)) reset();

    std::vector<int> stale = stale_functions(program, m);
    std::map<int, std::string> symbol;
    for (int f : stale) symbol[f] = fresh_symbol(m.functions[static_cast<size_t>(f)].name);
    auto symbol_of = [&](int f) {
      auto it = symbol.find(f);
      if (it != symbol.end()) return it->second;
      auto c = compiled_.find(f);
      return c != compiled_.end() ? c->second.symbol : function_symbol(m.functions[static_cast<size_t>(f)].name);
    };
    // Tiers: no loop in the top-level code or any function compiled now.
    // Nor tensors: tensor code compiles kernels (LLVM, PoCL) on the program's thread, which the
    // worker compiling beside it must not meet.
    bool tier = tiers_ && level_ > 0 && !transform_ && !stale.empty() && !program.uses_tensors &&
                !has_ast_loop(program.body);
    for (int f : stale)
      tier = tier && !has_ast_loop(m.functions[static_cast<size_t>(f)].decl->body);
    const size_t first_new_slot = slots_.size();
    if (tier)
      for (int f : stale) {
        slots_.emplace_back(nullptr);
        slot_of_[symbol[f]] = slots_.size() - 1;
      }
    auto slotted = [&](int f) { return slot_of_.count(symbol_of(f)) > 0; };

    UnitSpec spec;
    spec.entry = "descent_main." + std::to_string(++counter_);
    spec.define = stale;
    spec.symbol = symbol_of;
    spec.echo = echo;
    spec.input_serials = true;
    spec.through_slot = slotted;
    IRModule ir = generate_unit(program, m, spec, error);
    if (!ir) return nullptr;
    stats_.generate_seconds = lap();
    // The LLJIT (made meanwhile, the first time), this engine's library, the globals' and the
    // new slots' symbols.
    if (!start(error) || !bind_globals(m, error)) return nullptr;
    for (const auto& [name, index] : slot_of_)
      if (index >= first_new_slot && !define_symbols(*jit_, {{slot_symbol(name), &slots_[index]}}, error, library_))
        return nullptr;
    stats_.setup_seconds = lap();
    tier_job_ = TierJob{};
    if (tier) {
      // The second tier's unit: the same functions under new names, calling each other
      // directly (inlined, self-recursion a plain call) and the others through their slots;
      // no top-level code. The worker generates it (run() returns only once it has: it reads
      // the session, which the next input changes), from names fixed now.
      std::vector<std::string> names(m.functions.size());
      std::vector<bool> through(m.functions.size());
      for (size_t f = 0; f < names.size(); ++f) {
        const int i = static_cast<int>(f);
        names[f] = symbol.count(i) ? symbol[i] + ".o2" : symbol_of(i);
        through[f] = !symbol.count(i) && slotted(i);
      }
      tier_job_.spec = spec;
      tier_job_.spec.entry = "";
      tier_job_.spec.symbol = [names](int f) { return names[static_cast<size_t>(f)]; };
      tier_job_.spec.through_slot = [through](int f) { return bool(through[static_cast<size_t>(f)]); };
      tier_job_.program = &program;
      tier_job_.module = &m;
      tier_job_.level = level_;
      for (int f : stale) tier_job_.publish.emplace_back(symbol[f] + ".o2", slot_of_.at(symbol[f]));
    }
    stats_.functions_tiered = tier ? static_cast<int>(stale.size()) : 0;
    const int level = tier ? 0 : level_;
    if (!shared.machine(level)) {
      *error = "no target machine for this host at -O" + std::to_string(level);
      return nullptr;
    }
    stats_.generate_seconds += lap();
    ir.module->setDataLayout(jit_->getDataLayout());
    ir.module->setTargetTriple(jit_->getTargetTriple().str());
    if (transform_) {
      std::string why = transform_(*ir.module);
      if (!why.empty()) {
        *error = why;
        return nullptr;
      }
    }
    if (level > 0) run_once_unoptimized(*ir.module, spec.entry);
    if (std::string why = optimize_for_jit(*ir.module, level, shared.machine(level)); !why.empty()) {
      *error = "the JIT's pass pipeline: " + why;
      return nullptr;
    }
    stats_.optimize_seconds = lap();
    llvm::orc::ThreadSafeModule tsm(std::move(ir.module), std::move(ir.context));
    // A unit that defines no function is top-level code alone: nothing later calls it, so it
    // gets a tracker of its own and is removed after its run (release_unit). Otherwise every
    // input of a long session would stay in memory for good. A unit with functions stays.
    llvm::Error added = llvm::Error::success();
    if (stale.empty()) {
      unit_ = library_->createResourceTracker();
      added = jit_->addIRModule(unit_, std::move(tsm));
    } else {
      added = jit_->addIRModule(*library_, std::move(tsm));
    }
    if (added) {
      *error = error_text(std::move(added));
      release_unit();
      return nullptr;
    }
    shared.level = level;
    shared.codegen_seconds = 0;
    auto address = jit_->lookup(*library_, spec.entry);  // compiles the unit
    if (address && tier)  // the first tier's addresses in the slots (the unit is made now)
      for (int f : stale) {
        auto a = jit_->lookup(*library_, symbol[f]);
        if (!a) {
          address = a.takeError();
          break;
        }
        slots_[slot_of_.at(symbol[f])].store(a->toPtr<const void*>(), std::memory_order_release);
      }
    stats_.codegen_seconds = shared.codegen_seconds;
    stats_.link_seconds = lap() - stats_.codegen_seconds;
    if (!address) {
      *error = error_text(address.takeError());
      tier_job_ = TierJob{};
      release_unit();
      return nullptr;
    }
    for (int f : stale) {
      const FunctionInfo& info = m.functions[static_cast<size_t>(f)];
      Compiled c;
      c.decl = info.decl;
      c.version = info.version;
      c.owner = owner_of(m, info.decl);
      c.symbol = symbol[f];
      for (int g : called_functions(info.decl->body)) c.callees[g] = symbol_of(g);
      compiled_[f] = std::move(c);
    }
    stats_.functions_compiled = static_cast<int>(stale.size());
    return address->toPtr<Entry>();
  }

  // ---- [SECTION] tiers ----
  struct TierJob {
    const Program* program = nullptr;  // null: nothing to do
    const Module* module = nullptr;
    UnitSpec spec;
    int level = 2;
    std::vector<std::pair<std::string, size_t>> publish;  // symbol -> its slot
  };

  // The second tier on a thread of its own: optimise, make machine code, and only then point
  // the slots at it. Any failure leaves the first tier in place (slower, never wrong).
  void start_tier2() {
    {
      std::lock_guard<std::mutex> lock(tier_mu_);
      tier_pending_ = true;
      session_read_ = false;
    }
    auto work = [this, job = std::move(tier_job_)]() mutable {
      auto start = Clock::now();
      std::string ignored;
      IRModule ir = generate_unit(*job.program, *job.module, job.spec, &ignored);
      SharedCompiler& shared = SharedCompiler::get();
      {
        std::lock_guard<std::mutex> tl(tier_mu_);
        session_read_ = true;
      }
      tier_cv_.notify_all();
      std::lock_guard<std::mutex> lock(shared.mu);
      bool published = false;
      if (ir && !abandon_ && optimize_for_jit(*ir.module, job.level, shared.machine(job.level)).empty()) {
        ir.module->setDataLayout(jit_->getDataLayout());
        ir.module->setTargetTriple(jit_->getTargetTriple().str());
        llvm::orc::ThreadSafeModule tsm(std::move(ir.module), std::move(ir.context));
        llvm::Error added = jit_->addIRModule(*library_, std::move(tsm));
        std::vector<const void*> code;
        if (added) llvm::consumeError(std::move(added));
        else {
          shared.level = job.level;
          for (const auto& [symbol, slot] : job.publish) {
            auto a = jit_->lookup(*library_, symbol);
            if (!a) {
              llvm::consumeError(a.takeError());
              break;
            }
            code.push_back(a->toPtr<const void*>());
          }
        }
        if (!code.empty() && code.size() == job.publish.size()) {
          for (size_t k = 0; k < code.size(); ++k)
            slots_[job.publish[k].second].store(code[k], std::memory_order_release);
          published = true;
        }
      }
      std::lock_guard<std::mutex> tl(tier_mu_);
      tier_pending_ = false;
      tier_failed_ = !published;
      if (published) {
        tier_seconds_ = seconds_since(start);
        tier_ready_seconds_ = seconds_since(run_start_);
      }
    };
    try {
      worker_ = std::thread(std::move(work));
    } catch (const std::system_error&) {  // no thread to be had: the -O0 code stays
      std::lock_guard<std::mutex> lock(tier_mu_);
      tier_pending_ = false;
      tier_failed_ = true;
      session_read_ = true;
    }
    tier_job_ = TierJob{};
  }

  // Frees the last unit's code when it had a tracker of its own (top-level code only). Under
  // the shared lock.
  void release_unit() {
    if (!unit_) return;
    if (llvm::Error e = unit_->remove()) llvm::consumeError(std::move(e));
    unit_ = nullptr;
  }

  int level_;
  IRTransform transform_;
  Stats stats_;
  Runtime runtime_;
  llvm::orc::LLJIT* jit_ = nullptr;             // the shared one, once started
  llvm::orc::JITDylib* library_ = nullptr;     // this engine's code, in jit_
  llvm::orc::ResourceTrackerSP unit_;
  std::map<int, Compiled> compiled_;  // by Module function index
  std::set<std::string> used_symbols_;
  // Tiers: slot homes (a deque never moves its elements), by first-tier symbol; the unit the
  // worker compiles next; the worker; its results (under tier_mu_).
  std::deque<std::atomic<const void*>> slots_;
  std::map<std::string, size_t> slot_of_;
  bool tiers_ = true;
  TierJob tier_job_;
  std::thread worker_;
  std::atomic<bool> abandon_{false};
  Clock::time_point run_start_;
  mutable std::mutex tier_mu_;
  std::condition_variable tier_cv_;
  bool session_read_ = true;
  bool tier_pending_ = false, tier_failed_ = false;
  double tier_seconds_ = 0, tier_ready_seconds_ = 0;
  int counter_ = 0;
  std::vector<std::pair<std::string, Type>> bound_;  // globals with a home, by slot
  std::deque<Value> values_;      // their homes (a deque never moves its elements)
  std::deque<uint8_t> defined_;
};

}  // namespace

std::unique_ptr<JitEngine> make_jit_engine(int opt_level) { return std::make_unique<Jit>(opt_level); }

}  // namespace descent::llvmbe
