// LLVM IR from the AST, statements and control flow: assignments, if, while, for,
// break, continue and return.
//
// Blocks are created detached and appended when code is emitted into them (enter()), so
// the function reads in source order. After a return, break or continue the insert block
// is terminated, and what follows in the same Descent block is never emitted (open()).
// Every loop back-edge goes through tick(), which lets the runtime interrupt the program.
#include "llvm_backend/codegen_internal.h"

namespace descent::llvmbe::codegen_internal {

void Lowering::emit_block(const Block& block) {
  for (const auto& s : block) {
    if (!open()) return;  // after return/break/continue: never runs
    stmt(*s);
    safe_point();
  }
}

void Lowering::stmt(const Stmt& s) {
  locate(s.loc);
  switch (s.kind) {
    case StmtKind::Expr: expr(*s.expr); return;
    case StmtKind::Assign: assign(s); return;
    case StmtKind::If: if_stmt(s); return;
    case StmtKind::While: while_stmt(s); return;
    case StmtKind::For: for_stmt(s); return;
    case StmtKind::Break: b_.CreateBr(st_->loops.back().first); return;
    case StmtKind::Continue: b_.CreateBr(st_->loops.back().second); return;
    case StmtKind::Return: leave_function(&s, s.expr ? expr(*s.expr) : nullptr); return;
    case StmtKind::FnDecl: return;
    case StmtKind::KernelDecl: return;  // kernels run when called (rt::kTensorKernel)
  }
}

void Lowering::assign(const Stmt& s) {
  // As the walker: the right side first, then (x op= v) the variable's current value.
  llvm::Value* v = expr(*s.expr);
  if (s.has_op) {
    llvm::Value* cur = load_var(s.storage, s.slot, s.name);
    v = arith(s.assign_op, s.var_type, cur, v, s.op_loc);
  }
  name_assigned(v, s.name);
  store_var(s.storage, s.slot, v);
}

void Lowering::if_stmt(const Stmt& s) {
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

void Lowering::while_stmt(const Stmt& s) {
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
void Lowering::for_stmt(const Stmt& s) {
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

llvm::AllocaInst* Lowering::entry_alloca(llvm::Type* t, const std::string& name) {
  // In the entry block after the other allocas, so they stay together at the top.
  llvm::BasicBlock& entry = st_->f->getEntryBlock();
  auto it = entry.begin();
  while (it != entry.end() && llvm::isa<llvm::AllocaInst>(*it)) ++it;
  llvm::IRBuilder<> eb(&entry, it);
  return eb.CreateAlloca(t, nullptr, name);
}

}  // namespace descent::llvmbe::codegen_internal
