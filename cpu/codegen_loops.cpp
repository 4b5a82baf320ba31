// CPU code generation, loops: one For of the loop-nest IR becomes LLVM code by its kind.
//
// Serial and Bound loops are plain LLVM loops. Unrolled loops are emitted once per
// iteration, with the variable a constant (up to kMaxUnrolledCopies copies in all).
// Vectorized loops are emitted once on <W x float> values, and again as unrolled scalar
// code if the vector form fails. Parallel loops are outlined into a function of their own
// that the runtime calls on each thread with a range of iterations.
#include <algorithm>

#include <llvm/IR/MDBuilder.h>

#include "cpu/codegen_internal.h"

namespace descent::cpu::codegen_internal {

// Copies made by unrolling (nested unrolls multiply) before a loop is kept as a loop.
constexpr int64_t kMaxUnrolledCopies = 1024;
// The widest explicit vector; a longer vectorized loop runs in chunks of at most this.
constexpr int64_t kMaxLanes = 64;

namespace {

// Buffers `s` touches (loads and stores) and buffers it allocates, anywhere inside it.
void buffer_uses(const Stmt* s, std::set<int>* used, std::set<int>* allocated) {
  if (!s) return;
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e.kind == ExprKind::Load) used->insert(e.buffer);
    for (const auto& a : e.args)
      if (a) expr(*a);
  };
  if (s->kind == StmtKind::Store) used->insert(s->buffer);
  if (s->kind == StmtKind::Allocate) allocated->insert(s->buffer);
  for (const auto& i : s->indices)
    if (i) expr(*i);
  if (s->value) expr(*s->value);
  if (s->predicate) expr(*s->predicate);
  buffer_uses(s->init.get(), used, allocated);
  buffer_uses(s->body.get(), used, allocated);
  for (const auto& c : s->stmts) buffer_uses(c.get(), used, allocated);
}

// The work of one execution of `s`: the innermost iterations it runs (saturating).
int64_t work(const Stmt* s) {
  constexpr int64_t kBig = int64_t(1) << 40;
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::For: return std::min(kBig, std::max<int64_t>(s->extent, 0) * std::max<int64_t>(work(s->body.get()), 1));
    case StmtKind::Seq: {
      int64_t sum = 0;
      for (const auto& c : s->stmts) sum = std::min(kBig, sum + work(c.get()));
      return sum;
    }
    case StmtKind::Block: return std::min(kBig, work(s->init.get()) + work(s->body.get()));
    case StmtKind::If:
    case StmtKind::Allocate: return work(s->body.get());
    default: return 1;
  }
}

}  // namespace

// Interrupts (Ctrl-C in a session) are polled at the start of each iteration of a coarse
// loop: one of the two outermost loops of a function (the entry or a parallel worker) whose
// body runs at least kPollWork innermost iterations. A poll is a load, a compare and a
// branch, so against >= 1024 iterations of work it costs well under 1%; inner loops never
// poll, and a vectorized loop never does (an early exit would stop LLVM's own vectorizer and
// the vector attempt may be erased). A long nest still sees the flag within a fraction of a
// second: the outer two loops of a big kernel are many short steps.
constexpr int64_t kPollWork = 1024;

bool Codegen::should_poll(const Stmt& s) const {
  return fs_.interrupt && lanes_ == 1 && loop_depth_ <= 2 && work(s.body.get()) >= kPollWork;
}

// if (*interrupt) goto interrupted (which frees and returns). Monotonic: the flag carries no
// data, only "stop"; it needs to be seen eventually, not ordered.
void Codegen::poll_interrupt() {
  if (!fs_.interrupted) fs_.interrupted = llvm::BasicBlock::Create(ctx_, "interrupted", fs_.fn);
  llvm::LoadInst* flag = b_.CreateLoad(b_.getInt8Ty(), fs_.interrupt, "stop");
  flag->setAtomic(llvm::AtomicOrdering::Monotonic);
  flag->setAlignment(llvm::Align(1));
  llvm::BasicBlock* go_on = llvm::BasicBlock::Create(ctx_, "go_on", fs_.fn);
  llvm::Value* set = b_.CreateICmpNE(flag, b_.getInt8(0));
  // Expect "not set": the branch is laid out for the loop to continue.
  llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(set, fs_.interrupted, go_on, md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(go_on);
}

void Codegen::emit_for(const Stmt& s) {
  if (s.extent <= 0 || !s.body) return;
  const bool in_vector = lanes_ > 1;
  ++loop_depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{loop_depth_};
  switch (s.for_kind) {
    case ForKind::Unrolled:
      return emit_unrolled(s, s.var);
    case ForKind::Vectorized:
      // A vectorized loop inside another one is just unrolled (one vector dimension).
      if (in_vector) return emit_unrolled(s, s.var);
      return emit_vectorized(s);
    case ForKind::Parallel:
      // Nested parallelism would only oversubscribe two cores; inner ones run serially.
      if (in_vector || in_parallel_ || options_.threads <= 1 || s.extent == 1)
        return emit_serial(s);
      return emit_parallel(s);
    case ForKind::Serial:
    case ForKind::Bound:
      return emit_serial(s);
  }
}

// for var in [lo, hi): body(var). Rotated (test at the bottom) as LLVM's loop passes like.
void Codegen::emit_loop(const std::string& var, llvm::Value* lo, llvm::Value* hi, bool may_be_empty,
                        const std::function<void(llvm::Value*)>& body, bool poll) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, var + ".loop", fs_.fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, var + ".exit", fs_.fn);
  if (may_be_empty) b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), loop, exit);
  else b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(i64_, 2, var);
  i->addIncoming(lo, pre);
  if (poll) poll_interrupt();
  body(i);
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), var + ".next", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, hi), loop, exit);
  b_.SetInsertPoint(exit);
}

void Codegen::emit_serial(const Stmt& s) {
  emit_loop(s.var, b_.getInt64(0), b_.getInt64(s.extent), false, [&](llvm::Value* i) {
    auto saved = env_;
    env_[s.var] = uniform(i);
    emit(*s.body);
    env_ = std::move(saved);
  }, should_poll(s));
}

void Codegen::emit_unrolled(const Stmt& s, const std::string& var) {
  if (s.extent * unroll_copies_ > kMaxUnrolledCopies) return emit_serial(s);
  const int64_t saved_copies = unroll_copies_;
  unroll_copies_ *= s.extent;
  auto saved = env_;
  for (int64_t c = 0; c < s.extent && error_.empty(); ++c) {
    env_[var] = uniform(b_.getInt64(c));
    emit(*s.body);
  }
  env_ = std::move(saved);
  unroll_copies_ = saved_copies;
}

void Codegen::emit_vectorized(const Stmt& s) {
  // Lanes per vector: the whole loop, or the largest divisor of it up to kMaxLanes.
  int64_t lanes = s.extent;
  if (lanes > kMaxLanes) {
    lanes = 1;
    for (int64_t d = kMaxLanes; d >= 2; --d)
      if (s.extent % d == 0) { lanes = d; break; }
  }
  if (lanes <= 1) {
    note("loop '" + s.var + "': no vector width divides its extent " + std::to_string(s.extent) +
         "; emitted as a serial loop");
    return emit_serial(s);
  }
  const int64_t chunks = s.extent / lanes;

  // Emit into fresh blocks not yet reachable, so a failed attempt can be erased whole.
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx_, s.var + ".vec", fs_.fn);
  b_.SetInsertPoint(start);
  vec_failure_.clear();
  lanes_ = lanes;
  auto saved = env_;
  auto body = [&](llvm::Value* chunk_base) {
    env_[s.var] = Val{chunk_base, Val::Affine, 1};
    emit(*s.body);
  };
  if (chunks == 1) {
    body(b_.getInt64(0));
  } else {
    emit_loop(s.var + ".chunk", b_.getInt64(0), b_.getInt64(chunks), false, [&](llvm::Value* c) {
      body(b_.CreateMul(c, b_.getInt64(lanes), s.var + ".base", true, true));
    });
  }
  env_ = std::move(saved);
  lanes_ = 1;
  if (vec_failure_.empty() || !error_.empty()) {
    llvm::BasicBlock* end = b_.GetInsertBlock();
    b_.SetInsertPoint(pre);
    b_.CreateBr(start);
    b_.SetInsertPoint(end);
    return;
  }
  // Erase the attempt: every block from `start` to the end of the function is its own.
  std::vector<llvm::BasicBlock*> dead;
  for (auto it = start->getIterator(); it != fs_.fn->end(); ++it) dead.push_back(&*it);
  for (llvm::BasicBlock* bb : dead) bb->dropAllReferences();
  for (llvm::BasicBlock* bb : dead) bb->eraseFromParent();
  b_.SetInsertPoint(pre);
  note("loop '" + s.var + "': " + vec_failure_ + "; emitted as scalar code");
  vec_failure_.clear();
  llvm::BasicBlock* fallback = llvm::BasicBlock::Create(ctx_, s.var + ".scalar_fallback", fs_.fn);
  b_.CreateBr(fallback);
  b_.SetInsertPoint(fallback);
  emit_unrolled(s, s.var);
}

// The loop body becomes `void NAME_par_N(ptr ctx, i64 lo, i64 hi)`; ctx holds what the
// body needs from outside: the enclosing variables and the buffers' addresses.
//
// Which buffers are shared follows the IR (and the interpreter): a buffer is private to
// one parallel iteration only when its Allocate lies inside the loop. A Local/Shared buffer
// with no Allocate lives for the whole function, so its storage is made here, in the
// caller, and passed by pointer like a global one: the cache_write accumulator filled by
// a parallel nest must be the one the writeback nest after it reads.
void Codegen::emit_parallel(const Stmt& s) {
  std::vector<std::string> vars;
  for (const auto& [name, v] : env_) vars.push_back(name);  // all Uniform outside vectors
  std::set<int> used, allocated_inside;
  buffer_uses(s.body.get(), &used, &allocated_inside);
  for (int i : used) {
    if (i < 0 || static_cast<size_t>(i) >= f_.buffers.size() || allocated_inside.count(i))
      continue;
    buffer_base(i);  // function-level storage, zero-filled at entry, if not made yet
  }
  if (!error_.empty()) return;
  std::vector<int> bufs;
  for (size_t i = 0; i < buffer_ptr_.size(); ++i)
    if (buffer_ptr_[i]) bufs.push_back(static_cast<int>(i));
  const size_t slots = vars.size() + bufs.size() + 1;  // + the interrupt flag
  llvm::Value* ctx;
  {
    llvm::IRBuilder<> at(fs_.alloca_point);
    ctx = at.CreateAlloca(i64_, at.getInt64(static_cast<int64_t>(std::max<size_t>(slots, 1))),
                          s.var + ".ctx");
  }
  size_t k = 0;
  for (const std::string& v : vars)
    b_.CreateStore(env_[v].v, b_.CreateConstInBoundsGEP1_64(i64_, ctx, k++));
  for (int bi : bufs)
    b_.CreateStore(buffer_ptr_[static_cast<size_t>(bi)], b_.CreateConstInBoundsGEP1_64(i64_, ctx, k++));
  b_.CreateStore(fs_.interrupt, b_.CreateConstInBoundsGEP1_64(i64_, ctx, k++));

  // The outlined function, generated now with its own state.
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, i64_, i64_}, false);
  std::string name = fs_.fn->getName().str() + "_par_" + std::to_string(parallel_count_++);
  llvm::Function* body_fn = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, m_);
  set_attributes(body_fn);
  FnState outer = std::move(fs_);
  const int outer_depth = loop_depth_;
  auto outer_env = env_;
  auto outer_ptrs = buffer_ptr_;
  auto outer_allocated = allocated_;
  llvm::BasicBlock* outer_block = b_.GetInsertBlock();

  begin_function(body_fn);
  llvm::Value* in_ctx = body_fn->getArg(0);
  env_.clear();
  std::fill(buffer_ptr_.begin(), buffer_ptr_.end(), nullptr);
  k = 0;
  for (const std::string& v : vars)
    env_[v] = uniform(b_.CreateLoad(i64_, b_.CreateConstInBoundsGEP1_64(i64_, in_ctx, k++), v));
  for (int bi : bufs)
    buffer_ptr_[static_cast<size_t>(bi)] =
        b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(i64_, in_ctx, k++),
                      f_.buffers[static_cast<size_t>(bi)].name);
  fs_.interrupt = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(i64_, in_ctx, k++), "interrupt");
  in_parallel_ = true;
  // Each worker polls too: its range loop is the outermost loop of its function.
  loop_depth_ = 1;
  emit_loop(s.var, body_fn->getArg(1), body_fn->getArg(2), true, [&](llvm::Value* i) {
    env_[s.var] = uniform(i);
    emit(*s.body);
  }, should_poll(s));
  loop_depth_ = outer_depth;
  in_parallel_ = false;
  end_function();

  fs_ = std::move(outer);
  env_ = std::move(outer_env);
  buffer_ptr_ = std::move(outer_ptrs);
  allocated_ = std::move(outer_allocated);
  b_.SetInsertPoint(outer_block);
  auto runtime = m_.getOrInsertFunction("descent_parallel_for", b_.getVoidTy(), ptr_, ptr_, i64_, i64_);
  b_.CreateCall(runtime, {body_fn, ctx, b_.getInt64(s.extent), b_.getInt64(options_.threads)});
}

}  // namespace descent::cpu::codegen_internal
