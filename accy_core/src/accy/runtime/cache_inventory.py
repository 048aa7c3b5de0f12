"""What accy's on-disk caches hold, and clearing them (behind ``accy cache info|clear``).

Four caches live under ``accy.config.cache_dir()`` (``ACCY_CACHE_DIR``):

============  ===============================  ==========================================
name          path                             entries
============  ===============================  ==========================================
artifacts     ``artifacts/``                   one ``*.acart`` file per compiled kernel
tuning        ``tuning/tuning.json``           launch/schedule choices in one JSON file
              (``ACCY_TUNING_CACHE``)
pipelines     ``vulkan-pipelines/``            one ``*.bin`` driver blob per Vulkan device
programs      ``opencl-programs/``             one ``*.acart`` built OpenCL program per
                                               kernel and device
============  ===============================  ==========================================

Clearing deletes only those files (and temporaries a killed writer left), never anything
else in the directories, so a mistaken ``ACCY_CACHE_DIR`` loses no other data.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path

from accy import config
from accy.errors import InputError, TuningCacheError, known_names
from accy.runtime import cache_files
from accy.runtime.artifact_cache import ArtifactCache

__all__ = ["CACHE_NAMES", "CacheReport", "cache_reports", "clear_caches"]

CACHE_NAMES: tuple[str, ...] = ("artifacts", "tuning", "pipelines", "programs")


@dataclass(frozen=True)
class CacheReport:
    """One cache: its ``name``, ``path``, ``entries`` (count), ``bytes`` on disk and a
    ``note`` (empty, ``disabled ...``, ``not used: ...`` or why its file is unusable)."""

    name: str
    path: str
    entries: int
    bytes: int
    note: str = ""

    def as_dict(self) -> dict:
        """The report as a JSON-ready dict."""
        return asdict(self)


def _note(directory: Path, disabled: bool) -> str:
    if disabled:
        return "disabled (ACCY_DISABLE_DISK_CACHE)"
    found = cache_files.chain_problem(directory, config.cache_dir())
    return f"not used: {found[0]} {found[1]}" if found else ""


def _files(directory: Path, pattern: str) -> list[Path]:
    try:
        return [p for p in directory.glob(pattern) if p.is_file()]
    except OSError:
        return []


def _size(paths: list[Path]) -> int:
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


def _artifacts() -> CacheReport:
    directory = config.artifact_cache_dir()
    usage = ArtifactCache(directory, max_bytes=0).usage()
    return CacheReport("artifacts", str(directory), usage.entries, usage.bytes,
                       _note(directory, config.disk_cache_disabled()))


def _tuning() -> CacheReport:
    from accy.tuning.cache import TuningCache

    path = config.tuning_cache_path()
    note = _note(path.parent, False)
    entries = 0
    if not note and path.exists():
        try:
            entries = len(TuningCache(path).load(strict=True))
        except TuningCacheError as e:
            note = f"unusable: {e}"
    return CacheReport("tuning", str(path), entries, _size([path] if path.is_file() else []),
                       note)


def _pipelines() -> CacheReport:
    directory = config.pipeline_cache_dir()
    blobs = _files(directory, "*.bin")
    return CacheReport("pipelines", str(directory), len(blobs), _size(blobs),
                       _note(directory, config.disk_cache_disabled()))


def _programs() -> CacheReport:
    directory = config.opencl_program_cache_dir()
    usage = ArtifactCache(directory, max_bytes=0).usage()
    return CacheReport("programs", str(directory), usage.entries, usage.bytes,
                       _note(directory, config.disk_cache_disabled()))


_REPORTS = {"artifacts": _artifacts, "tuning": _tuning, "pipelines": _pipelines,
            "programs": _programs}


def _names(names: list[str] | tuple[str, ...] | None) -> list[str]:
    if not names or "all" in names:
        return list(CACHE_NAMES)
    unknown = [n for n in names if n not in _REPORTS]
    if unknown:
        raise InputError(f"unknown cache {unknown[0]!r}; "
                         f"{known_names([*CACHE_NAMES, 'all'])}")
    return [n for n in CACHE_NAMES if n in names]


def cache_reports(names: list[str] | tuple[str, ...] | None = None) -> list[CacheReport]:
    """Report on the named caches (default: all, in :data:`CACHE_NAMES` order).

    Raises:
        InputError: an unknown cache name.
    """
    return [_REPORTS[n]() for n in _names(names)]


def _remove(paths: list[Path]) -> None:
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def clear_caches(names: list[str] | tuple[str, ...] | None = None) -> list[CacheReport]:
    """Delete the entries of the named caches (default: all); return what each held.

    Raises:
        InputError: an unknown cache name.
        OSError: a file cannot be deleted (permissions).
    """
    before = cache_reports(names)
    for report in before:
        path = Path(report.path)
        if report.name in ("artifacts", "programs"):
            ArtifactCache(path, max_bytes=0).clear()
        elif report.name == "tuning":
            _remove([path] if path.is_file() else [])
            _remove(_files(path.parent, f".tmp-{path.name}.*")
                    + _files(path.parent, f".{path.name}.*.tmp"))  # older accy's temporaries
        else:
            _remove(_files(path, "*.bin") + _files(path, ".tmp-*") + _files(path, "*.bin*.tmp"))
    return before
