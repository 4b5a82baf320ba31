// The stack VM's engine: the function cache, the value stack, and the dispatch loop.
//
// [SECTION] dispatch macros   [SECTION] the engine   [SECTION] the loop (execute)
#include "vm/stack_vm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lang/runtime_errors.h"
#include "lang/tensor_api.h"
#include "lang/tensor_ops.h"
#include "vm/stack_compiler.h"
#include "vm/stack_fuse.h"
#include "vm/stack_trace.h"

namespace descent {
namespace {

using stack::Chunk;
using stack::Op;
using stack::read_i32;
using stack::read_u32;

// ---------------------------------------------------------------------------------------------
// [SECTION] dispatch macros (Lua's lvm.c: switch vs computed goto is this one block)
// ---------------------------------------------------------------------------------------------
#if defined(__GNUC__) && !defined(DESCENT_STACK_SWITCH)
#define DESCENT_STACK_GOTO 1
#define vmdispatch(o) goto* kLabels[static_cast<uint8_t>(o)];
#define vmcase(name) L_##name:
#define vmbreak                                                                          \
  vmfetch();                                                                             \
  vmdispatch(op)
#else
#define vmdispatch(o) switch (o)
#define vmcase(name) case Op::name:
#define vmbreak break
#endif

// Reads the next instruction; in the traced loop, first reports the one that just ran.
#define vmfetch()                                                                        \
  do {                                                                                   \
    if constexpr (kTrace) {                                                              \
      if (tch)                                                                           \
        tracer.step(*tch, static_cast<size_t>(tip - tch->code.data()),                   \
                    ch == tch && ip == tip + stack::instruction_length(static_cast<Op>(*tip)), \
                    bp + ch->num_locals(), sp);                                          \
      tch = ch;                                                                          \
      tip = ip;                                                                          \
    }                                                                                    \
    op = static_cast<Op>(*ip++);                                                         \
    ++steps;                                                                             \
  } while (0)

// Operand i of the current instruction (ip points just past its opcode byte).
#define ARG(i) read_u32(ip + 4 * (i))
#define JARG(i) read_i32(ip + 4 * (i))
#define vmerror(msg)                                                                     \
  do {                                                                                   \
    err = (msg);                                                                         \
    goto on_error;                                                                       \
  } while (0)
// A tensor operation's failure, which says where it points (an argument, an index).
#define vmfail(f)                                                                        \
  do {                                                                                   \
    err = std::move((f).message);                                                        \
    err_loc = (f).loc;                                                                   \
    located = true;                                                                      \
    goto on_error;                                                                       \
  } while (0)
// The check every back-edge and call makes.
#define vmtick()                                                                         \
  if (steps > limit || intr->load(std::memory_order_relaxed)) vmerror(runtime_error_message(RuntimeError::Interrupted))

#define BINARY_INT(expr)                                                                 \
  {                                                                                      \
    int64_t a = sp[-2].i, b = sp[-1].i;                                                  \
    sp[-2].i = (expr);                                                                   \
    --sp;                                                                                \
    vmbreak;                                                                             \
  }
#define BINARY_FLOAT(expr)                                                               \
  {                                                                                      \
    double a = sp[-2].f, b = sp[-1].f;                                                   \
    sp[-2].f = (expr);                                                                   \
    --sp;                                                                                \
    vmbreak;                                                                             \
  }
#define CONST_OPERAND(field, expr)                                                       \
  {                                                                                      \
    auto a = sp[-1].field, b = k[ARG(0)].field;                                          \
    sp[-1].field = (expr);                                                               \
    ip += 4;                                                                             \
    vmbreak;                                                                             \
  }
#define COMPARE(field, cmp)                                                              \
  {                                                                                      \
    sp[-2] = Value::of_bool(sp[-2].field cmp sp[-1].field);                              \
    --sp;                                                                                \
    vmbreak;                                                                             \
  }
#define JUMP_IF(cond_expr)                                                               \
  {                                                                                      \
    if (cond_expr) ip += JARG(0);                                                        \
    ip += 4;                                                                             \
    vmbreak;                                                                             \
  }
#define JUMP_IF_CMP(field, cond_expr)                                                    \
  {                                                                                      \
    auto a = sp[-2].field, b = sp[-1].field;                                             \
    sp -= 2;                                                                             \
    if (cond_expr) ip += JARG(0);                                                        \
    ip += 4;                                                                             \
    vmbreak;                                                                             \
  }
#define JUMP_IF_LOCAL_CONST(cmp)                                                         \
  {                                                                                      \
    if (bp[ARG(0)].i cmp k[ARG(1)].i) ip += JARG(2);                                     \
    ip += 12;                                                                            \
    vmbreak;                                                                             \
  }

// ---------------------------------------------------------------------------------------------
// [SECTION] the engine
// ---------------------------------------------------------------------------------------------

// A caller's state, saved by CALL and restored by RETURN.
struct Frame {
  const Chunk* chunk;
  const uint8_t* ip;
  Value* bp;
  // The handle count when the call this record was saved for began (callees that use
  // tensors only): the collector's `from` while that call is the innermost.
  int64_t first_handle;
};

constexpr size_t kInitialStack = 256 * 1024;  // values: 10,000 frames of 25 slots, grows if needed

class StackVM final : public Engine {
 public:
  StackVM(std::function<void(Chunk&)> pass, stack::CompileHooks hooks)
      : pass_(std::move(pass)), hooks_(std::move(hooks)), frames_(kMaxCallDepth + 1) {
    enlarge(0, kInitialStack);
  }

  const char* name() const override { return "stack"; }
  bool runs_tensors() const override { return true; }

  RunResult run(const Program& program, const Module& module, GlobalStore& globals,
                const RunOptions& options) override {
    globals.resize(module.globals.size());
    refresh_functions(module);
    Chunk script = stack::compile_script(program, module, options.echo, &hooks_);
    if (pass_) pass_(script);
    if (options.trace || options.trace_steps)
      return execute<true>(script, module, globals, options);
    return execute<false>(script, module, globals, options);
  }

 private:
  // Compiles the functions that are new or redefined since the last run. An entry is kept
  // while the definition (decl and version) is the same; it holds the Program that owns the
  // decl, so that address cannot be reused by another definition while it is cached.
  void refresh_functions(const Module& m) {
    cache_.resize(m.functions.size());
    fn_table_.assign(m.functions.size(), nullptr);
    for (size_t i = 0; i < m.functions.size(); ++i) {
      const FunctionInfo& info = m.functions[i];
      Cached& c = cache_[i];
      if (!info.decl) continue;
      if (!c.chunk || c.decl != info.decl || c.version != info.version) {
        c.chunk = std::make_unique<Chunk>(stack::compile_function(*info.decl, m, &hooks_));
        if (pass_) pass_(*c.chunk);
        c.decl = info.decl;
        c.version = info.version;
        c.owner = owner_of(m, info.decl);
      }
      fn_table_[i] = c.chunk.get();
    }
  }

  static std::shared_ptr<const Program> owner_of(const Module& m, const FnDecl* decl) {
    for (const auto& p : m.programs)
      for (const auto& s : p->body)
        if (s->fn.get() == decl) return p;
    return nullptr;
  }

  // Makes the value stack at least used + need values long, keeping [0, used). The old
  // array stays alive in retired_ until the caller has moved its pointers over.
  Value* enlarge(size_t used, size_t need) {
    size_t size = std::max(capacity_ * 2, used + need + kInitialStack);
    auto fresh = std::make_unique<Value[]>(size);
    for (size_t i = 0; i < used; ++i) fresh[i] = stack_[i];
    retired_ = std::move(stack_);
    stack_ = std::move(fresh);
    capacity_ = size;
    return stack_.get();
  }

  // A safe point: the roots are the tensor globals and the tensor locals of every active
  // frame (the callers' saved in frames_[0, fp), the current one in ch/bp).
  void collect(TensorRuntime& rt, const Module& m, const GlobalStore& g, const Frame* fp,
               const Chunk* ch, const Value* bp) {
    std::vector<int64_t> roots;
    global_tensor_roots(m, g, &roots);
    auto frame_roots = [&](const Chunk* c, const Value* base) {
      for (size_t i = 0; i < c->local_types.size(); ++i)
        if (c->local_types[i] == Type::Tensor) roots.push_back(base[i].i);
    };
    for (const Frame* fr = frames_.data() + 1; fr <= fp; ++fr) frame_roots(fr[-1].chunk, fr[-1].bp);
    frame_roots(ch, bp);
    rt.collect(roots, fp == frames_.data() ? 0 : fp[-1].first_handle);
  }

  template <bool kTrace>
  RunResult execute(const Chunk& script, const Module& module, GlobalStore& globals,
                    const RunOptions& options);

  struct Cached {
    std::shared_ptr<const Program> owner;
    const FnDecl* decl = nullptr;
    uint32_t version = 0;
    std::unique_ptr<Chunk> chunk;
  };
  std::function<void(Chunk&)> pass_;      // run on compiled code (null: none)
  stack::CompileHooks hooks_;             // the compiler's (none: its own code)
  std::vector<Cached> cache_;             // by function index
  std::vector<const Chunk*> fn_table_;    // what CALL f runs
  std::unique_ptr<Value[]> stack_, retired_;
  size_t capacity_ = 0;
  std::vector<Frame> frames_;             // one per active call, kMaxCallDepth at most
  // The named dims each active call of a function returning a tensor bound (TENSOR's
  // "check args"), for its "check result".
  std::vector<DimBindings> bounds_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] the loop
// ---------------------------------------------------------------------------------------------
template <bool kTrace>
RunResult StackVM::execute(const Chunk& script, const Module& module, GlobalStore& globals,
                           const RunOptions& options) {
  static const std::atomic<bool> kNever{false};
  RunResult result;
  std::string err;
  SourceLoc err_loc;     // with located: where the error points, not the instruction's source
  bool located = false;
  TensorFailure tfail;
  TensorRuntime* const trt = options.tensors;
  bounds_.clear();
  stack::Tracer tracer(module, options.trace, options.trace_steps, options.out);
  // Traced, PRINT and ECHO write through the tracer, which holds the text until the
  // instruction's trace line is out.
  OutputSink traced_out;
  if (kTrace && options.out) traced_out = [&tracer](std::string_view s) { tracer.hold(s); };
  const OutputSink& out = kTrace ? traced_out : options.out;
  const Chunk* tch = nullptr;     // traced loop: the instruction that is running
  const uint8_t* tip = nullptr;   //   (its chunk and address)

  if (capacity_ < script.frame_size() + kInitialStack) enlarge(0, script.frame_size());
  // Hot state, in locals so it lives in registers.
  const Chunk* ch = &script;
  const uint8_t* ip = ch->code.data();
  const Value* k = ch->constants.data();
  Value* stack_base = stack_.get();
  Value* stack_end = stack_base + capacity_;
  Value* bp = stack_base;
  Value* sp = bp + ch->num_locals();
  Frame* const frame_base = frames_.data();
  Frame* const frame_max = frame_base + kMaxCallDepth;
  Frame* fp = frame_base;
  Value* const gv = globals.values.data();
  uint8_t* const gdef = globals.defined.data();
  const Chunk* const* fns = fn_table_.data();
  uint64_t steps = 0;
  const uint64_t limit = options.step_limit ? options.step_limit : UINT64_MAX;
  const std::atomic<bool>* intr = options.interrupt ? options.interrupt : &kNever;
  Op op;

#ifdef DESCENT_STACK_GOTO
  static const void* const kLabels[stack::kOpCount] = {
#define DESCENT_X(name, fmt, doc) &&L_##name,
      DESCENT_STACK_OPCODES(DESCENT_X)
#undef DESCENT_X
  };
#endif

  // clang-format off: one short case per opcode, as in lvm.c
  for (;;) {
    vmfetch();
    vmdispatch(op) {
      // ---- constants and variables ----
      vmcase(CONST) { *sp++ = k[ARG(0)]; ip += 4; vmbreak; }
      vmcase(POP) { --sp; vmbreak; }
      vmcase(LOAD_LOCAL) { *sp++ = bp[ARG(0)]; ip += 4; vmbreak; }
      vmcase(STORE_LOCAL) { bp[ARG(0)] = *--sp; ip += 4; vmbreak; }
      vmcase(LOAD_GLOBAL) { *sp++ = gv[ARG(0)]; ip += 4; vmbreak; }
      vmcase(LOAD_GLOBAL_CHECKED) {
        uint32_t g = ARG(0);
        if (!gdef[g]) vmerror(runtime_error_text(RuntimeError::UndefinedVariable, module.globals[g].name));
        *sp++ = gv[g];
        ip += 4;
        vmbreak;
      }
      vmcase(STORE_GLOBAL) {
        uint32_t g = ARG(0);
        gv[g] = *--sp;
        gdef[g] = 1;
        ip += 4;
        vmbreak;
      }
      // ---- arithmetic ----
      vmcase(ADD_INT) BINARY_INT(wrap_add(a, b))
      vmcase(SUB_INT) BINARY_INT(wrap_sub(a, b))
      vmcase(MUL_INT) BINARY_INT(wrap_mul(a, b))
      vmcase(DIV_INT) {
        if (sp[-1].i == 0) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        BINARY_INT(int_div(a, b))
      }
      vmcase(MOD_INT) {
        if (sp[-1].i == 0) vmerror(runtime_error_message(RuntimeError::DivisionByZero));
        BINARY_INT(int_mod(a, b))
      }
      vmcase(NEG_INT) { sp[-1].i = wrap_neg(sp[-1].i); vmbreak; }
      vmcase(ADD_FLOAT) BINARY_FLOAT(a + b)
      vmcase(SUB_FLOAT) BINARY_FLOAT(a - b)
      vmcase(MUL_FLOAT) BINARY_FLOAT(a * b)
      vmcase(DIV_FLOAT) BINARY_FLOAT(a / b)
      vmcase(MOD_FLOAT) BINARY_FLOAT(std::fmod(a, b))
      vmcase(NEG_FLOAT) { sp[-1].f = -sp[-1].f; vmbreak; }
      vmcase(ADD_CONST_INT) CONST_OPERAND(i, wrap_add(a, b))
      vmcase(SUB_CONST_INT) CONST_OPERAND(i, wrap_sub(a, b))
      vmcase(MUL_CONST_INT) CONST_OPERAND(i, wrap_mul(a, b))
      vmcase(DIV_CONST_INT) CONST_OPERAND(i, int_div(a, b))
      vmcase(MOD_CONST_INT) CONST_OPERAND(i, int_mod(a, b))
      vmcase(ADD_CONST_FLOAT) CONST_OPERAND(f, a + b)
      vmcase(SUB_CONST_FLOAT) CONST_OPERAND(f, a - b)
      vmcase(MUL_CONST_FLOAT) CONST_OPERAND(f, a * b)
      vmcase(DIV_CONST_FLOAT) CONST_OPERAND(f, a / b)
      vmcase(EQ_INT) COMPARE(i, ==)
      vmcase(NE_INT) COMPARE(i, !=)
      vmcase(LT_INT) COMPARE(i, <)
      vmcase(LE_INT) COMPARE(i, <=)
      vmcase(GT_INT) COMPARE(i, >)
      vmcase(GE_INT) COMPARE(i, >=)
      vmcase(EQ_FLOAT) COMPARE(f, ==)
      vmcase(NE_FLOAT) COMPARE(f, !=)
      vmcase(LT_FLOAT) COMPARE(f, <)
      vmcase(LE_FLOAT) COMPARE(f, <=)
      vmcase(GT_FLOAT) COMPARE(f, >)
      vmcase(GE_FLOAT) COMPARE(f, >=)
      vmcase(EQ_BOOL) COMPARE(b, ==)
      vmcase(NE_BOOL) COMPARE(b, !=)
      vmcase(NOT) { sp[-1] = Value::of_bool(!sp[-1].b); vmbreak; }
      // ---- conversions and builtins ----
      vmcase(INT_TO_FLOAT) { sp[-1].f = static_cast<double>(sp[-1].i); vmbreak; }
      vmcase(FLOAT_TO_INT) {
        int64_t out;
        if (!float_to_int(sp[-1].f, &out)) vmerror(runtime_error_message(RuntimeError::InvalidConversion));
        sp[-1].i = out;
        vmbreak;
      }
      vmcase(MATH) {
        sp[-1].f = call_math(static_cast<Builtin>(ARG(0)), sp[-1].f);
        ip += 4;
        vmbreak;
      }
      vmcase(ABS_INT) { if (sp[-1].i < 0) sp[-1].i = wrap_neg(sp[-1].i); vmbreak; }
      vmcase(MIN_INT) { sp[-2] = int_min(sp[-2], sp[-1]); --sp; vmbreak; }
      vmcase(MAX_INT) { sp[-2] = int_max(sp[-2], sp[-1]); --sp; vmbreak; }
      vmcase(MIN_FLOAT) { sp[-2] = float_min(sp[-2], sp[-1]); --sp; vmbreak; }
      vmcase(MAX_FLOAT) { sp[-2] = float_max(sp[-2], sp[-1]); --sp; vmbreak; }
      vmcase(PRINT) {
        const stack::PrintFormat& fmt = ch->prints[ARG(0)];
        size_t n = 0;
        for (const auto& item : fmt) n += item.type != Type::Str;
        sp -= n;
        ip += 4;
        // A tensor is shown (so evaluated) even when the output goes nowhere, as in the
        // walker: whether it fails must not depend on where the output goes. The strings
        // live in a lambda: an indirect goto (vmbreak) may not leave the scope of one.
        bool shown = [&] {
          std::string line, text;
          const Value* v = sp;
          for (size_t i = 0; i < fmt.size(); ++i) {
            Type t = fmt[i].type;
            if (t == Type::Str) {
              line += (i ? " " : "") + fmt[i].text;
            } else if (t == Type::Tensor || t == Type::Shape) {
              if (!show_value(trt, *v++, t, fmt[i].loc, &text, &tfail)) return false;
              line += (i ? " " : "") + text;
            } else {
              if (out) line += (i ? " " : "") + format_value(*v, t);
              ++v;
            }
          }
          if (out) out(line + "\n");
          return true;
        }();
        if (!shown) vmfail(tfail);
        vmbreak;
      }
      vmcase(ECHO) {
        Type t = static_cast<Type>(ARG(0));
        ip += 4;
        // ECHO of a tensor sits at the expression's source (the compiler put it there).
        bool shown = [&] {
          std::string text;
          if (!show_value(trt, *--sp, t, ch->locs[static_cast<size_t>(ip - 5 - ch->code.data())],
                          &text, &tfail))
            return false;
          if (out) out(text + "\n");
          return true;
        }();
        if (!shown) vmfail(tfail);
        vmbreak;
      }
      // ---- tensors ----
      vmcase(TENSOR) {
        const TensorSite& t = ch->tensor_sites[ARG(0)];
        ip += 4;
        Value* in = sp - t.operands;
        switch (t.step) {
          case TensorStep::Expr: {
            Value v;
            if (!tensor_expr(trt, module, *t.expr, in, &v, &tfail)) vmfail(tfail);
            sp = in;
            if (t.has_value) *sp++ = v;
            break;
          }
          case TensorStep::Dim:
            if (!check_shape_dim(*t.expr, in[0].i, &tfail)) vmfail(tfail);
            break;
          case TensorStep::Args: {
            const FnDecl& fn = *module.functions[static_cast<size_t>(t.fn)].decl;
            DimBindings bound;
            if (!check_tensor_args(trt, *t.expr, fn, in, &bound, &tfail)) vmfail(tfail);
            if (fn.declared_return == Type::Tensor) bounds_.push_back(std::move(bound));
            break;
          }
          case TensorStep::Result: {
            const FnDecl& fn = *module.functions[static_cast<size_t>(t.fn)].decl;
            DimBindings bound;
            if (!bounds_.empty()) bound = std::move(bounds_.back()), bounds_.pop_back();
            if (!check_tensor_result(trt, fn, in[0], t.expr->loc, std::move(bound), &tfail))
              vmfail(tfail);
            break;
          }
        }
        vmbreak;
      }
      vmcase(SAFEPOINT) {
        if (trt && trt->wants_collect()) collect(*trt, module, globals, fp, ch, bp);
        vmbreak;
      }
      // ---- jumps ----
      vmcase(JUMP) { ip += JARG(0) + 4; vmbreak; }
      vmcase(JUMP_IF_FALSE) JUMP_IF(!(--sp)->b)
      vmcase(JUMP_IF_TRUE) JUMP_IF((--sp)->b)
      vmcase(JUMP_IF_FALSE_OR_POP) {
        if (!sp[-1].b) ip += JARG(0);
        else --sp;
        ip += 4;
        vmbreak;
      }
      vmcase(JUMP_IF_TRUE_OR_POP) {
        if (sp[-1].b) ip += JARG(0);
        else --sp;
        ip += 4;
        vmbreak;
      }
      vmcase(LOOP) {
        vmtick();
        ip += JARG(0) + 4;
        vmbreak;
      }
      vmcase(JUMP_IF_EQ_INT) JUMP_IF_CMP(i, a == b)
      vmcase(JUMP_IF_NE_INT) JUMP_IF_CMP(i, a != b)
      vmcase(JUMP_IF_LT_INT) JUMP_IF_CMP(i, a < b)
      vmcase(JUMP_IF_LE_INT) JUMP_IF_CMP(i, a <= b)
      vmcase(JUMP_IF_GT_INT) JUMP_IF_CMP(i, a > b)
      vmcase(JUMP_IF_GE_INT) JUMP_IF_CMP(i, a >= b)
      vmcase(JUMP_IF_EQ_FLOAT) JUMP_IF_CMP(f, a == b)
      vmcase(JUMP_IF_NE_FLOAT) JUMP_IF_CMP(f, a != b)
      vmcase(JUMP_IF_LT_FLOAT) JUMP_IF_CMP(f, a < b)
      vmcase(JUMP_IF_LE_FLOAT) JUMP_IF_CMP(f, a <= b)
      vmcase(JUMP_IF_GT_FLOAT) JUMP_IF_CMP(f, a > b)
      vmcase(JUMP_IF_GE_FLOAT) JUMP_IF_CMP(f, a >= b)
      vmcase(JUMP_IF_NOT_LT_FLOAT) JUMP_IF_CMP(f, !(a < b))
      vmcase(JUMP_IF_NOT_LE_FLOAT) JUMP_IF_CMP(f, !(a <= b))
      vmcase(JUMP_IF_NOT_GT_FLOAT) JUMP_IF_CMP(f, !(a > b))
      vmcase(JUMP_IF_NOT_GE_FLOAT) JUMP_IF_CMP(f, !(a >= b))
      vmcase(JUMP_IF_EQ_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(==)
      vmcase(JUMP_IF_NE_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(!=)
      vmcase(JUMP_IF_LT_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(<)
      vmcase(JUMP_IF_LE_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(<=)
      vmcase(JUMP_IF_GT_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(>)
      vmcase(JUMP_IF_GE_LOCAL_CONST_INT) JUMP_IF_LOCAL_CONST(>=)
      // ---- for loops ----
      vmcase(FOR_PREP) {
        Value* slot = bp + ARG(0);
        int64_t lo = sp[-2].i, hi = sp[-1].i;
        slot[0].i = lo;
        slot[1].i = hi;
        if (lo < hi) --sp;  // lo stays on the stack for the body's STORE
        else sp -= 2, ip += JARG(1);
        ip += 8;
        vmbreak;
      }
      vmcase(FOR_LOOP) {
        vmtick();
        Value* slot = bp + ARG(0);
        int64_t i = slot[0].i + 1;  // < hi <= INT64_MAX: cannot overflow
        slot[0].i = i;
        if (i < slot[1].i) (sp++)->i = i, ip += JARG(1);
        ip += 8;
        vmbreak;
      }
      // ---- other superinstructions ----
      vmcase(ADD_LOCAL_CONST_INT) {
        (sp++)->i = wrap_add(bp[ARG(0)].i, k[ARG(1)].i);
        ip += 8;
        vmbreak;
      }
      vmcase(SUB_LOCAL_CONST_INT) {
        (sp++)->i = wrap_sub(bp[ARG(0)].i, k[ARG(1)].i);
        ip += 8;
        vmbreak;
      }
      vmcase(INC_LOCAL_INT) {
        Value* slot = bp + ARG(0);
        slot->i = wrap_add(slot->i, k[ARG(1)].i);
        ip += 8;
        vmbreak;
      }
      vmcase(ADD_TO_LOCAL_INT) {
        Value* slot = bp + ARG(0);
        slot->i = wrap_add(slot->i, (--sp)->i);
        ip += 4;
        vmbreak;
      }
      vmcase(ADD_TO_LOCAL_FLOAT) {
        Value* slot = bp + ARG(0);
        slot->f += (--sp)->f;
        ip += 4;
        vmbreak;
      }
      // ---- calls ----
      vmcase(PRECALL) {
        ip += 8;
        vmtick();
        if (fp == frame_max) vmerror(runtime_error_message(RuntimeError::StackOverflow));
        vmbreak;
      }
      vmcase(CALL) {
        uint32_t f = ARG(0), n = ARG(1);
        ip += 8;
        vmtick();
        if (fp == frame_max) vmerror(runtime_error_message(RuntimeError::StackOverflow));
        const Chunk* callee = fns[f];
        Value* nbp = sp - n;  // the arguments become the callee's first locals
        if (static_cast<size_t>(stack_end - nbp) < callee->frame_size()) {
          Value* fresh = enlarge(static_cast<size_t>(sp - stack_base), callee->frame_size());
          for (Frame* fr = frame_base; fr != fp; ++fr) fr->bp = fresh + (fr->bp - stack_base);
          bp = fresh + (bp - stack_base);
          nbp = fresh + (nbp - stack_base);
          stack_base = fresh;
          stack_end = fresh + capacity_;
          retired_.reset();
        }
        fp->chunk = ch;
        fp->ip = ip;
        fp->bp = bp;
        if (callee->uses_tensors && trt) fp->first_handle = trt->next_handle();
        ++fp;
        ch = callee;
        k = ch->constants.data();
        ip = ch->code.data();
        bp = nbp;
        sp = nbp + ch->num_locals();
        vmbreak;
      }
      vmcase(RETURN) {
        Value v = sp[-1];
        sp = bp;
        --fp;
        ch = fp->chunk;
        ip = fp->ip;
        bp = fp->bp;
        k = ch->constants.data();
        *sp++ = v;
        vmbreak;
      }
      vmcase(RETURN_VOID) {
        sp = bp;
        --fp;
        ch = fp->chunk;
        ip = fp->ip;
        bp = fp->bp;
        k = ch->constants.data();
        vmbreak;
      }
      vmcase(HALT) {
        // The end of a run is a safe point with nothing on the stack: what no global holds
        // now is garbage, whichever input made it.
        if (trt) collect(*trt, module, globals, fp, ch, bp);
        if constexpr (kTrace)
          tracer.step(*tch, static_cast<size_t>(tip - tch->code.data()), true,
                      bp + ch->num_locals(), sp);
        result.steps = steps;
        return result;
      }
    }
  }

  // clang-format on
on_error: {
  // Every byte of an instruction maps to its source in the line table, and ip is always
  // inside (or just past the operands of) the instruction that failed.
  size_t at = static_cast<size_t>(ip - 1 - ch->code.data());
  if constexpr (kTrace) {
    if (tch)
      tracer.fail(*tch, static_cast<size_t>(tip - tch->code.data()), err, bp + ch->num_locals(),
                  sp);
  }
  result.ok = false;
  result.error =
      Diagnostic{Severity::Error, ErrorKind::Runtime, located ? err_loc : ch->locs[at], err};
  result.steps = steps;
  return result;
}
}

}  // namespace

std::unique_ptr<Engine> make_stack_vm(bool superinstructions, stack::CompileHooks hooks) {
  if (!superinstructions) return std::make_unique<StackVM>(nullptr, std::move(hooks));
  return std::make_unique<StackVM>([](Chunk& c) { stack::fuse_superinstructions(c); },
                                   std::move(hooks));
}

std::unique_ptr<Engine> make_stack_vm_with_pass(std::function<void(stack::Chunk&)> pass) {
  return std::make_unique<StackVM>(std::move(pass), stack::CompileHooks{});
}

}  // namespace descent
