"""Linear algebra for ``accy.numpy``: ``matmul``/``@``, ``dot``, ``outer``, ``einsum``,
``linalg.multi_dot``.

All of them lower to ``linalg.dot_general`` or ``linalg.einsum``. Operands are promoted to a
common dtype first (see :mod:`accy.frontend.trace`). A contracting-extent mismatch names
the expression and the user's line.
"""

from __future__ import annotations

from builtins import max as builtins_max
from collections.abc import Sequence
from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.matrix_api import diagonal
from accy.frontend.numpy_api import (
    broadcast_shape,
    common,
    multiply,
    shape_of,
    trace_of,
    value_of,
    wrap,
)
from accy.frontend.trace import user_location
from accy.ir import DType, Value

__all__ = ["dot", "einsum", "matmul", "multi_dot", "outer"]


# ---------------------------------------------------------------- linalg
def _matmul_error(a: Any, b: Any, why: str) -> VerifyError:
    loc = user_location()
    return VerifyError(
        f"shape mismatch in a @ b at {loc}: {why} (a is {list(shape_of(a))}, b is "
        f"{list(shape_of(b))}); the last axis of a must equal the second-to-last of b",
        op="linalg.dot_general", position=loc,
    )


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with numpy's rules: 1-D operands are promoted, batch axes broadcast.

    A batched ``a`` times a 2-D ``b`` is one 2-D product of ``a``'s rows (the same sums):
    broadcasting ``b`` over the batch materialized a copy of it per batch (a 4 MiB ``W``
    under an ``(8, 256, 1024)`` activation: a 32 MiB copy before the product).

    Raises:
        VerifyError: contracting extents differ or batch axes do not broadcast.
    """
    tr = trace_of(a, b)
    if tr is None:
        return np.matmul(a, b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise _matmul_error(a, b, "operands must have rank >= 1")
    dt = common(a, b)
    if dt == DType.BOOL:  # numpy's: any(a_ik and b_kj), from an i32 count
        out = matmul(wrap(tr, value_of(tr, a, DType.I32)), wrap(tr, value_of(tr, b, DType.I32)))
        return wrap(tr, tr.fb.cast(out.value, DType.BOOL))
    fb = tr.fb
    va, vb = value_of(tr, a, dt), value_of(tr, b, dt)
    if len(sa) == 1:
        va, sa = fb.reshape(va, (1, sa[0])), (1, sa[0])
    if len(sb) == 1:
        vb, sb = fb.reshape(vb, (sb[0], 1)), (sb[0], 1)
    if sa[-1] != sb[-2]:
        raise _matmul_error(a, b, f"contracting extents {sa[-1]} and {sb[-2]} differ")
    if len(shape_of(a)) > 2 and len(shape_of(b)) == 2:  # (..., m, k) @ (k, n): one product
        rows = int(np.prod(sa[:-1]))
        out = fb.dot_general(fb.reshape(va, (rows, sa[-1])), vb, [1], [0], [], [])
        return wrap(tr, fb.reshape(out, sa[:-1] + (sb[-1],)))
    batch = broadcast_shape("a @ b (batch axes)", sa[:-2], sb[:-2])
    nb = len(batch)
    if nb:
        va = fb.broadcast_to(va, batch + sa[-2:])
        vb = fb.broadcast_to(vb, batch + sb[-2:])
    bd = list(range(nb))
    out = fb.dot_general(va, vb, [nb + 1], [nb], bd, bd)
    shape = batch + ((sa[-2],) if len(shape_of(a)) > 1 else ()) + (
        (sb[-1],) if len(shape_of(b)) > 1 else ())
    if tuple(out.type.shape) != shape:
        out = fb.reshape(out, shape)
    return wrap(tr, out)


def dot(a: Any, b: Any) -> Any:
    """``numpy.dot`` for operands of rank <= 2 (same as :func:`matmul`); scalars multiply."""
    if not shape_of(a) or not shape_of(b):
        return multiply(a, b)
    if len(shape_of(b)) > 2:
        raise UnsupportedError(
            f"anp.dot with a rank-{len(shape_of(b))} second operand at {user_location()} is "
            "not supported; use anp.einsum or anp.matmul", feature="dot", alternative="einsum",
        )
    return matmul(a, b)


def outer(a: Any, b: Any) -> Any:
    """Outer product of two vectors (flattened first, like numpy)."""
    from accy.frontend.shape_api import ravel

    return einsum("i,j->ij", ravel(a), ravel(b))


def _diagonals(subscripts: str, operands: tuple) -> tuple[str, tuple]:
    """An operand with a repeated index (``"ii->"``, ``"bii->b"``) replaced by its
    diagonal over those axes (:func:`accy.frontend.matrix_api.diagonal`), which the IR's
    einsum does not take."""
    ins, out = subscripts.replace(" ", "").split("->")
    specs, ops = ins.split(","), list(operands)
    for k, spec in enumerate(specs):
        while len(set(spec)) < len(spec):
            c = next(ch for ch in spec if spec.count(ch) > 1)
            p = spec.index(c)
            q = spec.index(c, p + 1)
            ops[k] = diagonal(ops[k], 0, p, q)
            spec = spec[:p] + spec[p + 1:q] + spec[q + 1:] + c
        specs[k] = spec
    return ",".join(specs) + "->" + out, tuple(ops)


def _expand_ellipsis(subscripts: str, operands: tuple) -> str:
    """``"...ij,...jk->...ik"`` with ``...`` written as letters the spec does not use
    (right-aligned over each operand's leading axes, as numpy broadcasts them).

    Raises:
        UnsupportedError: ``...`` with an implicit output (no ``->``).
    """
    spec = subscripts.replace(" ", "")
    if "->" not in spec:
        raise UnsupportedError(f"einsum at {user_location()}: '...' needs an explicit "
                               "output ('...ij,...jk->...ik')", feature="einsum ellipsis",
                               alternative="an explicit '->'")
    ins, out = spec.split("->")
    parts = ins.split(",")
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in spec]
    counts = [len(np.shape(o) if not hasattr(o, "ndim") else o.shape) - len(p.replace(
        "...", "")) for p, o in zip(parts, operands, strict=True)]
    n = builtins_max(counts + [0])
    letters = "".join(free[:n])
    parts = [p.replace("...", letters[n - c:]) for p, c in zip(parts, counts, strict=True)]
    return ",".join(parts) + "->" + out.replace("...", letters)


def einsum(subscripts: str, *operands: Any) -> Any:
    """``numpy.einsum``; operands are promoted to a common dtype (bool: counted in i32,
    then ``!= 0``, numpy's logical sum). A repeated index within one operand (``"ii->i"``,
    ``"bii->b"``, ``"ii"``) takes its diagonal; without ``->`` the output is numpy's (the
    labels used once, sorted); ``...`` (with an explicit output) stands for leading axes."""
    tr = trace_of(*operands)
    if tr is None:
        return np.einsum(subscripts, *operands)
    if "..." in subscripts:
        subscripts = _expand_ellipsis(subscripts, operands)
    if "->" not in subscripts:  # numpy's implicit output: the labels used once, sorted
        ins = subscripts.replace(" ", "")
        subscripts = ins + "->" + "".join(sorted(c for c in set(ins) if c.isalpha()
                                                 and ins.count(c) == 1))
    subscripts, operands = _diagonals(subscripts, operands)
    dt = common(*operands)
    vals: Sequence[Value] = [value_of(tr, x, DType.I32 if dt == DType.BOOL else dt)
                             for x in operands]
    out = tr.fb.einsum(vals, None, subscripts)
    return wrap(tr, tr.fb.cast(out, DType.BOOL) if dt == DType.BOOL else out)


def _chain_order(dims: list[int]) -> list[list[int]]:
    """``split[i][j]``: where the cheapest product of matrices ``i..j`` splits, for the
    chain whose matrix ``i`` is ``dims[i] x dims[i + 1]`` (the matrix-chain dynamic
    programme, Cormen et al., *Introduction to Algorithms*, 3rd ed., section 15.2)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays: Sequence[Any]) -> Any:
    """``arrays[0] @ arrays[1] @ ...`` in the order of fewest multiply-adds, as
    ``numpy.linalg.multi_dot``: a 1-D first operand is a row vector and a 1-D last one a
    column vector (their axes are dropped from the result); the others must be 2-D.

    Raises:
        VerifyError: fewer than two operands, an inner operand that is not 2-D, or
            extents that do not chain.
    """
    arrays = list(arrays)
    if trace_of(*arrays) is None:
        return np.linalg.multi_dot(arrays)
    if len(arrays) < 2:
        raise VerifyError(f"numpy.linalg.multi_dot at {user_location()} needs at least two "
                          f"arrays, got {len(arrays)}")
    shapes = [tuple(shape_of(a)) for a in arrays]
    first_vec, last_vec = len(shapes[0]) == 1, len(shapes[-1]) == 1
    mats = [(1,) + shapes[0] if first_vec else shapes[0]] + shapes[1:-1] + \
        [shapes[-1] + (1,) if last_vec else shapes[-1]]
    if any(len(s) != 2 for s in mats) or any(
            mats[i][1] != mats[i + 1][0] for i in range(len(mats) - 1)):
        raise VerifyError(f"numpy.linalg.multi_dot at {user_location()}: shapes "
                          f"{[list(s) for s in shapes]} do not chain (2-D inner operands, "
                          "each one's columns equal to the next one's rows)")
    split = _chain_order([mats[0][0]] + [s[1] for s in mats])

    def product(i: int, j: int) -> Any:
        if i == j:
            return arrays[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    return product(0, len(arrays) - 1)
