"""Packing ``matmul`` operands into k-major panels (Goto & van de Geijn 2008, sec. 5: the
packed ``A`` block and ``B`` slivers of :mod:`accy_kernels.matmul_blocked`).

Three kernels: :func:`pack_kernel` (any target and strides: one work-group per panel, or
``group`` neighbouring panels), on host targets for a source with unit ``k`` stride (the
``B`` of ``x @ W.T``) :func:`transpose_kernel` and for one with unit row stride (a
row-major ``B``) :func:`slab_kernel`, which walks ``prows`` whole source rows at a time
(``prows`` sequential streams the hardware prefetcher follows, each panel written in
``prows x width`` contiguous runs) instead of ``width``-wide runs of every row, 4 KiB apart
for a 1024-wide f32 ``B``: measured single-threaded for a 1024^2 f32 ``B``, net of the
launch, 0.30 ms with 8-panel groups of :func:`pack_kernel`, 0.25 ms with slabs of 8 rows
(a numpy copy of the same bytes: about 0.2 ms).
"""

from __future__ import annotations

import functools

from accy.families import host_like
from accy.kernel import KernelBuilder, call, where

from accy_kernels._common import ceil_div
from accy_kernels.matmul_host import active, host_threads, simd_lanes, spread

__all__ = ["PACK_GROUP", "SLAB_ROWS", "pack_kernel", "plan_pack", "slab_kernel",
           "transpose_kernel"]

#: panels one work-group of :func:`pack_kernel` copies on host targets (``unit`` rows / any:
#: 8 x 64-byte runs of each source row per visit; 4 KiB-strided rows cost a TLB miss per
#: visit: measured 0.87 ms with 1 panel, 0.69 with 4, 0.54 with 8, 0.60 with 16 for a
#: 1024^2 f32 ``B``, before :func:`slab_kernel` took over unit row strides)
PACK_GROUP = 8

#: source rows one work-group of :func:`slab_kernel` copies (measured, 1024^2 f32, one
#: thread: 0.37 ms with 4, 0.35 with 8, 0.44 with 16, 0.73 with 32)
SLAB_ROWS = 8


@functools.cache
def pack_kernel(dtype: str, width: int, unit: str = "rows", lanes: int = 8,
                split: bool = False, group: int = 1, guard: bool = True):
    """Pack an operand into k-major panels of ``width`` rows (A) or columns (B).

    Buffers (packed: write, src: read); scalars rows, k, tiles, stride (i32), offset,
    s_batch, s_row, s_k (i64: element strides). Element ``((b*tiles + t)*k + p)*width + r``
    of the packed array is ``src[b, t*width + r, p]`` (zero for rows past ``rows``).
    Work-group ``g`` (with ``g % stride == 0``: :func:`spread`) packs panel ``g / stride``
    (``b*tiles + t``), walking ``p`` at work-group level (``unit`` rows / any: panels
    ``group * (g / stride) ...`` of one batch, ``ceil(tiles / group)`` groups per batch,
    each ``p`` copying ``group`` neighbouring runs of the source row):

    - ``unit="rows"`` (``s_row`` is 1, e.g. ``B`` row-major; ``width`` work-items): one
      contiguous run of ``width`` elements per ``p``, copied with vector loads and stores
      (``unit="any"``: the same with a run-time ``s_row``);
    - ``unit="k"`` (``s_k`` is 1, e.g. ``A`` row-major; ``lanes`` work-items): chunks of
      ``lanes`` consecutive ``p`` of each of the ``width`` rows (vector loads), stored
      interleaved; the last partial chunk behind a bound check.

    No division per element (the former kernel's one work-item per element spent most of a
    pack on index arithmetic: 9 ns per element, as long as the product's k-block at 1024).
    ``split`` (host targets, see :func:`accy_kernels.matmul_micro.store_tile`): whole
    panels copy without the row clamp, so that ``unit="rows"`` loads are vector loads (the
    clamped form compiles to ``width`` scalar loads per ``p``: 1.8 ms for a 1024^2 f32
    ``B``). ``guard`` False
    (device targets, where :func:`spread` is 1): no branch on the group id around the
    barriers (see :func:`accy_kernels.matmul_host.active`).
    """
    wg = lanes if unit == "k" else width
    if unit == "k":
        group = 1
    name = f"matmul_pack_{dtype}_w{width}_{unit}{wg}{'s' if split else ''}" + \
        (f"_g{group}" if group > 1 else "") + ("" if guard else "_u")
    kb = KernelBuilder(name, wg)
    out, src = kb.buffer("packed", dtype, "write"), kb.buffer("src", dtype, "read")
    rows, k = kb.scalar("rows", "i32"), kb.scalar("k", "i32")
    tiles, stride = kb.scalar("tiles", "i32"), kb.scalar("stride", "i32")
    off, sb, sr, sk = (kb.scalar(n, "i64") for n in ("offset", "s_batch", "s_row", "s_k"))
    g, lid = kb.group_id(), kb.local_id()
    zero = kb.const(0, dtype)
    with active(kb, g % stride == 0, guard):
        k64 = kb.let("pk_k", k.cast("i64"))
        if unit != "k":
            gpb = kb.let("pk_gpb", (tiles + (group - 1)) / group)  # groups per batch
            gp = kb.let("pk_gp", g / stride)
            b = kb.let("pk_b", gp / gpb)
            t_first = kb.let("pk_tf", (gp % gpb) * group)
            base = kb.let("pk_base", off + b.cast("i64") * sb)
            dst0 = kb.let("pk_dst", (b * tiles + t_first).cast("i64") * k64 * width)
            kw = kb.let("pk_kw", k64 * width)

            def copy(clamped: bool) -> None:
                # addresses from lid inside the loop's region: a let of a lid-dependent
                # value before the loop would become a per-work-item array (a gather)
                with kb.for_(kb.fresh("pk_p"), kb.const(0, "i64"), k64) as p:
                    for q in range(group):
                        row = (t_first + q) * width + lid
                        rowc = (call("min", row, rows - 1) if clamped else row).cast("i64")
                        v = src[base + (rowc if unit == "rows" else rowc * sr) + p * sk]
                        at = dst0 + kw * q + p * width + lid.cast("i64")
                        if not clamped:
                            kb.store(out, at, v)
                            continue
                        with kb.if_(t_first + q < tiles):  # a last group's missing panels
                            kb.store(out, at, where(row < rows, v, zero))
                    kb.barrier()

            if not split:
                copy(True)
            else:  # whole panels: unclamped rows, consecutive lanes load consecutively
                with kb.if_((t_first + group) * width <= rows):
                    copy(False)
                with kb.else_():
                    copy(True)
        else:
            panel = kb.let("pk_panel", g / stride)
            t, b = kb.let("pk_t", panel % tiles), kb.let("pk_b", panel / tiles)
            dst = kb.let("pk_dst", panel.cast("i64") * k64 * width)
            base = kb.let("pk_base", off + b.cast("i64") * sb)
            rbase = []
            for r in range(width):
                row = t * width + r
                rbase.append((kb.let(f"pk_ok{r}", row < rows), kb.let(
                    f"pk_src{r}", base + call("min", row, rows - 1).cast("i64") * sr)))
            kfull = kb.let("pk_kfull", (k64 / lanes) * lanes)

            def chunk(p) -> None:
                for r, (ok, sbase) in enumerate(rbase):
                    kb.store(out, dst + p * width + r, where(ok, src[sbase + p], zero))

            with kb.for_("pk_p", kb.const(0, "i64"), kfull, lanes) as p0:
                chunk(p0 + lid.cast("i64"))
                kb.barrier()
            pt = kb.let("pk_pt", kfull + lid.cast("i64"))
            with kb.if_(pt < k64):
                chunk(pt)
    return kb.build()


@functools.cache
def slab_kernel(dtype: str, width: int, prows: int = SLAB_ROWS):
    """:func:`pack_kernel`'s layout for a source with unit row stride, on host targets.

    Same buffers and scalars (``s_row`` unused). Work-group ``g`` with ``g % stride == 0``
    copies source rows ``p0 <= p < p0 + prows`` of batch ``b`` (``g / stride`` is
    ``b * ceil(k / prows) + p0 / prows``) into every panel: a work-group-level loop over the
    whole panels, each step ``prows`` vector copies of ``width`` elements, then the last,
    partial panel (rows past ``rows`` zero) behind bounds checks. A last partial slab
    checks ``p < k`` per row.
    """
    kb = KernelBuilder(f"matmul_pack_{dtype}_w{width}_slab{prows}", width)
    out, src = kb.buffer("packed", dtype, "write"), kb.buffer("src", dtype, "read")
    rows, k = kb.scalar("rows", "i32"), kb.scalar("k", "i32")
    tiles, stride = kb.scalar("tiles", "i32"), kb.scalar("stride", "i32")
    off, sb, _sr, sk = (kb.scalar(n, "i64") for n in ("offset", "s_batch", "s_row", "s_k"))
    g, lid = kb.group_id(), kb.local_id()
    zero = kb.const(0, dtype)
    with kb.if_(g % stride == 0):
        slabs = kb.let("pk_slabs", (k + (prows - 1)) / prows)
        gi = kb.let("pk_gi", g / stride)
        b = kb.let("pk_b", gi / slabs)
        p0 = kb.let("pk_p0", ((gi % slabs) * prows).cast("i64"))
        k64 = kb.let("pk_k", k.cast("i64"))
        kw = kb.let("pk_kw", k64 * width)
        dst = kb.let("pk_dst", (b * tiles).cast("i64") * kw + p0 * width)
        base = kb.let("pk_base", off + b.cast("i64") * sb + p0 * sk)
        full = kb.let("pk_full", rows / width)

        def copy(whole: bool) -> None:
            def put(r, at, value) -> None:
                if whole:
                    kb.store(out, at, value)
                    return
                with kb.if_(p0 + r < k64):
                    kb.store(out, at, value)

            with kb.for_(kb.fresh("pk_q"), 0, full) as q:
                q64 = q.cast("i64")
                for r in range(prows):
                    put(r, dst + q64 * kw + r * width + lid.cast("i64"),
                        src[base + r * sk + q64 * width + lid.cast("i64")])
                kb.barrier()
            with kb.if_(full < tiles):  # the last, partial panel
                for r in range(prows):
                    j = full * width + lid
                    put(r, dst + full.cast("i64") * kw + r * width + lid.cast("i64"),
                        where(j < rows, src[base + r * sk + call("min", j, rows - 1).cast("i64")],
                              zero))
                kb.barrier()

        with kb.if_(p0 + prows <= k64):
            copy(True)
        with kb.else_():
            copy(False)
    return kb.build()


@functools.cache
def transpose_kernel(dtype: str, width: int, lanes: int):
    """:func:`pack_kernel`'s ``unit="k"`` layout (a source with unit ``k`` stride: ``B``
    of ``x @ W.T``) on host targets, ``width`` a multiple of ``lanes``.

    Same buffers and scalars; work-group ``g`` with ``g % stride == 0`` packs panel ``g /
    stride``, a ``width x chunk`` block (``chunk = 2 * lanes`` consecutive ``p``, 64 bytes
    of each source row) at a time through a work-group array: each source row's chunk is
    copied into the array with vector loads and stores, then each ``p`` of the block is
    written as one ``width``-wide panel row, read down a column of the array (strided
    loads from L1). :func:`pack_kernel` read the ``width`` rows ``lanes`` elements at a
    time straight into panel rows: every step touched ``width`` lines 4 KiB apart (one L1
    set for a 1024-wide f32 ``W``: 16 lines in 8 ways) and a 1024^2 f32 ``W.T`` took
    0.83 ms against 0.2 ms for the row-major copy. The ``k % chunk`` last ``p`` go through
    the array too, past ``k`` behind a bound check; rows past ``rows`` are zero.
    """
    chunk = 2 * lanes
    kb = KernelBuilder(f"matmul_pack_{dtype}_w{width}_kt{lanes}", lanes)
    out, src = kb.buffer("packed", dtype, "write"), kb.buffer("src", dtype, "read")
    rows, k = kb.scalar("rows", "i32"), kb.scalar("k", "i32")
    tiles, stride = kb.scalar("tiles", "i32"), kb.scalar("stride", "i32")
    off, sb, sr, _sk = (kb.scalar(n, "i64") for n in ("offset", "s_batch", "s_row", "s_k"))
    tmp = kb.shared("pk_blk", dtype, width * chunk)
    g, lid = kb.group_id(), kb.local_id()
    zero = kb.const(0, dtype)
    with kb.if_(g % stride == 0):
        panel = kb.let("pk_panel", g / stride)
        t, b = kb.let("pk_t", panel % tiles), kb.let("pk_b", panel / tiles)
        k64 = kb.let("pk_k", k.cast("i64"))
        dst = kb.let("pk_dst", panel.cast("i64") * k64 * width)
        base = kb.let("pk_base", off + b.cast("i64") * sb)
        srow = [kb.let(f"pk_src{r}", base + call("min", t * width + r, rows - 1).cast("i64")
                       * sr) for r in range(width)]
        keep = [kb.let(f"pk_ok{r}", t * width + r < rows) for r in range(width)]
        kfull = kb.let("pk_kfull", (k64 / chunk) * chunk)

        def block(p0, whole: bool) -> None:
            for r in range(width):  # row r's chunk into the array (vectors)
                for v in range(2):
                    p = p0 + (lid.cast("i64") + v * lanes)
                    val = src[srow[r] + (p if whole else call("min", p, k64 - 1))]
                    kb.shared_store(tmp, lid + (r * chunk + v * lanes), where(keep[r], val, zero))
            kb.barrier()
            for i in range(chunk):  # panel row p0 + i: a column of the array
                def put(i=i) -> None:
                    for h in range(width // lanes):
                        kb.store(out, dst + (p0 + i) * width + (lid.cast("i64") + h * lanes),
                                 tmp[(lid + h * lanes) * chunk + i])
                if whole:
                    put()
                else:
                    with kb.if_(p0 + i < k64):
                        put()
            kb.barrier()

        with kb.for_("pk_p", kb.const(0, "i64"), kfull, chunk) as p0:
            block(p0, True)
        with kb.if_(kfull < k64):
            block(kfull, False)
    return kb.build()


def plan_pack(plan, backend, dst, src, batches, tiles, width, rows, k, off, strides) -> None:
    """Append the pack of ``batches x tiles`` panels of ``width`` to ``plan`` (``strides``:
    batch, row, k element strides of the source; ``rows`` of them, ``k`` long): on host
    targets a :func:`slab_kernel` launch for a unit row stride, a :func:`transpose_kernel`
    one for a unit ``k`` stride (``width`` a multiple of the lanes), else
    :func:`pack_kernel`."""
    panels = batches * tiles
    if panels * k == 0:
        return
    sb, sr, sk = strides
    unit = "rows" if sr == 1 else "k" if sk == 1 else "any"
    lanes = simd_lanes(backend, dst.dtype)
    host = host_like(backend)
    work = 32 * panels * width * k  # a read and a write per element, memory-bound
    if host and unit == "rows":
        kernel = slab_kernel(dst.dtype, width)
        groups = batches * ceil_div(k, SLAB_ROWS)
        stride = spread(backend, groups, kernel.workgroup_size, work)
        plan.launch(kernel, groups * stride, [dst, src],
                    [("i32", rows), ("i32", k), ("i32", tiles), ("i32", stride),
                     ("i64", off), ("i64", sb), ("i64", sr), ("i64", sk)])
        return
    group = PACK_GROUP if host and unit != "k" and tiles >= PACK_GROUP * host_threads(backend) \
        else 1
    if host and unit == "k" and width % lanes == 0:
        kernel = transpose_kernel(dst.dtype, width, lanes)
    else:
        kernel = pack_kernel(dst.dtype, width, unit, lanes, host and unit != "k", group, host)
    groups = batches * ceil_div(tiles, group)
    stride = spread(backend, groups, kernel.workgroup_size, work)
    plan.launch(kernel, groups * stride, [dst, src],
                [("i32", rows), ("i32", k), ("i32", tiles), ("i32", stride),
                 ("i64", off), ("i64", sb), ("i64", sr), ("i64", sk)])
