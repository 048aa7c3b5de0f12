"""``lanes`` reductions: independent accumulators that host SIMD units vectorize.

The ``serial`` variant sums each output's reduced elements in one accumulator chain, which
LLVM may not vectorize (no fast-math: float adds are not reassociated) and which the CPU
backend's pool split by work-items. A ``lanes`` kernel views the reduced operand as
``[A, R, B]`` — kept leading axes, the (contiguous) reduced axes, kept trailing axes — and:

- **row** (``B == 1``): one work-item per output; :data:`ROW_LANES` accumulators take
  consecutive elements (``acc[j] += x[r + j]``, so the SLP vectorizer packs them into SIMD
  registers). Float sums run in blocks of ``ROW_LANES × BLOCK_STEPS`` elements: each block's
  lanes are combined pairwise and the block sums are added with Kahan compensation
  (Kahan 1965), so the error bound, ``O(BLOCK_STEPS + log2 ROW_LANES) · eps · Σ|x|``, is at
  most that of numpy's pairwise sum (blocks of 128 in 8 accumulators, then pairwise);
- **column** (``B > 1``): one work-item per ``V`` consecutive outputs along ``B`` (``V`` the
  candidate's ``items_per_thread``, :func:`column_width` by default), an array of ``V``
  accumulators to which each reduced row adds a contiguous run — the order numpy's own
  axis-0 reduction adds in (on host targets a long one is first split into partial sums
  over row blocks, :mod:`accy.passes.reduction_split`, which are then added in order).
  Each step adds :data:`COLUMN_ROWS` rows, in row order, to an accumulator loaded and
  stored once (8-wide SIMD over the columns), so the order is unchanged.

Max/min propagate NaN per lane and across lanes as ``numpy.max`` does. Non-contiguous
reduced axes and contractions have no ``lanes`` form (:func:`lanes_view` returns None).
"""

from __future__ import annotations

import math
from typing import Any

from accy.ir import Operation
from accy.kernel import (
    Assign,
    Binary,
    Const,
    Expr,
    For,
    If,
    Let,
    Select,
    SharedArray,
    SharedLoad,
    SharedStore,
    Stmt,
    Store,
    ThreadId,
    Var,
)
from accy.passes.kernel_exprs import IDX, Index, combine, const_i, identity

__all__ = ["BLOCK_STEPS", "COLUMN_BYTES", "COLUMN_ROWS", "COLUMN_WIDTH", "ROW_LANES",
           "column_width", "emit_lanes", "lanes_view"]

#: Accumulators of a row reduction (four 256-bit registers of f32, eight of f64; with 16
#: the SLP vectorizer packs float max/min lanes only two at a time).
ROW_LANES = 32
#: Steps of ROW_LANES elements per Kahan-compensated block of a float row sum.
BLOCK_STEPS = 8
#: Outputs per work-item of a column reduction at least (when the kept extent allows) ...
COLUMN_WIDTH = 512
#: ... and at most this many bytes of accumulators (4096 f32, 2048 f64: half of a 32 KiB L1
#: data cache, as numpy's own axis-0 loop keeps its output row). Each reduced row adds one
#: contiguous run of the width into them: [4096, 4096] f32 over axis 0 on one thread took
#: 1.5x numpy's CPU time in 2 KiB runs (512 wide), 1.2x in 8 KiB runs, 1.0-1.1x in whole
#: 16 KiB rows, as the prefetcher restarts at each run. Work for the pool's threads comes
#: from splitting the reduced rows (:mod:`accy.passes.reduction_split`), not from narrower
#: column blocks.
COLUMN_BYTES = 16384
#: Reduced rows per step of a column reduction: each step loads an accumulator once, adds
#: this many rows' elements to it in row order and stores it once (one row per step cost a
#: load and a store of the accumulator per element: [4096, 4096] f32 axis 0 in C on this
#: 2-core EPYC, 1 thread 3.6-3.8 ms per row, 2.9-3.0 ms by 4, 3.5 ms by 8; 2 threads 2.7 ms,
#: 1.8-2.0 ms by 4).
COLUMN_ROWS = 4


def lanes_view(root: Operation | None) -> tuple[int, int, int] | None:
    """``(A, R, B)`` of a ``reduce.*`` root whose reduced axes are contiguous, else None."""
    if root is None or root.name not in ("reduce.sum", "reduce.max", "reduce.min"):
        return None
    x = root.operands[0]
    shape = x.type.shape
    axes = sorted({a % x.type.rank for a in root.attrs["axes"]})
    if not axes or axes != list(range(axes[0], axes[-1] + 1)):
        return None
    lo, hi = axes[0], axes[-1] + 1
    return math.prod(shape[:lo]), math.prod(shape[lo:hi]), math.prod(shape[hi:])


def column_width(b: int, itemsize: int = 4) -> int:
    """Outputs per work-item of a column reduction with ``b`` trailing kept elements of
    ``itemsize`` bytes: ``b`` in as few blocks of at most :data:`COLUMN_BYTES` as it takes,
    of nearly equal widths rounded up to a multiple of 64 (the last block may be narrower),
    and at most ``b``. Each output's sum order never depends on it."""
    if b <= 0:
        return b
    widest = max(COLUMN_WIDTH, COLUMN_BYTES // itemsize)
    per_block = -(-b // -(-b // widest))
    return min(b, -(-per_block // 64) * 64)


def _x_index(x_shape: tuple[int, ...], lo: int, hi: int, a: Expr, r: Expr, b: Expr,
             rb: int, bb: int) -> Index:
    """Index of ``x[a, r, b]`` in the ``[A, R, B]`` view, with components and linear form."""
    comps = (Index(x_shape[:lo], linear=a).comps if lo else ()) \
        + Index(x_shape[lo:hi], linear=r).comps \
        + (Index(x_shape[hi:], linear=b).comps if hi < len(x_shape) else ())
    lin = Binary("add", Binary("mul", a, const_i(rb), IDX), r, IDX) if lo else r
    if hi < len(x_shape):
        lin = Binary("mul", lin, const_i(bb), IDX)
        if isinstance(b, Binary) and b.op == "add":  # b0 + j: (row + b0) + j, so the
            # inner loop adds its counter to one invariant base (row + (b0 + j) in i32
            # kept LLVM from proving the loads consecutive: scalar loads per element)
            lin = Binary("add", Binary("add", lin, b.a, IDX), b.b, IDX)
        else:
            lin = Binary("add", lin, b, IDX)
    return Index(x_shape, comps=comps, linear=lin)


def _combine(kind: str, acc: Expr, x: Expr) -> Expr:
    """``acc ⊕ x``; float max/min as two selects (``x`` where it wins, then ``x`` where it is
    NaN) — numpy's NaN propagation, in a form the SLP vectorizer packs at full width (the
    ``or`` of two compares that :func:`accy.passes.kernel_exprs.combine` uses is not)."""
    if kind == "sum" or acc.dtype not in ("f32", "f64"):
        return combine(kind, acc, x)
    d = acc.dtype
    wins = Select(Binary("gt" if kind == "max" else "lt", x, acc, "bool"), x, acc, d)
    return Select(Binary("ne", x, x, "bool"), x, wins, d)


def _tree(kind: str, vals: list[Expr], em: Any = None, out: list[Stmt] | None = None) -> Expr:
    """Pairwise combination of ``vals`` (lane j with lane j + half, recursively). With
    ``em`` and ``out``, each combined value is a ``Let`` appended to ``out``: float max/min
    use each operand several times (:func:`_combine`), and nested as one expression the
    32-lane tree's text grew 3**5-fold (a 400 KB kernel for a row max)."""
    while len(vals) > 1:
        half = len(vals) // 2
        vals = [_combine(kind, vals[i], vals[i + half]) for i in range(half)] + vals[2 * half:]
        if em is not None and out is not None and len(vals) > 1:
            names = [em.fresh("m") for _ in vals]
            out += [Let(n, v) for n, v in zip(names, vals, strict=True)]
            vals = [Var(n, v.dtype) for n, v in zip(names, vals, strict=True)]
    return vals[0]


def emit_lanes(em: Any, root: Operation, ws: int, width: int, n_out: int
               ) -> tuple[list[Stmt], int, int, tuple[SharedArray, ...]]:
    """Statements, work-group size, work-groups and shared arrays of a ``lanes`` kernel.

    ``em`` is the outliner's emitter (``value_at``, ``nested``, ``let``, ``stmts``);
    ``width`` the outputs per work-item of a column reduction (ignored for rows).
    """
    x = root.operands[0]
    kind = root.name.split(".")[1]
    dtype = root.results[0].type.dtype.value
    view = lanes_view(root)
    assert view is not None
    _, r_n, b_n = view
    axes = sorted({a % x.type.rank for a in root.attrs["axes"]})
    lo, hi = axes[0], axes[-1] + 1
    shape = x.type.shape
    column = b_n > 1
    if column:
        widest = max(COLUMN_WIDTH, COLUMN_BYTES // root.results[0].type.dtype.itemsize)
        width = max(1, min(width, widest))
    items = n_out // b_n * -(-b_n // width) if column else n_out
    t = Var("t", IDX)

    def load(a: Expr, r: Expr, b: Expr) -> Expr:
        return em.value_at(x, _x_index(shape, lo, hi, a, r, b, r_n, b_n))

    shared: tuple[SharedArray, ...] = ()
    if column:
        body = _column(em, kind, dtype, load, t, b_n, r_n, width, ws)
        shared = (SharedArray("lanes", dtype, ws * width),)
    elif kind != "sum" and dtype in ("f32", "f64") and r_n >= 2 * ROW_LANES:
        body = _row_array(em, kind, dtype, load, t, r_n, ws)
        shared = (SharedArray("lanes", dtype, ws * ROW_LANES),)
    else:
        body = _row(em, kind, dtype, load, t, r_n)
    stmts: list[Stmt] = [Let("t", ThreadId("global"))]
    stmts += body if items % ws == 0 else [If(Binary("lt", t, const_i(items), "bool"),
                                               tuple(body))]
    return stmts, ws, math.ceil(items / ws), shared


def _column(em: Any, kind: str, dtype: str, load, t: Var, b_n: int, r_n: int,
            width: int, ws: int) -> list[Stmt]:
    """``width`` consecutive outputs of a column reduction: a per-work-item array of
    accumulators, each reduced row adding a contiguous run into it (a loop the loop
    vectorizer turns into SIMD loads and adds, in numpy's order). The last work-item of a
    row of outputs may hold fewer than ``width``; it takes a guarded copy of the loops."""
    per_a = -(-b_n // width)
    a, b0, j, r = Var("a", IDX), Var("b0", IDX), Var("j", IDX), Var("r", IDX)
    lid = Var("lid", IDX)
    slot = Binary("add", Binary("mul", lid, const_i(width), IDX), j, IDX) if ws > 1 else j
    head: list[Stmt] = [
        Let("lid", ThreadId("local") if ws > 1 else const_i(0)),
        Let("a", Binary("div", t, const_i(per_a), IDX) if per_a > 1 else t),
        Let("b0", Binary("mul", Binary("rem", t, const_i(per_a), IDX) if per_a > 1 else const_i(0),
                         const_i(width), IDX)),
    ]
    b = Binary("add", b0, j, IDX)

    def loops(guard: bool) -> tuple[Stmt, ...]:
        def wrap(body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
            return (If(Binary("lt", b, const_i(b_n), "bool"), body),) if guard else body

        def step(rows: list[Expr]) -> None:
            acc: Expr = SharedLoad("lanes", slot, dtype)
            for row in rows:  # in row order: the same sum as one row per step
                acc = _combine(kind, acc, load(a, row, b))
            em.stmts.append(SharedStore("lanes", slot, acc))

        def run(rows: list[Expr]) -> For:
            return For("j", const_i(0), const_i(width), const_i(1),
                       wrap(tuple(em.nested(lambda: step(rows)))))

        init = For("j", const_i(0), const_i(width), const_i(1),
                   wrap((SharedStore("lanes", slot, identity(kind, dtype)),)))
        steps = r_n // COLUMN_ROWS
        rq = Var("rq", IDX)
        r0 = Binary("mul", rq, const_i(COLUMN_ROWS), IDX)
        block = [Binary("add", r0, const_i(q), IDX) if q else r0 for q in range(COLUMN_ROWS)]
        loops: list[Stmt] = [init]
        if steps:
            loops.append(For("rq", const_i(0), const_i(steps), const_i(1), (run(block),)))
        if steps * COLUMN_ROWS < r_n:
            loops.append(For("r", const_i(steps * COLUMN_ROWS), const_i(r_n), const_i(1),
                             (run([r]),)))
        o = Binary("add", Binary("mul", a, const_i(b_n), IDX), b, IDX)
        loops.append(For("j", const_i(0), const_i(width), const_i(1),
                         wrap((Store("out0", o, SharedLoad("lanes", slot, dtype)),))))
        return tuple(loops)

    if b_n % width == 0:
        return head + list(loops(False))
    full = Binary("le", Binary("add", b0, const_i(width), IDX), const_i(b_n), "bool")
    return head + [If(full, loops(False), loops(True))]


def _row(em: Any, kind: str, dtype: str, load, t: Var, r_n: int) -> list[Stmt]:
    k = ROW_LANES if r_n >= 2 * ROW_LANES else 1
    kahan = kind == "sum" and dtype in ("f32", "f64")
    steps = min(BLOCK_STEPS, max(1, r_n // k))  # a short row (split partials): one block
    blk = k * steps
    n_blk = r_n // blk if k > 1 else 0
    zero = const_i(0)
    out: list[Stmt] = []
    total, comp = em.fresh("total"), em.fresh("comp")
    out.append(Let(total, identity(kind, dtype)))
    if kahan:
        out.append(Let(comp, Const(0.0, dtype)))

    def add_total(s: Expr) -> list[Stmt]:
        if not kahan:
            return [Assign(total, _combine(kind, Var(total, dtype), s))]
        y, u = em.fresh("y"), em.fresh("u")
        yv, uv, tv, cv = Var(y, dtype), Var(u, dtype), Var(total, dtype), Var(comp, dtype)
        return [Let(y, Binary("sub", s, cv, dtype)), Let(u, Binary("add", tv, yv, dtype)),
                Assign(comp, Binary("sub", Binary("sub", uv, tv, dtype), yv, dtype)),
                Assign(total, uv)]

    if n_blk:
        lanes = [em.fresh("acc") for _ in range(k)]
        i = Var("i", IDX)
        blk_v = Var("blk", IDX)

        def step() -> None:
            r0 = em.let("r", Binary("add", Binary("mul", blk_v, const_i(blk), IDX),
                                    Binary("mul", i, const_i(k), IDX), IDX))
            for j, name in enumerate(lanes):
                r = Binary("add", r0, const_i(j), IDX) if j else r0
                em.stmts.append(Assign(name, _combine(kind, Var(name, dtype), load(t, r, zero))))

        block: list[Stmt] = [Let(n, identity(kind, dtype)) for n in lanes]
        block.append(For("i", const_i(0), const_i(steps), const_i(1), tuple(em.nested(step))))
        s = em.fresh("s")
        block.append(Let(s, _tree(kind, [Var(n, dtype) for n in lanes], em, block)))
        block += add_total(Var(s, dtype))
        out.append(For("blk", const_i(0), const_i(n_blk), const_i(1), tuple(block)))
    if n_blk * blk < r_n:  # the tail, one accumulator, then into the total
        tail = em.fresh("tail")
        r = Var("r", IDX)

        def tail_step() -> None:
            em.stmts.append(Assign(tail, _combine(kind, Var(tail, dtype), load(t, r, zero))))

        out.append(Let(tail, identity(kind, dtype)))
        out.append(For("r", const_i(n_blk * blk), const_i(r_n), const_i(1),
                       tuple(em.nested(tail_step))))
        out += add_total(Var(tail, dtype))
    out.append(Store("out0", t, Var(total, dtype)))
    return out


def _row_array(em: Any, kind: str, dtype: str, load, t: Var, r_n: int, ws: int) -> list[Stmt]:
    """Float max/min of a row: the lanes live in a per-work-item array updated by an inner
    loop over them, which the loop vectorizer turns into full-width SIMD compares and
    blends (as scalar lanes the SLP vectorizer packs them two at a time only)."""
    k = ROW_LANES
    lid = Var("lid", IDX)
    j, i = Var("j", IDX), Var("i", IDX)
    slot = Binary("add", Binary("mul", lid, const_i(k), IDX), j, IDX) if ws > 1 else j
    out: list[Stmt] = [Let("lid", ThreadId("local")) if ws > 1 else Let("lid", const_i(0))]
    out.append(For("j", const_i(0), const_i(k), const_i(1),
                   (SharedStore("lanes", slot, identity(kind, dtype)),)))

    def step() -> None:
        r = Binary("add", Binary("mul", i, const_i(k), IDX), j, IDX)
        acc = SharedLoad("lanes", slot, dtype)
        em.stmts.append(SharedStore("lanes", slot, _combine(kind, acc, load(t, r, const_i(0)))))

    inner = For("j", const_i(0), const_i(k), const_i(1), tuple(em.nested(step)))
    out.append(For("i", const_i(0), const_i(r_n // k), const_i(1), (inner,)))
    total = em.fresh("total")
    base = Binary("mul", lid, const_i(k), IDX) if ws > 1 else None

    def lane(q: int) -> Expr:
        at = const_i(q) if base is None else Binary("add", base, const_i(q), IDX)
        return SharedLoad("lanes", at, dtype)

    out.append(Let(total, _tree(kind, [lane(q) for q in range(k)], em, out)))
    if r_n % k:
        r = Var("r", IDX)

        def tail_step() -> None:
            em.stmts.append(Assign(total, _combine(kind, Var(total, dtype),
                                                   load(t, r, const_i(0)))))

        out.append(For("r", const_i(r_n // k * k), const_i(r_n), const_i(1),
                       tuple(em.nested(tail_step))))
    out.append(Store("out0", t, Var(total, dtype)))
    return out
