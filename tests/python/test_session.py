# descent.Session: running programs, errors with locations, stages, passes, compare, options,
# globals. The AST walker is the oracle: every engine's output is checked against it.
import pytest

import descent
from descent import CompileError, DescentError, DeviceError, RunError, StageError

FIB = """fn fib(n) {
  if n < 2 { return n }
  return fib(n - 1) + fib(n - 2)
}
print(fib(20))
"""


def test_run_returns_output_and_accumulates(sess):
    assert sess.run("x = 15\nprint(x + 10 - 5)") == "20\n"
    # The next input sees the globals and functions of the ones before, as REPL lines do.
    assert sess.run("print(x * 2)") == "30\n"
    assert sess.run("fn sq(v) { return v * v }") == ""
    assert sess.run("print(sq(x))") == "225\n"


def test_echo_prints_expression_values_like_the_repl(sess):
    assert sess.run("1 + 2", echo=True) == "3\n"
    assert sess.run("1 + 2") == ""


@pytest.mark.parametrize("engine", descent.engines())
def test_every_engine_agrees_with_the_ast_walker(engine):
    oracle = descent.Session().run(FIB)
    assert oracle == "6765\n"
    s = descent.Session(engine=engine)
    assert s.engine == engine
    assert s.run(FIB) == oracle


def test_engine_as_a_keyword_is_for_that_call_alone(sess):
    assert sess.run("print(7 / 2)", engine="reg") == "3\n"
    assert sess.engine == "ast"
    out = sess.submit("print(1)", engine="stack")
    assert out["status"] == "ok" and out["output"] == "1\n" and out["steps"] > 0
    assert sess.engine == "ast"


def test_compile_error_carries_file_line_column(sess):
    with pytest.raises(CompileError) as info:
        sess.run("x = 1\ny = x + true\n", name="lesson.ds")
    e = info.value
    assert (e.file, e.line, e.column) == ("lesson.ds", 2, 7)
    assert "int" in e.detail and "bool" in e.detail
    # str(e) is the REPL's rendering: file:line:col, the source line and a caret.
    assert str(e).startswith("lesson.ds:2:7: error:")
    assert "y = x + true" in str(e) and "^" in str(e)
    assert e.diagnostics[0][:3] == ("lesson.ds", 2, 7)
    # A failed input defines nothing; the session goes on.
    assert sess.run("print(1)") == "1\n"


def test_parse_error_is_a_compile_error(sess):
    with pytest.raises(CompileError) as info:
        sess.run("x = 1\ny = * 2\n")
    assert (info.value.line, info.value.column) == (2, 5)


@pytest.mark.parametrize("engine", descent.engines())
def test_runtime_error_carries_location_and_output_so_far(engine):
    s = descent.Session(engine=engine)
    with pytest.raises(RunError) as info:
        s.run('print("before")\nz = 0\nprint(10 / z)\n', name="div.ds")
    e = info.value
    assert (e.file, e.line) == ("div.ds", 3)
    assert e.column >= 1
    assert e.detail == "division by zero"
    assert e.output == "before\n"


def test_step_limit_stops_a_loop(sess):
    with pytest.raises(RunError) as info:
        sess.run("while true { }", step_limit=10000)
    assert "interrupted" in str(info.value)


def test_errors_are_descent_errors():
    for cls in (CompileError, RunError, StageError, DeviceError, descent.ScheduleError,
                descent.TensorError, descent.CheckError, descent.TuneError, descent.LabError):
        assert issubclass(cls, DescentError)
    assert issubclass(descent.ScheduleError, ValueError)


def test_stages_views(sess):
    sess.run(FIB)
    names = [n for n, _ in descent.stages()]
    for required in ("tokens", "ast", "stack", "reg-alloc", "llvm", "asm", "native-asm"):
        assert required in names
    ast = sess.stage("ast")
    assert "fib" in ast.text and "Call" in ast.text or "call" in ast.text.lower()
    # One function alone, like dis.dis(fib).
    fib_reg = sess.stage("reg-alloc", function="fib")
    assert "fib" in fib_reg.text
    assert "<script>" not in fib_reg.text
    with pytest.raises(StageError) as info:
        sess.stage("reg", function="nope")
    assert "fib" in str(info.value)  # lists the functions there are
    with pytest.raises(StageError):
        sess.stage("no-such-stage")
    with pytest.raises(StageError):
        sess.stage("ast", "jpeg")


def test_dot_views_draw_as_svg(sess):
    sess.run("x = 1 + 2 * 3")
    v = sess.stage("ast", "dot")
    assert v.text.startswith("digraph")
    svg = v._repr_svg_()
    assert svg.startswith("<svg") and "</svg>" in svg
    assert v._repr_html_() is None  # the picture, not the text
    text = sess.stage("ast")
    assert text._repr_svg_() is None and "<pre" in text._repr_html_()


def test_passes_and_snapshots(sess):
    sess.run("x = 2 * 3 + 4\nprint(x)")
    passes = sess.passes()
    fold = [p for p in passes if p["name"] == "fold_constants"]
    assert fold and fold[0]["changed"] and fold[0]["stage"] == "ast"
    before = sess.pass_snapshot("fold_constants", after=False)
    after = sess.pass_snapshot("fold_constants", after=True)
    assert before.text != after.text
    assert "10" in after.text and "10" not in before.text
    with pytest.raises(StageError):
        sess.pass_snapshot("no_such_pass")
    assert "fold_constants" in passes._repr_html_()


def test_compare_runs_every_engine(sess):
    sess.run(FIB)
    rows = sess.compare()
    assert [r["engine"] for r in rows] == descent.engines()
    for r in rows:
        assert r["output"] == "6765", r
        assert r["status"] == "ok"
    assert "<table>" in rows._repr_html_()


def test_options(sess):
    with pytest.raises(DescentError):
        sess.engine = "warp-drive"
    with pytest.raises(DescentError):
        sess.opt_level = 7
    sess.opt_level = 0
    assert sess.opt_level == 0
    with pytest.raises(DeviceError) as info:
        sess.device = "abacus"
    assert "abacus" in str(info.value)
    assert sess.device == "ref"
    sess.device = "cpu"
    assert sess.device == "cpu"
    with pytest.raises(TypeError):
        descent.Session(colour="blue")
    s = descent.Session(engine="reg", registers=4)
    assert s.registers == 4 and s.engine == "reg"


def test_globals_in_and_out(sess):
    sess["n"] = 20
    sess["scale"] = 0.5
    sess["on"] = True
    assert sess.run("print(n * scale)\nprint(on)") == "10.0\ntrue\n"
    sess.run("m = n + 1\nf = 1.5\nb = n > 3")
    assert sess["m"] == 21 and isinstance(sess["m"], int)
    assert sess["f"] == 1.5 and sess["b"] is True
    assert "m" in sess and "nothing" not in sess
    with pytest.raises(KeyError):
        sess["nothing"]
    # A global keeps its type, as in a program.
    with pytest.raises(DescentError) as info:
        sess["n"] = 2.5
    assert "int" in str(info.value) and "float" in str(info.value)
    for bad in ("fn", "2x", "print", "a-b"):
        with pytest.raises(DescentError):
            sess[bad] = 1
    with pytest.raises(OverflowError):
        sess["big"] = 2 ** 70
    import numpy as np
    sess["g"] = np.float32(2.5)  # NumPy scalars are numbers, not tensors
    sess["c"] = np.int64(4)
    assert sess.run("print(g * 2.0)\nprint(c + 1)") == "5.0\n5\n"
    # Every engine reads a global set from Python.
    for engine in descent.engines():
        assert sess.run("print(n + 1)", engine=engine) == "21\n"
