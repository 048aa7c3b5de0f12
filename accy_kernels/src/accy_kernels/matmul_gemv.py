"""``matmul.gemv``: matrix-vector products (``n == 1``, or ``m == 1`` through ``C^T``).

``y[b, i] = sum_p A[b, i, p] * x[b, p]`` is bound by reading ``A`` once, so the schedule
is about streaming ``A`` at memory bandwidth:

- ``rows`` form (``A``'s ``p`` stride is 1, the row-major case): one work-group per block
  of ``R`` rows; its ``W`` work-items read ``W`` consecutive elements of each row per step
  (coalesced on GPUs; on the CPU the work-item loop is innermost and vectorizes, the step
  loop running at work-group level behind a barrier), keeping ``R`` partial sums each; the
  ``W`` partials of a row are then summed in order through shared memory.
- ``cols`` form (``A``'s ``i`` stride is 1, e.g. ``x @ W`` or ``A.T @ x``): work-item
  ``lid`` of block ``blk`` owns row ``blk*W + lid`` and walks ``p`` (the step loop at
  work-group level again, so consecutive rows vectorize); no reduction. The last block is
  shifted back to end at row ``m`` (rows computed twice are written with equal values).
  On the CPU each work-item owns up to 4 rows ``blk*4W + lid + c*W``, so that a block
  reads 256-byte runs of each ``p`` (see :func:`cols_kernel`).
"""

from __future__ import annotations

import functools

from accy.families import Candidate
from accy.kernel import KernelBuilder, call, fma, where

from accy_kernels._common import ceil_div
from accy_kernels.matmul_host import simd_lanes, spread
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.matmul_store import store_element

__all__ = ["candidates", "gemv_form", "plan_gemv", "rows_kernel", "cols_kernel"]


def _common(kb: KernelBuilder, dtype: str, epilogue: Epilogue):
    c = kb.buffer("c", epilogue.out_dtype or dtype, "write")
    a, x = kb.buffer("a", dtype, "read"), kb.buffer("x", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, k, blocks = kb.scalar("m", "i32"), kb.scalar("k", "i32"), kb.scalar("blocks", "i32")
    a_off, sab, sa = (kb.scalar(s, "i64") for s in ("a_off", "sa_b", "sa_other"))
    x_off, sxb, sxp = (kb.scalar(s, "i64") for s in ("x_off", "sx_b", "sx_p"))
    stride = kb.scalar("stride", "i32")
    g = kb.let("mm_g", kb.group_id() / stride)
    active = kb.let("mm_active", kb.group_id() % stride == 0)
    return c, a, x, m, k, blocks, a_off, sab, sa, x_off, sxb, sxp, g, active


def _coords(swap: bool, bt, row):
    zero = row * 0
    return (bt, zero, row) if swap else (bt, row, zero)


@functools.cache
def rows_kernel(dtype: str, w: int, r_rows: int, swap: bool, epilogue: Epilogue = NO_EPILOGUE,
                x_unit: bool = True):
    """Rows form. Buffers (c: write, a, x, *epilogue); scalars m, k, blocks (i32), a_off,
    sa_b, sa_i, x_off, sx_b, sx_p (i64), stride (i32: group ``g`` computes block
    ``g / stride`` when ``g % stride == 0`` and idles otherwise, without a branch around its
    barriers, which PoCL miscompiles; see :func:`accy_kernels.matmul_blocked.spread`).
    ``swap``: output row ``i`` is ``C[b, 0, i]``.
    ``x_unit``: ``x`` has unit stride (``sx_p`` ignored), so its loads vectorize without a
    run-time stride check (which keeps the partial sums out of registers)."""
    name = (f"matmul_gemv_rows_{dtype}_w{w}_r{r_rows}{'_t' if swap else ''}"
            f"{'' if x_unit else '_xs'}{epilogue.tag()}")
    kb = KernelBuilder(name, w)
    c, a, x, m, k, blocks, a_off, sab, sai, x_off, sxb, sxp, g, active = _common(kb, dtype,
                                                                                epilogue)
    if x_unit:
        sxp = kb.const(1, "i64")
    part = kb.shared("part", dtype, w * r_rows)
    lid = kb.local_id()
    bt = kb.let("mm_b", g / blocks)
    i0 = kb.let("mm_i0", (g % blocks) * r_rows)
    xbase = kb.let("mm_xbase", x_off + bt.cast("i64") * sxb)
    rows = [kb.let(f"mm_row{r}", a_off + bt.cast("i64") * sab
                   + call("min", i0 + r, m - 1).cast("i64") * sai) for r in range(r_rows)]
    zero = kb.const(0, dtype)
    acc = [kb.let(f"mm_acc{r}", zero) for r in range(r_rows)]
    kfull = kb.let("mm_kfull", where(active, (k / w) * w, 0))
    with kb.for_("mm_p0", 0, kfull, w) as p0:
        p = (p0 + lid).cast("i64")
        xv = kb.let("mm_x", x[xbase + p * sxp])
        for r in range(r_rows):
            kb.assign(acc[r], fma(a[rows[r] + p], xv, acc[r]))
        kb.barrier()
    pt = kfull + lid
    with kb.if_(active & (pt < k)):
        xt = kb.let("mm_xt", x[xbase + pt.cast("i64") * sxp])
        for r in range(r_rows):
            kb.assign(acc[r], fma(a[rows[r] + pt.cast("i64")], xt, acc[r]))
    for r in range(r_rows):
        kb.shared_store(part, lid + r * w, acc[r])
    kb.barrier()
    with kb.if_(active & (lid < r_rows)):
        s = kb.let("mm_sum", zero)
        with kb.for_("mm_q", 0, w) as q:
            kb.assign(s, s + part[lid * w + q])
        i = i0 + lid
        b_, i_, j_ = _coords(swap, bt, i)
        store_element(kb, c, epilogue, s, b_, i_, j_, *((1, m) if swap else (m, 1)), i < m)
    return kb.build()


@functools.cache
def cols_kernel(dtype: str, w: int, ku: int, swap: bool, small: bool,
                epilogue: Epilogue = NO_EPILOGUE, cpw: int = 1):
    """Cols form. Same buffers and scalars as :func:`rows_kernel` with ``sa_p`` for the
    third ``A`` stride (``A``'s ``i`` stride is 1). ``small``: ``m < w`` (loads clamped).
    ``cpw``: rows per work-item (``lid + c*w``, ``c < cpw``; a block is ``w * cpw`` rows,
    the last one shifted back to end at ``m``, so ``m >= w * cpw`` unless ``small`` with
    ``cpw`` 1): each step of ``p`` reads a ``4 * w * cpw``-byte run of ``A``'s row ``p``
    with ``cpw`` independent sums per work-item. On the CPU, ``x @ W`` for one row ``x``
    and a 1024^2 f32 ``W`` read 64 bytes of each 4 KiB-strided row per block with ``cpw``
    1 (two lines each for a numpy array, 16 bytes past one) and took 0.59 ms; ``cpw`` 2, 4,
    8, 16: 0.36, 0.15, 0.17, 0.15 ms (numpy 0.10; one thread, load 5, ``W`` in L3)."""
    name = (f"matmul_gemv_cols_{dtype}_w{w}_ku{ku}{'_t' if swap else ''}"
            f"{'_s' if small else ''}{f'_c{cpw}' if cpw > 1 else ''}{epilogue.tag()}")
    kb = KernelBuilder(name, w)
    c, a, x, m, k, blocks, a_off, sab, sap, x_off, sxb, sxp, g, active = _common(kb, dtype,
                                                                                epilogue)
    lid = kb.local_id()
    bw = w * cpw
    bt = kb.let("mm_b", g / blocks)
    start = (g % blocks) * bw
    i0 = kb.let("mm_i0", start if small else call("min", start, m - bw))
    xbase = kb.let("mm_xbase", x_off + bt.cast("i64") * sxb)
    abase = kb.let("mm_abase", a_off + bt.cast("i64") * sab + i0.cast("i64"))
    rows = [kb.let("mm_rowc", call("min", lid, m - 1 - i0)) if small else lid + cc * w
            for cc in range(cpw)]
    accs = [kb.let(f"mm_acc{cc}" if cpw > 1 else "mm_acc", kb.const(0, dtype))
            for cc in range(cpw)]
    kfull = kb.let("mm_kfull", where(active, (k / ku) * ku, 0))
    kend = kb.let("mm_kend", where(active, k, 0))
    with kb.for_("mm_p", 0, kfull, ku) as p:
        for u in range(ku):
            pu = (p + u).cast("i64")
            xv = x[xbase + pu * sxp]
            for cc in range(cpw):
                kb.assign(accs[cc], fma(a[abase + pu * sap + rows[cc].cast("i64")], xv,
                                        accs[cc]))
        kb.barrier()
    with kb.for_("mm_pt", kfull, kend) as pt:
        p64 = pt.cast("i64")
        for cc in range(cpw):
            kb.assign(accs[cc], fma(a[abase + p64 * sap + rows[cc].cast("i64")],
                                    x[xbase + p64 * sxp], accs[cc]))
    for cc in range(cpw):
        i = i0 + lid + cc * w
        b_, i_, j_ = _coords(swap, bt, i)
        store_element(kb, c, epilogue, accs[cc], b_, i_, j_, *((1, m) if swap else (m, 1)),
                      active & (i < m))
    return kb.build()


def candidates() -> tuple[Candidate, ...]:
    """``w``: work-items per group (0: twice the host's vector lanes / 64 on GPUs)."""
    return (Candidate(0, 1, (("r", 4),)), Candidate(64, 1, (("r", 4),)),
            Candidate(32, 1, (("r", 2),)), Candidate(128, 1, (("r", 8),)))


def gemv_form(prob: MatmulProblem) -> tuple[str, bool, MatmulProblem] | None:
    """``(form, swap, problem with n == 1)`` or None when ``prob`` is no matrix-vector
    product (or ``A`` has no unit stride)."""
    for swap, p in ((False, prob), (True, prob.transposed())):
        if p.n != 1:
            continue
        if p.a_strides[2] == 1 or p.k == 1:
            return "rows", swap, p
        if p.a_strides[1] == 1 or p.m == 1:
            return "cols", swap, p
    return None


def plan_gemv(plan, backend, prob: MatmulProblem, a, b, out, candidate: Candidate,
              epilogue: Epilogue = NO_EPILOGUE, extra=()) -> None:
    """Append the launch of a matrix-vector ``prob`` (see :func:`gemv_form`)."""
    form, swap, p = gemv_form(prob)  # type: ignore[misc]
    lanes = simd_lanes(backend, p.dtype)
    host = "host_memory" in backend.capabilities().features
    w = candidate.workgroup_size or (2 * lanes if host else 64)
    ma, xa = (b, a) if swap else (a, b)
    x_strides = (p.b_strides[0], p.b_strides[1])
    if form == "rows":
        r = int(candidate.option("r", 4))
        blocks = ceil_div(p.m, r)
        kernel = rows_kernel(p.dtype, w, r, swap, epilogue, x_strides[1] == 1 or p.k == 1)
        other = p.a_strides[1]
    else:
        # host: up to 4 rows per work-item, as the rows allow (see cols_kernel's ``cpw``)
        cpw = next(c for c in (4, 2, 1) if c == 1 or p.m >= w * c) if host else 1
        blocks = ceil_div(p.m, w * cpw)
        kernel = cols_kernel(p.dtype, w, 4, swap, p.m < w, epilogue, cpw)
        other = p.a_strides[2]
    stride = spread(backend, p.batch * blocks, w, 16 * p.flops)  # memory-bound
    plan.launch(kernel, p.batch * blocks * stride, [out, ma, xa, *extra],
                [("i32", p.m), ("i32", p.k), ("i32", blocks), ("i64", p.a_offset),
                 ("i64", p.a_strides[0]), ("i64", other), ("i64", p.b_offset),
                 ("i64", x_strides[0]), ("i64", x_strides[1]), ("i32", stride)])
