"""What calling Descent from Python costs (issue 20's speed targets), in one process:

  1. a prelude kernel called from Python, sess.call("linear", x, w), against the same call
     typed at the REPL, sess.run("linear(x, w)", echo=True) (compile the line, run it,
     compute and print the tensor): the Python call may cost at most 20 us more;
  2. numpy.asarray(t) of a Descent tensor: no copy, so the same time for 4 KB and 64 MB.

Medians of many calls; ratios and differences only between numbers taken here, in this run.
    PYTHONPATH=build/python python3 python/bench/call_overhead.py [--calls N]
"""
import argparse
import platform
import statistics
import time

import numpy as np

import descent


def median_us(fn, calls):
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    args = p.parse_args()
    sess = descent.Session()
    rows = []
    for n, k, m in [(1, 64, 64), (8, 256, 256)]:
        x = np.random.default_rng(1).uniform(-1, 1, (n, k)).astype(np.float32)
        w = np.random.default_rng(2).uniform(-1, 1, (m, k)).astype(np.float32)
        for device in ("ref", "cpu"):
            sess.device = device
            sess["x"], sess["w"] = x, w
            py = lambda: sess.call("linear", x, w)
            repl = lambda: sess.run("linear(x, w)", echo=True)
            py(); repl()  # compile the kernels once
            t_py = median_us(py, args.calls)
            t_repl = median_us(repl, args.calls)
            rows.append((f"linear [{n}x{k}] x [{m}x{k}]^T", device, t_repl, t_py))
    print(f"# {descent.host_description()}; Python {platform.python_version()}; "
          f"{args.calls} calls each, medians")
    print(f"{'call':34} {'device':6} {'REPL us':>9} {'Python us':>10} {'Python - REPL':>14}")
    for name, device, t_repl, t_py in rows:
        print(f"{name:34} {device:6} {t_repl:9.1f} {t_py:10.1f} {t_py - t_repl:+14.1f}")
    print()
    print(f"{'numpy.asarray(t)':34} {'bytes':>12} {'us':>8} {'shares memory':>14}")
    for shape in [(32, 32), (4096, 4096)]:
        sess.run(f"big = ones([{shape[0]}, {shape[1]}])")
        t = sess["big"]
        us = median_us(lambda: np.asarray(t), args.calls)
        a = np.asarray(t)
        shared = a.ctypes.data == t.address
        print(f"{str(shape):34} {a.nbytes:12d} {us:8.2f} {str(shared):>14}")


if __name__ == "__main__":
    main()
