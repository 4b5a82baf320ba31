# Regressions from the review of the module: read-only memory, threads, signal handlers that
# use the session, globals that :compare must keep, tensors replaced in a loop, schedule
# handles that must never slide onto another loop, and each Schedule's own redo.
import os
import signal
import threading
import warnings

import numpy as np
import pytest

import descent
from conftest import MM_RELU
from descent import CopyWarning, ScheduleError, TensorError


def test_read_only_memory_is_never_shared(sess, tmp_path):
    frozen = np.ones((2, 2), dtype=np.float32)
    frozen.setflags(write=False)
    with pytest.warns(CopyWarning, match="read-only"):
        t = descent.as_tensor(frozen)
    np.asarray(t)[0, 0] = 5.0  # the copy, not the frozen array
    assert frozen[0, 0] == 1.0
    path = tmp_path / "z.bin"
    np.zeros(4, dtype=np.float32).tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r")
    with pytest.warns(CopyWarning, match="read-only"):
        sess["m"] = mm
    np.asarray(sess["m"])[0] = 1.0  # would crash writing a read-only mapping
    with pytest.raises(TensorError, match="read-only"):
        descent.as_tensor(memoryview(bytes(16)).cast("f"))


def test_copy_warning_points_at_the_caller(sess):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sess.call("relu", np.ones((2, 2)))  # float64
    assert caught and caught[0].filename == __file__


def test_the_session_is_safe_from_two_threads(sess):
    sess.run("x = 0")
    out = {}

    def loop():
        out["printed"] = sess.run("i = 0\nwhile i < 300000 {\n  x = x + 1\n  i = i + 1\n}\nprint(x)")

    worker = threading.Thread(target=loop)
    worker.start()
    for n in range(300):
        sess["y%d" % n] = n  # each waits for the run: globals never resize under it
    worker.join()
    assert out["printed"] == "300000\n"
    assert sess["y299"] == 299


def test_a_signal_handler_may_use_the_session_during_a_run(sess):
    heard = []
    previous = signal.signal(signal.SIGALRM, lambda *a: heard.append(sess.run("print(40 + 2)")))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        sess.run("i = 0\nwhile i < 60000000 { i = i + 1 }")  # about a second
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert heard == ["42\n"]


def test_ctrl_c_is_left_to_a_program_that_handles_it(sess):
    got = []
    previous = signal.signal(signal.SIGINT, lambda *a: got.append(1))
    try:
        threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        sess.run("i = 0\nwhile i < 60000000 { i = i + 1 }")  # about a second; not interrupted
    finally:
        signal.signal(signal.SIGINT, previous)
    assert got == [1]


def test_compare_keeps_globals_set_from_python(sess):
    sess.run("a = 1\nb = a + 1")
    sess["t"] = np.ones(3, dtype=np.float32)
    sess["extra"] = 7
    sess.compare()
    assert sess["extra"] == 7 and "t" in sess
    assert sess.run("print(extra)\nprint(t[0])") == "7\n1.0\n"


def test_tensor_globals_replaced_in_a_loop_are_freed(sess):
    x = np.ones((1, 1024), dtype=np.float32)
    for i in range(24):  # 24 x 4 MiB
        sess["w"] = np.full((1024, 1024), i, dtype=np.float32)
        sess.call("linear", x, sess["w"])
    live = [l for l in sess.memory_report().splitlines() if "live" in l][0]
    assert int(live.split()[1]) <= 6, live


def test_globals_follow_assignment_rules(sess):
    sess["g"] = 2.5
    sess["g"] = 3  # an int into a float global is promoted, as in a program
    assert sess["g"] == 3.0 and isinstance(sess["g"], float)
    with pytest.raises(descent.DescentError):
        sess["g"] = True


def test_bad_dims_are_type_errors(mm):
    with pytest.raises(TypeError, match="must be an int"):
        mm.schedule("mm_relu", n="a")
    with pytest.raises(TypeError):
        mm.schedule("mm_relu", n=1.5)
    with pytest.raises(ValueError, match="too large"):
        mm.schedule("mm_relu", n=2 ** 70)
    sch = mm.schedule("mm_relu", n=16)
    with pytest.raises(TypeError):
        sch.split(sch.get_loops("Y")[0], 2.7)
    with pytest.raises(ValueError):
        sch.time("cpu", repeats=0)


def test_split_handles_belong_to_their_block(mm):
    sch = mm.schedule("mm_relu", n=64)
    ci = sch.get_loops("C")[0]
    sch.split(ci, 4)
    yi, yj, yk = sch.get_loops("Y")
    y0, y1 = sch.split(yi, 8)
    assert (y0.block, y1.block) == ("Y", "Y")
    assert [l.name.split(".")[-1] for l in (y0, y1)] == ["i_0", "i_1"]
    assert y0._ref() in sch._sess.schedule_loops("Y")
    sch.reorder(y0, yj, y1, yk)  # Y's loops, not C's
    assert sch.run("cpu", check=True)["checked"]


def test_a_stale_handle_is_an_error_not_another_loop(mm):
    sch = mm.schedule("mm_relu", n=64)
    y0, y1 = sch.split(sch.get_loops("Y")[0], 8)
    sch.fuse(y0, y1)  # y1 is gone
    sch.split(sch.get_loops("C")[0], 4)  # C grows an i_1 of its own
    with pytest.raises(ScheduleError, match="no longer around block 'Y'"):
        sch.unroll(y1)


def test_redo_belongs_to_its_schedule(mm):
    a = mm.schedule("mm_relu", n=64)
    a.split(a.get_loops("Y")[2], 4)
    b = mm.schedule("mm_relu", n=32)
    b.split(b.get_loops("C")[0], 2)
    assert a.undo() and a.trace() == ""
    b.split(b.get_loops("C")[2], 4)
    assert a.redo() and a.trace() == "split k 4\n"
    assert not a.redo()
    assert b.trace().startswith("split C.i 2\nsplit ")
