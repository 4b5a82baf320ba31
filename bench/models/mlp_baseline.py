"""The yardsticks of `descent bench --suite model`: the same MLP in NumPy and in ONNX Runtime.

`descent bench` writes the model's weights, its input batch and the model as ONNX into a
scratch folder, then runs this script once per thread count with the python3 on PATH:

  python3 mlp_baseline.py DIR THREADS TARGET_S REPEATS

DIR holds w1.npy b1.npy w2.npy b2.npy (nn.Linear layout: w is [out, in]), input.npy and
model.onnx. Each framework runs the forward pass in a loop of K batches, K chosen so that one
timed loop takes about TARGET_S seconds; REPEATS loops are timed and each gives one time per
batch. Prints one JSON object: {"numpy": {"version", "runs_s": [...]}, "onnxruntime": {...},
"notes": [...]}. A framework that is not installed is absent, with a note; its output is
saved as DIR/out_<framework>.npy so descent can check it against its reference interpreter.

Only NumPy (and onnxruntime when installed) is needed. Threads are fixed before NumPy loads
OpenBLAS: that is the only time OpenBLAS reads them.
"""
import json
import os
import sys
import time


def timed(run, target_s, repeats):
    run()  # warm-up: first-call allocations, ORT's graph set-up
    k, elapsed = 1, 0.0
    while True:  # how many batches make one loop of about target_s
        t0 = time.perf_counter()
        for _ in range(k):
            run()
        elapsed = time.perf_counter() - t0
        if elapsed >= target_s / 4 or k >= 1 << 16:
            break
        k *= 4
    k = max(1, min(1 << 18, int(k * target_s / max(elapsed, 1e-9))))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(k):
            run()
        runs.append((time.perf_counter() - t0) / k)
    return runs


def main():
    folder, threads, target_s, repeats = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    result = {"notes": []}
    try:
        import numpy as np
    except ImportError:
        result["notes"].append("numpy is not installed for " + sys.executable + ": no numpy or onnxruntime column")
        print(json.dumps(result))
        return

    def load(name):
        return np.load(os.path.join(folder, name))

    w1, b1, w2, b2, x = load("w1.npy"), load("b1.npy"), load("w2.npy"), load("b2.npy"), load("input.npy")
    w1t, w2t = np.ascontiguousarray(w1.T), np.ascontiguousarray(w2.T)  # transposed once, untimed

    def forward():
        return np.maximum(x @ w1t + b1, 0) @ w2t + b2

    np.save(os.path.join(folder, "out_numpy.npy"), forward().astype(np.float32))
    result["numpy"] = {"version": "numpy " + np.__version__, "runs_s": timed(forward, target_s, repeats)}

    try:
        import onnxruntime as ort
    except ImportError:
        result["notes"].append("onnxruntime is not installed for " + sys.executable + " (pip install onnxruntime): no onnxruntime column")
        print(json.dumps(result))
        return
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name

    def infer():
        return session.run(None, {name: x})[0]

    np.save(os.path.join(folder, "out_onnxruntime.npy"), infer().astype(np.float32))
    result["onnxruntime"] = {"version": "onnxruntime " + ort.__version__,
                             "runs_s": timed(infer, target_s, repeats)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
