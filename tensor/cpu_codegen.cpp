// [SECTION] index: values (uniform, affine, vector) | functions and buffers | statements |
// loops (serial, unrolled, vectorized, parallel) | expressions | loads and stores | entry.
//
// Loop-nest IR -> LLVM IR. The translation is direct (one LLVM loop per For, one branch per
// predicate); the only cleverness is in Vectorized loops, which are emitted ONCE on
// <W x float> values instead of W times:
//
//   for j_1 in T.vectorized(16):  Y[i, j_0*16 + j_1] += A[i, k] * B[k, j_0*16 + j_1]
//   ->  %b = load <16 x float> at B + k*N + j_0*16     (index = base + 1*lane: one vector load)
//       %a = load float at A + i*K + k; splat          (index does not depend on the lane)
//       %y = fadd contract (load <16 x float> at Y...), fmul contract %a, %b
//
// To know which load is which, every integer value carries its shape across the lanes:
// Uniform (the same in every lane), Affine (lane l holds base + stride*l, base a scalar) or
// Vector (anything else, a <W x i64>). Indices built from loop variables with + and * by
// constants stay Affine, so the common accesses become plain vector loads and stores.
// Anything the vector form cannot express (a lane-varying predicate or init condition, a
// store every lane makes to one address) abandons the attempt: its blocks are erased and
// the loop is emitted again as scalar code, with a note in the module's !descent.notes.
#include "tensor/cpu_codegen.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

namespace descent::tensor {

namespace {

using tir::Expr;
using tir::ExprKind;
using tir::ForKind;
using tir::Op;
using tir::ScalarType;
using tir::Stmt;
using tir::StmtKind;

// Copies made by unrolling (nested unrolls multiply) before a loop is kept as a loop.
constexpr int64_t kMaxUnrolledCopies = 1024;
// The widest explicit vector; a longer vectorized loop runs in chunks of at most this.
constexpr int64_t kMaxLanes = 64;
// Local buffers larger than this live on the heap, not in the stack frame.
constexpr int64_t kMaxStackBytes = 256 * 1024;
// ... and a Local buffer is per thread: one this big is a schedule mistake, not a plan.
constexpr int64_t kMaxLocalBytes = int64_t(1) << 30;

// ---------------------------------------------------------------------------------------
// [SECTION] values
// ---------------------------------------------------------------------------------------

struct Val {
  enum Shape { Uniform, Affine, Vector };
  llvm::Value* v = nullptr;  // Uniform/Affine: a scalar (Affine: lane 0's value); Vector: <W x T>
  Shape shape = Uniform;
  int64_t stride = 0;        // Affine: lane l holds v + stride * l
};

Val uniform(llvm::Value* v) { return Val{v, Val::Uniform, 0}; }

// What a function being generated owns: where allocas go, what to free on the way out.
struct FnState {
  llvm::Function* fn = nullptr;
  llvm::Instruction* alloca_point = nullptr;  // allocas go before this (entry block)
  std::vector<llvm::Value*> heap;             // descent_alloc'd buffers to free at return
  std::map<int, llvm::Value*> storage;        // Local buffers' storage in this function
};

class Codegen {
 public:
  Codegen(const tir::PrimFunc& f, const CpuCodegenOptions& options, llvm::LLVMContext& ctx,
          llvm::Module& m)
      : f_(f), options_(options), ctx_(ctx), m_(m), b_(ctx) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);  // a*b+c may become one FMA; nothing is reassociated
    b_.setFastMathFlags(fmf);
    f32_ = b_.getFloatTy();
    i64_ = b_.getInt64Ty();
    ptr_ = b_.getPtrTy();
  }

  bool generate(std::string* entry, std::vector<int>* temps, std::string* error) {
    const std::string name = f_.name.empty() ? "kernel" : f_.name;
    buffer_ptr_.assign(f_.buffers.size(), nullptr);
    make_alias_scopes();

    // Argument order: params, output, Global temps.
    std::vector<int> order(f_.params.begin(), f_.params.end());
    order.push_back(f_.output);
    for (size_t i = 0; i < f_.buffers.size(); ++i) {
      const tir::Buffer& buf = f_.buffers[i];
      int idx = static_cast<int>(i);
      if (buf.scope == tir::Scope::Global && idx != f_.output &&
          std::find(f_.params.begin(), f_.params.end(), idx) == f_.params.end()) {
        temps->push_back(idx);
        order.push_back(idx);
      }
    }

    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_}, false);
    llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m_);
    fn->getArg(0)->setName("args");
    set_attributes(fn);
    begin_function(fn);
    for (size_t a = 0; a < order.size(); ++a) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr_, fn->getArg(0), a);
      buffer_ptr_[static_cast<size_t>(order[a])] =
          b_.CreateLoad(ptr_, slot, f_.buffers[static_cast<size_t>(order[a])].name);
    }
    if (f_.body) emit(*f_.body);
    end_function();
    *entry = name;
    if (!error_.empty()) {
      *error = error_;
      return false;
    }
    if (!notes_.empty()) {
      llvm::NamedMDNode* md = m_.getOrInsertNamedMetadata("descent.notes");
      for (const std::string& n : notes_)
        md->addOperand(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, n)));
    }
    return true;
  }

 private:
  void fail(const std::string& msg) {
    if (error_.empty()) error_ = msg;
  }

  // A vector attempt cannot go on; the enclosing vectorized loop will emit scalar code.
  void give_up_vector(const std::string& why) {
    if (vec_failure_.empty()) vec_failure_ = why;
  }

  // ---------------------------------------------------------------------------------------
  // [SECTION] functions and buffers
  // ---------------------------------------------------------------------------------------

  void set_attributes(llvm::Function* fn) {
    const CpuTarget& t = options_.target;
    if (!t.cpu.empty()) fn->addFnAttr("target-cpu", t.cpu);
    if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
    const bool wide = t.avx512 && options_.prefer_wide_vectors;
    fn->addFnAttr("prefer-vector-width", wide ? "512" : "256");
    // Explicit <16 x float> must stay one zmm register, not be split into two ymm halves.
    if (t.avx512) fn->addFnAttr("min-legal-vector-width", "512");
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  }

  void begin_function(llvm::Function* fn) {
    fs_ = FnState{};
    fs_.fn = fn;
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
    b_.SetInsertPoint(entry);
    // A no-op marker: allocas and their zero-fill go before it, so that every alloca sits
    // in the entry block (what SROA and mem2reg promote to registers).
    fs_.alloca_point = llvm::BinaryOperator::Create(llvm::Instruction::Add, b_.getInt64(0),
                                                    b_.getInt64(0), "allocas.end", entry);
  }

  void end_function() {
    for (llvm::Value* p : fs_.heap) b_.CreateCall(runtime_free(), {p});
    b_.CreateRetVoid();
    fs_.alloca_point->eraseFromParent();
  }

  llvm::FunctionCallee runtime_free() {
    return m_.getOrInsertFunction("descent_free", b_.getVoidTy(), ptr_);
  }

  int64_t elements(int buffer) const {
    int64_t n = 1;
    for (int64_t d : f_.buffers[static_cast<size_t>(buffer)].shape) n *= d;
    return n;
  }

  // Storage for a Local/Shared buffer in the current function, created zero-filled in the
  // entry block the first time it is asked for (the interpreter's "allocated at entry").
  llvm::Value* local_storage(int buffer, bool zero_at_entry) {
    auto it = fs_.storage.find(buffer);
    if (it != fs_.storage.end()) return it->second;
    llvm::IRBuilder<> at(fs_.alloca_point);
    const tir::Buffer& buf = f_.buffers[static_cast<size_t>(buffer)];
    const int64_t bytes = elements(buffer) * 4;
    if (bytes > kMaxLocalBytes) {
      fail("local buffer '" + buf.name + "' needs " + std::to_string(bytes) +
           " bytes per thread; the CPU backend allows at most " + std::to_string(kMaxLocalBytes));
      return llvm::ConstantPointerNull::get(ptr_);
    }
    llvm::Value* p;
    if (bytes > kMaxStackBytes) {
      auto alloc = m_.getOrInsertFunction("descent_alloc", ptr_, i64_);
      p = at.CreateCall(alloc, {at.getInt64(bytes)}, buf.name);  // zero-filled by the runtime
      fs_.heap.push_back(p);
    } else {
      auto* a = at.CreateAlloca(llvm::ArrayType::get(f32_, static_cast<uint64_t>(elements(buffer))),
                                nullptr, buf.name);
      a->setAlignment(llvm::Align(64));
      p = a;
      if (zero_at_entry) at.CreateMemSet(p, at.getInt8(0), static_cast<uint64_t>(bytes), llvm::Align(64));
    }
    fs_.storage[buffer] = p;
    return p;
  }

  llvm::Value* buffer_base(int buffer) {
    if (buffer < 0 || static_cast<size_t>(buffer) >= f_.buffers.size()) {
      fail("access to buffer #" + std::to_string(buffer) + ", which does not exist");
      return nullptr;
    }
    llvm::Value*& p = buffer_ptr_[static_cast<size_t>(buffer)];
    if (!p) p = local_storage(buffer, /*zero_at_entry=*/true);
    return p;
  }

  // Each buffer is its own alias scope: a store to Y never changes what A holds, which lets
  // LLVM keep loads in registers across stores (TIR buffers never overlap).
  void make_alias_scopes() {
    llvm::MDBuilder mdb(ctx_);
    llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain("descent.buffers");
    std::vector<llvm::Metadata*> scopes;
    for (const tir::Buffer& buf : f_.buffers)
      scopes.push_back(mdb.createAnonymousAliasScope(domain, buf.name));
    for (size_t i = 0; i < scopes.size(); ++i) {
      std::vector<llvm::Metadata*> others;
      for (size_t j = 0; j < scopes.size(); ++j)
        if (j != i) others.push_back(scopes[j]);
      scope_md_.push_back(llvm::MDNode::get(ctx_, {scopes[i]}));
      noalias_md_.push_back(llvm::MDNode::get(ctx_, others));
    }
  }

  void tag(llvm::Instruction* inst, int buffer) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_md_[static_cast<size_t>(buffer)]);
    inst->setMetadata(llvm::LLVMContext::MD_noalias, noalias_md_[static_cast<size_t>(buffer)]);
  }

  // ---------------------------------------------------------------------------------------
  // [SECTION] statements
  // ---------------------------------------------------------------------------------------

  void emit(const Stmt& s) {
    if (!error_.empty()) return;
    switch (s.kind) {
      case StmtKind::For: return emit_for(s);
      case StmtKind::Block: return emit_block(s);
      case StmtKind::Store: return emit_store(s.buffer, s.indices, *s.value, "");
      case StmtKind::Seq:
        for (const auto& st : s.stmts)
          if (st) emit(*st);
        return;
      case StmtKind::If: {
        if (!s.predicate) fail("an if statement without a condition");
        if (!s.predicate || !s.body) return;
        emit_guarded(eval(*s.predicate), "if", [&] { emit(*s.body); });
        return;
      }
      case StmtKind::Allocate: {
        if (s.buffer < 0 || static_cast<size_t>(s.buffer) >= f_.buffers.size()) {
          fail("allocate of buffer #" + std::to_string(s.buffer) + ", which does not exist");
          return;
        }
        // One slot per function, reused by every execution of the Allocate; each execution
        // starts from zeros like the interpreter's (SROA deletes the memset when the
        // buffer is overwritten before it is read, as accumulators are).
        llvm::Value* p = local_storage(s.buffer, /*zero_at_entry=*/false);
        b_.CreateMemSet(p, b_.getInt8(0), static_cast<uint64_t>(elements(s.buffer) * 4),
                        llvm::Align(64));
        llvm::Value* saved = buffer_ptr_[static_cast<size_t>(s.buffer)];
        bool was_bound = allocated_.count(s.buffer) != 0;
        buffer_ptr_[static_cast<size_t>(s.buffer)] = p;
        allocated_.insert(s.buffer);
        if (s.body) emit(*s.body);
        buffer_ptr_[static_cast<size_t>(s.buffer)] = saved;
        if (!was_bound) allocated_.erase(s.buffer);
        return;
      }
      case StmtKind::Barrier: return;  // one thread per work-group on the CPU: nothing to wait for
    }
  }

  // if (cond) body, with cond uniform; a lane-varying condition ends a vector attempt.
  void emit_guarded(const Val& cond, const std::string& what, const std::function<void()>& body) {
    if (cond.shape != Val::Uniform) {
      give_up_vector("the " + what + " condition differs between lanes");
      return;
    }
    llvm::Value* c = to_bool(cond.v);
    llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, what + ".then", fs_.fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, what + ".end", fs_.fn);
    b_.CreateCondBr(c, then, done);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  void emit_block(const Stmt& s) {
    auto saved = env_;
    std::vector<Val> reduce_bindings;
    for (const tir::IterVar& iv : s.iters) {
      if (!iv.binding) {
        fail("block '" + s.name + "': iteration variable '" + iv.name + "' has no binding");
        return;
      }
      Val v = eval(*iv.binding);
      env_[iv.name] = v;
      if (iv.kind == tir::IterKind::Reduce) reduce_bindings.push_back(v);
    }
    auto body = [&] {
      if (s.init) {
        if (reduce_bindings.empty()) {
          emit(*s.init);
        } else {
          // The init runs where every reduce binding is 0 (the first step of the reduction).
          llvm::Value* first = b_.getTrue();
          bool varying = false;
          for (const Val& r : reduce_bindings) {
            if (r.shape != Val::Uniform) varying = true;
            else first = b_.CreateAnd(first, b_.CreateICmpEQ(r.v, b_.getInt64(0)));
          }
          if (varying) give_up_vector("block '" + s.name + "': its init condition differs between lanes");
          else emit_guarded(uniform(first), s.name + ".init", [&] { emit(*s.init); });
        }
      }
      if (s.body) emit(*s.body);
    };
    if (s.predicate) emit_guarded(eval(*s.predicate), s.name + ".where", body);
    else body();
    env_ = std::move(saved);
  }

  // ---------------------------------------------------------------------------------------
  // [SECTION] loops
  // ---------------------------------------------------------------------------------------

  void emit_for(const Stmt& s) {
    if (s.extent <= 0 || !s.body) return;
    const bool in_vector = lanes_ > 1;
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
  void emit_loop(const std::string& var, llvm::Value* lo, llvm::Value* hi, bool may_be_empty,
                 const std::function<void(llvm::Value*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, var + ".loop", fs_.fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, var + ".exit", fs_.fn);
    if (may_be_empty) b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), loop, exit);
    else b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, var);
    i->addIncoming(lo, pre);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), var + ".next", true, true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, hi), loop, exit);
    b_.SetInsertPoint(exit);
  }

  void emit_serial(const Stmt& s) {
    emit_loop(s.var, b_.getInt64(0), b_.getInt64(s.extent), false, [&](llvm::Value* i) {
      auto saved = env_;
      env_[s.var] = uniform(i);
      emit(*s.body);
      env_ = std::move(saved);
    });
  }

  void emit_unrolled(const Stmt& s, const std::string& var) {
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

  void emit_vectorized(const Stmt& s) {
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

  // Buffers `s` touches (loads and stores) and buffers it allocates, anywhere inside it.
  static void buffer_uses(const Stmt* s, std::set<int>* used, std::set<int>* allocated) {
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

  // The loop body becomes `void NAME_par_N(ptr ctx, i64 lo, i64 hi)`; ctx holds what the
  // body needs from outside: the enclosing variables and the buffers' addresses.
  //
  // Which buffers are shared follows the IR (and the interpreter): a buffer is private to
  // one parallel iteration only when its Allocate lies inside the loop. A Local/Shared buffer
  // with no Allocate lives for the whole function, so its storage is made here, in the
  // caller, and passed by pointer like a global one: the cache_write accumulator filled by
  // a parallel nest must be the one the writeback nest after it reads.
  void emit_parallel(const Stmt& s) {
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
    const size_t slots = vars.size() + bufs.size();
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

    // The outlined function, generated now with its own state.
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, i64_, i64_}, false);
    std::string name = fs_.fn->getName().str() + "_par_" + std::to_string(parallel_count_++);
    llvm::Function* body_fn = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, m_);
    set_attributes(body_fn);
    FnState outer = std::move(fs_);
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
    in_parallel_ = true;
    emit_loop(s.var, body_fn->getArg(1), body_fn->getArg(2), true, [&](llvm::Value* i) {
      env_[s.var] = uniform(i);
      emit(*s.body);
    });
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

  void note(const std::string& n) { notes_.push_back(n); }

  // ---------------------------------------------------------------------------------------
  // [SECTION] expressions
  // ---------------------------------------------------------------------------------------

  llvm::Type* vec(llvm::Type* t) { return llvm::FixedVectorType::get(t, static_cast<unsigned>(lanes_)); }

  // The value as a <W x T> vector (Affine: base + <0, s, 2s, ...>).
  llvm::Value* widen(const Val& x) {
    if (x.shape == Val::Vector) return x.v;
    llvm::Value* splat = b_.CreateVectorSplat(static_cast<unsigned>(lanes_), x.v);
    if (x.shape == Val::Uniform) return splat;
    std::vector<llvm::Constant*> steps;
    for (int64_t l = 0; l < lanes_; ++l) steps.push_back(b_.getInt64(x.stride * l));
    return b_.CreateAdd(splat, llvm::ConstantVector::get(steps));
  }

  // Lane l's value as a scalar.
  llvm::Value* lane(const Val& x, int64_t l) {
    if (x.shape == Val::Uniform) return x.v;
    if (x.shape == Val::Affine) return b_.CreateAdd(x.v, b_.getInt64(x.stride * l));
    return b_.CreateExtractElement(x.v, static_cast<uint64_t>(l));
  }

  bool is_float(llvm::Value* v) { return v->getType()->getScalarType()->isFloatTy(); }
  bool is_bool(llvm::Value* v) { return v->getType()->getScalarType()->isIntegerTy(1); }

  llvm::Value* to_bool(llvm::Value* v) {
    if (is_bool(v)) return v;
    if (is_float(v)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }

  // As f32 (Int and Bool operands of float arithmetic, values stored to buffers).
  Val to_float(const Val& x) {
    if (is_float(x.v)) return x;
    llvm::Value* v = x.shape == Val::Affine ? widen(x) : x.v;
    llvm::Type* t = v->getType()->isVectorTy() ? vec(f32_) : f32_;
    Val r{is_bool(v) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t),
          v->getType()->isVectorTy() ? Val::Vector : Val::Uniform, 0};
    return r;
  }

  Val eval(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntImm: return uniform(b_.getInt64(static_cast<uint64_t>(e.ival)));
      case ExprKind::FloatImm:
        return uniform(llvm::ConstantFP::get(f32_, static_cast<double>(static_cast<float>(e.fval))));
      case ExprKind::Var: {
        auto it = env_.find(e.name);
        if (it == env_.end()) {
          fail("variable '" + e.name + "' is not bound here");
          return uniform(b_.getInt64(0));
        }
        return it->second;
      }
      case ExprKind::Load: return emit_load(e);
      case ExprKind::Binary:
        if (e.args.size() != 2 || !e.args[0] || !e.args[1]) break;
        return binary(e.op, eval(*e.args[0]), eval(*e.args[1]));
      case ExprKind::Unary:
        if (e.args.size() != 1 || !e.args[0]) break;
        return unary(e.op, eval(*e.args[0]));
      case ExprKind::Select: {
        if (e.args.size() != 3 || !e.args[0] || !e.args[1] || !e.args[2]) break;
        Val c = eval(*e.args[0]), a = eval(*e.args[1]), b = eval(*e.args[2]);
        if (is_float(a.v) != is_float(b.v)) {
          a = to_float(a);
          b = to_float(b);
        }
        llvm::Value* cond = to_bool(c.shape == Val::Uniform ? c.v : widen(c));
        if (a.shape == Val::Uniform && b.shape == Val::Uniform && c.shape == Val::Uniform)
          return uniform(b_.CreateSelect(cond, a.v, b.v));
        return Val{b_.CreateSelect(cond, widen(a), widen(b)), Val::Vector, 0};
      }
    }
    fail("malformed expression (" + std::string(e.kind == ExprKind::Select ? "select" : "operator") +
         " with missing operands)");
    return uniform(b_.getInt64(0));
  }

  // Integer + and * by a constant keep Affine values Affine; everything else widens.
  Val binary(Op op, Val a, Val b) {
    const bool fl = is_float(a.v) || is_float(b.v);
    if (fl && op != Op::And && op != Op::Or) {
      a = to_float(a);
      b = to_float(b);
    } else if (!fl && !is_bool(a.v) && !is_bool(b.v)) {
      if (auto r = affine_binary(op, a, b); r.v) return r;
    }
    const bool scalar = a.shape == Val::Uniform && b.shape == Val::Uniform;
    llvm::Value* x = scalar ? a.v : widen(a);
    llvm::Value* y = scalar ? b.v : widen(b);
    if (op == Op::And || op == Op::Or) {
      x = to_bool(x);
      y = to_bool(y);
    }
    llvm::Value* r = fl ? float_op(op, x, y) : int_op(op, x, y);
    return Val{r, scalar ? Val::Uniform : Val::Vector, 0};
  }

  Val affine_binary(Op op, const Val& a, const Val& b) {
    if (a.shape == Val::Vector || b.shape == Val::Vector) return {};
    if (a.shape == Val::Uniform && b.shape == Val::Uniform) return {};
    auto make = [&](llvm::Value* base, int64_t stride) {
      return stride == 0 ? uniform(base) : Val{base, Val::Affine, stride};
    };
    switch (op) {
      case Op::Add: return make(b_.CreateAdd(a.v, b.v), a.stride + b.stride);
      case Op::Sub: return make(b_.CreateSub(a.v, b.v), a.stride - b.stride);
      case Op::Mul: {
        const Val& k = a.shape == Val::Uniform ? a : b;
        const Val& x = a.shape == Val::Uniform ? b : a;
        if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(k.v))
          return make(b_.CreateMul(x.v, c), x.stride * c->getSExtValue());
        return {};
      }
      default: return {};
    }
  }

  llvm::Value* int_op(Op op, llvm::Value* x, llvm::Value* y) {
    switch (op) {
      case Op::Add: return b_.CreateAdd(x, y);
      case Op::Sub: return b_.CreateSub(x, y);
      case Op::Mul: return b_.CreateMul(x, y);
      case Op::Div:
      case Op::Mod: {
        // Index math never divides by zero in a verified function; if it did, 0 rather
        // than a SIGFPE that would take the whole process down.
        llvm::Value* zero = llvm::ConstantInt::get(y->getType(), 0);
        llvm::Value* is_zero = b_.CreateICmpEQ(y, zero);
        llvm::Value* safe = b_.CreateSelect(is_zero, llvm::ConstantInt::get(y->getType(), 1), y);
        llvm::Value* r = op == Op::Div ? b_.CreateSDiv(x, safe) : b_.CreateSRem(x, safe);
        return b_.CreateSelect(is_zero, zero, r);
      }
      case Op::Min: return b_.CreateSelect(b_.CreateICmpSLT(y, x), y, x);
      case Op::Max: return b_.CreateSelect(b_.CreateICmpSGT(y, x), y, x);
      case Op::Lt: return b_.CreateICmpSLT(x, y);
      case Op::Le: return b_.CreateICmpSLE(x, y);
      case Op::Gt: return b_.CreateICmpSGT(x, y);
      case Op::Ge: return b_.CreateICmpSGE(x, y);
      case Op::Eq: return b_.CreateICmpEQ(x, y);
      case Op::Ne: return b_.CreateICmpNE(x, y);
      case Op::And: return b_.CreateAnd(x, y);
      case Op::Or: return b_.CreateOr(x, y);
      default: break;
    }
    fail(std::string("operator '") + tir::op_name(op) + "' is not a binary operator");
    return x;
  }

  // f32 semantics shared by every backend: max(a, b) = (b > a) ? b : a and min likewise
  // (so max(nan, 1) is 1 and max(1, nan) is 1... but max(nan, nan) is nan, as in Python).
  llvm::Value* float_op(Op op, llvm::Value* x, llvm::Value* y) {
    switch (op) {
      case Op::Add: return b_.CreateFAdd(x, y);
      case Op::Sub: return b_.CreateFSub(x, y);
      case Op::Mul: return b_.CreateFMul(x, y);
      case Op::Div: return b_.CreateFDiv(x, y);
      case Op::Mod: return b_.CreateFRem(x, y);
      case Op::Min: return b_.CreateSelect(b_.CreateFCmpOLT(y, x), y, x);
      case Op::Max: return b_.CreateSelect(b_.CreateFCmpOGT(y, x), y, x);
      case Op::Lt: return b_.CreateFCmpOLT(x, y);
      case Op::Le: return b_.CreateFCmpOLE(x, y);
      case Op::Gt: return b_.CreateFCmpOGT(x, y);
      case Op::Ge: return b_.CreateFCmpOGE(x, y);
      case Op::Eq: return b_.CreateFCmpOEQ(x, y);
      case Op::Ne: return b_.CreateFCmpUNE(x, y);
      default: break;
    }
    fail(std::string("operator '") + tir::op_name(op) + "' is not a binary operator on f32");
    return x;
  }

  Val unary(Op op, Val a) {
    if (op == Op::Neg && !is_float(a.v) && !is_bool(a.v)) {
      if (a.shape == Val::Vector) return Val{b_.CreateNeg(a.v), Val::Vector, 0};
      return Val{b_.CreateNeg(a.v), a.shape, -a.stride};
    }
    if (op == Op::Abs && !is_float(a.v) && !is_bool(a.v)) {  // |index|: stays an integer
      llvm::Value* x = a.shape == Val::Uniform ? a.v : widen(a);
      llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
      return Val{b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateNeg(x), x),
                 a.shape == Val::Uniform ? Val::Uniform : Val::Vector, 0};
    }
    a = to_float(a);
    llvm::Value* x = a.v;
    llvm::Value* r = nullptr;
    switch (op) {
      case Op::Neg: r = b_.CreateFNeg(x); break;
      case Op::Exp: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x); break;
      case Op::Log: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x); break;
      case Op::Sqrt: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); break;
      case Op::Abs: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
      default:
        fail(std::string("operator '") + tir::op_name(op) + "' is not a unary operator");
        r = x;
    }
    return Val{r, a.shape, 0};
  }

  // ---------------------------------------------------------------------------------------
  // [SECTION] loads and stores
  // ---------------------------------------------------------------------------------------

  // Row-major flattening with the same Affine algebra as expressions.
  Val flat_index(int buffer, const std::vector<tir::ExprPtr>& indices, const std::string& where) {
    const tir::Buffer& buf = f_.buffers[static_cast<size_t>(buffer)];
    if (indices.size() != buf.shape.size()) {
      fail(where + "buffer '" + buf.name + "' has rank " + std::to_string(buf.shape.size()) +
           " but is indexed with " + std::to_string(indices.size()) + " indices");
      return uniform(b_.getInt64(0));
    }
    Val flat = uniform(b_.getInt64(0));
    for (size_t d = 0; d < indices.size(); ++d) {
      if (!indices[d]) {
        fail(where + "buffer '" + buf.name + "': missing index");
        return uniform(b_.getInt64(0));
      }
      Val i = eval(*indices[d]);
      if (is_float(i.v) || is_bool(i.v)) {
        fail(where + "buffer '" + buf.name + "' is indexed with a non-integer");
        return uniform(b_.getInt64(0));
      }
      flat = d == 0 ? i : binary(Op::Add, binary(Op::Mul, flat, uniform(b_.getInt64(buf.shape[d]))), i);
    }
    return flat;
  }

  Val emit_load(const Expr& e) {
    llvm::Value* base = buffer_base(e.buffer);
    if (!base) return uniform(llvm::ConstantFP::get(f32_, 0.0));
    Val idx = flat_index(e.buffer, e.args, "");
    const std::string& name = f_.buffers[static_cast<size_t>(e.buffer)].name;
    auto load_at = [&](llvm::Type* t, llvm::Value* i) {
      llvm::LoadInst* l = b_.CreateAlignedLoad(t, b_.CreateInBoundsGEP(f32_, base, i), llvm::Align(4), name);
      tag(l, e.buffer);
      return l;
    };
    if (idx.shape == Val::Uniform) return uniform(load_at(f32_, idx.v));
    if (idx.shape == Val::Affine && idx.stride == 1) return Val{load_at(vec(f32_), idx.v), Val::Vector, 0};
    // A gather: one scalar load per lane.
    llvm::Value* r = llvm::PoisonValue::get(vec(f32_));
    for (int64_t l = 0; l < lanes_; ++l)
      r = b_.CreateInsertElement(r, load_at(f32_, lane(idx, l)), static_cast<uint64_t>(l));
    return Val{r, Val::Vector, 0};
  }

  void emit_store(int buffer, const std::vector<tir::ExprPtr>& indices, const Expr& value,
                  const std::string& where) {
    llvm::Value* base = buffer_base(buffer);
    if (!base) return;
    Val v = to_float(eval(value));
    Val idx = flat_index(buffer, indices, where);
    const std::string& name = f_.buffers[static_cast<size_t>(buffer)].name;
    auto store_at = [&](llvm::Value* x, llvm::Value* i) {
      llvm::StoreInst* s = b_.CreateAlignedStore(x, b_.CreateInBoundsGEP(f32_, base, i), llvm::Align(4));
      tag(s, buffer);
    };
    if (lanes_ == 1) {
      store_at(v.v, idx.v);
      return;
    }
    if (idx.shape == Val::Uniform) {
      give_up_vector("every lane stores to the same element of '" + name + "'");
      return;
    }
    if (idx.shape == Val::Vector) {
      give_up_vector("the store to '" + name + "' has an index that is not affine in the lane");
      return;
    }
    if (idx.stride == 1) {
      store_at(widen(v), idx.v);
      return;
    }
    for (int64_t l = 0; l < lanes_; ++l)  // a scatter, in lane order
      store_at(v.shape == Val::Uniform ? v.v : b_.CreateExtractElement(v.v, static_cast<uint64_t>(l)),
               lane(idx, l));
  }

  const tir::PrimFunc& f_;
  const CpuCodegenOptions& options_;
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::IRBuilder<> b_;
  llvm::Type* f32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;

  FnState fs_;
  std::map<std::string, Val> env_;          // loop and block variables in scope
  std::vector<llvm::Value*> buffer_ptr_;    // each buffer's address in the current function
  std::set<int> allocated_;                 // buffers inside an Allocate in scope
  std::vector<llvm::MDNode*> scope_md_, noalias_md_;
  int64_t lanes_ = 1;                       // > 1 inside a vectorized loop
  int64_t unroll_copies_ = 1;
  bool in_parallel_ = false;
  int parallel_count_ = 0;
  std::string vec_failure_;
  std::vector<std::string> notes_;
  std::string error_;
};

}  // namespace

bool generate_cpu_module(const tir::PrimFunc& f, const CpuCodegenOptions& options,
                         llvm::LLVMContext& context, std::unique_ptr<llvm::Module>* module,
                         std::string* entry, std::vector<int>* temps, std::string* error) {
  auto m = std::make_unique<llvm::Module>(f.name.empty() ? "kernel" : f.name, context);
  if (!options.target.triple.empty()) m->setTargetTriple(options.target.triple);
  if (!options.target.data_layout.empty()) m->setDataLayout(options.target.data_layout);
  Codegen gen(f, options, context, *m);
  temps->clear();
  if (!gen.generate(entry, temps, error)) return false;
  *module = std::move(m);
  return true;
}

}  // namespace descent::tensor

extern "C" void* descent_alloc(int64_t bytes) {
  size_t size = (static_cast<size_t>(bytes) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size == 0 ? 64 : size);
  if (p) std::memset(p, 0, size);
  return p;
}

extern "C" void descent_free(void* p) { std::free(p); }
