"""Route an API call to a family variant on a backend (not public)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from accy.errors import CapabilityError, UnsupportedError
from accy.families import Candidate, backend_object, resolve, variant_runs_on

from accy_kernels._families import FAMILIES

__all__ = ["atomic_feature", "call", "capture_calls", "has_atomic_add", "last_choice",
           "note_choice", "pick_accumulate", "pick_atomic", "pick_device_accumulate",
           "require_atomic_add", "tuned"]

#: the backend feature an atomic add of each dtype needs (i32 atomics are universal)
ATOMIC_FEATURES = {"f32": "float_atomics", "f64": "float64_atomics", "i64": "int64_atomics"}

_BY_NAME = {f.name: f for f in FAMILIES}


class _Last(threading.local):
    """This thread's last family choice and open capture; the class defaults make an unset
    one read as None without the AttributeError a bare ``threading.local`` raises inside
    ``getattr(..., None)`` (~0.5 us, a tenth of a prepared small SpMV)."""

    choice: Any = None
    capture: Any = None


_LAST = _Last()
#: capture_calls blocks open in any thread: while 0, a fast path skips reading
#: ``_LAST.capture`` (a thread-local attribute, ~0.1 us)
_OPEN = [0]
_open_lock = threading.Lock()


def last_choice() -> tuple[str, str, str, str] | None:
    """What this thread's last family call ran: ``(family.variant, candidate label, variant
    source, candidate source)``, sources ``explicit``, ``cache`` or ``default``; None before
    any call. (A diagnostic: tests and ``accy tune`` use it to show a cached winner ran.)"""
    return getattr(_LAST, "choice", None)


def note_choice(family: str, variant: str, candidate: Candidate | None, var_src: str,
                cand_src: str) -> None:
    """Record what a call ran (see :func:`last_choice`)."""
    _LAST.choice = (f"{family}.{variant}", candidate.label() if candidate else "",
                    var_src, cand_src)


@contextlib.contextmanager
def capture_calls() -> Iterator[list[dict[str, Any]]]:
    """Record every :func:`call` of this thread in the block (they still run): dicts with
    ``family``, ``variant``, ``default_variant``, ``allowed`` and the run ``kwargs``.
    ``bench/kernels.py --tuned`` turns them into sweep problems
    (:func:`accy_kernels.tuning_problems.problem_from_call`)."""
    calls: list[dict[str, Any]] = []
    outer = getattr(_LAST, "capture", None)
    with _open_lock:
        _OPEN[0] += 1
    _LAST.capture = calls
    try:
        yield calls
    finally:
        _LAST.capture = outer
        with _open_lock:
            _OPEN[0] -= 1


def tuned(family: str, be: Any, kwargs: dict[str, Any],
          allowed: tuple[str, ...] | None = None) -> tuple[Any, Any]:
    """The cached ``(variant, lookup)`` for one call: the cached variant of ``family`` (or
    None) and a function ``lookup(variant) -> Candidate | None`` giving the cached candidate
    of a variant, from the tuning cache for ``be``'s device fingerprint and the call's
    tuning key (:func:`accy_kernels.tuning_keys.call_key`). ``allowed`` limits the cached
    variant (spmv: the variants of an explicit format)."""
    from accy.tuning.families import family_choices

    from accy_kernels.tuning_keys import call_key

    key = call_key(family, kwargs)
    choices = family_choices(be.capabilities().device_fingerprint) if key else None
    if not choices:
        return None, lambda var: None
    fam = _BY_NAME[family]
    var = choices.variant(fam, *key)
    if var is not None and (not variant_runs_on(var, be)[0]
                            or (allowed is not None and var.name not in allowed)):
        var = None
    return var, lambda v: choices.candidate(fam, v, *key)


def call(family: str, variant: str | None, backend: Any, candidate: Candidate | None, *,
         default_variant: str | None = None, allowed: tuple[str, ...] | None = None,
         **kwargs: Any) -> Any:
    """Run ``family.variant`` with ``kwargs`` (already validated) on ``backend``.

    The variant is ``variant`` when given, else the tuning cache's winner for the call's
    tuning key (limited to ``allowed``), else ``default_variant`` (the caller's heuristic),
    else the family's first. The candidate is ``candidate`` when given, else the cached
    winner of that variant, else the variant's default. A cached choice that the backend
    refuses for this problem (CapabilityError, UnsupportedError) falls back to the default.

    Raises:
        InputError: unknown variant. BackendUnavailable: the backend cannot be opened.
        CapabilityError: the backend lacks a feature the variant needs.
    """
    fam = _BY_NAME[family]
    be = backend_object(backend)
    capture = getattr(_LAST, "capture", None)
    if capture is not None:
        capture.append({"family": family, "variant": variant,
                        "default_variant": default_variant, "allowed": allowed,
                        "kwargs": dict(kwargs)})
    var_src = "explicit" if variant else "default"
    cand_src = "explicit" if candidate is not None else "default"
    var, lookup = (None, lambda v: None)
    if variant is None or candidate is None:
        var, lookup = tuned(family, be, kwargs, allowed)
    if variant is None and var is not None:
        var_src = "cache"
    else:
        var = fam.variant(variant or default_variant)
    ok, why = variant_runs_on(var, be)
    if not ok:
        raise CapabilityError(
            f"{family}.{var.name}: backend {be.name!r} cannot run it ({why}); "
            f"choose another variant: {', '.join(v.name for v in fam.variants)}",
            feature=", ".join(var.requires), backend=be.name)
    if candidate is None:
        candidate = lookup(var)
        if candidate is not None:
            cand_src = "cache"
    if "cache" in (var_src, cand_src):
        try:
            note_choice(family, var.name, candidate, var_src, cand_src)
            return resolve(var.run)(be, candidate or _default(var, be, kwargs), **kwargs)
        except (CapabilityError, UnsupportedError):
            var = fam.variant(variant or default_variant) if var_src == "cache" else var
            candidate = None if cand_src == "cache" else candidate
            var_src, cand_src = ("default" if var_src == "cache" else var_src,
                                 "default" if cand_src == "cache" else cand_src)
    if candidate is None:
        candidate = _default(var, be, kwargs)
    note_choice(family, var.name, candidate, var_src, cand_src)
    return resolve(var.run)(be, candidate, **kwargs)


def _default(var: Any, be: Any, kwargs: dict[str, Any]) -> Candidate:
    return resolve(var.default)(be, **kwargs) if var.default else var.candidates[0]


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
    output elements: ``privatized`` where per-thread private histograms pay off on a
    host-memory backend (``threads x size <= total``; no atomics, no contended cache lines),
    else :func:`pick_device_accumulate`. Measured: ``bench/scatter_add_variants.py``."""
    from accy_kernels.scatter_add_privatized import worthwhile

    if worthwhile(backend, size, total):
        return "privatized"
    return pick_device_accumulate(backend, dtype, size, total)


def pick_device_accumulate(backend: Any, dtype: str, size: int, total: int) -> str:
    """The default without the host rule. (Compiled programs take the host rule too: their
    tile count is the compiling backend's thread count, which runs them; an executable
    loaded by a process with another thread count stays right, with that many private
    histograms.) On a lane device (few CPU threads, see
    :func:`accy_kernels.scatter_add_privatized.lane_device`) whose private copies fit:
    ``privatized`` when the device has no loop budget (PoCL: 1.2-1.7x faster than its
    atomics at 65,536-262,144 values) or no atomic add on ``dtype`` (lavapipe f64/i64: ~6x
    faster than sorted); else ``atomic`` where the backend has atomic add on ``dtype``
    (lavapipe f32/i32: atomics 1.4x faster than privatized under its loop budget, which
    costs a separate zero-fill launch), else ``sorted``."""
    from accy.families import loop_budget

    from accy_kernels.scatter_add_privatized import worthwhile_without_atomics

    lanes = worthwhile_without_atomics(backend, size, total)
    if lanes and loop_budget(backend) is None:
        return "privatized"
    if has_atomic_add(backend, dtype):
        return "atomic"
    return "privatized" if lanes else "sorted"


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
