# Tensors between NumPy and Descent: results against NumPy and the reference interpreter,
# zero-copy both ways (checked by writing through one side and reading the other), copies
# said out loud, and every kind of bad argument refused with a clear error.
import warnings

import numpy as np
import pytest

import descent
from descent import CopyWarning, DeviceError, TensorError


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_call_prelude_kernels_matches_numpy(sess, device):
    x, w = rand(4, 8, seed=1), rand(5, 8, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a C-contiguous float32 array goes in without a copy
        y = sess.call("linear", x, w, device=device)
    assert isinstance(y, descent.Tensor)
    assert y.shape == (4, 5) and y.dtype == "float32"
    np.testing.assert_allclose(np.asarray(y), x @ w.T, rtol=1e-5, atol=1e-6)
    r = sess.call("linear_relu", x, w, device=device)
    np.testing.assert_allclose(np.asarray(r), np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-6)
    a, b = rand(3, 4, seed=3), rand(4, 6, seed=4)
    np.testing.assert_allclose(np.asarray(sess.call("matmul", a, b, device=device)), a @ b,
                               rtol=1e-5, atol=1e-6)
    assert sess.device == "ref"  # the device was for those calls alone


def test_cpu_agrees_with_the_reference_interpreter(mm):
    a, b = rand(33, 17, seed=5), rand(17, 29, seed=6)
    ref = np.asarray(mm.call("mm_relu", a, b, device="ref"))
    cpu = np.asarray(mm.call("mm_relu", a, b, device="cpu"))
    np.testing.assert_allclose(cpu, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ref, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


def test_results_feed_further_calls(sess):
    x, w = rand(2, 3), rand(4, 3, seed=1)
    y = sess.call("linear", x, w)
    z = sess.call("relu", y)  # a Tensor as an argument: shared, not copied
    np.testing.assert_allclose(np.asarray(z), np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-6)


def test_asarray_copies_nothing_and_writes_reach_descent(sess):
    sess.run("x = zeros([2, 3])")
    t = sess["x"]
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert a.ctypes.data == t.address  # the tensor's own storage
    assert np.shares_memory(a, np.asarray(t))
    a[1, 2] = 7.5
    assert sess.run("print(x[1, 2])\nprint(sum_all(x))") == "7.5\n7.5\n"


def test_arrays_go_in_without_a_copy(sess):
    arr = np.zeros((2, 3), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sess["y"] = arr
    arr[0, 1] = 5.0  # written after handing it over: Descent sees it
    assert sess.run("print(y[0, 1])") == "5.0\n"
    assert sess["y"].address == arr.ctypes.data
    t = descent.as_tensor(arr)
    assert t.address == arr.ctypes.data


def test_tensor_outlives_the_array_and_the_session():
    s = descent.Session()
    arr = rand(3, 3)
    s["x"] = arr
    expect = arr.copy()
    del arr
    out = s.call("relu", s["x"])
    del s
    np.testing.assert_allclose(np.asarray(out), np.maximum(expect, 0))


def test_a_borrowed_array_cannot_be_moved_under_descent():
    # Issue 32: resizing a borrowed array freed the memory under the tensor (SIGSEGV on the
    # next read). While Descent borrows it, NumPy must refuse to move it; once nothing
    # borrows it any more, it may.
    import gc
    s = descent.Session()
    b = np.ones((1024, 1024), np.float32)
    s["w"] = b
    with pytest.raises(ValueError, match="cannot resize"):
        b.resize((4, 4), refcheck=False)
    assert s.run("print(sum_all(w))") == "1048576.0\n"
    # Through a memoryview too: the pin is on the array that owns the memory.
    c = np.ones((8, 8), np.float32)
    s["v"] = memoryview(c)
    with pytest.raises(ValueError, match="cannot resize"):
        c.resize((2, 2), refcheck=False)
    assert s.run("print(sum_all(v))") == "64.0\n"
    del s
    gc.collect()
    b.resize((4, 4), refcheck=False)  # nothing borrows it now
    assert b.shape == (4, 4)


def test_non_contiguous_and_other_dtypes_are_copied_and_said_so(sess):
    x = rand(4, 8)
    w = rand(10, 8, seed=1)
    with pytest.warns(CopyWarning, match="not C-contiguous"):
        y = sess.call("linear", x, w[::2])
    np.testing.assert_allclose(np.asarray(y), x @ w[::2].T, rtol=1e-5, atol=1e-6)
    with pytest.warns(CopyWarning, match="float64"):
        y = sess.call("linear", x.astype(np.float64), w)
    np.testing.assert_allclose(np.asarray(y), x @ w.T, rtol=1e-5, atol=1e-6)
    with pytest.warns(CopyWarning, match="not C-contiguous"):
        sess["t"] = np.asfortranarray(rand(3, 4))


def test_bad_arguments_are_clear_errors(sess):
    x = rand(4, 8)
    with pytest.raises(TensorError, match="complex"):
        sess.call("relu", x.astype(np.complex64))
    with pytest.raises(TensorError, match="expects 2 arguments"):
        sess.call("linear", x)
    with pytest.raises(TensorError, match=r"argument 2 \('w'\) has shape \[5, 7\], expected \[m, k\]"):
        sess.call("linear", x, rand(5, 7))
    with pytest.raises(TensorError, match="no kernel named 'lineer'"):
        sess.call("lineer", x)
    with pytest.raises(TensorError, match="at least one dimension"):
        sess.call("relu", np.float32(3.0).reshape(()))
    with pytest.raises(TensorError):
        sess.call("relu", np.zeros((0, 3), dtype=np.float32))
    with pytest.raises(TensorError, match="expected a descent.Tensor or an array"):
        sess.call("relu", object())
    with pytest.raises(DeviceError):
        sess.call("relu", x, device="abacus")
    # None of it broke the session.
    np.testing.assert_allclose(np.asarray(sess.call("relu", x)), np.maximum(x, 0))


def test_tensor_basics(sess):
    t = sess.call("relu", rand(2, 3))
    assert len(t) == 2 and t.ndim == 2 and t.size == 6
    assert repr(t).startswith("tensor([2, 3]")
    assert t.sum() == pytest.approx(float(np.asarray(t).sum()), rel=1e-6)
    assert memoryview(t).format == "f" and memoryview(t).shape == (2, 3)


def test_kernels_lists_signatures(mm):
    k = mm.kernels()
    assert k["linear"] == "linear(x: f32[n, k], w: f32[m, k]) -> f32[n, m]"
    assert "mm_relu" in k


def test_a_kernel_defined_in_the_session_is_callable(sess):
    sess.run("kernel twice(x: f32[n]) -> f32[n] {\n  Y[i] = x[i] * 2.0\n  return Y\n}")
    np.testing.assert_allclose(np.asarray(sess.call("twice", np.arange(4, dtype=np.float32))),
                               [0, 2, 4, 6])


def test_calls_do_not_pile_up_in_the_tensor_table(sess):
    x = rand(8, 8)
    sess.call("relu", x)
    first = sess.memory_report()
    for _ in range(200):
        sess.call("relu", x)
    # The live tensors stay what they were: each call's nodes are freed after it.
    live = lambda report: [l for l in report.splitlines() if "live" in l][0]
    assert live(sess.memory_report()) == live(first)


def test_grad_of_a_kernel_matches_numpy():
    s = descent.Session()
    x = np.random.default_rng(1).uniform(-1, 1, (4, 3)).astype(np.float32)
    w = np.random.default_rng(2).uniform(-1, 1, (5, 3)).astype(np.float32)
    dout = np.random.default_rng(3).uniform(-1, 1, (4, 5)).astype(np.float32)
    # linear: out = x w^T, so d/dw of sum(dout * out) is dout^T x, and d/dx is dout w.
    gw = np.asarray(s.grad("linear", x, w, wrt="w", dout=dout))
    gx = np.asarray(s.grad("linear", x, w, wrt=0, dout=dout))
    assert np.allclose(gw, dout.T @ x, atol=1e-5)
    assert np.allclose(gx, dout @ w, atol=1e-5)
    # The default dout is ones: the gradient of the sum; relu's is its mask.
    assert np.allclose(np.asarray(s.grad("relu", x)), (x >= 0).astype(np.float32))
    srcs = {a["name"]: a["source"] for a in s.adjoints("linear")}
    assert "dw[j, r] = sum(i) dout[i, j] * x[i, r]" in srcs["linear_dw"]
