"""Common subexpression elimination within each block.

Two pure ops are the same computation when they have the same name, the same operands
(in any order for ``commutative`` ops), equal attributes (optional ones filled in with their
defaults) and equal result types; the later
one is replaced by the earlier one. Array attributes (``tensor.constant`` values) are equal
when dtype, shape and bytes are (so ``-0.0`` and ``0.0`` stay apart, equal NaNs merge).
Each block has its own table: nothing is merged across a region boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from accy.ir import Block, Module, Operation, get_op_def
from accy.passes.base import Pass, PassContext
from accy.passes.constants import all_blocks, is_pure

__all__ = ["CSEPass", "cse_block", "op_key"]


def _freeze(v: Any) -> Any:
    """A hashable, exact stand-in for an attribute value."""
    if isinstance(v, np.ndarray):
        return ("dense", v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())
    if isinstance(v, (bool, np.bool_)):
        return ("bool", bool(v))
    if isinstance(v, (int, np.integer)):
        return ("int", int(v))
    if isinstance(v, (float, np.floating)):
        return ("float", float(v).hex())
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_freeze(x) for x in v))
    try:
        hash(v)
    except TypeError:
        return ("repr", type(v).__name__, repr(v))
    return ("value", type(v).__name__, v)


def op_key(op: Operation) -> tuple:
    """The identity of ``op``'s computation: name, operands, attributes, result types."""
    op_def = get_op_def(op.name)
    operands = [id(v) for v in op.operands]
    if op_def.has("commutative"):
        operands.sort()
    full = op_def.full_attrs(dict(op.attrs))  # a default spelt out equals the default
    attrs = tuple(sorted((k, _freeze(v)) for k, v in full.items()))
    return (op.name, tuple(operands), attrs, tuple(r.type for r in op.results))


def cse_block(block: Block) -> int:
    """Merge equal pure ops of ``block`` (not of nested blocks); return how many merged."""
    seen: dict[tuple, Operation] = {}
    merged = 0
    with block.batch_edits():
        for op in list(block.ops):
            if op.regions or not op.results or not is_pure(op):
                continue
            key = op_key(op)
            first = seen.get(key)
            if first is None:
                seen[key] = op
                continue
            for old, new in zip(op.results, first.results, strict=True):
                old.replace_all_uses_with(new)
            op.erase()
            merged += 1
    return merged


@dataclass(frozen=True)
class CSEPass(Pass):
    """Replace repeated pure computations by the first one, block by block."""

    name: ClassVar[str] = "cse"
    summary: ClassVar[str] = "merge equal pure ops (same name, operands, attributes, types)"

    def run(self, module: Module, ctx: PassContext) -> bool:
        blocks = list(all_blocks([f.body for f in module.functions]))
        return sum(cse_block(b) for b in blocks) > 0
