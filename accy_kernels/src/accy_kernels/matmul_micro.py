"""The register tile of the host ``matmul`` kernels (:mod:`accy_kernels.matmul_blocked`,
:mod:`accy_kernels.matmul_sliver`): its inner loop over ``k`` and its store."""

from __future__ import annotations

from accy.kernel import KernelBuilder, fma

from accy_kernels.matmul_store import store_element

__all__ = ["microkernel", "store_tile"]


def microkernel(kb: KernelBuilder, acc, load_a, load_b, p_lo, p_hi, ku: int) -> None:
    """``acc[r][v] += A(p, r) * B(p, v)`` for ``p_lo <= p < p_hi``: the register-blocked
    inner loop (``ku`` steps unrolled, then single steps for the rest). ``load_a(p, r)``:
    the element of row ``r`` of the tile (uniform over the lanes); ``load_b(p, v)``: vector
    ``v`` of the tile's ``B`` row ``p`` at this work-item's lane. The ``p`` loop runs at
    work-group level (a barrier per step), so the loop over the lanes is innermost and
    vectorizes: per step ``NV`` vector loads, ``MR`` broadcasts and ``MR x NV`` FMAs."""
    mr, nv = len(acc), len(acc[0])

    def step(p, unroll: int, tag: str) -> None:
        for u in range(unroll):
            bv = [kb.let(f"mm_b{tag}{u}_{v}", load_b(p + u, v)) for v in range(nv)]
            for r in range(mr):
                a_r = kb.let(f"mm_a{tag}{u}_{r}", load_a(p + u, r))
                for v in range(nv):
                    kb.assign(acc[r][v], fma(a_r, bv[v], acc[r][v]))
        kb.barrier()

    kmain = kb.let("mm_kmain", p_lo + ((p_hi - p_lo) / ku) * ku)
    with kb.for_("mm_p", p_lo, kmain, ku) as p:
        step(p, ku, "m")
    if ku > 1:
        with kb.for_("mm_q", kmain, p_hi) as q:
            step(q, 1, "r")


def store_tile(kb, c, epilogue, acc, bt, i0, j0, m, n, lid, rows, lanes, split,
               accumulate=False, inside=False) -> None:
    """Store the tile. ``split``: whole tiles store without per-element bounds checks — the
    barriers make the branch a work-group-level one, each side its own work-item loop
    (host targets only: LLVM's SPIR-V backend misplaces the code SimplifyCFG hoists out of
    such a branch, after its ``OpSelectionMerge``). Whole tiles store one row per
    work-item loop (a barrier after each): with all ``MR`` rows in one loop, LLVM's loop
    vectorizer gave up on the dependences between stores ``n`` elements apart and the
    ``MR x NR`` stores (and the epilogue) ran scalar, through the stack; one row's ``NV``
    stores are a constant distance apart and vectorize. ``inside``: partial tiles compute
    each element inside its bounds check (see :func:`store_element`; host targets)."""
    mr, nv = len(acc), len(acc[0])

    def guarded() -> None:
        for r in range(mr):
            for v in range(nv):
                i, j = i0 + r, j0 + v * lanes
                store_element(kb, c, epilogue, acc[r][v], bt, i, j, m, n,
                              (i < m) & (j + lid < n), lid, rows[r], accumulate, inside)

    if not split:
        guarded()
        return
    with kb.if_((i0 + mr <= m) & (j0 + nv * lanes <= n)):
        for r in range(mr):
            for v in range(nv):
                store_element(kb, c, epilogue, acc[r][v], bt, i0 + r, j0 + v * lanes, m, n,
                              None, lid, rows[r], accumulate)
            kb.barrier()  # one row per work-item loop: see the docstring
    with kb.else_():
        guarded()
        kb.barrier()
