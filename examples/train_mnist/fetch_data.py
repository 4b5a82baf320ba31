#!/usr/bin/env python3
"""Fetches MNIST for examples/train_mnist (not committed: 55 MB; the tests make stand-ins).

Writes, beside this script, as .npy: train_images.npy [60000, 784] f32 (pixels 0..1),
train_labels.npy [60000] int32, test_images.npy [10000, 784], test_labels.npy [10000], and
the seeded initial weights of the 784-128-10 MLP (w1_init, b1_init, w2_init, b2_init; the
nn.Linear rule, uniform in +-1/sqrt(fan_in)).

Needs NumPy and scikit-learn (Debian: apt-get install python3-sklearn) and the network
(scikit-learn's fetch_openml downloads the data set once into ~/scikit_learn_data):
  /usr/bin/python3 examples/train_mnist/fetch_data.py
"""
import os

import numpy as np
from sklearn.datasets import fetch_openml

here = os.path.dirname(os.path.abspath(__file__))
x, y = fetch_openml("mnist_784", version=1, return_X_y=True, as_frame=False, parser="liac-arff")
x = (x / 255.0).astype(np.float32)
y = y.astype(np.int32)
rng = np.random.default_rng(35)


def linear_init(fan_out, fan_in):
    bound = 1.0 / np.sqrt(fan_in)
    return (rng.uniform(-bound, bound, size=(fan_out, fan_in)).astype(np.float32),
            rng.uniform(-bound, bound, size=(fan_out,)).astype(np.float32))


w1, b1 = linear_init(128, 784)
w2, b2 = linear_init(10, 128)
for name, arr in [("train_images", x[:60000]), ("train_labels", y[:60000]), ("test_images", x[60000:]),
                  ("test_labels", y[60000:]), ("w1_init", w1), ("b1_init", b1), ("w2_init", w2),
                  ("b2_init", b2)]:
    np.save(os.path.join(here, name + ".npy"), np.ascontiguousarray(arr))
print("wrote MNIST and the initial weights to", here)
