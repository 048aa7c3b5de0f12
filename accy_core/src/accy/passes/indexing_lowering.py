"""Lower the kernel-library ops (gather, scatter, scatter_add, sort, argsort, random_uniform,
segment_sum) to kernel-library calls.

``kernel-library=enabled`` (the default pipeline): every ``tensor.<op>`` becomes
``library.<op>`` — a call into the registered kernel family of that name (see
:mod:`accy.families.lowering`); ``sort``/``argsort`` on another axis than the last are
wrapped in transposes (the families sort rows), and axes are normalized to be >= 0. The
family must be registered (``accy-kernels`` installed), else UnsupportedError.

``kernel-library=disabled``: ``tensor.gather`` stays and is fused like an index map (one
work-item per output element loads the index, then the source element: index arithmetic
inside a ``map`` region); the other ops have no generic form and raise UnsupportedError
naming the option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from accy.errors import InputError, UnsupportedError, install_hint
from accy.ir import Module, Operation
from accy.ir.ops.library import FAMILY_OF, TENSOR_OPS
from accy.ir.types import TensorType
from accy.passes.base import Pass, PassContext

__all__ = ["IndexingLoweringPass"]


def _family_available(name: str) -> bool:
    from accy.families import get_family

    try:
        get_family(name)
    except InputError:
        return False
    return True


def _transpose(fn, anchor: Operation, v, perm) -> Operation:
    t: TensorType = v.type
    op = Operation("tensor.transpose", [v], [t.with_shape(tuple(t.shape[p] for p in perm))],
                   {"perm": tuple(perm)}, location=anchor.location)
    fn.body.insert_before(anchor, op)
    return op


def _lower(fn, op: Operation) -> None:
    short = op.name.split(".", 1)[1]
    attrs = dict(op.attrs)
    operands = list(op.operands)
    rank = operands[0].type.rank if operands else 0
    if "axis" in attrs and rank:
        attrs["axis"] = attrs["axis"] % rank
    perm = None
    if short in ("sort", "argsort") and attrs["axis"] != rank - 1:
        perm = [d for d in range(rank) if d != attrs["axis"]] + [attrs["axis"]]
        operands = [_transpose(fn, op, operands[0], perm).results[0]]
        attrs["axis"] = rank - 1
    rtype = op.results[0].type
    if perm is not None:
        rtype = rtype.with_shape(operands[0].type.shape)
    call = Operation(f"library.{short}", operands, [rtype], attrs, location=op.location)
    fn.body.insert_before(op, call)
    result = call.results[0]
    if perm is not None:
        back = _transpose(fn, op, result, [perm.index(d) for d in range(rank)])
        result = back.results[0]
    op.results[0].replace_all_uses_with(result)
    op.erase()


@dataclass(frozen=True)
class IndexingLoweringPass(Pass):
    """Turn indexing ops into kernel-library calls (or generic loops when disabled)."""

    name: ClassVar[str] = "indexing-lowering"
    summary: ClassVar[str] = "lower gather/scatter/sort ops to kernel-library calls"
    kernel_library: str = field(default="enabled", metadata={"choices": ("enabled", "disabled")})

    def run(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for fn in module.functions:
            for op in list(fn.body.ops):
                if op.name not in TENSOR_OPS:
                    continue
                short = op.name.split(".", 1)[1]
                if self.kernel_library == "disabled":
                    if short == "gather":
                        continue
                    raise UnsupportedError(
                        f"'{op.name}' op has no generic lowering; it needs the kernel "
                        f"library: run indexing-lowering{{kernel-library=enabled}} "
                        f"(this pipeline has kernel-library=disabled)",
                        feature=op.name, alternative="indexing-lowering{kernel-library=enabled}")
                family = FAMILY_OF[short]
                if not _family_available(family):
                    raise UnsupportedError(
                        f"'{op.name}' op: kernel family {family!r} is not registered; install "
                        f"accy-kernels ({install_hint('accy_kernels')})"
                        + (", or use indexing-lowering{kernel-library=disabled} (generic "
                           "gather)" if short == "gather" else ""),
                        feature=op.name, alternative=install_hint("accy_kernels"))
                _lower(fn, op)
                changed = True
        return changed
