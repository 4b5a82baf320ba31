"""The yardsticks of `descent bench --suite train`: one epoch of MLP training in NumPy (the
backward pass written by hand), in PyTorch (autograd) and in tinygrad (autograd, the step under
TinyJit, its CPU device), the last two when installed.

`descent bench` writes the training data and the initial weights into a scratch folder, then
runs this script once per thread count with the python3 on PATH:

  python3 train_baseline.py DIR THREADS REPEATS

DIR holds x.npy [N, IN] (N = STEPS * 64), y.npy [N] (class labels) and w1.npy b1.npy w2.npy
b2.npy (nn.Linear layout: w is [out, in]). One epoch is STEPS steps of batch 64: forward,
the cross-entropy summed over the batch, its gradients, and SGD with momentum 0.9 and
learning rate 0.1 / 64 (PyTorch's SGD: v = 0.9 v + g; w -= lr v), exactly what the Descent
program does. The first epoch from the initial weights reports its mean loss (the check
against Descent's); then REPEATS more epochs are timed, each one time. Prints one JSON
object: {"numpy": {"version", "first_loss", "runs_s": [...]}, "pytorch": {...}, "tinygrad": {...},
"notes": [...]}. tinygrad's first epoch includes its kernel compilation (TinyJit captures the
step on its second call); the timed epochs replay the captured kernels.
"""
import json
import os
import sys
import time

LR = 0.1 / 64
MOMENTUM = 0.9
BATCH = 64


def main():
    folder, threads, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    result = {"notes": []}
    try:
        import numpy as np
    except ImportError:
        result["notes"].append("numpy is not installed for " + sys.executable + ": no baseline columns")
        print(json.dumps(result))
        return

    def load(name):
        return np.load(os.path.join(folder, name))

    x, y = load("x.npy").astype(np.float32), load("y.npy").astype(np.int64)
    init = [load(n).astype(np.float32) for n in ("w1.npy", "b1.npy", "w2.npy", "b2.npy")]
    steps = x.shape[0] // BATCH

    # ---- NumPy: the backward pass by hand ----
    params = [p.copy() for p in init]
    velocity = [np.zeros_like(p) for p in params]

    def numpy_epoch():
        w1, b1, w2, b2 = params
        total = 0.0
        for s in range(steps):
            xb, yb = x[s * BATCH:(s + 1) * BATCH], y[s * BATCH:(s + 1) * BATCH]
            a = xb @ w1.T + b1
            h = np.maximum(a, np.float32(0))
            z = h @ w2.T + b2
            m = z.max(axis=1, keepdims=True)
            e = np.exp(z - m)
            ssum = e.sum(axis=1, keepdims=True)
            total += float(np.sum(np.log(ssum[:, 0]) + m[:, 0] - z[np.arange(BATCH), yb]))
            dz = e / ssum
            dz[np.arange(BATCH), yb] -= 1
            grads = [None, None, dz.T @ h, dz.sum(axis=0)]
            da = (dz @ w2) * (a >= 0)
            grads[0], grads[1] = da.T @ xb, da.sum(axis=0)
            for p, v, g in zip(params, velocity, grads):
                v *= MOMENTUM
                v += g
                p -= np.float32(LR) * v
        return total / (steps * BATCH)

    first, runs = timed(numpy_epoch, repeats)
    result["numpy"] = {"version": "numpy " + np.__version__, "first_loss": first, "runs_s": runs}

    # ---- PyTorch: autograd, nn.Linear, optim.SGD ----
    try:
        import torch
    except ImportError:
        result["notes"].append("torch is not installed for " + sys.executable + ": no pytorch column "
                               "(pip install torch in a venv, then put it first on PATH)")
    else:
        result["pytorch"] = pytorch_column(torch, x, y, init, steps, threads, repeats)
    result["tinygrad"] = tinygrad_column(x, y, init, steps, threads, repeats, result["notes"])
    if result["tinygrad"] is None:
        del result["tinygrad"]
    print(json.dumps(result))


def timed(epoch, repeats):
    """The first epoch's mean loss, then `repeats` more epochs timed one by one."""
    first = epoch()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        epoch()
        runs.append(time.perf_counter() - t0)
    return first, runs


def pytorch_column(torch, x, y, init, steps, threads, repeats):
    torch.set_num_threads(threads)
    model = torch.nn.Sequential(torch.nn.Linear(init[0].shape[1], init[0].shape[0]), torch.nn.ReLU(),
                                torch.nn.Linear(init[2].shape[1], init[2].shape[0]))
    with torch.no_grad():
        for p, v in zip(model.parameters(), init):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def torch_epoch():
        total = 0.0
        for s in range(steps):
            opt.zero_grad()
            loss = loss_fn(model(tx[s * BATCH:(s + 1) * BATCH]), ty[s * BATCH:(s + 1) * BATCH])
            loss.backward()
            opt.step()
            total += loss.item()
        return total / (steps * BATCH)

    first, runs = timed(torch_epoch, repeats)
    return {"version": "torch " + torch.__version__, "first_loss": first, "runs_s": runs}


def tinygrad_column(x, y, init, steps, threads, repeats, notes):
    """tinygrad's autograd and its SGD (momentum as PyTorch's: v = 0.9 v + g; w -= lr v), the
    whole step captured by TinyJit, on its CPU device with THREADS threads."""
    os.environ["NUM_CPU_THREADS"] = str(threads)  # read when tinygrad is imported
    try:
        from tinygrad import Tensor, TinyJit, nn
        from tinygrad.helpers import Context
        import tinygrad
    except ImportError:
        notes.append("tinygrad is not installed for " + sys.executable + ": no tinygrad column "
                     "(pip install tinygrad in a venv, then put it first on PATH)")
        return None
    l1 = nn.Linear(init[0].shape[1], init[0].shape[0])
    l2 = nn.Linear(init[2].shape[1], init[2].shape[0])
    params = [l1.weight, l1.bias, l2.weight, l2.bias]
    for p, v in zip(params, init):
        p.assign(Tensor(v)).realize()
    opt = nn.optim.SGD(params, lr=LR, momentum=MOMENTUM)

    @TinyJit
    def step(xb, yb):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = l2(l1(xb).relu()).sparse_categorical_crossentropy(yb, reduction="sum")
            loss.backward()
            # realized with the update, in one schedule: the loss of the weights before it
            # (opt.step() first, then loss.realize(), would read the updated weights)
            Tensor.realize(loss, *opt.schedule_step())
            return loss

    batches = [(Tensor(x[s * BATCH:(s + 1) * BATCH]).realize(), Tensor(y[s * BATCH:(s + 1) * BATCH]).realize())
               for s in range(steps)]

    def tinygrad_epoch():
        total = 0.0
        for xb, yb in batches:
            total += step(xb, yb).item()
        return total / (steps * BATCH)

    first, runs = timed(tinygrad_epoch, repeats)
    version = getattr(tinygrad, "__version__", "")
    return {"version": ("tinygrad " + version).strip(), "first_loss": first, "runs_s": runs}


if __name__ == "__main__":
    main()
