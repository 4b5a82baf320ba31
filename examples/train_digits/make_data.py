#!/usr/bin/env python3
"""Makes the data of examples/train_digits (committed; the tests do not run this script).

scikit-learn's bundled 8x8 digits, split as examples/mlp_digits splits them (360 held out,
stratified, random_state=0), pixels scaled to 0..1, labels as int32:
  train_images.npy [1437, 64], train_labels.npy [1437], test_images.npy [360, 64],
  test_labels.npy [360];
the seeded initial weights of the 64-128-10 MLP (PyTorch's nn.Linear rule: uniform in
+-1/sqrt(fan_in)), in the [out, in] layout of the prelude's linear():
  w1_init.npy [128, 64], b1_init.npy [128], w2_init.npy [10, 128], b2_init.npy [10];
and the oracle for the first training step, computed here with the backward pass written
out by hand in NumPy (float64, then stored as f32): the gradients of the summed
cross-entropy of the first 64 training images with respect to each parameter:
  grad_w1.npy, grad_b1.npy, grad_w2.npy, grad_b2.npy.

Needs NumPy and scikit-learn (Debian: apt-get install python3-sklearn):
  /usr/bin/python3 examples/train_digits/make_data.py
"""
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

here = os.path.dirname(os.path.abspath(__file__))

digits = load_digits()
x = (digits.data / 16.0).astype(np.float32)
y = digits.target.astype(np.int32)
x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=360, random_state=0, stratify=y)

rng = np.random.default_rng(35)
def linear_init(fan_out, fan_in):
    bound = 1.0 / np.sqrt(fan_in)
    w = rng.uniform(-bound, bound, size=(fan_out, fan_in)).astype(np.float32)
    b = rng.uniform(-bound, bound, size=(fan_out,)).astype(np.float32)
    return w, b
w1, b1 = linear_init(128, 64)
w2, b2 = linear_init(10, 128)

# One step's gradients by hand: h = relu(x w1^T + b1), z = h w2^T + b2,
# loss = sum over rows of logsumexp(z) - z[label].
xb = x_train[:64].astype(np.float64)
yb = y_train[:64]
a = xb @ w1.T.astype(np.float64) + b1
h = np.maximum(a, 0.0)
z = h @ w2.T.astype(np.float64) + b2
p = np.exp(z - z.max(axis=1, keepdims=True))
p /= p.sum(axis=1, keepdims=True)
dz = p.copy()
dz[np.arange(64), yb] -= 1.0                  # d loss / d z = softmax(z) - onehot
g_w2 = dz.T @ h
g_b2 = dz.sum(axis=0)
dh = dz @ w2.astype(np.float64)
da = dh * (a >= 0.0)                          # relu's mask (Descent's: the gradient goes
g_w1 = da.T @ xb                              # to x where x >= 0, the selected operand)
g_b1 = da.sum(axis=0)

arrays = [("train_images", x_train), ("train_labels", y_train), ("test_images", x_test),
          ("test_labels", y_test), ("w1_init", w1), ("b1_init", b1), ("w2_init", w2),
          ("b2_init", b2), ("grad_w1", g_w1), ("grad_b1", g_b1), ("grad_w2", g_w2),
          ("grad_b2", g_b2)]
for name, arr in arrays:
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    np.save(os.path.join(here, name + ".npy"), np.ascontiguousarray(arr))
print("wrote", ", ".join(n for n, _ in arrays))
