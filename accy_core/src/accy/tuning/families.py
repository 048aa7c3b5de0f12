"""Family tuning keys and the cached family choices that calls and the compiler read.

A family choice is keyed by (device fingerprint, family, variant-space version, dtype(s),
shape class):

- the *variant-space version* is :func:`space_version`: the first 8 hex digits of the
  sha256 of the family's variant names and candidate labels, so an entry measured over
  another tuning space is never applied to this one;
- the *dtypes* are the kernel dtypes the choice depends on (``f32``, ``f32+i32``);
- the *shape class* buckets the sizes that matter to the family (the family's package
  documents it; accy-kernels in :mod:`accy_kernels.tuning_keys`): ``n20`` for
  ``ceil(log2 n) = 20``.

Two kinds of ``kind="family"`` entries live in the tuning cache under that key: the
*variant* entry (kernel field ``family``, choice a variant name) and the *candidate* entry
(kernel field ``family.variant``, choice a :meth:`accy.families.Candidate.label`). Both are
written only when the winner beats the default by the margin (:mod:`accy.tuning.sweep`).

:func:`family_choices` returns a :class:`FamilyChoices` snapshot of the cache for one
device; it is memoized per process by the cache file's (mtime, size), so a call costs a
``stat``. :func:`store_family_entries` merges new measurements: one replaces an old entry
only when it is faster, or when the old one is stale (measured by another accy version).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accy.hashing import sha256
from accy.tuning.cache import TuningCache, TuningEntry, entry_key

__all__ = ["FamilyChoices", "family_choices", "family_shape_key", "is_stale", "space_version",
           "store_family_entries"]

_LOCK = threading.Lock()
_MEMO: dict[str, tuple[tuple[int, int], dict[str, TuningEntry]]] = {}


def space_version(family: Any) -> str:
    """The variant-space version of ``family`` (an :class:`accy.families.Family`): 8 hex
    digits of the sha256 of its variant names and candidate labels."""
    text = ";".join(f"{v.name}:{','.join(c.label() for c in v.candidates)}"
                    for v in family.variants)
    return sha256(text.encode()).hexdigest()[:8]


def family_shape_key(version: str, dtypes: str | Iterable[str], shape_class: str) -> str:
    """The ``shape_family`` field of a family entry: ``v<version>-<dtypes>-<shape class>``
    (``v1a2b3c4d-f32-n20``); ``dtypes`` joined by ``+``."""
    dt = dtypes if isinstance(dtypes, str) else "+".join(dtypes)
    return f"v{version}-{dt}-{shape_class}"


def is_stale(entry: TuningEntry) -> bool:
    """Whether ``entry`` was measured by another accy version (or records none)."""
    import accy

    return entry.accy_version != accy.__version__


@dataclass(frozen=True)
class FamilyChoices:
    """The family entries of one device, as a lookup (a snapshot of the tuning cache)."""

    device: str
    entries: dict[str, TuningEntry]

    def _get(self, kernel: str, family: Any, dtypes: str | Iterable[str],
             shape_class: str) -> TuningEntry | None:
        key = entry_key(self.device, kernel,
                        family_shape_key(space_version(family), dtypes, shape_class))
        e = self.entries.get(key)
        return e if e is not None and e.kind == "family" else None

    def variant(self, family: Any, dtypes: str | Iterable[str], shape_class: str) -> Any:
        """The cached variant (an :class:`accy.families.Variant` of ``family``), or None."""
        e = self._get(family.name, family, dtypes, shape_class)
        if e is None:
            return None
        return next((v for v in family.variants if v.name == e.choice), None)

    def candidate(self, family: Any, variant: Any, dtypes: str | Iterable[str],
                  shape_class: str) -> Any:
        """The cached candidate of ``variant`` (one of ``variant.candidates``), or None."""
        e = self._get(f"{family.name}.{variant.name}", family, dtypes, shape_class)
        if e is None:
            return None
        return next((c for c in variant.candidates if c.label() == e.choice), None)

    def __bool__(self) -> bool:
        return bool(self.entries)


def family_choices(device: str, cache: TuningCache | None = None) -> FamilyChoices:
    """The cached family choices for ``device`` (memoized by the cache file's token).

    An unusable cache file counts as empty (one :class:`~accy.errors.CacheWarning`, as
    :meth:`TuningCache.load`).
    """
    cache = cache or TuningCache()
    token = cache.token()
    path = str(cache.path)
    with _LOCK:
        hit = _MEMO.get(path)
    if hit is None or hit[0] != token or token == (0, 0):
        entries = cache.load() if token != (0, 0) else {}
        hit = (token, {k: e for k, e in entries.items() if e.kind == "family"})
        with _LOCK:
            _MEMO[path] = hit
    prefix = f"{device}|"
    return FamilyChoices(device, {k: e for k, e in hit[1].items() if k.startswith(prefix)})


def store_family_entries(entries: Iterable[TuningEntry],
                         cache: TuningCache | None = None) -> list[TuningEntry]:
    """Merge ``entries`` into the cache; return those that were written.

    A new entry replaces the one under its key only when its median is lower, or when the
    old one is stale (:func:`is_stale`); otherwise the old entry stays.
    """
    cache = cache or TuningCache()
    current = cache.load()
    written = []
    for e in entries:
        old = current.get(e.key)
        if old is None or is_stale(old) or e.median_ns < old.median_ns:
            current[e.key] = e
            written.append(e)
    if written:
        cache.write_all(current)
    return written
