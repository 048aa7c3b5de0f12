"""Lower ``reduce.mean`` to ``reduce.sum`` divided by the number of reduced elements."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module
from accy.passes.base import Pass, PassContext
from accy.passes.rewriter import Rewriter

__all__ = ["ReductionLoweringPass"]


@dataclass(frozen=True)
class ReductionLoweringPass(Pass):
    """mean(x, axes) → sum(x, axes) / n, n = product of the reduced extents."""

    name: ClassVar[str] = "reduction-lowering"
    summary: ClassVar[str] = "lower reduce.mean to reduce.sum and a division"

    def run(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for fn in module.functions:
            for op in list(fn.body.ops):
                if op.name != "reduce.mean":
                    continue
                x = op.operands[0]
                rank = x.type.rank
                axes = tuple(a + rank if a < 0 else a for a in op.attrs["axes"])
                n = math.prod(x.type.shape[a] for a in axes)
                rw = Rewriter(op)
                s = rw.op(
                    "reduce.sum", [x], axes=axes, keepdims=bool(op.attrs.get("keepdims", False))
                )
                divisor = float(n) if n else float("nan")
                rw.replace_with([rw.op("arith.div", [s, rw.splat(divisor, s.type)])])
                changed = True
        return changed
