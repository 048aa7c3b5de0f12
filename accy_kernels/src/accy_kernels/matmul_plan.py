"""Choose a ``matmul`` variant and candidate for a problem on a backend, and plan it.

Default heuristic (shape and device limits, never the backend's name):

- a matrix-vector product (``n == 1`` or ``m == 1``, with a unit-stride ``A``) → ``gemv``;
- a host-memory backend (the CPU) → ``blocked`` (packed panels, vector microkernel);
- otherwise → ``tiled``, the largest tile that fits the device's work-group size and shared
  memory and does not leave most work-groups idle (64x64 tiles only when there are at
  least 2 per output dimension, else 32x32); on devices with subgroups narrower than 32
  (CPU-style SIMD implementations such as lavapipe) 64 work-items with 8x8 register tiles
  first (measured 278 ms vs 501 ms for 16x16 work-items of 4x4 at 256^3 on lavapipe).

Every plan keeps each work-item's loops under the target's ``max_loop_iterations``
capability when it has one (lavapipe: 65,535): the ``tiled`` slab loop runs
``ceil(k / BK)`` times, so a deeper slab is chosen when needed; ``gemv`` and ``blocked``
walk ``k`` in steps of a few elements (:func:`loop_trips`), so a default pick that would
exceed the limit becomes ``tiled`` and an explicit one raises ``CapabilityError``.
"""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError, UnsupportedError
from accy.families import Candidate

from accy_kernels._common import ceil_div
from accy_kernels.matmul_blocked import plan_blocked
from accy_kernels.matmul_gemv import gemv_form, plan_gemv
from accy_kernels.matmul_problem import NO_EPILOGUE, Epilogue, MatmulProblem
from accy_kernels.matmul_tiled import plan_tiled, tile_fits

__all__ = ["VARIANTS", "choose", "device_limits", "loop_trips", "plan_matmul"]

VARIANTS = ("blocked", "tiled", "gemv")
_ITEMSIZE = {"f32": 4, "f64": 8, "i32": 4, "i64": 8}


class _Limits:
    def __init__(self, wg: int, shared: int, loops: int | None, host: bool,
                 subgroup: int = 32) -> None:
        self.max_workgroup_size, self.shared_memory_bytes = wg, shared
        self.max_loop_iterations, self.host, self.subgroup_size = loops, host, subgroup


def device_limits(backend: Any) -> _Limits:
    """Work-group size, shared memory, loop-trip limit and host-memory flag of a live
    backend or of the kernel stage's target (its ``profile``)."""
    src = getattr(backend, "profile", None) or backend.capabilities()
    feats = backend.capabilities().features
    wg = int(getattr(src, "max_workgroup_size", 0) or 256)
    shared = int(getattr(src, "shared_memory_bytes", 0) or 16384)
    loops = getattr(src, "max_loop_iterations", None)
    sub = int(getattr(src, "subgroup_size", 0) or 32)
    return _Limits(wg, shared, int(loops) if loops else None, "host_memory" in feats, sub)


def _tiled_candidate(prob: MatmulProblem, lim: _Limits) -> Candidate:
    from accy_kernels.matmul_tiled import candidates

    item = _ITEMSIZE[prob.dtype]
    fitting = [c for c in candidates() if tile_fits(c, item, lim)]
    if not fitting:
        raise UnsupportedError(f"matmul.tiled: no tile fits {lim.max_workgroup_size} "
                               f"work-items and {lim.shared_memory_bytes} bytes of shared "
                               "memory", feature="shared_memory")
    small = prob.m < 128 or prob.n < 128
    narrow = lim.subgroup_size < 32  # SIMD-lane devices (lavapipe): few, heavy work-items

    def rank(c: Candidate) -> tuple[bool, bool]:
        big = c.option("ty") * c.option("rm") > 32
        return big == small, narrow and c.workgroup_size > 64

    order = sorted(fitting, key=rank)
    for c in order:
        if lim.max_loop_iterations is None or ceil_div(prob.k, c.option("bk")) \
                <= lim.max_loop_iterations:
            return c
    raise UnsupportedError(f"matmul.tiled: k = {prob.k} needs more slab-loop trips than the "
                           f"target's limit {lim.max_loop_iterations}", feature="loop_trips")


def choose(backend: Any, prob: MatmulProblem, variant: str | None = None,
           candidate: Candidate | None = None) -> tuple[str, Candidate]:
    """``(variant, candidate)`` for ``prob`` (see the module docstring).

    Raises:
        InputError: unknown variant. UnsupportedError: ``gemv`` asked for a problem that is
            not a matrix-vector product, or no tile fits the device.
    """
    from accy.errors import InputError

    lim = device_limits(backend)
    name = (variant or "").split(".")[-1] or None
    if name is not None and name not in VARIANTS:
        raise InputError(f"matmul: unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    chosen = candidate
    if name is None:
        if gemv_form(prob) is not None and prob.k >= 1:
            name = "gemv"
        else:
            name = "blocked" if lim.host else "tiled"
    if name == "gemv" and gemv_form(prob) is None:
        raise UnsupportedError("matmul.gemv: needs n == 1 or m == 1 and a unit-stride A; "
                               "use variant 'blocked' or 'tiled'", feature="gemv")
    if candidate is None:
        if name == "tiled":
            candidate = _tiled_candidate(prob, lim)
        elif name == "gemv":
            candidate = Candidate(0, 1, (("r", 4),)) if lim.host else \
                Candidate(min(64, lim.max_workgroup_size), 1, (("r", 4),))
        else:
            candidate = Candidate(0, 1, (("ku", 4), ("mr", 6), ("nv", 2)))
    budget = lim.max_loop_iterations
    if budget is not None and name != "tiled" and loop_trips(name, prob, candidate) > budget:
        if variant is None and chosen is None:
            return "tiled", _tiled_candidate(prob, lim)
        raise CapabilityError(
            f"matmul.{name}: k = {prob.k} takes {loop_trips(name, prob, candidate)} loop "
            f"iterations per work-item, past the target's max_loop_iterations ({budget}); "
            "use variant 'tiled' or leave the variant unset", feature="max_loop_iterations",
            alternative="variant 'tiled'")
    return name, candidate


def loop_trips(name: str, prob: MatmulProblem, candidate: Candidate) -> int:
    """Loop iterations one work-item of ``gemv`` / ``blocked`` runs (with loop exits; device
    targets: the work-group size of the candidate, else 64)."""
    if name == "blocked":
        ku = int(candidate.option("ku", 4))  # unrolled main loop, then the remainder
        # the operand packs walk k one step per iteration (``unit="rows"``/``"any"`` of
        # :func:`accy_kernels.matmul_pack.pack_kernel`), and on device targets k is one
        # k-block: counted whether or not this shape packs (lavapipe cut a 65536-long pack
        # short at 65535 iterations: a silent wrong sum)
        return max(prob.k // ku + prob.k % ku, prob.k) + 2
    form = gemv_form(prob)
    w = candidate.workgroup_size or 64
    if form is not None and form[0] == "rows":
        return ceil_div(prob.k, w) + w + 3
    return ceil_div(prob.k, 4) + 4 + 3


_PLANS = {"blocked": plan_blocked, "tiled": plan_tiled, "gemv": plan_gemv}


def plan_matmul(plan, backend: Any, prob: MatmulProblem, a, b, out, variant: str | None = None,
                candidate: Candidate | None = None, epilogue: Epilogue = NO_EPILOGUE,
                extra=()) -> str:
    """Append the launches of ``prob`` to ``plan``; return the variant used.

    ``a``, ``b``: the operand slots (read through ``prob``'s strides); ``out``: ``C``
    (``batch * m * n`` elements of ``epilogue.out_dtype``); ``extra``: the epilogue's input
    slots in ``epilogue.buffers`` order. An empty ``C`` launches nothing but a zero-group
    kernel (the output still counts as written).
    """
    from accy_kernels._common import fill_kernel

    if prob.out_elems == 0:
        dt = epilogue.out_dtype or prob.dtype
        plan.launch(fill_kernel(dt), 0, [out], [("i32", 0), (dt, 0)])
        return "none"
    name, cand = choose(backend, prob, variant, candidate)
    _PLANS[name](plan, backend, prob, a, b, out, cand, epilogue, extra)
    return name
