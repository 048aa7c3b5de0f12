"""``dispatch`` ops: work items formed by the dispatch stage.

A ``dispatch.region`` is isolated from above: its block arguments stand for its operands,
and ``dispatch.yield`` ends the block with the values the region produces. Later stages
annotate regions with their buffer slots (memory stage) and their kernel, work-group size
and work-group count (kernel stage)::

    %2 = dispatch.region %arg0, %arg1 {kind = "map"} : (f32[4], f32[4]) -> f32[4] {
    ^(%arg2: f32[4], %arg3: f32[4]):
      %3 = arith.add %arg2, %arg3 : (f32[4], f32[4]) -> f32[4]
      dispatch.yield %3 : (f32[4]) -> ()
    }
"""

from __future__ import annotations

from accy.ir.ops.registry import OpDef, register_op

#: region kinds a kernel family expands into its own launches (``launches`` attribute):
#: ``library`` (one ``library.*`` call) and ``contract`` (a ``dot_general`` and its fused
#: epilogue, see :mod:`accy.passes.contraction`)
FAMILY_KINDS = ("library", "contract")
#: the kind :mod:`accy.passes.bufferize` gives a ``map`` region that only reshapes one input:
#: its output is that input's buffer seen with another shape, so it has no kernel and no
#: launch (``x.reshape(-1)`` feeding a gather reads ``x`` in place)
VIEW_KIND = "view"

register_op(OpDef(
    "dispatch.region", None, lambda types, attrs: [], None,
    optional_attrs={
        "kind": ("str", "map"),
        "in_slots": ("ints", ()),
        "out_slots": ("ints", ()),
        "in_place": ("ints", ()),
        "kernel": ("str", ""),
        "workgroup_size": ("int", 0),
        "groups": ("int", 0),
        "candidates": ("str", ""),
        "candidate": ("str", ""),
        "candidate_source": ("str", ""),
        # kinds "library"/"contract" (kernel-family calls): scratch slots and, after the kernel
        # stage, its launches (JSON: [[kernel, groups, workgroup_size, slots, scalars]...])
        "scratch_slots": ("ints", ()),
        "launches": ("str", ""),
    },
    traits=frozenset({"region"}),
    summary="a fused work item (map over an output shape, or a reduction)",
))
register_op(OpDef("dispatch.yield", None, lambda types, attrs: [], None,
                  traits=frozenset({"terminator"}), summary="values produced by a region"))

__all__ = ["FAMILY_KINDS", "VIEW_KIND"]
