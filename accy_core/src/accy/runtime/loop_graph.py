"""Loop nodes of a launch graph: a launch sequence the runtime repeats on the device.

A :class:`LoopNode` sits in a launch sequence (a :class:`~accy.runtime.LaunchGraph` or a
loop's :class:`Program`) before launch ``before``. Its body is the launch graph of the loop's
body function, merged into the enclosing graph's slots (one slot space per executable):

- ``bind``: before the first iteration, body parameter slots take the enclosing buffers of
  the loop operands (and of the constant initial induction variable);
- ``carry``: after each iteration, each carried parameter slot takes the buffer its result
  slot was written to, and the result slot takes the other of its two buffers (double
  buffering: a body never writes its parameters, so nothing is copied between iterations);
  a result the body writes over its parameter (``in_place_results``,
  :mod:`accy.passes.loop_in_place`) has the parameter's slot and no carry pair: that slot
  keeps the operand's buffer (a copy the enclosing function made for the loop) throughout;
- ``finals``: copy launches from the carried parameter slots into the loop's result slots;
- ``trips``: the fixed trip count of ``loop.for``; the host launches the body ``trips``
  times without reading anything back (the next induction variable is computed on the
  device). ``loop.while`` (``trips`` None) runs ``cond`` and reads its ``bool`` result slot
  ``cond_slot`` back before every iteration; ``cond_bind`` binds its parameter slots to the
  body parameter slots' current buffers.
"""

from __future__ import annotations

import math
from dataclasses import field, replace
from typing import Any

import numpy as np

from accy.errors import UnsupportedError
from accy.records import record
from accy.runtime.resources import MIN_BUFFER_BYTES

__all__ = ["LoopNode", "Program", "absorb_loop", "copy_launch"]


@record(frozen=False)
class Program:
    """A launch sequence: launches in order and loop nodes between them."""

    launches: list[Any] = field(default_factory=list)
    loops: list[LoopNode] = field(default_factory=list)


@record
class LoopNode:
    """One loop of a launch graph (see the module docstring); all fields are slot numbers
    of the executable's one slot space."""

    before: int
    body: Program
    bind: tuple[tuple[int, int], ...]
    carry: tuple[tuple[int, int], ...]
    finals: tuple[Any, ...]
    trips: int | None = None
    cond: Program | None = None
    cond_bind: tuple[tuple[int, int], ...] = ()
    cond_slot: int = -1
    name: str = "loop"

    def launch_count(self) -> int:
        """Launches of one iteration (nested loops counted once per their own trips)."""
        return _count(self.body) + (_count(self.cond) if self.cond is not None else 0)


def _count(p: Program) -> int:
    return len(p.launches) + sum(ln.launch_count() * (ln.trips or 1) + len(ln.finals)
                                 for ln in p.loops)


def _shift_program(p: Program, base: int) -> Program:
    return Program([replace(ln, slots=tuple(s + base for s in ln.slots)) for ln in p.launches],
                   [_shift_loop(n, base) for n in p.loops])


def _pairs(ps, base: int) -> tuple[tuple[int, int], ...]:
    return tuple((a + base, b + base) for a, b in ps)


def _shift_loop(n: LoopNode, base: int) -> LoopNode:
    return replace(
        n, body=_shift_program(n.body, base), bind=_pairs(n.bind, base),
        carry=_pairs(n.carry, base),
        finals=tuple(replace(f, slots=tuple(s + base for s in f.slots)) for f in n.finals),
        cond=None if n.cond is None else _shift_program(n.cond, base),
        cond_bind=_pairs(n.cond_bind, base), cond_slot=n.cond_slot + base)


def copy_launch(g: Any, dtype: Any, n: int, dst: int, src: int) -> Any:
    """A launch copying ``n`` elements of ``dtype`` from slot ``src`` to slot ``dst``; its
    kernel (outlined like any map region) joins ``g.kernels``."""
    from accy.ir import Operation, TensorType
    from accy.ir.core import Block, Region
    from accy.passes.outline_kernels import outline_region
    from accy.runtime.graph import GraphLaunch

    t = TensorType(dtype, (n,))
    block = Block([t])
    block.append(Operation("dispatch.yield", [block.args[0]], []))
    region = Operation("dispatch.region", [Operation("tensor.iota", [], [t], {"dim": 0})
                                           .results[0]], [t], {"kind": "map"}, [Region(block)])
    name = f"loop_copy_{t.dtype.value}_{n}"
    kernel, groups = outline_region(region, name)
    g.kernels[name] = kernel
    return GraphLaunch(name, groups, kernel.workgroup_size, (dst, src))


def absorb(g: Any, sub: Any, what: str) -> tuple[Program, int]:
    """Merge graph ``sub`` (a loop body's) into ``g``'s slots; return its program and the
    slot offset it got."""
    for c in sub.checks:  # constant indices are checked once, here
        arr = sub.constants.get(c.slot)
        if arr is not None and arr.size and not ((arr >= c.low) & (arr < c.high)).all():
            from accy.families.validate import IndexOutOfRangeError

            bad = int(np.argmax((arr.reshape(-1) < c.low) | (arr.reshape(-1) >= c.high)))
            raise IndexOutOfRangeError(
                f"{what}: {c.what} {int(arr.reshape(-1)[bad])} at position {bad} is out of "
                f"range [{c.low}, {c.high})", bad, int(arr.reshape(-1)[bad]), c.high)
    if any(c.slot not in sub.constants for c in sub.checks):
        raise UnsupportedError(
            f"{what}: index-checked gathers or scatters inside a loop body are not supported; "
            "use mode='clip' or 'wrap', or move the indexing out of the loop",
            feature="loop-index-check")
    base = len(g.slot_bytes)
    g.slot_bytes.extend(sub.slot_bytes)
    for s, arr in sub.constants.items():
        g.constants[s + base] = arr
    g.kernels.update(sub.kernels)
    return _shift_program(Program(list(sub.launches), list(sub.loops)), base), base


def _const_slot(g: Any, value: np.ndarray) -> int:
    g.slot_bytes.append(max(value.nbytes, MIN_BUFFER_BYTES))
    g.constants[len(g.slot_bytes) - 1] = value
    return len(g.slot_bytes) - 1


def absorb_loop(g: Any, module: Any, op: Any, before: int, build: Any) -> LoopNode:
    """The :class:`LoopNode` of loop op ``op`` (after the kernel stage) in graph ``g``;
    ``build(module, fn)`` makes a function's launch graph."""
    n = op.attrs["carried"]
    ins, outs = op.attrs["in_slots"], op.attrs["out_slots"]
    body_fn = module.function(op.attrs["body"])
    body_g = build(module, body_fn)
    body, base = absorb(g, body_g, f"@{body_fn.name}")
    params = [s + base for s in body_g.param_slots]
    results = [s + base for s in body_g.result_slots]
    if op.name == "loop.for":
        iv = _const_slot(g, np.asarray(op.attrs["lower"], np.int32))
        bind = ((params[0], iv),) + tuple(zip(params[1:], ins, strict=True))
        # a body that never reads its induction variable does not compute the next one
        iv_carry = ((params[0], results[n]),) if body_fn.attrs.get("iv_carried") else ()
        carry = iv_carry + tuple(zip(params[1:n + 1], results[:n], strict=True))
        carried_params = params[1:n + 1]
        step = op.attrs.get("step", 1)
        trips = max(0, math.ceil((op.attrs["upper"] - op.attrs["lower"]) / step))
        cond, cond_bind, cond_slot = None, (), -1
    else:
        bind = tuple(zip(params, ins, strict=True))
        carry = tuple(zip(params[:n], results, strict=True))
        carried_params = params[:n]
        cond_fn = module.function(op.attrs["cond"])
        cond_g = build(module, cond_fn)
        cond, cbase = absorb(g, cond_g, f"@{cond_fn.name}")
        cond_bind = tuple((s + cbase, p) for s, p in zip(cond_g.param_slots, params, strict=True))
        cond_slot, trips = cond_g.result_slots[0] + cbase, None
    carry = tuple((p, r) for p, r in carry if p != r)  # in place: one buffer all along
    finals = tuple(copy_launch(g, r.type.dtype, r.type.num_elements, dst, src)
                   for r, dst, src in zip(op.results, outs, carried_params, strict=True))
    return LoopNode(before, body, bind, carry, finals, trips, cond, cond_bind, cond_slot,
                    name=f"{op.name} @{body_fn.name}")
