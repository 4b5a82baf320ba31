"""The onnxruntime column of `descent bench --suite tensor` (asked for with --engine onnxruntime).

`descent bench` writes a workload's inputs as in0.npy, in1.npy, ... into a scratch folder and
runs this script once per thread count with the python3 on PATH:

  python3 tensor_baseline.py DIR KERNEL THREADS TARGET_S REPEATS

KERNEL is the prelude kernel the workload runs; the script builds the same computation as a
one-node (or two-node) ONNX graph, the operator ONNX Runtime's CPU provider has a tuned kernel
for (MLAS): MatMul, Gemm + Relu, Add, Softmax (last axis), LayerNormalization (last axis,
epsilon 1e-5 as the prelude's). Timing as mlp_baseline.py: loops of K calls of about TARGET_S
seconds, REPEATS of them, one time per call each. Prints one JSON object:
{"onnxruntime": {"version", "runs_s": [...]}, "notes": [...]}; onnxruntime absent (not
installed, or no such operator here) is a note, never a failure. The output goes to
DIR/out_onnxruntime.npy, which descent checks against its reference interpreter.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_baseline import timed  # noqa: E402  (the same timing as the model suite's)


def graph(kernel, shapes):
    """The ONNX model for `kernel` over inputs of these shapes, or None."""
    from onnx import TensorProto, helper

    names = [f"in{i}" for i in range(len(shapes))]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, shapes)]
    opset = 17
    if kernel == "matmul":
        nodes = [helper.make_node("MatMul", names[:2], ["out"])]
    elif kernel == "linear_relu":  # relu(x w^T): w is [out, in]
        nodes = [helper.make_node("Gemm", names[:2], ["y"], transB=1),
                 helper.make_node("Relu", ["y"], ["out"])]
    elif kernel == "add":
        nodes = [helper.make_node("Add", names[:2], ["out"])]
    elif kernel == "softmax":
        nodes = [helper.make_node("Softmax", names[:1], ["out"], axis=-1)]
    elif kernel == "layer_norm":
        nodes = [helper.make_node("LayerNormalization", names[:3], ["out"], axis=-1, epsilon=1e-5)]
    else:
        return None
    output = helper.make_tensor_value_info("out", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, kernel, inputs, [output])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def main():
    folder, kernel, threads, target_s, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    result = {"notes": []}
    try:
        import numpy as np
        import onnx  # noqa: F401  (graph() builds the model with it)
        import onnxruntime as ort
    except ImportError as e:
        result["notes"].append(f"{e.name} is not installed for {sys.executable} "
                               "(pip install numpy onnx onnxruntime): no onnxruntime column")
        print(json.dumps(result))
        return
    arrays = []
    while os.path.exists(os.path.join(folder, f"in{len(arrays)}.npy")):
        arrays.append(np.load(os.path.join(folder, f"in{len(arrays)}.npy")))
    model = graph(kernel, [a.shape for a in arrays])
    if model is None:
        result["notes"].append(f"onnxruntime: no operator for {kernel}")
        print(json.dumps(result))
        return
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {f"in{i}": a for i, a in enumerate(arrays)}
    out = session.run(None, feeds)[0]
    np.save(os.path.join(folder, "out_onnxruntime.npy"), np.ascontiguousarray(out, dtype=np.float32))
    runs = timed(lambda: session.run(None, feeds), target_s, repeats)
    result["onnxruntime"] = {"version": "ONNX Runtime " + ort.__version__, "runs_s": runs}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
