"""Route an API call to a family variant on a backend (not public)."""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError
from accy.families import Candidate, backend_object, resolve, variant_runs_on

from accy_kernels._families import FAMILIES

__all__ = ["atomic_feature", "call", "has_atomic_add", "pick_accumulate", "pick_atomic",
           "require_atomic_add"]

#: the backend feature an atomic add of each dtype needs (i32 atomics are universal)
ATOMIC_FEATURES = {"f32": "float_atomics", "f64": "float64_atomics", "i64": "int64_atomics"}

_BY_NAME = {f.name: f for f in FAMILIES}


def call(family: str, variant: str | None, backend: Any, candidate: Candidate | None,
         **kwargs: Any) -> Any:
    """Run ``family.variant`` with ``kwargs`` (already validated) on ``backend``.

    Raises:
        InputError: unknown variant. BackendUnavailable: the backend cannot be opened.
        CapabilityError: the backend lacks a feature the variant needs.
    """
    fam = _BY_NAME[family]
    var = fam.variant(variant)
    be = backend_object(backend)
    ok, why = variant_runs_on(var, be)
    if not ok:
        raise CapabilityError(
            f"{family}.{var.name}: backend {be.name!r} cannot run it ({why}); "
            f"choose another variant: {', '.join(v.name for v in fam.variants)}",
            feature=", ".join(var.requires), backend=be.name)
    if candidate is None:
        candidate = resolve(var.default)(be, **kwargs) if var.default else var.candidates[0]
    return resolve(var.run)(be, candidate, **kwargs)


def atomic_feature(dtype: str) -> str | None:
    """Return the feature an atomic add on ``dtype`` needs (None: every backend has it)."""
    return ATOMIC_FEATURES.get(dtype)


def has_atomic_add(backend: Any, dtype: str) -> bool:
    """Whether ``backend`` offers atomic add on ``dtype`` (capability, never its name)."""
    need = atomic_feature(dtype)
    return need is None or need in backend_object(backend).capabilities().features


def pick_atomic(backend: Any, dtype: str, atomic: str = "atomic",
                fallback: str = "sorted") -> str:
    """Return the default variant: ``atomic`` where the backend has atomic add on ``dtype``,
    else ``fallback`` (a variant that needs no atomics)."""
    return atomic if has_atomic_add(backend, dtype) else fallback


def pick_accumulate(backend: Any, dtype: str, size: int, total: int) -> str:
    """Return the default scatter_add/segment_sum variant for ``total`` values into ``size``
    output elements: ``privatized`` where per-thread private histograms pay off (a
    host-memory backend with several threads and ``threads x size <= total``; no atomics, no
    contended cache lines), else :func:`pick_atomic`."""
    from accy_kernels.scatter_add_privatized import worthwhile

    if worthwhile(backend, size, total):
        return "privatized"
    return pick_atomic(backend, dtype)


def require_atomic_add(family: str, variant: str, dtype: str, backend: Any) -> None:
    """Refuse an explicitly chosen atomic variant on a backend without atomic add on ``dtype``.

    Raises:
        CapabilityError: names the missing feature and the variant that needs none.
    """
    be = backend_object(backend)
    if not has_atomic_add(be, dtype):
        need = atomic_feature(dtype)
        raise CapabilityError(
            f"{family}.{variant}: {dtype} accumulation needs {need}, which backend {be.name!r} "
            f"lacks; use variant 'sorted' (no atomics) or leave the variant unset",
            feature=need or "", backend=be.name)
