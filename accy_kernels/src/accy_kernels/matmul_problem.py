"""The matrix-product problem every ``matmul`` variant solves, and its fused epilogue.

``C[b, i, j] = epilogue(sum_p A[b, i, p] * B[b, p, j])`` for ``b < batch``, ``i < m``,
``j < n``, ``p < k``. ``A`` and ``B`` are read in place through element strides (a
transposed or batch-broadcast operand is a stride, never a copy): element ``(b, i, p)`` of
``A`` is ``a[a_offset + b*sa_b + i*sa_i + p*sa_p]``, likewise ``B`` with ``(sb_b, sb_p,
sb_j)``. ``C`` is written row-major ``(batch, m, n)`` (contiguous).

An :class:`Epilogue` turns the accumulator of one output element into the stored value
(``relu(acc + bias[j])``, a cast, a residual add): the compiler builds one from the
elementwise ops that follow a ``dot_general`` (:mod:`accy_kernels.matmul_ir`), so the
product and its epilogue are one kernel.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from accy.kernel import ir

__all__ = ["NO_EPILOGUE", "Epilogue", "MatmulProblem", "operand_view"]

#: ``(acc, b, i, j) -> (statements, value)``: kernel-IR of the stored value of one element
#: (``b``, ``i``, ``j`` are i32 expressions); statements run before the store.
EpilogueFn = Callable[[ir.Expr, ir.Expr, ir.Expr, ir.Expr], tuple[list[ir.Stmt], ir.Expr]]


@dataclass(frozen=True)
class Epilogue:
    """What a kernel does with one finished accumulator.

    Attributes:
        key: a stable text naming the computation (kernel names and caches use it).
        out_dtype: dtype of ``C`` (the accumulator's unless the epilogue casts).
        buffers: extra read-only buffers ``(name, dtype)`` the expression loads, bound after
            ``A`` and ``B`` in this order.
        fn: see :data:`EpilogueFn`; None stores the accumulator.
    """

    key: str = ""
    out_dtype: str | None = None
    buffers: tuple[tuple[str, str], ...] = ()
    fn: EpilogueFn | None = field(default=None, compare=False)

    def tag(self) -> str:
        """A short suffix for kernel names (empty without an epilogue)."""
        if not self.key:
            return ""
        return "_ep" + hashlib.sha256(self.key.encode()).hexdigest()[:10]

    def apply(self, acc: ir.Expr, b: ir.Expr, i: ir.Expr, j: ir.Expr,
              ) -> tuple[list[ir.Stmt], ir.Expr]:
        """The statements and value stored for accumulator ``acc`` at ``(b, i, j)``."""
        if self.fn is None:
            return [], acc
        return self.fn(acc, b, i, j)


NO_EPILOGUE = Epilogue()


@dataclass(frozen=True)
class MatmulProblem:
    """One batched product (see the module docstring); sizes and strides in elements."""

    dtype: str
    batch: int
    m: int
    n: int
    k: int
    a_strides: tuple[int, int, int]
    b_strides: tuple[int, int, int]
    a_offset: int = 0
    b_offset: int = 0

    @property
    def flops(self) -> int:
        """``2 * batch * m * n * k`` (one multiply and one add per term)."""
        return 2 * self.batch * self.m * self.n * self.k

    @property
    def out_elems(self) -> int:
        return self.batch * self.m * self.n

    def transposed(self) -> MatmulProblem:
        """The problem of ``C^T = B^T A^T`` (``m`` and ``n`` swapped, operands swapped)."""
        sab, sai, sap = self.a_strides
        sbb, sbp, sbj = self.b_strides
        return MatmulProblem(self.dtype, self.batch, self.n, self.m, self.k, (sbb, sbj, sbp),
                             (sab, sap, sai), self.b_offset, self.a_offset)


def operand_view(x: np.ndarray) -> tuple[np.ndarray, tuple[int, ...], int]:
    """``(base, element strides, element offset)`` reading ``x`` without a copy.

    ``base`` is a C-contiguous 1-D array holding every element of ``x``; ``x[idx]`` is
    ``base[offset + sum(idx * strides)]``. A transposed or broadcast view keeps its memory;
    anything else (non-uniform gaps, negative strides over a copy) is copied once.
    """
    item = x.itemsize
    if x.size == 0:
        return np.zeros(1, x.dtype), (0,) * x.ndim, 0
    strides = [s // item if s % item == 0 else None for s in x.strides]
    if None not in strides and all(s >= 0 for s in strides):
        span = 1 + sum((d - 1) * s for d, s in zip(x.shape, strides, strict=True))
        base = x
        while isinstance(base.base, np.ndarray):
            base = base.base
        start = (x.__array_interface__["data"][0] - base.__array_interface__["data"][0])
        if base.flags.c_contiguous and base.dtype == x.dtype and start % item == 0 and start >= 0:
            flat = base.reshape(-1)
            off = start // item
            if off + span <= flat.size:
                return flat, tuple(int(s) for s in strides), off
    c = np.ascontiguousarray(x)
    st = tuple(int(s) // item for s in c.strides)
    return c.reshape(-1), st, 0
