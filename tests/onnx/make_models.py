#!/usr/bin/python3
"""Makes the ONNX test models of `descent import` (outputs committed; the tests do not run this).

Needs NumPy and the `onnx` package; issue 36's models (listed below) also use onnxruntime
for their expected outputs (onnx.reference without it) and torch to export gpt_block (an
onnx.helper twin without it), so run it with a Python that has them, from anywhere:
  /work/venv/bin/python tests/onnx/make_models.py      (or any venv with onnx, onnxruntime, torch)
It is deterministic for a given NumPy: a second run rewrites byte-identical files. The older
models' expected.npy come from the NumPy reference below and move in the last bits between
NumPy versions: keep the committed ones (git checkout -- tests/onnx/models) unless a model
itself changed.

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
Issue 36's models, expected outputs from ONNX Runtime (else onnx.reference); run this with a
Python that has onnx (and onnxruntime, torch for gpt_block), e.g. /work/venv/bin/python:
  broadcast_ops     Add/Sub/Mul/Div/Pow/Sqrt/Less/Equal/Greater/Where/Cast, broadcasting at rank 3
  reduce_mean       a layer norm written out (ReduceMean, Sub, Pow, Sqrt, Div), a mean without keepdims
  shape_computed    x[batch,12].view(x.size(0), 3, -1) via Shape/Gather/Cast/Unsqueeze/Concat; Unsqueeze, Squeeze
  slice_concat      Slice (negative steps), Split [1,2,3], Concat along axis 1
  gelu              GELU as torch writes it at opset 17: exact (Erf) then the tanh form; erf: Erf alone
  gather_embed      int64 ids[2,5] -> embedding Gather, position rows (folded), Gather by constant indices
  softmax_axes      Softmax along axis 1 then -1 of x[2,3,4,5]; layernorm_3d: LayerNormalization of [2,3,8]
  cnn_small         Conv pad 1 stride 2, grouped Conv, MaxPool, AveragePool, Flatten, Gemm (batch N)
  conv_pool_variants  auto_pad SAME_UPPER, dilation, uneven pads, padded MaxPool, count_include_pad 1
  gpt_block         torch.onnx.export of a 2-block GPT (embeddings, causal attention, GELU MLP, layer norms);
                    without torch, the same architecture written with onnx.helper (gpt_block_helper)

Bad models: tests/onnx/bad/NAME.onnx, each a file the importer must reject with a clear error:
  unsupported_op.onnx  valid ONNX: Relu "act" -> LpPool "pool1"    -> unsupported op LpPool (node "pool1")
  conv_3d.onnx         Conv "conv_volume" on x[1,2,4,4,4]            -> only 2-D convolutions
  pool_ceil.onnx       MaxPool "pool_ceil" with ceil_mode 1          -> ceil_mode is not supported
  pow_exponent.onnx    Pow "pow" by 1.5                              -> the exponent is refused by name
  reshape_batch_product.onnx  x[N,6].view(N * 2, -1) via Shape/Gather/Mul/Concat -> arithmetic on the batch
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


# ---- models of issue 36: a transformer and a CNN, and one model per new op family ----------
# Their expected outputs come from ONNX Runtime when the Python running this has it, else from
# ONNX's own reference evaluator (onnx.reference: NumPy, one op at a time); the NumPy of this
# file only writes their inputs.

def expected_of(model, x):
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, {sess.get_inputs()[0].name: x})[0]
    except ImportError:
        from onnx.reference import ReferenceEvaluator
        return ReferenceEvaluator(model).run(None, {model.graph.input[0].name: x})[0]


def const(name, array):
    """A Constant node whose output is `name` (int64 shapes, f32 scalars)."""
    return helper.make_node("Constant", [], [name], name=name + "_const",
                            value=numpy_helper.from_array(np.asarray(array), name + "_value"))


def write_ort(name, model, x):
    write_valid(name, model, x, expected_of(model, x))


def broadcast_ops():
    """Add/Sub/Mul/Div/Pow/Sqrt/Equal/Less/Greater/Where with NumPy broadcasting at rank 3."""
    rng = np.random.default_rng(130)
    x = (np.round(uniform(rng, (2, 3, 4)) * 4) / 4).astype(F32)  # quarters: Equal holds at places
    b, c = uniform(rng, (4,)), uniform(rng, (3, 1))
    d = (1.0 + rng.uniform(0, 1, size=(1, 3, 4))).astype(F32)
    nodes = [
        helper.make_node("Add", ["b", "x"], ["a"], name="bias"),          # [4] + [2,3,4]
        helper.make_node("Mul", ["a", "c"], ["m"], name="scale_rows"),    # [3,1] broadcasts
        const("half", np.float32(0.5)),
        helper.make_node("Sub", ["m", "half"], ["s"], name="minus_half"),  # a scalar folded in
        helper.make_node("Div", ["s", "d"], ["q"], name="divide"),         # [1,3,4]
        const("two", np.float32(2.0)),
        helper.make_node("Pow", ["q", "two"], ["p2"], name="square"),
        const("one", np.float32(1.0)),
        helper.make_node("Add", ["p2", "one"], ["p2_1"], name="plus_one"),
        helper.make_node("Sqrt", ["p2_1"], ["r"], name="root"),
        const("three", np.float32(3.0)),
        helper.make_node("Pow", ["x", "three"], ["cube"], name="cube"),
        const("sqrt_exp", np.float32(0.5)),
        helper.make_node("Pow", ["r", "sqrt_exp"], ["r_half"], name="sqrt_pow"),
        helper.make_node("Less", ["x", "c3"], ["lt"], name="less"),        # [2,3,4] < [1,3,1]
        helper.make_node("Where", ["lt", "cube", "r_half"], ["w"], name="pick"),
        helper.make_node("Equal", ["x", "half"], ["eq"], name="is_half"),
        const("ten", np.float32(10.0)),
        helper.make_node("Where", ["eq", "ten", "w"], ["w2"], name="mark_half"),
        const("zero", np.float32(0.0)),
        helper.make_node("Greater", ["x", "zero"], ["gt"], name="positive"),
        helper.make_node("Cast", ["gt"], ["gt_f"], name="to_float", to=TensorProto.FLOAT),
        helper.make_node("Add", ["w2", "gt_f"], ["y"], name="plus_mask"),
    ]
    c3 = uniform(rng, (1, 3, 1))
    m = model_of("broadcast_ops", nodes, [value("x", [2, 3, 4])], [value("y", [2, 3, 4])],
                 [init("b", b), init("c", c), init("d", d), init("c3", c3)])
    write_ort("broadcast_ops", m, x)


def reduce_mean_model():
    """A layer norm written out as torch once exported it: ReduceMean, Sub, Pow, Sqrt, Div;
    then a mean over the middle axis without keepdims."""
    rng = np.random.default_rng(131)
    x = uniform(rng, (2, 3, 8), scale=2.0)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mu"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["xc"], name="center"),
        const("two", np.float32(2.0)),
        helper.make_node("Pow", ["xc", "two"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="variance", axes=[-1]),
        const("eps", np.float32(1e-5)),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="plus_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="sd"),
        helper.make_node("Div", ["xc", "sd"], ["norm"], name="normalise"),
        helper.make_node("ReduceMean", ["norm"], ["y"], name="mean_rows", axes=[1], keepdims=0),
    ]
    m = model_of("reduce_mean", nodes, [value("x", [2, 3, 8])], [value("y", [2, 8])])
    write_ort("reduce_mean", m, x)


def shape_computed():
    """A Reshape whose shape is computed from the input's, with a symbolic batch, as
    torch.onnx.export writes x.view(x.size(0), 3, -1): Shape, Gather, Unsqueeze, Cast, Concat."""
    rng = np.random.default_rng(132)
    x = uniform(rng, (2, 12))
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        const("zero", np.array(0, np.int64)),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch_dim", axis=0),
        helper.make_node("Cast", ["batch"], ["batch64"], name="cast", to=TensorProto.INT64),
        const("axes0", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["batch64", "axes0"], ["batch1"], name="unsqueeze"),
        const("rest", np.array([3, -1], np.int64)),
        helper.make_node("Concat", ["batch1", "rest"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="view"),          # [batch,3,4]
        const("axes1", np.array([1], np.int64)),
        helper.make_node("Unsqueeze", ["r", "axes1"], ["u"], name="add_dim"),      # [batch,1,3,4]
        helper.make_node("Tanh", ["u"], ["t"], name="tanh"),
        helper.make_node("Squeeze", ["t", "axes1"], ["y"], name="drop_dim"),       # [batch,3,4]
    ]
    m = model_of("shape_computed", nodes, [value("x", ["batch", 12])], [value("y", ["batch", 3, 4])])
    write_ort("shape_computed", m, x)


def slice_concat():
    """Slice (negative step, several axes), Split into uneven parts, Concat along two axes."""
    rng = np.random.default_rng(133)
    x = uniform(rng, (2, 6, 5))
    nodes = [
        const("starts", np.array([4, -1], np.int64)), const("ends", np.array([0, -100], np.int64)),
        const("axes", np.array([1, 2], np.int64)), const("steps", np.array([-2, -1], np.int64)),
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"], name="reverse"),  # [2,2,5]
        const("sizes", np.array([1, 2, 3], np.int64)),
        helper.make_node("Split", ["x", "sizes"], ["p0", "p1", "p2"], name="split", axis=1),
        helper.make_node("Concat", ["p2", "s", "p0"], ["c"], name="join", axis=1),   # [2,6,5]
        helper.make_node("Relu", ["p1"], ["p1r"], name="relu"),                      # [2,2,5]
        helper.make_node("Concat", ["c", "p1r"], ["y"], name="join_rows", axis=1),   # [2,8,5]
    ]
    m = model_of("slice_concat", nodes, [value("x", [2, 6, 5])], [value("y", [2, 8, 5])])
    write_ort("slice_concat", m, x)


def gelu_models():
    """GELU as torch.onnx.export writes it at opset 17 (no Gelu op before opset 20): the exact
    form through Erf, and the tanh form; and Erf alone."""
    rng = np.random.default_rng(134)
    x = uniform(rng, (2, 3, 8), scale=4.0)
    sqrt2, c = np.float32(np.sqrt(2.0)), np.float32(np.sqrt(2.0 / np.pi))
    nodes = [
        const("sqrt2", sqrt2), const("one", np.float32(1.0)), const("half", np.float32(0.5)),
        helper.make_node("Div", ["x", "sqrt2"], ["xs"], name="div"),
        helper.make_node("Erf", ["xs"], ["e"], name="erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="add"),
        helper.make_node("Mul", ["x", "e1"], ["xe"], name="mul"),
        helper.make_node("Mul", ["xe", "half"], ["g"], name="mul_half"),           # exact GELU
        # the tanh form on g: 0.5 g (1 + tanh(c (g + 0.044715 g^3)))
        helper.make_node("Mul", ["g", "g"], ["g2"], name="g2"),
        helper.make_node("Mul", ["g", "g2"], ["g3"], name="g3"),
        const("k", np.float32(0.044715)), const("c", c),
        helper.make_node("Mul", ["k", "g3"], ["kg3"], name="kg3"),
        helper.make_node("Add", ["g", "kg3"], ["inner"], name="inner"),
        helper.make_node("Mul", ["c", "inner"], ["u"], name="scale"),
        helper.make_node("Tanh", ["u"], ["t"], name="tanh"),
        helper.make_node("Add", ["t", "one"], ["t1"], name="add_one"),
        helper.make_node("Mul", ["g", "t1"], ["gt"], name="mul_g"),
        helper.make_node("Mul", ["half", "gt"], ["y"], name="half_again"),
    ]
    m = model_of("gelu", nodes, [value("x", [2, 3, 8])], [value("y", [2, 3, 8])])
    write_ort("gelu", m, x)
    x = uniform(rng, (3, 7), scale=3.0)
    m = model_of("erf", [helper.make_node("Erf", ["x"], ["y"], name="erf")],
                 [value("x", [3, 7])], [value("y", [3, 7])])
    write_ort("erf", m, x)


def gather_embed():
    """Token ids (int64, the model's input) gather rows of an embedding table; constant
    indices gather along axis 1 of the result, and one constant index drops that axis."""
    rng = np.random.default_rng(135)
    ids = rng.integers(0, 10, size=(2, 5)).astype(np.int64)
    table, pos = uniform(rng, (10, 6)), uniform(rng, (7, 6))
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"], name="embed"),             # [2,5,6]
        const("positions", np.array([4, 3, 1, 0, 2], np.int64)),
        helper.make_node("Gather", ["pos", "positions"], ["p"], name="pos_embed"),     # folded: [5,6]
        helper.make_node("Add", ["e", "p"], ["h"], name="add_pos"),
        const("pick", np.array([3, -4], np.int64)),
        helper.make_node("Gather", ["h", "pick"], ["g"], name="pick_tokens", axis=1),  # [2,2,6]
        const("first", np.array(0, np.int64)),
        helper.make_node("Gather", ["h", "first"], ["f"], name="first_token", axis=1),  # [2,6]
        const("axes1", np.array([1], np.int64)),
        helper.make_node("Unsqueeze", ["f", "axes1"], ["f1"], name="unsqueeze"),
        helper.make_node("Add", ["g", "f1"], ["y"], name="add_first"),
    ]
    m = model_of("gather_embed", nodes, [value("ids", [2, 5], TensorProto.INT64)],
                 [value("y", [2, 2, 6])], [init("table", table), init("pos", pos)])
    d = os.path.join(MODELS, "gather_embed")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    np.save(os.path.join(d, "input.npy"), ids)  # int64, as the model takes them
    np.save(os.path.join(d, "expected.npy"), np.ascontiguousarray(expected_of(m, ids), F32))


def softmax_layernorm_nd():
    """Softmax along a middle axis and along the last of rank 4; LayerNormalization of a
    [batch, tokens, d] activation."""
    rng = np.random.default_rng(136)
    x = uniform(rng, (2, 3, 4, 5), scale=5.0)
    m = model_of("softmax_axes",
                 [helper.make_node("Softmax", ["x"], ["s"], name="over_channels", axis=1),
                  helper.make_node("Softmax", ["s"], ["y"], name="over_last", axis=-1)],
                 [value("x", [2, 3, 4, 5])], [value("y", [2, 3, 4, 5])])
    write_ort("softmax_axes", m, x)
    x, g, b = uniform(rng, (2, 3, 8), scale=3.0), uniform(rng, (8,)), uniform(rng, (8,))
    m = model_of("layernorm_3d",
                 [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln")],
                 [value("x", [2, 3, 8])], [value("y", [2, 3, 8])], [init("gamma", g), init("beta", b)],
                 opset=17)
    write_ort("layernorm_3d", m, x)


def cnn_small():
    """A small CNN: a conv with padding 1 and stride 2, a grouped conv, MaxPool, AveragePool
    (padded, count_include_pad 0), Flatten, Gemm."""
    rng = np.random.default_rng(137)
    x = uniform(rng, (2, 3, 16, 16))
    w1, b1 = uniform(rng, (8, 3, 3, 3), 0.5), uniform(rng, (8,), 0.1)
    w2, b2 = uniform(rng, (8, 4, 3, 3), 0.5), uniform(rng, (8,), 0.1)
    fw, fb = uniform(rng, (10, 128), 0.2), uniform(rng, (10,), 0.1)
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),      # [2,8,8,8]
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),             # [2,8,8,8]
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p1"], name="maxpool", kernel_shape=[2, 2],
                         strides=[2, 2]),                                              # [2,8,4,4]
        helper.make_node("AveragePool", ["p1"], ["p2"], name="avgpool", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),                                           # [2,8,4,4]
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], name="fc", transB=1),
    ]
    m = model_of("cnn_small", nodes, [value("x", ["N", 3, 16, 16])], [value("y", ["N", 10])],
                 [init("conv1.weight", w1), init("conv1.bias", b1), init("conv2.weight", w2),
                  init("conv2.bias", b2), init("fc.weight", fw), init("fc.bias", fb)])
    write_ort("cnn_small", m, x)


def conv_pool_variants():
    """Conv with auto_pad SAME_UPPER and stride 2 on an odd image, a dilated Conv, a padded
    MaxPool (stride 2), an AveragePool that counts the padding, and uneven pads."""
    rng = np.random.default_rng(138)
    x = uniform(rng, (1, 2, 9, 9))
    w1, w2 = uniform(rng, (4, 2, 3, 3)), uniform(rng, (3, 4, 2, 2))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="same", auto_pad="SAME_UPPER",
                         strides=[2, 2]),                                              # [1,4,5,5]
        helper.make_node("Conv", ["c1", "w2"], ["c2"], name="dilated", dilations=[2, 2],
                         pads=[1, 0, 2, 1]),                                           # [1,3,6,4]
        helper.make_node("MaxPool", ["c2"], ["m"], name="maxpool", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),                          # [1,3,3,2]
        helper.make_node("AveragePool", ["m"], ["y"], name="avgpool", kernel_shape=[2, 2],
                         pads=[1, 1, 0, 0], count_include_pad=1),                      # [1,3,3,2]
    ]
    m = model_of("conv_pool_variants", nodes, [value("x", [1, 2, 9, 9])], [value("y", [1, 3, 3, 2])],
                 [init("w1", w1), init("w2", w2)])
    write_ort("conv_pool_variants", m, x)


def gpt_block():
    """A GPT-style model exported by torch.onnx.export: token and position embeddings, two
    pre-norm blocks (causal self-attention with 4 heads, a GELU MLP), a final layer norm.
    d_model 64, sequence 32, vocabulary 64, MLP width 128 (2x, not GPT's 4x: the file stays
    near 300 KB). Block 0's GELU is the tanh form (GPT-2's), block 1's the exact one (Erf).
    The batch is symbolic, so the file holds the shape arithmetic every such export has."""
    try:
        import torch
    except ImportError:
        gpt_block_helper()
        return
    import inspect
    import math
    V, T, D, H, L, F = 64, 32, 64, 4, 2, 128
    torch.manual_seed(139)

    class Block(torch.nn.Module):
        def __init__(self, approximate):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
            self.attn, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
            self.fc, self.fc2 = torch.nn.Linear(D, F), torch.nn.Linear(F, D)
            self.gelu = torch.nn.GELU(approximate=approximate)
            self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            B, Tn, C = x.size()
            q, k, v = self.attn(self.ln1(x)).split(D, dim=2)
            q = q.view(B, Tn, H, C // H).transpose(1, 2)
            k = k.view(B, Tn, H, C // H).transpose(1, 2)
            v = v.view(B, Tn, H, C // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
            att = att.masked_fill(self.mask[:, :, :Tn, :Tn] == 0, float("-inf"))
            y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, Tn, C)
            x = x + self.proj(y)
            return x + self.fc2(self.gelu(self.fc(self.ln2(x))))

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = torch.nn.Embedding(V, D), torch.nn.Embedding(T, D)
            self.blocks = torch.nn.ModuleList([Block("tanh"), Block("none")])
            self.ln_f = torch.nn.LayerNorm(D)

        def forward(self, idx):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for b in self.blocks:
                x = b(x)
            return self.ln_f(x)

    model = GPT().eval()
    with torch.no_grad():  # LayerNorm's default scale 1 and shift 0, zero biases, would test little
        for name, p in model.named_parameters():
            if p.dim() == 1:
                scale = 1.0 if "ln" in name and name.endswith("weight") else 0.0
                p.copy_(scale + 0.1 * torch.randn_like(p))
    ids = np.random.default_rng(139).integers(0, V, size=(2, T)).astype(np.int64)
    path = os.path.join(MODELS, "gpt_block", "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.from_numpy(ids[:1]),), path, opset_version=17,
                          do_constant_folding=True, input_names=["ids"], output_names=["y"],
                          dynamic_axes={"ids": {0: "batch"}, "y": {0: "batch"}}, **kw)
    m = onnx.load(path)
    m.producer_name, m.producer_version = PRODUCER + " (torch.onnx.export)", torch.__version__
    onnx.checker.check_model(m, full_check=True)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    np.save(os.path.join(MODELS, "gpt_block", "input.npy"), ids)
    np.save(os.path.join(MODELS, "gpt_block", "expected.npy"),
            np.ascontiguousarray(expected_of(m, ids), F32))


def gpt_block_helper(name="gpt_block"):
    """gpt_block without torch: the same architecture written node by node with onnx.helper,
    the way the TorchScript exporter writes it after constant folding (shapes as constants
    with 0 for the batch, a causal mask as a bool initializer, GELU spelled out), with seeded
    NumPy weights."""
    V, T, D, H, F = 64, 32, 64, 4, 128
    rng = np.random.default_rng(139)
    inits, nodes = [], []

    def w(nm, shape, scale):
        inits.append(init(nm, uniform(rng, shape, scale)))
        return nm

    def ln_params(nm):
        inits.append(init(nm + ".weight", (1.0 + uniform(rng, (D,), 0.1)).astype(F32)))
        inits.append(init(nm + ".bias", uniform(rng, (D,), 0.1)))
        return [nm + ".weight", nm + ".bias"]

    def node(op, ins, nm, **attrs):
        nodes.append(helper.make_node(op, ins, [nm], name=nm, **attrs))
        return nm

    def linear(x, nm, n_in, n_out):
        y = node("MatMul", [x, w(nm + ".weight", (n_in, n_out), 1.0 / np.sqrt(n_in))], nm + "/MatMul")
        return node("Add", [w(nm + ".bias", (n_out,), 0.1), y], nm + "/Add")

    inits += [init("heads_shape", np.array([0, T, H, D // H], np.int64)),
              init("merge_shape", np.array([0, T, D], np.int64)),
              init("causal", ~np.tril(np.ones((1, 1, T, T), bool))),
              init("minus_inf", np.array(-np.inf, F32)), init("scale", np.array(0.25, F32)),
              init("one", np.array(1.0, F32)), init("half", np.array(0.5, F32)),
              init("sqrt2", np.array(np.sqrt(2.0), F32)), init("k", np.array(0.044715, F32)),
              init("c", np.array(np.sqrt(2.0 / np.pi), F32))]
    w("wpe.weight", (T, D), 1.0)
    x = node("Gather", [w("wte.weight", (V, D), 1.0), "ids"], "/wte/Gather")
    inits.append(init("positions", np.arange(T, dtype=np.int64)))
    x = node("Add", [x, node("Gather", ["wpe.weight", "positions"], "/wpe/Gather")], "/Add")
    for b in range(2):
        p = "/blocks.%d" % b
        h = node("LayerNormalization", [x] + ln_params(p + "/ln1"), p + "/ln1/LayerNormalization", axis=-1)
        qkv = linear(h, p + "/attn", D, 3 * D)
        inits.append(init(p + "/split_sizes", np.array([D, D, D], np.int64)))
        nodes.append(helper.make_node("Split", [qkv, p + "/split_sizes"], [p + "/q", p + "/k", p + "/v"],
                                      name=p + "/Split", axis=2))
        q, k, v = [node("Reshape", [p + "/" + t, "heads_shape"], p + "/" + t + "_heads") for t in "qkv"]
        q = node("Transpose", [q], p + "/q_t", perm=[0, 2, 1, 3])
        v = node("Transpose", [v], p + "/v_t", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], p + "/k_t", perm=[0, 2, 3, 1])
        att = node("Mul", [node("MatMul", [q, k], p + "/scores"), "scale"], p + "/scaled")
        att = node("Softmax", [node("Where", ["causal", "minus_inf", att], p + "/masked")], p + "/Softmax", axis=-1)
        y = node("Transpose", [node("MatMul", [att, v], p + "/weighted")], p + "/merge_t", perm=[0, 2, 1, 3])
        y = node("Reshape", [y, "merge_shape"], p + "/merge")
        x = node("Add", [x, linear(y, p + "/proj", D, D)], p + "/Add")
        h = linear(node("LayerNormalization", [x] + ln_params(p + "/ln2"), p + "/ln2/LayerNormalization",
                        axis=-1), p + "/fc", D, F)
        g = p + "/gelu"
        if b == 0:  # the tanh form
            h3 = node("Mul", [h, node("Mul", [h, h], g + "/sq")], g + "/cube")
            u = node("Mul", ["c", node("Add", [h, node("Mul", ["k", h3], g + "/kx3")], g + "/inner")], g + "/u")
            t = node("Add", [node("Tanh", [u], g + "/Tanh"), "one"], g + "/t1")
        else:  # the exact form
            t = node("Add", [node("Erf", [node("Div", [h, "sqrt2"], g + "/Div")], g + "/Erf"), "one"], g + "/t1")
        h = node("Mul", [node("Mul", [h, t], g + "/Mul"), "half"], g + "/Mul_1")
        x = node("Add", [x, linear(h, p + "/fc2", F, D)], p + "/Add_1")
    nodes.append(helper.make_node("LayerNormalization", [x] + ln_params("/ln_f"), ["y"],
                                  name="/ln_f/LayerNormalization", axis=-1))
    m = model_of(name, nodes, [value("ids", ["batch", T], TensorProto.INT64)],
                 [value("y", ["batch", T, D])], inits, opset=17)
    ids = np.random.default_rng(139).integers(0, V, size=(2, T)).astype(np.int64)
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    np.save(os.path.join(d, "input.npy"), ids)
    np.save(os.path.join(d, "expected.npy"), np.ascontiguousarray(expected_of(m, ids), F32))


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
                  helper.make_node("LpPool", ["r"], ["y"], name="pool1", kernel_shape=[2, 2])],
                 [value("x", [1, 2, 6, 6])], [value("y", [1, 2, 5, 5])])
    write_bad("unsupported_op", m.SerializeToString())

    # What Conv and the pools refuse; all valid ONNX. (The draw below was the weights of two
    # refused convolutions that now import; it stays so the files after it are unchanged.)
    uniform(rng, (3, 2, 3, 3))
    m = model_of("conv_3d",
                 [helper.make_node("Conv", ["x", "W"], ["y"], name="conv_volume")],
                 [value("x", [1, 2, 4, 4, 4])], [value("y", [1, 3, 2, 2, 2])],
                 [init("W", uniform(np.random.default_rng(202), (3, 2, 3, 3, 3)))])
    write_bad("conv_3d", m.SerializeToString())
    m = model_of("pool_ceil",
                 [helper.make_node("MaxPool", ["x"], ["y"], name="pool_ceil", kernel_shape=[2, 2],
                                   strides=[2, 2], ceil_mode=1)],
                 [value("x", [1, 2, 5, 5])], [value("y", [1, 2, 3, 3])])
    write_bad("pool_ceil", m.SerializeToString())

    # Pow by an exponent other than 2, 3, 0.5 and 1.
    m = model_of("pow_exponent",
                 [helper.make_node("Constant", [], ["p"], name="p_const",
                                   value=numpy_helper.from_array(np.float32(1.5), "p_value")),
                  helper.make_node("Pow", ["x", "p"], ["y"], name="pow")],
                 [value("x", [2, 3])], [value("y", [2, 3])])
    write_bad("pow_exponent", m.SerializeToString())

    # A shape computed from the batch that is not the batch: x.view(n * 2, -1).
    m = model_of("reshape_batch_product",
                 [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                  helper.make_node("Constant", [], ["i0"], name="i0_const",
                                   value=numpy_helper.from_array(np.array([0], np.int64), "i0_value")),
                  helper.make_node("Gather", ["s", "i0"], ["n"], name="batch"),
                  helper.make_node("Constant", [], ["two"], name="two_const",
                                   value=numpy_helper.from_array(np.array([2], np.int64), "two_value")),
                  helper.make_node("Mul", ["n", "two"], ["n2"], name="twice"),
                  helper.make_node("Constant", [], ["minus1"], name="m1_const",
                                   value=numpy_helper.from_array(np.array([-1], np.int64), "m1_value")),
                  helper.make_node("Concat", ["n2", "minus1"], ["target"], name="target", axis=0),
                  helper.make_node("Reshape", ["x", "target"], ["y"], name="view")],
                 [value("x", ["N", 6])], [value("y", [None, None])])
    write_bad("reshape_batch_product", m.SerializeToString())

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
                 layernorm, layernorm_nobias, matmul_models, transpose_models,
                 broadcast_ops, reduce_mean_model, shape_computed, slice_concat, gelu_models,
                 gather_embed, softmax_layernorm_nd, cnn_small, conv_pool_variants, gpt_block):
        make()
    bad_models()  # after gemm_linear: truncated.onnx is cut from it
    invalid_models()


if __name__ == "__main__":
    main()
