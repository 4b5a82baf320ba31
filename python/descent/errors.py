"""The exceptions Descent raises in Python.

Every one is a DescentError. Those that come from a program (CompileError, RunError) carry
where: ``file``, ``line`` and ``column`` (1-based; None where the error has no place) and
``detail`` (the one-line message, e.g. "division by zero"); ``str(e)`` is the diagnostic as
the REPL prints it, with the source line and a caret. A RunError also carries ``output``:
what the program printed before it failed.
"""


class DescentError(Exception):
    """Base class of every Descent error."""

    def __init__(self, message, *, file=None, line=None, column=None, detail=None,
                 output="", diagnostics=()):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line or None
        self.column = column or None
        self.detail = detail if detail is not None else message
        self.output = output
        # Every diagnostic of the input: (file, line, column, message) tuples.
        self.diagnostics = list(diagnostics)


class CompileError(DescentError):
    """The source did not lex, parse or type-check."""


class RunError(DescentError):
    """The program failed while running (division by zero, index out of range, interrupted
    by a step limit, ...)."""


class ScheduleError(DescentError, ValueError):
    """A schedule primitive refused: the message is the REPL's, naming the loop or block and
    the reason ("cannot vectorize 'k': it carries the reduction of block 'Y' ...")."""


class StageError(DescentError, ValueError):
    """A view that is not available: an unknown stage, pass or function, or nothing compiled."""


class TensorError(DescentError, ValueError):
    """A tensor that cannot be used: wrong dtype, not contiguous, bad shape, a kernel's
    arguments that do not fit its declared shapes."""


class DeviceError(DescentError):
    """A tensor device that is unknown or cannot be opened (no OpenCL platform, ...)."""


class CheckError(DescentError):
    """A kernel's result differs from the reference interpreter's."""


class TuneError(DescentError):
    """A tuning request that cannot run (unknown kernel, strategy or device)."""


class LabError(DescentError):
    """An unknown lab, a missing work folder, a lab.json that does not parse."""


class CopyWarning(UserWarning):
    """An array was copied on its way into Descent (not float32, or not C-contiguous)."""
