"""Kernel expressions of ``tensor.dynamic_slice`` / ``tensor.dynamic_update_slice``.

Each offset is an ``i32[]`` value the kernel computes or loads (one element, index 0),
clamped so the window lies inside the tensor (:mod:`accy.ir.ops.dynamic`); the load of an
update element uses a clamped index too, so no kernel reads out of bounds.
"""

from __future__ import annotations

from typing import Any

from accy.ir import Operation
from accy.kernel import Binary, Const, Expr, Select
from accy.passes.kernel_exprs import IDX, Index, const_i

__all__ = ["clamped_start_exprs", "dynamic_slice_expr", "dynamic_update_expr"]


def _b(op: str, a: Expr, b: Expr) -> Expr:
    return Binary(op, a, b, "bool" if op in ("lt", "ge", "and") else IDX)


def clamped_start_exprs(em: Any, op: Operation, first: int,
                        sizes: tuple[int, ...]) -> list[Expr]:
    """Per axis, the window start of ``op`` (its offsets from operand ``first`` on) as the
    kernel computes it: ``clamp(offset, 0, extent - size)``, 0 where the window spans the
    axis (:mod:`accy.ir.ops.dynamic`)."""
    shape = op.operands[0].type.shape
    out: list[Expr] = []
    for d, (e, s) in enumerate(zip(shape, sizes, strict=True)):
        if s == e:  # the window spans the axis: start is 0 whatever the offset
            out.append(const_i(0))
            continue
        off = em.value_at(op.operands[first + d], Index((), linear=const_i(0)))
        out.append(em.let("ds", _b("min", _b("max", off, const_i(0)), const_i(e - s))))
    return out


def dynamic_slice_expr(em: Any, op: Operation, idx: Index) -> Expr:
    """Element ``idx`` of the window: the tensor at ``idx + start``."""
    src = op.operands[0]
    starts = clamped_start_exprs(em, op, 1, tuple(op.attrs["sizes"]))
    comps = [c if isinstance(s, Const) and s.value == 0 else _b("add", c, s)
             for c, s in zip(idx.comps, starts, strict=True)]
    return em.value_at(src, Index(src.type.shape, comps=comps))


def dynamic_update_expr(em: Any, op: Operation, idx: Index) -> Expr:
    """Element ``idx`` of the updated tensor: the update inside the window, else the tensor."""
    x, upd = op.operands[0], op.operands[1]
    old = em.value_at(x, idx)
    if upd.type.num_elements == 0:
        return old
    starts = clamped_start_exprs(em, op, 2, upd.type.shape)
    inside: Expr | None = None
    comps: list[Expr] = []
    for c, s, n, e in zip(idx.comps, starts, upd.type.shape, x.type.shape, strict=True):
        if n == e:
            comps.append(c)
            continue
        rel = _b("sub", c, s)
        ok = _b("and", _b("ge", rel, const_i(0)), _b("lt", rel, const_i(n)))
        inside = ok if inside is None else _b("and", inside, ok)
        comps.append(_b("min", _b("max", rel, const_i(0)), const_i(n - 1)))
    new = em.value_at(upd, Index(upd.type.shape, comps=comps))
    return new if inside is None else Select(inside, new, old, old.dtype)
