"""Schedules the TVM way: loop and block handles, one method per primitive.

    sch = sess.schedule("mm_relu", n=128)
    i, j, k = sch.get_loops("Y")
    i0, i1 = sch.split(i, 4)
    sch.reorder(i0, j, i1, k)
    sch.mod            # the loop nest, TVMScript-like
    sch.trace()        # the steps, as the REPL's :sched and schedule files write them

Each method writes one schedule step (docs/tensor.md's text, the same as the REPL's :sched)
and hands it to the Session's kernel microscope, which checks and applies it; a refusal
raises ScheduleError with the REPL's message. Nothing here transforms a loop nest.

A Session has one kernel under the microscope. Several Schedule objects can live side by side:
the one used last is put back under it (its kernel selected, its steps replayed) before a
step, so each keeps its own trace. Whatever a Schedule's last step was, that schedule also
applies when a program calls the kernel, as with :kernel and :sched in the REPL.
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
        for n in self._schedule._sess.schedule_loops(self.block):
            if n.split(".")[-1] == var:
                return n
        raise ScheduleError("loop '%s' is no longer around block '%s' (its loops: %s)" % (
            self.name, self.block,
            ", ".join(self._schedule._sess.schedule_loops(self.block)) or "none"))

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
        self.kernel = kernel
        self.dims = dict(dims)
        self._trace = ""
        self._undone = []  # steps undo took back, for redo (this schedule's own)
        self._activate(fresh=True)

    # ---- the microscope ----------------------------------------------------------------
    def _activate(self, fresh=False):
        s = self._sess
        if not fresh and getattr(s, "_microscope", None) is self:
            return
        s.select_kernel(self.kernel, self.dims)
        while s.schedule_undo():  # select_kernel brings back the kernel's last schedule
            pass
        for step in self._trace.splitlines():
            s.schedule_step(step)
        s._microscope = self

    def _step(self, text, keep_redo=False):
        self._activate()
        self._sess.schedule_step(text)
        self._trace = self._sess.schedule_trace()
        if not keep_redo:
            self._undone = []  # a new step ends what redo could bring back

    def _new_names(self, before):
        # What a step made: the names now there that were not before, compared by variable
        # (a split of Y.i can turn C's "C.i" into a bare "i": the same loop, not a new one).
        left = [n.split(".")[-1] for n in before]
        out = []
        for n in self._sess.schedule_names():
            var = n.split(".")[-1]
            if var in left:
                left.remove(var)
            else:
                out.append(n)
        return out

    def _is_block(self, name):
        try:
            self._sess.schedule_loops(name)
            return True
        except ScheduleError:
            return False

    # ---- handles ----------------------------------------------------------------------
    def get_block(self, name):
        """The block called `name` (ScheduleError listing the blocks when there is none)."""
        self._activate()
        self._sess.schedule_loops(name)  # checks that it exists
        return BlockRV(name)

    def get_loops(self, block):
        """The loops around `block`, outermost first."""
        self._activate()
        b = _name(block)
        return tuple(LoopRV(self, n, b) for n in self._sess.schedule_loops(b))

    def _loops_from(self, before, block):
        if block:
            # The loops around the block now that were not there before (by variable: a
            # split of Y.i can turn another nest's "C.i" into a bare "i").
            left = [n.split(".")[-1] for n in before]
            out = []
            for n in self._sess.schedule_loops(block):
                var = n.split(".")[-1]
                if var in left:
                    left.remove(var)
                else:
                    out.append(LoopRV(self, n, block))
            return out
        return [LoopRV(self, n, block) for n in self._new_names(before) if not self._is_block(n)]

    def _before(self, loop):
        """What _loops_from compares with: the block's loops, or every name."""
        self._activate()
        block = loop.block if isinstance(loop, LoopRV) else ""
        return (self._sess.schedule_loops(block) if block else self._sess.schedule_names()), block

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
        before, block = self._before(loop)
        self._step("split %s %d" % (_name(loop), factor))
        return tuple(self._loops_from(before, block))

    def tile(self, loop1, loop2, f1, f2):
        """Splits two nested loops and reorders them: (i_0, j_0, i_1, j_1)."""
        before, block = self._before(loop1)
        self._step("tile %s %s %d %d" % (_name(loop1), _name(loop2), operator.index(f1),
                                         operator.index(f2)))
        return tuple(self._loops_from(before, block))

    def reorder(self, *loops):
        self._step("reorder " + " ".join(_name(l) for l in loops))

    def fuse(self, loop1, loop2):
        before, block = self._before(loop1)
        self._step("fuse %s %s" % (_name(loop1), _name(loop2)))
        new = self._loops_from(before, block)
        return new[0] if new else None

    def fission(self, loop):
        self._step("fission " + _name(loop))

    def blockize(self, loop):
        self._activate()
        before = self._sess.schedule_names()
        self._step("blockize " + _name(loop))
        blocks = [n for n in self._new_names(before) if self._is_block(n)]
        return BlockRV(blocks[0]) if blocks else None

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

    def _new_block(self, step):
        self._activate()
        before = self._sess.schedule_names()
        self._step(step)
        blocks = [n for n in self._new_names(before) if self._is_block(n)]
        return BlockRV(blocks[0]) if blocks else None

    def cache_read(self, block, buffer, scope="local"):
        """Stages `buffer` into a copy that `block` reads; returns the copying block."""
        return self._new_block("cache_read %s %s %s" % (_name(block), buffer, scope))

    def cache_write(self, block, scope="local"):
        """`block` accumulates in a copy, written back after; returns the write-back block."""
        return self._new_block("cache_write %s %s" % (_name(block), scope))

    def decompose_reduction(self, block, loop):
        return self._new_block("decompose_reduction %s %s" % (_name(block), _name(loop)))

    def rfactor(self, block, loop):
        """Returns the partial-sum block (BLOCK_rf)."""
        return self._new_block("rfactor %s %s" % (_name(block), _name(loop)))

    def apply(self, text):
        """Steps as text, one per line (a schedule file, or the REPL's :sched words)."""
        for line in text.splitlines():
            if line.split("#")[0].strip():
                self._step(line)

    # ---- history and views --------------------------------------------------------------
    def trace(self):
        """The steps in effect, one per line: replaying them on the kernel gives this nest."""
        return self._trace

    def undo(self):
        """Takes the last step back; False when there is none."""
        steps = self._trace.splitlines()
        if not steps:
            return False
        self._activate()
        self._sess.schedule_undo()
        self._trace = self._sess.schedule_trace()
        self._undone.append(steps[-1])
        return True

    def redo(self):
        """Applies the step undo() last took back; False when there is none. (Kept here, not
        in the Session: another Schedule of the same kernel has its own history.)"""
        if not self._undone:
            return False
        self._step(self._undone.pop(), keep_redo=True)
        return True

    @property
    def mod(self):
        """The scheduled loop nest, TVMScript-like (the REPL's :kernel view tir)."""
        return self.show("tir")

    def show(self, view="tir"):
        """A view of the scheduled kernel: tir, tir-original, c, llvm, llvm-opt, opencl, ...
        (Session.kernel_views() lists them)."""
        self._activate()
        return View(view, self._sess.kernel_view(view))

    def run(self, device="cpu", check=True, seed=1):
        """Runs the kernel on seeded random inputs; with check, also on the reference
        interpreter, raising CheckError where they differ. Returns the run's facts."""
        self._activate()
        return self._sess.run_kernel(device, check, seed, 1)

    def time(self, device="cpu", repeats=5):
        """The kernel's median time in seconds over `repeats` runs (compilation excluded)."""
        if operator.index(repeats) < 1:
            raise ValueError("repeats must be at least 1")
        self._activate()
        return self._sess.run_kernel(device, False, 1, repeats)["seconds"]

    def __repr__(self):
        dims = ", ".join("%s=%d" % kv for kv in sorted(self.dims.items()))
        steps = self._trace.count("\n") + (1 if self._trace and not self._trace.endswith("\n") else 0)
        return "<Schedule %s(%s): %d steps>" % (self.kernel, dims, steps)
