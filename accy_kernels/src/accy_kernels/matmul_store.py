"""Storing one accumulator of a ``matmul`` kernel: bounds, accumulation and the fused
epilogue (shared by every variant and by split-K's sum)."""

from __future__ import annotations

from accy.kernel import KernelBuilder, call

from accy_kernels.matmul_problem import Epilogue

__all__ = ["store_element"]


def store_element(kb: KernelBuilder, c, epilogue: Epilogue, acc, b, i, j, m, n, cond,
                  lane=None, row=None, accumulate: bool = False, inside: bool = False) -> None:
    """``if cond: C[b, i, j] = epilogue(acc)`` (row-major ``(batch, m, n)``; ``cond``
    None: in bounds, stored unconditionally; ``lane``: the column is ``j + lane``; ``row``:
    ``(b*m + i) * n`` precomputed, i64; ``accumulate``: add ``C``'s value first, read at
    the clamped position when ``cond`` is given, host targets only).

    The address and the stored value are computed before the branch (the epilogue at
    ``(min(i, m-1), min(j, n-1))`` so that its loads stay in bounds), leaving only the
    store inside it: LLVM's SPIR-V backend misplaces instructions of a branch's body that
    end up in its header (after ``OpSelectionMerge``), which spirv-val rejects. ``inside``
    (host targets): everything inside the branch, unclamped, so that no index is a
    ``min`` (:func:`accy.codegen.gathers.gathering_loops` turns the vectorizer off for a
    kernel with such an index inside a loop).
    """
    if lane is None:
        idx = kb.let(kb.fresh("mm_c"), (b * m + i) * n + j)
    else:  # 64-bit, uniform part + lane: consecutive lanes are consecutive addresses
        row = (b * m + i).cast("i64") * n.cast("i64") if row is None else row
        idx = kb.let(kb.fresh("mm_c"), row + j.cast("i64") + lane.cast("i64"))
        j = j + lane
    if inside and cond is not None:
        with kb.if_(cond):
            if accumulate:
                acc = kb.let(kb.fresh("mm_s"), acc + c[idx])
            stmts, value = epilogue.apply(acc.expr, b.expr, i.expr, j.expr)
            for s in stmts:
                kb._emit(s)
            kb.store(c, idx, value)
        return
    if (epilogue.fn is not None or accumulate) and cond is not None:
        i, j = call("min", i, m - 1), call("min", j, n - 1)
    if accumulate:
        at = idx if cond is None else kb.let(kb.fresh("mm_cl"), (b * m + i).cast("i64")
                                             * n.cast("i64") + j.cast("i64"))
        acc = kb.let(kb.fresh("mm_s"), acc + c[at])
    stmts, value = epilogue.apply(acc.expr, b.expr, i.expr, j.expr)
    for s in stmts:
        kb._emit(s)
    if cond is None:  # known in bounds
        kb.store(c, idx, value)
        return
    val = kb.let(kb.fresh("mm_v"), value) if epilogue.fn is not None else acc
    with kb.if_(cond):
        kb.store(c, idx, val)
