"""Split reductions with few work-items and many reduced elements in two (host targets).

A CPU reduction kernel runs one work-item per output, or per column block of outputs
(:mod:`accy.passes.reduce_lanes`), so ``sum(x)`` of 16M elements, or ``sum(x, axis=0)`` of a
[4096, 4096] f32 matrix (one 4096-wide column block), would run on one thread. On a target
with the ``host_memory`` feature this pass rewrites ``reduce.<k>(x)`` over contiguous axes,
viewed as ``[A, R, B]``, into

    reduce.<k>(reduce.<k>(reshape(x, [A, S, R/S, B]), axis 2), axis 1)

— ``S`` partial results per output, which fusion puts in a first region of ``A·S·B``
outputs and a small second one:

- **rows** (``A·B`` below :data:`MAX_OUTPUTS`, ``R`` at least :data:`MIN_REDUCED`): ``S``
  is :data:`SPLITS`, or a divisor of ``R`` near it;
- **columns** (``B > 1``, fewer than :data:`COLUMN_ITEMS` column blocks of
  :func:`~accy.passes.reduce_lanes.column_width`, at least :data:`MIN_COLUMN_ELEMENTS`
  elements): ``S`` blocks of at least :data:`MIN_ROWS` rows bring the work-items to about
  :data:`COLUMN_ITEMS`, each summing whole contiguous rows; the partials cost one extra
  write and read of ``A·S·B`` elements (256 KiB for [4096, 4096] f32, 0.4 % of the input).

When ``R`` has no suitable divisor the reduced axis is padded with the reduction's
identity. The float sum order becomes ``S`` partial sums (each a lanes sum) added in order:
at least as accurate as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module
from accy.passes.base import Pass, PassContext
from accy.passes.kernel_exprs import identity
from accy.passes.reduce_lanes import column_width, lanes_view
from accy.passes.rewriter import Rewriter

__all__ = ["COLUMN_ITEMS", "MAX_OUTPUTS", "MIN_COLUMN_ELEMENTS", "MIN_REDUCED", "MIN_ROWS",
           "SPLITS", "ReductionSplitPass", "column_splits"]

#: Below this many outputs a reduction is split ...
MAX_OUTPUTS = 64
#: ... when each reduces at least this many elements.
MIN_REDUCED = 1 << 16
#: Partial results per output.
SPLITS = 64
#: Work-items a column reduction is split into at least (16: a few per thread of a small
#: host, one per thread of a 16-core one) ...
COLUMN_ITEMS = 16
#: ... when it reads at least this many elements ...
MIN_COLUMN_ELEMENTS = 1 << 18
#: ... and each partial sums at least this many rows.
MIN_ROWS = 64
_KINDS = ("reduce.sum", "reduce.max", "reduce.min")


def _splits(r: int) -> tuple[int, int]:
    """(S, padded R): a divisor of ``r`` in [SPLITS/2, 2·SPLITS], else SPLITS and ``r``
    rounded up to a multiple of it."""
    for d in sorted(range(SPLITS // 2, 2 * SPLITS + 1), key=lambda d: abs(d - SPLITS)):
        if r % d == 0:
            return d, r
    return SPLITS, -(-r // SPLITS) * SPLITS


def column_splits(a: int, r: int, b: int, itemsize: int) -> tuple[int, int]:
    """(S, padded R) of a column reduction viewed as ``[A, R, B]`` with ``itemsize``-byte
    elements; ``S == 1``: not split (enough column blocks already, or too little work).
    ``S`` is the largest divisor of ``R`` in ``[S0/2, S0]`` (``S0`` the partials that bring
    the work-items to :data:`COLUMN_ITEMS`, at most ``R / MIN_ROWS``), else ``S0`` with ``R``
    rounded up to a multiple of it."""
    if b <= 1 or a * r * b < MIN_COLUMN_ELEMENTS:
        return 1, r
    blocks = a * -(-b // column_width(b, itemsize))
    if blocks >= COLUMN_ITEMS:
        return 1, r
    s0 = min(-(-COLUMN_ITEMS // blocks), r // MIN_ROWS)
    if s0 < 2:
        return 1, r
    for d in range(s0, max(2, s0 // 2) - 1, -1):
        if r % d == 0:
            return d, r
    return s0, -(-r // s0) * s0


@dataclass(frozen=True)
class ReductionSplitPass(Pass):
    """reduce(x) with few work-items → reduce(reduce(reshape(x), inner), partials)."""

    name: ClassVar[str] = "reduction-split"
    summary: ClassVar[str] = "split few-work-item reductions into partial results (host targets)"

    def run(self, module: Module, ctx: PassContext) -> bool:
        profile = ctx.target_profile
        if profile is None or "host_memory" not in profile.features:
            return False
        changed = False
        for fn in module.functions:
            for op in list(fn.body.ops):
                if op.name not in _KINDS:
                    continue
                view = lanes_view(op)
                if view is None:
                    continue
                a, r, b = view
                if a * b < MAX_OUTPUTS and r >= MIN_REDUCED:
                    s, padded = _splits(r)
                else:
                    s, padded = column_splits(a, r, b, op.operands[0].type.dtype.itemsize)
                    if s == 1:
                        continue
                self._split(op, a, r, b, s, padded)
                changed = True
        return changed

    @staticmethod
    def _split(op, a: int, r: int, b: int, s: int, padded: int) -> None:
        x = op.operands[0]
        kind = op.name.split(".")[1]
        dtype = x.type.dtype.value
        rw = Rewriter(op)
        v = rw.op("tensor.reshape", [x], shape=(a, r, b))
        if padded != r:
            fill = identity(kind, dtype).value
            v = rw.op("tensor.pad", [v], low=(0, 0, 0), high=(0, padded - r, 0), value=fill)
        v = rw.op("tensor.reshape", [v], shape=(a, s, padded // s, b))
        v = rw.op(op.name, [v], axes=(2,), keepdims=False)
        # the partials [A, S, B] as out[:lo] + [S] + out[lo:], reduced into the result's
        # own shape (a reshape of a reduction's result would be a kernel of its own)
        lo = min(ax % x.type.rank for ax in op.attrs["axes"])
        out = tuple(op.results[0].type.shape)
        v = rw.op("tensor.reshape", [v], shape=out[:lo] + (s,) + out[lo:])
        rw.replace_with([rw.op(op.name, [v], axes=(lo,), keepdims=False)])
