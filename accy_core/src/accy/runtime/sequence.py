"""Run a launch sequence on a backend: launches in order, loop nodes between them.

Used by :class:`~accy.runtime.Executable` (host arrays) and the frontend's device-array
runs alike. Buffers are looked up per slot in the call's ``buffers`` (slot → buffer) with the
executable's persistent ones as fallback; a loop rebinds its body's parameter slots in
``buffers`` (:mod:`accy.runtime.loop_graph` describes the protocol). A ``loop.for`` is
``trips`` repetitions of its body's launches with no synchronize and no read-back; a
``loop.while`` reads its condition (one ``bool``) back before each iteration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accy.backend import Geometry
from accy.runtime.loop_graph import LoopNode, Program

__all__ = ["run_sequence"]


def _launch(exe: Any, ln: Any, buffers: dict[int, Any]) -> None:
    if ln.groups <= 0:
        return
    bound = [exe._buffer(s, buffers) for s in ln.slots]
    exe.backend.launch(exe._loaded[ln.kernel], Geometry(ln.groups, ln.workgroup_size), bound,
                       list(ln.scalars))


def run_sequence(exe: Any, prog: Program | Any, buffers: dict[int, Any],
                 before_launch: Callable[[int], None] | None = None) -> None:
    """Launch ``prog``'s launches and loops in order; ``before_launch(i)`` runs before
    launch ``i`` (after the loops placed there) and with ``len(launches)`` at the end."""
    loops, li = prog.loops, 0
    for i, ln in enumerate(prog.launches):
        while li < len(loops) and loops[li].before <= i:
            run_loop(exe, loops[li], buffers)
            li += 1
        if before_launch is not None:
            before_launch(i)
        _launch(exe, ln, buffers)
    while li < len(loops):
        run_loop(exe, loops[li], buffers)
        li += 1
    if before_launch is not None:
        before_launch(len(prog.launches))


def _spare(exe: Any, slot: int) -> Any:
    """The second buffer of a carried result slot (persistent, freed by ``close``)."""
    spares = exe.__dict__.setdefault("_spare", {})
    buf = spares.get(slot)
    if buf is None:
        buf = spares[slot] = exe._new_persistent(slot)
    return buf


def _advance(exe: Any, node: LoopNode, buffers: dict[int, Any]) -> None:
    """Hand the results to the parameters; give each result slot its other buffer."""
    new = [(p, buffers[r]) for p, r in node.carry]
    for p, buf in new:
        buffers[p] = buf
    for r in dict.fromkeys(r for _, r in node.carry):
        first = exe._buffer(r, {})  # the slot's own persistent buffer
        buffers[r] = _spare(exe, r) if buffers[r] is first else first


def _condition(exe: Any, node: LoopNode, buffers: dict[int, Any]) -> bool:
    for c, p in node.cond_bind:
        buffers[c] = buffers[p]
    run_sequence(exe, node.cond, buffers)
    exe.backend.synchronize()
    flag = np.zeros(1, dtype=np.uint8)
    exe.backend.read(exe._buffer(node.cond_slot, buffers), flag)
    return bool(flag[0])


def run_loop(exe: Any, node: LoopNode, buffers: dict[int, Any]) -> None:
    """Run one loop node to completion (see the module docstring)."""
    for p, outer in node.bind:
        buffers[p] = exe._buffer(outer, buffers)
    for _, r in node.carry:
        buffers[r] = exe._buffer(r, {})
    if node.trips is not None:
        for _ in range(node.trips):
            run_sequence(exe, node.body, buffers)
            _advance(exe, node, buffers)
    else:
        while _condition(exe, node, buffers):
            run_sequence(exe, node.body, buffers)
            _advance(exe, node, buffers)
    for f in node.finals:
        _launch(exe, f, buffers)
