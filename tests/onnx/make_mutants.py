#!/usr/bin/python3
"""Writes tests/onnx/mutants/: damaged and altered copies of the valid test models, the kinds
an independent campaign fed `descent import` (issue 32). import_test.cpp imports every one:
each must be refused with an error that names the file, or import into a program that runs.
Nothing may crash or hang. Deterministic (a fixed seed); the outputs are committed, so the
tests need no Python. Run from anywhere:  /usr/bin/python3 tests/onnx/make_mutants.py

The kinds (the file name starts with the kind):
  flip_      a few random bytes of a valid model changed
  trunc_     a valid model cut short at a random length
  varint_    a length or a number inside the file replaced by a 10-byte varint near 2^64
  struct_    one field changed through the protobuf API: dims, data types, attributes,
             opsets, node inputs and outputs, initializer data, the IR version
"""
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
OUT = os.path.join(HERE, "mutants")
SOURCES = ["gemm_linear", "mlp_dynamic", "reshape_dynamic", "conv_nobias", "flatten_gemm",
           "softmax", "reshape_const"]


def load(name):
    with open(os.path.join(MODELS, name, "model.onnx"), "rb") as f:
        return f.read()


def huge_varint(rng):
    value = (1 << 64) - 1 - rng.randrange(1 << 16)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def structural(rng, model):
    """One change to a parsed model; returns (what, model)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    kind = rng.randrange(14)
    if kind == 0 and g.input[0].type.tensor_type.shape.dim:
        d = g.input[0].type.tensor_type.shape.dim[rng.randrange(len(g.input[0].type.tensor_type.shape.dim))]
        d.dim_value = rng.choice([-1, 0, 1 << 40, 1 << 62, 3])
        return "input_dim", m
    if kind == 1:
        g.input[0].type.tensor_type.elem_type = rng.choice([0, TensorProto.DOUBLE, TensorProto.INT64, 99])
        return "input_type", m
    if kind == 2 and g.initializer:
        t = g.initializer[rng.randrange(len(g.initializer))]
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([-2, 0, 1 << 33, 7])
        return "init_dims", m
    if kind == 3 and g.initializer:
        t = g.initializer[rng.randrange(len(g.initializer))]
        t.data_type = rng.choice([0, TensorProto.INT8, TensorProto.DOUBLE, TensorProto.STRING, 77])
        return "init_type", m
    if kind == 4 and g.initializer:
        t = g.initializer[rng.randrange(len(g.initializer))]
        if t.raw_data:
            t.raw_data = t.raw_data[: len(t.raw_data) // 2]
        else:
            t.float_data.extend([1.0, 2.0])
        return "init_data", m
    if kind == 5:
        n = g.node[rng.randrange(len(g.node))]
        n.attribute.append(helper.make_attribute(rng.choice(["axis", "transB", "alpha", "pads"]),
                                                 rng.choice([5, -7, 2.5, "x", [1, 2]])))
        return "attribute", m
    if kind == 6:
        n = g.node[rng.randrange(len(g.node))]
        if n.input:
            n.input[rng.randrange(len(n.input))] = rng.choice(["", "nowhere", g.output[0].name])
        return "node_input", m
    if kind == 7:
        n = g.node[rng.randrange(len(g.node))]
        n.output[0] = rng.choice(["", g.input[0].name, g.node[0].output[0]])
        return "node_output", m
    if kind == 8:
        m.opset_import[0].version = rng.choice([-1, 0, 1, 7, 10, 1000])
        return "opset", m
    if kind == 9:
        m.ir_version = rng.choice([0, 1, 2, 999, -5])
        return "ir_version", m
    if kind == 10:
        n = g.node[rng.randrange(len(g.node))]
        n.op_type = rng.choice(["", "Relu", "Gemm", "MatMul", "Softmax", "NoSuchOp"])
        return "op_type", m
    if kind == 11 and len(g.node) > 1:
        nodes = list(g.node)
        rng.shuffle(nodes)
        del g.node[:]
        g.node.extend(nodes)
        return "node_order", m
    if kind == 12:
        g.output[0].name = rng.choice(["", "nowhere", g.input[0].name])
        return "output", m
    del g.node[rng.randrange(len(g.node))]
    return "node_removed", m


def main():
    rng = random.Random(3201)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    count = 0
    for name in SOURCES:
        data = load(name)
        model = onnx.load_model_from_string(data)
        for i in range(3):
            b = bytearray(data)
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            out = "flip_%s_%d.onnx" % (name, i)
            open(os.path.join(OUT, out), "wb").write(bytes(b))
        for i in range(2):
            cut = rng.randrange(1, len(data))
            open(os.path.join(OUT, "trunc_%s_%d.onnx" % (name, i)), "wb").write(data[:cut])
        for i in range(2):
            at = rng.randrange(1, len(data) - 1)
            b = data[:at] + huge_varint(rng) + data[at + 1:]
            open(os.path.join(OUT, "varint_%s_%d.onnx" % (name, i)), "wb").write(b)
        for i in range(6):
            what, m = structural(rng, model)
            out = "struct_%s_%s_%d.onnx" % (what, name, i)
            open(os.path.join(OUT, out), "wb").write(m.SerializeToString())
        count += 13
    print("wrote %d mutants to %s" % (count, OUT))


if __name__ == "__main__":
    main()
