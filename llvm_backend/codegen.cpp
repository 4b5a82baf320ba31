// [SECTION] index: IRModule | Lowering (types, variables, checks, statements, expressions,
// calls, builtins) | generate_unit / generate_ir | helpers.
#include "llvm_backend/codegen.h"

#include <map>
#include <mutex>
#include <set>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm_backend/runtime.h"

namespace descent::llvmbe {

IRModule::IRModule() = default;
IRModule::~IRModule() = default;
IRModule::IRModule(IRModule&&) noexcept = default;
IRModule& IRModule::operator=(IRModule&& other) noexcept {
  module.reset();  // before the context it lives in
  context = std::move(other.context);
  module = std::move(other.module);
  return *this;
}

std::string function_symbol(const std::string& name) { return "ds." + name; }
std::string global_symbol(const std::string& name) { return "ds." + name; }
std::string defined_symbol(const std::string& name) { return "ds." + name + ".defined"; }

namespace {

void collect_calls(const Expr& e, std::vector<int>& out, std::set<int>& seen) {
  if (e.kind == ExprKind::Call && e.builtin == Builtin::None && e.slot >= 0 &&
      seen.insert(e.slot).second)
    out.push_back(e.slot);
  for (const auto& k : e.kids) collect_calls(*k, out, seen);
}

void collect_calls(const Block& b, std::vector<int>& out, std::set<int>& seen) {
  for (const auto& s : b) {
    if (s->kind == StmtKind::FnDecl) continue;
    if (s->expr) collect_calls(*s->expr, out, seen);
    if (s->expr2) collect_calls(*s->expr2, out, seen);
    collect_calls(s->body, out, seen);
    collect_calls(s->else_body, out, seen);
  }
}

// One function being lowered.
struct FnState {
  llvm::Function* f = nullptr;
  const FnDecl* decl = nullptr;  // null: top-level code
  const SourceFile* source = nullptr;
  std::vector<llvm::AllocaInst*> locals;  // by slot
  llvm::Value* depth = nullptr;       // i32: this frame's number (top level: 0)
  llvm::Value* depth_next = nullptr;  // i32: what a call passes on
  std::vector<std::pair<llvm::BasicBlock*, llvm::BasicBlock*>> loops;  // {break, continue}
  std::vector<llvm::BasicBlock*> error_blocks;  // laid out after the function's code
};

class Lowering {
 public:
  Lowering(const Program& program, const Module& module, const UnitSpec& spec,
           llvm::Module& m)
      : prog_(program), mod_(module), spec_(spec), m_(m), c_(m.getContext()), b_(c_) {
    for (const auto& p : module.programs) index_sources(*p);
    index_sources(program);
  }

  void run() {
    for (int i : spec_.define) function(i);  // create them all first: calls may go anywhere
    for (int i : spec_.define) emit_function(i);
    if (!spec_.entry.empty()) emit_entry();
  }

  std::vector<ErrorSite> sites;

 private:
  // ---- [SECTION] types and names ----
  llvm::Type* type(Type t) {
    switch (t) {
      case Type::Float: return b_.getDoubleTy();
      case Type::Bool: return b_.getInt1Ty();
      case Type::Void: return b_.getVoidTy();
      default: return b_.getInt64Ty();
    }
  }
  // Globals hold a bool as a byte (GlobalStore's Value.b).
  llvm::Type* stored_type(Type t) { return t == Type::Bool ? b_.getInt8Ty() : type(t); }

  void index_sources(const Program& p) {
    for (const auto& s : p.body)
      if (s->kind == StmtKind::FnDecl) source_of_[s->fn.get()] = p.source.get();
  }

  llvm::FunctionType* fn_type(const FunctionInfo& info) {
    std::vector<llvm::Type*> params;
    for (Type t : info.params) params.push_back(type(t));
    params.push_back(b_.getInt32Ty());  // %depth
    return llvm::FunctionType::get(type(info.ret), params, false);
  }

  llvm::Function* function(int index) {
    auto it = functions_.find(index);
    if (it != functions_.end()) return it->second;
    const FunctionInfo& info = mod_.functions[static_cast<size_t>(index)];
    std::string name = spec_.symbol ? spec_.symbol(index) : function_symbol(info.name);
    llvm::Function* f = m_.getFunction(name);
    if (!f) f = llvm::Function::Create(fn_type(info), llvm::Function::ExternalLinkage, name, m_);
    functions_[index] = f;
    return f;
  }

  // ---- [SECTION] the runtime (runtime.h) ----
  llvm::FunctionCallee runtime(const char* name) {
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
    else if (n == rt::kTick) t = llvm::FunctionType::get(void_, {i32, i32}, false);
    else if (n == rt::kCallCheck) t = llvm::FunctionType::get(void_, {i32, i32, i32}, false);
    else if (n == rt::kError) t = llvm::FunctionType::get(void_, {i32, i32, i32, ptr}, false);
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
  llvm::LoadInst* load_watch(const char* name, llvm::Type* t, const char* value_name) {
    auto* g = llvm::cast<llvm::GlobalVariable>(m_.getOrInsertGlobal(name, t));
    llvm::LoadInst* v = b_.CreateLoad(t, g, value_name);
    v->setAtomic(llvm::AtomicOrdering::Monotonic);  // set by another thread; never hoisted
    v->setAlignment(llvm::Align(t->getPrimitiveSizeInBits() / 8));
    return v;
  }

  // ---- [SECTION] blocks ----
  llvm::BasicBlock* block(const llvm::Twine& name) { return llvm::BasicBlock::Create(c_, name); }
  // Appends a (detached) block to the function and continues there.
  void enter(llvm::BasicBlock* bb) {
    st_->f->getBasicBlockList().push_back(bb);
    b_.SetInsertPoint(bb);
  }
  // Whether code emitted now would be reachable (no return/break/continue before it).
  bool open() { return b_.GetInsertBlock() && !b_.GetInsertBlock()->getTerminator(); }
  bool has_preds(llvm::BasicBlock* bb) { return !bb->use_empty(); }

  // ---- [SECTION] runtime errors and ticks ----
  // A block that reports `kind` at `loc` and never returns.
  llvm::BasicBlock* error_block(RtError kind, SourceLoc loc, const std::string& name = "") {
    static const char* labels[] = {"", "div.zero", "bad.conversion", "stack.overflow",
                                   "interrupted", "undefined"};
    llvm::BasicBlock* bb = block(labels[static_cast<int>(kind)]);
    llvm::IRBuilder<> eb(bb);
    llvm::Value* name_ptr = llvm::ConstantPointerNull::get(b_.getPtrTy());
    if (!name.empty()) {
      llvm::Constant*& str = names_[name];
      if (!str) str = eb.CreateGlobalStringPtr(name, "name." + name, 0, &m_);
      name_ptr = str;
    }
    eb.CreateCall(runtime(rt::kError), {eb.getInt32(static_cast<uint32_t>(kind)),
                                        eb.getInt32(loc.line), eb.getInt32(loc.col), name_ptr});
    eb.CreateUnreachable();
    st_->error_blocks.push_back(bb);
    add_site(kind, loc, name);
    return bb;
  }

  void add_site(RtError kind, SourceLoc loc, const std::string& name) {
    if (!spec_.runtime) return;
    for (const auto& s : sites)
      if (s.kind == kind && s.line == loc.line && s.col == loc.col) return;
    Diagnostic d{Severity::Error, ErrorKind::Runtime, loc, rt_error_message(kind, name.c_str())};
    std::string text = st_->source ? format_diagnostic(*st_->source, d) : d.message + "\n";
    sites.push_back(ErrorSite{kind, loc.line, loc.col, text});
  }

  // Continues only when `fail` is false; otherwise reports `kind` at `loc`.
  void check(llvm::Value* fail, RtError kind, SourceLoc loc, const llvm::Twine& ok_name,
             const std::string& name = "") {
    if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(fail); k && k->isZero()) return;
    llvm::BasicBlock* ok = block(ok_name);
    b_.CreateCondBr(fail, error_block(kind, loc, name), ok);
    enter(ok);
  }

  // A loop back-edge: when the runtime watches (descent_rt_poll != 0: an interrupt was
  // requested, or a step limit counts every tick) call descent_rt_tick; then go to `next`.
  void tick(SourceLoc loc, llvm::BasicBlock* next) {
    llvm::Value* watch = b_.CreateICmpNE(load_watch(rt::kPoll, b_.getInt8Ty(), "poll"),
                                         b_.getInt8(0), "watched");
    llvm::BasicBlock* slow = block("tick");
    b_.CreateCondBr(watch, slow, next);
    enter(slow);
    b_.CreateCall(runtime(rt::kTick), {b_.getInt32(loc.line), b_.getInt32(loc.col)});
    b_.CreateBr(next);
  }

  // ---- [SECTION] variables ----
  struct GlobalVars {
    llvm::GlobalVariable* value;
    llvm::GlobalVariable* defined;
  };
  GlobalVars global(int slot) {
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

  llvm::Value* load_var(Storage storage, int slot, const std::string& name) {
    if (storage == Storage::Local) {
      llvm::AllocaInst* a = st_->locals[static_cast<size_t>(slot)];
      return b_.CreateLoad(a->getAllocatedType(), a, name);
    }
    GlobalVars g = global(slot);
    llvm::Value* v = b_.CreateLoad(g.value->getValueType(), g.value, name);
    if (mod_.globals[static_cast<size_t>(slot)].type == Type::Bool)
      v = b_.CreateTrunc(v, b_.getInt1Ty(), name);
    return v;
  }

  void store_var(Storage storage, int slot, llvm::Value* v) {
    if (storage == Storage::Local) {
      b_.CreateStore(v, st_->locals[static_cast<size_t>(slot)]);
      return;
    }
    GlobalVars g = global(slot);
    if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
    b_.CreateStore(v, g.value);
    b_.CreateStore(b_.getInt8(1), g.defined);
  }

  // The value assigned to `name` reads as %name.next.
  void name_assigned(llvm::Value* v, const std::string& name) {
    if (llvm::isa<llvm::Instruction>(v)) v->setName(name + ".next");
  }

  // ---- [SECTION] functions ----
  void emit_function(int index) {
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
    enter(block("entry"));
    size_t nparams = fn.params.size();
    for (size_t i = 0; i < fn.local_names.size(); ++i) {
      Type t = i < fn.local_types.size() ? fn.local_types[i] : Type::Int;
      std::string name = fn.local_names[i] + (i < nparams ? ".addr" : "");
      st.locals.push_back(b_.CreateAlloca(type(t), nullptr, name));
    }
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
      if (info.ret == Type::Void) b_.CreateRetVoid();
      else b_.CreateUnreachable();
    }
    finish();
  }

  // 10,000 frames of a function this big (locals + statements + expressions; at -O0 each
  // may take a stack slot) might not fit in the JIT's 512 MB stack: such a function checks
  // the stack pointer on entry and fails with "stack overflow" instead of crashing. Smaller
  // ones (all but generated monsters) need no check.
  static constexpr size_t kBigFunction = 800;

  static size_t count_nodes(const Expr& e) {
    size_t n = 1;
    for (const auto& k : e.kids) n += count_nodes(*k);
    return n;
  }
  static size_t count_nodes(const Block& b) {
    size_t n = 0;
    for (const auto& s : b) {
      n += 1 + count_nodes(s->body) + count_nodes(s->else_body);
      if (s->expr) n += count_nodes(*s->expr);
      if (s->expr2) n += count_nodes(*s->expr2);
    }
    return n;
  }

  void stack_guard(SourceLoc loc) {
    llvm::Value* frame = b_.CreateIntrinsic(llvm::Intrinsic::frameaddress, {b_.getPtrTy()},
                                            {b_.getInt32(0)}, nullptr, "frame");
    auto* g = llvm::cast<llvm::GlobalVariable>(m_.getOrInsertGlobal(rt::kStackLimit, b_.getPtrTy()));
    llvm::Value* limit = b_.CreateLoad(b_.getPtrTy(), g, "stack.limit");
    check(b_.CreateICmpULT(frame, limit, "stack.low"), RtError::StackOverflow, loc, "stack.ok");
  }

  void emit_entry() {
    auto* t = llvm::FunctionType::get(b_.getVoidTy(), {}, false);
    llvm::Function* f = llvm::Function::Create(
        t, spec_.runtime ? llvm::Function::InternalLinkage : llvm::Function::ExternalLinkage,
        spec_.entry, m_);
    FnState st;
    st.f = f;
    st.source = prog_.source.get();
    st.depth = b_.getInt32(0);  // top-level code is not a frame
    st.depth_next = b_.getInt32(1);
    st_ = &st;
    enter(block("entry"));
    for (const auto& s : prog_.body) {
      if (!open()) break;
      if (spec_.echo && s->kind == StmtKind::Expr && s->expr->type != Type::Void) {
        llvm::Value* v = expr(*s->expr);
        print_value(v, s->expr->type);
        b_.CreateCall(runtime(rt::kPrintEnd));
      } else {
        stmt(*s);
      }
    }
    if (open()) b_.CreateRetVoid();
    finish();
  }

  void finish() {
    for (llvm::BasicBlock* bb : st_->error_blocks) st_->f->getBasicBlockList().push_back(bb);
    b_.ClearInsertionPoint();
    st_ = nullptr;
  }

  // ---- [SECTION] statements ----
  void emit_block(const Block& block) {
    for (const auto& s : block) {
      if (!open()) return;  // after return/break/continue: never runs
      stmt(*s);
    }
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr: expr(*s.expr); return;
      case StmtKind::Assign: assign(s); return;
      case StmtKind::If: if_stmt(s); return;
      case StmtKind::While: while_stmt(s); return;
      case StmtKind::For: for_stmt(s); return;
      case StmtKind::Break: b_.CreateBr(st_->loops.back().first); return;
      case StmtKind::Continue: b_.CreateBr(st_->loops.back().second); return;
      case StmtKind::Return:
        if (s.expr) b_.CreateRet(expr(*s.expr));
        else b_.CreateRetVoid();
        return;
      case StmtKind::FnDecl: return;
      case StmtKind::KernelDecl: return;  // kernels run on the ast engine only
    }
  }

  void assign(const Stmt& s) {
    // As the walker: the right side first, then (x op= v) the variable's current value.
    llvm::Value* v = expr(*s.expr);
    if (s.has_op) {
      llvm::Value* cur = load_var(s.storage, s.slot, s.name);
      v = arith(s.assign_op, s.var_type, cur, v, s.op_loc);
    }
    name_assigned(v, s.name);
    store_var(s.storage, s.slot, v);
  }

  void if_stmt(const Stmt& s) {
    llvm::Value* cond = expr(*s.expr);
    llvm::BasicBlock* then_bb = block("if.then");
    llvm::BasicBlock* else_bb = s.has_else ? block("if.else") : nullptr;
    llvm::BasicBlock* end = block("if.end");
    b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : end);
    enter(then_bb);
    emit_block(s.body);
    if (open()) b_.CreateBr(end);
    if (else_bb) {
      enter(else_bb);
      emit_block(s.else_body);
      if (open()) b_.CreateBr(end);
    }
    if (has_preds(end)) {
      enter(end);
    } else {
      delete end;  // both branches left (return/break/continue): nothing follows
      b_.ClearInsertionPoint();
    }
  }

  void while_stmt(const Stmt& s) {
    llvm::BasicBlock* cond_bb = block("while.cond");
    llvm::BasicBlock* body = block("while.body");
    llvm::BasicBlock* next = block("while.next");  // continue: tick, then test again
    llvm::BasicBlock* end = block("while.end");
    b_.CreateBr(cond_bb);
    enter(cond_bb);
    b_.CreateCondBr(expr(*s.expr), body, end);
    st_->loops.push_back({end, next});
    enter(body);
    emit_block(s.body);
    if (open()) b_.CreateBr(next);
    st_->loops.pop_back();
    if (has_preds(next)) {
      enter(next);
      tick(s.loc, cond_bb);
    } else {
      delete next;
    }
    enter(end);
  }

  // for i in lo..hi: a hidden counter %i.iter takes lo, lo+1, ... hi-1 and is copied into i
  // at the top of each iteration, so assigning i in the body changes nothing.
  void for_stmt(const Stmt& s) {
    llvm::Value* lo = expr(*s.expr);
    llvm::Value* hi = expr(*s.expr2);
    if (llvm::isa<llvm::Instruction>(hi)) hi->setName(s.name + ".end");
    llvm::AllocaInst* iter = entry_alloca(b_.getInt64Ty(), s.name + ".iter");
    b_.CreateStore(lo, iter);
    llvm::BasicBlock* cond_bb = block("for.cond");
    llvm::BasicBlock* body = block("for.body");
    llvm::BasicBlock* next = block("for.next");
    llvm::BasicBlock* end = block("for.end");
    b_.CreateBr(cond_bb);
    enter(cond_bb);
    llvm::Value* i = b_.CreateLoad(b_.getInt64Ty(), iter, s.name);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi, "for.more"), body, end);
    enter(body);
    store_var(s.storage, s.slot, i);
    st_->loops.push_back({end, next});
    emit_block(s.body);
    if (open()) b_.CreateBr(next);
    st_->loops.pop_back();
    if (has_preds(next)) {
      enter(next);
      llvm::Value* cur = b_.CreateLoad(b_.getInt64Ty(), iter, s.name);
      // nsw is true here (cur < hi <= INT64_MAX) and lets the optimizer count the trips;
      // it is the only nsw codegen ever writes, and it is not on a value the program sees.
      b_.CreateStore(b_.CreateNSWAdd(cur, b_.getInt64(1), s.name + ".iter.next"), iter);
      tick(s.loc, cond_bb);
    } else {
      delete next;
    }
    enter(end);
  }

  llvm::AllocaInst* entry_alloca(llvm::Type* t, const std::string& name) {
    // In the entry block after the other allocas, so they stay together at the top.
    llvm::BasicBlock& entry = st_->f->getEntryBlock();
    auto it = entry.begin();
    while (it != entry.end() && llvm::isa<llvm::AllocaInst>(*it)) ++it;
    llvm::IRBuilder<> eb(&entry, it);
    return eb.CreateAlloca(t, nullptr, name);
  }

  // ---- [SECTION] expressions ----
  llvm::Value* expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return b_.getInt64(static_cast<uint64_t>(e.int_value));
      case ExprKind::FloatLit: return llvm::ConstantFP::get(b_.getDoubleTy(), e.float_value);
      case ExprKind::BoolLit: return b_.getInt1(e.bool_value);
      case ExprKind::StrLit: return nullptr;  // only ever a print argument
      // Tensor code never gets here: generate_unit() refuses it.
      case ExprKind::List: case ExprKind::Index: case ExprKind::Field: case ExprKind::Reduce:
      case ExprKind::Axis:
        return b_.getInt64(0);
      case ExprKind::Promote: return b_.CreateSIToFP(expr(*e.kids[0]), b_.getDoubleTy(), "tofloat");
      case ExprKind::Var:
        if (e.check_defined) {
          GlobalVars g = global(e.slot);
          llvm::Value* d = b_.CreateLoad(b_.getInt8Ty(), g.defined, e.text + ".defined");
          check(b_.CreateICmpEQ(d, b_.getInt8(0), e.text + ".undefined"),
                RtError::UndefinedVariable, e.loc, e.text + ".ok", e.text);
        }
        return load_var(e.storage, e.slot, e.text);
      case ExprKind::Unary: {
        llvm::Value* v = expr(*e.kids[0]);
        if (e.unary_op == UnaryOp::Not) return b_.CreateNot(v, "not");
        if (e.type == Type::Float) return b_.CreateFNeg(v, "neg");
        return b_.CreateNeg(v, "neg");  // sub 0, v: wraps, INT_MIN stays INT_MIN
      }
      case ExprKind::Binary:
        if (e.binary_op == BinaryOp::And || e.binary_op == BinaryOp::Or) return logic(e);
        {
          llvm::Value* a = expr(*e.kids[0]);
          llvm::Value* b = expr(*e.kids[1]);
          return arith(e.binary_op, e.operand_type, a, b, e.loc);
        }
      case ExprKind::Call: return e.builtin == Builtin::None ? call(e) : builtin(e);
    }
    return nullptr;
  }

  // a && b, a || b: b is evaluated only when it decides.
  llvm::Value* logic(const Expr& e) {
    bool is_and = e.binary_op == BinaryOp::And;
    const char* name = is_and ? "and" : "or";
    llvm::Value* a = expr(*e.kids[0]);
    llvm::BasicBlock* a_end = b_.GetInsertBlock();
    llvm::BasicBlock* rhs = block(llvm::Twine(name) + ".rhs");
    llvm::BasicBlock* end = block(llvm::Twine(name) + ".end");
    if (is_and) b_.CreateCondBr(a, rhs, end);
    else b_.CreateCondBr(a, end, rhs);
    enter(rhs);
    llvm::Value* bv = expr(*e.kids[1]);
    llvm::BasicBlock* b_end = b_.GetInsertBlock();
    b_.CreateBr(end);
    enter(end);
    llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), 2, name);
    phi->addIncoming(b_.getInt1(!is_and), a_end);
    phi->addIncoming(bv, b_end);
    return phi;
  }

  // One binary operator on two values of type t (lang/value.h's apply_binary, in IR).
  llvm::Value* arith(BinaryOp op, Type t, llvm::Value* a, llvm::Value* b, SourceLoc loc) {
    using P = llvm::CmpInst::Predicate;
    if (t == Type::Float) {
      switch (op) {
        case BinaryOp::Add: return b_.CreateFAdd(a, b, "add");
        case BinaryOp::Sub: return b_.CreateFSub(a, b, "sub");
        case BinaryOp::Mul: return b_.CreateFMul(a, b, "mul");
        case BinaryOp::Div: return b_.CreateFDiv(a, b, "div");  // IEEE: inf/nan, no error
        case BinaryOp::Mod: return b_.CreateFRem(a, b, "rem");  // C's fmod
        case BinaryOp::Eq: return b_.CreateFCmp(P::FCMP_OEQ, a, b, "eq");
        case BinaryOp::Ne: return b_.CreateFCmp(P::FCMP_UNE, a, b, "ne");  // nan != nan
        case BinaryOp::Lt: return b_.CreateFCmp(P::FCMP_OLT, a, b, "lt");
        case BinaryOp::Le: return b_.CreateFCmp(P::FCMP_OLE, a, b, "le");
        case BinaryOp::Gt: return b_.CreateFCmp(P::FCMP_OGT, a, b, "gt");
        case BinaryOp::Ge: return b_.CreateFCmp(P::FCMP_OGE, a, b, "ge");
        default: break;
      }
    } else {
      switch (op) {
        case BinaryOp::Add: return b_.CreateAdd(a, b, "add");  // no nsw/nuw: wraps
        case BinaryOp::Sub: return b_.CreateSub(a, b, "sub");
        case BinaryOp::Mul: return b_.CreateMul(a, b, "mul");
        case BinaryOp::Div: return divide(a, b, loc, true);
        case BinaryOp::Mod: return divide(a, b, loc, false);
        case BinaryOp::Eq: return b_.CreateICmp(P::ICMP_EQ, a, b, "eq");  // ints and bools
        case BinaryOp::Ne: return b_.CreateICmp(P::ICMP_NE, a, b, "ne");
        case BinaryOp::Lt: return b_.CreateICmp(P::ICMP_SLT, a, b, "lt");
        case BinaryOp::Le: return b_.CreateICmp(P::ICMP_SLE, a, b, "le");
        case BinaryOp::Gt: return b_.CreateICmp(P::ICMP_SGT, a, b, "gt");
        case BinaryOp::Ge: return b_.CreateICmp(P::ICMP_SGE, a, b, "ge");
        default: break;
      }
    }
    return llvm::PoisonValue::get(a->getType());
  }

  // a / b and a % b on ints: b == 0 is "division by zero"; b == -1 divides by 1 instead
  // (sdiv INT_MIN, -1 is undefined in LLVM, as in C) and negates for `/`: INT_MIN / -1 is
  // INT_MIN, INT_MIN % -1 is 0, with no trap.
  llvm::Value* divide(llvm::Value* a, llvm::Value* b, SourceLoc loc, bool div) {
    if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(b); k && k->isZero()) {
      b_.CreateBr(error_block(RtError::DivisionByZero, loc));
      enter(block("never"));  // what follows cannot run; it only has to be well formed
      return llvm::PoisonValue::get(a->getType());
    }
    check(b_.CreateICmpEQ(b, b_.getInt64(0), "is.zero"), RtError::DivisionByZero, loc,
          div ? "div.ok" : "rem.ok");
    llvm::Value* minus_one = b_.CreateICmpEQ(b, b_.getInt64(-1), "is.minus.one");
    llvm::Value* divisor = b_.CreateSelect(minus_one, b_.getInt64(1), b, "divisor");
    if (!div) return b_.CreateSRem(a, divisor, "rem");  // a % 1 == 0
    llvm::Value* q = b_.CreateSDiv(a, divisor, "quot");
    return b_.CreateSelect(minus_one, b_.CreateNeg(a, "neg"), q, "div");
  }

  // ---- [SECTION] calls ----
  llvm::Value* call(const Expr& e) {
    // One compare does both call checks: %depth >= descent_rt_call_limit, which is 10,000
    // unless the runtime watches every call (then 0). descent_rt_call_check ticks (interrupt,
    // step limit) and raises "stack overflow" at 10,000, in the walker's order; all before
    // the arguments are evaluated.
    llvm::Value* limit = load_watch(rt::kCallLimit, b_.getInt32Ty(), "call.limit");
    llvm::Value* slow_path = b_.CreateICmpSGE(st_->depth, limit, "call.watched");
    llvm::BasicBlock* slow = block("call.check");
    llvm::BasicBlock* ok = block("call.ok");
    b_.CreateCondBr(slow_path, slow, ok);
    enter(slow);
    b_.CreateCall(runtime(rt::kCallCheck),
                  {st_->depth, b_.getInt32(e.loc.line), b_.getInt32(e.loc.col)});
    b_.CreateBr(ok);
    enter(ok);
    add_site(RtError::StackOverflow, e.loc, "");
    std::vector<llvm::Value*> args;
    for (const auto& k : e.kids) args.push_back(expr(*k));
    args.push_back(st_->depth_next);
    llvm::Function* f = function(e.slot);
    bool is_void = f->getReturnType()->isVoidTy();
    return b_.CreateCall(f, args, is_void ? "" : e.text);
  }

  void print_value(llvm::Value* v, Type t) {
    switch (t) {
      case Type::Int: b_.CreateCall(runtime(rt::kPrintInt), {v}); break;
      case Type::Float: b_.CreateCall(runtime(rt::kPrintFloat), {v}); break;
      case Type::Bool:
        b_.CreateCall(runtime(rt::kPrintBool), {b_.CreateZExt(v, b_.getInt32Ty())});
        break;
      default: break;
    }
  }

  llvm::Value* math(llvm::Intrinsic::ID id, llvm::Value* v, const char* name) {
    return b_.CreateUnaryIntrinsic(id, v, nullptr, name);
  }

  llvm::Value* builtin(const Expr& e) {
    switch (e.builtin) {
      case Builtin::Print: {
        // Every argument first (one may print), then the line.
        std::vector<llvm::Value*> vals;
        for (const auto& k : e.kids) vals.push_back(k->kind == ExprKind::StrLit ? nullptr : expr(*k));
        for (size_t i = 0; i < e.kids.size(); ++i) {
          if (i) b_.CreateCall(runtime(rt::kPrintSpace));
          const Expr& k = *e.kids[i];
          if (k.kind == ExprKind::StrLit)
            b_.CreateCall(runtime(rt::kPrintStr), {b_.CreateGlobalStringPtr(k.text, ".str")});
          else
            print_value(vals[i], k.type);
        }
        b_.CreateCall(runtime(rt::kPrintEnd));
        return nullptr;
      }
      case Builtin::ToFloat: {
        llvm::Value* v = expr(*e.kids[0]);
        if (e.kids[0]->type == Type::Int) v = b_.CreateSIToFP(v, b_.getDoubleTy(), "tofloat");
        return v;
      }
      case Builtin::ToInt: {
        llvm::Value* v = expr(*e.kids[0]);
        if (e.kids[0]->type == Type::Int) return v;
        // In range iff -2^63 <= v < 2^63 (both exact doubles); nan fails both compares.
        llvm::Value* lo = b_.CreateFCmpOGE(v, llvm::ConstantFP::get(b_.getDoubleTy(), -9223372036854775808.0));
        llvm::Value* hi = b_.CreateFCmpOLT(v, llvm::ConstantFP::get(b_.getDoubleTy(), 9223372036854775808.0));
        llvm::Value* ok = b_.CreateAnd(lo, hi, "in.range");
        check(b_.CreateNot(ok, "out.of.range"), RtError::InvalidConversion, e.loc, "conv.ok");
        return b_.CreateFPToSI(v, b_.getInt64Ty(), "int");
      }
      case Builtin::Abs: {
        llvm::Value* v = expr(*e.kids[0]);
        if (e.type == Type::Int)  // abs(INT_MIN) wraps to INT_MIN: not poison
          return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v, b_.getFalse(), nullptr, "abs");
        return math(llvm::Intrinsic::fabs, v, "abs");
      }
      case Builtin::Min:
      case Builtin::Max: {
        // The first argument unless the second is strictly smaller (larger): a nan decides
        // the same way as on every engine (value.h's int_min/float_min).
        llvm::Value* a = expr(*e.kids[0]);
        llvm::Value* b = expr(*e.kids[1]);
        bool mn = e.builtin == Builtin::Min;
        const char* name = mn ? "min" : "max";
        llvm::Value* pick;
        if (e.type == Type::Float) pick = mn ? b_.CreateFCmpOLT(b, a) : b_.CreateFCmpOGT(b, a);
        else pick = mn ? b_.CreateICmpSLT(b, a) : b_.CreateICmpSGT(b, a);
        return b_.CreateSelect(pick, b, a, name);
      }
      case Builtin::Sqrt: return math(llvm::Intrinsic::sqrt, expr(*e.kids[0]), "sqrt");
      case Builtin::Exp: return math(llvm::Intrinsic::exp, expr(*e.kids[0]), "exp");
      case Builtin::Log: return math(llvm::Intrinsic::log, expr(*e.kids[0]), "log");
      case Builtin::Sin: return math(llvm::Intrinsic::sin, expr(*e.kids[0]), "sin");
      case Builtin::Cos: return math(llvm::Intrinsic::cos, expr(*e.kids[0]), "cos");
      case Builtin::Floor: return math(llvm::Intrinsic::floor, expr(*e.kids[0]), "floor");
      case Builtin::None: break;
      // Tensor builtins: tensor code never gets here (generate_unit() refuses it).
      case Builtin::Zeros: case Builtin::Ones: case Builtin::Rand: case Builtin::Arange:
      case Builtin::Load: case Builtin::Save: case Builtin::SumAll:
        break;
    }
    return nullptr;
  }

  const Program& prog_;
  const Module& mod_;
  const UnitSpec& spec_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  FnState* st_ = nullptr;
  std::map<int, llvm::Function*> functions_;
  std::map<int, GlobalVars> globals_;
  std::map<const FnDecl*, const SourceFile*> source_of_;
  std::map<std::string, llvm::Constant*> names_;  // undefined-variable names as C strings
};

// The data layout of `triple` ("" = this host), from a TargetMachine for it.
bool set_target(llvm::Module& m, const std::string& triple, std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
  });
  std::string t = triple.empty() ? llvm::sys::getProcessTriple() : triple;
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t, err);
  if (!target) {
    if (error) *error = "unknown target '" + t + "': " + err;
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(t, "generic", "", llvm::TargetOptions(), llvm::None));
  if (!tm) {
    if (error) *error = "no target machine for '" + t + "'";
    return false;
  }
  m.setTargetTriple(t);
  m.setDataLayout(tm->createDataLayout());
  return true;
}

}  // namespace

std::vector<int> called_functions(const Block& block) {
  std::vector<int> out;
  std::set<int> seen;
  collect_calls(block, out, seen);
  return out;
}

IRModule generate_unit(const Program& program, const Module& module, const UnitSpec& spec,
                       std::string* error) {
  // Tensor code runs on the ast engine only (the Session sends it there). Functions that use
  // tensors can only be called from tensor code, so leaving them out breaks no call.
  if (program.uses_tensors) {
    if (error) *error = "tensor code runs on the ast engine only";
    return IRModule{};
  }
  UnitSpec scalar = spec;
  scalar.define.clear();
  for (int f : spec.define) {
    const FnDecl* d = module.functions[static_cast<size_t>(f)].decl;
    if (!d || !d->uses_tensors) scalar.define.push_back(f);
  }
  IRModule ir;
  ir.context = std::make_unique<llvm::LLVMContext>();
  std::string name = program.source ? program.source->name() : "descent";
  ir.module = std::make_unique<llvm::Module>(name, *ir.context);
  if (!set_target(*ir.module, spec.triple, error)) return IRModule{};
  Lowering lower(program, module, scalar, *ir.module);
  lower.run();
  if (spec.runtime) define_standalone_runtime(*ir.module, lower.sites, spec.entry);
  // Declarations after the definitions, as clang prints them.
  std::vector<llvm::Function*> decls;
  for (llvm::Function& f : *ir.module)
    if (f.isDeclaration()) decls.push_back(&f);
  for (llvm::Function* f : decls) {
    f->removeFromParent();
    ir.module->getFunctionList().push_back(f);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*ir.module, &os)) {
    if (error) *error = "internal error: codegen produced invalid IR: " + os.str();
    return IRModule{};
  }
  return ir;
}

IRModule generate_ir(const Program& program, const Module& module, const IRGenOptions& options,
                     std::string* error) {
  UnitSpec spec;
  spec.entry = options.entry;
  spec.echo = options.echo;
  spec.triple = options.triple;
  // This input's functions, in source order.
  std::vector<int> define;
  std::set<int> seen;
  for (const auto& s : program.body)
    if (s->kind == StmtKind::FnDecl && s->fn->index >= 0 && seen.insert(s->fn->index).second)
      define.push_back(s->fn->index);
  if (options.standalone) {
    // ... and everything they and the top-level code can reach.
    std::vector<int> work = define;
    for (int f : called_functions(program.body)) work.push_back(f);
    for (size_t i = 0; i < work.size(); ++i) {
      int f = work[i];
      if (seen.insert(f).second) define.push_back(f);
      const FnDecl* d = module.functions[static_cast<size_t>(f)].decl;
      if (d)
        for (int g : called_functions(d->body))
          if (!seen.count(g)) work.push_back(g);
    }
    spec.define_globals = true;
    spec.runtime = true;
    spec.external_functions = false;
  }
  spec.define = define;
  return generate_unit(program, module, spec, error);
}

}  // namespace descent::llvmbe
