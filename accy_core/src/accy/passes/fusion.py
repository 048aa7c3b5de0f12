"""Form work items: wrap every computed value that must live in memory in a
``dispatch.region`` holding the ops that compute it.

A value is *materialized* (written to a buffer) when it is returned, is the result of a
reduction or ``dot_general``, is used more than once and is not cheap to recompute, or is
an operand of ``dot_general`` computed by arithmetic (contraction prologues only take index
maps). Everything else is fused into its consumers: elementwise chains, broadcasts,
transposes, reshapes, slices, pads, iota and scalar constants become expressions inside one
kernel, and elementwise producers of a reduction become its prologue. Cheap ops (index maps, scalar
constants, iota) used several times are duplicated into each consumer.

Region kinds: ``map`` (one output element per work-item over the result shape),
``reduce`` (a ``reduce.*`` or ``linalg.dot_general`` root), ``library`` (exactly one
``library.*`` kernel-family call over block arguments: its operands are materialized, it
fuses with nothing; the kernel stage expands it into the family's launches) and
``contract`` (a ``dot_general`` worth the ``matmul`` family, see
:mod:`accy.passes.contraction`, with the elementwise ops consuming it as its epilogue: the
family kernel applies them before its store, so the product is never written unfused).

Option ``contraction``: ``library`` (default; ``contract`` regions with fused epilogues),
``library-no-epilogue`` (``contract`` regions holding the product alone) or ``loops`` (every
``dot_general`` a ``reduce`` region; also when the ``matmul`` family is not registered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from accy.ir import Module, Operation, Value
from accy.ir.clone import clone_block_into
from accy.ir.core import Block, Function, Region
from accy.ir.ops.library import LIBRARY_OPS
from accy.passes.base import Pass, PassContext
from accy.passes.contraction import eligible_dot, is_epilogue_op

__all__ = ["INDEX_OPS", "ROOT_OPS", "FusionPass"]

INDEX_OPS = frozenset(
    {
        "tensor.broadcast_to",
        "tensor.reshape",
        "tensor.transpose",
        "tensor.iota",
        "tensor.slice",
        "tensor.pad",
    }
)
ROOT_OPS = frozenset({"reduce.sum", "reduce.max", "reduce.min", "linalg.dot_general"})


def _is_scalar_constant(op: Operation | None) -> bool:
    return op is not None and op.name == "tensor.constant" and op.results[0].type.num_elements <= 1


def _is_cheap(op: Operation | None) -> bool:
    """Cheap to recompute per use: index maps, iota and scalar constants."""
    return op is not None and (op.name in INDEX_OPS or _is_scalar_constant(op))


def _is_input(v: Value) -> bool:
    """Values that already live in memory: params, non-scalar constants, region results."""
    op = v.defining_op
    if op is None:
        return True
    if op.name == "dispatch.region":
        return True
    return op.name == "tensor.constant" and not _is_scalar_constant(op)


def _materialized(fn: Function) -> set[Value]:
    mat: set[Value] = set(fn.returns)
    for op in fn.body.ops:
        if op.name in ROOT_OPS:
            mat.update(op.results)
        if op.name in LIBRARY_OPS:  # family kernels read whole buffers
            mat.update(op.results)
            mat.update(v for v in op.operands if not _is_input(v))
        if op.name == "tensor.gather":  # generic gather: load indices from memory
            mat.update(v for v in op.operands[1:] if not _is_input(v))
    changed = True
    while changed:
        changed = False
        for op in fn.body.ops:
            if (
                op.name in ROOT_OPS
                or op.name in LIBRARY_OPS
                or op.name in ("tensor.constant", "func.return")
            ):
                continue
            for v in op.results:
                if v in mat:
                    continue
                users = v.users
                if (len(users) > 1 and not _is_cheap(op)) or (
                    not _is_cheap(op) and any(u.name == "linalg.dot_general" for u in users)
                ):
                    mat.add(v)
                    changed = True
    return mat


def _contract_dots(fn: Function, mat: set[Value], epilogues: bool) -> set[Operation]:
    """``dot_general`` ops to run as the matmul family; with ``epilogues``, the result of
    each whose only consumers form a chain of elementwise ops and reshapes
    (:func:`~accy.passes.contraction.is_epilogue_op`, ending at a materialized value no other
    such product feeds) is left unmaterialized, so that chain becomes the region's
    epilogue."""
    dots = {op for op in fn.body.ops
            if eligible_dot(op, lambda v: _is_input(v) or v in mat)}
    if not epilogues:
        return dots
    claimed: set[Value] = set()
    returned = set(fn.returns)
    for op in fn.body.ops:
        if op not in dots:
            continue
        v, end = op.results[0], None
        while len(v.users) == 1 and v not in returned:
            u = v.users[0]
            if not is_epilogue_op(u, v):
                break
            v = u.results[0]
            if v in mat:
                end = v
                break
        if end is not None and end not in claimed:
            claimed.add(end)
            mat.discard(op.results[0])
    return dots


def _collect(v: Value, mat: set[Value], members: set[Operation], inputs: list[Value]) -> None:
    """Gather the ops computing ``v`` inside one region, and the region's inputs."""
    op = v.defining_op
    if op is None or op in members:
        if op is None and v not in inputs:
            inputs.append(v)
        return
    members.add(op)
    for x in op.operands:
        xop = x.defining_op
        if _is_input(x) or (x in mat and not _is_cheap(xop)):
            if x not in inputs:
                inputs.append(x)
        else:
            _collect(x, mat, members, inputs)


def _build_region(fn: Function, v: Value, mat: set[Value],
                  contract: frozenset[Operation] = frozenset()) -> Operation:
    members: set[Operation] = set()
    inputs: list[Value] = []
    _collect(v, mat, members, inputs)
    root = v.defining_op
    kind = "reduce" if root is not None and root.name in ROOT_OPS else "map"
    if members & contract:
        kind = "contract"
    src = Block()
    src.ops = [op for op in fn.body.ops if op in members]
    block = Block([x.type for x in inputs])
    mapping = dict(zip(inputs, block.args, strict=True))
    clone_block_into(src, block, mapping)
    block.append(Operation("dispatch.yield", [mapping[v]], []))
    region_op = Operation(
        "dispatch.region",
        inputs,
        [v.type],
        {"kind": kind},
        [Region(block)],
        location=root.location if root else None,
    )
    fn.body.insert_before(root, region_op)
    v.replace_all_uses_with(region_op.results[0])
    return region_op


def _build_library_region(fn: Function, op: Operation) -> Operation:
    """Wrap kernel-library call ``op`` alone in a ``dispatch.region {kind = "library"}``."""
    inputs = list(dict.fromkeys(op.operands))
    block = Block([x.type for x in inputs])
    mapping = dict(zip(inputs, block.args, strict=True))
    inner = Operation(
        op.name,
        [mapping[x] for x in op.operands],
        [r.type for r in op.results],
        dict(op.attrs),
        location=op.location,
    )
    block.append(inner)
    block.append(Operation("dispatch.yield", [inner.results[0]], []))
    region_op = Operation(
        "dispatch.region",
        inputs,
        [op.results[0].type],
        {"kind": "library"},
        [Region(block)],
        location=op.location,
    )
    fn.body.insert_before(op, region_op)
    op.results[0].replace_all_uses_with(region_op.results[0])
    return region_op


def fuse_function(fn: Function, contraction: str = "loops") -> int:
    """Fuse one function in place; return the number of regions formed.

    ``contraction``: ``library``, ``library-no-epilogue`` or ``loops`` (see the module
    docstring)."""
    mat = _materialized(fn)
    contract: frozenset[Operation] = frozenset()
    if contraction != "loops":
        contract = frozenset(_contract_dots(fn, mat, contraction == "library"))
    count = 0
    for op in list(fn.body.ops):
        if op.name in ("tensor.constant", "func.return", "dispatch.region"):
            continue
        if op.name in LIBRARY_OPS:
            _build_library_region(fn, op)
            count += 1
            continue
        for v in op.results:
            if v in mat and not _is_input(v):
                _build_region(fn, v, mat, contract)
                count += 1
    for op in reversed(list(fn.body.ops)):
        if op.name not in ("func.return", "dispatch.region") and all(
            not r.uses for r in op.results
        ):
            op.erase()
    return count


@dataclass(frozen=True)
class FusionPass(Pass):
    """Fuse elementwise chains, index maps and reduction prologues into dispatch regions."""

    name: ClassVar[str] = "fusion"
    summary: ClassVar[str] = "form dispatch.region work items (elementwise + reduction prologues)"
    contraction: str = field(default="library", metadata={
        "choices": ("library", "library-no-epilogue", "loops")})

    def run(self, module: Module, ctx: PassContext) -> bool:
        mode = self.contraction if _matmul_family_available() else "loops"
        return sum(fuse_function(fn, mode) for fn in module.functions) > 0


def _matmul_family_available() -> bool:
    from accy.errors import InputError
    from accy.families import get_family

    try:
        return get_family("matmul").metadata.get("contract_plan") is not None
    except InputError:
        return False
