"""Split reductions with few outputs and many reduced elements in two (host targets).

A CPU reduction kernel runs one work-item per output (:mod:`accy.passes.reduce_lanes`), so
``sum(x)`` of 16M elements would run on one thread. On a target with the ``host_memory``
feature this pass rewrites ``reduce.<k>(x)`` over contiguous axes, viewed as ``[A, R, B]``,
with ``A·B`` below :data:`MAX_OUTPUTS` and ``R`` at least :data:`MIN_REDUCED`, into

    reduce.<k>(reduce.<k>(reshape(x, [A, S, R/S, B]), axis 2), axis 1)

— ``S`` partial results per output (:data:`SPLITS`, or a divisor of ``R`` near it; when
``R`` has none the reduced axis is padded with the reduction's identity), which fusion puts
in a first region of ``A·S·B`` outputs and a small second one. The float sum order becomes
``S`` partial sums (each a blocked lanes sum) added in order: at least as accurate as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module
from accy.passes.base import Pass, PassContext
from accy.passes.kernel_exprs import identity
from accy.passes.reduce_lanes import lanes_view
from accy.passes.rewriter import Rewriter

__all__ = ["MAX_OUTPUTS", "MIN_REDUCED", "SPLITS", "ReductionSplitPass"]

#: Below this many outputs a reduction is split ...
MAX_OUTPUTS = 64
#: ... when each reduces at least this many elements.
MIN_REDUCED = 1 << 16
#: Partial results per output.
SPLITS = 64
_KINDS = ("reduce.sum", "reduce.max", "reduce.min")


def _splits(r: int) -> tuple[int, int]:
    """(S, padded R): a divisor of ``r`` in [SPLITS/2, 2·SPLITS], else SPLITS and ``r``
    rounded up to a multiple of it."""
    for d in sorted(range(SPLITS // 2, 2 * SPLITS + 1), key=lambda d: abs(d - SPLITS)):
        if r % d == 0:
            return d, r
    return SPLITS, -(-r // SPLITS) * SPLITS


@dataclass(frozen=True)
class ReductionSplitPass(Pass):
    """reduce(x) with few outputs → reduce(reduce(reshape(x), inner), partials)."""

    name: ClassVar[str] = "reduction-split"
    summary: ClassVar[str] = "split few-output reductions into partial results (host targets)"

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
                if view is None or view[0] * view[2] >= MAX_OUTPUTS or view[1] < MIN_REDUCED:
                    continue
                self._split(op, *view)
                changed = True
        return changed

    @staticmethod
    def _split(op, a: int, r: int, b: int) -> None:
        x = op.operands[0]
        kind = op.name.split(".")[1]
        dtype = x.type.dtype.value
        s, padded = _splits(r)
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
