"""OpenCL streams: independent launch-graph chains on separate in-order queues, ordered by
events, with the default queue's transfers joined before and after them (PoCL in CI)."""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy import lax

pytestmark = pytest.mark.opencl
N = 256


def _chains(a, b):
    u = lax.fori_loop(0, 3, lambda i, x: x * 1.5 + 1.0, a * 2.0)  # chain 1: a loop node
    v = anp.sort(b) + 1.0  # chain 2: the sort's launches
    return u + v, anp.sum(v)  # joins both streams: a cross-queue event


def test_independent_chains_run_on_two_queues_and_match_one_queue(ocl):
    assert "streams" in ocl.capabilities().features
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    jf = accy.jit(_chains, backend="opencl")
    exe = jf.compile(a, b)
    plan = exe._stream_plan()
    assert plan is not None and plan.count >= 2 and any(plan.waits)
    with exe.prepare(a, b) as inv:
        inv.submit()
        got = inv.read()
    ws = exe._res.pool[-1]  # the invocation's workspace, back in the pool
    assert len(ws.streams) == plan.count and all(s.launches for s in ws.streams)
    one = accy.compile(jf.lower(a, b), backend="opencl", use_cache=False)
    one.max_streams = 1  # its own executable: everything on one queue
    want = one(a, b)
    assert one._stream_plan().count == 1
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    u = a * 2.0
    for _ in range(3):
        u = u * np.float32(1.5) + np.float32(1.0)
    np.testing.assert_allclose(got[0], u + np.sort(b) + 1.0, rtol=1e-5, atol=1e-5)
    for _ in range(20):  # resubmits and updates: transfers ordered against every queue
        b2 = rng.standard_normal(N).astype(np.float32)
        with exe.prepare(a, b2) as inv:
            inv.submit()
            np.testing.assert_array_equal(inv.read()[0], one(a, b2)[0])
    exe.close()
    one.close()


def test_default_queue_transfers_are_ordered_against_stream_launches(ocl):
    """A fill after a stream launch waits for it (a marker of the stream), and a stream
    launch after a fill or copy waits for that (the transfer event)."""
    from accy.backend import Geometry
    from opencl_kernels import scale

    n = 1 << 20
    k = ocl.load(ocl.compile(scale()))
    geom = Geometry(n // 64, 64)
    pairs = [("i32", n), ("f64", 2.0), ("i32", 1), ("bool", False)]  # y = 2x + 1
    x, y, z = (ocl.allocate(4 * n) for _ in range(3))
    s1, s2 = ocl.create_stream(), ocl.create_stream()
    try:
        ocl.write(x, np.ones(n, np.float32))
        for _ in range(3):
            ocl.launch(k, geom, [y, x], pairs, stream=s1)  # y = 3
            ocl.fill(y, 0)  # after s1's launch: y = 0
            ocl.copy(y, z, 4 * n)  # z = 0
            ocl.launch(k, geom, [x, z], pairs, stream=s2)  # after the copy: x = 1
            got = ocl.read(x, np.empty(n, np.float32))
            np.testing.assert_array_equal(got, np.ones(n, np.float32))
            np.testing.assert_array_equal(ocl.read(y, np.empty(n, np.float32)), 0)
        assert s1.launches == 3 and s2.launches == 3
    finally:
        for b in (x, y, z):
            ocl.free(b)
        for obj in (s1, s2, k):
            ocl.destroy(obj)
