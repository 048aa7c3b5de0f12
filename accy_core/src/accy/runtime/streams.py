"""Stream assignment: put independent launch-graph nodes on different streams.

:func:`plan_streams` walks a :class:`~accy.runtime.deps.DependencyGraph` in program order
(a list-scheduling heuristic, greedy, one pass). A node continues the stream of its latest
predecessor when that predecessor is still the last node on its stream (a dependency
chain stays on one in-order stream and needs no event); otherwise it opens a new stream,
up to ``max_streams``, then reuses the stream whose last node is oldest. For each
predecessor on another stream the node waits for that predecessor's event (only the latest
predecessor per stream, and none a node earlier on its stream already waited for: a
stream is in order), and that predecessor signals its event.

Nodes that launch nothing (zero work-groups) get no stream and no event; their successors
inherit their predecessors instead, so ordering through them is kept.
"""

from __future__ import annotations

from typing import Any

from accy.records import record

__all__ = ["StreamPlan", "plan_streams"]


@record
class StreamPlan:
    """Where each node of a dependency graph runs and what it waits for.

    Attributes:
        stream_of: stream index per node (``-1``: the node launches nothing).
        waits: per node, the nodes (on other streams) whose events it waits for.
        signals: per node, whether it signals its event when done.
        count: number of streams used.
    """

    stream_of: tuple[int, ...]
    waits: tuple[tuple[int, ...], ...]
    signals: tuple[bool, ...]
    count: int


def _is_empty(node: Any) -> bool:
    return not hasattr(node, "body") and node.groups <= 0


def plan_streams(deps: Any, max_streams: int = 4) -> StreamPlan:
    """Return the :class:`StreamPlan` of ``deps`` on at most ``max_streams`` streams.

    Raises:
        InputError: ``max_streams`` < 1.
    """
    from accy.errors import InputError

    if max_streams < 1:
        raise InputError(f"plan_streams: max_streams must be >= 1, got {max_streams}")
    n = len(deps.nodes)
    direct: list[set[int]] = [set() for _ in range(n)]
    for e in deps.edges:
        direct[e.dst].add(e.src)
    preds: list[set[int]] = []
    for j in range(n):  # empty nodes pass their predecessors on
        eff: set[int] = set()
        for p in direct[j]:
            eff |= preds[p] if _is_empty(deps.nodes[p]) else {p}
        preds.append(eff)
    stream_of = [-1] * n
    waits: list[tuple[int, ...]] = [()] * n
    signals = [False] * n
    last: list[int] = []  # last node of each stream
    seen: list[dict[int, int]] = []  # per stream: other stream → latest node waited for
    for j, node in enumerate(deps.nodes):
        if _is_empty(node):
            continue
        chained = [s for s, tail in enumerate(last) if tail in preds[j]]
        if chained:
            s = max(chained, key=lambda k: last[k])
        elif len(last) < max_streams:
            last.append(j)
            seen.append({})
            s = len(last) - 1
        else:
            s = min(range(len(last)), key=lambda k: last[k])
        latest: dict[int, int] = {}
        for p in preds[j]:
            ps = stream_of[p]
            if ps != s and p > seen[s].get(ps, -1):  # not yet waited for on stream s
                latest[ps] = max(latest.get(ps, -1), p)
        seen[s].update(latest)
        waits[j] = tuple(sorted(latest.values()))
        for p in waits[j]:
            signals[p] = True
        stream_of[j] = s
        last[s] = j
    return StreamPlan(tuple(stream_of), tuple(waits), tuple(signals), len(last))
