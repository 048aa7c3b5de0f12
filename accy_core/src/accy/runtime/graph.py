"""Launch graphs: the runtime's view of a compiled program.

A :class:`LaunchGraph` is a list of buffer slots (sizes in bytes), which slots receive
the parameters, which slots hold the results, constant data for some slots, and an ordered
list of kernel launches, each naming its kernel, its launch geometry, the slots it binds
(in the fixed launch order: outputs, inputs, optional count buffer) and its scalars.
Tensor programs produce one from their memory and kernel stages
(:func:`graph_from_function`); kernel-library families build theirs directly. ``loop.*`` ops
become :class:`~accy.runtime.loop_graph.LoopNode` s (``loops``): their bodies' launches,
repeated by the runtime without host round trips.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from accy.ir import Function, Module, TensorType
from accy.records import record

if TYPE_CHECKING:  # loop nodes: only programs with loops (and building a graph) need them
    from accy.runtime.loop_graph import LoopNode

__all__ = ["GraphLaunch", "IndexCheck", "LaunchGraph", "buffer_spec", "graph_from_function",
           "graph_nodes"]


@record
class GraphLaunch:
    """One launch: kernel name, work-group count and size, bound slots, scalars."""

    kernel: str
    groups: int
    workgroup_size: int
    slots: tuple[int, ...]
    scalars: tuple[tuple[str, int | float], ...] = ()


@record
class IndexCheck:
    """Before launch ``before``, every element of slot ``slot`` (``count`` of ``dtype``) must
    lie in ``[low, high)``; the executable raises IndexOutOfRangeError otherwise."""

    before: int
    slot: int
    dtype: str
    count: int
    low: int
    high: int
    what: str


@record(frozen=False)
class LaunchGraph:
    """Slots + launches; see the module docstring.

    Attributes:
        slot_bytes: size of each slot in bytes.
        param_slots: slot of each parameter, in parameter order.
        param_types: tensor type of each parameter.
        result_slots: slot of each result, in result order.
        result_types: tensor type of each result.
        constants: slot → host array written once when the graph is loaded.
        launches: kernel launches in execution order.
        kernels: kernel name → kernel IR (a graph from the pipeline cache: a
            :class:`~accy.runtime.pipeline_cache.LazyKernels`, unpickled when read).
        name: for messages (``@function`` or the family name).
        zero_results: result buffers start zeroed on every backend (kernel families'
            ``Plan.output``: a kernel may accumulate into them); otherwise a result holds
            whatever its launches write.
        fingerprints: kernel name → ``Kernel.fingerprint()`` of ``kernels``, filled when the
            pipeline cache stores the graph, so a process that loads it finds the program's
            object code without printing its kernels (empty: computed when needed).
        buffer_specs: kernel name → ``(name, dtype, access)`` of each of its buffers, in
            launch order, filled with ``fingerprints``, so what a cached graph's launches
            read and write (:meth:`kernel_buffers`, :attr:`written_slots`, the native loop
            driver's alias checks) needs no kernel IR (missing names: read from
            ``kernels``).
        fast_code: the compiled code of the small-call function
            (:func:`accy.runtime.fast_call.compiled_source`), filled when the pipeline cache
            stores the graph, so a process that loads it compiles no Python (empty: compiled
            when needed).
    """

    slot_bytes: list[int]
    param_slots: list[int]
    param_types: list[TensorType]
    result_slots: list[int]
    result_types: list[TensorType]
    constants: dict[int, np.ndarray] = field(default_factory=dict)
    launches: list[GraphLaunch] = field(default_factory=list)
    kernels: dict[str, object] = field(default_factory=dict)
    name: str = "graph"
    checks: list[IndexCheck] = field(default_factory=list)
    zero_results: bool = False
    loops: list[LoopNode] = field(default_factory=list)
    fingerprints: dict[str, str] = field(default_factory=dict)
    buffer_specs: dict[str, tuple[tuple[str, str, str], ...]] = field(default_factory=dict)
    fast_code: tuple = ()

    def kernel_buffers(self, name: str) -> tuple[tuple[str, str, str], ...]:
        """``(name, dtype, access)`` of each buffer of kernel ``name``, in launch order
        (from :attr:`buffer_specs`, else from the kernel IR).

        Raises:
            KeyError: the graph has no kernel ``name``.
        """
        spec = self.buffer_specs.get(name)
        if spec is None:
            spec = buffer_spec(self.kernels[name])
        return spec

    @property
    def written_slots(self) -> set[int]:
        """Slots some launch writes (launch outputs come first in ``slots``), loop bodies and
        the copies of their final values included."""
        out: set[int] = set()
        todo: list = [self]
        while todo:
            p = todo.pop()
            for ln in p.launches:
                n_out = sum(1 for _, _, access in self.kernel_buffers(ln.kernel)
                            if access != "read")
                out.update(ln.slots[:n_out])
            for node in p.loops:
                out.update(f.slots[0] for f in node.finals)
                todo.append(node.body)
                if node.cond is not None:
                    todo.append(node.cond)
        return out


def buffer_spec(kernel: Any) -> tuple[tuple[str, str, str], ...]:
    """``(name, dtype, access)`` of each buffer of kernel IR ``kernel``, in launch order."""
    return tuple((b.name, b.dtype, b.access) for b in kernel.buffers)


def graph_from_function(module: Module, fn: Function) -> LaunchGraph:
    """The launch graph of ``fn`` after the kernel stage (regions carry slots and kernels)."""
    from accy.ir.ops.dispatch import FAMILY_KINDS, VIEW_KIND
    from accy.ir.ops.loop import LOOP_OPS
    from accy.runtime.loop_graph import absorb_loop

    kernels = module.attrs.get("kernels", {})
    g = LaunchGraph(
        slot_bytes=list(fn.attrs["slot_bytes"]),
        param_slots=list(fn.attrs["param_slots"]),
        param_types=fn.param_types,
        result_slots=list(fn.attrs["result_slots"]),
        result_types=list(fn.result_types),
        name=f"@{fn.name}",
    )
    for op in fn.body.ops:
        if op.name == "tensor.constant":
            g.constants[op.attrs["slot"]] = np.array(op.attrs["value"], order="C")
        elif op.name in LOOP_OPS:
            g.loops.append(absorb_loop(g, module, op, len(g.launches), graph_from_function))
        elif op.name == "dispatch.region" and op.attrs.get("kind") == VIEW_KIND:
            continue  # its output is its input's slot: nothing to launch
        elif op.name == "dispatch.region" and (
                op.attrs.get("kind") in FAMILY_KINDS or _has_checks(op)):
            _library_or_checked(g, op, kernels)
        elif op.name == "dispatch.region":
            _region_launch(g, op, kernels)
    _check_slot_sizes(g)
    return g


def graph_nodes(prog: Any) -> list[Any]:
    """Return the launches and loop nodes of ``prog`` (a graph or loop body) in run order."""
    nodes: list[Any] = []
    loops, li = prog.loops, 0
    for i, ln in enumerate(prog.launches):
        while li < len(loops) and loops[li].before <= i:
            nodes.append(loops[li])
            li += 1
        nodes.append(ln)
    nodes.extend(loops[li:])
    return nodes


def _check_slot_sizes(g: LaunchGraph) -> None:
    """Every temporary slot a launch binds is a whole number of the kernel buffer's
    elements: the rule the backends' launch checks apply, checked here at compile time so
    that a planner/launch-check disagreement is an InternalError, never a failed call."""
    from accy.errors import InternalError
    from accy.kernel.ir import dtype_bytes

    own = set(g.param_slots) | set(g.result_slots) | set(g.constants)
    for ln in g.launches:
        for buf, slot in zip(g.kernels[ln.kernel].buffers, ln.slots, strict=False):
            size = g.slot_bytes[slot]
            if slot not in own and size and size % dtype_bytes(buf.dtype):
                raise InternalError(
                    f"{g.name}: slot {slot} of {size} bytes bound to {ln.kernel}'s {buf.dtype} "
                    f"buffer {buf.name!r} is not a whole number of elements; please report")


def _region_launch(g: LaunchGraph, op, kernels: dict) -> None:
    """Add the launch of a region's one kernel: its outputs' slots, then those of the inputs
    it does not update in place."""
    name = op.attrs["kernel"]
    g.kernels[name] = kernels[name]
    g.launches.append(GraphLaunch(
        name, op.attrs["groups"], op.attrs["workgroup_size"],
        tuple(op.attrs["out_slots"]) + tuple(
            s for k, s in enumerate(op.attrs["in_slots"]) if k not in op.attrs["in_place"]
        ),
    ))


def _has_checks(op) -> bool:
    from accy.families.lowering import index_checks

    return bool(index_checks(op))


def _library_or_checked(g: LaunchGraph, op, kernels: dict) -> None:
    """Index checks of a region (before its first launch), then its launches: a library
    call's recorded ones, or the region's one kernel."""
    from accy.families.lowering import decode_launches, index_checks
    from accy.ir.ops.dispatch import FAMILY_KINDS

    for k, low, high, what in index_checks(op):
        t = op.operands[k].type
        g.checks.append(IndexCheck(len(g.launches), op.attrs["in_slots"][k], t.dtype.value,
                                   t.num_elements, low, high, what))
    if op.attrs.get("kind") not in FAMILY_KINDS:
        _region_launch(g, op, kernels)
        return
    for name, groups, ws, slots, scalars in decode_launches(op.attrs.get("launches", "")):
        g.kernels[name] = kernels[name]
        g.launches.append(GraphLaunch(name, groups, ws, slots, scalars))
