"""The tuning cache: (device fingerprint, kernel fingerprint, shape family) → choice.

The cache is one JSON file (``accy.config.tuning_cache_path()``; ``ACCY_TUNING_CACHE``
overrides it) holding ``{"format": "accy-tuning-cache", "version": 1, "entries": {...}}``.
Each entry records the chosen candidate label, its median and the runner-up's (ns), the
sample count and the kind (``launch`` for program regions, ``family`` for kernel-library
schedules). Writes are atomic: the merged content goes to a temporary file in the same
directory (0600 files, 0700 directories), then ``os.replace``; concurrent writers may lose
each other's newest entry but never leave a corrupt file. An unusable live file (not UTF-8,
empty, truncated, another format or version, a malformed entry, or in a directory another
user could write) is ignored when compiling (no tuning) with one
:class:`~accy.errors.CacheWarning`, rewritten by the next store, and reported by
:meth:`TuningCache.load` with ``strict=True``.

:func:`launch_resolver` builds the callable the kernel stage consults (explicit choices
first, then the cache, else the default).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from accy.errors import InputError, TuningCacheError
from accy.records import record
from accy.runtime.cache_files import (
    UnsafeCacheFile,
    check_directory,
    file_token,
    read_cache_file,
    warn_once,
    write_cache_file,
)
from accy.tuning.candidates import LaunchCandidate

__all__ = ["CACHE_FORMAT", "CACHE_VERSION", "TuningCache", "TuningEntry", "entry_key",
           "launch_resolver", "region_shape_family"]

CACHE_FORMAT = "accy-tuning-cache"
CACHE_VERSION = 1


@record
class TuningEntry:
    """One cached choice.

    Attributes:
        device: the backend's device fingerprint.
        kernel: the kernel's structural fingerprint (sha256 hex), or ``family.variant``.
        shape_family: the problem-size class (``out4096-red0``, ``n1024``).
        choice: the chosen candidate's label.
        median_ns: its upper-median time (ns); runner_up_ns: the next best (ns, 0 if none).
        samples: timed launches per candidate.
        kind: ``launch`` or ``family``.
        accy_version: the accy version that measured it (an entry of another version is
            stale: any new measurement replaces it).
        artifact: fingerprint of what was measured (family entries: sha256 of the kernel
            fingerprints the winning candidate launched), "" if unknown.
        default_ns: the default's upper-median time (ns; family entries, 0 if unknown).
    """

    device: str
    kernel: str
    shape_family: str
    choice: str
    median_ns: int = 0
    runner_up_ns: int = 0
    samples: int = 0
    kind: str = "launch"
    accy_version: str = ""
    artifact: str = ""
    default_ns: int = 0

    @property
    def key(self) -> str:
        """The entry's key in the file."""
        return entry_key(self.device, self.kernel, self.shape_family)


def entry_key(device: str, kernel: str, shape_family: str) -> str:
    """``device|kernel|shape_family``."""
    return f"{device}|{kernel}|{shape_family}"


def region_shape_family(kind: str, n_out: int, n_red: int) -> str:
    """The shape family of a program region (static shapes: its exact extents)."""
    return f"{kind}-out{n_out}-red{n_red}"


def _decode_json(data: bytes, path: str) -> Any:
    """The JSON document in ``data``; raises TuningCacheError (reason ``corrupt``) if none."""
    if not data.strip():
        raise TuningCacheError(f"tuning cache {path}: the file is empty", path=path,
                               reason="corrupt")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise TuningCacheError(f"tuning cache {path}: not valid UTF-8 (byte {e.start})",
                               path=path, reason="corrupt") from e
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        raise TuningCacheError(f"tuning cache {path}: corrupt JSON ({e})", path=path,
                               reason="corrupt") from e


_FIELD_TYPES = {"device": str, "kernel": str, "shape_family": str, "choice": str,
                "median_ns": int, "runner_up_ns": int, "samples": int, "kind": str,
                "accy_version": str, "artifact": str, "default_ns": int}


def _check_fields(entry: TuningEntry) -> None:
    for name, kind in _FIELD_TYPES.items():
        value = getattr(entry, name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError(f"field {name!r} is {type(value).__name__}, expected {kind.__name__}")


def _parse_entries(doc: Any, path: str) -> dict[str, TuningEntry]:
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT:
        raise TuningCacheError(f"tuning cache {path}: not an accy tuning cache (format "
                               f"{doc.get('format') if isinstance(doc, dict) else None!r}); "
                               "delete it or point ACCY_TUNING_CACHE elsewhere",
                               path=path, reason="format")
    if doc.get("version") != CACHE_VERSION:
        raise TuningCacheError(f"tuning cache {path}: version {doc.get('version')!r}, expected "
                               f"{CACHE_VERSION}; re-run 'accy tune'", path=path, reason="version")
    out = {}
    try:
        for key, raw in dict(doc.get("entries", {})).items():
            entry = TuningEntry(**raw)
            _check_fields(entry)
            if entry.kind == "launch":
                LaunchCandidate.parse(entry.choice)
            if key != entry.key:
                raise ValueError(f"key {key!r} does not match its entry ({entry.key!r})")
            out[key] = entry
    except (TypeError, ValueError, InputError) as e:
        raise TuningCacheError(f"tuning cache {path}: malformed entry: {e}", path=path,
                               reason="entry") from e
    return out


class TuningCache:
    """The persistent tuning cache at ``path`` (default: ``accy.config.tuning_cache_path()``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is None:
            from accy import config

            path = config.tuning_cache_path()
        self.path = Path(path)

    def _trusted(self) -> bool:
        from accy import config

        return check_directory(self.path.parent, config.cache_dir(), "tuning cache")

    def load(self, strict: bool = False) -> dict[str, TuningEntry]:
        """All entries (key → entry); a missing file is empty.

        Without ``strict``, an unusable file (unreadable, not UTF-8, empty, truncated, of
        another format or version, a malformed entry, or in a directory owned by another
        user or writable by group or others) counts as empty, with one
        :class:`~accy.errors.CacheWarning` naming it per process; the next store rewrites it.

        Raises:
            TuningCacheError: with ``strict``, such a file (``reason`` says why).
        """
        if not self._trusted():
            if strict:
                raise TuningCacheError(f"tuning cache {self.path}: its directory is not "
                                       "private to this user (see the warning)",
                                       path=str(self.path), reason="unsafe")
            return {}
        try:
            data = read_cache_file(self.path)
            return _parse_entries(_decode_json(data, str(self.path)), str(self.path))
        except FileNotFoundError:
            return {}
        except UnsafeCacheFile as e:
            problem = TuningCacheError(f"tuning cache {self.path} {e.reason}",
                                       path=str(self.path), reason="unsafe")
        except OSError as e:
            problem = TuningCacheError(f"tuning cache {self.path}: cannot read it "
                                       f"({e.strerror or e})", path=str(self.path),
                                       reason="unreadable")
        except TuningCacheError as e:
            problem = e
        if strict:
            raise problem
        warn_once(self.path, problem.reason, f"{problem}; it is ignored (no tuning choices "
                  "are used) until 'accy tune' rewrites it", file_token(self.path))
        return {}

    def lookup(self, device: str, kernel: str, shape_family: str) -> TuningEntry | None:
        """The entry for one key, or None."""
        return self.load().get(entry_key(device, kernel, shape_family))

    def store(self, entries: Mapping[str, TuningEntry] | list[TuningEntry],
              replace_all: bool = False) -> None:
        """Merge ``entries`` into the file (or replace its content) atomically."""
        new = entries if isinstance(entries, Mapping) else {e.key: e for e in entries}
        current = {} if replace_all else self.load()
        current.update(new)
        self.write_all(current)

    def write_all(self, entries: Mapping[str, TuningEntry]) -> None:
        """Write exactly ``entries``: temporary file in the same directory, then rename.

        Raises:
            TuningCacheError: the directory is owned by another user or writable by group or
                others (reason ``unsafe``).
        """
        if self.path.parent.exists() and not self._trusted():
            raise TuningCacheError(f"tuning cache {self.path}: its directory is not private "
                                   "to this user (see the warning); fix its owner and mode or "
                                   "point ACCY_TUNING_CACHE elsewhere", path=str(self.path),
                                   reason="unsafe")
        doc = {"format": CACHE_FORMAT, "version": CACHE_VERSION,
               "entries": {k: asdict(v) for k, v in sorted(entries.items())}}
        atomic_write(self.path, json.dumps(doc, indent=1, sort_keys=True).encode())

    def token(self) -> tuple[int, int]:
        """(mtime ns, size) of the file, (0, 0) if absent: changes when the cache does."""
        try:
            st = self.path.stat()
        except OSError:
            return (0, 0)
        return (st.st_mtime_ns, st.st_size)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (mode 0600, directory 0700) through a temporary file and
    ``os.replace``."""
    write_cache_file(path, data, fsync=True)


def launch_resolver(device: str, explicit: Mapping[str, Any] | None = None,
                    cache: TuningCache | None = None, use_cache: bool = True):
    """The ``ctx.options["launch_choices"]`` callable of the kernel stage.

    ``explicit`` maps kernel names (``main_k0_map``) to a :class:`LaunchCandidate` or its
    label; it overrides the cache. Otherwise the cache entry for (``device``, the default
    kernel's structural fingerprint, the region's shape family) is used when its choice is
    one of the region's candidates.

    Raises (when called by the kernel stage):
        InputError: an explicit choice is malformed or not among the region's candidates.
    """
    from accy.passes.outline_kernels import region_extents, structural_fingerprint

    explicit = dict(explicit or {})
    entries = (cache or TuningCache()).load() if use_cache else {}

    def choose(name: str, kernel: Any, region: Any, cands: list[LaunchCandidate]):
        if name in explicit:
            want = explicit[name]
            cand = want if isinstance(want, LaunchCandidate) else LaunchCandidate.parse(str(want))
            if cand not in cands:
                labels = ", ".join(c.label() for c in cands)
                raise InputError(f"launch choice for kernel {name!r}: {cand.label()} is not one "
                                 f"of its candidates ({labels})")
            return cand, "explicit"
        if not entries:
            return None
        family = region_shape_family(*region_extents(region))
        hit = entries.get(entry_key(device, structural_fingerprint(kernel), family))
        if hit is None:
            return None
        for c in cands:
            if c.label() == hit.choice:
                return c, "cache"
        return None

    return choose
