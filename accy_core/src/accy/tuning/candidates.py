"""Launch candidates: the points of a kernel's launch space that tuning measures.

A :class:`LaunchCandidate` is a work-group size (work-items), items per thread (output
elements each work-item computes, grid-stride) and a variant: ``map`` for elementwise
regions, ``serial`` (one work-item per output, a serial loop over the reduced elements) or
``tree`` (one work-group per output, strided partial results and a shared-memory tree, so
its work-group size must be a power of two) for reductions and contractions, and on host
(CPU) targets ``lanes`` (:mod:`accy.passes.reduce_lanes`: independent accumulators the SIMD
units vectorize; ``items_per_thread`` is the outputs per work-item of a column reduction).
Labels read ``serial-wg64-ipt1`` and parse back.

:func:`region_candidates` lists at most :data:`MAX_CANDIDATES` candidates for a region, the
default first (the choice the outliner makes without tuning), work-group sizes powers of two
rounded up to the target's subgroup size and capped by its limits.
"""

from __future__ import annotations

import re

from accy.errors import InputError
from accy.records import record

__all__ = [
    "MAX_CANDIDATES",
    "LaunchCandidate",
    "default_candidate",
    "parse_candidates",
    "region_candidates",
]

#: Most candidates a region carries.
MAX_CANDIDATES = 8
#: Default work-group size of map and serial-reduction kernels (work-items), and its floor.
MAP_WORKGROUP = 256
MIN_WORKGROUP = 32
#: Tree reductions: work-group size, and when the default picks them (outputs, reduced elems).
TREE_WORKGROUP = 256
TREE_MAX_OUTPUTS = 64
TREE_MIN_REDUCED = 1024
VARIANTS = ("map", "serial", "tree", "lanes")
_LABEL = re.compile(r"^(map|serial|tree|lanes)-wg(\d+)-ipt(\d+)$")


@record
class LaunchCandidate:
    """One launch configuration of a region's kernel.

    Attributes:
        variant: ``map``, ``serial`` or ``tree`` (see the module docstring).
        workgroup_size: work-items per work-group (a power of two).
        items_per_thread: output elements per work-item (``tree``: always 1).
    """

    variant: str
    workgroup_size: int
    items_per_thread: int = 1

    def label(self) -> str:
        """The readable id, ``serial-wg64-ipt1``."""
        return f"{self.variant}-wg{self.workgroup_size}-ipt{self.items_per_thread}"

    @classmethod
    def parse(cls, label: str) -> LaunchCandidate:
        """Parse a :meth:`label`.

        Raises:
            InputError: not of the form ``<map|serial|tree|lanes>-wg<N>-ipt<M>``.
        """
        m = _LABEL.match(label.strip())
        if m is None or int(m[2]) < 1 or int(m[3]) < 1:
            raise InputError(f"launch candidate {label!r}: expected "
                             "'<map|serial|tree|lanes>-wg<N>-ipt<M>' such as 'serial-wg64-ipt1'")
        return cls(m[1], int(m[2]), int(m[3]))


def parse_candidates(text: str) -> list[LaunchCandidate]:
    """Candidates from a region's ``candidates`` attribute (labels joined by commas)."""
    return [LaunchCandidate.parse(x) for x in text.split(",") if x.strip()]


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _round(ws: int, subgroup: int, limit: int) -> int:
    """``ws`` rounded up to a multiple of the subgroup size, capped at ``limit``."""
    sg = max(1, subgroup)
    ws = -(-ws // sg) * sg
    if ws > limit:
        ws = max(sg, limit // sg * sg)
    return max(1, min(ws, limit))


def default_candidate(kind: str, n_out: int, n_red: int = 0) -> LaunchCandidate:
    """The outliner's choice without tuning (the launch accy has always used).

    Args:
        kind: region kind, ``map`` or ``reduce``.
        n_out: output elements.
        n_red: reduced elements per output (reductions only).
    """
    ws = min(MAP_WORKGROUP, max(MIN_WORKGROUP, _pow2_at_least(n_out)))
    if kind != "reduce":
        return LaunchCandidate("map", ws, 1)
    if n_out <= TREE_MAX_OUTPUTS and n_red >= TREE_MIN_REDUCED:
        return LaunchCandidate("tree", TREE_WORKGROUP, 1)
    return LaunchCandidate("serial", ws, 1)


def region_candidates(kind: str, n_out: int, n_red: int = 0, *, subgroup_size: int = 1,
                      max_workgroup_size: int = 1024, shared_memory_bytes: int = 1 << 15,
                      element_bytes: int = 4,
                      lanes_width: int | None = None) -> list[LaunchCandidate]:
    """At most :data:`MAX_CANDIDATES` candidates for one region, the default first.

    Args:
        kind: ``map`` or ``reduce``.
        n_out: output elements; n_red: reduced elements per output (0 for maps).
        subgroup_size: work-group sizes are rounded up to a multiple of it (work-items).
        max_workgroup_size: the target's limit (work-items).
        shared_memory_bytes: the target's shared memory per work-group (bytes), which caps
            ``tree`` work-groups at ``shared_memory_bytes // element_bytes``.
        element_bytes: bytes of the accumulator dtype.
        lanes_width: on a host target, the outputs per work-item of the region's ``lanes``
            form (1 for a row reduction), which then becomes the default (work-groups of one
            work-item: the CPU pool splits by work-groups); None where it has none.
    """
    out = [default_candidate(kind, n_out, n_red)]
    if kind == "reduce" and lanes_width is not None:
        out.insert(0, LaunchCandidate("lanes", 1, lanes_width))
    reach = max(_pow2_at_least(n_out), MIN_WORKGROUP)
    if kind != "reduce":
        wanted = [LaunchCandidate("map", ws, ipt) for ipt in (1, 4)
                  for ws in (64, 128, 256, 512) if ws * ipt <= 4 * reach]
    else:
        wanted = _reduce_wanted(n_out, n_red, reach, shared_memory_bytes // max(1, element_bytes))
    for c in wanted:
        c = LaunchCandidate(c.variant, _round(c.workgroup_size, subgroup_size,
                                              max_workgroup_size), c.items_per_thread)
        pow2 = c.workgroup_size & (c.workgroup_size - 1) == 0
        if c not in out and len(out) < MAX_CANDIDATES and (pow2 or c.variant != "tree"):
            out.append(c)
    return out


def _reduce_wanted(n_out: int, n_red: int, reach: int, shared_elems: int) -> list[LaunchCandidate]:
    wanted = []
    if n_red >= 256 and n_out <= 4096:
        wanted += [LaunchCandidate("tree", ws, 1) for ws in (64, 128, 256) if ws <= shared_elems]
    wanted += [LaunchCandidate("serial", ws, 1) for ws in (32, 64, 128, 256) if ws <= 2 * reach]
    if n_out >= 1024:
        wanted.append(LaunchCandidate("serial", 64, 4))
    return wanted
