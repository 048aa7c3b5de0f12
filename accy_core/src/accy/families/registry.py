"""The family registry: families from every plugin's ``accy_kernel_families()`` hook.

Families are collected once per process (``reset()`` forgets them) and can also be added
in-process with :func:`register_family` (tests, notebooks). A family name provided twice is
kept from the first provider; the clash is recorded in :func:`registry_problems`.
"""

from __future__ import annotations

import threading

from accy.errors import InputError, install_hint, known_names
from accy.families.family import Family, Variant

__all__ = [
    "families",
    "get_family",
    "get_variant",
    "register_family",
    "registry_problems",
    "reset",
    "variant_runs_on",
]

_LOCK = threading.RLock()
_FAMILIES: dict[str, Family] | None = None
_LOCAL: dict[str, Family] = {}
_PROBLEMS: list[str] = []


def _collect() -> dict[str, Family]:
    from accy.plugins import kernel_families

    found: dict[str, Family] = {}
    for item in kernel_families():
        if not isinstance(item, Family):
            _PROBLEMS.append(f"a plugin returned {type(item).__name__}, not accy.families.Family")
            continue
        if item.name in found:
            _PROBLEMS.append(f"family {item.name!r} provided twice "
                             f"({found[item.name].provider or '?'} and {item.provider or '?'})")
            continue
        found[item.name] = item
    return found


def families() -> dict[str, Family]:
    """Return every registered family by name (plugins first, then in-process ones)."""
    global _FAMILIES
    with _LOCK:
        if _FAMILIES is None:
            _FAMILIES = _collect()
        return {**_FAMILIES, **_LOCAL}


def register_family(family: Family) -> None:
    """Register ``family`` in this process (replacing one of the same name)."""
    with _LOCK:
        _LOCAL[family.name] = family


def reset() -> None:
    """Forget discovered and in-process families (tests)."""
    global _FAMILIES
    with _LOCK:
        _FAMILIES = None
        _LOCAL.clear()
        _PROBLEMS.clear()


def registry_problems() -> list[str]:
    """Return the problems seen while collecting families (wrong types, duplicate names)."""
    families()
    return list(_PROBLEMS)


def get_family(name: str) -> Family:
    """Return the family ``name`` (``"spmv"``; ``"spmv.csr_scalar"`` also accepted).

    Raises:
        InputError: no such family (the message lists the registered ones).
    """
    fams = families()
    fam = fams.get(name.split(".", 1)[0])
    if fam is None:
        raise InputError(f"unknown kernel family {name!r}; {known_names(fams, name)}; "
                         f"is accy-kernels (or the plugin providing it) installed? accy-kernels is "
                         f"{install_hint('accy_kernels')}")
    return fam


def get_variant(name: str) -> tuple[Family, Variant]:
    """Return ``(family, variant)`` for ``"family.variant"`` (or the default variant).

    Raises:
        InputError: unknown family or variant.
    """
    fam = get_family(name)
    _, _, variant = name.partition(".")
    return fam, fam.variant(variant or None)


def variant_runs_on(variant: Variant, backend: object) -> tuple[bool, str]:
    """Return ``(runs, reason)``: whether the live ``backend`` has what ``variant`` needs."""
    caps = backend.capabilities()  # type: ignore[attr-defined]
    missing = [f for f in variant.requires if f not in caps.features]
    if missing:
        return False, f"needs {', '.join(missing)}"
    return True, ""
