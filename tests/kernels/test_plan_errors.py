"""A mis-described launch is one clear InputError at the launch that is wrong: a kernel
declaring a written buffer after a read-only one made the executable treat the output as
never written (a raw KeyError, or a result that stayed zero)."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError
from accy.families import Plan
from accy.kernel import KernelBuilder


def _copy_kernel(read_first: bool):
    kb = KernelBuilder(f"plan_errors_copy_{read_first}", 64)
    if read_first:
        x, out = kb.buffer("x", "f32", "read"), kb.buffer("out", "f32", "write")
    else:
        out, x = kb.buffer("out", "f32", "write"), kb.buffer("x", "f32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(out, i, x[i])
    return kb.build()


def _plan():
    p = Plan("copy")
    return p, p.output("f32", 4), p.param(np.arange(4, dtype=np.float32), "f32")


def test_written_buffers_must_come_first():
    p, out, x = _plan()
    with pytest.raises(InputError, match="declare the buffers it writes"):
        p.launch(_copy_kernel(read_first=True), 1, [x, out], [("i32", 4)])


@pytest.mark.parametrize("slots, scalars, match", [
    (1, [("i32", 4)], "binds 1 slots to 2 buffers"),
    (2, [], "passes 0 scalars for 1"),
])
def test_slot_and_scalar_counts_must_match(slots, scalars, match):
    p, out, x = _plan()
    with pytest.raises(InputError, match=match):
        p.launch(_copy_kernel(read_first=False), 1, [out, x][:slots], scalars)


def test_a_correct_plan_runs(backend):
    p, out, x = _plan()
    p.launch(_copy_kernel(read_first=False), 1, [out, x], [("i32", 4)])
    np.testing.assert_array_equal(p.run(backend)[0], np.arange(4, dtype=np.float32))
