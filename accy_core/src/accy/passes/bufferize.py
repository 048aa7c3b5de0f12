"""Assign every tensor that lives in memory to a buffer slot.

Slots are numbered per function and recorded as attributes, so the plan prints with the
IR and survives cloning:

- function ``slot_bytes`` (size of each slot in bytes), ``param_slots``, ``result_slots``;
- ``dispatch.region``: ``in_slots``, ``out_slots`` and ``in_place`` (indices of inputs whose
  slot the output reuses);
- ``tensor.constant``: ``slot``.

Parameters, constants and results get slots of their own (results are fresh arrays on every
call). Temporaries are reused once their last reader has run (lifetime-based reuse, best
fit by size), whatever their dtype: a temporary slot is a whole number of
:data:`SLOT_ALIGN` (8) bytes, which is a whole number of elements of every dtype (bool 1,
i32/u32/f32 4, i64/f64 8) — the rule the backends' launch checks apply — and each slot is
its own allocation (so aligned for every dtype). A ``map`` region whose input dies at that
region, has the output's type (same shape and element type: the kernel reads and writes the
one buffer with one type) and is read only at the output's own index (every path from the
input to the ``dispatch.yield`` runs through shape-preserving elementwise ops only; a
transpose, reshape, broadcast, slice or pad on the way reads other elements) writes its
output in place. A loop body's ``in_place_results`` (:mod:`accy.passes.loop_in_place`)
take the slots of their ``in_place_params`` (with the window updates leading to them), and
each region writing one reads its base in place. A ``library`` or ``contract`` region
(kernel-family call) also gets ``scratch_slots``: the temporaries its family plan asks
for, taken from the free slots and released right after it.
A ``loop.*`` op records ``in_slots`` and ``out_slots`` (its results' own slots); its body
functions are planned as functions of their own.

A ``map`` region that only reshapes one input (a chain of ``tensor.reshape``: row-major, so
the bytes are the same) becomes a *view* (kind ``view``, :data:`VIEW_KIND`): its output
shares the input's slot and it has no kernel. The input and its views then form one group
for lifetimes: the slot is released, or written in place, only after the group's last
reader. A view is not made for a function result (results are fresh arrays) nor over a
loop body's in-place carried chain (those slots are written while the view could be read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from accy.ir import Module, Operation, Value
from accy.ir.core import Function
from accy.ir.ops.dispatch import FAMILY_KINDS, VIEW_KIND
from accy.ir.ops.loop import LOOP_OPS
from accy.passes.base import Pass, PassContext
from accy.passes.loop_in_place import in_place_chain

__all__ = ["SLOT_ALIGN", "BufferizePass", "plan_function", "slot_size"]

SLOT_ALIGN = 8  # bytes: a whole number of elements of every dtype


def slot_size(nbytes: int) -> int:
    """Bytes of a temporary slot holding ``nbytes``: rounded up to :data:`SLOT_ALIGN`."""
    return -(-nbytes // SLOT_ALIGN) * SLOT_ALIGN


def _last_uses(fn: Function) -> dict[Value, int]:
    last: dict[Value, int] = {}
    for i, op in enumerate(fn.body.ops):
        for v in op.operands:
            last[v] = i
    return last


def _identity_read(region: Operation, k: int) -> bool:
    """Block argument ``k`` reaches the yield only through shape-preserving elementwise ops
    (so output element ``i`` reads input element ``i`` and nothing else of it)."""
    arg = region.regions[0].block.args[k]
    out = region.results[0].type
    if arg.type != out:
        return False
    todo, seen = [arg], set()
    while todo:
        v = todo.pop()
        for user in v.users:
            if user.name == "dispatch.yield":
                continue
            if not user.op_def.has("elementwise") or user.results[0].type.shape != out.shape:
                return False
            if user not in seen:
                seen.add(user)
                todo.extend(user.results)
    return True


class _Slots:
    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.free: list[int] = []

    def new(self, nbytes: int) -> int:
        self.sizes.append(nbytes)
        return len(self.sizes) - 1

    def take_temp(self, nbytes: int) -> int:
        nbytes = slot_size(nbytes)
        fits = [s for s in self.free if self.sizes[s] >= nbytes]
        if not fits:
            return self.new(nbytes)
        best = min(fits, key=lambda s: self.sizes[s])
        self.free.remove(best)
        return best


def plan_function(
    fn: Function, reuse: bool = True, in_place: bool = True, target: object = None
) -> None:
    """Annotate ``fn`` with its slot plan (see module docstring)."""
    slots = _Slots()
    slot_of: dict[Value, int] = {}
    for p in fn.params:
        slot_of[p] = slots.new(p.type.nbytes)
    returned = fn.returns
    for r, p in zip(fn.attrs.get("in_place_results", ()), fn.attrs.get("in_place_params", ()),
                    strict=True):  # a loop body's carried result written over its parameter
        chain = in_place_chain(fn, r, p)
        for v in chain or ():
            slot_of[v] = slot_of[fn.params[p]]
    for v in dict.fromkeys(returned):
        op = v.defining_op
        if v not in slot_of and op is not None and (op.name == "dispatch.region"
                                                    or op.name in LOOP_OPS):
            slot_of[v] = slots.new(v.type.nbytes)
    chained = {v for v in slot_of if v not in fn.params} | {
        fn.params[p] for p in fn.attrs.get("in_place_params", ())}
    views = _views(fn, chained, returned) if reuse else {}
    last = _group_last(_last_uses(fn), views)
    for i, op in enumerate(fn.body.ops):
        if op.name == "tensor.constant":
            slot_of[op.results[0]] = slots.new(op.results[0].type.nbytes)
            op.attrs["slot"] = slot_of[op.results[0]]
        elif op.name == "dispatch.region" and op.results[0] in views:
            slot_of[op.results[0]] = slot_of[views[op.results[0]]]
            op.attrs.update(kind=VIEW_KIND, in_slots=tuple(slot_of[v] for v in op.operands),
                            out_slots=(slot_of[op.results[0]],), in_place=())
        elif op.name == "dispatch.region":
            _plan_region(op, i, slots, slot_of, last, returned, reuse, in_place, target, views)
        elif op.name in LOOP_OPS:
            _plan_loop(op, i, slots, slot_of, last, returned, reuse, views)
    fn.attrs["slot_bytes"] = tuple(slots.sizes)
    fn.attrs["param_slots"] = tuple(slot_of[p] for p in fn.params)
    fn.attrs["result_slots"] = tuple(slot_of[v] for v in returned)


def _view_source(op: Operation) -> int | None:
    """The operand index a ``map`` region only reshapes, else None."""
    if op.attrs.get("kind", "map") != "map" or len(op.results) != 1:
        return None
    block = op.regions[0].block
    body = [o for o in block.ops if o.name != "dispatch.yield"]
    v = block.ops[-1].operands[0] if block.ops and block.ops[-1].operands else None
    chain = 0
    while v is not None and v.defining_op is not None and v.defining_op.name == "tensor.reshape":
        v, chain = v.defining_op.operands[0], chain + 1
    if v is None or not v.is_block_arg or chain == 0 or chain != len(body):
        return None
    return v.index


def _views(fn: Function, forced: set[Value], returned: list[Value]) -> dict[Value, Value]:
    """View region outputs → the value whose slot they share (the group's root)."""
    root: dict[Value, Value] = {}
    out_of_bounds = set(returned) | forced
    for op in fn.body.ops:
        if op.name != "dispatch.region":
            continue
        k = _view_source(op)
        if k is None or op.results[0] in out_of_bounds:
            continue
        src = op.operands[k]
        src = root.get(src, src)
        if src in forced:
            continue
        root[op.results[0]] = src
    return root


def _group_last(last: dict[Value, int], views: dict[Value, Value]) -> dict[Value, int]:
    """Last uses where a view and its root count as one value (the latest of the group)."""
    if not views:
        return last
    group: dict[Value, int] = {}
    for v, i in last.items():
        r = views.get(v, v)
        group[r] = max(group.get(r, -1), i)
    for v, r in views.items():
        group[r] = max(group.get(r, -1), last.get(v, -1))
    out = dict(last)
    for v in list(out) + list(views):
        r = views.get(v, v)
        if r in group:
            out[v] = group[r]
    return out


def _is_temp(v: Value, returned: list[Value], views: dict[Value, Value] | None = None) -> bool:
    v = views.get(v, v) if views else v
    op = v.defining_op
    return (op is not None and (op.name == "dispatch.region" or op.name in LOOP_OPS)
            and v not in returned)


def _plan_loop(op, i, slots, slot_of, last, returned, reuse, views=None) -> None:
    """A loop's results get slots of their own (the launch graph copies the final carried
    values into them); operands dying at the loop are released only after that, so no
    result slot is an operand's."""
    op.attrs["in_slots"] = tuple(slot_of[v] for v in op.operands)
    for r in op.results:
        if r not in slot_of:
            slot_of[r] = slots.take_temp(r.type.nbytes) if reuse else slots.new(r.type.nbytes)
    op.attrs["out_slots"] = tuple(slot_of[r] for r in op.results)
    if reuse:
        freed = {slot_of[v] for v in op.operands
                 if last.get(v) == i and _is_temp(v, returned, views)}
        slots.free.extend(sorted(freed))


def _in_place_operand(op: Operation, dying: list[Value], slot_of: dict) -> Value | None:
    """A dying input of a ``map`` region its output can overwrite: same type, read only at
    the output's own index, and no view of it read by the region at other elements."""
    if op.attrs.get("kind") != "map":
        return None
    out = op.results[0]
    for v in dying:
        if any(slot_of[w] == slot_of[v] for w in op.operands if w is not v):
            continue
        same = [j for j, w in enumerate(op.operands) if w is v]
        if v.type == out.type and all(_identity_read(op, j) for j in same):
            return v
    return None


def _plan_region(op, i, slots, slot_of, last, returned, reuse, in_place, target=None,
                 views=None) -> None:
    out = op.results[0]
    op.attrs["in_slots"] = tuple(slot_of[v] for v in op.operands)
    dying, seen = [], set()
    for v in dict.fromkeys(op.operands):  # one value per slot: a view and its root share one
        if last.get(v) == i and _is_temp(v, returned, views) and slot_of[v] not in seen:
            seen.add(slot_of[v])
            dying.append(v)
    chosen: tuple[int, ...] = ()
    if out not in slot_of:
        picked = _in_place_operand(op, dying, slot_of) if in_place else None
        if picked is not None:
            slot_of[out] = slot_of[picked]
            dying.remove(picked)
            chosen = tuple(j for j, w in enumerate(op.operands) if w is picked)
        if out not in slot_of:
            slot_of[out] = (slots.take_temp(out.type.nbytes) if reuse
                            else slots.new(slot_size(out.type.nbytes)))
    elif op.attrs.get("kind") == "map":  # given its parameter's slot (in_place_results)
        chosen = tuple(j for j, w in enumerate(op.operands) if slot_of.get(w) == slot_of[out])
    op.attrs["out_slots"] = (slot_of[out],)
    op.attrs["in_place"] = chosen
    if op.attrs.get("kind") in FAMILY_KINDS:
        from accy.families.lowering import scratch_bytes

        scratch = [slots.take_temp(n) if reuse else slots.new(slot_size(n))
                   for n in scratch_bytes(op, target)]
        op.attrs["scratch_slots"] = tuple(scratch)
        if reuse:
            slots.free.extend(scratch)
    if reuse:
        for v in dying:
            if slot_of[v] != slot_of[out]:  # a window update's base lives on in its output
                slots.free.append(slot_of[v])


@dataclass(frozen=True)
class BufferizePass(Pass):
    """Plan buffer slots with lifetime-based reuse and in-place updates."""

    name: ClassVar[str] = "bufferize"
    summary: ClassVar[str] = "assign tensors to buffer slots (reuse by lifetime, in-place)"
    reuse: bool = field(default=True)
    in_place: bool = field(default=True)

    def run(self, module: Module, ctx: PassContext) -> bool:
        from accy.families.lowering import TargetBackend

        target = TargetBackend(ctx.target_profile, ctx.backend,
                               ctx.options.get("family_choices"),
                               ctx.options.get("family_explicit"))
        for fn in module.functions:
            plan_function(fn, self.reuse, self.in_place, target)
        return True
