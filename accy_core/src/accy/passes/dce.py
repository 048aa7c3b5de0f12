"""Dead code elimination: erase pure ops whose results nobody reads.

Each block is swept from its end, so a whole dead chain goes in one sweep (a use always
comes after its definition); use counts come from the :class:`UseCounts` analysis and are
decremented as ops go. Function parameters, terminators, region ops and ops without the
``pure`` trait are never removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Block, Module, Value
from accy.passes.analysis import UseCounts
from accy.passes.base import Pass, PassContext
from accy.passes.constants import all_blocks, is_pure

__all__ = ["DCEPass", "dce_block"]


def dce_block(block: Block, counts: dict[Value, int]) -> int:
    """Erase dead pure ops of ``block`` (not nested blocks); return how many went.

    ``counts`` (value → uses) is updated as ops are erased.
    """
    erased = 0
    for op in reversed(list(block.ops)):
        if op.regions or not is_pure(op):
            continue
        if any(counts.get(r, len(r.uses)) or r.uses for r in op.results):
            continue
        for v in op.operands:
            counts[v] = counts.get(v, len(v.uses)) - 1
        op.erase()
        erased += 1
    return erased


@dataclass(frozen=True)
class DCEPass(Pass):
    """Erase pure ops without uses, repeatedly, in every block."""

    name: ClassVar[str] = "dce"
    summary: ClassVar[str] = "erase pure ops whose results are unused"

    def run(self, module: Module, ctx: PassContext) -> bool:
        counts = dict(ctx.get_analysis(UseCounts, module))
        total = 0
        while True:
            blocks = list(all_blocks([f.body for f in module.functions]))
            erased = sum(dce_block(b, counts) for b in blocks)
            total += erased
            if not erased:
                return total > 0
