// Loop-nest IR -> LLVM IR for the CPU. This file: the overview, the entry function, and
// statements; the other parts are listed in codegen_internal.h.
//
// The translation is direct (one LLVM loop per For, one branch per
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
#include "cpu/codegen.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cpu/codegen_internal.h"

namespace descent::cpu::codegen_internal {

bool Codegen::generate(std::string* entry, std::vector<int>* temps, std::string* error) {
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
  // The last slot: the interrupt flag the coarse loops poll (codegen_loops.cpp).
  fs_.interrupt = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, fn->getArg(0), order.size()),
                                "interrupt");
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

void Codegen::fail(const std::string& msg) {
  if (error_.empty()) error_ = msg;
}

// A vector attempt cannot go on; the enclosing vectorized loop will emit scalar code.
void Codegen::give_up_vector(const std::string& why) {
  if (vec_failure_.empty()) vec_failure_ = why;
}

void Codegen::note(const std::string& n) { notes_.push_back(n); }

void Codegen::emit(const Stmt& s) {
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
void Codegen::emit_guarded(const Val& cond, const std::string& what,
                           const std::function<void()>& body) {
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

void Codegen::emit_block(const Stmt& s) {
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

}  // namespace descent::cpu::codegen_internal

namespace descent::cpu {

bool generate_cpu_module(const tir::PrimFunc& f, const CpuCodegenOptions& options,
                         llvm::LLVMContext& context, std::unique_ptr<llvm::Module>* module,
                         std::string* entry, std::vector<int>* temps, std::string* error) {
  auto m = std::make_unique<llvm::Module>(f.name.empty() ? "kernel" : f.name, context);
  if (!options.target.triple.empty()) m->setTargetTriple(options.target.triple);
  if (!options.target.data_layout.empty()) m->setDataLayout(options.target.data_layout);
  codegen_internal::Codegen gen(f, options, context, *m);
  temps->clear();
  if (!gen.generate(entry, temps, error)) return false;
  *module = std::move(m);
  return true;
}

}  // namespace descent::cpu

extern "C" void* descent_alloc(int64_t bytes) {
  size_t size = (static_cast<size_t>(bytes) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size == 0 ? 64 : size);
  if (p) std::memset(p, 0, size);
  return p;
}

extern "C" void descent_free(void* p) { std::free(p); }
