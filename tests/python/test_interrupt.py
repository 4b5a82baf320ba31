# Ctrl-C, a notebook's stop button: SIGINT during a long scalar loop and during a long kernel
# stops the work, raises KeyboardInterrupt, and leaves the session usable.
import os
import signal
import threading

import numpy as np
import pytest

import descent


@pytest.fixture
def interrupt_after():
    """Sends this process SIGINT after `seconds`, as Ctrl-C or a notebook's stop button would.
    A timer that has not fired when the test ends is cancelled, so a call that finished too
    early fails its own test instead of interrupting the next one."""
    timers = []

    def start(seconds):
        timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
        timers.append(timer)
        timer.start()

    yield start
    for t in timers:
        t.cancel()


@pytest.mark.parametrize("engine", descent.engines())
def test_ctrl_c_stops_a_scalar_loop(engine, interrupt_after):
    s = descent.Session(engine=engine)
    s.run("n = 0")
    interrupt_after(0.3)
    # The loop never ends: only the interrupt can end the call (a hang is CTest's timeout).
    with pytest.raises(KeyboardInterrupt):
        s.run("while true { n = n + 1 }")
    assert s["n"] > 0  # it ran, and stopped where it was
    # Python's own handler is back, and the session goes on.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert s.run("print(1 + 1)") == "2\n"


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_ctrl_c_stops_a_long_kernel(device, interrupt_after):
    s = descent.Session()
    # A matmul far too big to finish: the reference interpreter would take minutes, the cpu
    # backend's unscheduled loop nest seconds.
    n = 2048 if device == "ref" else 4096
    a = np.ones((n, n), dtype=np.float32)
    s.default_schedules = False
    interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        s.call("matmul", a, a, device=device)
    small = np.ones((2, 2), dtype=np.float32)
    np.testing.assert_allclose(np.asarray(s.call("matmul", small, small, device=device)), 2 * small)


def test_ctrl_c_while_a_program_computes_a_tensor(interrupt_after):
    s = descent.Session()
    interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        s.run("a = ones([1500, 1500])\nprint(sum_all(matmul(a, a)))")
    assert s.run("print(2 * 3)") == "6\n"
