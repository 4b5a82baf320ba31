# The rest of the public API, one test per function or primitive not covered elsewhere:
# every schedule primitive through its method (each result checked against the reference
# interpreter), the OpenCL device, the lower-level views, and the module's helpers.
import numpy as np
import pytest

import descent
from descent import ScheduleError, StageError
from descent.display import Chart


def test_module_level_lists():
    assert descent.engines() == ["ast", "stack", "reg", "jit", "native"]
    assert descent.devices()[:2] == ["ref", "cpu"] and "opencl" in descent.devices()
    stages = dict(descent.stages())
    assert "register bytecode" in stages["reg"]
    views = dict(descent.Session.kernel_views())
    assert "tir" in views and "c" in views
    assert "split" in descent.Session.schedule_primitives()
    assert "ref:" in descent.Session.describe_devices()
    assert descent.host_description()


def test_configure_and_known_names(sess):
    sess.configure(engine="stack", opt_level=1)
    assert (sess.engine, sess.opt_level) == ("stack", 1)
    sess.run("fn triple(x) { return 3 * x }\ncount = 2")
    names = sess.known_names()
    assert "triple" in names and "count" in names and "print" in names
    sess.threads = 1
    assert sess.threads == 1
    sess.default_schedules = False
    assert sess.default_schedules is False
    sess.target = "aarch64"
    assert "aarch64" in sess.target or sess.target == "aarch64"
    assert "ret" in sess.stage("asm").text  # AArch64's return


def test_native_views_follow_the_target(sess):
    # The teaching backend's second target: the same stage under AArch64's description.
    sess.run("fn f(a: int, b: int, c: int) -> int { return a * b + c }")
    assert "imul" in sess.stage("native-isel").text  # this machine: x86-64
    sess.target = "aarch64"
    isel = sess.stage("native-isel").text
    assert "madd v0(a), v1(b), v2(c)" in isel
    assert "MADDXrrr" in isel
    assert "cost  aarch64" in sess.stage("native-patterns").text


def test_native_engine_runs_aarch64_under_qemu(sess):
    # With the target set, the native engine runs AArch64 code under qemu-aarch64: the same
    # output, and a runtime error at the walker's place.
    sess.configure(engine="native", target="aarch64")
    r = sess.run("fn f(a: int, b: int) -> int { return a * b + 1 }\nprint(f(6, 7), 1.0 / 3.0)")
    assert r == "43 0.3333333333333333\n"
    with pytest.raises(descent.RunError) as e:
        sess.run("x = 0\nprint(5 / x)")
    assert "division by zero" in str(e.value) and ":2:" in str(e.value)
    assert "madd" in sess.stage("native-asm").text or "sdiv" in sess.stage("native-asm").text


def test_stage_lines_and_diff_passes(sess):
    sess.run("fn f(x) {\n  return x * 2\n}\nprint(f(3))")
    lines = sess.stage_lines("llvm")
    text = sess.stage("llvm").text
    assert len(lines) == text.count("\n")
    assert 2 in lines  # `return x * 2` is line 2
    llvm_passes = [p["name"] for p in sess.passes() if p["stage"] == "llvm"]
    diff = sess.diff_passes(llvm_passes[0], llvm_passes[-1])
    assert diff.startswith("--- " + llvm_passes[0])
    with pytest.raises(StageError):
        sess.diff_passes("NoSuchPass", llvm_passes[0])


def test_submit_reports_without_raising(sess):
    r = sess.submit("print(1 / 0)")
    assert r["status"] == "runtime error" and "division by zero" in r["error"]
    r = sess.submit("print(")
    assert r["status"] == "compile error"
    r = sess.submit("print(40 + 2)")
    assert r["status"] == "ok" and r["output"] == "42\n"
    assert [s[0] for s in r["stages"]][:2] == ["parse", "check"]


def test_opencl_device_agrees_with_the_reference(sess):
    x = np.random.default_rng(3).uniform(-1, 1, (3, 16)).astype(np.float32)
    w = np.random.default_rng(4).uniform(-1, 1, (5, 16)).astype(np.float32)
    ref = np.asarray(sess.call("linear_relu", x, w, device="ref"))
    ocl = np.asarray(sess.call("linear_relu", x, w, device="opencl"))
    np.testing.assert_allclose(ocl, ref, rtol=1e-4, atol=1e-5)


def test_bind_for_opencl(mm):
    sch = mm.schedule("mm_relu", n=64, m=64, k=64)
    i, j, k = sch.get_loops("Y")
    sch.bind(i, "blockIdx.x")  # TVM's name for a work-group axis
    sch.bind(j, "local.x")
    assert sch.trace() == "bind Y.i group.x\nbind Y.j local.x\n"
    assert "get_group_id(0)" in sch.show("opencl").text
    assert sch.run("opencl", check=True)["checked"]
    with pytest.raises(ScheduleError):
        sch.bind(k, "warp.x")


def test_cache_read_decompose_reverse_compute_at(mm):
    sch = mm.schedule("mm_relu", n=64, m=64, k=64)
    a_local = sch.cache_read("Y", "A", "local")
    assert a_local.name == "A_local"
    assert sch.run("cpu", check=True)["checked"]
    sch = mm.schedule("mm_relu", n=64, m=64, k=64)
    i, _, _ = sch.get_loops("Y")
    init = sch.decompose_reduction("Y", i)
    assert init.name == "Y_init"
    assert sch.run("cpu", check=True)["checked"]
    sch = mm.schedule("mm_relu", n=64, m=64, k=64)
    sch.reverse_compute_at("C", sch.get_loops("Y")[1])
    assert sch.trace() == "reverse_compute_at C Y.j\n"
    assert sch.run("cpu", check=True)["checked"]


def test_compute_inline_fission_apply(sess):
    sess.run("kernel ew(x: f32[n, m]) -> f32[n, m] {\n  T1[i, j] = x[i, j] * 2.0\n"
             "  T2[i, j] = T1[i, j] + 1.0\n  return T2\n}")
    sch = sess.schedule("ew", n=8, m=8)
    sch.compute_inline("T1")
    assert sch.trace() == "compute_inline T1\n"
    assert sch.run("cpu", check=True)["checked"]
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_allclose(np.asarray(sess.call("ew", x, device="cpu")), x * 2 + 1)
    fused = sess.schedule("linear_relu", n=4, m=8, k=16)
    loops = fused.get_loops("out")
    fused.fission(loops[1])
    assert fused.trace().startswith("fission ")
    assert fused.run("cpu", check=True)["checked"]
    sch = sess.schedule("ew", n=8, m=8)
    sch.apply("split T2.i 2  # a comment\n\nunroll T2.i_1\n")
    assert sch.trace() == "split T2.i 2\nunroll T2.i_1\n"
    with pytest.raises(ScheduleError, match="line|no loop|cannot"):
        sch.apply("split nothing 2")


def test_blockize_and_tensorize(sess):
    sch = sess.schedule("matmul", n=64, m=64, k=64)
    i, j, r = sch.get_loops("C")
    i0, j0, i1, j1 = sch.tile(i, j, 8, 16)
    sch.reorder(i0, j0, r, i1, j1)
    sch.cache_write("C", "local")
    sch.reverse_compute_at("C_writeback", j0)
    sch.decompose_reduction("C", r)
    blk = None
    sch.tensorize(sch.get_loops("C")[3], "cpu.fma_8x16")
    assert "tensorize" in sch.trace()
    assert "fma" in sch.mod.text.lower()
    assert sch.run("cpu", check=True)["checked"]
    b = sess.schedule("matmul", n=64, m=64, k=64)
    i, j, r = b.get_loops("C")
    b.tile(i, j, 8, 16)
    blk = b.blockize(b.get_loops("C")[2])
    assert blk.name == "C_o"
    assert b.run("cpu", check=True)["checked"]


def test_show_views_and_chart_save(mm, tmp_path):
    sch = mm.schedule("mm_relu", n=16)
    assert "void mm_relu" in sch.show("c").text
    assert "define" in sch.show("llvm").text
    assert "T.grid" in sch.show("tir-original").text
    with pytest.raises(StageError):
        sch.show("jpeg")
    assert repr(sch) == "<Schedule mm_relu(n=16): 0 steps>"
    png = descent.bench("vm", repeats=1, engines=["reg"], workloads=["b1_fib"]).chart
    path = tmp_path / "c.png"
    png.save(str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert isinstance(png, Chart) and "PNG" in repr(png)


def test_selected_kernel_and_schedule_names(mm):
    sch = mm.schedule("mm_relu", n=32)
    name, dims = mm.selected_kernel()
    assert name == "mm_relu" and dims == {"n": 32}
    assert set(mm.schedule_names()) >= {"Y", "C", "k"}


def test_record_steps_the_vms(sess):
    sess.run("x = 3\nprint(x * 4 + 1)")
    stack = sess.record("stack")
    assert stack.output == "13\n" and not stack.truncated
    assert [r["line"] for r in stack][:2] == [1, 1]
    assert stack[-1]["instruction"].startswith("HALT")
    assert any(r["stack"] == "12" for r in stack)  # the product, on the operand stack
    reg = sess.record("reg")
    assert any(r["registers"] == "r0=13" for r in reg)
    assert "<table>" in reg._repr_html_()
    cut = sess.record("stack", max_steps=3)
    assert len(cut) == 3 and cut.truncated
    with pytest.raises(StageError, match="only the stack and reg VMs"):
        sess.record("ast")


def test_live_ranges(sess):
    sess.registers = 3
    sess.run("fn f(a, b) { return a * b + a }\nprint(f(2, 3))")
    ranges = sess.live_ranges("f")
    assert ranges and all(r["function"] == "f" for r in ranges)
    assert ranges[0]["value"] == "v0 a" and ranges[0]["location"] == "r0"
    assert all(r["start"] <= r["end"] for r in ranges)
    assert "3 registers" in ranges.title
