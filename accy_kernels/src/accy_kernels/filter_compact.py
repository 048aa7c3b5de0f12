"""``filter.compact``: stream compaction ``x[mask]`` with the order of ``x`` kept.

An exclusive prefix sum of the mask (``scan.reduce_then_scan``, counting in i32) gives each
kept element its output position and the total count; one work-item per element then writes
``out[pos[i]] = x[i]`` where ``mask[i]``. The output buffer holds ``n`` elements and the
count comes back with it; the host returns the first ``count`` (the data-dependent size is
resolved after the launches, no extra device round trip).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder

from accy_kernels._common import groups_for
from accy_kernels.scan_reduce_then_scan import add_scan

__all__ = ["compact_kernel", "run"]


@functools.cache
def compact_kernel(dtype: str, workgroup_size: int):
    """Buffers (out, x, mask: bool, pos: i32); scalar n (i32)."""
    kb = KernelBuilder(f"filter_compact_{dtype}_wg{workgroup_size}", workgroup_size)
    out = kb.buffer("out", dtype, "write")
    x, mask = kb.buffer("x", dtype, "read"), kb.buffer("mask", "bool", "read")
    pos = kb.buffer("pos", "i32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        with kb.if_(mask[i]):
            kb.store(out, pos[i], x[i])
    return kb.build()


def run(backend, candidate: Candidate, x: np.ndarray, mask: np.ndarray, dtype: str) -> np.ndarray:
    """Return the elements of 1-D ``x`` where 1-D bool ``mask`` is true, in order."""
    n = x.size
    wg = candidate.workgroup_size
    plan = Plan("filter.compact")
    out = plan.output(dtype, n)
    count = plan.output("i32", 1)
    xs = plan.param(x, dtype)
    ms = plan.param(mask, "bool")
    pos = plan.temp("i32", n)
    add_scan(plan, backend, ms, pos, n, "i32", inclusive=False, total=count)
    plan.launch(compact_kernel(dtype, wg), groups_for(n, wg), [out, xs, ms, pos], [("i32", n)])
    result, total = plan.run(backend)
    return result[: int(total[0])].copy()
