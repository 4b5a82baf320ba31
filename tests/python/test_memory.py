# A notebook loop of run() calls must not grow the process (issue 32: about 1 KB a call,
# 1.25 KB a call that raised, kept for good). Measured as resident memory from
# /proc/self/statm after a warm-up of 1,000 calls, so allocator pools and first-use caches
# are already there: what grows after that is what each call leaves behind.
import os

import pytest

import descent

PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def loop(sess, calls):
    for i in range(calls):
        if i % 10 == 0:
            with pytest.raises(descent.RunError):
                sess.run("print(1 / (x - x))")
        elif i % 25 == 1:
            with pytest.raises(descent.CompileError):
                sess.run("y = x +")
        else:
            sess.run("x = x + 1\nprint(x * 2, f(x))")


def test_run_in_a_loop_stays_flat():
    sess = descent.Session()
    sess.run("x = 0\nfn f(a: int) -> int { return a + 1 }")
    loop(sess, 1000)
    before = resident_bytes()
    loop(sess, 6000)
    grown = resident_bytes() - before
    # Before the fix: about 6 MB here. Allow for the allocator's own slack.
    assert grown < 1_500_000, "grew %d bytes over 6,000 calls (%d a call)" % (grown, grown // 6000)
