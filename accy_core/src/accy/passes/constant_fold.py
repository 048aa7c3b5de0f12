"""Evaluate ops on constants at compile time through their numpy reference.

An op folds when it is ``pure``, has a ``reference`` and at least one operand, and either

- every operand is a ``tensor.constant``: the op becomes the constant(s) of its results; or
- it is ``elementwise`` and every operand is a constant or a ``tensor.broadcast_to`` of
  one (a splat): the op is evaluated on the small sources and becomes
  ``broadcast_to(constant)``, so splats stay cheap for fusion.

``tensor.broadcast_to`` itself is never folded here (it only grows data; canonicalize turns
the non-growing ones into constants). Results larger than ``max-elems`` elements, or a
reference that raises or disagrees with the op's result types, leave the op alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from accy.ir import Module, Operation, Value, get_op_def
from accy.passes.base import Pass, PassContext
from accy.passes.constants import (
    MAX_FOLD_ELEMS,
    all_blocks,
    constant_array,
    insert_op,
    is_pure,
    make_constant,
    replace_op,
    splat_source,
)

__all__ = ["ConstantFoldPass", "fold_op"]


def _reference(op: Operation, arrays: list[np.ndarray]) -> list[np.ndarray] | None:
    """Results of ``op``'s reference on ``arrays``, or ``None`` if it cannot fold."""
    op_def = get_op_def(op.name)
    if op_def.reference is None or not op_def.has("pure") or op_def.has("constant"):
        return None
    try:
        with np.errstate(all="ignore"):
            results = [np.asarray(r) for r in op_def.reference(arrays, dict(op.attrs))]
    except Exception:  # noqa: BLE001  (a reference that raises folds nothing)
        return None
    return results


def _fold_dense(op: Operation, max_elems: int) -> list[Value] | None:
    arrays = [constant_array(v) for v in op.operands]
    if any(a is None for a in arrays) or op.name == "tensor.broadcast_to":
        return None
    if sum(r.type.num_elements for r in op.results) > max_elems:
        return None
    results = _reference(op, arrays)  # type: ignore[arg-type]
    if results is None or len(results) != len(op.results):
        return None
    for arr, r in zip(results, op.results, strict=True):
        if arr.shape != r.type.shape or arr.dtype != r.type.dtype.numpy:
            return None
    return [make_constant(op, arr, r.type) for arr, r in zip(results, op.results, strict=True)]


def _fold_splat(op: Operation, max_elems: int) -> list[Value] | None:
    if not get_op_def(op.name).has("elementwise") or len(op.results) != 1:
        return None
    sources = [splat_source(v) for v in op.operands]
    if any(s is None for s in sources):
        return None
    shape = np.broadcast_shapes(*(s.shape for s in sources))  # type: ignore[union-attr]
    out = op.results[0].type
    if int(np.prod(shape)) > max_elems:
        return None
    arrays = [np.array(np.broadcast_to(s, shape)) for s in sources]  # type: ignore[arg-type]
    results = _reference(op, arrays)
    if results is None or len(results) != 1:
        return None
    arr = results[0]
    if arr.shape != shape or arr.dtype != out.dtype.numpy:
        return None
    const = make_constant(op, arr, out.with_shape(shape))
    if shape == out.shape:
        return [const]
    return [insert_op(op, "tensor.broadcast_to", [const], {"shape": out.shape})]


def fold_op(op: Operation, max_elems: int = MAX_FOLD_ELEMS) -> bool:
    """Fold ``op`` if it computes on constants only; return whether it was replaced."""
    if not op.operands or op.regions or not is_pure(op):
        return False
    new = _fold_dense(op, max_elems)
    if new is None and any(
        splat_source(v) is not None and constant_array(v) is None for v in op.operands
    ):
        new = _fold_splat(op, max_elems)
    if new is None:
        return False
    replace_op(op, new)
    return True


@dataclass(frozen=True)
class ConstantFoldPass(Pass):
    """Replace ops whose operands are all constants (or splats) by their computed values."""

    name: ClassVar[str] = "constant-fold"
    summary: ClassVar[str] = "evaluate pure ops on constants through their numpy reference"
    max_elems: int = MAX_FOLD_ELEMS

    def run(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for block in list(all_blocks([f.body for f in module.functions])):
            with block.batch_edits():
                for op in list(block.ops):
                    if op.parent is block and fold_op(op, self.max_elems):
                        changed = True
        return changed
