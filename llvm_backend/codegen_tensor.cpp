// LLVM IR from the AST, tensor code: Tensor and Shape values are i64 handles into the
// TensorRuntime, and every tensor operation is one call to a runtime helper (runtime.h,
// rt::kShape ...), which does what the walker does, with its messages and locations:
//
//   s = [1, 784]          %s.next = call i64 (ptr, i64, ...) @ds_shape(ptr @loc.1.5, i64 2, i64 1, i64 784)
//   h = relu(x)           %relu = call i64 (ptr, i32, i64, ...) @ds_tensor_kernel(ptr @loc.2.5, i32 3, i64 1, i64 %x)
//   t[i, j]               call double (ptr, ptr, i64, i64, ...) @ds_tensor_element(...)
//   print(t)              call void @ds_print_tensor(ptr @loc.3.7, i64 %t)
//
// @loc.L.C is a constant {input, line, col, ...} table: the expression's place, then its
// parts' (runtime.h). The JIT alone runs this code; `descent build` refuses it.
//
// Collection (lang/tensor_api.h): the runtime must see every handle a live variable holds.
// Globals it reads itself; a function that uses tensors keeps its tensor locals in a frame
// the runtime gives it (ds_tensor_frame_enter), not in registers, and both kinds of code call
// ds_tensor_safe_point after every statement, where the walker has its safe points.
#include "llvm_backend/codegen_internal.h"
#include "llvm_backend/runtime.h"

namespace descent::llvmbe::codegen_internal {

llvm::FunctionCallee Lowering::tensor_helper(const char* name) {
  if (llvm::Function* f = m_.getFunction(name)) return f;
  auto* i32 = b_.getInt32Ty();
  auto* i64 = b_.getInt64Ty();
  auto* f64 = b_.getDoubleTy();
  auto* ptr = b_.getPtrTy();
  auto* void_ = b_.getVoidTy();
  struct Sig {
    const char* name;
    llvm::Type* ret;
    std::vector<llvm::Type*> params;
    bool variadic;
  };
  const Sig sigs[] = {
      {rt::kShape, i64, {ptr, i64}, true},
      {rt::kShapeElement, i64, {ptr, i64, i64}, false},
      {rt::kTensorShape, i64, {ptr, i64}, false},
      {rt::kTensorElement, f64, {ptr, ptr, i64, i64}, true},
      {rt::kTensorKernel, i64, {ptr, i32, i64}, true},
      {rt::kTensorZeros, i64, {ptr, i64}, false},
      {rt::kTensorOnes, i64, {ptr, i64}, false},
      {rt::kTensorRand, i64, {ptr, i64, i64}, false},
      {rt::kTensorFull, i64, {ptr, i64, f64}, false},
      {rt::kTensorArange, i64, {ptr, i64}, false},
      {rt::kTensorLoad, i64, {ptr, ptr}, false},
      {rt::kTensorSave, void_, {ptr, i64, ptr}, false},
      {rt::kTensorSumAll, f64, {ptr, i64}, false},
      {rt::kTensorMean, f64, {ptr, i64}, false},
      {rt::kTensorHostOp, i64, {ptr, i32, i64}, true},
      {rt::kPrintTensor, void_, {ptr, i64}, false},
      {rt::kPrintShape, void_, {ptr, i64}, false},
      {rt::kTensorCheckArgs, void_, {ptr, i32, i64}, true},
      {rt::kTensorCheckResult, void_, {ptr, i32, i64, i64}, true},
      {rt::kTensorFrameEnter, ptr, {i64}, false},
      {rt::kTensorFrameLeave, void_, {}, false},
      {rt::kTensorSafePoint, void_, {}, false},
  };
  for (const Sig& s : sigs) {
    if (std::string_view(s.name) != name) continue;
    auto* f = llvm::Function::Create(llvm::FunctionType::get(s.ret, s.params, s.variadic),
                                     llvm::Function::ExternalLinkage, name, m_);
    // No other attribute: a helper may fail (longjmp), and the collector's reads the frame
    // slots, so nothing may be kept from memory across these calls.
    f->addFnAttr(llvm::Attribute::NoUnwind);
    return f;
  }
  return nullptr;  // not a helper: a bug in codegen, which the verifier reports
}

// The constant {input, line, col, line1, col1, ...} a helper blames when it fails.
llvm::Constant* Lowering::site(SourceLoc loc, const std::vector<SourceLoc>& parts) {
  std::vector<int32_t> table = {static_cast<int32_t>(input_of(loc)),
                                static_cast<int32_t>(loc.line), static_cast<int32_t>(loc.col)};
  for (const SourceLoc& p : parts) {
    table.push_back(static_cast<int32_t>(p.line));
    table.push_back(static_cast<int32_t>(p.col));
  }
  llvm::Constant*& g = sites_[table];
  if (g) return g;
  std::vector<llvm::Constant*> items;
  for (int32_t v : table) items.push_back(b_.getInt32(static_cast<uint32_t>(v)));
  auto* type = llvm::ArrayType::get(b_.getInt32Ty(), items.size());
  auto* var = new llvm::GlobalVariable(m_, type, true, llvm::GlobalValue::PrivateLinkage,
                                       llvm::ConstantArray::get(type, items),
                                       "loc." + std::to_string(loc.line) + "." +
                                           std::to_string(loc.col));
  var->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g = var;
  return g;
}

namespace {
std::vector<SourceLoc> kid_locs(const Expr& e) {
  std::vector<SourceLoc> out;
  for (const auto& k : e.kids) out.push_back(k->loc);
  return out;
}
}  // namespace

// [a, b], t[i, j] / s[i], t.shape.
llvm::Value* Lowering::tensor_expr(const Expr& e) {
  if (e.kind == ExprKind::List) {
    std::vector<llvm::Value*> args = {site(e.loc, kid_locs(e)), b_.getInt64(e.kids.size())};
    for (const auto& k : e.kids) args.push_back(expr(*k));
    return b_.CreateCall(tensor_helper(rt::kShape), args, "shape");
  }
  if (e.kind == ExprKind::Field) {
    llvm::Value* t = expr(*e.kids[0]);
    return b_.CreateCall(tensor_helper(rt::kTensorShape), {site(e.loc), t}, "shape");
  }
  // Index: the variable first (and its undefined check), then the indices, as the walker.
  if (e.check_defined) {
    GlobalVars g = global(e.slot);
    llvm::Value* d = b_.CreateLoad(b_.getInt8Ty(), g.defined, e.text + ".defined");
    check(b_.CreateICmpEQ(d, b_.getInt8(0), e.text + ".undefined"), RtError::UndefinedVariable,
          e.loc, e.text + ".ok", e.text);
  }
  llvm::Value* h = load_var(e.storage, e.slot, e.text);
  std::vector<llvm::Value*> index;
  for (const auto& k : e.kids) index.push_back(expr(*k));
  if (e.type == Type::Int)
    return b_.CreateCall(tensor_helper(rt::kShapeElement), {site(e.loc, kid_locs(e)), h, index[0]},
                         e.text + ".dim");
  llvm::Constant*& name = names_[e.text];
  if (!name) name = b_.CreateGlobalStringPtr(e.text, "name." + e.text, 0, &m_);
  std::vector<llvm::Value*> args = {site(e.loc, kid_locs(e)), name, h, b_.getInt64(index.size())};
  args.insert(args.end(), index.begin(), index.end());
  return b_.CreateCall(tensor_helper(rt::kTensorElement), args, e.text + ".elem");
}

// A kernel call ticks first (a call, for interrupts and step limits), then adds its node.
llvm::Value* Lowering::kernel_call(const Expr& e) {
  llvm::BasicBlock* ok = block("kernel.call");
  tick(e.loc, ok);
  enter(ok);
  std::vector<llvm::Value*> args = {site(e.loc), b_.getInt32(static_cast<uint32_t>(e.kernel)),
                                    b_.getInt64(e.kids.size())};
  for (const auto& k : e.kids) args.push_back(expr(*k));
  return b_.CreateCall(tensor_helper(rt::kTensorKernel), args, e.text);
}

llvm::Value* Lowering::tensor_builtin(const Expr& e) {
  auto path = [&](const Expr& k) { return b_.CreateGlobalStringPtr(k.text, "path"); };
  switch (e.builtin) {
    case Builtin::Zeros:
    case Builtin::Ones: {
      llvm::Value* shape = expr(*e.kids[0]);
      const char* f = e.builtin == Builtin::Zeros ? rt::kTensorZeros : rt::kTensorOnes;
      return b_.CreateCall(tensor_helper(f), {site(e.loc), shape},
                           e.builtin == Builtin::Zeros ? "zeros" : "ones");
    }
    case Builtin::Rand: {
      llvm::Value* shape = expr(*e.kids[0]);
      llvm::Value* seed = expr(*e.kids[1]);
      return b_.CreateCall(tensor_helper(rt::kTensorRand), {site(e.loc), shape, seed}, "rand");
    }
    case Builtin::Full: {
      llvm::Value* shape = expr(*e.kids[0]);
      llvm::Value* value = expr(*e.kids[1]);
      return b_.CreateCall(tensor_helper(rt::kTensorFull), {site(e.loc), shape, value}, "full");
    }
    case Builtin::Arange:
      return b_.CreateCall(tensor_helper(rt::kTensorArange), {site(e.loc), expr(*e.kids[0])},
                           "arange");
    case Builtin::Load:
      return b_.CreateCall(tensor_helper(rt::kTensorLoad), {site(e.loc), path(*e.kids[0])}, "load");
    case Builtin::Save: {
      llvm::Value* t = expr(*e.kids[0]);
      b_.CreateCall(tensor_helper(rt::kTensorSave), {site(e.loc), t, path(*e.kids[1])});
      return nullptr;
    }
    case Builtin::Argmax: case Builtin::Reshape: case Builtin::Flatten: case Builtin::Rows:
    case Builtin::Eq: case Builtin::Grad: case Builtin::Param: {
      std::vector<llvm::Value*> args = {site(e.loc), b_.getInt32(static_cast<uint32_t>(e.builtin)),
                                        b_.getInt64(e.kids.size())};
      for (const auto& k : e.kids) {
        int kind = k->type == Type::Tensor ? 0 : k->type == Type::Shape ? 2 : 1;
        args.push_back(b_.getInt64(kind));
        args.push_back(expr(*k));
      }
      return b_.CreateCall(tensor_helper(rt::kTensorHostOp), args, builtin_name(e.builtin));
    }
    case Builtin::Mean:
      return b_.CreateCall(tensor_helper(rt::kTensorMean), {site(e.loc), expr(*e.kids[0])}, "mean");
    default:  // sum_all
      return b_.CreateCall(tensor_helper(rt::kTensorSumAll), {site(e.loc), expr(*e.kids[0])},
                           "sum");
  }
}

// fn f(x: f32[1, 784]) called: the tensor arguments against the declared shapes, after all
// arguments are evaluated and before the call (the walker's check_tensor_params).
void Lowering::check_tensor_args(const Expr& call, const std::vector<llvm::Value*>& args) {
  const FnDecl* fn = mod_.functions[static_cast<size_t>(call.slot)].decl;
  if (!fn) return;
  bool any = false;
  for (const Param& p : fn->params) any = any || p.type == Type::Tensor;
  if (!any) return;
  std::vector<llvm::Value*> a = {site(call.loc, kid_locs(call)),
                                 b_.getInt32(static_cast<uint32_t>(call.slot)),
                                 b_.getInt64(fn->params.size())};
  for (size_t i = 0; i < fn->params.size() && i < args.size(); ++i)
    a.push_back(fn->params[i].type == Type::Tensor ? args[i] : b_.getInt64(0));
  b_.CreateCall(tensor_helper(rt::kTensorCheckArgs), a);
}

// return v (ret: the statement; null when control falls off the end of a void function):
// a tensor result is checked against the declared shape, then the tensor frame closes.
void Lowering::leave_function(const Stmt* ret, llvm::Value* v) {
  const FnDecl* fn = st_->decl;
  if (fn && v && fn->declared_return == Type::Tensor) {
    SourceLoc where = ret->expr ? ret->expr->loc : ret->loc;
    std::vector<llvm::Value*> a = {site(where), b_.getInt32(static_cast<uint32_t>(fn->index)), v,
                                   b_.getInt64(fn->params.size())};
    for (size_t i = 0; i < fn->params.size(); ++i)
      a.push_back(fn->params[i].type == Type::Tensor
                      ? static_cast<llvm::Value*>(st_->f->getArg(static_cast<unsigned>(i)))
                      : b_.getInt64(0));
    b_.CreateCall(tensor_helper(rt::kTensorCheckResult), a);
  }
  if (st_->tensor_frame) b_.CreateCall(tensor_helper(rt::kTensorFrameLeave));
  if (v) b_.CreateRet(v);
  else b_.CreateRetVoid();
}

// On entry of a function that uses tensors: its tensor locals move into a frame the
// runtime sees, and its statements end in safe points. Called after the other locals'
// allocas, before the parameters are stored.
void Lowering::open_tensor_frame(const FnDecl& fn) {
  std::vector<size_t> tensors;
  for (size_t i = 0; i < fn.local_types.size() && i < st_->locals.size(); ++i)
    if (fn.local_types[i] == Type::Tensor) tensors.push_back(i);
  st_->tensor_frame = b_.CreateCall(tensor_helper(rt::kTensorFrameEnter),
                                    {b_.getInt64(tensors.size())}, "tensor.frame");
  size_t nparams = fn.params.size();
  for (size_t k = 0; k < tensors.size(); ++k) {
    size_t i = tensors[k];
    std::string name = fn.local_names[i] + (i < nparams ? ".addr" : "");
    st_->locals[i] = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), st_->tensor_frame, k, name);
  }
  st_->safe_points = true;
}

void Lowering::safe_point() {
  if (st_->safe_points && open()) b_.CreateCall(tensor_helper(rt::kTensorSafePoint));
}

}  // namespace descent::llvmbe::codegen_internal
