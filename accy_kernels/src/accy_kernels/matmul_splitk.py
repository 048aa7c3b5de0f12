"""Split-K for ``matmul.blocked``: products with few output tiles and a long ``k``.

When ``C`` has fewer ``MR x NR`` tiles than the host has threads to keep busy (e.g.
``64x65536 @ 65536x64`` on many cores, or a ``6x16`` output of a 10^6-long dot product),
parallelism over output tiles alone leaves threads idle. Split-K (as in CUTLASS's
"split-K serial/parallel" GEMMs) cuts ``k`` into ``S`` equal slices: one launch computes
every (slice, tile) pair into ``S`` partial products (a scratch ``S x m x n``), and a
second, elementwise launch sums the ``S`` partials in slice order and applies the epilogue.
Only single-batch products split (the batch index carries the slice).
"""

from __future__ import annotations

import functools

from accy.families import Candidate
from accy.kernel import KernelBuilder, call

from accy_kernels._common import ceil_div
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.matmul_store import store_element

__all__ = ["MIN_SLICE", "reduce_kernel", "splits_for"]

#: the shortest k-slice worth a split (the partial's store and reload cost ``m*n`` each)
MIN_SLICE = 1024
RED_WG = 64


def splits_for(prob: MatmulProblem, tiles: int, threads: int, candidate: Candidate) -> int:
    """Number of k-slices: the candidate's ``splits`` option, else enough for two tiles per
    thread, each slice at least :data:`MIN_SLICE` long; 1 (no split) for batched products,
    when the tiles already fill the threads, or ``k`` is short."""
    forced = int(candidate.option("splits", 0))
    if prob.batch != 1 or prob.k < 2:
        return 1
    if forced:
        return max(1, min(forced, prob.k))
    if tiles >= 2 * threads:
        return 1
    return max(1, min(ceil_div(2 * threads, max(tiles, 1)), prob.k // MIN_SLICE))


@functools.cache
def reduce_kernel(dtype: str, epilogue: Epilogue = NO_EPILOGUE):
    """``C[i, j] = epilogue(sum_s part[s, i, j])`` for ``s < splits``, in slice order.

    Buffers (c: write, part: read, *epilogue buffers); scalars m, n, splits (i32). One
    work-item per element of ``C`` (``RED_WG`` per group).
    """
    kb = KernelBuilder(f"matmul_splitk_sum_{dtype}{epilogue.tag()}", RED_WG)
    c = kb.buffer("c", epilogue.out_dtype or dtype, "write")
    part = kb.buffer("part", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, n, splits = kb.scalar("m", "i32"), kb.scalar("n", "i32"), kb.scalar("splits", "i32")
    g = kb.global_id()
    total = kb.let("sk_total", m.cast("i64") * n.cast("i64"))
    gc = kb.let("sk_gc", call("min", g.cast("i64"), total - 1))
    acc = kb.let("sk_acc", kb.const(0, dtype))
    with kb.for_("sk_s", 0, splits) as s:
        kb.assign(acc, acc + part[s.cast("i64") * total + gc])
    i = kb.let("sk_i", (gc / n.cast("i64")).cast("i32"))
    j = kb.let("sk_j", (gc % n.cast("i64")).cast("i32"))
    store_element(kb, c, epilogue, acc, i * 0, i, j, m, n, g.cast("i64") < total)
    return kb.build()

