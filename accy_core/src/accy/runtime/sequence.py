"""Run a launch sequence on a backend: launches in order, loop nodes between them.

Used by :class:`~accy.runtime.Invocation` (host arrays) and the frontend's device-array
runs alike, through a *run context* ``ctx`` with:

- ``ctx.backend``: the live backend;
- ``ctx.buffer(slot, buffers)``: the call's buffer of ``slot`` (``buffers``: slot → buffer),
  falling back to the context's persistent ones (temporaries, constants);
- ``ctx.own(slot)`` / ``ctx.spare(slot)``: the two buffers of a carried loop result slot;
- ``ctx.launch(ln, bound)``: launch :class:`~accy.runtime.GraphLaunch` ``ln`` on the bound
  buffers (on the context's current stream);
- ``ctx.sync()``: wait for everything launched so far (before a host read);
- optionally ``ctx.native_loop(node)``: the backend's native driver of a loop node
  (:func:`accy.runtime.loop_plan.build_native_loop`) or None; :func:`run_loop` then runs
  the whole node in one call (falling back to the launches below when its per-run checks
  refuse the buffers).

A loop rebinds its body's parameter slots in ``buffers`` (:mod:`accy.runtime.loop_graph`
describes the protocol). A ``loop.for`` is
``trips`` repetitions of its body's launches with no synchronize and no read-back; a
``loop.while`` reads its condition (one ``bool``) back before each iteration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from accy.backend import Geometry

if TYPE_CHECKING:  # loop graphs: only programs with loops need them (a warm first call
    # of a loop-free program imports neither)
    from accy.runtime.loop_graph import LoopNode, Program

__all__ = ["geometry", "launch_node", "run_loop", "run_sequence"]


def launch_node(ctx: Any, ln: Any, buffers: dict[int, Any]) -> None:
    """Launch ``ln`` through ``ctx`` unless it has no work-groups."""
    if ln.groups <= 0:
        return
    ctx.launch(ln, [ctx.buffer(s, buffers) for s in ln.slots])


def geometry(ln: Any) -> Geometry:
    """Return the :class:`Geometry` of launch ``ln``."""
    return Geometry(ln.groups, ln.workgroup_size)


def run_sequence(ctx: Any, prog: Program | Any, buffers: dict[int, Any],
                 before_launch: Callable[[int], None] | None = None) -> None:
    """Launch ``prog``'s launches and loops in order; ``before_launch(i)`` runs before
    launch ``i`` (after the loops placed there) and with ``len(launches)`` at the end."""
    loops, li = prog.loops, 0
    for i, ln in enumerate(prog.launches):
        while li < len(loops) and loops[li].before <= i:
            run_loop(ctx, loops[li], buffers)
            li += 1
        if before_launch is not None:
            before_launch(i)
        launch_node(ctx, ln, buffers)
    while li < len(loops):
        run_loop(ctx, loops[li], buffers)
        li += 1
    if before_launch is not None:
        before_launch(len(prog.launches))


def _advance(ctx: Any, node: LoopNode, buffers: dict[int, Any]) -> None:
    """Hand the results to the parameters; give each result slot its other buffer."""
    new = [(p, buffers[r]) for p, r in node.carry]
    for p, buf in new:
        buffers[p] = buf
    for r in dict.fromkeys(r for _, r in node.carry):
        first = ctx.own(r)  # the slot's own persistent buffer
        buffers[r] = ctx.spare(r) if buffers[r] is first else first


def _condition(ctx: Any, node: LoopNode, buffers: dict[int, Any]) -> bool:
    for c, p in node.cond_bind:
        buffers[c] = buffers[p]
    run_sequence(ctx, node.cond, buffers)
    ctx.sync()
    flag = np.zeros(1, dtype=np.uint8)
    ctx.backend.read(ctx.buffer(node.cond_slot, buffers), flag)
    return bool(flag[0])


def run_loop(ctx: Any, node: LoopNode, buffers: dict[int, Any]) -> None:
    """Run one loop node to completion (see the module docstring)."""
    from accy.runtime.loop_plan import origin_buffers

    native = getattr(ctx, "native_loop", None)
    driver = native(node) if native is not None else None
    if driver is not None and driver.run(origin_buffers(ctx, driver.flat, buffers)):
        return
    for p, outer in node.bind:
        buffers[p] = ctx.buffer(outer, buffers)
    for _, r in node.carry:
        buffers[r] = ctx.own(r)
    if node.trips is not None:
        for _ in range(node.trips):
            run_sequence(ctx, node.body, buffers)
            _advance(ctx, node, buffers)
    else:
        while _condition(ctx, node, buffers):
            run_sequence(ctx, node.body, buffers)
            _advance(ctx, node, buffers)
    for f in node.finals:
        launch_node(ctx, f, buffers)
