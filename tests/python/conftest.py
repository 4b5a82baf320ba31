# pytest fixtures for the Python module's tests (run by CTest as `python`, README's test
# command; by hand: PYTHONPATH=build/python python3 -m pytest tests/python).
import os
import pathlib

import pytest

import descent

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("DESCENT_BUILD_DIR", ROOT / "build"))

# The MLC course's running example, with named dims so a schedule can pick the size.
MM_RELU = """
kernel mm_relu(A: f32[n, k], B: f32[k, m]) -> f32[n, m] {
  Y[i, j] = sum(k) A[i, k] * B[k, j]
  C[i, j] = max(Y[i, j], 0.0)
  return C
}
"""


@pytest.fixture
def sess():
    return descent.Session()


@pytest.fixture
def mm(sess):
    sess.run(MM_RELU)
    return sess
