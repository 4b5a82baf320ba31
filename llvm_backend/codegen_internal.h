// Private to LLVM code generation (llvm_backend/codegen*.cpp): nothing else includes this.
//
// One Lowering object turns one unit (a checked Program and what the UnitSpec asks for) into
// an llvm::Module. Its methods are spread over files by what they translate:
//   codegen.cpp            generate_unit / generate_ir: the entry points, and the target
//   codegen_functions.cpp  types, names, variables, functions and their frames
//   codegen_stmt.cpp       statements and control flow
//   codegen_expr.cpp       expressions, calls and builtins
//   codegen_runtime.cpp    the runtime's functions, runtime-error checks, loop ticks
//   codegen_tensor.cpp     tensor code: calls to the runtime's tensor helpers, the collector
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "llvm_backend/codegen.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe::codegen_internal {

// The user functions a block calls directly, each once, in first-call order (codegen.cpp).
void collect_calls(const Block& b, std::vector<int>& out, std::set<int>& seen);

// One function being lowered.
struct FnState {
  llvm::Function* f = nullptr;
  const FnDecl* decl = nullptr;  // null: top-level code
  const SourceFile* source = nullptr;
  // By slot: where each local lives (an alloca, or a slot of the tensor frame) and its type.
  std::vector<llvm::Value*> locals;
  std::vector<llvm::Type*> local_types;
  // Functions that use tensors: the frame opened on entry (rt::kTensorFrameEnter), closed
  // before every return. Null elsewhere (and in top-level code, which needs none).
  llvm::Value* tensor_frame = nullptr;
  bool safe_points = false;  // a collector safe point after every statement
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
    if (spec.debug_info) start_debug_info();
  }

  // Defines the functions spec.define names, then the entry (codegen_functions.cpp).
  void run();

  std::vector<ErrorSite> sites;

 private:
  struct GlobalVars {
    llvm::GlobalVariable* value;
    llvm::GlobalVariable* defined;
  };

  // codegen_functions.cpp: types and names, blocks, variables, functions
  llvm::Type* type(Type t);
  llvm::Type* stored_type(Type t);
  void index_sources(const Program& p);
  llvm::FunctionType* fn_type(const FunctionInfo& info);
  llvm::Function* function(int index);
  llvm::BasicBlock* block(const llvm::Twine& name);
  void enter(llvm::BasicBlock* bb);
  bool open();
  bool has_preds(llvm::BasicBlock* bb);
  GlobalVars global(int slot);
  llvm::Value* load_var(Storage storage, int slot, const std::string& name);
  void store_var(Storage storage, int slot, llvm::Value* v);
  void name_assigned(llvm::Value* v, const std::string& name);
  void emit_function(int index);
  void emit_entry();
  // Top-level variables kept in registers (lang/promotable.h): each an alloca that mem2reg
  // turns into SSA values, loaded from its global at entry and stored back before every
  // call that may not return or may look (errors, ticks, calls, tensor helpers) and at the end.
  void promote_globals();
  void write_back_promoted(llvm::Function* f);
  void finish();
  // Debug locations (UnitSpec::debug_info): the compile unit, a function's DISubprogram,
  // and the builder's current location; all do nothing without debug info.
  void start_debug_info();
  void describe_function(llvm::Function* f, const std::string& name, SourceLoc loc);
  llvm::DILocation* at(SourceLoc loc);
  void locate(SourceLoc loc);

  // codegen_runtime.cpp: the runtime, runtime errors and ticks
  llvm::FunctionCallee runtime(const char* name);
  llvm::LoadInst* load_watch(const char* name, llvm::Type* t, const char* value_name);
  llvm::BasicBlock* error_block(RtError kind, SourceLoc loc, const std::string& name = "");
  void add_site(RtError kind, SourceLoc loc, const std::string& name);
  uint32_t input_of(SourceLoc loc) const;
  void check(llvm::Value* fail, RtError kind, SourceLoc loc, const llvm::Twine& ok_name,
             const std::string& name = "");
  void tick(SourceLoc loc, llvm::BasicBlock* next);
  void stack_guard(SourceLoc loc);

  // codegen_tensor.cpp: tensor code
  llvm::FunctionCallee tensor_helper(const char* name);
  llvm::Constant* site(SourceLoc loc, const std::vector<SourceLoc>& parts = {});
  llvm::Value* tensor_expr(const Expr& e);
  llvm::Value* kernel_call(const Expr& e);
  llvm::Value* tensor_builtin(const Expr& e);
  void check_tensor_args(const Expr& call, const std::vector<llvm::Value*>& args);
  void leave_function(const Stmt* ret, llvm::Value* v);
  void open_tensor_frame(const FnDecl& fn);
  void safe_point();

  // codegen_stmt.cpp: statements and control flow
  void emit_block(const Block& block);
  void stmt(const Stmt& s);
  void assign(const Stmt& s);
  void if_stmt(const Stmt& s);
  void while_stmt(const Stmt& s);
  void for_stmt(const Stmt& s);
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const std::string& name);

  // codegen_expr.cpp: expressions, calls and builtins
  llvm::Value* expr(const Expr& e);
  llvm::Value* logic(const Expr& e);
  llvm::Value* arith(BinaryOp op, Type t, llvm::Value* a, llvm::Value* b, SourceLoc loc);
  llvm::Value* divide(llvm::Value* a, llvm::Value* b, SourceLoc loc, bool div);
  llvm::Value* call(const Expr& e);
  void print_value(llvm::Value* v, Type t, SourceLoc loc);
  llvm::Value* math(llvm::Intrinsic::ID id, llvm::Value* v, const char* name);
  llvm::Value* builtin(const Expr& e);

  const Program& prog_;
  const Module& mod_;
  const UnitSpec& spec_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  FnState* st_ = nullptr;
  std::map<int, llvm::Function*> functions_;
  std::map<int, GlobalVars> globals_;
  std::map<int, llvm::AllocaInst*> promoted_;  // top-level code: global slot -> its alloca
  std::map<const FnDecl*, const SourceFile*> source_of_;
  std::map<std::string, llvm::Constant*> names_;  // undefined-variable names as C strings
  std::map<std::vector<int32_t>, llvm::Constant*> sites_;  // tensor helpers' loc tables
  std::unique_ptr<llvm::DIBuilder> di_;  // null without debug info
  llvm::DICompileUnit* cu_ = nullptr;
};

}  // namespace descent::llvmbe::codegen_internal
