"""Keep outlined region kernels under the target's loop-iteration limit (kernel stage).

A device may end a work-item silently after ``max_loop_iterations`` loop iterations
(:attr:`accy.backend.TargetProfile.max_loop_iterations`; lavapipe: 65535): a ``serial``
reduction of 100k elements per output then sums only the first 65535. For such a target
the outliner keeps only the launch candidates whose kernel fits
(:func:`accy.kernel.loops.loop_trips`), moving the default to the first that does — a
``tree`` reduction strides the reduced elements over a work-group, dividing the per-item
loop by its size; wider trees up to the target's work-group and shared-memory limits are
tried when none of the listed candidates fits — and refuses the region with a
:class:`~accy.errors.CapabilityError` when nothing fits.
"""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError
from accy.kernel import Kernel
from accy.kernel.loops import loop_trips
from accy.tuning.candidates import LaunchCandidate

__all__ = ["fit_loop_budget"]


def _fits(kernel: Kernel, budget: int) -> bool:
    trips = loop_trips(kernel)
    return trips is None or trips <= budget


def _wide_trees(profile: Any, element_bytes: int) -> list[LaunchCandidate]:
    limit = min(int(profile.max_workgroup_size),
                int(profile.shared_memory_bytes) // max(1, element_bytes))
    out, ws = [], 512
    while ws <= limit:
        out.append(LaunchCandidate("tree", ws, 1))
        ws *= 2
    return out


def fit_loop_budget(region: Any, name: str, kernel: Kernel, groups: int,
                    cands: list[LaunchCandidate], profile: Any, outline: Any
                    ) -> tuple[Kernel, int, list[LaunchCandidate]]:
    """Return ``(kernel, groups, candidates)`` of ``region`` that fit ``profile``'s loop
    budget: the default kernel when it fits, else the first fitting candidate's (listed
    first); ``outline(region, name, candidate) -> (kernel, groups)`` builds one.

    Raises:
        CapabilityError: no launch of the region fits (the message names the region, the
            loop count of its default kernel and the limit).
    """
    budget = getattr(profile, "max_loop_iterations", None) if profile is not None else None
    if budget is None:
        return kernel, groups, cands
    built: dict[LaunchCandidate, tuple[Kernel, int]] = {}
    fitting = []
    for c in cands:
        built[c] = outline(region, name, c)
        if _fits(built[c][0], budget):
            fitting.append(c)
    if not fitting and cands and cands[0].variant != "map":
        out = region.regions[0].block.ops[-1].operands[0]
        for c in _wide_trees(profile, out.type.dtype.itemsize):
            built[c] = outline(region, name, c)
            if _fits(built[c][0], budget):
                fitting.append(c)
                break
    if not fitting:
        raise CapabilityError(
            f"'{region.name}' op ({name}): its kernel runs {loop_trips(kernel)} loop "
            f"iterations per work-item, and backend '{profile.backend}' ends work-items "
            f"after {budget} (max_loop_iterations) with no launch candidate under it; "
            "split the reduction (reduce in stages over smaller axes) or use another backend",
            feature="max_loop_iterations", backend=profile.backend,
            alternative="reduce in stages")
    if _fits(kernel, budget) and cands and cands[0] in fitting:
        return kernel, groups, [cands[0], *[c for c in fitting if c != cands[0]]]
    first = fitting[0]
    return (*built[first], fitting)
