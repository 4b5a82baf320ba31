# The notebooks in examples/notebooks, run top to bottom as a student would run them. Each code
# cell ends with assertions, so a cell that raises is a failure here; on top of that, what the
# cells printed and displayed is checked. With Jupyter's runner (nbclient and ipykernel) the
# notebooks run in a real kernel; without it, each one's code cells run as one Python script.
# Either way they also run as scripts, so a notebook never depends on IPython.
import ast
import asyncio
import json
import os
import shutil
import subprocess
import sys

import pytest

import descent
from conftest import BUILD, ROOT

NOTEBOOKS = ROOT / "examples" / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
MARK = "<<descent-notebook-cell %d>>"

try:
    import ipykernel  # noqa: F401  (the kernel nbclient starts)
    import nbclient
    import nbformat
except ImportError:
    nbclient = None


def _env():
    # The kernel (or the script) must import the module this build made.
    env = dict(os.environ)
    python_dir = str(BUILD / "python")
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != python_dir]
    env["PYTHONPATH"] = os.pathsep.join([python_dir] + rest)
    env["DESCENT_PYTHONPATH"] = python_dir
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel's debugger warning, not ours
    return env


def _code_cells(path):
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "code"]


def _as_script(cells):
    """The code cells as one script: each cell's output after a marker line, and a cell's last
    expression printed as a notebook would display it."""
    parts = ["def _display_(value):\n    if value is not None:\n        print(repr(value))\n"]
    for n, source in enumerate(cells):
        tree = ast.parse(source)
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body[-1]
            tree.body[-1] = ast.Expr(ast.Call(ast.Name("_display_", ast.Load()), [last.value], []))
            ast.fix_missing_locations(tree)
        parts.append("print(%r, flush=True)\n%s\n" % (MARK % n, ast.unparse(tree)))
    return "\n".join(parts)


def run_as_script(path):
    """Runs the notebook's code cells in order in a fresh Python; returns each cell's text."""
    cells = _code_cells(path)
    r = subprocess.run([sys.executable, "-c", _as_script(cells)], cwd=str(NOTEBOOKS), env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "%s failed as a script:\n%s\n%s" % (path.name, r.stdout[-4000:],
                                                                  r.stderr[-4000:])
    texts = []
    for n in range(len(cells)):
        start = r.stdout.index(MARK % n) + len(MARK % n)
        end = r.stdout.find(MARK % (n + 1))
        texts.append({"source": cells[n], "text": r.stdout[start:end if end >= 0 else None],
                      "mimes": {"text/plain"}})
    return texts


def run_in_kernel(path):
    """Runs the notebook in a Jupyter kernel, as `jupyter nbconvert --execute` would; returns
    each code cell's source, its outputs' text and the MIME types it displayed."""
    nb = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    # Raises CellExecutionError, naming the cell, if one raised. asyncio.run closes its loop.
    asyncio.run(client.async_execute(env=_env()))
    texts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        text, mimes = [], set()
        for o in cell.outputs:
            if o.output_type == "stream":
                text.append(o.text)
            elif o.output_type in ("execute_result", "display_data"):
                mimes.update(o.data)
                text.append(o.data.get("text/plain", ""))
        texts.append({"source": cell.source, "text": "".join(text), "mimes": mimes})
    return texts


def _cell(texts, needle):
    """The output of the one code cell whose source contains `needle`."""
    found = [t for t in texts if needle in t["source"]]
    assert len(found) == 1, "%d cells contain %r" % (len(found), needle)
    return found[0]


def _check_interpreters(texts, in_kernel):
    everything = "".join(t["text"] for t in texts)
    assert "144 506" in everything
    compare = _cell(texts, "sess.compare()")["text"]
    for engine in descent.engines():
        assert engine in compare, (engine, compare)
    assert compare.count("144 506") >= len(descent.engines())
    assert "IDENT     fib" in _cell(texts, 'sess.stage("tokens")')["text"]
    assert "+    int 12 : int" in _cell(texts, "unified_diff")["text"]
    assert "LOAD_LOCAL" in _cell(texts, 'sess.stage("stack"')["text"]
    assert "spill" in _cell(texts, "registers=3")["text"]
    assert "define i64 @ds.fib" in _cell(texts, 'sess.stage("llvm", function')["text"]
    assert "; fn fib" in _cell(texts, 'sess.stage("native-asm"')["text"]
    assert "oops.ds:1:12: error:" in _cell(texts, "oops.ds")["text"]
    assert "division by zero" in _cell(texts, "div.ds")["text"]
    if in_kernel:
        # Tables display as HTML; the tree is drawn (when Graphviz is there to draw it).
        assert "text/html" in _cell(texts, "sess.compare()")["mimes"]
        if shutil.which("dot"):
            assert "image/svg+xml" in _cell(texts, 'fmt="dot"')["mimes"]


def _check_mlc(texts, in_kernel):
    everything = "".join(t["text"] for t in texts)
    assert "T.grid" in everything and "@T.prim_func" in everything
    assert "T.vectorized(4)" in everything
    assert "lnumpy_mm_relu" in _cell(texts, "lnumpy_mm_relu(a_np")["text"]
    assert "cannot parallelize 'k'" in _cell(texts, "sch.parallel(k)")["text"]
    trace = _cell(texts, "print(sch.trace())")["text"]
    assert "split Y.j 4" in trace and "reverse_compute_at C j_0" in trace
    table = _cell(texts, "descent.Table(")["text"]
    for row in ("lnumpy_mm_relu", "naive loop nest", "our schedule", "NumPy"):
        assert row in table, (row, table)
    assert "'checked': True" in _cell(texts, 'sch.run("cpu", check=True)')["text"]
    assert "mm_relu" in _cell(texts, "descent.tune(")["text"]
    if in_kernel:
        # Each loop nest a cell ends with displays highlighted.
        shown = [t for t in texts if t["source"].rstrip().endswith("sch.mod")]
        assert shown and all("text/html" in t["mimes"] for t in shown)


CHECKS = {"interpreters.ipynb": _check_interpreters, "mlc.ipynb": _check_mlc}


def test_the_notebooks_are_there():
    assert sorted(p.name for p in PATHS) == sorted(CHECKS)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_clean_and_checks_itself(path):
    nb = json.loads(path.read_text())
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["name"] == "python3"
    if nbclient is not None:
        nbformat.validate(nbformat.read(str(path), as_version=4))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and any(c["cell_type"] == "markdown" for c in nb["cells"])
    for c in code:
        source = "".join(c["source"])
        assert c["outputs"] == [] and c["execution_count"] is None, "stored with outputs: " + source
        assert "assert" in source, "a code cell without a check:\n" + source
    # The first cell makes `import descent` work from a source checkout.
    assert "import descent" in "".join(code[0]["source"])


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_top_to_bottom(path):
    if nbclient is not None:
        texts, in_kernel = run_in_kernel(path), True
    else:  # no Jupyter runner here: the same cells as a script
        texts, in_kernel = run_as_script(path), False
    CHECKS[path.name](texts, in_kernel)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_as_a_script(path):
    CHECKS[path.name](run_as_script(path), False)
