# docs/python.md's examples are doctests: every `>>>` line there runs, and what it prints must
# be what the page says.
import doctest

from conftest import ROOT


def test_docs_python_md_examples_run_as_written():
    result = doctest.testfile(str(ROOT / "docs/python.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                              raise_on_error=False, verbose=False)
    assert result.attempted > 30, result
    assert result.failed == 0, result


def test_readme_python_block_runs_and_says_what_it_gives():
    text = (ROOT / "README.md").read_text()
    start = text.index("```python\n") + len("```python\n")
    block = text[start:text.index("```", start)]
    env = {}
    exec(compile(block, "README.md", "exec"), env)
    sess, y = env["sess"], env["y"]
    # What the comments promise.
    assert "'49\\n'" in block and sess.run("print(sq(7))") == "49\n"
    assert "mul_int" in str(sess.stage("reg-alloc", function="sq"))
    import numpy as np
    a = np.asarray(y)
    assert a.shape == (2, 4) and (a == 3).all() and a.ctypes.data == y.address
