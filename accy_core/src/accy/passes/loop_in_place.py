"""Carried loop values updated in place (dispatch stage, after fusion).

A loop body's carried results are double-buffered by the launch graph: each iteration
writes a fresh buffer (:mod:`accy.runtime.loop_graph`). For a result that is a window update
of its own carried parameter (``B = B.at[1:-1, 1:-1].set(f(A))``, :mod:`accy.passes.windows`)
that costs a copy of the whole array per step. This pass writes such a result into the
parameter's buffer instead, so the step's kernel visits only the window, when that is safe:

- the update region's only input bound to the parameter is the window's base, and it reads
  the base only at the elements it writes (:func:`~accy.passes.windows.reads_base_in_place`);
- every other reader of the parameter runs before the update region (they must see the old
  value), and the function returns neither the parameter nor the result more than once.

The body function records the pairs as ``in_place_results`` / ``in_place_params`` (result
index, parameter index); the memory plan gives each such result its parameter's slot and
the launch graph leaves that carried slot bound to one buffer for the whole loop. Since the
loop then writes into the buffer bound to the carried operand, each such operand gets a copy
before the loop (a ``map`` region), unless it is a temporary the loop alone reads once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accy.ir import Module, Operation, Value
from accy.ir.core import Block, Function, Region
from accy.ir.ops.loop import LOOP_OPS
from accy.passes.base import Pass, PassContext
from accy.passes.windows import find_window, reads_base_in_place

__all__ = ["LoopInPlacePass", "in_place_chain", "in_place_pairs"]


def in_place_chain(body: Function, k: int, param: int) -> list[Value] | None:
    """The values written over parameter ``param`` for carried result ``k`` of ``body``,
    last first — the result, then the base of each window update back to the parameter
    (``ey = ey.at[0].set(..)`` then ``ey = ey.at[1:].set(..)`` is a chain of two) — or None
    when writing them in place is not safe (see the module docstring)."""
    returns = list(body.returns)
    pos = {op: i for i, op in enumerate(body.body.ops)}
    p, v = body.params[param], returns[k]
    if returns.count(v) != 1 or p in returns:
        return None
    chain: list[Value] = []
    while v is not p:
        region = v.defining_op
        if region is None or region.name != "dispatch.region":
            return None
        win = find_window(region)
        if win is None:
            return None
        base = region.operands[win.base]
        if [j for j, w in enumerate(region.operands) if w is base] != [win.base]:
            return None
        if not reads_base_in_place(region, win):
            return None
        # the base's other readers must run before the region overwrites it
        if any(pos.get(u, len(pos)) > pos[region] for u in base.users if u is not region):
            return None
        if base is not p and base in returns:
            return None
        chain.append(v)
        v = base
    return chain


def in_place_pairs(body: Function, offset: int, carried: int) -> list[tuple[int, int]]:
    """(result index, parameter index) of the carried results of ``body`` that may be
    written over their parameter (see the module docstring); ``offset`` is the index of
    the first carried parameter (1 for ``loop.for``: the induction variable comes first)."""
    return [(k, k + offset) for k in range(carried)
            if in_place_chain(body, k, k + offset) is not None]


def _copy_region(v: Value) -> Operation:
    block = Block([v.type])
    block.append(Operation("dispatch.yield", [block.args[0]], []))
    return Operation("dispatch.region", [v], [v.type], {"kind": "map"}, [Region(block)])


def _consumable(fn: Function, loop: Operation, v: Value) -> bool:
    """A temporary that only this loop reads, once: the loop may write over it."""
    op = v.defining_op
    return (op is not None and op.name == "dispatch.region" and v.users == [loop]
            and sum(1 for w in loop.operands if w is v) == 1 and v not in fn.returns)


def apply_in_place(module: Module) -> int:
    """Mark the in-place carried results of every loop body and copy the loops' operands
    they write over; returns the number of in-place carried values."""
    pairs_of: dict[str, list[tuple[int, int]]] = {}
    total = 0
    for fn in list(module.functions):
        for op in list(fn.body.ops):
            if op.name not in LOOP_OPS:
                continue
            body = module.function(op.attrs["body"])
            if body.name not in pairs_of:
                offset = 1 if op.name == "loop.for" else 0
                pairs = in_place_pairs(body, offset, op.attrs["carried"])
                pairs_of[body.name] = pairs
                if pairs:
                    body.attrs["in_place_results"] = tuple(r for r, _ in pairs)
                    body.attrs["in_place_params"] = tuple(p for _, p in pairs)
                    total += len(pairs)
            for k, _ in pairs_of[body.name]:
                v = op.operands[k]
                if _consumable(fn, op, v):
                    continue
                cp = _copy_region(v)
                fn.body.insert_before(op, cp)
                op.set_operand(k, cp.results[0])
    return total


@dataclass(frozen=True)
class LoopInPlacePass(Pass):
    """Write window updates of carried loop values into the carried buffer."""

    name: ClassVar[str] = "loop-in-place"
    summary: ClassVar[str] = "carried window updates written in place (no copy per step)"

    def run(self, module: Module, ctx: PassContext) -> bool:
        return apply_in_place(module) > 0
