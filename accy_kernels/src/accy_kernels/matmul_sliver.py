"""``matmul.blocked`` with ``B`` packed inside the tile launch, a run of panel groups per
job (host targets).

The separate pack of :mod:`accy_kernels.matmul_pack` writes the whole packed ``B`` and the
tile launch reads it back from L3 once per row block: for an MLP layer's ``256x1024 @
1024x1024`` f32 that pass (4 MiB read, 4 MiB written) cost about a tenth of the product,
and a second launch (a thread-pool round trip). Here one work-group runs one *job*: a run of
:func:`col_groups` column groups of one k-block ``p0 <= p < p1`` and a block of up to ``MC``
row tiles, a column group being the ``NCJ`` column panels ``cg*NCJ <= jt < (cg+1)*NCJ``.
For each of its column groups the job first copies the ``KC x NCJ*NR`` block of ``B``
(row-major, unit column stride: ``NCJ*NV`` vector loads of one contiguous run per row)
into its own slot of a scratch buffer, in the packed panel layout, then for each of its
row tiles runs the :func:`accy_kernels.matmul_micro.microkernel` over the ``NCJ`` panels
(read back from L2, where the copy left them) and stores each tile with the fused
epilogue. The next column group overwrites the same slot, still in L2: a thread writes
one slot again and again, not a fresh one per column group (a 64-row MLP layer's 16
groups wrote 4 MiB of scratch per call, evicted to L3). This is the loop nest of Goto &
van de Geijn 2008 (sec. 4-5) with the packing of ``B`` moved into the macro-kernel, as
OpenBLAS's level-3 driver interleaves its copy of each ``B`` panel with the kernel calls
that use it.

Row tiles outside panels: a row tile's ``MR x KC`` slice of ``A`` (read in place, or
packed by :mod:`accy_kernels.matmul_pack`) stays in L1 across the ``NCJ`` panels, so a
column group reads its rows of ``A`` once. A block of ``B`` is copied once per row block,
so the default row block holds every row tile up to :data:`MAX_JOB_ROWS` rows. Copying one
panel per group read 64 bytes per 4 KiB-strided row (two cache lines for a numpy array,
whose data sits 16 bytes past a line) and cost about twice the separate pack; ``NCJ``
panels read runs of ``NCJ * 64`` bytes (:func:`job_panels`). Partial column panels copy
zeros past ``n``.
"""

from __future__ import annotations

import functools

from accy.kernel import KernelBuilder, call, where

from accy_kernels._common import ceil_div
from accy_kernels.matmul_host import MIN_PARALLEL_WORK, active, host_parts, spread
from accy_kernels.matmul_micro import microkernel, store_tile
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem

__all__ = ["MAX_JOB_ROWS", "PANELS", "col_groups", "job_panels", "plan_sliver", "sliver_kernel"]

#: most rows of ``C`` one job computes from its copy of ``B`` (more rows: more row blocks,
#: each copying its block of ``B`` again)
MAX_JOB_ROWS = 1024

#: column panels per job, at most (each copied row a run of ``PANELS * NR`` elements)
PANELS = 4


def job_panels(tiles_n: int, row_blocks: int, batch: int, threads: int, kc: int, nr: int,
               item: int, l2: int) -> int:
    """Panels per job: the most of ``PANELS, 2, 1`` whose block of ``B`` (``kc x panels *
    nr``) takes at most half of L2 and that still leaves two jobs per thread (one thread:
    any)."""
    for p in (PANELS, 2):
        jobs = batch * row_blocks * ceil_div(tiles_n, p)
        if kc * p * nr * item <= l2 // 2 and (threads <= 1 or jobs >= 2 * threads):
            return p
    return 1


@functools.cache
def sliver_kernel(dtype: str, mr: int, lanes: int, nv: int, ku: int, ncj: int,
                  pack_a: bool = False, epilogue: Epilogue = NO_EPILOGUE,
                  accumulate: bool = False, tail: int = 0, trans_b: bool = False):
    """The job kernel (see the module docstring); host targets only (group-level branches
    around barriers, see :func:`accy_kernels.matmul_micro.store_tile`).

    Buffers (c: write, or readwrite with ``accumulate``; bp: readwrite scratch of
    ``jobs * slot`` elements; a, b, *epilogue buffers). Scalars m, n, k, tiles_m, tiles_n,
    jobs, shift (i32), a_off, a_sb, a_si, b_off, b_sb, b_sp (i64: ``B[b, p, j]`` is
    ``b[b_off + b*b_sb + p*b_sp + j]``), p0, p1 (i64, the k-block), mc_tiles (i32: row tiles
    per job), slot (i64: scratch elements per job, at least ``ncj * (p1 - p0) * NR``).
    ``A`` as in :func:`accy_kernels.matmul_blocked.blocked_kernel` (in place with unit
    ``p`` stride, or packed panels when ``pack_a``). Work-group ``g`` whose low ``shift``
    bits are zero runs job ``t = g >> shift``: batch, then row block, then the run of
    ``col_groups`` (i32, the last scalar) column groups of ``ncj`` panels (the last run of
    a row block may be shorter), all through scratch slot ``t``. ``tail`` (``m % mr``, 0:
    none): the last row tile of ``C`` runs a ``tail``-row register tile instead of
    computing ``mr - tail`` rows past ``m``. The idle groups of
    :func:`accy_kernels.matmul_host.spread` (a power-of-two stride here) test a mask, not
    a remainder: an integer division per idle group cost some 20 us per call of the 4096
    groups a 4-job 256^2 product takes on 2 threads (about a tenth of each thread's part).
    ``trans_b``: ``B`` has unit ``p`` stride instead (``x @ W.T``), ``B[b, p, j]`` is
    ``b[b_off + b*b_sb + p + j*b_sp]``, copied transposed (:func:`_copy_transposed`;
    needs ``k >= 2 * lanes``).
    """
    nr = lanes * nv
    out_dtype = epilogue.out_dtype or dtype
    tag = ("p" if pack_a else "d") + ("_acc" if accumulate else "") + (f"_t{tail}" if tail else "")
    tag += "_bt" if trans_b else ""
    name = f"matmul_sliver_{dtype}_{mr}x{nr}_l{lanes}_ku{ku}_j{ncj}_{tag}{epilogue.tag()}"
    kb = KernelBuilder(name, lanes)
    c = kb.buffer("c", out_dtype, "readwrite" if accumulate else "write")
    bp = kb.buffer("bp", dtype, "readwrite")
    a, b = kb.buffer("a", dtype, "read"), kb.buffer("b", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, n, k = kb.scalar("m", "i32"), kb.scalar("n", "i32"), kb.scalar("k", "i32")
    tm, tn = kb.scalar("tiles_m", "i32"), kb.scalar("tiles_n", "i32")
    jobs, shift = kb.scalar("jobs", "i32"), kb.scalar("shift", "i32")
    a_off, a_sb, a_si = (kb.scalar(x, "i64") for x in ("a_off", "a_sb", "a_si"))
    b_off, b_sb, b_sp = (kb.scalar(x, "i64") for x in ("b_off", "b_sb", "b_sp"))
    p_lo, p_hi = kb.scalar("p0", "i64"), kb.scalar("p1", "i64")
    mcb, slot = kb.scalar("mc_tiles", "i32"), kb.scalar("slot", "i64")
    gpj = kb.scalar("col_groups", "i32")
    g, lid = kb.group_id(), kb.local_id()
    zero = kb.const(0, dtype)
    blk = kb.shared("sv_blk", dtype, nr * 2 * lanes) if trans_b else None
    mask = (kb.const(1, "i32") << shift) - 1
    with active(kb, ((g & mask) == 0) & ((g >> shift) < jobs), True):
        t = kb.let("sv_t", g >> shift)
        gn = kb.let("sv_gn", (tn + (ncj - 1)) / ncj)  # column groups per row block
        jpr = kb.let("sv_jpr", (gn + (gpj - 1)) / gpj)  # jobs per row block
        per = kb.let("sv_per", ((tm + (mcb - 1)) / mcb) * jpr)
        bt = kb.let("sv_bt", t / per)
        ic = kb.let("sv_ic", (t % per) / jpr)
        cg0 = kb.let("sv_cg0", ((t % per) % jpr) * gpj)
        cg1 = kb.let("sv_cg1", call("min", gn, cg0 + gpj))
        kcb = kb.let("sv_kcb", p_hi - p_lo)
        dst = kb.let("sv_dst", t.cast("i64") * slot)
        k64 = kb.let("sv_k", k.cast("i64"))
        rt_lo = kb.let("sv_rtlo", ic * mcb)
        rt_hi = kb.let("sv_rthi", call("min", tm, rt_lo + mcb))
        with kb.for_("sv_cg", cg0, cg1) as cg:  # one slot, reused: it stays in L2
            jt0 = kb.let("sv_jt0", cg * ncj)
            j00 = kb.let("sv_j00", jt0 * nr)
            src = kb.let("sv_src", b_off + bt.cast("i64") * b_sb + j00.cast("i64"))

            def copy_all(whole: bool) -> None:
                with kb.for_(kb.fresh("sv_p"), p_lo, p_hi) as p:
                    for q in range(ncj):
                        for v in range(nv):
                            col = q * nr + v * lanes
                            at = dst + kcb * (q * nr) + (p - p_lo) * nr \
                                + (lid.cast("i64") + v * lanes)
                            val = b[src + p * b_sp + (lid.cast("i64") + col)]
                            if whole:
                                kb.store(bp, at, val)
                                continue
                            # loaded in bounds only; no min() clamp in an index (see
                            # store_element's ``inside``)
                            with kb.if_(j00 + col + lid < n):
                                kb.store(bp, at, val)
                            with kb.else_():
                                kb.store(bp, at, zero)
                    kb.barrier()

            if trans_b:
                _copy_transposed(kb, (b, bp, blk), (b_off + bt.cast("i64") * b_sb, b_sp, dst),
                                 (j00, n, p_lo, p_hi, kcb), (ncj, nr, lanes, nv), lid, zero)
            else:
                with kb.if_(j00 + ncj * nr <= n):
                    copy_all(True)
                with kb.else_():
                    copy_all(False)
            nq = kb.let("sv_nq", call("min", kb.const(ncj, "i32"), tn - jt0))
            _row_tiles(kb, (c, a, bp), (m, n, tm, mcb), (bt, rt_lo, rt_hi, jt0, nq),
                       (a_off, a_sb, a_si, k64, dst, kcb, p_lo, p_hi),
                       (mr, lanes, nv, ku, pack_a, epilogue, accumulate, tail), lid, zero)
    return kb.build()


def _copy_transposed(kb, bufs, base, rng, shape, lid, zero) -> None:
    """The copy of :func:`sliver_kernel` for a ``B`` with unit ``p`` stride: each panel's
    ``NR`` source rows (columns ``j`` of ``B``, clamped to ``n - 1`` and zero past it) in
    blocks of ``2 * lanes`` consecutive ``p`` (64 bytes of each row), each row's chunk
    copied into the work-group array ``blk`` with vector loads, then each ``p`` stored as a
    panel row read down a column of the array (as
    :func:`accy_kernels.matmul_pack.transpose_kernel`). A last, partial block is the one
    ending at ``p1`` (every load inside the rows, no clamp of a lane's index, which would
    turn the kernel's vectorization off: :func:`accy.codegen.gathers.gathering_loops`),
    storing only its ``p`` past the whole blocks. Panels and blocks are run-time loops:
    unrolled over the panels, with a separate last block, the kernel took 4x as long to
    compile (5 s)."""
    b, bp, blk = bufs
    src, b_sj, dst = base
    j00, n, p_lo, p_hi, kcb = rng
    ncj, nr, lanes, nv = shape
    chunk = 2 * lanes
    blocks = kb.let(kb.fresh("sv_tblk"), (kcb + (chunk - 1)) / chunk)
    with kb.for_(kb.fresh("sv_tq"), 0, ncj) as q:
        j0 = kb.let(kb.fresh("sv_tj0"), j00 + q * nr)
        rows = [kb.let(kb.fresh(f"sv_trow{r}_"), src + call("min", j0 + r, n - 1).cast("i64")
                       * b_sj) for r in range(nr)]
        keep = [kb.let(kb.fresh(f"sv_tok{r}_"), j0 + r < n) for r in range(nr)]
        pdst = kb.let(kb.fresh("sv_tdst"), dst + kcb * (q * nr).cast("i64") - p_lo * nr)
        with kb.for_(kb.fresh("sv_tb"), kb.const(0, "i64"), blocks) as bi:
            first = kb.let(kb.fresh("sv_tfirst"), p_lo + bi * chunk)
            p0 = kb.let(kb.fresh("sv_tp0"), call("min", first, p_hi - chunk))
            for r in range(nr):
                for v in range(2):
                    val = b[rows[r] + p0 + (lid.cast("i64") + v * lanes)]
                    kb.shared_store(blk, lid + (r * chunk + v * lanes),
                                    where(keep[r], val, zero))
            kb.barrier()
            for i in range(chunk):
                with kb.if_(p0 + i >= first):  # a work-group-level branch (its barrier)
                    for h in range(nv):
                        kb.store(bp, pdst + (p0 + i) * nr + (lid.cast("i64") + h * lanes),
                                 blk[(lid + h * lanes) * chunk + i])
                    kb.barrier()


def _row_tiles(kb, bufs, sizes, where, addr, shape, lid, zero) -> None:
    """The row tiles ``rt_lo <= rt < rt_hi`` of one column group (panels ``jt0 ...
    jt0 + nq``) against the group's packed block at ``dst`` (see :func:`sliver_kernel`);
    with ``tail`` rows in the last row tile of ``C``, that tile computes only those."""
    c, a, bp = bufs
    m, n, tm, _mcb = sizes
    bt, rt_lo, rt_hi, jt0, nq = where
    a_off, a_sb, a_si, k64, dst, kcb, p_lo, p_hi = addr
    mr, lanes, nv, ku, pack_a, epilogue, accumulate, tail = shape
    nr = lanes * nv

    def tile(rt, rows_n: int) -> None:
        if pack_a:  # element (r, p) at a0 + p*mr + r
            a0 = kb.let(kb.fresh("sv_abase"), bt.cast("i64") * a_sb + rt.cast("i64") * k64 * mr)
            load_a = lambda p, r: a[a0 + p * mr + r]  # noqa: E731
        else:
            base = a_off + bt.cast("i64") * a_sb
            rows_a = [kb.let(kb.fresh(f"sv_arow{r}_"), base + call("min", rt * mr + r, m - 1)
                             .cast("i64") * a_si) for r in range(rows_n)]
            load_a = lambda p, r: a[rows_a[r] + p]  # noqa: E731
        i0 = kb.let(kb.fresh("sv_i0"), rt * mr)
        rows = [kb.let(kb.fresh(f"sv_crow{r}_"), (bt * m + i0 + r).cast("i64") * n.cast("i64"))
                for r in range(rows_n)]
        with kb.for_(kb.fresh("sv_q"), 0, nq) as q:
            pan = kb.let(kb.fresh("sv_pan"), dst + q.cast("i64") * kcb * nr - p_lo * nr)
            acc = [[kb.let(f"mm_acc{r}_{v}", zero) for v in range(nv)] for r in range(rows_n)]
            microkernel(kb, acc, load_a,
                        lambda p, v: bp[pan + p * nr + (lid.cast("i64") + v * lanes)],
                        p_lo, p_hi, ku)
            store_tile(kb, c, epilogue, acc, bt, i0, (jt0 + q) * nr, m, n, lid, rows,
                       lanes, True, accumulate, inside=True)

    if not tail:
        with kb.for_(kb.fresh("sv_rt"), rt_lo, rt_hi) as rt:
            tile(rt, mr)
        return
    # the partial last row tile with its own, shorter register tile: a 64-row MLP layer's
    # 11th tile of 6 rows computed 2 rows past m (3 % of the work)
    with kb.for_(kb.fresh("sv_rt"), rt_lo, call("min", rt_hi, tm - 1)) as rt:
        tile(rt, mr)
    with kb.if_(rt_hi == tm):
        tile(tm - 1, tail)


def plan_sliver(plan, backend, prob: MatmulProblem, shape, slots, a_sc, blocks) -> None:
    """Append the job launches of ``prob`` to ``plan``: one per k-block of ``kc`` (the
    first stores, the next ones add, the last applies the epilogue). ``shape``: ``(mr,
    lanes, nv, ku, pack_a)``; ``slots``: ``(a, b, out, extra)`` with ``b`` the operand
    itself (unit column stride, or unit ``k`` stride: ``trans_b``); ``a_sc``: the three
    ``A`` scalars of :func:`sliver_kernel`; ``blocks``: ``(kc, mc_tiles, ncj, epilogue)``."""
    mr, lanes, nv, ku, pack_a = shape
    a, b, out, extra = slots
    kc, mcb, ncj, epilogue = blocks
    nr = lanes * nv
    tm, tn = ceil_div(prob.m, mr), ceil_div(prob.n, nr)
    mcb = max(1, min(mcb, tm))
    gn = ceil_div(tn, ncj)
    blocks_m = prob.batch * ceil_div(tm, mcb)
    parts = host_parts(backend) if prob.flops >= MIN_PARALLEL_WORK else 1
    gpj = col_groups(gn, blocks_m, parts)
    jobs = blocks_m * ceil_div(gn, gpj)
    slot = ncj * kc * nr
    bp = plan.temp(prob.dtype, jobs * slot)
    shift = max(0, spread(backend, jobs, lanes, prob.flops) - 1).bit_length()
    sb = prob.b_strides
    trans = sb[2] != 1  # unit p stride instead (x @ W.T): the j stride goes in b_sp
    scalars = [("i32", prob.m), ("i32", prob.n), ("i32", prob.k), ("i32", tm), ("i32", tn),
               ("i32", jobs), ("i32", shift), *a_sc,
               ("i64", prob.b_offset), ("i64", sb[0]), ("i64", sb[2] if trans else sb[1])]
    starts = list(range(0, prob.k, kc))
    for n_blk, p0 in enumerate(starts):
        last = n_blk == len(starts) - 1
        kernel = sliver_kernel(prob.dtype, mr, lanes, nv, ku, ncj, pack_a,
                               epilogue if last else NO_EPILOGUE, n_blk > 0, prob.m % mr,
                               trans)
        plan.launch(kernel, jobs << shift, [out, bp, a, b, *(extra if last else ())],
                    [*scalars, ("i64", p0), ("i64", min(prob.k, p0 + kc)), ("i32", mcb),
                     ("i64", slot), ("i32", gpj)])


def col_groups(groups: int, blocks: int, parts: int) -> int:
    """Column groups per job: ``groups`` of each of ``blocks`` row blocks over the ``parts``
    ranges a host pool cuts the launch into (:func:`accy_kernels.matmul_host.host_parts`:
    threads times ranges per thread, claimed by whichever thread is free). The most groups
    per job whose busiest range (``ceil(jobs / parts)`` jobs) runs no more groups than with
    one group per job: each job copies into one scratch slot, so a thread writes one slot
    again and again (in L2) instead of a fresh one per group (16 slots of 256 KiB for a
    64-row MLP layer's ``W``: 4 MiB written to L3 and evicted each call)."""
    if groups <= 1:
        return 1
    if parts <= 1:
        return groups
    best = ceil_div(blocks * groups, parts)  # groups of the busiest range, one per job
    for per in range(groups, 0, -1):
        if ceil_div(blocks * ceil_div(groups, per), parts) * per <= best:
            return per
    return 1
