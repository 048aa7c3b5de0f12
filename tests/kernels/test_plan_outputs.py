"""``Plan.output`` buffers start zeroed on every backend (issue 10): a family that
accumulates into its output (``out[i] += v``) gives the same answer everywhere, also when
the backend hands out a reused buffer that held other data."""

from __future__ import annotations

import numpy as np
import pytest
from accy.families import Plan
from accy.kernel import KernelBuilder


def _accumulate(dtype: str):
    kb = KernelBuilder(f"accumulate_{dtype}", 64)
    out = kb.buffer("out", dtype, "readwrite")
    n = kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < n):
        kb.store(out, g, out[g] + kb.const(3, dtype))
    return kb.build()


def _fill(dtype: str):
    kb = KernelBuilder(f"fill_garbage_{dtype}", 64)
    out = kb.buffer("out", dtype, "write")
    n = kb.scalar("n", "i32")
    g = kb.global_id()
    with kb.if_(g < n):
        kb.store(out, g, kb.const(77, dtype))
    return kb.build()


@pytest.mark.parametrize("dtype", ["i32", "f32"])
@pytest.mark.parametrize("n", [1, 1000, 1 << 18])
def test_outputs_start_zeroed(backend, dtype, n):
    for _ in range(2):  # a first plan leaves 77s in buffers a backend may hand out again
        garbage = Plan("garbage")
        o = garbage.output(dtype, n)
        garbage.launch(_fill(dtype), -(-n // 64), [o], [("i32", n)])
        assert (garbage.run(backend)[0] == 77).all()
        plan = Plan("accumulate")
        out = plan.output(dtype, n)
        plan.launch(_accumulate(dtype), -(-n // 64), [out], [("i32", n)])
        (got,) = plan.run(backend)
        np.testing.assert_array_equal(got, np.full(n, 3))


def test_unwritten_output_is_zero(backend):
    plan = Plan("nothing")
    out = plan.output("i32", 5)
    plan.launch(_fill("i32"), 0, [out], [("i32", 0)])
    np.testing.assert_array_equal(plan.run(backend)[0], np.zeros(5, np.int32))


def test_documented():
    from accy.families import runner

    assert "zeroed on every backend" in " ".join(Plan.output.__doc__.split())
    assert "zeroed on every backend" in " ".join(runner.__doc__.split())
