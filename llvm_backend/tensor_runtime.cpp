// The JIT's tensor helpers (runtime.h, rt::kShape ... rt::kTensorSafePoint): each does what
// the AST walker does for the same construct, through the TensorRuntime in RunOptions, with
// the walker's messages (lang/tensor_checks.h) and locations.
//
// A helper that fails longjmps to Runtime::run (descent_rt_error), over its own frame: so
// each extern "C" function only unpacks its arguments and calls an implementation that owns
// the strings and vectors; the implementation records the message in the RunState and
// returns false; the thin wrapper, holding nothing with a destructor, then raises.
#include <cstdarg>

#include "lang/tensor_api.h"
#include "lang/tensor_checks.h"
#include "llvm_backend/runtime_state.h"

namespace descent::llvmbe {

namespace {

// The loc table codegen writes: {input, line, col, line1, col1, ...}; part 0 is the
// expression itself, part k its k-th part (a dim, an index, an argument).
struct Site {
  const int32_t* table;
  int32_t line(int part) const { return table[1 + 2 * part]; }
  int32_t col(int part) const { return table[2 + 2 * part]; }
};

// Records a failure at part `part` of the site; the caller's wrapper raises it.
bool failed(Site site, int part, std::string message) {
  RunState& s = *current;
  s.kind = RtError::Tensor;
  s.message = std::move(message);
  s.err_input = site.table[0];
  s.err_line = site.line(part);
  s.err_col = site.col(part);
  s.err_name = nullptr;
  return false;
}

[[noreturn]] void raise() {
  RunState& s = *current;
  descent_rt_error(static_cast<int32_t>(RtError::Tensor), s.err_input, s.err_line, s.err_col,
                   nullptr);
}

// The runtime, or null after recording the walker's error for running without one.
TensorRuntime* runtime_at(Site site) {
  TensorRuntime* r = current->opts->tensors;
  if (!r) failed(site, 0, "tensor code needs a tensor runtime");
  return r;
}

const Module* module_at(Site site) {
  const Module* m = current->tensors ? current->tensors->module : nullptr;
  if (!m) failed(site, 0, "tensor code needs a tensor runtime");
  return m;
}

std::vector<int64_t> take(int64_t n, va_list ap) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (auto& v : out) v = va_arg(ap, int64_t);
  return out;
}

bool make_shape(Site site, std::vector<int64_t> dims, int64_t* out) {
  for (size_t k = 0; k < dims.size(); ++k) {
    std::string bad = check_shape_dim(dims[k]);
    if (!bad.empty()) return failed(site, static_cast<int>(k) + 1, bad);
  }
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  *out = r->make_shape(dims);
  return true;
}

bool shape_element(Site site, int64_t shape, int64_t index, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  const std::vector<int64_t>& dims = r->shape_dims(shape);
  std::string bad = check_shape_index(index, dims.size());
  if (!bad.empty()) return failed(site, 1, bad);
  *out = dims[static_cast<size_t>(index)];
  return true;
}

bool tensor_shape(Site site, int64_t t, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  *out = r->make_shape(r->tensor_dims(t));
  return true;
}

bool element(Site site, const char* name, int64_t t, std::vector<int64_t> index, double* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string message;
  int bad = check_element_index(r->tensor_dims(t), index, name, &message);
  if (bad >= 0) return failed(site, bad, message);
  if (!r->element(t, index, out, &message)) return failed(site, 0, message);
  return true;
}

bool kernel(Site site, int32_t which, std::vector<int64_t> args, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  const Module* m = r ? module_at(site) : nullptr;
  if (!m) return false;
  std::string message;
  const KernelDecl& k = *m->kernels[static_cast<size_t>(which)].decl;
  if (!r->call_kernel(k, args, out, &message)) return failed(site, 0, message);
  return true;
}

// zeros, ones, rand, arange: `shape` is a Shape handle, except for arange (n).
bool create(Site site, Builtin which, int64_t shape, int64_t seed, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::vector<int64_t> dims, args;
  if (which == Builtin::Arange) {
    std::string bad = check_arange(shape);
    if (!bad.empty()) return failed(site, 0, bad);
    dims = {shape};
  } else {
    dims = r->shape_dims(shape);
  }
  if (which == Builtin::Rand || which == Builtin::Full) args = {seed};  // Full: the value's bits
  std::string message;
  if (!r->create(which, dims, args, out, &message)) return failed(site, 0, message);
  return true;
}

bool load(Site site, const char* path, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string message;
  if (!r->load(path, out, &message)) return failed(site, 0, message);
  return true;
}

bool save(Site site, int64_t t, const char* path) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string message;
  if (!r->save(t, path, &message)) return failed(site, 0, message);
  return true;
}

bool sum_all(Site site, int64_t t, double* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string message;
  if (!r->sum_all(t, out, &message)) return failed(site, 0, message);
  return true;
}

bool mean(Site site, int64_t t, double* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string message;
  if (!r->mean(t, out, &message)) return failed(site, 0, message);
  return true;
}

// pairs: (kind, value) per argument, as ds_tensor_host_op documents.
bool host_op(Site site, int32_t which, std::vector<int64_t> pairs, int64_t* out) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::vector<int64_t> tensors, ints;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    if (pairs[i] == 0) tensors.push_back(pairs[i + 1]);
    else if (pairs[i] == 2) ints = r->shape_dims(pairs[i + 1]);
    else ints.push_back(pairs[i + 1]);
  }
  Builtin b = static_cast<Builtin>(which);
  if (b == Builtin::Argmax && ints.empty()) ints.push_back(-1);  // the last axis
  std::string message;
  if (!r->host_op(b, tensors, ints, out, &message)) return failed(site, 0, message);
  return true;
}

bool print_tensor(Site site, int64_t t) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  std::string text, message;
  if (!r->format(t, &text, &message)) return failed(site, 0, message);
  current->line += text;
  return true;
}

bool print_shape(Site site, int64_t s) {
  TensorRuntime* r = runtime_at(site);
  if (!r) return false;
  current->line += format_shape(r->shape_dims(s));
  return true;
}

bool check_args(Site site, int32_t fn, std::vector<int64_t> args) {
  TensorRuntime* r = runtime_at(site);
  const Module* m = r ? module_at(site) : nullptr;
  if (!m) return false;
  BoundDims bound;
  std::string message;
  int bad = check_tensor_args(*r, *m->functions[static_cast<size_t>(fn)].decl, args, &bound,
                              &message);
  return bad < 0 || failed(site, bad + 1, message);
}

bool check_result(Site site, int32_t fn, int64_t result, std::vector<int64_t> args) {
  TensorRuntime* r = runtime_at(site);
  const Module* m = r ? module_at(site) : nullptr;
  if (!m) return false;
  const FnDecl& decl = *m->functions[static_cast<size_t>(fn)].decl;
  BoundDims bound;
  std::string message;
  check_tensor_args(*r, decl, args, &bound, &message);  // they fit: this only binds the dims
  return check_tensor_result(*r, decl, result, std::move(bound), &message) ||
         failed(site, 0, message);
}

// Between two statements every tensor held is in a global or an open frame's slots, and a
// temporary an enclosing call holds mid-expression is older than the innermost frame.
void collect(RunState& s) {
  std::vector<int64_t> roots;
  if (s.tensors && s.tensors->global_roots) s.tensors->global_roots(roots);
  for (size_t i = 0; i < s.depth; ++i)
    roots.insert(roots.end(), s.frames[i].slots.begin(), s.frames[i].slots.end());
  s.opts->tensors->collect(roots, s.depth ? s.frames[s.depth - 1].first_handle : 0);
}

}  // namespace

void collect_at_end(RunState& s) {
  if (s.opts->tensors) collect(s);
}

// The wrappers. Variadic ones hand their va_list to the implementation (which copies the
// values into a vector) and end it before any raise.
#define DS_VARIADIC(last, call)  \
  va_list ap;                    \
  va_start(ap, last);            \
  bool ok = (call);              \
  va_end(ap);                    \
  if (!ok) raise()

extern "C" {

int64_t ds_shape(const int32_t* loc, int64_t n, ...) {
  int64_t out = 0;
  DS_VARIADIC(n, make_shape({loc}, take(n, ap), &out));
  return out;
}

int64_t ds_shape_element(const int32_t* loc, int64_t shape, int64_t index) {
  int64_t out = 0;
  if (!shape_element({loc}, shape, index, &out)) raise();
  return out;
}

int64_t ds_tensor_shape(const int32_t* loc, int64_t t) {
  int64_t out = 0;
  if (!tensor_shape({loc}, t, &out)) raise();
  return out;
}

double ds_tensor_element(const int32_t* loc, const char* name, int64_t t, int64_t n, ...) {
  double out = 0;
  DS_VARIADIC(n, element({loc}, name, t, take(n, ap), &out));
  return out;
}

int64_t ds_tensor_kernel(const int32_t* loc, int32_t which, int64_t n, ...) {
  int64_t out = 0;
  DS_VARIADIC(n, kernel({loc}, which, take(n, ap), &out));
  return out;
}

int64_t ds_tensor_zeros(const int32_t* loc, int64_t shape) {
  int64_t out = 0;
  if (!create({loc}, Builtin::Zeros, shape, 0, &out)) raise();
  return out;
}

int64_t ds_tensor_ones(const int32_t* loc, int64_t shape) {
  int64_t out = 0;
  if (!create({loc}, Builtin::Ones, shape, 0, &out)) raise();
  return out;
}

int64_t ds_tensor_rand(const int32_t* loc, int64_t shape, int64_t seed) {
  int64_t out = 0;
  if (!create({loc}, Builtin::Rand, shape, seed, &out)) raise();
  return out;
}

int64_t ds_tensor_full(const int32_t* loc, int64_t shape, double value) {
  int64_t out = 0;
  if (!create({loc}, Builtin::Full, shape, full_value_bits(value), &out)) raise();
  return out;
}

int64_t ds_tensor_arange(const int32_t* loc, int64_t n) {
  int64_t out = 0;
  if (!create({loc}, Builtin::Arange, n, 0, &out)) raise();
  return out;
}

int64_t ds_tensor_load(const int32_t* loc, const char* path) {
  int64_t out = 0;
  if (!load({loc}, path, &out)) raise();
  return out;
}

void ds_tensor_save(const int32_t* loc, int64_t t, const char* path) {
  if (!save({loc}, t, path)) raise();
}

double ds_tensor_sum_all(const int32_t* loc, int64_t t) {
  double out = 0;
  if (!sum_all({loc}, t, &out)) raise();
  return out;
}

double ds_tensor_mean(const int32_t* loc, int64_t t) {
  double out = 0;
  if (!mean({loc}, t, &out)) raise();
  return out;
}

int64_t ds_tensor_host_op(const int32_t* loc, int32_t which, int64_t n, ...) {
  int64_t out = 0;
  DS_VARIADIC(n, host_op({loc}, which, take(2 * n, ap), &out));
  return out;
}

void ds_print_tensor(const int32_t* loc, int64_t t) {
  if (!print_tensor({loc}, t)) raise();
}

void ds_print_shape(const int32_t* loc, int64_t s) {
  if (!print_shape({loc}, s)) raise();
}

void ds_tensor_check_args(const int32_t* loc, int32_t fn, int64_t n, ...) {
  DS_VARIADIC(n, check_args({loc}, fn, take(n, ap)));
}

void ds_tensor_check_result(const int32_t* loc, int32_t fn, int64_t result, int64_t n, ...) {
  DS_VARIADIC(n, check_result({loc}, fn, result, take(n, ap)));
}

int64_t* ds_tensor_frame_enter(int64_t slots) {
  RunState& s = *current;
  if (s.frames.size() <= s.depth) s.frames.emplace_back();
  RunState::Frame& f = s.frames[s.depth++];
  f.slots.assign(static_cast<size_t>(slots), 0);
  f.first_handle = s.opts->tensors ? s.opts->tensors->next_handle() : 0;
  return f.slots.data();
}

void ds_tensor_frame_leave() { --current->depth; }

void ds_tensor_safe_point() {
  RunState& s = *current;
  if (s.opts->tensors && s.opts->tensors->wants_collect()) collect(s);
}

}  // extern "C"

#undef DS_VARIADIC

std::vector<std::pair<std::string, void*>> tensor_symbols() {
  auto at = [](auto* f) { return reinterpret_cast<void*>(f); };
  return {
      {rt::kShape, at(&ds_shape)},
      {rt::kShapeElement, at(&ds_shape_element)},
      {rt::kTensorShape, at(&ds_tensor_shape)},
      {rt::kTensorElement, at(&ds_tensor_element)},
      {rt::kTensorKernel, at(&ds_tensor_kernel)},
      {rt::kTensorZeros, at(&ds_tensor_zeros)},
      {rt::kTensorOnes, at(&ds_tensor_ones)},
      {rt::kTensorRand, at(&ds_tensor_rand)},
      {rt::kTensorFull, at(&ds_tensor_full)},
      {rt::kTensorArange, at(&ds_tensor_arange)},
      {rt::kTensorLoad, at(&ds_tensor_load)},
      {rt::kTensorSave, at(&ds_tensor_save)},
      {rt::kTensorSumAll, at(&ds_tensor_sum_all)},
      {rt::kTensorMean, at(&ds_tensor_mean)},
      {rt::kTensorHostOp, at(&ds_tensor_host_op)},
      {rt::kPrintTensor, at(&ds_print_tensor)},
      {rt::kPrintShape, at(&ds_print_shape)},
      {rt::kTensorCheckArgs, at(&ds_tensor_check_args)},
      {rt::kTensorCheckResult, at(&ds_tensor_check_result)},
      {rt::kTensorFrameEnter, at(&ds_tensor_frame_enter)},
      {rt::kTensorFrameLeave, at(&ds_tensor_frame_leave)},
      {rt::kTensorSafePoint, at(&ds_tensor_safe_point)},
  };
}

}  // namespace descent::llvmbe
