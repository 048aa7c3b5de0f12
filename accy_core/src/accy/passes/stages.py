"""The six compilation stages, each a registered pipeline, and :func:`run_stages`.

=========  ==========================================================================
stage      pipeline
=========  ==========================================================================
contract   verify, canonicalize, constant-fold, cse, dce
tensor     lower activations, einsum (contraction paths), reductions, indexing; clean up
dispatch   loop bodies prepared for the launch graph; few-work-item reductions split (host
           targets); fusion into ``dispatch.region``; carried window updates in place
memory     bufferization into slots
kernel     outlining each region into a kernel-IR function
target     legalization against the backend's target profile
=========  ==========================================================================

Each stage runs on its own copy of the previous stage's module, so every
:class:`StageProduct` is a snapshot that later stages do not change (``snapshots=False``:
one copy of the input for all stages, for callers that only want the final module).
A product's fingerprint is computed when first read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

from accy.errors import InputError
from accy.hashing import sha256
from accy.ir import Module
from accy.passes.base import AnalysisRecord, Pass, PassContext, PassRecord
from accy.passes.manager import PassManager
from accy.passes.registry import get_pipeline, register_pipeline

__all__ = ["STAGES", "StageProduct", "product_fingerprint", "run_stages", "stage_passes"]

#: Stage names in order, with their pipelines.
STAGE_PIPELINES: dict[str, str] = {
    "contract": "verify,canonicalize,constant-fold,cse,dce",
    "tensor": "activation-lowering,einsum-lowering{strategy=greedy},reduction-lowering,"
    "indexing-lowering{kernel-library=enabled},canonicalize,cse,dce",
    "dispatch": "loop-carry,reduction-split,fusion,loop-in-place",
    "memory": "bufferize",
    "kernel": "outline-kernels",
    "target": "legalize",
}
STAGES: tuple[str, ...] = tuple(STAGE_PIPELINES)

for _name, _text in STAGE_PIPELINES.items():
    register_pipeline(_name, _text, provider="accy-core")

_parsed: dict[str, tuple[Pass, ...]] = {}


@dataclass(frozen=True)
class StageProduct:
    """What one stage produced.

    Attributes:
        stage: the stage name.
        module: the module after the stage (a snapshot of its own).
        fingerprint: sha256 hex of the module text and its kernels' fingerprints.
        records: one :class:`PassRecord` per pass of the stage.
        analysis_records: analysis hits and misses during the stage.
        wall_ns: wall time of the stage's passes in nanoseconds (copying and
            fingerprinting excluded).
    """

    stage: str
    module: Module
    records: tuple[PassRecord, ...]
    analysis_records: tuple[AnalysisRecord, ...]
    wall_ns: int

    @cached_property
    def fingerprint(self) -> str:
        """sha256 hex of the module text and its kernels' fingerprints (computed once, when
        first read: printing a large module costs as much as a stage)."""
        return product_fingerprint(self.module)

    @property
    def text(self) -> str:
        """The module's textual IR after this stage."""
        return self.module.to_text()


def product_fingerprint(module: Module) -> str:
    """sha256 of ``module.to_text()`` then, in key order, each kernel's name and fingerprint
    from ``module.attrs["kernels"]``."""
    h = sha256(module.to_text().encode())
    kernels = module.attrs.get("kernels") or {}
    for key in sorted(kernels):
        h.update(f"\nkernel {key} ".encode())
        h.update(str(kernels[key].fingerprint()).encode())
    return h.hexdigest()


def stage_passes(stage: str) -> tuple[Pass, ...]:
    """The parsed passes of ``stage``'s registered pipeline.

    Raises:
        InputError: unknown stage (lists the stages).
    """
    if stage not in STAGE_PIPELINES:
        raise InputError(f"unknown stage {stage!r}; stages in order: {', '.join(STAGES)}")
    text = get_pipeline(stage)
    if text not in _parsed:
        from accy.passes.pipeline import parse_pipeline

        _parsed[text] = tuple(parse_pipeline(text))
    return _parsed[text]


def _copy(module: Module) -> Module:
    out = module.clone()
    # The clone shares attribute values; give dict-valued ones (kernels) their own dict.
    out.attrs = {k: dict(v) if isinstance(v, dict) else v for k, v in out.attrs.items()}
    return out


def _delta(before: list[AnalysisRecord], after: list[AnalysisRecord]) -> tuple[AnalysisRecord, ...]:
    old = {r.name: r for r in before}
    out = []
    for r in after:
        o = old.get(r.name, AnalysisRecord(r.name, 0, 0))
        if (r.hits, r.misses) != (o.hits, o.misses):
            out.append(AnalysisRecord(r.name, r.hits - o.hits, r.misses - o.misses))
    return tuple(out)


def run_stages(
    module: Module, ctx: PassContext | None = None, until: str = "target",
    verify_each: bool = False, snapshots: bool = True,
) -> list[StageProduct]:
    """Run the stages from ``contract`` up to and including ``until`` on a copy of ``module``.

    Args:
        snapshots: give every product a copy of its own (default); False: copy the input
            once and run every stage on that copy in place, so all products share the final
            module (cheaper for a large module when only the final IR is needed).

    Returns:
        one :class:`StageProduct` per stage run, in order; the input is not changed.

    Raises:
        InputError: ``until`` is not a stage (lists the stages).
        VerifyError: the input module is malformed (from the ``verify`` pass).
        PassError: a pass failed (names the pass, its position and the stage).
        CapabilityError / OutOfResources: the target profile cannot run the module.
    """
    if until not in STAGE_PIPELINES:
        raise InputError(f"unknown stage {until!r}; stages in order: {', '.join(STAGES)}")
    ctx = ctx if ctx is not None else PassContext()
    products: list[StageProduct] = []
    current = module if snapshots else _copy(module)
    for stage in STAGES[: STAGES.index(until) + 1]:
        passes = stage_passes(stage)
        if snapshots:
            current = _copy(current)
        stats_before = ctx.analyses.records()
        start = time.perf_counter_ns()
        records = PassManager(passes, verify_each=verify_each, label=stage).run(current, ctx)
        wall = time.perf_counter_ns() - start
        ctx.analyses.invalidate(current)
        products.append(
            StageProduct(
                stage,
                current,
                tuple(records),
                _delta(stats_before, ctx.analyses.records()),
                wall,
            )
        )
    return products
