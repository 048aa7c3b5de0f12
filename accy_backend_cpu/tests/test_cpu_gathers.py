"""Kernels whose loops index memory non-contiguously across work-items keep their work-item
loops scalar (accy.codegen.gathers), and still compute the same results."""

from __future__ import annotations

import numpy as np
import pytest
from accy.codegen import emit_llvm_ir
from accy.codegen.gathers import gathering_loops
from accy.kernel import KernelBuilder

MARK = '!"llvm.loop.vectorize.enable", i1 false'


def reduce_kernel(kind: str, ws: int = 64):
    """out[o] = sum_r x[index(o, r)] * y[r]: rows of 16 (``row``: stride 16 per work-item;
    ``div``: the generic reduction's div/rem form) or a column sum (``col``: contiguous)."""
    kb = KernelBuilder(f"red_{kind}", ws)
    out = kb.buffer("out", "f32", "write")
    x, y = kb.buffer("x", "f32", "read"), kb.buffer("y", "f32", "read")
    o = kb.let("o", kb.global_id())
    acc = kb.let("acc", 0.0)
    with kb.for_("r", 0, 16) as r:
        if kind == "row":
            index = o * 16 + r
        elif kind == "div":
            index = r + (o // 4) * 64 + (o % 4) * 16
        else:
            index = r * 256 + o
        kb.assign(acc, acc + x[index] * y[r])
    kb.store(out, o, acc)
    return kb.build()


def test_strides_decide_which_kernels_stay_scalar():
    assert gathering_loops(reduce_kernel("row"))
    assert gathering_loops(reduce_kernel("div"))
    assert not gathering_loops(reduce_kernel("col"))
    kb = KernelBuilder("map_div", 64)  # no loop: the work-item loop vectorizes as before
    o, x = kb.buffer("o", "f32", "write"), kb.buffer("x", "f32", "read")
    i = kb.global_id()
    kb.store(o, i, x[(i % 4) * 64 + i // 4])
    assert not gathering_loops(kb.build())


@pytest.mark.parametrize("kind, ws", [("row", 64), ("div", 64), ("col", 64), ("row", 1)])
def test_scalar_work_item_loops_compute_the_same(cpu, run_kernel, kind, ws):
    kernel = reduce_kernel(kind, ws)
    text = emit_llvm_ir(kernel, cpu.target)
    assert (MARK in text) == (kind != "col")
    assert text.count("!llvm.loop !") == (0 if kind == "col" else 2)  # local-id, work-group
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4096).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    o = np.arange(256)
    r = np.arange(16)[None, :]
    index = {"row": o[:, None] * 16 + r,
             "div": r + (o[:, None] // 4) * 64 + (o[:, None] % 4) * 16,
             "col": r * 256 + o[:, None]}[kind]
    want = (x[index] * y[None, :]).sum(axis=1)
    got, _, _ = run_kernel(cpu, kernel, 256 // ws, [np.zeros(256, np.float32), x, y], [])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
