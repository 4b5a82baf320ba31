// CPU code generation, memory: functions and their frames, buffer storage, loads, stores.
//
// Params, the output and Global temps come from the caller; Local and Shared buffers get
// storage in the function that uses them: a 64-byte aligned alloca in the entry block, or
// heap memory from the runtime when too big for a stack frame. Every load and store is
// tagged with its buffer's alias scope. Within a vectorized loop an index that is base + lane
// becomes one vector load or store; other indices load lane by lane (a gather) or, when
// affine, store lane by lane (a scatter).
#include <llvm/IR/MDBuilder.h>

#include "cpu/codegen_internal.h"

namespace descent::cpu::codegen_internal {

// Local buffers larger than this live on the heap, not in the stack frame.
constexpr int64_t kMaxStackBytes = 256 * 1024;
// ... and a Local buffer is per thread: one this big is a schedule mistake, not a plan.
constexpr int64_t kMaxLocalBytes = int64_t(1) << 30;

void Codegen::set_attributes(llvm::Function* fn) {
  const CpuTarget& t = options_.target;
  if (!t.cpu.empty()) fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
  const bool wide = t.avx512 && options_.prefer_wide_vectors;
  fn->addFnAttr("prefer-vector-width", wide ? "512" : "256");
  // Explicit <16 x float> must stay one zmm register, not be split into two ymm halves.
  if (t.avx512) fn->addFnAttr("min-legal-vector-width", "512");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
}

void Codegen::begin_function(llvm::Function* fn) {
  fs_ = FnState{};
  fs_.fn = fn;
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  b_.SetInsertPoint(entry);
  // A no-op marker: allocas and their zero-fill go before it, so that every alloca sits
  // in the entry block (what SROA and mem2reg promote to registers).
  fs_.alloca_point = llvm::BinaryOperator::Create(llvm::Instruction::Add, b_.getInt64(0),
                                                  b_.getInt64(0), "allocas.end", entry);
}

void Codegen::end_function() {
  for (llvm::Value* p : fs_.heap) b_.CreateCall(runtime_free(), {p});
  b_.CreateRetVoid();
  // The early exit of an interrupted run frees the same heap buffers (all made in the entry
  // block, so they dominate it).
  if (fs_.interrupted) {
    b_.SetInsertPoint(fs_.interrupted);
    for (llvm::Value* p : fs_.heap) b_.CreateCall(runtime_free(), {p});
    b_.CreateRetVoid();
  }
  fs_.alloca_point->eraseFromParent();
}

llvm::FunctionCallee Codegen::runtime_free() {
  return m_.getOrInsertFunction("descent_free", b_.getVoidTy(), ptr_);
}

int64_t Codegen::elements(int buffer) const {
  int64_t n = 1;
  for (int64_t d : f_.buffers[static_cast<size_t>(buffer)].shape) n *= d;
  return n;
}

// Storage for a Local/Shared buffer in the current function, created zero-filled in the
// entry block the first time it is asked for (the interpreter's "allocated at entry").
llvm::Value* Codegen::local_storage(int buffer, bool zero_at_entry) {
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

llvm::Value* Codegen::buffer_base(int buffer) {
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
void Codegen::make_alias_scopes() {
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

void Codegen::tag(llvm::Instruction* inst, int buffer) {
  inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_md_[static_cast<size_t>(buffer)]);
  inst->setMetadata(llvm::LLVMContext::MD_noalias, noalias_md_[static_cast<size_t>(buffer)]);
}

// Row-major flattening with the same Affine algebra as expressions.
Val Codegen::flat_index(int buffer, const std::vector<tir::ExprPtr>& indices,
                         const std::string& where) {
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

Val Codegen::emit_load(const Expr& e) {
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

void Codegen::emit_store(int buffer, const std::vector<tir::ExprPtr>& indices, const Expr& value,
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

}  // namespace descent::cpu::codegen_internal
