"""Deep copy of tensor IR modules."""

from __future__ import annotations

import numpy as np

from accy.ir.core import Block, Function, Module, Operation, Region, Value

__all__ = ["clone_block_into", "clone_module"]


def clone_block_into(src: Block, dst: Block, mapping: dict[Value, Value]) -> None:
    """Append copies of ``src``'s ops to ``dst``, remapping operands through ``mapping``."""
    for op in src.ops:
        regions = []
        for r in op.regions:
            nb = Block([a.type for a in r.block.args])
            for a, na in zip(r.block.args, nb.args, strict=True):
                mapping[a] = na
            clone_block_into(r.block, nb, mapping)
            regions.append(Region(nb))
        new = Operation(
            op.name,
            [mapping.get(v, v) for v in op.operands],
            [r.type for r in op.results],
            {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in op.attrs.items()},
            regions,
            op.location,
        )
        for old_r, new_r in zip(op.results, new.results, strict=True):
            mapping[old_r] = new_r
            new_r.name_hint = old_r.name_hint
        dst.append(new)


def clone_module(module: Module) -> Module:
    out = Module()
    out.attrs = dict(module.attrs)
    for f in module.functions:
        nf = Function(f.name, f.param_types, f.result_types, f.attrs)
        mapping: dict[Value, Value] = {}
        for a, na in zip(f.params, nf.params, strict=True):
            mapping[a] = na
            na.name_hint = a.name_hint
        clone_block_into(f.body, nf.body, mapping)
        out.functions.append(nf)
    return out
