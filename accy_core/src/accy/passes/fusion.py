"""Form work items: wrap every computed value that must live in memory in a
``dispatch.region`` holding the ops that compute it.

A value is *materialized* (written to a buffer) when it is returned, is the result of a
reduction or ``dot_general``, is used more than once and is not cheap to recompute, or is
an operand of ``dot_general`` computed by arithmetic (contraction prologues only take index
maps). Everything else is fused into its consumers: elementwise chains, broadcasts,
transposes, reshapes, slices, pads, iota and scalar constants become expressions inside one
kernel, and elementwise producers of a reduction become its prologue. Cheap ops (index maps, scalar
constants, iota) used several times are duplicated into each consumer, and so are up to
:data:`~accy.passes.fusion_rules.RECOMPUTE_BUDGET` simple arithmetic ops over values already
in memory whose consumers read them elementwise
(:func:`~accy.passes.fusion_rules.recomputable`). An operand of a worthwhile
``dot_general`` that the matmul family cannot read as strides is staged into a buffer
(:func:`_stage_dot_operands`).

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

Binding limit: a region's kernel binds one buffer per input plus its output. When the
target profile has ``max_storage_buffers`` (Vulkan: 32 on lavapipe), a region that would
need more is split bottom-up: walking its values operands first, whenever one would read
more buffers than allowed, its operand with the most inputs (through index ops, which are
recomputed) is materialized into a region of its own; this repeats until every region
fits (a sum of 64 arrays becomes three kernels). An op that alone has more operands than
the limit cannot be split and raises :class:`~accy.errors.OutOfResources`.

``loop.*`` ops stay outside regions: their operands are materialized and their results are
inputs (the launch graph runs the body functions, which are fused as functions of their own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from accy.errors import OutOfResources
from accy.ir import Module, Operation, Value
from accy.ir.clone import clone_block_into
from accy.ir.core import Block, Function, Region
from accy.ir.ops.library import LIBRARY_OPS
from accy.ir.ops.loop import LOOP_OPS
from accy.passes.base import Pass, PassContext
from accy.passes.contraction import (
    dot_sizes,
    eligible_dot,
    is_epilogue_op,
    operand_chain_ok,
    operand_view,
    worthwhile,
)
from accy.passes.fusion_rules import (
    INDEX_OPS,
    ROOT_OPS,
)
from accy.passes.fusion_rules import is_cheap as _is_cheap
from accy.passes.fusion_rules import is_input as _is_input
from accy.passes.fusion_rules import recomputable as _recomputable

__all__ = ["INDEX_OPS", "ROOT_OPS", "FusionPass"]


def _materialized(fn: Function) -> set[Value]:
    mat: set[Value] = set(fn.returns)
    for op in fn.body.ops:
        if op.name in ROOT_OPS:
            mat.update(op.results)
        if op.name in LIBRARY_OPS:  # family kernels read whole buffers
            mat.update(op.results)
            mat.update(v for v in op.operands if not _is_input(v))
        if op.name in LOOP_OPS:  # the launch graph binds loop operands as buffers
            mat.update(v for v in op.operands
                       if not _is_input(v) and v.defining_op.name != "tensor.constant")
        if op.name == "tensor.gather":  # generic gather: load indices from memory
            mat.update(v for v in op.operands[1:] if not _is_input(v))
    changed = True
    while changed:
        changed = False
        for op in fn.body.ops:
            if (
                op.name in ROOT_OPS
                or op.name in LIBRARY_OPS
                or op.name in LOOP_OPS
                or op.name in ("tensor.constant", "func.return")
            ):
                continue
            for v in op.results:
                if v in mat:
                    continue
                users = v.users
                if (len(users) > 1 and not _is_cheap(op) and not _recomputable(op, mat)) or (
                    not _is_cheap(op) and any(u.name == "linalg.dot_general" for u in users)
                ):
                    mat.add(v)
                    changed = True
    return mat


#: a contraction operand that is no strided view of a buffer (a window ``x[:, i:i+H, j:j+W]``,
#: a padded or broadcast array) is staged into a buffer of its own when the product does at
#: least this many multiply-adds per staged element (the other operand's free extent)
STAGE_RATIO = 4


def _stage_dot_operands(fn: Function, mat: set[Value]) -> set[Value]:
    """Operands of worthwhile ``dot_general`` ops to copy into buffers so that the product
    runs as the matmul family instead of a per-output loop re-reading index maps (the shifted
    windows of a convolution written as ``einsum`` over slices of ``np.pad``): each such
    operand, an index-map chain the family cannot read as strides, is materialized (a copy
    kernel, ``O(batch*rows*k)`` elements against ``O(batch*m*n*k)`` multiply-adds), and the
    computed value under the chain with it, so several windows of one array compute it
    once. Returns the staged operands (cheap ops forced to memory, like deep-chain cuts)."""
    staged: set[Value] = set()

    def base(v: Value) -> bool:
        return _is_input(v) or v in mat

    for op in fn.body.ops:
        if op.name != "linalg.dot_general" or eligible_dot(op, base):
            continue
        batch, m, n, k = dot_sizes(op)
        if (not worthwhile(batch, m, n, k)
                or op.results[0].type.dtype.value not in ("f32", "f64", "i32")):
            continue
        for side, v in enumerate(op.operands):
            if base(v) or (operand_chain_ok(v, base) and operand_view(v, op, side, base)):
                continue
            if (n if side == 0 else m) < STAGE_RATIO:
                continue
            staged.add(v)
            mat.add(v)
            anchor = v
            while _is_cheap(anchor.defining_op) and anchor.defining_op.operands:
                anchor = anchor.defining_op.operands[0]
            if not _is_input(anchor) and not _is_cheap(anchor.defining_op):
                mat.add(anchor)
    return staged


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


#: Longest chain of ops fused into one kernel expression; a longer chain (a Python loop
#: unrolled at trace time) is cut by writing the value at the limit to memory, so kernel
#: outlining never recurses deeper than this and kernels stay a reasonable size.
MAX_FUSED_DEPTH = 128


def _cut_deep_chains(fn: Function, mat: set[Value],
                     forced: set[Value] = frozenset()) -> set[Value]:
    """Values to materialize because their fused expression would be deeper than
    :data:`MAX_FUSED_DEPTH` (one forward pass; added to ``mat``, returned as well, with
    ``forced``: cheap values already chosen for memory)."""
    depth: dict[Value, int] = {}
    cut: set[Value] = set(forced)
    for op in fn.body.ops:
        if op.name in ("tensor.constant", "func.return") or op.name in LOOP_OPS:
            continue
        d = 1 + max((depth.get(x, 0) for x in op.operands), default=0)
        for r in op.results:
            if d > MAX_FUSED_DEPTH and (r not in mat or _is_cheap(op)):
                cut.add(r)
            depth[r] = 0 if r in cut or (r in mat and not _is_cheap(op)) else d
    mat |= cut
    return cut


def _is_boundary(x: Value, mat: set[Value], cut: set[Value]) -> bool:
    return _is_input(x) or (x in mat and (x in cut or not _is_cheap(x.defining_op)))


def _collect(v: Value, mat: set[Value], members: set[Operation], inputs: list[Value],
             cut: frozenset[Value] | set[Value] = frozenset()) -> None:
    """Gather the ops computing ``v`` inside one region, and the region's inputs, in the
    order a depth-first walk of the operands meets them (an explicit stack: fused chains
    can be long)."""
    op = v.defining_op
    if op is None:
        if v not in inputs:
            inputs.append(v)
        return
    if op in members:
        return
    members.add(op)
    stack = [(op, 0)]
    while stack:
        op, k = stack.pop()
        if k == len(op.operands):
            continue
        stack.append((op, k + 1))
        x = op.operands[k]
        xop = x.defining_op
        if _is_boundary(x, mat, cut) or xop is None:
            if x not in inputs:
                inputs.append(x)
        elif xop not in members:
            members.add(xop)
            stack.append((xop, 0))


def _build_region(fn: Function, v: Value, mat: set[Value], pos: dict[Operation, int],
                  cut: set[Value], contract: frozenset[Operation] = frozenset()) -> Operation:
    members: set[Operation] = set()
    inputs: list[Value] = []
    _collect(v, mat, members, inputs, cut)
    root = v.defining_op
    kind = "reduce" if root is not None and root.name in ROOT_OPS else "map"
    if members & contract:
        kind = "contract"
    src = Block()
    src.ops = sorted(members, key=pos.__getitem__)
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


def _region_inputs(v: Value, mat: set[Value]) -> list[Value]:
    members: set[Operation] = set()
    inputs: list[Value] = []
    _collect(v, mat, members, inputs)
    return inputs


def _read_from_memory(x: Value, mat: set[Value]) -> bool:
    """A region reads operand ``x`` from a buffer (else it computes ``x`` inside)."""
    return _is_input(x) or (x in mat and not _is_cheap(x.defining_op))


def _post_order(v: Value, mat: set[Value]) -> list[Value]:
    """Values computed inside ``v``'s region, operands before users, ``v`` last."""
    order: list[Value] = []
    done: set[Value] = set()
    stack = [(v, False)]
    while stack:  # no recursion: elementwise chains can be long
        x, ready = stack.pop()
        if x in done:
            continue
        inner = [o for o in x.defining_op.operands if not _read_from_memory(o, mat)]
        if not ready:
            stack.append((x, True))
            stack.extend((o, False) for o in inner if o not in done)
            continue
        done.add(x)
        order.append(x)
    return order


def _anchor(o: Value, mat: set[Value]) -> Value | None:
    """What to materialize for operand ``o``: ``o``, or through cheap index ops (which are
    recomputed, never read back) the value below them; None when that is an input."""
    while _is_cheap(o.defining_op):
        operands = o.defining_op.operands
        if not operands or _read_from_memory(operands[0], mat):
            return None
        o = operands[0]
    return o


def _split_region(v: Value, mat: set[Value], max_inputs: int) -> None:
    """Materialize values of ``v``'s region, bottom-up, until each reads at most
    ``max_inputs`` buffers: the operand with the most inputs first."""
    sets: dict[Value, frozenset[Value]] = {}
    for x in _post_order(v, mat):
        op = x.defining_op

        def reads(op: Operation = op) -> set[Value]:
            acc: set[Value] = set()
            for o in op.operands:
                acc |= {o} if _read_from_memory(o, mat) else sets[o]
            return acc

        acc = reads()
        while len(acc) > max_inputs:
            options = [o for o in op.operands
                       if not _read_from_memory(o, mat) and _anchor(o, mat) is not None]
            if not options:
                raise OutOfResources(
                    f"'{op.name}': a kernel would bind {len(acc) + 1} buffers, more than the "
                    f"target allows ({max_inputs + 1}), and no intermediate value splits it; "
                    "combine operands (e.g. concatenate them) first",
                    resource="storage_buffers", required=len(acc) + 1, limit=max_inputs + 1,
                )
            o = max(options, key=lambda o: len(sets[o]))
            anchor = _anchor(o, mat)
            mat.add(anchor)
            while o is not anchor:  # the cheap ops above it now read just the anchor
                sets[o] = frozenset({anchor})
                o = o.defining_op.operands[0]
            acc = reads()
        sets[x] = frozenset(acc)


def _respect_binding_limit(fn: Function, mat: set[Value], max_buffers: int) -> None:
    """Grow ``mat`` until every region reads at most ``max_buffers - 1`` inputs."""
    changed = True
    while changed:
        changed = False
        for op in fn.body.ops:
            if op.name in ("tensor.constant", "func.return", "dispatch.region") or (
                op.name in LIBRARY_OPS
            ):
                continue
            for v in op.results:
                if v not in mat or _is_input(v):
                    continue
                if len(_region_inputs(v, mat)) > max_buffers - 1:
                    _split_region(v, mat, max_buffers - 1)
                    changed = True


def fuse_function(fn: Function, contraction: str = "loops",
                  max_buffers: int | None = None) -> int:
    """Fuse one function in place; return the number of regions formed.

    ``contraction``: ``library``, ``library-no-epilogue`` or ``loops`` (see the module
    docstring). ``max_buffers``: most buffers (inputs + output) one region may bind;
    ``None``: no limit.

    Raises:
        OutOfResources: one op alone needs more than ``max_buffers`` buffers.
    """
    mat = _materialized(fn)
    contract: frozenset[Operation] = frozenset()
    staged: set[Value] = set()
    if contraction != "loops":
        staged = _stage_dot_operands(fn, mat)
        contract = frozenset(_contract_dots(fn, mat, contraction == "library"))
    cut = _cut_deep_chains(fn, mat, staged)
    pos = {op: i for i, op in enumerate(fn.body.ops)}
    if max_buffers is not None:
        _respect_binding_limit(fn, mat, max(max_buffers, 2))
    count = 0
    with fn.body.batch_edits():  # one sweep places every region before its root
        for op in list(fn.body.ops):
            if op.name in ("tensor.constant", "func.return", "dispatch.region") or (
                    op.name in LOOP_OPS):
                continue
            if op.name in LIBRARY_OPS:
                _build_library_region(fn, op)
                count += 1
                continue
            for v in op.results:
                if v in mat and not _is_input(v):
                    _build_region(fn, v, mat, pos, cut, contract)
                    count += 1
    with fn.body.batch_edits():
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
        limit = getattr(ctx.target_profile, "max_storage_buffers", None)
        count = 0
        for fn in module.functions:
            # only a function with a dot_general asks for the matmul family: looking it up
            # loads the kernel families (~0.1-0.2 s of a process's first compile)
            mode = "loops"
            if self.contraction != "loops" and any(
                    op.name == "linalg.dot_general" for op in fn.body.ops):
                mode = self.contraction if _matmul_family_available() else "loops"
            count += fuse_function(fn, mode, limit)
        return count > 0


def _matmul_family_available() -> bool:
    from accy.errors import InputError
    from accy.families import get_family

    try:
        return get_family("matmul").metadata.get("contract_plan") is not None
    except InputError:
        return False
