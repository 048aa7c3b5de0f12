"""Launch-graph dependency edges, stream plans, prepared invocations and resource release,
on the recording backend (no device)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from accy.backend import RecordingBackend
from accy.errors import BackendError, InputError
from accy.ir import TensorType
from accy.runtime import (
    Edge,
    Executable,
    GraphLaunch,
    LaunchGraph,
    dependency_graph,
    load_all,
    plan_streams,
)

N = 64


def _sum_kernel(name: str, inputs: int):
    """``y[i] = x0[i] + ... + x{inputs-1}[i]`` for ``i < n`` (f32)."""
    from accy.kernel import KernelBuilder

    kb = KernelBuilder(name, 64)
    y = kb.buffer("y", "f32", "write")
    xs = [kb.buffer(f"x{k}", "f32", "read") for k in range(inputs)]
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        v = xs[0][i]
        for x in xs[1:]:
            v = v + x[i]
        kb.store(y, i, v)
    return kb.build()


def _diamond() -> LaunchGraph:
    """A: s1 = x; B: s2 = x; C: s3 = s1 + s2; D: s1 = s3 (result s1 = 2x, s3 = 2x).

    A and B are independent; C needs both (RAW); D reads what C wrote (RAW), overwrites
    what C read (WAR) and what A wrote (WAW)."""
    t = TensorType("f32", (N,))
    g = LaunchGraph(slot_bytes=[4 * N] * 4, param_slots=[0], param_types=[t],
                    result_slots=[1, 3], result_types=[t, t], name="diamond")
    g.kernels = {"copy": _sum_kernel("copy", 1), "add2": _sum_kernel("add2", 2)}
    n = (("i32", N),)
    g.launches = [GraphLaunch("copy", 1, 64, (1, 0), n), GraphLaunch("copy", 1, 64, (2, 0), n),
                  GraphLaunch("add2", 1, 64, (3, 1, 2), n), GraphLaunch("copy", 1, 64, (1, 3), n)]
    return g


def _executable(be: RecordingBackend, graph: LaunchGraph | None = None) -> Executable:
    g = graph or _diamond()
    arts = {name: be.compile(k) for name, k in g.kernels.items()}
    return Executable(be, g, load_all(be, arts), loader=lambda: load_all(be, arts),
                      owns_kernels=True)


def test_edges_are_raw_war_waw_and_program_order_is_topological():
    deps = dependency_graph(_diamond())
    assert set(deps.edges) == {Edge(0, 2, "RAW", 1), Edge(1, 2, "RAW", 2),
                               Edge(2, 3, "RAW", 3), Edge(2, 3, "WAR", 1),
                               Edge(0, 3, "WAW", 1)}
    assert deps.predecessors(2) == (0, 1) and deps.predecessors(1) == ()
    assert deps.topological_order() == [0, 1, 2, 3]
    assert deps.reads[2] == {1, 2} and deps.writes[2] == {3}


def test_independent_launches_get_streams_and_events():
    plan = plan_streams(dependency_graph(_diamond()))
    assert plan.stream_of == (0, 1, 1, 1) and plan.count == 2
    assert plan.waits == ((), (), (0,), ())  # D's wait on A is covered by C's
    assert plan.signals == (True, False, False, False)
    assert plan_streams(dependency_graph(_diamond()), max_streams=1).stream_of == (0,) * 4
    with pytest.raises(InputError, match="max_streams"):
        plan_streams(dependency_graph(_diamond()), max_streams=0)


def test_loop_node_is_one_node_with_its_body():
    import accy
    from accy import lax

    def f(a):
        b = a * 2.0
        return lax.fori_loop(0, 3, lambda i, x: x + 1.0, b), a + 1.0

    jf = accy.jit(f, backend="recording")
    x = np.arange(N, dtype=np.float32)
    exe = jf.compile(x)
    deps = exe.dependencies
    assert ["loop" if hasattr(n, "body") else "launch" for n in deps.nodes] == [
        "launch", "loop", "launch"]
    assert deps.predecessors(1) == (0,) and deps.predecessors(2) == ()  # b feeds the loop
    assert exe.graph.loops[0].body.launches[0].slots[1] in deps.reads[1]  # body slots count
    assert deps.topological_order() == [0, 1, 2]
    exe.backend.log.clear()
    got = jf(x)
    streams = exe.backend.launch_streams()
    assert len({s for _, s in streams[:-1]}) == 1 != len({s for _, s in streams})
    np.testing.assert_allclose(got[0], 2 * x + 3)
    np.testing.assert_allclose(got[1], x + 1)


def test_two_invocations_overlap_and_equal_sequential_calls():
    be = RecordingBackend()
    exe = _executable(be)
    x1, x2 = np.arange(N, dtype=np.float32), np.full(N, 3.0, np.float32)
    want1, want2 = exe(x1), exe(x2)
    np.testing.assert_array_equal(want1[0], 2 * x1)
    inv1, inv2 = exe.prepare(x1), exe.prepare(x2)
    be.log.clear()
    h1, h2 = inv1.submit(), inv2.submit()
    names = [e[0] for e in be.log]
    assert names.count("launch") == 8 and "synchronize" not in names  # both in flight
    got1, got2 = h1.wait(), h2.wait()
    for got, want in ((got1, want1), (got2, want2)):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    streams = be.launch_streams()
    assert streams[0][1] != streams[1][1]  # A and B on different streams
    assert {s for _, s in streams[:4]}.isdisjoint({s for _, s in streams[4:]})
    first = be.launches()[2]  # C waits for A's event
    assert first[1] == "add2" and len(first[6]) == 1
    inv1.close()
    inv2.close()
    exe.close()


def test_invocation_update_resubmit_and_misuse():
    be = RecordingBackend()
    exe = _executable(be)
    x = np.arange(N, dtype=np.float32)
    with exe.prepare(x) as inv:
        with pytest.raises(InputError, match="read\\(\\) before submit"):
            inv.read()
        h = inv.submit()
        assert h.wait()[0][5] == 10.0 and h.done
        assert inv.read() is inv.read()
        inv.update(0, np.ones(N, np.float32))
        h2 = inv.submit()
        with pytest.raises(InputError, match="later submit"):
            h.wait()
        assert h2.wait()[0].tolist() == [2.0] * N
        with pytest.raises(InputError, match="expected shape"):
            inv.update(0, np.ones(3, np.float32))
        with pytest.raises(InputError, match="update index"):
            inv.update(1, x)
    with pytest.raises(InputError, match="closed"):
        inv.submit()
    with pytest.raises(InputError, match="expected 1 inputs"):
        exe.prepare()
    exe.close()


def test_close_and_garbage_collection_release_everything():
    be = RecordingBackend()
    before = be.live_objects()
    with _executable(be) as exe:
        exe(np.zeros(N, np.float32))
        assert be.live_objects()["kernels"] == 2
    assert be.live_objects() == before
    np.testing.assert_array_equal(exe(np.ones(N, np.float32))[0], 2.0)  # usable again
    inv = exe.prepare(np.ones(N, np.float32))
    inv.submit()  # in flight when the executable goes away
    del exe, inv
    gc.collect()
    assert be.live_objects() == before


def test_ten_thousand_cycles_leave_live_counts_unchanged():
    be = RecordingBackend(interpret=False)  # the count is about bookkeeping, not arithmetic
    exe = _executable(be)
    x = np.zeros(N, np.float32)
    exe.prepare(x).submit().wait()
    gc.collect()
    start = be.live_objects()
    for _ in range(10_000):
        inv = exe.prepare(x)
        inv.submit()
        inv.read()
        inv.close()
    assert be.live_objects() == start
    exe.close()
    assert be.live_objects() == {"kernels": 0, "buffers": 0, "streams": 0, "events": 0}


@pytest.mark.parametrize("k", [1, 2])
def test_failed_load_releases_the_kernels_loaded_before(k):
    be = RecordingBackend()
    g = _diamond()
    arts = {name: be.compile(kern) for name, kern in g.kernels.items()}
    be.inject_failure("load", k)
    with pytest.raises(BackendError, match="injected failure"):
        load_all(be, arts)
    assert be.live_objects()["kernels"] == 0


@pytest.mark.parametrize(("method", "k"), [("allocate", 1), ("allocate", 2), ("allocate", 4),
                                           ("write", 1), ("create_stream", 2),
                                           ("create_event", 1), ("launch", 3)])
def test_failure_in_prepare_or_submit_releases_what_was_acquired(method, k):
    be = RecordingBackend()
    exe = _executable(be)
    x = np.ones(N, np.float32)
    exe(x)
    held = exe.prepare(x)  # holds the pooled workspace: the next call builds its own
    baseline = be.live_objects()
    be.inject_failure(method, k)
    with pytest.raises(BackendError, match="injected failure"):
        exe(x)
    assert be.calls["injected_failure"] == 1
    assert be.live_objects() == baseline  # nothing half-acquired stays behind
    held.close()
    np.testing.assert_array_equal(exe(x)[0], 2.0)
    exe.close()
    assert be.live_objects() == {"kernels": 0, "buffers": 0, "streams": 0, "events": 0}


def test_failed_constant_upload_releases_the_constants_before():
    be = RecordingBackend()
    g = _diamond()
    g.constants = {2: np.zeros(N, np.float32), 3: np.zeros(N, np.float32)}
    for k in (1, 2):
        be.inject_failure("write", k)
        with pytest.raises(BackendError, match="injected failure"):
            _executable(be, g)
        gc.collect()
        assert be.live_objects()["buffers"] == 0


def test_inject_failure_checks_its_arguments():
    be = RecordingBackend()
    with pytest.raises(InputError, match="method must be one of"):
        be.inject_failure("read", 1)
    with pytest.raises(InputError, match="k must be"):
        be.inject_failure("load", -1)
    be.inject_failure("allocate", 1)
    be.inject_failure("allocate", 0)  # cancelled
    be.free(be.allocate(4))
