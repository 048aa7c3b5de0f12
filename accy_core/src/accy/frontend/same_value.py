"""Whether two traced values are the same computation, so ``x[x > 0.5] = -x[x > 0.5]``
(two masks traced alike) can be written back like ``k = x > 0.5; x[k] = -x[k]``.

Two values are the same when they are one value, or results (at the same index) of two
pure ops with the same name, equal attributes and result types, and operands that are the
same, pairwise (in either order for the two operands of a commutative op). Constants are
equal when dtype, shape and bytes are, the rule :mod:`accy.passes.cse` merges by. The
comparison stops, answering "not the same", after a budget of op pairs, so a deep
expression costs bounded time; a "not the same" answer is always safe (the caller refuses).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.ir import Operation, Value, get_op_def

__all__ = ["same_value"]


def _same_attr(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return (a.dtype == b.dtype and a.shape == b.shape
                and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex()
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_attr(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (an attribute without a usable ==: not the same)
        return False


def _same_op_shell(ox: Operation, oy: Operation) -> Any:
    """The op definition when ``ox`` and ``oy`` are one pure op with equal attributes and
    result types (operands not compared), else None."""
    if ox.name != oy.name or ox.regions or oy.regions or len(ox.operands) != len(oy.operands):
        return None
    try:
        op_def = get_op_def(ox.name)
    except VerifyError:
        return None
    if not op_def.has("pure"):
        return None
    fx, fy = op_def.full_attrs(dict(ox.attrs)), op_def.full_attrs(dict(oy.attrs))
    if fx.keys() != fy.keys() or not all(_same_attr(fx[k], fy[k]) for k in fx):
        return None
    if [r.type for r in ox.results] != [r.type for r in oy.results]:
        return None
    return op_def


def same_value(a: Value, b: Value, budget: int = 512) -> bool:
    """Whether ``a`` and ``b`` compute the same tensor (rules in the module docstring);
    at most ``budget`` op pairs are compared."""
    seen: set[tuple[int, int]] = set()
    left = [budget]

    def same(x: Value, y: Value) -> bool:
        if x is y:
            return True
        if (id(x), id(y)) in seen:
            return True
        ox, oy = x.defining_op, y.defining_op
        left[0] -= 1
        if left[0] < 0 or ox is None or oy is None or x.index != y.index:
            return False
        op_def = _same_op_shell(ox, oy)
        if op_def is None:
            return False
        pairs = list(zip(ox.operands, oy.operands, strict=True))
        if all(same(p, q) for p, q in pairs):
            seen.add((id(x), id(y)))
            return True
        if op_def.has("commutative") and len(pairs) == 2 and \
                same(ox.operands[0], oy.operands[1]) and same(ox.operands[1], oy.operands[0]):
            seen.add((id(x), id(y)))
            return True
        return False

    return same(a, b)
