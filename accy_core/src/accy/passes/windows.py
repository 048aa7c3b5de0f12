"""Window updates: a ``map`` region that rewrites one box of an array and keeps the rest.

The frontend traces ``x.at[a:b, c:d].set(e)`` and ``x[a:b, c:d] = e`` (contiguous slices)
as ``select(mask, pad(...pad(e)), x)`` with a constant box ``mask`` (:mod:`accy.frontend.
setitem`); after fusion that is one region over all of ``x``. :func:`find_window` recognises
it: the region's output equals its input ``base`` except on the box ``start .. start +
shape``, where it is ``value`` (the pads' source).

When the memory plan writes such a region in place over ``base`` (:mod:`accy.passes.
loop_in_place` arranges it for carried loop values), its kernel only has to visit the box:
:func:`emit_window` writes ``out0[start + w] = value[w]`` for the box elements ``w`` and
leaves the rest of the buffer as it is, so a stencil step costs the box and no copy. It is
safe when the region reads ``base`` only where it writes the same element
(:func:`reads_base_in_place`): reading a neighbour would race with the neighbour's write.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accy.ir import Operation, Value

__all__ = ["Window", "emit_window", "find_window", "reads_base_in_place", "rows_worth_it"]


@dataclass(frozen=True)
class Window:
    """A box update: the region yields ``base`` with ``value`` at ``start .. start+shape``.

    Attributes:
        base: index of the region input (block argument) the output copies outside the box.
        start: first element of the box per axis.
        shape: extent of the box per axis (``value``'s shape).
        value: the value written on the box (inside the region's block).
    """

    base: int
    start: tuple[int, ...]
    shape: tuple[int, ...]
    value: Value
    #: the ``tensor.dynamic_update_slice`` whose offsets (computed or loaded by the kernel,
    #: clamped as that op clamps them) place the box at run time; ``start`` is then zeros
    dynamic: Operation | None = None


def _constant_of(region: Operation, v: Value) -> np.ndarray | None:
    """The array of a constant ``v``, else None: a ``tensor.constant`` (inside the block or
    bound to a block argument) seen through ``broadcast_to`` / ``reshape``."""
    block = region.regions[0].block
    if v in block.args:
        v = region.operands[block.args.index(v)]
    op = v.defining_op
    if op is None:
        return None
    if op.name == "tensor.constant":
        return np.asarray(op.attrs["value"])
    if op.name in ("tensor.broadcast_to", "tensor.reshape"):
        src = _constant_of(region, op.operands[0])
        if src is None:
            return None
        shape = v.type.shape
        return np.broadcast_to(src, shape) if op.name == "tensor.broadcast_to" \
            else src.reshape(shape)
    return None


def _box(mask: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(start, shape) when ``mask`` is True exactly on one non-empty box, else None."""
    if mask.dtype != np.bool_ or not mask.any():
        return None
    where = np.nonzero(mask)
    start = tuple(int(w.min()) for w in where)
    stop = tuple(int(w.max()) + 1 for w in where)
    shape = tuple(b - a for a, b in zip(start, stop, strict=True))
    if int(mask.sum()) != math.prod(shape):
        return None
    return start, shape


def find_window(region: Operation) -> Window | None:
    """The :class:`Window` of a ``map`` region, or None (see the module docstring)."""
    if region.attrs.get("kind", "map") != "map":
        return None
    block = region.regions[0].block
    out = block.ops[-1].operands[0]
    sel = out.defining_op
    if sel is not None and sel.name == "tensor.dynamic_update_slice" \
            and out.type == region.results[0].type:
        return _dynamic_window(block, sel)
    if sel is None or sel.name != "arith.select" or out.type != region.results[0].type:
        return None
    m, new, old = sel.operands
    if old not in block.args or old.type != out.type or m.type.shape != out.type.shape:
        return None
    mask = _constant_of(region, m)
    if mask is None or mask.shape != out.type.shape:
        return None
    box = _box(mask)
    if box is None:
        return None
    low = [0] * out.type.rank
    v = new
    while v.defining_op is not None and v.defining_op.name == "tensor.pad":
        pad = v.defining_op
        low = [a + b for a, b in zip(low, pad.attrs["low"], strict=True)]
        v = pad.operands[0]
    start, shape = box
    if tuple(low) != start or v.type.shape != shape or v.type.dtype != out.type.dtype:
        return None
    return Window(block.args.index(old), start, shape, v)


def _dynamic_window(block, upd: Operation) -> Window | None:
    """``x.at[i].set(v)`` with a traced ``i`` (a loop's induction variable): the box is the
    update's shape at the op's clamped offsets."""
    base, value = upd.operands[0], upd.operands[1]
    if base not in block.args or base.type != upd.results[0].type \
            or value.type.num_elements == 0:
        return None
    return Window(block.args.index(base), (0,) * base.type.rank, value.type.shape, value, upd)


def _paths_through(v: Value, target: Value, ok: Callable[[Operation], bool]) -> bool:
    """Every path from ``v`` reaches ``target`` through ops that ``ok`` accepts."""
    todo, seen = [v], set()
    while todo:
        x = todo.pop()
        if x is target:
            continue
        if not x.users:
            return False
        for user in x.users:
            if not ok(user):
                return False
            if user not in seen:
                seen.add(user)
                todo.extend(user.results)
    return True


def _elementwise_path(v: Value, target: Value, shape: tuple[int, ...]) -> bool:
    """Every path from ``v`` runs through elementwise ops of ``shape`` into ``target``."""
    return _paths_through(v, target, lambda op: op.op_def.has("elementwise")
                          and op.results[0].type.shape == shape)


def reads_base_in_place(region: Operation, win: Window) -> bool:
    """Whether the region reads its ``base`` input only at the element it writes: as the
    kept part of the select, or through a slice at the box (``x[a:b] = f(x[a:b], ...)``)
    whose every path to the written value is elementwise."""
    block = region.regions[0].block
    base = block.args[win.base]
    if win.dynamic is not None:
        return _reads_dynamic_box_in_place(region, base, win)
    sel = block.ops[-1].operands[0].defining_op
    for user in base.users:
        if user is sel and sel.operands[2] is base and sel.operands[0] is not base \
                and sel.operands[1] is not base:
            continue
        if user.name == "tensor.slice" and _slices_to_box(user, (0,) * len(win.start), win):
            continue
        return False
    return True


def _reads_dynamic_box_in_place(region: Operation, base: Value, win: Window) -> bool:
    """A dynamic window's base is the updated tensor, and otherwise read only through
    ``dynamic_slice`` s of the same box (``x.at[i].set(f(x[i]))``) whose every path to the
    written value keeps the element order (elementwise ops and reshapes)."""
    upd = win.dynamic
    if upd.operands[0] is not base or upd.operands.count(base) != 1:
        return False
    n = math.prod(win.shape)
    for user in base.users:
        if user is upd:
            continue
        if user.name != "tensor.dynamic_slice" or user.operands.count(base) != 1 \
                or not _same_dynamic_box(region, user, upd) \
                or not _order_kept(user.results[0], win.value, n):
            return False
    return True


def _same_dynamic_box(region: Operation, sl: Operation, upd: Operation) -> bool:
    """Whether ``sl`` (a ``dynamic_slice``) reads exactly the box ``upd`` writes: the same
    sizes and, on every axis the box does not span, the same offset value."""
    shape = upd.operands[1].type.shape
    if tuple(sl.attrs["sizes"]) != tuple(shape):
        return False
    args = region.regions[0].block.args

    def outer(v: Value) -> Value:
        return region.operands[args.index(v)] if v in args else v

    extents = upd.operands[0].type.shape
    return all(size == extent or outer(a) is outer(b)
               for a, b, size, extent in zip(sl.operands[1:], upd.operands[2:], shape, extents,
                                             strict=True))


def _order_kept(v: Value, target: Value, n: int) -> bool:
    """Every path from ``v`` reaches ``target`` through elementwise ops and reshapes of
    ``n`` elements: element ``j`` (row-major) of ``target`` reads element ``j`` of ``v``."""
    return _paths_through(v, target, lambda op: (
        op.name == "tensor.reshape" or op.op_def.has("elementwise"))
        and op.results[0].type.num_elements == n
        and all(o.type.num_elements == n for o in op.operands))


def _slices_to_box(sl: Operation, offset: tuple[int, ...], win: Window) -> bool:
    """A chain of slices (``x[1:, :][:, 1:]``) from the base that ends exactly on the box,
    then reaches the written value through elementwise ops only."""
    at = tuple(a + b for a, b in zip(offset, sl.attrs["start"], strict=True))
    r = sl.results[0]
    if r.type.shape == win.shape:
        return at == win.start and _elementwise_path(r, win.value, win.shape)
    return bool(r.users) and all(u.name == "tensor.slice" and _slices_to_box(u, at, win)
                                 for u in r.users)


#: a one-axis box longer than this is split over work-items instead of one serial row
MAX_SERIAL_ROW = 8192
#: shortest last axis that a host map kernel runs as rows (shorter: one item per element)
MIN_ROW = 8


def rows_worth_it(shape: tuple[int, ...]) -> bool:
    """Whether a host map over ``shape`` should run one row per work-item: two or more axes,
    a last axis of at least :data:`MIN_ROW`, and enough rows to share out (or short ones)."""
    if len(shape) < 2 or shape[-1] < MIN_ROW:
        return False
    return math.prod(shape[:-1]) >= 8 or shape[-1] <= MAX_SERIAL_ROW


def emit_window(em, win: Window, out: Value, rows: bool) -> tuple[list, int, int]:
    """Statements, work-group size and work-groups of an in-place window kernel.

    ``em`` is the outliner's emitter (``value_at``, ``nested``, ``stmts``). ``rows`` (host
    targets): one work-item per row of the box with a serial loop along its contiguous last
    axis, so every index is affine in the loop variable (no div/mod per element) and the
    loop vectorizes; otherwise (GPUs) one work-item per box element.
    """
    from accy.kernel import Binary, For, If, Let, Store, ThreadId, Var
    from accy.passes.kernel_exprs import IDX, Index, const_i

    full = out.type.shape
    lead_shape, width = win.shape[:-1], win.shape[-1]
    n_rows = math.prod(lead_shape)
    gid = Var("gid", IDX)

    starts: list = list(win.start)

    def place() -> None:
        """The run-time starts of a dynamic box (once per work-item, before its loop)."""
        if win.dynamic is not None:
            from accy.passes.dynamic_exprs import clamped_start_exprs

            starts[:] = clamped_start_exprs(em, win.dynamic, 2, win.shape)

    def store(comps: tuple) -> None:
        val = em.value_at(win.value, Index(win.shape, comps=comps))
        at = Index(full, comps=tuple(
            c if isinstance(s, int) and not s else
            Binary("add", c, const_i(s) if isinstance(s, int) else s, IDX)
            for c, s in zip(comps, starts, strict=True)))
        em.stmts.append(Store("out0", at.linear, val))

    def guarded(n: int, ws: int, body: Callable[[], None]) -> list:
        inner = em.nested(body)
        head = [Let("gid", ThreadId("global"))]
        if n % ws == 0:
            return head + inner
        return head + [If(Binary("lt", gid, const_i(n), "bool"), tuple(inner))]

    if rows and width > 1 and (lead_shape or width <= MAX_SERIAL_ROW):
        def row() -> None:
            place()
            lead = Index(lead_shape, linear=gid).comps if lead_shape else ()
            inner = em.nested(lambda: store((*lead, Var("j", IDX))))
            em.stmts.append(For("j", const_i(0), const_i(width), const_i(1), tuple(inner)))

        ws = 1  # the CPU pool splits the rows by work-group
        return guarded(n_rows, ws, row), ws, n_rows
    n = math.prod(win.shape)
    ws = min(256, max(32, 1 << max(0, (n - 1).bit_length())))
    def element() -> None:
        place()
        store(Index(win.shape, linear=gid).comps)

    return guarded(n, ws, element), ws, -(-n // ws)
