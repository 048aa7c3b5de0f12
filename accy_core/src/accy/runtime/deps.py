"""Dependency edges of a launch graph, from each node's buffer read and write sets.

The nodes of a :class:`~accy.runtime.LaunchGraph` are its top-level launches and loop nodes
in program order (a loop node placed ``before=i`` comes before launch ``i``, as
:func:`~accy.runtime.sequence.run_sequence` runs them). A launch reads the slots bound to its
kernel's ``read``/``readwrite`` buffers (and any extra bound slot, e.g. an element-count
buffer) and writes those bound to ``write``/``readwrite`` buffers. A loop node is one node
whose sets are the union over its body, condition and final copies, plus the outer slots
it binds: the loop runs as a unit, on one stream.

Edges go from an earlier node to a later one:

- ``RAW`` (read after write): the later node reads a slot the last earlier writer wrote;
- ``WAR`` (write after read): the later node writes a slot an earlier node read since the
  last write of that slot;
- ``WAW`` (write after write): the later node writes a slot the last earlier writer wrote.

Only these edges are kept (not the transitive closure), which is enough: running every
node after its predecessors gives the results of program order, and program order is a
topological order (:meth:`DependencyGraph.topological_order` returns it).
"""

from __future__ import annotations

import heapq
from typing import Any

from accy.records import record
from accy.runtime.graph import graph_nodes

__all__ = ["DependencyGraph", "Edge", "dependency_graph", "graph_nodes"]


@record
class Edge:
    """``dst`` must run after ``src`` (node indices); ``kind`` is ``RAW``, ``WAR`` or ``WAW``;
    ``slot`` is the slot that makes them conflict."""

    src: int
    dst: int
    kind: str
    slot: int


@record
class DependencyGraph:
    """Nodes in program order, their read/write slot sets and the edges between them.

    Attributes:
        nodes: :class:`~accy.runtime.GraphLaunch` or
            :class:`~accy.runtime.loop_graph.LoopNode` objects, in program order.
        reads: slots each node reads.
        writes: slots each node writes.
        edges: dependency edges, sorted by ``(dst, src, kind)``.
    """

    nodes: tuple[Any, ...]
    reads: tuple[frozenset[int], ...]
    writes: tuple[frozenset[int], ...]
    edges: tuple[Edge, ...]

    def predecessors(self, node: int) -> tuple[int, ...]:
        """Return the nodes ``node`` depends on directly, ascending."""
        return tuple(sorted({e.src for e in self.edges if e.dst == node}))

    def topological_order(self) -> list[int]:
        """Return a topological order of the nodes, smallest ready index first.

        Every edge points forward, so this is program order ``[0, 1, ..., n-1]``; it is
        computed from the edges (Kahn's algorithm) so that a test can check exactly that.
        """
        n = len(self.nodes)
        indegree = [0] * n
        succ: list[list[int]] = [[] for _ in range(n)]
        for src, dst in {(e.src, e.dst) for e in self.edges}:
            indegree[dst] += 1
            succ[src].append(dst)
        ready = [i for i in range(n) if indegree[i] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for j in succ[i]:
                indegree[j] -= 1
                if indegree[j] == 0:
                    heapq.heappush(ready, j)
        return order


def _launch_sets(kernels: dict[str, Any], ln: Any) -> tuple[set[int], set[int]]:
    params = kernels[ln.kernel].buffers
    reads, writes = set(), set()
    for k, slot in enumerate(ln.slots):
        access = params[k].access if k < len(params) else "read"
        if access != "write":
            reads.add(slot)
        if access != "read":
            writes.add(slot)
    return reads, writes


def _node_sets(kernels: dict[str, Any], node: Any) -> tuple[set[int], set[int]]:
    if not hasattr(node, "body"):
        return _launch_sets(kernels, node)
    # rebinding a body slot to another buffer counts as writing it
    reads = {outer for _, outer in node.bind} | {p for _, p in node.cond_bind}
    writes = ({p for p, _ in node.bind} | {p for p, _ in node.carry}
              | {r for _, r in node.carry} | {c for c, _ in node.cond_bind})
    programs = [node.body] + ([node.cond] if node.cond is not None else [])
    for prog in programs:
        for inner in graph_nodes(prog):
            r, w = _node_sets(kernels, inner)
            reads |= r
            writes |= w
    for f in node.finals:
        r, w = _launch_sets(kernels, f)
        reads |= r
        writes |= w
    return reads, writes


def dependency_graph(graph: Any) -> DependencyGraph:
    """Return the :class:`DependencyGraph` of ``graph`` (a :class:`~accy.runtime.LaunchGraph`).

    Cost: O(total bound slots) set operations, nested loops included.
    """
    nodes = graph_nodes(graph)
    reads, writes, edges = [], [], set()
    last_writer: dict[int, int] = {}
    readers: dict[int, set[int]] = {}
    for j, node in enumerate(nodes):
        r, w = _node_sets(graph.kernels, node)
        reads.append(frozenset(r))
        writes.append(frozenset(w))
        for s in r:
            if s in last_writer:
                edges.add(Edge(last_writer[s], j, "RAW", s))
        for s in w:
            if s in last_writer:
                edges.add(Edge(last_writer[s], j, "WAW", s))
            for i in readers.get(s, ()):
                if i != j:
                    edges.add(Edge(i, j, "WAR", s))
        for s in r:
            readers.setdefault(s, set()).add(j)
        for s in w:
            last_writer[s] = j
            readers[s] = {j} if s in r else set()
    ordered = tuple(sorted(edges, key=lambda e: (e.dst, e.src, e.kind, e.slot)))
    return DependencyGraph(tuple(nodes), tuple(reads), tuple(writes), ordered)
