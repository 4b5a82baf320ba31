#include "vm/reg_vm.h"

#include <algorithm>
#include <cstdlib>

#include "lang/runtime_errors.h"
#include "lang/tensor_api.h"
#include "lang/tensor_ops.h"
#include "vm/reg_compiler.h"
#include "vm/reg_fuse.h"
#include "vm/reg_vm_internal.h"

// Align every label (so every handler of the dispatch loop) to 16 bytes. Without it the
// handlers' placement, and with it the indirect-branch prediction, shifts with unrelated
// edits: measured swings of 40% on one benchmark. Same as -falign-labels=16 for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("align-labels=16")
#endif

// Computed goto where the compiler has it (GCC, Clang); a plain switch otherwise.
#if !defined(DESCENT_REG_SWITCH) && (defined(__GNUC__) || defined(__clang__))
#define DESCENT_REG_GOTO 1
#else
#define DESCENT_REG_GOTO 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define REG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define REG_UNLIKELY(x) (x)
#endif

namespace descent {
namespace {

using reg_vm_internal::FnRt;
using reg_vm_internal::Tracer;

FnRt runtime_of(const RegFunction& f) {
  FnRt r;
  r.code = f.code.data();
  r.k = f.k.data();
  r.lists = f.lists.data();
  r.param_locs = f.param_locs.data();
  r.nparams = static_cast<uint32_t>(f.param_locs.size());
  r.frame_size = static_cast<uint32_t>(f.frame_size());
  r.param0 = f.param_locs.empty() ? 0 : f.param_locs[0];
  r.uses_tensors = f.uses_tensors;
  r.src = &f;
  return r;
}

// A suspended caller: where to resume, its frame, its function, where the result goes.
struct CallFrame {
  const Instr* pc;
  Value* base;
  const FnRt* fn;
  Value* result;  // the caller's register that RETURN writes (the CALL's A)
  // The tensor handle count when this call began (callees that use tensors only): the
  // collector's `from` while it is the innermost call.
  int64_t first_handle;
};

// A compiled function, valid while the Module's entry has the same decl and version. It
// holds the Program that owns the decl, so that address cannot be reused meanwhile.
struct Cached {
  std::unique_ptr<RegFunction> fn;
  const FnDecl* decl = nullptr;
  uint32_t version = 0;
  std::shared_ptr<const Program> owner;
};

std::shared_ptr<const Program> owner_of(const Module& m, const FnDecl* decl) {
  for (const auto& p : m.programs)
    for (const auto& s : p->body)
      if (s->fn.get() == decl) return p;
  return nullptr;
}

constexpr uint64_t kPollSteps = 1024;  // how often (in steps) loops and calls read the flag

class RegVM final : public Engine {
 public:
  RegVM(int num_registers, RegisterAssigner assign)
      : num_registers_(num_registers), assign_(std::move(assign)) {}
  ~RegVM() override { std::free(stack_); }
  const char* name() const override { return "reg"; }
  bool runs_tensors() const override { return true; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    globals.resize(module.globals.size());
    Diagnostic err;
    // Functions: recompile the ones that are new or were redefined since the last run.
    cache_.resize(module.functions.size());
    rt_.assign(module.functions.size(), FnRt{});
    size_t max_frame = 1;
    for (size_t i = 0; i < module.functions.size(); ++i) {
      const FunctionInfo& info = module.functions[i];
      Cached& c = cache_[i];
      if (!info.decl) continue;
      if (!c.fn || c.decl != info.decl || c.version != info.version) {
        c.fn = compile_reg_function(*info.decl, module, &err);
        if (!c.fn || !prepare(*c.fn, info.decl->loc, &err)) {
          c.fn.reset();
          return fail(err);
        }
        c.decl = info.decl;
        c.version = info.version;
        c.owner = owner_of(module, info.decl);
      }
      rt_[i] = runtime_of(*c.fn);
      max_frame = std::max(max_frame, static_cast<size_t>(rt_[i].frame_size));
    }
    std::unique_ptr<RegFunction> top = compile_reg_toplevel(program, module, options.echo, &err);
    if (!top || !prepare(*top, top->locs.empty() ? SourceLoc{} : top->locs.front(), &err))
      return fail(err);
    FnRt top_rt = runtime_of(*top);
    // Room for the top-level frame and kMaxCallDepth frames of the largest function.
    size_t need = top_rt.frame_size + static_cast<size_t>(kMaxCallDepth) * max_frame + 1;
    if (need > stack_cap_) {
      std::free(stack_);
      // malloc, not a vector: pages of frames that are never reached are never touched.
      stack_ = static_cast<Value*>(std::malloc(need * sizeof(Value)));
      stack_cap_ = stack_ ? need : 0;
      if (!stack_)
        return fail(Diagnostic{Severity::Error, ErrorKind::Runtime, {}, runtime_error_message(RuntimeError::StackOverflow)});
    }
    frames_.resize(static_cast<size_t>(kMaxCallDepth));
    if (options.trace || options.trace_steps)
      return execute<true>(top_rt, module, globals, options);
    return execute<false>(top_rt, module, globals, options);
  }

 private:
  // Allocates f unless this engine runs virtual code, then fuses superinstructions. False
  // when its frame would need offsets beyond the 16-bit fields (tens of thousands of
  // simultaneously live values).
  bool prepare(RegFunction& f, SourceLoc loc, Diagnostic* err) {
    if (num_registers_ > 0) allocate_registers(f, num_registers_, assign_);
    fuse_reg_superinstructions(f);
    if (f.frame_size() <= kMaxOperand) return true;
    *err = Diagnostic{Severity::Error, ErrorKind::Runtime, loc,
                      "'" + f.name + "' is too large for the register VM (16-bit operands)"};
    return false;
  }
  static RunResult fail(const Diagnostic& d) {
    RunResult r;
    r.ok = false;
    r.error = d;
    return r;
  }

  template <bool kTrace>
  RunResult execute(const FnRt& top, const Module& module, GlobalStore& globals,
                    const RunOptions& options);

  int num_registers_;
  RegisterAssigner assign_;  // null: allocate_registers' own linear scan
  std::vector<Cached> cache_;
  std::vector<FnRt> rt_;  // per Module function index, for this run
  Value* stack_ = nullptr;
  size_t stack_cap_ = 0;
  std::vector<CallFrame> frames_;
  // The named dims each active call of a function returning a tensor bound (TCHECK's
  // "check args"), for its "check result".
  std::vector<DimBindings> bounds_;
  Tracer tracer_;  // only the traced instantiation of execute uses it (reg_trace.cpp)
};

// Top-level variables kept in registers go home, the values only (lang/promotable.h). HALT's
// list says where each lives; only FORLOOP's spill trampolines may follow HALT.
void write_back(const FnRt& top, const Value* base, Value* G) {
  const RegFunction& f = *top.src;
  const uint16_t* l = nullptr;
  for (size_t pc = f.code.size(); pc-- > 0 && !l && !f.promoted.empty();)
    if (f.code[pc].op == Op::HALT) l = location_list(f, f.code[pc]);
  for (int n = 0; l && n < l[0]; ++n) G[f.promoted[size_t(n)]] = base[l[1 + n]];
}

// A safe point: roots are the tensor globals and the tensor locals of the current frame.
// The callers' frames need not be scanned: everything they hold was made before the current
// call began, below `from`, which the collector never frees.
void collect(TensorRuntime& rt, const Module& m, const GlobalStore& g, const uint16_t* locals,
             const Value* base, int64_t from) {
  std::vector<int64_t> roots;
  global_tensor_roots(m, g, &roots);
  if (locals)
    for (int i = 0; i < locals[0]; ++i) roots.push_back(base[locals[1 + i]].i);
  rt.collect(roots, from);
}

// Fields of the instruction being executed (pc already points past it), each read from
// memory where it is used: cheaper than decoding them all up front, and it keeps the
// dispatch sequence short.
#define ARG_A static_cast<uint32_t>(pc[-1].a)
#define ARG_B static_cast<uint32_t>(pc[-1].b)
#define ARG_C static_cast<uint32_t>(pc[-1].c)

template <bool kTrace>
RunResult RegVM::execute(const FnRt& top, const Module& module, GlobalStore& globals,
                         const RunOptions& options) {
  static const std::atomic<bool> never{false};
  const std::atomic<bool>* interrupt = options.interrupt ? options.interrupt : &never;
  const uint64_t limit = options.step_limit ? options.step_limit : UINT64_MAX;
  const uint64_t limit_check = options.step_limit ? options.step_limit + 1 : UINT64_MAX;
  uint64_t check_at = 0;  // the step count at which the next back-edge or call checks
  const FnRt* const fns = rt_.data();
  Value* const G = globals.values.data();
  uint8_t* const defined = globals.defined.data();
  // The call stack: cf is the next free CallFrame; the stack of values is sized for
  // kMaxCallDepth frames of the largest function, so only the depth needs checking.
  CallFrame* cf = frames_.data();
  CallFrame* const cf_end = cf + kMaxCallDepth;

  // Hot state: the current function, frame, instruction.
  // Constants and jump targets are reached through fn (fn->k, fn->code): x86-64 keeps only
  // about six values in registers across the slow paths' calls, so fewer hot locals win.
  const FnRt* fn = &top;
  const Instr* pc = fn->code;
  Value* base = stack_;
  uint64_t steps = 0;
  uint32_t op = 0;  // the opcode being executed
  std::string line;
  const char* error = nullptr;
  std::string error_text;
  SourceLoc error_loc;  // with located: where the error points, not the instruction's source
  bool located = false;
  TensorFailure tfail;
  TensorRuntime* const trt = options.tensors;
  bounds_.clear();
  // Trace: the instruction being executed and its function.
  [[maybe_unused]] const Instr* ran = nullptr;
  [[maybe_unused]] const FnRt* ran_in = fn;
  if constexpr (kTrace) {
    tracer_.start(stack_, stack_cap_);
    tracer_.reset_frame(*fn, base);
  }

#define R(x) base[x]
#define vmfetch()                                                        \
  do {                                                                   \
    if constexpr (kTrace) {                                              \
      if (ran)                                                           \
        tracer_.step(*ran_in, ran, *fn, base, pc, module, options,       \
                     static_cast<int>(cf - frames_.data()));             \
      ran = pc;                                                          \
      ran_in = fn;                                                       \
    }                                                                    \
    op = static_cast<uint32_t>(pc->op);                                  \
    ++pc;                                                                \
    ++steps;                                                             \
  } while (0)
#define vmerror(msg) \
  do {               \
    error = msg;     \
    goto fail;       \
  } while (0)
  // A tensor operation's failure, which says where it points (an argument, an index).
#define vmfail(f)                         \
  do {                                    \
    error_text = std::move((f).message);  \
    error = error_text.c_str();           \
    error_loc = (f).loc;                  \
    located = true;                       \
    goto fail;                            \
  } while (0)
  // Loop back-edges and calls: where a program can spend unbounded time.
  // One compare on the fast path: the interrupt flag is read at the first check and then
  // every kPollSteps instructions; the step limit is met exactly.
#define vmcheck()                                                                            \
  if (REG_UNLIKELY(steps >= check_at)) {                                                     \
    if (interrupt->load(std::memory_order_relaxed) || steps > limit) vmerror(runtime_error_message(RuntimeError::Interrupted)); \
    check_at = std::min(steps + kPollSteps, limit_check);                                    \
  }
#define K (fn->k)
#define vmjump(target) pc = fn->code + (target)
#define vmenter(callee) \
  do {                  \
    fn = (callee);      \
    pc = fn->code;      \
  } while (0)

#if DESCENT_REG_GOTO
#define DESCENT_REG_LABEL(name, a, b, c, res, doc) &&L_##name,
  static const void* const kLabels[] = {DESCENT_REG_OPCODES(DESCENT_REG_LABEL)};
#undef DESCENT_REG_LABEL
#define vmdispatch(o) goto* kLabels[static_cast<int>(o)];
#define vmcase(name) L_##name:
#define vmbreak \
  vmfetch();    \
  vmdispatch(op)
#else
#define vmdispatch(o) switch (static_cast<Op>(o))
#define vmcase(name) case Op::name:
#define vmbreak break
#endif

// Families of short cases.
#define ARITH(name, T, F, EXPR) \
  vmcase(name) {                \
    T b = R(ARG_B).F;           \
    T c = R(ARG_C).F;           \
    R(ARG_A).F = (EXPR);        \
    vmbreak;                    \
  }
#define ARITHK(name, T, F, EXPR) \
  vmcase(name) {                 \
    T b = R(ARG_B).F;            \
    T c = K[ARG_C].F;            \
    R(ARG_A).F = (EXPR);         \
    vmbreak;                     \
  }
#define COMPARE(name, F, OP)                             \
  vmcase(name) {                                         \
    R(ARG_A) = Value::of_bool(R(ARG_B).F OP R(ARG_C).F); \
    vmbreak;                                             \
  }
#define COMPAREK(name, F, OP)                            \
  vmcase(name) {                                         \
    R(ARG_A) = Value::of_bool(R(ARG_B).F OP K[ARG_C].F); \
    vmbreak;                                             \
  }
#define BRANCH(name, F, COND) \
  vmcase(name) {              \
    auto a = R(ARG_A).F;      \
    auto b = R(ARG_B).F;      \
    if (COND) vmjump(ARG_C);  \
    vmbreak;                  \
  }
#define BRANCHK(name, F, COND) \
  vmcase(name) {               \
    auto a = R(ARG_A).F;       \
    auto b = K[ARG_B].F;       \
    if (COND) vmjump(ARG_C);   \
    vmbreak;                   \
  }

  for (;;) {
    vmfetch();
    vmdispatch(op) {
      vmcase(MOVE) {
        R(ARG_A) = R(ARG_B);
        vmbreak;
      }
      vmcase(LOADK) {
        R(ARG_A) = K[ARG_B];
        vmbreak;
      }
      vmcase(GETGLOBAL) {
        R(ARG_A) = G[ARG_B];
        vmbreak;
      }
      vmcase(GETGLOBALCHK) {
        if (REG_UNLIKELY(!defined[ARG_B])) {
          error_text = runtime_error_text(RuntimeError::UndefinedVariable, module.globals[ARG_B].name);
          vmerror(error_text.c_str());
        }
        R(ARG_A) = G[ARG_B];
        vmbreak;
      }
      vmcase(SETGLOBAL) {
        G[ARG_B] = R(ARG_A);
        defined[ARG_B] = 1;
        vmbreak;
      }
      vmcase(SPILL) {
        R(ARG_B) = R(ARG_A);
        vmbreak;
      }
      vmcase(RELOAD) {
        R(ARG_A) = R(ARG_B);
        vmbreak;
      }
      ARITH(ADD_INT, int64_t, i, wrap_add(b, c))
      ARITH(SUB_INT, int64_t, i, wrap_sub(b, c))
      ARITH(MUL_INT, int64_t, i, wrap_mul(b, c))
      vmcase(DIV_INT) {
        int64_t c = R(ARG_C).i;
        if (REG_UNLIKELY(c == 0)) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        R(ARG_A).i = int_div(R(ARG_B).i, c);
        vmbreak;
      }
      vmcase(MOD_INT) {
        int64_t c = R(ARG_C).i;
        if (REG_UNLIKELY(c == 0)) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        R(ARG_A).i = int_mod(R(ARG_B).i, c);
        vmbreak;
      }
      ARITHK(ADDK_INT, int64_t, i, wrap_add(b, c))
      ARITHK(SUBK_INT, int64_t, i, wrap_sub(b, c))
      ARITHK(MULK_INT, int64_t, i, wrap_mul(b, c))
      vmcase(DIVK_INT) {
        int64_t c = K[ARG_C].i;
        if (REG_UNLIKELY(c == 0)) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        R(ARG_A).i = int_div(R(ARG_B).i, c);
        vmbreak;
      }
      vmcase(MODK_INT) {
        int64_t c = K[ARG_C].i;
        if (REG_UNLIKELY(c == 0)) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        R(ARG_A).i = int_mod(R(ARG_B).i, c);
        vmbreak;
      }
      vmcase(DIVP2_INT) {  // add 2^C-1 to negatives first, so the shift rounds toward zero
        uint64_t x = static_cast<uint64_t>(R(ARG_B).i), mask = (uint64_t{1} << ARG_C) - 1;
        R(ARG_A).i = static_cast<int64_t>(x + ((0 - (x >> 63)) & mask)) >> ARG_C;
        vmbreak;
      }
      vmcase(MODP2_INT) {  // x - trunc(x / 2^C) * 2^C
        uint64_t x = static_cast<uint64_t>(R(ARG_B).i), mask = (uint64_t{1} << ARG_C) - 1;
        R(ARG_A).i = static_cast<int64_t>(x - ((x + ((0 - (x >> 63)) & mask)) & ~mask));
        vmbreak;
      }
      ARITH(ADD_FLOAT, double, f, b + c)
      ARITH(SUB_FLOAT, double, f, b - c)
      ARITH(MUL_FLOAT, double, f, b* c)
      ARITH(DIV_FLOAT, double, f, b / c)
      ARITH(MOD_FLOAT, double, f, std::fmod(b, c))
      ARITHK(ADDK_FLOAT, double, f, b + c)
      ARITHK(SUBK_FLOAT, double, f, b - c)
      ARITHK(MULK_FLOAT, double, f, b* c)
      ARITHK(DIVK_FLOAT, double, f, b / c)
      ARITHK(MODK_FLOAT, double, f, std::fmod(b, c))
      vmcase(NEG_INT) {
        R(ARG_A).i = wrap_neg(R(ARG_B).i);
        vmbreak;
      }
      vmcase(NEG_FLOAT) {
        R(ARG_A).f = -R(ARG_B).f;
        vmbreak;
      }
      vmcase(NOT) {
        R(ARG_A) = Value::of_bool(!R(ARG_B).b);
        vmbreak;
      }
      vmcase(ITOF) {
        R(ARG_A).f = static_cast<double>(R(ARG_B).i);
        vmbreak;
      }
      vmcase(FTOI) {
        int64_t out;
        if (REG_UNLIKELY(!float_to_int(R(ARG_B).f, &out))) vmerror(runtime_error_message(RuntimeError::InvalidConversion));
        R(ARG_A).i = out;
        vmbreak;
      }
      COMPARE(EQ_INT, i, ==)
      COMPARE(NE_INT, i, !=)
      COMPARE(LT_INT, i, <)
      COMPARE(LE_INT, i, <=)
      COMPAREK(EQK_INT, i, ==)
      COMPAREK(NEK_INT, i, !=)
      COMPAREK(LTK_INT, i, <)
      COMPAREK(LEK_INT, i, <=)
      COMPAREK(GTK_INT, i, >)
      COMPAREK(GEK_INT, i, >=)
      COMPARE(EQ_FLOAT, f, ==)
      COMPARE(NE_FLOAT, f, !=)
      COMPARE(LT_FLOAT, f, <)
      COMPARE(LE_FLOAT, f, <=)
      COMPAREK(EQK_FLOAT, f, ==)
      COMPAREK(NEK_FLOAT, f, !=)
      COMPAREK(LTK_FLOAT, f, <)
      COMPAREK(LEK_FLOAT, f, <=)
      COMPAREK(GTK_FLOAT, f, >)
      COMPAREK(GEK_FLOAT, f, >=)
      COMPARE(EQ_BOOL, b, ==)
      COMPARE(NE_BOOL, b, !=)
      vmcase(ABS_INT) {
        int64_t v = R(ARG_B).i;
        R(ARG_A).i = v < 0 ? wrap_neg(v) : v;
        vmbreak;
      }
      vmcase(ABS_FLOAT) {
        R(ARG_A).f = std::fabs(R(ARG_B).f);
        vmbreak;
      }
      vmcase(MIN_INT) {
        R(ARG_A) = int_min(R(ARG_B), R(ARG_C));
        vmbreak;
      }
      vmcase(MAX_INT) {
        R(ARG_A) = int_max(R(ARG_B), R(ARG_C));
        vmbreak;
      }
      vmcase(MIN_FLOAT) {
        R(ARG_A) = float_min(R(ARG_B), R(ARG_C));
        vmbreak;
      }
      vmcase(MAX_FLOAT) {
        R(ARG_A) = float_max(R(ARG_B), R(ARG_C));
        vmbreak;
      }
      vmcase(MATH) {
        R(ARG_A).f = call_math(static_cast<Builtin>(ARG_C), R(ARG_B).f);
        vmbreak;
      }
      vmcase(JMP) {
        vmjump(ARG_C);
        vmbreak;
      }
      vmcase(LOOP) {
        vmcheck();
        vmjump(ARG_C);
        vmbreak;
      }
      vmcase(JTRUE) {
        if (R(ARG_A).b) vmjump(ARG_C);
        vmbreak;
      }
      vmcase(JFALSE) {
        if (!R(ARG_A).b) vmjump(ARG_C);
        vmbreak;
      }
      BRANCH(JEQ_INT, i, a == b)
      BRANCH(JNE_INT, i, a != b)
      BRANCH(JLT_INT, i, a < b)
      BRANCH(JLE_INT, i, a <= b)
      BRANCHK(JEQK_INT, i, a == b)
      BRANCHK(JNEK_INT, i, a != b)
      BRANCHK(JLTK_INT, i, a < b)
      BRANCHK(JLEK_INT, i, a <= b)
      BRANCHK(JGTK_INT, i, a > b)
      BRANCHK(JGEK_INT, i, a >= b)
      BRANCH(JEQ_FLOAT, f, a == b)
      BRANCH(JNE_FLOAT, f, a != b)
      BRANCH(JLT_FLOAT, f, a < b)
      BRANCH(JLE_FLOAT, f, a <= b)
      BRANCH(JNLT_FLOAT, f, !(a < b))
      BRANCH(JNLE_FLOAT, f, !(a <= b))
      BRANCHK(JEQK_FLOAT, f, a == b)
      BRANCHK(JNEK_FLOAT, f, a != b)
      BRANCHK(JLTK_FLOAT, f, a < b)
      BRANCHK(JLEK_FLOAT, f, a <= b)
      BRANCHK(JGTK_FLOAT, f, a > b)
      BRANCHK(JGEK_FLOAT, f, a >= b)
      BRANCHK(JNLTK_FLOAT, f, !(a < b))
      BRANCHK(JNLEK_FLOAT, f, !(a <= b))
      BRANCHK(JNGTK_FLOAT, f, !(a > b))
      BRANCHK(JNGEK_FLOAT, f, !(a >= b))
      vmcase(FORLOOP) {
        vmcheck();
        int64_t next = R(ARG_A).i + 1;  // R[A] < R[B] holds here, so no overflow
        if (next < R(ARG_B).i) {
          R(ARG_A).i = next;
          vmjump(ARG_C);
        }
        vmbreak;
      }
      vmcase(FORLOOPK) {
        vmcheck();
        int64_t next = R(ARG_A).i + 1;
        if (next < K[ARG_B].i) {
          R(ARG_A).i = next;
          vmjump(ARG_C);
        }
        vmbreak;
      }
      vmcase(PRECALL) {
        vmcheck();
        if (REG_UNLIKELY(cf == cf_end)) vmerror(runtime_error_message(RuntimeError::StackOverflow));
        vmbreak;
      }
      // Calls: the callee's frame starts right after this one; the arguments are copied to
      // where the callee's allocation wants its parameters.
#define vmcall(COPY_ARGS)                                    \
  vmcheck();                                                 \
  if (REG_UNLIKELY(cf == cf_end)) vmerror(runtime_error_message(RuntimeError::StackOverflow)); \
  const FnRt* callee = &fns[ARG_B];                          \
  Value* callee_base = base + fn->frame_size;                \
  COPY_ARGS;                                                 \
  cf->pc = pc;                                               \
  cf->base = base;                                           \
  cf->fn = fn;                                               \
  cf->result = base + ARG_A;                                 \
  if (callee->uses_tensors && trt)                           \
    cf->first_handle = trt->next_handle();                   \
  ++cf;                                                      \
  base = callee_base;                                        \
  vmenter(callee);                                           \
  if constexpr (kTrace) tracer_.reset_frame(*fn, base);
      vmcase(CALL) {
        vmcall({
          const uint16_t* args = fn->lists + ARG_C + 1;
          const uint16_t* params = callee->param_locs;
          for (uint32_t n = 0; n < callee->nparams; ++n) callee_base[params[n]] = base[args[n]];
        });
        vmbreak;
      }
      vmcase(CALL0) {
        vmcall({});
        vmbreak;
      }
      vmcase(CALL1) {
        vmcall(callee_base[callee->param0] = R(ARG_C));
        vmbreak;
      }
      // Fused: the argument is computed as it is copied (C: register in the low byte,
      // immediate in the high byte). The checks above come first, as in CALL1.
      vmcase(CALL1_ADDI) {
        vmcall(callee_base[callee->param0].i = wrap_add(R(ARG_C & 0xFF).i, ARG_C >> 8));
        vmbreak;
      }
      vmcase(CALL1_SUBI) {
        vmcall(callee_base[callee->param0].i = wrap_sub(R(ARG_C & 0xFF).i, ARG_C >> 8));
        vmbreak;
      }
#undef vmcall
#define vmreturn(VALUE) \
  Value v = (VALUE);    \
  --cf;                 \
  base = cf->base;      \
  pc = cf->pc;          \
  fn = cf->fn;          \
  *cf->result = v;
      vmcase(RETURN) {
        vmreturn(R(ARG_A));
        vmbreak;
      }
      vmcase(RETURN_ADD_INT) {
        vmreturn(Value::of_int(wrap_add(R(ARG_A).i, R(ARG_B).i)));
        vmbreak;
      }
      vmcase(RETURN_ADDK_INT) {
        vmreturn(Value::of_int(wrap_add(R(ARG_A).i, K[ARG_B].i)));
        vmbreak;
      }
      // A conditional return (`if n < 2 { return n }`): returns, or falls through.
#define RETURNK(name, COND) \
  vmcase(name) {            \
    auto a = R(ARG_A).i;    \
    auto b = K[ARG_B].i;    \
    if (COND) {             \
      vmreturn(R(ARG_C));   \
    }                       \
    vmbreak;                \
  }
      RETURNK(RETEQK_INT, a == b)
      RETURNK(RETNEK_INT, a != b)
      RETURNK(RETLTK_INT, a < b)
      RETURNK(RETLEK_INT, a <= b)
      RETURNK(RETGTK_INT, a > b)
      RETURNK(RETGEK_INT, a >= b)
#undef RETURNK
#undef vmreturn
      vmcase(RETURN0) {
        --cf;
        base = cf->base;
        pc = cf->pc;
        fn = cf->fn;
        vmbreak;
      }
      vmcase(HALT) {
        write_back(*fn, base, G);
        // The end of a run is a safe point: what no global holds now is garbage.
        if (trt) collect(*trt, module, globals, nullptr, base, 0);
        if constexpr (kTrace)
          tracer_.step(*ran_in, ran, *fn, base, pc, module, options,
                       static_cast<int>(cf - frames_.data()));
        goto done;
      }
      // The bodies that need objects with destructors (strings, vectors) run in a lambda:
      // an indirect goto (vmbreak with computed goto) may not leave the scope of one.
      vmcase(PRINT) {
        bool shown = [&] {
          const uint16_t* l = fn->lists + ARG_A;
          line.clear();
          std::string text;
          for (int n = 0; n < l[0]; ++n) {
            if (n) line += ' ';
            uint16_t type = l[1 + 2 * n], v = l[2 + 2 * n];
            if (type == kPrintStr) {
              line += fn->src->strings[v];
            } else {
              size_t at = static_cast<size_t>(l + 2 + 2 * n - fn->lists);
              if (!show_value(trt, R(v), static_cast<Type>(type), fn->src->list_locs[at], &text,
                              &tfail))
                return false;
              line += text;
            }
          }
          line += '\n';
          return true;
        }();
        if (!shown) vmfail(tfail);
        if constexpr (kTrace) tracer_.hold(line);  // written after the instruction's trace line
        else if (options.out) options.out(line);
        vmbreak;
      }
      vmcase(ECHO) {
        if (!show_value(trt, R(ARG_A), static_cast<Type>(ARG_B),
                        fn->src->locs[static_cast<size_t>(pc - 1 - fn->code)], &line, &tfail))
          vmfail(tfail);
        line += '\n';
        if constexpr (kTrace) tracer_.hold(line);
        else if (options.out) options.out(line);
        vmbreak;
      }
      // ---- tensors: handles flow through registers; lang/tensor_ops.h does the work ----
      vmcase(TENSOR) {
        Value v;
        bool ok = [&] {
          const TensorSite& t = fn->src->tensor_sites[ARG_B];
          const uint16_t* l = fn->lists + ARG_C;
          Value in[16];
          std::vector<Value> many;
          Value* args = in;
          if (l[0] > 16) many.resize(l[0]), args = many.data();
          for (int i = 0; i < l[0]; ++i) args[i] = R(l[1 + i]);
          return tensor_expr(trt, module, *t.expr, args, &v, &tfail);
        }();
        if (!ok) vmfail(tfail);
        R(ARG_A) = v;
        vmbreak;
      }
      vmcase(TCHECK) {
        bool ok = [&] {
          const TensorSite& t = fn->src->tensor_sites[ARG_B];
          const uint16_t* l = fn->lists + ARG_C;
          std::vector<Value> args(l[0]);
          for (int i = 0; i < l[0]; ++i) args[static_cast<size_t>(i)] = R(l[1 + i]);
          switch (t.step) {
            case TensorStep::Dim: return check_shape_dim(*t.expr, args[0].i, &tfail);
            case TensorStep::Args: {
              const FnDecl& callee = *module.functions[static_cast<size_t>(t.fn)].decl;
              DimBindings bound;
              if (!check_tensor_args(trt, *t.expr, callee, args.data(), &bound, &tfail))
                return false;
              if (callee.declared_return == Type::Tensor) bounds_.push_back(std::move(bound));
              return true;
            }
            case TensorStep::Result: {
              const FnDecl& self = *module.functions[static_cast<size_t>(t.fn)].decl;
              DimBindings bound;
              if (!bounds_.empty()) bound = std::move(bounds_.back()), bounds_.pop_back();
              return check_tensor_result(trt, self, args[0], t.expr->loc, std::move(bound), &tfail);
            }
            case TensorStep::Expr: return true;  // TENSOR's
          }
          return true;
        }();
        if (!ok) vmfail(tfail);
        vmbreak;
      }
      vmcase(SAFEPOINT) {
        if (trt && trt->wants_collect())
          collect(*trt, module, globals, fn->lists + ARG_A, base,
                  cf == frames_.data() ? 0 : cf[-1].first_handle);
        vmbreak;
      }
#if !DESCENT_REG_GOTO
      default: break;
#endif
    }
  }

fail : {
  write_back(top, stack_, G);  // what a REPL reads after the error: as on the walker
  RunResult r;
  r.ok = false;
  size_t at = static_cast<size_t>(pc - 1 - fn->code);
  // Both traces end with the failing instruction, before the caller reports the error.
  if constexpr (kTrace)
    tracer_.fail(*fn, pc - 1, base, module, options, static_cast<int>(cf - frames_.data()), error);
  r.error =
      Diagnostic{Severity::Error, ErrorKind::Runtime, located ? error_loc : fn->src->locs[at], error};
  r.steps = steps;
  return r;
}
done : {
  RunResult r;
  r.steps = steps;
  return r;
}
#undef R
#undef K
#undef vmfetch
#undef vmerror
#undef vmcheck
#undef vmjump
#undef vmenter
#undef vmdispatch
#undef vmcase
#undef vmbreak
#undef ARITH
#undef ARITHK
#undef COMPARE
#undef COMPAREK
#undef BRANCH
#undef BRANCHK
}

}  // namespace

std::unique_ptr<Engine> make_reg_vm(int num_registers, RegisterAssigner assign) {
  if (num_registers != 0) num_registers = std::clamp(num_registers, kMinRegisters, kMaxRegisters);
  return std::make_unique<RegVM>(num_registers, std::move(assign));
}

}  // namespace descent
