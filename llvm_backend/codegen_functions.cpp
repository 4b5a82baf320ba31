// LLVM IR from the AST, functions: types, names, variables, and each function's frame.
//
// Every Descent function becomes an LLVM function with one extra i32 parameter, %depth,
// the frame's number, so that calls can be checked against the runtime's limit without a
// global counter. Locals live in allocas in the entry block (SROA turns them into
// registers); globals in LLVM globals next to a "defined" byte, which a function reads when
// it may run before the global is assigned. Top-level code is one more function, the entry.
#include <set>

#include "lang/promotable.h"
#include "llvm_backend/codegen_internal.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe::codegen_internal {

namespace {

// 10,000 frames of a function this big (locals + statements + expressions; at -O0 each
// may take a stack slot) might not fit in the JIT's 512 MB stack: such a function checks
// the stack pointer on entry and fails with "stack overflow" instead of crashing. Smaller
// ones (all but generated monsters) need no check.
constexpr size_t kBigFunction = 800;

size_t count_nodes(const Expr& e) {
  size_t n = 1;
  for (const auto& k : e.kids) n += count_nodes(*k);
  return n;
}
size_t count_nodes(const Block& b) {
  size_t n = 0;
  for (const auto& s : b) {
    n += 1 + count_nodes(s->body) + count_nodes(s->else_body);
    if (s->expr) n += count_nodes(*s->expr);
    if (s->expr2) n += count_nodes(*s->expr2);
  }
  return n;
}

}  // namespace

void Lowering::run() {
  for (int i : spec_.define) function(i);  // create them all first: calls may go anywhere
  for (int i : spec_.define) emit_function(i);
  if (!spec_.entry.empty()) emit_entry();
  if (di_) di_->finalize();
}

void Lowering::start_debug_info() {
  // Without this flag the bitcode reader (target.cpp's copies) would strip the debug info.
  m_.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  di_ = std::make_unique<llvm::DIBuilder>(m_);
  std::string name = prog_.source ? prog_.source->name() : "descent";
  cu_ = di_->createCompileUnit(llvm::dwarf::DW_LANG_C, di_->createFile(name, "."), "Descent",
                               /*isOptimized=*/false, "", 0, llvm::StringRef(),
                               llvm::DICompileUnit::LineTablesOnly);
}

// A function's DISubprogram, in the file of the input that defined it; the builder's
// location starts at its declaration, so the frame setup maps to the `fn` line.
void Lowering::describe_function(llvm::Function* f, const std::string& name, SourceLoc loc) {
  if (!di_) return;
  const SourceFile* source = loc.file ? loc.file : st_->source;
  llvm::DIFile* file = di_->createFile(source ? source->name() : "descent", ".");
  auto* sp = di_->createFunction(
      file, name, f->getName(), file, loc.line, di_->createSubroutineType(di_->getOrCreateTypeArray({})),
      loc.line, llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
  f->setSubprogram(sp);
  b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, loc.line, loc.col, sp));
}

llvm::DILocation* Lowering::at(SourceLoc loc) {
  if (!di_ || !st_ || !st_->f->getSubprogram() || !loc.valid()) return nullptr;
  return llvm::DILocation::get(c_, loc.line, loc.col, st_->f->getSubprogram());
}

void Lowering::locate(SourceLoc loc) {
  if (llvm::DILocation* l = at(loc)) b_.SetCurrentDebugLocation(l);
}

llvm::Type* Lowering::type(Type t) {
  switch (t) {
    case Type::Float: return b_.getDoubleTy();
    case Type::Bool: return b_.getInt1Ty();
    case Type::Void: return b_.getVoidTy();
    default: return b_.getInt64Ty();
  }
}

// Globals hold a bool as a byte (GlobalStore's Value.b).
llvm::Type* Lowering::stored_type(Type t) { return t == Type::Bool ? b_.getInt8Ty() : type(t); }

void Lowering::index_sources(const Program& p) {
  for (const auto& s : p.body)
    if (s->kind == StmtKind::FnDecl) source_of_[s->fn.get()] = p.source.get();
}

llvm::FunctionType* Lowering::fn_type(const FunctionInfo& info) {
  std::vector<llvm::Type*> params;
  for (Type t : info.params) params.push_back(type(t));
  params.push_back(b_.getInt32Ty());  // %depth
  return llvm::FunctionType::get(type(info.ret), params, false);
}

llvm::Function* Lowering::function(int index) {
  auto it = functions_.find(index);
  if (it != functions_.end()) return it->second;
  const FunctionInfo& info = mod_.functions[static_cast<size_t>(index)];
  std::string name = spec_.symbol ? spec_.symbol(index) : function_symbol(info.name);
  llvm::Function* f = m_.getFunction(name);
  if (!f) f = llvm::Function::Create(fn_type(info), llvm::Function::ExternalLinkage, name, m_);
  functions_[index] = f;
  return f;
}

llvm::BasicBlock* Lowering::block(const llvm::Twine& name) {
  return llvm::BasicBlock::Create(c_, name);
}

// Appends a (detached) block to the function and continues there.
void Lowering::enter(llvm::BasicBlock* bb) {
  st_->f->getBasicBlockList().push_back(bb);
  b_.SetInsertPoint(bb);
}

// Whether code emitted now would be reachable (no return/break/continue before it).
bool Lowering::open() { return b_.GetInsertBlock() && !b_.GetInsertBlock()->getTerminator(); }

bool Lowering::has_preds(llvm::BasicBlock* bb) { return !bb->use_empty(); }

Lowering::GlobalVars Lowering::global(int slot) {
  auto it = globals_.find(slot);
  if (it != globals_.end()) return it->second;
  const GlobalInfo& info = mod_.globals[static_cast<size_t>(slot)];
  auto make = [&](llvm::Type* t, const std::string& name) {
    auto* g = m_.getNamedGlobal(name);
    if (g) return g;
    if (spec_.define_globals)
      return new llvm::GlobalVariable(m_, t, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::Constant::getNullValue(t), name);
    return new llvm::GlobalVariable(m_, t, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                    name);
  };
  GlobalVars g{make(stored_type(info.type), global_symbol(info.name)),
               make(b_.getInt8Ty(), defined_symbol(info.name))};
  globals_[slot] = g;
  return g;
}

llvm::Value* Lowering::load_var(Storage storage, int slot, const std::string& name) {
  if (storage == Storage::Local) {
    auto i = static_cast<size_t>(slot);
    return b_.CreateLoad(st_->local_types[i], st_->locals[i], name);
  }
  GlobalVars g = global(slot);
  auto p = promoted_.find(slot);
  llvm::Value* v = p != promoted_.end() ? b_.CreateLoad(p->second->getAllocatedType(), p->second, name)
                                        : b_.CreateLoad(g.value->getValueType(), g.value, name);
  if (mod_.globals[static_cast<size_t>(slot)].type == Type::Bool)
    v = b_.CreateTrunc(v, b_.getInt1Ty(), name);
  return v;
}

void Lowering::store_var(Storage storage, int slot, llvm::Value* v) {
  if (storage == Storage::Local) {
    b_.CreateStore(v, st_->locals[static_cast<size_t>(slot)]);
    return;
  }
  GlobalVars g = global(slot);
  if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
  auto p = promoted_.find(slot);
  b_.CreateStore(v, p != promoted_.end() ? static_cast<llvm::Value*>(p->second) : g.value);
  // The "assigned" mark is stored as before: a constant store, never read back in the loop.
  b_.CreateStore(b_.getInt8(1), g.defined);
}

void Lowering::promote_globals() {
  promoted_.clear();
  for (int slot : promotable_globals(prog_, mod_)) {
    GlobalVars g = global(slot);
    llvm::Type* t = g.value->getValueType();
    llvm::AllocaInst* a = b_.CreateAlloca(t, nullptr, mod_.globals[size_t(slot)].name + ".reg");
    b_.CreateStore(b_.CreateLoad(t, g.value), a);
    promoted_[slot] = a;
  }
}

// Every call but a print (which touches only the runtime's output) and an intrinsic may end
// the run (an error, Ctrl-C through a tick, a failing call: the runtime unwinds with
// longjmp) or hand control to code that reads globals: the promoted values go home first,
// and at every return. Nothing is reloaded after: no function writes them.
void Lowering::write_back_promoted(llvm::Function* f) {
  if (promoted_.empty()) return;
  std::vector<llvm::Instruction*> points;
  for (llvm::BasicBlock& bb : *f)
    for (llvm::Instruction& inst : bb) {
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
        llvm::Function* callee = call->getCalledFunction();
        if (callee && (callee->isIntrinsic() || callee->onlyAccessesInaccessibleMemory() ||
                       callee->onlyAccessesInaccessibleMemOrArgMem()))
          continue;
        points.push_back(call);
      } else if (llvm::isa<llvm::ReturnInst>(inst)) {
        points.push_back(&inst);
      }
    }
  for (llvm::Instruction* at : points) {
    llvm::IRBuilder<> ib(at);
    for (const auto& [slot, a] : promoted_)
      ib.CreateStore(ib.CreateLoad(a->getAllocatedType(), a), global(slot).value);
  }
  promoted_.clear();
}

// The value assigned to `name` reads as %name.next.
void Lowering::name_assigned(llvm::Value* v, const std::string& name) {
  if (llvm::isa<llvm::Instruction>(v)) v->setName(name + ".next");
}

void Lowering::emit_function(int index) {
  const FunctionInfo& info = mod_.functions[static_cast<size_t>(index)];
  const FnDecl& fn = *info.decl;
  llvm::Function* f = function(index);
  if (!spec_.external_functions) f->setLinkage(llvm::Function::InternalLinkage);
  FnState st;
  st.f = f;
  st.decl = &fn;
  auto src = source_of_.find(&fn);
  st.source = src == source_of_.end() ? nullptr : src->second;
  st_ = &st;
  describe_function(f, fn.name, fn.loc);
  enter(block("entry"));
  size_t nparams = fn.params.size();
  for (size_t i = 0; i < fn.local_names.size(); ++i) {
    Type t = i < fn.local_types.size() ? fn.local_types[i] : Type::Int;
    std::string name = fn.local_names[i] + (i < nparams ? ".addr" : "");
    st.locals.push_back(t == Type::Tensor ? nullptr : b_.CreateAlloca(type(t), nullptr, name));
    st.local_types.push_back(type(t));
  }
  if (fn.uses_tensors) open_tensor_frame(fn);
  for (size_t i = 0; i < nparams; ++i) {
    llvm::Argument* a = f->getArg(static_cast<unsigned>(i));
    a->setName(fn.params[i].name);
    b_.CreateStore(a, st.locals[i]);
  }
  st.depth = f->getArg(static_cast<unsigned>(nparams));
  st.depth->setName("depth");
  std::vector<int> calls;
  std::set<int> seen;
  collect_calls(fn.body, calls, seen);
  if (!calls.empty()) st.depth_next = b_.CreateAdd(st.depth, b_.getInt32(1), "depth.next");
  if (!calls.empty() && fn.local_names.size() + count_nodes(fn.body) > kBigFunction)
    stack_guard(fn.loc);
  emit_block(fn.body);
  if (open()) {
    // Sema lets control reach the end only in functions that return nothing.
    if (info.ret == Type::Void) leave_function(nullptr, nullptr);
    else b_.CreateUnreachable();
  }
  finish();
}

void Lowering::emit_entry() {
  auto* t = llvm::FunctionType::get(b_.getVoidTy(), {}, false);
  llvm::Function* f = llvm::Function::Create(
      t, spec_.runtime ? llvm::Function::InternalLinkage : llvm::Function::ExternalLinkage,
      spec_.entry, m_);
  FnState st;
  st.f = f;
  st.source = prog_.source.get();
  st.depth = b_.getInt32(0);  // top-level code is not a frame
  st.depth_next = b_.getInt32(1);
  st.safe_points = prog_.uses_tensors;
  st_ = &st;
  SourceLoc first;  // top-level code starts at its first statement
  for (const auto& s : prog_.body)
    if (s->kind != StmtKind::FnDecl && !first.valid()) first = s->loc;
  if (!first.valid()) first.line = 1;
  describe_function(f, "<script>", first);
  enter(block("entry"));
  promote_globals();
  for (const auto& s : prog_.body) {
    if (!open()) break;
    if (spec_.echo && s->kind == StmtKind::Expr && s->expr->type != Type::Void) {
      llvm::Value* v = expr(*s->expr);
      print_value(v, s->expr->type, s->expr->loc);
      b_.CreateCall(runtime(rt::kPrintEnd));
    } else {
      stmt(*s);
    }
    if (s->kind != StmtKind::FnDecl && s->kind != StmtKind::KernelDecl) safe_point();
  }
  if (open()) b_.CreateRetVoid();
  finish();
  write_back_promoted(f);
}

void Lowering::finish() {
  for (llvm::BasicBlock* bb : st_->error_blocks) st_->f->getBasicBlockList().push_back(bb);
  b_.ClearInsertionPoint();
  b_.SetCurrentDebugLocation(llvm::DebugLoc());
  st_ = nullptr;
}

}  // namespace descent::llvmbe::codegen_internal
