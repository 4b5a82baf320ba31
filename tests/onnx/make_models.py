#!/usr/bin/python3
"""Makes the ONNX test models of `descent import` (outputs committed; the tests do not run this).

Needs only NumPy and the `onnx` package (Debian: apt-get install python3-onnx). Run from anywhere:
  /usr/bin/python3 tests/onnx/make_models.py
It is deterministic: a second run rewrites byte-identical files.

Valid models: tests/onnx/models/NAME/{model.onnx, input.npy, expected.npy}; one graph input and
one graph output each, both float32. expected.npy comes from the NumPy reference below (no
onnxruntime), in float32 as Descent computes.
  gemm_linear       Gemm(x[4,16], W[8,16], b[8], transB=1)          nn.Linear as torch exports it
  gemm_plain        Gemm(x[4,16], B[16,8], C[1,8], alpha=0.5, beta=2)
  gemm_trans_a      Gemm(x[16,4], B[16,8], C[4,8], transA=1)        -> [4,8]
  matmul_add        MatMul(x[4,16], B[16,8]) + b[8]
  add_two           Add(Relu(x), Sigmoid(x)), x[3,5]
  activations_4d    x[2,3,4,5] -> Tanh -> Sigmoid -> Relu
  softmax           Softmax(axis=-1), x[4,10] in [-30,30)             numerical stability
  softmax_opset11   Softmax without axis (default 1), opset 11, x[4,10]
  flatten_gemm      x[2,3,4,4] -> Flatten -> Gemm(W[5,48], b[5], transB=1)
  reshape_const     x[2,3,4,4] -> Reshape(shape from a Constant node: [0,-1]) -> Relu -> [2,48]
  reshape_init      x[6,8] -> Reshape(int64 initializer [-1,4]) -> Tanh -> [12,4]
  conv              x[2,3,8,8] -> Conv(W[4,3,3,3], B[4]) -> Relu -> Flatten -> Gemm(W[10,144]) -> [2,10]
  conv_nobias       x[1,2,6,6] -> Conv(W[3,2,2,2]) without bias -> [1,3,5,5]
  identity_dropout  x[4,6] -> Identity -> Dropout (inference: identity) -> Relu
  mlp_dynamic       x[N,20] (dim_param "N"; input.npy has N=5) -> Gemm -> Relu -> Gemm -> Softmax(axis=1)
  reshape_dynamic   x["batch",12] (input.npy has batch=3) -> Tanh -> Reshape [0,3,-1] -> [batch,3,4]
                    (what every PyTorch export with a dynamic batch and a view/reshape holds)
  softmax_3d        Softmax(axis=-1) of x[2,3,10] in [-30,30): attention's scores, per head
  matmul_3d         MatMul(x[2,3,4], B[4,5]): a batch of matrices times one -> [2,3,5]
  matmul_batched    MatMul(x[2,3,4], B[2,4,5]): one product per batch index -> [2,3,5]
  matmul_4d         MatMul(x[2,2,3,4], B[2,2,4,5]): batch and heads -> [2,2,3,5]
  transpose_2d      Transpose(x[3,5]) (default perm: reversed) -> Relu -> [5,3]
  transpose_3d      Transpose(x[2,3,4], perm [0,2,1]): k^T per head -> [2,4,3]
  transpose_4d      Transpose(x[2,3,4,5], perm [0,2,1,3]): a head split's swap -> [2,4,3,5]
  layernorm         LayerNormalization(x[4,10], scale[10], bias[10]) (opset 17) -> Sigmoid
  layernorm_nobias  LayerNormalization(x[5,8], scale[8]), no bias -> Tanh

Bad models: tests/onnx/bad/NAME.onnx, each a file the importer must reject with a clear error:
  unsupported_op.onnx  valid ONNX: Relu "act" -> MaxPool "pool1"   -> unsupported op MaxPool (node "pool1")
  conv_pads.onnx       Conv "conv_padded", pads [1,1,1,1]            -> unsupported attribute: pads
  conv_strides.onnx    Conv "conv_strided", strides [2,2]            -> unsupported attribute: strides
  matmul_broadcast.onnx MatMul "bmm" of x[2,3,4] and B[1,4,5]        -> batch dims that differ
  layernorm_eps.onnx   LayerNormalization "ln" with epsilon 1e-6     -> not the prelude's 1e-05
  truncated.onnx       first 60% of models/gemm_linear/model.onnx    -> protobuf parse error (truncated)
  not_onnx.onnx        the text "this is not an onnx model\n"        -> not an ONNX model / parse error
  empty.onnx           zero bytes                                    -> empty file / no graph
  two_inputs.onnx      Add(a[2,3], b[2,3]), two graph inputs         -> exactly one graph input supported
  int_input.onnx       Relu on an INT32 input [2,3] (opset 14)       -> graph input must be float32
Invalid ONNX (onnx.checker refuses each; so must the importer, naming the node where there is one):
  dim_negative, dim_zero, dim_huge   input dims -3, 0 and 2^40
  raw_and_float        an initializer with both raw_data and float_data
  not_ssa              two nodes write the same value
  extra_empty_input    Relu with inputs ["x", ""]
  attr_wrong_type      Gemm with transB the string "1"
  opset_missing, opset_minus1, opset_zero, ir_999
  relu_alpha, gemm_pads    attributes the op does not have
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
BAD = os.path.join(HERE, "bad")
PRODUCER = "descent tests/onnx/make_models.py"
F32 = np.float32


# ---- NumPy float32 reference of the ops the importer supports ----------------------------

def gemm(a, b, c=None, alpha=1.0, beta=1.0, trans_a=0, trans_b=0):
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    y = F32(alpha) * (a @ b)
    if c is not None:
        y = y + F32(beta) * c  # C broadcasts: [N], [1,N] or [M,N]
    return y.astype(F32)


def relu(x):
    return np.maximum(x, F32(0)).astype(F32)


def sigmoid(x):
    return (F32(1) / (F32(1) + np.exp(-x))).astype(F32)


def tanh(x):
    return np.tanh(x).astype(F32)


def softmax(x, axis=-1):
    # Subtracting the row max keeps exp() finite for inputs like +-30.
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(F32)


def flatten(x, axis=1):
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def onnx_reshape(x, shape):
    # ONNX: 0 copies the input's dim (allowzero=0), -1 is inferred; NumPy knows only -1.
    shape = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]
    return x.reshape(shape)


def conv2d(x, w, b=None):
    # Strides 1, dilations 1, no padding, group 1: a sum over the kernel's offsets.
    n, c, h, wd = x.shape
    o, c2, kh, kw = w.shape
    assert c == c2
    oh, ow = h - kh + 1, wd - kw + 1
    y = np.zeros((n, o, oh, ow), F32)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j]).astype(F32)
    if b is not None:
        y += b.reshape(1, o, 1, 1)
    return y.astype(F32)


# ---- helpers ----------------------------------------------------------------------------

def uniform(rng, shape, scale=1.0):
    return (rng.uniform(-1.0, 1.0, size=shape) * scale).astype(F32)


def init(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, producer_name=PRODUCER,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    # full_check also runs strict shape inference, so the declared shapes must agree.
    onnx.checker.check_model(model, full_check=True)
    return model


def write_valid(name, model, x, expected):
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    np.save(os.path.join(d, "input.npy"), np.ascontiguousarray(x, F32))
    np.save(os.path.join(d, "expected.npy"), np.ascontiguousarray(expected, F32))


def write_bad(name, data):
    with open(os.path.join(BAD, name + ".onnx"), "wb") as f:
        f.write(data)


# ---- valid models -----------------------------------------------------------------------

def gemm_linear():
    rng = np.random.default_rng(101)
    x, w, b = uniform(rng, (4, 16)), uniform(rng, (8, 16)), uniform(rng, (8,))
    m = model_of("gemm_linear",
                 [helper.make_node("Gemm", ["x", "W", "b"], ["y"], name="fc", transB=1)],
                 [value("x", [4, 16])], [value("y", [4, 8])], [init("W", w), init("b", b)])
    write_valid("gemm_linear", m, x, gemm(x, w, b, trans_b=1))


def gemm_plain():
    rng = np.random.default_rng(102)
    x, bm, c = uniform(rng, (4, 16)), uniform(rng, (16, 8)), uniform(rng, (1, 8))
    m = model_of("gemm_plain",
                 [helper.make_node("Gemm", ["x", "B", "C"], ["y"], name="gemm",
                                   alpha=0.5, beta=2.0, transB=0)],
                 [value("x", [4, 16])], [value("y", [4, 8])], [init("B", bm), init("C", c)])
    write_valid("gemm_plain", m, x, gemm(x, bm, c, alpha=0.5, beta=2.0))


def gemm_trans_a():
    rng = np.random.default_rng(103)
    x, bm, c = uniform(rng, (16, 4)), uniform(rng, (16, 8)), uniform(rng, (4, 8))
    m = model_of("gemm_trans_a",
                 [helper.make_node("Gemm", ["x", "B", "C"], ["y"], name="gemm_ta", transA=1)],
                 [value("x", [16, 4])], [value("y", [4, 8])], [init("B", bm), init("C", c)])
    write_valid("gemm_trans_a", m, x, gemm(x, bm, c, trans_a=1))


def matmul_add():
    rng = np.random.default_rng(104)
    x, bm, b = uniform(rng, (4, 16)), uniform(rng, (16, 8)), uniform(rng, (8,))
    m = model_of("matmul_add",
                 [helper.make_node("MatMul", ["x", "B"], ["xb"], name="matmul"),
                  helper.make_node("Add", ["xb", "bias"], ["y"], name="add")],
                 [value("x", [4, 16])], [value("y", [4, 8])], [init("B", bm), init("bias", b)])
    write_valid("matmul_add", m, x, (x @ bm + b).astype(F32))


def add_two():
    rng = np.random.default_rng(105)
    x = uniform(rng, (3, 5))
    m = model_of("add_two",
                 [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                  helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
                  helper.make_node("Add", ["r", "s"], ["y"], name="add")],
                 [value("x", [3, 5])], [value("y", [3, 5])])
    write_valid("add_two", m, x, (relu(x) + sigmoid(x)).astype(F32))


def activations_4d():
    rng = np.random.default_rng(106)
    x = uniform(rng, (2, 3, 4, 5))
    m = model_of("activations_4d",
                 [helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
                  helper.make_node("Sigmoid", ["t"], ["s"], name="sigmoid"),
                  helper.make_node("Relu", ["s"], ["y"], name="relu")],
                 [value("x", [2, 3, 4, 5])], [value("y", [2, 3, 4, 5])])
    write_valid("activations_4d", m, x, relu(sigmoid(tanh(x))))


def softmax_model():
    rng = np.random.default_rng(107)
    # Logits in [-30,30): probabilities span ~26 orders of magnitude, a test of the stable form.
    x = uniform(rng, (4, 10), scale=30.0)
    m = model_of("softmax",
                 [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
                 [value("x", [4, 10])], [value("y", [4, 10])])
    write_valid("softmax", m, x, softmax(x, axis=-1))


def softmax_opset11():
    rng = np.random.default_rng(108)
    x = uniform(rng, (4, 10))
    # Before opset 13 the default axis is 1 and the input is coerced to 2-D: on [4,10] a row softmax.
    m = model_of("softmax_opset11",
                 [helper.make_node("Softmax", ["x"], ["y"], name="softmax")],
                 [value("x", [4, 10])], [value("y", [4, 10])], opset=11)
    write_valid("softmax_opset11", m, x, softmax(x, axis=1))


def matmul_models():
    rng = np.random.default_rng(120)
    for name, xs, bs in (("matmul_3d", (2, 3, 4), (4, 5)), ("matmul_batched", (2, 3, 4), (2, 4, 5)),
                         ("matmul_4d", (2, 2, 3, 4), (2, 2, 4, 5))):
        x, b = uniform(rng, xs), uniform(rng, bs)
        y = np.matmul(x.astype(np.float64), b.astype(np.float64)).astype(F32)
        m = model_of(name, [helper.make_node("MatMul", ["x", "B"], ["y"], name="mm")],
                     [value("x", list(xs))], [value("y", list(y.shape))], [init("B", b)])
        write_valid(name, m, x, y)


def transpose_models():
    rng = np.random.default_rng(121)
    for name, shape, perm in (("transpose_2d", (3, 5), None), ("transpose_3d", (2, 3, 4), [0, 2, 1]),
                              ("transpose_4d", (2, 3, 4, 5), [0, 2, 1, 3])):
        x = uniform(rng, shape)
        y = np.transpose(x, perm)
        attrs = {} if perm is None else {"perm": perm}
        nodes = [helper.make_node("Transpose", ["x"], ["t" if perm is None else "y"], name="swap", **attrs)]
        if perm is None:
            nodes.append(helper.make_node("Relu", ["t"], ["y"], name="act"))
            y = relu(y)
        m = model_of(name, nodes, [value("x", list(shape))], [value("y", list(y.shape))])
        write_valid(name, m, x, np.ascontiguousarray(y))


def layer_norm(x, scale, bias=None, eps=1e-5):
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x64 - mu) / np.sqrt(var + eps) * scale
    return (y if bias is None else y + bias).astype(F32)


def softmax_3d():
    rng = np.random.default_rng(117)
    x = uniform(rng, (2, 3, 10), scale=30.0)
    m = model_of("softmax_3d",
                 [helper.make_node("Softmax", ["x"], ["y"], name="scores_softmax", axis=-1)],
                 [value("x", [2, 3, 10])], [value("y", [2, 3, 10])])
    write_valid("softmax_3d", m, x, softmax(x, axis=-1))


def layernorm():
    rng = np.random.default_rng(118)
    x, g, b = uniform(rng, (4, 10), scale=3.0), uniform(rng, (10,)), uniform(rng, (10,))
    m = model_of("layernorm",
                 [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], name="ln",
                                   axis=-1),
                  helper.make_node("Sigmoid", ["n"], ["y"], name="act")],
                 [value("x", [4, 10])], [value("y", [4, 10])], [init("gamma", g), init("beta", b)],
                 opset=17)
    write_valid("layernorm", m, x, sigmoid(layer_norm(x, g, b)))


def layernorm_nobias():
    rng = np.random.default_rng(119)
    x, g = uniform(rng, (5, 8), scale=2.0), uniform(rng, (8,))
    m = model_of("layernorm_nobias",
                 [helper.make_node("LayerNormalization", ["x", "gamma"], ["n"], name="ln"),
                  helper.make_node("Tanh", ["n"], ["y"], name="act")],
                 [value("x", [5, 8])], [value("y", [5, 8])], [init("gamma", g)], opset=17)
    write_valid("layernorm_nobias", m, x, tanh(layer_norm(x, g)))


def flatten_gemm():
    rng = np.random.default_rng(109)
    x, w, b = uniform(rng, (2, 3, 4, 4)), uniform(rng, (5, 48)), uniform(rng, (5,))
    m = model_of("flatten_gemm",
                 [helper.make_node("Flatten", ["x"], ["f"], name="flatten"),
                  helper.make_node("Gemm", ["f", "W", "b"], ["y"], name="fc", transB=1)],
                 [value("x", [2, 3, 4, 4])], [value("y", [2, 5])], [init("W", w), init("b", b)])
    write_valid("flatten_gemm", m, x, gemm(flatten(x), w, b, trans_b=1))


def reshape_const():
    rng = np.random.default_rng(110)
    x = uniform(rng, (2, 3, 4, 4))
    shape = np.array([0, -1], np.int64)
    m = model_of("reshape_const",
                 [helper.make_node("Constant", [], ["shape"], name="shape_const",
                                   value=numpy_helper.from_array(shape, "shape_value")),
                  helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                  helper.make_node("Relu", ["r"], ["y"], name="relu")],
                 [value("x", [2, 3, 4, 4])], [value("y", [2, 48])])
    write_valid("reshape_const", m, x, relu(onnx_reshape(x, shape)))


def reshape_init():
    rng = np.random.default_rng(111)
    x = uniform(rng, (6, 8))
    shape = np.array([-1, 4], np.int64)
    m = model_of("reshape_init",
                 [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                  helper.make_node("Tanh", ["r"], ["y"], name="tanh")],
                 [value("x", [6, 8])], [value("y", [12, 4])], [init("shape", shape)])
    write_valid("reshape_init", m, x, tanh(onnx_reshape(x, shape)))


def conv():
    rng = np.random.default_rng(112)
    x = uniform(rng, (2, 3, 8, 8))
    cw, cb = uniform(rng, (4, 3, 3, 3)), uniform(rng, (4,))
    fw, fb = uniform(rng, (10, 144)), uniform(rng, (10,))
    m = model_of("conv",
                 [helper.make_node("Conv", ["x", "conv.W", "conv.B"], ["c"], name="conv",
                                   kernel_shape=[3, 3]),
                  helper.make_node("Relu", ["c"], ["r"], name="relu"),
                  helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
                  helper.make_node("Gemm", ["f", "fc.W", "fc.b"], ["y"], name="fc", transB=1)],
                 [value("x", [2, 3, 8, 8])], [value("y", [2, 10])],
                 [init("conv.W", cw), init("conv.B", cb), init("fc.W", fw), init("fc.b", fb)])
    write_valid("conv", m, x, gemm(flatten(relu(conv2d(x, cw, cb))), fw, fb, trans_b=1))


def conv_nobias():
    rng = np.random.default_rng(113)
    x, w = uniform(rng, (1, 2, 6, 6)), uniform(rng, (3, 2, 2, 2))
    # No kernel_shape attribute: it is optional and comes from W.
    m = model_of("conv_nobias",
                 [helper.make_node("Conv", ["x", "W"], ["y"], name="conv")],
                 [value("x", [1, 2, 6, 6])], [value("y", [1, 3, 5, 5])], [init("W", w)])
    write_valid("conv_nobias", m, x, conv2d(x, w))


def identity_dropout():
    rng = np.random.default_rng(114)
    x = uniform(rng, (4, 6))
    m = model_of("identity_dropout",
                 [helper.make_node("Identity", ["x"], ["i"], name="identity"),
                  helper.make_node("Dropout", ["i"], ["d"], name="dropout"),
                  helper.make_node("Relu", ["d"], ["y"], name="relu")],
                 [value("x", [4, 6])], [value("y", [4, 6])])
    write_valid("identity_dropout", m, x, relu(x))


def mlp_dynamic():
    rng = np.random.default_rng(115)
    x = uniform(rng, (5, 20))
    w1, b1 = uniform(rng, (16, 20)), uniform(rng, (16,))
    w2, b2 = uniform(rng, (3, 16)), uniform(rng, (3,))
    m = model_of("mlp_dynamic",
                 [helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1", transB=1),
                  helper.make_node("Relu", ["h"], ["r"], name="relu"),
                  helper.make_node("Gemm", ["r", "W2", "b2"], ["z"], name="fc2", transB=1),
                  helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=1)],
                 [value("x", ["N", 20])], [value("y", ["N", 3])],
                 [init("W1", w1), init("b1", b1), init("W2", w2), init("b2", b2)])
    write_valid("mlp_dynamic", m, x,
                softmax(gemm(relu(gemm(x, w1, b1, trans_b=1)), w2, b2, trans_b=1), axis=1))


def reshape_dynamic():
    rng = np.random.default_rng(116)
    x = uniform(rng, (3, 12))
    shape = np.array([0, 3, -1], np.int64)
    m = model_of("reshape_dynamic",
                 [helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
                  helper.make_node("Reshape", ["t", "shape"], ["y"], name="reshape")],
                 [value("x", ["batch", 12])], [value("y", ["batch", 3, 4])], [init("shape", shape)])
    write_valid("reshape_dynamic", m, x, onnx_reshape(tanh(x), shape))


# ---- bad models -------------------------------------------------------------------------

def relu_model(name="invalid"):
    return model_of(name, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                    [value("x", [2, 3])], [value("y", [2, 3])])


def invalid_models():
    """Models onnx.checker refuses, each made from a valid one by one change."""
    def refused(m):
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception:
            return m.SerializeToString()
        raise SystemExit("onnx.checker accepts " + m.graph.name)

    for name, dim in (("dim_negative", -3), ("dim_zero", 0), ("dim_huge", 2 ** 40)):
        m = relu_model(name)
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = dim
        write_bad(name, refused(m))

    w = np.full((3, 3), 0.5, F32)
    m = model_of("raw_and_float", [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
                 [value("x", [2, 3])], [value("y", [2, 3])], [init("W", w)])
    m.graph.initializer[0].float_data.extend([0.5] * 9)  # raw_data too
    write_bad("raw_and_float", refused(m))

    m = relu_model("not_ssa")
    m.graph.node.append(helper.make_node("Sigmoid", ["x"], ["y"], name="again"))
    write_bad("not_ssa", refused(m))

    m = relu_model("extra_empty_input")
    m.graph.node[0].input.append("")
    write_bad("extra_empty_input", refused(m))

    m = model_of("attr_wrong_type",
                 [helper.make_node("Gemm", ["x", "W"], ["y"], name="fc", transB=1)],
                 [value("x", [2, 3])], [value("y", [2, 3])], [init("W", w)])
    m.graph.node[0].attribute[0].CopyFrom(helper.make_attribute("transB", "1"))
    write_bad("attr_wrong_type", refused(m))

    m = relu_model("opset_missing")
    del m.opset_import[:]
    write_bad("opset_missing", refused(m))
    for name, version in (("opset_minus1", -1), ("opset_zero", 0)):
        m = relu_model(name)
        m.opset_import[0].version = version
        write_bad(name, refused(m))
    m = relu_model("ir_999")
    m.ir_version = 999
    write_bad("ir_999", refused(m))

    m = relu_model("relu_alpha")
    m.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.5))
    write_bad("relu_alpha", refused(m))
    m = model_of("gemm_pads", [helper.make_node("Gemm", ["x", "W"], ["y"], name="fc")],
                 [value("x", [2, 3])], [value("y", [2, 3])], [init("W", w)])
    m.graph.node[0].attribute.append(helper.make_attribute("pads", [1, 1]))
    write_bad("gemm_pads", refused(m))


def bad_models():
    rng = np.random.default_rng(201)

    # Valid ONNX that uses an op the importer lacks.
    m = model_of("unsupported_op",
                 [helper.make_node("Relu", ["x"], ["r"], name="act"),
                  helper.make_node("MaxPool", ["r"], ["y"], name="pool1", kernel_shape=[2, 2])],
                 [value("x", [1, 2, 6, 6])], [value("y", [1, 2, 5, 5])])
    write_bad("unsupported_op", m.SerializeToString())

    # Conv attributes the importer does not support; both are valid ONNX.
    w = uniform(rng, (3, 2, 3, 3))
    m = model_of("conv_pads",
                 [helper.make_node("Conv", ["x", "W"], ["y"], name="conv_padded",
                                   pads=[1, 1, 1, 1])],
                 [value("x", [1, 2, 6, 6])], [value("y", [1, 3, 6, 6])], [init("W", w)])
    write_bad("conv_pads", m.SerializeToString())
    m = model_of("conv_strides",
                 [helper.make_node("Conv", ["x", "W"], ["y"], name="conv_strided",
                                   strides=[2, 2])],
                 [value("x", [1, 2, 7, 7])], [value("y", [1, 3, 3, 3])], [init("W", w)])
    write_bad("conv_strides", m.SerializeToString())

    # A batched MatMul that broadcasts its batch dims: valid ONNX, not imported.
    m = model_of("matmul_broadcast",
                 [helper.make_node("MatMul", ["x", "B"], ["y"], name="bmm")],
                 [value("x", [2, 3, 4])], [value("y", [2, 3, 5])],
                 [init("B", uniform(rng, (1, 4, 5)))])
    write_bad("matmul_broadcast", m.SerializeToString())

    # A layer norm whose epsilon is not the prelude's.
    m = model_of("layernorm_eps",
                 [helper.make_node("LayerNormalization", ["x", "gamma"], ["y"], name="ln",
                                   epsilon=1e-6)],
                 [value("x", [2, 4])], [value("y", [2, 4])], [init("gamma", uniform(rng, (4,)))],
                 opset=17)
    write_bad("layernorm_eps", m.SerializeToString())

    m = model_of("two_inputs",
                 [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                 [value("a", [2, 3]), value("b", [2, 3])], [value("y", [2, 3])])
    write_bad("two_inputs", m.SerializeToString())

    # Opset 14: Relu accepts int32 from there on, so the file is valid ONNX and only the
    # input's element type is wrong for the importer.
    m = model_of("int_input",
                 [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [value("x", [2, 3], TensorProto.INT32)], [value("y", [2, 3], TensorProto.INT32)],
                 opset=14)
    write_bad("int_input", m.SerializeToString())

    # Not parseable at all: cut short, plain text, empty.
    with open(os.path.join(MODELS, "gemm_linear", "model.onnx"), "rb") as f:
        data = f.read()
    truncated = data[:len(data) * 6 // 10]
    try:  # it must fail to parse, or it tests nothing
        onnx.load_model_from_string(truncated)
    except Exception:
        pass
    else:
        raise SystemExit("truncated.onnx still parses")
    write_bad("truncated", truncated)
    write_bad("not_onnx", b"this is not an onnx model\n")
    write_bad("empty", b"")


def main():
    os.makedirs(MODELS, exist_ok=True)
    os.makedirs(BAD, exist_ok=True)
    for make in (gemm_linear, gemm_plain, gemm_trans_a, matmul_add, add_two, activations_4d,
                 softmax_model, softmax_opset11, flatten_gemm, reshape_const, reshape_init,
                 conv, conv_nobias, identity_dropout, mlp_dynamic, reshape_dynamic, softmax_3d,
                 layernorm, layernorm_nobias, matmul_models, transpose_models):
        make()
    bad_models()  # after gemm_linear: truncated.onnx is cut from it
    invalid_models()


if __name__ == "__main__":
    main()
