#include "llvm_backend/runtime.h"
#include "llvm_backend/runtime_state.h"

#include <csetjmp>
#include <cstdint>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "lang/runtime_errors.h"

namespace descent::llvmbe {

std::string rt_error_message(RtError kind, const char* name) {
  switch (kind) {
    case RtError::DivisionByZero: return runtime_error_message(RuntimeError::DivisionByZero);
    case RtError::InvalidConversion: return runtime_error_message(RuntimeError::InvalidConversion);
    case RtError::StackOverflow: return runtime_error_message(RuntimeError::StackOverflow);
    case RtError::Interrupted: return runtime_error_message(RuntimeError::Interrupted);
    case RtError::UndefinedVariable:
      return runtime_error_text(RuntimeError::UndefinedVariable, name ? name : "?");
    case RtError::Tensor: return name ? name : "tensor error";
  }
  return "runtime error";
}

// ---- [SECTION] the JIT's runtime: host functions ----

thread_local RunState* current = nullptr;

namespace {

// Kept out of line so that nothing of Runtime::run's frame lives between sigsetjmp and the
// siglongjmp that may come back to it.
[[gnu::noinline]] int call_entry(RunState* s, void (*entry)()) {
  if (sigsetjmp(s->jump, 0) != 0) return 1;
  entry();
  return 0;
}

}  // namespace

extern "C" {

void descent_rt_print_int(int64_t v) { current->line += std::to_string(v); }
void descent_rt_print_float(double v) { current->line += format_float(v); }
void descent_rt_print_bool(int32_t v) { current->line += v ? "true" : "false"; }
void descent_rt_print_str(const char* s) { current->line += s; }
void descent_rt_print_space() { current->line += ' '; }
void descent_rt_print_end() {
  RunState& s = *current;
  s.line += '\n';
  if (s.opts->out) s.opts->out(s.line);
  s.line.clear();
}

[[noreturn]] void descent_rt_error(int32_t kind, int32_t input, int32_t line, int32_t col,
                                   const char* name) {
  RunState& s = *current;
  s.kind = static_cast<RtError>(kind);
  s.err_input = input;
  s.err_line = line;
  s.err_col = col;
  s.err_name = name;
  siglongjmp(s.jump, 1);
}

// A tick while the runtime watches: count it, stop if interrupted or over the step limit.
void descent_rt_tick(int32_t input, int32_t line, int32_t col) {
  RunState& s = *current;
  ++s.steps;
  if ((s.opts->interrupt && s.opts->interrupt->load(std::memory_order_relaxed)) ||
      (s.opts->step_limit && s.steps > s.opts->step_limit))
    descent_rt_error(static_cast<int32_t>(RtError::Interrupted), input, line, col, nullptr);
}

// A call made at `depth` (the caller's frame number) when depth >= descent_rt_call_limit:
// the tick first, then the depth limit, as the walker checks them.
void descent_rt_call_check(int32_t depth, int32_t input, int32_t line, int32_t col) {
  if (current->opts->interrupt || current->opts->step_limit) descent_rt_tick(input, line, col);
  if (depth >= kMaxCallDepth)
    descent_rt_error(static_cast<int32_t>(RtError::StackOverflow), input, line, col, nullptr);
}

}  // extern "C"

std::vector<std::pair<std::string, void*>> Runtime::symbols() {
  std::vector<std::pair<std::string, void*>> out = tensor_symbols();
  std::vector<std::pair<std::string, void*>> base = {
      {rt::kPrintInt, reinterpret_cast<void*>(&descent_rt_print_int)},
      {rt::kPrintFloat, reinterpret_cast<void*>(&descent_rt_print_float)},
      {rt::kPrintBool, reinterpret_cast<void*>(&descent_rt_print_bool)},
      {rt::kPrintStr, reinterpret_cast<void*>(&descent_rt_print_str)},
      {rt::kPrintSpace, reinterpret_cast<void*>(&descent_rt_print_space)},
      {rt::kPrintEnd, reinterpret_cast<void*>(&descent_rt_print_end)},
      {rt::kTick, reinterpret_cast<void*>(&descent_rt_tick)},
      {rt::kCallCheck, reinterpret_cast<void*>(&descent_rt_call_check)},
      {rt::kError, reinterpret_cast<void*>(&descent_rt_error)},
      {rt::kPoll, static_cast<void*>(&poll_)},
      {rt::kCallLimit, static_cast<void*>(&call_limit_)},
      {rt::kStackLimit, static_cast<void*>(&stack_limit_)},
  };
  out.insert(out.end(), base.begin(), base.end());
  return out;
}

void Runtime::request_stop() {
  poll_.store(1, std::memory_order_relaxed);
  call_limit_.store(0, std::memory_order_relaxed);
}

RunResult Runtime::run(void (*entry)(), const RunOptions& options,
                       const std::vector<const SourceFile*>& inputs,
                       const TensorContext* tensors) {
  static_assert(sizeof(std::atomic<uint8_t>) == 1 && sizeof(std::atomic<int32_t>) == 4);
  RunState s;
  s.opts = &options;
  s.tensors = tensors;
  // A step limit is counted tick by tick; a flag set before the run stops it at the first
  // back-edge or call, as on the walker. Otherwise nobody watches.
  bool watch = options.step_limit ||
               (options.interrupt && options.interrupt->load(std::memory_order_relaxed));
  poll_.store(watch ? 1 : 0, std::memory_order_relaxed);
  call_limit_.store(watch ? 0 : kMaxCallDepth, std::memory_order_relaxed);
  // The JIT runs this on a thread with a 512 MB stack: leave 8 MB for one last big frame.
  char here;
  auto top = reinterpret_cast<uintptr_t>(&here);
  stack_limit_ = reinterpret_cast<const char*>(top > (uintptr_t{504} << 20) ? top - (uintptr_t{504} << 20) : 0);
  RunState* saved = current;
  current = &s;
  int failed = call_entry(&s, entry);
  if (!failed) collect_at_end(s);
  current = saved;
  RunResult r;
  r.steps = s.steps;
  if (failed) {
    r.ok = false;
    auto input = static_cast<uint32_t>(s.err_input);
    const SourceFile* file = nullptr;
    for (const SourceFile* f : inputs)
      if (f && f->serial() == input) file = f;
    SourceLoc loc{0, static_cast<uint32_t>(s.err_line), static_cast<uint32_t>(s.err_col), file};
    r.error = Diagnostic{Severity::Error, ErrorKind::Runtime, loc,
                         rt_error_message(s.kind, s.kind == RtError::Tensor ? s.message.c_str()
                                                                            : s.err_name)};
  }
  return r;
}

// ---- [SECTION] the standalone runtime: the same functions in IR over libc ----

namespace {

struct Libc {
  llvm::Module& m;
  llvm::LLVMContext& c;
  llvm::Type* i8;
  llvm::Type* i32;
  llvm::Type* i64;
  llvm::Type* f64;
  llvm::PointerType* ptr;

  explicit Libc(llvm::Module& mod)
      : m(mod), c(mod.getContext()), i8(llvm::Type::getInt8Ty(c)), i32(llvm::Type::getInt32Ty(c)),
        i64(llvm::Type::getInt64Ty(c)), f64(llvm::Type::getDoubleTy(c)),
        ptr(llvm::PointerType::get(c, 0)) {}

  llvm::FunctionCallee fn(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args,
                          bool vararg = false) {
    return m.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, vararg));
  }
  llvm::FunctionCallee printf() { return fn("printf", i32, {ptr}, true); }

  // The body of one of the runtime's functions (its declaration may already be there).
  llvm::Function* define(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args) {
    auto* type = llvm::FunctionType::get(ret, args, false);
    llvm::Function* f = m.getFunction(name);
    if (!f) f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, m);
    f->setLinkage(llvm::Function::InternalLinkage);
    llvm::BasicBlock::Create(c, "entry", f);
    return f;
  }
};

void define_prints(Libc& L) {
  llvm::IRBuilder<> b(L.c);
  auto simple = [&](const char* name, std::vector<llvm::Type*> args, auto body) {
    llvm::Function* f = L.define(name, llvm::Type::getVoidTy(L.c), args);
    b.SetInsertPoint(&f->getEntryBlock());
    body(f);
    b.CreateRetVoid();
  };
  simple(rt::kPrintInt, {L.i64}, [&](llvm::Function* f) {
    b.CreateCall(L.printf(), {b.CreateGlobalStringPtr("%lld", "fmt.int"), f->getArg(0)});
  });
  simple(rt::kPrintStr, {L.ptr}, [&](llvm::Function* f) {
    b.CreateCall(L.printf(), {b.CreateGlobalStringPtr("%s", "fmt.str"), f->getArg(0)});
  });
  simple(rt::kPrintBool, {L.i32}, [&](llvm::Function* f) {
    llvm::Value* t = b.CreateGlobalStringPtr("true", "str.true");
    llvm::Value* fl = b.CreateGlobalStringPtr("false", "str.false");
    llvm::Value* s = b.CreateSelect(b.CreateICmpNE(f->getArg(0), b.getInt32(0)), t, fl);
    b.CreateCall(L.printf(), {b.CreateGlobalStringPtr("%s", "fmt.str"), s});
  });
  auto putchar = L.fn("putchar", L.i32, {L.i32});
  simple(rt::kPrintSpace, {}, [&](llvm::Function*) { b.CreateCall(putchar, {b.getInt32(' ')}); });
  simple(rt::kPrintEnd, {}, [&](llvm::Function*) { b.CreateCall(putchar, {b.getInt32('\n')}); });
}

// Python's repr() of a double, as lang/value.h's format_float: the shortest "%.*e" that reads
// back to the same double gives the digits and the exponent; exponents in [-4, 16) are then
// laid out in plain notation with "%.*f" (which rounds to the same digits), others kept.
void define_print_float(Libc& L) {
  llvm::IRBuilder<> b(L.c);
  llvm::Function* f = L.define(rt::kPrintFloat, llvm::Type::getVoidTy(L.c), {L.f64});
  llvm::Value* v = f->getArg(0);
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(L.c, name, f); };
  auto* entry = &f->getEntryBlock();
  auto *nan = block("nan"), *number = block("number"), *inf = block("inf"), *finite = block("finite"),
       *loop = block("digits"), *found = block("found"), *sci = block("sci"), *plain = block("plain"),
       *frac = block("frac"), *whole = block("whole");
  auto snprintf = L.fn("snprintf", L.i32, {L.ptr, L.i64, L.ptr}, true);
  auto strtod = L.fn("strtod", L.f64, {L.ptr, L.ptr});
  auto strchr = L.fn("strchr", L.ptr, {L.ptr, L.i32});
  auto atoi = L.fn("atoi", L.i32, {L.ptr});
  auto printf = L.printf();

  b.SetInsertPoint(entry);
  llvm::Value* buf = b.CreateAlloca(llvm::ArrayType::get(L.i8, 40), nullptr, "buf");
  b.CreateCondBr(b.CreateFCmpUNO(v, v), nan, number);
  b.SetInsertPoint(nan);
  b.CreateCall(printf, {b.CreateGlobalStringPtr("nan", "str.nan")});
  b.CreateRetVoid();
  b.SetInsertPoint(number);
  llvm::Value* mag = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
  b.CreateCondBr(b.CreateFCmpOEQ(mag, llvm::ConstantFP::getInfinity(L.f64)), inf, finite);
  b.SetInsertPoint(inf);
  llvm::Value* neg = b.CreateFCmpOLT(v, llvm::ConstantFP::get(L.f64, 0.0));
  b.CreateCall(printf, {b.CreateSelect(neg, b.CreateGlobalStringPtr("-inf", "str.neginf"),
                                       b.CreateGlobalStringPtr("inf", "str.inf"))});
  b.CreateRetVoid();
  b.SetInsertPoint(finite);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* prec = b.CreatePHI(L.i32, 2, "prec");
  prec->addIncoming(b.getInt32(0), finite);
  b.CreateCall(snprintf, {buf, b.getInt64(40), b.CreateGlobalStringPtr("%.*e", "fmt.e"), prec, v});
  llvm::Value* back = b.CreateCall(strtod, {buf, llvm::ConstantPointerNull::get(L.ptr)});
  llvm::Value* done = b.CreateOr(b.CreateFCmpOEQ(back, v), b.CreateICmpSGE(prec, b.getInt32(16)));
  prec->addIncoming(b.CreateAdd(prec, b.getInt32(1)), loop);
  b.CreateCondBr(done, found, loop);
  b.SetInsertPoint(found);
  llvm::Value* e = b.CreateCall(strchr, {buf, b.getInt32('e')});
  llvm::Value* exp = b.CreateCall(atoi, {b.CreateGEP(L.i8, e, b.getInt64(1))}, "exp");
  llvm::Value* out_of_plain = b.CreateOr(b.CreateICmpSLT(exp, b.getInt32(-4)),
                                         b.CreateICmpSGE(exp, b.getInt32(16)));
  b.CreateCondBr(out_of_plain, sci, plain);
  b.SetInsertPoint(sci);
  b.CreateCall(printf, {b.CreateGlobalStringPtr("%s", "fmt.str"), buf});
  b.CreateRetVoid();
  b.SetInsertPoint(plain);
  llvm::Value* decimals = b.CreateSub(prec, exp, "decimals");
  b.CreateCondBr(b.CreateICmpSGT(decimals, b.getInt32(0)), frac, whole);
  b.SetInsertPoint(frac);
  b.CreateCall(printf, {b.CreateGlobalStringPtr("%.*f", "fmt.f"), decimals, v});
  b.CreateRetVoid();
  b.SetInsertPoint(whole);
  b.CreateCall(printf, {b.CreateGlobalStringPtr("%.0f.0", "fmt.whole"), v});
  b.CreateRetVoid();
}

// descent_rt_error: find the site in a table of {kind, input, line, col, text}, write its text to
// stderr, exit 1.
void define_error(Libc& L, const std::vector<ErrorSite>& sites) {
  llvm::IRBuilder<> b(L.c);
  auto* site_type = llvm::StructType::get(L.c, {L.i32, L.i32, L.i32, L.i32, L.ptr});
  std::vector<llvm::Constant*> rows;
  for (const auto& s : sites) {
    llvm::Constant* text = b.CreateGlobalStringPtr(s.text, "diag", 0, &L.m);
    rows.push_back(llvm::ConstantStruct::get(
        site_type, {b.getInt32(static_cast<uint32_t>(s.kind)), b.getInt32(s.input),
                    b.getInt32(s.line), b.getInt32(s.col), text}));
  }
  auto* table_type = llvm::ArrayType::get(site_type, rows.size());
  auto* table = new llvm::GlobalVariable(L.m, table_type, true, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantArray::get(table_type, rows),
                                         "descent.error.sites");

  llvm::Function* f =
      L.define(rt::kError, llvm::Type::getVoidTy(L.c), {L.i32, L.i32, L.i32, L.i32, L.ptr});
  f->addFnAttr(llvm::Attribute::NoReturn);
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(L.c, name, f); };
  auto *entry = &f->getEntryBlock(), *loop = block("search"), *check = block("check"),
       *next = block("next"), *report = block("report"), *unknown = block("unknown");
  auto write = L.fn("write", L.i64, {L.i32, L.ptr, L.i64});
  auto strlen = L.fn("strlen", L.i64, {L.ptr});
  auto fflush = L.fn("fflush", L.i32, {L.ptr});
  auto exit = L.fn("exit", llvm::Type::getVoidTy(L.c), {L.i32});

  b.SetInsertPoint(entry);
  b.CreateCall(fflush, {llvm::ConstantPointerNull::get(L.ptr)});  // program output first
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(L.i64, 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  b.CreateCondBr(b.CreateICmpULT(i, b.getInt64(rows.size())), check, unknown);
  b.SetInsertPoint(check);
  auto field = [&](unsigned k) {
    return b.CreateLoad(k == 4 ? static_cast<llvm::Type*>(L.ptr) : L.i32,
                        b.CreateGEP(table_type, table, {b.getInt64(0), i, b.getInt32(k)}));
  };
  llvm::Value* match = b.CreateICmpEQ(field(0), f->getArg(0));
  for (unsigned k = 1; k < 4; ++k) match = b.CreateAnd(match, b.CreateICmpEQ(field(k), f->getArg(k)));
  b.CreateCondBr(match, report, next);
  b.SetInsertPoint(next);
  i->addIncoming(b.CreateAdd(i, b.getInt64(1)), next);
  b.CreateBr(loop);
  b.SetInsertPoint(report);
  llvm::Value* text = field(4);
  b.CreateCall(write, {b.getInt32(2), text, b.CreateCall(strlen, {text})});
  b.CreateCall(exit, {b.getInt32(1)});
  b.CreateUnreachable();
  b.SetInsertPoint(unknown);
  llvm::Value* generic = b.CreateGlobalStringPtr("error: runtime error\n", "str.generic");
  b.CreateCall(write, {b.getInt32(2), generic, b.CreateCall(strlen, {generic})});
  b.CreateCall(exit, {b.getInt32(1)});
  b.CreateUnreachable();
}

}  // namespace

void define_standalone_runtime(llvm::Module& m, const std::vector<ErrorSite>& sites,
                               const std::string& entry) {
  Libc L(m);
  define_prints(L);
  define_print_float(L);
  define_error(L, sites);
  // Nobody watches outside the JIT: the watch variables are constants (the optimiser then
  // drops every back-edge poll), tick does nothing, call_check only checks the depth.
  auto constant = [&](const char* name, llvm::Constant* value) {
    auto* g = llvm::cast<llvm::GlobalVariable>(m.getOrInsertGlobal(name, value->getType()));
    g->setLinkage(llvm::GlobalValue::InternalLinkage);
    g->setInitializer(value);
    g->setConstant(true);
  };
  constant(rt::kPoll, llvm::ConstantInt::get(L.i8, 0));
  constant(rt::kCallLimit, llvm::ConstantInt::get(L.i32, kMaxCallDepth));
  constant(rt::kStackLimit, llvm::ConstantPointerNull::get(L.ptr));
  llvm::IRBuilder<> b(L.c);
  llvm::Function* tick = L.define(rt::kTick, llvm::Type::getVoidTy(L.c), {L.i32, L.i32, L.i32});
  b.SetInsertPoint(&tick->getEntryBlock());
  b.CreateRetVoid();
  llvm::Function* check =
      L.define(rt::kCallCheck, llvm::Type::getVoidTy(L.c), {L.i32, L.i32, L.i32, L.i32});
  llvm::BasicBlock* overflow = llvm::BasicBlock::Create(L.c, "overflow", check);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(L.c, "ok", check);
  b.SetInsertPoint(&check->getEntryBlock());
  b.CreateCondBr(b.CreateICmpSGE(check->getArg(0), b.getInt32(kMaxCallDepth)), overflow, ok);
  b.SetInsertPoint(overflow);
  b.CreateCall(m.getFunction(rt::kError),
               {b.getInt32(static_cast<uint32_t>(RtError::StackOverflow)), check->getArg(1),
                check->getArg(2), check->getArg(3), llvm::ConstantPointerNull::get(L.ptr)});
  b.CreateUnreachable();
  b.SetInsertPoint(ok);
  b.CreateRetVoid();

  auto* main_type = llvm::FunctionType::get(L.i32, {}, false);
  llvm::Function* main = llvm::Function::Create(main_type, llvm::Function::ExternalLinkage, "main", m);
  b.SetInsertPoint(llvm::BasicBlock::Create(L.c, "entry", main));
  b.CreateCall(m.getOrInsertFunction(entry, llvm::FunctionType::get(b.getVoidTy(), {}, false)));
  b.CreateRet(b.getInt32(0));
}

}  // namespace descent::llvmbe
