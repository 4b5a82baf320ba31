// Private to the CPU code generator (cpu/codegen*.cpp): nothing else includes this.
//
// Code generation is one Codegen object per PrimFunc; read codegen.cpp's opening comment
// first. Its methods are spread over files by what they translate:
//   codegen.cpp          the entry function; statements and blocks
//   codegen_loops.cpp    For loops by kind: serial, unrolled, vectorized, parallel
//   codegen_expr.cpp     values (Val) and expressions
//   codegen_buffers.cpp  functions and their frames, buffer storage, loads and stores
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "cpu/codegen.h"

namespace descent::cpu::codegen_internal {

using tir::Expr;
using tir::ExprKind;
using tir::ForKind;
using tir::Op;
using tir::ScalarType;
using tir::Stmt;
using tir::StmtKind;

// An integer or float value, with its shape across the lanes of a vectorized loop.
struct Val {
  enum Shape { Uniform, Affine, Vector };
  llvm::Value* v = nullptr;  // Uniform/Affine: a scalar (Affine: lane 0's value); Vector: <W x T>
  Shape shape = Uniform;
  int64_t stride = 0;        // Affine: lane l holds v + stride * l
};

inline Val uniform(llvm::Value* v) { return Val{v, Val::Uniform, 0}; }

// What a function being generated owns: where allocas go, what to free on the way out.
struct FnState {
  llvm::Function* fn = nullptr;
  llvm::Instruction* alloca_point = nullptr;  // allocas go before this (entry block)
  std::vector<llvm::Value*> heap;             // descent_alloc'd buffers to free at return
  std::map<int, llvm::Value*> storage;        // Local buffers' storage in this function
  llvm::Value* interrupt = nullptr;           // the interrupt flag's address (an i8, 0 or 1)
  llvm::BasicBlock* interrupted = nullptr;    // frees fs_.heap and returns; made on first use
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

  // The entry function and everything it calls into m; false (and *error) on a malformed
  // PrimFunc.
  bool generate(std::string* entry, std::vector<int>* temps, std::string* error);

 private:
  // codegen.cpp: the entry, statements and blocks
  void fail(const std::string& msg);
  void give_up_vector(const std::string& why);
  void note(const std::string& n);
  void emit(const Stmt& s);
  void emit_guarded(const Val& cond, const std::string& what, const std::function<void()>& body);
  void emit_block(const Stmt& s);

  // codegen_loops.cpp: loops by kind
  void emit_for(const Stmt& s);
  void emit_loop(const std::string& var, llvm::Value* lo, llvm::Value* hi, bool may_be_empty,
                 const std::function<void(llvm::Value*)>& body, bool poll = false);
  bool should_poll(const Stmt& s) const;
  void poll_interrupt();
  void emit_serial(const Stmt& s);
  void emit_unrolled(const Stmt& s, const std::string& var);
  void emit_vectorized(const Stmt& s);
  void emit_parallel(const Stmt& s);

  // codegen_expr.cpp: values and expressions
  llvm::Type* vec(llvm::Type* t);
  llvm::Value* widen(const Val& x);
  llvm::Value* lane(const Val& x, int64_t l);
  bool is_float(llvm::Value* v);
  bool is_bool(llvm::Value* v);
  llvm::Value* to_bool(llvm::Value* v);
  Val to_float(const Val& x);
  Val eval(const Expr& e);
  Val binary(Op op, Val a, Val b);
  Val affine_binary(Op op, const Val& a, const Val& b);
  llvm::Value* int_op(Op op, llvm::Value* x, llvm::Value* y);
  llvm::Value* float_op(Op op, llvm::Value* x, llvm::Value* y);
  Val unary(Op op, Val a);

  // codegen_buffers.cpp: functions, storage, loads and stores
  void set_attributes(llvm::Function* fn);
  void begin_function(llvm::Function* fn);
  void end_function();
  llvm::FunctionCallee runtime_free();
  int64_t elements(int buffer) const;
  llvm::Value* local_storage(int buffer, bool zero_at_entry);
  llvm::Value* buffer_base(int buffer);
  void make_alias_scopes();
  void tag(llvm::Instruction* inst, int buffer);
  Val flat_index(int buffer, const std::vector<tir::ExprPtr>& indices, const std::string& where);
  Val emit_load(const Expr& e);
  void emit_store(int buffer, const std::vector<tir::ExprPtr>& indices, const Expr& value,
                  const std::string& where);

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
  int loop_depth_ = 0;                      // Fors around the current point, in this function
  bool in_parallel_ = false;
  int parallel_count_ = 0;
  std::string vec_failure_;
  std::vector<std::string> notes_;
  std::string error_;
};

}  // namespace descent::cpu::codegen_internal
