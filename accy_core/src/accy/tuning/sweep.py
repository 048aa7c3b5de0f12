"""Sweeps: measure every launch candidate of a program's regions, or every schedule of the
kernel-library families, on one backend, and record the winners in the tuning cache.

Program sweeps compile the program without tuning, then for each region outline, compile
and launch each candidate alone on zero-filled buffers of the region's slots (the measuring
rule is :mod:`accy.tuning.measure`). A region with several candidates stores its best in the
cache; one with a single candidate is measured but not cached.

Family sweeps live in :mod:`accy.tuning.family_sweep` (``sweep_families`` is re-exported
here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from accy.ir.ops.dispatch import FAMILY_KINDS, VIEW_KIND
from accy.progress import track
from accy.tuning.cache import TuningCache, TuningEntry, region_shape_family
from accy.tuning.candidates import LaunchCandidate, parse_candidates
from accy.tuning.measure import Measurement, best, measure

__all__ = ["SweepResult", "sweep_families", "sweep_program"]

from accy.tuning.family_sweep import sweep_families  # noqa: E402  (re-export)


@dataclass
class SweepResult:
    """What one sweep of one kernel (or family variant) found.

    Attributes:
        kernel: kernel name (``main_k0_map``) or ``family.variant``.
        key: the cache's kernel key (structural fingerprint or ``family.variant``).
        shape_family: the problem-size class.
        measurements: one per candidate, in candidate order.
        best: the winner; cached: whether it went into the cache; skipped: why not run.
    """

    kernel: str
    key: str
    shape_family: str
    measurements: list[Measurement] = field(default_factory=list)
    best: Measurement | None = None
    cached: bool = False
    skipped: str = ""


def _progress(items: list, label: str, show: bool) -> Iterable:
    return track(items, label, "kernel", show=show, transient=True)


def _entry(device: str, r: SweepResult, kind: str) -> TuningEntry:
    assert r.best is not None  # noqa: S101  (callers pass measured results only)
    others = [m.median_ns for m in r.measurements if m is not r.best]
    return TuningEntry(device, r.key, r.shape_family, r.best.label, r.best.median_ns,
                       min(others, default=0), r.best.samples, kind)


def _region_buffers(be: Any, graph: Any, region: Any) -> list[object]:
    slots = list(region.attrs["out_slots"]) + [
        s for k, s in enumerate(region.attrs["in_slots"]) if k not in region.attrs["in_place"]]
    bufs = []
    for s in slots:
        # an empty tensor's slot still needs a whole number of elements of every dtype
        buf = be.allocate(max(graph.slot_bytes[s], 8))
        be.fill(buf, 0)
        bufs.append(buf)
    return bufs


def _measure_region(be: Any, region: Any, name: str, bufs: list[object], warmup: int,
                    samples: int, clock: Callable[[], int] | None) -> list[Measurement]:
    from accy.backend import Geometry
    from accy.passes.outline_kernels import outline_region
    from accy.runtime.compiler import compile_kernel

    out = []
    for i, cand in enumerate(parse_candidates(region.attrs["candidates"])):
        kernel, groups = outline_region(region, name, cand)
        handle = be.load(compile_kernel(be, kernel))
        geometry = Geometry(groups, kernel.workgroup_size)

        def launch(h=handle, g=geometry) -> None:
            be.launch(h, g, bufs, [])

        extra = {"clock": clock} if clock is not None else {}
        out.append(measure(launch, be.synchronize, index=i, label=cand.label(), warmup=warmup,
                           samples=samples, **extra))
    return out


def sweep_program(module: Any, backend: str = "cpu", *, function: str | None = None,
                  warmup: int = 2, samples: int = 5, cache: TuningCache | None = None,
                  write: bool = True, progress: bool = False,
                  clock: Callable[[], int] | None = None) -> list[SweepResult]:
    """Measure every region's candidates; store winners (several candidates) in the cache.

    Raises:
        BackendUnavailable: the backend cannot run here.
        VerifyError / CapabilityError: the program does not compile for the backend.
    """
    import accy
    from accy.passes.outline_kernels import region_extents, structural_fingerprint
    from accy.runtime.graph import graph_from_function

    exe = accy.compile(module, backend, function=function, tuning=False, use_cache=False)
    be, final = exe.backend, exe.module
    device = be.capabilities().device_fingerprint
    fn = final.function(function or final.functions[0].name)
    graph = graph_from_function(final, fn)
    regions = [op for op in fn.body.ops if op.name == "dispatch.region"  # families: `accy
               and op.attrs.get("kind") not in (*FAMILY_KINDS, VIEW_KIND)]  # tune --families`
    results: list[SweepResult] = []
    for region in _progress(regions, "tune", progress):
        name = region.attrs["kernel"]
        r = SweepResult(name, structural_fingerprint(final.attrs["kernels"][name]),
                        region_shape_family(*region_extents(region)))
        bufs = _region_buffers(be, graph, region)
        try:
            r.measurements = _measure_region(be, region, name, bufs, warmup, samples, clock)
        finally:
            for buf in bufs:
                be.free(buf)
        r.best = best(r.measurements)
        r.cached = len(r.measurements) > 1
        results.append(r)
    exe.close()
    if write:
        (cache or TuningCache()).store([_entry(device, r, "launch") for r in results if r.cached])
    return results


def describe(c: LaunchCandidate | str) -> str:
    """A candidate's label (accepts a label)."""
    return c if isinstance(c, str) else c.label()
