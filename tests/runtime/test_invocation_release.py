"""Prepared invocations and resource release on real backends: many prepare/submit/read
cycles leave the backend's live kernels, buffers, streams and events where they started,
and ``close()`` returns them to where they were before compiling.

300 cycles per backend (the recording backend runs 10,000 in
``accy_core/tests/runtime/test_invocation.py``) keep CI cheap: a leak of one object per
cycle shows as 300.
"""

from __future__ import annotations

import gc

import accy
import numpy as np
import pytest

from tests._backends import require_backend

CYCLES = 300

PROGRAM = """
module {
  func @two(%arg0: f32[64], %arg1: f32[64]) -> (f32[64], f32[]) {
    %0 = tensor.constant {value = dense<[2.5]>} : () -> f32[]
    %1 = tensor.broadcast_to %0 {shape = [64]} : (f32[]) -> f32[64]
    %2 = arith.mul %1, %arg0 : (f32[64], f32[64]) -> f32[64]
    %3 = arith.add %2, %arg1 : (f32[64], f32[64]) -> f32[64]
    %4 = reduce.sum %arg1 {axes = [0]} : (f32[64]) -> f32[]
    func.return %3, %4 : (f32[64], f32[]) -> ()
  }
}
"""


def _open(name: str):
    from accy.plugins import open_backend

    require_backend(name)
    return open_backend(name)


def _live(be) -> dict[str, int]:
    counts = dict(be.live_objects())
    counts["buffers"] -= counts.pop("free_buffers", 0)  # Vulkan keeps freed ones for reuse
    return {k: counts[k] for k in ("kernels", "buffers", "streams", "events")}


@pytest.mark.parametrize("name", ["cpu", pytest.param("vulkan", marks=pytest.mark.vulkan),
                                  pytest.param("opencl", marks=pytest.mark.opencl)])
def test_prepare_submit_read_cycles_and_close_release_everything(name):
    be = _open(name)
    gc.collect()
    before = _live(be)
    exe = accy.compile(accy.parse_module(PROGRAM), backend=name, use_cache=False)
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    want = exe(x, y)
    np.testing.assert_allclose(want[0], 2.5 * x + y)
    assert float(want[1]) == 64.0
    start = _live(be)
    assert start["kernels"] > before["kernels"]
    for i in range(CYCLES):
        inv = exe.prepare(x, y)
        inv.submit()
        got = inv.read()
        inv.close()
        if i == 0:
            np.testing.assert_array_equal(got[0], want[0])
    assert _live(be) == start
    a, b = exe.prepare(x, y), exe.prepare(y, x)  # two in flight, distinct buffers
    ha, hb = a.submit(), b.submit()
    np.testing.assert_allclose(hb.wait()[0], 2.5 * y + x)
    np.testing.assert_allclose(ha.wait()[0], want[0])
    a.close()
    b.close()
    exe.close()
    assert _live(be) == before
