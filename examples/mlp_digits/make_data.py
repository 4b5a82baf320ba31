#!/usr/bin/env python3
"""Makes the data of examples/mlp_digits (committed; the tests do not run this script).

Trains a 64-32-10 MLP (ReLU) on scikit-learn's bundled 8x8 digits and writes, as .npy:
  w1.npy [32, 64], b1.npy [32], w2.npy [10, 32], b2.npy [10]   the weights, f32, in the
      [out, in] layout of the prelude's linear() (PyTorch's nn.Linear layout too);
  images.npy [360, 64] f32   the held-out test images, pixels scaled to 0..1;
  labels.npy [360] int32     their digits;
  logits.npy [360, 10] f32   NumPy's logits for them, the oracle Descent is compared with.

Needs NumPy and scikit-learn (Debian: apt-get install python3-sklearn). Run from anywhere:
  /usr/bin/python3 examples/mlp_digits/make_data.py
"""
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

here = os.path.dirname(os.path.abspath(__file__))

digits = load_digits()
x = (digits.data / 16.0).astype(np.float32)
y = digits.target.astype(np.int32)
x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=360, random_state=0, stratify=y)

mlp = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", max_iter=600, random_state=0)
mlp.fit(x_train, y_train)

w1 = mlp.coefs_[0].T.astype(np.float32)  # [32, 64]
b1 = mlp.intercepts_[0].astype(np.float32)
w2 = mlp.coefs_[1].T.astype(np.float32)  # [10, 32]
b2 = mlp.intercepts_[1].astype(np.float32)

# The oracle, in f32 as Descent computes: linear, bias, relu, linear, bias.
h = np.maximum(x_test @ w1.T + b1, np.float32(0))
logits = (h @ w2.T + b2).astype(np.float32)
accuracy = float(np.mean(np.argmax(logits, axis=1) == y_test))

for name, a in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("images", x_test),
                ("labels", y_test), ("logits", logits)]:
    np.save(os.path.join(here, name + ".npy"), np.ascontiguousarray(a))  # C order
print(f"test accuracy {accuracy:.4f} ({int(round(accuracy * len(y_test)))} of {len(y_test)})")
