"""``matmul.tiled``: the GPU-style variant (work-group tiles through shared memory).

The classic shared-memory SGEMM schedule (Volkov & Demmel 2008; the design's thread-block
schedules): a work-group of ``TX x TY`` work-items computes a ``BM x BN`` tile of ``C``
(``BM = TY*RM``, ``BN = TX*RN``); for each ``BK``-deep slab of ``k`` it stages the
``BM x BK`` block of ``A`` and the ``BK x BN`` block of ``B`` in shared memory
(cooperative loads, neighbouring work-items read neighbouring addresses of the operand's
unit-stride axis, zero outside the matrix), waits at a barrier, and each work-item
accumulates its ``RM x RN`` register tile (rows ``ty + r*TY``, columns ``tx + c*TX``, so a
warp's shared reads are conflict-free broadcasts / consecutive words). Operands are read
through their strides (transposes and batch broadcast are free). The slab loop runs
``ceil(k / BK)`` times per work-item (kept under a target's loop-trip limit by the caller).
"""

from __future__ import annotations

import functools

from accy.families import Candidate
from accy.kernel import KernelBuilder, fma

from accy_kernels._common import ceil_div
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.matmul_store import store_element

__all__ = ["candidates", "plan_tiled", "tiled_kernel", "tile_fits"]


@functools.cache
def tiled_kernel(dtype: str, tx: int, ty: int, rm: int, rn: int, bk: int,
                 epilogue: Epilogue = NO_EPILOGUE):
    """Buffers (c: write, a, b, *epilogue buffers); scalars m, n, k, tiles_m, tiles_n (i32),
    a_off, sa_b, sa_i, sa_p, b_off, sb_b, sb_p, sb_j (i64, elements)."""
    ws, bm, bn = tx * ty, ty * rm, tx * rn
    out_dtype = epilogue.out_dtype or dtype
    name = f"matmul_tiled_{dtype}_{bm}x{bn}x{bk}_r{rm}x{rn}{epilogue.tag()}"
    kb = KernelBuilder(name, ws)
    c = kb.buffer("c", out_dtype, "write")
    a, b = kb.buffer("a", dtype, "read"), kb.buffer("b", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, n, k = kb.scalar("m", "i32"), kb.scalar("n", "i32"), kb.scalar("k", "i32")
    tm, tn = kb.scalar("tiles_m", "i32"), kb.scalar("tiles_n", "i32")
    a_off, sab, sai, sap = (kb.scalar(s, "i64") for s in ("a_off", "sa_b", "sa_i", "sa_p"))
    b_off, sbb, sbp, sbj = (kb.scalar(s, "i64") for s in ("b_off", "sb_b", "sb_p", "sb_j"))
    sa, sb = kb.shared("as", dtype, bk * bm), kb.shared("bs", dtype, bk * bn)
    g, lid = kb.group_id(), kb.local_id()
    per = kb.let("mm_per", tm * tn)
    bt = kb.let("mm_b", g / per)
    rem = kb.let("mm_rem", g % per)
    i0, j0 = kb.let("mm_i0", (rem / tn) * bm), kb.let("mm_j0", (rem % tn) * bn)
    txi, tyi = kb.let("mm_tx", lid % tx), kb.let("mm_ty", lid / tx)
    abase = kb.let("mm_abase", a_off + bt.cast("i64") * sab)
    bbase = kb.let("mm_bbase", b_off + bt.cast("i64") * sbb)
    zero = kb.const(0, dtype)
    acc = [[kb.let(f"mm_acc{r}_{q}", zero) for q in range(rn)] for r in range(rm)]
    with kb.for_("mm_k0", 0, k, bk) as k0:
        for q in range(bm * bk // ws):  # A block: consecutive work-items along p
            e = lid + q * ws
            kk, row = e % bk, e / bk
            i, p = i0 + row, k0 + kk
            with kb.if_((i < m) & (p < k)):
                kb.shared_store(sa, kk * bm + row,
                                a[abase + i.cast("i64") * sai + p.cast("i64") * sap])
            with kb.else_():
                kb.shared_store(sa, kk * bm + row, zero)
        for q in range(bn * bk // ws):  # B block: consecutive work-items along j
            e = lid + q * ws
            kk, col = e / bn, e % bn
            j, p = j0 + col, k0 + kk
            with kb.if_((j < n) & (p < k)):
                kb.shared_store(sb, kk * bn + col,
                                b[bbase + p.cast("i64") * sbp + j.cast("i64") * sbj])
            with kb.else_():
                kb.shared_store(sb, kk * bn + col, zero)
        kb.barrier()
        for kk in range(bk):
            av = [kb.let(f"mm_a{kk}_{r}", sa[tyi + (kk * bm + r * ty)]) for r in range(rm)]
            bv = [kb.let(f"mm_bv{kk}_{q}", sb[txi + (kk * bn + q * tx)]) for q in range(rn)]
            for r in range(rm):
                for q in range(rn):
                    kb.assign(acc[r][q], fma(av[r], bv[q], acc[r][q]))
        kb.barrier()
    for r in range(rm):
        for q in range(rn):
            i, j = i0 + tyi + r * ty, j0 + txi + q * tx
            store_element(kb, c, epilogue, acc[r][q], bt, i, j, m, n, (i < m) & (j < n))
    return kb.build()


#: (tx, ty, rm, rn, bk): 64x64 tiles of 4x4, 32x32 of 2x2, 64x64 of 8x8 (64 work-items)
SHAPES = ((16, 16, 4, 4, 16), (16, 16, 2, 2, 16), (8, 8, 8, 8, 8), (8, 8, 4, 4, 16))


def candidates() -> tuple[Candidate, ...]:
    return tuple(Candidate(tx * ty, 1, (("bk", bk), ("rm", rm), ("rn", rn), ("tx", tx),
                                        ("ty", ty)))
                 for tx, ty, rm, rn, bk in SHAPES)


def tile_fits(candidate: Candidate, itemsize: int, caps) -> bool:
    """Whether ``candidate`` fits the device's work-group size and shared memory."""
    tx, ty, rm, rn, bk = (int(candidate.option(o)) for o in ("tx", "ty", "rm", "rn", "bk"))
    shared = (ty * rm + tx * rn) * bk * itemsize
    return tx * ty <= caps.max_workgroup_size and shared <= caps.shared_memory_bytes


def plan_tiled(plan, backend, prob: MatmulProblem, a, b, out, candidate: Candidate,
               epilogue: Epilogue = NO_EPILOGUE, extra=()) -> None:
    """Append the tile launch of ``prob`` (one work-group per ``BM x BN`` tile)."""
    tx, ty, rm, rn, bk = (int(candidate.option(o, d)) for o, d in
                          (("tx", 16), ("ty", 16), ("rm", 4), ("rn", 4), ("bk", 16)))
    tm, tn = ceil_div(prob.m, ty * rm), ceil_div(prob.n, tx * rn)
    kernel = tiled_kernel(prob.dtype, tx, ty, rm, rn, bk, epilogue)
    plan.launch(kernel, prob.batch * tm * tn, [out, a, b, *extra],
                [("i32", prob.m), ("i32", prob.n), ("i32", prob.k), ("i32", tm), ("i32", tn),
                 ("i64", prob.a_offset), *(("i64", s) for s in prob.a_strides),
                 ("i64", prob.b_offset), *(("i64", s) for s in prob.b_strides)])
