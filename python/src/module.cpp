// descent._descent: the C++ half of the Python module (pybind11). It is one more front end
// over the Session, like the REPL: it converts arguments and results between Python and the
// Session's API and turns failures into exceptions. Every view, check, run and schedule is
// the Session's; the Python half (python/descent/) adds the notebook's display.
//
// Three things here are not plain conversions:
//   * Ctrl-C. While C++ runs, Python's SIGINT handler only makes a note for later, so a
//     notebook's stop button would wait for the program to finish. For the length of each
//     call a handler of ours sets the Session's interrupt flag (the REPL's Ctrl-C path), and
//     the call then raises KeyboardInterrupt (on the main thread, while SIGINT has Python's
//     default handler: wire_ctrl_c() below).
//   * Arrays in. A C-contiguous float32 buffer becomes a tensor without a copy: the tensor's
//     storage borrows the buffer and holds a reference to it (tensor.h, AlignedFloats).
//   * Tensors out. A Descent tensor exposes the buffer protocol over its own storage, so
//     numpy.asarray(t) copies nothing, and writing through that array changes the tensor.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>
#include <optional>

#include "bench/bench.h"
#include "bench/plot.h"
#include "python/src/bindings.h"
#include "pipeline/pipeline.h"
#include "tensor/schedule.h"
#include "tensor/tensor.h"

namespace py = pybind11;

namespace descent::python {

[[noreturn]] void raise(const char* cls, const std::string& text, py::dict attrs) {
  py::object type = py::module_::import("descent.errors").attr(cls);
  py::object e = type(text, **attrs);
  PyErr_SetObject(type.ptr(), e.ptr());
  throw py::error_already_set();
}

namespace {

// ---- Errors ---------------------------------------------------------------------------------
// The exception classes live in descent/errors.py (documented there, subclassable in
// Python); raise() (above) looks them up.

// An Outcome that failed as a CompileError or RunError carrying where and what.
[[noreturn]] void raise_outcome(const Outcome& o, const std::string& name,
                                const std::string& output) {
  py::dict a;
  a["output"] = output;
  a["file"] = name;
  py::list diags;
  for (const Diagnostic& d : o.diagnostics) {
    std::string file = d.loc.file ? d.loc.file->name() : name;
    diags.append(py::make_tuple(file, d.loc.line, d.loc.col, d.message));
  }
  a["diagnostics"] = diags;
  if (!o.diagnostics.empty()) {
    const Diagnostic& d = o.diagnostics.front();
    a["file"] = d.loc.file ? d.loc.file->name() : name;
    a["line"] = d.loc.line;
    a["column"] = d.loc.col;
    a["detail"] = d.message;
  }
  std::string text = o.message;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  raise(o.status == Outcome::CompileError ? "CompileError" : "RunError", text, a);
}

// ---- Ctrl-C ---------------------------------------------------------------------------------
constexpr int kSlots = 32;
std::atomic<std::atomic<bool>*> g_flags[kSlots];
std::atomic<uint64_t> g_hits{0};
std::mutex g_install;
int g_installed = 0;
struct sigaction g_previous;

extern "C" void on_sigint(int) {
  g_hits.fetch_add(1);
  for (auto& slot : g_flags)
    if (std::atomic<bool>* f = slot.load()) f->store(true);
}

// For its lifetime, SIGINT sets `flag`; interrupted() says whether one came. Nested and
// concurrent guards (two sessions on two threads) share one installed handler.
class InterruptGuard {
 public:
  explicit InterruptGuard(std::atomic<bool>& flag) : hits_(g_hits.load()) {
    flag.store(false);
    std::lock_guard<std::mutex> lock(g_install);
    for (slot_ = 0; slot_ < kSlots; ++slot_) {
      std::atomic<bool>* empty = nullptr;
      if (g_flags[slot_].compare_exchange_strong(empty, &flag)) break;
    }
    if (g_installed++ == 0) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_sigint;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, &g_previous);
    }
  }
  ~InterruptGuard() {
    std::lock_guard<std::mutex> lock(g_install);
    if (slot_ < kSlots) g_flags[slot_].store(nullptr);
    if (--g_installed == 0) sigaction(SIGINT, &g_previous, nullptr);
  }
  bool interrupted() const { return g_hits.load() != hits_; }

 private:
  uint64_t hits_;
  int slot_ = 0;
};

// ---- Tensors --------------------------------------------------------------------------------
struct PyTensor {
  std::shared_ptr<const tensor::Tensor> t;
};

// What a tensor that borrows Python memory holds on to: the buffer export, and a weak
// reference that pins the memory in place (see tensor_from).
struct Borrow {
  std::unique_ptr<py::buffer_info> info;
  py::object pin;
};

// A Python buffer of C-contiguous float32 as a tensor, borrowed: no copy. The Python half
// converts anything else first (and warns that it copied).
tensor::Tensor tensor_from(py::handle obj) {
  if (py::isinstance<PyTensor>(obj)) {
    const auto& src = obj.cast<const PyTensor&>().t;
    tensor::Tensor t;
    t.shape = src->shape;
    // Shares the storage: the new tensor keeps the old one alive.
    t.data = tensor::AlignedFloats::borrow(const_cast<float*>(src->data.data()), src->data.size(),
                                           std::shared_ptr<void>(src, nullptr));
    return t;
  }
  if (!PyObject_CheckBuffer(obj.ptr()))
    raise("TensorError", "expected a descent.Tensor or an array, got " +
                             std::string(py::str(py::type::of(obj).attr("__name__"))));
  // Writable, since a Tensor's own buffer is: a read-only array (the Python half copies those
  // first) or an immutable bytes object must never be written through it.
  std::unique_ptr<py::buffer_info> info;
  try {
    info = std::make_unique<py::buffer_info>(py::reinterpret_borrow<py::buffer>(obj).request(true));
  } catch (const py::error_already_set&) {
    raise("TensorError", "the buffer is read-only (pass a writable array, or a copy)");
  }
  if (info->itemsize != 4 || (info->format != "f" && info->format != "<f" && info->format != "=f"))
    raise("TensorError", "expected float32 data, got format '" + info->format + "'");
  if (info->ndim < 1) raise("TensorError", "a tensor has at least one dimension (got a scalar)");
  tensor::Tensor t;
  int64_t expect = 4;
  for (py::ssize_t d = info->ndim - 1; d >= 0; --d) {
    if (info->shape[size_t(d)] > 1 && info->strides[size_t(d)] != expect)
      raise("TensorError", "the array is not C-contiguous");
    expect *= info->shape[size_t(d)];
  }
  for (py::ssize_t d = 0; d < info->ndim; ++d) t.shape.push_back(info->shape[size_t(d)]);
  std::string why;
  if (!tensor::check_shape(t.shape, &why)) raise("TensorError", why);
  float* data = static_cast<float*>(info->ptr);
  size_t n = size_t(info->size);
  // While Descent borrows the memory, nobody may move it. Holding the buffer export (the
  // buffer_info) stops a bytearray or an array.array from resizing, but NumPy does not count
  // exports: `a.resize(..., refcheck=False)` would free the memory under the tensor. NumPy
  // does refuse to resize an array that has a weak reference, so the borrow holds one too,
  // on the object that owns the memory (a memoryview's, when handed a memoryview).
  auto held = std::make_unique<Borrow>();
  held->info = std::move(info);
  py::handle target = obj;
  while (PyMemoryView_Check(target.ptr()) && PyMemoryView_GET_BUFFER(target.ptr())->obj)
    target = PyMemoryView_GET_BUFFER(target.ptr())->obj;
  if (PyType_SUPPORTS_WEAKREFS(Py_TYPE(target.ptr())))
    held->pin = py::reinterpret_steal<py::object>(PyWeakref_NewRef(target.ptr(), nullptr));
  if (PyErr_Occurred()) PyErr_Clear();
  // Releasing the buffer touches Python objects: with the GIL, and not after Python is gone.
  std::shared_ptr<void> owner(held.release(), [](void* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    delete static_cast<Borrow*>(p);
  });
  t.data = tensor::AlignedFloats::borrow(data, n, std::move(owner));
  return t;
}

py::buffer_info tensor_buffer(PyTensor& p) {
  const tensor::Tensor& t = *p.t;
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides;
  for (int64_t s : t.strides()) strides.push_back(py::ssize_t(s) * py::ssize_t(sizeof(float)));
  return py::buffer_info(const_cast<float*>(t.data.data()), sizeof(float),
                         py::format_descriptor<float>::format(), py::ssize_t(shape.size()), shape,
                         strides, /*readonly=*/false);
}

// ---- The Session ----------------------------------------------------------------------------
struct PySession {
  Session s;
  // One call at a time: a Session is not thread-safe. Recursive, because a binding that
  // holds it may call guarded() (reading a tensor global computes it).
  std::recursive_mutex busy;
};

// Every binding that touches the Session holds its lock, taken with the GIL released so
// that a thread waiting for it never blocks the thread that holds it.
class SessionLock {
 public:
  explicit SessionLock(PySession& ps) : lock_(ps.busy, std::defer_lock) {
    py::gil_scoped_release nogil;
    lock_.lock();
  }

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// Whether this call can take Ctrl-C itself: only on Python's main thread (the only one
// Python delivers SIGINT to) and only while Python's handler is its default one, which turns
// SIGINT into KeyboardInterrupt. A program that ignores SIGINT or handles it its own way
// keeps it.
bool wire_ctrl_c() {
  static py::object* threading = new py::object(py::module_::import("threading"));
  static py::object* signal = new py::object(py::module_::import("signal"));
  if (!threading->attr("current_thread")().is(threading->attr("main_thread")())) return false;
  return signal->attr("getsignal")(signal->attr("SIGINT")).is(signal->attr("default_int_handler"));
}

// Runs f with the GIL released, the session locked and (where wire_ctrl_c()) Ctrl-C wired to
// its interrupt flag; raises KeyboardInterrupt when Ctrl-C came during the call. The lock is
// released before the GIL is taken back: Python code (a signal handler) may use the session.
template <class F>
auto guarded(PySession& ps, F&& f) {
  bool wire = wire_ctrl_c();
  bool hit = false;
  using R = decltype(f());
  std::optional<R> r;
  {
    py::gil_scoped_release nogil;
    std::unique_lock<std::recursive_mutex> lock(ps.busy);
    std::optional<InterruptGuard> guard;
    if (wire) guard.emplace(ps.s.interrupt_flag());
    else ps.s.interrupt_flag().store(false);
    r.emplace(f());
    hit = guard && guard->interrupted();
  }
  // A SIGINT that came before the guard was in place went to Python's own handler.
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  if (hit) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return std::move(*r);
}

Format format_of(const std::string& fmt) {
  if (fmt == "text") return Format::Text;
  if (fmt == "sexpr") return Format::Sexpr;
  if (fmt == "dot") return Format::Dot;
  raise("StageError", "unknown format '" + fmt + "' (formats: text, sexpr, dot)");
}

std::string view_or_raise(const StageResult& r) {
  if (!r.ok) raise("StageError", r.text);
  return r.text;
}

std::string run_source(PySession& ps, const std::string& source, const std::string& name,
                       bool echo, uint64_t step_limit) {
  std::string output;
  Outcome o = guarded(ps, [&] {
    RunOptions opts;
    opts.out = [&output](std::string_view t) { output += t; };
    opts.echo = echo;
    opts.step_limit = step_limit;
    return ps.s.submit(source, name, opts);
  });
  if (o.status != Outcome::Ok) raise_outcome(o, name, output);
  return output;
}

py::dict outcome_dict(const Outcome& o) {
  py::dict d;
  d["status"] = o.status == Outcome::Ok ? "ok" : o.status == Outcome::CompileError ? "compile error" : "runtime error";
  d["steps"] = o.steps;
  d["compile_seconds"] = o.compile_seconds;
  d["run_seconds"] = o.run_seconds;
  d["error"] = o.message;
  d["note"] = o.note;
  py::list stages;
  for (const auto& st : o.stages) stages.append(py::make_tuple(st.stage, st.seconds, st.depth));
  d["stages"] = stages;
  d["notes"] = o.notes;
  return d;
}

py::object global_to_python(PySession& ps, const std::string& name) {
  SessionLock lock_(ps);
  Value v;
  Type t;
  if (!ps.s.global(name, &v, &t)) {
    PyErr_SetString(PyExc_KeyError, name.c_str());
    throw py::error_already_set();
  }
  switch (t) {
    case Type::Int: return py::int_(v.i);
    case Type::Float: return py::float_(v.f);
    case Type::Bool: return py::bool_(v.b);
    case Type::Tensor: {
      std::string error;
      auto value = guarded(ps, [&] { return ps.s.tensor_value(v.i, &error); });
      if (!value) raise("RunError", "'" + name + "': " + error);
      return py::cast(PyTensor{value});
    }
    default:
      raise("TensorError", "'" + name + "' is a " + type_name(t) + ", which Python cannot hold");
  }
}

void global_from_python(PySession& ps, const std::string& name, py::handle obj) {
  SessionLock lock_(ps);
  Value v;
  Type t;
  if (py::isinstance<py::bool_>(obj)) {
    v = Value::of_bool(obj.cast<bool>());
    t = Type::Bool;
  } else if (py::isinstance<py::int_>(obj)) {
    try {
      v = Value::of_int(obj.cast<int64_t>());
    } catch (const py::cast_error&) {
      PyErr_SetString(PyExc_OverflowError, "a Descent int is 64 bits");
      throw py::error_already_set();
    }
    t = Type::Int;
  } else if (py::isinstance<py::float_>(obj)) {
    v = Value::of_float(obj.cast<double>());
    t = Type::Float;
  } else {
    v = Value::of_int(ps.s.add_tensor(tensor_from(obj)));
    t = Type::Tensor;
  }
  std::string error;
  if (!ps.s.set_global(name, v, t, &error)) raise("DescentError", error);
}

std::map<std::string, int64_t> dims_of(const py::dict& dims) {
  std::map<std::string, int64_t> out;
  for (auto [k, v] : dims) {
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
      throw py::type_error("dim '" + std::string(py::str(k)) + "' must be an int, got " +
                           std::string(py::str(py::type::of(v).attr("__name__"))));
    try {
      out[py::str(k)] = v.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error("dim '" + std::string(py::str(k)) + "' is too large");
    }
  }
  return out;
}

py::bytes png_of(const bench::Image& img) {
  std::string bytes, error;
  if (!bench::encode_png(img, &bytes, &error)) raise("DescentError", error);
  return py::bytes(bytes);
}

}  // namespace
}  // namespace descent::python

using namespace descent;
using namespace descent::python;

PYBIND11_MODULE(_descent, m) {
  m.doc() = "Descent's Session, tensors and labs for Python (the C++ half of `descent`)";

  py::class_<PyTensor>(m, "Tensor", py::buffer_protocol(), R"(A Descent tensor: f32, C order.

numpy.asarray(t) shares its storage (no copy); writing through that array changes the
tensor, as torch.from_numpy shares memory.)")
      .def_buffer(&tensor_buffer)
      .def_property_readonly("shape", [](const PyTensor& p) { return py::tuple(py::cast(p.t->shape)); })
      .def_property_readonly("size", [](const PyTensor& p) { return p.t->numel(); })
      .def_property_readonly("ndim", [](const PyTensor& p) { return p.t->shape.size(); })
      .def_property_readonly("dtype", [](const PyTensor&) { return "float32"; })
      .def_property_readonly("address", [](const PyTensor& p) { return reinterpret_cast<uintptr_t>(p.t->data.data()); },
                             "Where the data is (the same number numpy's arr.ctypes.data gives for a shared array)")
      .def("sum", [](const PyTensor& p) { return tensor::sum_all(*p.t); }, "The sum of every element, in double")
      .def("__repr__", [](const PyTensor& p) { return tensor::format_tensor(*p.t); })
      .def("__len__", [](const PyTensor& p) { return p.t->shape.front(); });

  m.def("as_tensor", [](py::handle obj) { 
          tensor::Tensor t = tensor_from(obj);
          return PyTensor{std::make_shared<const tensor::Tensor>(std::move(t))};
        }, py::arg("array"),
        "A C-contiguous float32 array as a Tensor sharing its memory (TensorError otherwise)");

  py::class_<PySession>(m, "Session")
      .def(py::init<>())
      .def_static("engines", &Session::engines, "The engines a program can run on")
      .def_static("devices", &Session::devices, "The tensor devices kernels can run on")
      .def_static("describe_devices", &Session::describe_devices)
      .def_static("stages", [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& s : Session::stages()) out.emplace_back(s.name, s.description);
        return out;
      }, "Every stage of a program's way down: (name, what it shows)")
      .def_static("kernel_views", [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& s : Session::kernel_views()) out.emplace_back(s.name, s.description);
        return out;
      })
      .def_static("schedule_primitives", &Session::schedule_primitives)
      .def_property("engine", [](PySession& ps) { SessionLock lock_(ps); return ps.s.engine(); },
                    [](PySession& ps, const std::string& e) { SessionLock lock_(ps);
                      if (!ps.s.set_engine(e)) {
                        std::string known;
                        for (const auto& n : Session::engines()) known += (known.empty() ? "" : ", ") + n;
                        raise("DescentError", "no engine '" + e + "' (engines: " + known + ")");
                      }
                    })
      .def_property("device", [](PySession& ps) { SessionLock lock_(ps); return ps.s.device(); },
                    [](PySession& ps, const std::string& d) { SessionLock lock_(ps);
                      std::string error;
                      if (!ps.s.set_device(d, &error)) raise("DeviceError", error);
                    })
      .def_property("opt_level", [](PySession& ps) { SessionLock lock_(ps); return ps.s.opt_level(); },
                    [](PySession& ps, int l) { SessionLock lock_(ps);
                      if (!ps.s.set_opt_level(l)) raise("DescentError", "the -O level is 0, 1, 2 or 3");
                    })
      .def_property("registers", [](PySession& ps) { SessionLock lock_(ps); return ps.s.num_registers(); },
                    [](PySession& ps, int n) { SessionLock lock_(ps);
                      if (!ps.s.set_num_registers(n)) raise("DescentError", "the register file has 3 to 250 registers");
                    })
      .def_property("target", [](PySession& ps) { SessionLock lock_(ps); return ps.s.target(); },
                    [](PySession& ps, const std::string& t) { SessionLock lock_(ps);
                      std::string error;
                      if (!ps.s.set_target(t, &error)) raise("DescentError", error);
                    })
      .def_property("threads", [](PySession& ps) { SessionLock lock_(ps); return ps.s.threads(); },
                    [](PySession& ps, int t) { SessionLock lock_(ps); ps.s.set_threads(t); })
      .def_property("default_schedules", [](PySession& ps) { SessionLock lock_(ps); return ps.s.default_schedules(); },
                    [](PySession& ps, bool on) { SessionLock lock_(ps); ps.s.set_default_schedules(on); })
      .def("run", &run_source, py::arg("source"), py::arg("name") = "<python>",
           py::arg("echo") = false, py::arg("step_limit") = 0,
           "Compiles and runs source against everything before it; returns what it printed")
      .def("compile", [](PySession& ps, const std::string& source, const std::string& name) { SessionLock lock_(ps);
             Outcome o = guarded(ps, [&] { return ps.s.compile(source, name); });
             if (o.status != Outcome::Ok) raise_outcome(o, name, "");
           }, py::arg("source"), py::arg("name") = "<python>")
      .def("submit", [](PySession& ps, const std::string& source, const std::string& name,
                                 uint64_t step_limit) { SessionLock lock_(ps);
             std::string output;
             Outcome o = guarded(ps, [&] {
               RunOptions opts;
               opts.out = [&output](std::string_view t) { output += t; };
               opts.step_limit = step_limit;
               return ps.s.submit(source, name, opts);
             });
             py::dict d = outcome_dict(o);
             d["output"] = output;
             return d;
           }, py::arg("source"), py::arg("name") = "<python>", py::arg("step_limit") = 0,
           "submit() as data: status, output, steps, times stage by stage (no exception)")
      .def("stage", [](PySession& ps, const std::string& name, const std::string& fmt,
                       const std::string& function) { SessionLock lock_(ps);
             return view_or_raise(ps.s.stage(name, format_of(fmt), function));
           }, py::arg("name"), py::arg("fmt") = "text", py::arg("function") = "")
      .def("stage_lines", [](PySession& ps, const std::string& name, const std::string& function) { SessionLock lock_(ps);
             return ps.s.stage(name, Format::Text, function).source_lines;
           }, py::arg("name"), py::arg("function") = "",
           "llvm/llvm-opt/asm: the source line each line of the view came from (0: none)")
      .def("passes", [](PySession& ps) { SessionLock lock_(ps);
        py::list out;
        for (const auto& p : ps.s.passes()) {
          py::dict d;
          d["name"] = p.name;
          d["stage"] = p.stage;
          d["changed"] = p.changed;
          d["summary"] = p.summary;
          out.append(d);
        }
        return out;
      })
      .def("pass_snapshot", [](PySession& ps, const std::string& pass, bool after, const std::string& fmt) { SessionLock lock_(ps);
             return view_or_raise(ps.s.pass_snapshot(pass, after, format_of(fmt)));
           }, py::arg("name"), py::arg("after") = true, py::arg("fmt") = "text")
      .def("diff_passes", [](PySession& ps, const std::string& a, const std::string& b) { SessionLock lock_(ps);
             return view_or_raise(ps.s.diff_passes(a, b));
           })
      .def("compare", [](PySession& ps, uint64_t step_limit) { SessionLock lock_(ps);
             auto rows = guarded(ps, [&] {
               RunOptions opts;
               opts.step_limit = step_limit;
               return ps.s.compare(opts);
             });
             py::list out;
             for (const auto& c : rows) {
               py::dict d = outcome_dict(c.outcome);
               d["engine"] = c.engine;
               d["output"] = c.output;
               d["not_run"] = c.not_run;
               out.append(d);
             }
             return out;
           }, py::arg("step_limit") = 0)
      .def("known_names", [](PySession& ps) { SessionLock lock_(ps); return ps.s.known_names(); })
      .def("kernels", [](PySession& ps) { SessionLock lock_(ps); return ps.s.kernel_signatures(); })
      .def("adjoints", [](PySession& ps, const std::string& kernel) { SessionLock lock_(ps);
             std::vector<Session::AdjointInfo> list;
             std::string error;
             if (!ps.s.kernel_adjoint_list(kernel, &list, &error)) raise("TensorError", error);
             py::list out;
             for (const auto& a : list)
               out.append(py::dict(py::arg("param") = a.param, py::arg("name") = a.name,
                                   py::arg("source") = a.source, py::arg("inputs") = a.inputs,
                                   py::arg("zero") = a.zero));
             return out;
           })
      .def("get_global", &global_to_python)
      .def("set_global", &global_from_python)
      .def("call", [](PySession& ps, const std::string& kernel, py::args args, const std::string& device) { SessionLock lock_(ps);
             std::vector<tensor::Tensor> inputs;
             for (py::handle a : args) inputs.push_back(tensor_from(a));
             std::shared_ptr<const tensor::Tensor> out;
             std::string error;
             bool ok = guarded(ps, [&] { return ps.s.call_kernel(kernel, std::move(inputs), device, &out, &error); });
             if (!ok) raise(error.find("device") != std::string::npos || error.find("OpenCL") != std::string::npos
                                ? "DeviceError" : "TensorError", error);
             return PyTensor{out};
           }, py::arg("kernel"), py::kw_only(), py::arg("device") = "")
      .def("record", [](PySession& ps, const std::string& engine, size_t max_steps) { SessionLock lock_(ps);
             Recording r = guarded(ps, [&] { return ps.s.record(engine, max_steps); });
             if (!r.error.empty()) raise("StageError", r.error);
             py::list steps;
             for (const TraceStep& t : r.steps) {
               py::dict d;
               d["function"] = t.function;
               d["pc"] = t.pc;
               d["instruction"] = t.instruction;
               d["line"] = t.loc.line;
               d["column"] = t.loc.col;
               d["depth"] = t.depth;
               d["stack"] = t.stack;
               d["registers"] = t.registers;
               d["printed"] = r.output.substr(0, t.output_size);
               d["error"] = t.error;
               steps.append(d);
             }
             py::dict d;
             d["engine"] = r.engine;
             d["steps"] = steps;
             d["output"] = r.output;
             d["truncated"] = r.truncated;
             return d;
           }, py::arg("engine") = "stack", py::arg("max_steps") = 100000,
           "Runs the last input again on the stack or reg VM and records every instruction")
      .def("live_ranges", [](PySession& ps, const std::string& function) { SessionLock lock_(ps);
             py::list out;
             for (const LiveFunction& f : ps.s.live_ranges(function))
               for (const LiveRange& r : f.ranges) {
                 py::dict d;
                 d["function"] = f.function;
                 d["value"] = r.value;
                 d["type"] = r.type;
                 d["start"] = r.start;
                 d["end"] = r.end;
                 d["location"] = r.location;
                 d["spilled"] = r.spilled;
                 out.append(d);
               }
             return out;
           }, py::arg("function") = "")
      .def("graph_view", [](PySession& ps, const std::string& which, const std::string& fmt) { SessionLock lock_(ps);
             return view_or_raise(ps.s.graph_view(which, format_of(fmt)));
           }, py::arg("which") = "executed", py::arg("fmt") = "text")
      .def("memory_report", [](PySession& ps) { SessionLock lock_(ps); return ps.s.memory_report(); })
      // ---- the kernel under the microscope ----
      .def("select_kernel", [](PySession& ps, const std::string& name, const py::dict& dims) { SessionLock lock_(ps);
             std::string error;
             if (!ps.s.select_kernel(name, dims_of(dims), &error)) raise("ScheduleError", error);
           })
      .def("selected_kernel", [](PySession& ps) { SessionLock lock_(ps); return py::make_tuple(ps.s.selected_kernel(), ps.s.selected_kernel_dims()); })
      // ---- schedule objects (Session::open_schedule); id 0: the one under the microscope ----
      .def("open_schedule", [](PySession& ps, const std::string& name, const py::dict& dims, bool restore) {
             SessionLock lock_(ps);
             std::string error;
             int id = ps.s.open_schedule(name, dims_of(dims), restore, &error);
             if (!id) raise("ScheduleError", error);
             return id;
           }, py::arg("name"), py::arg("dims"), py::arg("restore") = false)
      .def("close_schedule", [](PySession& ps, int id) { SessionLock lock_(ps); return ps.s.close_schedule(id); })
      .def("use_schedule", [](PySession& ps, int id) { SessionLock lock_(ps);
             std::string error;
             if (!ps.s.use_schedule(id, &error)) raise("ScheduleError", error);
           })
      .def("install_schedule", [](PySession& ps, int id) { SessionLock lock_(ps);
             std::string error;
             if (!ps.s.install_schedule(id, &error)) raise("ScheduleError", error);
           }, py::arg("id") = 0)
      .def("open_schedules", [](PySession& ps) { SessionLock lock_(ps);
             py::list out;
             for (const auto& i : ps.s.open_schedules()) {
               py::dict d;
               d["id"] = i.id;
               d["kernel"] = i.kernel;
               d["dims"] = i.dims;
               d["steps"] = i.steps;
               d["installed"] = i.installed;
               d["current"] = i.current;
               out.append(d);
             }
             return out;
           })
      .def("schedule_step", [](PySession& ps, const std::string& step, int id) { SessionLock lock_(ps);
             std::string error;
             tensor::StepResult made;
             if (!ps.s.schedule_step(step, &error, &made, id)) raise("ScheduleError", error);
             py::dict d;
             d["canonical"] = made.canonical;
             d["loops"] = made.loops;
             d["blocks"] = made.blocks;
             return d;
           }, py::arg("step"), py::arg("id") = 0)
      .def("schedule_undo", [](PySession& ps, int id) { SessionLock lock_(ps); return ps.s.schedule_undo(id); }, py::arg("id") = 0)
      .def("schedule_redo", [](PySession& ps, int id) { SessionLock lock_(ps); return ps.s.schedule_redo(id); }, py::arg("id") = 0)
      .def("schedule_trace", [](PySession& ps, int id) { SessionLock lock_(ps); return ps.s.schedule_trace(id); }, py::arg("id") = 0)
      .def("schedule_names", [](PySession& ps, int id) { SessionLock lock_(ps); return ps.s.schedule_names(id); }, py::arg("id") = 0)
      .def("schedule_loops", [](PySession& ps, const std::string& block, int id) { SessionLock lock_(ps);
             std::vector<std::string> out;
             std::string error;
             if (!ps.s.schedule_loops(block, &out, &error, id)) raise("ScheduleError", error);
             return out;
           }, py::arg("block"), py::arg("id") = 0)
      .def("kernel_view", [](PySession& ps, const std::string& view, int id) { SessionLock lock_(ps);
             return view_or_raise(ps.s.kernel_view(view, id));
           }, py::arg("view"), py::arg("id") = 0)
      .def("run_kernel", [](PySession& ps, const std::string& device, bool check, uint64_t seed, int repeats, int id) { SessionLock lock_(ps);
             auto r = guarded(ps, [&] { return ps.s.run_kernel(device, check, seed, repeats, id); });
             if (!r.ok)
               raise(r.error.rfind("no kernel selected", 0) == 0 || r.error.rfind("no schedule ", 0) == 0
                         ? "ScheduleError"
                     : r.error.find("results differ") != std::string::npos ? "CheckError"
                                                                             : "DeviceError",
                     r.error);
             py::dict d;
             d["seconds"] = r.seconds;
             d["compile_seconds"] = r.compile_seconds;
             d["checked"] = r.checked;
             d["checksum"] = r.checksum;
             d["shape"] = py::tuple(py::cast(r.shape));
             return d;
           }, py::arg("device") = "cpu", py::arg("check") = true, py::arg("seed") = 1, py::arg("repeats") = 1,
           py::arg("id") = 0)
      // ---- tuning ----
      .def("tune", [](PySession& ps, const std::string& kernel, const py::dict& dims, const std::string& device,
                      const std::string& strategy, int trials, uint64_t seed, int repeats, double time_limit,
                      const std::string& database, const py::dict& compare) { SessionLock lock_(ps);
             Session::TuneRequest req;
             req.kernel = kernel;
             req.dims = dims_of(dims);
             req.device = device;
             req.strategy = strategy;
             req.trials = trials;
             req.seed = seed;
             req.repeats = repeats;
             req.time_limit_s = time_limit;
             req.database = database;
             for (auto [k, v] : compare) req.compare.emplace_back(py::str(k), py::str(v));
             auto report = guarded(ps, [&] { return ps.s.tune(req); });
             if (!report.ok) raise("TuneError", report.error);
             std::string json = Session::tune_json(report, req);
             // The tuner's chart, as `descent tune --plot` draws it.
             std::vector<bench::TunePlotRun> runs;
             for (const auto& t : report.tasks)
               runs.push_back({t.kernel + " " + t.shape + " (" + req.strategy + ")", t.flops, &t.result,
                               t.naive_seconds, t.default_seconds});
             py::object png = py::none();
             std::vector<bench::XYPanel> panels = bench::tune_panels(runs);
             bench::Image img;
             std::string error;
             if (!panels.empty() && bench::render_panels("Descent tuner: " + kernel, bench::host_description(),
                                                         panels, 1200, 600, &img, &error))
               png = png_of(img);
             return py::make_tuple(json, png);
           }, py::arg("kernel"), py::arg("dims") = py::dict(), py::arg("device") = "cpu",
           py::arg("strategy") = "evolutionary", py::arg("trials") = 32, py::arg("seed") = 1,
           py::arg("repeats") = 5, py::arg("time_limit") = 10.0, py::arg("database") = "",
           py::arg("compare") = py::dict());

  // ---- benchmarks ----
  m.def("bench", [](const std::string& suite, bool quick, int repeats, std::vector<std::string> engines,
                    std::vector<std::string> workloads, const std::string& baseline) {
          bench::BenchOptions o;
          o.suite = suite;
          o.quick = quick;
          o.repeats = repeats;
          o.engines = std::move(engines);
          o.workloads = std::move(workloads);
          if (!baseline.empty()) o.baseline = baseline;
          std::string error;
          std::vector<bench::BenchRecord> records;
          {
            py::gil_scoped_release nogil;
            records = bench::run_benchmarks(o, &error);
          }
          if (!error.empty() && records.empty()) raise("DescentError", error);
          py::object png = py::none();
          bench::PlotOptions po;
          po.metric = suite == "tensor" ? "gflops" : "time";
          po.width = 1200;
          po.height = 600;
          bench::Image img;
          std::string why;
          if (bench::render_plot(records, po, &img, &why)) png = png_of(img);
          return py::make_tuple(bench::to_json(records), png);
        }, py::arg("suite") = "vm", py::arg("quick") = true, py::arg("repeats") = 3,
        py::arg("engines") = std::vector<std::string>{}, py::arg("workloads") = std::vector<std::string>{},
        py::arg("baseline") = "");
  m.def("host_description", &bench::host_description);

  bind_labs(m);  // labs.cpp
}
