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
