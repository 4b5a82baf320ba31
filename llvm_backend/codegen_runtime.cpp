// LLVM IR from the AST, the runtime's side: declarations of its functions, and the checks
// that call into it (runtime errors, loop ticks, the stack guard).
//
// Every check is a compare and a branch to a cold block that calls descent_rt_error and
// never returns; the error blocks are laid out after the function's code, so the fast path
// reads straight through. In a standalone build each check also records an ErrorSite, the
// message the program prints if it fails there (runtime.h).
#include <llvm/IR/Intrinsics.h>

#include "llvm_backend/codegen_internal.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe::codegen_internal {

llvm::FunctionCallee Lowering::runtime(const char* name) {
  llvm::Function* f = m_.getFunction(name);
  if (f) return f;
  auto* i32 = b_.getInt32Ty();
  auto* ptr = b_.getPtrTy();
  auto* void_ = b_.getVoidTy();
  std::string n = name;
  llvm::FunctionType* t;
  if (n == rt::kPrintInt) t = llvm::FunctionType::get(void_, {b_.getInt64Ty()}, false);
  else if (n == rt::kPrintFloat) t = llvm::FunctionType::get(void_, {b_.getDoubleTy()}, false);
  else if (n == rt::kPrintBool) t = llvm::FunctionType::get(void_, {i32}, false);
  else if (n == rt::kPrintStr) t = llvm::FunctionType::get(void_, {ptr}, false);
  else if (n == rt::kTick) t = llvm::FunctionType::get(void_, {i32, i32, i32}, false);
  else if (n == rt::kCallCheck) t = llvm::FunctionType::get(void_, {i32, i32, i32, i32}, false);
  else if (n == rt::kError) t = llvm::FunctionType::get(void_, {i32, i32, i32, i32, ptr}, false);
  else t = llvm::FunctionType::get(void_, {}, false);  // print_space, print_end
  f = llvm::Function::Create(t, llvm::Function::ExternalLinkage, name, m_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (n == rt::kError) {
    f->addFnAttr(llvm::Attribute::NoReturn);
    f->addFnAttr(llvm::Attribute::Cold);
  } else if (n == rt::kTick || n == rt::kCallCheck) {
    f->addFnAttr(llvm::Attribute::Cold);
  } else {
    // Printing touches only the runtime's own state (and reads a string argument), so
    // Descent's globals may stay in registers across a print.
    f->addFnAttr(n == rt::kPrintStr ? llvm::Attribute::InaccessibleMemOrArgMemOnly
                                    : llvm::Attribute::InaccessibleMemOnly);
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  return f;
}

// The two variables through which the runtime asks to see ticks (runtime.h).
llvm::LoadInst* Lowering::load_watch(const char* name, llvm::Type* t, const char* value_name) {
  auto* g = llvm::cast<llvm::GlobalVariable>(m_.getOrInsertGlobal(name, t));
  llvm::LoadInst* v = b_.CreateLoad(t, g, value_name);
  v->setAtomic(llvm::AtomicOrdering::Monotonic);  // set by another thread; never hoisted
  v->setAlignment(llvm::Align(t->getPrimitiveSizeInBits() / 8));
  return v;
}

// A block that reports `kind` at `loc` and never returns.
llvm::BasicBlock* Lowering::error_block(RtError kind, SourceLoc loc, const std::string& name) {
  static const char* labels[] = {"", "div.zero", "bad.conversion", "stack.overflow",
                                 "interrupted", "undefined"};
  llvm::BasicBlock* bb = block(labels[static_cast<int>(kind)]);
  llvm::IRBuilder<> eb(bb);
  if (llvm::DILocation* l = at(loc)) eb.SetCurrentDebugLocation(l);
  llvm::Value* name_ptr = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (!name.empty()) {
    llvm::Constant*& str = names_[name];
    if (!str) str = eb.CreateGlobalStringPtr(name, "name." + name, 0, &m_);
    name_ptr = str;
  }
  eb.CreateCall(runtime(rt::kError),
                {eb.getInt32(static_cast<uint32_t>(kind)), eb.getInt32(input_of(loc)),
                 eb.getInt32(loc.line), eb.getInt32(loc.col), name_ptr});
  eb.CreateUnreachable();
  st_->error_blocks.push_back(bb);
  add_site(kind, loc, name);
  return bb;
}

void Lowering::add_site(RtError kind, SourceLoc loc, const std::string& name) {
  if (!spec_.runtime) return;
  uint32_t input = input_of(loc);
  for (const auto& s : sites)
    if (s.kind == kind && s.input == input && s.line == loc.line && s.col == loc.col) return;
  Diagnostic d{Severity::Error, ErrorKind::Runtime, loc, rt_error_message(kind, name.c_str())};
  const SourceFile* file = loc.file ? loc.file : st_->source;
  std::string text = file ? format_diagnostic(*file, d) : d.message + "\n";
  sites.push_back(ErrorSite{kind, input, loc.line, loc.col, text});
}

// The number generated code gives loc's SourceFile (runtime.h, UnitSpec::input_serials): its
// Program's position in the Module (programs.size() for the program being compiled when the
// Module lacks it), or for the JIT its serial.
uint32_t Lowering::input_of(SourceLoc loc) const {
  const SourceFile* file = loc.file ? loc.file : st_->source;
  if (spec_.input_serials) return file ? file->serial() : 0;
  for (size_t i = 0; i < mod_.programs.size(); ++i)
    if (mod_.programs[i]->source.get() == file) return static_cast<uint32_t>(i);
  return static_cast<uint32_t>(mod_.programs.size());
}

// Continues only when `fail` is false; otherwise reports `kind` at `loc`.
void Lowering::check(llvm::Value* fail, RtError kind, SourceLoc loc, const llvm::Twine& ok_name,
                     const std::string& name) {
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(fail); k && k->isZero()) return;
  llvm::BasicBlock* ok = block(ok_name);
  b_.CreateCondBr(fail, error_block(kind, loc, name), ok);
  enter(ok);
}

// A loop back-edge: when the runtime watches (descent_rt_poll != 0: an interrupt was
// requested, or a step limit counts every tick) call descent_rt_tick; then go to `next`.
void Lowering::tick(SourceLoc loc, llvm::BasicBlock* next) {
  llvm::Value* watch = b_.CreateICmpNE(load_watch(rt::kPoll, b_.getInt8Ty(), "poll"),
                                       b_.getInt8(0), "watched");
  llvm::BasicBlock* slow = block("tick");
  b_.CreateCondBr(watch, slow, next);
  enter(slow);
  b_.CreateCall(runtime(rt::kTick),
                {b_.getInt32(input_of(loc)), b_.getInt32(loc.line), b_.getInt32(loc.col)});
  b_.CreateBr(next);
}

void Lowering::stack_guard(SourceLoc loc) {
  llvm::Value* frame = b_.CreateIntrinsic(llvm::Intrinsic::frameaddress, {b_.getPtrTy()},
                                          {b_.getInt32(0)}, nullptr, "frame");
  auto* g = llvm::cast<llvm::GlobalVariable>(m_.getOrInsertGlobal(rt::kStackLimit, b_.getPtrTy()));
  llvm::Value* limit = b_.CreateLoad(b_.getPtrTy(), g, "stack.limit");
  check(b_.CreateICmpULT(frame, limit, "stack.low"), RtError::StackOverflow, loc, "stack.ok");
}

}  // namespace descent::llvmbe::codegen_internal
