#!/usr/bin/python3
"""Writes examples/mlp_digits/mlp_digits.onnx from the committed weights (w1, b1, w2, b2 .npy).

The file is laid out as torch.onnx.export writes
    nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
with input_names=["input"], output_names=["logits"], opset_version=17 and
dynamic_axes={"input": {0: "batch_size"}, "logits": {0: "batch_size"}}: nodes /0/Gemm, /1/Relu,
/2/Gemm (Gemm transB=1, alpha=beta=1), initializers 0.weight, 0.bias, 2.weight, 2.bias (not
listed as graph inputs), so `descent import` sees what a PyTorch user would hand it, without
needing PyTorch here. Only the producer fields differ, so the file says who really made it.

Then it reads the file back, runs its nodes in NumPy on images.npy and asserts the result equals
logits.npy to 1e-4. Needs NumPy and onnx (Debian: apt-get install python3-onnx). Run from anywhere:
  /usr/bin/python3 examples/mlp_digits/export_onnx.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mlp_digits.onnx")


def load(name):
    return np.load(os.path.join(HERE, name + ".npy")).astype(np.float32)


def build():
    w1, b1, w2, b2 = load("w1"), load("b1"), load("w2"), load("b2")
    assert w1.shape == (32, 64) and b1.shape == (32,) and w2.shape == (10, 32) and b2.shape == (10,)
    # nn.Linear keeps its weight as [out, in], hence transB=1 as torch emits it.
    nodes = [
        helper.make_node("Gemm", ["input", "0.weight", "0.bias"], ["/0/Gemm_output_0"],
                         name="/0/Gemm", alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Relu", ["/0/Gemm_output_0"], ["/1/Relu_output_0"], name="/1/Relu"),
        helper.make_node("Gemm", ["/1/Relu_output_0", "2.weight", "2.bias"], ["logits"],
                         name="/2/Gemm", alpha=1.0, beta=1.0, transB=1),
    ]
    inits = [numpy_helper.from_array(a, n) for n, a in
             (("0.weight", w1), ("0.bias", b1), ("2.weight", w2), ("2.bias", b2))]
    graph = helper.make_graph(
        nodes, "main_graph",  # torch's graph name
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch_size", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="descent examples/mlp_digits/export_onnx.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    with open(OUT, "wb") as f:
        f.write(model.SerializeToString())


def forward(path, x):
    # Interprets the file as written, so a wrong name or attribute in it shows up here.
    model = onnx.load(path)
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env[model.graph.input[0].name] = x
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ins = [env[n] for n in node.input]
        if node.op_type == "Gemm":
            a, b, c = ins
            a = a.T if attrs.get("transA", 0) else a
            b = b.T if attrs.get("transB", 0) else b
            y = np.float32(attrs.get("alpha", 1.0)) * (a @ b) + np.float32(attrs.get("beta", 1.0)) * c
        elif node.op_type == "Relu":
            y = np.maximum(ins[0], np.float32(0))
        else:
            raise ValueError("unexpected op " + node.op_type)
        env[node.output[0]] = y.astype(np.float32)
    return env[model.graph.output[0].name]


def main():
    build()
    images, logits = load("images"), load("logits")
    got = forward(OUT, images)
    assert got.shape == logits.shape, (got.shape, logits.shape)
    err = float(np.max(np.abs(got - logits)))
    assert err <= 1e-4, "max |onnx - logits.npy| = %g" % err
    print("wrote %s (%d bytes); max |error| vs logits.npy: %.3g"
          % (os.path.relpath(OUT), os.path.getsize(OUT), err))


if __name__ == "__main__":
    main()
