# Notebook display (HTML, SVG, PNG), the tuner, benchmarks and the labs from Python.
import shutil

import pytest

import descent
from conftest import ROOT
from descent import LabError, TuneError
from descent.display import Table, View, highlight


def test_highlighting_colours_tokens_and_escapes_html():
    h = highlight("fn f(x) { return x < 2 } # note", "descent")
    assert '<span style="color:#a626a4">fn</span>' in h  # a keyword
    assert "&lt;" in h and "<span style=\"color:#6a737d\"># note</span>" in h
    llvm = highlight("define i64 @fib(i64 %n) {\n  %1 = add nsw i64 %n, 1\n", "llvm")
    assert '<span style="color:#4078f2">@fib</span>' in llvm
    assert '<span style="color:#0184bc">i64</span>' in llvm


def test_views_render_per_stage(sess):
    sess.run("fn fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\nprint(fib(10))")
    for stage in ("tokens", "ast", "stack", "reg-alloc", "llvm-opt", "asm", "native-asm"):
        v = sess.stage(stage)
        html = v._repr_html_()
        assert html.startswith("<div") and "<pre" in html and "<span" in html, stage
        assert str(v) == v.text and v.text
    cfg = sess.stage("cfg", "dot")
    assert cfg._repr_svg_().startswith("<svg")


def test_graph_views_draw(sess):
    sess.run("x = rand([2, 4], 1)\nw = rand([3, 4], 2)\nprint(sum_all(relu(linear(x, w))))")
    g = sess.graph("executed", "dot")
    assert "linear" in g.text and g._repr_svg_().startswith("<svg")
    text = sess.graph("before")
    assert "linear" in text.text


def test_tables_show_as_html_and_text():
    t = Table([{"a": 1, "b": 2.5}, {"a": 10, "b": "x<y"}], title="t")
    assert "x&lt;y" in t._repr_html_() and "<caption" in t._repr_html_()
    assert str(t).splitlines()[1].split() == ["a", "b"]
    multi = Table([{"trace": "split i 4\nunroll i_1\n", "n": 1}])
    assert str(multi).splitlines()[1].startswith("split i 4; unroll i_1")


def test_tune_from_python(mm):
    r = descent.tune(mm, "mm_relu", n=32, m=32, k=32, trials=4, strategy="random",
                     repeats=1, time_limit=30)
    assert len(r.tasks) == 1
    t = r.tasks[0]
    assert t["kernel"] == "mm_relu" and t["best_s"] > 0
    ok = [c for c in r.candidates if c["ok"]]
    assert ok, r.candidates  # each one checked against the reference interpreter
    html = r._repr_html_()
    assert "<table>" in html and "data:image/png;base64," in html
    assert r.chart.png.startswith(b"\x89PNG")
    # From now on the kernel runs with what the search found.
    assert "mm_relu" in str(r)
    with pytest.raises(TuneError):
        descent.tune(mm, "no_such_kernel", trials=2)


def test_bench_from_python():
    r = descent.bench("vm", quick=True, repeats=1, engines=["ast", "reg"], workloads=["b1_fib"])
    engines = {rec["engine"] for rec in r.records}
    assert engines == {"ast", "reg"}
    assert all(rec["checksum_ok"] for rec in r.records)
    assert r.chart is not None and r.chart._repr_png_().startswith(b"\x89PNG")
    assert "<img" in r._repr_html_()


def test_labs_from_python(tmp_path):
    labs = descent.lab.list()
    names = [l["name"] for l in labs]
    assert "stack_budget" in names and "<table>" in labs._repr_html_()
    work = tmp_path / "stack_budget"
    folder = descent.lab.start("stack_budget", str(work))
    assert (work / "squares.ds").exists() and folder == str(work)
    first = descent.lab.check("stack_budget", str(work))
    assert not first.passed and first.points < first.max_points
    assert any(not c["passed"] and c["reason"] for c in first.checks)
    assert "FAILED" in first._repr_html_()
    # The reference solution passes every check.
    shutil.copy(ROOT / "labs/solutions/stack_budget/squares.ds", work / "squares.ds")
    done = descent.lab.check("stack_budget", str(work))
    assert done.passed and done.points == done.max_points and bool(done)
    assert descent.lab.hint("stack_budget", str(work))
    with pytest.raises(LabError, match="stack_budgte|stack_budget"):
        descent.lab.check("stack_budgte", str(work))
