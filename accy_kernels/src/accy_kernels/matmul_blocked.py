"""``matmul.blocked``: the host-memory (CPU) variant, Goto/BLIS style.

Algorithm (Goto & van de Geijn 2008, "Anatomy of high-performance matrix multiplication";
Van Zee & van de Geijn 2015, BLIS): ``A`` is packed into row panels of ``MR`` rows stored
k-major (``Ap[b][i_tile][p][r]``) and ``B`` into column panels of ``NR`` columns
(``Bp[b][j_tile][p][c]``), zero-padded to whole tiles (:func:`plan_blocked` says when each
operand is packed); both pack kernels read the operands through their strides, so
transposed and broadcast operands cost nothing extra. One work-group computes one ``MR x
NR`` tile of ``C``: ``NR = L * NV`` where ``L`` (the work-group size) is the host's vector
width in elements. The ``p`` loop runs at work-group level (a barrier marks it), so the
work-item loop over the ``L`` lanes is innermost: LLVM vectorizes it into ``NV`` vector
loads of ``Bp``, ``MR`` broadcasts of ``Ap`` and ``MR x NV`` FMAs per step, with the
accumulators in vector registers (the microkernel; ``MR = 6, NV = 2`` fills AVX2's 16
registers with 12 accumulators; 4 steps unrolled: 48 ``vfmadd231ps ymm`` per loop trip, no
spills). Cache blocking (:func:`blocking`, :func:`tile_order`): ``k`` is cut into ``KC``
blocks, one launch each, and the tiles of a launch are walked in ``NC``-column and
``MC``-row blocks, column tiles outside row tiles, so a ``B`` sliver stays in cache across
the row tiles and an ``A`` block across the column tiles; the thread pool splits the tiles
into contiguous ranges (:func:`accy_kernels.matmul_host.spread` spreads small launches over
the threads). Packing: :mod:`accy_kernels.matmul_pack`.
"""

from __future__ import annotations

import functools

from accy.families import Candidate, host_like
from accy.kernel import KernelBuilder, call

from accy_kernels._common import ceil_div
from accy_kernels.host_caches import host_caches
from accy_kernels.matmul_host import active, host_threads, simd_lanes, spread
from accy_kernels.matmul_micro import microkernel, store_tile
from accy_kernels.matmul_pack import pack_kernel, plan_pack
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.matmul_sliver import plan_sliver
from accy_kernels.matmul_splitk import RED_WG, reduce_kernel, splits_for

# pack_kernel, simd_lanes, spread: re-exported
__all__ = ["blocked_kernel", "blocking", "candidates", "pack_kernel", "plan_blocked", "simd_lanes",
           "spread", "tile_order"]


@functools.cache
def blocked_kernel(dtype: str, mr: int, lanes: int, nv: int, ku: int, pack_a: bool = True,
                   pack_b: bool = True, epilogue: Epilogue = NO_EPILOGUE, split: bool = True,
                   accumulate: bool = False, ksplit: bool = False):
    """The ``MR x (lanes*nv)`` tile kernel (see the module docstring).

    Buffers (c: write, a, b, *epilogue buffers): ``a``/``b`` packed panels (``pack_a``,
    ``pack_b``) or the operands themselves (``A`` with unit ``p`` stride, rows clamped to
    ``m - 1``; ``B`` with unit ``j`` stride and ``n`` a multiple of ``NR``). Scalars m, n,
    k, tiles_m, tiles_n, tiles, stride (i32), a_off, a_sb, a_si, b_off, b_sb, b_sp (i64),
    p0, p1 (i64: the slice ``p0 <= p < p1`` of the contracted axis summed), mc_tiles,
    nc_tiles (i32: row and column tiles per cache block, see :func:`tile_order`).
    Packed: ``a_sb``/``b_sb`` are the elements of one batch's panels (0: shared by every
    batch), ``a_off``/``a_si`` unused; packed ``B``: ``b_sp`` is the length of its panels
    and ``b_off`` the offset of ``p = 0`` (``-p0 * NR`` for panels of the k-block
    ``p0 <= p < p0 + b_sp`` alone). ``accumulate``: ``C`` (then ``readwrite``, of the
    accumulator's dtype) already holds the sum over ``p < p0``, to which the tile is added
    before the epilogue (the k-blocks after the first). ``ksplit``: split-K
    (:mod:`accy_kernels.matmul_splitk`); the batch index ``s`` of a tile is its split, which
    sums ``p0 + s*ks <= p < min(p1, p0 + (s+1)*ks)`` (extra scalar ks, i64) into slice ``s``
    of ``C`` (operand batch strides 0). ``split``: a host target (whole-tile stores, see
    :func:`~accy_kernels.matmul_micro.store_tile`; idle groups of
    :func:`accy_kernels.matmul_host.spread`); False:
    every group computes tile ``g`` (``stride`` 1), with no branch around the barriers
    (:func:`accy_kernels.matmul_host.active`).
    """
    nr = lanes * nv
    out_dtype = epilogue.out_dtype or dtype
    pk = ("p" if pack_a else "d") + ("p" if pack_b else "d")
    pk += ("" if split else "g") + ("_acc" if accumulate else "") + ("_sk" if ksplit else "")
    name = f"matmul_blocked_{dtype}_{mr}x{nr}_l{lanes}_ku{ku}_{pk}{epilogue.tag()}"
    kb = KernelBuilder(name, lanes)
    c = kb.buffer("c", out_dtype, "readwrite" if accumulate else "write")
    a, b = kb.buffer("a", dtype, "read"), kb.buffer("b", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, n, k = kb.scalar("m", "i32"), kb.scalar("n", "i32"), kb.scalar("k", "i32")
    tm, tn = kb.scalar("tiles_m", "i32"), kb.scalar("tiles_n", "i32")
    tiles, stride = kb.scalar("tiles", "i32"), kb.scalar("stride", "i32")
    a_off, a_sb, a_si = (kb.scalar(x, "i64") for x in ("a_off", "a_sb", "a_si"))
    b_off, b_sb, b_sp = (kb.scalar(x, "i64") for x in ("b_off", "b_sb", "b_sp"))
    p_lo, p_hi = kb.scalar("p0", "i64"), kb.scalar("p1", "i64")
    mcb, ncb = kb.scalar("mc_tiles", "i32"), kb.scalar("nc_tiles", "i32")
    g, lid = kb.group_id(), kb.local_id()
    with active(kb, (g % stride == 0) & (g / stride < tiles), split):
        t = kb.let("mm_t", g / stride)
        per = kb.let("mm_per", tm * tn)
        bt = kb.let("mm_b", t / per)
        it, jt = tile_order(kb, t % per, tm, tn, mcb, ncb)
        k64 = kb.let("mm_k", k.cast("i64"))
        if ksplit:
            ks = kb.scalar("ks", "i64")
            p_lo = kb.let("mm_plo", p_lo + bt.cast("i64") * ks)
            p_hi = kb.let("mm_phi", call("min", p_hi, p_lo + ks))
        if pack_a:  # element (r, p) at a_rows[0] + p*mr + r
            a_rows = [kb.let("mm_abase", bt.cast("i64") * a_sb + it.cast("i64") * k64 * mr)]
            a_step = kb.const(mr, "i64")
        else:
            base = a_off + bt.cast("i64") * a_sb
            a_rows = [kb.let(f"mm_arow{r}", base + call("min", it * mr + r, m - 1).cast("i64")
                             * a_si) for r in range(mr)]
            a_step = kb.const(1, "i64")  # unit k stride: constant offsets from each row
        if pack_b:  # element (p, c) at bbase + p*nr + c; panels b_sp long, b_off = -p0*nr
            bbase = kb.let("mm_bbase", b_off + bt.cast("i64") * b_sb
                           + jt.cast("i64") * b_sp * nr)
            b_step = kb.const(nr, "i64")
        else:
            bbase = kb.let("mm_bbase", b_off + bt.cast("i64") * b_sb + jt.cast("i64") * nr)
            b_step = b_sp
        zero = kb.const(0, dtype)
        acc = [[kb.let(f"mm_acc{r}_{v}", zero) for v in range(nv)] for r in range(mr)]

        def load_a(p, r):
            if pack_a:
                return a[a_rows[0] + p * a_step + r]
            return a[a_rows[r] + p * a_step]

        microkernel(kb, acc, load_a,
                    lambda p, v: b[bbase + p * b_step + lid.cast("i64") + v * lanes],
                    p_lo, p_hi, ku)
        i0, j0 = kb.let("mm_i0", it * mr), kb.let("mm_j0", jt * nr)
        rows = [kb.let(f"mm_crow{r}", (bt * m + i0 + r).cast("i64") * n.cast("i64"))
                for r in range(mr)]
        store_tile(kb, c, epilogue, acc, bt, i0, j0, m, n, lid, rows, lanes, split,
                    accumulate)
    return kb.build()


def tile_order(kb: KernelBuilder, rem, tm, tn, mcb, ncb):
    """``(row tile, column tile)`` of the ``rem``-th tile of one batch in cache-block order
    (Goto & van de Geijn 2008, sec. 4; the BLIS loop nest of Van Zee & van de Geijn 2015):
    blocks of ``ncb`` column tiles (the ``NC`` loop: a ``KC x NC`` slab of packed ``B`` in
    L3), in each blocks of ``mcb`` row tiles (the ``MC`` loop: an ``MC x KC`` block of ``A``
    in L2), in each the column tiles (``KC x NR`` slivers of ``B`` in L1), innermost the row
    tiles that reuse that sliver. Blocks before the last of each level are full, so the
    position is computed without tables. ``mcb = tm, ncb = tn``: one block (column-major
    tile order)."""
    cj = kb.let("mm_cj", ncb * tm)
    jc = kb.let("mm_jc", rem / cj)
    r1 = kb.let("mm_r1", rem % cj)
    cnt_j = kb.let("mm_cntj", call("min", ncb, tn - jc * ncb))
    ci = kb.let("mm_ci", mcb * cnt_j)
    ic = kb.let("mm_ic", r1 / ci)
    r2 = kb.let("mm_r2", r1 % ci)
    cnt_i = kb.let("mm_cnti", call("min", mcb, tm - ic * mcb))
    it = kb.let("mm_it", ic * mcb + r2 % cnt_i)
    jt = kb.let("mm_jt", jc * ncb + r2 / cnt_i)
    return it, jt


def candidates() -> tuple[Candidate, ...]:
    """``mr``, vectors per row ``nv``, unroll ``ku``; ``lanes`` comes from the host."""
    return tuple(Candidate(0, 1, (("ku", ku), ("mr", mr), ("nv", nv)))
                 for mr, nv, ku in ((6, 2, 4), (4, 3, 4), (4, 2, 4), (6, 2, 1), (8, 1, 4)))


#: most k-blocks of one product on a host backend (each a pack launch of its ``B`` panels
#: and a tile launch); 64x65536 @ 65536x64 f32, one thread, measured: 16 blocks 9.9 ms,
#: 8 blocks 8.7 ms, 4 blocks 8.5 ms, 2 blocks 8.3 ms (numpy 8.1 ms)
MAX_K_BLOCKS = 4

#: most row blocks of a product that packs ``B`` inside its tile launch
#: (:mod:`accy_kernels.matmul_sliver`)
MAX_SLIVER_ROW_BLOCKS = 2

#: the rows of one such job read at most this many L2s of ``A`` (each job reads its rows
#: once, from L3: 1024^2 f32 with every row in one job read 4 MiB of ``A`` per job, 64 MiB
#: in all, and ran 3 % slower than the separate pack; f64 7-10 %)
JOB_A_L2 = 2


def blocking(prob: MatmulProblem, mr: int, nr: int, ku: int, candidate: Candidate,
             host: bool) -> tuple[int, int, int]:
    """``(KC, MC tiles, NC tiles)``: the k-block and the row / column tiles per cache block.

    Host backends (Goto & van de Geijn 2008; Van Zee & van de Geijn 2015): a ``KC x NR``
    sliver of packed ``B`` takes half of L1 or an eighth of L2, whichever is larger, an
    ``MC x KC`` block of ``A`` half of L2, a ``KC x NC`` slab of ``B`` a quarter of L3
    (shared by the cores). The L2 bound is measured, not BLIS's: on a Zen core (32 KiB L1,
    512 KiB L2) 1024 x 16 f32 slivers (64 KiB, read from L2) ran at 74 GF/s against
    57 GF/s for L1-sized 256 x 16 ones, the per-k-block reload and store of ``C`` costing
    more than the L2 reads of ``B`` save; sizes from
    :func:`accy_kernels.host_caches.host_caches`, or the candidate's options ``kc``, ``mc``,
    ``nc`` (elements). ``k`` up to 1.5 ``KC`` stays one block; longer ones split into equal
    blocks (multiples of ``ku``), at most
    :data:`MAX_K_BLOCKS` (launches each: a long ``k`` gets longer blocks, their ``B``
    slivers in L2 or L3 rather than L1, instead of hundreds of launches). Device backends:
    one block (``KC = k``, whole-matrix tile order).
    """
    tm, tn = ceil_div(prob.m, mr), ceil_div(prob.n, nr)
    if not host:
        return max(prob.k, 1), max(tm, 1), max(tn, 1)
    item = 8 if prob.dtype in ("f64", "i64") else 4
    l1, l2, l3 = host_caches()
    sliver = max(l1 // 2, l2 // 8)
    kc = int(candidate.option("kc", 0)) or max(4 * ku, sliver // (nr * item) // ku * ku)
    if prob.k > kc + kc // 2:
        blocks = min(ceil_div(prob.k, kc), MAX_K_BLOCKS)
        kc = ceil_div(ceil_div(prob.k, blocks), ku) * ku
    else:
        kc = max(prob.k, 1)
    mc = int(candidate.option("mc", 0)) or l2 // 2 // (kc * item)
    nc = int(candidate.option("nc", 0)) or l3 // 4 // (kc * item)
    return kc, _balanced(tm, mc // mr), _balanced(tn, nc // nr)


def _balanced(tiles: int, most: int) -> int:
    """Tiles per block: at most ``most`` (one block when ``tiles`` is within 1.5 ``most``:
    a last block of a few tiles would re-read the other operand's whole slab for little
    work), as equal as the block count allows."""
    most = max(1, most)
    if tiles <= most + most // 2:
        return max(1, tiles)
    return ceil_div(tiles, ceil_div(tiles, most))


def plan_blocked(plan, backend, prob: MatmulProblem, a, b, out, candidate: Candidate,
                 epilogue: Epilogue = NO_EPILOGUE, extra=()) -> None:
    """Append the pack and tile launches of ``prob`` to ``plan`` (slots ``a``, ``b``,
    ``out``, epilogue input slots ``extra``).

    ``A`` is read in place when its ``k`` stride is 1 (rows are independent streams; packing
    it measured 4 % slower at 1024^2 and 25 % slower for 64 x 65536), else packed; ``B`` is
    packed unless its rows
    are unit-stride, ``n`` is a multiple of ``NR`` and it is reused little (at most 4 row
    tiles) or fits in L2 (256 KiB): packed panels avoid the cache-set conflicts of
    power-of-two row strides. Candidate option ``pack_a`` packs ``A`` too. On host
    backends ``k`` is cut into :func:`blocking`'s k-blocks, one launch each: the first
    stores its partial tile, the next ones add theirs to ``C`` and the last applies the
    epilogue (an epilogue that changes the dtype keeps one k-block). With several
    k-blocks, ``B`` is packed one k-block at a time, just before the launch that uses it,
    into one k-block's scratch (BLIS's per-``KC`` packing): packing the whole of a long
    ``B`` first wrote it all to memory and read it back (16 MiB each way for 64x65536 @
    65536x64). Products with too few
    tiles for the host's threads and a long ``k`` use split-K instead
    (:func:`accy_kernels.matmul_splitk.splits_for`). On host targets a row-major ``B`` that
    would be packed, or read in place by several row tiles while larger than half of L1, is
    packed inside the tile launch instead (:mod:`accy_kernels.matmul_sliver`,
    :func:`_sliver_blocking`): no separate pass over ``B`` and one launch per k-block.
    """
    dt = prob.dtype
    host = host_like(backend)
    lanes = simd_lanes(backend, dt)
    mr, nv, ku = (int(candidate.option(k, d)) for k, d in (("mr", 6), ("nv", 2), ("ku", 4)))
    nr = lanes * nv
    tm, tn = ceil_div(prob.m, mr), ceil_div(prob.n, nr)
    kc, mcb, ncb = blocking(prob, mr, nr, ku, candidate, host)
    if epilogue.out_dtype not in (None, dt):
        kc = max(prob.k, 1)
    item = 8 if dt in ("f64", "i64") else 4
    pack_a = bool(candidate.option("pack_a", False)) or prob.a_strides[2] != 1
    pack_b = not (prob.b_strides[2] == 1 and prob.n % nr == 0
                  and (tm <= 4 or prob.k * prob.n * item <= 256 * 1024))
    pack_b = bool(candidate.option("pack_b", pack_b)) or prob.b_strides[2] != 1 \
        or prob.n % nr != 0
    a_bat = prob.batch if prob.a_strides[0] else 1
    b_bat = prob.batch if prob.b_strides[0] else 1
    k = prob.k
    a_sc = [("i64", prob.a_offset), ("i64", prob.a_strides[0]), ("i64", prob.a_strides[1])]
    b_sc = [("i64", prob.b_offset), ("i64", prob.b_strides[0]), ("i64", prob.b_strides[1])]
    if pack_a:
        ap = plan.temp(dt, a_bat * tm * k * mr)
        plan_pack(plan, backend, ap, a, a_bat, tm, mr, prob.m, k, prob.a_offset, prob.a_strides)
        a, a_sc = ap, [("i64", 0), ("i64", tm * k * mr if a_bat > 1 else 0), ("i64", 0)]
    splits = splits_for(prob, prob.batch * tm * tn, host_threads(backend), candidate) \
        if host else 1
    # a B reused by several row tiles and past half of L1 is better copied than read in
    # place (4 KiB-strided rows: 256^2 f32 0.46 -> 0.37 ms, 24x1024 @ 1024^2 1.6 -> 0.9 ms),
    # and so is one row tile's B past half of L2, read from L3 or memory: in place, each
    # row's 64 bytes span two lines (a numpy array's data sits 16 bytes past one), the copy
    # reads 256-byte runs (2-6 x 1024 @ 1024^2 f32 + bias, relu, one thread: 0.38-0.48 ->
    # 0.25-0.38 ms, numpy 0.26-0.57; load 5-6)
    size_b = prob.k * prob.n * item
    reuse = (size_b > host_caches()[0] // 2 if tm > 1 else size_b > host_caches()[1] // 2) \
        and candidate.option("pack_b", True) is not False
    sliver = _sliver_blocking(prob, candidate, backend, splits == 1 and (pack_b or reuse), nr,
                              kc, epilogue)
    if sliver is not None:
        plan_sliver(plan, backend, prob, (mr, lanes, nv, ku, pack_a), (a, b, out, extra), a_sc,
                    sliver)
        return
    starts = list(range(0, max(k, 1), kc))
    b_src, sb = b, prob.b_strides
    per_block = pack_b and splits == 1 and len(starts) > 1  # see the docstring
    if pack_b:
        kp = kc if per_block else k
        bp = plan.temp(dt, b_bat * tn * kp * nr)
        if not per_block:
            plan_pack(plan, backend, bp, b, b_bat, tn, nr, prob.n, k, prob.b_offset,
                      (sb[0], sb[2], sb[1]))
        b, b_sc = bp, [("i64", 0), ("i64", tn * k * nr if b_bat > 1 else 0), ("i64", k)]
    if splits > 1:
        _plan_split(plan, backend, prob, splits, (mr, lanes, nv, ku, pack_a, pack_b),
                    (a, b, out, extra), (a_sc, b_sc, mcb, ncb), epilogue)
        return
    tiles = prob.batch * tm * tn
    stride = spread(backend, tiles, lanes, prob.flops)
    scalars = [("i32", prob.m), ("i32", prob.n), ("i32", k), ("i32", tm), ("i32", tn),
               ("i32", tiles), ("i32", stride), *a_sc]
    for n_blk, p0 in enumerate(starts):
        last = n_blk == len(starts) - 1
        p1 = min(k, p0 + kc)
        if per_block:  # this k-block's panels alone, packed just before their use
            plan_pack(plan, backend, b, b_src, b_bat, tn, nr, prob.n, p1 - p0,
                      prob.b_offset + p0 * sb[1], (sb[0], sb[2], sb[1]))
            b_sc = [("i64", -p0 * nr), ("i64", tn * (p1 - p0) * nr if b_bat > 1 else 0),
                    ("i64", p1 - p0)]
        kernel = blocked_kernel(dt, mr, lanes, nv, ku, pack_a, pack_b,
                                epilogue if last else NO_EPILOGUE, host, n_blk > 0)
        plan.launch(kernel, tiles * stride, [out, a, b, *(extra if last else ())],
                    [*scalars, *b_sc, ("i64", p0), ("i64", p1), ("i32", mcb),
                     ("i32", ncb)])


def _sliver_blocking(prob: MatmulProblem, candidate: Candidate, backend, packs: bool,
                     nr: int, kc: int, epilogue: Epilogue) -> tuple | None:
    """``(KC, row tiles per job, panels per job, epilogue)`` of
    :mod:`accy_kernels.matmul_sliver` for ``prob``, or None where it does not apply: device
    targets, a ``B`` with neither unit column stride nor unit ``k`` stride (or the latter
    with ``k`` or ``KC`` under two vectors, see :func:`~accy_kernels.matmul_sliver.sliver_kernel`'s
    ``trans_b``), a product that reads a small ``B`` in
    place or splits ``k`` (``packs`` False), more than :data:`MAX_SLIVER_ROW_BLOCKS` row
    blocks (over all batches when they share ``B``) of at most
    :data:`~accy_kernels.matmul_sliver.MAX_JOB_ROWS` rows and :data:`JOB_A_L2` L2s of ``A``
    each (each block copies ``B`` again, into a scratch of
    its own: the separate pack, done once, is then cheaper). Candidate option ``sliver``
    0 turns it off, 1 forces it where it applies whether or not ``B`` would be packed;
    ``mc``: rows per job, ``ncj``: panels per job (default
    :func:`~accy_kernels.matmul_sliver.job_panels`)."""
    from accy_kernels.matmul_sliver import MAX_JOB_ROWS, job_panels

    want = int(candidate.option("sliver", -1))
    if not host_like(backend) or want == 0 or prob.k < 1:
        return None
    if prob.b_strides[2] != 1 and (prob.b_strides[1] != 1  # x @ W.T: a transposing copy
                                   or min(prob.k, kc) < 2 * simd_lanes(backend, prob.dtype)):
        return None
    if not packs and want != 1:
        return None
    mr = int(candidate.option("mr", 6))
    tm = ceil_div(prob.m, mr)
    item = 8 if prob.dtype in ("f64", "i64") else 4
    rows = min(MAX_JOB_ROWS, JOB_A_L2 * host_caches()[1] // (kc * item))
    mcb = _balanced(tm, (int(candidate.option("mc", 0)) or rows) // mr)
    shared_b = prob.batch if prob.b_strides[0] == 0 else 1  # each batch copies a shared B
    if want != 1 and ceil_div(tm, mcb) * shared_b > MAX_SLIVER_ROW_BLOCKS:
        return None
    ncj = int(candidate.option("ncj", 0)) or job_panels(
        ceil_div(prob.n, nr), ceil_div(tm, mcb), prob.batch, host_threads(backend), kc, nr,
        item, host_caches()[1])
    return kc, mcb, ncj, epilogue


def _plan_split(plan, backend, prob, splits, shape, slots, blocks, epilogue) -> None:
    """Split-K launches (:mod:`accy_kernels.matmul_splitk`): every (slice, tile) pair into a
    scratch of ``splits x m x n`` partials, then their sum with the epilogue."""
    mr, lanes, nv, ku, pack_a, pack_b = shape
    a, b, out, extra = slots
    a_sc, b_sc, mcb, ncb = blocks
    dt, k = prob.dtype, prob.k
    ks = ceil_div(k, splits)
    splits = ceil_div(k, ks)  # every slice non-empty
    tm, tn = ceil_div(prob.m, mr), ceil_div(prob.n, lanes * nv)
    part = plan.temp(dt, splits * prob.m * prob.n)
    tiles = splits * tm * tn
    stride = spread(backend, tiles, lanes)
    a_sc = [a_sc[0], ("i64", 0), a_sc[2]]
    b_sc = [b_sc[0], ("i64", 0), b_sc[2]]
    kernel = blocked_kernel(dt, mr, lanes, nv, ku, pack_a, pack_b, NO_EPILOGUE, True, False,
                            True)
    plan.launch(kernel, tiles * stride, [part, a, b],
                [("i32", prob.m), ("i32", prob.n), ("i32", k), ("i32", tm), ("i32", tn),
                 ("i32", tiles), ("i32", stride), *a_sc, *b_sc, ("i64", 0), ("i64", k),
                 ("i32", mcb), ("i32", ncb), ("i64", ks)])
    red = reduce_kernel(dt, epilogue)
    plan.launch(red, ceil_div(prob.m * prob.n, RED_WG), [out, part, *extra],
                [("i32", prob.m), ("i32", prob.n), ("i32", splits)])
