"""``matmul.blocked``: the host-memory (CPU) variant, Goto/BLIS style.

Algorithm (Goto & van de Geijn 2008, "Anatomy of high-performance matrix multiplication";
Van Zee & van de Geijn 2015, BLIS): ``A`` is packed into row panels of ``MR`` rows stored
k-major (``Ap[b][i_tile][p][r]``) and ``B`` into column panels of ``NR`` columns
(``Bp[b][j_tile][p][c]``), zero-padded to whole tiles and to a multiple of the unroll
``KU`` in ``p``; both pack kernels read the operands through their strides, so transposed
and broadcast operands cost nothing extra. One work-group computes one ``MR x NR`` tile of
``C``: ``NR = L * NV`` where ``L`` (the work-group size) is the host's vector width in
elements. The ``p`` loop runs at work-group level (a barrier marks it), so the work-item
loop over the ``L`` lanes is innermost: LLVM vectorizes it into ``NV`` vector loads of
``Bp``, ``MR`` broadcasts of ``Ap`` and ``MR x NV`` FMAs per step, with the accumulators in
vector registers (the microkernel; ``MR = 6, NV = 2`` fills AVX2's 16 registers with 12
accumulators). Consecutive work-groups walk the row tiles of one column panel, so the
``Bp`` panel stays in cache while ``Ap`` panels stream; the thread pool splits the tiles
into contiguous ranges (:func:`spread` spreads small launches over the threads).
"""

from __future__ import annotations

import functools

from accy.families import Candidate, host_like
from accy.kernel import KernelBuilder, call, fma

from accy_kernels._common import ceil_div, groups_for
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem

__all__ = ["blocked_kernel", "candidates", "pack_kernel", "plan_blocked", "simd_lanes", "spread"]

PACK_WG = 256


def simd_lanes(backend, dtype: str) -> int:
    """Vector lanes of ``dtype`` on the host (``simd512`` / ``simd256`` features; else 4)."""
    feats = backend.capabilities().features
    bits = 512 if "simd512" in feats else 256 if "simd256" in feats else 128
    return max(2, bits // (64 if dtype in ("f64", "i64") else 32))


@functools.cache
def pack_kernel(dtype: str, width: int):
    """Pack an operand into k-major panels of ``width`` rows (A) or columns (B).

    Buffers (packed: write, src: read); scalars total, rows, k, kp, tiles (i32), offset,
    s_batch, s_row, s_k (i64: element strides). Element ``gid`` of the packed array is
    ``src[b, t*width + r, p]`` (zero outside ``rows x k``) with ``gid = ((b*tiles + t)*kp +
    p)*width + r``.
    """
    kb = KernelBuilder(f"matmul_pack_{dtype}_w{width}_wg{PACK_WG}", PACK_WG)
    out, src = kb.buffer("packed", dtype, "write"), kb.buffer("src", dtype, "read")
    total, rows, k = kb.scalar("total", "i32"), kb.scalar("rows", "i32"), kb.scalar("k", "i32")
    kp, tiles = kb.scalar("kp", "i32"), kb.scalar("tiles", "i32")
    off, sb, sr, sk = (kb.scalar(n, "i64") for n in ("offset", "s_batch", "s_row", "s_k"))
    g = kb.global_id()
    with kb.if_(g < total):
        r = kb.let("r", g % width)
        t = kb.let("t", g / width)
        p = kb.let("p", t % kp)
        t2 = kb.let("t2", t / kp)
        row = kb.let("row", (t2 % tiles) * width + r)
        b = kb.let("b", t2 / tiles)
        with kb.if_((row < rows) & (p < k)):
            idx = off + b.cast("i64") * sb + row.cast("i64") * sr + p.cast("i64") * sk
            kb.store(out, g, src[idx])
        with kb.else_():
            kb.store(out, g, kb.const(0, dtype))
    return kb.build()


@functools.cache
def blocked_kernel(dtype: str, mr: int, lanes: int, nv: int, ku: int, pack_a: bool = True,
                   pack_b: bool = True, epilogue: Epilogue = NO_EPILOGUE, split: bool = True):
    """The ``MR x (lanes*nv)`` tile kernel (see the module docstring).

    Buffers (c: write, a, b, *epilogue buffers): ``a``/``b`` packed panels (``pack_a``,
    ``pack_b``) or the operands themselves (``A`` with unit ``p`` stride, rows clamped to
    ``m - 1``; ``B`` with unit ``j`` stride and ``n`` a multiple of ``NR``). Scalars m, n,
    k, tiles_m, tiles_n, tiles, stride (i32), a_off, a_sb, a_si, b_off, b_sb, b_sp (i64).
    Packed: ``a_sb``/``b_sb`` are the elements of one batch's panels (0: shared by every
    batch), the other strides unused.
    """
    nr = lanes * nv
    out_dtype = epilogue.out_dtype or dtype
    pk = ("p" if pack_a else "d") + ("p" if pack_b else "d")
    pk += "" if split else "g"
    name = f"matmul_blocked_{dtype}_{mr}x{nr}_l{lanes}_ku{ku}_{pk}{epilogue.tag()}"
    kb = KernelBuilder(name, lanes)
    c = kb.buffer("c", out_dtype, "write")
    a, b = kb.buffer("a", dtype, "read"), kb.buffer("b", dtype, "read")
    for bname, bdt in epilogue.buffers:
        kb.buffer(bname, bdt, "read")
    m, n, k = kb.scalar("m", "i32"), kb.scalar("n", "i32"), kb.scalar("k", "i32")
    tm, tn = kb.scalar("tiles_m", "i32"), kb.scalar("tiles_n", "i32")
    tiles, stride = kb.scalar("tiles", "i32"), kb.scalar("stride", "i32")
    a_off, a_sb, a_si = (kb.scalar(x, "i64") for x in ("a_off", "a_sb", "a_si"))
    b_off, b_sb, b_sp = (kb.scalar(x, "i64") for x in ("b_off", "b_sb", "b_sp"))
    g, lid = kb.group_id(), kb.local_id()
    with kb.if_((g % stride == 0) & (g / stride < tiles)):
        t = kb.let("mm_t", g / stride)
        per = kb.let("mm_per", tm * tn)
        bt = kb.let("mm_b", t / per)
        rem = kb.let("mm_rem", t % per)
        jt, it = kb.let("mm_jt", rem / tm), kb.let("mm_it", rem % tm)
        k64 = kb.let("mm_k", k.cast("i64"))
        if pack_a:  # element (r, p) at a_rows[0] + p*mr + r
            a_rows = [kb.let("mm_abase", bt.cast("i64") * a_sb + it.cast("i64") * k64 * mr)]
            a_step = kb.const(mr, "i64")
        else:
            base = a_off + bt.cast("i64") * a_sb
            a_rows = [kb.let(f"mm_arow{r}", base + call("min", it * mr + r, m - 1).cast("i64")
                             * a_si) for r in range(mr)]
            a_step = kb.const(1, "i64")  # unit k stride: constant offsets from each row
        if pack_b:  # element (p, c) at bbase + p*nr + c
            bbase = kb.let("mm_bbase", bt.cast("i64") * b_sb + jt.cast("i64") * k64 * nr)
            b_step = kb.const(nr, "i64")
        else:
            bbase = kb.let("mm_bbase", b_off + bt.cast("i64") * b_sb + jt.cast("i64") * nr)
            b_step = b_sp
        zero = kb.const(0, dtype)
        acc = [[kb.let(f"mm_acc{r}_{v}", zero) for v in range(nv)] for r in range(mr)]

        def step(p, unroll: int, tag: str) -> None:
            for u in range(unroll):
                brow = bbase + (p + u) * b_step + lid.cast("i64")
                bv = [kb.let(f"mm_b{tag}{u}_{v}", b[brow + v * lanes]) for v in range(nv)]
                for r in range(mr):
                    addr = a_rows[0] + (p + u) * a_step + r if pack_a else \
                        a_rows[r] + (p + u) * a_step
                    a_r = kb.let(f"mm_a{tag}{u}_{r}", a[addr])
                    for v in range(nv):
                        kb.assign(acc[r][v], fma(a_r, bv[v], acc[r][v]))
            kb.barrier()

        kmain = kb.let("mm_kmain", (k64 / ku) * ku)
        with kb.for_("mm_p", kb.const(0, "i64"), kmain, ku) as p:
            step(p, ku, "m")
        if ku > 1:
            with kb.for_("mm_q", kmain, k64) as q:
                step(q, 1, "r")
        i0, j0 = kb.let("mm_i0", it * mr), kb.let("mm_j0", jt * nr)
        rows = [kb.let(f"mm_crow{r}", (bt * m + i0 + r).cast("i64") * n.cast("i64"))
                for r in range(mr)]
        _store_tile(kb, c, epilogue, acc, bt, i0, j0, m, n, lid, rows, lanes, split)
    return kb.build()


def _store_tile(kb, c, epilogue, acc, bt, i0, j0, m, n, lid, rows, lanes, split) -> None:
    """Store the tile. ``split``: whole tiles store without per-element bounds checks — the
    barriers make the branch a work-group-level one, each side its own work-item loop
    (host targets only: LLVM's SPIR-V backend misplaces the code SimplifyCFG hoists out of
    such a branch, after its ``OpSelectionMerge``). The stores stay scalar (LLVM neither
    vectorizes the lane loop nor SLP-packs it after unrolling): a cost of ``MR x NR``
    stores per tile, small against ``k`` steps of the microkernel."""
    mr, nv = len(acc), len(acc[0])

    def guarded() -> None:
        for r in range(mr):
            for v in range(nv):
                i, j = i0 + r, j0 + v * lanes
                _store(kb, c, epilogue, acc[r][v], bt, i, j, m, n, (i < m) & (j + lid < n),
                       lid, rows[r])

    if not split:
        guarded()
        return
    with kb.if_((i0 + mr <= m) & (j0 + nv * lanes <= n)):
        for r in range(mr):
            for v in range(nv):
                _store(kb, c, epilogue, acc[r][v], bt, i0 + r, j0 + v * lanes, m, n, None,
                       lid, rows[r])
        kb.barrier()
    with kb.else_():
        guarded()
        kb.barrier()


def _store(kb: KernelBuilder, c, epilogue: Epilogue, acc, b, i, j, m, n, cond,
           lane=None, row=None) -> None:
    """``if cond: C[b, i, j] = epilogue(acc)`` (row-major ``(batch, m, n)``; ``cond``
    None: in bounds, stored unconditionally; ``lane``: the column is ``j + lane``; ``row``:
    ``(b*m + i) * n`` precomputed, i64).

    The address and the stored value are computed before the branch (the epilogue at
    ``(min(i, m-1), min(j, n-1))`` so that its loads stay in bounds), leaving only the
    store inside it: LLVM's SPIR-V backend misplaces instructions of a branch's body that
    end up in its header (after ``OpSelectionMerge``), which spirv-val rejects.
    """
    if lane is None:
        idx = kb.let(kb.fresh("mm_c"), (b * m + i) * n + j)
    else:  # 64-bit, uniform part + lane: consecutive lanes are consecutive addresses
        row = (b * m + i).cast("i64") * n.cast("i64") if row is None else row
        idx = kb.let(kb.fresh("mm_c"), row + j.cast("i64") + lane.cast("i64"))
        j = j + lane
    if epilogue.fn is not None and cond is not None:
        i, j = call("min", i, m - 1), call("min", j, n - 1)
    stmts, value = epilogue.apply(acc.expr, b.expr, i.expr, j.expr)
    for s in stmts:
        kb._emit(s)
    if cond is None:  # known in bounds
        kb.store(c, idx, value)
        return
    val = kb.let(kb.fresh("mm_v"), value) if epilogue.fn is not None else acc
    with kb.if_(cond):
        kb.store(c, idx, val)


def spread(backend, tiles: int, workgroup_size: int) -> int:
    """Stride between the work-groups that compute tiles: on host-memory backends a launch
    of at least 65536 work-items, so the thread pool splits it (idle groups return at once;
    as :func:`accy.families.tile_geometry` does for work-items); 1 elsewhere."""
    if not host_like(backend) or tiles <= 0:
        return 1
    return max(1, ceil_div(65536, tiles * workgroup_size))


def candidates() -> tuple[Candidate, ...]:
    """``mr``, vectors per row ``nv``, unroll ``ku``; ``lanes`` comes from the host."""
    return tuple(Candidate(0, 1, (("ku", ku), ("mr", mr), ("nv", nv)))
                 for mr, nv, ku in ((6, 2, 4), (4, 3, 4), (4, 2, 4), (6, 2, 1), (8, 1, 4)))


def plan_blocked(plan, backend, prob: MatmulProblem, a, b, out, candidate: Candidate,
                 epilogue: Epilogue = NO_EPILOGUE, extra=()) -> None:
    """Append the pack and tile launches of ``prob`` to ``plan`` (slots ``a``, ``b``,
    ``out``, epilogue input slots ``extra``).

    ``A`` is read in place when its ``k`` stride is 1 (rows are independent streams), else
    packed; ``B`` is packed unless its rows
    are unit-stride, ``n`` is a multiple of ``NR`` and it is reused little (at most 4 row
    tiles) or fits in L2 (256 KiB): packed panels avoid the cache-set conflicts of
    power-of-two row strides. Candidate option ``pack_a`` packs ``A`` too.
    """
    dt = prob.dtype
    lanes = simd_lanes(backend, dt)
    mr, nv, ku = (int(candidate.option(k, d)) for k, d in (("mr", 6), ("nv", 2), ("ku", 4)))
    nr = lanes * nv
    tm, tn = ceil_div(prob.m, mr), ceil_div(prob.n, nr)
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
        _pack(plan, ap, a, a_bat, tm, mr, prob.m, k, prob.a_offset, prob.a_strides)
        a, a_sc = ap, [("i64", 0), ("i64", tm * k * mr if a_bat > 1 else 0), ("i64", 0)]
    if pack_b:
        bp = plan.temp(dt, b_bat * tn * k * nr)
        sb = prob.b_strides
        _pack(plan, bp, b, b_bat, tn, nr, prob.n, k, prob.b_offset, (sb[0], sb[2], sb[1]))
        b, b_sc = bp, [("i64", 0), ("i64", tn * k * nr if b_bat > 1 else 0), ("i64", 0)]
    tiles = prob.batch * tm * tn
    stride = spread(backend, tiles, lanes)
    kernel = blocked_kernel(dt, mr, lanes, nv, ku, pack_a, pack_b, epilogue, host_like(backend))
    plan.launch(kernel, tiles * stride, [out, a, b, *extra],
                [("i32", prob.m), ("i32", prob.n), ("i32", k), ("i32", tm), ("i32", tn),
                 ("i32", tiles), ("i32", stride), *a_sc, *b_sc])


def _pack(plan, dst, src, batches, tiles, width, rows, k, off, strides) -> None:
    total = batches * tiles * k * width
    if total == 0:
        return
    sb, sr, sk = strides
    plan.launch(pack_kernel(dst.dtype, width), groups_for(total, PACK_WG), [dst, src],
                [("i32", total), ("i32", rows), ("i32", k), ("i32", k), ("i32", tiles),
                 ("i64", off), ("i64", sb), ("i64", sr), ("i64", sk)])


