"""Schedules the TVM way: loop and block handles, one method per primitive.

    sch = sess.schedule("mm_relu", n=128)
    i, j, k = sch.get_loops("Y")
    i0, i1 = sch.split(i, 4)
    sch.reorder(i0, j, i1, k)
    sch.mod            # the loop nest, TVMScript-like
    sch.trace()        # the steps, as the REPL's :sched and schedule files write them

Each Schedule is a schedule object the Session owns (Session::open_schedule), by id: any
number live side by side, each with its own kernel, dims, steps, undo and redo. Each method
writes one schedule step (docs/tensor.md's text, the same as the REPL's :sched) and hands
it to that object, which checks and applies it and says which loops and blocks it made; a
refusal raises ScheduleError with the REPL's message. Nothing here transforms a loop nest,
replays a trace or compares names. The schedule stepped last is the one a program's calls
of the kernel use (install() chooses another), as with :kernel and :sched in the REPL.
"""
import operator

from .display import View
from .errors import ScheduleError


class LoopRV:
    """A loop of the schedule. ``name`` is how steps address it: its variable ("i_0"), or
    "BLOCK.var" where the variable alone is ambiguous."""

    def __init__(self, schedule, name, block):
        self._schedule = schedule
        self.name = name
        self.block = block

    def _ref(self):
        # The handle means a loop around its block. Named as steps would name it now: the bare
        # variable while that is unique, "BLOCK.var" once another nest grew one of that name.
        # A loop that is no longer around its block (fused, split, moved away) is an error,
        # never some other loop that took its name.
        if not self.block:
            return self.name
        var = self.name.split(".")[-1]
        loops = self._schedule._loops(self.block)
        for n in loops:
            if n.split(".")[-1] == var:
                return n
        raise ScheduleError("loop '%s' is no longer around block '%s' (its loops: %s)" % (
            self.name, self.block, ", ".join(loops) or "none"))

    def __repr__(self):
        return "LoopRV(%r)" % self.name

    def __str__(self):
        return self.name


class BlockRV:
    """A block of the schedule, by name ("Y", "C", "Y_rf")."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "BlockRV(%r)" % self.name

    def __str__(self):
        return self.name


def _name(x):
    if isinstance(x, LoopRV):
        return x._ref()
    if isinstance(x, BlockRV):
        return x.name
    if isinstance(x, str):
        return x
    raise TypeError("expected a loop, a block or a name, got %r" % (x,))


class Schedule:
    """A kernel's loop nest under transformation (see the module's docstring)."""

    def __init__(self, session, kernel, dims):
        self._sess = session
        self._id = 0
        self.kernel = kernel
        self.dims = dict(dims)
        self._id = session.open_schedule(kernel, self.dims, False)
        session.use_schedule(self._id)  # the Session's microscope shows the newest one

    def close(self):
        """Frees the Session's object now (else when this Schedule and its handles are
        gone). What it installed stays installed; using it afterwards is a ScheduleError."""
        if self._id and not getattr(self, "_closed", False):
            self._closed = True
            self._sess.close_schedule(self._id)

    def __del__(self):
        # A session already gone (interpreter exit) has nothing left to free.
        try:
            self.close()
        except Exception:
            pass

    def _live(self):
        # The Session answers a closed id with "" or False for the trace, undo and redo:
        # a closed Schedule says so instead.
        if getattr(self, "_closed", False):
            raise ScheduleError("this schedule of %s was closed" % self.kernel)
        return self._id

    def _step(self, text):
        """Applies one step; returns what it made ({"canonical", "loops", "blocks"})."""
        return self._sess.schedule_step(text, self._live())

    def _loops(self, block):
        return self._sess.schedule_loops(block, self._live())

    def _made_loops(self, made, block):
        # Handles on the loops a step made. From a loop that belonged to a block, they belong
        # to it too: named as get_loops names them, so they follow the block.
        if not block:
            return [LoopRV(self, n, "") for n in made["loops"]]
        new = [n.split(".")[-1] for n in made["loops"]]
        return [LoopRV(self, n, block) for n in self._loops(block) if n.split(".")[-1] in new]

    @staticmethod
    def _made_block(made):
        return BlockRV(made["blocks"][0]) if made["blocks"] else None

    # ---- handles ----------------------------------------------------------------------
    def get_block(self, name):
        """The block called `name` (ScheduleError listing the blocks when there is none)."""
        self._loops(name)  # checks that it exists
        return BlockRV(name)

    def get_loops(self, block):
        """The loops around `block`, outermost first."""
        b = _name(block)
        return tuple(LoopRV(self, n, b) for n in self._loops(b))

    # ---- primitives -------------------------------------------------------------------
    def split(self, loop, factor=None, *, factors=None):
        """Splits `loop` into (outer, inner) with an inner extent of `factor`; TVM's
        ``factors=[None, F]`` works too. A predicate guards the block when F does not divide."""
        if factors is not None:
            if len(factors) != 2 or factors[1] is None:
                raise ScheduleError("factors must be [None, INNER] (the inner extent)")
            factor = factors[1]
        if factor is None:
            raise ScheduleError("split needs a factor: split(loop, 4)")
        factor = operator.index(factor)  # 2.7 is a TypeError, not a silent 2
        made = self._step("split %s %d" % (_name(loop), factor))
        return tuple(self._made_loops(made, getattr(loop, "block", "")))

    def tile(self, loop1, loop2, f1, f2):
        """Splits two nested loops and reorders them: (i_0, j_0, i_1, j_1)."""
        made = self._step("tile %s %s %d %d" % (_name(loop1), _name(loop2), operator.index(f1),
                                                operator.index(f2)))
        return tuple(self._made_loops(made, getattr(loop1, "block", "")))

    def reorder(self, *loops):
        self._step("reorder " + " ".join(_name(l) for l in loops))

    def fuse(self, loop1, loop2):
        made = self._step("fuse %s %s" % (_name(loop1), _name(loop2)))
        new = self._made_loops(made, getattr(loop1, "block", ""))
        return new[0] if new else None

    def fission(self, loop):
        self._step("fission " + _name(loop))

    def blockize(self, loop):
        return self._made_block(self._step("blockize " + _name(loop)))

    def tensorize(self, loop_or_block, intrinsic):
        self._step("tensorize %s %s" % (_name(loop_or_block), intrinsic))

    def unroll(self, loop):
        self._step("unroll " + _name(loop))

    def vectorize(self, loop):
        self._step("vectorize " + _name(loop))

    def parallel(self, loop):
        self._step("parallel " + _name(loop))

    def bind(self, loop, thread_axis):
        """Binds a loop to an OpenCL work-item axis: group.x|y|z or local.x|y|z (TVM's
        blockIdx.x / threadIdx.x are accepted too)."""
        axis = {"blockIdx.x": "group.x", "blockIdx.y": "group.y", "blockIdx.z": "group.z",
                "threadIdx.x": "local.x", "threadIdx.y": "local.y",
                "threadIdx.z": "local.z"}.get(thread_axis, thread_axis)
        self._step("bind %s %s" % (_name(loop), axis))

    def compute_at(self, block, loop):
        self._step("compute_at %s %s" % (_name(block), _name(loop)))

    def reverse_compute_at(self, block, loop):
        self._step("reverse_compute_at %s %s" % (_name(block), _name(loop)))

    def compute_inline(self, block):
        self._step("compute_inline " + _name(block))

    def cache_read(self, block, buffer, scope="local"):
        """Stages `buffer` into a copy that `block` reads; returns the copying block."""
        return self._made_block(self._step("cache_read %s %s %s" % (_name(block), buffer, scope)))

    def cache_write(self, block, scope="local"):
        """`block` accumulates in a copy, written back after; returns the write-back block."""
        return self._made_block(self._step("cache_write %s %s" % (_name(block), scope)))

    def decompose_reduction(self, block, loop):
        return self._made_block(self._step("decompose_reduction %s %s" % (_name(block), _name(loop))))

    def rfactor(self, block, loop):
        """Returns the partial-sum block (BLOCK_rf)."""
        return self._made_block(self._step("rfactor %s %s" % (_name(block), _name(loop))))

    def apply(self, text):
        """Steps as text, one per line (a schedule file, or the REPL's :sched words)."""
        for line in text.splitlines():
            if line.split("#")[0].strip():
                self._step(line)

    # ---- history and views --------------------------------------------------------------
    def trace(self):
        """The steps in effect, one per line: replaying them on the kernel gives this nest."""
        return self._sess.schedule_trace(self._live())

    def undo(self):
        """Takes the last step back; False when there is none."""
        return self._sess.schedule_undo(self._live())

    def redo(self):
        """Applies the step undo() last took back; False when there is none. Each Schedule
        has its own history: another Schedule of the same kernel does not touch it."""
        return self._sess.schedule_redo(self._live())

    def install(self):
        """Makes the program's calls of this kernel use this schedule (stepping does too)."""
        self._sess.install_schedule(self._live())

    @property
    def mod(self):
        """The scheduled loop nest, TVMScript-like (the REPL's :kernel view tir)."""
        return self.show("tir")

    def show(self, view="tir"):
        """A view of the scheduled kernel: tir, tir-original, c, llvm, llvm-opt, opencl, ...
        (Session.kernel_views() lists them)."""
        return View(view, self._sess.kernel_view(view, self._live()))

    def run(self, device="cpu", check=True, seed=1):
        """Runs the kernel on seeded random inputs; with check, also on the reference
        interpreter, raising CheckError where they differ. Returns the run's facts."""
        return self._sess.run_kernel(device, check, seed, 1, self._live())

    def time(self, device="cpu", repeats=5):
        """The kernel's median time in seconds over `repeats` runs (compilation excluded)."""
        if operator.index(repeats) < 1:
            raise ValueError("repeats must be at least 1")
        return self._sess.run_kernel(device, False, 1, repeats, self._live())["seconds"]

    def __repr__(self):
        dims = ", ".join("%s=%d" % kv for kv in sorted(self.dims.items()))
        if getattr(self, "_closed", False):
            return "<Schedule %s(%s): closed>" % (self.kernel, dims)
        steps = len(self.trace().splitlines())
        return "<Schedule %s(%s): %d steps>" % (self.kernel, dims, steps)
