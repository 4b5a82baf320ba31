// Values from a host language: what the Python module (python/) needs beyond the views the
// other front ends use. A notebook reads and sets globals, hands arrays in and takes results
// out, and calls a kernel directly, without writing a line of Descent for it. Everything the
// calls do (shape checks, schedules, graph passes, the device) is what a program's call does:
// the module holds no stage logic.
#include <algorithm>
#include <cctype>

#include "lang/tensor_checks.h"
#include "lang/text.h"
#include "pipeline/kernel_lookup.h"
#include "pipeline/pipeline.h"
#include "tensor/runtime.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"

namespace descent {

namespace {

// A name a program could assign: one identifier token that is no keyword.
bool is_identifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  const auto& kws = keywords();
  return std::find(kws.begin(), kws.end(), name) == kws.end();
}

}  // namespace

bool Session::global(const std::string& name, Value* value, Type* type) const {
  int g = module_.find_global(name);
  if (g < 0 || size_t(g) >= globals_.values.size() || !globals_.defined[size_t(g)]) return false;
  *value = globals_.values[size_t(g)];
  *type = module_.globals[size_t(g)].type;
  return true;
}

bool Session::set_global(const std::string& name, Value value, Type type, std::string* error) {
  if (!is_identifier(name)) {
    *error = "'" + name + "' is not a name a program can use (letters, digits and _, not a keyword)";
    return false;
  }
  int g = module_.find_global(name);
  if (g < 0) {
    // A function, kernel or builtin of that name would shadow or be shadowed: refused, as the
    // checker refuses `print = 1`.
    if (module_.find_function(name) >= 0 || module_.find_kernel(name) >= 0) {
      *error = "'" + name + "' is a function or kernel of this session, not a variable";
      return false;
    }
    std::vector<std::string> known = known_names();
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      *error = "'" + name + "' is a builtin, not a variable";
      return false;
    }
    g = int(module_.globals.size());
    module_.globals.push_back({name, type});
    module_.global_index[name] = g;
  } else if (module_.globals[size_t(g)].type != type) {
    if (module_.globals[size_t(g)].type == Type::Float && type == Type::Int) {
      value = Value::of_float(double(value.i));  // promoted, as `g = 3` promotes in a program
    } else {
      *error = "'" + name + "' is " + type_name(module_.globals[size_t(g)].type) +
               ", cannot assign " + type_name(type);
      return false;
    }
  }
  // The tensor this replaces (a host setting a tensor global in a loop), if any.
  int64_t replaced = -1;
  if (type == Type::Tensor && size_t(g) < globals_.values.size() && globals_.defined[size_t(g)])
    replaced = globals_.values[size_t(g)].i;
  // The globals the last input started from get it too: `:compare` and the debugger run that
  // input again from there, and must not lose what the host set since.
  for (GlobalStore* store : {&globals_, &globals_before_last_run_}) {
    if (store->values.size() < module_.globals.size()) store->resize(module_.globals.size());
    store->values[size_t(g)] = value;
    store->defined[size_t(g)] = 1;
  }
  // A host that replaces a tensor global in a loop frees the old ones as a program does.
  if (type == Type::Tensor) {
    std::vector<int64_t> pinned = tensor_handles(globals_before_last_run_);
    pinned.insert(pinned.end(), set_aside_tensors_.begin(), set_aside_tensors_.end());
    tensors_->set_pinned(std::move(pinned));
    // What it replaced goes now, with anything newer nobody holds, as a program's assignment
    // frees it; the whole table when the collector asks for a full pass anyway.
    if (tensors_->wants_collect()) tensors_->collect(tensor_handles(globals_), 0);
    else if (replaced >= 0) tensors_->collect(tensor_handles(globals_), replaced);
  }
  return true;
}

int64_t Session::add_tensor(tensor::Tensor t) { return tensors_->add_tensor(std::move(t), "host"); }

std::shared_ptr<const tensor::Tensor> Session::tensor_value(int64_t handle, std::string* error) {
  interrupt_.store(false);
  return tensors_->value(handle, error);
}

bool Session::call_kernel(const std::string& name, std::vector<tensor::Tensor> args,
                          std::string_view device, std::shared_ptr<const tensor::Tensor>* out,
                          std::string* error) {
  const KernelDecl* found = find_kernel_or_error(module_, name, error);
  if (!found) return false;
  const KernelDecl& decl = *found;
  // The declared shapes, checked as a program's call checks them, before anything runs.
  if (args.size() == decl.params.size()) {
    BoundDims bound;
    for (size_t i = 0; i < args.size(); ++i)
      if (!fits_declared(decl.params[i].tensor, args[i].shape, bound)) {
        *error = "kernel '" + name + "': argument " + std::to_string(i + 1) + " ('" +
                 decl.params[i].name + "') has shape " + tensor::shape_text(args[i].shape) +
                 ", expected " + declared_shape(decl.params[i].tensor);
        return false;
      }
  }
  std::string saved = tensors_->device();
  bool switched = !device.empty() && device != saved;
  if (switched && !tensors_->set_device(device, error)) return false;
  interrupt_.store(false);
  int64_t first = tensors_->next_handle();
  std::vector<int64_t> handles;
  for (auto& a : args) handles.push_back(tensors_->add_tensor(std::move(a), "host"));
  int64_t result = -1;
  bool ok = tensors_->call_kernel(decl, handles, &result, error);
  if (ok) {
    *out = tensors_->value(result, error);
    ok = *out != nullptr;
  }
  // Nothing of the call stays in the table but what globals and the pinned handles reach;
  // the result lives on in *out.
  tensors_->collect(tensor_handles(globals_), tensors_->wants_collect() ? 0 : first);
  if (switched) tensors_->set_device(saved, nullptr);
  return ok;
}

std::vector<std::pair<std::string, std::string>> Session::kernel_signatures() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& info : module_.kernels) {
    const KernelDecl& d = *info.decl;
    std::string sig = d.name + "(";
    for (size_t i = 0; i < d.params.size(); ++i)
      sig += (i ? ", " : "") + d.params[i].name + ": f32" + declared_shape(d.params[i].tensor);
    sig += ")";
    if (d.has_return_type) sig += " -> f32" + declared_shape(d.return_type);
    out.emplace_back(d.name, sig);
  }
  return out;
}

}  // namespace descent
