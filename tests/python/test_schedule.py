# Schedules the TVM way: handles, every primitive, trace/undo/redo, refusals with the REPL's
# message, and every scheduled kernel checked against the reference interpreter.
import subprocess

import numpy as np
import pytest

import descent
from conftest import BUILD, MM_RELU
from descent import LoopRV, ScheduleError


def test_get_loops_split_reorder_trace(mm):
    sch = mm.schedule("mm_relu", n=128, m=128, k=128)
    i, j, k = sch.get_loops("Y")
    assert all(isinstance(l, LoopRV) for l in (i, j, k))
    # Both nests have i and j: steps name them by block where the bare name is ambiguous.
    assert [l.name for l in (i, j, k)] == ["Y.i", "Y.j", "k"]
    i0, i1 = sch.split(i, 4)
    assert (i0.name, i1.name) == ("i_0", "i_1")
    sch.reorder(i0, j, i1, k)
    assert sch.trace() == "split Y.i 4\nreorder i_0 Y.j i_1 k\n"
    assert [l.name for l in sch.get_loops("Y")] == ["i_0", "Y.j", "i_1", "k"]
    mod = sch.mod
    assert "T.grid(32, 128, 4, 128)" in mod.text
    assert "@T.prim_func" in mod.text
    assert "<span" in mod._repr_html_()
    r = sch.run("cpu", check=True)
    assert r["checked"] and r["shape"] == (128, 128)
    assert sch.time("cpu", repeats=3) > 0


def test_split_with_tvm_factors_and_undo_redo(mm):
    sch = mm.schedule("mm_relu", n=64)
    (k,) = [l for l in sch.get_loops("Y") if l.name == "k"]
    ko, ki = sch.split(k, factors=[None, 8])
    assert (ko.name, ki.name) == ("k_0", "k_1")
    sch.unroll(ki)
    assert sch.trace().splitlines() == ["split k 8", "unroll k_1"]
    assert sch.undo() and sch.trace() == "split k 8\n"
    assert sch.redo() and sch.trace().endswith("unroll k_1\n")
    assert sch.undo() and sch.undo() and not sch.undo()
    assert sch.trace() == ""


def test_refusals_raise_the_repls_message(mm, tmp_path):
    sch = mm.schedule("mm_relu", n=128)
    _, _, k = sch.get_loops("Y")
    with pytest.raises(ScheduleError) as info:
        sch.vectorize(k)
    message = str(info.value)
    assert "cannot vectorize 'k'" in message
    assert sch.trace() == ""  # a refused step changes nothing
    with pytest.raises(ScheduleError) as unknown:
        sch.get_loops("Z")
    assert "no block 'Z'" in str(unknown.value) and "Y" in str(unknown.value)
    # The REPL prints exactly the same words for the same step.
    src = tmp_path / "mm.ds"
    src.write_text(MM_RELU)
    repl = subprocess.run([str(BUILD / "descent")],
                          input=MM_RELU + ":kernel mm_relu n=128\n:sched vectorize k\n",
                          capture_output=True, text=True, timeout=120)
    assert "error: " + message in repl.stdout + repl.stderr


def test_compute_at_cache_write_and_blocks(mm):
    sch = mm.schedule("mm_relu", n=64, m=64, k=64)
    y = sch.get_block("Y")
    assert y.name == "Y"
    i, j = sch.get_loops("C")
    i0, j0, i1, j1 = sch.tile(i, j, 8, 8)
    assert [l.name for l in (i0, j0, i1, j1)] == ["i_0", "j_0", "i_1", "j_1"]
    sch.compute_at(y, j0)
    assert sch.run("cpu", check=True)["checked"]
    sch2 = mm.schedule("mm_relu", n=64, m=64, k=64)
    wb = sch2.cache_write("Y", "local")
    assert wb is not None and wb.name == "Y_writeback"
    assert sch2.run("cpu", check=True)["checked"]
    with pytest.raises(ScheduleError):
        sch.get_block("nope")


def test_rfactor_parallel_vectorize_fuse(sess):
    sess.run("kernel total(x: f32[n, m]) -> f32[n] {\n  S[i] = sum(j) x[i, j]\n  return S\n}")
    sch = sess.schedule("total", n=32, m=256)
    i, j = sch.get_loops("S")
    j0, j1 = sch.split(j, 16)
    rf = sch.rfactor("S", j1)
    assert rf.name == "S_rf"
    assert sch.run("cpu", check=True)["checked"]
    sch2 = sess.schedule("total", n=32, m=256)
    i, j = sch2.get_loops("S")
    sch2.parallel(i)
    fused = sess.schedule("total", n=8, m=8)
    ij = fused.fuse(*fused.get_loops("S"))
    assert ij.name == "i_j_fused" and fused.trace() == "fuse i j\n"
    assert fused.run("cpu", check=True)["checked"]
    with pytest.raises(ScheduleError):  # a reduction's loop cannot run in parallel
        fused.parallel(ij)


def test_schedules_side_by_side_keep_their_own_steps(mm):
    a = mm.schedule("mm_relu", n=64)
    b = mm.schedule("mm_relu", n=64)
    ia = a.get_loops("Y")[0]
    a.split(ia, 8)
    kb = b.get_loops("Y")[2]
    b.split(kb, 4)
    assert a.trace() == "split Y.i 8\n"
    assert b.trace() == "split k 4\n"
    a.unroll(a.get_loops("Y")[1])
    assert a.trace() == "split Y.i 8\nunroll i_1\n"
    assert b.trace() == "split k 4\n"
    assert "for i_1 in T.unroll(8)" in a.mod.text and "k_0" in b.mod.text


def test_the_schedule_applies_when_the_kernel_is_called(mm):
    sch = mm.schedule("mm_relu", n=32, m=32, k=32)
    i, j, k = sch.get_loops("Y")
    sch.split(j, 8)
    a = np.random.default_rng(1).uniform(-1, 1, (32, 32)).astype(np.float32)
    b = np.random.default_rng(2).uniform(-1, 1, (32, 32)).astype(np.float32)
    out = mm.call("mm_relu", a, b, device="cpu")
    np.testing.assert_allclose(np.asarray(out), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)
    graph = mm.graph("executed")
    assert "mm_relu" in graph.text


@pytest.mark.parametrize("seed", range(6))
def test_seeded_random_schedules_match_the_reference(mm, seed):
    # Random legal step sequences, each checked on cpu against the reference interpreter.
    rng = np.random.default_rng(seed)
    sch = mm.schedule("mm_relu", n=int(rng.integers(8, 70)), m=int(rng.integers(8, 70)),
                      k=int(rng.integers(8, 70)))
    for _ in range(4):
        loops = sch.get_loops(rng.choice(["Y", "C"]))
        loop = loops[int(rng.integers(len(loops)))]
        op = rng.choice(["split", "unroll", "parallel", "vectorize"])
        try:
            if op == "split":
                sch.split(loop, int(rng.choice([2, 3, 4, 8])))
            else:
                getattr(sch, op)(loop)
        except ScheduleError:
            pass  # refused: nothing changed
    assert sch.run("cpu", check=True, seed=seed)["checked"], sch.trace()


def test_bad_schedule_requests(mm):
    with pytest.raises(ScheduleError, match="no kernel named"):
        mm.schedule("mm_relux")
    with pytest.raises(ScheduleError, match="has no dim 'q'"):
        mm.schedule("mm_relu", q=3)
    sch = mm.schedule("mm_relu", n=16)
    with pytest.raises(ScheduleError):
        sch.split(sch.get_loops("Y")[0])
    with pytest.raises(TypeError):
        sch.vectorize(3.5)
    with pytest.raises(descent.DeviceError):
        sch.run("abacus")


def test_two_schedules_side_by_side_are_objects_not_replays(mm):
    # Each Schedule is the Session's object: stepping one never touches the other, and no
    # step is replayed or names compared (the Session says what a step made).
    a = mm.schedule("mm_relu", n=64, m=64, k=64)
    b = mm.schedule("mm_relu", n=128, m=16, k=32)
    assert not hasattr(a, "_activate") and not hasattr(a, "_new_names")
    ai, aj, ak = a.get_loops("Y")
    bi, bj, bk = b.get_loops("Y")
    a0, a1 = a.split(ai, 4)
    b0, b1 = b.split(bj, 8)
    assert (a0.name, a1.name, b0.name, b1.name) == ("i_0", "i_1", "j_0", "j_1")
    a.reorder(a0, aj, a1, ak)
    assert a.trace() == "split Y.i 4\nreorder i_0 Y.j i_1 k\n"
    assert b.trace() == "split Y.j 8\n"
    assert "T.grid(16, 64, 4, 64)" in a.mod.text
    assert "T.grid(128, 2, 8, 32)" in b.mod.text
    assert a.run("cpu", check=True)["shape"] == (64, 64)
    assert b.run("ref", check=True)["shape"] == (128, 16)
    # The Session lists both; the one stepped last (a) is what the program's calls use.
    listed = {s["id"]: s for s in mm.open_schedules()}
    assert listed[a._id]["steps"] == 2 and listed[a._id]["installed"]
    assert listed[b._id]["steps"] == 1 and not listed[b._id]["installed"]
    b.install()
    assert {s["id"]: s["installed"] for s in mm.open_schedules()} == {a._id: False, b._id: True}
    # Blocks a step made come from the step itself.
    rf = b.rfactor(b.get_block("Y"), b.get_loops("Y")[-1])
    assert rf.name == "Y_rf"
    assert b.undo() and b.trace() == "split Y.j 8\n"
    assert a.trace() == "split Y.i 4\nreorder i_0 Y.j i_1 k\n"
    gone = b._id
    b.close()
    assert gone not in {s["id"] for s in mm.open_schedules()}
    with pytest.raises(ScheduleError, match="was closed"):
        b.split(b0, 2)
    with pytest.raises(ScheduleError, match="was closed"):
        b.trace()
    assert repr(b) == "<Schedule mm_relu(k=32, m=16, n=128): closed>"
    # A Schedule nobody holds any more (nor any of its handles) frees its object.
    c = mm.schedule("mm_relu", n=8)
    freed = c._id
    del c
    assert freed not in {s["id"] for s in mm.open_schedules()}
