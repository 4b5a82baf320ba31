"""Descent in Python: one program down every tier of a compiler, and tensor kernels whose
loop nests you transform, from a notebook.

    import descent, numpy as np
    sess = descent.Session()
    sess.run("fn sq(x) { return x * x }\\nprint(sq(7))")      # '49\\n'
    sess.stage("reg-alloc")                                   # the register VM's code
    y = sess.call("linear_relu", x, w)                        # NumPy in, a Tensor out
    np.asarray(y)                                             # no copy
    sch = sess.schedule("mm_relu", n=128)                     # TVM-style schedules
    i, j, k = sch.get_loops("Y")

This module is a front end over Descent's Session, like the REPL and the CLI: every view,
check, run and schedule is the Session's (docs/python.md).
"""
import warnings as _warnings

from . import errors
from ._descent import Tensor, as_tensor as _as_tensor
from ._descent import Session as _Session
from ._descent import host_description
from . import _descent
from .display import Chart, Table, View
from .errors import (CheckError, CompileError, CopyWarning, DescentError, DeviceError,
                     LabError, RunError, ScheduleError, StageError, TensorError, TuneError)
from .schedule import BlockRV, LoopRV, Schedule
from . import lab

__all__ = ["Session", "Tensor", "Schedule", "LoopRV", "BlockRV", "View", "Table", "Chart",
           "as_tensor", "tune", "bench", "lab", "engines", "devices", "stages",
           "DescentError", "CompileError", "RunError", "ScheduleError", "StageError",
           "TensorError", "DeviceError", "CheckError", "TuneError", "LabError", "CopyWarning"]


def engines():
    """The engines a program runs on: ast (the oracle), stack, reg, jit, native."""
    return _Session.engines()


def devices():
    """The tensor devices: ref (the reference interpreter), cpu, opencl, ..."""
    return _Session.devices()


def stages():
    """Every stage as (name, what it shows)."""
    return _Session.stages()


def as_tensor(array):
    """An array as a Descent Tensor. A C-contiguous float32 array is shared, not copied;
    anything else is converted to one first, with a CopyWarning saying so."""
    if isinstance(array, Tensor):
        return array
    return _as_tensor(_input(array))  # the warning points at the caller of as_tensor


def _input(a, stacklevel=3):
    """What a kernel argument or a tensor global can be handed to C++ as: a Tensor, or a
    C-contiguous float32 buffer (shared). Other arrays are copied, and a CopyWarning says why."""
    if isinstance(a, Tensor):
        return a
    try:
        import numpy as np
    except ImportError:  # without NumPy, buffers go to C++ as they are (it checks them)
        return a
    if isinstance(a, np.generic):
        a = np.array(a)  # a NumPy scalar: a 0-d array, which C++ refuses with the reason
    if isinstance(a, np.ndarray):
        if a.dtype == np.float32 and a.flags.c_contiguous and a.flags.writeable:
            return a
        if a.dtype.kind not in "fiub":
            raise TensorError("cannot make a float32 tensor of a %s array" % a.dtype)
        why = []
        if a.dtype != np.float32:
            why.append("converted from %s to float32" % a.dtype)
        if not a.flags.c_contiguous:
            why.append("not C-contiguous")
        if not a.flags.writeable:
            # A tensor's memory is writable through numpy.asarray(t): a read-only array (a
            # read-only memmap, a frozen array) must not be shared.
            why.append("read-only")
        _warnings.warn("the array was copied (%s)" % ", ".join(why), CopyWarning,
                       stacklevel=stacklevel)
        return np.array(a, dtype=np.float32, order="C", copy=True)
    if isinstance(a, (list, tuple, float, int)):
        return np.asarray(a, dtype=np.float32)
    return a


class Output(str):
    """What a program printed (a str), shown as preformatted text in a notebook."""

    def _repr_html_(self):
        from .display import pre
        import html
        return pre(html.escape(self)) if self else None


class Session(_Session):
    """A Descent session: each run() is compiled against the globals, functions and kernels
    of the ones before it, as REPL lines are.

    Options are keyword arguments, here for the whole session and on run() for one input:
    engine ("ast", "stack", "reg", "jit", "native"), device (for tensor kernels), opt_level
    (0-3, the LLVM views and the jit), registers (the register VM's file), target (asm/mir),
    threads (cpu kernels' parallel loops), default_schedules (the tuner's rules).
    """

    _OPTIONS = ("engine", "device", "opt_level", "registers", "target", "threads",
                "default_schedules")

    def __init__(self, engine="ast", **options):
        super().__init__()
        self.configure(engine=engine, **options)

    def configure(self, **options):
        """Sets options (see the class's docstring); unknown names are a TypeError."""
        for k, v in options.items():
            if k not in self._OPTIONS:
                raise TypeError("unknown option %r (options: %s)" % (k, ", ".join(self._OPTIONS)))
            if v is not None:
                setattr(self, k, v)
        return self

    def _with(self, options, fn):
        # Options for one call: set, run, put back, even when it raises.
        saved = {k: getattr(self, k) for k, v in options.items() if v is not None}
        try:
            self.configure(**options)
            return fn()
        finally:
            self.configure(**saved)

    def run(self, source, *, name="<python>", echo=False, step_limit=0, **options):
        """Compiles and runs `source` after everything before it; returns what it printed.
        Raises CompileError or RunError (with file, line, column and what it printed first);
        Ctrl-C (a notebook's stop button) raises KeyboardInterrupt and stops the program."""
        return Output(self._with(options, lambda: _Session.run(self, source, name, echo, step_limit)))

    def submit(self, source, *, name="<python>", step_limit=0, **options):
        """run() as data, without an exception: status, output, error, steps, and the time of
        each stage (parse, check, run, ...)."""
        return self._with(options, lambda: _Session.submit(self, source, name, step_limit))

    def stage(self, name, fmt="text", function=None):
        """A stage's view of the last input (Session.stages() lists them): the same text as
        `descent dump --stage NAME`. fmt: "text", "sexpr" (ast) or "dot" (drawn as SVG in
        a notebook). With `function`: that function alone, like dis.dis(fn)."""
        return View(name, _Session.stage(self, name, fmt, function or ""), fmt)

    def passes(self):
        """The passes that ran on the last input, in order: name, stage, changed, summary."""
        return Table(_Session.passes(self), ["name", "stage", "changed", "summary"], "passes")

    def pass_snapshot(self, name, after=True, fmt="text"):
        """The view before or after one pass (a name from passes())."""
        return View(name, _Session.pass_snapshot(self, name, after, fmt), fmt,
                    "descent" if name == "fold_constants" else None)

    def compare(self, *, step_limit=0):
        """Runs the last input again on every engine from the same globals: each one's
        output, steps and time, side by side (the REPL's :compare)."""
        rows = []
        for r in _Session.compare(self, step_limit):
            rows.append({"engine": r["engine"],
                         "output": r["output"].rstrip("\n") if not r["not_run"] else "",
                         "status": r["status"] if not r["not_run"] else "not run: " + r["not_run"],
                         "steps": r["steps"], "ms": r["run_seconds"] * 1e3})
        return Table(rows, ["engine", "status", "steps", "ms", "output"], "compare")

    def record(self, engine="stack", max_steps=100000):
        """The step debugger's recording (the visualizer's VM panes): the last input run again
        on the stack or register VM from the globals it started from, every instruction with
        its source line and the operand stack (stack) or registers (reg) after it. A Table
        with ``output`` (what the run printed) and ``truncated``."""
        r = _Session.record(self, engine, max_steps)
        state = "stack" if engine == "stack" else "registers"
        rows = []
        for n, st in enumerate(r["steps"]):
            shown = (" ".join(st["stack"]) if engine == "stack"
                     else " ".join("%s=%s" % kv for kv in st["registers"]))
            rows.append({"step": n, "function": st["function"], "pc": st["pc"],
                         "line": st["line"], "instruction": st["instruction"], state: shown,
                         "error": st["error"]})
        t = Table(rows, ["step", "function", "pc", "line", "instruction", state, "error"],
                  "%s VM: %d steps%s" % (engine, len(rows), " (truncated)" if r["truncated"] else ""))
        t.output = r["output"]
        t.truncated = r["truncated"]
        t.steps = r["steps"]
        return t

    def live_ranges(self, function=None):
        """The register allocator's live intervals: each virtual register's [start, end]
        and where it went (a register, or a spill slot)."""
        if function:
            self.stage("reg-alloc", function=function)  # StageError for no such function
        return Table(_Session.live_ranges(self, function or ""),
                     ["function", "value", "type", "start", "end", "location", "spilled"],
                     "live intervals (%d registers)" % self.registers)

    def graph(self, which="executed", fmt="text"):
        """The tensor dataflow graph of the last evaluation ("before", a pass's name,
        "executed") or of what is pending ("pending")."""
        return View("graph", _Session.graph_view(self, which, fmt), fmt)

    # ---- globals and tensors ------------------------------------------------------------
    def __getitem__(self, name):
        """A global: int, float, bool, or a Tensor (computed first if pending; shared)."""
        return self.get_global(name)

    def __setitem__(self, name, value):
        """Sets a global, as `name = value` in a program would. An array becomes a tensor
        global without a copy when it is C-contiguous float32."""
        if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
            value = value.item()  # a NumPy scalar: np.float32(2.5) is a float here
        if not isinstance(value, (bool, int, float)):
            value = _input(value)
        self.set_global(name, value)

    def __contains__(self, name):
        try:
            self.get_global(name)
            return True
        except KeyError:
            return False

    def call(self, kernel, *args, device=None):
        """Calls a kernel (a prelude kernel such as linear or matmul, or one defined by run())
        on arrays or Tensors and returns the result as a Tensor. C-contiguous float32 arrays
        go in without a copy. device: "ref", "cpu", "opencl" for this call (default: the
        session's device)."""
        inputs = []
        for a in args:  # a loop, not a comprehension: the warning points at the caller
            inputs.append(_input(a))
        return _Session.call(self, kernel, *inputs, device=device or "")

    def kernels(self):
        """{name: signature} of every kernel: the prelude's, then the session's own."""
        return dict(_Session.kernels(self))

    # ---- gradients (docs/training.md) -------------------------------------------------------
    def adjoints(self, kernel):
        """The adjoint kernels of `kernel`, derived from its index notation: one dict per
        parameter with its name ("linear_dw"), Descent source, and the parameters it takes."""
        return list(_Session.adjoints(self, kernel))

    def grad(self, kernel, *args, wrt=0, dout=None, device=None):
        """The gradient of sum(dout * kernel(*args)) with respect to argument `wrt` (an index
        or a parameter name), by the derived adjoint kernel, which is defined in this session
        (under its own name) and called. dout defaults to ones (the gradient of the sum).
        Arrays in, a Tensor out (np.asarray() it)."""
        adjoints = self.adjoints(kernel)
        if isinstance(wrt, str):
            names = [a["param"] for a in adjoints]
            if wrt not in names:
                raise KeyError("kernel %r has no parameter %r (parameters: %s)" % (kernel, wrt, ", ".join(names)))
            wrt = names.index(wrt)
        a = adjoints[wrt]
        if dout is None:
            import numpy as np
            dout = np.ones(np.asarray(self.call(kernel, *args, device=device)).shape, dtype=np.float32)
        if a["name"] not in self.kernels():
            self.run(a["source"])
        return self.call(a["name"], *[args[i] for i in a["inputs"]], dout, device=device)

    # ---- schedules ------------------------------------------------------------------------
    def schedule(self, kernel, **dims):
        """A Schedule of `kernel` lowered for the named dims (others 64), TVM-style."""
        return Schedule(self, kernel, dims)


def tune(session, kernel, *, device="cpu", strategy="evolutionary", trials=32, seed=1,
         repeats=5, time_limit=10.0, database="", compare=None, **dims):
    """Searches a schedule for `kernel` on `device` (docs/tuning.md): each candidate checked
    against the reference interpreter and timed. From then on the session runs the kernel
    with the best schedule found. Returns a TuneResult (a table and a chart in a notebook)."""
    import json
    text, png = _Session.tune(session, kernel, dims, device, strategy, trials, seed, repeats,
                              time_limit, database, compare or {})
    return TuneResult(json.loads(text), png)


class TuneResult:
    """What a search found: per kernel, the naive, default and best times and the best
    schedule; ``candidates`` every schedule measured; ``chart`` the best-so-far curve."""

    def __init__(self, report, png):
        self.report = report
        self.tasks = report["tasks"]
        self.chart = Chart(png, "tuning") if png else None

    @property
    def best_trace(self):
        return self.tasks[0]["best_trace"] if self.tasks else ""

    @property
    def candidates(self):
        return [c for t in self.tasks for c in t["candidates"]]

    def table(self):
        rows = []
        for t in self.tasks:
            naive, best = t.get("naive_s") or 0, t.get("best_s") or 0
            rows.append({"kernel": t["kernel"], "shape": t["shape"],
                         "candidates": len(t["candidates"]),
                         "naive ms": naive * 1e3, "default ms": (t.get("default_s") or 0) * 1e3,
                         "best ms": best * 1e3,
                         "speed-up": (naive / best) if naive and best else float("nan"),
                         "best schedule": t["best_trace"]})
        return Table(rows, title="tuning on %s (%s)" % (self.report["device"], self.report["strategy"]))

    def __repr__(self):
        return str(self.table())

    def _repr_html_(self):
        return self.table()._repr_html_() + (self.chart.html() if self.chart else "")


def bench(suite="vm", *, quick=True, repeats=3, engines=(), workloads=(), baseline=""):
    """Runs a `descent bench` suite in this process (quick sizes by default): medians, ratios
    against the baseline engine measured in the same run, and a chart."""
    import json
    text, png = _descent.bench(suite, quick, repeats, list(engines), list(workloads), baseline)
    return BenchResult(json.loads(text), png)


class BenchResult:
    """Benchmark records (``records``: dicts as `descent bench --json` writes them), shown as
    a table and a chart."""

    def __init__(self, records, png):
        self.records = records["records"] if isinstance(records, dict) else records
        self.chart = Chart(png, "benchmarks") if png else None

    def table(self):
        rows = [{"workload": r["workload"], "engine": r["engine"], "median ms": r["median_s"] * 1e3,
                 "ratio": r.get("ratio_vs_baseline"), "ok": r["checksum_ok"]} for r in self.records]
        return Table(rows, title="benchmarks")

    def __repr__(self):
        return str(self.table())

    def _repr_html_(self):
        return self.table()._repr_html_() + (self.chart.html() if self.chart else "")
