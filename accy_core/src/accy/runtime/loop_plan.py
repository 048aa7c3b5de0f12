"""A loop node flattened for a native loop driver: slot moves, launches and jumps.

:func:`flatten_loop` turns a :class:`~accy.runtime.loop_graph.LoopNode` (nested loops,
``loop.while`` conditions and ``finals`` included) into a straight list of operations over
one *slot table* (an address per slot) that a backend's driver runs with no host round
trip (see :mod:`accy.runtime.sequence` for the protocol it reproduces):

- ``("launch", ln)``: launch :class:`~accy.runtime.GraphLaunch` ``ln`` on the buffers its
  slots hold now (launches with no work-groups are left out);
- ``("move", dst, src)``: slot ``dst`` takes the buffer of slot ``src``;
- ``("toggle", r, own, spare)``: slot ``r`` takes ``spare``'s buffer if it holds ``own``'s,
  else ``own``'s (the double buffering of a carried result);
- ``("setc", c, n)``: counter ``c`` (a slot-table entry) is set to ``n``;
- ``("decjz", c, target)``: if counter ``c`` is 0 jump to operation ``target``, else count
  it down;
- ``("jmp", target)``; ``("brz", slot, target, w)``: jump when the ``bool`` byte at the
  start of ``slot``'s buffer is 0 (``w`` numbers the ``loop.while``; ``("wstart", w)``
  marks its entry and is a no-op for drivers).

Slots no operation moves into are *origins*: the runtime resolves each once per run, as
``ctx.buffer(slot)``, ``ctx.own(slot)`` or ``ctx.spare(slot)`` (:attr:`FlatLoop.origins`).

:func:`alias_facts` checks once, by simulating the slot moves, what the backends' launch
checks check per launch: no buffer a ``noalias`` kernel writes is bound twice to one launch,
and which pairs of origins meet in a launch with one of them written (their memory must be
disjoint: :meth:`FlatLoop.disjoint` checks that per run, vectorized). The moves are periodic
after two iterations, so a loop of ``n > 4`` trips is simulated for ``4 + n % 2`` (every
reachable binding occurs, with the right parity at exit) and a while loop for 0 to 4 trips.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import field
from typing import Any

import numpy as np

from accy.records import record

__all__ = ["FlatLoop", "alias_facts", "flatten_loop"]

#: simulated operations beyond which alias_facts gives up (the runtime then keeps run_loop)
SIM_BUDGET = 200_000


@record(frozen=False)
class FlatLoop:
    """A flattened loop node (see the module docstring).

    Attributes:
        ops: the operations; jump targets are indices into ``ops``.
        size: entries of the slot table (graph slots, then own/spare aliases, counters).
        origins: ``(table entry, kind, slot)`` with kind ``"buffer"``, ``"own"`` or
            ``"spare"``: how the runtime fills the entry before a run.
        element_bytes: per origin (index into ``origins``), the lcm of the element sizes of
            the kernel buffers it is bound to (a bound buffer's size must be a multiple).
        pairs: ``(i, j)`` origin indices that meet in one launch with one of them written.
        name: for messages.
    """

    ops: list[tuple] = field(default_factory=list)
    size: int = 0
    origins: list[tuple[int, str, int]] = field(default_factory=list)
    element_bytes: list[int] = field(default_factory=list)
    pairs: np.ndarray | None = None
    name: str = "loop"

    def disjoint(self, spans: np.ndarray) -> bool:
        """Whether the origins of every pair in :attr:`pairs` have disjoint memory
        (``spans``: per origin, first byte address and one past the last; empty buffers
        overlap nothing)."""
        p = self.pairs
        if p is None or not len(p):
            return True
        lo_a, hi_a = spans[p[:, 0], 0], spans[p[:, 0], 1]
        lo_b, hi_b = spans[p[:, 1], 0], spans[p[:, 1], 1]
        hit = (lo_a < hi_b) & (lo_b < hi_a) & (lo_a < hi_a) & (lo_b < hi_b)
        return not bool(hit.any())


class _Builder:
    def __init__(self, slots: int) -> None:
        self.ops: list[tuple] = []
        self.size = slots
        self.alias: dict[tuple[str, int], int] = {}
        self.whiles = 0

    def entry(self, kind: str, slot: int) -> int:
        key = (kind, slot)
        if key not in self.alias:
            self.alias[key] = self.size
            self.size += 1
        return self.alias[key]

    def counter(self) -> int:
        self.size += 1
        return self.size - 1

    def program(self, prog: Any) -> None:
        loops, li = prog.loops, 0
        for i, ln in enumerate(prog.launches):
            while li < len(loops) and loops[li].before <= i:
                self.loop(loops[li])
                li += 1
            if ln.groups > 0:
                self.ops.append(("launch", ln))
        for node in loops[li:]:
            self.loop(node)

    def loop(self, node: Any) -> None:
        ops = self.ops
        for p, outer in node.bind:
            ops.append(("move", p, outer))
        results = list(dict.fromkeys(r for _, r in node.carry))
        for r in results:
            ops.append(("move", r, self.entry("own", r)))
        if node.trips is not None:
            c = self.counter()
            ops.append(("setc", c, int(node.trips)))
            top = len(ops)
            ops.append(None)  # decjz, patched below
            self.program(node.body)
            self.advance(node, results)
            ops.append(("jmp", top))
            ops[top] = ("decjz", c, len(ops))
        else:
            w = self.whiles
            self.whiles += 1
            ops.append(("wstart", w))
            top = len(ops)
            for c, p in node.cond_bind:
                ops.append(("move", c, p))
            self.program(node.cond)
            test = len(ops)
            ops.append(None)
            self.program(node.body)
            self.advance(node, results)
            ops.append(("jmp", top))
            ops[test] = ("brz", node.cond_slot, len(ops), w)
        for f in node.finals:
            if f.groups > 0:
                ops.append(("launch", f))

    def advance(self, node: Any, results: list[int]) -> None:
        """``_advance`` of :mod:`accy.runtime.sequence`: every parameter takes its result's
        buffer (all read before any is written), then each result its other buffer."""
        dsts = {p for p, _ in node.carry}
        pending = list(node.carry)
        if dsts & {r for _, r in pending}:  # a result slot is also a parameter: via temps
            temps = []
            for p, r in pending:
                t = self.counter()
                self.ops.append(("move", t, r))
                temps.append((p, t))
            pending = temps
        for p, r in pending:
            self.ops.append(("move", p, r))
        for r in results:
            self.ops.append(("toggle", r, self.entry("own", r), self.entry("spare", r)))


def flatten_loop(node: Any, slots: int, name: str = "loop") -> FlatLoop:
    """The :class:`FlatLoop` of loop node ``node`` of a graph with ``slots`` slots; origins
    are ordered by table entry. ``alias_facts`` fills ``element_bytes`` and ``pairs``."""
    b = _Builder(slots)
    b.loop(node)
    moved = {op[1] for op in b.ops if op[0] == "move"}
    read: set[int] = set()
    for op in b.ops:
        if op[0] == "launch":
            read.update(op[1].slots)
        elif op[0] == "move":
            read.add(op[2])
        elif op[0] == "brz":
            read.add(op[1])
    origins = [(s, "buffer", s) for s in sorted(read - moved) if s < slots]
    origins += [(e, kind, s) for (kind, s), e in sorted(b.alias.items(), key=lambda kv: kv[1])]
    return FlatLoop(b.ops, b.size, origins, name=name)


def _trips(n: int) -> int:
    return n if n <= 4 else 4 + n % 2


class _Sim:
    """One simulation of a flat loop over origin indices (see :func:`alias_facts`)."""

    def __init__(self, flat: FlatLoop, buffers: Any, elem: list[int],
                 pairs: set[tuple[int, int]], seen: set) -> None:
        self.flat, self.buffers = flat, buffers
        self.elem, self.pairs, self.seen = elem, pairs, seen
        self.work = 0

    def launch(self, pc: int, ln: Any, table: dict[int, int]) -> str | None:
        from accy.kernel.dtypes import dtype_bytes

        bound = tuple(table[s] for s in ln.slots)
        if (pc, bound) in self.seen:
            return None
        self.seen.add((pc, bound))
        bufs = self.buffers(ln.kernel)  # (name, dtype, access) per buffer
        for k, o in enumerate(bound[:len(bufs)]):
            self.elem[o] = math.lcm(self.elem[o], dtype_bytes(bufs[k][1]))
        for k, o in enumerate(bound[:len(bufs)]):
            if bufs[k][2] == "read":
                continue
            for j, o2 in enumerate(bound):
                if j != k and o2 == o:
                    return (f"kernel {ln.kernel!r} gets one buffer twice, written as "
                            f"{bufs[k][0]!r}")
                if j != k:
                    self.pairs.add((min(o, o2), max(o, o2)))
        return None

    def run(self, budget: dict[int, int]) -> str | None:
        table = {e: i for i, (e, _, _) in enumerate(self.flat.origins)}
        counters: dict[int, int] = {}
        visits = dict.fromkeys(budget, 0)
        pc, ops = 0, self.flat.ops
        while pc < len(ops):
            self.work += 1
            if self.work > SIM_BUDGET:
                return "too many launches to check"
            op = ops[pc]
            kind = op[0]
            pc += 1
            if kind == "launch":
                why = self.launch(pc, op[1], table)
                if why is not None:
                    return why
            elif kind in ("move", "toggle"):
                _bind(table, op)
            else:
                pc = _jump(op, pc, counters, visits, budget)
        return None


def _bind(table: dict[int, int], op: tuple) -> None:
    if op[0] == "move":
        table[op[1]] = table[op[2]]
    else:
        _, r, own, spare = op
        table[r] = table[spare] if table[r] == table[own] else table[own]


def _jump(op: tuple, pc: int, counters: dict[int, int], visits: dict[int, int],
          budget: dict[int, int]) -> int:
    """The next operation after control operation ``op`` (simulated trips: ``_trips``;
    while loop ``w`` runs ``budget[w]`` iterations)."""
    kind = op[0]
    if kind == "setc":
        counters[op[1]] = _trips(op[2])
    elif kind == "decjz":
        if counters[op[1]] == 0:
            return op[2]
        counters[op[1]] -= 1
    elif kind == "jmp":
        return op[1]
    elif kind == "wstart":
        visits[op[1]] = 0
    elif kind == "brz":
        if visits[op[3]] >= budget[op[3]]:
            return op[2]
        visits[op[3]] += 1
    return pc


def alias_facts(flat: FlatLoop, buffers: Any) -> str | None:
    """Simulate ``flat``'s slot moves (module docstring) and fill ``element_bytes`` and
    ``pairs``; return why the loop cannot run natively (a written buffer bound twice to one
    launch, or too much to simulate), or None.

    ``buffers``: kernel name → ``(name, dtype, access)`` of each of its buffers
    (:meth:`~accy.runtime.graph.LaunchGraph.kernel_buffers`), or a mapping of kernel name →
    kernel IR.
    """
    if not callable(buffers):
        from accy.runtime.graph import buffer_spec

        table = buffers
        buffers = lambda name: buffer_spec(table[name])  # noqa: E731
    whiles = sorted({op[3] for op in flat.ops if op[0] == "brz"})
    if len(whiles) > 2:
        return "more than two while loops"
    elem = [1] * len(flat.origins)
    pairs: set[tuple[int, int]] = set()
    sim = _Sim(flat, buffers, elem, pairs, set())
    for trips in itertools.product(range(5), repeat=len(whiles)):
        why = sim.run(dict(zip(whiles, trips, strict=True)))
        if why is not None:
            return why
    flat.element_bytes = elem
    flat.pairs = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return None


def kernels_of(flat: FlatLoop) -> list[str]:
    """Names of the kernels ``flat`` launches, each once, in first-launch order."""
    return list(dict.fromkeys(op[1].kernel for op in flat.ops if op[0] == "launch"))


def build_native_loop(exe: Any, node: Any) -> Any:
    """The backend's native driver of loop ``node`` of executable ``exe``
    (``backend.bind_loop``), or None when the backend has none or the loop cannot run
    natively (the runtime then launches it one launch at a time).

    Raises:
        LaunchError: from ``bind_loop`` (a destroyed kernel, mismatched scalars).
    """
    bind = getattr(exe.backend, "bind_loop", None)
    if bind is None or not exe._host:
        return None
    g = exe.graph
    flat = flatten_loop(node, len(g.slot_bytes), node.name)
    if alias_facts(flat, g.kernel_buffers) is not None:
        return None
    return bind(flat, {name: exe._kernel(name) for name in kernels_of(flat)})


def origin_buffers(ctx: Any, flat: FlatLoop, buffers: dict[int, Any]) -> list[Any]:
    """The buffer of each of ``flat``'s origins in run context ``ctx`` (the sequence
    protocol of :mod:`accy.runtime.sequence`), in order."""
    out = []
    for _, kind, slot in flat.origins:
        if kind == "buffer":
            out.append(ctx.buffer(slot, buffers))
        elif kind == "own":
            out.append(ctx.own(slot))
        else:
            out.append(ctx.spare(slot))
    return out
