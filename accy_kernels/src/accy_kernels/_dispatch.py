"""Route an API call to a family variant on a backend (not public)."""

from __future__ import annotations

from typing import Any

from accy.errors import CapabilityError
from accy.kernels import Candidate, backend_object, resolve, variant_runs_on

from accy_kernels._families import FAMILIES

__all__ = ["call", "require_float_atomics"]

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


def require_float_atomics(family: str, dtype: str, backend: Any) -> None:
    """Refuse float atomics on a backend without the ``float_atomics`` feature.

    Raises:
        CapabilityError: ``dtype`` is a float and the backend has no float atomics.
    """
    be = backend_object(backend)
    if dtype in ("f32", "f64") and "float_atomics" not in be.capabilities().features:
        raise CapabilityError(
            f"{family}: {dtype} accumulation needs float atomics, which backend {be.name!r} "
            f"lacks; use integer values or another backend",
            feature="float_atomics", backend=be.name)
