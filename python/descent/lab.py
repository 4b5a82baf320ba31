"""The guided labs from Python (docs/labs.md): the same labs, checks and hints as
`descent lab`, with the report as a table in a notebook.

    descent.lab.start("stack_budget")          # copies the starter files to descent-labs/
    descent.lab.check("stack_budget")          # runs every check: a LabReport
    descent.lab.hint("stack_budget")           # the next hint
"""
from . import _descent
from .display import Table


def list(root=""):
    """Every lab, in course order: name, title, tier, kind, files, checks."""
    return Table(_descent.labs(root), ["name", "tier", "kind", "title", "checks"], "labs")


def start(name, work_dir="", root=""):
    """Copies a lab's starter files into work_dir (default ./descent-labs/NAME) without
    overwriting anything there; returns the folder."""
    folder, message = _descent.lab_start(name, work_dir, root)
    print(message)
    return folder


def check(name, work_dir="", root="", time_limit=10.0):
    """Runs every check of lab `name` on the files in work_dir: a LabReport."""
    return LabReport(_descent.lab_check(name, work_dir, root, time_limit))


def hint(name, work_dir="", root=""):
    """The next hint (each call gives the following one)."""
    return _descent.lab_hint(name, work_dir, root)


class LabReport:
    """Every check's verdict: ``passed``, ``points`` of ``max_points``, and per check its
    name, points and (when it failed) the reason with the input, the expected and the got."""

    def __init__(self, d):
        self.__dict__.update(d)

    def table(self):
        rows = [{"check": c["name"], "points": "%d/%d" % (c["points"], c["max_points"]),
                 "verdict": "passed" if c["passed"] else "FAILED", "why": c["reason"]}
                for c in self.checks]
        return Table(rows, ["check", "points", "verdict", "why"],
                     "%s: %d/%d points%s" % (self.lab, self.points, self.max_points,
                                             " (" + self.setup_error + ")" if self.setup_error else ""))

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        return self.table()._repr_html_()
